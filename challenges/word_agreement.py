"""Human agreement for word prediction (seed 002, sec. 4.2), pure.

Treat one human caption of each image (the (k+1)-th) as a prediction of the words that occur in the first
k captions. For a word w, with weighted counts (an image where the prediction uses w weighs the number of
the k captions containing w; an image where none of them does weighs 1):

    cw = sum over images of #captions (of k) containing w
    tp = sum over images predicting w of #captions (of k) containing w
    fp = number of images predicting w where none of the k captions contains w
    human precision Hp = tp / (tp + fp),  human recall Hr = tp / cw

The paper's model (a subject uses w with probability p when its object is in the image, never otherwise)
gives Hr = p and Hp = pk / (pk + (1 - p)^k): the fitted p is the observed recall. A system's captions are
scored the same way (its caption is the prediction); its precision at human recall (PHR) is its precision
for the words where its recall reaches the human recall (None where it does not).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape


@dataclass(frozen=True)
class WordAgreement:
    word: str
    frequency: int  # captions (of the first k) that contain it, over all images
    human_precision: float | None
    human_recall: float | None
    p: float | None  # the fitted p of the model (= the observed recall)
    model_precision: float | None  # the model's precision at that p and k


@dataclass(frozen=True)
class SystemWord:
    word: str
    precision: float | None
    recall: float | None
    phr: float | None  # the system's precision where its recall reaches the human recall


def model_precision(p: float, k: int) -> float:
    """The model's human precision for a word used with probability ``p``, with ``k`` references."""
    denominator = p * k + (1 - p) ** k
    return p * k / denominator if denominator else 0.0


def _counts(
    prediction: Mapping[object, set[str]], references: Mapping[object, Sequence[set[str]]], word: str
):
    cw = tp = fp = 0
    for image, refs in references.items():
        containing = sum(1 for ref in refs if word in ref)
        cw += containing
        if word in prediction.get(image, ()):
            if containing:
                tp += containing
            else:
                fp += 1
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / cw if cw else None
    return precision, recall


def frequent_words(
    references: Mapping[object, Sequence[set[str]]], *, k: int, top: int
) -> list[tuple[str, int]]:
    """The ``top`` words used in most of the first ``k`` captions, over all images (ties by word)."""
    counts: Counter[str] = Counter()
    for refs in references.values():
        for ref in refs[:k]:
            counts.update(ref)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]


def human_agreement(
    captions: Mapping[object, Sequence[set[str]]], *, k: int, top: int = 100
) -> list[WordAgreement]:
    """Per frequent word, the human precision and recall of the (k+1)-th caption against the first k, the
    fitted p and the model's precision. ``captions``: image -> word sets of its captions, in order; images
    with fewer than k+1 captions are left out. Raises ValueError for k < 1."""
    if k < 1:
        raise ValueError("k must be at least 1")
    usable = {image: list(caps) for image, caps in captions.items() if len(caps) >= k + 1}
    references = {image: caps[:k] for image, caps in usable.items()}
    prediction = {image: caps[k] for image, caps in usable.items()}
    rows = []
    for word, frequency in frequent_words(references, k=k, top=top):
        precision, recall = _counts(prediction, references, word)
        rows.append(
            WordAgreement(
                word=word,
                frequency=frequency,
                human_precision=precision,
                human_recall=recall,
                p=recall,
                model_precision=model_precision(recall, k) if recall is not None else None,
            )
        )
    return rows


def system_agreement(
    system: Mapping[object, set[str]],
    captions: Mapping[object, Sequence[set[str]]],
    human: Sequence[WordAgreement],
    *,
    k: int,
) -> list[SystemWord]:
    """A system's precision and recall for the same words against the same first k captions, and its PHR."""
    references = {image: list(caps)[:k] for image, caps in captions.items() if len(caps) >= k + 1}
    rows = []
    for row in human:
        precision, recall = _counts(system, references, row.word)
        reached = recall is not None and row.human_recall is not None and recall >= row.human_recall
        rows.append(
            SystemWord(word=row.word, precision=precision, recall=recall, phr=precision if reached else None)
        )
    return rows


def agreement_svg(
    rows: Sequence[WordAgreement],
    *,
    k: int,
    size: int = 320,
    labels: tuple[str, str, str] = ("recall", "precision", "human precision against recall per word"),
) -> str:
    """Figure 3 of the paper as an SVG: each word's (Hr, Hp) point, and the model's curve for ``k``.
    ``labels``: the x axis, the y axis and the figure's description, in the reader's language. Words and
    labels are escaped (words come from people's captions)."""
    x_label, y_label, description = (escape(label) for label in labels)
    pad = 30
    scale = size - 2 * pad

    def xy(recall: float, precision: float) -> tuple[float, float]:
        return pad + recall * scale, size - pad - precision * scale

    curve = " ".join(
        f"{x:.1f},{y:.1f}" for x, y in (xy(p / 100, model_precision(p / 100, k)) for p in range(1, 101))
    )
    points = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" class="word"><title>{escape(r.word)}: '
        f"P={r.human_precision:.2f} R={r.human_recall:.2f}</title></circle>"
        for r in rows
        if r.human_precision is not None and r.human_recall is not None
        for x, y in [xy(r.human_recall, r.human_precision)]
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" width="{size}" height="{size}" '
        f'role="img" aria-label="{description}">'
        f'<rect x="{pad}" y="{pad}" width="{scale}" height="{scale}" fill="none" stroke="#888"/>'
        f'<polyline points="{curve}" fill="none" stroke="#1f5fbf" stroke-width="1.5"/>{points}'
        f'<text x="{size / 2}" y="{size - 6}" text-anchor="middle" font-size="11">{x_label}</text>'
        f'<text x="10" y="{size / 2}" font-size="11" transform="rotate(-90 10 {size / 2})" text-anchor="middle">{y_label}</text>'
        "</svg>"
    )
