"""Batched CLIP embeddings of images, the embedding caches, and the image orientation setting.

All embeddings are L2-normalised float32 numpy arrays of shape ``(n, embed_dim)``.
Image embeddings are keyed by the sha256 of the image file's bytes (:func:`content_hash`)
and by :func:`embedding_cache_key` (``LoadedClip.embedding_key`` and the image orientation), so a
re-uploaded copy of the same file is not recomputed and embeddings of different weights,
precisions or orientations never mix. Text embeddings (:mod:`.texts`) use the same cache
interface, keyed by the sha256 of the text.

Images are decoded and preprocessed by a small thread pool one batch ahead of the model
(``loader_threads``), so that decoding overlaps inference. Threads, not DataLoader worker
processes: a Celery prefork worker is a daemon process and may not start children, and PIL's
decoders and resizers release the GIL, so threads overlap as well. With ``loader_threads=0``
everything runs in the calling thread, in order.

Image orientation (:data:`IMAGE_ORIENTATIONS`)
    ``"exif"`` (the platform's default) turns the pixels upright by the file's EXIF orientation
    tag before CLIP's preprocessing: annotators see the image upright in the browser, and the
    caption describes what they saw. ``"stored"`` takes the pixels as stored, ignoring the tag,
    as jmhessel's reference CLIPScore code does (``Image.open(path)`` then the CLIP preprocess);
    use it to reproduce numbers computed that way. On a rotated photo the two give different
    embeddings (CLIPScores reported up to about 0.1 apart); without an orientation tag (or with tag 1)
    they are the same.

torch is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import io
import os
import re
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from PIL import Image, ImageOps

from .choices import choice_check
from .device import attention_backends, device_type
from .hashing import content_hash, is_content_hash
from .pixels import (
    DEFAULT_IMAGE_PIPELINE,
    decode_jpegs_on_device,
    encoded_bytes,
    exif_orientation,
    exif_transpose_tensor,
    gpu_jpeg_decoding,
    image_pipeline_check,
    is_jpeg,
    preprocess_tensor,
    tensor_preprocess_spec,
    uint8_chw,
)
from .runtime import inference, inference_model

if TYPE_CHECKING:
    from .loading import LoadedClip

__all__ = [
    "DEFAULT_IMAGE_ORIENTATION",
    "IMAGE_ORIENTATIONS",
    "IMAGE_LOADER_THREADS",
    "DirectoryEmbeddingCache",
    "EmbeddingCache",
    "ImageEmbeddingCache",
    "ImageInput",
    "InMemoryEmbeddingCache",
    "apply_prompt_prefix",
    "content_hash",
    "embed_images",
    "embedding_cache_key",
    "image_orientation_check",
    "image_pipeline_of",
    "image_rgb",
    "normalised_rows",
]

ImageInput = Image.Image | str | os.PathLike | bytes

IMAGE_ORIENTATIONS = ("exif", "stored")
DEFAULT_IMAGE_ORIENTATION = "exif"
# Decoding threads beside the model: two keep the next batch ready on a 2-core machine without
# starving the model (benchmarks/bench_clip.py measures it).
IMAGE_LOADER_THREADS = 2


def image_orientation_check(orientation: object) -> str:
    """``orientation`` if it is ``"exif"`` or ``"stored"``; ``ValueError`` naming the choices otherwise."""
    return choice_check(
        orientation,
        IMAGE_ORIENTATIONS,
        "image orientation",
        "exif (upright by the EXIF tag, as annotators see it) or stored (pixels as stored, as the reference "
        "CLIPScore code reads them)",
    )


def embedding_cache_key(
    model_id: str, orientation: str = DEFAULT_IMAGE_ORIENTATION, pipeline: str = DEFAULT_IMAGE_PIPELINE
) -> str:
    """The model key image embeddings are cached under: the weights and preprocessing, orientation and
    image pipeline included.

    ``"exif"`` keeps the plain ``model_id``: every embedding cached before the orientation became a
    setting was computed that way, so it stays valid. ``"stored"`` gets its own key; so does the
    ``"tensor"`` image pipeline (:mod:`.pixels`), whose pixels differ slightly from PIL's.
    """
    image_orientation_check(orientation)
    key = model_id if orientation == "exif" else f"{model_id}|image_orientation={orientation}"
    return key if image_pipeline_check(pipeline) == "pil" else f"{key}|image_pipeline={pipeline}"


def _oriented(image: Image.Image, orientation: str) -> Image.Image:
    return (ImageOps.exif_transpose(image) if orientation == "exif" else image).convert("RGB")


def image_rgb(image: ImageInput, orientation: str = DEFAULT_IMAGE_ORIENTATION) -> Image.Image:
    """The RGB pixels CLIP's preprocessing gets: upright by the EXIF tag (``"exif"``) or as stored."""
    image_orientation_check(orientation)
    if isinstance(image, Image.Image):
        return _oriented(image, orientation)
    source = io.BytesIO(image) if isinstance(image, bytes) else image
    with Image.open(source) as opened:
        return _oriented(opened, orientation)


