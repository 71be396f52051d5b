"""Plan, store, enqueue and resume CLIP fine-tuning runs; register CLIP models metric runs can choose.

A run is planned first (every reason it cannot run is found before anything is stored), then stored
with its data frozen in ``ClipFineTune.data`` and sent to a worker on commit. The data:

* pairs (image, human caption) for the contrastive loss: the written captions of the chosen caption
  campaigns, and optionally XM3600 caption files (image keys of the platform);
* rated captions (image, caption, rating 1-4) for the Pearson loss: screen-1 ratings of the prompt
  system's (English) captions in those caption campaigns, verification ratings of human captions in
  rating campaigns, and optionally a ratings CSV. NOT-ENOUGH-INFO is left out.

Images are split into train / dev / test by ``split_seed`` (``evaluation.metrics.clip.finetune.split_images``);
every item follows its image.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from annotation.models import (
    DONE_STATES,
    Campaign,
    CampaignKind,
    Image,
    Language,
    Rating,
)
from core.errors import Conflict, NotFound, ValidationFailed
from core.jobs.engine import job_enqueue, job_resume, unit_run
from core.scales import RATING
from evaluation.clip_choice import clip_model_registered
from evaluation.finetune.compute import run_compute
from evaluation.finetune.tasks import FINE_TUNE
from evaluation.human.selectors import reference_captions
from evaluation.metrics.clip.finetune import FineTuneConfig, split_images
from evaluation.metrics.clip.finetune_files import RatingsFileError, read_ratings_csv
from evaluation.metrics.clip.tiny import TINY_CLIP_CONFIG, TINY_CLIP_NAME, tiny_clip_checkpoint
from evaluation.metrics.text.formats import FormatError, read_xm3600_captions
from evaluation.models import ClipFineTune, ClipModel, RunStatus
from evaluation.models.fields import starter

KEYS_SHOWN = 5
DEMO_MODEL_NAME = "demo-tiny-clip"


def run_folder(run_id: int) -> Path:
    """Where a new run keeps its resumable state and its output weights: named by its id and a random
    token, so a database whose ids restart (a restored backup, SQLite) never resumes a stale run's state."""
    return Path(settings.CLIP_FINETUNE_DIR) / f"run-{run_id}-{uuid.uuid4().hex[:12]}"


def _examples(keys) -> str:
    keys = sorted(str(k) for k in keys)
    return ", ".join(keys[:KEYS_SHOWN]) + (", …" if len(keys) > KEYS_SHOWN else "")


# --- registered models ----------------------------------------------------------------------------


def clip_model_get(*, name: str) -> ClipModel:
    """The registered CLIP model called ``name`` (or of that id); NotFound naming the ones there are."""
    found = clip_model_registered(name)
    if found is None:
        raise NotFound("Name a registered CLIP model.")
    return found


def clip_model_demo_register() -> ClipModel:
    """The demo's tiny CLIP model: random weights written offline under ``CLIP_FINETUNE_DIR``, registered
    as ``demo-tiny-clip`` and marked ``is_demo`` (its numbers are never results). Idempotent."""
    path = tiny_clip_checkpoint(Path(settings.CLIP_FINETUNE_DIR) / "demo-tiny-clip.pt")
    model, _ = ClipModel.objects.update_or_create(
        name=DEMO_MODEL_NAME,
        defaults={
            "model_name": TINY_CLIP_NAME,
            "pretrained": "",
            "checkpoint": str(path),
            "architecture": TINY_CLIP_CONFIG,
            "is_demo": True,
            "description": "Tiny CLIP with random weights, built offline, for trying fine-tuning on the demo. "
            "Its scores mean nothing.",
        },
    )
    return model


def demo_data_files() -> tuple[dict[str, str], str]:
    """The demo's fine-tuning data (references as XM3600 files, SIMULATED ratings as CSV; see
    :mod:`evaluation.demo.finetune_data`), written under ``CLIP_FINETUNE_DIR/demo-data``."""
    from evaluation.demo.finetune_data import demo_finetune_files

    return demo_finetune_files(Path(settings.CLIP_FINETUNE_DIR) / "demo-data")


# --- planning -------------------------------------------------------------------------------------


@dataclass
class FineTunePlan:
    name: str
    register_as: str
    base: ClipModel | None
    base_params: dict
    campaigns: list[Campaign]
    languages: list[str]
    config: FineTuneConfig
    split_seed: int
    data: dict = field(default_factory=dict)
    selection: dict = field(default_factory=dict)


