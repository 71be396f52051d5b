"""Score one language of a submission (the scoring kind's ``compute``) and store it (``store``).

The text metrics are the metric runs' own scorers (:func:`evaluation.metrics.text.scoring.score_texts`)
with the language's tokenisation scheme, so a leaderboard number and a metric-run number with the same
signature are the same number. Per reference count (0 = all, k = the first k of each image) the whole
phase is scored once (per-image values kept for the validation phase's per-image table and word
agreement); a test phase's public and private parts are each scored as a corpus of their own, as a server
that shows only one part would. Every score is recomputed on each of its split's shared image resamples
(:func:`challenges.statistics.split_resamples`) by the same scorer: its interval, the paired tests and the
mean over languages are read from those replicates, so each is of the number shown.

Nothing here puts a reference into an error message: a failure names counts, never texts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from challenges.models import ImageScores, ScoringUnit, Split, Submission, SubmissionScore
from challenges.scoring.selectors import phase_image_ids, phase_references, submission_captions
from challenges.statistics import interval, public_images, replicates_to_bytes, split_resamples
from core.jobs.engine import JobDataError, timings_add
from evaluation.metrics.text.meteor import MeteorSession
from evaluation.metrics.text.resampling import mean_replicates
from evaluation.metrics.text.schemes import scheme_for_language
from evaluation.metrics.text.scoring import score_texts
from evaluation.models import CLIP_METRICS, TEXT_METRICS, EmbeddingKind, Metric
from evaluation.runs.compute import meteor_config


@dataclass
class UnitResult:
    """What scoring one language gives, as the fields of its rows: ``scores`` of SubmissionScore (count,
    held out, split, metric, value, interval, images, signature), ``image_scores`` of ImageScores."""

    language: str  # the language's code
    seed: int  # the phase's split seed: the intervals' bootstrap
    scores: list[dict] = field(default_factory=list)
    image_scores: list[dict] = field(default_factory=list)
    signatures: dict[str, str] = field(default_factory=dict)
    not_computed: dict[str, str] = field(default_factory=dict)

    def split_score_add(self, key: tuple, value: float, replicates, n_images: int, signature: str) -> None:
        """One row of ``scores`` for ``key`` = (reference count, held out, fresh, split, metric): ``value``
        with its ``replicates`` on the split's resamples (None for a one-image split) and their interval."""
        count, held_out, fresh, split, metric = key
        low, high = interval(replicates, value) or (None, None)
        self.scores.append(
            {
                "reference_count": count,
                "held_out": held_out,
                "fresh": fresh,
                "split": split,
                "metric": metric,
                "value": value,
                "low": low,
                "high": high,
                "n_images": n_images,
                "signature": signature,
                "replicates": replicates_to_bytes(replicates),
            }
        )

    def image_scores_add(self, variant: tuple, metric: str, image_ids: list, values: list):
        count, held_out, fresh = variant
        self.image_scores.append(
            {
                "reference_count": count,
                "held_out": held_out,
                "fresh": fresh,
                "metric": metric,
                "image_ids": image_ids,
                "values": values,
            }
        )


def _score(candidates, references, *, language, scheme, metrics, resamples, meteor):
    return score_texts(
        candidates,
        references,
        language=language,
        scheme=scheme,
        metrics=metrics,
        meteor=meteor,
        resamples=resamples,
    )


def clip_params(phase) -> dict:
    """The CLIP model of a phase's CLIP metrics: its registered model, or the settings' default."""
    from django.conf import settings

    if phase.clip_model_id:
        return phase.clip_model.clip_params
    return {
        "clip_model": settings.CLIP_MODEL,
        "clip_pretrained": settings.CLIP_PRETRAINED,
        "clip_checkpoint": settings.CLIP_CHECKPOINT,
    }


