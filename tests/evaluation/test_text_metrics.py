"""BLEU, ROUGE-L, CIDEr, CIDEr-D: published COCO figures, the reference code, hand-worked cases."""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict

import numpy as np
import pytest

from evaluation.metrics.text.bleu import bleu
from evaluation.metrics.text.cider import cider, cider_d
from evaluation.metrics.text.rouge import lcs_length, rouge_l
from evaluation.metrics.text.scoring import METRICS, score_texts, score_tokens
from tests.prerequisites import SHARED_DATA, shared_data_folder

COCO = SHARED_DATA / "coco-fakecap"


@pytest.fixture(scope="module")
def coco():
    """coco-fakecap as the server tokenised it: candidates and PTB references split on spaces."""
    results = COCO / "captions_val2014_fakecap_results.json"
    references = COCO / "captions_val2014_fakecap_subset_refs_tokenized.json"
    shared_data_folder(COCO)  # skipped when missing, failed under CI
    candidates = {item["image_id"]: item["caption"].split(" ") for item in json.loads(results.read_text())}
    refs: dict[int, list[list[str]]] = defaultdict(list)
    for annotation in json.loads(references.read_text())["annotations"]:
        refs[annotation["image_id"]].append(annotation["caption"].split(" "))
    return candidates, dict(refs)


def words(text: str) -> list[str]:
    return text.split(" ")


def as_strings(candidates, references):
    """The reference code's input: {id: [caption string]} and {id: [reference strings]}."""
    res = {key: [" ".join(tokens)] for key, tokens in candidates.items()}
    gts = {key: [" ".join(tokens) for tokens in references[key]] for key in candidates}
    return gts, res


# --------------------------------------------------------------------------------------------------
# The COCO evaluation server's published figures (shared/data/README.md).


def test_coco_fakecap_reproduces_published_corpus_scores(coco):
    report = score_tokens(*coco)
    rounded = {name: round(score, 3) for name, score in report.corpus.items()}
    assert rounded["BLEU-1"] == 0.579
    assert rounded["BLEU-2"] == 0.404
    assert rounded["BLEU-3"] == 0.279
    assert rounded["BLEU-4"] == 0.191
    assert rounded["ROUGE-L"] == 0.396
    assert rounded["CIDEr-D"] == 0.600  # IDF from the references of these 1,000 images


def test_coco_fakecap_bleu_statistics(coco):
    stats = score_tokens(*coco, metrics=["BLEU-4"]).bleu_stats
    assert stats.reflen == 9855
    assert stats.testlen == 9893
    assert stats.correct == (5732, 2510, 1043, 423)
    assert stats.guess == (9893, 8893, 7893, 6893)


# --------------------------------------------------------------------------------------------------
# Per caption against the reference code.


def test_bleu_per_caption_equals_pycocoevalcap(coco):
    reference = pytest.importorskip("pycocoevalcap.bleu.bleu")
    gts, res = as_strings(*coco)
    ref_scores, ref_each = reference.Bleu(4).compute_score(gts, res, verbose=0)
    ours = bleu(*coco)
    assert ours.scores == pytest.approx(ref_scores, abs=1e-12)
    for k in range(4):
        assert list(ours.per_caption[k]) == list(gts)
        assert np.allclose(list(ours.per_caption[k].values()), ref_each[k], rtol=0, atol=1e-9)


def test_rouge_l_per_caption_equals_pycocoevalcap(coco):
    reference = pytest.importorskip("pycocoevalcap.rouge.rouge")
    gts, res = as_strings(*coco)
    ref_score, ref_each = reference.Rouge().compute_score(gts, res)
    ours = rouge_l(*coco)
    assert ours.score == pytest.approx(ref_score, abs=1e-12)
    assert np.allclose(list(ours.per_caption.values()), ref_each, rtol=0, atol=1e-9)


