"""Caption files: one reader per format, and the one registry that names, describes and sniffs them (pure).

- ``coco``: COCO results, candidates of one language (``.json``; :mod:`.coco`);
- ``jsonl``: JSON lines of the XM3600 or the flat shape, candidates or references (``.jsonl``; :mod:`.jsonl`);
- ``zip``: an archive of ``<language>.json`` and ``*.jsonl`` files, candidates (``.zip``; :mod:`.archive`);
- ``coco_annotations``: COCO annotations, references of one language (``.json``; :mod:`.coco_annotations`);
- ``caption_lines``: one caption per line, candidates by position (``.txt``; :mod:`.caption_lines`).

The evaluation server takes the three :data:`UPLOAD_FORMATS`; :func:`sniff` tells a file's format from
its first bytes and, where they say nothing, its name. A new format is a new module and one entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from core.caption_files import archive, caption_lines, coco, coco_annotations, jsonl
from core.caption_files.entries import CANDIDATES, REFERENCES, gettext_noop
from core.caption_files.streaming import BLANKS, BOM

__all__ = ["CANDIDATES", "FORMATS", "REFERENCES", "UPLOAD_FORMATS", "CaptionFormat", "format_get", "sniff"]


@dataclass(frozen=True)
class CaptionFormat:
    """One format: ``name`` (stored in a phase's accepted formats, never shown), ``label`` (shown),
    what it ``holds`` (:data:`CANDIDATES`, :data:`REFERENCES` or both), its file ``suffixes``,
    ``examples`` of its content (an entry, a line, an archive's members), ``sniff`` (the first non-blank bytes -> whether they are this format's)
    and ``read`` (its module's reader; an upload format's takes ``(stream, *, name, size, reading,
    language)``, see :mod:`core.caption_files.streaming`)."""

    name: str
    label: str
    holds: frozenset[str]
    suffixes: tuple[str, ...]
    examples: tuple[str, ...]
    sniff: Callable[[bytes], bool]
    read: Callable
    upload: bool = False


FORMATS: dict[str, CaptionFormat] = {
    spec.name: spec
    for spec in (
        # In sniffing order: a zip's magic first, COCO annotations' keys before any JSON object.
        CaptionFormat(
            archive.NAME,
            gettext_noop("zip of <language>.json / *.jsonl files"),
            frozenset({CANDIDATES}),
            (".zip",),
            ("de.json, en.json, more.jsonl",),
            archive.sniff,
            archive.read,
            upload=True,
        ),
        CaptionFormat(
            coco_annotations.NAME,
            gettext_noop("COCO annotations"),
            frozenset({REFERENCES}),
            (".json",),
            ('{"images": [{"id": 1}], "annotations": [{"image_id": 1, "caption": "A dog."}]}',),
            coco_annotations.sniff,
            coco_annotations.captions,
        ),
        CaptionFormat(
            coco.NAME,
            gettext_noop("COCO results (one language)"),
            frozenset({CANDIDATES}),
            (".json",),
            ('[{"image_id": 1, "caption": "Ein Hund."}]',),
            coco.sniff,
            coco.read,
            upload=True,
        ),
        CaptionFormat(
            jsonl.NAME,
            gettext_noop("JSON lines (XM3600 or flat)"),
            frozenset({CANDIDATES, REFERENCES}),
            (".jsonl",),
            (
                '{"image/key": "1", "de": {"caption": ["Ein Hund."]}, "en": {"caption": ["A dog."]}}',
                '{"image_id": 1, "language": "de", "caption": "Ein Hund."}',
            ),
            jsonl.sniff,
            jsonl.read,
            upload=True,
        ),
        CaptionFormat(
            caption_lines.NAME,
            gettext_noop("caption lines"),
            frozenset({CANDIDATES}),
            (".txt",),
            ("Ein Hund.",),
            caption_lines.sniff,
            caption_lines.captions,
        ),
    )
}
UPLOAD_FORMATS: tuple[str, ...] = tuple(name for name, spec in FORMATS.items() if spec.upload)


def format_get(name: str) -> CaptionFormat:
    """The format of that name; KeyError naming the known ones."""
    try:
        return FORMATS[name]
    except KeyError:
        raise KeyError(f"unknown caption-file format {name!r}; known: {', '.join(FORMATS)}") from None


def sniff(head: bytes, filename: str = "", *, among: Iterable[str] | None = None) -> CaptionFormat | None:
    """The format of a file from its first bytes (``head``: a few KB are enough) and, where they say
    nothing, its name's suffix; only the formats named in ``among`` (default: all) are considered.
    None where neither tells."""
    names = list(FORMATS) if among is None else [name for name in FORMATS if name in set(among)]
    head = head.removeprefix(BOM).lstrip(BLANKS)
    for name in names:
        if head and FORMATS[name].sniff(head):
            return FORMATS[name]
    suffix = PurePosixPath(filename.replace("\\", "/").lower()).suffix
    for name in names:
        if suffix and suffix in FORMATS[name].suffixes:
            return FORMATS[name]
    return None
