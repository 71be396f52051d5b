"""The database read into the plain inputs of :mod:`evaluation.research.correlation` (the caption
level is :mod:`evaluation.research.caption_rows`).

Model level: :func:`comparisons_from_db`, the one builder of metric-vs-human comparisons
    The API (``/api/correlations/``), the report page, the ``report`` command and ``correlate --runs``
    all call it, so the same selection gives the same comparisons everywhere. Its rules:

    * **Which campaigns count.** Given ``campaign_ids``: exactly those side-by-side campaigns,
      whatever their state (the caller chose them). Otherwise every FINISHED side-by-side campaign:
      closed, or every item judged K times, so a number does not move while people are still
      judging. An unfinished campaign left out by that default is listed in ``skipped`` with its
      progress, never dropped silently.
    * **One comparison per pair and language.** A second campaign of the same pair (either
      direction) in the same language is listed in ``skipped``; choose the campaigns to pick another.
    * **One run per (comparison, metric).** Δmetric = corpus score of m2 − corpus score of m1, both
      from ONE metric run: a run's scores depend on its image and reference sets (CIDEr's IDF comes
      from the evaluated images), so scores of two runs are not comparable. A run is used for a
      campaign when it is in the campaign's language and has the metric for both systems. When
      several selected runs qualify, **the run given first wins**; the others are listed in
      ``skipped`` for that metric, and ``sources`` says which run gave each delta.
    * ΔS×S comes from :func:`evaluation.human.selectors.sxs_results` (submitted work only, control
      items and identical pairs left out), with its interval.

    ``deltas`` is keyed by the metric's name (``"CIDEr-D"``), as
    :func:`~evaluation.research.correlation.correlate` expects; in a comparisons CSV the column is
    ``delta_<metric>``. A campaign without a submitted judgment, a pair no selected run scores, or a
    metric missing for one comparison is listed in ``skipped`` with the reason.

Item level: ``items``, built in the same call
    One :class:`~evaluation.research.meta_evaluation.Item` per image of each returned comparison's
    real pairs (the same filter as ΔS×S: submitted work, no control item, no identical pair) that
    has at least one submitted judgment: ``human`` is the mean of that image's scores from m2's side,
    ``deltas[metric]`` = per-caption score of m2's caption − that of m1's caption, both from the run
    that gave the comparison's Δmetric (``sources[i].runs[metric]``), never from another run. An
    image that run did not score for both systems leaves the metric out of that item; a
    ``skipped`` entry per comparison and metric says on how many images. Items come in the
    comparisons' order, then by image key. Judgments come from the query ΔS×S already makes, and
    every per-caption score in one more query.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db.models import Exists, OuterRef

from annotation.models import Campaign, CampaignKind, Item, Language
from annotation.selectors import campaign_is_finished, campaigns_progress
from core.errors import ValidationFailed
from evaluation.human.selectors import sxs_results
from evaluation.human.sxs import DEFAULT_N_BOOT
from evaluation.models import ALL_METRICS, CaptionScore, CorpusScore, MetricRun, RunStatus
from evaluation.research.correlation import Comparison
from evaluation.research.meta_evaluation import Item as MetaItem
from evaluation.runs.plan import metrics_parse

__all__ = [
    "ComparisonList",
    "ComparisonSource",
    "Skipped",
    "comparisons_from_db",
    "metric_runs_for_report",
]


@dataclass(frozen=True)
class Skipped:
    """A comparison (or some of its metrics) left out, and why.

    ``metrics`` empty: the whole comparison is left out; otherwise only these metrics are missing.
    """

    campaign_id: int | None
    campaign: str
    language: str
    m1: str
    m2: str
    reason: str
    metrics: tuple[str, ...] = ()

    def __str__(self) -> str:
        what = f"{self.m2} vs {self.m1} in {self.language}"
        if self.campaign:
            what += f" (campaign “{self.campaign}”, #{self.campaign_id})"
        if self.metrics:
            what += f", {', '.join(self.metrics)}"
        return f"{what}: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["metrics"] = list(self.metrics)
        return data


@dataclass(frozen=True)
class ComparisonSource:
    """Where one comparison's numbers come from: the campaign and, per metric, the run and both scores."""

    campaign_id: int
    campaign: str
    state: str
    language: str
    m1: str
    m2: str
    delta_sxs: float
    ci_low: float | None
    ci_high: float | None
    n_images: int
    n_judgments: int
    runs: dict[str, int] = field(default_factory=dict)  # metric -> run id
    signatures: dict[str, str] = field(default_factory=dict)  # metric -> that run's signature of it
    m1_scores: dict[str, float] = field(default_factory=dict)
    m2_scores: dict[str, float] = field(default_factory=dict)

    @property
    def deltas(self) -> dict[str, float]:
        """metric -> score(m2) − score(m1)."""
        return {metric: self.m2_scores[metric] - self.m1_scores[metric] for metric in self.m1_scores}

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class ComparisonList(list[Comparison]):
    """A list of comparisons that also carries ``skipped`` (what was left out, with the reason),
    ``sources`` (one :class:`ComparisonSource` per comparison, in the same order) and ``items``
    (the item level: images of those comparisons, see the module docstring)."""

    def __init__(
        self,
        comparisons: Iterable[Comparison] = (),
        *,
        skipped: Iterable[Skipped] = (),
        sources: Iterable[ComparisonSource] = (),
        items: Iterable[MetaItem] = (),
    ):
        super().__init__(comparisons)
        self.skipped: list[Skipped] = list(skipped)
        self.sources: list[ComparisonSource] = list(sources)
        self.items: list[MetaItem] = list(items)


