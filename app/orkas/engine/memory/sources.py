"""Text out of the files a knowledge base takes: plain text, Markdown, code, HTML and documents."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

from orkas.engine.sandbox import PathDenied, PathPolicy
from orkas.engine.tools.documents import DOCUMENT_KINDS, DocumentError, extract_text

TEXT = {
    ".txt", ".md", ".markdown", ".rst", ".csv", ".tsv", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".log",
    ".py", ".js", ".ts", ".tsx", ".jsx", ".java", ".kt", ".go", ".rs", ".c", ".h", ".cpp", ".hpp", ".cs", ".rb",
    ".php", ".swift", ".sql", ".sh", ".css", ".scss", ".vue", ".svelte", ".tex", ".org",
}  # fmt: skip
HTML = {".html", ".htm", ".xhtml"}
SUPPORTED = frozenset(TEXT | HTML | set(DOCUMENT_KINDS))
MAX_BYTES = 20 * 1024 * 1024


def extract(path: Path, policy: PathPolicy) -> str:
    """The file's text, read through `policy` (a link out of the source is refused). Raises `ValueError`
    with the reason for what cannot be read."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise ValueError(f"{path.name}: this kind of file is not indexed ({suffix or 'no extension'})")
    try:
        raw = policy.read_bytes(path, limit=MAX_BYTES + 1)
    except PathDenied as e:
        raise ValueError(f"{path.name}: not read ({e.reason})") from e
    if len(raw) > MAX_BYTES:
        raise ValueError(f"{path.name}: larger than {MAX_BYTES // (1024 * 1024)} MB")
    if suffix in DOCUMENT_KINDS:
        try:
            return extract_text(path.name, raw)
        except DocumentError as e:
            raise ValueError(f"{path.name}: {e}") from e
    if b"\0" in raw[:4096]:
        raise ValueError(f"{path.name}: binary content")
    text = raw.decode("utf-8", errors="replace")
    return html_text(text) if suffix in HTML else text


class _Text(HTMLParser):
    SKIP = frozenset({"script", "style", "noscript", "template", "svg"})
    BLOCK = frozenset(
        {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre", "table"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def html_text(markup: str) -> str:
    parser = _Text()
    parser.feed(markup)
    text = html.unescape("".join(parser.parts))
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line)
