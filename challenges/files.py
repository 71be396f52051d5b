"""Reading and checking a submission file before anything is counted (pure: no Django).

The formats and their bounded streaming readers are :mod:`core.caption_files`'s upload formats: COCO
results of one language (``[{"image_id": int, "caption": str}]``), JSON lines of the XM3600 shape
(``{"image/key": ..., "de": {"caption": ["..."]}}``) or the flat one (``{"image_id": ..., "language":
"de", "caption": ...}``), and a zip of per-language files named ``<language>.json`` or
``<anything>.jsonl``. What a file can make is bounded there (:class:`Limits`); what is checked here is
what the phase asks: its formats, the benchmark's languages, the phase's images, one caption per image
and language (an XM3600 block of several is refused, not cut to its first), the caption's length.

Every problem is named with its position (entry, line, archive member), all of them are counted, the
first :data:`SHOWN_PROBLEMS` are kept, and so is the one that stopped the reading, if any; nothing
about the references is read here, so no message can reveal one. Each problem is a translatable
:class:`~core.caption_files.messages.Message` (:attr:`SubmissionInvalid.messages`), rendered in the
team's language where it is shown (``challenges.services``); :attr:`SubmissionInvalid.problems` is the
English text.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import BinaryIO

from core import caption_files
from core.caption_files import archive, jsonl
from core.caption_files.entries import Entry, ShapeError
from core.caption_files.messages import Joined, Message, Text, gettext_noop, located
from core.caption_files.streaming import (
    CHUNK,
    JSON_BACKEND,
    SHOWN_PROBLEMS,
    Limits,
    Problems,
    Reading,
    Stop,
    head,
    size,
)

__all__ = [
    "CHUNK",
    "COCO",
    "JSONL",
    "JSON_BACKEND",
    "SHOWN_PROBLEMS",
    "ZIP",
    "Limits",
    "Parsed",
    "SubmissionInvalid",
    "submission_parse",
]

COCO = "coco"
JSONL = "jsonl"
ZIP = "zip"
UPLOAD_FORMATS = caption_files.UPLOAD_FORMATS
ZIP_MAGIC = archive.MAGIC


class SubmissionInvalid(ValueError):
    """The file is refused: ``problems`` (the first 20, with their position, in English) and ``total``;
    ``messages``: the same problems as :class:`~core.caption_files.messages.Message`, for a page to
    translate (``message.render(gettext)``)."""

    def __init__(self, problems: list[Text], total: int):
        self.messages = [
            problem if isinstance(problem, Message) else located("", problem) for problem in problems
        ]
        self.problems = [str(problem) for problem in self.messages]
        self.total = total
        problems = self.problems
        more = f" (and {total - len(problems)} more)" if total > len(problems) else ""
        super().__init__(f"{total} problem(s){more}: " + "; ".join(problems))


@dataclass
class Parsed:
    """language code -> image key -> caption, and the format read."""

    captions: dict[str, dict[str, str]] = field(default_factory=dict)
    format: str = ""


class _Submission(Reading):
    """The phase's checks of every entry the format reads."""

    def __init__(self, limits: Limits, languages: set[str], image_keys: set[str], problems: Problems):
        super().__init__(limits, problems, images=len(image_keys), languages=languages)
        self.image_keys = image_keys
        self.default_language: str | None = None
        self.captions: dict[str, dict[str, str]] = {}
        self.first_seen: dict[tuple[str, str], Text] = {}

    def entry(self, entry: Entry) -> None:
        problems = self.problems
        if entry.unknown:
            shown = ", ".join(repr(k[:40]) for k in entry.unknown[:5])
            problems.add(entry.where, Message(gettext_noop("unknown field(s) %(fields)s"), fields=shown))
            return
        if entry.shape == jsonl.FLAT and entry.records[0].language is None:
            problems.add(
                entry.where, Message(gettext_noop("needs a “language” field with the language code"))
            )
            return
        for record in entry.records:
            try:
                caption = jsonl.one_caption(record, several="refuse")
            except ShapeError as exc:
                problems.add(entry.where, exc.text)
                continue
            self._check(entry.where, record.key, record.language or self.default_language, caption)

    def _check(self, where: Text, image: str, language: str | None, caption: object) -> None:
        problems, limits = self.problems, self.limits
        if not language:
            problems.add(
                where, Message(gettext_noop("no language: choose the language of a COCO results file"))
            )
            return
        if language not in self.languages:
            problems.add(
                where,
                Message(
                    gettext_noop("language “%(language)s” is not a language of this benchmark"),
                    language=language[:20],
                ),
            )
            return
        if image not in self.image_keys:
            problems.add(
                where,
                Message(
                    gettext_noop("unknown image id “%(image)s” (not an image of this phase)"),
                    image=image[:40],
                ),
            )
            return
        if not isinstance(caption, str):
            problems.add(where, Message(gettext_noop("the caption must be a string")))
            return
        caption = caption.strip()
        if not caption:
            problems.add(where, Message(gettext_noop("empty caption for image “%(image)s”"), image=image))
            return
        if len(caption) > limits.max_caption_chars:
            problems.add(
                where,
                Message(
                    gettext_noop("caption of %(chars)s characters; at most %(allowed)s"),
                    chars=f"{len(caption):,}",
                    allowed=f"{limits.max_caption_chars:,}",
                ),
            )
            return
        if "\x00" in caption:
            problems.add(where, Message(gettext_noop("the caption contains a NUL character")))
            return
        seen = self.first_seen.get((language, image))
        if seen is not None:
            problems.add(
                where,
                Message(
                    gettext_noop("duplicate image id “%(image)s” in %(language)s (first at %(first)s)"),
                    image=image,
                    language=language,
                    first=seen,
                ),
            )
            return
        self.first_seen[(language, image)] = where
        self.captions.setdefault(language, {})[image] = caption