def test_cider_d_per_caption_equals_pycocoevalcap(coco):
    # pycocoevalcap's class is named Cider but computes CIDEr-D (clipping, Gaussian penalty, x10),
    # the same code as vrama91/cider's ciderD_scorer.py.
    reference = pytest.importorskip("pycocoevalcap.cider.cider")
    gts, res = as_strings(*coco)
    ref_score, ref_each = reference.Cider().compute_score(gts, res)
    ours = cider_d(*coco)
    assert ours.score == pytest.approx(ref_score, abs=1e-12)
    assert np.allclose(list(ours.per_caption.values()), ref_each, rtol=0, atol=1e-9)


def test_cider_per_caption_equals_vrama91_port(coco):
    # Plain CIDEr (vrama91/cider cider_scorer.py) is Python 2 code and not on PyPI, so nothing
    # installable to compare with: compare with a line-by-line Python 3 transcription instead.
    gts, res = as_strings(*coco)
    ref_score, ref_each = vrama91_cider(gts, res)
    ours = cider(*coco)
    assert ours.score == pytest.approx(ref_score, abs=1e-12)
    assert np.allclose(list(ours.per_caption.values()), ref_each, rtol=0, atol=1e-9)


def vrama91_cider(gts, res, n=4):
    """pyciderevalcap/cider/cider_scorer.py (df_mode "corpus"), transcribed to Python 3."""

    def precook(sentence):
        words = sentence.split()
        counts = defaultdict(int)
        for k in range(1, n + 1):
            for i in range(len(words) - k + 1):
                counts[tuple(words[i : i + k])] += 1
        return counts

    crefs = [[precook(ref) for ref in gts[key]] for key in res]
    ctest = [precook(res[key][0]) for key in res]
    document_frequency = defaultdict(float)
    for refs in crefs:
        for ngram in {ngram for ref in refs for ngram in ref}:
            document_frequency[ngram] += 1
    ref_len = np.log(float(len(crefs)))

    def counts2vec(cnts):
        vec = [defaultdict(float) for _ in range(n)]
        norm = [0.0] * n
        for ngram, term_freq in cnts.items():
            df = np.log(max(1.0, document_frequency[ngram]))
            order = len(ngram) - 1
            vec[order][ngram] = float(term_freq) * (ref_len - df)
            norm[order] += pow(vec[order][ngram], 2)
        return vec, [np.sqrt(value) for value in norm]

    def sim(vec_hyp, vec_ref, norm_hyp, norm_ref):
        val = np.array([0.0] * n)
        for order in range(n):
            for ngram in vec_hyp[order]:
                val[order] += vec_hyp[order][ngram] * vec_ref[order][ngram]
            if norm_hyp[order] != 0 and norm_ref[order] != 0:
                val[order] /= norm_hyp[order] * norm_ref[order]
        return val

    scores = []
    for test, refs in zip(ctest, crefs):
        vec, norm = counts2vec(test)
        score = np.array([0.0] * n)
        for ref in refs:
            vec_ref, norm_ref = counts2vec(ref)
            score += sim(vec, vec_ref, norm, norm_ref)
        scores.append(np.mean(score) / len(refs) * 10.0)
    return np.mean(np.array(scores)), np.array(scores)


EDGE_CASES = {
    "empty candidate": ([], [["a", "dog"], ["a", "cat"]]),
    "empty candidate and reference": ([], [[], ["a", "cat"]]),
    "repeated tokens": (["a", "a", "a", "dog", "dog"], [["a", "dog", "a"], ["dog"]]),
    "one token": (["dog"], [["a", "dog"], ["dog"]]),
    "long candidate": ([f"w{i % 23}" for i in range(150)], [[f"w{i % 7}" for i in range(40)], ["w3", "w1"]]),
    "long reference": (["w1", "w2", "w3"], [[f"w{i % 5}" for i in range(200)]]),
    "exact": (["a", "red", "bus"], [["a", "red", "bus"], ["a", "bus"]]),
}


