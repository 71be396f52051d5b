"""The CLIP trust table per model (retrieval R@1, zero-shot top-1, foil accuracy, each against
English's on the same check, and the verdict), a zero-shot or foil check's own tables, and the
figure of zero-shot accuracy against retrieval R@1 (seed 004, Fig. 3).

Accuracies and recalls are stored as fractions and shown as percentages.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

import numpy as np
from django.conf import settings

from evaluation.clip_checks.selectors import (
    PROBE_NAMES,
    foil_baseline,
    latest_probe_checks,
    probe_check_queryset,
    probe_ratio,
)
from evaluation.metrics.clip.trust import BASELINE_LANGUAGE, FLAG_TEXT
from evaluation.models import ClipProbe, ClipProbeCheck, RetrievalCheck, RunStatus
from evaluation.retrieval.selectors import clip_trust, latest_checks

PROBES = ("retrieval", ClipProbe.ZEROSHOT, ClipProbe.FOIL)
PROBE_HEADERS = {
    "retrieval": "t2i R@1",
    ClipProbe.ZEROSHOT: "zero-shot top-1",
    ClipProbe.FOIL: "foil accuracy",
}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _ratio(value: float | None, baseline: float | None) -> float | None:
    return None if value is None or not baseline else value / baseline


def checked_models() -> list[str]:
    """Model keys with at least one succeeded retrieval, zero-shot or foil check, most recent first."""
    keys: dict[str, None] = {}
    for model in (RetrievalCheck, ClipProbeCheck):
        for key in (
            model.objects.filter(status=RunStatus.SUCCEEDED)
            .order_by("-finished_at")
            .values_list("model_key", flat=True)
        ):
            keys.setdefault(key, None)
    return list(keys)


def clip_trust_table(model_key: str) -> dict[str, Any]:
    """The model's per-language table: for each probe its value, English's on the same check, their
    ratio and the check it comes from; then the verdict (flag, reasons, note). Languages: those of the
    model's latest checks, English first."""
    retrieval = latest_checks(model_key)
    probes = {probe: latest_probe_checks(model_key, probe) for probe in (ClipProbe.ZEROSHOT, ClipProbe.FOIL)}
    codes = set(retrieval) | {code for checks in probes.values() for code in checks}
    codes = sorted(codes, key=lambda code: (code != BASELINE_LANGUAGE, code))
    verdicts = clip_trust(model_key, codes)
    rows = []
    for code in codes:
        cells: dict[str, Any] = {}
        check = retrieval.get(code)
        if check is not None:
            value = check.results[code].get("t2i_r1")
            base = (check.results.get(BASELINE_LANGUAGE) or {}).get("t2i_r1")
            cells["retrieval"] = {
                "value": value,
                "baseline": base,
                "ratio": _ratio(value, base),
                "check_id": check.pk,
            }
        for probe, checks in probes.items():
            if code in checks:
                ratio = probe_ratio(checks[code], code)
                if ratio is not None:
                    cells[probe] = {
                        "value": ratio.value,
                        "baseline": ratio.baseline,
                        "ratio": ratio.ratio,
                        "check_id": ratio.check_id,
                    }
        verdict = verdicts[code]
        rows.append(
            {
                "language": code,
                "probes": {probe: cells.get(probe) for probe in PROBES},
                "flagged": verdict.flagged,
                "trusted": verdict.trusted,
                "label": verdict.label,
                "reasons": verdict.reasons,
                "note": verdict.note,
            }
        )
    return {"model_key": model_key, "languages": rows}


