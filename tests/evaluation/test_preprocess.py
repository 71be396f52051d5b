"""Preprocessing: normalisation and interning (no database); the tokenisation schemes are in test_schemes."""

import random
import unicodedata
from collections import Counter

import numpy as np
import pytest

from evaluation.metrics.text.preprocess import TokenCorpus, _count_ngrams, normalise


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A dog, sitting on a bench.", "a dog sitting on a bench"),
        ("一只狗，坐在长椅上。", "一只狗 坐在长椅上"),
        ("كلب، يجلس على مقعد؟", "كلب يجلس على مقعد"),
        ("¿Un perro? ¡Sí!", "un perro sí"),
        ("“Quoted” ‘words’ «guillemets» „low“", "quoted words guillemets low"),
        ("犬が「ベンチ」に座っている、", "犬が ベンチ に座っている"),
        ("black-and-white photo (old)", "black and white photo old"),
        ("l'homme", "l homme"),
        ("Ein Hund…", "ein hund"),
    ],
)
def test_normalise_removes_unicode_punctuation(text, expected):
    assert normalise(text) == expected


def test_normalise_keeps_symbols_and_combining_marks():
    assert normalise("A $5 bill + 3° 😀") == "a $5 bill + 3° 😀"
    assert normalise("किताब पढ़ रहा है") == "किताब पढ़ रहा है"


def test_normalise_composes_decomposed_accents():
    decomposed = "Cafe\u0301"
    assert unicodedata.is_normalized("NFD", decomposed)
    assert normalise(decomposed) == "café" == normalise("Café")
    assert normalise("İstanbul") == unicodedata.normalize("NFC", "i̇stanbul")


def test_normalise_lowercases_other_scripts_and_collapses_any_whitespace():
    assert normalise("  СОБАКА\u3000Σκύλος\u00a0\tDOG \n") == "собака σκύλος dog"


def test_normalise_uses_lower_not_casefold():
    assert normalise("Straße") == "straße"


def test_normalise_can_keep_the_case():
    assert normalise("Ein Hund, im PARK.", lowercase=False) == "Ein Hund im PARK"


def test_token_corpus_counts_ngrams_per_sentence():
    corpus = TokenCorpus.build({"x": ["a", "a", "b"]}, {"x": [["a", "b"], ["b"]]})
    counts = corpus.ngrams(2)
    vocab = corpus.vocabulary
    rows = {
        (int(s), int(o), int(c))
        for s, o, c, g in zip(counts.sentence, counts.order, counts.count, counts.gram)
        if o == 0 and g == vocab["a"]
    }
    assert rows == {(0, 0, 2), (1, 0, 1)}  # "a" twice in the candidate, once in reference 1
    assert counts.is_candidate.sum() == 4  # candidate rows: a, b, "a a", "a b"
    assert np.array_equal(corpus.lengths, [3, 2, 1])
    assert np.array_equal(corpus.ref_image, [0, 0])


def test_token_corpus_from_ids_drops_unused_vocabulary_and_counts_like_build():
    built = TokenCorpus.build(
        {"x": ["a", "a", "b"], "y": ["c"]}, {"x": [["a", "b"], ["b"]], "y": [["c", "a"]]}
    )
    # "unused" (id 1) appears in no sentence: it must go, and the ids after it move down.
    vocabulary = {"a": 0, "unused": 1, "b": 2, "c": 3}
    tokens = np.array([0, 0, 2, 3, 0, 2, 2, 3, 0])
    starts = np.array([0, 3, 4, 6, 7, 9])
    corpus = TokenCorpus.from_ids(["x", "y"], tokens, starts, np.array([0, 2, 3]), vocabulary)
    assert corpus.vocabulary == {"a": 0, "b": 1, "c": 2}
    assert corpus.tokens.tolist() == [0, 0, 1, 2, 0, 1, 1, 2, 0]
    assert corpus.keys == ("x", "y")
    assert np.array_equal(corpus.ref_image, [0, 0, 1])
    ours, theirs = corpus.ngrams(3), built.ngrams(3)
    words, built_words = list(corpus.vocabulary), list(built.vocabulary)
    assert [words[t] for t in corpus.tokens.tolist()] == [built_words[t] for t in built.tokens.tolist()]
    assert sorted(zip(ours.sentence.tolist(), ours.order.tolist(), ours.count.tolist())) == sorted(
        zip(theirs.sentence.tolist(), theirs.order.tolist(), theirs.count.tolist())
    )


def test_token_corpus_validates_input():
    with pytest.raises(ValueError, match="no candidate captions"):
        TokenCorpus.build({}, {})
    with pytest.raises(ValueError, match=r"2 candidate\(s\) have no reference caption: 'b', 'c'"):
        TokenCorpus.build({"a": ["x"], "b": ["y"], "c": ["z"]}, {"a": [["x"]], "c": []})
    with pytest.raises(TypeError, match="string, expected a list of tokens"):
        TokenCorpus.build({"a": "a dog"}, {"a": [["a", "dog"]]})