def normalised_rows(features) -> np.ndarray:
    """L2-normalised float32 numpy rows of a torch feature tensor (any dtype, any device)."""
    import torch.nn.functional as F

    return F.normalize(features.float(), dim=-1).cpu().numpy().astype(np.float32, copy=False)


def _pixels(loaded: LoadedClip, source: ImageInput | Callable[[], ImageInput], orientation: str):
    image = source() if callable(source) else source
    return loaded.preprocess(image_rgb(image, orientation))


def image_pipeline_of(loaded: LoadedClip, pipeline: str | None = None) -> str:
    """The image pipeline a call runs: ``pipeline`` (default ``loaded.image_pipeline``), except that
    ``"tensor"`` falls back to ``"pil"`` for a transform it cannot reproduce (see :mod:`.pixels`)."""
    chosen = image_pipeline_check(pipeline or loaded.image_pipeline)
    if chosen == "tensor" and tensor_preprocess_spec(loaded.preprocess) is None:
        return "pil"
    return chosen


def _tensor_source(source: ImageInput | Callable[[], ImageInput], orientation: str, gpu_jpeg: bool):
    """On a loading thread: ``(JPEG bytes, EXIF orientation tag to apply)`` for the GPU decoder, or the
    image decoded by PIL as uint8 (3, h, w)."""
    image = source() if callable(source) else source
    data = encoded_bytes(image)
    if gpu_jpeg and data is not None and is_jpeg(data):
        return data, exif_orientation(data) if orientation == "exif" else 1
    return uint8_chw(image_rgb(data if data is not None else image, orientation))


def _tensor_batch(loaded: LoadedClip, items: list, orientation: str, spec, gpu_jpeg: bool):
    """Decode a batch's JPEG bytes on the device in one call and preprocess the whole batch there."""
    import torch

    device = loaded.device
    decoded = list(items)
    jpegs = [i for i, item in enumerate(items) if isinstance(item, tuple)]
    if jpegs:
        try:
            on_device = decode_jpegs_on_device([items[i][0] for i in jpegs], device)
            on_device = [exif_transpose_tensor(t, items[i][1]) for i, t in zip(jpegs, on_device)]
        except RuntimeError:  # a JPEG the GPU decoder refuses (e.g. CMYK): PIL decodes it, or names the fault
            on_device = [uint8_chw(image_rgb(items[i][0], orientation)) for i in jpegs]
        for i, tensor in zip(jpegs, on_device):
            decoded[i] = tensor
    for i, tensor in enumerate(decoded):
        if isinstance(tensor, torch.Tensor) and tensor.device.type == "cpu":
            decoded[i] = _to_device(tensor, device)
    return preprocess_tensor(decoded, spec)


