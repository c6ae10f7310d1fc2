"""Text out of the documents people keep: PDF, Word, Excel and PowerPoint files.

The bytes come from the caller, who read them through the path policy: the parsers never open a path
themselves. Extraction is cached by content, so paging through a long PDF parses it once.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from pathlib import Path
from typing import BinaryIO

DOCUMENT_KINDS = {".pdf": "pdf", ".docx": "docx", ".xlsx": "xlsx", ".xlsm": "xlsx", ".pptx": "pptx"}
MAX_DOCUMENT_BYTES = 50 * 1024 * 1024
CACHED = 32
_cache: OrderedDict[str, str] = OrderedDict()
_lock = threading.Lock()


class DocumentError(Exception):
    """The file could not be read as the document it claims to be."""


def document_kind(path: Path) -> str | None:
    return DOCUMENT_KINDS.get(path.suffix.lower())


def extract_text(name: str, data: bytes) -> str:
    """The document's text; `name` gives its kind by extension. Raises `DocumentError` with a reason a
    person understands."""
    kind = document_kind(Path(name))
    key = f"{kind}:{hashlib.sha256(data).hexdigest()}"
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    text = _extract(kind, name, io.BytesIO(data))
    with _lock:
        _cache[key] = text
        while len(_cache) > CACHED:
            _cache.popitem(last=False)
    return text


def _extract(kind: str | None, name: str, data: BinaryIO) -> str:
    try:
        if kind == "pdf":
            return _pdf(name, data)
        if kind == "docx":
            return _docx(data)
        if kind == "xlsx":
            return _xlsx(data)
        if kind == "pptx":
            return _pptx(data)
    except DocumentError:
        raise
    except Exception as e:  # the parsers raise many types for damaged files
        raise DocumentError(f"could not read {name} as {kind}: {type(e).__name__}: {e}") from e
    raise DocumentError(f"{name} is not a supported document")


def _pdf(name: str, data: BinaryIO) -> str:
    from pypdf import PdfReader

    reader = PdfReader(data)
    if reader.is_encrypted:
        try:
            reader.decrypt("")
        except Exception as e:
            raise DocumentError(f"{name} is password-protected") from e
    pages = []
    for number, page in enumerate(reader.pages, start=1):
        pages.append(f"--- page {number} ---\n{(page.extract_text() or '').strip()}")
    return "\n\n".join(pages)


def _docx(data: BinaryIO) -> str:
    import docx

    document = docx.Document(data)
    parts = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            parts.append(" | ".join(cell.text.strip() for cell in row.cells))
    return "\n".join(parts)


def _xlsx(data: BinaryIO) -> str:
    import openpyxl

    book = openpyxl.load_workbook(data, read_only=True, data_only=True)
    parts = []
    try:
        for sheet in book.worksheets:
            parts.append(f"--- sheet {sheet.title} ---")
            for row in sheet.iter_rows(values_only=True):
                if any(value is not None for value in row):
                    parts.append("\t".join("" if v is None else str(v) for v in row))
    finally:
        book.close()
    return "\n".join(parts)


def _pptx(data: BinaryIO) -> str:
    import pptx

    presentation = pptx.Presentation(data)
    parts = []
    for number, slide in enumerate(presentation.slides, start=1):
        parts.append(f"--- slide {number} ---")
        for shape in slide.shapes:
            if shape.has_text_frame:
                parts.append(shape.text_frame.text)
    return "\n".join(parts)
