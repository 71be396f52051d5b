"""Image orientation for CLIP: upright by the EXIF tag ("exif", the platform's default) or as stored
("stored", as jmhessel's reference CLIPScore code reads the file), and an embedding cache that never
serves one for the other.

The model is the tiny random CLIP of tests/evaluation/clip_tiny.py: its numbers mean nothing, only
whether two embeddings are the same.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from evaluation.metrics.clip import (
    InMemoryEmbeddingCache,
    content_hash,
    embed_images,
    embed_images_cached,
    embedding_cache_key,
    image_orientation_check,
    image_rgb,
    load_clip,
    score_clip,
)
from tests.evaluation.clip_tiny import TINY_CONFIG, TINY_MODEL_NAME, save_tiny_checkpoint

ORIENTATION_TAG = 0x0112


def jpeg(orientation: int) -> bytes:
    """A 64×40 JPEG whose left half is red and right half blue, with a vertical gradient, and the
    given EXIF orientation tag (6: the camera was turned; viewers rotate it 90° clockwise)."""
    pixels = np.zeros((40, 64, 3), dtype=np.uint8)
    pixels[:, :32, 0] = 220
    pixels[:, 32:, 2] = 220
    pixels[:, :, 1] = np.linspace(0, 255, 40, dtype=np.uint8)[:, None]
    exif = Image.Exif()
    exif[ORIENTATION_TAG] = orientation
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="JPEG", quality=95, exif=exif.tobytes())
    return out.getvalue()


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    checkpoint = save_tiny_checkpoint(tmp_path_factory.mktemp("clip") / "tiny.pt", seed=5)
    return load_clip(TINY_MODEL_NAME, checkpoint_path=checkpoint, device="cpu", model_config=TINY_CONFIG)


def test_orientation_6_is_turned_upright_only_under_exif():
    data = jpeg(6)
    upright = image_rgb(data, "exif")
    stored = image_rgb(data, "stored")
    assert stored.size == (64, 40)
    assert upright.size == (40, 64)  # rotated a quarter turn
    # Tag 6: the stored image is turned 90° clockwise for viewing.
    np.testing.assert_array_equal(
        np.asarray(upright), np.asarray(stored.transpose(Image.Transpose.ROTATE_270))
    )
    # A PIL image opened by the caller goes the same way.
    assert image_rgb(Image.open(io.BytesIO(data)), "stored").size == (64, 40)


def test_orientation_1_gives_the_same_pixels_under_both():
    data = jpeg(1)
    np.testing.assert_array_equal(np.asarray(image_rgb(data, "exif")), np.asarray(image_rgb(data, "stored")))


def test_unknown_orientation_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="unknown image orientation 'rotated'; choose exif .* or stored"):
        image_orientation_check("rotated")
    with pytest.raises(ValueError, match="unknown image orientation"):
        image_rgb(jpeg(1), "EXIF")


def test_embeddings_differ_for_a_rotated_photo_and_agree_otherwise(loaded):
    rotated, plain = jpeg(6), jpeg(1)
    exif = embed_images(loaded, [rotated, plain], orientation="exif")
    stored = embed_images(loaded, [rotated, plain], orientation="stored")
    assert np.abs(exif[0] - stored[0]).max() > 1e-3
    np.testing.assert_allclose(exif[1], stored[1], atol=1e-6)
    # The default is exif, as annotators see the photo.
    np.testing.assert_allclose(embed_images(loaded, [rotated])[0], exif[0], atol=1e-6)
    # score_clip embeds (and caches) the image the way it is told, and says which way.
    cache = InMemoryEmbeddingCache()
    report = score_clip(
        loaded, {"r": "a red and blue picture"}, {"r": rotated}, cache=cache, image_orientation="stored"
    )
    assert report.image_orientation == "stored"
    key = embedding_cache_key(loaded.model_id, "stored")
    np.testing.assert_allclose(
        cache.get_many(key, [content_hash(rotated)])[content_hash(rotated)], stored[0], atol=1e-6
    )
    assert cache.get_many(loaded.model_id, [content_hash(rotated)]) == {}
    assert score_clip(loaded, {"r": "a picture"}, {"r": rotated}).image_orientation == "exif"


def test_the_cache_never_serves_one_orientation_for_the_other(loaded):
    data = jpeg(6)
    digest = content_hash(data)
    cache = InMemoryEmbeddingCache()
    loads: list[str] = []

    def item(label):
        def loader():
            loads.append(label)
            return data

        return [(digest, loader)]

    exif = embed_images_cached(loaded, item("exif"), cache, orientation="exif")
    stored = embed_images_cached(loaded, item("stored"), cache, orientation="stored")
    assert loads == ["exif", "stored"]  # the exif vector was in the cache, and was not used
    assert len(cache) == 2
    np.testing.assert_allclose(stored[0], embed_images(loaded, [data], orientation="stored")[0], atol=1e-6)
    # Each is then served from its own entry.
    again_exif = embed_images_cached(loaded, item("exif again"), cache, orientation="exif")
    again_stored = embed_images_cached(loaded, item("stored again"), cache, orientation="stored")
    assert loads == ["exif", "stored"]
    np.testing.assert_array_equal(again_exif, exif)
    np.testing.assert_array_equal(again_stored, stored)
    # exif keeps the plain model key: embeddings cached before the setting existed were upright.
    assert cache.get_many(loaded.model_id, [digest])[digest] == pytest.approx(exif[0])
    assert embedding_cache_key(loaded.model_id, "stored") != loaded.model_id
