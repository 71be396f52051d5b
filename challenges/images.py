"""A phase's images for the teams that caption them: the manifest (which image ids a result file must
cover, with each file's name, size and sha256) and the files, one by one or as one zip.

Only members of a team of the benchmark and hosts get them (the selectors' rule,
:func:`challenges.selectors.images_visible`). The manifest is in image-key order and says nothing about
a test phase's public and private parts. Names inside the zip are the manifest's ``file_name``: the key,
with every character but letters, digits, ``.``, ``-`` and ``_`` replaced, and the stored file's
extension, so no member can point outside the folder it is unpacked into.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.core.files.storage import default_storage

from challenges.models import Phase

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
MANIFEST_COLUMNS = ("image_id", "file_name", "bytes", "sha256", "width", "height")
_COPY = 1024 * 1024  # bytes read from storage at a time while zipping


@dataclass(frozen=True)
class ManifestRow:
    image_id: str  # the image key: "image_id" in a COCO or JSON-lines file (a number where it is one)
    file_name: str
    bytes: int | None  # None: the image has no stored file
    sha256: str
    width: int | None
    height: int | None
    stored: str  # the storage name (not shown)

    def as_dict(self) -> dict:
        return {
            "image_id": self.image_id,
            "file_name": self.file_name,
            "bytes": self.bytes,
            "sha256": self.sha256,
            "width": self.width,
            "height": self.height,
        }


def safe_file_name(key: str, stored: str) -> str:
    """The image's name in the manifest and the zip: its key made safe, with the stored file's suffix."""
    stem = _UNSAFE.sub("_", key).lstrip(".") or "image"
    suffix = PurePosixPath(stored).suffix.lower() if stored else ""
    return f"{stem}{suffix if _UNSAFE.search(suffix) is None else ''}"


def phase_manifest(phase: Phase) -> list[ManifestRow]:
    """Every image of the phase, in key order."""
    rows = []
    for key, name, content_hash, width, height in phase.image_set.images.order_by("key").values_list(
        "key", "file", "content_hash", "width", "height"
    ):
        size = None
        if name:
            try:
                size = default_storage.size(name)
            except OSError:
                size = None
        rows.append(
            ManifestRow(
                image_id=key,
                file_name=safe_file_name(key, name or ""),
                bytes=size,
                sha256=content_hash or "",
                width=width,
                height=height,
                stored=name or "",
            )
        )
    return rows


def phase_image(phase: Phase, key: str):
    """The phase's image with ``key`` (None when the phase has none by that key)."""
    return phase.image_set.images.filter(key=key).first()


class _Sink(io.RawIOBase):
    """An unseekable stream that keeps what is written until it is taken (zipfile then writes data
    descriptors instead of seeking back)."""

    def __init__(self):
        self._chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self._chunks)
        self._chunks.clear()
        return data


def zip_stream(rows: list[ManifestRow]) -> Iterator[bytes]:
    """The stored files of ``rows`` as one zip (stored, not deflated: images are compressed already),
    made while it is sent: at most a copy buffer of it is in memory. Images without a file are left out
    (the manifest shows them with no size)."""
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for row in rows:
            if not row.stored or row.bytes is None:
                continue
            with (
                default_storage.open(row.stored, "rb") as source,
                archive.open(row.file_name, "w", force_zip64=row.bytes > 2**31) as target,
            ):
                while chunk := source.read(_COPY):
                    target.write(chunk)
                    if data := sink.take():
                        yield data
            if data := sink.take():
                yield data
    yield sink.take()
