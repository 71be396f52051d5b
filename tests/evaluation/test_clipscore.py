"""CLIPScore / RefCLIPScore: formulas, loading, embedding cache.

The model is a tiny random one (tests/evaluation/clip_tiny.py); its numbers mean nothing.
The tests check that the engine agrees with an independent computation on real photos,
and the formulas on hand-built embeddings. No figure from here is a result.
"""

import hashlib
import io
import json
import time

import numpy as np
import pytest
from PIL import Image

from evaluation.metrics.clip import (
    ClipUnavailable,
    DirectoryEmbeddingCache,
    InMemoryEmbeddingCache,
    clipscore,
    content_hash,
    corpus_score,
    embed_images,
    embed_images_cached,
    ensure_torchvision_loadable,
    harmonic_mean,
    load_clip,
    ref_similarity,
    refclipscore,
    score_clip,
)
from tests.evaluation.clip_tiny import TINY_CONFIG, TINY_IMAGE_SIZE, TINY_MODEL_NAME, save_tiny_checkpoint
from tests.prerequisites import SHARED_DATA, shared_data_folder

# Shared test data lives beside the project root (../shared/data), not inside the repository.
EXAMPLE = SHARED_DATA / "clipscore-example"


def _example():
    shared_data_folder(EXAMPLE)  # skipped when missing, failed under CI
    good = json.loads((EXAMPLE / "good_captions.json").read_text())
    bad = json.loads((EXAMPLE / "bad_captions.json").read_text())
    refs = json.loads((EXAMPLE / "refs.json").read_text())
    images = {key: EXAMPLE / "images" / f"{key}.jpg" for key in good}
    return good, bad, refs, images


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("clip") / "tiny.pt", seed=1234)


@pytest.fixture(scope="module")
def loaded(checkpoint):
    return load_clip(TINY_MODEL_NAME, checkpoint_path=checkpoint, device="cpu", model_config=TINY_CONFIG)


@pytest.fixture(scope="module")
def direct(checkpoint):
    """An independent pipeline: the architecture built by hand, weights via load_state_dict."""
    ensure_torchvision_loadable()
    import open_clip
    import torch
    import torch.nn.functional as F

    model = open_clip.CLIP(**TINY_CONFIG).eval()
    model.load_state_dict(torch.load(checkpoint, weights_only=True))
    transform = open_clip.image_transform(TINY_IMAGE_SIZE, is_train=False)

    def image_emb(paths):
        pixels = torch.stack([transform(Image.open(p).convert("RGB")) for p in paths])
        with torch.no_grad():
            return F.normalize(model.encode_image(pixels), dim=-1)

    def text_emb(texts):
        with torch.no_grad():
            return F.normalize(model.encode_text(open_clip.tokenize(texts)), dim=-1)

    return image_emb, text_emb


def _unit(*rows):
    array = np.array(rows, dtype=np.float64)
    return array / np.linalg.norm(array, axis=1, keepdims=True)


# --- agreement with an independent computation on the real example photos ------------------------


@pytest.mark.parametrize("prefix", ["", "A photo depicts"])
@pytest.mark.parametrize("which", ["good", "bad"])
def test_scores_match_direct_computation(loaded, direct, prefix, which):
    import torch

    good, bad, refs, images = _example()
    candidates = good if which == "good" else bad
    keys = list(candidates)
    image_emb, text_emb = direct

    report = score_clip(loaded, candidates, images, refs, prompt_prefix=prefix)

    def prompted(text):
        return f"{prefix} {text}" if prefix else text

    v = image_emb([images[k] for k in keys])
    c = text_emb([prompted(candidates[k]) for k in keys])
    expected_clip = 2.5 * torch.clamp((v * c).sum(dim=1), min=0)
    expected_ref = []
    for i, k in enumerate(keys):
        r = text_emb([prompted(x) for x in refs[k]])
        sim = torch.clamp((c[i : i + 1] @ r.T).max(), min=0)
        a = expected_clip[i]
        expected_ref.append(0.0 if a + sim == 0 else float(2 * a * sim / (a + sim)))

    assert list(report.clipscore) == keys
    np.testing.assert_allclose([report.clipscore[k] for k in keys], expected_clip.numpy(), atol=1e-5)
    np.testing.assert_allclose([report.refclipscore[k] for k in keys], expected_ref, atol=1e-5)
    assert report.corpus_clipscore == pytest.approx(float(expected_clip.mean()), abs=1e-5)
    assert report.corpus_refclipscore == pytest.approx(float(np.mean(expected_ref)), abs=1e-5)
    assert report.model_id == loaded.model_id
    assert report.prompt_prefix == prefix


