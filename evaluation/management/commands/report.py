"""Print the metric-vs-human correlation table and, with --out, write the whole report to a folder."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from evaluation.research.correlation import TAU_C_SEED001, TAU_C_VARIANTS
from evaluation.research.reports.render import correlation_table, per_caption_table, report_write
from evaluation.research.reports.report import (
    Report,
    canonical_metric_names,
    report_from_comparisons,
    report_from_db,
)
from evaluation.research.selection import (
    OUTPUT_FORMATS,
    comparisons_from_file,
    correlation_options,
    db_selection,
    selection_arguments,
)
from evaluation.research.trust_tables import Trust, trust_text


class Command(BaseCommand):
    help = (
        "Correlate side-by-side judgments with metric differences and report it: for the side-by-side "
        "campaigns (every finished one, or --campaigns) and the metric runs --runs, each comparison (m1, m2, language) "
        "pairs ΔS×S with Δmetric = metric(m2) − metric(m1) from a run scoring both systems in the "
        "campaign's language. Prints the correlation table (N, Pearson, Spearman, Kendall tau_b and tau_c "
        "with bootstrap 95% intervals, per metric, per language and over all languages). With --out DIR "
        "also writes correlations.{txt,csv,json}, comparisons.{csv,json}, scatter_<metric>.{png,svg}, "
        "table1/table2/sxs.{txt,csv}, per_caption.{txt,csv,json} (when a run scores captions rated on "
        "screen 1), the trust table (item-level acc23 with tie calibration, significance clusters, pairwise "
        "and soft pairwise accuracy: trust.{txt,csv,json}, trust_heatmap.{png,svg}) and index.txt; the "
        "text output prints the trust table too. --comparisons FILE.csv takes comparisons entered by hand instead "
        "(columns m1,m2,language,delta_sxs,delta_<metric>). Reads the database; writes only files."
    )

    def add_arguments(self, parser):
        selection_arguments(
            parser, csv_help="Comparisons entered by hand (a paper's table) instead of campaigns and runs."
        )
        parser.add_argument(
            "--transfer-ratings",
            action="store_true",
            help="Per caption: also pair English screen-1 ratings with the same system's captions in the "
            "run's language (only meaningful when those captions are translations, as in seed 001).",
        )
        parser.add_argument(
            "--tau-c",
            choices=TAU_C_VARIANTS,
            default=TAU_C_SEED001,
            help="Per caption: whose Kendall tau_c. seed001 (default): seed 001's eq. 6 with m = 4, the ranked "
            "points of the rating scale (NOT-ENOUGH-INFO is not one), whether or not all occur; scipy: "
            "scipy's, m = the smaller number of distinct values. Every output names the one used. The "
            "correlation with ΔS×S always uses scipy's (ΔS×S is not a rating scale).",
        )
        parser.add_argument("--out", type=Path, metavar="DIR", help="Write the report's files here.")
        parser.add_argument(
            "--format", choices=OUTPUT_FORMATS, default="text", help="What to print (default: text)."
        )

    def handle(self, *args, **options):
        common = correlation_options(options)
        try:
            if options["comparisons"] is not None:
                report = self._from_file(options, common)
            else:
                report = self._from_db(options, common)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

        fmt = options["format"]
        if fmt == "text":
            self._print_text(report, verbosity=options["verbosity"])
        else:
            for note in report.notes():
                self.stderr.write(note)
            self.stdout.write(correlation_table(report, fmt), ending="")
        if options["out"] is not None:
            try:
                written = report_write(report, options["out"])
            except OSError as exc:
                raise CommandError(f"{options['out']}: cannot write: {exc}") from exc
            if options["verbosity"] >= 1:
                out = self.stdout if fmt == "text" else self.stderr
                out.write(f"Wrote {len(written)} files to {options['out']} (see index.txt).")

    def _from_file(self, options, common) -> Report:
        comparisons = comparisons_from_file(options, self.stderr.write)
        path = options["comparisons"]
        return report_from_comparisons(canonical_metric_names(comparisons), source=f"file {path}", **common)

    def _from_db(self, options, common) -> Report:
        return report_from_db(
            **db_selection(options),
            transfer_ratings=options["transfer_ratings"],
            tau_c=options["tau_c"],
            **common,
        )

    def _print_text(self, report: Report, *, verbosity: int) -> None:
        out = self.stdout.write
        n = len(report.comparisons)
        out(f"{n} comparison{'s' if n != 1 else ''} from {report.source}.")
        for note in report.notes():
            out(note)
        out("")
        self.stdout.write(correlation_table(report, "text", show_p=verbosity >= 2), ending="")
        if report.trust is not None:
            out("")
            self.stdout.write(trust_text(Trust(report.trust, report.correlations)), ending="")
        if report.per_caption:
            out("")
            out(f"Per-caption agreement with screen-1 ratings (τ_c: {report.tau_c_label})")
            out("")
            self.stdout.write(per_caption_table(report), ending="")
