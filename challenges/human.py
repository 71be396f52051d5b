"""Human evaluation of the best entries: a host picks entries (or the top N per language) and, in one
step, gets the side-by-side campaigns of every pair, built from the submitted captions by the platform's
own campaign service; once judged, the leaderboard shows the human ranking (ΔS×S with intervals, from
``evaluation.human``) beside the metric ranking."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from itertools import combinations

from django.db import transaction
from django.utils.translation import gettext as _

from annotation.models import CaptioningSystem, Language, SystemCaption
from annotation.services.campaigns import campaign_open, sxs_campaign_create
from challenges.models import (
    BenchmarkLanguage,
    HumanComparison,
    Phase,
    Split,
    Submission,
    SubmissionCaption,
    SubmissionScore,
)
from core.errors import NotFound, ValidationFailed
from core.jobs.models import JobStatus
from evaluation.human.selectors import sxs_results
from evaluation.models import TEXT_METRICS
from evaluation.runs.plan import metric_run_create

HUMAN_N_BOOT = 1000
# The letters of a campaign's blind label: no digits (nothing that reads as an id), no vowels (no words).
BLIND_LETTERS = "bcdfghjkmnpqrstvwxz"


def entry_system(submission: Submission, language: Language) -> CaptioningSystem:
    """The captioning system that stands for an entry in campaigns, with its captions in ``language``
    copied from the submission (idempotent). Its name shows no team or method: annotators never see who
    is compared."""
    system, _created = CaptioningSystem.objects.get_or_create(
        name=f"entry-{submission.pk}",
        defaults={"description": f"{submission.phase} / {submission.method_name} (#{submission.pk})"},
    )
    rows = SubmissionCaption.objects.filter(submission=submission, language=language).values_list(
        "image_id", "text"
    )
    SystemCaption.objects.bulk_create(
        [SystemCaption(system=system, image_id=i, language=language, text=t) for i, t in rows],
        batch_size=2000,
        ignore_conflicts=True,
    )
    return system


def blinded_campaign_name(phase: Phase, language: Language) -> str:
    """A side-by-side campaign's name, which annotators see on their dashboard and in page titles: it
    carries no submission id, rank or order (the leaderboard pairs those with teams and methods), only a
    random label that tells the campaigns of one language apart; the host finds the pair behind it in the
    human comparisons of the phase."""
    label = "".join(secrets.choice(BLIND_LETTERS) for _n in range(6))
    return f"{phase.benchmark.name} · {phase.name} · {language.code} · {_('comparison')} {label}"


def top_entries(phase: Phase, language: Language, n: int) -> list[Submission]:
    """The ``n`` best scored entries of the phase in the language by its ranking metric (all images, the
    first reference count), the human row and withdrawn entries left out."""
    ids = list(
        SubmissionScore.objects.filter(
            submission__phase=phase,
            submission__status=JobStatus.SUCCEEDED,
            submission__is_human=False,
            submission__withdrawn_at__isnull=True,
            language=language,
            metric=phase.ranked_by,
            reference_count=phase.reference_counts[0],
            held_out=False,
            fresh=False,
            split=Split.ALL,
        )
        .order_by("-value", "submission_id")
        .values_list("submission_id", flat=True)[:n]
    )
    found = {s.pk: s for s in Submission.objects.filter(pk__in=ids)}
    return [found[i] for i in ids]


def human_evaluation_create(
    *,
    phase_id: int,
    submission_ids: list[int] | None = None,
    top_n: int | None = None,
    language_codes: list[str] | None = None,
    sample_size: int | None = None,
    replication: int = 3,
    batch_size: int = 10,
    open_now: bool = True,
) -> list[HumanComparison]:
    """Create (and open) the side-by-side campaigns of every pair of the chosen entries, per language.

    Entries: ``submission_ids`` (scored entries of the phase), or the ``top_n`` per language. Languages:
    ``language_codes`` or every language the entries share. The better-ranked entry of a pair is the base
    system m1. In one transaction: a campaign that cannot be made (no image files, a sample too large)
    raises ValidationFailed and nothing is created. Pairs compared already are skipped (idempotent).
    Each language with new campaigns also gets a metric run of the phase's text metrics over its
    entries (queued on commit), so that the trust table can use these campaigns when they finish."""
    phase = Phase.objects.select_related("benchmark").filter(pk=phase_id).first()
    if phase is None:
        raise NotFound(_("No such phase."))
    if not submission_ids and not top_n:
        raise ValidationFailed(_("Pick entries, or a number of top entries per language."))
    languages = list(phase.benchmark.languages.order_by("code"))
    if language_codes:
        languages = [lang for lang in languages if lang.code in language_codes]
    chosen: dict[int, list[Submission]] = {}
    for language in languages:
        if submission_ids:
            entries = [
                s
                for s in Submission.objects.filter(
                    pk__in=submission_ids,
                    phase=phase,
                    status=JobStatus.SUCCEEDED,
                    is_human=False,
                    withdrawn_at__isnull=True,
                )
                if language.code in s.languages
            ]
            ranked = {s.pk: r for r, s in enumerate(top_entries(phase, language, 10_000))}
            entries.sort(key=lambda s: ranked.get(s.pk, len(ranked)))
        else:
            entries = top_entries(phase, language, top_n)
        if len(entries) >= 2:
            chosen[language.pk] = entries
    if not chosen:
        raise ValidationFailed(_("No language has two scored entries to compare."))
    created = []
    with transaction.atomic():
        for language in languages:
            for a, b in combinations(chosen.get(language.pk, []), 2):
                if HumanComparison.objects.filter(
                    phase=phase, language=language, entry_a__in=[a, b], entry_b__in=[a, b]
                ).exists():
                    continue
                m1, m2 = entry_system(a, language), entry_system(b, language)
                campaign = sxs_campaign_create(
                    name=blinded_campaign_name(phase, language),
                    language_code=language.code,
                    base_system=m1,
                    test_system=m2,
                    sample_size=sample_size,
                    seed=phase.split_seed,
                    replication=replication,
                    batch_size=batch_size,
                )
                if open_now:
                    campaign = campaign_open(campaign_id=campaign.pk)
                created.append(
                    HumanComparison.objects.create(
                        phase=phase, language=language, entry_a=a, entry_b=b, campaign=campaign
                    )
                )
        for language in languages:
            if any(c.language_id == language.pk for c in created):
                _entries_metric_run(phase, language, chosen[language.pk])
    return created


def _entries_metric_run(phase: Phase, language: Language, entries: list[Submission]) -> None:
    """A metric run of the phase's text metrics over the compared entries' captions in ``language``,
    against the benchmark's references, so that the meta-evaluation (correlations, the trust table)
    can pair the new campaigns' judgments with metric scores once they finish. Queued on commit."""
    reference = BenchmarkLanguage.objects.get(benchmark=phase.benchmark, language=language)
    metrics = [m for m in phase.metrics if m in TEXT_METRICS]
    if not metrics:
        return
    metric_run_create(
        name=f"{phase.benchmark.name} · {phase.name} · {language.code} · entries {', '.join(str(e.pk) for e in entries)}"[
            :200
        ],
        language_code=language.code,
        system_names=[entry_system(e, language).name for e in entries],
        reference_set_id=reference.reference_set_id,
        metrics=metrics,
    )


