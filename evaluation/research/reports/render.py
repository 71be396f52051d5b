"""How a report is shown: the correlation table (as the ``correlate`` command prints it), the
per-caption table, the files :func:`report_write` writes (listed in :data:`FILE_DESCRIPTIONS`, with an
``index.txt`` that says what each holds and where the numbers come from) and the rows the page shows.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from core.versions import platform_version
from evaluation.human import QUALITY_COLUMNS, STATISTICS_COLUMNS
from evaluation.metrics.signatures import group_signatures
from evaluation.models import MetricRun
from evaluation.research.correlation import TAU_C_SCIPY_LABEL
from evaluation.research.reports.heatmap import HEATMAP_FILENAME, runs_source, trust_heatmap
from evaluation.research.reports.plots import scatter_filename, write_scatter_plots
from evaluation.research.reports.report import Report
from evaluation.research.tables import (
    PER_CAPTION_COLUMNS,
    SXS_TABLE_COLUMNS,
    correlation_csv,
    correlation_json,
    correlation_text,
    format_table,
)
from evaluation.research.trust_tables import Trust, trust_csv, trust_json, trust_text

__all__ = [
    "FILE_DESCRIPTIONS",
    "SXS_REPORT_COLUMNS",
    "complete_metrics",
    "correlation_table",
    "per_caption_records",
    "per_caption_table",
    "report_write",
]

SXS_REPORT_COLUMNS = (
    ("campaign_id", "#", "d"),
    ("campaign", "campaign", ""),
    ("state", "state", ""),
    *SXS_TABLE_COLUMNS,
    ("correlated", "in correlation", ""),
)
# File name -> what it holds, in the order index.txt lists them. Scatter plots are listed per metric.
FILE_DESCRIPTIONS = {
    "correlations.txt": "correlation of ΔS×S with each Δmetric: N, Pearson, Spearman, Kendall τ_b and τ_c "
    "with 95% bootstrap intervals and p-values, per language and over all languages",
    "correlations.csv": "the same, one row per (metric, language)",
    "correlations.json": "the same as {metric: {language: {n, pearson, spearman, kendall_tau_b, kendall_tau_c, "
    "<name>_ci, <name>_p, ...}}}",
    "comparisons.csv": "the comparisons (m1, m2, language, delta_sxs, delta_<metric>) with the metrics every "
    "comparison has: `manage.py report --comparisons comparisons.csv` reproduces their correlations",
    "comparisons.json": "the comparisons with where each number comes from (campaign, runs, both systems' "
    "scores, each metric's signature) and what was left out and why",
    "table1.txt": "Table 1: caption statistics per language (submitted written captions)",
    "table1.csv": "Table 1 as CSV",
    "table2.txt": "Table 2: caption quality per language (verification campaigns)",
    "table2.csv": "Table 2 as CSV",
    "sxs.txt": "the side-by-side campaigns: WINS, LOSSES, ties, ΔS×S with its 95% interval, sign test, "
    "position bias, alpha, controls",
    "sxs.csv": "the same as CSV",
    "per_caption.txt": "per-caption agreement of metric scores with screen-1 ratings: Kendall τ_b, τ_c, "
    "Spearman ρ per metric and language; the tau_c variant column says whose τ_c (seed 001's eq. 6 with "
    "m = the 4 ranked points of the rating scale, or scipy's with m = the smaller number of distinct values)",
    "per_caption.csv": "the same as CSV",
    "per_caption.json": "the same, with every (score, rating) row",
    "trust.txt": "which metric to trust: item-level acc23 with tie calibration per metric and language, "
    "95% intervals, significance clusters (best marked), calibrated ε, and the pairwise and soft pairwise "
    "accuracies of the compared pairs",
    "trust.csv": "the same, one row per (metric, language)",
    "trust.json": "the same as {metric: {language: {acc23, acc23_ci, tau23, epsilon, n_items, rank, best, "
    "p_better_than, pairwise_accuracy, soft_pairwise_accuracy, ...}}} with _settings and _languages",
    "clip_trust.txt": "can the CLIP model of the CLIP runs be trusted per language: its latest retrieval "
    "check (text→image R@1 against English's; 'CLIP-based scores unreliable here' below "
    "CLIP_UNRELIABLE_R1_RATIO × English), or 'not checked'",
    "finetune.txt": "the fine-tuned CLIP models of the CLIP runs: per language, on the test split of their "
    "fine-tuning run, τ_b, τ_c, ρ and acc23 of the base and the fine-tuned model, with 95% bootstrap "
    "intervals and Δτ_b",
    HEATMAP_FILENAME.format(
        fmt="png"
    ): "the trust table as a heatmap (metrics × languages; framed: best cluster)",
    HEATMAP_FILENAME.format(fmt="svg"): "the same as SVG",
}


def _run_line(run: MetricRun) -> str:
    images = run.image_set.name if run.image_set_id else "every image with references"
    line = (
        f"run #{run.pk} “{run.name}”: {run.language.code}, reference set “{run.reference_set.name}”, "
        f"images: {images}, metrics: {', '.join(run.metrics)}"
    )
    for names, signature in group_signatures(run.metrics, run.signatures):
        line += f"\n    signature of {', '.join(names)}: {signature}"
    return line


# --- Rendering ----------------------------------------------------------------------------------------


def correlation_table(report: Report, fmt: str = "text", *, show_p: bool = True) -> str:
    """The correlation table as the ``correlate`` command prints it (text, csv or json)."""
    if fmt == "json":
        return correlation_json(report.correlations)
    if fmt == "csv":
        return correlation_csv(report.correlations)
    if not report.correlations:
        return "No comparison with a metric: no correlation to show.\n"
    return correlation_text(report.correlations, show_p=show_p, demo_metrics=report.demo_metrics)


def _rating_kinds(report: Report) -> dict[tuple[str, str], str]:
    """(metric, language) -> "direct" or "transferred" (ratings of English captions carried over)."""
    kinds: dict[tuple[str, str], set[bool]] = {}
    for row in report.per_caption_rows or ():
        kinds.setdefault((row.metric, row.language), set()).add(row.transferred)
    names = {frozenset({False}): "direct", frozenset({True}): "transferred"}
    return {key: names.get(frozenset(value), "mixed") for key, value in kinds.items()}


def per_caption_records(report: Report) -> list[dict[str, Any]]:
    """The per-caption agreement, one row per (metric, language), for :data:`PER_CAPTION_COLUMNS`."""
    kinds = _rating_kinds(report)
    return [
        {"metric": metric, "language": language, "ratings": kinds.get((metric, language), ""), **values}
        for metric, by_language in (report.per_caption or {}).items()
        for language, values in by_language.items()
    ]


def per_caption_table(report: Report, fmt: str = "text") -> str:
    """The per-caption agreement, one row per (metric, language)."""
    return format_table(per_caption_records(report), PER_CAPTION_COLUMNS, fmt)


def complete_metrics(report: Report) -> list[str]:
    """The metrics every comparison has: the columns of comparisons.csv (the comparisons reader
    refuses empty cells, so a metric some comparisons lack is only in comparisons.json)."""
    return [m for m in report.metrics if all(m in c.deltas for c in report.comparisons)]


def _comparisons_csv(report: Report) -> str:
    metrics = complete_metrics(report)
    rows = [
        {
            "m1": c.m1,
            "m2": c.m2,
            "language": c.language,
            "delta_sxs": c.delta_sxs,
            **{f"delta_{metric}": c.deltas[metric] for metric in metrics},
        }
        for c in report.comparisons
    ]
    columns = ["m1", "m2", "language", "delta_sxs", *(f"delta_{metric}" for metric in metrics)]
    return format_table(rows, columns, "csv")


def _json_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def _comparisons_json(report: Report) -> str:
    return _json_text(
        {
            "source": report.source,
            "mirrored": report.both_directions,
            "comparisons": [
                {
                    "m1": c.m1,
                    "m2": c.m2,
                    "language": c.language,
                    "delta_sxs": c.delta_sxs,
                    "deltas": dict(c.deltas),
                }
                for c in report.comparisons
            ],
            "sources": [s.as_dict() for s in report.sources],
            "runs": [
                {"id": run.pk, "signatures": {metric: run.signature(metric) for metric in run.metrics}}
                for run in report.runs
            ],
            "skipped": [s.as_dict() for s in report.skipped],
        }
    )


def _clip_trust_text(report: Report) -> str:
    lines = ["CLIP retrieval check per language (the CLIP model of the selected CLIP runs)", ""]
    for code, verdict in report.clip_trust.items():
        check = f" (check #{verdict.check_id})" if verdict.check_id else ""
        lines.append(f"{code}: {verdict.label}{check}. {verdict.note}")
    return "\n".join(lines) + "\n"


def _table_text(title: str, rows: list, columns) -> str:
    body = format_table(rows, columns, "text") if rows else "(nothing yet)\n"
    return f"{title}\n\n{body}"


def _correlations_txt(report: Report) -> str:
    head = [f"Correlation of ΔS×S with Δmetric: {report.source}."]
    head += [textwrap.fill(note, width=100) for note in report.notes()]
    return "\n".join(head) + "\n\n" + correlation_table(report, "text", show_p=True)


def _index(report: Report, written: list[str]) -> str:
    lines = [
        "Metric-vs-human correlation report",
        "",
        f"created: {report.created_at.isoformat(timespec='seconds')} (platform {platform_version()})",
        f"comparisons: {len(report.comparisons)} from {report.source}",
        "each comparison counts in both directions (m1 vs m2 added with both deltas negated)"
        if report.both_directions
        else "each comparison counts once, as entered (m2 vs m1)",
        f"bootstrap: {report.n_boot} resamples of the comparisons, seed {report.seed}",
        f"τ_c of ΔS×S against Δmetric: {TAU_C_SCIPY_LABEL} (ΔS×S is not a rating scale)",
    ]
    for c in report.comparisons:
        lines.append(
            f"  {c.language}: {c.m2} vs {c.m1}, ΔS×S {c.delta_sxs:+.1f}; "
            + ", ".join(f"Δ {name} {value:+.4f}" for name, value in c.deltas.items())
        )
    if report.runs:
        lines += ["", "metric runs:"] + [f"  {_run_line(run)}" for run in report.runs]
    notes = report.notes()
    if notes:
        lines += ["", "read first:"] + [
            textwrap.fill(n, width=100, initial_indent="  ", subsequent_indent="    ") for n in notes
        ]
    lines += ["", "files:"]
    for name in written:
        if name.startswith("scatter_"):
            metric = next(
                (
                    m
                    for m in report.metrics
                    if name in (scatter_filename(m, "png"), scatter_filename(m, "svg"))
                ),
                "",
            )
            lines.append(
                f"  {name}: ΔS×S (y) against Δ {metric} (x), one marker per language; filled: the comparisons "
                + ("as entered, hollow: their mirrors" if report.both_directions else "as entered")
            )
        else:
            lines.append(f"  {name}: {FILE_DESCRIPTIONS[name]}")
    partial = [m for m in report.metrics if m not in complete_metrics(report)]
    if partial:
        lines.append(
            f"  (not in comparisons.csv, because some comparisons lack them: {', '.join(partial)}; "
            "see comparisons.json)"
        )
    if not report.from_database:
        lines.append(
            "  (Tables 1 and 2 and the side-by-side rows come from the database: not written for entered comparisons.)"
        )
    if report.trust is None and report.from_database:
        lines.append("  (no trust table: no compared pair has judged images with per-caption metric scores)")
    if report.per_caption is not None:
        lines.append(f"  per-caption τ_c: {report.tau_c_label}")
    elif report.from_database:
        lines.append(
            "  (no per-caption agreement: no selected run scores captions that were rated on screen 1; "
            "such a run is in the prompt captions' language, English)"
        )
    return "\n".join(lines) + "\n"


def report_write(report: Report, folder: str | Path) -> list[Path]:
    """Write the report's files into ``folder`` (created if needed); returns the paths, index.txt last.

    Files that already exist there are replaced.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    texts: dict[str, str] = {
        "correlations.txt": _correlations_txt(report),
        "correlations.csv": correlation_table(report, "csv"),
        "correlations.json": correlation_table(report, "json"),
        "comparisons.csv": _comparisons_csv(report),
        "comparisons.json": _comparisons_json(report),
    }
    if report.from_database:
        texts["table1.txt"] = _table_text("Table 1: caption statistics", report.table1, STATISTICS_COLUMNS)
        texts["table1.csv"] = format_table(report.table1, STATISTICS_COLUMNS, "csv")
        texts["table2.txt"] = _table_text("Table 2: caption quality", report.table2, QUALITY_COLUMNS)
        texts["table2.csv"] = format_table(report.table2, QUALITY_COLUMNS, "csv")
        texts["sxs.txt"] = _table_text("Side by side", report.sxs_rows, SXS_REPORT_COLUMNS)
        texts["sxs.csv"] = format_table(report.sxs_rows, SXS_REPORT_COLUMNS, "csv")
    if report.per_caption is not None:
        texts["per_caption.txt"] = (
            f"Per-caption agreement with screen-1 ratings (τ_c: {report.tau_c_label})\n\n"
            + per_caption_table(report)
        )
        texts["per_caption.csv"] = per_caption_table(report, "csv")
        texts["per_caption.json"] = _json_text(
            {
                "kendall_tau_c_variant": report.tau_c_label,
                "agreement": report.per_caption,
                "rows": [row.as_dict() for row in report.per_caption_rows or []],
                "notes": report.per_caption_notes,
            }
        )
    if report.clip_trust:
        texts["clip_trust.txt"] = _clip_trust_text(report)
    if report.fine_tunes:
        texts["finetune.txt"] = "\n\n".join(section.text for section in report.fine_tunes) + "\n"
    if report.trust is not None:
        trust, demo = Trust(report.trust, report.correlations, report.clip_flagged), report.demo_metrics
        texts["trust.txt"] = trust_text(trust, demo)
        texts["trust.csv"] = trust_csv(trust, demo)
        texts["trust.json"] = trust_json(trust, demo)
    written: list[Path] = []
    for name, text in texts.items():
        path = folder / name
        path.write_text(text, encoding="utf-8", newline="")
        written.append(path)
    if report.trust is not None:
        for fmt in ("png", "svg"):
            path = folder / HEATMAP_FILENAME.format(fmt=fmt)
            path.write_bytes(
                trust_heatmap(
                    report.trust,
                    fmt,
                    source=runs_source(report.runs),
                    clip_flags=report.clip_flagged,
                    demo_metrics=report.demo_metrics,
                )
            )
            written.append(path)
    written += write_scatter_plots(
        report.comparisons,
        folder,
        both_directions=report.both_directions,
        results=report.correlations,
        demo_metrics=report.demo_metrics,
    )
    names = [path.name for path in written]
    index = folder / "index.txt"
    index.write_text(_index(report, names), encoding="utf-8")
    written.append(index)
    return written
