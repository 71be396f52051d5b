from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.research.comparisons_csv import ComparisonsCsvError, read_comparisons_csv
from evaluation.research.correlation import correlate
from evaluation.research.tables import correlation_csv, correlation_json, correlation_text

FORMATS = ("text", "csv", "json")


class Command(BaseCommand):
    help = (
        "Correlate side-by-side judgments with metric differences: Pearson, Spearman, Kendall tau_b and "
        "tau_c with N and bootstrap 95% intervals, per metric, per language and over all languages. "
        "FILE is a CSV with columns m1,m2,language,delta_sxs and one delta_<metric> column per metric "
        "(delta = value for m2 minus value for m1; delta_sxs > 0 when people prefer m2). Each comparison "
        "counts in both directions unless --one-direction (seed 000 gets N=48 from 24 comparisons so). "
        "Reads only the file; writes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--comparisons", required=True, type=Path, metavar="FILE.csv", help="Comparisons CSV."
        )
        parser.add_argument(
            "--one-direction",
            action="store_true",
            help="Count each comparison once, as entered (default: also m1 vs m2 with deltas negated).",
        )
        parser.add_argument(
            "--format", choices=FORMATS, default="text", help="Output format (default: text)."
        )
        parser.add_argument(
            "--bootstrap",
            type=int,
            default=10000,
            metavar="N",
            help="Bootstrap resamples of the comparisons for the 95%% intervals; 0 for none (default 10000).",
        )
        parser.add_argument("--seed", type=int, default=0, help="Seed of the bootstrap (default 0).")

    def handle(self, *args, **options):
        if options["bootstrap"] < 0:
            raise CommandError("--bootstrap must be 0 (no intervals) or more")
        path = options["comparisons"]
        try:
            comparisons = read_comparisons_csv(
                path, on_warning=lambda message: self.stderr.write(f"{path}: {message}")
            )
        except ComparisonsCsvError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: cannot read: {exc}") from exc
        try:
            results = correlate(
                comparisons,
                both_directions=not options["one_direction"],
                n_boot=options["bootstrap"],
                seed=options["seed"],
            )
        except ValueError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        fmt = options["format"]
        if fmt == "json":
            self.stdout.write(correlation_json(results), ending="")
        elif fmt == "csv":
            self.stdout.write(correlation_csv(results), ending="")
        else:
            self.stdout.write(correlation_text(results, show_p=options["verbosity"] >= 2), ending="")
