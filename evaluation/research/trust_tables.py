"""The trust table (metrics × languages, item-level acc23) as text, CSV, JSON and the cells of the page.

One cell is "acc23 [95% interval] #rank", ``*`` marking the best cluster; a language whose items
cannot tell the metrics apart says so with its count. :func:`trust_build` makes the table and what
fills its cells; ``correlate --judgments``, the ``report`` command (``trust.txt``, ``trust.csv``,
``trust.json``), the report page, its heatmap and the API all call it, then render it here.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from evaluation.research.correlation import ALL, CORRELATION_N_BOOT, Comparison, CorrelationResult, correlate
from evaluation.research.meta_evaluation import (
    DEFAULT_N_PERMUTATIONS,
    DEFAULT_SIGNIFICANCE_TEST,
    MIN_ITEMS,
    Item,
    MetricVerdict,
    TrustTable,
    trust_table,
    with_soft_pairwise_accuracy,
)
from evaluation.research.meta_evaluation.trust import assign_ranks
from evaluation.research.pieces import PieceStore, pieces_build
from evaluation.research.tables import MISSING_TEXT, csv_safe, demo_label, demo_note

__all__ = [
    "Trust",
    "model_level",
    "trust_build",
    "trust_cell_text",
    "trust_csv",
    "trust_html",
    "trust_json",
    "trust_languages",
    "trust_records",
    "trust_text",
]


@dataclass(frozen=True)
class Trust:
    """What every view of the trust table shows. ``table`` is None when no item has a metric score
    (nothing judged, or no per-caption scores); ``system`` holds the model level's correlations with
    the pairwise and soft pairwise accuracies of the cells (empty when not asked for); ``clip_flags``
    the languages whose CLIPScore / RefCLIPScore cells are marked unreliable, sorted."""

    table: TrustTable | None
    system: dict[str, dict[str, CorrelationResult]] = field(default_factory=dict)
    clip_flags: list[str] = field(default_factory=list)


def model_level(
    comparisons: Sequence[Comparison],
    items: Sequence[Item] = (),
    *,
    both_directions: bool = True,
    n_boot: int = CORRELATION_N_BOOT,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    seed: int = 0,
) -> dict[str, dict[str, CorrelationResult]]:
    """:func:`~evaluation.research.correlation.correlate` of the comparisons, with the soft pairwise
    accuracy when the judged ``items`` behind them are known. Pure; raises ``ValueError`` like both."""
    comparisons = list(comparisons)
    results = correlate(comparisons, both_directions=both_directions, n_boot=n_boot, seed=seed)
    if not items:
        return results
    return with_soft_pairwise_accuracy(
        results, comparisons, items, n_permutations=n_permutations, n_boot=n_boot, seed=seed
    )


def trust_build(
    items: Sequence[Item],
    comparisons: Sequence[Comparison] | None = None,
    *,
    metrics: Sequence[str] | None = None,
    clip_trust: Mapping[str, Any] | None = None,
    both_directions: bool = True,
    n_boot: int = CORRELATION_N_BOOT,
    n_permutations: int = DEFAULT_N_PERMUTATIONS,
    seed: int = 0,
    significance_test: str = DEFAULT_SIGNIFICANCE_TEST,
    pieces: PieceStore | None = None,
) -> Trust:
    """The trust table of ``items`` and, when ``comparisons`` (those behind the items) are given, the
    model level that fills its cells: :func:`~evaluation.research.correlation.correlate` with the soft
    pairwise accuracy (the pairwise accuracies are the same in both directions; ``both_directions``
    matters only to the correlations). ``clip_trust``: language code -> a retrieval verdict with a
    ``flagged`` attribute. ``significance_test``: the permutation test between metrics
    (mt-metrics-eval's ``PermutationSigDiff`` by default, ``PairwisePermutationSigDiff`` by name). The
    same arguments give the same numbers. ``pieces``: where each language's part is kept by a key of
    its own inputs (:mod:`evaluation.research.pieces`): a language found there is read, not
    computed, and only the pooled column is computed again; the numbers are the same. Pure (the
    store aside); raises ``ValueError`` like
    :func:`~evaluation.research.meta_evaluation.trust_table` and ``correlate``."""
    items = list(items)
    draws = {"n_boot": n_boot, "n_permutations": n_permutations, "seed": seed}
    system: dict[str, dict[str, CorrelationResult]] = {}
    if pieces is not None:
        system, table, _ = pieces_build(
            items,
            comparisons,
            store=pieces,
            metrics=metrics,
            both_directions=both_directions,
            significance_test=significance_test,
            **draws,
        )
    else:
        if comparisons is not None:
            system = model_level(comparisons, items, both_directions=both_directions, **draws)
        table = (
            trust_table(items, metrics=metrics, significance_test=significance_test, **draws)
            if any(item.deltas for item in items)
            else None
        )
    if table is not None:
        table = pooled_comparable(table)
    flags = sorted(code for code, verdict in (clip_trust or {}).items() if verdict.flagged)
    return Trust(table, system, flags)


def _languages(table: TrustTable) -> list[str]:
    return [code for code in table.languages if code != ALL]


def not_pooled(table: TrustTable) -> dict[str, list[str]]:
    """``{metric: [its languages]}`` for the metrics that some language of the table lacks: their
    ``all`` cell covers only their own languages, so it is shown with its own n and languages and
    left out of the ranking (:func:`pooled_comparable`)."""
    languages = _languages(table)
    out = {}
    for metric in table.metrics:
        having = [code for code in languages if table.cell(metric, code) is not None]
        if len(having) < len(languages):
            out[metric] = having
    return out


def pooled_comparable(table: TrustTable) -> TrustTable:
    """The table whose ``all`` column ranks only the metrics present in every language of the table.

    A metric computed on one language is not comparable with one pooled over three: its ``all`` cell
    keeps its own acc23 (over its own items) but gets no rank, and the clusters of the others are
    drawn again from the same permutation p-values (mt-metrics-eval's AssignRanks over the comparable
    metrics). Pure; the table as it is when every metric is in every language."""
    apart = not_pooled(table)
    pooled = table.languages.get(ALL)
    if not apart or pooled is None or not pooled.verdicts:
        return table
    ordered = [v for v in pooled.verdicts if v.metric not in apart]
    others = [replace(v, rank=None, best=False) for v in pooled.verdicts if v.metric in apart]
    p_values = {
        a.metric: {b.metric: pooled.p_values.get(a.metric, {}).get(b.metric, 1.0) for b in ordered[i + 1 :]}
        for i, a in enumerate(ordered)
    }
    status = pooled.status
    if pooled.status in ("ranked", "undecided") and ordered:
        matrix = np.ones((len(ordered), len(ordered)))
        for i, a in enumerate(ordered):
            for j in range(i + 1, len(ordered)):
                matrix[i, j] = p_values[a.metric][ordered[j].metric]
        ranks = assign_ranks(matrix, table.alpha)
        ordered = [replace(v, rank=rank, best=rank == 1) for v, rank in zip(ordered, ranks)]
        status = "undecided" if len(ordered) > 1 and max(ranks) == 1 else "ranked"
    elif not ordered:
        status = "empty"
    verdict = replace(
        pooled,
        verdicts=tuple(ordered + others),
        status=status,
        p_values={a: row for a, row in p_values.items() if row},
    )
    languages = {ALL: verdict, **{code: v for code, v in table.languages.items() if code != ALL}}
    metrics = tuple(v.metric for v in ordered) + tuple(m for m in table.metrics if m in apart)
    return replace(table, languages=languages, metrics=metrics)


def not_pooled_text(metric: str, apart: Mapping[str, Sequence[str]], verdict: MetricVerdict | None) -> str:
    """What an ``all`` cell of a metric that is not in every language says instead of a rank."""
    n = verdict.result.n if verdict is not None else 0
    return f"n = {n}, only {', '.join(apart[metric])}: not pooled, not ranked"


def _num(value: float | None, fmt: str = ".3f") -> str:
    return MISSING_TEXT if value is None else f"{value:{fmt}}"


def trust_cell_text(verdict: MetricVerdict | None, *, interval: bool = True) -> str:
    """``0.763 [0.747, 0.786] #1*``: acc23, its interval, its cluster (``*`` = best cluster)."""
    if verdict is None or verdict.result.acc23 is None:
        return MISSING_TEXT
    text = _num(verdict.result.acc23)
    if interval and verdict.result.ci is not None:
        text += f" [{_num(verdict.result.ci[0])}, {_num(verdict.result.ci[1])}]"
    if verdict.rank is not None:
        text += f" #{verdict.rank}" + ("*" if verdict.best else "")
    return text


def trust_records(trust: Trust, demo_metrics: Collection[str] = ()) -> list[dict[str, Any]]:
    """One flat record per metric and language (``all`` first): the item level's acc23, τ_23, ε,
    n_items, interval, rank, best, the language's status, ``clip_flag`` (a CLIPScore / RefCLIPScore
    cell of a language in ``trust.clip_flags``, where the retrieval check says CLIP-based scores are
    unreliable), ``demo_model`` (a metric of ``demo_metrics``) and, when ``trust.system`` (the model
    level's results) is given, the pairwise and soft pairwise accuracies with their intervals.
    ``trust.table`` is not None (as for every writer here)."""
    table, system, clip_flags = trust.table, trust.system, trust.clip_flags
    records = []
    apart = not_pooled(table)
    every = _languages(table)
    for language, verdict in table.languages.items():
        for metric in table.metrics:
            cell = verdict.verdict(metric)
            if cell is None:
                continue
            covers = apart.get(metric, every) if language == ALL else [language]
            record: dict[str, Any] = {
                "metric": metric,
                "language": language,
                "acc23": cell.result.acc23,
                "acc23_ci": list(cell.result.ci) if cell.result.ci else None,
                "tau23": cell.result.tau23,
                "epsilon": cell.result.epsilon,
                "n_items": cell.result.n,
                "rank": cell.rank,
                "best": cell.best,
                "status": verdict.status,
                "n_pairs": verdict.n_pairs,
                "p_better_than": dict(verdict.p_values.get(metric, {})),
                "clip_flag": _clip_flagged(metric, language, clip_flags),
                "languages": list(covers),
                "demo_model": metric in demo_metrics,
                "pooled": not (language == ALL and metric in apart),
            }
            result = (system or {}).get(metric, {}).get(language)
            if result is not None:
                for name in ("pairwise_accuracy", "soft_pairwise_accuracy"):
                    ci = getattr(result, f"{name}_ci")
                    record[name] = getattr(result, name)
                    record[f"{name}_ci"] = list(ci) if ci else None
                record["soft_pairwise_accuracy_mc_error"] = result.soft_pairwise_accuracy_mc_error
                record["n_comparisons"] = result.n_comparisons
                record["n_soft"] = result.n_soft
            records.append(record)
    return records


def trust_languages(table: TrustTable) -> dict[str, dict[str, Any]]:
    """``{code: {"status", "note", "n_items", "n_pairs"}}``, ``all`` first: how far each language's
    items tell the metrics apart."""
    return {
        code: {"status": v.status, "note": v.note, "n_items": v.n_items, "n_pairs": v.n_pairs}
        for code, v in table.languages.items()
    }


def trust_json(trust: Trust, demo_metrics: Collection[str] = ()) -> str:
    """``{metric: {language: record}}`` (see :func:`trust_records`), then ``"_settings"`` with how the
    numbers were made and ``"_languages"`` with each language's status and note."""
    table = trust.table
    out: dict[str, Any] = {}
    for record in trust_records(trust, demo_metrics):
        metric, language = record["metric"], record["language"]
        out.setdefault(metric, {})[language] = {
            k: v for k, v in record.items() if k not in ("metric", "language")
        }
    out["_settings"] = {k: v for k, v in table.as_dict().items() if k not in ("languages", "metrics")}
    out["_languages"] = trust_languages(table)
    if demo_metrics:
        out["_demo_model"] = demo_note(demo_metrics)
    return json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


_CSV_COLUMNS = (
    "metric",
    "language",
    "acc23",
    "acc23_ci_lo",
    "acc23_ci_hi",
    "tau23",
    "epsilon",
    "n_items",
    "rank",
    "best",
    "status",
    "n_pairs",
    "pairwise_accuracy",
    "pairwise_accuracy_ci_lo",
    "pairwise_accuracy_ci_hi",
    "soft_pairwise_accuracy",
    "soft_pairwise_accuracy_ci_lo",
    "soft_pairwise_accuracy_ci_hi",
    "n_comparisons",
    "n_soft",
    "clip_flag",
    "pooled",
    "demo_model",
)


def trust_csv(trust: Trust, demo_metrics: Collection[str] = ()) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(_CSV_COLUMNS)
    for record in trust_records(trust, demo_metrics):
        flat = dict(record)
        for name in ("acc23", "pairwise_accuracy", "soft_pairwise_accuracy"):
            ci = record.get(f"{name}_ci")
            flat[f"{name}_ci_lo"], flat[f"{name}_ci_hi"] = (ci[0], ci[1]) if ci else (None, None)
        row = []
        for column in _CSV_COLUMNS:
            value = flat.get(column)
            if value is None:
                row.append("")
            elif isinstance(value, bool):
                row.append("true" if value else "false")
            elif isinstance(value, list):
                row.append(csv_safe(" ".join(value)))
            elif isinstance(value, int | float):
                row.append(value)
            else:
                row.append(csv_safe(str(value)))
        writer.writerow(row)
    return buffer.getvalue()


def trust_notes(table: TrustTable) -> list[str]:
    """What a reader needs to read the table, one sentence each."""
    return [
        f"Cell: {table.label}; [95% interval]: percentile bootstrap over items, {table.n_boot} resamples, "
        "ε re-calibrated in each; #rank: significance cluster, * = the best cluster.",
        f"Clusters: metrics ranked by acc23; a metric starts a new cluster when one above it in the current "
        f"cluster is better with p ≤ {table.alpha} (paired permutation test over items, "
        f"{table.n_permutations} draws, as mt-metrics-eval's {table.significance_test} and AssignRanks). "
        f"Seed {table.seed}.",
        "An item is one image of one compared pair: people's mean score from m2's side against "
        "metric(m2's caption) − metric(m1's caption). all: every item pooled, ε calibrated on the pool.",
        f"Languages with fewer than {MIN_ITEMS} items get no test; 'cannot tell apart' means no metric is "
        "significantly better than another on that many items.",
    ]


CLIP_METRIC_NAMES = ("CLIPScore", "RefCLIPScore")
CLIP_FLAG_MARK = "!"


def _clip_flagged(metric: str, code: str, clip_flags: Collection[str]) -> bool:
    return metric in CLIP_METRIC_NAMES and code in clip_flags


def clip_flag_note(clip_flags: Collection[str]) -> str:
    return (
        f"{CLIP_FLAG_MARK} CLIP-based scores unreliable here: the CLIP model's text→image R@1 in "
        f"{', '.join(sorted(clip_flags))} is far below English's on its retrieval check, so CLIPScore and "
        "RefCLIPScore there measure the model's weakness in the language as much as the caption."
    )


def trust_text(trust: Trust, demo_metrics: Collection[str] = ()) -> str:
    """The table (metrics as rows, languages as columns), each language's ε and status, the model
    level's pairwise accuracies when given, and the notes. ``trust.clip_flags``: languages whose CLIP
    cells are marked ``!`` (the retrieval check flags the CLIP model there)."""
    table, system, clip_flags = trust.table, trust.system, trust.clip_flags
    languages = list(table.languages)
    header = ["metric", *languages]
    apart = not_pooled(table)
    rows = [
        [
            demo_label(metric, demo_metrics),
            *(
                _cell_text(table, metric, code, apart)
                + (f" {CLIP_FLAG_MARK}" if _clip_flagged(metric, code, clip_flags) else "")
                for code in languages
            ),
        ]
        for metric in table.metrics
    ]
    rows.append(["items", *(str(table.languages[code].n_items) for code in languages)])
    rows.append(["verdict", *(_status_text(table, code) for code in languages)])
    lines = ["Which metric to trust: item-level acc23 per language", *_aligned(header, rows), ""]
    eps_rows = [
        [metric, *(_epsilon_text(table.cell(metric, code)) for code in languages)] for metric in table.metrics
    ]
    lines += ["Calibrated ε (|Δmetric| ≤ ε is a tie)", *_aligned(header, eps_rows), ""]
    if system:
        acc_rows = []
        for metric in table.metrics:
            by_language = system.get(metric, {})
            for name, title in (
                ("pairwise_accuracy", "pairwise"),
                ("soft_pairwise_accuracy", "soft pairwise"),
            ):
                cells = []
                for code in languages:
                    result = by_language.get(code)
                    value = getattr(result, name) if result is not None else None
                    ci = getattr(result, f"{name}_ci") if result is not None else None
                    cells.append(
                        _num(value) + (f" [{_num(ci[0])}, {_num(ci[1])}]" if ci and value is not None else "")
                    )
                if name == "pairwise_accuracy" or any(c != MISSING_TEXT for c in cells):
                    acc_rows.append([f"{metric} ({title})", *cells])
        lines += ["System level: accuracy over the compared pairs", *_aligned(header, acc_rows), ""]
    notes = (
        trust_notes(table) + _not_pooled_notes(apart) + ([clip_flag_note(clip_flags)] if clip_flags else [])
    )
    for note in notes:
        lines.append(textwrap.fill(note, width=100))
    return "\n".join(lines) + "\n"


def _cell_text(table: TrustTable, metric: str, code: str, apart: Mapping[str, Sequence[str]]) -> str:
    verdict = table.cell(metric, code)
    if code == ALL and metric in apart:
        acc = MISSING_TEXT if verdict is None else _num(verdict.result.acc23)
        return f"{acc} ({not_pooled_text(metric, apart, verdict)})"
    return trust_cell_text(verdict)


def _not_pooled_notes(apart: Mapping[str, Sequence[str]]) -> list[str]:
    if not apart:
        return []
    return [
        f"all: pools only the metrics present in every language; {', '.join(apart)} "
        f"{'is' if len(apart) == 1 else 'are'} not, so {'its' if len(apart) == 1 else 'their'} all cell "
        "covers only the languages named there and is left out of the ranking and the verdict."
    ]


def _epsilon_text(verdict: MetricVerdict | None) -> str:
    return (
        MISSING_TEXT if verdict is None or verdict.result.epsilon is None else f"{verdict.result.epsilon:.4g}"
    )


# The verdict row of a language whose items rank no metric ({n}: its number of items).
_UNRANKED_TEXT = {
    "too_few": "too few items ({n})",
    "undecided": "cannot tell apart (n={n})",
    "empty": "no items",
}


def _status_text(table: TrustTable, code: str) -> str:
    verdict = table.languages[code]
    if verdict.status in _UNRANKED_TEXT:
        return _UNRANKED_TEXT[verdict.status].format(n=verdict.n_items)
    best = [v.metric for v in verdict.verdicts if v.best]
    return "best: " + ", ".join(best)


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]

    def render(line: list[str]) -> str:
        cells = [cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))]
        return "  ".join(cells).rstrip()

    return [render(header), "  ".join("-" * w for w in widths), *(render(row) for row in rows)]


