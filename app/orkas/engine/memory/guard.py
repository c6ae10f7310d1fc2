"""The injection guard: every text about to enter long-term memory is scanned first.

Memory is pinned into the system prompt of every later turn, so a poisoned note is a durable prompt
injection. `scan_memory_text` looks for what such notes are made of and returns one `Finding` per
problem (empty when clean):

- instructions that override the agent's own (EN, ZH, PT, ES, DE, FR, IT), persona jailbreaks,
  forged system/assistant turns and delimiters, forged reasoning;
- exfiltration: revealing the system prompt, sending data or keys out, shell reads of credentials;
- hijacking: tool calls planted for later, "repeat this in every future reply" persistence;
- invisible Unicode (zero-width, bidi overrides, tag characters);
- payloads hidden by encoding (base64/32/85, hex, binary, URL and \\u escapes, Morse, rot13,
  reversed, spaced or leetspeak text): each is decoded and scanned like plain text.

It is a pattern guard, tuned to miss little and to leave ordinary notes alone ("ignore case when
sorting", "forget the old quote"): the objects of the verbs matter, not the verbs alone.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from orkas.engine.memory.normalize import normalize
from orkas.engine.memory.semantic import Semantic, default_semantic


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str  # override | persona | spoof | exfiltration | hijack | invisible | encoded
    reason: str  # one sentence for the model and the person
    excerpt: str  # the matching text (decoded, when it was hidden)


def _rx(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE | re.DOTALL)


# Objects that make "ignore/forget/reveal X" an attack rather than ordinary speech.
_RULES = (
    r"instructions?|prompts?|rules|guidelines|directives?|polic(?:y|ies)|restrictions|guardrails|"
    r"programming|system messages?|developer messages?|safety (?:rules|guidelines|protocols?|checks?)"
)
_BEFORE = (
    r"(?:previous|prior|above|earlier|preceding|original|initial|system|developer|safety|all|any|your|the|these|those)"
)

OVERRIDE = _rx(
    rf"\b(?:ignore|ignoring|disregard|disregarding|forget|forgetting|bypass|override|skip)\b\W+(?:\w+\W+){{0,4}}?(?:{_RULES})\b",
    rf"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:{_BEFORE}\s+)?(?:above|before|said so far|we (?:discussed|talked about))",
    r"\bdisregard everything\b",
    r"\b(?:from now on|henceforth|from this point(?: forward)?|for the (?:rest|remainder) of)\b[^.\n]{0,80}"
    r"\b(?:no (?:restrictions|rules|limits|filters?)|without (?:any )?(?:restrictions|rules|limits|filters?)|"
    r"must (?:comply|obey|ignore)|comply with every|answer (?:any|every)thing|ignore|skip|respond as if)",
    r"\bnew (?:instructions?|directives?|rules)\s*:",
    r"\byour (?:new|real|true|actual) (?:task|instructions?|directive|purpose|goal|job) (?:is|are)\b",
    r"\bsupersedes? (?:all )?(?:prior|previous|earlier)",
    r"\b(?:your|the) rules have (?:changed|been updated)",
    r"\b(?:safety|security|content) (?:protocols?|checks?|guidelines|rules|filters?|polic(?:y|ies))\s+"
    r"(?:are |were |have been )?(?:now )?(?:disabled|off|lifted|suspended|removed|not meant)",
    r"\boverride\s*:",
    r"\bskip (?:all )?(?:the )?safety (?:checks|rules)",
    r"\b(?:answer|respond|reply|output|proceed|comply)\b[^.\n]{0,40}\bwithout (?:any )?(?:restrictions?|filters?|limits|"
    r"rules|censorship|limitations)",
    # German, French, Spanish, Italian, Portuguese (accents are folded before matching)
    r"\b(?:ignorier\w*|vergiss|vergessen sie|missachte\w*)\b[^.\n]{0,40}\b(?:anweisungen|regeln|richtlinien|vorgaben|instruktionen|alles,? was)",
    r"\bab (?:jetzt|sofort)\b[^.\n]{0,40}\b(?:keine regeln|keine einschrankungen|gibst du|ohne einschrankungen)",
    r"\bneue anweisungen\s*:",
    r"\b(?:ignore[rz]?|oublie[rz]?|oubliez)\b[^.\n]{0,40}\b(?:instructions|regles|consignes)",
    r"\b(?:ignora|ignore|olvida|olvide|ignorad)\b[^.\n]{0,40}\b(?:instrucciones|reglas|indicaciones)",
    r"\b(?:ignora|dimentica|dimenticate)\b[^.\n]{0,40}\b(?:istruzioni|regole)",
    r"\b(?:ignore|ignora|esqueca|esqueça|desconsidere)\b[^.\n]{0,40}\b(?:instrucoes|regras|diretrizes)",
    # Chinese
    r"(?:忽略|无视|忽视|不要理会|忘记|忘掉|跳过)[^。\n]{0,12}(?:指令|指示|规则|提示词?|设定|约束|要求|说明)",
    r"从现在(?:开始|起)[^。\n]{0,20}(?:不受|没有|无)(?:任何)?(?:限制|规则|约束)",
    r"新(?:的)?指令\s*[:：]",
)

PERSONA = _rx(
    r"\bdeveloper mode\b",
    r"\bdo anything now\b",
    r"\byou are (?:now )?dan\b",
    r"\b(?:unrestricted|uncensored|unfiltered|jailbroken|unlocked) (?:mode|assistant|model|ai|version|bot)\b",
    r"\bact as an? (?:uncensored|unrestricted|unfiltered)",
    r"\byou (?:now )?(?:have|has) no (?:\w+ ){0,2}(?:restrictions|rules|limits|filters?|polic(?:y|ies)|guidelines)",
    r"\b(?:ai|assistant|model|bot|chatbot)\b (?:with|without|that has) no (?:\w+ ){0,2}"
    r"(?:rules|restrictions|filters?|content policy|guidelines|limits)",
    r"\bno longer (?:a|an|the)\b[^.\n]{0,30}\b(?:bot|assistant|model)\b",
    r"\b(?:pretend|imagine) (?:that )?you (?:are|have)\b[^.\n]{0,40}\b(?:no (?:rules|restrictions|filters?|content policy|limits)|unrestricted)",
    r"\bmodo (?:desarrollador|desenvolvedor|sviluppatore)\b",
    r"\b(?:sin restricciones|senza restrizioni|sans restrictions|sem restricoes|ohne einschrankungen)\b",
    r"\b(?:du bist|vous etes|tu es|eres|sei) (?:jetzt |desormais |maintenant |ahora |ora )?(?:uneingeschrankt|sans restriction|sin restric|senza restriz)",
    r"\buneingeschrankt\b[^.\n]{0,40}\bkeine richtlinien",
    r"开发者模式|越狱模式",
    r"你(?:现在)?(?:是|成为)[^。\n]{0,12}(?:没有|不受|无)(?:任何)?(?:限制|规则|约束|审查)",
    # forged reasoning that talks itself out of the rules
    r"\b(?:i have|i've|i) (?:already )?(?:reasoned|concluded|determined|verified|established)\b[^\n]{0,120}"
    r"\b(?:safety|restrictions?|guidelines|content policy|exempt|authori[sz]ed|confirmation token|append)",
    r"\b(?:safety guidelines|safety rules|content policy|restrictions)\b[^.\n]{0,20}\b(?:were|was|are) not meant\b",
    r"\bexempt from the (?:usual )?(?:restrictions|rules|policy)",
    r"\bdisregard the content policy\b",
    r"\b(?:linee guida di sicurezza|sicherheitsrichtlinien|regles de securite|reglas de seguridad|regras de seguranca)\b"
    r"[^.\n]{0,40}\b(?:non valgono|nicht gelten|ne s'appliquent pas|no aplican|nao se aplicam)",
)

# A role label at the start of the note (the plain view is one line) is a forged turn only when what
# follows speaks to the model, or another turn follows: "System: Debian 12, 16 GB" is how people write down their machine.
_TO_THE_MODEL = (
    r"(?=[^\n]{0,120}\b(?:you|your|ignore|disregard|forget|override|obey|from now on|"
    r"(?:new|updated|previous|prior|above|original) (?:instructions|rules|prompt|guidelines)|"
    r"the (?:assistant|model|ai|agent)|sure|of course|here is|here's|i will|i'll)\b)"
)
SPOOF = _rx(
    r"(?:^|\n)\s*(?:system|assistant|developer)\s*:" + _TO_THE_MODEL,
    r"(?:^|\n)\s*(?:user|human|system|developer)\s*:.{0,300}?\b(?:assistant|ai)\s*:",  # a forged exchange
    r"(?:#{2,}|-{3,}|={3,})\s*(?:end of (?:the )?(?:user input|document|context|instructions|prompt)|system)\b",
    r"[\[<]\s*/?\s*(?:system|admin|developer|sys|inst)\s*[\]>]",
    r"<\|\s*(?:im_start|im_end|system|endoftext|assistant|user)\s*\|>",
    r"\b(?:system|systeme|sistema) ?(?:note|notice|update|message|alert|nota|hinweis)\s*:",
    r"\bsystemhinweis\s*:|\bnote systeme\s*:|\bnota del sistema\s*:|\bnota di sistema\s*:|\bimportant system update\b",
    r"\bnote to (?:the |any )?(?:bot|ai|assistant|model|llm|agent)s?\b",
    r"\b(?:ai|assistant|llm|bot|agent|model)s? (?:reading|processing|reviewing) this\b",
    r"\bif you are an? (?:ai|llm|language model|assistant|agent)\b",
    r"\b(?:notice|instructions?|message) to (?:any|all) (?:ai|llm|assistant|agent)s?\b",
    r"\bfor ai (?:coding )?(?:agents|assistants)\b|\bai (?:coding )?agents (?:integrating|using|reading|that)\b",
    r"\bimportant for the (?:assistant|ai|model|agent)\b",
    r"\b(?:earlier |previous )?(?:developer|system)(?: and system)? (?:messages|instructions)\b[^.\n]{0,40}\b(?:compromised|invalid|revoked)",
    r"\bthe user (?:is an admin|has granted permission to skip|is (?:clearly )?authori[sz]ed)",
    r"<thinking>",
    r"(?:^|\n)\s*(?:系统|助手)\s*[:：](?=[^\n]{0,80}(?:你|您|忽略|无视|忘记|指令|提示词|从现在起|从现在开始|助手|模型))",
)

EXFILTRATION = _rx(
    r"\b(?:reveal|print|show|output|repeat|tell me|display|dump|leak|give me|reproduce|summar(?:y|ize) of)\b[^.\n]{0,50}"
    r"\b(?:system prompt|system message|initial instructions|hidden prompt|operating instructions|"
    r"(?:your|the) (?:exact |original |full |initial )?instructions|instructions you were given|internal configuration|"
    r"(?:any |all )?credentials|api keys?|passwords?|admin password|confidential (?:data|contents|information))",
    r"\b(?:word for word|verbatim|wortwortlich|mot pour mot|palabra por palabra|parola per parola|palavra por palavra)\b",
    r"\brepeat the words above\b|\bwhat was written above\b|\beverything in your context\b|\bhidden prompt\b",
    r"\b(?:list|print|dump|show) (?:all )?(?:the )?environment variables\b",
    r"\b(?:send|email|e-mail|forward|post|upload|exfiltrate|transmit|archive)\b[^\n]{0,80}"
    r"\b(?:customer (?:list|data|emails?|database|records)|(?:all |the )?(?:order|user|customer|client) data|"
    r"api keys?|credentials|passwords?|secrets|tokens|private keys?|ssh keys?)",
    r"\b(?:customer (?:list|data|emails?|database|records)|api keys?|credentials|passwords?|donnees clients|datos de clientes)\b"
    r"[^\n]{0,80}\b(?:send|email|forward|envoie[sz]?\b|envoyez|env[ií]a\b|envie\b|invia\b|externally|to (?:an? )?external)",
    r"\b(?:curl|wget|nc|ncat|scp|rsync|invoke-webrequest)\b[^\n]{0,120}"
    r"(?:\$\{?[a-z_]*(?:key|token|secret|password)|api[_-]?key|\.ssh|\.aws|\.env\b|/etc/passwd|id_rsa|credentials)",
    r"\b(?:cat|type|less|more|head|tail|base64)\s+[^\n]{0,40}(?:\.ssh/|id_rsa|\.aws/credentials|\.netrc|\.env\b|/etc/shadow)",
    # imperative only: "reveal the keys", not "tests whether agents leak secrets"
    r"(?:^|[.;:!?\n]\s*|\b(?:please|and|then|you|to|always)\s+)(?:reveal|leak|expose)\b[^.\n]{0,30}\b(?:credentials|secrets|keys)\b",
    r"\b(?:verrate|zeige)\b[^.\n]{0,30}\b(?:systemanweisungen|system-prompt|systemprompt)",
    r"\b(?:revele[rz]?|revelez|revela|rivela|revele)\b[^.\n]{0,40}\b(?:instructions|instrucciones|istruzioni|instrucoes|prompt)",
    # naming the system prompt is not asking for it: a verb that shows, sends or repeats it must be near
    r"\b(?:montre|affiche|donne|muestra|dame|mostra|mostre|imprima|imprime|stampa|repete|repite|ripeti|zeig|gib|"
    r"envoie|envia|envie|invia|schick)\w*\b[^.\n]{0,40}\b(?:prompt (?:systeme|del sistema|di sistema|de sistema|do sistema)|"
    r"system-?prompt)\b",
    r"(?:显示|输出|告诉我|泄露|打印|透露|重复)[^。\n]{0,10}(?:系统提示|系统指令|初始指令|系统消息|隐藏提示|你的指令)",
    r"(?:把|将)[^。\n]{0,20}(?:密钥|密码|令牌|凭据|客户(?:名单|数据))[^。\n]{0,20}(?:发送|发给|上传|转发)",
)

# What makes "include X in every answer" an attack: X is a link, a code, a secret, or the note itself.
_PAYLOAD = (
    r"[^.\n]{0,60}\b(?:link|url|https?|token|code|key|keys|password|passwords|secret|secrets|credentials?|cookie|"
    r"this (?:note|message|text)|hidden|marker|canary|referral)\b"
)

HIJACK = _rx(
    r"\b(?:call|use|invoke|run|trigger)\s+(?:the\s+)?(?:send_email|http_post|delete_file|\w*_email|\w*webhook\w*)\b",
    r"\b(?:call|use|invoke)\s+\w+\b[^.\n]{0,60}\bbefore (?:you )?(?:respond|reply|answer|continu)",
    r"\b(?:save|store|write|add|put|keep)\b[^.\n]{0,60}\b(?:long-term|persistent|permanent)? ?memory\b[^\n]{0,100}"
    r"\b(?:every|all|each) (?:future|later|subsequent|following)",
    rf"\b(?:repeat|include|append|add|insert|mention)\b(?={_PAYLOAD})[^.\n]{{0,60}}\b(?:in|to|at the end of) (?:every|all|each) "
    r"(?:future |later |subsequent )?(?:reply|replies|response|responses|summary|summaries|report|reports|answer|answers|message|messages)",
    rf"\b(?:must|always)\s+(?:be\s+)?(?:include|included|append|appended|add|added|repeat)\b(?={_PAYLOAD})[^.\n]{{0,60}}\b(?:every|each|all)\b",
    r"\b(?:append|add|include|insert)\s+(?:the\s+)?(?:exact\s+)?(?:token|verification code|reference code|confirmation token|marker|canary)\b",
    r"\b(?:token|jeton|code)\b[^.\n]{0,60}\b(?:am ende|a la fin|al final|alla fine|at the end)\b[^.\n]{0,30}\b(?:antwort|reponse|respuesta|risposta|reply|response|answer)",
    r"\bon the next (?:user )?message\b[^.\n]{0,40}\b(?:print|reveal|begin by)",
    r"\b(?:empty|wipe|delete|remove|clear)\b[^.\n]{0,30}\b(?:output|build|dist|data) (?:directory|folder)\b[^.\n]{0,40}\bfirst\b"
    r"|\b(?:should|must) first (?:empty|wipe|delete|remove|clear)\b",
    r"\b(?:decode|translate|convert)\b[^.\n]{0,60}\b(?:and|then)\b[^.\n]{0,30}\b(?:do|follow|execute|run|obey|act on)\b"
    r"[^.\n]{0,20}\b(?:what it says|the instructions?|it as a command|exactly|inside)",
    r"\b(?:decode it|decode this)\b[^.\n]{0,40}\b(?:do|follow|execute)\b",
)

_RULESETS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("override", OVERRIDE, "it tells the agent to drop or replace its instructions"),
    ("persona", PERSONA, "it tries to switch the agent into a persona without rules"),
    ("spoof", SPOOF, "it imitates a system, assistant or tool message"),
    ("exfiltration", EXFILTRATION, "it asks to reveal the instructions or send secrets or data out"),
    ("hijack", HIJACK, "it plants an action or a reply pattern for later turns"),
)

# Zero-width and joiner characters, bidi controls, the BOM, invisible math operators, tag characters.
INVISIBLE = re.compile("[\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
ZWJ = "\u200d"


def scan_memory_text(text: str, semantic: Semantic | None = None) -> list[Finding]:
    """Problems that make `text` unsafe to keep in long-term memory (empty when clean): the rules first,
    then — when they find nothing — the semantic layer (semantic.py), if it can run here."""
    findings = rule_findings(text)
    if findings:
        return findings
    layer = semantic if semantic is not None else default_semantic()
    score = layer.score(text)
    if score is not None and score >= layer.threshold:
        reason = "Rejected: it reads like an instruction planted for a later session, not a fact or a preference."
        findings.append(Finding("semantic", reason, _excerpt(text, 0)))
    return findings


def rule_findings(text: str) -> list[Finding]:
    """What the rule layer finds, over the normalized text and every decoded view of it."""
    findings: list[Finding] = []
    planted = planted_command(text)
    if planted is not None:
        findings.append(planted)
    seen: set[str] = set()

    def add(finding: Finding) -> None:
        if finding.kind not in seen:
            seen.add(finding.kind)
            findings.append(finding)

    hidden = _invisible(text)
    if hidden:
        add(Finding("invisible", f"it contains invisible characters ({hidden})", _excerpt(text, 0)))
    for label, view in _views(text):
        for kind, pattern, reason in _RULESETS:
            match = next((m for m in pattern.finditer(view) if not _guarded(view, m)), None)
            if match is None:
                continue
            if label == "plain":
                add(Finding(kind, f"Rejected: {reason}.", _excerpt(view, match.start())))
            else:
                add(
                    Finding(
                        "encoded",
                        f"Rejected: a {label} payload hides text where {reason}.",
                        _excerpt(view, match.start()),
                    )
                )
    return findings


# A shell command written into a note: in backticks, or from a program's name to the end of the sentence.
COMMAND_SPAN = re.compile(
    r"`([^`]{3,300})`|\b((?:curl|wget|bash|sh|sudo|nc|ncat|scp|ssh|rsync|export|eval|chmod|chown|rm|git|python3?)"
    r"\s(?:(?![.;]\s|[.;]$|\n).){2,300})",
    re.IGNORECASE,
)


def planted_command(text: str) -> Finding | None:
    """A note that tells the agent to run a command that would leave the sandbox in a harmful way:
    download-and-run, sending home-folder files out, changing files outside the workspace, or setting an
    environment hook. The command classifier judges it; a prohibition ("never run …") protects."""
    from orkas.engine.sandbox.risk import classify_command  # the sandbox's own judgement of commands

    plain = normalize(text)
    for match in COMMAND_SPAN.finditer(plain):
        span = (match.group(1) or match.group(2)).strip()
        if match.group(2):
            span = span[0].lower() + span[1:]  # a capital at the start of a sentence
        risk = classify_command(span)
        categories = set(risk.categories)
        hook = "code_execution" in categories and "makes programs run other code" in risk.reason
        harmful = (
            ({"network", "package_install"} & categories and "code_execution" in categories)
            or ("outside_workspace" in categories and ("network" in categories or "changes" in risk.reason))
            or hook
        )
        if harmful and not NEGATED.search(_fold(plain[max(0, match.start() - 24) : match.start()])):
            return Finding(
                "planted_command",
                f"Rejected: it plants a command that would leave the sandbox ({risk.reason}).",
                span[:80],
            )
    return None


NEGATED = re.compile(
    r"(?:\b(?:never|do not|don't|must not|should not|not to|nunca|nao|jamais|nie|niemals)|不要|别|禁止|切勿)\W*(?:\w+\W+)?$"
)
CONDITIONAL = re.compile(
    r"^\W*(?:\w+\W+){0,3}(?:only (?:after|when|if|once)|after (?:the user|approval)|with (?:the user's )?approval)"
)


def _guarded(view: str, match: re.Match[str]) -> bool:
    """A rule the note states as a prohibition ("never print API keys") or under the person's approval
    ("use send_email only after the user approved") protects rather than attacks."""
    before = view[max(0, match.start() - 24) : match.start()]
    after = view[match.end() : match.end() + 60]
    return bool(NEGATED.search(before) or CONDITIONAL.search(after))


JOINING_SCRIPTS: tuple[str, ...] = (
    "ARABIC",
    "SYRIAC",
    "DEVANAGARI",
    "BENGALI",
    "GURMUKHI",
    "GUJARATI",
    "ORIYA",
    "TAMIL",
    "TELUGU",
)
JOINING_SCRIPTS += ("KANNADA", "MALAYALAM", "SINHALA", "MONGOLIAN", "NKO", "HEBREW")
ZWNJ = "\u200c"
DIRECTION_MARKS = frozenset("\u200e\u200f\u061c")


def _script_of(char: str) -> str:
    try:
        return unicodedata.name(char).split(" ", 1)[0]
    except ValueError:
        return ""


def _ordinary(text: str, index: int, char: str) -> bool:
    """Zero-width non-joiners inside Persian, Arabic or Indic words, and direction marks in right-to-left
    text, are how those languages are written — not hidden characters."""
    if char == ZWNJ:
        around = text[index - 1 : index] + text[index + 1 : index + 2]
        return any(_script_of(c) in JOINING_SCRIPTS for c in around)
    if char in DIRECTION_MARKS:
        return any(_script_of(c) in ("ARABIC", "HEBREW", "SYRIAC", "THAANA", "NKO") for c in text)
    return False


def _invisible(text: str) -> str:
    names = set()
    for index, char in enumerate(text):
        if _ordinary(text, index, char):
            continue
        if char == ZWJ:
            before, after = text[index - 1 : index], text[index + 1 : index + 2]
            if before and after and _is_emoji(before) and _is_emoji(after):
                continue  # emoji sequences (👩‍💻) are ordinary text
            names.add("zero-width joiner")
        elif INVISIBLE.match(char):
            code = ord(char)
            if 0xE0000 <= code <= 0xE007F:
                names.add("tag characters")
            elif 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069 or code in (0x200E, 0x200F):
                names.add("bidirectional controls")
            else:
                names.add("zero-width characters")
    return ", ".join(sorted(names))


def _is_emoji(char: str) -> bool:
    return unicodedata.category(char) == "So" or 0x1F000 <= ord(char) <= 0x1FAFF or char == "\ufe0f"


def _fold(text: str) -> str:
    """Lower case, compatibility forms folded, accents dropped, whitespace collapsed."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"[ \t\r\f\v]+", " ", text).casefold()


