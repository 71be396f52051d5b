import json
import re

from django.core.management.base import BaseCommand, CommandError

from annotation.selection import geography
from annotation.services.selection import POOL_HELP, image_selection_run
from core.errors import DomainError


class Command(BaseCommand):
    help = (
        "Select geographically diverse images per language, the XM3600 way (seed 000, sec. 2.2): "
        "languages from the smallest candidate pool to the largest, each from where it is spoken, "
        "backing off to its countries, continents, then anywhere; never one image twice. "
        "Stores a named selection with one image set per language (unless --dry-run) and prints "
        "the per-language level table."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--languages",
            required=True,
            help="Language codes, separated by commas or spaces (e.g. bn,te,hi).",
        )
        parser.add_argument("--per-language", type=int, required=True, help="Images per language.")
        parser.add_argument("--name", help="Name of the stored selection (default: selection-<seed>).")
        parser.add_argument("--pool", default="", help=POOL_HELP)
        parser.add_argument("--seed", type=int, help="Seed that breaks ties (default: drawn and stored).")
        parser.add_argument(
            "--min-share",
            type=float,
            default=geography.MIN_SHARE,
            help=f"Minimum CLDR population share (percent) for a country to count (default {geography.MIN_SHARE:g}).",
        )
        parser.add_argument("--dry-run", action="store_true", help="Select and report; store nothing.")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **options):
        codes = [c for c in re.split(r"[\s,]+", options["languages"]) if c]
        seed = options["seed"]
        name = options["name"] or (f"selection-{seed}" if seed is not None else "")
        if not name:
            import random

            seed = random.SystemRandom().randrange(2**31)
            name = f"selection-{seed}"
        try:
            report = image_selection_run(
                name=name,
                language_codes=codes,
                per_language=options["per_language"],
                pool_query=options["pool"],
                seed=seed,
                min_share=options["min_share"],
                dry_run=options["dry_run"],
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        if options["format"] == "json":
            self.stdout.write(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
        elif options["verbosity"] >= 1:
            for line in report.lines():
                self.stdout.write(line)
