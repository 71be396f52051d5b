"""What the CLIP check commands (``clip_retrieval``, ``clip_zeroshot``, ``clip_foils``) share: the options
for the model and the output, declared once so their names and help read alike, and the one flow of
show, resume or plan-and-store, computed here with a progress bar or queued, then printed."""

from __future__ import annotations

from django.core.management.base import CommandError

from core.commands import UnitProgressCommand
from core.errors import DomainError
from core.jobs.kinds import JobKind
from evaluation.clip_choice import ClipModelChoice
from evaluation.models import RunStatus


def add_clip_check_arguments(parser) -> None:
    parser.add_argument("--languages", nargs="+", metavar="CODE", help="only these languages")
    parser.add_argument(
        "--clip-model",
        metavar="NAME",
        help="a registered CLIP model, by name or id (as metric runs; e.g. demo-tiny-clip)",
    )
    parser.add_argument(
        "--model", help="open_clip model name, without --clip-model (default: the CLIP_MODEL setting)"
    )
    parser.add_argument(
        "--pretrained", help="pretrained tag (default: CLIP_PRETRAINED for the default model)"
    )
    parser.add_argument("--checkpoint", help="a checkpoint file instead of a pretrained tag")
    parser.add_argument("--name", default="", help="a name for the check")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument(
        "--queue", action="store_true", help="hand the check to the Celery workers and return"
    )


def clip_check_options(options: dict) -> dict:
    """The plan's keyword arguments among the options of :func:`add_clip_check_arguments`."""
    return {
        "languages": options["languages"],
        "name": options["name"],
        "clip": ClipModelChoice(
            model=options["model"],
            pretrained=options["pretrained"],
            checkpoint=options["checkpoint"],
            registered=options["clip_model"],
        ),
    }


class CheckCommand(UnitProgressCommand):
    """A subclass names its ``job_kind``, ``noun`` ("Check", "Retrieval check") and services, plans a check
    (``plan(options)``, a CommandError when the data is not named) and prints it (``check_print``)."""

    job_kind: JobKind
    noun = "Check"

    # The kind's services, as staticmethod(...): check_get(check_id=), check_resume(check_id=, enqueue=),
    # check_store(plan=, enqueue=).
    check_get = check_resume = check_store = None

    def plan(self, options):
        raise NotImplementedError

    def check_print(self, check, fmt: str) -> None:
        raise NotImplementedError

    def handle(self, *args, **options):
        self.verbosity = options["verbosity"]
        queue = options["queue"]
        try:
            if options["show"]:
                check = self.check_get(check_id=options["show"])
            else:
                if options["resume"]:
                    check = self.check_resume(check_id=options["resume"], enqueue=queue).job
                else:
                    check = self.check_store(plan=self.plan(options), enqueue=queue)
                if not queue:
                    check = self.compute_here(self.job_kind, check)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        check.refresh_from_db()
        if queue and check.status != RunStatus.SUCCEEDED:
            self.stdout.write(
                f"{self.noun} #{check.pk} queued: {check.chunks_total} chunks for {', '.join(check.languages)}."
            )
            return
        self.check_print(check, options["format"])
        if check.status != RunStatus.SUCCEEDED:
            raise CommandError(f"{self.noun} #{check.pk} {check.status}: {check.error or 'not finished'}")
