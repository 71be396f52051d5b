"""The map of a selection: where each selected image was taken, coloured by the language it went to,
marked by the level it came from (pure: no Django).

A plain longitude/latitude scatter on an equirectangular frame (no coastlines: no shipped outline
data is cheap enough to justify a dependency; the graticule and the points themselves show the
continents well enough to see where a language's images came from). Headless (matplotlib's
``Figure``, never pyplot) and deterministic (no timestamp, fixed SVG ids).
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib import colormaps, rc_context
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from annotation.selection.algorithm import LEVELS

DPI = 120
MARKERS = {"region": "o", "country": "s", "continent": "^", "global": "x"}
FORMATS = ("png", "svg")


@dataclass(frozen=True, slots=True)
class Point:
    language: str
    level: str
    latitude: float | None
    longitude: float | None


def selection_map(points: Sequence[Point], *, title: str, fmt: str = "png") -> bytes:
    """The map as PNG or SVG bytes. Images without coordinates are counted in the subtitle."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: one of {', '.join(FORMATS)}")
    languages = list(dict.fromkeys(p.language for p in points))
    palette = colormaps["tab20"] if len(languages) > 10 else colormaps["tab10"]
    colour = {lang: palette(i % palette.N) for i, lang in enumerate(languages)}
    groups: dict[tuple[str, str], list[Point]] = defaultdict(list)
    unplaced = 0
    for p in points:
        if p.latitude is None or p.longitude is None:
            unplaced += 1
            continue
        groups[(p.language, p.level)].append(p)
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "selection-map", "font.size": 9}):
        figure = Figure(figsize=(11.0, 6.2), dpi=DPI, layout="constrained")
        axes = figure.add_subplot()
        axes.set_xlim(-180, 180)
        axes.set_ylim(-90, 90)
        axes.set_aspect("equal")
        axes.set_xticks(range(-180, 181, 30))
        axes.set_yticks(range(-90, 91, 30))
        axes.grid(color="#dddddd", linewidth=0.6)
        axes.axhline(0, color="#bbbbbb", linewidth=0.8)
        axes.set_xlabel("longitude")
        axes.set_ylabel("latitude")
        for (lang, level), group in groups.items():
            axes.scatter(
                [p.longitude for p in group],
                [p.latitude for p in group],
                s=16 if level != "global" else 20,
                marker=MARKERS[level],
                color=colour[lang],
                alpha=0.8,
                linewidths=0.9,
            )
        subtitle = f"{len(points):,} images, {len(languages)} languages"
        if unplaced:
            subtitle += f"; {unplaced:,} without coordinates not drawn"
        axes.set_title(f"{title}\n{subtitle}", fontsize=10.5)
        language_handles = [
            Line2D([], [], linestyle="", marker="o", color=colour[lang], label=lang) for lang in languages
        ]
        level_handles = [
            Line2D([], [], linestyle="", marker=MARKERS[lv], color="#333333", label=lv) for lv in LEVELS
        ]
        first = axes.legend(
            handles=language_handles,
            title="language",
            fontsize=7.5,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            ncols=2 if len(languages) > 18 else 1,
        )
        axes.add_artist(first)
        axes.legend(
            handles=level_handles, title="level", fontsize=7.5, loc="lower left", bbox_to_anchor=(1.01, 0.0)
        )
        buffer = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        figure.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
    return buffer.getvalue()
