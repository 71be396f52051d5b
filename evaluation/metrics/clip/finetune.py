"""Fine-tuning a CLIP model on human captions and human ratings (seed 001, sec. 3), as plain functions.

Losses
    :func:`contrastive_loss` is seed 001's eq. 1, CLIP's symmetric InfoNCE over a batch of (image, human
    caption) pairs, with the model's own temperature (``exp(logit_scale)``, kept frozen: the temperature
    stays the model's). :func:`pearson_loss` is eq. 2, ``1 − Pearson(x, y)`` between the batch's scores
    ``x`` and its human ratings ``y``. The score trained is the cosine of image and caption: CLIPScore is
    ``2.5 · max(cos, 0)``, the 2.5 leaves Pearson unchanged and the clamp has no gradient below 0, so
    training on the clamped value would ignore every caption the model currently scores negative.

Schedule
    Each epoch shuffles both datasets (a generator seeded by ``(seed, epoch)``) into batches of
    ``batch_size``; batches alternate contrastive, Pearson, contrastive, … and never mix the two
    datasets; when one dataset runs out the other's batches follow. Gradients of ``accumulation`` (2)
    consecutive batches are summed before each optimizer step, so one step sees L ≈ L_C + L_P.

Honest evaluation
    :func:`split_images` puts each image in exactly one of train / dev / test by a seeded permutation.
    The caller gives :func:`fine_tune` only train data and dev ratings: the test split is never passed
    in. After each epoch the dev agreement (mean over languages of Kendall τ_b between cosine and
    rating) decides early stopping; the best epoch's weights are the output.

Checkpoints
    Every ``checkpoint_every`` optimizer steps and at each epoch's end the whole training state (weights,
    optimizer, step, position in the epoch's schedule, best dev score, history, RNG states) is written
    atomically (temporary file + rename). :func:`fine_tune` given an existing checkpoint resumes from it;
    since an epoch's schedule is a function of ``(seed, epoch)``, a resumed run makes exactly the
    updates the uninterrupted run would have made.

No Django here; torch is imported inside the functions.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.metrics.clip.finetune_checkpoints import atomic_torch_save, rng_restore, rng_states
from evaluation.metrics.clip.finetune_scoring import (
    autocast_context,
    cosines,
    dev_agreement,
    encode_batch,
    score_cosines,
)

__all__ = [
    "ACCUMULATION_STEPS",
    "TRAINABLE_CHOICES",
    "FineTuneConfig",
    "FineTuneInterrupted",
    "FineTuneOutcome",
    "Pair",
    "Rated",
    "atomic_torch_save",
    "contrastive_loss",
    "dev_agreement",
    "epoch_schedule",
    "fine_tune",
    "pearson_loss",
    "score_cosines",
    "select_trainable",
    "split_images",
]

# Seed 001: "we accumulate gradients for two steps before updating the network".
ACCUMULATION_STEPS = 2
TRAINABLE_CHOICES = ("all", "text", "projections")
SPLITS = ("train", "dev", "test")
# Fewest items a batch may have: two pairs give a contrastive loss a negative; Pearson needs three
# ratings to be more than ±1.
MIN_CONTRASTIVE_BATCH = 2
MIN_PEARSON_BATCH = 3
CHECKPOINT_FORMAT = 1
# Optimizer steps between the reports that carry the losses: reading a loss waits for the GPU to finish
# the step, so it is done once per interval, not per step.
LOG_EVERY = 10

# Parameter names (prefixes) of each trainable choice, for open_clip's CLIP (text tower at the top
# level) and CustomTextCLIP (text tower under ``text.``).
_TEXT_PREFIXES = (
    "text.",
    "token_embedding",
    "positional_embedding",
    "transformer.",
    "ln_final",
    "text_projection",
)
_PROJECTION_PREFIXES = ("visual.proj", "text_projection", "text.proj")
_FROZEN = ("logit_scale", "logit_bias")


@dataclass(frozen=True)
class Pair:
    """An image and a human caption of it (the contrastive dataset)."""

    image: str
    text: str
    language: str


@dataclass(frozen=True)
class Rated:
    """An image, a caption and a numeric human rating of the caption (the Pearson dataset)."""

    image: str
    text: str
    language: str
    rating: float


@dataclass(frozen=True)
class FineTuneConfig:
    """Everything a run's result depends on besides its data and base weights (stored with the model)."""

    learning_rate: float = 1e-5
    batch_size: int = 32
    epochs: int = 5
    seed: int = 0
    trainable: str = "all"
    patience: int = 2
    weight_decay: float = 0.0
    accumulation: int = ACCUMULATION_STEPS
    autocast: str = ""  # "" (fp32) or "bf16", applied on CUDA only
    checkpoint_every: int = 50

    def check(self) -> FineTuneConfig:
        """This config, or ValueError naming the first setting out of range."""
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise ValueError(f"learning rate must be a positive number, not {self.learning_rate}")
        if self.batch_size < MIN_PEARSON_BATCH:
            raise ValueError(f"batch size must be at least {MIN_PEARSON_BATCH}, not {self.batch_size}")
        if self.epochs < 1:
            raise ValueError(f"epochs must be at least 1, not {self.epochs}")
        if self.trainable not in TRAINABLE_CHOICES:
            raise ValueError(
                f"trainable must be one of {', '.join(TRAINABLE_CHOICES)}, not {self.trainable!r}"
            )
        if self.patience < 1:
            raise ValueError(f"patience must be at least 1, not {self.patience}")
        if self.weight_decay < 0:
            raise ValueError(f"weight decay must be 0 or more, not {self.weight_decay}")
        if self.accumulation < 1:
            raise ValueError(f"accumulation must be at least 1, not {self.accumulation}")
        if self.autocast not in ("", "bf16"):
            raise ValueError(
                f"training autocast must be '' (fp32) or 'bf16', not {self.autocast!r} (fp16 would need loss scaling)"
            )
        if self.checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be at least 1, not {self.checkpoint_every}")
        return self

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class FineTuneInterrupted(Exception):
    """``should_stop`` asked the run to stop; its state is in the checkpoint and it can be resumed."""


