"""CIDEr / CIDEr-D with document frequencies from a named reference corpus (vrama91/cider's df file mode)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
import pytest

from evaluation.metrics.text.cider import DF_FROM_TEST, cider, cider_d, document_frequency
from evaluation.metrics.text.scoring import score_texts, score_tokens


def test_df_from_the_scored_set_itself_changes_nothing(coco):
    candidates, references = coco
    default = score_tokens(candidates, references, metrics=["CIDEr", "CIDEr-D"])
    named = score_tokens(
        candidates, references, metrics=["CIDEr", "CIDEr-D"], df_references=references, df_name="refset:coco"
    )
    assert default.df_source == DF_FROM_TEST == "test"
    assert named.df_source == "refset:coco"
    assert named.per_caption == default.per_caption  # bit for bit
    assert named.corpus == default.corpus


def test_a_single_image_gets_a_stable_nonzero_cider_from_the_whole_set(coco):
    candidates, references = coco
    key = next(iter(candidates))
    alone = score_tokens({key: candidates[key]}, references, metrics=["CIDEr", "CIDEr-D"])
    # One image, its own df: every n-gram of its references has idf log(1) - log(1) = 0.
    assert alone.corpus == {"CIDEr": 0.0, "CIDEr-D": 0.0}

    df = document_frequency(references, name="refset:coco")
    single = cider_d({key: candidates[key]}, references, df=df).score
    assert single > 0
    # Stable: the image scores what it scores inside the whole set (df from the same images).
    whole = score_tokens(candidates, references, metrics=["CIDEr-D", "CIDEr"])
    assert single == pytest.approx(whole.per_caption["CIDEr-D"][key], abs=1e-12)
    assert cider({key: candidates[key]}, references, df=df).score == pytest.approx(
        whole.per_caption["CIDEr"][key], abs=1e-12
    )


def test_single_image_equals_pycocoevalcap_cider_scorer_given_the_same_df(coco):
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    counts = document_frequency(coco[1], name="refset:coco")

    class PrecomputedDf(CiderScorer):
        """pycocoevalcap 1.2 with vrama91/cider's df-file mode: compute_cider sets ``ref_len`` to
        log(len(crefs)) itself, so the corpus's log(number of images) is pinned here instead."""

        ref_len = property(lambda self: np.log(float(counts.n_documents)), lambda self, value: None)

    candidates, references = coco
    keys = list(candidates)[:3]
    scorer = PrecomputedDf(n=4, sigma=6.0)
    for key in keys:
        scorer += (" ".join(candidates[key]), [" ".join(ref) for ref in references[key]])
    scorer.document_frequency = defaultdict(float, {gram: float(n) for gram, n in counts.counts.items()})
    expected = scorer.compute_cider()

    ours = cider_d({key: candidates[key] for key in keys}, references, df=counts)
    assert list(ours.per_caption.values()) == pytest.approx(list(expected), abs=1e-12)
    assert all(score > 0 for score in expected)


def test_cider_with_an_external_df_against_a_straightforward_computation():
    references = {
        "a": [["a", "dog", "on", "the", "beach"], ["a", "dog", "running"]],
        "b": [["a", "cat", "on", "a", "sofa"]],
        "c": [["two", "dogs", "on", "the", "grass"]],
    }
    candidate = {"a": ["a", "dog", "on", "the", "grass"]}
    df = document_frequency(references, name="file:abc")

    def vector(tokens, k):
        grams = Counter(tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1))
        return {g: c * (math.log(3) - math.log(max(1.0, df.counts.get(g, 0)))) for g, c in grams.items()}

    sims = []
    for k in range(1, 5):
        hyp = vector(candidate["a"], k)
        total = 0.0
        for ref in references["a"]:
            r = vector(ref, k)
            norm = math.sqrt(sum(v * v for v in hyp.values())) * math.sqrt(sum(v * v for v in r.values()))
            dot = sum(hyp[g] * r.get(g, 0.0) for g in hyp)
            total += dot / norm if norm else 0.0
        sims.append(total / len(references["a"]))
    expected = 10.0 * sum(sims) / 4
    assert cider(candidate, references, df=df).score == pytest.approx(expected, abs=1e-12)
    assert df.n_documents == 3
    assert df.counts[("a", "dog")] == 1  # two references of image a, one document
    assert df.counts[("on",)] == 3


def test_df_from_raw_captions_is_tokenised_like_the_scored_ones():
    candidates = {1: "Ein Hund läuft am Strand."}
    references = {1: ["Ein Hund rennt am Strand!"]}
    corpus = {1: ["Ein Hund rennt am Strand!"], 2: ["Eine Katze auf dem Sofa."], 3: ["Ein Hund im Park."]}
    report = score_texts(candidates, references, metrics=["CIDEr"], df_references=corpus, df_name="refset:de")
    tokens = score_tokens(
        {1: ["ein", "hund", "läuft", "am", "strand"]},
        {1: [["ein", "hund", "rennt", "am", "strand"]]},
        metrics=["CIDEr"],
        df_references={
            1: [["ein", "hund", "rennt", "am", "strand"]],
            2: [["eine", "katze", "auf", "dem", "sofa"]],
            3: [["ein", "hund", "im", "park"]],
        },
        df_name="refset:de",
    )
    assert report.corpus["CIDEr"] == tokens.corpus["CIDEr"] > 0


def test_a_df_corpus_needs_a_name_and_images():
    with pytest.raises(ValueError, match="name the df corpus"):
        score_tokens({1: ["a"]}, {1: [["a"]]}, df_references={1: [["a"]]})
    with pytest.raises(ValueError, match="has no images"):
        document_frequency({}, name="file:empty")
    with pytest.raises(ValueError, match="names the evaluated set"):
        document_frequency({1: [["a"]]}, name="test")
