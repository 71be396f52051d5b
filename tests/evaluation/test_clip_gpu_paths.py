"""The GPU paths of CLIP inference, built and checked on a CPU (docs/clip-on-gpu.md): batch size by device,
width buckets, pinned attention kernels, the reduced-precision weight copy, tokenising ahead on a thread,
the tensor image pipeline against open_clip's PIL preprocessing. The CUDA-only steps are small and guarded;
here each is forced on the CPU where it can be (``pin=True``, ``cast_weights=True``, buckets patched in) and
compared with the plain open_clip computation. Tiny random models (tests/evaluation/clip_tiny.py)."""

import io
import threading

import numpy as np
import pytest
from PIL import Image

from evaluation.metrics.clip import (
    AUTOCAST_TOLERANCE,
    InMemoryEmbeddingCache,
    content_hash,
    embed_images,
    embed_images_cached,
    embed_texts,
    embedding_cache_key,
    ensure_torchvision_loadable,
)
from evaluation.metrics.clip import device as clip_device
from evaluation.metrics.clip import texts as clip_texts
from evaluation.metrics.clip.device import (
    CUDA_WIDTH_BUCKETS,
    attention_backends,
    bucket_widths,
    reduced_precision_model,
    text_batch_size,
    width_buckets,
)
from evaluation.metrics.clip.embedding import image_pipeline_of
from evaluation.metrics.clip.pixels import preprocess_tensor, tensor_preprocess_spec, uint8_chw
from evaluation.metrics.clip.runtime import inference, inference_model
from tests.evaluation.test_clip_speed import Widths, _full_context, _image_bytes, _texts, clip_tower, hf_tower

__all__ = ["clip_tower", "hf_tower"]  # the fixtures, shared with test_clip_speed


# --- batch size and buckets: pure logic -------------------------------------------------------------


def test_the_text_batch_size_follows_the_device_unless_the_setting_says_otherwise():
    assert text_batch_size("cpu") == text_batch_size("cpu", 0) == 64
    assert text_batch_size("cuda") == text_batch_size("cuda:1") == 1024
    assert text_batch_size("mps") == 64  # a device without its own default gets the CPU's
    assert text_batch_size("cuda", 256) == text_batch_size("cpu", 256) == 256
    with pytest.raises(ValueError, match="0 \\(by device\\) or positive"):
        text_batch_size("cpu", -1)
    assert width_buckets("cuda:0") == CUDA_WIDTH_BUCKETS and width_buckets("cpu") is None


def test_bucket_widths_round_up_to_a_few_shapes_and_keep_the_order():
    lengths = np.array([77, 70, 64, 33, 32, 9, 8, 1])
    got = bucket_widths(lengths, CUDA_WIDTH_BUCKETS, 77)
    # Beyond the last bucket that fits the context: the context itself; never below the length.
    assert got.tolist() == [77, 77, 64, 48, 32, 16, 8, 8]
    assert np.all(np.diff(got) <= 0) and np.all(got >= lengths)
    assert bucket_widths([5, 3], (4,), 77).tolist() == [77, 4]
    rng = np.random.default_rng(0)
    many = np.sort(rng.integers(1, 78, 5000))[::-1]
    assert len(set(bucket_widths(many, CUDA_WIDTH_BUCKETS, 77).tolist())) <= 8
    for bad in ((), (8, 8), (16, 8), (0, 8)):
        with pytest.raises(ValueError, match="positive and increasing"):
            bucket_widths(lengths, bad, 77)


# --- the text tower: each GPU step forced on the CPU gives open_clip's numbers -------------------------


@pytest.mark.parametrize("tower", ["clip_tower", "hf_tower"])
def test_bucketed_widths_give_the_full_context_embeddings(tower, request, monkeypatch):
    loaded = request.getfixturevalue(tower)
    texts = _texts(40)
    expected = _full_context(loaded, texts)
    monkeypatch.setattr(clip_device, "width_buckets", lambda device: (4, 8, 16))
    widths = Widths(loaded, monkeypatch)
    got = embed_texts(loaded, texts, batch_size=8)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert set(widths.widths) <= {4, 8, 16, 77} and widths.rows == len(texts)


