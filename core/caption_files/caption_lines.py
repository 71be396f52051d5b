"""Caption lines (``"caption_lines"``): one caption per line, in the order of a list of images the
consumer holds; plain UTF-8 text, no image ids, no language (pure)."""

from __future__ import annotations

from core.caption_files.entries import ShapeError

NAME = "caption_lines"


def sniff(head: bytes) -> bool:
    return False  # any text is caption lines: known by its name (.txt) only


def captions(text: str, *, allow_empty: bool = False) -> list[str]:
    """The captions, ends of lines removed. A final newline does not add an empty caption; an empty
    (or all-blank) line inside is a ShapeError with its ``line``, unless ``allow_empty``, because it
    usually means a caption went missing."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    found = [line.removesuffix("\r") for line in lines]
    if not allow_empty:
        for number, caption in enumerate(found, start=1):
            if not caption.strip():
                raise ShapeError("empty caption", line=number)
    return found
