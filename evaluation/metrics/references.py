"""Reference sets: imported from a caption file, or the written captions of a caption campaign."""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from annotation.importers.language_checks import captions_language_check, language_check_gate
from annotation.importers.report import ImportReport, input_file_check, plural
from annotation.models import Campaign, CampaignKind, Image, Language
from core.errors import NotFound, ValidationFailed
from evaluation.metrics.text.formats import (
    FormatError,
    read_coco_annotations,
    read_references,
    read_xm3600_captions,
)
from evaluation.models import Reference, ReferenceSet, ReferenceSetKind

FORMATS = ("auto", "xm3600", "coco")
KEYS_SHOWN = 10
BATCH = 1000


def _examples(keys: list[str]) -> str:
    shown = ", ".join(keys[:KEYS_SHOWN])
    return shown + (", …" if len(keys) > KEYS_SHOWN else "")


def _read(path: Path, file_format: str, language_code: str):
    try:
        if file_format == "xm3600":
            return read_xm3600_captions(path, language_code)
        if file_format == "coco":
            return read_coco_annotations(path)
        return read_references(path, language_code)
    except FormatError as exc:
        # The message names the file, the line or entry, and the reason.
        raise ValidationFailed(f"{exc}. Nothing was imported.", details=[str(exc)]) from None


def references_import(
    *,
    path: Path | str,
    name: str,
    language_code: str,
    format: str = "auto",  # noqa: A002  (the command's option name)
    dry_run: bool = False,
    skip_unknown: bool = False,
    language_check_reason: str = "",
    public_dataset: str | None = None,
) -> ImportReport:
    """Import reference captions from an XM3600 captions file or a COCO annotations file.

    Image keys of the file are ``Image.key`` (a COCO integer id matches the key written as a
    number). Creates the imported reference set ``name`` in the language, or brings an
    existing one to exactly the file's content: a re-run of the same file changes nothing.
    Validates everything first and writes in one transaction, locking the set's row; a
    malformed file imports nothing and the error names the line or entry and the reason.
    Image keys that are not in the database are reported and refused, unless
    ``skip_unknown`` (then they are skipped). Every caption goes through the annotators' script and
    language checks (:mod:`annotation.importers.language_checks`): captions that fail are counted per
    problem and nothing is imported, unless ``language_check_reason`` says why they belong here; the
    reason and the counts are then recorded on the set. ``public_dataset`` names the public dataset the
    file comes from (recorded on the set, and shown wherever a benchmark is scored on it: a team may have
    trained on it); None leaves what the set says. ``dry_run`` reports and writes nothing.
    Raises ValidationFailed.
    """
    if format not in FORMATS:
        raise ValidationFailed(f"Unknown format “{format}”: choose one of {', '.join(FORMATS)}.")
    name = (name or "").strip()
    if not name:
        raise ValidationFailed("A reference set needs a name.")
    language = Language.objects.filter(code=language_code).first()
    if language is None:
        raise ValidationFailed(f"Unknown language “{language_code}”: add it first.")
    path = input_file_check(Path(path), what="references")
    data = path.read_bytes()
    references = _read(path, format, language_code)

    report = ImportReport(subject="references", dry_run=dry_run)
    if references.missing:
        what = f"a “{language_code}” caption" if references.file_format == "xm3600" else "captions"
        report.warnings.append(
            f"{plural(len(references.missing), 'image')} in the file without {what}, not imported: "
            f"{_examples([str(k) for k in references.missing])}"
        )
    if not references:
        raise ValidationFailed(
            f"{path.name}: no reference captions in “{language_code}”. Nothing was imported."
        )
    problems = [
        f"{path.name}: image {key}: reference {position} is empty"
        for key, texts in references.items()
        for position, text in enumerate(texts, start=1)
        if not text.strip()
    ]
    if problems:
        raise ValidationFailed(
            f"{plural(len(problems), 'problem')}; nothing was imported:\n  " + "\n  ".join(problems[:20]),
            details=problems,
        )

    checked = captions_language_check(
        (f"image {key}, reference {position}", language_code, text)
        for key, texts in references.items()
        for position, text in enumerate(texts, start=1)
    )
    override = language_check_gate(checked, path.name, language_check_reason, report)

    keys = [str(key) for key in references]
    image_ids: dict[str, int] = {}
    for start in range(0, len(keys), BATCH):
        image_ids.update(Image.objects.filter(key__in=keys[start : start + BATCH]).values_list("key", "pk"))
    unknown = [key for key in keys if key not in image_ids]
    if unknown and not skip_unknown:
        raise ValidationFailed(
            f"{path.name}: {plural(len(unknown), 'image key')} not in the database ({_examples(unknown)}). "
            "Import those images first, or use --skip-unknown to leave them out. Nothing was imported.",
            details=unknown,
        )
    report.unknown_keys = unknown
    report.skipped = len(unknown)
    if unknown:
        report.warnings.append(f"{plural(len(unknown), 'unknown image key')} skipped: {_examples(unknown)}")
    wanted = {
        (image_ids[str(key)], position): text
        for key, texts in references.items()
        if str(key) in image_ids
        for position, text in enumerate(texts)
    }
    if not wanted:
        raise ValidationFailed(f"{path.name}: none of the images is in the database. Nothing was imported.")

    with transaction.atomic():
        reference_set = ReferenceSet.objects.select_for_update().filter(name=name).first()
        if reference_set is None:
            reference_set = ReferenceSet.objects.create(
                name=name, language=language, kind=ReferenceSetKind.IMPORTED
            )
        elif reference_set.kind != ReferenceSetKind.IMPORTED:
            raise ValidationFailed(
                f"“{name}” is a reference set of a campaign's captions; choose another name."
            )
        elif reference_set.language_id != language.pk:
            raise ValidationFailed(
                f"“{name}” holds references in “{reference_set.language.code}”, not “{language_code}”."
            )
        existing = {
            (image_id, position): (pk, text)
            for pk, image_id, position, text in reference_set.references.values_list(
                "pk", "image_id", "position", "text"
            )
        }
        create, update, now = [], [], timezone.now()
        for (image_id, position), text in wanted.items():
            old = existing.get((image_id, position))
            if old is None:
                create.append(
                    Reference(reference_set=reference_set, image_id=image_id, position=position, text=text)
                )
            elif old[1] != text:
                update.append(Reference(pk=old[0], text=text, updated_at=now))
            else:
                report.unchanged += 1
        stale = [pk for key, (pk, _) in existing.items() if key not in wanted]
        Reference.objects.bulk_create(create, batch_size=BATCH)
        Reference.objects.bulk_update(update, ["text", "updated_at"], batch_size=BATCH)
        for start in range(0, len(stale), BATCH):
            Reference.objects.filter(pk__in=stale[start : start + BATCH]).delete()
        report.created, report.updated = len(create), len(update)
        if stale:
            report.warnings.append(f"{plural(len(stale), 'reference')} no longer in the file, removed.")
        reference_set.source_name = path.name
        reference_set.source_format = references.file_format
        reference_set.source_sha256 = hashlib.sha256(data).hexdigest()
        # The last import decides: a clean file clears an earlier override.
        reference_set.language_check_override = override
        if public_dataset is not None:
            reference_set.public_dataset = public_dataset.strip()[:200]
        reference_set.save(
            update_fields=[
                "source_name",
                "source_format",
                "source_sha256",
                "language_check_override",
                "public_dataset",
                "updated_at",
            ]
        )
        report.languages = [language_code]
        if dry_run:
            transaction.set_rollback(True)
    return report


