"""Reads of the evaluation server: who may see what, the benchmarks and submissions of a team, and the
leaderboards (per language and for the mean over languages, any metric, with intervals, signatures and
the paired significance of adjacent entries).

One rule decides each question: :func:`can_host` (hosts see everything), :func:`benchmarks_for`
(a participant sees the benchmarks of their teams), :func:`leaderboard_visible`, :func:`shown_split`
(a test phase shows its public part while it runs and its private part once the host closed it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db.models import Count, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from challenges.models import (
    ACTIVE_STATUSES,
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


@dataclass(frozen=True)
class TeamUsage:
    """How much of a phase's submission limits a team has used: the counts the upload checks (a failed
    submission counts toward none of them; a day is a UTC day)."""

    today: int
    total: int
    scoring: int
    max_per_day: int
    max_total: int
    max_concurrent: int

    @property
    def exhausted(self) -> bool:
        return (
            self.total >= self.max_total
            or self.today >= self.max_per_day
            or self.scoring >= self.max_concurrent
        )

    def as_dict(self) -> dict:
        return {
            "today": self.today,
            "max_per_day": self.max_per_day,
            "total": self.total,
            "max_total": self.max_total,
            "scoring": self.scoring,
            "max_concurrent": self.max_concurrent,
        }


def team_usage(phase: Phase, team: Team, *, now: datetime | None = None) -> TeamUsage:
    """The team's use of the phase's limits (one query), as :func:`challenges.services.submission_create`
    counts it."""
    now = now or timezone.now()
    day_start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    counts = (
        Submission.objects.filter(phase=phase, team=team)
        .exclude(status=JobStatus.FAILED)
        .aggregate(
            total=Count("pk"),
            today=Count("pk", filter=Q(created_at__gte=day_start)),
            scoring=Count("pk", filter=Q(status__in=ACTIVE_STATUSES)),
        )
    )
    return TeamUsage(
        today=counts["today"],
        total=counts["total"],
        scoring=counts["scoring"],
        max_per_day=phase.max_per_day,
        max_total=phase.max_total,
        max_concurrent=phase.max_concurrent,
    )


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
    return list(rows.order_by("language__code", "reference_count", "held_out", "fresh", "split", "metric"))


@dataclass
class ScoreBlock:
    """One language's scores as a table: a row per metric, a column per (reference count, split); the
    human comparison (scored against the references less the held-out one) and the scores on the fresh
    references are blocks of their own. Each
    cell is a :class:`SubmissionScore` or None; ``signatures`` pairs each signature with its metrics."""

    language: object
    held_out: bool
    fresh: bool
    columns: list[tuple[int, str]]
    rows: list[tuple[str, list[SubmissionScore | None]]]
    signatures: list[tuple[str, list[str]]]


def score_blocks(submission: Submission, scores: list[SubmissionScore]) -> list[ScoreBlock]:
    """:func:`submission_scores` arranged for reading: per language, its scores and then its human
    comparison; metrics in the phase's order, columns by reference count (all first) and split."""
    order = {name: i for i, name in enumerate(submission.phase.metrics)}
    split_order = {value: i for i, value in enumerate(Split.values)}
    grouped: dict[tuple[str, bool, bool], list[SubmissionScore]] = {}
    for score in scores:
        grouped.setdefault((score.language.code, score.held_out, score.fresh), []).append(score)
    blocks = []
    for (_code, held_out, fresh), group in sorted(grouped.items()):
        columns = sorted(
            {(s.reference_count, s.split) for s in group}, key=lambda c: (c[0], split_order.get(c[1], 9))
        )
        cells = {(s.metric, s.reference_count, s.split): s for s in group}
        metrics = sorted({s.metric for s in group}, key=lambda m: (order.get(m, len(order)), m))
        signatures: dict[str, list[str]] = {}
        for metric in metrics:
            for signature in dict.fromkeys(s.signature for s in group if s.metric == metric and s.signature):
                signatures.setdefault(signature, []).append(metric)
        blocks.append(
            ScoreBlock(
                language=group[0].language,
                held_out=held_out,
                fresh=fresh,
                columns=columns,
                rows=[(m, [cells.get((m, k, split)) for k, split in columns]) for m in metrics],
                signatures=list(signatures.items()),
            )
        )
    return blocks


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
    description: str = ""
    paper_url: str = ""
    code_url: str = ""
    submitted_at: datetime | None = None
    # Its score on the fresh references, its rank there, and rank − fresh rank (negative: it falls there).
    fresh_value: float | None = None
    fresh_low: float | None = None
    fresh_high: float | None = None
    fresh_rank: int | None = None
    rank_change: int | None = None


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
    fresh: bool = False  # entries carry their score and rank on the fresh references too
    clip_trust: object = None  # for a CLIP metric in one language: clip_trust_of's verdict
    notes: list[str] = field(default_factory=list)  # what was asked for and not shown, and what is instead


