"""manage.py clip_foils: how often a CLIP model's CLIPScore prefers a true caption to its foil, per
language and phenomenon (seed 001, VALSE and its translations).

    manage.py clip_foils --files en_existence.json de_existence.json ...   # language from the name
    manage.py clip_foils --files ko=valse_ko.json en=valse.json --min-votes 2 --skip-unknown-images
    manage.py clip_foils --compare 14 9          # fine-tuned check 14 against its base model's check 9
    manage.py clip_foils --resume 12 | --show 12 [--format json] | --trust

Only pairs VALSE's annotators validated are kept (``mturk.caption >= --min-votes``, default 2).
Ties count against the model and are reported. Nothing is stored when a file has a problem.
"""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from core.errors import DomainError
from evaluation.clip_checks.files import DEFAULT_MIN_VOTES
from evaluation.clip_checks.plan import foil_check_plan
from evaluation.clip_checks.selectors import foil_before_after
from evaluation.management.commands.clip_zeroshot import ProbeCommand, read_file


def before_after_text(data: dict) -> str:
    lines = [
        f"Foils: check #{data['check_id']} ({data['model']}) against #{data['base_id']} ({data['base_model']})",
        "",
    ]
    lines.append(
        f"{'language':<9} {'phenomenon':<22} {'pairs':>6} {'before':>7} {'after':>7} {'delta':>7}  95% interval"
    )
    for code, compared in data["languages"].items():
        for phenomenon, row in compared["phenomena"].items():
            interval = (
                "–"
                if not row["interval"]
                else f"[{100 * row['interval'][0]:+.1f}, {100 * row['interval'][1]:+.1f}]"
            )
            lines.append(
                f"{code:<9} {phenomenon:<22} {row['n_pairs']:>6} {100 * row['before']:>7.1f} "
                f"{100 * row['after']:>7.1f} {100 * row['delta']:>+7.1f}  {interval}"
            )
    return "\n".join(lines) + "\n"


class Command(ProbeCommand):
    help = "Foil accuracy (VALSE) of a CLIP model per language and phenomenon, with bootstrap intervals."

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group()
        source.add_argument(
            "--files", nargs="+", metavar="FILE", help="VALSE-format files: <code>_<name>.json, or CODE=FILE"
        )
        source.add_argument("--compare", nargs=2, type=int, metavar=("ID", "BASE_ID"), help="before/after")
        self.add_common(parser, source)
        parser.add_argument(
            "--min-votes", type=int, default=DEFAULT_MIN_VOTES, help="keep pairs with mturk.caption ≥ this"
        )
        parser.add_argument(
            "--skip-unknown-images", action="store_true", help="drop pairs whose image is not imported"
        )

    def handle(self, *args, **options):
        if options["compare"]:
            try:
                data = foil_before_after(check_id=options["compare"][0], base_id=options["compare"][1])
            except DomainError as exc:
                raise CommandError(exc.message) from None
            out = (
                json.dumps(data, indent=2, ensure_ascii=False) + "\n"
                if options["format"] == "json"
                else before_after_text(data)
            )
            self.stdout.write(out, ending="")
            return
        super().handle(*args, **options)

    def plan(self, options):
        if not options["files"]:
            raise CommandError("Give --files (or --compare, --resume / --show ID, or --trust).")
        files = []
        for given in options["files"]:
            code, _, path = given.rpartition("=") if "=" in given.split("/")[0] else ("", "", given)
            name, content = read_file(path)
            files.append((name, content, code))
        return foil_check_plan(
            files=files,
            min_votes=options["min_votes"],
            skip_unknown_images=options["skip_unknown_images"],
            **self.model_args(options),
        )