@pytest.mark.parametrize("tower", ["clip_tower", "hf_tower"])
def test_pinned_attention_kernels_change_no_embedding(tower, request):
    loaded = request.getfixturevalue(tower)
    texts = _texts(24)
    with attention_backends("cpu", pin=True):
        got = embed_texts(loaded, texts, batch_size=8)
    np.testing.assert_allclose(got, _full_context(loaded, texts), atol=1e-5)


def test_texts_are_tokenised_a_slice_ahead_on_a_thread_with_the_same_numbers(hf_tower, monkeypatch):
    texts = _texts(40)
    expected = _full_context(hf_tower, texts)
    threads = []
    tokenizer = hf_tower.tokenizer

    def spy(batch):
        threads.append(threading.current_thread().name)
        return tokenizer(batch)

    monkeypatch.setattr(clip_texts, "_SLICE_BATCHES", 2)
    loaded = type(hf_tower)(**{**hf_tower.__dict__, "tokenizer": spy})
    cache = InMemoryEmbeddingCache()
    got = embed_texts(loaded, texts, batch_size=4, cache=cache)  # slices of 8: 6 of them
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert len(threads) == 6 and all(name.startswith("clip-tokenize") for name in threads)
    assert len(cache) == len(set(texts))
    np.testing.assert_allclose(embed_texts(loaded, texts, batch_size=4), expected, atol=1e-5)


def test_the_default_batch_size_is_the_devices(clip_tower, monkeypatch):
    widths = Widths(clip_tower, monkeypatch)
    seen = []
    original = clip_texts.length_batches

    def spy(lengths, max_texts, *args, **kwargs):
        seen.append(max_texts)
        return original(lengths, max_texts, *args, **kwargs)

    monkeypatch.setattr(clip_texts, "length_batches", spy)
    embed_texts(clip_tower, _texts(10))
    embed_texts(clip_tower, _texts(10), batch_size=0)
    assert seen == [64, 64] and widths.rows == 2 * 11
    with pytest.raises(ValueError, match="positive"):
        embed_texts(clip_tower, ["ein hund"], batch_size=-3)


def test_the_reduced_precision_copy_is_made_once_and_leaves_the_fp32_model_alone(clip_tower):
    import torch
    import torch.nn.functional as F

    bf16 = clip_tower.with_autocast("bf16")
    copy = inference_model(bf16, cast_weights=True)
    assert (
        copy
        is inference_model(bf16, cast_weights=True)
        is reduced_precision_model(clip_tower.model, torch.bfloat16)
    )
    assert copy is not clip_tower.model
    assert {p.dtype for p in copy.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in clip_tower.model.parameters()} == {torch.float32}
    # fp32 runs, and autocast off CUDA by default, use the model itself.
    assert inference_model(clip_tower, cast_weights=True) is clip_tower.model
    assert inference_model(bf16) is clip_tower.model

    tokens = clip_tower.tokenizer(_texts(16))
    pixels = torch.rand(len(tokens), 3, 64, 64)
    with inference(clip_tower):
        text32 = F.normalize(clip_tower.model.encode_text(tokens).float(), dim=-1)
        image32 = F.normalize(clip_tower.model.encode_image(pixels).float(), dim=-1)
    with inference(bf16):
        text16 = F.normalize(copy.encode_text(tokens).float(), dim=-1)
        image16 = F.normalize(copy.encode_image(pixels).float(), dim=-1)
    score32 = 2.5 * (text32 * image32).sum(-1).clamp(min=0)
    score16 = 2.5 * (text16 * image16).sum(-1).clamp(min=0)
    assert float((score32 - score16).abs().max()) <= AUTOCAST_TOLERANCE
    assert float((text32 @ text32.T - text16 @ text16.T).abs().max()) <= AUTOCAST_TOLERANCE


# --- the tensor image pipeline --------------------------------------------------------------------