def trust_html(
    table: TrustTable, clip_flags: Collection[str] = (), demo_metrics: Collection[str] = ()
) -> dict[str, Any]:
    """Cells for the page: ``{"languages": [...], "rows": [{"metric", "cells": [{"text", "best",
    "rank", "language", "clip_flag"}]}], "footer": [...], "notes": [...]}``; best-cluster cells are
    marked, and CLIPScore / RefCLIPScore cells of the ``clip_flags`` languages carry ``clip_flag``."""
    languages = list(table.languages)
    apart = not_pooled(table)
    rows = []
    for metric in table.metrics:
        cells = []
        for code in languages:
            verdict = table.cell(metric, code)
            cells.append(
                {
                    "language": code,
                    "text": _cell_text(table, metric, code, apart),
                    "not_pooled": code == ALL and metric in apart,
                    "best": bool(verdict and verdict.best),
                    "rank": verdict.rank if verdict else None,
                    "epsilon": _epsilon_text(verdict),
                    "clip_flag": _clip_flagged(metric, code, clip_flags),
                }
            )
        rows.append(
            {
                "metric": metric,
                "label": demo_label(metric, demo_metrics),
                "demo": metric in demo_metrics,
                "cells": cells,
            }
        )
    footer = [
        {
            "language": code,
            "n_items": table.languages[code].n_items,
            "text": _status_text(table, code),
            "status": table.languages[code].status,
        }
        for code in languages
    ]
    notes = (
        trust_notes(table) + _not_pooled_notes(apart) + ([clip_flag_note(clip_flags)] if clip_flags else [])
    )
    return {"languages": languages, "rows": rows, "footer": footer, "notes": notes}
