"""Token estimates against real tokenizers, on the committed calibration fixture."""

from __future__ import annotations

import base64
import statistics
import struct
import zlib

import pytest

from orkas.engine.messages import (
    AssistantMessage,
    ImageBlock,
    Notice,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from orkas.engine.tokens import (
    IMAGE_FALLBACK,
    estimate_message,
    estimate_tokens,
    image_size,
    image_tokens,
)
from tests.engine.token_reference import fixture


def errors(kind: str | None = None) -> list[float]:
    return [(estimate_tokens(text) - ref) / ref for k, text, ref in fixture() if kind in (None, k)]


def test_the_fixture_is_big_and_varied_enough() -> None:
    kinds = [k for k, _, _ in fixture()]
    assert len(kinds) >= 200
    assert {"english", "chinese", "mixed", "portuguese", "code", "json"} <= set(kinds)


def test_mean_absolute_error_is_at_most_15_percent() -> None:
    assert statistics.mean(abs(e) for e in errors()) <= 0.15


@pytest.mark.parametrize("kind", ["english", "chinese", "mixed", "portuguese", "code", "json"])
def test_each_kind_stays_within_15_percent(kind: str) -> None:
    assert statistics.mean(abs(e) for e in errors(kind)) <= 0.15


def test_underestimates_are_at_most_10_percent_at_p95() -> None:
    under = sorted(-e for e in errors())
    assert under[int(0.95 * (len(under) - 1))] <= 0.10


def test_chinese_is_not_counted_like_english() -> None:
    chinese = "当上下文窗口快要满的时候系统会先把旧的工具输出遮蔽掉"
    assert estimate_tokens(chinese) >= len(chinese)  # about a token per character, not per four
    assert estimate_tokens("") == 0 and estimate_tokens("a") >= 1


def png(width: int, height: int) -> str:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 10)) + chunk(b"IEND", b"")
    )
    return base64.b64encode(raw).decode()


def test_images_count_by_their_size() -> None:
    small = ImageBlock(data=png(200, 100), media_type="image/png")
    big = ImageBlock(data=png(1000, 1000), media_type="image/png")
    assert image_size(small) == (200, 100) and image_size(big) == (1000, 1000)
    assert image_tokens(small) == 255  # OpenAI's 85 + 170 for one tile beats 200*100/750
    assert image_tokens(big) == 1334  # Anthropic: 1000*1000/750
    assert image_tokens(ImageBlock(data="not an image", media_type="image/png")) == IMAGE_FALLBACK


def test_jpeg_gif_and_webp_headers() -> None:
    jpeg = (
        b"\xff\xd8"
        + b"\xff\xe0\x00\x10"
        + b"JFIF\0"
        + b"\0" * 9
        + b"\xff\xc0\x00\x11\x08"
        + struct.pack(">HH", 480, 640)
    )
    gif = b"GIF89a" + struct.pack("<HH", 32, 16)
    webp = b"RIFF\0\0\0\0WEBPVP8X" + b"\0" * 8 + (99).to_bytes(3, "little") + (49).to_bytes(3, "little")
    sizes = [
        image_size(ImageBlock(data=base64.b64encode(raw).decode(), media_type="image/x")) for raw in (jpeg, gif, webp)
    ]
    assert sizes == [(640, 480), (32, 16), (100, 50)]


def test_messages_count_everything_the_provider_bills() -> None:
    text_only = estimate_message(UserMessage(content=(TextBlock(text="hello there"),)))
    with_image = estimate_message(
        UserMessage(content=(TextBlock(text="hello there"), ImageBlock(data=png(1000, 1000), media_type="image/png")))
    )
    assert with_image - text_only == 1334
    thinking = AssistantMessage(
        content=(ThinkingBlock(text="let me think " * 50, signature="s"),), provider="p", model="m"
    )
    redacted = AssistantMessage(
        content=(ThinkingBlock(text="", signature="A" * 3000, redacted=True),), provider="p", model="m"
    )
    assert estimate_message(thinking) > 100 and estimate_message(redacted) >= 1000
    call = AssistantMessage(
        content=(ToolUseBlock(id="a", name="write_file", input={"content": "x " * 500}),),
        provider="p",
        model="m",
    )
    assert estimate_message(call) > 500
    result = UserMessage(content=(ToolResultBlock(tool_use_id="a", content=(TextBlock(text="line\n" * 300),)),))
    assert estimate_message(result) > 300
    assert estimate_message(Notice(kind="n", text="never sent " * 100)) == 0
