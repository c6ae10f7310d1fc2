"""Text as a detector should see it: the disguises removed, the words kept.

1. NFKC: full-width letters, ligatures, mathematical letters and other compatibility forms become
   plain ones ("ｉｇｎｏｒｅ", "𝐢𝐠𝐧𝐨𝐫𝐞" → "ignore").
2. Default-ignorable characters go: zero-width spaces and joiners, soft hyphens, word joiners,
   bidirectional controls, variation selectors, tag characters ("ig\\u00adnore" → "ignore").
3. Combining marks on Latin, Greek and Cyrillic letters go ("ïgnöre" → "ignore"); scripts whose
   marks are part of the letter (Japanese dakuten, Devanagari vowel signs) keep them.
4. Look-alike letters in a word that mixes scripts become Latin ("іgnоrе" with Cyrillic і, о, е →
   "ignore"), as Unicode's confusable-detection guidance (UTS #39) suggests; a Russian word, written
   in Cyrillic alone, stays Russian. A Cyrillic-only word in a Latin sentence made only of look-alikes
   ("ѕеnd" among English words) is folded as well.
5. Whitespace is collapsed.

Only what a detector reads is normalized: the note is stored as the person or the agent wrote it.
"""

from __future__ import annotations

import re
import unicodedata

# Cyrillic and Greek letters that render like Latin ones.
CONFUSABLE = str.maketrans(
    {
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
        "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
        "һ": "h", "ӏ": "l", "Ӏ": "l", "ɡ": "g", "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H",
        "О": "O", "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "α": "a",
        "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "υ": "u", "χ": "x", "ε": "e", "τ": "t", "Α": "A",
        "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
        "Τ": "T", "Υ": "Y", "Χ": "X",
    }
)  # fmt: skip
CONFUSABLE_LETTERS = frozenset(chr(c) for c in CONFUSABLE)
WORD = re.compile(r"\w+")
MARKED_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC")


def normalize(text: str, *, strip_marks: bool = True) -> str:
    """The text with its disguises removed (see the module docstring). Never raises. `strip_marks=False`
    keeps accents (a meaning model reads "não" better than "nao"); the guard looks at both."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if not _ignorable(c))
    if strip_marks:
        text = _strip_marks(text)
    text = _fold_lookalikes(text)
    return re.sub(r"\s+", " ", text).strip()


def views(text: str) -> list[str]:
    """The normalized text with accents kept and, when that differs, with them stripped too."""
    kept = normalize(text, strip_marks=False)
    stripped = normalize(text)
    return [kept] if stripped == kept else [kept, stripped]


def _ignorable(char: str) -> bool:
    """Unicode's default-ignorable code points (format characters, variation selectors, tags…)."""
    code = ord(char)
    return (
        unicodedata.category(char) == "Cf"
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or code in (0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x17B4, 0x17B5)
    )


def _strip_marks(text: str) -> str:
    out: list[str] = []
    for char in unicodedata.normalize("NFD", text):
        if unicodedata.combining(char) and out and _script(out[-1]) in MARKED_SCRIPTS:
            continue
        out.append(char)
    return unicodedata.normalize("NFC", "".join(out))


def _script(char: str) -> str:
    try:
        return unicodedata.name(char).split(" ", 1)[0]
    except ValueError:
        return ""


def _fold_lookalikes(text: str) -> str:
    latin_words = sum(1 for w in WORD.findall(text) if w.isascii() and any(c.isalpha() for c in w))
    words = len(WORD.findall(text)) or 1
    mostly_latin = latin_words / words >= 0.5

    def fold(match: re.Match[str]) -> str:
        word = match.group(0)
        scripts = {_script(c) for c in word if c.isalpha()}
        mixed = "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK"}
        disguised = (
            mostly_latin
            and scripts & {"CYRILLIC", "GREEK"}
            and all(c in CONFUSABLE_LETTERS for c in word if c.isalpha())
        )
        return word.translate(CONFUSABLE) if mixed or disguised else word

    return WORD.sub(fold, text)