def test_edge_cases_equal_pycocoevalcap():
    pytest.importorskip("pycocoevalcap")
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    rng = random.Random(7)
    candidates = {name: case[0] for name, case in EDGE_CASES.items()}
    references = {name: case[1] for name, case in EDGE_CASES.items()}
    for index in range(60):  # random short and long captions over a tiny vocabulary
        words = [f"t{rng.randint(0, 6)}" for _ in range(rng.choice([3, 8, 30, 70, 90]))]
        candidates[index] = words
        references[index] = [[f"t{rng.randint(0, 6)}" for _ in range(rng.randint(1, 80))] for _ in range(3)]
    gts, res = as_strings(candidates, references)
    keys = list(candidates)

    _, bleu_each = Bleu(4).compute_score(gts, res, verbose=0)
    ours = bleu(candidates, references)
    for k in range(4):
        assert np.allclose([ours.per_caption[k][key] for key in keys], bleu_each[k], rtol=0, atol=1e-9)
    _, rouge_each = Rouge().compute_score(gts, res)
    assert np.allclose(
        list(rouge_l(candidates, references).per_caption.values()), rouge_each, rtol=0, atol=1e-9
    )
    _, cider_each = Cider().compute_score(gts, res)
    assert np.allclose(
        list(cider_d(candidates, references).per_caption.values()), cider_each, rtol=0, atol=1e-9
    )


# --------------------------------------------------------------------------------------------------
# Hand-worked examples.


def test_rouge_l_equal_precision_and_recall():
    result = rouge_l({1: words("the cat sat on the mat")}, {1: [words("the cat is on the mat")]})
    assert result.per_caption[1] == pytest.approx(5 / 6)  # LCS "the cat on the mat"; P = R = 5/6


def test_rouge_l_weights_recall_with_beta_1_2():
    result = rouge_l({1: ["a", "b", "c", "d"]}, {1: [["a", "c", "e"]]})
    precision, recall = 2 / 4, 2 / 3  # LCS "a c"
    expected = (1 + 1.44) * precision * recall / (recall + 1.44 * precision)
    assert result.per_caption[1] == pytest.approx(expected)
    assert result.per_caption[1] == pytest.approx(0.58654, abs=1e-5)


def test_rouge_l_takes_best_precision_and_best_recall_separately():
    # Reference 1 gives P = 2/2, R = 2/4; reference 2 gives P = 1/2, R = 1/1.
    result = rouge_l({1: ["a", "b"]}, {1: [["a", "x", "b", "y"], ["a"]]})
    assert result.per_caption[1] == pytest.approx(2.44 * 1 * 1 / (1 + 1.44 * 1))  # = 1.0
    assert rouge_l({1: ["x"]}, {1: [["a"]]}).per_caption[1] == 0.0


def test_lcs_length_matches_dynamic_programming():
    def dp(a, b):
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                same = a[i - 1] == b[j - 1]
                table[i][j] = table[i - 1][j - 1] + 1 if same else max(table[i - 1][j], table[i][j - 1])
        return table[-1][-1]

    rng = random.Random(3)
    for _ in range(200):
        a = [rng.randint(0, 5) for _ in range(rng.randint(0, 130))]
        b = [rng.randint(0, 5) for _ in range(rng.randint(0, 130))]
        assert lcs_length(a, b) == dp(a, b)


def test_bleu_brevity_penalty():
    result = bleu({1: ["a", "b", "c"]}, {1: [["a", "b", "c", "d", "e", "f"]]})
    # Every 1-, 2- and 3-gram matches; the candidate is half as long: BP = exp(1 - 6/3) = 1/e.
    for k in (1, 2, 3):
        assert result.scores[k - 1] == pytest.approx(math.exp(-1), rel=1e-8)
        assert result.per_caption[k - 1][1] == pytest.approx(math.exp(-1), rel=1e-8)
    # No 4-gram in a 3-token candidate: the reference's (0 + 1e-15) / (0 + 1e-9) keeps it finite.
    assert result.scores[3] == pytest.approx((1e-15 / 1e-9) ** 0.25 * math.exp(-1), rel=1e-6)
    assert result.stats.ratio == pytest.approx(0.5)


