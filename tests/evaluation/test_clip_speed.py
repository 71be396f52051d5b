"""CLIP embedding speed-ups keep the numbers: trimmed padding, dedupe, the text cache, threads, autocast,
the image decoding threads. Tiny random models (tests/evaluation/clip_tiny.py); their scores mean nothing,
the tests compare the fast paths with the plain open_clip computation."""

import io

import numpy as np
import pytest
from PIL import Image

from evaluation.metrics.clip import (
    ClipUnavailable,
    InMemoryEmbeddingCache,
    LoadedClip,
    autocast_check,
    embed_images,
    embed_images_cached,
    embed_texts,
    ensure_torchvision_loadable,
    score_clip,
    text_trimming,
)
from evaluation.metrics.clip.embedding import pixel_batches
from evaluation.metrics.clip.texts import length_batches
from evaluation.metrics.clip_models import clip_autocast_verify, clip_model_get, clip_models_clear
from tests.evaluation.clip_tiny import (
    TINY_CONFIG,
    TINY_IMAGE_SIZE,
    TINY_MODEL_NAME,
    WordIdTokenizer,
    build_tiny_hf_model,
    build_tiny_model,
    save_tiny_checkpoint,
)

WORDS = [
    "ein",
    "hund",
    "katze",
    "rennt",
    "über",
    "den",
    "strand",
    "rot",
    "blau",
    "zwei",
    "kinder",
    "spielen",
    "im",
    "park",
    "bus",
    "straße",
]


def _texts(n, seed=0):
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, int(rng.integers(1, 30)))) for _ in range(n)]
    return [*texts, " ".join(["lang"] * 120)]  # longer than the context: truncated by the tokenizer


def _loaded(model, tokenizer, name):
    ensure_torchvision_loadable()
    import open_clip

    return LoadedClip(
        model=model,
        preprocess=open_clip.image_transform(TINY_IMAGE_SIZE, is_train=False),
        tokenizer=tokenizer,
        device="cpu",
        model_id=f"test:{name}",
        model_name=name,
        pretrained=None,
        checkpoint_path=None,
        embed_dim=32,
    )


@pytest.fixture(scope="module")
def clip_tower():
    ensure_torchvision_loadable()
    import open_clip

    return _loaded(build_tiny_model(seed=3), open_clip.tokenize, "clip-tower")


@pytest.fixture(scope="module")
def hf_tower(tmp_path_factory):
    model = build_tiny_hf_model(tmp_path_factory.mktemp("xlmr"), seed=4)
    return _loaded(model, WordIdTokenizer(), "hf-tower")


def _full_context(loaded, texts):
    """open_clip's own computation: every text padded to the full context, one forward pass."""
    import torch
    import torch.nn.functional as F

    with torch.no_grad():
        return F.normalize(loaded.model.encode_text(loaded.tokenizer(texts)), dim=-1).numpy()


class Widths:
    """Counts the rows and the widths of the token batches the text tower is given."""

    def __init__(self, loaded, monkeypatch):
        self.rows, self.widths = 0, []
        # The causal CLIP tower is run piece by piece (its transformer sees the embedded tokens);
        # any other through encode_text.
        causal = text_trimming(loaded.model) == "clip-causal"
        target, name = (loaded.model.transformer, "forward") if causal else (loaded.model, "encode_text")
        original = getattr(target, name)

        def spy(x, *args, **kwargs):
            self.rows += x.shape[0]
            self.widths.append(x.shape[1])
            return original(x, *args, **kwargs)

        monkeypatch.setattr(target, name, spy)


@pytest.mark.parametrize("tower", ["clip_tower", "hf_tower"])
def test_trimmed_batches_give_the_full_context_embeddings(tower, request, monkeypatch):
    loaded = request.getfixturevalue(tower)
    assert text_trimming(loaded.model) == {"clip_tower": "clip-causal", "hf_tower": "hf-mask"}[tower]
    texts = _texts(40)
    expected = _full_context(loaded, texts)
    widths = Widths(loaded, monkeypatch)
    got = embed_texts(loaded, texts, batch_size=8)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # Trimmed for real: short batches are narrower than the context; only the truncated text is full width.
    assert min(widths.widths) < 20 and sorted(widths.widths)[-2] < 77
    assert widths.rows == len(texts)


