"""Entry points: score raw or tokenised captions with any of the COCO text metrics.

``score_texts`` preprocesses raw captions (see :mod:`.preprocess`) and ``score_tokens`` takes tokens
as they are (for example PTB-tokenised COCO references, split on spaces, to check exactness against
the COCO server). Both intern the corpus once and share the n-gram tables between BLEU, CIDEr and
CIDEr-D.

Which references count: those of the candidate keys. The CIDEr IDF is computed from exactly those,
so scoring a subset of images changes CIDEr of the others (as with the reference code); score all
of a system's images together.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from core.tokenisation import WHITESPACE

from . import MetricResult
from .bleu import BleuStats, bleu_from_corpus
from .cider import cider_variants
from .preprocess import TokenCorpus, check_references
from .rouge import rouge_l_from_corpus
from .schemes import PRETOKENIZED, Scheme, scheme_for_language, text_signature

__all__ = ["METRICS", "ScoreReport", "score_texts", "score_tokens"]

METRICS: tuple[str, ...] = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr", "CIDEr-D")


@dataclass(frozen=True)
class ScoreReport:
    """Scores of one candidate set (one system, one language).

    ``corpus[name]`` and ``per_caption[name][key]`` for each requested metric name, in the requested
    order; ``per_caption`` dicts follow the order of the candidate keys. ``bleu_stats`` is set when a
    BLEU metric was requested. ``scheme`` is the tokenisation scheme's name for ``score_texts``,
    ``"pretokenized"`` for ``score_tokens``; ``signature`` is the signature of every number in the
    report (:func:`~evaluation.metrics.text.schemes.text_signature`).
    """

    corpus: dict[str, float]
    per_caption: dict[str, dict[Hashable, float]]
    bleu_stats: BleuStats | None
    n_images: int
    n_references: int
    scheme: str = PRETOKENIZED
    signature: str = ""

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self.corpus)

    def result(self, name: str) -> MetricResult:
        return MetricResult(name=name, score=self.corpus[name], per_caption=self.per_caption[name])

    def caption_scores(self) -> Iterator[tuple[Hashable, dict[str, float]]]:
        """``(key, {metric: score})`` per candidate, handy for storing one row per caption."""
        names = self.metrics
        columns = [self.per_caption[name] for name in names]
        keys = columns[0].keys() if columns else ()
        for key in keys:
            yield key, {name: column[key] for name, column in zip(names, columns)}


def score_tokens(
    candidates: Mapping[Hashable, Sequence[str]],
    references: Mapping[Hashable, Sequence[Sequence[str]]],
    *,
    metrics: Iterable[str] = METRICS,
) -> ScoreReport:
    """Score tokenised candidates (key -> tokens) against references (key -> list of token lists).

    Raises ``ValueError`` for an empty candidate set, candidate keys without references (named in
    the message) or unknown metric names; ``TypeError`` if a caption is a string, not a token list.
    """
    wanted = _check_metrics(metrics)
    corpus = TokenCorpus.build(candidates, references)
    return _score_corpus(corpus, wanted, scheme=PRETOKENIZED, signature=text_signature(PRETOKENIZED))


def score_texts(
    candidates: Mapping[Hashable, str],
    references: Mapping[Hashable, Sequence[str]],
    *,
    language: str | None = None,
    scheme: str | Scheme | None = None,
    metrics: Iterable[str] = METRICS,
) -> ScoreReport:
    """Preprocess and score raw candidates (key -> caption) against references (key -> captions).

    ``scheme`` is a tokenisation scheme (or its name, see :mod:`~evaluation.metrics.text.schemes`);
    None takes the default scheme of ``language`` (the language's setting is the caller's to pass), or
    ``whitespace``, the platform's rule, when no language is given either;
    ``language`` also checks that the scheme is meant for it and is named in error messages.
    Raises like :func:`score_tokens`, plus a :class:`~evaluation.metrics.text.schemes.SchemeError`
    (a ``ValueError`` naming the scheme and the language) for an unknown scheme, one for another
    language, a library that is not installed or a caption the segmenter rejects, and ``TypeError``
    for a caption that is not a string. The scheme is checked before any caption is read.
    """
    name = scheme.name if isinstance(scheme, Scheme) else scheme
    chosen = scheme_for_language(language, name or (None if language else WHITESPACE))
    signature = text_signature(chosen, language=language)
    wanted = _check_metrics(metrics)
    check_references(candidates, references)
    cache: dict[str, list[str]] = {}

    def tokens(text: object, key: Hashable) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"caption of {key!r} is {type(text).__name__}, expected str")
        if text not in cache:
            cache[text] = chosen.tokenize(text, language=language)
        return cache[text]

    tokenised_candidates = {key: tokens(text, key) for key, text in candidates.items()}
    tokenised_references = {}
    for key in candidates:
        refs = references[key]
        if isinstance(refs, str):
            raise TypeError(f"references of {key!r} must be a list of captions, not a string")
        tokenised_references[key] = [tokens(text, key) for text in refs]
    corpus = TokenCorpus.build(tokenised_candidates, tokenised_references)
    return _score_corpus(corpus, wanted, scheme=chosen.name, signature=signature)


def _check_metrics(metrics: Iterable[str]) -> tuple[str, ...]:
    wanted = tuple(dict.fromkeys(metrics))
    if not wanted:
        raise ValueError("no metrics requested")
    unknown = [name for name in wanted if name not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; choose from {list(METRICS)}")
    return wanted


def _score_corpus(
    corpus: TokenCorpus, wanted: tuple[str, ...], *, scheme: str, signature: str
) -> ScoreReport:
    results: dict[str, MetricResult] = {}
    bleu_stats = None
    bleu_orders = [int(name.split("-")[1]) for name in wanted if name.startswith("BLEU-")]
    if bleu_orders:
        bleu = bleu_from_corpus(corpus, n=4)
        bleu_stats = bleu.stats
        for k in bleu_orders:
            results[f"BLEU-{k}"] = bleu.metric(k)
    if "ROUGE-L" in wanted:
        results["ROUGE-L"] = rouge_l_from_corpus(corpus)
    variants = [name for name in wanted if name in ("CIDEr", "CIDEr-D")]
    if variants:
        for result in cider_variants(corpus, variants=variants):
            results[result.name] = result
    return ScoreReport(
        corpus={name: results[name].score for name in wanted},
        per_caption={name: results[name].per_caption for name in wanted},
        bleu_stats=bleu_stats,
        n_images=corpus.n_images,
        n_references=corpus.n_references,
        scheme=scheme,
        signature=signature,
    )
