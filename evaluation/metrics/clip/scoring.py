"""CLIPScore and RefCLIPScore (seed paper 001, appendix A; Hessel et al. 2021).

For an image embedding v, a candidate caption embedding c and reference embeddings R,
all L2-normalised:

    CLIPScore(c, v)       = w * max(cos(c, v), 0),                        w = 2.5
    RefCLIPScore(c, R, v) = H(CLIPScore(c, v), max(max_{r in R} cos(c, r), 0))
    H(a, b)               = 2ab / (a + b), and 0 when a + b == 0

The corpus score is the mean of the per-caption scores.

How this differs from other implementations, deliberately
---------------------------------------------------------
- The reference code (github.com/jmhessel/clipscore) clips each caption's cosine at 0,
  multiplies by w = 2.5 and averages: so do we. Some re-implementations average the
  cosines first and clip the mean; with clipping before averaging a very bad caption
  counts as 0, not as a negative that offsets a good one.
- The reference code takes max_r cos(c, r) without clipping it at 0; appendix A (and
  our formula) clips it, so RefCLIPScore is never negative. Real CLIP models almost never
  give negative caption-caption cosines, so this rarely changes a number.
- torchmetrics' ``CLIPScore`` reports 100 * max(cos, 0) (w = 100) with no prompt; multiply our
  CLIPScore by 40 to compare.
- The reference code prefixes every candidate *and* reference with the English prompt
  "A photo depicts". Seed paper 001 does not mention a prompt (appendix A defines the score
  on the caption itself). The prompt here is the ``prompt_prefix`` setting, applied to
  candidates and references alike, and it defaults to the empty string: the captions this
  platform scores are in 36 languages, and an English prompt in front of, say, a Thai caption
  makes the text tower read a mixed-language sentence, a bias that differs by language and
  would distort cross-language comparisons. Set it to "A photo depicts" to reproduce the
  reference code on English captions (with its OpenAI ViT-B/32 weights).

Embeddings from :mod:`evaluation.metrics.clip.embedding` are float32; scores are computed in float64.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .embedding import (
    DEFAULT_IMAGE_ORIENTATION,
    ImageEmbeddingCache,
    ImageInput,
    InMemoryEmbeddingCache,
    content_hash,
    embed_images,
    embed_images_cached,
    image_orientation_check,
)
from .texts import embed_texts

if TYPE_CHECKING:
    from .loading import LoadedClip

__all__ = [
    "DEFAULT_PROMPT_PREFIX",
    "DEFAULT_W",
    "ClipScoreReport",
    "clipscore",
    "corpus_score",
    "harmonic_mean",
    "ref_similarity",
    "refclipscore",
    "score_clip",
]

DEFAULT_W = 2.5
DEFAULT_PROMPT_PREFIX = ""
_UNIT_TOLERANCE = 1e-3


def _unit_rows(name: str, emb: np.ndarray) -> np.ndarray:
    array = np.asarray(emb, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n, d), got shape {array.shape}")
    norms = np.linalg.norm(array, axis=1)
    if not np.all(np.abs(norms - 1.0) <= _UNIT_TOLERANCE):
        raise ValueError(f"{name} rows must be L2-normalised")
    return array


def clipscore(image_emb: np.ndarray, cand_emb: np.ndarray, w: float = DEFAULT_W) -> np.ndarray:
    """Per-caption CLIPScore ``w * max(cos, 0)`` of row i of ``cand_emb`` against row i of ``image_emb``."""
    images = _unit_rows("image_emb", image_emb)
    cands = _unit_rows("cand_emb", cand_emb)
    if images.shape != cands.shape:
        raise ValueError(f"image_emb {images.shape} and cand_emb {cands.shape} must have the same shape")
    return w * np.maximum(np.einsum("ij,ij->i", images, cands), 0.0)


def ref_similarity(cand_emb: np.ndarray, ref_embs_per_caption: Sequence[np.ndarray]) -> np.ndarray:
    """``max(max_r cos(c_i, r), 0)`` per caption; each caption needs at least one reference."""
    cands = _unit_rows("cand_emb", cand_emb)
    if len(ref_embs_per_caption) != len(cands):
        raise ValueError(f"{len(cands)} captions but {len(ref_embs_per_caption)} reference sets")
    out = np.empty(len(cands))
    for i, refs in enumerate(ref_embs_per_caption):
        refs = _unit_rows(f"references of caption {i}", refs)
        if len(refs) == 0:
            raise ValueError(f"caption {i} has no references")
        out[i] = max(float(np.max(refs @ cands[i])), 0.0)
    return out


def harmonic_mean(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise ``2ab / (a + b)`` for non-negative a, b; 0 where ``a + b == 0``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    total = a + b
    safe = np.where(total == 0, 1.0, total)
    return np.where(total == 0, 0.0, 2.0 * a * b / safe)


def refclipscore(
    clip_scores: np.ndarray, cand_emb: np.ndarray, ref_embs_per_caption: Sequence[np.ndarray]
) -> np.ndarray:
    """Per-caption RefCLIPScore: harmonic mean of CLIPScore and :func:`ref_similarity`."""
    return harmonic_mean(clip_scores, ref_similarity(cand_emb, ref_embs_per_caption))


def corpus_score(per_caption: np.ndarray) -> float:
    """Mean of the per-caption scores; raises ValueError on an empty set."""
    values = np.asarray(per_caption, dtype=np.float64)
    if values.size == 0:
        raise ValueError("a corpus score needs at least one caption")
    return float(values.mean())


@dataclass(frozen=True)
class ClipScoreReport:
    """CLIPScore (and RefCLIPScore when references were given) per caption and over the corpus.

    Per-caption dicts are keyed like the ``candidates`` passed to :func:`score_clip` and hold
    plain floats. ``ref_similarity`` is the clipped max reference cosine that entered RefCLIPScore.
    """

    model_id: str
    prompt_prefix: str
    w: float
    clipscore: dict[Hashable, float]
    corpus_clipscore: float
    refclipscore: dict[Hashable, float] | None = None
    ref_similarity: dict[Hashable, float] | None = None
    corpus_refclipscore: float | None = None
    image_orientation: str = DEFAULT_IMAGE_ORIENTATION


def _image_items(images: Sequence[ImageInput]):
    # Files and bytes are keyed by content hash (shared with the persistent cache); an in-memory
    # PIL image has no file bytes, so it is embedded directly and keyed by identity.
    items, direct, path_hashes = [], {}, {}
    for image in images:
        if isinstance(image, bytes):
            items.append((content_hash(image), lambda image=image: image))
        elif isinstance(image, str | os.PathLike):
            path = os.fspath(image)
            if path not in path_hashes:
                path_hashes[path] = content_hash(path)
            items.append((path_hashes[path], lambda path=path: path))
        else:
            items.append((None, image))
            direct[id(image)] = image
    return items, direct


def score_clip(
    loaded: LoadedClip,
    candidates: Mapping[Hashable, str],
    images: Mapping[Hashable, ImageInput],
    references: Mapping[Hashable, Sequence[str]] | None = None,
    *,
    prompt_prefix: str = DEFAULT_PROMPT_PREFIX,
    cache: ImageEmbeddingCache | None = None,
    text_cache: ImageEmbeddingCache | None = None,
    w: float = DEFAULT_W,
    image_batch_size: int = 32,
    text_batch_size: int | None = None,
    image_orientation: str = DEFAULT_IMAGE_ORIENTATION,
) -> ClipScoreReport:
    """Score ``candidates[key]`` against ``images[key]`` (and ``references[key]`` if given).

    Images are file paths, encoded bytes or PIL images; the embeddings of files and bytes go
    through ``cache`` (a per-call in-memory cache if None), keyed by ``loaded.model_id`` and the
    sha256 of their bytes. Candidates and references are embedded together, each distinct text
    once, through ``text_cache`` when given (keyed by the model and the text's sha256).
    ``prompt_prefix`` is prepended to candidates and references alike.
    ``image_orientation``: ``"exif"`` (upright, as annotators see it) or ``"stored"`` (as the
    reference CLIPScore code reads the file); see :mod:`.embedding`. ``text_batch_size``: None takes
    the device's (:func:`.device.text_batch_size`). The image pipeline is ``loaded.image_pipeline``.
    Raises ValueError when a key lacks an image or references, when there are no candidates, or
    for an unknown orientation.
    """
    image_orientation_check(image_orientation)
    keys = list(candidates)
    if not keys:
        raise ValueError("no candidate captions to score")
    missing = [k for k in keys if k not in images]
    if missing:
        raise ValueError(f"no image for candidate keys {missing[:5]}")
    if references is not None:
        lacking = [k for k in keys if not references.get(k)]
        if lacking:
            raise ValueError(f"no references for candidate keys {lacking[:5]}")

    cache = cache if cache is not None else InMemoryEmbeddingCache()
    items, direct = _image_items([images[k] for k in keys])
    hashed = [(h, loader) for h, loader in items if h is not None]
    image_emb = np.zeros((len(keys), loaded.embed_dim), dtype=np.float32)
    if hashed:
        vectors = embed_images_cached(
            loaded, hashed, cache, batch_size=image_batch_size, orientation=image_orientation
        )
        rows = [i for i, (h, _) in enumerate(items) if h is not None]
        image_emb[rows] = vectors
    if direct:
        direct_ids = list(direct)
        vectors = embed_images(
            loaded,
            [direct[i] for i in direct_ids],
            batch_size=image_batch_size,
            orientation=image_orientation,
        )
        by_id = dict(zip(direct_ids, vectors))
        for i, (h, image) in enumerate(items):
            if h is None:
                image_emb[i] = by_id[id(image)]

    texts = [candidates[k] for k in keys]
    if references is not None:
        texts += [ref for k in keys for ref in references[k]]
    text_emb = embed_texts(loaded, texts, prompt_prefix, text_batch_size, cache=text_cache)
    cand_emb = text_emb[: len(keys)]
    per_clip = clipscore(image_emb, cand_emb, w=w)
    report = {
        "model_id": loaded.model_id,
        "image_orientation": image_orientation,
        "prompt_prefix": prompt_prefix,
        "w": w,
        "clipscore": dict(zip(keys, per_clip.tolist())),
        "corpus_clipscore": corpus_score(per_clip),
    }
    if references is not None:
        ref_emb = text_emb[len(keys) :]
        bounds = np.cumsum([0] + [len(references[k]) for k in keys])
        per_caption_refs = [ref_emb[bounds[i] : bounds[i + 1]] for i in range(len(keys))]
        similarity = ref_similarity(cand_emb, per_caption_refs)
        per_ref = harmonic_mean(per_clip, similarity)
        report |= {
            "refclipscore": dict(zip(keys, per_ref.tolist())),
            "ref_similarity": dict(zip(keys, similarity.tolist())),
            "corpus_refclipscore": corpus_score(per_ref),
        }
    return ClipScoreReport(**report)
