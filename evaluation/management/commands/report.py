"""Print the metric-vs-human correlation table and, with --out, write the whole report to a folder."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from evaluation.research.comparisons_csv import ComparisonsCsvError, read_comparisons_csv
from evaluation.research.reports.render import correlation_table, per_caption_table, report_write
from evaluation.research.reports.report import (
    Report,
    canonical_metric_names,
    report_from_comparisons,
    report_from_db,
)

FORMATS = ("text", "csv", "json")


def _ids(value: str, what: str) -> list[int]:
    try:
        ids = [int(part) for part in value.replace(" ", "").split(",") if part]
    except ValueError:
        raise CommandError(f"{what}: expected ids separated by commas, e.g. 3,4 (got “{value}”).") from None
    if not ids:
        raise CommandError(f"{what}: give at least one id.")
    return ids


class Command(BaseCommand):
    help = (
        "Correlate side-by-side judgments with metric differences and report it: for the side-by-side "
        "campaigns (all, or --campaigns) and the metric runs --runs, each comparison (m1, m2, language) "
        "pairs ΔS×S with Δmetric = metric(m2) − metric(m1) from a run scoring both systems in the "
        "campaign's language. Prints the correlation table (N, Pearson, Spearman, Kendall tau_b and tau_c "
        "with bootstrap 95% intervals, per metric, per language and over all languages). With --out DIR "
        "also writes correlations.{txt,csv,json}, comparisons.{csv,json}, scatter_<metric>.{png,svg}, "
        "table1/table2/sxs.{txt,csv}, per_caption.{txt,csv,json} (when a run scores captions rated on "
        "screen 1) and index.txt. --comparisons FILE.csv takes comparisons entered by hand instead "
        "(columns m1,m2,language,delta_sxs,delta_<metric>). Reads the database; writes only files."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--runs", metavar="RUN_IDS", help="Metric run ids, comma-separated (earlier ids win ties)."
        )
        parser.add_argument(
            "--campaigns", metavar="IDS", help="Side-by-side campaign ids (default: every one)."
        )
        parser.add_argument(
            "--languages", metavar="CODES", help="Only campaigns in these languages, e.g. de,fr."
        )
        parser.add_argument(
            "--metrics",
            nargs="+",
            help="Only these metrics (BLEU-1..4, ROUGE-L, CIDEr, CIDEr-D, CLIPScore, RefCLIPScore; text, "
            "clip, all). Default: every metric the runs have for both systems.",
        )
        parser.add_argument(
            "--comparisons",
            type=Path,
            metavar="FILE.csv",
            help="Comparisons entered by hand (a paper's table) instead of campaigns and runs.",
        )
        parser.add_argument(
            "--one-direction",
            action="store_true",
            help="Count each comparison once, as entered (default: also m1 vs m2 with deltas negated).",
        )
        parser.add_argument(
            "--transfer-ratings",
            action="store_true",
            help="Per caption: also pair English screen-1 ratings with the same system's captions in the "
            "run's language (only meaningful when those captions are translations, as in seed 001).",
        )
        parser.add_argument("--out", type=Path, metavar="DIR", help="Write the report's files here.")
        parser.add_argument(
            "--format", choices=FORMATS, default="text", help="What to print (default: text)."
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
        common = {
            "both_directions": not options["one_direction"],
            "n_boot": options["bootstrap"],
            "seed": options["seed"],
        }
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
        for option in ("runs", "campaigns", "languages", "metrics"):
            if options[option]:
                raise CommandError(f"--{option} reads the database: leave it out with --comparisons.")
        path = options["comparisons"]
        try:
            comparisons = read_comparisons_csv(
                path, on_warning=lambda message: self.stderr.write(f"{path}: {message}")
            )
        except ComparisonsCsvError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: cannot read: {exc}") from exc
        return report_from_comparisons(canonical_metric_names(comparisons), source=f"file {path}", **common)

    def _from_db(self, options, common) -> Report:
        if not options["runs"]:
            raise CommandError("Give the metric runs (--runs 3,4), or --comparisons FILE.csv.")
        languages = None
        if options["languages"]:
            languages = [code.strip() for code in options["languages"].split(",") if code.strip()]
        return report_from_db(
            metric_run_ids=_ids(options["runs"], "--runs"),
            campaign_ids=_ids(options["campaigns"], "--campaigns") if options["campaigns"] else None,
            language_codes=languages,
            metrics=options["metrics"],
            transfer_ratings=options["transfer_ratings"],
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
        if report.per_caption:
            out("")
            out("Per-caption agreement with screen-1 ratings")
            out("")
            self.stdout.write(per_caption_table(report), ending="")
