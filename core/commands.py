"""What management commands share: one service call in one transaction that ``--dry-run`` rolls back, with
domain errors as CommandError (:func:`service_in_transaction`); and the demo loaders' base, refused on a
real deployment (DEBUG off) unless forced; and :class:`UnitProgressCommand`, which computes a job's units in
its own process with a progress bar."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from core.errors import DomainError
from core.jobs.engine import unit_run
from core.jobs.kinds import JobKind

T = TypeVar("T")


class _DryRun(Exception):
    pass


def service_in_transaction(call: Callable[[], T], *, dry_run: bool) -> T:
    """``call()`` in one transaction, rolled back after it ran when ``dry_run`` (so the command can say what
    would be stored); its result either way. A DomainError becomes a CommandError with its message."""
    result = None
    try:
        with transaction.atomic():
            result = call()
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    except DomainError as exc:
        raise CommandError(exc.message) from None
    return result


def service_arguments(options: dict, names: tuple[str, ...]) -> dict:
    """The command's ``options`` that are keyword arguments of its service: each of those options is
    declared with the service's parameter as its ``dest``, so the two are named once, alike."""
    return {name: options[name] for name in names}


class DemoLoadCommand(BaseCommand):
    """Subclasses say why the demo does not belong in a real deployment (``force_help``, ``refusal``), name
    the service that loads it (``loader``, returning a summary) and print that summary (``report``, skipped
    at verbosity 0; the demo's address is ``served_url``)."""

    force_help = ""
    refusal = ""
    loader: Callable[[], object]

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

    @staticmethod
    def served_url(options: dict) -> str:
        """Where the demo will be served (``--url``), ending in one slash."""
        return options["url"].rstrip("/") + "/"

    def handle(self, *args, **options):
        if not settings.DEBUG and not options["force"]:
            raise CommandError(f"DEBUG is off: {self.refusal} Use --force if you really want them here.")
        summary = service_in_transaction(self.loader, dry_run=options["dry_run"])
        if options["verbosity"] < 1:
            return
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing was stored.")
        self.report(summary, options)


class UnitProgressCommand(BaseCommand):
    """A command that computes a job's ready units in this process, with a progress bar on stderr (a
    subclass's ``handle`` sets ``self.verbosity``; verbosity 0 draws no bar)."""

    bar_width = 30
    verbosity = 1

    def compute_here(self, kind: JobKind, job):
        """Compute the ready units until none is left (units that wait for others come after them); stops
        at a unit that fails. Returns ``job`` (not refreshed)."""
        done_of = kind.job_model.objects.values_list("chunks_done", flat=True)
        done = done_of.get(pk=job.pk)
        while ids := kind.ready(job.pk):
            for unit_id in ids:
                unit = kind.unit_model.objects.get(pk=unit_id)
                self.progress_bar(done, job.chunks_total, f"{unit.kind} {unit.language}".strip())
                if unit_run(kind, unit_id=unit_id, send_next=False) == "failed":
                    self.stderr.write("")
                    return job
                done = done_of.get(pk=job.pk)
        self.progress_bar(done, job.chunks_total, "done")
        self.stderr.write("")
        return job

    def progress_bar(self, done: int, total: int, what: str) -> None:
        if self.verbosity < 1:
            return
        filled = self.bar_width * done // max(total, 1)
        self.stderr.write(
            f"\r[{'#' * filled}{'.' * (self.bar_width - filled)}] {done}/{total} chunks  {what:<16}",
            ending="",
        )
        self.stderr.flush()
