"""Reads of the metric runs: references and captions to score, runs, their chunks and score tables."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from annotation.models import (
    SystemCaption,
)
from core.lookups import row_by_id
from evaluation.human.selectors import campaign_references
from evaluation.models import (
    ALL_METRICS,
    CorpusScore,
    MetricChunk,
    MetricRun,
    Reference,
    ReferenceSet,
    ReferenceSetKind,
)

# Rows per IN list.
BATCH = 1000


def _batches(ids: list[int]) -> Iterable[list[int]]:
    for start in range(0, len(ids), BATCH):
        yield ids[start : start + BATCH]


def reference_texts(
    reference_set: ReferenceSet, image_ids: Iterable[int] | None = None
) -> dict[int, list[str]]:
    """image id -> reference captions of the set (all images, or those of ``image_ids``).

    A campaign set reads the campaign's written captions now, in the order they were
    submitted; an imported set reads its references by position.
    """
    if reference_set.kind == ReferenceSetKind.CAMPAIGN:
        base = campaign_references(
            reference_set.campaign_id, min_verified_rating=reference_set.min_verified_rating
        ).order_by("image_id", "pk")
    else:
        base = Reference.objects.filter(reference_set=reference_set).order_by("image_id", "position")
    out: dict[int, list[str]] = defaultdict(list)
    if image_ids is None:
        querysets = [base]
    else:
        querysets = (base.filter(image_id__in=batch) for batch in _batches(sorted(set(image_ids))))
    for queryset in querysets:
        for image_id, text in queryset.values_list("image_id", "text"):
            if text.strip():
                out[image_id].append(text)
    return dict(out)


def system_captions(
    *, system_id: int, language_id: int, image_ids: Iterable[int] | None = None
) -> dict[int, str]:
    """image id -> the system's caption in the language (all images, or those of ``image_ids``)."""
    base = SystemCaption.objects.filter(system_id=system_id, language_id=language_id)
    if image_ids is None:
        return dict(base.values_list("image_id", "text"))
    out: dict[int, str] = {}
    for batch in _batches(sorted(set(image_ids))):
        out.update(base.filter(image_id__in=batch).values_list("image_id", "text"))
    return out


def metric_run_queryset() -> QuerySet[MetricRun]:
    """Runs with language, reference set, image set, systems and corpus scores loaded in a fixed number of queries."""
    return MetricRun.objects.select_related(
        "language", "reference_set", "image_set", "created_by"
    ).prefetch_related(
        "systems",
        Prefetch(
            "corpus_scores", queryset=CorpusScore.objects.select_related("system").order_by("system__name")
        ),
    )


def metric_run_get(*, run_id: int) -> MetricRun:
    return row_by_id(metric_run_queryset(), run_id, "metric run")


@dataclass(frozen=True)
class CorpusTable:
    """Corpus scores as a table: one row per system, one column per metric (None: not computed)."""

    metrics: list[str]
    rows: list[tuple[str, list[float | None]]]


def corpus_table(run: MetricRun) -> CorpusTable:
    """The run's corpus scores per system (uses prefetched ``corpus_scores`` when present)."""
    by_system: dict[str, dict[str, float]] = defaultdict(dict)
    for score in run.corpus_scores.all():
        by_system[score.system.name][score.metric] = score.value
    names = sorted({system.name for system in run.systems.all()} | set(by_system))
    metrics = [m for m in ALL_METRICS if m in set(run.metrics)]
    return CorpusTable(
        metrics=metrics, rows=[(name, [by_system[name].get(m) for m in metrics]) for name in names]
    )


def metric_chunks(run: MetricRun) -> QuerySet[MetricChunk]:
    return run.chunks.select_related("system").order_by("system__name", "kind", "index")