@dataclass
class FineTuneOutcome:
    best_dev: float | None
    best_epoch: int | None
    epochs_run: int
    steps: int
    stopped_early: bool
    history: list[dict[str, Any]] = field(default_factory=list)
    device: str = "cpu"
    autocast: str = ""


# --- splits ---------------------------------------------------------------------------------------


def split_images(
    image_keys: Sequence[str], *, seed: int, dev_fraction: float = 0.1, test_fraction: float = 0.1
) -> dict[str, str]:
    """{image key: "train" | "dev" | "test"}: a permutation of the sorted distinct keys drawn from ``seed``,
    the first ``test_fraction`` to test, the next ``dev_fraction`` to dev (each at least one image),
    the rest to train. An image is in exactly one split. ValueError with fewer than 3 images or
    fractions that leave no training images."""
    keys = sorted(set(image_keys))
    if not (0 < dev_fraction < 1 and 0 < test_fraction < 1 and dev_fraction + test_fraction < 1):
        raise ValueError("dev and test fractions must be in (0, 1) and leave images for training")
    if len(keys) < 3:
        raise ValueError(f"splitting needs at least 3 images, there are {len(keys)}")
    order = np.random.default_rng(seed).permutation(len(keys))
    n_test = max(1, round(len(keys) * test_fraction))
    n_dev = max(1, round(len(keys) * dev_fraction))
    if n_test + n_dev >= len(keys):
        raise ValueError(f"{len(keys)} images leave none for training after {n_dev} dev and {n_test} test")
    out = {}
    for rank, index in enumerate(order):
        out[keys[index]] = "test" if rank < n_test else "dev" if rank < n_test + n_dev else "train"
    return out


# --- losses ---------------------------------------------------------------------------------------


def contrastive_loss(image_features, text_features, logit_scale):
    """Seed 001 eq. 1: −1/(2N) Σ_i [log softmax_j(s_ij/τ)_i + log softmax_j(s_ji/τ)_i], with s the cosines
    and 1/τ = ``logit_scale`` (already exponentiated)."""
    import torch
    import torch.nn.functional as F

    image = F.normalize(image_features.float(), dim=-1)
    text = F.normalize(text_features.float(), dim=-1)
    logits = logit_scale.float() * image @ text.T
    target = torch.arange(len(logits), device=logits.device)
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2


def pearson_loss(x, y):
    """Seed 001 eq. 2: 1 − (x − x̄)ᵀ(y − ȳ) / (‖x − x̄‖ ‖y − ȳ‖). The caller skips batches with constant
    ``y`` (the coefficient is undefined there)."""
    x = x.float() - x.float().mean()
    y = y.float() - y.float().mean()
    return 1 - (x * y).sum() / (x.norm() * y.norm()).clamp_min(1e-8)


# --- parameters -----------------------------------------------------------------------------------


