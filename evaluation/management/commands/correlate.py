"""Correlate ΔS×S with Δmetric: from a comparisons CSV, or from the platform's own campaigns and runs."""

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from evaluation.research.comparisons import comparisons_from_db
from evaluation.research.correlation import correlate
from evaluation.research.selection import (
    comparisons_from_file,
    correlation_options,
    db_selection,
    selection_arguments,
)
from evaluation.research.tables import correlation_csv, correlation_json, correlation_text

FORMATS = ("text", "csv", "json")


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
        "agreement of `report` has the choice (--tau-c). Reads only; writes nothing."
    )

    def add_arguments(self, parser):
        selection_arguments(parser, csv_help="Comparisons CSV (data from elsewhere, e.g. a paper's table).")
        parser.add_argument(
            "--format", choices=FORMATS, default="text", help="Output format (default: text)."
        )

    def handle(self, *args, **options):
        common = correlation_options(options)
        if options["comparisons"] is not None:
            comparisons = comparisons_from_file(options, self.stderr.write)
            where = str(options["comparisons"])
        else:
            try:
                found = comparisons_from_db(**db_selection(options))
            except DomainError as exc:
                raise CommandError(exc.message) from exc
            for item in found.skipped:
                self.stderr.write(f"Left out: {item}")
            comparisons, where = list(found), "the selection"
        try:
            results = correlate(comparisons, **common)
        except ValueError as exc:
            raise CommandError(f"{where}: {exc}") from exc
        fmt = options["format"]
        if fmt == "json":
            self.stdout.write(correlation_json(results), ending="")
        elif fmt == "csv":
            self.stdout.write(correlation_csv(results), ending="")
        else:
            self.stdout.write(correlation_text(results, show_p=options["verbosity"] >= 2), ending="")