@dataclass
class HumanPair:
    entry_a: int
    entry_b: int
    campaign: str
    state: str
    n_images: int  # images with at least one judgment
    delta_sxs: float | None  # from entry_b's side: positive when m2 (entry_b) was judged better
    ci_low: float | None
    ci_high: float | None
    n_campaign_images: int = 0  # the campaign's compared images (no control, no identical pair)
    n_complete: int = 0  # images with the campaign's K judgments

    @property
    def complete(self) -> bool:
        return self.n_campaign_images > 0 and self.n_complete >= self.n_campaign_images


@dataclass
class HumanRanking:
    pairs: list[HumanPair] = field(default_factory=list)
    # entry id -> mean ΔS×S from its side over its judged pairs, best first
    ranking: list[tuple[int, float]] = field(default_factory=list)


def human_ranking(phase: Phase, language_code: str) -> HumanRanking | None:
    """The human side of a leaderboard: each compared pair's ΔS×S with its 95% interval, and the entries
    ranked by their mean ΔS×S over their judged pairs. None when no pair of the language was sent."""
    comparisons = list(
        HumanComparison.objects.filter(phase=phase, language__code=language_code).select_related("campaign")
    )
    if not comparisons:
        return None
    result = HumanRanking()
    sums: dict[int, list[float]] = {}
    for comparison in comparisons:
        campaign = comparison.campaign
        results = sxs_results(campaign, n_boot=HUMAN_N_BOOT, seed=phase.split_seed)
        summary = results.summary
        result.pairs.append(
            HumanPair(
                entry_a=comparison.entry_a_id,
                entry_b=comparison.entry_b_id,
                campaign=comparison.campaign.name,
                state=comparison.campaign.get_state_display(),
                n_images=summary.n_images,
                delta_sxs=summary.delta_sxs,
                ci_low=summary.ci_low,
                ci_high=summary.ci_high,
                n_campaign_images=campaign.items.filter(is_control=False, is_identical_pair=False).count(),
                n_complete=sum(
                    len(scores) >= campaign.replication for scores in results.pair_scores.values()
                ),
            )
        )
        if summary.delta_sxs is not None:
            sums.setdefault(comparison.entry_b_id, []).append(summary.delta_sxs)
            sums.setdefault(comparison.entry_a_id, []).append(-summary.delta_sxs)
    result.ranking = sorted(((e, sum(v) / len(v)) for e, v in sums.items()), key=lambda x: (-x[1], x[0]))
    return result


