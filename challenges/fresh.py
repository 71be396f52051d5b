"""Fresh references: a benchmark language's second set of references, written and verified on this platform.

A benchmark built from a public dataset (XM3600's references are CC-BY 4.0) hides nothing from a team that
has the dataset: a model trained on its captions tops the board. Fresh references are the captions of one
of the platform's own caption campaigns over the same images (the two-screen protocol), kept only where
their verification campaigns rated them well enough and copied, as they are then, into a reference set of
their own (every entry is scored on the same references, whatever the campaign gets later); from then on
every entry is also scored on them, and the leaderboard shows both rankings and each entry's rank change. The campaign's captions are sealed: no
export or research API shows them (``Campaign.captions_sealed``) until a manager clears the flag after the
phases that use them are closed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from challenges.models import Benchmark, BenchmarkLanguage, Phase, ScoringUnit, Submission
from core.errors import NotFound, ValidationFailed
from core.jobs.models import JobStatus
from evaluation.human.selectors import campaign_references
from evaluation.metrics.references import caption_campaign_get
from evaluation.models import Reference, ReferenceSet, ReferenceSetKind

RATINGS = ("", "MEDIUM", "GOOD")
DEFAULT_RATING = "GOOD"
_KEPT = {
    "": "every counted caption",
    "MEDIUM": "captions rated MEDIUM or better",
    "GOOD": "captions rated GOOD or better",
}


@dataclass
class PhaseCoverage:
    phase: Phase
    covered: int  # images of the phase with at least one fresh reference
    images: int

    @property
    def complete(self) -> bool:
        return self.covered == self.images


@dataclass
class FreshReferences:
    link: BenchmarkLanguage
    reference_set: ReferenceSet
    captions: int
    coverage: list[PhaseCoverage] = field(default_factory=list)

    def summary(self) -> str:
        kept = _KEPT[self.reference_set.min_verified_rating]
        lines = [
            f"Fresh {self.link.language.code} references of “{self.link.benchmark.name}”: reference set "
            f"“{self.reference_set.name}”, {self.captions} captions copied from {self.reference_set.source_name} "
            f"({kept}); the campaign's captions are now sealed (no export, no research API)."
        ]
        for item in self.coverage:
            state = (
                "scored on them from now on"
                if item.complete
                else "not scored on them until every image has one"
            )
            lines.append(f"  {item.phase.name}: {item.covered} of {item.images} images have one: {state}.")
        lines.append(
            "Entries scored before now have no scores on them: score them again with the phase action "
            "“Score the entries again” (or phase_rescore)."
        )
        return "\n".join(lines)


def _coverage(phase: Phase, reference_set: ReferenceSet) -> PhaseCoverage:
    from evaluation.runs.selectors import reference_texts

    image_ids = list(phase.image_set.images.values_list("pk", flat=True))
    texts = reference_texts(reference_set, image_ids)
    return PhaseCoverage(
        phase=phase, covered=sum(1 for i in image_ids if texts.get(i)), images=len(image_ids)
    )


def fresh_references_attach(
    *, benchmark_id: int, language_code: str, campaign_id: int, min_verified_rating: str = DEFAULT_RATING
) -> FreshReferences:
    """Copy the caption campaign's captions into the fresh references of the benchmark's language, sealed.

    ``min_verified_rating``: keep only the captions whose median verification rating is at least this
    ("GOOD", "MEDIUM"; "" keeps every counted caption). Refuses a campaign that is not a caption campaign of
    the language, the campaign the language's own references come from, a language that has fresh
    references already, and captions that cover no image of any phase. Entries scored from now on get both
    scores; a phase whose images are not all covered is not scored on them (the summary says which).
    Raises NotFound, ValidationFailed."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        raise NotFound("No such benchmark.")
    link = (
        BenchmarkLanguage.objects.select_related(
            "language", "reference_set", "fresh_reference_set", "benchmark"
        )
        .filter(benchmark=benchmark, language__code=language_code)
        .first()
    )
    if link is None:
        raise ValidationFailed(f"“{language_code}” is not a language of “{benchmark.name}”.")
    if min_verified_rating not in RATINGS:
        raise ValidationFailed(
            f"A minimum rating is one of GOOD, MEDIUM or empty, not “{min_verified_rating}”."
        )
    campaign = caption_campaign_get(campaign_id)
    if campaign.language_id != link.language_id:
        raise ValidationFailed(
            f"Campaign #{campaign.pk} writes {campaign.language.code} captions, not {language_code}."
        )
    if link.fresh_reference_set_id:
        raise ValidationFailed(
            f"The {language_code} references of “{benchmark.name}” have fresh references already "
            f"(“{link.fresh_reference_set.name}”); remove them from the benchmark in the admin first."
        )
    if link.reference_set.campaign_id == campaign.pk:
        raise ValidationFailed(
            f"Campaign #{campaign.pk} is where the benchmark's {language_code} references come from already."
        )
    name = f"{benchmark.name} · {language_code} · fresh (campaign #{campaign.pk})"[:200]
    if ReferenceSet.objects.filter(name=name).exists():
        raise ValidationFailed(
            f"A reference set “{name}” exists already; rename or delete it in the admin first."
        )
    rows = list(
        campaign_references(campaign.pk, min_verified_rating=min_verified_rating)
        .order_by("image_id", "pk")
        .values_list("image_id", "text")
    )
    if not rows:
        kept = f"rated {min_verified_rating} or better" if min_verified_rating else "counted"
        raise ValidationFailed(
            f"Campaign #{campaign.pk} has no caption {kept} yet"
            + (" (run its verification campaign first)." if min_verified_rating else ".")
        )
    captions = len(rows)
    with transaction.atomic():
        # A copy, as the captions are now: every entry is scored on the same references, whatever is
        # written or excluded in the campaign later (new fresh references replace these, then a rescore).
        reference_set = ReferenceSet.objects.create(
            name=name,
            language=link.language,
            kind=ReferenceSetKind.IMPORTED,
            source_name=f"campaign #{campaign.pk} “{campaign.name}”"[:300],
            source_format="campaign",
            source_sha256=hashlib.sha256(
                "\n".join(f"{image_id}\t{text}" for image_id, text in rows).encode("utf-8")
            ).hexdigest(),
            min_verified_rating=min_verified_rating,
            description=f"Fresh references of {benchmark.name}, copied from the campaign's captions "
            f"({_KEPT[min_verified_rating]}); never exported while its phases run.",
        )
        positions: dict[int, int] = {}
        references = []
        for image_id, text in rows:
            position = positions.get(image_id, 0)
            positions[image_id] = position + 1
            references.append(
                Reference(reference_set=reference_set, image_id=image_id, position=position, text=text)
            )
        Reference.objects.bulk_create(references, batch_size=500)
        coverage = [
            _coverage(phase, reference_set)
            for phase in benchmark.phases.select_related("image_set").order_by("pk")
        ]
        if not any(item.covered for item in coverage):
            raise ValidationFailed(
                f"Campaign #{campaign.pk}'s captions cover no image of the benchmark's phases: caption the "
                "phase's images (a caption campaign made from its image set)."
            )
        link.fresh_reference_set = reference_set
        link.save(update_fields=["fresh_reference_set", "updated_at"])
        campaign.captions_sealed = True
        campaign.save(update_fields=["captions_sealed", "updated_at"])
    return FreshReferences(link=link, reference_set=reference_set, captions=captions, coverage=coverage)


def phase_rescore(*, phase_id: int) -> list[Submission]:
    """Score the phase's scored entries again (after fresh references were added, say), each language a unit
    of the job engine as before. An entry stays on the leaderboard with its old scores until each of its
    languages' new scores replace them (a unit stores its language's rows in one transaction); entries still
    scoring, failed or withdrawn are left alone. Returns the entries sent. Raises NotFound."""
    from challenges.scoring.tasks import SUBMISSION_SCORING
    from core.jobs.engine import units_send

    if not Phase.objects.filter(pk=phase_id).exists():
        raise NotFound("No such phase.")
    sent = []
    with transaction.atomic():
        entries = Submission.objects.select_for_update().filter(
            phase_id=phase_id, status=JobStatus.SUCCEEDED, withdrawn_at__isnull=True
        )
        for entry in entries.order_by("pk"):
            units = list(entry.units.values_list("pk", flat=True))
            entry.units.update(status=ScoringUnit.UNIT_PENDING, error="", updated_at=timezone.now())
            entry_id = entry.pk
            transaction.on_commit(
                lambda entry_id=entry_id, units=units: units_send(SUBMISSION_SCORING, entry_id, units)
            )
            sent.append(entry)
    return sent
