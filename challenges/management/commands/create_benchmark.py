from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from challenges.setup import benchmark_create
from core.errors import DomainError


class Command(BaseCommand):
    help = (
        'Create an evaluation-server benchmark from an XM3600 captions file (JSON lines {"image/key": ..., '
        '"<lang>": {"caption": [...]}}): one reference set per language, a validation and a test phase '
        "(closed; open them in the admin). The images must be stored (manage.py import_images). All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="XM3600 captions .jsonl")
        parser.add_argument("--name", required=True, help="Name of the benchmark.")
        parser.add_argument(
            "--languages", default="", help="Comma-separated codes (default: all in the file)."
        )
        parser.add_argument(
            "--validation-images", type=int, default=100, help="Images of the validation phase."
        )
        parser.add_argument(
            "--seed", type=int, default=0, help="Seed of the validation/test and public/private splits."
        )
        parser.add_argument(
            "--reference-counts", default="0", help="e.g. 0,5: all references and the first 5 (c5)."
        )
        parser.add_argument(
            "--metrics",
            default="",
            help="Comma-separated metric names (default: BLEU-1..4, ROUGE-L, CIDEr-D, METEOR).",
        )
        parser.add_argument("--ranking-metric", default="CIDEr-D", help="The metric the phases rank by.")
        parser.add_argument("--dry-run", action="store_true", help="Check and report; write nothing.")
        parser.add_argument(
            "--accept-language-problems",
            default="",
            metavar="REASON",
            help="Import references that fail the script or language check anyway, for this reason "
            "(recorded on each reference set).",
        )

        parser.add_argument(
            "--public-dataset",
            default="",
            metavar="NAME",
            help='The public dataset the file is, with its licence (e.g. "XM3600, CC-BY 4.0"): shown to hosts '
            "and teams, since anyone may have trained on its references.",
        )

    def handle(self, *args, **options):
        try:
            counts = [int(x) for x in options["reference_counts"].split(",") if x.strip()]
        except ValueError as exc:
            raise CommandError("--reference-counts takes integers, e.g. 0,5") from exc
        try:
            report = benchmark_create(
                path=options["file"],
                name=options["name"],
                languages=[c.strip() for c in options["languages"].split(",") if c.strip()] or None,
                validation_images=options["validation_images"],
                seed=options["seed"],
                reference_counts=counts,
                metrics=[m.strip() for m in options["metrics"].split(",") if m.strip()] or None,
                ranking_metric=options["ranking_metric"],
                dry_run=options["dry_run"],
                accept_language_problems=options["accept_language_problems"],
                public_dataset=options["public_dataset"],
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        if options["verbosity"] >= 1:
            self.stdout.write(report.summary())