# --- Human agreement for word prediction (seed 002, sec. 4.2) ---------------------------------------------


@dataclass
class EntryWords:
    """One entry on the word-agreement page: its PHR averaged over the report's common words (the same
    words for every entry), and how many of all the words it reaches human recall on."""

    submission_id: int
    method: str
    baseline: bool
    phr: float | None  # mean PHR over WordReport.common_words; None when there is none
    reached: int  # words (of all the report's) where its recall reaches the human recall


@dataclass
class WordReport:
    language: str
    k: int
    words: list
    svg: str
    systems: list[EntryWords]
    # The words where every entry shown reaches human recall: each entry's mean PHR is over these, so the
    # means compare (over each entry's own words, an entry reaching 1 word would stand beside one over 7).
    common_words: list[str] = field(default_factory=list)
    human_precision: float | None = None  # the mean human precision over the common words


def word_agreement_k(phase: Phase, language_code: str, *, most: int = 20) -> tuple[int, int]:
    """The k the word-agreement page opens at, and the largest it offers: k = one less than the fewest
    references an image of the phase has in the language (among images with two or more), so every such
    image takes part (COCO's five: k = 4, as the paper; XM3600's two: k = 1); at most ``most``."""
    from challenges.scoring.selectors import phase_image_ids, phase_references

    language = phase.benchmark.languages.filter(code=language_code).first()
    if language is None:
        return 1, 1
    counts = [
        len(texts)
        for texts in phase_references(phase, language.pk, phase_image_ids(phase)).values()
        if len(texts) >= 2
    ]
    if not counts:
        return 1, 1
    return min(min(counts) - 1, most), min(max(counts) - 1, most)


def word_agreement_report(
    phase: Phase, language_code: str, *, k: int = 4, top: int = 100
) -> WordReport | None:
    """Per frequent word of the phase's references in the language: human precision and recall of the
    (k+1)-th reference against the first k, the model's fitted p; and per scored entry its precision at
    human recall (PHR), averaged over the words where every entry reaches human recall. Words come from the
    language's tokenisation scheme, lowercased. None when the language has no image with k+1 references."""
    from challenges.scoring.selectors import phase_image_ids, phase_references
    from challenges.word_agreement import agreement_svg, human_agreement, system_agreement
    from evaluation.metrics.text.schemes import scheme_for_language

    language = Language.objects.filter(
        code=language_code, benchmark_languages__benchmark=phase.benchmark
    ).first()
    if language is None:
        return None
    scheme = scheme_for_language(language.code, language.tokenizer)

    def words(text: str) -> set[str]:
        return {token.lower() for token in scheme.tokenize(text, language=language.code)}

    image_ids = phase_image_ids(phase)
    references = {
        i: [words(t) for t in texts] for i, texts in phase_references(phase, language.pk, image_ids).items()
    }
    rows = human_agreement(references, k=k, top=top)
    if not rows or not any(len(v) > k for v in references.values()):
        return None
    scored = []
    for submission in Submission.objects.filter(
        phase=phase, status=JobStatus.SUCCEEDED, is_human=False, withdrawn_at__isnull=True
    ).order_by("pk"):
        if language.code not in submission.languages:
            continue
        captions = dict(
            SubmissionCaption.objects.filter(submission=submission, language=language).values_list(
                "image_id", "text"
            )
        )
        phr = {
            s.word: s.phr
            for s in system_agreement({i: words(t) for i, t in captions.items()}, references, rows, k=k)
            if s.phr is not None
        }
        scored.append((submission, phr))
    common = [r.word for r in rows if scored and all(r.word in phr for _s, phr in scored)]
    human = {r.word: r.human_precision for r in rows}
    systems = [
        EntryWords(
            submission_id=submission.pk,
            method=submission.method_name,
            baseline=submission.is_baseline,
            phr=sum(phr[w] for w in common) / len(common) if common else None,
            reached=len(phr),
        )
        for submission, phr in scored
    ]
    known = [human[w] for w in common if human[w] is not None]
    return WordReport(
        language=language.code,
        k=k,
        words=rows,
        svg=agreement_svg(
            rows,
            k=k,
            labels=(_("recall"), _("precision"), _("human precision against recall per word")),
        ),
        systems=systems,
        common_words=common,
        human_precision=sum(known) / len(known) if known else None,
    )
