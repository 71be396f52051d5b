"""The command-line selection of comparisons, shared by the ``report`` and ``correlate`` commands:
metric runs, side-by-side campaigns, languages and metrics, read from the database by the one
builder (:func:`evaluation.research.comparisons.comparisons_from_db`), or a comparisons CSV file.
The bootstrap options too, with the one default (:data:`~evaluation.research.correlation.CORRELATION_N_BOOT`)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from evaluation.research.comparisons_csv import ComparisonsCsvError, read_comparisons_csv
from evaluation.research.correlation import CORRELATION_N_BOOT, Comparison

DB_OPTIONS = ("runs", "campaigns", "languages", "metrics")


# What ``correlate`` and ``report`` print: --format text (the default), csv or json.
OUTPUT_FORMATS = ("text", "csv", "json")


def selection_arguments(parser, *, csv_help: str) -> None:
    parser.add_argument(
        "--runs",
        metavar="RUN_IDS",
        help="Metric run ids, comma-separated; when two score the same pair with a metric, the one given first wins.",
    )
    parser.add_argument(
        "--campaigns",
        metavar="IDS",
        help="Side-by-side campaign ids, any state (default: every finished one; the others are listed as left out).",
    )
    parser.add_argument("--languages", metavar="CODES", help="Only campaigns in these languages, e.g. de,fr.")
    parser.add_argument(
        "--metrics",
        nargs="+",
        help="Only these metrics (BLEU-1..4, ROUGE-L, CIDEr, CIDEr-D, CLIPScore, RefCLIPScore; text, "
        "clip, all). Default: every metric the runs have for both systems.",
    )
    parser.add_argument("--comparisons", type=Path, metavar="FILE.csv", help=csv_help)
    parser.add_argument(
        "--one-direction",
        action="store_true",
        help="Count each comparison once, as entered (default: also m1 vs m2 with deltas negated).",
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=CORRELATION_N_BOOT,
        metavar="N",
        help="Bootstrap resamples of the comparisons for the 95%% intervals; 0 for none "
        f"(default {CORRELATION_N_BOOT}).",
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed of the bootstrap (default 0).")


def ids_parse(value: str, what: str) -> list[int]:
    try:
        ids = [int(part) for part in value.replace(" ", "").split(",") if part]
    except ValueError:
        raise CommandError(f"{what}: expected ids separated by commas, e.g. 3,4 (got “{value}”).") from None
    if not ids:
        raise CommandError(f"{what}: give at least one id.")
    return ids


def correlation_options(options) -> dict:
    """``both_directions``, ``n_boot`` and ``seed`` from the options; CommandError when out of range."""
    if options["bootstrap"] < 0:
        raise CommandError("--bootstrap must be 0 (no intervals) or more")
    return {
        "both_directions": not options["one_direction"],
        "n_boot": options["bootstrap"],
        "seed": options["seed"],
    }


def db_selection(options) -> dict:
    """The keyword arguments of ``comparisons_from_db`` / ``report_from_db`` from the options."""
    if options["comparisons"] is not None:
        raise CommandError("Give either the metric runs (--runs) or --comparisons FILE.csv, not both.")
    if not options["runs"]:
        raise CommandError("Give the metric runs (--runs 3,4), or --comparisons FILE.csv.")
    languages = None
    if options["languages"]:
        languages = [code.strip() for code in options["languages"].split(",") if code.strip()]
    return {
        "metric_run_ids": ids_parse(options["runs"], "--runs"),
        "campaign_ids": ids_parse(options["campaigns"], "--campaigns") if options["campaigns"] else None,
        "language_codes": languages,
        "metrics": options["metrics"],
    }


def comparisons_from_file(options, warn) -> list[Comparison]:
    """The comparisons of ``--comparisons FILE.csv``; CommandError naming the file and line."""
    for option in DB_OPTIONS:
        if options[option]:
            raise CommandError(f"--{option} reads the database: leave it out with --comparisons.")
    path = options["comparisons"]
    try:
        return read_comparisons_csv(path, on_warning=lambda message: warn(f"{path}: {message}"))
    except ComparisonsCsvError as exc:
        raise CommandError(f"{path}: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"{path}: cannot read: {exc}") from exc