def clip_trust_tables(model_keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """:func:`clip_trust_table` of each model (default: every checked model)."""
    return [clip_trust_table(key) for key in (checked_models() if model_keys is None else model_keys)]


def trust_table_cells(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's rows as page cells: per probe "value% (ratio× en)"."""
    out = []
    for row in table["languages"]:
        cells = []
        for probe in PROBES:
            cell = row["probes"][probe]
            if cell is None:
                cells.append("–")
            else:
                ratio = "" if cell["ratio"] is None else f" ({cell['ratio']:.2f}×)"
                cells.append(f"{_pct(cell['value'])}{ratio}")
        out.append({**row, "cells": cells})
    return out


def clip_trust_text(tables: list[dict[str, Any]]) -> str:
    lines = []
    for table in tables:
        lines += [f"CLIP trust, {table['model_key']} (value %, ratio to English on the same check)", ""]
        header = ["language", *(PROBE_HEADERS[p] for p in PROBES), "verdict"]
        body = [
            [row["language"] + (" !" if row["flagged"] else ""), *row["cells"], row["label"]]
            for row in trust_table_cells(table)
        ]
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
        for r in [header, ["-" * w for w in widths], *body]:
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        flagged = [row["note"] for row in table["languages"] if row["flagged"]]
        if flagged:
            lines += ["", f"! {FLAG_TEXT}:"] + [f"  {note}" for note in flagged]
        lines.append("")
    return "\n".join(lines)


# --- one zero-shot or foil check -------------------------------------------------------------------


def probe_check_rows(check: ClipProbeCheck) -> list[dict[str, Any]]:
    """One row per language (zero-shot) or per language and phenomenon (foils), English first."""
    results = check.results or {}
    codes = sorted(results, key=lambda code: (code != BASELINE_LANGUAGE, code))
    rows = []
    for code in codes:
        record = results[code]
        ratio = probe_ratio(check, code)
        if check.probe == ClipProbe.ZEROSHOT:
            base = record.get("baseline") or {}
            rows.append(
                {
                    "language": code,
                    "n_classes": record["n_classes"],
                    "n_images": record["n_images"],
                    "top1": record["top1"],
                    "top5": record["top5"],
                    "baseline_top1": base.get("top1"),
                    "baseline_n_classes": base.get("n_classes"),
                    "ratio": ratio.ratio if ratio else None,
                    "failed": bool(ratio and ratio.failed),
                    "per_class": record["per_class"],
                    "notes": record.get("notes", []),
                }
            )
        else:
            baseline = foil_baseline(check, code)
            for phenomenon, cell in record["phenomena"].items():
                rows.append(
                    {
                        "language": code,
                        "phenomenon": phenomenon,
                        **cell,
                        "baseline_accuracy": baseline if phenomenon == "all" else None,
                        "ratio": (ratio.ratio if ratio else None) if phenomenon == "all" else None,
                        "failed": bool(ratio and ratio.failed) if phenomenon == "all" else False,
                    }
                )
    return rows


def probe_check_text(check: ClipProbeCheck) -> str:
    title = (
        f"{check.get_probe_display().capitalize()} check #{check.pk} “{check.name}”: {check.model_label} "
        f"(model id {check.model_id or 'not loaded yet'}), {check.status}; accuracies in %"
    )
    if check.probe == ClipProbe.ZEROSHOT:
        header = ["language", "classes", "images", "top-1", "top-5", "en top-1 (same classes)", "ratio"]
        body = [
            [
                r["language"] + (" !" if r["failed"] else ""),
                str(r["n_classes"]),
                str(r["n_images"]),
                _pct(r["top1"]),
                _pct(r["top5"]),
                _pct(r["baseline_top1"]),
                "–" if r["ratio"] is None else f"{r['ratio']:.2f}×",
            ]
            for r in probe_check_rows(check)
        ]
    else:
        header = ["language", "phenomenon", "pairs", "accuracy", "95% interval", "ties", "ratio to en"]
        body = [
            [
                r["language"] + (" !" if r["failed"] else ""),
                r["phenomenon"],
                str(r["n_pairs"]),
                _pct(r["accuracy"]),
                "–" if not r["interval"] else f"[{_pct(r['interval'][0])}, {_pct(r['interval'][1])}]",
                str(r["ties"]),
                "–" if r["ratio"] is None else f"{r['ratio']:.2f}×",
            ]
            for r in probe_check_rows(check)
        ]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = [title, ""]
    for r in [header, ["-" * w for w in widths], *body]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    if check.probe == ClipProbe.FOIL and check.data.get("rule"):
        lines += ["", f"Kept: {check.data['rule']}; ties count against the model."]
    notes = [
        f"{code}: {note}"
        for code, record in (check.results or {}).items()
        for note in record.get("notes", [])
    ]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def probe_check_data(check: ClipProbeCheck, *, pairs: bool = False) -> dict[str, Any]:
    """A check as JSON-ready data; the per-pair CLIPScores only when ``pairs``."""
    results = check.results or {}
    out = {
        "id": check.pk,
        "name": check.name,
        "probe": check.probe,
        "probe_label": PROBE_NAMES[check.probe],
        "status": check.status,
        "error": check.error,
        "progress": f"{check.chunks_done}/{check.chunks_total}",
        "model": check.params,
        "model_id": check.model_id,
        "model_key": check.model_key,
        "languages": check.languages,
        "data": check.data,
        "results": results,
        "ratios": {
            code: ratio.as_dict() for code in results if (ratio := probe_ratio(check, code)) is not None
        },
        "created_at": check.created_at.isoformat(),
        "finished_at": check.finished_at.isoformat() if check.finished_at else None,
    }
    if pairs:
        out["pairs"] = check.pairs
    return out


def probe_check_json(check: ClipProbeCheck) -> str:
    return json.dumps(probe_check_data(check), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def recent_probe_checks(limit: int = 20) -> list[ClipProbeCheck]:
    return list(probe_check_queryset()[:limit])


# --- the figure --------------------------------------------------------------------------------------


def zeroshot_retrieval_points(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One point per model and language that has both a zero-shot top-1 and a retrieval R@1."""
    points = []
    for table in tables:
        for row in table["languages"]:
            zs, r1 = row["probes"][ClipProbe.ZEROSHOT], row["probes"]["retrieval"]
            if zs and r1 and zs["value"] is not None and r1["value"] is not None:
                points.append(
                    {
                        "model_key": table["model_key"],
                        "language": row["language"],
                        "zeroshot_top1": zs["value"],
                        "t2i_r1": r1["value"],
                        "flagged": row["flagged"],
                    }
                )
    return points


def points_correlation(points: list[dict[str, Any]]) -> float | None:
    """Pearson's r of zero-shot top-1 against R@1 across the points (None under 3 points or no spread)."""
    if len(points) < 3:
        return None
    x = np.array([p["zeroshot_top1"] for p in points])
    y = np.array([p["t2i_r1"] for p in points])
    if x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def zeroshot_retrieval_figure(tables: list[dict[str, Any]], fmt: str, *, title: str = "") -> bytes:
    """Zero-shot top-1 (x) against text→image R@1 (y), one dot per language and model, labelled with
    the language; flagged languages red; Pearson's r across the dots in the title. PNG or SVG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    points = zeroshot_retrieval_points(tables)
    r = points_correlation(points)
    figure = Figure(figsize=(5.5, 4.2))
    axes = figure.subplots()
    markers = "osD^v<>p"
    models = list(dict.fromkeys(p["model_key"] for p in points))
    for i, model in enumerate(models):
        mine = [p for p in points if p["model_key"] == model]
        axes.scatter(
            [100 * p["zeroshot_top1"] for p in mine],
            [100 * p["t2i_r1"] for p in mine],
            marker=markers[i % len(markers)],
            c=["#c0504d" if p["flagged"] else "#1f4e79" for p in mine],
            label=model.split("|")[0].removeprefix("clip:"),
        )
        for p in mine:
            axes.annotate(
                p["language"],
                (100 * p["zeroshot_top1"], 100 * p["t2i_r1"]),
                fontsize=7,
                xytext=(3, 3),
                textcoords="offset points",
            )
    if len(models) > 1:
        axes.legend(fontsize=7)
    axes.set_xlabel("zero-shot top-1 accuracy (%)")
    axes.set_ylabel("text→image R@1 (%)")
    corr = (
        "r: too few points"
        if r is None
        else f"Pearson r = {r:.2f} across {len(points)} language-model points"
    )
    axes.set_title((title + "\n" if title else "") + corr, fontsize=9)
    if not points:
        axes.text(
            0.5, 0.5, "no language has both checks yet", ha="center", va="center", transform=axes.transAxes
        )
    figure.text(0.01, 0.01, "red: " + FLAG_TEXT, fontsize=7)
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    return buffer.getvalue()


# --- the report's section -----------------------------------------------------------------------------


def clip_trust_section(runs: Iterable) -> dict[str, Any] | None:
    """The report's CLIP trust section for the CLIP models of ``runs`` (every checked model when no run
    has CLIP metrics, so the section still tells which languages a CLIP metric could be trusted in):
    each model's table (page cells), the query of its figure of zero-shot accuracy against retrieval
    R@1 and the correlation. None when no model has any check."""
    from evaluation.metrics.clip.tiny import TINY_CLIP_NAME
    from evaluation.retrieval.selectors import run_model_key

    keys = list(dict.fromkeys(key for run in runs if (key := run_model_key(run)) is not None))
    tables = [table for table in clip_trust_tables(keys or None) if table["languages"]]
    if not tables:
        return None
    points = zeroshot_retrieval_points(tables)
    return {
        "tables": [
            {
                "model_key": table["model_key"],
                "rows": trust_table_cells(table),
                "demo": TINY_CLIP_NAME in table["model_key"],
            }
            for table in tables
        ],
        "headers": [PROBE_HEADERS[probe] for probe in PROBES],
        "runs_models": bool(keys),
        "figure_query": urlencode([("model_key", table["model_key"]) for table in tables]),
        "pearson_r": points_correlation(points),
        "n_points": len(points),
        "thresholds": {
            "retrieval": settings.CLIP_UNRELIABLE_R1_RATIO,
            "zeroshot": settings.CLIP_UNRELIABLE_ZEROSHOT_RATIO,
            "foil": settings.CLIP_UNRELIABLE_FOIL_RATIO,
        },
    }
