"""Text out of the documents people keep: PDF, Word, Excel and PowerPoint files.

Extraction is cached by (path, size, mtime) so paging through a long PDF parses it once.
"""

from __future__ import annotations

import functools
from pathlib import Path

DOCUMENT_KINDS = {".pdf": "pdf", ".docx": "docx", ".xlsx": "xlsx", ".xlsm": "xlsx", ".pptx": "pptx"}


class DocumentError(Exception):
    """The file could not be read as the document it claims to be."""


def document_kind(path: Path) -> str | None:
    return DOCUMENT_KINDS.get(path.suffix.lower())


def extract_text(path: Path) -> str:
    """The document's text. Raises `DocumentError` with a reason a person understands."""
    info = path.stat()
    return _cached(str(path), info.st_size, info.st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _cached(path: str, _size: int, _mtime: int) -> str:
    kind = document_kind(Path(path))
    try:
        if kind == "pdf":
            return _pdf(Path(path))
        if kind == "docx":
            return _docx(Path(path))
        if kind == "xlsx":
            return _xlsx(Path(path))
        if kind == "pptx":
            return _pptx(Path(path))
    except DocumentError:
        raise
    except Exception as e:  # the parsers raise many types for damaged files
        raise DocumentError(f"could not read {Path(path).name} as {kind}: {type(e).__name__}: {e}") from e
    raise DocumentError(f"{Path(path).name} is not a supported document")


def _pdf(path: Path) -> str:
    from pypdf import PdfReader

    reader = PdfReader(path)
    if reader.is_encrypted:
        try:
            reader.decrypt("")
        except Exception as e:
            raise DocumentError(f"{path.name} is password-protected") from e
    pages = []
    for number, page in enumerate(reader.pages, start=1):
        pages.append(f"--- page {number} ---\n{(page.extract_text() or '').strip()}")
    return "\n\n".join(pages)


def _docx(path: Path) -> str:
    import docx

    document = docx.Document(str(path))
    parts = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            parts.append(" | ".join(cell.text.strip() for cell in row.cells))
    return "\n".join(parts)


def _xlsx(path: Path) -> str:
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
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


def _pptx(path: Path) -> str:
    import pptx

    presentation = pptx.Presentation(str(path))
    parts = []
    for number, slide in enumerate(presentation.slides, start=1):
        parts.append(f"--- slide {number} ---")
        for shape in slide.shapes:
            if shape.has_text_frame:
                parts.append(shape.text_frame.text)
    return "\n".join(parts)