def _open_clip_transform(size, **kwargs):
    ensure_torchvision_loadable()
    import open_clip

    return open_clip.image_transform(size, is_train=False, **kwargs)


def _real_images(shared_data):
    paths = sorted((shared_data / "clipscore-example" / "images").glob("*.jpg"))
    assert paths, "the clipscore example images are missing"
    return paths


@pytest.mark.parametrize("resize_mode", ["shortest", "squash"])
def test_tensor_preprocessing_matches_open_clips_pil_transform_on_real_photos(shared_data, resize_mode):
    transform = _open_clip_transform(224, resize_mode=resize_mode)
    spec = tensor_preprocess_spec(transform)
    assert spec is not None and spec.interpolation == "bicubic"
    for path in _real_images(shared_data):
        image = Image.open(path).convert("RGB")
        expected = transform(image)
        got = preprocess_tensor([uint8_chw(image)], spec)[0]
        assert got.shape == expected.shape
        # Both round the resized pixels to uint8: at most one level apart (1/255 over the smallest std),
        # and almost every pixel equal.
        diff = (got - expected).abs()
        assert float(diff.max()) <= 1 / 255 / min(spec.std) + 1e-6
        assert float(diff.mean()) < 1e-3


def test_a_transform_the_tensor_ops_cannot_reproduce_stays_on_pil(clip_tower):
    assert tensor_preprocess_spec(_open_clip_transform(64, resize_mode="longest")) is None
    assert tensor_preprocess_spec(lambda image: image) is None
    odd = type(clip_tower)(
        **{**clip_tower.__dict__, "preprocess": _open_clip_transform(64, resize_mode="longest")}
    )
    assert image_pipeline_of(odd.with_image_pipeline("tensor")) == "pil"
    assert image_pipeline_of(clip_tower, "tensor") == "tensor"
    with pytest.raises(ValueError, match="unknown image pipeline 'gpu'"):
        clip_tower.with_image_pipeline("gpu")
    with pytest.raises(ValueError, match="unknown image pipeline"):
        embedding_cache_key("m", "exif", "cuda")


def _rotated_jpeg() -> bytes:
    """A JPEG stored sideways with EXIF orientation 6 (turn 90° clockwise to view)."""
    pixels = np.zeros((40, 80, 3), dtype=np.uint8)
    pixels[:, :40] = (250, 20, 20)
    pixels[:, 40:] = (20, 20, 250)
    image = Image.fromarray(pixels)
    exif = image.getexif()
    exif[0x0112] = 6
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=95, exif=exif)
    return buffer.getvalue()


def test_the_tensor_pipeline_scores_as_pil_does_and_is_cached_under_its_own_key(clip_tower, shared_data):
    paths = _real_images(shared_data)
    grey = io.BytesIO()
    Image.fromarray(np.arange(64 * 48, dtype=np.uint16).reshape(48, 64).astype(np.uint8)).save(grey, "PNG")
    rgba = io.BytesIO()
    Image.new("RGBA", (30, 50), (10, 200, 30, 100)).save(rgba, "PNG")
    images = [*paths, *(p.read_bytes() for p in paths), _rotated_jpeg(), grey.getvalue(), rgba.getvalue()]
    images += _image_bytes(3)
    for orientation in ("exif", "stored"):
        pil = embed_images(clip_tower, images, batch_size=4, orientation=orientation)
        tensor = embed_images(clip_tower, images, batch_size=4, orientation=orientation, pipeline="tensor")
        cosines = np.einsum("ij,ij->i", pil, tensor)
        assert cosines.min() > 0.9999, cosines

    tensor_model = clip_tower.with_image_pipeline("tensor")
    items = [(content_hash(b), lambda b=b: b) for b in _image_bytes(3)]
    cache = InMemoryEmbeddingCache()
    got = embed_images_cached(tensor_model, items, cache, batch_size=2)
    key = f"{clip_tower.model_id}|image_pipeline=tensor"
    assert embedding_cache_key(clip_tower.model_id, "exif", "tensor") == key
    assert set(cache.get_many(key, [h for h, _ in items])) == {h for h, _ in items}
    assert cache.get_many(clip_tower.model_id, [h for h, _ in items]) == {}  # PIL entries stay apart
    np.testing.assert_allclose(got, embed_images(tensor_model, [b() for _, b in items]), atol=1e-6)


