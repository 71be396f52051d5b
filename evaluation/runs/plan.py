"""Metric runs: validate and create a run with its chunks, send it to the workers, resume it.

The work of one chunk is in :mod:`evaluation.runs.compute`; claiming, sending, resuming and the
orphan sweep are the job engine's (:mod:`core.jobs.engine`), for the kind registered in
:mod:`evaluation.runs.tasks`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from annotation.models import CaptioningSystem, Image, Language, SystemCaption
from core.errors import NotFound, ValidationFailed
from core.jobs.engine import ResumeResult, job_enqueue, job_resume, job_units_store
from core.lookups import each_named
from evaluation.clip_choice import clip_model_registered, clip_orientation
from evaluation.human.selectors import campaign_references
from evaluation.metrics.signatures import clip_signature
from evaluation.metrics.text.meteor import meteor_setting
from evaluation.metrics.text.schemes import SchemeError, scheme_for_language, text_signature
from evaluation.metrics.text.scoring import meteor_signature
from evaluation.models import (
    ALL_METRICS,
    CLIP_METRICS,
    TEXT_METRICS,
    ChunkKind,
    ImageSet,
    MetricChunk,
    MetricRun,
    Reference,
    ReferenceSet,
    ReferenceSetKind,
)
from evaluation.models.fields import starter
from evaluation.runs.compute import CIDER_DF_CHOICES, CIDER_DF_REFSET, CIDER_DF_TEST, meteor_config
from evaluation.runs.tasks import METRIC_RUN

__all__ = ["CIDER_DF_CHOICES", "CIDER_DF_TEST", "ResumeResult"]

KEYS_SHOWN = 5
METRIC_GROUPS = {"text": TEXT_METRICS, "clip": CLIP_METRICS, "all": ALL_METRICS}


# --- Validation -------------------------------------------------------------------------------


def _examples(keys) -> str:
    keys = sorted(keys)
    return ", ".join(keys[:KEYS_SHOWN]) + (", …" if len(keys) > KEYS_SHOWN else "")


def _keys(image_ids) -> list[str]:
    return list(Image.objects.filter(pk__in=list(image_ids)[: KEYS_SHOWN * 4]).values_list("key", flat=True))


def metrics_parse(values) -> list[str]:
    """Metric names (any case; ``text``, ``clip`` and ``all`` name groups; commas split) in canonical order.

    Raises ValidationFailed for an unknown name or an empty list.
    """
    by_lower = {name.lower(): name for name in ALL_METRICS}
    wanted: set[str] = set()
    unknown = []
    for value in values or ():
        for part in str(value).split(","):
            part = part.strip()
            if not part:
                continue
            if part.lower() in METRIC_GROUPS:
                wanted.update(METRIC_GROUPS[part.lower()])
            elif part.lower() in by_lower:
                wanted.add(by_lower[part.lower()])
            else:
                unknown.append(part)
    if unknown:
        raise ValidationFailed(
            f"Unknown metric(s): {', '.join(unknown)}. Choose from {', '.join(ALL_METRICS)} (or text, clip, all)."
        )
    if not wanted:
        raise ValidationFailed("Choose at least one metric.")
    return [name for name in ALL_METRICS if name in wanted]


@dataclass
class RunPlan:
    """A validated run, before anything is stored: the images each system is scored on."""

    name: str
    language: Language
    reference_set: ReferenceSet
    image_set: ImageSet | None
    metrics: list[str]
    systems: list[CaptioningSystem]
    images: dict[int, list[int]] = field(default_factory=dict)  # system id -> image ids
    params: dict = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)  # metric -> signature

    @property
    def text_metrics(self) -> list[str]:
        return [m for m in self.metrics if m in TEXT_METRICS]

    @property
    def clip_metrics(self) -> list[str]:
        return [m for m in self.metrics if m in CLIP_METRICS]


def reference_image_ids(reference_set: ReferenceSet) -> set[int]:
    if reference_set.kind == ReferenceSetKind.CAMPAIGN:
        rows = campaign_references(
            reference_set.campaign_id, min_verified_rating=reference_set.min_verified_rating
        )
    else:
        rows = Reference.objects.filter(reference_set=reference_set)
    return set(rows.values_list("image_id", flat=True).distinct())


def metric_run_plan(
    *,
    name: str | None,
    language_code: str,
    system_names: list[str],
    reference_set_id: int,
    image_set_id: int | None = None,
    metrics: list[str],
    image_orientation: str | None = None,
    cider_df: str = CIDER_DF_TEST,
    scheme: str | None = None,
    clip_model_name: str | None = None,
) -> RunPlan:
    """Check everything a run needs and decide the images per system; stores nothing.

    Without an image set, a system is scored on every image that has references and a
    caption from it in the language. With one, every image of the set must have references
    and a caption from every system. ``scheme`` overrides the language's tokenisation scheme
    for this run's text metrics (recorded in ``params["tokenizer"]``). A run with CLIP metrics
    records its CLIP settings in ``params``, ``image_orientation`` among them (``"exif"`` or
    ``"stored"``; None: the ``CLIP_IMAGE_ORIENTATION`` setting). ``cider_df`` is a key of
    :data:`CIDER_DF_CHOICES`; the params record it as ``test`` or ``refset:<reference set name>``.
    ``clip_model_name`` names a registered CLIP model (``ClipModel``, e.g. a fine-tuned one) whose
    weights the CLIP metrics use instead of the ``CLIP_*`` settings.
    Raises ValidationFailed / NotFound with the reason, also when the scheme is unknown, is for
    another language or its library is not installed here.
    """
    metrics = metrics_parse(metrics)
    orientation = clip_orientation(image_orientation)
    if cider_df not in CIDER_DF_CHOICES:
        raise ValidationFailed(
            f"Unknown CIDEr document-frequency source “{cider_df}”: choose {' or '.join(CIDER_DF_CHOICES)}."
        )
    language = Language.objects.filter(code=language_code).first()
    if language is None:
        raise ValidationFailed(f"Unknown language “{language_code}”.")
    systems = each_named(
        CaptioningSystem.objects.all(),
        "name",
        system_names,
        empty="Name at least one captioning system.",
        unknown=lambda missing: f"Unknown captioning system(s): {', '.join(missing)}.",
    )

    reference_set = (
        ReferenceSet.objects.select_related("language", "campaign").filter(pk=reference_set_id).first()
    )
    if reference_set is None:
        raise NotFound(f"There is no reference set #{reference_set_id}.")
    if reference_set.language_id != language.pk:
        raise ValidationFailed(
            f"The reference set “{reference_set.name}” is in “{reference_set.language.code}”, not “{language.code}”."
        )
    image_set = None
    if image_set_id is not None:
        image_set = ImageSet.objects.filter(pk=image_set_id).first()
        if image_set is None:
            raise NotFound(f"There is no image set #{image_set_id}.")
        if image_set.language_id is not None and image_set.language_id != language.pk:
            raise ValidationFailed(f"The image set “{image_set.name}” is for another language.")

    with_references = reference_image_ids(reference_set)
    if not with_references:
        why = (
            f": nobody has written a caption in the campaign “{reference_set.campaign.name}” yet"
            if reference_set.kind == ReferenceSetKind.CAMPAIGN
            else ""
        )
        raise ValidationFailed(f"The reference set “{reference_set.name}” has no references{why}.")
    in_set: set[int] | None = None
    if image_set is not None:
        in_set = set(image_set.images.values_list("pk", flat=True))
        if not in_set:
            raise ValidationFailed(f"The image set “{image_set.name}” has no images.")
        lacking = in_set - with_references
        if lacking:
            raise ValidationFailed(
                f"{len(lacking)} of the {len(in_set)} images of “{image_set.name}” have no reference in "
                f"“{reference_set.name}” ({_examples(_keys(lacking))})."
            )

    plan = RunPlan(
        name=(name or "").strip() or f"{', '.join(s.name for s in systems)} vs {reference_set.name}"[:200],
        language=language,
        reference_set=reference_set,
        image_set=image_set,
        metrics=metrics,
        systems=systems,
    )
    for system in systems:
        captioned = set(
            SystemCaption.objects.filter(system=system, language=language).values_list("image_id", flat=True)
        )
        if not captioned:
            raise ValidationFailed(f"“{system.name}” has no captions in {language.name} ({language.code}).")
        if in_set is not None:
            missing = in_set - captioned
            if missing:
                raise ValidationFailed(
                    f"“{system.name}” has no {language.code} caption for {len(missing)} of the {len(in_set)} images "
                    f"of “{image_set.name}” ({_examples(_keys(missing))})."
                )
            plan.images[system.pk] = sorted(in_set)
        else:
            scored = captioned & with_references
            if not scored:
                raise ValidationFailed(
                    f"None of the {language.code} captions of “{system.name}” is of an image with references in "
                    f"“{reference_set.name}”."
                )
            plan.images[system.pk] = sorted(scored)

    scheme_name = (scheme or "").strip() or language.tokenizer
    plan.params = {
        "tokenizer": scheme_name,
        "tokenizer_from": "run" if (scheme or "").strip() else "language",
    }
    if plan.text_metrics:
        plan.params["cider_df"] = (
            CIDER_DF_TEST if cider_df == CIDER_DF_TEST else f"{CIDER_DF_REFSET}:{reference_set.name}"
        )
        try:
            chosen = scheme_for_language(language.code, scheme_name)
            text_sig = text_signature(chosen, df_source=plan.params["cider_df"], language=language.code)
        except SchemeError as exc:
            raise ValidationFailed(f"Cannot score {language.name} ({language.code}) text: {exc}.") from None
        plan.signatures |= dict.fromkeys(plan.text_metrics, text_sig)
    if "METEOR" in plan.metrics:
        config = meteor_config()
        plan.params["meteor"] = meteor_setting(
            language.code, paraphrase_languages=config.paraphrase_languages()
        ).name
        plan.signatures["METEOR"] = meteor_signature(plan.signatures["METEOR"], plan.params["meteor"])
    if plan.clip_metrics:
        all_ids = set().union(*plan.images.values())
        without_file = set(
            Image.objects.filter(pk__in=all_ids)
            .filter(Q(file="") | Q(content_hash__isnull=True))
            .values_list("key", flat=True)
        )
        if without_file:
            raise ValidationFailed(
                f"CLIP metrics need the image files: {len(without_file)} images have none "
                f"({_examples(without_file)}). Import the files or leave out {', '.join(plan.clip_metrics)}."
            )
        registered = clip_model_registered(clip_model_name)
        if registered is not None:
            plan.params |= registered.clip_params
        else:
            plan.params |= {
                "clip_model": settings.CLIP_MODEL,
                "clip_pretrained": settings.CLIP_PRETRAINED,
                "clip_checkpoint": settings.CLIP_CHECKPOINT,
            }
        plan.params |= {
            "clip_prompt_prefix": settings.CLIP_PROMPT_PREFIX,
            "clip_chunk_size": settings.METRIC_CLIP_CHUNK_SIZE,
            "image_orientation": orientation,
        }
        if settings.CLIP_AUTOCAST:  # fp32 runs keep the parameters they always had
            plan.params["clip_autocast"] = settings.CLIP_AUTOCAST
        if settings.CLIP_IMAGE_PIPELINE != "pil":  # likewise: PIL runs keep their parameters
            plan.params["clip_image_pipeline"] = settings.CLIP_IMAGE_PIPELINE
        # Completed by the worker, which knows the checkpoint's hash (see chunks._compute_clip).
        clip_sig = clip_signature(
            model=plan.params["clip_model"],
            pretrained=plan.params["clip_pretrained"],
            checkpoint=plan.params["clip_checkpoint"],
            prompt_prefix=plan.params["clip_prompt_prefix"],
            orientation=orientation,
            autocast=settings.CLIP_AUTOCAST,
            image_pipeline=settings.CLIP_IMAGE_PIPELINE,
        )
        plan.signatures |= dict.fromkeys(plan.clip_metrics, clip_sig)
    return plan


# --- Create, enqueue, resume ------------------------------------------------------------------


def metric_run_create(*, user=None, enqueue: bool = True, **plan_args) -> MetricRun:
    """Validate (:func:`metric_run_plan`, which raises ValidationFailed / NotFound before anything is
    stored), then store and enqueue the run (:func:`metric_run_store`; JobsUnavailable, the run stored
    and marked failed, when the broker is unreachable)."""
    return metric_run_store(plan=metric_run_plan(**plan_args), user=user, enqueue=enqueue)


def metric_run_store(*, plan: RunPlan, user=None, enqueue: bool = True) -> MetricRun:
    """Store a planned run and its chunks, and enqueue it on commit.

    ``plan`` comes from :func:`metric_run_plan` in the same request (the admin's form plans once
    to validate and passes the plan here). Chunks: one ``text`` chunk per system when text metrics
    are asked for, and ``clip`` chunks of ``METRIC_CLIP_CHUNK_SIZE`` captions per system for CLIP
    metrics. One transaction; the chunks are sent to the workers only once it commits (a
    rolled-back caller sends nothing). Raises :class:`JobsUnavailable` (after the run is stored and
    marked failed) when the broker is unreachable. In eager mode (embedded default, tests) the run
    has been computed when this returns, if no outer transaction is open.
    """
    size = max(1, int(settings.METRIC_CLIP_CHUNK_SIZE))
    with transaction.atomic():
        run = MetricRun.objects.create(
            name=plan.name,
            language=plan.language,
            reference_set=plan.reference_set,
            image_set=plan.image_set,
            metrics=plan.metrics,
            params=plan.params,
            signatures=plan.signatures,
            created_by=starter(user),
        )
        run.systems.set(plan.systems)
        chunks = []
        for system in plan.systems:
            image_ids = plan.images[system.pk]
            if plan.text_metrics:
                chunks.append(
                    MetricChunk(run=run, system=system, kind=ChunkKind.TEXT, index=0, image_ids=image_ids)
                )
            if plan.clip_metrics:
                for index, start in enumerate(range(0, len(image_ids), size)):
                    chunks.append(
                        MetricChunk(
                            run=run,
                            system=system,
                            kind=ChunkKind.CLIP,
                            index=index,
                            image_ids=image_ids[start : start + size],
                        )
                    )
        job_units_store(METRIC_RUN, job=run, units=chunks, enqueue=enqueue)
    return run


def metric_run_enqueue(*, run: MetricRun) -> None:
    """Send the run's pending chunks (text chunks first) to the workers once the current transaction
    commits; see :func:`core.jobs.engine.job_enqueue` (JobsUnavailable from the commit, run failed)."""
    job_enqueue(METRIC_RUN, job=run)


def metric_run_resume(*, run_id: int) -> ResumeResult:
    """Re-enqueue (on commit) every chunk of the run that is not done: pending, failed and orphaned
    chunks (running, but silent for ``JOB_ORPHAN_SECONDS``: their worker died); chunks whose worker is
    alive are left to it. Locks the run row. Idempotent: a succeeded run is left as it is; a run whose
    chunks are all done is finalised. Raises NotFound, and JobsUnavailable from the commit."""
    return job_resume(METRIC_RUN, job_id=run_id)