class _ClipScorer:
    """CLIPScore and RefCLIPScore of one language's captions over the phase's images, with the metric runs'
    primitives (model loading, the embedding caches, the formulas): image embeddings are computed once per
    unit, candidate and reference texts once each."""

    def __init__(self, phase, image_ids: list[int], captions: dict[int, str]):
        from django.conf import settings

        from annotation.models import Image
        from evaluation.metrics.clip import (
            DEFAULT_IMAGE_ORIENTATION,
            clipscore,
            embed_images_cached,
            embed_texts,
        )
        from evaluation.metrics.clip.hashing import is_content_hash
        from evaluation.metrics.clip_models import clip_model_get
        from evaluation.metrics.embeddings_cache import DbEmbeddingCache
        from evaluation.metrics.signatures import clip_signature
        from evaluation.runs.compute import _image_loader

        params = clip_params(phase)
        self.loaded = clip_model_get(
            model=params["clip_model"],
            pretrained=params.get("clip_pretrained", ""),
            checkpoint=params.get("clip_checkpoint", ""),
            config=params.get("clip_model_config"),
            autocast=settings.CLIP_AUTOCAST,
            threads=settings.CLIP_TORCH_THREADS,
        )
        self.embed_texts = lambda texts: embed_texts(
            self.loaded,
            texts,
            settings.CLIP_PROMPT_PREFIX,
            settings.CLIP_TEXT_BATCH_SIZE,
            cache=DbEmbeddingCache(EmbeddingKind.TEXT),
        )
        items = []
        files = {
            pk: (key, h, name)
            for pk, key, h, name in Image.objects.filter(pk__in=image_ids).values_list(
                "pk", "key", "content_hash", "file"
            )
        }
        for image_id in image_ids:
            key, content_hash, name = files.get(image_id, (str(image_id), None, ""))
            if not content_hash or not name or not is_content_hash(content_hash):
                raise JobDataError(f"image “{key}” has no stored file: CLIP metrics need the image files")
            items.append((content_hash, _image_loader(name, key)))
        image_emb = embed_images_cached(
            self.loaded,
            items,
            DbEmbeddingCache(EmbeddingKind.IMAGE),
            orientation=DEFAULT_IMAGE_ORIENTATION,
            loader_threads=settings.CLIP_IMAGE_LOADER_THREADS,
        )
        self.cand_emb = self.embed_texts([captions[i] for i in image_ids])
        self.per_clip = clipscore(image_emb, self.cand_emb)
        self.image_ids = image_ids
        self.signature = clip_signature(
            model=params["clip_model"],
            pretrained=params.get("clip_pretrained", ""),
            checkpoint=params.get("clip_checkpoint", ""),
            model_id=self.loaded.model_id,
            prompt_prefix=settings.CLIP_PROMPT_PREFIX,
            orientation=DEFAULT_IMAGE_ORIENTATION,
            autocast=settings.CLIP_AUTOCAST,
        )

    def scores(self, metrics: list[str], references: dict[int, list[str]]) -> dict[str, dict[int, float]]:
        import numpy as np

        from evaluation.metrics.clip import refclipscore

        out = {}
        if Metric.CLIPSCORE in metrics:
            out[Metric.CLIPSCORE.value] = dict(zip(self.image_ids, map(float, self.per_clip), strict=True))
        if Metric.REFCLIPSCORE in metrics:
            texts = [t for i in self.image_ids for t in references[i]]
            ref_emb = self.embed_texts(texts)
            bounds = np.cumsum([0] + [len(references[i]) for i in self.image_ids])
            per_refs = [ref_emb[bounds[n] : bounds[n + 1]] for n in range(len(self.image_ids))]
            values = refclipscore(self.per_clip, self.cand_emb, per_refs)
            out[Metric.REFCLIPSCORE.value] = dict(zip(self.image_ids, map(float, values), strict=True))
        return out


def unit_compute(unit: ScoringUnit) -> UnitResult:
    """Score one language of a submission: every reference count, both halves of a test phase and the
    human comparison, and the fresh references where the language has them, with one METEOR JVM for all of them (:class:`MeteorSession`: started once, each
    segment scored once, a half one EVAL line of its summed statistics)."""
    with MeteorSession(unit.language.code, meteor_config()) as meteor:
        return _unit_compute(unit, meteor)