def _lookup_campaigns(values: list[str]) -> list[Campaign]:
    found, unknown = [], []
    for value in dict.fromkeys(str(v).strip() for v in values if str(v).strip()):
        query = Q(name=value) | (Q(pk=int(value)) if value.isdigit() else Q())
        campaign = Campaign.objects.filter(query).first()
        (found if campaign else unknown).append(campaign or value)
    if unknown:
        raise ValidationFailed(f"Unknown campaign(s): {', '.join(unknown)}.")
    return found


def _campaign_data(campaigns: list[Campaign]) -> tuple[list[list], list[list]]:
    """(pairs, rated) of the campaigns: [image id, text, language] and [image id, text, language, rating, source]."""
    caption_ids = [c.pk for c in campaigns if c.kind == CampaignKind.CAPTION]
    rating_ids = [c.pk for c in campaigns if c.kind == CampaignKind.RATING]
    pairs = [
        [image_id, text, code]
        for image_id, text, code in reference_captions(campaign_ids=caption_ids)
        .order_by("pk")
        .values_list("image_id", "text", "language__code")
        if text.strip()
    ]
    values = {point.code: point.value for point in RATING}
    rated = []
    screen1 = (
        Rating.objects.filter(
            assignment__item__campaign_id__in=caption_ids,
            assignment__state__in=DONE_STATES,
            assignment__item__prompt_caption__isnull=False,
            assignment__item__is_control=False,
        )
        .order_by("pk")
        .values_list(
            "assignment__item__image_id",
            "assignment__item__prompt_caption__text",
            "assignment__item__prompt_caption__language__code",
            "value",
        )
    )
    verification = (
        Rating.objects.filter(
            assignment__item__campaign_id__in=rating_ids,
            assignment__state__in=DONE_STATES,
            assignment__item__written_caption__in=reference_captions(),
        )
        .order_by("pk")
        .values_list(
            "assignment__item__image_id",
            "assignment__item__written_caption__text",
            "assignment__item__written_caption__language__code",
            "value",
        )
    )
    for source, rows in (("screen1", screen1), ("verification", verification)):
        for image_id, text, code, value in rows:
            if values.get(value) is not None and text.strip():
                rated.append([image_id, text, code, values[value], source])
    return pairs, rated


def _file_data(
    captions_files: dict[str, str], ratings_file: str | None, keys: dict[str, int]
) -> tuple[list[list], list[list], int]:
    """Pairs and rated captions of external files, with image keys mapped to ids; NEI rows counted apart.
    ValidationFailed naming the file and line, and unknown image keys, with counts."""
    pairs, rated, unknown, nei = [], [], set(), 0
    for code, path in captions_files.items():
        try:
            references = read_xm3600_captions(path, code)
        except (FormatError, OSError) as exc:
            raise ValidationFailed(f"Captions file {path}: {exc}. Nothing was started.") from None
        for key, texts in references.items():
            if str(key) not in keys:
                unknown.add(str(key))
                continue
            pairs += [[keys[str(key)], text, code] for text in texts if text.strip()]
    if ratings_file:
        try:
            rows = read_ratings_csv(ratings_file)
        except RatingsFileError as exc:
            raise ValidationFailed(f"Ratings file {ratings_file}: {exc}. Nothing was started.") from None
        for row in rows:
            if row.image not in keys:
                unknown.add(row.image)
            elif row.rating is None:
                nei += 1
            else:
                rated.append([keys[row.image], row.caption, row.language, row.rating, "file"])
    if unknown:
        raise ValidationFailed(
            f"{len(unknown)} image key(s) of the files are not images of the platform ({_examples(unknown)}): "
            "import the images first. Nothing was started."
        )
    return pairs, rated, nei


