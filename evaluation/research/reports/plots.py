"""Scatter plots of ΔS×S against Δmetric, one per metric, pure over comparisons (no Django).

Each plot shows every language with its own marker shape and colour (a colour-blind-safe palette,
and the shape alone tells languages apart in black and white), a legend, zero lines, the axis
labels "Δ <metric> (m2 − m1)" and "ΔS×S (percentage points)", and a title with the metric, N and
Pearson r and Kendall τ_b over all languages from :func:`evaluation.research.correlation.correlate`.

Mirrored points. The coefficients count each comparison in both directions by default, so the plot
shows the points they are computed on: the comparisons as entered (m2 vs m1) as filled markers,
and their mirrors (m1 vs m2, both deltas negated) as hollow markers of the same shape and colour,
fainter. The reader sees the N of the title, and which points are independent observations (the
filled ones). With ``both_directions=False`` only the entered points are drawn. With few
comparisons (up to :data:`LABEL_MAX`) each entered point is labelled "m2 vs m1".

Headless by construction: the figures are :class:`matplotlib.figure.Figure` objects rendered by
``savefig`` into bytes (Agg for PNG, matplotlib's SVG backend for SVG). ``matplotlib.pyplot`` is
never imported, so no GUI backend is ever selected, no window can open, and nothing global is
shared between concurrent requests; importing this module does not change the backend of a
notebook that imports it. Output is deterministic: no timestamp in the metadata, fixed SVG ids. SVG
text stays text (``svg.fonttype = "none"``), so labels are searchable and accessible.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from evaluation.research.correlation import ALL, MIN_COMPARISONS, Comparison, CorrelationResult, correlate
from evaluation.research.tables import DEMO_TAG

__all__ = [
    "LABEL_MAX",
    "PlotFormat",
    "language_styles",
    "metric_names",
    "scatter",
    "scatter_filename",
    "write_scatter_plots",
]

PlotFormat = Literal["png", "svg"]
DPI = 150
LABEL_MAX = 12
# Okabe & Ito's colour-blind-safe palette (without yellow, too faint on white).
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
Y_LABEL = "ΔS×S (percentage points)"


def x_label(metric: str) -> str:
    return f"Δ {metric} (m2 − m1)"


def metric_names(comparisons: Sequence[Comparison]) -> list[str]:
    """Metrics in the order they are first met (the order :func:`correlate` uses)."""
    return list(dict.fromkeys(name for c in comparisons for name in c.deltas))


def language_styles(languages: Sequence[str]) -> dict[str, tuple[str, str]]:
    """language -> (marker, colour), in sorted order of the languages, the same in every plot.

    Shape and colour advance together, so up to 84 languages get distinct combinations.
    """
    out = {}
    for i, language in enumerate(sorted(set(languages))):
        out[language] = (MARKERS[i % len(MARKERS)], COLOURS[(i + i // len(MARKERS)) % len(COLOURS)])
    return out


def scatter_filename(metric: str, fmt: PlotFormat) -> str:
    """``scatter_<metric>.<fmt>`` with anything but letters, digits, ``-`` and ``_`` replaced by ``_``."""
    safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "_" for ch in metric)
    return f"scatter_{safe}.{fmt}"


def _number(value: float | None, fmt: str = ".3f") -> str:
    return "n/a" if value is None or not math.isfinite(value) else format(value, fmt)


def _subtitle(result: CorrelationResult | None, n_points: int, n_comparisons: int, mirrored: bool) -> str:
    counted = f"N = {n_points}"
    if mirrored:
        counted += f" ({n_comparisons} comparison{'s' if n_comparisons != 1 else ''} × 2 directions)"
    if n_comparisons < MIN_COMPARISONS:
        return f"{counted} · r, τ_b: n/a (fewer than {MIN_COMPARISONS} comparisons)"
    if result is None or result.pearson is None:
        return f"{counted} · r, τ_b: n/a (a delta does not vary)"
    return (
        f"{counted} · Pearson r = {_number(result.pearson)} · Kendall τ_b = {_number(result.kendall_tau_b)}"
    )


def scatter(
    comparisons: Sequence[Comparison],
    metric: str,
    *,
    both_directions: bool = True,
    result: CorrelationResult | None = None,
    fmt: PlotFormat = "png",
    languages: Sequence[str] | None = None,
    demo: bool = False,
) -> bytes:
    """The scatter plot of ΔS×S against Δ``metric`` as PNG (150 dpi) or SVG bytes. ``demo``: the
    metric was scored by a demo or untrained model, and the title says so.

    ``result``: the "all" :class:`CorrelationResult` of this metric for the title; computed with
    :func:`correlate` (no bootstrap) when not given. ``languages``: the languages whose markers to
    use (default: those of ``comparisons``), so several plots share one legend style. Comparisons
    without this metric are left out. Raises ``ValueError`` for an unknown format.
    """
    if fmt not in ("png", "svg"):
        raise ValueError(f"unknown plot format {fmt!r}; choose png or svg")
    having = [c for c in comparisons if metric in c.deltas]
    if result is None and having:
        result = correlate(having, both_directions=both_directions, n_boot=0)[metric][ALL]
    styles = language_styles(languages if languages is not None else [c.language for c in comparisons])

    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "scatter", "font.size": 10}):
        figure = Figure(figsize=(7.0, 5.2), dpi=DPI, layout="constrained")
        axes = figure.add_subplot()
        axes.axhline(0, color="#888888", linewidth=0.8, zorder=1)
        axes.axvline(0, color="#888888", linewidth=0.8, zorder=1)
        axes.grid(True, color="#e4e4e4", linewidth=0.6, zorder=0)
        handles = []
        for language in sorted({c.language for c in having}):
            marker, colour = styles.get(language, (MARKERS[0], COLOURS[0]))
            points = [c for c in having if c.language == language]
            xs = [c.deltas[metric] for c in points]
            ys = [c.delta_sxs for c in points]
            if both_directions:
                axes.scatter(
                    [-x for x in xs],
                    [-y for y in ys],
                    marker=marker,
                    s=46,
                    facecolors="none",
                    edgecolors=colour,
                    linewidths=1.1,
                    alpha=0.55,
                    zorder=2,
                )
            axes.scatter(
                xs, ys, marker=marker, s=52, color=colour, edgecolors="white", linewidths=0.6, zorder=3
            )
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker=marker,
                    markersize=7,
                    markerfacecolor=colour,
                    markeredgecolor="white",
                    label=f"{language} ({len(points)})",
                )
            )
            if len(having) <= LABEL_MAX:
                for c in points:
                    # Labels point towards the centre, so they stay inside the axes.
                    right = c.deltas[metric] > 0
                    axes.annotate(
                        f"{c.m2} vs {c.m1}",
                        (c.deltas[metric], c.delta_sxs),
                        xytext=(-6 if right else 6, 4),
                        textcoords="offset points",
                        ha="right" if right else "left",
                        fontsize=7.5,
                        color="#333333",
                    )
        if both_directions and having:
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker="o",
                    markersize=7,
                    markerfacecolor="none",
                    markeredgecolor="#555555",
                    label="mirrored (m1 vs m2)",
                )
            )
        if not having:
            axes.text(
                0.5, 0.5, "no comparison has this metric", transform=axes.transAxes, ha="center", va="center"
            )
        _symmetric_limits(axes, having, metric, both_directions)
        axes.set_xlabel(x_label(metric))
        axes.set_ylabel(Y_LABEL)
        n_points = len(having) * (2 if both_directions else 1)
        axes.set_title(
            f"ΔS×S against Δ {metric}, all languages"
            + (f" [{DEMO_TAG}]" if demo else "")
            + "\n"
            + _subtitle(result, n_points, len(having), both_directions),
            fontsize=10.5,
        )
        if handles:
            axes.legend(handles=handles, title="language (comparisons)", fontsize=8, title_fontsize=8.5)
        buffer = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        figure.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
    return buffer.getvalue()


def _symmetric_limits(axes, having: Sequence[Comparison], metric: str, both_directions: bool) -> None:
    """With mirroring the cloud is point-symmetric around 0: centre the axes on 0 so it shows."""
    if not having:
        axes.set_xlim(-1, 1)
        axes.set_ylim(-100, 100)
        return
    if not both_directions:
        return
    x = max(abs(c.deltas[metric]) for c in having) or 1.0
    y = max(abs(c.delta_sxs) for c in having) or 10.0
    axes.set_xlim(-1.15 * x, 1.15 * x)
    axes.set_ylim(-min(105.0, 1.15 * y), min(105.0, 1.15 * y))


def write_scatter_plots(
    comparisons: Sequence[Comparison],
    folder: str | Path,
    *,
    both_directions: bool = True,
    results: Mapping[str, Mapping[str, CorrelationResult]] | None = None,
    formats: Sequence[PlotFormat] = ("png", "svg"),
    demo_metrics: Sequence[str] = (),
) -> list[Path]:
    """Write ``scatter_<metric>.png`` and ``.svg`` for every metric of ``comparisons`` into ``folder``.

    ``results`` (from :func:`correlate`) supplies the titles' coefficients; computed when not given.
    Returns the paths written, metric by metric.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    languages = [c.language for c in comparisons]
    written = []
    for metric in metric_names(comparisons):
        result = results[metric][ALL] if results is not None and metric in results else None
        for fmt in formats:
            path = folder / scatter_filename(metric, fmt)
            path.write_bytes(
                scatter(
                    comparisons,
                    metric,
                    both_directions=both_directions,
                    result=result,
                    fmt=fmt,
                    languages=languages,
                    demo=metric in demo_metrics,
                )
            )
            written.append(path)
    return written