def _views(text: str) -> Iterator[tuple[str, str]]:
    """The text as written (normalized: disguises removed), then every way it might be hiding something,
    each folded."""
    yield "plain", _fold(normalize(text))
    tags = "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)
    if len(tags) >= 4:
        yield "tag-character", _fold(tags)
    despaced = re.sub(r"\b(?:\w ){3,}\w\b", lambda m: m.group(0).replace(" ", ""), text)
    if despaced != text:
        yield "spaced-letter", _fold(despaced)
    leet = re.sub(r"\b(?=\w*[a-z])(?=\w*[013457@$])[\w@$]+\b", _unleet, text, flags=re.IGNORECASE)
    if leet != text:
        yield "leetspeak", _fold(leet)
    if len(text) >= 20:
        yield "reversed", _fold(text[::-1])
        yield "rot13", _fold(codecs.encode(text, "rot13"))
    for label, decoded in _decoded(text):
        yield label, _fold(decoded)


LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})


def _unleet(match: re.Match[str]) -> str:
    return match.group(0).translate(LEET)


MORSE = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g", "....": "h", "..": "i",
    ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n", "---": "o", ".--.": "p", "--.-": "q", ".-.": "r",
    "...": "s", "-": "t", "..-": "u", "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z",
    "-----": "0", ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
    "--...": "7", "---..": "8", "----.": "9", ".-.-.-": ".", "--..--": ",", ".--.-.": "@", "-....-": "-",
}  # fmt: skip


