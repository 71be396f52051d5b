"""COCO results (``"coco"``): ``[{"image_id": 404464, "caption": "A dog."}, ...]``, one caption per image
in one language, which the file does not carry (pure).

An entry is an object with exactly one of ``image_id`` (COCO's integer or a string) and ``image/key``,
and a ``caption`` string; ``id`` and ``score`` (what COCO tools write) are known, any other field is
listed as unknown for the consumer to refuse or report. The entries of COCO annotations (``"annotations"``
of :mod:`core.caption_files.coco_annotations`) have the same shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from core.caption_files.entries import Entry, Record, ShapeError, image_id, kind
from core.caption_files.messages import Message, Text, gettext_noop
from core.caption_files.streaming import CHUNK, JsonStream, Reading, Stop, StopAll, pieces

NAME = "coco"
KNOWN = frozenset({"caption", "id", "score"})


def sniff(head: bytes) -> bool:
    return head[:1] == b"["


def entry(value: object, *, where: Text, language: str | None = None) -> Entry:
    """The entry, or ShapeError naming what is wrong with it."""
    if not isinstance(value, dict):
        raise ShapeError(Message(gettext_noop("expected an object, got %(kind)s"), kind=kind(value)))
    id_field, image = image_id(value, missing=Message(gettext_noop("missing 'image_id'")))
    if "caption" not in value:
        raise ShapeError(Message(gettext_noop("missing 'caption'")))
    caption = value["caption"]
    if not isinstance(caption, str):
        raise ShapeError(
            Message(
                gettext_noop("caption of %(field)s %(image)s must be a string, got %(kind)s"),
                field=id_field,
                image=repr(image),
                kind=kind(caption),
            )
        )
    unknown = tuple(sorted(str(k) for k in value if k != id_field and k not in KNOWN))
    record = Record(where, image, id_field, language, (caption,), NAME)
    return Entry(where, image, id_field, NAME, (record,), unknown)


def read_pieces(chunks: Iterator[bytes], *, name: str, reading: Reading, language: str | None) -> None:
    """Stream a COCO results file's entries to ``reading`` (bounded: :mod:`~core.caption_files.streaming`);
    a problem of one entry is the entry's, one that stops the reading is the file's."""

    def on_entry(where: Text, value: object) -> None:
        reading.shaped(where, lambda: entry(value, where=where, language=language))

    stream = JsonStream(
        limits=reading.limits,
        name=name,
        in_list=True,
        on_entry=on_entry,
        on_begin=lambda where: reading.take_entry(where, "entries"),
    )
    try:
        for piece in chunks:
            stream.send(piece)
        stream.close()
    except StopAll:
        raise
    except Stop as stop:
        reading.problems.add(stop.where, stop.message)


def read(stream: BinaryIO, *, name: str, size: int, reading: Reading, language: str | None) -> None:
    """The upload reader: the whole file is one language's results (``language``)."""
    reading.budget(1)
    read_pieces(pieces(lambda: stream.read(CHUNK), name), name=name, reading=reading, language=language)
