"""The database read into the plain inputs of :mod:`evaluation.research.per_caption`.

Caption level: :func:`per_caption_rows`
    Screen 1 of a caption campaign is a human rating of a model caption: the prompt system's
    English caption of the item's image. The metric score of THAT caption is the
    :class:`~evaluation.models.CaptionScore` of a run with the same system, the same image and the
    caption's language (the run scores the system's caption in its own language, and a system has
    one caption per image and language). So a screen-1 rating pairs with the caption scores of
    runs in the prompt captions' language (English, with English references for the reference
    metrics), one row per rating: a caption rated by two annotators gives two rows, as in
    :func:`evaluation.research.correlation.per_caption_agreement`.

    ``transfer=True`` also pairs the rating with the same system's caption of the same image in the
    run's other language, as seed 001 transfers English ratings to machine-translated captions. That
    is only meaningful when the system's captions in that language are translations of its English
    ones (the demo's German captions are); such rows are flagged ``transferred``.

    Rows are grouped by the language of the scored captions. ``language_codes`` chooses the caption
    campaigns whose ratings are used (their target language: which annotators rated), the same
    meaning the option has for side-by-side campaigns. When two selected runs score the same
    (language, system, metric), the first in the order given is used and the others are noted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from annotation.models import CampaignKind, Rating, RatingValue
from evaluation.human.selectors import DONE_STATES
from evaluation.models import ALL_METRICS, CaptionScore
from evaluation.research.comparisons import languages_check, metric_runs_for_report
from evaluation.research.correlation import TAU_C_SEED001
from evaluation.research.per_caption import per_caption_agreement_by_language
from evaluation.runs.plan import metrics_parse


@dataclass(frozen=True)
class PerCaptionRow:
    """A metric score of one caption and one screen-1 rating of it (see the module docstring)."""

    language: str  # language of the scored caption (the run's)
    metric: str
    run_id: int
    system: str
    image_key: str
    rating_id: int
    rater: str  # the annotator's pseudonym
    rater_language: str  # target language of the caption campaign the rating comes from
    score: float
    rating: str  # EXCELLENT, GOOD, MEDIUM, BAD or NOT-ENOUGH-INFO
    transferred: bool  # the rating is of the system's caption in another language (seed 001)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class PerCaptionRows(list[PerCaptionRow]):
    """Per-caption rows, with ``notes`` on runs left out of a (language, system, metric)."""

    def __init__(self, rows: Iterable[PerCaptionRow] = (), *, notes: Iterable[str] = ()):
        super().__init__(rows)
        self.notes: list[str] = list(notes)


RATING_LABELS = {value: label for value, label in RatingValue.choices}


def per_caption_rows(
    *,
    metric_run_ids: Sequence[int],
    language_codes: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    transfer: bool = False,
) -> PerCaptionRows:
    """(caption score, screen-1 rating) rows of the given runs (see the module docstring).

    Only submitted batches' ratings count. Rows come per run (in the order given), then by system,
    image, rating. Raises like :func:`comparisons_from_db`.
    """
    runs = metric_runs_for_report(metric_run_ids)
    wanted = metrics_parse(metrics) if metrics else list(ALL_METRICS)
    codes = languages_check(language_codes)
    ratings = (
        Rating.objects.counted()
        .filter(
            assignment__item__campaign__kind=CampaignKind.CAPTION,
            assignment__item__prompt_caption__isnull=False,
            assignment__state__in=DONE_STATES,
        )
        .order_by("pk")
    )
    if codes:
        ratings = ratings.filter(assignment__item__campaign__language__code__in=codes)
    by_caption: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    for rating_id, value, system_id, image_id, language_id, rater, rater_language in ratings.values_list(
        "pk",
        "value",
        "assignment__item__prompt_caption__system_id",
        "assignment__item__prompt_caption__image_id",
        "assignment__item__prompt_caption__language_id",
        "assignment__annotator__pseudonym",
        "assignment__item__campaign__language__code",
    ):
        by_caption[(system_id, image_id)].append((rating_id, value, language_id, rater, rater_language))
    system_ids = sorted({system_id for system_id, _ in by_caption})

    rows: list[PerCaptionRow] = []
    notes: list[str] = []
    owner: dict[tuple[int, int, str], int] = {}
    noted: set[tuple[int, int, str]] = set()
    for run in runs:
        scores = (
            CaptionScore.objects.filter(run=run, system_id__in=system_ids, metric__in=wanted)
            .order_by("system__name", "image__key", "metric")
            .values_list("system_id", "system__name", "image_id", "image__key", "metric", "value")
        )
        for system_id, system, image_id, image_key, metric, value in scores:
            rated = by_caption.get((system_id, image_id))
            if not rated:
                continue
            claim = (run.language_id, system_id, metric)
            first = owner.setdefault(claim, run.pk)
            if first != run.pk:
                if claim not in noted:
                    noted.add(claim)
                    notes.append(
                        f"run #{run.pk} also scores {system} with {metric} in {run.language.code}; "
                        f"run #{first} (given first) is used"
                    )
                continue
            for rating_id, rating, language_id, rater, rater_language in rated:
                transferred = language_id != run.language_id
                if transferred and not transfer:
                    continue
                rows.append(
                    PerCaptionRow(
                        language=run.language.code,
                        metric=metric,
                        run_id=run.pk,
                        system=system,
                        image_key=image_key,
                        rating_id=rating_id,
                        rater=rater,
                        rater_language=rater_language,
                        score=value,
                        rating=RATING_LABELS.get(rating, rating),
                        transferred=transferred,
                    )
                )
    return PerCaptionRows(rows, notes=notes)


def per_caption_agreement_from_rows(
    rows: Iterable[PerCaptionRow], *, tau_c: str = TAU_C_SEED001
) -> dict[str, dict[str, dict[str, Any]]]:
    """{metric: {language: {"n", "n_not_enough_info", "kendall_tau_b", "kendall_tau_c", "spearman",
    "kendall_tau_c_variant"}}} by :func:`evaluation.research.per_caption.per_caption_agreement_by_language`;
    one observation per rating; ``tau_c``: ``"seed001"`` or ``"scipy"``."""
    by_metric: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_metric[row.metric].append(
            (row.language, (row.system, row.image_key, row.rating_id), row.score, row.rating)
        )
    ordered = [metric for metric in ALL_METRICS if metric in by_metric]
    ordered += sorted(set(by_metric) - set(ordered))
    return {metric: per_caption_agreement_by_language(by_metric[metric], tau_c=tau_c) for metric in ordered}
