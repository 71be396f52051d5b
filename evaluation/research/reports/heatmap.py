"""The trust table as a heatmap a researcher can paste into a paper (pure over a TrustTable, no Django).

Rows are metrics (best pooled first), columns are ``all`` and then the languages; a cell's colour is
its item-level acc23 (one sequential, colour-blind-safe scale from 0.5 upwards: below chance is the
palest), its text the accuracy, the 95% interval and the significance cluster (``#1``). Cells of a
language's best cluster have a heavy black frame. A column whose items cannot tell metrics apart
is hatched and its header says why, with the count. Headless and deterministic as
:mod:`.plots` (no pyplot, fixed SVG ids, SVG text kept as text).
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Collection

from matplotlib import colormaps, rc_context
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from evaluation.research.correlation import ALL
from evaluation.research.meta_evaluation import TrustTable
from evaluation.research.reports.plots import DPI, PlotFormat
from evaluation.research.tables import DEMO_TAG, demo_note
from evaluation.research.trust_tables import CLIP_FLAG_MARK, CLIP_METRIC_NAMES, not_pooled

__all__ = ["HEATMAP_FILENAME", "runs_source", "trust_heatmap"]

HEATMAP_FILENAME = "trust_heatmap.{fmt}"
# acc23 of a three-way decision: 1/3 is what guessing uniformly gets, about 0.5 what always
# deciding by sign gets when people rarely tie; the scale starts at 0.5 so differences above show.
_SCALE = Normalize(vmin=0.5, vmax=1.0, clip=True)
_COLOURS = colormaps["viridis"]


def _header(table: TrustTable, code: str) -> str:
    verdict = table.languages[code]
    if verdict.status == "too_few":
        return f"{code}\nn={verdict.n_items}\ntoo few"
    if verdict.status == "undecided":
        return f"{code}\nn={verdict.n_items}\ncannot tell apart"
    return f"{code}\nn={verdict.n_items}"


def trust_heatmap(
    table: TrustTable,
    fmt: PlotFormat = "png",
    *,
    title: str | None = None,
    source: str = "",
    clip_flags: Collection[str] = (),
    demo_metrics: Collection[str] = (),
) -> bytes:
    """The heatmap as PNG (150 dpi) or SVG bytes; ``source`` (e.g. the metric runs' names) is printed
    under the title, so a copied figure keeps where its numbers come from. Raises ``ValueError`` for
    an unknown format. CLIPScore / RefCLIPScore cells of the ``clip_flags`` languages (the retrieval
    check says CLIP-based scores are unreliable there) carry ``!`` and the title says why."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"unknown plot format {fmt!r}; choose png or svg")
    languages = list(table.languages)
    metrics = list(table.metrics)
    apart = not_pooled(table)
    width = 1.6 + 1.25 * max(1, len(languages))
    height = 1.5 + 0.62 * max(1, len(metrics))
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "trust-heatmap", "font.size": 9}):
        figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
        axes = figure.add_subplot()
        axes.set_xlim(0, len(languages))
        axes.set_ylim(len(metrics), 0)
        for row, metric in enumerate(metrics):
            for column, code in enumerate(languages):
                verdict = table.cell(metric, code)
                acc = verdict.result.acc23 if verdict is not None else None
                # An "all" cell over fewer languages than the column: not coloured as comparable.
                alone = code == ALL and metric in apart
                colour = "#f2f2f2" if acc is None or alone else _COLOURS(_SCALE(acc))
                status = table.languages[code].status
                axes.add_patch(
                    Rectangle(
                        (column, row),
                        1,
                        1,
                        facecolor=colour,
                        edgecolor="white",
                        linewidth=1.5,
                        hatch="///" if status in ("too_few", "undecided") else None,
                    )
                )
                if verdict is not None and verdict.best:
                    axes.add_patch(
                        Rectangle(
                            (column + 0.04, row + 0.06),
                            0.92,
                            0.88,
                            fill=False,
                            edgecolor="black",
                            linewidth=2.2,
                        )
                    )
                if acc is None:
                    text = "n/a"
                elif alone:
                    text = f"{acc:.3f}\nn={verdict.result.n}, only {', '.join(apart[metric])}\nnot ranked"
                else:
                    text = f"{acc:.3f}"
                    if verdict.result.ci is not None:
                        text += f"\n[{verdict.result.ci[0]:.2f}, {verdict.result.ci[1]:.2f}]"
                    if verdict.rank is not None:
                        text += f"  #{verdict.rank}"
                    if metric in CLIP_METRIC_NAMES and code in clip_flags:
                        text += f" {CLIP_FLAG_MARK}"
                dark = acc is not None and not alone and _SCALE(acc) < 0.55
                axes.text(
                    column + 0.5,
                    row + 0.5,
                    text,
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if dark else "black",
                )
        axes.set_xticks([i + 0.5 for i in range(len(languages))], [_header(table, c) for c in languages])
        axes.xaxis.tick_top()
        axes.set_yticks(
            [i + 0.5 for i in range(len(metrics))],
            [f"{m}\n[{DEMO_TAG}]" if m in demo_metrics else m for m in metrics],
        )
        axes.tick_params(length=0)
        for spine in axes.spines.values():
            spine.set_visible(False)
        colourbar = figure.colorbar(
            ScalarMappable(norm=_SCALE, cmap=_COLOURS),
            ax=axes,
            fraction=0.04,
            pad=0.02,
            label="item-level acc23",
        )
        colourbar.ax.tick_params(labelsize=8)
        heading = title or (
            "Which metric to trust: item-level acc23 (ties calibrated), 95% interval, #cluster;"
            " framed = best cluster"
        )
        # About 11 characters of 9-point text per inch of the axes: wrap so that nothing is cut off.
        columns = max(40, int(width * 11))
        lines = textwrap.wrap(heading, columns) + (textwrap.wrap(source, columns) if source else [])
        if clip_flags:
            flagged = ", ".join(sorted(clip_flags))
            lines += textwrap.wrap(
                f"{CLIP_FLAG_MARK} CLIP-based scores unreliable here ({flagged}): retrieval check", columns
            )
        if demo_metrics:
            lines += textwrap.wrap(demo_note(demo_metrics), columns)
        axes.set_title("\n".join(lines), fontsize=9, loc="left")
        buffer = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        figure.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
    return buffer.getvalue()


def runs_source(runs) -> str:
    """``metric runs: #1 “name”, #2 “name”``: what a figure's numbers were computed from."""
    return "metric runs: " + ", ".join(f"#{run.pk} “{run.name}”" for run in runs)
