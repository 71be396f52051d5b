"""What every import command shares: the --dry-run flag, domain errors as CommandError, the report; and
the base of the imports of a captions file keyed by image key (system captions, reference captions)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importers.report import ImportReport
from core.errors import DomainError


class ImportCommand(BaseCommand):
    def add_dry_run_argument(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="Check and report; write nothing.")

    def run_import(self, options: dict, service: Callable[..., ImportReport], **kwargs) -> ImportReport:
        """Call the import service; print its summary (verbosity 1) and every detail (verbosity 2)."""
        try:
            report = service(dry_run=options["dry_run"], **kwargs)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        verbosity = options["verbosity"]
        if verbosity >= 1:
            self.stdout.write(report.summary())
            for line in report.details(full=verbosity >= 2):
                self.stdout.write(f"  {line}")
        return report


class CaptionFileImportCommand(ImportCommand):
    """Imports a file of captions keyed by image key: ``FILE``, ``--language``, ``--skip-unknown`` (image
    keys that are not stored are reported and nothing is imported unless it is given) and ``--dry-run``.
    ``--accept-language-problems REASON`` imports captions that fail the annotators' script or language
    check, recording the reason. A subclass names its ``service``, the texts of those arguments, its own ``more_arguments`` and the
    service's keywords from them (``service_options``)."""

    file_help = ""
    language_help = ""
    language_required = False
    skip_unknown_help = ""

    @staticmethod
    def service(**kwargs) -> ImportReport:
        raise NotImplementedError

    def more_arguments(self, parser) -> None:
        raise NotImplementedError

    def service_options(self, options: dict) -> dict:
        raise NotImplementedError

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help=self.file_help)
        self.more_arguments(parser)
        parser.add_argument("--language", required=self.language_required, help=self.language_help)
        parser.add_argument("--skip-unknown", action="store_true", help=self.skip_unknown_help)
        parser.add_argument(
            "--accept-language-problems",
            metavar="REASON",
            default="",
            help="Import even when captions fail the annotators' script or language check (counted per "
            "problem); the reason is recorded.",
        )
        self.add_dry_run_argument(parser)

    def handle(self, *args, **options):
        self.run_import(
            options,
            self.service,
            path=options["file"],
            language_code=options["language"],
            skip_unknown=options["skip_unknown"],
            language_check_reason=options["accept_language_problems"],
            **self.service_options(options),
        )
