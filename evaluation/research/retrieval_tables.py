"""A retrieval check's per-language table (text, JSON, page cells) and its figure, R@1 by language.

Recalls are stored as fractions and shown as percentages, as seeds 003 and 004 report them.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

from evaluation.metrics.clip.retrieval import RECALL_KS
from evaluation.metrics.clip.trust import BASELINE_LANGUAGE, FLAG_TEXT, LanguageTrust

COLUMNS = [f"{d}_r{k}" for d in ("t2i", "i2t") for k in RECALL_KS] + ["mean_recall"]
HEADERS = [f"{d} R@{k}" for d in ("t2i", "i2t") for k in RECALL_KS] + ["mean recall"]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def retrieval_rows(
    results: Mapping[str, Mapping[str, Any]], trust: Mapping[str, LanguageTrust]
) -> list[dict]:
    """One row per language, the baseline first: its recalls (percent text), pool sizes and verdict."""
    codes = sorted(results, key=lambda code: (code != BASELINE_LANGUAGE, code))
    rows = []
    for code in codes:
        record = results[code]
        verdict = trust.get(code)
        rows.append(
            {
                "language": code,
                "cells": [_pct(record.get(column)) for column in COLUMNS],
                "n_images": record.get("n_images"),
                "n_captions": record.get("n_captions"),
                "flagged": bool(verdict and verdict.flagged),
                "verdict": verdict.label if verdict else "",
                "note": verdict.note if verdict else "",
                "notes": record.get("notes", []),
            }
        )
    return rows


def retrieval_text(
    results: Mapping[str, Mapping[str, Any]], trust: Mapping[str, LanguageTrust], *, title: str
) -> str:
    """The table as aligned text, recalls in percent, flagged languages marked ``!``."""
    header = ["language", *HEADERS, "images", "captions", "verdict"]
    lines = [
        [
            r["language"] + (" !" if r["flagged"] else ""),
            *r["cells"],
            str(r["n_images"]),
            str(r["n_captions"]),
            r["verdict"],
        ]
        for r in retrieval_rows(results, trust)
    ]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header))]
    out = [title, ""]
    for line in [header, ["-" * w for w in widths], *lines]:
        out.append(
            "  ".join(
                c.ljust(w) if i in (0, len(header) - 1) else c.rjust(w)
                for i, (c, w) in enumerate(zip(line, widths))
            ).rstrip()
        )
    flagged = [t.note for t in trust.values() if t.flagged]
    if flagged:
        out += ["", f"! {FLAG_TEXT}:"] + [f"  {note}" for note in flagged]
    return "\n".join(out) + "\n"


def retrieval_json(
    results: Mapping[str, Mapping[str, Any]], trust: Mapping[str, LanguageTrust], **extra
) -> str:
    data = {
        **extra,
        "languages": {
            code: {**results[code], "trust": trust[code].as_dict() if code in trust else None}
            for code in results
        },
    }
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def retrieval_r1_figure(
    results: Mapping[str, Mapping[str, Any]], trust: Mapping[str, LanguageTrust], fmt: str, *, title: str
) -> bytes:
    """Bars of text→image R@1 per language (percent), English drawn apart and its R@1 × the
    threshold as a dashed line; flagged languages hatched. PNG or SVG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    rows = retrieval_rows(results, trust)
    codes = [r["language"] for r in rows]
    values = [100 * results[c]["t2i_r1"] for c in codes]
    figure = Figure(figsize=(max(5.0, 0.45 * len(codes) + 2), 3.8))
    axes = figure.subplots()
    colors = [
        "#1f4e79"
        if c == BASELINE_LANGUAGE
        else ("#c0504d" if trust.get(c) and trust[c].flagged else "#7f9fbf")
        for c in codes
    ]
    bars = axes.bar(codes, values, color=colors)
    for bar, code in zip(bars, codes):
        if trust.get(code) and trust[code].flagged:
            bar.set_hatch("//")
    baseline = trust.get(BASELINE_LANGUAGE)
    if baseline is not None and baseline.threshold and baseline.r1:
        axes.axhline(100 * baseline.r1 * baseline.threshold, linestyle="--", color="#444", linewidth=1)
        axes.text(
            len(codes) - 0.5,
            100 * baseline.r1 * baseline.threshold,
            f" {baseline.threshold:g} × en",
            va="bottom",
            ha="right",
            fontsize=8,
        )
    axes.set_ylabel("text→image R@1 (%)")
    axes.set_ylim(0, max(100.0 if not values else max(values) * 1.15, 1.0))
    axes.set_title(title, fontsize=9, wrap=True)
    for label in axes.get_xticklabels():
        if label.get_text() == BASELINE_LANGUAGE:
            label.set_fontweight("bold")
    figure.text(0.01, 0.01, "dark: English (the baseline); red, hatched: " + FLAG_TEXT, fontsize=7)
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    return buffer.getvalue()
