"""Reads of the evaluation server: who may see what, the benchmarks and submissions of a team, and the
leaderboards (per language and for the mean over languages, any metric, with intervals, signatures and
the paired significance of adjacent entries).

One rule decides each question: :func:`can_host` (hosts see everything), :func:`benchmarks_for`
(a participant sees the benchmarks of their teams), :func:`leaderboard_visible`, :func:`shown_split`
(a test phase shows its public part while it runs and its private part once the host closed it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from challenges.models import (
    Benchmark,
    BenchmarkLanguage,
    ImageScores,
    Phase,
    Split,
    Submission,
    SubmissionScore,
    Team,
    Visibility,
)
from challenges.statistics import interval, paired_p_value, replicates_from_bytes
from core.access import can_host_benchmarks
from core.errors import NotFound
from core.jobs.models import JobStatus
from evaluation.models import CLIP_METRICS

MEAN = "mean"
SIGNIFICANCE = 0.05


def can_host(user) -> bool:
    return can_host_benchmarks(user)


def teams_of(user) -> QuerySet[Team]:
    if not getattr(user, "is_authenticated", False):
        return Team.objects.none()
    return Team.objects.filter(members=user)


def benchmarks_for(user) -> QuerySet[Benchmark]:
    """The benchmarks ``user`` may open: all for a host, their teams' for a participant, those with a
    public phase for anyone."""
    if can_host(user):
        return Benchmark.objects.all()
    public = Q(phases__visibility=Visibility.PUBLIC)
    return Benchmark.objects.filter(public | Q(teams__in=teams_of(user))).distinct()


def benchmark_get(*, user, slug: str) -> Benchmark:
    benchmark = benchmarks_for(user).filter(slug=slug).first()
    if benchmark is None:
        raise NotFound(_("No such benchmark."))
    return benchmark


def is_member(user, benchmark: Benchmark) -> bool:
    return teams_of(user).filter(benchmarks=benchmark).exists()


def team_for(user, benchmark: Benchmark) -> Team | None:
    return teams_of(user).filter(benchmarks=benchmark).order_by("pk").first()


def phase_get(*, user, phase_id: int) -> Phase:
    phase = Phase.objects.select_related("benchmark", "image_set").filter(pk=phase_id).first()
    if phase is None or not benchmarks_for(user).filter(pk=phase.benchmark_id).exists():
        raise NotFound(_("No such phase."))
    return phase


def images_visible(user, phase: Phase) -> bool:
    """Whether ``user`` may list and download the phase's images: a member of a team of the benchmark, or
    a host (the images are the benchmark's to hand to its teams, not to the public)."""
    return can_host(user) or is_member(user, phase.benchmark)


def leaderboard_visible(user, phase: Phase) -> bool:
    if can_host(user) or phase.visibility == Visibility.PUBLIC:
        return True
    return phase.visibility == Visibility.PARTICIPANTS and is_member(user, phase.benchmark)


def shown_split(user, phase: Phase, asked: str | None = None) -> str:
    """The split a leaderboard shows: validation phases all images; test phases the public part while they
    run and the private part once closed; a host may ask for any split at any time."""
    if not phase.is_test:
        return Split.ALL
    if can_host(user) and asked in Split.values:
        return asked
    return Split.PRIVATE if phase.private_revealed else Split.PUBLIC


def submissions_of_team(*, user, phase: Phase) -> QuerySet[Submission]:
    return Submission.objects.filter(phase=phase, team__in=teams_of(user)).order_by("-created_at", "-pk")


def submission_get(*, user, submission_id: int) -> Submission:
    """A submission its team's members (or a host) may read; NotFound for everyone else."""
    found = Submission.objects.select_related("phase", "phase__benchmark", "team").filter(pk=submission_id)
    if not can_host(user):
        found = found.filter(team__in=teams_of(user))
    submission = found.first()
    if submission is None:
        raise NotFound(_("No such submission."))
    return submission


def sealed_for(user, phase: Phase) -> bool:
    """True while ``user`` may see only the public part of ``phase``: a test phase that the host has not
    closed, for anyone but a host. The all-image numbers are sealed with the private ones: with the public
    part beside them, the private part is their difference (private = (n_all·all − n_public·public) /
    n_private for any mean, and one caption on a private image moves the all-image score)."""
    return phase.is_test and not (can_host(user) or phase.private_revealed)


def submission_scores(submission: Submission, *, user) -> list[SubmissionScore]:
    """The submission's corpus scores its viewer may see: while a test phase runs, a team sees only the
    public part's (every reference count, the human comparison too); the all-image and private scores once
    the host closes the phase; hosts everything at any time."""
    rows = SubmissionScore.objects.filter(submission=submission).select_related("language")
    if sealed_for(user, submission.phase):
        rows = rows.filter(split=Split.PUBLIC)
    return list(rows.order_by("language__code", "reference_count", "held_out", "split", "metric"))


def per_image_scores(submission: Submission, *, user) -> list[ImageScores]:
    """Per-image scores: for validation phases (and hosts); never a test phase's for a team."""
    if submission.phase.is_test and not can_host(user):
        return []
    return list(ImageScores.objects.filter(submission=submission).select_related("language"))


def clip_trust_of(phase: Phase, language_code: str):
    """Is CLIP trusted in this language, for the phase's CLIP model? The one question every leaderboard
    asks (today the verdict of the latest retrieval check, ``evaluation.retrieval``; zero-shot and foil
    checks join it there). A ``LanguageTrust``: ``trusted``, ``flagged``, ``label``, ``note``."""
    from challenges.scoring.compute import clip_params
    from evaluation.metrics.clip.trust import clip_model_key
    from evaluation.retrieval.selectors import clip_trust

    params = clip_params(phase)
    key = clip_model_key(
        model=params["clip_model"],
        pretrained=params.get("clip_pretrained", ""),
        checkpoint=params.get("clip_checkpoint", ""),
    )
    return clip_trust(key, [language_code])[language_code]


# --- Leaderboards ----------------------------------------------------------------------------------------


@dataclass
class Entry:
    submission_id: int
    method: str
    team: str
    baseline: bool
    selected: bool
    value: float | None
    human: bool = False
    low: float | None = None
    high: float | None = None
    signature: str = ""
    n_images: int = 0
    rank: int = 0
    p_vs_next: float | None = None  # paired bootstrap against the entry below
    significant: bool | None = None
    per_language: dict[str, float] = field(default_factory=dict)


@dataclass
class Leaderboard:
    phase: Phase
    language: str  # a code or MEAN
    metric: str
    reference_count: int
    split: str
    languages: list[str]
    metrics: list[str]
    reference_counts: list[int]
    entries: list[Entry]
    comparison: bool = False  # the human comparison: all scored against the references less the held-out one
    clip_trust: object = None  # for a CLIP metric in one language: clip_trust_of's verdict


def _entries_counted(phase: Phase) -> list[Submission]:
    """Baselines, and per team its selected submissions (or, with none selected, all of its scored ones:
    the best of them shows first)."""
    scored = list(
        Submission.objects.filter(phase=phase, status=JobStatus.SUCCEEDED)
        .select_related("team")
        .order_by("pk")
    )
    selected_teams = {s.team_id for s in scored if s.is_selected}
    return [s for s in scored if s.is_baseline or s.team_id not in selected_teams or s.is_selected]


def leaderboard(
    *,
    phase: Phase,
    user,
    language: str | None = None,
    metric: str | None = None,
    reference_count: int | None = None,
    split: str | None = None,
    comparison: bool = False,
) -> Leaderboard:
    """The phase's leaderboard for one language (or the mean over the benchmark's languages), one metric and
    reference count, in the split the viewer may see; entries best first, each with its interval and
    signature, and the paired bootstrap p-value against the entry below it (per language)."""
    languages = list(
        BenchmarkLanguage.objects.filter(benchmark=phase.benchmark)
        .order_by("language__code")
        .values_list("language__code", flat=True)
    )
    metrics = list(phase.metrics)
    metric = metric if metric in metrics else phase.ranked_by
    counts = list(phase.reference_counts)
    reference_count = reference_count if reference_count in counts else counts[0]
    language = (
        language
        if language in languages or language == MEAN
        else (languages[0] if len(languages) == 1 else MEAN)
    )
    split = shown_split(user, phase, split)
    submissions = _entries_counted(phase)
    if comparison:
        reference_count = 0
    rows = SubmissionScore.objects.filter(
        submission__in=submissions,
        metric=metric,
        reference_count=reference_count,
        held_out=comparison,
        split=split,
    ).values_list(
        "submission_id", "language__code", "value", "low", "high", "signature", "n_images", "replicates"
    )
    by_submission: dict[int, dict[str, tuple]] = {}
    for submission_id, code, value, low, high, signature, n, data in rows:
        by_submission.setdefault(submission_id, {})[code] = (
            value,
            low,
            high,
            signature,
            n,
            replicates_from_bytes(data),
        )
    entries = []
    replicates: dict[int, np.ndarray] = {}
    for submission in submissions:
        scores = by_submission.get(submission.pk, {})
        entry = Entry(
            submission_id=submission.pk,
            method=submission.method_name,
            team=submission.entrant,
            baseline=submission.is_baseline,
            human=submission.is_human,
            selected=submission.is_selected,
            value=None,
            per_language={code: row[0] for code, row in scores.items()},
        )
        own = None
        if language == MEAN:
            if all(code in scores for code in languages):
                entry.value = sum(scores[code][0] for code in languages) / len(languages)
                entry.n_images = scores[languages[0]][4]
                # The mean over languages on each resample (every language has the split's images).
                parts = [scores[code][5] for code in languages]
                if all(part is not None and len(part) == len(parts[0]) for part in parts):
                    own = np.mean(parts, axis=0)
                    entry.low, entry.high = interval(own, entry.value) or (None, None)
        elif language in scores:
            entry.value, entry.low, entry.high, entry.signature, entry.n_images, own = scores[language]
        if entry.value is not None:
            entries.append(entry)
            if own is not None:
                replicates[submission.pk] = own
    entries.sort(key=lambda e: (-e.value, e.submission_id))
    for rank, entry in enumerate(entries, start=1):
        entry.rank = rank
    _paired_tests(entries, replicates)
    return Leaderboard(
        phase=phase,
        language=language,
        metric=metric,
        reference_count=reference_count,
        split=split,
        languages=languages,
        metrics=metrics,
        reference_counts=counts,
        entries=entries,
        comparison=comparison,
        clip_trust=clip_trust_of(phase, language) if metric in CLIP_METRICS and language != MEAN else None,
    )


def leaderboard_asked(*, phase: Phase, user, params) -> Leaderboard:
    """The leaderboard a page or an API request asks for in its query ``params`` (``language``, ``metric``,
    ``refs``, ``split``, ``comparison=human``); a ``refs`` that is not a number means the default."""
    try:
        refs = int(params.get("refs", ""))
    except ValueError:
        refs = None
    return leaderboard(
        phase=phase,
        user=user,
        language=params.get("language"),
        metric=params.get("metric"),
        reference_count=refs,
        split=params.get("split"),
        comparison=params.get("comparison") == "human",
    )


def _paired_tests(entries: list[Entry], replicates: dict[int, np.ndarray]) -> None:
    """The paired bootstrap between adjacent entries, on the replicates of the score shown (``replicates``:
    submission -> its replicates on the split's shared resamples)."""
    for upper, lower in zip(entries, entries[1:], strict=False):
        upper.p_vs_next = paired_p_value(
            replicates.get(upper.submission_id),
            replicates.get(lower.submission_id),
            upper.value - lower.value,
        )
        if upper.p_vs_next is not None:
            upper.significant = upper.p_vs_next < SIGNIFICANCE


def leaderboard_rows(board: Leaderboard) -> list[dict]:
    """The leaderboard as plain rows (CSV, JSON and the API)."""
    return [
        {
            "rank": e.rank,
            "submission_id": e.submission_id,
            "method": e.method,
            "team": e.team,
            "baseline": e.baseline,
            "human": e.human,
            "comparison": board.comparison,
            "selected": e.selected,
            "language": board.language,
            "metric": board.metric,
            "reference_count": board.reference_count,
            "split": board.split,
            "value": e.value,
            "low": e.low,
            "high": e.high,
            "n_images": e.n_images,
            "signature": e.signature,
            "p_vs_next": e.p_vs_next,
            "significant_vs_next": e.significant,
            **(
                {f"value_{code}": e.per_language.get(code) for code in board.languages}
                if board.language == MEAN
                else {}
            ),
        }
        for e in board.entries
    ]
