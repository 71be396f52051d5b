"""A zip archive (``"zip"``) of caption files at its top: ``<language>.json`` COCO results named after
their language, and ``*.jsonl`` JSON lines of any languages (pure).

Bounded before anything inflates: the members are counted from the archive's end record before its
directory is read, their declared sizes summed, and every member is read as it inflates, never past
its declared size; folders, paths, encrypted members and archives inside the archive are refused."""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import BinaryIO

from core.caption_files import coco, jsonl
from core.caption_files.messages import Message, Text, gettext_noop
from core.caption_files.streaming import CHUNK, Limits, Problems, Reading, Stop, StopAll, pieces

NAME = "zip"
MAGIC = b"PK\x03\x04"
_EOCD = b"PK\x05\x06"  # a zip's end of central directory record
_DIRECTORY_BYTES_PER_MEMBER = 1024  # a member's entry in the directory: 46 bytes, its name and extras
ONLY_JSON = gettext_noop("only .json and .jsonl members are read")
_READ_ERRORS = (zipfile.BadZipFile, ValueError, NotImplementedError, OSError, EOFError, zlib.error)


def _too_many(members: int, limits: Limits) -> Message:
    return Message(
        gettext_noop("%(members)s members; at most %(allowed)s are allowed"),
        members=members,
        allowed=limits.max_members,
    )


def _unreadable(exc: Exception) -> Message:
    return Message(gettext_noop("cannot be read (%(reason)s)"), reason=str(exc))


def sniff(head: bytes) -> bool:
    return head.startswith(MAGIC)


def member_where(name: str) -> Message:
    return Message(gettext_noop("archive member “%(name)s”"), name=name[:80])


def _member_name_ok(info: zipfile.ZipInfo, problems: Problems) -> bool:
    name = info.filename
    if info.is_dir() or "/" in name or "\\" in name or name.startswith(".") or ".." in name or ":" in name:
        problems.add(
            member_where(name),
            Message(gettext_noop("folders and paths are not allowed: put the files at the top")),
        )
        return False
    if info.flag_bits & 0x1:
        problems.add(member_where(name), Message(gettext_noop("encrypted members are not allowed")))
        return False
    return True


def _directory_problem(stream: BinaryIO, size: int, limits: Limits) -> Text | None:
    """What the archive's end record says that refuses it before its directory is read (zipfile builds an
    object per member listed there: a 50 MB directory lists a million)."""
    tail = min(size, 22 + 0xFFFF)
    stream.seek(size - tail)
    data = stream.read(tail)
    at = data.rfind(_EOCD)
    if at < 0 or len(data) - at < 22:
        return None  # not a zip: zipfile says so
    members = int.from_bytes(data[at + 10 : at + 12], "little")
    directory = int.from_bytes(data[at + 12 : at + 16], "little")
    if members > limits.max_members:
        return _too_many(members, limits)
    if directory > limits.max_members * _DIRECTORY_BYTES_PER_MEMBER:
        return Message(
            gettext_noop(
                "its list of members takes %(bytes)s bytes, more than %(members)s members take; at most "
                "%(members)s are allowed"
            ),
            bytes=f"{directory:,}",
            members=limits.max_members,
        )
    return None


def _member_reader(fh, info: zipfile.ZipInfo) -> Callable[[], bytes]:
    label = member_where(info.filename)
    taken = 0

    def read() -> bytes:
        nonlocal taken
        try:
            piece = fh.read(CHUNK)
        except _READ_ERRORS as exc:
            raise Stop(label, _unreadable(exc)) from None
        taken += len(piece)
        # Never trust the declared size: a member that inflates past it stops everything.
        if taken > info.file_size:
            raise StopAll(label, Message(gettext_noop("inflates past its declared size (refused)")))
        return piece

    return read


def read(stream: BinaryIO, *, name: str, size: int, reading: Reading, language: str | None = None) -> None:
    """The upload reader: every member to ``reading`` (``language`` is not used: members carry theirs)."""
    limits, problems = reading.limits, reading.problems
    problem = _directory_problem(stream, size, limits)
    if problem:
        problems.add(name, problem)
        return
    stream.seek(0)
    try:
        archive = zipfile.ZipFile(stream)
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, NotImplementedError, OSError, EOFError) as exc:
        problems.add(name, Message(gettext_noop("not a readable zip archive (%(reason)s)"), reason=str(exc)))
        return
    if len(infos) > limits.max_members:
        problems.add(name, _too_many(len(infos), limits))
        return
    if sum(info.file_size for info in infos) > limits.max_unzipped_bytes:
        problems.add(
            name,
            Message(
                gettext_noop("inflates to more than %(bytes)s bytes"), bytes=f"{limits.max_unzipped_bytes:,}"
            ),
        )
        return
    if not infos:
        problems.add(name, Message(gettext_noop("the archive holds no files")))
        return
    reading.budget(len(reading.languages))
    for info in infos:
        if not _member_name_ok(info, problems):
            continue
        member = info.filename
        stem, suffix = PurePosixPath(member).stem, PurePosixPath(member).suffix.lower()
        if suffix not in (".json", ".jsonl"):
            problems.add(member, Message(ONLY_JSON))
            continue
        if suffix == ".json" and stem not in reading.languages:
            problems.add(
                member, Message(gettext_noop("name a COCO results member after its language, e.g. de.json"))
            )
            continue
        try:
            fh = archive.open(info)
        except _READ_ERRORS as exc:
            problems.add(member_where(member), _unreadable(exc))
            continue
        with fh:
            read_member = _member_reader(fh, info)
            try:
                first = read_member()
            except StopAll:
                raise
            except Stop as stop:
                problems.add(stop.where, stop.message)
                continue
            if first.startswith(MAGIC):  # an archive inside the archive, whatever its name
                problems.add(member, Message(ONLY_JSON))
                continue
            try:
                chunks = pieces(read_member, member, first)
                if suffix == ".jsonl":
                    jsonl.read_pieces(chunks, name=member, reading=reading)
                else:
                    coco.read_pieces(chunks, name=member, reading=reading, language=stem)
            except StopAll:
                raise
            except Stop as stop:  # raised before the first piece (its first bytes are not UTF-8)
                problems.add(stop.where, stop.message)
