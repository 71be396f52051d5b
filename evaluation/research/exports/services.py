"""Preparing an export, streaming it, and its provenance.

``export_prepare`` validates what is asked for and returns an :class:`ExportStream`: nothing is
read until the stream is consumed, and consuming it yields the file in ``str`` chunks of about
64 KB, row by row from the database (constant memory). While it runs it counts its rows; once it
has run, :meth:`ExportStream.provenance` describes it (campaign settings, seeds, platform
version, export time, row counts, and the sha256 and size of the bytes written when the caller
hashed them, as ``export_write`` and ``export_digest`` do).

The exported file itself holds no export time: the same data always gives the same bytes, so the
sha256 of a sidecar identifies the data and two exports of a closed campaign are identical.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils import timezone
from django.utils.text import slugify

from annotation.models import Campaign, CampaignKind, CaptioningSystem, Language
from core.errors import Conflict, NotFound, ValidationFailed
from core.versions import platform_version
from evaluation.metrics.text.schemes import SchemeError, scheme_for_language, tokens_signature

from . import rows
from .catalogue import (
    CAMPAIGN_KINDS,
    COUNT_NAMES,
    FILE_TYPES,
    FORMATS,
    NOTES,
    TABLE_NOTES,
    TABLES,
)
from .writers import (
    Counts,
    buffered,
    coco_annotations_pieces,
    coco_results_pieces,
    csv_lines,
    jsonl_lines,
    xm3600_lines,
)

PROVENANCE_VERSION = 1
PLATFORM_NAME = "captioneval"


def utc_now_iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextmanager
def _snapshot():
    """One consistent view of the data for the whole export (the COCO annotations file reads twice).

    On PostgreSQL, a READ ONLY REPEATABLE READ transaction: no lock, writers are never blocked. Its
    ``cursor_tuple_fraction = 1`` tells the planner the whole result will be read: the default (0.1)
    makes it pick fast-start plans for server-side cursors, which turn quadratic when the table
    statistics are stale (20,000 captions took 20 s instead of 0.05 s right after a bulk load).
    Not on SQLite (the embedded demo): its transactions here take the write lock at once and would
    hold off every annotator for the length of the export. Inside an existing transaction (tests,
    a caller's atomic block) that transaction's view is used.
    """
    if connection.vendor != "postgresql":
        yield
    elif connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL cursor_tuple_fraction = 1.0")
        yield
    else:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                cursor.execute("SET LOCAL cursor_tuple_fraction = 1.0")
            yield


@dataclass
class ExportStream:
    """One export, ready to stream: read :meth:`chunks` once, then ask for :meth:`provenance`."""

    kind: str
    format: str
    filename: str
    content_type: str
    exported_at: datetime
    with_usernames: bool
    subject: dict[str, Any]
    notes: list[str]
    pieces: Callable[[Counts], Iterator[str]] = field(repr=False)
    count_names: tuple[str, ...] = ("rows",)
    counts: Counts = field(default_factory=Counts)
    complete: bool = False
    _started: bool = field(default=False, repr=False)

    def chunks(self) -> Iterator[str]:
        """The file, in ``str`` chunks of about 64 KB. A stream is read once."""
        if self._started:
            raise RuntimeError("an export stream can be read only once; prepare it again")
        self._started = True
        self.counts.update(dict.fromkeys(self.count_names, 0))
        with _snapshot():
            yield from buffered(self.pieces(self.counts))
        self.complete = True

    def provenance(self, *, sha256: str | None = None, size: int | None = None) -> dict[str, Any]:
        """Where the file comes from: what was exported, when, by which platform version, from which
        campaign settings (or system), its row counts (once streamed) and its sha256 and size."""
        export: dict[str, Any] = {
            "kind": self.kind,
            "format": self.format,
            "file": self.filename,
            "content_type": self.content_type,
            "exported_at": utc_now_iso(self.exported_at),
            "with_usernames": self.with_usernames,
            "rows": dict(self.counts) if self.complete else None,
            "sha256": sha256,
            "bytes": size,
        }
        return {
            "provenance_version": PROVENANCE_VERSION,
            "export": export,
            "platform": {"name": PLATFORM_NAME, "version": platform_version()},
            **self.subject,
            "notes": self.notes,
        }

    def header(self, sidecar_url: str | None = None) -> str:
        """A short ASCII JSON summary for an HTTP header (the full provenance is the sidecar)."""
        summary: dict[str, Any] = {
            "kind": self.kind,
            "format": self.format,
            "exported_at": utc_now_iso(self.exported_at),
            "platform_version": platform_version(),
        }
        if "campaign" in self.subject:
            campaign = self.subject["campaign"]
            summary.update(campaign=campaign["id"], language=campaign["language"])
            summary.update(sample_seed=campaign["sample_seed"])
        else:
            summary.update(system=self.subject["system"]["id"], language=self.subject["system"]["language"])
        if sidecar_url:
            summary["provenance"] = sidecar_url
        return json.dumps(summary, ensure_ascii=True, separators=(",", ":"))


def campaign_settings(campaign: Campaign) -> dict[str, Any]:
    """The settings of a campaign that its data depend on, for a provenance record."""
    items = campaign.items.all()
    settings: dict[str, Any] = {
        "id": campaign.pk,
        "name": campaign.name,
        "kind": campaign.kind,
        "state": campaign.state,
        "language": campaign.language.code,
        "language_name": campaign.language.name,
        "tokenizer": campaign.language.tokenizer,
        "batch_size": campaign.batch_size,
        "replication": campaign.replication,
        "lease_minutes": campaign.lease_minutes,
        "prompt_system": campaign.prompt_system.name if campaign.prompt_system else None,
        "base_system": campaign.base_system.name if campaign.base_system else None,
        "test_system": campaign.test_system.name if campaign.test_system else None,
        "sample_size": campaign.sample_size,
        "sample_seed": campaign.sample_seed,
        "source_campaign": (
            {"id": campaign.source_campaign.pk, "name": campaign.source_campaign.name}
            if campaign.source_campaign
            else None
        ),
        "items": items.filter(is_control=False).count(),
        "created_at": utc_now_iso(campaign.created_at),
    }
    if campaign.kind == CampaignKind.SIDE_BY_SIDE:
        settings["control_items"] = items.filter(is_control=True).count()
        settings["control_pass_threshold"] = campaign.control_pass_threshold
        settings["m2_side"] = "drawn at random per (annotator, item) when the batch is handed out"
    return settings


# --- Preparing -----------------------------------------------------------------------------------------


def _check_format(kind: str, fmt: str | None) -> str:
    if kind not in FORMATS:
        raise ValidationFailed(f"Unknown export “{kind}”: choose one of {', '.join(FORMATS)}.")
    fmt = fmt or FORMATS[kind][0]
    if fmt not in FORMATS[kind]:
        raise ValidationFailed(f"The {kind} export comes as {' or '.join(FORMATS[kind])}, not “{fmt}”.")
    return fmt


def _campaign(campaign_id: int | None, kind: str) -> Campaign:
    if campaign_id is None:
        raise ValidationFailed(f"The {kind} export needs a campaign.")
    campaign = (
        Campaign.objects.select_related(
            "language", "prompt_system", "base_system", "test_system", "source_campaign"
        )
        .filter(pk=campaign_id)
        .first()
    )
    if campaign is None:
        raise NotFound(f"There is no campaign #{campaign_id}.")
    if campaign.kind not in CAMPAIGN_KINDS[kind]:
        wanted = " or ".join(CampaignKind(k).label for k in CAMPAIGN_KINDS[kind])
        raise ValidationFailed(
            f"Campaign #{campaign.pk} “{campaign.name}” is a {campaign.get_kind_display()} campaign: "
            f"the {kind} export is for {wanted} campaigns."
        )
    sealed = campaign if campaign.captions_sealed else None
    if sealed is None and campaign.source_campaign is not None and campaign.source_campaign.captions_sealed:
        sealed = campaign.source_campaign
    if sealed is not None:
        raise Conflict(
            f"The captions of campaign #{sealed.pk} “{sealed.name}” are the hidden references of a test phase: "
            "nothing of them is exported while they are sealed. A manager clears “captions sealed” on the "
            "campaign once every phase that uses them is closed."
        )
    return campaign


def _system(system: str | int | None) -> CaptioningSystem:
    """A system by id (an int) or by name (a str; digits that name no system are tried as an id)."""
    if system is None or system == "":
        raise ValidationFailed("The system-captions export needs a system and a language.")
    systems = CaptioningSystem.objects
    if isinstance(system, int):
        found = systems.filter(pk=system).first()
    else:
        found = systems.filter(name=system).first()
        if found is None and system.isascii() and system.isdigit():
            found = systems.filter(pk=int(system)).first()
    if found is None:
        raise NotFound(f"There is no captioning system “{system}”.")
    return found


def export_prepare(
    *,
    kind: str,
    fmt: str | None = None,
    campaign_id: int | None = None,
    system: str | int | None = None,
    language_code: str | None = None,
    with_usernames: bool = False,
) -> ExportStream:
    """An export ready to stream (reads nothing yet but the campaign or system and its settings).

    ``kind``: ``captions`` (xm3600 | coco) and ``ratings`` / ``judgments`` (csv | jsonl) of the
    campaign ``campaign_id``; ``system-captions`` (coco-results) of ``system`` (name or id) in
    ``language_code``. ``fmt`` defaults to the kind's first format. ``with_usernames`` adds the
    annotators' user names next to their pseudonyms (ratings and judgments). Read-only, no lock.
    Raises ValidationFailed for an unknown kind or format, a missing argument or a campaign of the
    wrong kind; NotFound for an unknown campaign, system or language.
    """
    fmt = _check_format(kind, fmt)
    exported_at = timezone.now()
    ending, content_type = FILE_TYPES[fmt]
    notes = list(NOTES.get((kind, fmt), []))
    if fmt in TABLE_NOTES:
        notes.append(TABLE_NOTES[fmt])
    # What the stream says of this request, whichever the subject.
    stream = partial(
        ExportStream, kind=kind, format=fmt, content_type=content_type, exported_at=exported_at, notes=notes
    )

    if kind == "system-captions":
        found = _system(system)
        language = Language.objects.filter(code=language_code or "").first()
        if language is None:
            raise NotFound(f"There is no language “{language_code or ''}”.")
        filename = f"system-{slugify(found.name) or found.pk}-{slugify(language.code)}{ending}"

        def pieces(counts: Counts) -> Iterator[str]:
            return coco_results_pieces(
                rows.system_results(system_id=found.pk, language_id=language.pk), counts=counts
            )

        subject = {
            "system": {
                "id": found.pk,
                "name": found.name,
                "description": found.description,
                "language": language.code,
                "tokenizer": language.tokenizer,
            }
        }
        return stream(
            filename=filename, with_usernames=False, subject=subject, pieces=pieces, count_names=("captions",)
        )

    campaign = _campaign(campaign_id, kind)
    language = campaign.language
    filename = f"campaign-{campaign.pk}-{kind}{ending}"
    extra: dict[str, Any] = {}
    if kind == "captions" and fmt == "xm3600":
        try:
            scheme = scheme_for_language(language.code, language.tokenizer)
            extra["tokenization"] = {
                "caption/tokenized": tokens_signature(scheme, lowercase=False, language=language.code),
                "caption/tokenized/lowercase": tokens_signature(scheme, language=language.code),
            }
        except SchemeError as exc:
            raise ValidationFailed(
                f"Cannot tokenise the {language.code} captions for this export: {exc}."
            ) from None

        def pieces(counts: Counts) -> Iterator[str]:
            return xm3600_lines(
                rows.written_captions(campaign),
                language=language.code,
                tokenizer=language.tokenizer,
                counts=counts,
            )

    elif kind == "captions":
        info = {
            "description": f"Captions written in campaign #{campaign.pk} “{campaign.name}” ({language.name})",
            "version": platform_version(),
            "contributor": PLATFORM_NAME,
            "year": campaign.created_at.year,
            "date_created": utc_now_iso(campaign.created_at),
            "campaign": campaign.pk,
            "language": language.code,
        }

        def pieces(counts: Counts) -> Iterator[str]:
            return coco_annotations_pieces(
                info, rows.caption_images(campaign), rows.caption_annotations(campaign), counts=counts
            )

    else:
        base, source = TABLES[kind]
        columns = rows.with_username_columns(base, with_usernames)
        write = csv_lines if fmt == "csv" else jsonl_lines

        def pieces(counts: Counts) -> Iterator[str]:
            return write(columns, source(campaign), counts=counts)

    return stream(
        filename=filename,
        with_usernames=with_usernames and kind in TABLES,
        subject={"campaign": campaign_settings(campaign), **extra},
        pieces=pieces,
        count_names=COUNT_NAMES.get((kind, fmt), ("rows",)),
    )


# --- Writing ---------------------------------------------------------------------------------------------


def export_to(stream: ExportStream, write: Callable[[bytes], Any]) -> dict[str, Any]:
    """Stream the export as UTF-8 bytes into ``write``, hashing as it goes; returns the provenance
    with row counts, sha256 and size."""
    digest, size = hashlib.sha256(), 0
    for chunk in stream.chunks():
        data = chunk.encode("utf-8")
        digest.update(data)
        size += len(data)
        write(data)
    return stream.provenance(sha256=digest.hexdigest(), size=size)


def export_digest(stream: ExportStream) -> dict[str, Any]:
    """The provenance of the export, with the sha256 and size of its bytes, writing nothing."""
    return export_to(stream, lambda data: None)


def provenance_json(provenance: dict[str, Any]) -> str:
    return json.dumps(provenance, ensure_ascii=False, indent=2) + "\n"


def _replace_atomically(path: Path, produce: Callable[[Any], Any]):
    # Written next to the target and renamed: an interrupted export never leaves half a file.
    partial = path.with_name(f".{path.name}.part")
    try:
        with open(partial, "wb") as fh:
            result = produce(fh)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return result


def sidecar_path(path: Path) -> Path:
    """``<file>.provenance.json`` next to ``<file>``."""
    return path.with_name(path.name + ".provenance.json")


def export_write(*, stream: ExportStream, path: Path, sidecar: Path | None = None) -> dict[str, Any]:
    """Write the export to ``path`` and its provenance to ``sidecar`` (default
    ``<path>.provenance.json``), each replaced atomically. Returns the provenance. Raises OSError."""
    path = Path(path)
    provenance = _replace_atomically(path, lambda fh: export_to(stream, fh.write))
    _replace_atomically(
        Path(sidecar) if sidecar else sidecar_path(path),
        lambda fh: fh.write(provenance_json(provenance).encode()),
    )
    return provenance


def campaign_exports(campaign_kind: str) -> list[tuple[str, str]]:
    """The (export kind, format) pairs that apply to a campaign of ``campaign_kind``."""
    return [
        (kind, fmt)
        for kind, kinds in CAMPAIGN_KINDS.items()
        if campaign_kind in kinds
        for fmt in FORMATS[kind]
    ]
