"""Compute one chunk of a zero-shot or foil check and store it.

The embeddings go through the caches metric runs and retrieval checks share (images by model and
file, texts by model and the sha256 of the text as embedded), with retrieval's own helpers, so a
killed check resumes with every vector already stored and a label or caption is never embedded twice.

* ``images``: embeds the chunk's images. ``texts``: embeds one language's prompts (zero-shot) or
  captions and foils. ``score``: reads one language's vectors (embedding only what went missing),
  measures it (:mod:`evaluation.clip_checks.measures`) and stores it in ``ClipProbeCheck.results``.
"""

from __future__ import annotations

from functools import partial

from core.jobs.engine import JobDataError, timings_add
from evaluation.clip_checks.measures import TIE_TOLERANCE, class_vectors, foil_measures, zeroshot_measures
from evaluation.metrics.clip.trust import BASELINE_LANGUAGE
from evaluation.models import (
    ClipProbe,
    ClipProbeCheck,
    ClipProbeChunk,
    ClipProbeChunkKind,
)
from evaluation.retrieval.compute import (
    EmbeddingChunks,
    _image_vectors,
    _text_vectors,
    embeddings_compute,
    model_id_store,
)


def _rows(check: ClipProbeCheck, kind: str, language: str = "") -> list:
    chunks = check.chunks.filter(kind=kind, language=language).order_by("index")
    return [row for chunk in chunks for row in chunk.payload]


def _zeroshot(check: ClipProbeCheck, language: str, models, image_cache, text_cache) -> dict:
    images = _rows(check, ClipProbeChunkKind.IMAGES)
    image_emb = _image_vectors(models, [image_id for image_id, _ in images], image_cache)
    image_class = [class_id for _, class_id in images]

    def classes_of(code: str):
        prompts = _rows(check, ClipProbeChunkKind.TEXTS, code)
        return class_vectors(
            _text_vectors(models, [t for _, t in prompts], text_cache), [c for c, _ in prompts]
        )

    classes, class_emb = classes_of(language)
    has_baseline = check.chunks.filter(kind=ClipProbeChunkKind.TEXTS, language=BASELINE_LANGUAGE).exists()
    baseline = classes_of(BASELINE_LANGUAGE) if has_baseline else None
    return zeroshot_measures(image_emb, image_class, classes, class_emb, baseline=baseline)


def _foils(check: ClipProbeCheck, language: str, models, image_cache, text_cache) -> dict:
    rows = _rows(check, ClipProbeChunkKind.TEXTS, language)
    image_emb = _image_vectors(models, [row[1] for row in rows], image_cache)
    captions = _text_vectors(models, [row[3] for row in rows], text_cache)
    foils = _text_vectors(models, [row[4] for row in rows], text_cache)
    try:
        return foil_measures(
            image_emb,
            captions,
            foils,
            [row[2] for row in rows],
            [row[0] for row in rows],
            n_boot=int(check.params.get("n_boot", 1000)),
            seed=check.pk,
        )
    except ValueError as exc:
        raise JobDataError(f"{language}: {exc}") from exc


def _texts(probe: str, payload: list) -> list[str]:
    if probe == ClipProbe.ZEROSHOT:
        return [text for _, text in payload]
    return [text for row in payload for text in (row[3], row[4])]


def chunk_compute(chunk: ClipProbeChunk) -> dict:
    """The chunk's outcome: ``{"model_id", "stats", "result"?}``; raises JobDataError / ClipUnavailable."""
    check = chunk.probe_check
    measure = _zeroshot if check.probe == ClipProbe.ZEROSHOT else _foils
    return embeddings_compute(
        check,
        chunk,
        images=lambda payload: [row[0] if isinstance(row, list) else row for row in payload],
        texts=partial(_texts, check.probe),
        measure=partial(measure, check, chunk.language),
    )


def check_finalise(check: ClipProbeCheck) -> None:
    """Once every language is measured (check row locked): each foil language's English accuracy on the
    pairs both have (matched by key), stored as its ``baseline``; None without English or shared pairs."""
    if check.probe != ClipProbe.FOIL:
        return
    pairs = check.pairs or {}
    english = {key: c > f + TIE_TOLERANCE for key, _, c, f in pairs.get(BASELINE_LANGUAGE, [])}
    results = dict(check.results or {})
    for code, result in results.items():
        shared = [english[key] for key, *_ in pairs.get(code, []) if key in english]
        baseline = {"accuracy": sum(shared) / len(shared), "n_pairs": len(shared)} if shared else None
        results[code] = {**result, "baseline": baseline}
    check.results = results


def chunk_store(check: ClipProbeCheck, chunk: ClipProbeChunk, outcome: dict, seconds: float) -> None:
    """Record the chunk's outcome on the check (check and chunk rows locked). Raises JobDataError
    when the workers loaded different weights under the same settings."""
    model_id_store(check, outcome)
    if "result" in outcome:
        result = dict(outcome["result"])
        if "pairs" in result:
            check.pairs = {**(check.pairs or {}), chunk.language: result.pop("pairs")}
        check.results = {**(check.results or {}), chunk.language: result}
    timings_add(check, f"{chunk.kind}_seconds", seconds, outcome["stats"])


# A score chunk waits for the embedding chunks; once every chunk is done, the check is finalised.
PROBE_CHUNKS = EmbeddingChunks(
    ClipProbeChunk,
    "probe_check",
    ClipProbeChunkKind.SCORE,
    compute=chunk_compute,
    store=chunk_store,
    finalise=check_finalise,
)
