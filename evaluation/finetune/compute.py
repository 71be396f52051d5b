"""Train one fine-tuning run on a worker, score its test split before and after, register the model.

A fine-tuning run is a job that is its own unit (:class:`core.jobs.models.SingleUnitJob`): the engine
claims it by one conditional UPDATE (queued → running), so a second delivery of the same task does
nothing, and beats for it while :func:`run_compute` trains outside any transaction; progress (epoch,
step, losses, dev score) is written to the run row at most once a second. A killed worker leaves the
run "running" with a silent heartbeat: the sweep (or ``fine_tune_resume``) queues it again, and
training continues from its last checkpoint (weights, optimizer, step, RNG states).
:func:`run_store` registers the fine-tuned model in the engine's store transaction.
"""

from __future__ import annotations

import io
import logging
import time
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage
from django.utils import timezone
from PIL import Image as PILImage

from annotation.models import Image
from core.jobs.engine import JobDataError
from core.versions import package_versions
from evaluation.finetune.selectors import split_of
from evaluation.metrics.clip import (
    LoadedClip,
    image_rgb,
    load_clip,
    register_model_config,
    set_torch_threads,
)
from evaluation.metrics.clip.finetune import (
    FineTuneConfig,
    FineTuneInterrupted,
    Pair,
    Rated,
    fine_tune,
    score_cosines,
)
from evaluation.metrics.clip.scoring import DEFAULT_W
from evaluation.models import ClipFineTune, ClipModel

log = logging.getLogger(__name__)

PROGRESS_INTERVAL = 1.0  # seconds between progress writes


def _load(params: dict, *, checkpoint: str | None = None) -> LoadedClip:
    if params.get("clip_model_config"):
        register_model_config(params["clip_model"], params["clip_model_config"])
    return load_clip(
        params["clip_model"],
        params.get("clip_pretrained") or None,
        checkpoint_path=checkpoint or params.get("clip_checkpoint") or None,
    )


def _pixels(loaded: LoadedClip, orientation: str):
    files = {}

    @lru_cache(maxsize=4096)
    def pixels(key: str):
        image_id = int(key)
        if not files:
            files.update(
                {str(pk): (k, name) for pk, k, name in Image.objects.values_list("pk", "key", "file")}
            )
        image_key, name = files.get(key, (key, ""))
        try:
            with default_storage.open(name, "rb") as fh:
                image = PILImage.open(io.BytesIO(fh.read()))
                image.load()
        except (OSError, ValueError, PILImage.DecompressionBombError) as exc:
            raise JobDataError(
                f"the file of image “{image_key}” (id {image_id}) cannot be read ({exc})"
            ) from exc
        return loaded.preprocess(image_rgb(image, orientation))

    return pixels


def _items(run: ClipFineTune, split: str):
    splits = split_of(run)
    pairs = [Pair(str(i), t, c) for i, t, c in run.data.get("pairs", []) if splits.get(i) == split]
    rated = [
        Rated(str(i), t, c, float(r)) for i, t, c, r, _ in run.data.get("rated", []) if splits.get(i) == split
    ]
    return pairs, rated


def training_data(run: ClipFineTune) -> dict[str, list]:
    """What the trainer is given: train pairs, train ratings and dev ratings. The test split is never here."""
    train_pairs, train_rated = _items(run, "train")
    _, dev_rated = _items(run, "dev")
    return {"pairs": train_pairs, "rated": train_rated, "rated_dev": dev_rated}


def clipscores(cosines) -> list[float]:
    return [float(DEFAULT_W * max(c, 0.0)) for c in cosines]


def run_compute(run: ClipFineTune, *, should_stop=None, on_progress=None) -> dict:
    """Train the run (from its checkpoint, if it has one) and score its test split with the base and the
    fine-tuned weights: the kind's ``compute``. Raises JobDataError for an unreadable image file, and
    for an interrupted training (``should_stop``: the command's Ctrl-C), "interrupted: ..."."""
    try:
        return _train(run, should_stop=should_stop, on_progress=on_progress)
    except FineTuneInterrupted as exc:
        raise JobDataError(f"interrupted: {exc}") from exc