def _to_device(tensor, device):
    """``tensor`` on ``device``: from the CPU through pinned memory and a non-blocking copy on CUDA."""
    if device_type(device) == "cuda" and tensor.device.type == "cpu":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def pixel_batches(
    loaded: LoadedClip,
    sources: Sequence[ImageInput | Callable[[], ImageInput]],
    batch_size: int,
    *,
    orientation: str = DEFAULT_IMAGE_ORIENTATION,
    loader_threads: int = IMAGE_LOADER_THREADS,
    pipeline: str | None = None,
) -> Iterator[tuple[int, object]]:
    """``(start, pixels)`` per batch of ``sources`` (images, or loaders returning one), preprocessed.

    With ``loader_threads > 0`` the next batch is decoded by a thread pool while the caller
    works on this one: at most two batches are in memory. An error of a loader is raised when
    its batch is reached, and the pool is shut down with the generator. ``pipeline``: ``"pil"``
    or ``"tensor"`` (:mod:`.pixels`; default ``loaded.image_pipeline``); the tensor pipeline's
    pixels are on the model's device already.
    """
    import torch

    if image_pipeline_of(loaded, pipeline) == "tensor":
        spec = tensor_preprocess_spec(loaded.preprocess)
        gpu_jpeg = gpu_jpeg_decoding(loaded.device)

        def prepare(source):
            return _tensor_source(source, orientation, gpu_jpeg)

        def finish(items):
            return _tensor_batch(loaded, items, orientation, spec, gpu_jpeg)
    else:

        def prepare(source):
            return _pixels(loaded, source, orientation)

        finish = torch.stack

    starts = range(0, len(sources), batch_size)
    if loader_threads <= 0:
        for start in starts:
            batch = sources[start : start + batch_size]
            yield start, finish([prepare(source) for source in batch])
        return
    pool = ThreadPoolExecutor(max_workers=loader_threads, thread_name_prefix="clip-images")
    try:

        def submit(start: int):
            batch = sources[start : start + batch_size]
            return start, [pool.submit(prepare, source) for source in batch]

        upcoming = iter(starts)
        queued: deque = deque()
        for start in (next(upcoming, None), next(upcoming, None)):
            if start is not None:
                queued.append(submit(start))
        while queued:
            start, futures = queued.popleft()
            pixels = finish([future.result() for future in futures])
            following = next(upcoming, None)
            if following is not None:
                queued.append(submit(following))
            yield start, pixels
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _embed_pixels(loaded: LoadedClip, pixels) -> np.ndarray:
    """Normalised image embeddings of a preprocessed batch (the reduced-precision copy for autocast on CUDA)."""
    with inference(loaded), attention_backends(loaded.device):
        return normalised_rows(inference_model(loaded).encode_image(_to_device(pixels, loaded.device)))


def embed_images(
    loaded: LoadedClip,
    images: Sequence[ImageInput],
    batch_size: int = 32,
    *,
    orientation: str = DEFAULT_IMAGE_ORIENTATION,
    loader_threads: int = IMAGE_LOADER_THREADS,
    pipeline: str | None = None,
) -> np.ndarray:
    """Embed images (PIL images, file paths or encoded bytes) in batches; returns ``(n, d)`` float32.

    ``orientation``: ``"exif"`` or ``"stored"`` (see the module docstring). ``loader_threads``:
    decoding threads that prepare the next batch while this one is embedded (0: none).
    ``pipeline``: ``"pil"`` or ``"tensor"`` (:mod:`.pixels`; default ``loaded.image_pipeline``)."""
    if batch_size < 1:
        raise ValueError("batch_size must be positive")
    image_orientation_check(orientation)
    out = np.zeros((len(images), loaded.embed_dim), dtype=np.float32)
    batches = pixel_batches(
        loaded, images, batch_size, orientation=orientation, loader_threads=loader_threads, pipeline=pipeline
    )
    for start, pixels in batches:
        out[start : start + len(pixels)] = _embed_pixels(loaded, pixels)
    return out


def apply_prompt_prefix(text: str, prompt_prefix: str) -> str:
    """``"A photo depicts" + "a cat"`` -> ``"A photo depicts a cat"``; an empty prefix leaves text as is."""
    prefix = prompt_prefix.strip()
    return f"{prefix} {text}" if prefix else text


# --- cache ----------------------------------------------------------------------------------------