def test_bleu_clips_counts_and_takes_the_closest_reference_length():
    result = bleu(
        {1: ["the", "the", "the", "the"]}, {1: [["the", "cat", "sat"], ["a", "the", "dog", "is", "x"]]}
    )
    assert result.stats.correct[0] == 1  # "the" occurs at most once in one reference
    assert result.stats.reflen == 3  # lengths 3 and 5 are equally close to 4: the shorter wins
    assert result.scores[0] == pytest.approx(1 / 4, rel=1e-8)  # no brevity penalty: 4 > 3


def test_bleu_pools_counts_over_the_corpus():
    candidates = {1: ["a", "b"], 2: ["c", "d"]}
    references = {1: [["a", "b"]], 2: [["c", "x"]]}
    result = bleu(candidates, references)
    assert result.stats.correct[:2] == (3, 1)
    assert result.scores[0] == pytest.approx(3 / 4, rel=1e-8)
    assert result.scores[1] == pytest.approx(math.sqrt(3 / 4 * 1 / 2), rel=1e-8)
    assert result.per_caption[0] == pytest.approx({1: 1.0, 2: 0.5}, rel=1e-8)


def test_cider_two_image_toy_set():
    # IDF over 2 images; every n-gram here occurs in at most one image's references (or none),
    # so every weight is log(2) and the similarities are plain count cosines.
    candidates = {"A": ["a", "b"], "B": ["c", "d"]}
    references = {"A": [["a", "b"]], "B": [["c", "e"]]}
    result = cider(candidates, references)
    # A: unigram and bigram cosines 1, no 3-/4-grams: 10 * (1 + 1 + 0 + 0) / 4.
    # B: unigram cosine 1/2 ("c" shared), bigrams "c d" vs "c e" 0: 10 * (1/2) / 4.
    assert result.per_caption == pytest.approx({"A": 5.0, "B": 1.25})
    assert result.score == pytest.approx(3.125)
    assert cider_d(candidates, references).per_caption == pytest.approx({"A": 5.0, "B": 1.25})


def test_cider_d_gaussian_length_penalty_on_bigram_counts():
    candidates = {"A": ["a", "b"], "B": ["e", "f"]}
    references = {"A": [["a", "b", "c", "d"]], "B": [["e", "g"]]}
    plain = cider(candidates, references).per_caption["A"]
    assert plain == pytest.approx(10 * (1 / math.sqrt(2) + 1 / math.sqrt(3)) / 4)
    # 1 bigram against 3: delta = -2, sigma = 6; no clipping as every count is 1.
    assert cider_d(candidates, references).per_caption["A"] == pytest.approx(plain * math.exp(-4 / 72))


def test_cider_d_clips_repeated_ngrams():
    candidates = {"A": ["a", "a"], "B": ["x", "y"]}
    references = {"A": [["a", "b"]], "B": [["x", "z"]]}
    # Unigram vectors h = (2w, 0), r = (w, w): CIDEr cos = 1/sqrt(2); CIDEr-D min(2w, w) w / (2w sqrt(2) w).
    assert cider(candidates, references).per_caption["A"] == pytest.approx(10 * (1 / math.sqrt(2)) / 4)
    assert cider_d(candidates, references).per_caption["A"] == pytest.approx(
        10 * (1 / (2 * math.sqrt(2))) / 4
    )


# --------------------------------------------------------------------------------------------------
# score_texts / score_tokens.