def _train(run: ClipFineTune, *, should_stop=None, on_progress=None) -> dict:
    import torch

    params = run.base_params
    set_torch_threads(settings.CLIP_TORCH_THREADS)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    loaded = _load(params)
    base_id = loaded.model_id
    pixels = _pixels(loaded, params.get("image_orientation") or settings.CLIP_IMAGE_ORIENTATION)
    data = training_data(run)
    config = FineTuneConfig(**run.config)
    Path(run.checkpoint).parent.mkdir(parents=True, exist_ok=True)
    last = [0.0]

    def progress(values: dict) -> None:
        if on_progress is not None:
            on_progress(values)
        now = time.monotonic()
        if values["phase"] == "train" and now - last[0] < PROGRESS_INTERVAL:
            return
        last[0] = now
        fields = {"epoch": values["epoch"], "step": values["step"], "heartbeat_at": timezone.now()}
        for name in ("loss_contrastive", "loss_pearson", "dev_score"):
            if values.get(name) is not None:
                fields[name] = values[name]
        ClipFineTune.objects.filter(pk=run.pk).update(**fields, updated_at=timezone.now())

    ClipFineTune.objects.filter(pk=run.pk).update(device=device)
    outcome = fine_tune(
        model=loaded.model,
        tokenizer=loaded.tokenizer,
        pixels=pixels,
        pairs=data["pairs"],
        rated=data["rated"],
        rated_dev=data["rated_dev"],
        config=config,
        checkpoint_path=run.checkpoint,
        output_path=run.output,
        device=device,
        on_progress=progress,
        should_stop=should_stop,
    )

    # The test split, scored only now: by the fine-tuned weights (in memory) and the base model.
    _, test_rated = _items(run, "test")
    tuned = score_cosines(loaded.model, loaded.tokenizer, pixels, test_rated, device=device)
    base = _load(params)
    before = score_cosines(base.model, base.tokenizer, pixels, test_rated, device=device)
    tuned_id = _load(params, checkpoint=run.output).model_id
    test_rows = [
        [item.language, f"{item.image}:{i}", b, a, item.rating]
        for i, (item, b, a) in enumerate(zip(test_rated, clipscores(before), clipscores(tuned)))
    ]
    versions = package_versions() | {"torch": torch.__version__}
    results = {
        "test": test_rows,
        "best_dev": outcome.best_dev,
        "best_epoch": outcome.best_epoch,
        "stopped_early": outcome.stopped_early,
        "base_model_id": base_id,
        "model_id": tuned_id,
        "device": device,
        "autocast": outcome.autocast,
    }
    return {
        "results": results,
        "history": outcome.history,
        "versions": versions,
        "epochs_run": outcome.epochs_run,
        "steps": outcome.steps,
        "best_dev": outcome.best_dev,
        "best_epoch": outcome.best_epoch,
        "base_id": base_id,
        "tuned_id": tuned_id,
        "device": device,
    }


def run_store(run: ClipFineTune, unit: ClipFineTune, outcome: dict, seconds: float) -> None:
    """Register the fine-tuned model and record the run's results (the kind's ``store``: run row locked;
    the engine then marks it succeeded)."""
    params = run.base_params
    model = ClipModel.objects.create(
        name=run.register_as,
        model_name=params["clip_model"],
        pretrained=params.get("clip_pretrained", ""),
        checkpoint=run.output,
        architecture=params.get("clip_model_config") or {},
        model_id=outcome["tuned_id"],
        base_model_id=outcome["base_id"],
        is_demo=bool(params.get("is_demo")),
        description=f"Fine-tuned by run #{run.pk} ({run.name}).",
        provenance={
            "fine_tune_run": run.pk,
            "base_model_id": outcome["base_id"],
            "data": run.selection,
            "hyperparameters": run.config,
            "split_seed": run.split_seed,
            "seed": run.config.get("seed"),
            "versions": outcome["versions"],
            "device": outcome["device"],
            "dev": {
                "best": outcome["best_dev"],
                "best_epoch": outcome["best_epoch"],
                "history": outcome["history"],
            },
            "test": "per language in the run's before/after table (admin, report)",
        },
    )
    run.model = model
    run.results = outcome["results"]
    run.history = outcome["history"]
    run.versions = outcome["versions"]
    run.epoch = outcome["epochs_run"]
    run.step = outcome["steps"]
    run.dev_score = outcome["best_dev"]
    run.device = outcome["device"]
    timings = dict(run.timings or {})
    timings["train_seconds"] = round(timings.get("train_seconds", 0.0) + seconds, 3)
    run.timings = timings