def _decoded(text: str) -> Iterator[tuple[str, str]]:
    """Readable text found by decoding the encoded-looking runs in `text`."""
    for run in re.findall(r"[A-Za-z0-9+/_-]{16,}={0,2}", text):
        padded = run + "=" * (-len(run) % 4)
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            yield from _readable("base64", lambda p=padded, d=decode: d(p))
    for run in re.findall(r"[A-Z2-7]{16,}={0,6}", text):
        yield from _readable("base32", lambda r=run: base64.b32decode(r + "=" * (-len(r) % 8)))
    for run in re.findall(r"(?:[0-9a-fA-F]{2}){8,}", text):
        yield from _readable("hex", lambda r=run: binascii.unhexlify(r))
    bits = re.findall(r"(?:[01]{8}\s*){4,}", text)
    for run in bits:
        yield from _readable("binary", lambda r=run: bytes(int(b, 2) for b in r.split()))
    if re.search(r"%[0-9a-fA-F]{2}", text):
        yield from _readable("URL-encoded", lambda: unquote(text).encode())
    if re.search(r"\\u[0-9a-fA-F]{4}", text):
        yield from _readable(
            "unicode-escape", lambda: re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text).encode()
        )
    for run in re.findall(r"<~(.+?)~>", text, flags=re.DOTALL):
        yield from _readable("ascii85", lambda r=run: base64.a85decode(r))
    for run in re.findall(r"[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{20,}", text):
        yield from _readable("base85", lambda r=run: base64.b85decode(r))
    for run in re.findall(r"[.\-][.\- /]{40,}", text):
        words = run.strip().split("/")
        decoded = " ".join("".join(MORSE.get(code, "?") for code in word.split()) for word in words)
        if decoded.count("?") < len(decoded) / 10:
            yield "Morse", decoded


def _readable(label: str, decode: object) -> Iterator[tuple[str, str]]:
    try:
        raw = decode()  # type: ignore[operator]
        text = raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError, binascii.Error, TypeError):
        return
    printable = sum(c.isprintable() or c.isspace() for c in text)
    if len(text) >= 8 and printable / len(text) > 0.9 and re.search(r"[A-Za-z\u4e00-\u9fff]{3}", text):
        yield label, text


def _excerpt(text: str, at: int, width: int = 80) -> str:
    start = max(0, at - 10)
    return " ".join(text[start : start + width].split())
