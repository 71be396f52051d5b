"""Import a captioning system's outputs, in either of the two formats they come in.

The formats are :mod:`core.caption_files`'s, read as the evaluation server reads them:

- COCO results (``coco``): one JSON array ``[{"image_id": 404464, "caption": "..."}, ...]``. It
  carries no language, so one must be given. ``image_id`` is matched to ``Image.key`` as text.
- JSON lines (``jsonl``), each line of either shape: the XM3600 one, ``{"image/key": "...",
  "<lang>": {"caption": [...]}, ...}``, whose first caption of each language is taken (a system's
  outputs in the dataset's own shape; the evaluation server refuses a block of several instead), of
  every language present or only of the one given; or the flat one, ``{"image_id" | "image/key":
  ..., "language" | "image/locale": "de", "caption": "..."}``, whose language may be left out
  where one is given.

The format is sniffed from the file's first bytes (``[`` or ``{``: :func:`core.caption_files.sniff`).
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.importers.language_checks import captions_language_check, language_check_gate
from annotation.importers.report import (
    ImportReport,
    Problems,
    input_file_check,
    json_lines,
    plural,
)
from annotation.models import CaptioningSystem, Image, Language, SystemCaption
from annotation.services.images import image_key_validate
from annotation.services.languages import language_ensure
from core import caption_files
from core.caption_files import coco, jsonl
from core.caption_files.entries import Record, ShapeError
from core.errors import Conflict, ValidationFailed

MAX_CAPTION_CHARS = 1000
CHUNK = 500
KEYS_SHOWN = 10


@dataclass
class _Caption:
    key: str
    language: str
    text: str
    where: str


def _caption_text(value: object) -> str:
    """The caption, stripped; ValidationFailed if it is not one."""
    if not isinstance(value, str):
        raise ValidationFailed("the caption is not text.")
    text = value.strip()
    if not text:
        raise ValidationFailed("empty caption.")
    if len(text) > MAX_CAPTION_CHARS:
        raise ValidationFailed(f"the caption is {len(text)} characters; at most {MAX_CAPTION_CHARS}.")
    if any(unicodedata.category(ch) in ("Cc", "Cs") and ch not in "\t\n\r" for ch in text):
        raise ValidationFailed("the caption contains control characters.")
    return text


class _Collector:
    """Captions in file order; a second caption for the same image and language is a problem."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self.captions: list[_Caption] = []
        self.seen: dict[tuple[str, str], str] = {}
        self.extra_fields: set[str] = set()

    def add(self, where: str, record: Record, caption: object) -> None:
        try:
            key = image_key_validate(record.key)
            text = _caption_text(caption)
        except ValidationFailed as exc:
            self.problems.add(where, exc.message)
            return
        if (key, record.language) in self.seen:
            self.problems.add(
                where, f"{record.id_field} “{key}” appears twice (also {self.seen[key, record.language]})."
            )
            return
        self.seen[key, record.language] = where
        self.captions.append(_Caption(key=key, language=record.language, text=text, where=where))


def _no_language(path: Path) -> ValidationFailed:
    return ValidationFailed(f"{path.name}: COCO results carry no language; give one (--language en).")


def _read_coco_array(path: Path, language: str | None, collector: _Collector) -> None:
    if not language:
        raise _no_language(path)
    try:
        entries = json.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            f"{path.name}: not UTF-8 text (byte {exc.start}). Nothing was imported."
        ) from None
    except json.JSONDecodeError as exc:
        raise ValidationFailed(
            f"{path.name} line {exc.lineno}: malformed JSON ({exc.msg} at column {exc.colno}). Nothing was imported."
        ) from None
    if not isinstance(entries, list):
        raise ValidationFailed(f"{path.name}: expected a JSON array of {{image_id, caption}} objects.")
    for number, value in enumerate(entries, start=1):
        where = f"{path.name} entry {number}"
        try:
            entry = coco.entry(value, where=where, language=language)
        except ShapeError as exc:
            collector.problems.add(where, f"{exc.message}.")
            continue
        collector.extra_fields.update(entry.unknown)
        collector.add(where, entry.records[0], entry.records[0].captions[0])


def _read_lines(path: Path, language: str | None, collector: _Collector, report: ImportReport) -> None:
    problems = collector.problems
    missing = 0
    for where, value in json_lines(path, problems):
        try:
            entry = jsonl.line(value, where=where, language=language)
        except ShapeError as exc:
            problems.add(where, f"{exc.message}.")
            continue
        if entry.shape == jsonl.FLAT and entry.records and entry.records[0].language is None:
            raise _no_language(path)
        if not entry.records:
            missing += 1
            continue
        collector.extra_fields.update(entry.unknown)
        for record in entry.records:
            try:
                caption = jsonl.one_caption(record, several="first")
            except ShapeError as exc:
                problems.add(where, f"{exc.message}.")
                continue
            collector.add(where, record, caption)
    if missing:
        report.warnings.append(f"{plural(missing, 'line')} of {path.name} have no '{language}' caption.")


def _format(path: Path) -> str | None:
    """The format its first bytes say (COCO results or JSON lines), or None."""
    with open(path, "rb") as fh:
        while chunk := fh.read(65536):
            head = chunk.lstrip(b"\xef\xbb\xbf \t\r\n")
            if head:
                spec = caption_files.sniff(head, among=(coco.NAME, jsonl.NAME))
                return spec.name if spec else ""
    return None


