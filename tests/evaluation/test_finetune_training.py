"""CLIP fine-tuning as pure functions, on the tiny model and synthetic data with a real signal.

Images are noisy squares of one of six colours; a caption names a colour; a human rating is 4 when the
caption names the image's colour, 2 when it names a colour sharing a primary with it, 1 otherwise.
The tiny model starts with random weights, so its scores are unrelated to the ratings (τ_b ≈ 0): a
broken loss or backward pass leaves them so, and these tests fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from evaluation.metrics.clip import ensure_torchvision_loadable
from evaluation.metrics.clip.finetune import (
    FineTuneConfig,
    FineTuneInterrupted,
    Pair,
    Rated,
    contrastive_loss,
    dev_agreement,
    epoch_schedule,
    fine_tune,
    pearson_loss,
    score_cosines,
    select_trainable,
    split_images,
)
from evaluation.metrics.clip.tiny import build_tiny_clip

COLOURS = {
    "red": (1, 0, 0),
    "green": (0, 1, 0),
    "blue": (0, 0, 1),
    "yellow": (1, 1, 0),
    "purple": (1, 0, 1),
    "cyan": (0, 1, 1),
}


@pytest.fixture(scope="module")
def tokenizer():
    ensure_torchvision_loadable()
    import open_clip

    torch.set_num_threads(1)  # the CI machine is shared; and one thread keeps CPU runs bit-identical
    return open_clip.tokenizer.tokenize


def synthetic(n_images: int = 96, seed: int = 0):
    rng = np.random.default_rng(seed)
    names = list(COLOURS)
    images = {}
    for i in range(n_images):
        colour = names[i % len(names)]
        base = np.array(COLOURS[colour], dtype=np.float32)[:, None, None] * 0.8
        images[f"img{i:03d}"] = (
            colour,
            torch.tensor(base + rng.normal(0, 0.2, (3, 64, 64)).astype(np.float32)),
        )
    return images


def rated_of(images, keys):
    out = []
    for key in keys:
        colour = images[key][0]
        for name, rgb in COLOURS.items():
            overlap = sum(a * b for a, b in zip(rgb, COLOURS[colour]))
            rating = 4 if name == colour else 2 if overlap else 1
            out.append(Rated(key, f"a photo of {name}", "en", rating))
    return out


def split_data(images, seed=1):
    splits = split_images(list(images), seed=seed, dev_fraction=0.15, test_fraction=0.25)
    keys = {s: sorted(k for k, v in splits.items() if v == s) for s in ("train", "dev", "test")}
    return keys


def run(tokenizer, tmp_path, images, *, pairs, rated, rated_dev, config, **kwargs):
    model = build_tiny_clip(0)
    outcome = fine_tune(
        model=model,
        tokenizer=tokenizer,
        pixels=lambda key: images[key][1],
        pairs=pairs,
        rated=rated,
        rated_dev=rated_dev,
        config=config,
        checkpoint_path=tmp_path / "state.pt",
        output_path=tmp_path / "model.pt",
        **kwargs,
    )
    return model, outcome


def test_the_pearson_loss_teaches_the_model_to_agree_with_the_ratings_on_unseen_images(tokenizer, tmp_path):
    images = synthetic()
    keys = split_data(images)
    test = rated_of(images, keys["test"])
    pixels = lambda key: images[key][1]  # noqa: E731
    before = dev_agreement(score_cosines(build_tiny_clip(0), tokenizer, pixels, test), test)
    config = FineTuneConfig(learning_rate=1e-3, batch_size=32, epochs=4, seed=0, patience=2)
    model, outcome = run(
        tokenizer,
        tmp_path,
        images,
        pairs=[],
        rated=rated_of(images, keys["train"]),
        rated_dev=rated_of(images, keys["dev"]),
        config=config,
    )
    after = dev_agreement(score_cosines(model, tokenizer, pixels, test), test)
    print(f"synthetic Pearson fine-tuning: test τ_b {before:.3f} -> {after:.3f} ({outcome.steps} steps)")
    assert abs(before) < 0.2
    assert after > 0.5
    assert outcome.best_dev is not None and outcome.best_dev > 0.5
    # The output file holds the best dev epoch's weights, and the model in memory is that model.
    saved = torch.load(tmp_path / "model.pt", weights_only=True)
    assert all(torch.equal(saved[k], v) for k, v in model.state_dict().items())


def retrieval_error(model, tokenizer, images, keys) -> float:
    """Share of test images whose own colour caption is not the best of the six (image→text R@1 error)."""
    names = list(COLOURS)
    items = [Pair(key, f"a photo of {name}", "en") for key in keys for name in names]
    scores = score_cosines(model, tokenizer, lambda k: images[k][1], items).reshape(len(keys), len(names))
    truth = np.array([names.index(images[key][0]) for key in keys])
    return float((scores.argmax(axis=1) != truth).mean())


def test_the_contrastive_loss_lowers_the_retrieval_error_on_unseen_images(tokenizer, tmp_path):
    images = synthetic()
    keys = split_data(images)
    before = retrieval_error(build_tiny_clip(0), tokenizer, images, keys["test"])
    pairs = [Pair(k, f"a photo of {images[k][0]}", "en") for k in keys["train"]]
    config = FineTuneConfig(learning_rate=1e-3, batch_size=6, epochs=8, seed=0)
    model, outcome = run(tokenizer, tmp_path, images, pairs=pairs, rated=[], rated_dev=[], config=config)
    after = retrieval_error(model, tokenizer, images, keys["test"])
    print(f"synthetic contrastive fine-tuning: test retrieval error {before:.2f} -> {after:.2f}")
    assert before > 0.5
    assert after < 0.2
    assert outcome.epochs_run == 8 and outcome.best_dev is None


def small_task(images):
    keys = split_data(images)
    return {
        "pairs": [Pair(k, f"a photo of {images[k][0]}", "en") for k in keys["train"]],
        "rated": rated_of(images, keys["train"]),
        "rated_dev": rated_of(images, keys["dev"]),
    }


def test_the_same_seed_gives_the_same_model_on_cpu_and_another_seed_does_not(tokenizer, tmp_path):
    images = synthetic(24)
    task = small_task(images)
    config = FineTuneConfig(learning_rate=1e-3, batch_size=8, epochs=2, seed=3)
    first, _ = run(tokenizer, tmp_path / "a", images, config=config, **task)
    second, _ = run(tokenizer, tmp_path / "b", images, config=config, **task)
    other, _ = run(
        tokenizer, tmp_path / "c", images, config=FineTuneConfig(**{**config.as_dict(), "seed": 4}), **task
    )
    a, b, c = first.state_dict(), second.state_dict(), other.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_a_run_stopped_midway_resumes_from_its_checkpoint_to_the_same_model(tokenizer, tmp_path):
    images = synthetic(24)
    task = small_task(images)
    config = FineTuneConfig(learning_rate=1e-3, batch_size=8, epochs=2, seed=3, checkpoint_every=2)
    whole, whole_outcome = run(tokenizer, tmp_path / "whole", images, config=config, **task)

    steps = []
    with pytest.raises(FineTuneInterrupted):
        run(
            tokenizer,
            tmp_path / "cut",
            images,
            config=config,
            on_progress=lambda v: steps.append(v["step"]),
            should_stop=lambda: len(steps) >= 5,
            **task,
        )
    saved = torch.load(tmp_path / "cut" / "state.pt", weights_only=False)
    assert saved["state"]["step"] == 5 and saved["state"]["epoch"] == 0
    resumed_steps = []
    resumed, outcome = run(
        tokenizer,
        tmp_path / "cut",
        images,
        config=config,
        on_progress=lambda v: resumed_steps.append(v["step"]),
        **task,
    )
    assert resumed_steps[0] == 6  # continued, not restarted
    assert outcome.steps == whole_outcome.steps
    a, b = whole.state_dict(), resumed.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    # A checkpoint of another configuration is refused rather than silently mixed in.
    with pytest.raises(ValueError, match="another configuration"):
        run(
            tokenizer,
            tmp_path / "cut",
            images,
            config=FineTuneConfig(**{**config.as_dict(), "epochs": 3}),
            **task,
        )


def test_the_losses_are_the_papers_equations():
    torch.manual_seed(0)
    image, text = torch.randn(5, 8), torch.randn(5, 8)
    scale = torch.tensor(10.0)
    ni, nt = image / image.norm(dim=1, keepdim=True), text / text.norm(dim=1, keepdim=True)
    s = (ni @ nt.T).numpy() * 10.0
    by_row = [s[i, i] - math.log(np.exp(s[i]).sum()) for i in range(5)]
    by_col = [s[i, i] - math.log(np.exp(s[:, i]).sum()) for i in range(5)]
    assert float(contrastive_loss(image, text, scale)) == pytest.approx(
        -(sum(by_row) + sum(by_col)) / 10, abs=1e-5
    )
    x, y = torch.randn(7), torch.tensor([1.0, 2, 3, 4, 1, 2, 4])
    assert float(pearson_loss(x, y)) == pytest.approx(
        1 - stats.pearsonr(x.numpy(), y.numpy()).statistic, abs=1e-5
    )
    assert float(pearson_loss(y, y)) == pytest.approx(0, abs=1e-6)


@pytest.mark.parametrize(
    ("trainable", "trained", "frozen"),
    [
        ("all", ["visual.conv1.weight", "token_embedding.weight", "visual.proj"], ["logit_scale"]),
        ("text", ["token_embedding.weight", "text_projection"], ["visual.conv1.weight", "visual.proj"]),
        (
            "projections",
            ["visual.proj", "text_projection"],
            ["token_embedding.weight", "visual.conv1.weight"],
        ),
    ],
)
def test_the_trainable_setting_decides_which_parameters_get_gradients(tokenizer, trainable, trained, frozen):
    model = build_tiny_clip(0)
    names = select_trainable(model, trainable)
    image, text = (
        model.encode_image(torch.randn(4, 3, 64, 64)),
        model.encode_text(tokenizer(["a", "b", "c", "d"])),
    )
    contrastive_loss(image, text, model.logit_scale.exp()).backward()
    params = dict(model.named_parameters())
    for name in trained:
        assert name in names and params[name].grad is not None and params[name].grad.abs().sum() > 0
    for name in frozen:
        assert name not in names and params[name].grad is None


def test_the_schedule_alternates_the_two_datasets_and_never_mixes_them():
    schedule = epoch_schedule(20, 9, batch_size=4, seed=0, epoch=0)
    kinds = [kind for kind, _ in schedule]
    # 5 pair batches; 2 rating batches (the ninth rating alone is too small for a Pearson batch).
    assert kinds[:4] == ["contrastive", "pearson"] * 2
    assert kinds[4:] == ["contrastive"] * 3
    assert sorted(i for kind, b in schedule if kind == "contrastive" for i in b) == list(range(20))
    assert epoch_schedule(20, 9, batch_size=4, seed=0, epoch=0) == schedule
    assert epoch_schedule(20, 9, batch_size=4, seed=0, epoch=1) != schedule


def test_images_are_split_once_each_by_a_stored_seed():
    keys = [f"k{i}" for i in range(50)]
    splits = split_images(keys, seed=7)
    assert set(splits) == set(keys)
    assert sorted(splits.values()).count("test") == 5 and sorted(splits.values()).count("dev") == 5
    assert split_images(list(reversed(keys)), seed=7) == splits
    assert split_images(keys, seed=8) != splits
    with pytest.raises(ValueError, match="at least 3 images"):
        split_images(["a", "b"], seed=0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"learning_rate": 0}, "learning rate"),
        ({"batch_size": 2}, "batch size"),
        ({"epochs": 0}, "epochs"),
        ({"trainable": "vision"}, "trainable"),
        ({"autocast": "fp16"}, "loss scaling"),
    ],
)
def test_a_bad_setting_is_refused_by_name(change, message):
    with pytest.raises(ValueError, match=message):
        FineTuneConfig(**change).check()


def test_losses_are_read_from_the_device_once_per_log_interval_not_per_step(tokenizer, tmp_path, monkeypatch):
    """No per-step host synchronisation (docs/clip-on-gpu.md): a loss is turned into a Python number only
    for the reports that carry losses (every ``log_every`` steps, at a checkpoint, at an epoch's end)."""
    images = synthetic(24)
    task = small_task(images)
    config = FineTuneConfig(learning_rate=1e-3, batch_size=4, epochs=1, seed=3, checkpoint_every=100)
    reads = []
    original = torch.Tensor.__float__

    def counted(self):
        reads.append(self.numel())
        return original(self)

    monkeypatch.setattr(torch.Tensor, "__float__", counted)
    reports = []
    _, outcome = run(
        tokenizer, tmp_path, images, config=config, on_progress=reports.append, log_every=3, **task
    )
    train = [r for r in reports if r["phase"] == "train"]
    assert len(train) == outcome.steps > 6
    # (A loss is None in a report when no batch of its kind ran since the last: the contrastive batches
    # run out before the Pearson ones here.)
    with_losses = [
        r["step"] for r in train if r["loss_contrastive"] is not None or r["loss_pearson"] is not None
    ]
    assert with_losses == [s for s in range(1, outcome.steps + 1) if s % 3 == 0 or s == outcome.steps]
    assert all(
        r["loss_contrastive"] is None and r["loss_pearson"] is None
        for r in train
        if r["step"] not in with_losses
    )
    # Two losses per report, two epoch means, and nothing else read during training.
    assert len(reads) <= 2 * len(with_losses) + 2
    assert (
        outcome.history[0]["loss_contrastive"] is not None and outcome.history[0]["loss_pearson"] is not None
    )
    with pytest.raises(ValueError, match="log_every must be at least 1"):
        run(tokenizer, tmp_path / "bad", images, config=config, log_every=0, **task)
