"""What every import command shares: the --dry-run flag, domain errors as CommandError, the report."""

from __future__ import annotations

from collections.abc import Callable

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
