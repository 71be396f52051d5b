"""The numbers of the zero-shot and foil checks, over embeddings (plain numpy, no Django).

Zero-shot classification (seed 004, after Radford et al.): a class's vector is the mean of the
L2-normalised embeddings of its prompts (its label in each template), normalised again; an image is
classified by the cosine of its embedding with each class vector of the language. Accuracy top-k is
the share of images whose class ranks within the first k among the classes the language covers
(the number of classes is stated: fewer classes make the task easier). Ties are pessimistic, as in
retrieval: a wrong class within ``TIE_TOLERANCE`` of the right one ranks before it.

Foils (seed 001, VALSE): a pair is right when the CLIPScore (``w × max(cos, 0)``) of its true
caption is above its foil's by more than ``TIE_TOLERANCE``; a tie counts against the model and is
counted apart. Intervals are 95% percentile bootstrap intervals over pairs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_N_BOOT",
    "TIE_TOLERANCE",
    "TOP_K",
    "class_vectors",
    "foil_compare",
    "foil_measures",
    "zeroshot_measures",
]

TIE_TOLERANCE = 1e-6  # as retrieval: float32 round-off on a cosine is ~1e-7
TOP_K = (1, 5)
DEFAULT_N_BOOT = 1000
CLIPSCORE_W = 2.5  # CLIPScore's w (Hessel et al.), as the metric runs compute it


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def class_vectors(prompt_emb: np.ndarray, prompt_class: Sequence[int]) -> tuple[list[int], np.ndarray]:
    """``(classes, vectors)``: each class's mean normalised prompt embedding, normalised, in class order."""
    emb = _unit(prompt_emb)
    rows: dict[int, list[int]] = defaultdict(list)
    for i, class_id in enumerate(prompt_class):
        rows[int(class_id)].append(i)
    classes = sorted(rows)
    return classes, _unit(np.stack([emb[rows[c]].mean(axis=0) for c in classes]))


def _ranks(image_emb: np.ndarray, right: np.ndarray, class_emb: np.ndarray) -> np.ndarray:
    similarity = _unit(image_emb) @ class_emb.T
    own = similarity[np.arange(len(right)), right]
    return (similarity >= own[:, None] - TIE_TOLERANCE).sum(axis=1)


def _accuracy(image_emb, image_class, classes, class_emb) -> dict[str, Any]:
    index = {c: i for i, c in enumerate(classes)}
    keep = [i for i, c in enumerate(image_class) if int(c) in index]
    right = np.array([index[int(image_class[i])] for i in keep], dtype=np.int64)
    ranks = _ranks(np.asarray(image_emb)[keep], right, class_emb) if keep else np.zeros(0, dtype=np.int64)
    out: dict[str, Any] = {f"top{k}": float(np.mean(ranks <= k)) if len(ranks) else None for k in TOP_K}
    out |= {"n_classes": len(classes), "n_images": len(keep)}
    per_class: dict[str, dict[str, Any]] = {}
    for rank, i in zip(ranks, keep, strict=True):
        row = per_class.setdefault(str(int(image_class[i])), {"n_images": 0, "correct": 0})
        row["n_images"] += 1
        row["correct"] += int(rank == 1)
    for row in per_class.values():
        row["top1"] = row["correct"] / row["n_images"]
    return out | {"per_class": per_class}


def zeroshot_measures(
    image_emb: np.ndarray,
    image_class: Sequence[int],
    classes: Sequence[int],
    class_emb: np.ndarray,
    *,
    baseline: tuple[Sequence[int], np.ndarray] | None = None,
) -> dict[str, Any]:
    """Top-1/top-5 and per-class accuracy of one language over the images of the classes it covers.

    ``baseline``: English's ``(classes, class vectors)``; its accuracy is measured on the same images
    over the classes both languages cover (``baseline`` in the result, None without English).
    """
    classes = [int(c) for c in classes]
    out = _accuracy(image_emb, image_class, classes, np.asarray(class_emb))
    notes = []
    if len(classes) == 1:
        notes.append("only 1 class: every image is right by construction (accuracy 1 means nothing)")
    elif len(classes) <= max(TOP_K):
        notes.append(f"only {len(classes)} classes: top-5 accuracy is 1 by construction")
    missing = len([c for c in image_class if int(c) not in set(classes)])
    if missing:
        notes.append(f"{missing} images of classes this language has no label for are left out")
    out["baseline"] = None
    if baseline is not None:
        base_classes, base_emb = [int(c) for c in baseline[0]], np.asarray(baseline[1])
        shared = [c for c in classes if c in set(base_classes)]
        rows = [base_classes.index(c) for c in shared]
        if shared:
            base = _accuracy(image_emb, image_class, shared, base_emb[rows])
            base.pop("per_class")
            out["baseline"] = base
            if len(shared) < len(classes):
                notes.append(f"English is compared on the {len(shared)} of its classes it has labels for")
    out["notes"] = notes
    return out


