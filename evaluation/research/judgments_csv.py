"""Side-by-side judgments with per-image metric differences, read from a CSV file (data from elsewhere).

The file has one row per judgment, with the columns ``language,image,m1,m2,rater,human`` and one
column per metric: ``human`` is the judgment as an integer score from m2's side, −3 … +3 (+3: m2's
caption is much better), and a metric column holds metric(m2's caption) − metric(m1's caption) for
that image, the same value on every row of the image. The metric's name is the column's header
(``delta_`` in front of it is dropped, as in a comparisons file, so ``CIDEr-D`` and ``delta_CIDEr-D``
name the same metric). :func:`read_judgments_csv` gives the items of
:mod:`evaluation.research.meta_evaluation` and the comparisons they add up to.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from evaluation.human.sxs import sxs_summary
from evaluation.research.comparisons_csv import csv_number, data_rows, pair_cells
from evaluation.research.correlation import Comparison
from evaluation.research.meta_evaluation import Item

__all__ = ["REQUIRED_COLUMNS", "Judgments", "JudgmentsCsvError", "read_judgments_csv"]

REQUIRED_COLUMNS = ("language", "image", "m1", "m2", "rater", "human")
HUMAN_SCORES = range(-3, 4)


class JudgmentsCsvError(ValueError):
    """A judgments file that cannot be used; ``line`` is the 1-based line in the file."""

    def __init__(self, line: int, reason: str):
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}")


@dataclass(frozen=True)
class Judgments:
    """What a judgments file holds: ``items`` (one per language, pair and image, in file order) and
    ``comparisons`` (one per language and pair: ΔS×S from the image outcomes as the platform
    computes it, Δmetric the mean of the images' differences), and the number of judgments."""

    items: list[Item]
    comparisons: list[Comparison]
    n_judgments: int
    metrics: tuple[str, ...]


def _metric_name(header: str) -> str:
    return header[len("delta_") :] if header.lower().startswith("delta_") and len(header) > 6 else header


def _header(row: list[str] | None) -> tuple[dict[str, int], list[tuple[str, int]]]:
    if row is None or not any(cell.strip() for cell in row):
        raise JudgmentsCsvError(1, f"empty file: expected a header {','.join(REQUIRED_COLUMNS)},<metric>...")
    names = [cell.strip() for cell in row]
    lowered = [name.lower() for name in names]
    for i, name in enumerate(lowered):
        if not name:
            raise JudgmentsCsvError(1, f"column {i + 1} has no name")
        if name in lowered[:i]:
            raise JudgmentsCsvError(1, f"column {names[i]!r} appears twice")
    missing = [name for name in REQUIRED_COLUMNS if name not in lowered]
    if missing:
        raise JudgmentsCsvError(1, f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    metrics = [(_metric_name(names[i]), i) for i, name in enumerate(lowered) if name not in REQUIRED_COLUMNS]
    if not metrics:
        raise JudgmentsCsvError(1, "expected at least one metric column (metric(m2) − metric(m1) per image)")
    seen: dict[str, str] = {}
    for metric, i in metrics:
        if metric.lower() in seen:
            raise JudgmentsCsvError(
                1, f"columns {seen[metric.lower()]!r} and {names[i]!r} name the same metric"
            )
        seen[metric.lower()] = names[i]
    return {name: lowered.index(name) for name in REQUIRED_COLUMNS}, metrics


def _human(text: str, line: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise JudgmentsCsvError(line, f"human must be an integer from -3 to +3, not {text!r}") from None
    if value not in HUMAN_SCORES:
        raise JudgmentsCsvError(line, f"human must be an integer from -3 to +3, not {value}")
    return value


def _metric_value(text: str, metric: str, line: int) -> float:
    return csv_number(text, metric, line, JudgmentsCsvError)


def read_judgments_csv(path: str | Path) -> Judgments:
    """Read a judgments file (see the module docstring); nothing is returned unless all of it is good.

    Header names are matched after trimming spaces, the required ones in any case. Raises
    :class:`JudgmentsCsvError` naming the line and the reason: empty file, a missing, unnamed or
    repeated column, no metric column, a row with too few or too many cells, an empty name, a
    human score that is not an integer from −3 to +3, a metric value that is not a finite number,
    an image whose metric value differs from its first row's, m1 = m2, the same rater twice on one
    image of a pair, the language ``all``, or no judgment at all.
    """
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        try:
            index, metrics = _header(next(reader, None))
        except csv.Error as exc:
            raise JudgmentsCsvError(reader.line_num or 1, f"not valid CSV: {exc}") from None
        width = len(index) + len(metrics)
        scores: dict[tuple[str, str, str, str], list[tuple[str, int]]] = defaultdict(list)
        deltas: dict[tuple[str, str, str, str], tuple[int, dict[str, float]]] = {}
        raters: dict[tuple[str, str, str, str, str], int] = {}
        n_judgments = 0
        for line, row in data_rows(reader, JudgmentsCsvError):
            cells = pair_cells(
                line, row, width=width, index=index, required=REQUIRED_COLUMNS[:5], error=JudgmentsCsvError
            )
            language, image, m1, m2, rater = (cells[index[n]] for n in REQUIRED_COLUMNS[:5])
            key = (language, m1, m2, image)
            if (*key, rater) in raters:
                raise JudgmentsCsvError(
                    line,
                    f"rater {rater} already judged image {image} of {m2} vs {m1} on line {raters[(*key, rater)]}",
                )
            raters[(*key, rater)] = line
            values = {metric: _metric_value(cells[i], metric, line) for metric, i in metrics}
            if key in deltas:
                first_line, first = deltas[key]
                for metric, value in values.items():
                    if value != first[metric]:
                        raise JudgmentsCsvError(
                            line,
                            f"{metric} of image {image} ({m2} vs {m1} in {language}) is {value:g} here but "
                            f"{first[metric]:g} on line {first_line}: one value per image",
                        )
            else:
                deltas[key] = (line, values)
            scores[key].append((rater, _human(cells[index["human"]], line)))
            n_judgments += 1
        if not n_judgments:
            raise JudgmentsCsvError(reader.line_num or 1, "no judgments after the header")
    items = [
        Item(
            language=key[0],
            m1=key[1],
            m2=key[2],
            image=key[3],
            human=sum(score for _, score in judged) / len(judged),
            n_judgments=len(judged),
            deltas=deltas[key][1],
        )
        for key, judged in scores.items()
    ]
    return Judgments(items, _comparisons(items, scores), n_judgments, tuple(metric for metric, _ in metrics))


def _comparisons(items: list[Item], scores) -> list[Comparison]:
    """One comparison per language and pair: ΔS×S from the images' outcomes (the platform's
    :func:`~evaluation.human.sxs.sxs_summary`, no interval) and each Δmetric the mean of the images'."""
    by_pair: dict[tuple[str, str, str], list[Item]] = defaultdict(list)
    for item in items:
        by_pair[item.key].append(item)
    out = []
    for (m1, m2, language), having in by_pair.items():
        judgments = [
            (item.image, rater, score, "right")
            for item in having
            for rater, score in scores[(language, m1, m2, item.image)]
        ]
        summary = sxs_summary(judgments, n_boot=1)  # the point only; its interval is not used here
        metrics = list(having[0].deltas)
        out.append(
            Comparison(
                m1=m1,
                m2=m2,
                language=language,
                delta_sxs=summary.delta_sxs,
                deltas={
                    metric: sum(item.deltas[metric] for item in having) / len(having) for metric in metrics
                },
            )
        )
    return out