def _unit_compute(unit: ScoringUnit, meteor: MeteorSession) -> UnitResult:
    submission = unit.submission
    phase = submission.phase
    language = unit.language
    image_ids = phase_image_ids(phase)
    captions = submission_captions(submission_id=submission.pk, language_id=language.pk)
    if sorted(captions) != image_ids:
        raise JobDataError(
            f"the submission's {language.code} captions no longer cover the phase's {len(image_ids)} images "
            f"({len(captions)} stored); submit the file again"
        )
    references = phase_references(phase, language.pk, image_ids)
    lacking = sum(1 for i in image_ids if not references.get(i))
    if lacking:
        raise JobDataError(
            f"{lacking} images of the phase have no {language.code} references; the hosts were told"
        )
    metrics = [m for m in phase.metrics if m in TEXT_METRICS]
    scheme = scheme_for_language(language.code, language.tokenizer)
    splits = {Split.ALL: image_ids}
    if phase.is_test:
        public = public_images(image_ids, seed=phase.split_seed, share=phase.public_share)
        splits[Split.PUBLIC] = [i for i in image_ids if i in public]
        splits[Split.PRIVATE] = [i for i in image_ids if i not in public]
    # The split's resamples, the same for every entry, language, reference count and metric.
    resamples = {split: split_resamples(ids, seed=phase.split_seed) for split, ids in splits.items()}
    result = UnitResult(language=language.code, seed=phase.split_seed)
    variants: list[tuple[int, bool, bool, dict[int, list[str]]]] = []
    if not submission.is_human:
        for count in phase.reference_counts:
            variants.append(
                (
                    count,
                    False,
                    False,
                    references if count == 0 else {i: references[i][:count] for i in image_ids},
                )
            )
        # The fresh references (written on this platform, never exported): the same scores on them, so that
        # the leaderboard can show how far a ranking on public references holds on references no one had.
        fresh = phase_references(phase, language.pk, image_ids, fresh=True)
        lacking = 0 if fresh is None else sum(1 for i in image_ids if not fresh.get(i))
        if fresh is not None and not lacking:
            for count in phase.reference_counts:
                variants.append(
                    (count, False, True, fresh if count == 0 else {i: fresh[i][:count] for i in image_ids})
                )
        elif fresh is not None and lacking < len(image_ids):
            # A phase the fresh references do not wholly cover is not scored on them: a corpus score over
            # part of the images would not be comparable with the main one (the host was told).
            result.not_computed["fresh references"] = (
                f"{lacking} of the phase's {len(image_ids)} images have no fresh {language.code} reference"
            )
    if phase.human_comparison:
        # The human comparison: every entry, the human row included, against the references less the
        # held-out one (the last of each image), so that all its rows are scored on the same references.
        if all(len(references[i]) >= 2 for i in image_ids):
            variants.append((0, True, False, {i: references[i][:-1] for i in image_ids}))
        elif submission.is_human:
            raise JobDataError(f"the human row needs two {language.code} references per image at least")
    clip_metrics = [m for m in phase.metrics if m in CLIP_METRICS]
    clip = _ClipScorer(phase, image_ids, captions) if clip_metrics else None
    for count, held_out, fresh_refs, refs in variants:
        variant = (count, held_out, fresh_refs)
        if clip is not None:
            by_metric = clip.scores(clip_metrics, refs)
            for metric, per_image in by_metric.items():
                values = [per_image[i] for i in image_ids]
                result.image_scores_add(variant, metric, image_ids, values)
                result.signatures[metric] = clip.signature
                for split, ids in splits.items():
                    split_values = [per_image[i] for i in ids]
                    mean = sum(split_values) / len(split_values)
                    replicates = (
                        None if resamples[split] is None else mean_replicates(split_values, resamples[split])
                    )
                    result.split_score_add(
                        (*variant, split, metric), mean, replicates, len(ids), clip.signature
                    )
        if not metrics:
            continue
        full = _score(
            captions,
            refs,
            language=language.code,
            scheme=scheme,
            metrics=metrics,
            resamples=resamples[Split.ALL],
            meteor=meteor,
        )
        result.not_computed.update(full.not_computed)
        for metric in full.metrics:
            per_image = full.per_caption[metric]
            result.image_scores_add(variant, metric, image_ids, [float(per_image[i]) for i in image_ids])
            result.signatures[metric] = full.signature_of(metric)
        for split, ids in splits.items():
            report = (
                full
                if split == Split.ALL
                else _score(
                    {i: captions[i] for i in ids},
                    {i: refs[i] for i in ids},
                    language=language.code,
                    scheme=scheme,
                    metrics=metrics,
                    resamples=resamples[split],
                    meteor=meteor,
                )
            )
            for metric, value in report.corpus.items():
                result.split_score_add(
                    (*variant, split, metric),
                    float(value),
                    report.replicates.get(metric),
                    len(ids),
                    report.signature_of(metric),
                )
    return result


def unit_label(unit: ScoringUnit) -> str:
    return f"language {unit.language.code}"


def unit_store(submission: Submission, unit: ScoringUnit, result: UnitResult, seconds: float) -> None:
    """Replace the language's scores with ``result`` (submission and unit rows locked by the engine)."""
    SubmissionScore.objects.filter(submission=submission, language_id=unit.language_id).delete()
    ImageScores.objects.filter(submission=submission, language_id=unit.language_id).delete()
    language = {"submission": submission, "language_id": unit.language_id}
    SubmissionScore.objects.bulk_create([SubmissionScore(**language, **row) for row in result.scores])
    ImageScores.objects.bulk_create([ImageScores(**language, **row) for row in result.image_scores])
    timings_add(submission, "scoring_seconds", seconds)
    signatures = dict(submission.signatures or {})
    signatures[unit.language.code] = {
        **result.signatures,
        **{f"{m} not computed": r for m, r in result.not_computed.items()},
    }
    submission.signatures = signatures