def naive_ngram_rows(corpus, n):
    """(sentence, gram id, order, count) with ids numbered as documented: orders in turn, and within
    an order the distinct n-grams in lexicographic order of their token ids."""
    lengths = corpus.lengths.tolist()
    tokens = corpus.tokens.tolist()
    sentences = [tokens[start : start + length] for start, length in zip(corpus.starts.tolist(), lengths)]
    per_sentence = [
        Counter(tuple(words[i : i + k]) for k in range(1, n + 1) for i in range(len(words) - k + 1))
        for words in sentences
    ]
    ids, offset = {}, 0
    for k in range(1, n + 1):
        distinct = sorted({gram for counts in per_sentence for gram in counts if len(gram) == k})
        ids.update({gram: offset + rank for rank, gram in enumerate(distinct)})
        offset += len(distinct)
    rows = {(s, ids[g], len(g) - 1, c) for s, counts in enumerate(per_sentence) for g, c in counts.items()}
    return rows, offset


@pytest.mark.parametrize("vocab_size", [None, 2**17, 2**45])  # radix sort, packed sort, argsort fallback
def test_ngram_counting_agrees_with_a_naive_count(vocab_size):
    rng = random.Random(5)
    candidates = {i: [f"w{rng.randint(0, 9)}" for _ in range(rng.randint(0, 12))] for i in range(40)}
    references = {
        i: [[f"w{rng.randint(0, 9)}" for _ in range(rng.randint(0, 12))] for _ in range(2)] for i in range(40)
    }
    corpus = TokenCorpus.build(candidates, references)
    rows = _count_ngrams(corpus.tokens, corpus.starts, vocab_size or len(corpus.vocabulary), 4)
    expected, n_grams = naive_ngram_rows(corpus, 4)
    assert set(zip(*(column.tolist() for column in rows[:4]))) == expected
    assert len(rows.sentence) == len(expected) and rows.n_grams == n_grams
    keys = rows.gram * corpus.n_sentences + rows.sentence
    assert np.all(np.diff(keys) > 0)  # sorted by (gram, sentence), as NgramCounts promises


def test_ngram_rows_come_image_by_image_with_the_candidate_first():
    # What CIDEr and BLEU rely on: the rows of one n-gram and one image are neighbours, the
    # candidate's first, and the groups give the document frequencies and the candidate matches.
    rng = random.Random(11)
    candidates = {f"img{i}": [f"w{rng.randint(0, 5)}" for _ in range(rng.randint(0, 8))] for i in range(60)}
    references = {
        key: [[f"w{rng.randint(0, 5)}" for _ in range(rng.randint(0, 8))] for _ in range(rng.randint(1, 3))]
        for key in candidates
    }
    corpus = TokenCorpus.build(candidates, references)
    counts = corpus.ngrams(3)
    sentence, gram = counts.sentence.tolist(), counts.gram.tolist()
    image = corpus.image_of[counts.sentence].tolist()
    # Sorted by (gram, image, candidate first, references in order): the candidate is sentence
    # ``image`` and the references come after all candidates.
    assert list(zip(gram, image, sentence)) == sorted(zip(gram, image, sentence))
    changes = [
        row
        for row in range(len(gram))
        if row == 0 or (gram[row], image[row]) != (gram[row - 1], image[row - 1])
    ]
    assert counts.group_starts.tolist() == [*changes, len(gram)]

    n_images = corpus.n_images
    reference_images: dict[int, set[int]] = {}
    for g, i, s in zip(gram, image, sentence):
        if s >= n_images:
            reference_images.setdefault(g, set()).add(i)
    frequency = counts.document_frequency().tolist()
    assert frequency == [len(reference_images.get(g, ())) for g in range(counts.n_grams)]

    matches = counts.matches
    expected = {
        row: [
            other
            for other in range(len(gram))
            if other != row and (gram[other], image[other]) == (gram[row], image[row])
        ]
        for row in range(len(gram))
        if sentence[row] < n_images and image[row] in reference_images.get(gram[row], ())
    }
    assert matches.candidate_rows.tolist() == sorted(expected)
    assert matches.n_references.tolist() == [len(expected[row]) for row in sorted(expected)]
    assert matches.reference_rows.tolist() == [other for row in sorted(expected) for other in expected[row]]


def test_counts_of_a_long_sentence_do_not_wrap():
    # Counts are stored in the smallest type that holds the longest sentence's length.
    corpus = TokenCorpus.build({"x": ["a"] * 300}, {"x": [["a", "a"]]})
    counts = corpus.ngrams(2)
    rows = sorted(zip(counts.sentence.tolist(), counts.order.tolist(), counts.count.tolist()))
    assert rows == [(0, 0, 300), (0, 1, 299), (1, 0, 2), (1, 1, 1)]
