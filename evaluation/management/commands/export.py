"""Export research data: a campaign's captions (XM3600 or COCO), a system's captions (COCO results),
ratings or side-by-side judgments (CSV or JSON lines), with a provenance sidecar."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import service_arguments
from core.errors import DomainError
from evaluation.research.exports import (
    FORMATS,
    export_prepare,
    export_to,
    export_write,
    provenance_json,
    sidecar_path,
)

ALL_FORMATS = sorted({fmt for formats in FORMATS.values() for fmt in formats})
# The options that are export_prepare's parameters (their dest).
SERVICE_OPTIONS = ("kind", "fmt", "campaign_id", "system", "language_code", "with_usernames")


class Command(BaseCommand):
    help = (
        "Export research data, streamed in constant memory. KIND: captions (a caption campaign's written "
        "captions, --format xm3600 (default) or coco), system-captions (--system NAME --language L, COCO "
        "results), ratings (screen-1 ratings of a caption campaign or the ratings of a verification "
        "campaign) or judgments (a side-by-side campaign), both --format csv (default) or jsonl. Writes "
        "FILE and FILE.provenance.json (campaign settings, seed, platform version, export time, row counts, "
        "sha256 of FILE). Annotators appear as pseudonyms unless --with-usernames."
    )

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=list(FORMATS), metavar="KIND", help=" | ".join(FORMATS))
        parser.add_argument(
            "--campaign", type=int, dest="campaign_id", help="Campaign id (captions, ratings, judgments)."
        )
        parser.add_argument("--system", help="Captioning system name (system-captions).")
        parser.add_argument(
            "--language",
            dest="language_code",
            help="Language code of the system's captions (system-captions).",
        )
        parser.add_argument(
            "--format", dest="fmt", choices=ALL_FORMATS, help="Default: the kind's first format."
        )
        parser.add_argument(
            "--output",
            help="File to write (default: the export's own name in the current folder); '-' writes to "
            "standard output and no sidecar unless --provenance is given.",
        )
        parser.add_argument(
            "--provenance", help="Where to write the provenance (default FILE.provenance.json)."
        )
        parser.add_argument(
            "--with-usernames",
            action="store_true",
            help="Add the annotators' user names next to their pseudonyms (ratings, judgments).",
        )

    def handle(self, *args, **options):
        kind = options["kind"]
        if kind == "system-captions":
            if options["campaign_id"] is not None:
                raise CommandError("system-captions takes --system and --language, not --campaign.")
            if not options["system"] or not options["language_code"]:
                raise CommandError("system-captions needs --system NAME and --language CODE.")
        elif options["campaign_id"] is None:
            raise CommandError(f"{kind} needs --campaign ID.")
        elif options["system"] or options["language_code"]:
            raise CommandError(f"{kind} takes --campaign only (not --system or --language).")
        try:
            stream = export_prepare(**service_arguments(options, SERVICE_OPTIONS))
        except DomainError as exc:
            raise CommandError(exc.message) from None

        output = options["output"]
        if output == "-":
            provenance = export_to(stream, lambda data: self.stdout.write(data.decode(), ending=""))
            if options["provenance"]:
                Path(options["provenance"]).write_text(provenance_json(provenance), encoding="utf-8")
            return
        path = Path(output or stream.filename)
        if path.is_dir():
            path = path / stream.filename
        sidecar = Path(options["provenance"]) if options["provenance"] else sidecar_path(path)
        try:
            provenance = export_write(stream=stream, path=path, sidecar=sidecar)
        except OSError as exc:
            raise CommandError(f"Cannot write {exc.filename or path}: {exc.strerror or exc}") from None
        if options["verbosity"] >= 1:
            counts = ", ".join(f"{n} {what}" for what, n in provenance["export"]["rows"].items()) or "no rows"
            self.stderr.write(f"Wrote {path} ({counts}; sha256 {provenance['export']['sha256'][:12]}…)")
            self.stderr.write(f"Provenance in {sidecar}")
        if options["verbosity"] >= 2:
            self.stderr.write(json.dumps(provenance["export"], ensure_ascii=False))