def test_image_inputs_as_path_bytes_and_pil_give_the_same_embedding(loaded):
    _example()  # skips without the shared data
    path = EXAMPLE / "images" / "image1.jpg"
    data = path.read_bytes()
    emb = embed_images(loaded, [path, str(path), data, Image.open(io.BytesIO(data))], batch_size=3)

    assert emb.shape == (4, TINY_CONFIG["embed_dim"])
    assert emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(emb, np.repeat(emb[:1], 4, axis=0), atol=1e-6)


def test_load_clip_identifies_a_checkpoint_by_its_sha256(loaded, checkpoint):
    digest = hashlib.sha256(checkpoint.read_bytes()).hexdigest()

    assert loaded.model_id == f"{TINY_MODEL_NAME}:sha256-{digest}"
    assert loaded.device == "cpu"
    assert loaded.embed_dim == TINY_CONFIG["embed_dim"]
    assert content_hash(checkpoint) == content_hash(checkpoint.read_bytes()) == digest


# --- the formulas on hand-built embeddings --------------------------------------------------------


def test_clipscore_clips_each_caption_at_zero_before_averaging():
    image = _unit([1, 0, 0], [1, 0, 0], [1, 0, 0])
    captions = _unit([-1, 0, 0], [1, 1, 0], [1, 0, 0])  # cos -1, 1/sqrt(2), 1

    scores = clipscore(image, captions)

    np.testing.assert_allclose(scores, [0.0, 2.5 / np.sqrt(2), 2.5])
    # clipping after averaging would give 2.5 * mean(-1, 0.707, 1) = 0.589..., not this
    assert corpus_score(scores) == pytest.approx((2.5 / np.sqrt(2) + 2.5) / 3)
    assert clipscore(image[:1], captions[1:2], w=100)[0] == pytest.approx(100 / np.sqrt(2))


def test_harmonic_mean_edge_cases():
    with np.errstate(all="raise"):
        result = harmonic_mean(np.array([0.0, 2.0, 0.0, 1.0, 2.0]), np.array([0.0, 0.0, 0.5, 1.0, 0.5]))

    np.testing.assert_allclose(result, [0.0, 0.0, 0.0, 1.0, 2 * 2.0 * 0.5 / 2.5])


def test_refclipscore_uses_the_best_reference_clipped_at_zero():
    image = _unit([1, 0, 0], [1, 0, 0])
    cands = _unit([1, 1, 0], [1, 0, 0])
    refs = [_unit([0, 1, 0], [1, 1, 0]), _unit([-1, 0, 0], [-1, -1, 0])]  # best cos 1; all negative

    clip = clipscore(image, cands)
    sims = ref_similarity(cands, refs)
    scores = refclipscore(clip, cands, refs)

    np.testing.assert_allclose(sims, [1.0, 0.0], atol=1e-12)
    a = 2.5 / np.sqrt(2)
    np.testing.assert_allclose(scores, [2 * a * 1.0 / (a + 1.0), 0.0])


def test_formulas_reject_unnormalised_or_missing_inputs():
    with pytest.raises(ValueError, match="normalised"):
        clipscore(np.array([[2.0, 0.0]]), np.array([[1.0, 0.0]]))
    with pytest.raises(ValueError, match="no references"):
        ref_similarity(_unit([1, 0]), [np.zeros((0, 2))])
    with pytest.raises(ValueError, match="at least one caption"):
        corpus_score(np.array([]))


def test_score_clip_requires_an_image_and_references_for_every_caption(loaded):
    good, _, refs, images = _example()
    with pytest.raises(ValueError, match="no image"):
        score_clip(loaded, good, {"image1": images["image1"]})
    with pytest.raises(ValueError, match="no references"):
        score_clip(loaded, good, images, {"image1": refs["image1"], "image2": []})


# --- the image embedding cache --------------------------------------------------------------------


def _png(color) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (80, 60), color).save(buffer, format="PNG")
    return buffer.getvalue()


