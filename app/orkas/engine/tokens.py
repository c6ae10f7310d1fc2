"""Token estimates without a tokenizer: fast, language-aware, and erring on the safe side.

Text is split into character classes that tokenize very differently: CJK ideographs (about one
token each or more), kana, hangul, Latin-script words (a short word is one token, long ones split),
digit runs (split in threes), punctuation and symbols, whitespace (a single space joins the next
word; newlines and indentation cost tokens), and everything else. The weights are calibrated on
tests/fixtures/token_calibration.jsonl against real tokenizers (cl100k, o200k, DeepSeek); see
tests/engine/test_tokens.py, which enforces the error bounds.

Messages count everything a provider bills: text, thinking (redacted payloads too), tool inputs as
JSON, tool results, and images by their pixel size as the providers count them.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
from collections.abc import Iterable, Sequence

from orkas.engine.messages import (
    AttachmentBlock,
    ContentBlock,
    ImageBlock,
    Message,
    Notice,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)

# Calibrated weights (tokens per unit). See the module docstring.
CJK_PER_CHAR = 1.1
KANA_PER_CHAR = 1.0
HANGUL_PER_CHAR = 1.0
WORD_BASE = 1.1  # one token for a word up to SHORT_WORD characters
SHORT_WORD = 7
WORD_EXTRA_PER_CHAR = 0.25  # for characters beyond SHORT_WORD
ACCENT_EXTRA = 0.8  # per non-ASCII letter in a Latin-script word (ç, ã, é split words apart)
DIGITS_PER_GROUP = 0.8  # per group of three digits
PUNCT_PER_CHAR = 0.7
NEWLINE_RUN = 0.8
SPACE_RUN = 0.4  # a run of two or more spaces (indentation)
OTHER_PER_CHAR = 0.8
SAFETY = 1.04

MESSAGE_OVERHEAD = 4
TOOL_CALL_OVERHEAD = 12
TOOL_RESULT_OVERHEAD = 6
IMAGE_FALLBACK = 1600  # unknown size: the most an ordinary image costs on Anthropic

_SEGMENT = re.compile(
    r"(?P<cjk>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\u3000-\u303f\uff00-\uffef]+)"
    r"|(?P<kana>[\u3040-\u30ff\u31f0-\u31ff]+)"
    r"|(?P<hangul>[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+)"
    r"|(?P<word>[^\W\d_]+)"
    r"|(?P<digits>\d+)"
    r"|(?P<newlines>\s*\n\s*)"
    r"|(?P<spaces>[ \t]{2,})"
    r"|(?P<space>[ \t])"
    r"|(?P<punct>[!-/:-@\[-`{-~])"
    r"|(?P<other>.)",
    re.DOTALL,
)


REMEMBER_FROM = 256  # characters: shorter texts are estimated faster than looked up
REMEMBER_MOST = 20_000  # texts remembered, then forgotten all at once (a few MB of ints at most)
_remembered: dict[tuple[int, int], int] = {}


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`. Never negative; 0 only for the empty string."""
    if not text:
        return 0
    if len(text) < REMEMBER_FROM:
        return _estimate(text)
    # A long text (a tool's output, a pasted file) is estimated again at every turn's first context check, as the
    # history is: remembered by its hash and length (ints, not the text), ~50× faster than walking it again.
    key = (hash(text), len(text))
    known = _remembered.get(key)
    if known is None:
        if len(_remembered) >= REMEMBER_MOST:
            _remembered.clear()
        known = _remembered[key] = _estimate(text)
    return known


def _estimate(text: str) -> int:
    total = 0.0
    for match in _SEGMENT.finditer(text):
        kind = match.lastgroup
        piece = match.group()
        if kind == "word":
            total += WORD_BASE + max(0, len(piece) - SHORT_WORD) * WORD_EXTRA_PER_CHAR
            if not piece.isascii():
                total += ACCENT_EXTRA * sum(1 for c in piece if ord(c) > 127)
        elif kind == "cjk":
            total += len(piece) * CJK_PER_CHAR
        elif kind == "punct":
            total += PUNCT_PER_CHAR
        elif kind == "digits":
            total += math.ceil(len(piece) / 3) * DIGITS_PER_GROUP
        elif kind == "newlines":
            total += NEWLINE_RUN
        elif kind == "spaces":
            total += SPACE_RUN
        elif kind == "kana":
            total += len(piece) * KANA_PER_CHAR
        elif kind == "hangul":
            total += len(piece) * HANGUL_PER_CHAR
        elif kind == "other":
            total += OTHER_PER_CHAR
    return max(1, math.ceil(total * SAFETY))


def estimate_json(value: object) -> int:
    return estimate_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def estimate_block(block: ContentBlock) -> int:
    if isinstance(block, TextBlock):
        return estimate_tokens(block.text)
    if isinstance(block, ImageBlock):
        return image_tokens(block)
    if isinstance(block, ToolUseBlock):
        return TOOL_CALL_OVERHEAD + estimate_tokens(block.name) + estimate_json(dict(block.input))
    if isinstance(block, ToolResultBlock):
        return TOOL_RESULT_OVERHEAD + sum(estimate_block(part) for part in block.content)
    if isinstance(block, AttachmentBlock):
        from orkas.engine.convert import attachment_line  # what the provider will read

        return estimate_tokens(attachment_line(block))
    # Thinking: readable text is billed as output and replayed as input; a redacted payload is
    # opaque base64, which tokenizes at roughly one token per three to four characters.
    return estimate_tokens(block.text) + (len(block.signature or "") // 3 if block.redacted else 0)


def estimate_message(message: Message) -> int:
    if isinstance(message, Notice):
        return 0  # never sent to a model
    return MESSAGE_OVERHEAD + sum(estimate_block(b) for b in message.content)


def estimate_messages(messages: Iterable[Message]) -> int:
    return sum(estimate_message(m) for m in messages)


def estimate_request(system: str, tools_json: Sequence[object], messages: Sequence[Message]) -> int:
    """Everything a request sends: system prompt, tool definitions and the history."""
    return estimate_tokens(system) + sum(estimate_json(t) for t in tools_json) + estimate_messages(messages)


# --- images ---------------------------------------------------------------------------------------


def image_tokens(block: ImageBlock) -> int:
    """What the costlier of Anthropic and OpenAI charges for this image."""
    size = image_size(block)
    if size is None:
        return IMAGE_FALLBACK
    width, height = size
    return max(_anthropic_image(width, height), _openai_image(width, height))


def _anthropic_image(width: int, height: int) -> int:
    # Images are scaled to fit 1568 px on the long side (and ~1.15 megapixels), then width*height/750.
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_150_000 / max(1, width * height)))
    return math.ceil(width * scale * height * scale / 750)


def _openai_image(width: int, height: int) -> int:
    # High detail: fit in 2048 px, shortest side to 768 px, then 170 per 512 px tile plus 85.
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def image_size(block: ImageBlock) -> tuple[int, int] | None:
    """(width, height) from the image header, or None when it cannot be read."""
    try:
        head = base64.b64decode(block.data[:87_384] + "=" * (-len(block.data[:87_384]) % 4))
    except ValueError:
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return int(width), int(height)
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return int(width), int(height)
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(head)
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 <= len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        length = int.from_bytes(head[i + 2 : i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            height, width = struct.unpack(">HH", head[i + 5 : i + 9])
            return int(width), int(height)
        i += 2 + length
    return None
