"""manage.py clip_retrieval: check per language how well a CLIP model retrieves images from human captions.

    manage.py clip_retrieval --campaigns "Captions de" "Captions sw" [--languages de sw]
    manage.py clip_retrieval --reference-sets xm3600-en xm3600-sw --model xlm-roberta-base-ViT-B-32 \
        --pretrained laion5b_s13b_b90k --format json
    manage.py clip_retrieval --resume 12       # finish a check that was stopped or failed
    manage.py clip_retrieval --show 12         # print a finished check

By default the check is computed in this process with a progress bar on stderr; ``--queue`` hands
it to the Celery workers instead and returns at once. The table gives text→image and image→text
R@1, R@5, R@10 and the mean recall per language, and marks the languages whose R@1 is below
``CLIP_UNRELIABLE_R1_RATIO`` × English's: "CLIP-based scores unreliable here".
"""

from __future__ import annotations

from django.core.management.base import CommandError

from evaluation.management.check_command import CheckCommand, add_clip_check_arguments, clip_check_options
from evaluation.models import RetrievalCheck
from evaluation.research.retrieval_tables import retrieval_json, retrieval_text
from evaluation.retrieval.plan import (
    retrieval_check_plan,
    retrieval_check_resume,
    retrieval_check_store,
)
from evaluation.retrieval.selectors import check_trust, retrieval_check_get
from evaluation.retrieval.tasks import RETRIEVAL_CHECK


class Command(CheckCommand):
    job_kind = RETRIEVAL_CHECK
    noun = "Retrieval check"
    check_get = staticmethod(retrieval_check_get)
    check_resume = staticmethod(retrieval_check_resume)
    check_store = staticmethod(retrieval_check_store)
    help = "Retrieval recall (R@1/5/10, both directions) of a CLIP model per language, and the languages it cannot be trusted in."

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group()
        source.add_argument(
            "--campaigns", nargs="+", metavar="CAMPAIGN", help="caption campaigns (ids or names)"
        )
        source.add_argument(
            "--reference-sets",
            nargs="+",
            metavar="SET",
            help="reference sets, one per language (ids or names)",
        )
        source.add_argument("--resume", type=int, metavar="ID", help="finish check ID")
        source.add_argument("--show", type=int, metavar="ID", help="print check ID")
        add_clip_check_arguments(parser)

    def plan(self, options):
        if not (options["campaigns"] or options["reference_sets"]):
            raise CommandError("Name --campaigns or --reference-sets to check on (or --resume / --show ID).")
        return retrieval_check_plan(
            campaigns=options["campaigns"],
            reference_sets=options["reference_sets"],
            **clip_check_options(options),
        )

    def check_print(self, check: RetrievalCheck, fmt: str) -> None:
        trust = check_trust(check) if check.results else {}
        title = (
            f"Retrieval check #{check.pk} “{check.name}”: {check.model_label} (model id {check.model_id or 'not loaded yet'}), "
            f"{check.get_source_display()}, recalls in %"
        )
        if fmt == "json":
            self.stdout.write(
                retrieval_json(
                    check.results or {},
                    trust,
                    check_id=check.pk,
                    name=check.name,
                    status=check.status,
                    model=check.params,
                    model_id=check.model_id,
                    model_key=check.model_key,
                ),
                ending="",
            )
        else:
            self.stdout.write(retrieval_text(check.results or {}, trust, title=title), ending="")
