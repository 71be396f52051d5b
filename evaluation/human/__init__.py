"""The human-evaluation numbers, as plain functions over plain data (no Django here).

* :mod:`.sxs`: side-by-side aggregation, WINS / LOSSES / ΔS×S with a bootstrap interval, sign test and
  position bias (seed 000, sec. 3.3);
* :mod:`.agreement`: Krippendorff's alpha (ordinal) for side-by-side and rating campaigns;
* :mod:`.quality`: Table 2, %GOOD+ / %MED+ / %BAD over the median rating of each caption (sec. 2.5);
* :mod:`.statistics`: Table 1, captions, replication and mean words / characters (sec. 2.4);
* :mod:`.controls`: side-by-side control items, when a judgment passes and pass rates per annotator;
Their tables are rendered by :mod:`evaluation.research.tables`.
"""

from __future__ import annotations

from .agreement import krippendorff_alpha, rating_alpha, sxs_alpha
from .controls import ControlPassRow, control_pass_rates, control_passed
from .quality import QUALITY_COLUMNS, QualityRow, quality_table
from .statistics import STATISTICS_COLUMNS, CaptionStatsRow, caption_statistics
from .sxs import (
    SXS_COLUMNS,
    SXS_LABELS,
    SxsJudgment,
    SxsSummary,
    choice_to_score,
    score_to_choice,
    sxs_summary,
)

__all__ = [
    "QUALITY_COLUMNS",
    "STATISTICS_COLUMNS",
    "SXS_COLUMNS",
    "SXS_LABELS",
    "CaptionStatsRow",
    "ControlPassRow",
    "QualityRow",
    "SxsJudgment",
    "SxsSummary",
    "caption_statistics",
    "choice_to_score",
    "control_pass_rates",
    "control_passed",
    "krippendorff_alpha",
    "quality_table",
    "rating_alpha",
    "score_to_choice",
    "sxs_alpha",
    "sxs_summary",
]