@runtime_checkable
class EmbeddingCache(Protocol):
    """Storage of embeddings per (model key, content hash): of images, or of texts.

    ``get_many`` returns only the hashes it holds (a missing hash is simply absent);
    ``put_many`` stores or overwrites. Vectors are 1-D float32 arrays. Implementations
    must tolerate concurrent writers of the same entry (the values are equal). Keep image and
    text embeddings in separate caches (or separate kinds of one table): the hash of an image
    file and of a text are hashes of different things.
    """

    def get_many(self, model_id: str, content_hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put_many(self, model_id: str, vectors: Mapping[str, np.ndarray]) -> None: ...


# The name from before texts were cached too.
ImageEmbeddingCache = EmbeddingCache


def _as_vector(vector: np.ndarray) -> np.ndarray:
    array = np.array(vector, dtype=np.float32)  # a private copy
    if array.ndim != 1:
        raise ValueError(f"an embedding must be a 1-D vector, got shape {array.shape}")
    array.setflags(write=False)
    return array


class InMemoryEmbeddingCache:
    """Process-local cache; thread-safe. Useful for one scoring run and in tests."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], np.ndarray] = {}
        self._lock = threading.Lock()

    def get_many(self, model_id: str, content_hashes: Iterable[str]) -> dict[str, np.ndarray]:
        with self._lock:
            return {h: self._vectors[model_id, h] for h in content_hashes if (model_id, h) in self._vectors}

    def put_many(self, model_id: str, vectors: Mapping[str, np.ndarray]) -> None:
        prepared = {(model_id, h): _as_vector(v) for h, v in vectors.items()}
        with self._lock:
            self._vectors.update(prepared)

    def __len__(self) -> int:
        return len(self._vectors)


class DirectoryEmbeddingCache:
    """One ``.npy`` file per image under one directory per model.

    Layout: ``<root>/<model slug>-<sha256(model_id)[:16]>/<content hash>.npy`` plus a
    ``model_id.txt`` naming the model. Files are written to a temporary name and renamed,
    so concurrent workers on a shared filesystem never read a partial vector.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def _model_dir(self, model_id: str) -> Path:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)[:60]
        return self.root / f"{slug}-{content_hash(model_id.encode())[:16]}"

    @staticmethod
    def _check(content_hashes: Iterable[str]) -> None:
        bad = [h for h in content_hashes if not is_content_hash(h)]
        if bad:
            raise ValueError(f"not sha256 content hashes: {bad[:3]}")

    def get_many(self, model_id: str, content_hashes: Iterable[str]) -> dict[str, np.ndarray]:
        content_hashes = list(content_hashes)
        self._check(content_hashes)
        directory = self._model_dir(model_id)
        found = {}
        for h in content_hashes:
            path = directory / f"{h}.npy"
            if path.is_file():
                found[h] = _as_vector(np.load(path, allow_pickle=False))
        return found

    def put_many(self, model_id: str, vectors: Mapping[str, np.ndarray]) -> None:
        self._check(vectors)
        directory = self._model_dir(model_id)
        directory.mkdir(parents=True, exist_ok=True)
        label = directory / "model_id.txt"
        if not label.exists():
            label.write_text(model_id + "\n", encoding="utf-8")
        for h, vector in vectors.items():
            tmp = directory / f".{h}.{uuid.uuid4().hex}.tmp"
            with open(tmp, "wb") as f:
                np.save(f, _as_vector(vector), allow_pickle=False)
            os.replace(tmp, directory / f"{h}.npy")


def embed_images_cached(
    loaded: LoadedClip,
    items: Sequence[tuple[str, Callable[[], ImageInput]]],
    cache: EmbeddingCache,
    batch_size: int = 32,
    *,
    orientation: str = DEFAULT_IMAGE_ORIENTATION,
    loader_threads: int = IMAGE_LOADER_THREADS,
    pipeline: str | None = None,
) -> np.ndarray:
    """Embeddings for ``(content_hash, loader)`` items, computing only those missing from ``cache``.

    The cache is read and written under :func:`embedding_cache_key` of ``loaded.embedding_key``
    (the weights, and the autocast precision if any), ``orientation`` and the image pipeline
    (``pipeline``, default ``loaded.image_pipeline``), so an embedding of the
    upright image never serves a run that wants the pixels as stored, nor the reverse.

    A loader is called only for a hash the cache lacks, once per distinct hash; the next batch
    is loaded by ``loader_threads`` threads while this one is embedded (at most two batches in
    memory); each computed batch is stored before the next is embedded, so an interrupted run
    resumes where it stopped. Cached vectors of the wrong dimension are recomputed. Returns
    ``(len(items), d)`` float32 in item order.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be positive")
    hashes = [h for h, _ in items]
    bad = [h for h in hashes if not is_content_hash(h)]
    if bad:
        raise ValueError(f"not sha256 content hashes: {bad[:3]}")
    loaders: dict[str, Callable[[], ImageInput]] = {}
    for h, loader in items:
        loaders.setdefault(h, loader)
    unique = list(loaders)

    pipeline = image_pipeline_of(loaded, pipeline)
    key = embedding_cache_key(loaded.embedding_key, orientation, pipeline)
    found = {
        h: np.asarray(v, dtype=np.float32)
        for h, v in cache.get_many(key, unique).items()
        if np.shape(v) == (loaded.embed_dim,)
    }
    missing = [h for h in unique if h not in found]
    if missing:
        batches = pixel_batches(
            loaded,
            [loaders[h] for h in missing],
            batch_size,
            orientation=orientation,
            loader_threads=loader_threads,
            pipeline=pipeline,
        )
    else:
        batches = iter(())
    for start, pixels in batches:
        vectors = _embed_pixels(loaded, pixels)
        computed = dict(zip(missing[start : start + len(vectors)], vectors))
        cache.put_many(key, computed)
        found.update(computed)
    if not hashes:
        return np.zeros((0, loaded.embed_dim), dtype=np.float32)
    return np.stack([found[h] for h in hashes])