def _asymmetric_jpeg(tag: int) -> bytes:
    """A 3 × 2 block picture (every block its own colour, so any flip or turn shows) stored with EXIF ``tag``."""
    blocks = np.array(
        [[(250, 0, 0), (0, 250, 0), (0, 0, 250)], [(250, 250, 0), (0, 250, 250), (250, 0, 250)]],
        dtype=np.uint8,
    )
    image = Image.fromarray(np.kron(blocks, np.ones((16, 16, 1), dtype=np.uint8)))
    exif = image.getexif()
    exif[0x0112] = tag
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=100, exif=exif)
    return buffer.getvalue()


@pytest.mark.parametrize("tag", range(1, 9))
def test_the_exif_tag_turns_a_decoded_tensor_as_pil_turns_the_image(tag):
    """The GPU decoder ignores the EXIF tag; the tensor is turned afterwards exactly as PIL would turn it."""
    from PIL import ImageOps

    from evaluation.metrics.clip.pixels import exif_orientation, exif_transpose_tensor

    data = _asymmetric_jpeg(tag)
    assert exif_orientation(data) == tag
    with Image.open(io.BytesIO(data)) as opened:
        stored = opened.convert("RGB")
        upright = ImageOps.exif_transpose(opened).convert("RGB")
    got = exif_transpose_tensor(uint8_chw(stored), tag)
    assert tuple(got.shape) == (3, upright.height, upright.width)
    assert bool((got == uint8_chw(upright)).all())
    assert exif_orientation(_image_bytes(1)[0]) == 1  # a PNG without EXIF: as stored


def test_the_gpu_decoding_branch_gives_the_pil_decoded_embeddings(clip_tower, shared_data, monkeypatch):
    """The CUDA-only control flow (JPEG bytes to the batched decoder, the EXIF tag applied to its tensors,
    other formats by PIL) run on the CPU, with a stand-in decoder that, like the GPU's, ignores the tag."""
    from evaluation.metrics.clip import embedding

    decoded_batches = []

    def stand_in(data, device):
        decoded_batches.append(len(data))
        out = []
        for d in data:
            with Image.open(io.BytesIO(d)) as opened:
                out.append(uint8_chw(opened.convert("RGB")).to(device))
        return out

    monkeypatch.setattr(embedding, "gpu_jpeg_decoding", lambda device: True)
    monkeypatch.setattr(embedding, "decode_jpegs_on_device", stand_in)
    images = [
        *(p.read_bytes() for p in _real_images(shared_data)),
        *(_asymmetric_jpeg(tag) for tag in (3, 6, 8)),
        _rotated_jpeg(),
        *_image_bytes(2),  # PNG: decoded by PIL on the loading threads
    ]
    upright = None
    for orientation in ("exif", "stored"):
        via_gpu_branch = embed_images(
            clip_tower, images, batch_size=4, orientation=orientation, pipeline="tensor"
        )
        monkeypatch.setattr(embedding, "gpu_jpeg_decoding", lambda device: False)
        via_pil = embed_images(clip_tower, images, batch_size=4, orientation=orientation, pipeline="tensor")
        monkeypatch.setattr(embedding, "gpu_jpeg_decoding", lambda device: True)
        np.testing.assert_allclose(via_gpu_branch, via_pil, atol=1e-6)
        upright = via_pil if upright is None else upright
    assert decoded_batches == [4, 2, 4, 2]  # one decoder call per batch, JPEGs only

    def refusing(data, device):
        raise RuntimeError("nvjpeg cannot decode this")

    monkeypatch.setattr(embedding, "decode_jpegs_on_device", refusing)  # falls back to PIL, same numbers
    np.testing.assert_allclose(
        embed_images(clip_tower, images, batch_size=4, pipeline="tensor"), upright, atol=1e-6
    )