def select_trainable(model, trainable: str) -> list[str]:
    """Set ``requires_grad`` by ``trainable`` (``all``, ``text``: the text tower and its projection,
    ``projections``: the image and text projections) and return the names trained. The temperature
    (``logit_scale``) is always frozen. ValueError for an unknown choice or one that trains nothing."""
    if trainable not in TRAINABLE_CHOICES:
        raise ValueError(f"trainable must be one of {', '.join(TRAINABLE_CHOICES)}, not {trainable!r}")
    prefixes = {"all": ("",), "text": _TEXT_PREFIXES, "projections": _PROJECTION_PREFIXES}[trainable]
    names = []
    for name, parameter in model.named_parameters():
        train = name not in _FROZEN and name.startswith(prefixes)
        parameter.requires_grad_(train)
        if train:
            names.append(name)
    if not names:
        raise ValueError(f"the model has no parameters of the choice {trainable!r}")
    return names


# --- schedule -------------------------------------------------------------------------------------


def epoch_schedule(
    n_pairs: int, n_rated: int, *, batch_size: int, seed: int, epoch: int
) -> list[tuple[str, list[int]]]:
    """The epoch's batches, ``[("contrastive" | "pearson", [indices]), ...]``, alternating, never mixed;
    a function of its arguments only (that is what makes a resumed run identical)."""
    rng = np.random.default_rng([seed, epoch])

    def batches(n: int, minimum: int) -> list[list[int]]:
        order = rng.permutation(n).tolist()
        out = [order[i : i + batch_size] for i in range(0, n, batch_size)]
        return [b for b in out if len(b) >= minimum]

    contrastive = [("contrastive", b) for b in batches(n_pairs, MIN_CONTRASTIVE_BATCH)]
    pearson = [("pearson", b) for b in batches(n_rated, MIN_PEARSON_BATCH)]
    schedule = []
    for i in range(max(len(contrastive), len(pearson))):
        schedule += contrastive[i : i + 1] + pearson[i : i + 1]
    return schedule


# --- training -------------------------------------------------------------------------------------


