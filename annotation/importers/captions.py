"""Import a captioning system's outputs, in either of the two formats they come in.

- COCO results: one JSON array ``[{"image_id": 404464, "caption": "..."}, ...]``. It
  carries no language, so one must be given. ``image_id`` is matched to ``Image.key`` as
  text.
- JSON lines in the XM3600 style: ``{"image/key": "...", "<lang>": {"caption": [...]}, ...}``
  per line; the first caption of each language is taken, of every language present or only
  of the one given. A line may also be a COCO entry (``image_id`` + ``caption``).

The format is recognised from the first character of the file (``[`` or ``{``).
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
from core.errors import Conflict, ValidationFailed

MAX_CAPTION_CHARS = 1000
COCO_FIELDS = {"image_id", "caption"}
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


def _coco_key(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValidationFailed(f"image_id {json.dumps(value)[:40]} is neither a number nor a text.")
    return image_key_validate(str(value).strip())


class _Collector:
    """Captions in file order; a second caption for the same image and language is a problem."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self.captions: list[_Caption] = []
        self.seen: dict[tuple[str, str], str] = {}
        self.extra_fields: set[str] = set()

    def add(self, where: str, key: object, language: str, text: object, *, coco: bool) -> None:
        try:
            key = _coco_key(key) if coco else image_key_validate(key.strip() if isinstance(key, str) else key)
            text = _caption_text(text)
        except ValidationFailed as exc:
            self.problems.add(where, exc.message)
            return
        if (key, language) in self.seen:
            name = "image_id" if coco else "image/key"
            self.problems.add(where, f"{name} “{key}” appears twice (also {self.seen[key, language]}).")
            return
        self.seen[key, language] = where
        self.captions.append(_Caption(key=key, language=language, text=text, where=where))


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
    for number, entry in enumerate(entries, start=1):
        where = f"{path.name} entry {number}"
        if not isinstance(entry, dict) or not entry.keys() >= COCO_FIELDS:
            collector.problems.add(where, "expected an object with 'image_id' and 'caption'.")
            continue
        collector.extra_fields.update(set(entry) - COCO_FIELDS)
        collector.add(where, entry["image_id"], language, entry["caption"], coco=True)


def _read_lines(path: Path, language: str | None, collector: _Collector, report: ImportReport) -> None:
    problems = collector.problems
    missing = 0
    for where, obj in json_lines(path, problems):
        if not isinstance(obj, dict):
            problems.add(where, "expected a JSON object.")
        elif "image/key" in obj:
            present = {
                name: value["caption"]
                for name, value in obj.items()
                if isinstance(value, dict) and "caption" in value
            }
            if language:
                if language not in present:
                    missing += 1
                    continue
                present = {language: present[language]}
            if not present:
                problems.add(where, 'no caption in any language (expected "<lang>": {"caption": [...]}).')
            for code, captions in present.items():
                if isinstance(captions, list):
                    if not captions:
                        problems.add(where, f"no caption for '{code}'.")
                        continue
                    captions = captions[0]
                collector.add(where, obj["image/key"], code, captions, coco=False)
        elif obj.keys() >= COCO_FIELDS:
            if not language:
                raise _no_language(path)
            collector.extra_fields.update(set(obj) - COCO_FIELDS)
            collector.add(where, obj["image_id"], language, obj["caption"], coco=True)
        else:
            problems.add(where, "expected 'image/key' (XM3600 style) or 'image_id' and 'caption' (COCO).")
    if missing:
        report.warnings.append(f"{plural(missing, 'line')} of {path.name} have no '{language}' caption.")


def _first_character(path: Path) -> bytes:
    with open(path, "rb") as fh:
        while chunk := fh.read(65536):
            stripped = chunk.lstrip(b"\xef\xbb\xbf \t\r\n")
            if stripped:
                return stripped[:1]
    return b""


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

    first = _first_character(path)
    if first == b"[":
        _read_coco_array(path, language_code, collector)
    elif first == b"{":
        _read_lines(path, language_code, collector, report)
    elif not first:
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