def _cost(lengths, batches, overhead):
    return sum(overhead + (end - start) * lengths[start] for start, end in batches)


def _least_cost(lengths, max_texts, overhead):
    """Every way of cutting, by recursion: the reference the dynamic programme must equal."""
    if len(lengths) == 0:
        return 0
    return min(
        overhead + size * lengths[0] + _least_cost(lengths[size:], max_texts, overhead)
        for size in range(1, min(max_texts, len(lengths)) + 1)
    )


@pytest.mark.parametrize("seed", range(6))
def test_length_batches_pad_least_and_cover_every_text_once_in_order(seed):
    rng = np.random.default_rng(seed)
    lengths = np.sort(rng.integers(3, 40, int(rng.integers(1, 11))))[::-1]
    max_texts, overhead = int(rng.integers(1, 5)), int(rng.integers(0, 30))
    batches = length_batches(lengths, max_texts, overhead)
    assert [i for start, end in batches for i in range(start, end)] == list(range(len(lengths)))
    assert all(0 < end - start <= max_texts for start, end in batches)
    assert _cost(lengths, batches, overhead) == _least_cost(tuple(lengths), max_texts, overhead)


def test_length_batches_split_a_spread_of_lengths_that_fixed_batches_would_pad():
    # 2 long and 30 short captions: one batch of 32 would pad every short one to 60.
    lengths = np.array([60, 58] + [12] * 30)
    batches = length_batches(lengths, 64, overhead=40)
    assert batches == [(0, 2), (2, 32)]
    assert length_batches(np.array([], dtype=int), 64) == []
    with pytest.raises(ValueError, match="longest first"):
        length_batches(np.array([3, 5]), 64)


def test_a_tower_that_padding_can_reach_is_fed_the_full_context(tmp_path):
    ensure_torchvision_loadable()
    import open_clip

    # No causal mask and "last" pooling: the pad columns are read, so nothing may be trimmed.
    config = {
        **TINY_CONFIG,
        "text_cfg": {**TINY_CONFIG["text_cfg"], "no_causal_mask": True, "pool_type": "last"},
    }
    model = open_clip.CustomTextCLIP(**config).eval()
    loaded = _loaded(model, open_clip.tokenize, "last-pool")
    assert text_trimming(model) == "full"
    texts = _texts(6)
    np.testing.assert_allclose(
        embed_texts(loaded, texts, batch_size=4), _full_context(loaded, texts), atol=1e-5
    )


def _image_bytes(n):
    out = []
    for i in range(n):
        buffer = io.BytesIO()
        Image.new("RGB", (80 + 7 * i, 60), (30 * i % 255, 90, 200 - 20 * i % 200)).save(buffer, "PNG")
        out.append(buffer.getvalue())
    return out


def test_each_distinct_text_is_embedded_once_and_scores_match_no_dedupe(hf_tower, monkeypatch):
    images = _image_bytes(3)
    candidates = {"a": "ein hund rennt", "b": "zwei kinder spielen", "c": "ein hund rennt"}
    references = {
        "a": ["ein hund am strand", "ein hund"],
        "b": ["kinder im park", "ein hund"],
        "c": ["ein hund"],
    }
    widths = Widths(hf_tower, monkeypatch)
    report = score_clip(hf_tower, candidates, dict(zip(candidates, images)), references)
    distinct = {*candidates.values(), *(r for refs in references.values() for r in refs)}
    assert widths.rows == len(distinct) == 5  # 9 texts given, 5 distinct

    # Without any reuse: each text on its own, the formulas by hand.
    image_emb = embed_images(hf_tower, images)
    for i, key in enumerate(candidates):
        cand = _full_context(hf_tower, [candidates[key]])[0]
        refs = _full_context(hf_tower, references[key])
        clip = 2.5 * max(float(image_emb[i] @ cand), 0.0)
        ref = max(float(np.max(refs @ cand)), 0.0)
        assert report.clipscore[key] == pytest.approx(clip, abs=1e-5)
        assert report.refclipscore[key] == pytest.approx(2 * clip * ref / (clip + ref), abs=1e-5)


