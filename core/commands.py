"""What the demo loaders share: refused on a real deployment (DEBUG off) unless forced, one service in one
transaction that ``--dry-run`` rolls back, domain errors as CommandError, and the printout after it."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from core.errors import DomainError


class _DryRun(Exception):
    pass


class DemoLoadCommand(BaseCommand):
    """Subclasses say why the demo does not belong in a real deployment (``force_help``, ``refusal``), load
    it (``load``, returning a summary) and print that summary (``report``, skipped at verbosity 0)."""

    force_help = ""
    refusal = ""

    def load(self):
        raise NotImplementedError

    def report(self, summary, options: dict) -> None:
        raise NotImplementedError

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="Show what would be loaded; store nothing."
        )
        parser.add_argument(
            "--url",
            default="http://127.0.0.1:8000/",
            help="Where the demo will be served (for the printout).",
        )
        parser.add_argument("--force", action="store_true", help=self.force_help)

    def handle(self, *args, **options):
        if not settings.DEBUG and not options["force"]:
            raise CommandError(f"DEBUG is off: {self.refusal} Use --force if you really want them here.")
        try:
            with transaction.atomic():
                summary = self.load()
                if options["dry_run"]:
                    raise _DryRun
        except _DryRun:
            pass
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        if options["verbosity"] < 1:
            return
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing was stored.")
        self.report(summary, options)