def fine_tune(
    *,
    model,
    tokenizer,
    pixels: Callable[[str], Any],
    pairs: Sequence[Pair],
    rated: Sequence[Rated],
    rated_dev: Sequence[Rated],
    config: FineTuneConfig,
    checkpoint_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    device: str = "cpu",
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    log_every: int = LOG_EVERY,
) -> FineTuneOutcome:
    """Fine-tune ``model`` in place on train ``pairs`` (contrastive) and ``rated`` (Pearson), early-stopping
    on ``rated_dev``; write the best weights (a plain state_dict, loadable as a CLIP checkpoint) to
    ``output_path`` and return the outcome.

    Resumes from ``checkpoint_path`` when it exists (written by an earlier call with the same data and
    config). ``on_progress`` gets ``{"phase", "epoch", "step", "loss_contrastive", "loss_pearson",
    "dev_score"}`` after each optimizer step and each dev evaluation; the losses are the means since the
    last report that had them, given every ``log_every`` steps (and at a checkpoint and an epoch's end)
    and None in between: the losses stay on the device until then, so a step never waits for the GPU. ``should_stop`` is asked after each
    optimizer step; when it answers True the state is checkpointed and :class:`FineTuneInterrupted` is
    raised. Without ``rated_dev`` every epoch runs and the last is the output. ValueError for a bad
    config or no training data.
    """
    import torch

    config.check()
    if log_every < 1:
        raise ValueError(f"log_every must be at least 1, not {log_every}")
    if not pairs and not rated:
        raise ValueError("there is nothing to train on: no caption pairs and no rated captions")
    autocast = config.autocast if device.startswith("cuda") else ""
    torch.manual_seed(config.seed)
    random.seed(config.seed)
    model.to(device)
    select_trainable(model, config.trainable)
    parameters = [p for p in model.parameters() if p.requires_grad]
    # On CUDA the fused AdamW updates every parameter in a few kernels instead of several per tensor
    # (the same update, computed in one pass).
    fused = {"fused": True} if device.startswith("cuda") else {}
    optimizer = torch.optim.AdamW(
        parameters, lr=config.learning_rate, weight_decay=config.weight_decay, **fused
    )

    state: dict[str, Any] = {
        "epoch": 0,
        "position": 0,
        "step": 0,
        "best_dev": None,
        "best_epoch": None,
        "since_best": 0,
        "history": [],
        "done": False,
    }
    checkpoint_path = Path(checkpoint_path)
    if checkpoint_path.exists():
        saved = torch.load(checkpoint_path, map_location=device, weights_only=False)
        if saved.get("format") != CHECKPOINT_FORMAT or saved.get("config") != config.as_dict():
            raise ValueError(
                f"the checkpoint {checkpoint_path} belongs to another configuration; delete it to start over"
            )
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        state = saved["state"]
        rng_restore(saved["rng"])

    def save_checkpoint() -> None:
        atomic_torch_save(
            {
                "format": CHECKPOINT_FORMAT,
                "config": config.as_dict(),
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "state": state,
                "rng": rng_states(),
            },
            checkpoint_path,
        )

    def report(phase: str, **values) -> None:
        if on_progress is not None:
            on_progress({"phase": phase, "epoch": state["epoch"], "step": state["step"], **values})

    def micro_step(kind: str, indices: list[int]):
        with autocast_context(device, autocast):
            if kind == "contrastive":
                batch = [pairs[i] for i in indices]
                image, text = encode_batch(
                    model, tokenizer, pixels, [p.image for p in batch], [p.text for p in batch], device
                )
                loss = contrastive_loss(image, text, model.logit_scale.exp())
            else:
                batch = [rated[i] for i in indices]
                values = [r.rating for r in batch]
                if max(values) == min(values):
                    return None  # Pearson is undefined on equal ratings: no gradient from this batch
                ratings = torch.tensor(values, dtype=torch.float32).to(device, non_blocking=True)
                image, text = encode_batch(
                    model, tokenizer, pixels, [r.image for r in batch], [r.text for r in batch], device
                )
                loss = pearson_loss(cosines(image, text), ratings)
        loss.backward()
        return loss.detach()  # stays on the device: read with the others at the next report

    def mean(values: list) -> float | None:
        return float(torch.stack(values).float().mean()) if values else None

    model.train()
    while not state["done"] and state["epoch"] < config.epochs:
        schedule = epoch_schedule(
            len(pairs), len(rated), batch_size=config.batch_size, seed=config.seed, epoch=state["epoch"]
        )
        losses: dict[str, list] = {"contrastive": [], "pearson": []}  # this epoch's, on the device
        reported = {"contrastive": 0, "pearson": 0}  # how many of them the last report covered
        position = state["position"]
        while position < len(schedule):
            group = schedule[position : position + config.accumulation]
            optimizer.zero_grad(set_to_none=True)
            for kind, indices in group:
                value = micro_step(kind, indices)
                if value is not None:
                    losses[kind].append(value)
            optimizer.step()
            position += len(group)
            state["position"] = position
            state["step"] += 1
            checkpointing = state["step"] % config.checkpoint_every == 0
            since = {"contrastive": None, "pearson": None}
            if state["step"] % log_every == 0 or checkpointing or position >= len(schedule):
                for kind in since:
                    since[kind] = mean(losses[kind][reported[kind] :])
                    reported[kind] = len(losses[kind])
            report(
                "train",
                loss_contrastive=since["contrastive"],
                loss_pearson=since["pearson"],
                dev_score=state["best_dev"],
            )
            if checkpointing:
                save_checkpoint()
            if should_stop is not None and should_stop():
                save_checkpoint()
                raise FineTuneInterrupted(f"stopped at step {state['step']}; resume from {checkpoint_path}")

        dev_score = None
        if rated_dev:
            dev_score = dev_agreement(
                score_cosines(model, tokenizer, pixels, rated_dev, device=device, autocast=autocast),
                rated_dev,
            )
        improved = not rated_dev or (
            dev_score is not None and (state["best_dev"] is None or dev_score > state["best_dev"])
        )
        state["history"].append(
            {
                "epoch": state["epoch"] + 1,
                "step": state["step"],
                "loss_contrastive": mean(losses["contrastive"]),
                "loss_pearson": mean(losses["pearson"]),
                "dev_score": dev_score,
            }
        )
        if improved:
            state["best_dev"], state["best_epoch"], state["since_best"] = dev_score, state["epoch"] + 1, 0
            atomic_torch_save(model.state_dict(), output_path)
        else:
            state["since_best"] += 1
        state["epoch"] += 1
        state["position"] = 0
        if state["since_best"] >= config.patience:
            state["done"] = True
        report("dev", dev_score=dev_score, loss_contrastive=None, loss_pearson=None)
        save_checkpoint()

    if Path(output_path).exists():
        model.load_state_dict(torch.load(output_path, map_location=device, weights_only=True))
    else:  # no epoch gave a defined dev score: the last weights are the output
        atomic_torch_save(model.state_dict(), output_path)
    model.eval()
    return FineTuneOutcome(
        best_dev=state["best_dev"],
        best_epoch=state["best_epoch"],
        epochs_run=state["epoch"],
        steps=state["step"],
        stopped_early=state["epoch"] < config.epochs,
        history=list(state["history"]),
        device=device,
        autocast=autocast,
    )