def fine_tune_plan(
    *,
    campaigns: list[str] | None = None,
    languages: list[str] | None = None,
    captions_files: dict[str, str] | None = None,
    ratings_file: str | None = None,
    base: str | None = None,
    name: str = "",
    register_as: str = "",
    learning_rate: float = 1e-5,
    batch_size: int = 32,
    epochs: int = 5,
    seed: int = 0,
    split_seed: int = 0,
    trainable: str = "all",
    patience: int = 2,
    autocast: str = "",
    min_ratings: int | None = None,
) -> FineTunePlan:
    """Check everything a fine-tuning run needs and gather its data; stores nothing.

    ``base``: a registered CLIP model's name (None: the ``CLIP_*`` settings). Raises ValidationFailed
    (NotFound for an unknown base) when: no data source is named; a campaign is unknown or a
    side-by-side campaign; a language code is unknown or named without data; a file is malformed or names images the
    platform lacks; the data holds no image with a file; a language has rated captions but fewer than
    ``min_ratings`` (default ``CLIP_FINETUNE_MIN_RATINGS``; the counts are in the message); no language
    has enough; the name to register is taken; or a hyperparameter is out of range.
    """
    campaigns = [c for c in campaigns or [] if str(c).strip()]
    captions_files = {k.strip(): v for k, v in (captions_files or {}).items()}
    if not campaigns and not captions_files and not ratings_file:
        raise ValidationFailed("Name caption or rating campaigns, or data files, to fine-tune on.")
    try:
        config = FineTuneConfig(
            learning_rate=float(learning_rate),
            batch_size=int(batch_size),
            epochs=int(epochs),
            seed=int(seed),
            trainable=trainable,
            patience=int(patience),
            autocast=autocast,
        ).check()
    except ValueError as exc:
        raise ValidationFailed(f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None
    min_ratings = settings.CLIP_FINETUNE_MIN_RATINGS if min_ratings is None else int(min_ratings)
    wanted = list(dict.fromkeys(code.strip() for code in languages or [] if code.strip()))
    known = set(
        Language.objects.filter(code__in=wanted + list(captions_files)).values_list("code", flat=True)
    )
    unknown_codes = sorted(set(wanted + list(captions_files)) - known)
    if unknown_codes:
        raise ValidationFailed(f"Unknown language(s): {', '.join(unknown_codes)}.")

    found = _lookup_campaigns(campaigns)
    sxs = [c.name for c in found if c.kind not in (CampaignKind.CAPTION, CampaignKind.RATING)]
    if sxs:
        raise ValidationFailed(
            f"Not caption or rating campaigns (they hold no captions or ratings): {', '.join(sxs)}."
        )
    base_model = clip_model_get(name=base) if base else None
    if base_model is not None:
        base_params = base_model.clip_params | {
            "model_id": base_model.model_id,
            "is_demo": base_model.is_demo,
        }
    else:
        base_params = {
            "clip_model": settings.CLIP_MODEL,
            "clip_pretrained": settings.CLIP_PRETRAINED,
            "clip_checkpoint": settings.CLIP_CHECKPOINT,
            "is_demo": False,
        }
    base_params["image_orientation"] = settings.CLIP_IMAGE_ORIENTATION

    pairs, rated = _campaign_data(found)
    nei = 0
    if captions_files or ratings_file:
        keys = dict(Image.objects.values_list("key", "pk"))
        more_pairs, more_rated, nei = _file_data(captions_files, ratings_file, keys)
        pairs, rated = pairs + more_pairs, rated + more_rated
    if wanted:
        pairs = [p for p in pairs if p[2] in wanted]
        rated = [r for r in rated if r[2] in wanted]

    image_ids = {p[0] for p in pairs} | {r[0] for r in rated}
    with_file = set(
        Image.objects.filter(pk__in=image_ids)
        .exclude(Q(file="") | Q(content_hash__isnull=True))
        .values_list("pk", flat=True)
    )
    without_file = image_ids - with_file
    where = ", ".join(c.name for c in found) or "the files"
    if not with_file:
        raise ValidationFailed(
            f"{where} hold{'s' if len(found) == 1 else ''} no images with files ({len(image_ids)} images, "
            f"{len(without_file)} without a file): CLIP needs the pixels. Import the image files first."
        )
    pairs = [p for p in pairs if p[0] in with_file]
    rated = [r for r in rated if r[0] in with_file]

    rated_counts = Counter(r[2] for r in rated)
    pair_counts = Counter(p[2] for p in pairs)
    # A language with some ratings needs enough of them to train on and to judge on its test split; one
    # with captions only (e.g. the target language of screen 1, whose ratings are of English captions)
    # trains the contrastive loss and is not judged.
    too_few = [
        f"{code} has {rated_counts[code]}"
        for code in sorted(rated_counts)
        if rated_counts[code] < min_ratings
    ]
    no_data = [code for code in wanted if not rated_counts.get(code) and not pair_counts.get(code)]
    if no_data:
        raise ValidationFailed(
            f"No captions or ratings in {', '.join(no_data)} in {where} (images with files only)."
        )
    if too_few:
        raise ValidationFailed(
            f"Too few rated captions to fine-tune and judge on (NOT-ENOUGH-INFO left out; at least {min_ratings} "
            f"per language): {'; '.join(too_few)}. Collect more ratings, or leave "
            f"{'that language' if len(too_few) == 1 else 'those languages'} out."
        )
    if not rated:
        raise ValidationFailed(
            f"There are no rated captions in {where}: the Pearson loss and the before/after table need "
            f"human ratings (at least {min_ratings} per language)."
        )
    try:
        splits = split_images(
            [str(i) for i in sorted(with_file & ({p[0] for p in pairs} | {r[0] for r in rated}))],
            seed=split_seed,
        )
    except ValueError as exc:
        raise ValidationFailed(f"Cannot split the images: {exc}.") from None

    register_as = (register_as or "").strip() or f"{name.strip() or 'fine-tuned'}"
    if ClipModel.objects.filter(name=register_as).exists() or (
        ClipFineTune.objects.filter(register_as=register_as).exclude(status=RunStatus.FAILED).exists()
    ):
        raise ValidationFailed(
            f"A CLIP model called “{register_as}” exists or is being trained: choose another name."
        )
    split_counts = Counter(splits.values())
    plan = FineTunePlan(
        name=(name.strip() or f"Fine-tune {base_params['clip_model']} on {where}")[:200],
        register_as=register_as[:100],
        base=base_model,
        base_params=base_params,
        campaigns=found,
        languages=sorted(set(pair_counts) | set(rated_counts)),
        config=config,
        split_seed=int(split_seed),
        data={"pairs": pairs, "rated": rated, "splits": splits},
        selection={
            "campaigns": [c.name for c in found],
            "captions_files": captions_files,
            "ratings_file": ratings_file or "",
            "languages_asked": wanted,
            "pairs_per_language": dict(sorted(pair_counts.items())),
            "rated_per_language": dict(sorted(rated_counts.items())),
            "rated_by_source": dict(Counter(r[4] for r in rated)),
            "images": len(splits),
            "images_without_file_left_out": len(without_file),
            "not_enough_info_left_out": nei,
            "images_per_split": {s: split_counts.get(s, 0) for s in ("train", "dev", "test")},
            "min_ratings": min_ratings,
        },
    )
    return plan


# --- store, enqueue, resume -----------------------------------------------------------------------


def fine_tune_store(*, plan: FineTunePlan, user=None, enqueue: bool = True) -> ClipFineTune:
    """Store a planned run and send it to a worker on commit. In eager mode (tests, the embedded default)
    the run has trained when this returns. Raises JobsUnavailable (the run stored and marked failed,
    resumable) when the broker is unreachable."""
    with transaction.atomic():
        run = ClipFineTune.objects.create(
            name=plan.name,
            base=plan.base,
            base_params=plan.base_params,
            languages=plan.languages,
            selection=plan.selection,
            data=plan.data,
            config=plan.config.as_dict(),
            split_seed=plan.split_seed,
            register_as=plan.register_as,
            created_by=starter(user),
        )
        run.campaigns.set(plan.campaigns)
        folder = run_folder(run.pk)
        run.checkpoint = str(folder / "state.pt")
        run.output = str(folder / "model.pt")
        run.save(update_fields=["checkpoint", "output", "updated_at"])
        if enqueue:
            fine_tune_enqueue(run=run)
    return run


def fine_tune_create(*, user=None, enqueue: bool = True, **plan_args) -> ClipFineTune:
    """Plan (raises before anything is stored), then store and enqueue."""
    return fine_tune_store(plan=fine_tune_plan(**plan_args), user=user, enqueue=enqueue)


def fine_tune_enqueue(*, run: ClipFineTune) -> None:
    """Mark the run queued and send it to a worker once the current transaction commits."""
    job_enqueue(FINE_TUNE, job=run)


def fine_tune_resume(*, run_id: int, enqueue: bool = True) -> ClipFineTune:
    """Queue a failed or orphaned run again; the worker continues from its last checkpoint. Locks the run
    row. Idempotent: a succeeded run is left as it is; a queued one is sent again (a second delivery
    finds it claimed and does nothing). Raises NotFound, Conflict for a run whose worker is alive, and
    JobsUnavailable from the commit."""
    result = job_resume(FINE_TUNE, job_id=run_id, enqueue=enqueue)
    run = result.job
    if result.running and not result.requeued:
        raise Conflict(
            f"Fine-tuning run #{run_id} is running (its worker reported at {run.heartbeat_at:%H:%M:%S}); "
            f"it can be resumed once it has been silent for {ClipFineTune.orphan_seconds():.0f} s."
        )
    return run


def fine_tune_train(*, run_id: int, should_stop=None, on_progress=None) -> str:
    """Claim and train run ``run_id`` in this process (the ``finetune_clip`` command), through the same
    engine path as a worker. Returns ``"succeeded"``, ``"failed"``, ``"interrupted"`` (``should_stop``
    said so; resumable from the checkpoint) or ``"skipped"`` (not queued: done, or another worker has it)."""
    kind = dataclasses.replace(
        FINE_TUNE,
        compute=lambda run: run_compute(run, should_stop=should_stop, on_progress=on_progress),
    )
    outcome = unit_run(kind, unit_id=run_id)
    if outcome == "done":
        return "succeeded"
    if outcome == "failed":
        error = ClipFineTune.objects.filter(pk=run_id).values_list("error", flat=True).first() or ""
        return "interrupted" if error.startswith("interrupted") else "failed"
    return "skipped"