def caption_campaign_get(campaign_id: int) -> Campaign:
    """The caption campaign whose written captions are to be references. Raises NotFound, and
    ValidationFailed for a campaign of another kind."""
    campaign = Campaign.objects.select_related("language").filter(pk=campaign_id).first()
    if campaign is None:
        raise NotFound(f"There is no campaign #{campaign_id}.")
    if campaign.kind != CampaignKind.CAPTION:
        raise ValidationFailed(
            f"“{campaign.name}” is a {campaign.get_kind_display()} campaign: only caption campaigns have "
            "written captions to use as references."
        )
    return campaign


def reference_set_from_campaign(
    *,
    campaign_id: int,
    name: str | None = None,
    language_code: str | None = None,
    description: str = "",
    min_verified_rating: str = "",
) -> ReferenceSet:
    """The reference set of a caption campaign's written captions (read when a run computes); with
    ``min_verified_rating`` ("MEDIUM", "GOOD"), only those its verification campaigns rated that well.

    The set's language is the campaign's: a ``language_code`` that differs is refused, so a German
    run can never score against French references. Only caption campaigns have written captions.
    Idempotent: returns the campaign's existing set of that name. Raises NotFound for an unknown
    campaign, ValidationFailed for another language, a campaign of another kind, or a name that
    belongs to another set.
    """
    campaign = caption_campaign_get(campaign_id)
    language = campaign.language
    if language_code and language_code != language.code:
        other = Language.objects.filter(code=language_code).first()
        asked = f"{other.name} ({other.code})" if other else f"“{language_code}”"
        raise ValidationFailed(
            f"The campaign “{campaign.name}” collects captions in {language.name} ({language.code}): "
            f"a reference set of them is in {language.name} too, not in {asked}."
        )
    name = (name or f"{campaign.name} (written captions)").strip()
    with transaction.atomic():
        reference_set, created = ReferenceSet.objects.get_or_create(
            name=name,
            defaults={
                "language": language,
                "kind": ReferenceSetKind.CAMPAIGN,
                "campaign": campaign,
                "description": description,
                "min_verified_rating": min_verified_rating,
            },
        )
        if not created and reference_set.campaign_id != campaign.pk:
            raise ValidationFailed(f"The reference set “{name}” already exists and is not this campaign's.")
        if not created and reference_set.min_verified_rating != min_verified_rating:
            raise ValidationFailed(
                f"The reference set “{name}” keeps the campaign's captions by another rule; choose another name."
            )
    return reference_set


def reference_set_describe(
    *, reference_set_id: int, name: str, description: str, public_dataset: str | None = None
) -> ReferenceSet:
    """Rename a reference set, change its description or the public dataset it comes from: the only edits
    after creation (its language, kind, campaign and references decide the scores of runs already made).
    ``public_dataset`` None leaves it. Raises NotFound, ValidationFailed for an empty name or one another
    set has."""
    name = (name or "").strip()
    if not name:
        raise ValidationFailed("A reference set needs a name.")
    with transaction.atomic():
        reference_set = ReferenceSet.objects.select_for_update().filter(pk=reference_set_id).first()
        if reference_set is None:
            raise NotFound(f"There is no reference set #{reference_set_id}.")
        if ReferenceSet.objects.filter(name=name).exclude(pk=reference_set_id).exists():
            raise ValidationFailed(f"Another reference set is called “{name}”.")
        reference_set.name, reference_set.description = name, description
        if public_dataset is not None:
            reference_set.public_dataset = public_dataset.strip()[:200]
        reference_set.save(update_fields=["name", "description", "public_dataset", "updated_at"])
    return reference_set
