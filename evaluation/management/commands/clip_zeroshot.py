"""manage.py clip_zeroshot: zero-shot classification of a CLIP model per language (seed 004, Babel-ImageNet).

    manage.py clip_zeroshot --labels babel_imagenet.json --images labelled.csv [--templates prompts.csv]
    manage.py clip_zeroshot --labels labels.csv --images labelled.csv --languages en de sw --model ... --pretrained ...
    manage.py clip_zeroshot --resume 12         # finish a check that was stopped or failed
    manage.py clip_zeroshot --show 12 [--format json]
    manage.py clip_zeroshot --trust             # the CLIP trust table of every checked model

Computed in this process with a progress bar on stderr; ``--queue`` hands the check to the workers.
File formats: docs/clip-checks.md. Nothing is stored when a file has a problem; the error names its line.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from evaluation.clip_checks.plan import probe_check_resume, probe_check_store, zeroshot_check_plan
from evaluation.clip_checks.selectors import probe_check_get
from evaluation.clip_checks.tasks import CLIP_PROBE_CHECK
from evaluation.management.check_command import CheckCommand, add_clip_check_arguments, clip_check_options
from evaluation.research.clip_trust_tables import (
    clip_trust_tables,
    clip_trust_text,
    probe_check_json,
    probe_check_text,
)


def read_file(path: str) -> tuple[str, bytes]:
    try:
        return Path(path).name, Path(path).read_bytes()
    except OSError as exc:
        raise CommandError(f"Cannot read {path}: {exc.strerror}.") from None


class ProbeCommand(CheckCommand):
    """What the zero-shot and foil commands share: resume, show, the trust table, the progress bar."""

    job_kind = CLIP_PROBE_CHECK
    check_get = staticmethod(probe_check_get)
    check_resume = staticmethod(probe_check_resume)
    check_store = staticmethod(probe_check_store)

    def add_common(self, parser, source):
        source.add_argument("--resume", type=int, metavar="ID", help="finish check ID")
        source.add_argument("--show", type=int, metavar="ID", help="print check ID")
        source.add_argument(
            "--trust", action="store_true", help="print the CLIP trust table of every checked model"
        )
        add_clip_check_arguments(parser)

    def model_args(self, options) -> dict:
        return clip_check_options(options)

    def handle(self, *args, **options):
        if options["trust"]:
            tables = clip_trust_tables()
            if options["format"] == "json":
                self.stdout.write(json.dumps(tables, indent=2, ensure_ascii=False) + "\n", ending="")
            else:
                self.stdout.write(
                    clip_trust_text(tables) or "No model has a finished check yet.\n", ending=""
                )
            return
        super().handle(*args, **options)

    def check_print(self, check, fmt):
        self.stdout.write(probe_check_json(check) if fmt == "json" else probe_check_text(check), ending="")


class Command(ProbeCommand):
    help = "Zero-shot classification accuracy (top-1, top-5, per class) of a CLIP model per language, against English's."

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group()
        source.add_argument(
            "--labels",
            metavar="FILE",
            help="class labels: Babel-ImageNet JSON or class_id,language,label CSV",
        )
        self.add_common(parser, source)
        parser.add_argument(
            "--images", metavar="FILE", help="labelled images: image,class_id CSV (image keys)"
        )
        parser.add_argument(
            "--templates", metavar="FILE", help="prompt templates: language,template CSV with {}"
        )

    def plan(self, options):
        if not options["labels"] or not options["images"]:
            raise CommandError("Give --labels and --images (or --resume / --show ID, or --trust).")
        return zeroshot_check_plan(
            labels=read_file(options["labels"]),
            images=read_file(options["images"]),
            templates=read_file(options["templates"]) if options["templates"] else None,
            **self.model_args(options),
        )