def test_score_texts_preprocesses_and_reports_every_metric():
    candidates = {"a": "A dog runs on the beach.", "b": "Two cats, sleeping!"}
    references = {
        "a": ["A dog running on the beach", "a brown dog on sand"],
        "b": ["two cats sleeping on a sofa", "Cats asleep."],
        "unused": ["ignored"],
    }
    report = score_texts(candidates, references)
    assert report.metrics == METRICS
    assert list(report.per_caption["ROUGE-L"]) == ["a", "b"]
    assert report.n_images == 2 and report.n_references == 4 and report.scheme == "whitespace"
    tokenised = score_tokens(
        {"a": words("a dog runs on the beach"), "b": words("two cats sleeping")},
        {key: [text.lower().replace(".", "").split() for text in references[key]] for key in ("a", "b")},
    )
    assert report.corpus == pytest.approx(tokenised.corpus)
    rows = dict(report.caption_scores())
    assert rows["b"]["BLEU-1"] == report.per_caption["BLEU-1"]["b"]


def test_score_texts_char_scheme_gives_partial_credit_in_thai_and_chinese():
    thai_candidate = "รถแข่งวินเทจจอดเรียงกันในงาน"
    thai_reference = "รถแข่งวินเทจจอดเรียงกันหลายคันในงานจัดแสดง"
    candidates = {"th": thai_candidate}
    references = {"th": [thai_reference]}
    whole = score_texts(candidates, references, language="th", scheme="whitespace", metrics=["ROUGE-L"])
    chars = score_texts(candidates, references, language="th", metrics=["ROUGE-L"])
    assert whole.corpus["ROUGE-L"] == 0.0  # one token each, and they differ
    assert chars.corpus["ROUGE-L"] > 0.7

    zh = score_texts({1: "一只狗在草地上。"}, {1: ["一只狗在草地上"]}, language="zh", scheme="char")
    assert zh.corpus["ROUGE-L"] == pytest.approx(1.0)
    assert zh.corpus["BLEU-4"] == pytest.approx(1.0)


def test_score_report_keeps_requested_metric_order():
    report = score_tokens({1: ["a"]}, {1: [["a"]]}, metrics=["CIDEr-D", "BLEU-2", "ROUGE-L"])
    assert report.metrics == ("CIDEr-D", "BLEU-2", "ROUGE-L")
    assert report.bleu_stats is not None
    assert score_tokens({1: ["a"]}, {1: [["a"]]}, metrics=["ROUGE-L"]).bleu_stats is None


def test_scoring_validates_input():
    with pytest.raises(ValueError, match="no candidate captions"):
        score_texts({}, {"a": ["x"]})
    with pytest.raises(ValueError, match=r"1 candidate\(s\) have no reference caption: 'img2'"):
        score_texts({"img1": "a dog", "img2": "a cat"}, {"img1": ["a dog"], "img2": []})
    with pytest.raises(ValueError, match=r"have no reference caption: 7"):
        score_tokens({7: ["a"]}, {8: [["a"]]})
    with pytest.raises(ValueError, match="unknown metric"):
        score_tokens({1: ["a"]}, {1: [["a"]]}, metrics=["SPICE"])
    with pytest.raises(ValueError, match="unknown tokenisation scheme 'words'"):
        score_texts({1: "a"}, {1: ["a"]}, scheme="words")
    with pytest.raises(TypeError, match="expected str"):
        score_texts({1: ["a"]}, {1: ["a"]})
    with pytest.raises(TypeError, match="list of captions, not a string"):
        score_texts({1: "a"}, {1: "a"})


def test_captions_without_any_token_score_without_errors():
    # Punctuation-only captions normalise to nothing. ROUGE-L keeps the reference code's quirk:
    # it splits "" into one empty token, so an empty candidate matches an empty reference.
    report = score_texts({1: "...", 2: "¿?"}, {1: ["!!"], 2: ["a dog"]})
    assert report.per_caption["ROUGE-L"] == {1: 1.0, 2: 0.0}
    for name in ("BLEU-1", "BLEU-4", "CIDEr", "CIDEr-D"):
        assert report.per_caption[name] == {1: 0.0, 2: 0.0}