# --- Inputs -----------------------------------------------------------------------------------------


def metric_runs_for_report(metric_run_ids: Iterable[int]) -> list[MetricRun]:
    """The runs, in the order given (repeats dropped), with language, reference and image set loaded.

    Raises ValidationFailed for an unknown id, none at all, or a run that has not
    succeeded (its scores are partial or missing).
    """
    ids = list(dict.fromkeys(int(run_id) for run_id in metric_run_ids))
    if not ids:
        raise ValidationFailed("Choose at least one metric run.")
    runs = {
        run.pk: run
        for run in MetricRun.objects.select_related("language", "reference_set", "image_set").filter(
            pk__in=ids
        )
    }
    missing = [str(run_id) for run_id in ids if run_id not in runs]
    if missing:
        # A selection naming an unknown id is a bad request (400), not a missing page.
        raise ValidationFailed(f"There is no metric run #{', #'.join(missing)}.")
    for run_id in ids:
        run = runs[run_id]
        if run.status != RunStatus.SUCCEEDED:
            raise ValidationFailed(
                f"Metric run #{run.pk} has not succeeded ({run.status}): wait for it, resume it, or leave it out."
            )
    return [runs[run_id] for run_id in ids]


def languages_check(language_codes: Sequence[str] | None) -> list[str] | None:
    if not language_codes:
        return None
    codes = list(dict.fromkeys(code.strip() for code in language_codes if code.strip()))
    known = set(Language.objects.filter(code__in=codes).values_list("code", flat=True))
    unknown = [code for code in codes if code not in known]
    if unknown:
        raise ValidationFailed(f"There is no language “{'”, “'.join(unknown)}”.")
    return codes


def _sxs_campaigns(
    campaign_ids: Sequence[int] | None, language_codes: list[str] | None
) -> tuple[list[Campaign], list[Skipped]]:
    """The campaigns to compare, and the unfinished ones the default left out (see the module docstring)."""
    campaigns = Campaign.objects.filter(kind=CampaignKind.SIDE_BY_SIDE).select_related(
        "language", "base_system", "test_system"
    )
    if campaign_ids is not None:
        ids = list(dict.fromkeys(int(campaign_id) for campaign_id in campaign_ids))
        kinds = dict(Campaign.objects.filter(pk__in=ids).values_list("pk", "kind"))
        missing = [str(campaign_id) for campaign_id in ids if campaign_id not in kinds]
        if missing:
            raise ValidationFailed(f"There is no side-by-side campaign #{', #'.join(missing)}.")
        other = [str(campaign_id) for campaign_id in ids if kinds[campaign_id] != CampaignKind.SIDE_BY_SIDE]
        if other:
            raise ValidationFailed(f"Campaign #{', #'.join(other)} is not a side-by-side campaign.")
        campaigns = campaigns.filter(pk__in=ids)
    if language_codes:
        campaigns = campaigns.filter(language__code__in=language_codes)
    chosen = list(campaigns.order_by("language__code", "pk"))
    if campaign_ids is not None:
        return chosen, []
    progress = campaigns_progress(c.pk for c in chosen)
    finished, unfinished = [], []
    for campaign in chosen:
        if campaign_is_finished(campaign, progress[campaign.pk]):
            finished.append(campaign)
            continue
        done = progress[campaign.pk]
        unfinished.append(
            Skipped(
                campaign.pk,
                campaign.name,
                campaign.language.code,
                campaign.base_system.name,
                campaign.test_system.name,
                f"not finished ({campaign.state}; {done.complete} of {done.items} items judged "
                f"{campaign.replication} times): choose the campaign to include it",
            )
        )
    return finished, unfinished