def _entries_counted(phase: Phase) -> list[Submission]:
    """Baselines, and per team its selected submissions (or, with none selected, all of its scored ones:
    the best of them shows first); never a withdrawn one."""
    scored = list(
        Submission.objects.filter(phase=phase, status=JobStatus.SUCCEEDED, withdrawn_at__isnull=True)
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
    counts = list(phase.reference_counts)
    notes = []
    if metric and metric not in metrics:
        notes.append(
            _("The phase does not compute “%(asked)s”; shown: %(shown)s, the phase's ranking metric.")
            % {"asked": metric, "shown": phase.ranked_by}
        )
    metric = metric if metric in metrics else phase.ranked_by
    if reference_count is not None and reference_count not in counts and not comparison:
        notes.append(
            _("The phase has no scores with %(asked)s references per image; shown: %(shown)s.")
            % {"asked": reference_count, "shown": _reference_label(counts[0])}
        )
    reference_count = reference_count if reference_count in counts else counts[0]
    default_language = languages[0] if len(languages) == 1 else MEAN
    if language and language not in languages and language != MEAN:
        notes.append(
            _("“%(asked)s” is not a language of this benchmark; shown: %(shown)s.")
            % {"asked": language, "shown": _language_label(default_language)}
        )
    language = language if language in languages or language == MEAN else default_language
    if split and split != shown_split(user, phase, split) and split in Split.values:
        notes.append(
            _("Only the %(shown)s can be shown now.")
            % {"shown": Split(shown_split(user, phase, split)).label}
        )
    split = shown_split(user, phase, split)
    submissions = _entries_counted(phase)
    if comparison:
        reference_count = 0
    asked = {"metric": metric, "reference_count": reference_count, "held_out": comparison, "split": split}
    entries = _board_entries(submissions, languages, language, **asked, fresh=False)
    # The languages whose entries were scored on fresh references too (a phase they do not wholly cover,
    # or entries scored before they were added, have none).
    fresh_languages = set(
        SubmissionScore.objects.filter(submission__in=submissions, fresh=True)
        .values_list("language__code", flat=True)
        .distinct()
    )
    fresh = not comparison and (
        language in fresh_languages or (language == MEAN and fresh_languages >= set(languages))
    )
    if fresh:
        on_fresh = {
            e.submission_id: e for e in _board_entries(submissions, languages, language, **asked, fresh=True)
        }
        for entry in entries:
            other = on_fresh.get(entry.submission_id)
            if other is not None:
                entry.fresh_value, entry.fresh_low, entry.fresh_high = other.value, other.low, other.high
                entry.fresh_rank = other.rank
                entry.rank_change = entry.rank - other.rank
    elif language == MEAN and fresh_languages and not comparison:
        notes.append(
            _("Only %(languages)s have fresh references: choose one of them to see its scores on them.")
            % {"languages": ", ".join(sorted(fresh_languages))}
        )
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
        fresh=fresh,
        clip_trust=clip_trust_of(phase, language) if metric in CLIP_METRICS and language != MEAN else None,
        notes=notes,
    )


def _board_entries(
    submissions: list[Submission],
    languages: list[str],
    language: str,
    *,
    metric: str,
    reference_count: int,
    held_out: bool,
    fresh: bool,
    split: str,
) -> list[Entry]:
    """The entries with a score for the board's language (or every language, for the mean), best first,
    ranked, each with its interval and the paired test against the entry below it."""
    rows = SubmissionScore.objects.filter(
        submission__in=submissions,
        metric=metric,
        reference_count=reference_count,
        held_out=held_out,
        fresh=fresh,
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
            description=submission.description,
            paper_url=submission.paper_url,
            code_url=submission.code_url,
            submitted_at=submission.created_at,
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
    return entries


def _reference_label(count: int) -> str:
    return _("all references") if count == 0 else f"c{count}"


def _language_label(code: str) -> str:
    return _("the mean over languages") if code == MEAN else code


def leaderboard_asked(*, phase: Phase, user, params) -> Leaderboard:
    """The leaderboard a page or an API request asks for in its query ``params`` (``language``, ``metric``,
    ``refs``, ``split``, ``comparison=human``); a ``refs`` that is not a number means the default."""
    raw = params.get("refs", "")
    try:
        refs = int(raw)
    except ValueError:
        refs = None
    board = leaderboard(
        phase=phase,
        user=user,
        language=params.get("language"),
        metric=params.get("metric"),
        reference_count=refs,
        split=params.get("split"),
        comparison=params.get("comparison") == "human",
    )
    if raw and refs is None:
        board.notes.append(
            _("“%(asked)s” is not a number of references; shown: %(shown)s.")
            % {"asked": raw[:40], "shown": _reference_label(board.reference_count)}
        )
    return board


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
            "description": e.description,
            "paper_url": e.paper_url,
            "code_url": e.code_url,
            "submitted_at": e.submitted_at.isoformat() if e.submitted_at else None,
            **(
                {
                    "fresh_value": e.fresh_value,
                    "fresh_low": e.fresh_low,
                    "fresh_high": e.fresh_high,
                    "fresh_rank": e.fresh_rank,
                    "rank_change": e.rank_change,
                }
                if board.fresh
                else {}
            ),
            **(
                {f"value_{code}": e.per_language.get(code) for code in board.languages}
                if board.language == MEAN
                else {}
            ),
        }
        for e in board.entries
    ]
