"""Entry points: score raw or tokenised captions with any of the COCO text metrics.

``score_texts`` tokenises raw captions with a named scheme (see :mod:`.schemes`) and ``score_tokens`` takes tokens
as they are (for example PTB-tokenised COCO references, split on spaces, to check exactness against
the COCO server). Both intern the corpus once and share the n-gram tables between BLEU, CIDEr and
CIDEr-D.

Which references count: those of the candidate keys. The CIDEr IDF is computed from exactly those,
so scoring a subset of images changes CIDEr of the others (as with the reference code); score all
of a system's images together, or give ``df_references`` (a named reference corpus, tokenised the
same way) to take the document frequencies from it instead (``ScoreReport.df_source``).

METEOR (:mod:`.meteor`) runs the METEOR 1.5 jar on the same tokens, joined by spaces, as the COCO
server feeds it; ``meteor=`` takes where the jar is (a :class:`~.meteor.MeteorConfig`: one JVM per call)
or an open :class:`~.meteor.MeteorSession` (one JVM for all the calls of one language). It is not in the default ``METRICS`` (it needs Java and the captions' language);
ask for it by name with ``language=``. When Java or the jar is missing, or the JVM fails, the other
metrics are still returned and ``ScoreReport.not_computed["METEOR"]`` says why.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain

import numpy as np

from core.tokenisation import WHITESPACE

from . import MetricResult, ptb
from .bleu import BleuStats, bleu_from_corpus
from .cider import DF_FROM_TEST, DocumentFrequency, cider_variants, document_frequency
from .meteor import MeteorConfig, MeteorError, MeteorSession, meteor_score
from .preprocess import TokenCorpus, check_references
from .resampling import bleu_replicates, cider_replicates, mean_replicates
from .rouge import rouge_l_from_corpus
from .schemes import PRETOKENIZED, Scheme, scheme_for_language, text_signature

__all__ = [
    "JAVA_METRICS",
    "KNOWN_METRICS",
    "METRICS",
    "ScoreReport",
    "score_ptb_texts",
    "score_texts",
    "score_tokens",
]

# Computed in process; the default set of score_texts / score_tokens.
METRICS: tuple[str, ...] = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr", "CIDEr-D")
# Computed by a Java subprocess (the METEOR 1.5 jar): asked for by name.
JAVA_METRICS: tuple[str, ...] = ("METEOR",)
KNOWN_METRICS: tuple[str, ...] = METRICS + JAVA_METRICS


@dataclass(frozen=True)
class ScoreReport:
    """Scores of one candidate set (one system, one language).

    ``corpus[name]`` and ``per_caption[name][key]`` for each requested metric name that was computed,
    in the requested order; ``per_caption`` dicts follow the order of the candidate keys.
    ``not_computed[name]`` says why a requested metric is missing (only METEOR can be: no Java, no
    jar, the JVM failed). ``bleu_stats`` is set when a BLEU metric was requested. ``scheme`` is the
    tokenisation scheme's name for ``score_texts``, ``"pretokenized"`` for ``score_tokens``.
    ``df_source`` names where CIDEr's document frequencies came from (``test``: the scored images'
    references; else the df corpus's name), ``meteor_setting`` how the jar was run (e.g. ``meteor-1.5
    en norm exact+stem+synonym+paraphrase``). ``signature`` is the signature of the in-process numbers
    (:func:`~evaluation.metrics.text.schemes.text_signature`); :meth:`signature_of` gives a metric's.
    ``replicates[name]``, when ``resamples`` were given: the metric's corpus score on each resample
    (:mod:`.resampling`), an array in the order of the resamples' rows.
    """

    corpus: dict[str, float]
    per_caption: dict[str, dict[Hashable, float]]
    bleu_stats: BleuStats | None
    n_images: int
    n_references: int
    scheme: str = PRETOKENIZED
    signature: str = ""
    not_computed: dict[str, str] = field(default_factory=dict)
    df_source: str = DF_FROM_TEST
    meteor_setting: str | None = None
    replicates: dict[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    def signature_of(self, name: str) -> str:
        """The signature of one metric's numbers: METEOR's also names how the jar was run."""
        if name == "METEOR" and self.meteor_setting:
            return meteor_signature(self.signature, self.meteor_setting)
        return self.signature

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
    language: str | None = None,
    meteor: MeteorConfig | MeteorSession | None = None,
    df_references: Mapping[Hashable, Sequence[Sequence[str]]] | None = None,
    df_name: str | None = None,
    resamples: np.ndarray | None = None,
) -> ScoreReport:
    """Score tokenised candidates (key -> tokens) against references (key -> list of token lists).

    ``language`` (a language code) is needed for METEOR, ``meteor`` says where the jar and Java are
    (default: pycocoevalcap's jar, ``java`` on the PATH). ``df_references`` (image -> token lists) and
    ``df_name``: take CIDEr's document frequencies from that corpus. ``resamples``: draw counts, one row
    per resample and one column per candidate in key order, each row summing to the number of
    candidates; every metric's score on each resampled corpus is in ``replicates``. Raises
    ``ValueError`` for an empty candidate set, candidate keys without references (named in the message), unknown metric
    names, METEOR without a language or a df corpus without a name; ``TypeError`` if a caption is a
    string, not a token list.
    """
    wanted = _check_metrics(metrics, language)
    df = _df(df_references, df_name)
    corpus = TokenCorpus.build(candidates, references)
    signature = text_signature(PRETOKENIZED, df_source=df.name if df is not None else DF_FROM_TEST)
    resamples = _check_resamples(resamples, corpus.n_images)
    report = _score_corpus(
        corpus, wanted, scheme=PRETOKENIZED, signature=signature, df=df, resamples=resamples
    )
    return _with_meteor(report, wanted, candidates, references, language, meteor, resamples)


def score_texts(
    candidates: Mapping[Hashable, str],
    references: Mapping[Hashable, Sequence[str]],
    *,
    language: str | None = None,
    scheme: str | Scheme | None = None,
    metrics: Iterable[str] = METRICS,
    meteor: MeteorConfig | MeteorSession | None = None,
    df_references: Mapping[Hashable, Sequence[str]] | None = None,
    df_name: str | None = None,
    resamples: np.ndarray | None = None,
) -> ScoreReport:
    """Preprocess and score raw candidates (key -> caption) against references (key -> captions).

    ``scheme`` is a tokenisation scheme (or its name, see :mod:`~evaluation.metrics.text.schemes`);
    None takes the default scheme of ``language`` (the language's setting is the caller's to pass), or
    ``whitespace``, the platform's rule, when no language is given either;
    ``language`` also checks that the scheme is meant for it and is named in error messages.
    ``df_references`` are raw captions (image -> captions), tokenised like the scored ones;
    ``resamples`` as for :func:`score_tokens`.
    Raises like :func:`score_tokens`, plus a :class:`~evaluation.metrics.text.schemes.SchemeError`
    (a ``ValueError`` naming the scheme and the language) for an unknown scheme, one for another
    language, a library that is not installed or a caption the segmenter rejects, and ``TypeError``
    for a caption that is not a string. The scheme is checked before any caption is read.
    """
    name = scheme.name if isinstance(scheme, Scheme) else scheme
    chosen = scheme_for_language(language, name or (None if language else WHITESPACE))
    wanted = _check_metrics(metrics, language)
    if chosen.punctuation == "ptb" and df_references is None:
        # The COCO server's pipeline: references and candidates tokenised as two files, tokens
        # straight to ids (several times faster than caption by caption on large sets).
        return score_ptb_texts(
            candidates,
            references,
            metrics=wanted,
            meteor=meteor,
            language=language or "en",
            scheme=chosen.name,
            resamples=resamples,
        )
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
    tokenised_df = None
    if df_references is not None:
        tokenised_df = {}
        for key, refs in df_references.items():
            if isinstance(refs, str):
                raise TypeError(f"df references of {key!r} must be a list of captions, not a string")
            tokenised_df[key] = [tokens(text, key) for text in refs]
    df = _df(tokenised_df, df_name)
    corpus = TokenCorpus.build(tokenised_candidates, tokenised_references)
    signature = text_signature(
        chosen, language=language, df_source=df.name if df is not None else DF_FROM_TEST
    )
    resamples = _check_resamples(resamples, corpus.n_images)
    report = _score_corpus(
        corpus, wanted, scheme=chosen.name, signature=signature, df=df, resamples=resamples
    )
    return _with_meteor(
        report, wanted, tokenised_candidates, tokenised_references, language, meteor, resamples
    )


def meteor_signature(text_signature: str, setting: str) -> str:
    """A text signature with how the METEOR jar was run appended (``|meteor:<setting>``, no spaces)."""
    return f"{text_signature}|meteor:{setting.replace(' ', ',')}"


def score_ptb_texts(
    candidates: Mapping[Hashable, str],
    references: Mapping[Hashable, Sequence[str]],
    *,
    metrics: Iterable[str] = METRICS,
    meteor: MeteorConfig | MeteorSession | None = None,
    language: str = "en",
    scheme: str = "coco-ptb",
    resamples: np.ndarray | None = None,
) -> ScoreReport:
    """Score raw captions tokenised as the COCO server does (:mod:`.ptb`), from raw text.

    The references of the candidate keys are tokenised as one file and the candidates as another, in
    key order, as pycocoevalcap's ``COCOEvalCap`` calls its ``PTBTokenizer``; the scores equal
    pycocoevalcap's on the same captions. The tokens go straight to integer ids
    (:func:`.ptb.tokenize_many_ids`), never through per-caption token lists, which is most of the
    speed on large sets. ``scheme`` is the PTB scheme's name (``coco-ptb`` for English,
    ``xm3600-ptb`` for any language), checked for ``language``; METEOR, when asked for, runs on the
    same tokens in ``language``. :func:`score_texts` comes here for a PTB scheme (without a df corpus).
    Raises like :func:`score_texts`.
    """
    chosen = scheme_for_language(language, scheme)
    if chosen.punctuation != "ptb":
        raise ValueError(f"score_ptb_texts takes a PTB scheme, not {chosen.name!r}")
    wanted = _check_metrics(metrics, language)
    check_references(candidates, references)
    keys = tuple(candidates)
    ref_lists = [references[key] for key in keys]
    for key, refs in zip(keys, ref_lists):
        if isinstance(refs, str):
            raise TypeError(f"references of {key!r} must be a list of captions, not a string")
    ref_texts = list(chain.from_iterable(ref_lists))
    ref_counts = np.zeros(len(keys) + 1, dtype=np.int64)
    ref_counts[1:] = np.fromiter(map(len, ref_lists), dtype=np.int64, count=len(keys))
    vocabulary: dict[str, int] = {}
    ref_ids, ref_token_starts = ptb.tokenize_many_ids(ref_texts, vocabulary)
    cand_ids, cand_token_starts = ptb.tokenize_many_ids([candidates[key] for key in keys], vocabulary)
    corpus = TokenCorpus.from_ids(
        keys=keys,
        tokens=np.concatenate([cand_ids, ref_ids]),
        starts=np.concatenate([cand_token_starts[:-1], ref_token_starts + len(cand_ids)]),
        ref_starts=np.cumsum(ref_counts),
        vocabulary=vocabulary,
    )
    signature = text_signature(chosen, language=language)
    resamples = _check_resamples(resamples, corpus.n_images)
    report = _score_corpus(corpus, wanted, scheme=chosen.name, signature=signature, resamples=resamples)
    if "METEOR" not in wanted:
        return report
    words = list(corpus.vocabulary)  # in id order: index = token id
    sentences = [
        [words[i] for i in corpus.tokens[a:b].tolist()] for a, b in zip(corpus.starts, corpus.starts[1:])
    ]
    token_candidates = dict(zip(keys, sentences))
    token_references = {
        key: sentences[len(keys) + a : len(keys) + b]
        for key, a, b in zip(keys, corpus.ref_starts, corpus.ref_starts[1:])
    }
    return _with_meteor(report, wanted, token_candidates, token_references, language, meteor, resamples)


def _check_resamples(resamples, n_images: int) -> np.ndarray | None:
    if resamples is None:
        return None
    resamples = np.asarray(resamples)
    if resamples.ndim != 2 or resamples.shape[1] != n_images:
        raise ValueError(
            f"resamples must have one column per candidate ({n_images}), not shape {resamples.shape}"
        )
    if resamples.min(initial=0) < 0 or np.any(resamples.sum(axis=1) != n_images):
        raise ValueError("every resample must draw as many images as there are candidates")
    return resamples


def _check_metrics(metrics: Iterable[str], language: str | None) -> tuple[str, ...]:
    wanted = tuple(dict.fromkeys(metrics))
    if not wanted:
        raise ValueError("no metrics requested")
    unknown = [name for name in wanted if name not in KNOWN_METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; choose from {list(KNOWN_METRICS)}")
    if "METEOR" in wanted and not (language and language.strip()):
        raise ValueError("METEOR needs the captions' language (language='en', 'de', ...)")
    return wanted


def _df(references, name: str | None) -> DocumentFrequency | None:
    if references is None:
        return None
    if not name:
        raise ValueError("name the df corpus (df_name), e.g. 'refset:<name>' or 'file:<sha256 prefix>'")
    return document_frequency(references, name=name)


def _with_meteor(
    report: ScoreReport, wanted, candidates, references, language, config, resamples=None
) -> ScoreReport:
    """Add METEOR, in its requested place, to a report of the in-process metrics; or say why not."""
    if "METEOR" not in wanted:
        return report
    try:
        if isinstance(config, MeteorSession):
            if config.language != language:
                raise ValueError(f"a METEOR session of {config.language!r} cannot score {language!r}")
            meteor = config.score(candidates, references, resamples=resamples)
        else:
            meteor = meteor_score(
                candidates, references, language=language, config=config, resamples=resamples
            )
    except MeteorError as exc:
        return replace(report, not_computed={**report.not_computed, "METEOR": str(exc)})
    corpus = {**report.corpus, "METEOR": meteor.result.score}
    per_caption = {**report.per_caption, "METEOR": meteor.result.per_caption}
    computed = [name for name in wanted if name in corpus]
    return replace(
        report,
        corpus={name: corpus[name] for name in computed},
        per_caption={name: per_caption[name] for name in computed},
        meteor_setting=meteor.setting.name,
        replicates=(
            report.replicates
            if meteor.replicates is None
            else {**report.replicates, "METEOR": meteor.replicates}
        ),
    )


def _score_corpus(
    corpus: TokenCorpus,
    wanted: tuple[str, ...],
    *,
    scheme: str,
    signature: str,
    df: DocumentFrequency | None = None,
    resamples: np.ndarray | None = None,
) -> ScoreReport:
    results: dict[str, MetricResult] = {}
    replicates: dict[str, np.ndarray] = {}
    bleu_stats = None
    bleu_orders = [int(name.split("-")[1]) for name in wanted if name.startswith("BLEU-")]
    if bleu_orders:
        bleu = bleu_from_corpus(corpus, n=4)
        bleu_stats = bleu.stats
        resampled = None if resamples is None else bleu_replicates(bleu.image_stats, resamples, n=4)
        for k in bleu_orders:
            results[f"BLEU-{k}"] = bleu.metric(k)
            if resampled is not None:
                replicates[f"BLEU-{k}"] = resampled[:, k - 1]
    if "ROUGE-L" in wanted:
        results["ROUGE-L"] = rouge_l_from_corpus(corpus)
    variants = [name for name in wanted if name in ("CIDEr", "CIDEr-D")]
    if variants:
        for result in cider_variants(corpus, variants=variants, df=df):
            results[result.name] = result
        if resamples is not None and df is None:
            replicates.update(cider_replicates(corpus, resamples, variants=variants))
    if resamples is not None:
        # The rest are means over images (with a df corpus, CIDEr's weights do not change either).
        for name, result in results.items():
            if name not in replicates:
                replicates[name] = mean_replicates(list(result.per_caption.values()), resamples)
    in_process = [name for name in wanted if name in results]
    return ScoreReport(
        corpus={name: results[name].score for name in in_process},
        per_caption={name: results[name].per_caption for name in in_process},
        bleu_stats=bleu_stats,
        n_images=corpus.n_images,
        n_references=corpus.n_references,
        scheme=scheme,
        signature=signature,
        df_source=df.name if df is not None else DF_FROM_TEST,
        replicates={name: replicates[name] for name in in_process if name in replicates},
    )