def test_the_text_cache_serves_a_second_run(clip_tower, monkeypatch):
    cache = InMemoryEmbeddingCache()
    texts = _texts(12)
    widths = Widths(clip_tower, monkeypatch)
    first = embed_texts(clip_tower, texts, cache=cache)
    assert widths.rows == len(set(texts)) and len(cache) == len(set(texts))
    again = embed_texts(clip_tower, [*texts[::-1], "ein neuer text"], cache=cache)
    assert widths.rows == len(set(texts)) + 1  # only the new text was embedded
    np.testing.assert_array_equal(again[: len(texts)], first[::-1])
    # Another precision never reads fp32 entries (and the reverse): its own key.
    assert clip_tower.with_autocast("bf16").embedding_key == f"{clip_tower.model_id}|autocast=bf16"
    assert cache.get_many(clip_tower.with_autocast("bf16").embedding_key, ["0" * 64]) == {}


def test_image_decoding_threads_give_the_serial_embeddings_and_report_a_bad_file(hf_tower):
    images = _image_bytes(7)
    serial = embed_images(hf_tower, images, batch_size=2, loader_threads=0)
    threaded = embed_images(hf_tower, images, batch_size=2, loader_threads=3)
    np.testing.assert_array_equal(threaded, serial)

    class Unreadable(Exception):
        pass

    def broken():
        raise Unreadable("image 5 cannot be read")

    from evaluation.metrics.clip import content_hash

    items = [(content_hash(b), lambda b=b: b) for b in images[:4]]
    items.append((content_hash(b"broken"), broken))
    cache = InMemoryEmbeddingCache()
    with pytest.raises(Unreadable, match="image 5"):
        embed_images_cached(hf_tower, items, cache, batch_size=2, loader_threads=2)
    assert len(cache) == 4  # the batches before the bad file are kept, nothing of its batch
    starts = [start for start, _ in pixel_batches(hf_tower, images, 3, loader_threads=2)]
    assert starts == [0, 3, 6]


def test_autocast_is_checked_against_fp32_within_its_tolerance(clip_tower):
    import torch

    texts = _texts(5)[:6]
    pixels = torch.stack([clip_tower.preprocess(Image.open(io.BytesIO(b))) for b in _image_bytes(len(texts))])
    bf16 = clip_tower.with_autocast("bf16")
    check = autocast_check(bf16, texts, pixels, tolerance=0.05)
    # bf16 moves the numbers (8-bit mantissa), by far less than the documented tolerance.
    assert 0 < max(check.max_clipscore_diff, check.max_text_cosine_diff) < 0.01
    assert check.ok
    assert not autocast_check(bf16, texts, pixels, tolerance=1e-7).ok
    clip_models_clear()
    with pytest.raises(ClipUnavailable, match=r"autocast bf16 moved a CLIPScore by .* tolerance 1e-07"):
        clip_autocast_verify(bf16, texts, pixels, tolerance=1e-7)
    with pytest.raises(ValueError, match="unknown CLIP autocast 'fp8'"):
        clip_tower.with_autocast("fp8")
    with pytest.raises(ValueError, match="needs a model with autocast"):
        autocast_check(clip_tower, texts, pixels)


def test_the_thread_setting_is_applied_when_a_worker_gets_its_model(tmp_path):
    import torch

    checkpoint = save_tiny_checkpoint(tmp_path / "tiny.pt", seed=2)
    from evaluation.metrics.clip import register_model_config

    register_model_config(TINY_MODEL_NAME, TINY_CONFIG)
    before = torch.get_num_threads()
    try:
        clip_models_clear()
        loaded = clip_model_get(model=TINY_MODEL_NAME, checkpoint=str(checkpoint), threads=1)
        assert torch.get_num_threads() == 1
        assert (
            clip_model_get(model=TINY_MODEL_NAME, checkpoint=str(checkpoint), autocast="bf16").model
            is loaded.model
        )
        with pytest.raises(ValueError, match="CLIP_TORCH_THREADS must be 0"):
            clip_model_get(model=TINY_MODEL_NAME, checkpoint=str(checkpoint), threads=-1)
    finally:
        torch.set_num_threads(before)
        clip_models_clear()