def test_cached_embedding_computes_only_new_images(loaded):
    calls = []

    def item(data: bytes):
        def load():
            calls.append(content_hash(data))
            return data

        return content_hash(data), load

    red, green, blue = _png("red"), _png("green"), _png("blue")
    cache = InMemoryEmbeddingCache()

    first = embed_images_cached(loaded, [item(red), item(green), item(red)], cache)
    assert len(calls) == 2 and len(cache) == 2
    np.testing.assert_array_equal(first[0], first[2])

    calls.clear()
    second = embed_images_cached(loaded, [item(green), item(blue), item(red)], cache, batch_size=1)
    assert calls == [content_hash(blue)]
    np.testing.assert_array_equal(second[0], first[1])
    np.testing.assert_array_equal(second[2], first[0])
    np.testing.assert_allclose(second[1], embed_images(loaded, [blue])[0], atol=1e-6)


def test_score_clip_reuses_cached_image_embeddings(loaded):
    good, _, _, images = _example()

    class SpyCache(InMemoryEmbeddingCache):
        puts = 0

        def put_many(self, model_id, vectors):
            SpyCache.puts += len(vectors)
            super().put_many(model_id, vectors)

    cache = SpyCache()
    first = score_clip(loaded, good, images, cache=cache)
    second = score_clip(loaded, good, images, cache=cache)

    assert SpyCache.puts == 2
    assert second.clipscore == first.clipscore


def test_directory_cache_persists_per_model(tmp_path):
    h1, h2 = content_hash(b"one"), content_hash(b"two")
    vector = np.arange(4, dtype=np.float32)
    DirectoryEmbeddingCache(tmp_path).put_many("m:a", {h1: vector})

    reopened = DirectoryEmbeddingCache(tmp_path)
    found = reopened.get_many("m:a", [h1, h2])
    assert list(found) == [h1]
    np.testing.assert_array_equal(found[h1], vector)
    assert reopened.get_many("m:b", [h1]) == {}
    with pytest.raises(ValueError, match="sha256"):
        reopened.get_many("m:a", ["../../etc/passwd"])


# --- ClipUnavailable ------------------------------------------------------------------------------


def test_missing_checkpoint_file_says_what_to_set(tmp_path):
    missing = tmp_path / "nowhere.pt"
    with pytest.raises(ClipUnavailable) as info:
        load_clip(TINY_MODEL_NAME, checkpoint_path=missing, model_config=TINY_CONFIG)

    message = str(info.value)
    assert str(missing) in message and "does not exist" in message and "CLIP_CHECKPOINT" in message


def test_no_weights_at_all_is_refused_rather_than_random():
    with pytest.raises(ClipUnavailable, match="no weights were given"):
        load_clip(TINY_MODEL_NAME, model_config=TINY_CONFIG)


def test_checkpoint_of_another_architecture_is_unavailable_not_a_traceback(tmp_path):
    import torch

    wrong = tmp_path / "wrong.pt"
    torch.save({"visual.proj": torch.zeros(3, 3)}, wrong)
    with pytest.raises(ClipUnavailable, match="could not be built"):
        load_clip(TINY_MODEL_NAME, checkpoint_path=wrong, model_config=TINY_CONFIG)


@pytest.fixture
def offline_hub(monkeypatch, tmp_path):
    import huggingface_hub.constants

    # huggingface_hub reads these at import time (open_clip imports it), so the environment
    # alone would not reach it; an empty cache keeps weights cached elsewhere out of the test.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


def test_default_model_offline_names_missing_weights_and_tokenizer(offline_hub):
    started = time.monotonic()
    with pytest.raises(ClipUnavailable) as info:
        load_clip("xlm-roberta-base-ViT-B-32", "laion5b_s13b_b90k")
    elapsed = time.monotonic() - started

    message = str(info.value)
    assert "laion/CLIP-ViT-B-32-xlm-roberta-base-laion5B-s13B-b90k" in message
    assert "CLIP_CHECKPOINT" in message and "HF_HOME" in message
    assert "tokenizer 'xlm-roberta-base'" in message
    assert "Traceback" not in message
    assert elapsed < 20  # the online path retries for ~45 s; offline must not


def test_unknown_tag_lists_the_known_ones(offline_hub):
    with pytest.raises(ClipUnavailable, match="laion5b_s13b_b90k"):
        load_clip("xlm-roberta-base-ViT-B-32", "no_such_tag")
