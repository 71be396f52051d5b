import csv
import io
import json
import math
import textwrap
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.correlation import (
    COEFFICIENTS,
    ComparisonsCsvError,
    CorrelationResult,
    correlate,
    read_comparisons_csv,
)

FORMATS = ("text", "csv", "json")
# Spreadsheets run a cell that starts with one of these as a formula (CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\0")


def _csv_cell(value):
    """Numbers stay numbers, None is an empty cell, text that could start a formula gets a leading quote."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return value
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _csv(results: dict[str, dict[str, CorrelationResult]]) -> str:
    header = ["metric", "language", "n", "n_comparisons"]
    for name in COEFFICIENTS:
        header += [name, f"{name}_ci_lo", f"{name}_ci_hi", f"{name}_p"]
    header += ["p_n", "n_boot", "mirrored", "note"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    for metric, by_language in results.items():
        for language, result in by_language.items():
            row = [metric, language, result.n, result.n_comparisons]
            for name in COEFFICIENTS:
                ci = getattr(result, f"{name}_ci")
                row += [
                    getattr(result, name),
                    ci[0] if ci else None,
                    ci[1] if ci else None,
                    getattr(result, f"{name}_p"),
                ]
            row += [result.p_n, result.n_boot, result.mirrored, result.note]
            writer.writerow([_csv_cell(value) for value in row])
    return buffer.getvalue()


def _json(results: dict[str, dict[str, CorrelationResult]]) -> str:
    data = {
        metric: {language: result.as_dict() for language, result in by_language.items()}
        for metric, by_language in results.items()
    }
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _number(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _p_value(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _text(results: dict[str, dict[str, CorrelationResult]], *, show_p: bool) -> str:
    header = ["metric", "language", "N"]
    for name in COEFFICIENTS:
        header.append(f"{name} [95% CI]")
        if show_p:
            header.append(f"{name} p")
    rows = []
    for metric, by_language in results.items():
        for language, result in by_language.items():
            row = [metric, language, str(result.n)]
            for name in COEFFICIENTS:
                ci = getattr(result, f"{name}_ci")
                cell = _number(getattr(result, name))
                if ci is not None:
                    cell += f" [{_number(ci[0])}, {_number(ci[1])}]"
                row.append(cell)
                if show_p:
                    row.append(_p_value(getattr(result, f"{name}_p")))
            rows.append(row)
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    # Names align left, numbers right.
    left = {0, 1}

    def render(line):
        cells = [
            cell.ljust(w) if i in left else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))
        ]
        return "  ".join(cells).rstrip()

    lines = [render(header), "  ".join("-" * w for w in widths)]
    lines += [render(row) for row in rows]
    first = next(iter(next(iter(results.values())).values()))
    lines.append("")
    lines.append(textwrap.fill(f"N: points the coefficients are computed on. {first.note}", width=100))
    if not show_p:
        lines.append("p-values: with --verbosity 2, and in --format csv / json.")
    if first.n_boot:
        lines.append(f"95% CI: percentile bootstrap, {first.n_boot} resamples of the comparisons.")
    return "\n".join(lines) + "\n"


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
            self.stdout.write(_json(results), ending="")
        elif fmt == "csv":
            self.stdout.write(_csv(results), ending="")
        else:
            self.stdout.write(_text(results, show_p=options["verbosity"] >= 2), ending="")