def submission_parse(
    data: bytes | BinaryIO,
    *,
    filename: str,
    languages: Iterable[str],
    image_keys: Iterable[str],
    language: str | None = None,
    limits: Limits | None = None,
    formats: Iterable[str] | None = None,
) -> Parsed:
    """Read and check a submission file; raises :class:`SubmissionInvalid` naming every problem's place.

    ``data``: the file's bytes or a seekable binary file (read as a stream, never whole);
    ``languages``: the benchmark's language codes; ``image_keys``: the phase's image keys (a COCO
    integer ``image_id`` matches the key written as a number); ``language``: the language of a COCO
    results file (a zip's ``<code>.json`` members take theirs from the name); ``formats``: the upload
    formats the phase accepts (None or empty: all of :data:`UPLOAD_FORMATS`), a file in another is
    refused before it is read. Every language that appears must have every image of the phase exactly
    once."""
    limits = limits or Limits()
    asked = set(formats or ())
    accepted = [name for name in UPLOAD_FORMATS if name in asked] or list(UPLOAD_FORMATS)
    stream: BinaryIO = io.BytesIO(data) if isinstance(data, bytes | bytearray | memoryview) else data
    problems = Problems()
    reading = _Submission(limits, set(languages), set(image_keys), problems)
    reading.default_language = language or None
    total = size(stream)
    if total > limits.max_bytes:
        raise SubmissionInvalid(
            [
                Message(
                    gettext_noop("the file is %(bytes)s bytes; at most %(allowed)s are allowed"),
                    bytes=f"{total:,}",
                    allowed=f"{limits.max_bytes:,}",
                )
            ],
            1,
        )
    if not total:
        raise SubmissionInvalid([Message(gettext_noop("the file is empty"))], 1)
    name = PurePosixPath(filename.replace("\\", "/")).name[:80] or "file"
    spec = caption_files.sniff(head(stream, limits.max_value_bytes), filename, among=UPLOAD_FORMATS)
    if spec is None:  # neither its bytes nor its name tell: lines, the format most often meant
        spec = caption_files.format_get(JSONL if JSONL in accepted else accepted[0])
    parsed = Parsed(captions=reading.captions, format=spec.name)
    if spec.name not in accepted:
        raise SubmissionInvalid(
            [
                located(
                    name,
                    Message(
                        gettext_noop("a file of %(format)s; this phase accepts only %(accepted)s"),
                        format=Message(spec.label),
                        accepted=Joined([Message(caption_files.format_get(n).label) for n in accepted]),
                    ),
                )
            ],
            1,
        )
    try:
        if spec.name == COCO and not language:
            problems.add(name, Message(gettext_noop("a COCO results file holds one language: say which")))
        else:
            spec.read(stream, name=name, size=total, reading=reading, language=language)
    except Stop as stop:  # the rest of the upload is not read
        problems.add(stop.where, stop.message, last=True)
    for code in sorted(parsed.captions):
        missing = sorted(reading.image_keys - parsed.captions[code].keys())
        if missing:
            problems.add(
                code,
                Message(
                    gettext_noop(
                        "%(count)s image(s) of the phase have no caption (first: %(first)s); every image must "
                        "have exactly one caption per language submitted"
                    ),
                    count=len(missing),
                    first=", ".join(missing[:5]),
                ),
            )
    if not problems and not parsed.captions:
        problems.add(name, Message(gettext_noop("no captions found")))
    if problems:
        raise SubmissionInvalid(problems.shown, problems.total)
    return parsed
