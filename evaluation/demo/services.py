"""Load the demo's finished, simulated side-by-side set, so the report page has numbers on first start.

On top of ``manage.py load_demo`` (its 17 photographs and its languages de, ar, ja), this stores:

* four simulated systems, ``sim-a`` … ``sim-d``, with a caption in each language for every photo,
  and an imported reference set per language with two hand-written references per photo
  (:mod:`evaluation.demo.captions`);
* three simulated raters per language (``sim-rater-de-1`` …: annotators with no usable password,
  pseudonym ``SIM-de-1`` …, named "Simulated rater" on their account);
* per language, one side-by-side campaign per pair of systems (6 pairs: 18 campaigns), K = 3 with
  one control of each kind, created, opened, worked and closed through the platform's services:
  each rater asks for batches, judges every pair (the score from the seeded model of
  :mod:`evaluation.demo.simulation`, turned into the button that gives it for the side the server
  drew) and submits, as a person would, so every selector counts it as submitted work;
* per language, one text-metric run (BLEU-1 … 4, ROUGE-L, CIDEr-D) of the four systems against the
  references, through the metric-run service. METEOR (Java) and the CLIP metrics (model weights) are
  left out: the demo needs neither;
* a retrieval, a zero-shot and a foil check of the demo's tiny random-weight CLIP model
  (:mod:`evaluation.demo.clip_probes`), labelled as not results, for the CLIP trust table.

Everything a person sees says "simulated". The open German side-by-side campaign of ``load_demo``
is not touched.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.assignment.engine import batch_request
from annotation.models import (
    Annotator,
    AnnotatorSkill,
    Campaign,
    CaptioningSystem,
    Image,
    Language,
    SkillLevel,
    SystemCaption,
)
from annotation.services import work
from annotation.services.annotators import annotator_create
from annotation.services.campaigns import campaign_close, campaign_open, sxs_campaign_create
from core.errors import NoWorkAvailable, ValidationFailed
from core.scales import score_to_choice
from evaluation.demo.captions import CAPTIONS, SIM_SYSTEMS
from evaluation.demo.clip_probes import demo_clip_checks_load
from evaluation.demo.simulation import RaterModel
from evaluation.models import MetricRun, Reference, ReferenceSet, ReferenceSetKind, RunStatus
from evaluation.runs.plan import metric_run_create, metric_run_resume

RATERS_PER_LANGUAGE = 3  # K
BATCH_SIZE = 10
METRICS = ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr-D"]
CAMPAIGN_SEED = 3600  # draws each campaign's control items (the campaign's seed is this + its index)
RATER_EMAIL_DOMAIN = "simulated.invalid"  # RFC 2606: never delivered


@dataclass
class DemoResultsSummary:
    systems_created: int = 0
    captions: int = 0
    captions_created: int = 0
    references: int = 0
    references_created: int = 0
    raters: int = 0
    raters_created: int = 0
    judgments_created: int = 0
    campaigns: list[tuple[str, str, bool]] = field(default_factory=list)  # (name, language, created)
    run_ids: list[int] = field(default_factory=list)
    runs_created: int = 0
    runs_resumed: int = 0
    clip_checks: list[tuple[str, int, bool]] = field(default_factory=list)  # (kind, check id, created)

    @property
    def changed(self) -> bool:
        return bool(
            self.systems_created
            or self.captions_created
            or self.references_created
            or self.raters_created
            or self.judgments_created
            or self.runs_created
            or self.runs_resumed
            or any(created for *_, created in self.campaigns)
            or any(created for *_, created in self.clip_checks)
        )


def reference_set_name(language: Language) -> str:
    return f"Demo references (hand-written, simulated set): {language.name}"


def run_name(language: Language) -> str:
    return f"Demo (simulated set): text metrics in {language.name}"


def campaign_name(language: Language, m1: str, m2: str) -> str:
    # Not the systems' names: sxs_campaign_create refuses them (annotators see campaign names).
    return f"Demo (simulated raters): {m2[-1].upper()} vs {m1[-1].upper()} in {language.name}"


def pairs() -> list[tuple[str, str]]:
    """(m1, m2) of each comparison, every pair of simulated systems once; every other pair is
    turned round, so that ΔS×S has both signs."""
    names = [system.name for system in SIM_SYSTEMS]
    return [(b, a) if n % 2 else (a, b) for n, (a, b) in enumerate(itertools.combinations(names, 2))]


def rater_username(code: str, n: int) -> str:
    return f"sim-rater-{code}-{n}"


def _photos_and_languages() -> tuple[dict[str, Image], dict[str, Language]]:
    keys = sorted({key for photos in CAPTIONS.values() for key in photos})
    images = {image.key: image for image in Image.objects.filter(key__in=keys).exclude(file="")}
    languages = {language.code: language for language in Language.objects.filter(code__in=CAPTIONS)}
    missing = [key for key in keys if key not in images] + [
        code for code in CAPTIONS if code not in languages
    ]
    if missing:
        raise ValidationFailed(
            f"The demo is not loaded ({len(missing)} of its photographs or languages are missing, e.g. "
            f"{', '.join(missing[:3])}): run `manage.py load_demo` first. Nothing was stored."
        )
    return images, languages


def _rater_ensure(language: Language, n: int, summary: DemoResultsSummary) -> Annotator:
    username = rater_username(language.code, n)
    user = get_user_model().objects.filter(username=username).select_related("annotator").first()
    if user is None:
        annotator = annotator_create(
            username=username,
            email=f"{username}@{RATER_EMAIL_DOMAIN}",
            skills=((language.code, SkillLevel.NATIVE),),
            reads_english=False,
        )
        # The pseudonym is what exports and result pages show instead of the username.
        Annotator.objects.filter(pk=annotator.pk).update(pseudonym=f"SIM-{language.code}-{n}")
        get_user_model().objects.filter(pk=annotator.user_id).update(
            first_name="Simulated rater", last_name="(demo, not a person)"
        )
        summary.raters_created += 1
        annotator.refresh_from_db()
        return annotator
    annotator = getattr(user, "annotator", None)
    if annotator is None or user.has_usable_password():
        raise ValidationFailed(
            f"The account “{username}” exists and is not a simulated rater of the demo: rename it first."
        )
    AnnotatorSkill.objects.get_or_create(
        annotator=annotator, language=language, defaults={"level": SkillLevel.NATIVE}
    )
    return annotator


def _judge_all(
    campaign: Campaign, raters: list[Annotator], code: str, model: RaterModel, summary: DemoResultsSummary
) -> None:
    """Every rater takes batches until none is left, judges each pair with the model and submits."""
    photos = CAPTIONS[code]

    def quality(caption: SystemCaption, image_key: str) -> float:
        if caption.image.key != image_key:  # the m2 side of a wrong-image control: another photo
            return model.wrong_image_quality
        grade, _ = photos[image_key].systems[caption.system.name]
        return model.quality(grade, f"{code}|{caption.system.name}|{image_key}")

    for rater in raters:
        while True:
            try:
                batch, _ = batch_request(annotator=rater, campaign_id=campaign.pk)
            except NoWorkAvailable:
                break
            assignments = batch.assignments.select_related(
                "item__image",
                "item__caption_m1__system",
                "item__caption_m1__image",
                "item__caption_m2__system",
                "item__caption_m2__image",
            ).order_by("position")
            for assignment in assignments:
                item = assignment.item
                key = item.image.key
                score = model.score(
                    rater=rater.user.username,
                    judgment=f"{campaign.name}|{item.control_kind or 'pair'}|{key}",
                    q_m1=quality(item.caption_m1, key),
                    q_m2=quality(item.caption_m2, key),
                )
                work.sxs_judgment_save(
                    annotator=rater,
                    batch_id=batch.pk,
                    assignment_id=assignment.pk,
                    choice=score_to_choice(score, assignment.m2_side).code,
                )
                summary.judgments_created += 1
            work.judgment_batch_submit(annotator=rater, batch_id=batch.pk, submit_key=uuid.uuid4().hex)


def demo_results_load(*, model: RaterModel | None = None) -> DemoResultsSummary:
    """Load the simulated side-by-side set (see the module docstring) on top of ``load_demo``.

    Idempotent: what exists is found by name and left as it is (a second run changes nothing); a
    demo run that failed is resumed. One transaction; the metric runs are sent to the workers when
    it commits (with the embedded default's eager tasks they are computed then, in this process).
    ``model``: the simulated raters' model (default: :class:`RaterModel` with its seed). Raises
    ValidationFailed, storing nothing, when the demo's photos or languages are missing, or when an
    account with a simulated rater's name exists and is not one; JobsUnavailable (after the commit,
    the runs marked failed and resumable by a re-run) when the job broker is unreachable.
    """
    model = model or RaterModel()
    summary = DemoResultsSummary()
    with transaction.atomic():
        images, languages = _photos_and_languages()
        systems: dict[str, CaptioningSystem] = {}
        for spec in SIM_SYSTEMS:
            systems[spec.name], created = CaptioningSystem.objects.get_or_create(
                name=spec.name, defaults={"description": spec.description}
            )
            summary.systems_created += int(created)

        for code, photos in CAPTIONS.items():
            language = languages[code]
            reference_set, _ = ReferenceSet.objects.get_or_create(
                name=reference_set_name(language),
                defaults={
                    "language": language,
                    "kind": ReferenceSetKind.IMPORTED,
                    "source_name": "evaluation/demo/captions.py",
                    "source_format": "demo",
                    "description": "Two references per photograph, written by hand for the demo's simulated "
                    "side-by-side set (not collected from annotators).",
                },
            )
            if reference_set.language_id != language.pk:
                raise ValidationFailed(f"The reference set “{reference_set.name}” is in another language.")
            for key, photo in photos.items():
                image = images[key]
                for name, (_, text) in photo.systems.items():
                    _, created = SystemCaption.objects.get_or_create(
                        system=systems[name], image=image, language=language, defaults={"text": text}
                    )
                    summary.captions += 1
                    summary.captions_created += int(created)
                for position, text in enumerate(photo.references):
                    _, created = Reference.objects.get_or_create(
                        reference_set=reference_set, image=image, position=position, defaults={"text": text}
                    )
                    summary.references += 1
                    summary.references_created += int(created)

            raters = [_rater_ensure(language, n, summary) for n in range(1, RATERS_PER_LANGUAGE + 1)]
            summary.raters += len(raters)

            for index, (m1, m2) in enumerate(pairs()):
                name = campaign_name(language, m1, m2)
                campaign = Campaign.objects.filter(name=name).first()
                created = campaign is None
                if created:
                    campaign = sxs_campaign_create(
                        name=name,
                        language_code=code,
                        base_system=systems[m1],
                        test_system=systems[m2],
                        seed=CAMPAIGN_SEED + index,
                        batch_size=BATCH_SIZE,
                        replication=RATERS_PER_LANGUAGE,
                        controls_identical=1,
                        controls_wrong_image=1,
                    )
                    campaign_open(campaign_id=campaign.pk)
                    _judge_all(campaign, raters, code, model, summary)
                    campaign_close(campaign_id=campaign.pk)
                summary.campaigns.append((name, code, created))

            run = MetricRun.objects.filter(name=run_name(language), language=language).order_by("pk").first()
            if run is None:
                run = metric_run_create(
                    name=run_name(language),
                    language_code=code,
                    system_names=[spec.name for spec in SIM_SYSTEMS],
                    reference_set_id=reference_set.pk,
                    metrics=METRICS,
                )
                summary.runs_created += 1
            elif run.status != RunStatus.SUCCEEDED:
                # Failed, or left queued by a process that died: chunks are idempotent, so sending
                # the unfinished ones again costs at most time.
                metric_run_resume(run_id=run.pk)
                summary.runs_resumed += 1
            summary.run_ids.append(run.pk)
        summary.clip_checks = demo_clip_checks_load(
            reference_sets=[reference_set_name(languages[code]) for code in CAPTIONS]
        )
    return summary