def _corpus_scores(run_ids: list[int]) -> dict[int, dict[int, dict[str, float]]]:
    """run id -> system id -> metric -> corpus score."""
    out: dict[int, dict[int, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    rows = CorpusScore.objects.filter(run_id__in=run_ids).values_list(
        "run_id", "system_id", "metric", "value"
    )
    for run_id, system_id, metric, value in rows:
        out[run_id][system_id][metric] = value
    return out


# --- Model level ------------------------------------------------------------------------------------


def comparisons_from_db(
    *,
    campaign_ids: Sequence[int] | None = None,
    language_codes: Sequence[str] | None = None,
    metric_run_ids: Sequence[int],
    metrics: Sequence[str] | None = None,
    n_boot: int = DEFAULT_N_BOOT,
) -> ComparisonList:
    """One comparison per side-by-side campaign (see the module docstring), with ``skipped``, ``sources``
    and ``items`` (the item level).

    ``campaign_ids``: these campaigns, whatever their state (default: every finished side-by-side
    campaign; the unfinished ones are listed in ``skipped``);
    ``language_codes``: only campaigns in these languages; ``metrics``: only these metrics (any
    case; ``text``, ``clip``, ``all``), default every metric the runs have for both systems.
    ``n_boot`` is for the ΔS×S interval kept in ``sources``. Reads only; the comparisons come in
    the order of language code and campaign id. Raises ValidationFailed for an unknown campaign, run, language or metric, a campaign that is not
    side by side, or a run that has not succeeded.
    """
    runs = metric_runs_for_report(metric_run_ids)
    wanted = metrics_parse(metrics) if metrics else list(ALL_METRICS)
    codes = languages_check(language_codes)
    campaigns, unfinished = _sxs_campaigns(campaign_ids, codes)
    scores = _corpus_scores([run.pk for run in runs])

    comparisons: list[Comparison] = []
    sources: list[ComparisonSource] = []
    skipped: list[Skipped] = list(unfinished)
    seen: dict[tuple[frozenset[int], int], Campaign] = {}
    pair_scores: list[dict[str, tuple[int, ...]]] = []  # per comparison: image key -> scores
    for campaign in campaigns:
        m1, m2, language = campaign.base_system, campaign.test_system, campaign.language

        def skip(reason: str, metrics: tuple[str, ...] = (), *, c=campaign, a=m1, b=m2, lang=language):
            skipped.append(Skipped(c.pk, c.name, lang.code, a.name, b.name, reason, metrics))

        pair = (frozenset((m1.pk, m2.pk)), language.pk)
        if pair in seen:
            earlier = seen[pair]
            skip(
                f"the same pair in {language.code} is already compared by campaign “{earlier.name}” "
                f"(#{earlier.pk}); one comparison per pair and language: choose the campaigns"
            )
            continue
        results = sxs_results(campaign, n_boot=n_boot)
        summary = results.summary
        if summary.delta_sxs is None:
            skip("no submitted judgment of a real pair yet")
            continue

        runs_here = [run for run in runs if run.language_id == language.pk]
        by_id = {run.pk: run for run in runs_here}
        deltas: dict[str, float] = {}
        used: dict[str, int] = {}
        values: dict[str, tuple[float, float]] = {}
        also: dict[str, list[int]] = defaultdict(list)
        for run in runs_here:
            of_m1, of_m2 = scores[run.pk].get(m1.pk, {}), scores[run.pk].get(m2.pk, {})
            for metric in wanted:
                if metric in of_m1 and metric in of_m2:
                    if metric in used:
                        also[metric].append(run.pk)
                        continue
                    used[metric] = run.pk
                    values[metric] = (of_m1[metric], of_m2[metric])
                    deltas[metric] = of_m2[metric] - of_m1[metric]
        if not deltas:
            skip(_why_unscored(runs_here, scores, campaign, wanted, metrics_given=bool(metrics)))
            continue
        seen[pair] = campaign
        for metric, later in also.items():
            skip(
                f"also scored by run #{', #'.join(map(str, later))}; run #{used[metric]} (given first) is used",
                (metric,),
            )
        comparisons.append(
            Comparison(
                m1=m1.name, m2=m2.name, language=language.code, delta_sxs=summary.delta_sxs, deltas=deltas
            )
        )
        pair_scores.append(results.pair_scores)
        sources.append(
            ComparisonSource(
                campaign_id=campaign.pk,
                campaign=campaign.name,
                state=campaign.state,
                language=language.code,
                m1=m1.name,
                m2=m2.name,
                delta_sxs=summary.delta_sxs,
                ci_low=summary.ci_low,
                ci_high=summary.ci_high,
                n_images=summary.n_images,
                n_judgments=summary.n_judgments,
                runs=used,
                signatures={metric: by_id[run_id].signature(metric) for metric, run_id in used.items()},
                m1_scores={metric: pair_values[0] for metric, pair_values in values.items()},
                m2_scores={metric: pair_values[1] for metric, pair_values in values.items()},
            )
        )

    # A metric some comparisons have and others lack: those others are left out of that metric.
    present = [metric for metric in wanted if any(metric in c.deltas for c in comparisons)]
    if metrics:
        present = list(wanted)
    for comparison, source in zip(comparisons, sources):
        lacking = tuple(metric for metric in present if metric not in comparison.deltas)
        if lacking:
            skipped.append(
                Skipped(
                    source.campaign_id,
                    source.campaign,
                    comparison.language,
                    comparison.m1,
                    comparison.m2,
                    "no selected run in the language scores both systems with "
                    + ("this metric" if len(lacking) == 1 else "these metrics"),
                    lacking,
                )
            )
    items = _items(sources, pair_scores, skipped)
    return ComparisonList(comparisons, skipped=skipped, sources=sources, items=items)


# --- Item level -------------------------------------------------------------------------------------


def _caption_scores(sources: list[ComparisonSource]) -> dict[tuple[int, str, str], dict[str, float]]:
    """(run id, system name, metric) -> image key -> per-caption score, for the runs, systems and
    metrics the comparisons use, on the images of their campaigns' real pairs (one query)."""
    if not sources:
        return {}
    runs = {run_id for source in sources for run_id in source.runs.values()}
    metrics = {metric for source in sources for metric in source.runs}
    systems = {name for source in sources for name in (source.m1, source.m2)}
    # Only images the campaigns compare: a run over 50,000 images need not come back whole.
    compared = Item.objects.filter(
        campaign_id__in=[source.campaign_id for source in sources],
        image_id=OuterRef("image_id"),
        is_control=False,
    )
    rows = (
        CaptionScore.objects.filter(run_id__in=runs, system__name__in=systems, metric__in=metrics)
        .filter(Exists(compared))
        .values_list("run_id", "system__name", "metric", "image__key", "value")
    )
    out: dict[tuple[int, str, str], dict[str, float]] = defaultdict(dict)
    for run_id, system, metric, key, value in rows:
        out[(run_id, system, metric)][key] = value
    return out


def _items(
    sources: list[ComparisonSource],
    pair_scores: list[dict[str, tuple[int, ...]]],
    skipped: list[Skipped],
) -> list[MetaItem]:
    """The item level of the comparisons (see the module docstring); appends to ``skipped`` one
    entry per comparison and metric whose run lacks a per-caption score on some images."""
    scores = _caption_scores(sources)
    items: list[MetaItem] = []
    for source, judged in zip(sources, pair_scores, strict=True):
        lacking: dict[str, int] = defaultdict(int)
        for key in sorted(judged):
            values = judged[key]
            deltas: dict[str, float] = {}
            for metric, run_id in source.runs.items():
                of_m1 = scores.get((run_id, source.m1, metric), {}).get(key)
                of_m2 = scores.get((run_id, source.m2, metric), {}).get(key)
                if of_m1 is None or of_m2 is None:
                    lacking[metric] += 1
                    continue
                deltas[metric] = of_m2 - of_m1
            items.append(
                MetaItem(
                    language=source.language,
                    m1=source.m1,
                    m2=source.m2,
                    image=key,
                    human=math.fsum(values) / len(values),
                    n_judgments=len(values),
                    deltas=deltas,
                )
            )
        for metric, count in lacking.items():
            skipped.append(
                Skipped(
                    source.campaign_id,
                    source.campaign,
                    source.language,
                    source.m1,
                    source.m2,
                    f"item level: run #{source.runs[metric]} has no per-caption score of both systems on "
                    f"{count} of the {len(judged)} judged images; those items leave the metric out",
                    (metric,),
                )
            )
    return items


def _why_unscored(
    runs_here: list[MetricRun],
    scores: dict[int, dict[int, dict[str, float]]],
    campaign: Campaign,
    wanted: list[str],
    *,
    metrics_given: bool,
) -> str:
    language = campaign.language.code
    if not runs_here:
        return f"no selected metric run is in {language}"
    m1, m2 = campaign.base_system, campaign.test_system
    parts = []
    for run in runs_here:
        has = [
            system.name for system in (m1, m2) if any(m in wanted for m in scores[run.pk].get(system.pk, {}))
        ]
        if len(has) == 2:
            parts.append(f"run #{run.pk} has no common metric for both")
        elif has:
            lacking = m2.name if has[0] == m1.name else m1.name
            parts.append(f"run #{run.pk} scores {has[0]} but not {lacking}")
        else:
            parts.append(f"run #{run.pk} scores neither")
    scope = f" with {', '.join(wanted)}" if metrics_given else ""
    return f"no selected run in {language} scores both {m1.name} and {m2.name}{scope} ({'; '.join(parts)})"