def _interval(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> list[float] | None:
    if len(values) < 2 or n_boot < 1:
        return None
    picks = rng.integers(0, len(values), size=(n_boot, len(values)))
    lo, hi = np.percentile(values[picks].mean(axis=1), [2.5, 97.5])
    return [float(lo), float(hi)]


def foil_measures(
    image_emb: np.ndarray,
    caption_emb: np.ndarray,
    foil_emb: np.ndarray,
    phenomena: Sequence[str],
    keys: Sequence[str],
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
) -> dict[str, Any]:
    """Pairwise accuracy per phenomenon and over all pairs (``"all"``), ties, intervals and each pair's
    two CLIPScores (``pairs``: ``[key, phenomenon, caption score, foil score]``, for before/after)."""
    images, captions, foils = _unit(image_emb), _unit(caption_emb), _unit(foil_emb)
    if not (images.shape == captions.shape == foils.shape) or len(phenomena) != len(images):
        raise ValueError("give one image, caption, foil and phenomenon per pair")
    caption_score = CLIPSCORE_W * np.maximum(np.einsum("ij,ij->i", images, captions), 0.0)
    foil_score = CLIPSCORE_W * np.maximum(np.einsum("ij,ij->i", images, foils), 0.0)
    right = caption_score > foil_score + TIE_TOLERANCE
    tie = np.abs(caption_score - foil_score) <= TIE_TOLERANCE
    rng = np.random.default_rng(seed)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(phenomena):
        groups[name].append(i)
    groups = {name: groups[name] for name in sorted(groups)} | {"all": list(range(len(images)))}
    by_phenomenon = {}
    for name, rows in groups.items():
        values = right[rows].astype(np.float64)
        by_phenomenon[name] = {
            "n_pairs": len(rows),
            "accuracy": float(values.mean()) if rows else None,
            "ties": int(tie[rows].sum()),
            "interval": _interval(values, n_boot, rng),
        }
    pairs = [
        [str(k), str(p), float(c), float(f)]
        for k, p, c, f in zip(keys, phenomena, caption_score, foil_score, strict=True)
    ]
    return {"accuracy": by_phenomenon["all"]["accuracy"], "phenomena": by_phenomenon, "pairs": pairs}


def foil_compare(
    after: Mapping[str, Any], before: Mapping[str, Any], *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0
) -> dict[str, Any]:
    """Before/after on the pairs both results share (by key): per phenomenon and ``"all"``, the two
    accuracies, their difference and a paired bootstrap interval of the difference."""
    base = {k: (p, c > f + TIE_TOLERANCE) for k, p, c, f in before.get("pairs", [])}
    rows = [(p, base[k][1], c > f + TIE_TOLERANCE) for k, p, c, f in after.get("pairs", []) if k in base]
    rng = np.random.default_rng(seed)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, (p, _, _) in enumerate(rows):
        groups[p].append(i)
    groups = {name: groups[name] for name in sorted(groups)} | {"all": list(range(len(rows)))}
    b = np.array([r[1] for r in rows], dtype=np.float64)
    a = np.array([r[2] for r in rows], dtype=np.float64)
    out = {}
    for name, idx in groups.items():
        if not idx:
            continue
        diff = a[idx] - b[idx]
        out[name] = {
            "n_pairs": len(idx),
            "before": float(b[idx].mean()),
            "after": float(a[idx].mean()),
            "delta": float(diff.mean()),
            "interval": _interval(diff, n_boot, rng),
        }
    return {"n_shared": len(rows), "n_after_only": len(after.get("pairs", [])) - len(rows), "phenomena": out}
