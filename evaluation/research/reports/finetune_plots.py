"""A fine-tuning run's history as a small figure: the two training losses and the dev score per epoch,
pure over the run's ``history`` list (no Django); headless and deterministic as :mod:`.plots`."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib import rc_context
from matplotlib.figure import Figure

from evaluation.research.reports.plots import COLOURS, DPI, PlotFormat

__all__ = ["history_plot"]

_SERIES = (
    ("loss_contrastive", "contrastive loss", COLOURS[0], "o"),
    ("loss_pearson", "Pearson loss", COLOURS[1], "s"),
)


def history_plot(history: Sequence[Mapping[str, Any]], fmt: PlotFormat = "svg", *, title: str = "") -> bytes:
    """Losses (left axis) and dev score (right axis) per epoch as PNG or SVG bytes. Epochs without a
    value are left out of that line. Raises ``ValueError`` for an unknown format or an empty history."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"unknown plot format {fmt!r}; choose png or svg")
    if not history:
        raise ValueError("no epoch in the history")
    epochs = [entry.get("epoch") for entry in history]
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "finetune-history", "font.size": 8}):
        figure = Figure(figsize=(4.8, 2.6), dpi=DPI, layout="constrained")
        axes = figure.add_subplot()
        handles = []
        for key, label, colour, marker in _SERIES:
            points = [(e, h[key]) for e, h in zip(epochs, history) if h.get(key) is not None]
            if points:
                (line,) = axes.plot(*zip(*points), marker=marker, color=colour, label=label, markersize=4)
                handles.append(line)
        axes.set_xlabel("epoch")
        axes.set_ylabel("training loss")
        axes.grid(True, color="#e4e4e4", linewidth=0.6)
        dev = [(e, h["dev_score"]) for e, h in zip(epochs, history) if h.get("dev_score") is not None]
        if dev:
            right = axes.twinx()
            (line,) = right.plot(*zip(*dev), marker="^", color=COLOURS[2], label="dev score", markersize=4)
            right.set_ylabel("dev score")
            handles.append(line)
        axes.set_xticks(sorted({e for e in epochs if e is not None}))
        if handles:
            axes.legend(handles=handles, loc="best", fontsize=7, frameon=False)
        axes.set_title(title or "Fine-tuning history", fontsize=8, loc="left")
        buffer = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        figure.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
    return buffer.getvalue()
