"""Cross-modal retrieval recall of a CLIP model on one language's captions (seeds 003 and 004).

A multilingual CLIP model is only as good in a language as its text encoder is there: seed 004
(Babel-ImageNet) finds XM3600 text→image R@1 of 48 in English and 2 in Swahili for the same
model. Retrieval over the captions people wrote tells, per language, whether a CLIPScore computed
in it can be trusted. This module computes the recalls; it is plain numpy, no Django.

Definitions (as seed 003 reports them, mean recall = the average of R@1, R@5, R@10):

* text→image (t2i): each caption is a query, the images of the pool are the candidates, the
  caption's own image is the one right answer. R@k = share of captions whose image ranks in the
  top k.
* image→text (i2t): each image is a query, every caption of the pool is a candidate. An image
  counts as retrieved at k when ANY of its captions ranks in the top k (the convention of
  COCO/Flickr30k retrieval, where each image has several captions). Images without a caption are
  not queries (they still are t2i candidates).
* ``mean_recall`` is the average of all six recalls (M³P's and xFlickrCo's "mean recall");
  ``t2i_mean_recall`` and ``i2t_mean_recall`` are the averages of the three of one direction
  (GEM's Table 3 reports the t2i one).

Ties are broken pessimistically: a wrong candidate with the same similarity as the best right one
ranks before it. "The same" is within ``TIE_TOLERANCE`` (1e-6 on a cosine): embeddings come from float32
models, and two identical vectors normalised apart give similarities an ulp or two apart, which must
not decide a rank. So the rank of a query's answer is 1 + the number of wrong candidates scoring at
least its best right candidate's similarity minus the tolerance, and a model that maps everything to
one vector gets R@k = 0 (for k below the pool), not a lucky share. Similarity is the dot product, computed in float64, of the
L2-normalised embeddings that :mod:`evaluation.metrics.clip.embedding` returns (their cosine).

Recalls are fractions in [0, 1]. With at most k images (t2i) or captions (i2t), R@k is 1 by
construction: :attr:`RetrievalResult.notes` says so, beside the numbers wherever they are shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "RECALL_KS",
    "TIE_TOLERANCE",
    "RetrievalDataError",
    "RetrievalResult",
    "retrieval_ranks",
    "retrieval_recall",
]

RECALL_KS = (1, 5, 10)
# Similarities (cosines, in [-1, 1]) closer than this are a tie: float32 round-off is ~1e-7.
TIE_TOLERANCE = 1e-6


class RetrievalDataError(ValueError):
    """The data cannot give a retrieval recall: too few images, no captions, shapes that disagree."""


@dataclass(frozen=True)
class RetrievalResult:
    """Recalls of one language (fractions in [0, 1]) with the size of the pool they come from."""

    t2i: dict[int, float]  # k -> R@k, text→image
    i2t: dict[int, float]  # k -> R@k, image→text
    n_images: int
    n_captions: int
    notes: list[str] = field(default_factory=list)

    @property
    def t2i_mean_recall(self) -> float:
        return float(np.mean([self.t2i[k] for k in RECALL_KS]))

    @property
    def i2t_mean_recall(self) -> float:
        return float(np.mean([self.i2t[k] for k in RECALL_KS]))

    @property
    def mean_recall(self) -> float:
        return float(np.mean([*(self.t2i[k] for k in RECALL_KS), *(self.i2t[k] for k in RECALL_KS)]))

    def as_dict(self) -> dict[str, Any]:
        """Flat JSON-ready record: ``t2i_r1`` … ``i2t_r10``, the three mean recalls, pool sizes, notes."""
        out: dict[str, Any] = {}
        for name, recalls in (("t2i", self.t2i), ("i2t", self.i2t)):
            for k in RECALL_KS:
                out[f"{name}_r{k}"] = recalls[k]
        out |= {
            "t2i_mean_recall": self.t2i_mean_recall,
            "i2t_mean_recall": self.i2t_mean_recall,
            "mean_recall": self.mean_recall,
            "n_images": self.n_images,
            "n_captions": self.n_captions,
            "notes": list(self.notes),
        }
        return out


def _checked(image_emb, caption_emb, caption_image) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    images = np.asarray(image_emb, dtype=np.float64)
    captions = np.asarray(caption_emb, dtype=np.float64)
    owner = np.asarray(caption_image)
    if images.ndim != 2:
        raise RetrievalDataError(
            f"image embeddings must be a 2-D array (images × dim), got shape {images.shape}"
        )
    if images.shape[0] < 2:
        raise RetrievalDataError(
            f"retrieval needs at least 2 images, got {images.shape[0]}: with one image every query is right by default"
        )
    if captions.ndim != 2 or captions.shape[0] == 0:
        raise RetrievalDataError("there are no captions to retrieve with")
    if captions.shape[1] != images.shape[1]:
        raise RetrievalDataError(
            f"caption embeddings have {captions.shape[1]} dimensions, image embeddings {images.shape[1]}"
        )
    if owner.shape != (captions.shape[0],):
        raise RetrievalDataError(
            f"give the image index of each caption: {captions.shape[0]} captions, {owner.size} indices"
        )
    if owner.size and (
        not np.issubdtype(owner.dtype, np.integer) or owner.min() < 0 or owner.max() >= len(images)
    ):
        raise RetrievalDataError(f"a caption's image index is outside 0..{len(images) - 1}")
    if not (np.isfinite(images).all() and np.isfinite(captions).all()):
        raise RetrievalDataError("embeddings must be finite numbers")
    return images, captions, owner.astype(np.int64)


def retrieval_ranks(
    image_emb: np.ndarray, caption_emb: np.ndarray, caption_image: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """``(t2i_ranks, i2t_ranks)``: the 1-based rank of each caption's image among the images, and of
    each captioned image's best caption among all captions (``-1`` for an image without captions).

    Ties pessimistic (see the module docstring). Raises :class:`RetrievalDataError` for fewer than 2
    images, no captions, or shapes and indices that disagree.
    """
    images, captions, owner = _checked(image_emb, caption_emb, caption_image)
    similarity = captions @ images.T  # (captions, images)
    n_captions = len(captions)

    right = similarity[np.arange(n_captions), owner]
    # Wrong images at least as similar as the right one (the right one itself is counted once, removed).
    t2i = (similarity >= right[:, None] - TIE_TOLERANCE).sum(axis=1)  # includes the right image: 1 + wrong
    # The right image itself always counts once (it equals itself), so this is 1 + the wrong ones.

    i2t = np.full(len(images), -1, dtype=np.int64)
    own = np.zeros_like(similarity, dtype=bool)
    own[np.arange(n_captions), owner] = True
    for image in np.unique(owner):
        column = similarity[:, image]
        best = column[own[:, image]].max()
        i2t[image] = 1 + int(((column >= best - TIE_TOLERANCE) & ~own[:, image]).sum())
    return t2i.astype(np.int64), i2t


def retrieval_recall(
    image_emb: np.ndarray, caption_emb: np.ndarray, caption_image: Sequence[int]
) -> RetrievalResult:
    """t2i and i2t R@1, R@5, R@10 of one language's pool (see the module docstring).

    ``image_emb``: ``(n_images, d)``; ``caption_emb``: ``(n_captions, d)``; ``caption_image[j]``: the
    row of caption j's image in ``image_emb``. Raises :class:`RetrievalDataError` as
    :func:`retrieval_ranks` does.
    """
    t2i_ranks, i2t_ranks = retrieval_ranks(image_emb, caption_emb, caption_image)
    queried = i2t_ranks[i2t_ranks > 0]
    n_images, n_captions = len(i2t_ranks), len(t2i_ranks)
    notes = []
    if n_images <= max(RECALL_KS):
        notes.append(
            f"only {n_images} images: text→image R@k for k ≥ {n_images} is 1 by construction "
            "(chance R@1 is 1/{n_images})".replace("{n_images}", str(n_images))
        )
    if n_captions <= max(RECALL_KS):
        small = [k for k in RECALL_KS if k >= n_captions]
        notes.append(
            f"only {n_captions} captions: image→text R@{'/'.join(map(str, small))} is 1 by construction "
            "(every caption is within the top k)"
        )
    unqueried = n_images - len(queried)
    if unqueried:
        notes.append(f"{unqueried} images have no caption: they are candidates only, not image→text queries")
    return RetrievalResult(
        t2i={k: float(np.mean(t2i_ranks <= k)) for k in RECALL_KS},
        i2t={k: float(np.mean(queried <= k)) for k in RECALL_KS},
        n_images=n_images,
        n_captions=n_captions,
        notes=notes,
    )