def system_captions_import(
    *,
    path: Path,
    system_name: str,
    language_code: str | None = None,
    skip_unknown: bool = False,
    dry_run: bool = False,
    language_check_reason: str = "",
) -> ImportReport:
    """Import one file of a system's captions (see the module docstring); return the report.

    Creates the CaptioningSystem and the languages it needs. Parses and checks the whole
    file first: malformed JSON (named by line), an image given twice for a language, an
    empty caption or one over 1000 characters are problems, and nothing is imported.
    Image keys not stored are reported and nothing is imported, unless ``skip_unknown``:
    then the other captions are imported and the unknown keys listed in the report.
    Writes in one transaction, locking the system's caption rows it reads. Idempotent; a
    changed caption text is updated and reported. Captions of the system that are not in
    the file are left alone. Every caption goes through the annotators' script and language checks
    (:mod:`annotation.importers.language_checks`): failures are counted per problem and nothing is
    imported, unless ``language_check_reason`` says why they belong; the reason and the counts are
    then recorded on the system. ``dry_run`` runs everything and rolls back. Raises
    ValidationFailed, and Conflict when the same captions are imported concurrently.
    """
    path = input_file_check(path, what="captions")
    system_name = (system_name or "").strip()
    max_name = CaptioningSystem._meta.get_field("name").max_length
    if not system_name or len(system_name) > max_name:
        raise ValidationFailed(f"A system name takes 1 to {max_name} characters.")
    language_code = (language_code or "").strip() or None
    report = ImportReport(subject="system captions", dry_run=dry_run)
    problems = Problems()
    collector = _Collector(problems)

    found = _format(path)
    if found == coco.NAME:
        _read_coco_array(path, language_code, collector)
    elif found == jsonl.NAME:
        _read_lines(path, language_code, collector, report)
    elif found is None:
        raise ValidationFailed(f"{path.name}: the file is empty.")
    else:
        raise ValidationFailed(
            f"{path.name}: expected a COCO results JSON array or JSON lines (one object per line)."
        )
    problems.raise_if_any()
    if not collector.captions:
        raise ValidationFailed(f"{path.name}: no caption to import.")
    if collector.extra_fields:
        report.unknown_fields.append(f"{path.name}: {', '.join(sorted(collector.extra_fields))}")
    checked = captions_language_check(
        (f"{caption.where}, image {caption.key}", caption.language, caption.text)
        for caption in collector.captions
    )
    override = language_check_gate(checked, path.name, language_check_reason, report)

    try:
        with transaction.atomic():
            system = _apply(path, system_name, collector.captions, skip_unknown, report, problems)
            if override:
                system.language_check_overrides = [*system.language_check_overrides, override]
                system.save(update_fields=["language_check_overrides", "updated_at"])
            if dry_run:
                transaction.set_rollback(True)
    except IntegrityError:
        raise Conflict(
            f"Captions of “{system_name}” were being imported by someone else at the same time; "
            "run the import again (it is idempotent)."
        ) from None
    return report


def _apply(
    path: Path,
    system_name: str,
    captions: list[_Caption],
    skip_unknown: bool,
    report: ImportReport,
    problems: Problems,
) -> CaptioningSystem:
    system, _ = CaptioningSystem.objects.get_or_create(name=system_name)
    languages: dict[str, Language] = {}
    for caption in captions:
        if caption.language not in languages:
            try:
                languages[caption.language] = language_ensure(code=caption.language)
            except ValidationFailed as exc:
                problems.add(caption.where, exc.message)
                languages[caption.language] = None
    problems.raise_if_any()
    report.languages = sorted(languages)

    keys = list(dict.fromkeys(caption.key for caption in captions))
    image_ids: dict[str, int] = {}
    for start in range(0, len(keys), CHUNK):
        image_ids.update(Image.objects.filter(key__in=keys[start : start + CHUNK]).values_list("key", "pk"))
    unknown = [key for key in keys if key not in image_ids]
    if unknown:
        shown = ", ".join(unknown[:KEYS_SHOWN]) + (", …" if len(unknown) > KEYS_SHOWN else "")
        if not skip_unknown:
            raise ValidationFailed(
                f"{path.name}: {plural(len(unknown), 'image key')} not among the stored images: {shown}. "
                "Nothing was imported: import the images first, or skip these (--skip-unknown).",
                details=unknown,
            )
        report.unknown_keys = unknown
        report.warnings.append(
            f"{plural(len(unknown), 'image key')} not among the stored images, skipped: {shown}"
        )

    existing: dict[tuple[int, int], SystemCaption] = {}
    ids = sorted(set(image_ids.values()))
    for start in range(0, len(ids), CHUNK):
        rows = SystemCaption.objects.select_for_update().filter(
            system=system, language__in=list(languages.values()), image_id__in=ids[start : start + CHUNK]
        )
        existing.update(((row.image_id, row.language_id), row) for row in rows)

    now = timezone.now()
    new, changed = [], []
    for caption in captions:
        image_id = image_ids.get(caption.key)
        if image_id is None:
            report.skipped += 1
            continue
        language = languages[caption.language]
        row = existing.get((image_id, language.pk))
        if row is None:
            new.append(SystemCaption(system=system, image_id=image_id, language=language, text=caption.text))
            report.created += 1
        elif row.text != caption.text:
            row.text, row.updated_at = caption.text, now
            changed.append(row)
            report.updated += 1
            report.changed_keys.append(f"{caption.key} [{caption.language}]")
        else:
            report.unchanged += 1
    SystemCaption.objects.bulk_create(new, batch_size=CHUNK)
    SystemCaption.objects.bulk_update(changed, ["text", "updated_at"], batch_size=CHUNK)
    return system
