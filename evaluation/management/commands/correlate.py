"""Correlate ΔS×S with Δmetric: from a comparisons CSV, or from the platform's own campaigns and runs."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from evaluation.research.comparisons import comparisons_from_db
from evaluation.research.judgments_csv import JudgmentsCsvError, read_judgments_csv
from evaluation.research.meta_evaluation import (
    DEFAULT_N_PERMUTATIONS,
)
from evaluation.research.selection import (
    DB_OPTIONS,
    OUTPUT_FORMATS,
    comparisons_from_file,
    correlation_options,
    db_selection,
    selection_arguments,
)
from evaluation.research.tables import correlation_csv, correlation_json, correlation_text
from evaluation.research.trust_tables import model_level, trust_build, trust_csv, trust_json, trust_text


class Command(BaseCommand):
    help = (
        "Correlate side-by-side judgments with metric differences: Pearson, Spearman, Kendall tau_b and "
        "tau_c with N and bootstrap 95% intervals, per metric, per language and over all languages. "
        "Either --comparisons FILE, a CSV with columns m1,m2,language,delta_sxs and one delta_<metric> "
        "column per metric (delta = value for m2 minus value for m1; delta_sxs > 0 when people prefer m2), "
        "or --runs (and --campaigns, --languages, --metrics): the platform's side-by-side campaigns and "
        "metric runs, read by the same builder as the report page and the API (what is left out goes to "
        "stderr). Each comparison counts in both directions unless --one-direction (seed 000 gets N=48 "
        "from 24 comparisons so). tau_c is scipy's (m = the smaller number of distinct values), for the "
        "coefficient, its p-value and its interval, and every output says so: ΔS×S is not a rating scale, "
        "so seed 001's m (the number of points of the ratings' scale) does not apply here; the per-caption "
        "agreement of `report` has the choice (--tau-c). Pairwise accuracy (the share of comparisons "
        "where Δmetric has the sign of ΔS×S) comes with every metric and language. "
        "Or --judgments FILE: one row per side-by-side judgment, columns language,image,m1,m2,rater,human "
        "(an integer -3..+3 from m2's side) and one column per metric holding metric(m2's caption) − "
        "metric(m1's caption) on that image: the item-level verdict (acc23 with tie calibration, its "
        "epsilon, intervals and significance clusters per language and over all), with the pairwise "
        "and soft pairwise accuracy of the pairs the file compares. Reads only; writes nothing."
    )

    def add_arguments(self, parser):
        selection_arguments(parser, csv_help="Comparisons CSV (data from elsewhere, e.g. a paper's table).")
        parser.add_argument(
            "--judgments",
            type=Path,
            metavar="FILE.csv",
            help="Side-by-side judgments with per-image metric differences (data from elsewhere): "
            "the item-level verdict per language.",
        )
        parser.add_argument(
            "--permutations",
            type=int,
            default=DEFAULT_N_PERMUTATIONS,
            metavar="N",
            help="Draws of the permutation tests (significance between metrics, soft pairwise accuracy) "
            f"with --judgments or --runs (default {DEFAULT_N_PERMUTATIONS}).",
        )
        parser.add_argument(
            "--format", choices=OUTPUT_FORMATS, default="text", help="Output format (default: text)."
        )

    def handle(self, *args, **options):
        common = correlation_options(options)
        if options["judgments"] is not None:
            self._judgments(options, common)
            return
        if options["comparisons"] is not None:
            comparisons, items = comparisons_from_file(options, self.stderr.write), []
            where = str(options["comparisons"])
        else:
            try:
                found = comparisons_from_db(**db_selection(options))
            except DomainError as exc:
                raise CommandError(exc.message) from exc
            for item in found.skipped:
                self.stderr.write(f"Left out: {item}")
            comparisons, where, items = list(found), "the selection", found.items
        try:
            # Where the platform holds the judgments behind the comparisons: soft pairwise accuracy too.
            results = model_level(comparisons, items, n_permutations=options["permutations"], **common)
        except ValueError as exc:
            raise CommandError(f"{where}: {exc}") from exc
        fmt = options["format"]
        if fmt == "json":
            self.stdout.write(correlation_json(results), ending="")
        elif fmt == "csv":
            self.stdout.write(correlation_csv(results), ending="")
        else:
            self.stdout.write(correlation_text(results, show_p=options["verbosity"] >= 2), ending="")

    def _judgments(self, options, common) -> None:
        path = options["judgments"]
        for option in (*DB_OPTIONS, "comparisons"):
            if options[option]:
                raise CommandError(
                    f"--{option} cannot be combined with --judgments (the file is the selection)."
                )
        if options["permutations"] < 1:
            raise CommandError("--permutations must be at least 1")
        try:
            judgments = read_judgments_csv(path)
        except JudgmentsCsvError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: cannot read: {exc}") from exc
        draws = {
            "n_permutations": options["permutations"],
            "n_boot": common["n_boot"],
            "seed": common["seed"],
        }
        try:
            trust = trust_build(
                judgments.items,
                judgments.comparisons,
                metrics=judgments.metrics,
                both_directions=common["both_directions"],
                **draws,
            )
        except ValueError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        if trust.table is None:
            raise CommandError(f"{path}: no judged image has a metric difference.")
        render = {"json": trust_json, "csv": trust_csv, "text": trust_text}[options["format"]]
        self.stdout.write(render(trust), ending="")
