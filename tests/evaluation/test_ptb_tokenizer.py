"""The pure-Python PTB tokenizer against the COCO server's (CoreNLP 3.4.1 through pycocoevalcap 1.2).

Named cases with the tokens written out, then the agreement of 20,000 generated raw captions with the
jar run in one JVM, then end-to-end scores from raw text against pycocoevalcap's whole pipeline.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from evaluation.metrics.text import ptb
from evaluation.metrics.text.scoring import score_ptb_texts, score_tokens
from tests.evaluation import ptb_captions
from tests.evaluation.java_ptb import (
    java_ptb_lines,
    java_ptb_tokens,
    pycocoevalcap_tokens,
)

# The session fixture ``java`` (tests/conftest.py) skips these without java, and fails them under CI.
needs_java = pytest.mark.usefixtures("java")


NAMED_CASES = [
    (
        "A man riding a bike down the street.",
        ["a", "man", "riding", "a", "bike", "down", "the", "street"],
    ),
    ("He can't see it.", ["he", "ca", "n't", "see", "it"]),
    ("They don't, won't; it's fine!", ["they", "do", "n't", "wo", "n't", "it", "'s", "fine"]),
    (
        "We'll see what you'd've done, I'm sure.",
        ["we", "'ll", "see", "what", "you", "'d", "'ve", "done", "i", "'m", "sure"],
    ),
    (
        "The dog's bone, the dogs' bones, James's hat",
        ["the", "dog", "'s", "bone", "the", "dogs", "bones", "james", "'s", "hat"],
    ),
    ("cannot gonna wanna gimme", ["can", "not", "gon", "na", "wan", "na", "gim", "me"]),
    ("'Twas a rock 'n' roll o'clock", ["'t", "was", "a", "rock", "'n'", "roll", "o'clock"]),
    ('He said "hi" and \u201cbye\u201d \u00abciao\u00bb', ["he", "said", "hi", "and", "bye", "ciao"]),
    ("a \u201elow\u201c quote", ["a", "\u201e", "low", "quote"]),
    (
        "a (red) [big] {x} hat",
        ["a", "-lrb-", "red", "-rrb-", "-lsb-", "big", "-rsb-", "-lcb-", "x", "-rcb-", "hat"],
    ),
    ("well-known x - y -- z --- w \u2014 v \u2013 u", ["well-known", "x", "y", "z", "w", "v", "u"]),
    (
        "the U.S. and Mr. Smith at 5 p.m. e.g. dogs, etc.",
        ["the", "u.s.", "and", "mr.", "smith", "at", "5", "p.m.", "e.g.", "dogs", "etc."],
    ),
    ("3.5 1,000 10:30 1/2 -3 +7 12/25/2020", ["3.5", "1,000", "10:30", "1/2", "-3", "+7", "12/25/2020"]),
    ("1 1/2 cups", ["1\u00a01/2", "cups"]),
    ("\u00bd \u00bc \u2153 \u215b", ["1/2", "1/4", "1/3", "\u215b"]),
    ("and/or 24/7 a*b", ["and/or", "24/7", "a", "*", "b"]),
    ("AT&T R&amp;D S&P &amp; more", ["at&t", "r&d", "s&p", "&", "more"]),
    ("wait... so\u2026 . . . end", ["wait", "so", "end"]),
    ("$5 \u00a35 \u20ac5 \u00a55 \u00a2", ["$", "5", "#", "5", "$", "5", "\u00a5", "5", "cents"]),
    ("30\u00b0 7% colour", ["30", "\u00b0", "7", "%", "colour"]),
    (
        "see http://x.org/a.jpg or www.coco.org or me@x.com",
        ["see", "http://x.org/a.jpg", "or", "www.coco.org", "or", "me@x.com"],
    ),
    ("A\t\tdog  \u00a0on\u2003the\u3000mat", ["a", "dog", "on", "the", "mat"]),
    (
        "a dog \U0001f436 with a ball \u26bd \u2764\ufe0f",
        ["a", "dog", "with", "a", "ball", "\u26bd", "\u2764"],
    ),
    (
        "caf\u00e9 cafe\u0301 na\u00efve \u0130stanbul",
        ["caf\u00e9", "cafe\u0301", "na\u00efve", "i\u0307stanbul"],
    ),
    ("soft\u00adhyphen zero\u200bwidth", ["softhyphen", "zero", "width"]),
    (
        "\u041c\u0443\u0436\u0447\u0438\u043d\u0430 \u0435\u0434\u0435\u0442.",
        ["\u043c\u0443\u0436\u0447\u0438\u043d\u0430", "\u0435\u0434\u0435\u0442"],
    ),
    ("\u4e00\u4e2a\u7537\u4eba\u3002", ["\u4e00\u4e2a\u7537\u4eba", "\u3002"]),
    ("\u0c92\u0c82\u0ca6\u0cc1", ["\u0c92", "\u0ca6"]),  # Kannada vowel signs are untokenizable in 3.4.1
    (":) ;-) ^_^", [":-rrb-", ";--rrb-", "^_^"]),
    ("", []),
    ("  \t ", []),
    ("... ?!", ["?!"]),  # a run of ? and ! is one token, and not in pycocoevalcap's list
]


@pytest.mark.parametrize(("text", "tokens"), NAMED_CASES)
def test_named_cases(text, tokens):
    assert ptb.tokenize(text) == tokens


@needs_java
def test_named_cases_are_what_the_jar_gives():
    # Each case followed by a neutral caption, as tokenize() assumes.
    texts = [text for case in NAMED_CASES for text in (case[0], "x")]
    reference = pycocoevalcap_tokens(texts)
    assert reference[::2] == [tokens for _, tokens in NAMED_CASES]


def test_cased_tokens_keep_case_and_drop_upper_case_brackets():
    assert ptb.tokenize("The U.S. (and) [UK] Can't", lowercase=False) == [
        "The",
        "U.S.",
        "and",
        "-LSB-",
        "UK",
        "-RSB-",
        "Ca",
        "n't",
    ]


def test_context_of_the_next_caption():
    # A single letter with a dot loses its dot before a sentence starter of the next caption...
    assert ptb.tokenize_many(["vitamin C.", "The end"]) == [["vitamin", "c"], ["the", "end"]]
    assert ptb.tokenize_many(["vitamin C.", "two dogs"]) == [["vitamin", "c."], ["two", "dogs"]]
    assert ptb.tokenize("vitamin C.") == ["vitamin", "c."]
    # ... and a final smiley needs a character after it, which the last caption lacks.
    assert ptb.tokenize_many(["nice :)", "nice :)"]) == [["nice", ":-rrb-"], ["nice", "-rrb-"]]


def test_other_line_breaks_are_spaces_and_newlines_are_spaces():
    assert ptb.tokenize("a dog\ron a\u2028mat\nnow") == ["a", "dog", "on", "a", "mat", "now"]


def test_rejects_non_strings():
    with pytest.raises(TypeError, match="caption must be a string, not int"):
        ptb.tokenize(5)


def test_version_names_the_corenlp_release():
    assert ptb.VERSION.startswith("corenlp-3.4.1/")


@pytest.fixture(scope="module")
def generated():
    return ptb_captions.captions(20_000, seed=0)


@needs_java
def test_agreement_with_the_jar_on_20000_generated_captions(generated):
    assert len(set(generated)) > 15_000
    reference = pycocoevalcap_tokens(generated)
    assert ptb.tokenize_many(generated) == reference
    # tokenize() alone sees a neutral next caption: it differs exactly where the next caption starts
    # with one of the lexer's sentence starters after a single letter with a dot (module notes, (1)).
    single = [ptb.tokenize(text) for text in generated]
    differing = [index for index, tokens in enumerate(single) if tokens != reference[index]]
    assert differing == [4442, 10861]
    for index in differing:
        assert generated[index].rstrip()[-2:-1].isalpha() and generated[index].rstrip().endswith(".")
        assert generated[index + 1].split()[0] in {"A", "The", "An"}
        assert single[index][:-1] == reference[index][:-1]
        assert single[index][-1] == reference[index][-1] + "."


@needs_java
def test_agreement_without_lowercasing(generated):
    sample = generated[:8_000]
    assert ptb.tokenize_many(sample, lowercase=False) == java_ptb_tokens(sample, lowercase=False)


def _pycocoevalcap_scores(gts, res):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    _, bleu = Bleu(4).compute_score(gts, res, verbose=0)
    _, rouge = Rouge().compute_score(gts, res)
    _, cider = Cider().compute_score(gts, res)
    return {**{f"BLEU-{k + 1}": bleu[k] for k in range(4)}, "ROUGE-L": rouge, "CIDEr-D": cider}


@needs_java
def test_end_to_end_scores_from_raw_text_equal_pycocoevalcap():
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    candidates, references = ptb_captions.images(1_000, references=5, seed=1, plain=0.3)
    keys = list(candidates)
    gts = PTBTokenizer().tokenize({key: [{"caption": text} for text in references[key]] for key in keys})
    res = PTBTokenizer().tokenize({key: [{"caption": candidates[key]}] for key in keys})
    theirs = _pycocoevalcap_scores(gts, res)

    texts = [candidates[key] for key in keys] + [text for key in keys for text in references[key]]
    tokens = iter(ptb.tokenize_many(texts))
    our_candidates = {key: next(tokens) for key in keys}
    our_references = {key: [next(tokens) for _ in references[key]] for key in keys}
    report = score_tokens(our_candidates, our_references, metrics=list(theirs))
    for name, per_caption in theirs.items():
        ours = report.per_caption[name]
        assert max(abs(ours[key] - float(value)) for key, value in zip(keys, per_caption)) <= 1e-6, name


@needs_java
def test_score_ptb_texts_equals_pycocoevalcap_from_raw_text():
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    candidates, references = ptb_captions.images(1_000, references=5, seed=2, plain=0.3)
    keys = list(candidates)
    gts = PTBTokenizer().tokenize({key: [{"caption": text} for text in references[key]] for key in keys})
    res = PTBTokenizer().tokenize({key: [{"caption": candidates[key]}] for key in keys})
    theirs = _pycocoevalcap_scores(gts, res)
    ptb.clear_cache()
    report = score_ptb_texts(candidates, references, metrics=list(theirs))
    assert report.scheme == "coco-ptb"
    assert report.n_references == 5_000
    for name, per_caption in theirs.items():
        ours = report.per_caption[name]
        assert max(abs(ours[key] - float(value)) for key, value in zip(keys, per_caption)) <= 1e-9, name


def test_unsafe_lines_are_the_lines_where_the_expression_matches(generated):
    # The byte scan must find every line the expression matches, non-ASCII digits included.
    edge = ["  leading spaces 3 4", "a ) 5 b", "x . . y", "<b>", "\u0663 \u0664 arabic digits", "caf\u00e9 3"]
    edge += ["tab\t7\t8", "trailing 5   ", "", "\u0e51  \u0e52", "1.5 . 2", "no match here", "9"]
    for lines in (generated[:5_000] + edge, edge, ["  3 4"], ["plain"], ["3", " 4"]):
        text = " \n ".join(lines).replace("\t", " ")
        expected = sorted({text.count("\n", 0, match.start()) for match in ptb._UNSAFE.finditer(text)})
        assert _unsafe_lines(lines) == expected
    assert _unsafe_lines(edge) == [0, 1, 2, 3, 4, 6, 9]


def _unsafe_lines(lines):
    _, chunks = ptb._split_file(lines)
    return ptb._unsafe_lines(chunks, np.flatnonzero(chunks.codes == chunks.code_of("\n")))


def _as_lists(ids, starts, vocabulary):
    words = list(vocabulary)
    return [[words[i] for i in ids[a:b].tolist()] for a, b in zip(starts[:-1], starts[1:])]


@needs_java
@pytest.mark.parametrize("lowercase", [True, False])
def test_tokenize_many_ids_gives_the_jars_tokens(generated, lowercase):
    # Lines scanned whole (a rule crosses a space), chunks read in context (abbreviations before a
    # sentence starter), the last line, doubled spaces, tabs and empty captions.
    edge = ["vitamin C.", "The end", "nice :)", "fig. 3 and 1 1/2 dogs", "x ... . y", "", "  3 4"]
    edge += ["two  spaced\twords", "<b> tag </b>", "Mr. Smith", "caf\u00e9 \u0663 \u0664", "nice :)"]
    texts = generated[:3_000] + edge + generated[3_000:4_000] + edge
    ptb.clear_cache()
    vocabulary = {"already": 0}
    ids, starts = ptb.tokenize_many_ids(texts, vocabulary, lowercase=lowercase)
    assert vocabulary["already"] == 0
    expected = pycocoevalcap_tokens(texts) if lowercase else java_ptb_tokens(texts, lowercase=False)
    assert _as_lists(ids, starts, vocabulary) == expected
    # A warm cache gives the same ids for the same vocabulary.
    again, again_starts = ptb.tokenize_many_ids(texts, vocabulary, lowercase=lowercase)
    assert again.tolist() == ids.tolist() and again_starts.tolist() == starts.tolist()
    empty, empty_starts = ptb.tokenize_many_ids([], vocabulary)
    assert len(empty) == 0 and empty_starts.tolist() == [0]


def test_tokenize_many_reads_other_line_breaks_as_spaces_and_rejects_non_strings():
    # The jar would shift every later caption here (module notes): each caption keeps its own tokens.
    assert ptb.tokenize_many(["a dog\ron a\u2028mat\nnow", "x\u0085y", "the end"]) == [
        ["a", "dog", "on", "a", "mat", "now"],
        ["x", "y"],
        ["the", "end"],
    ]
    with pytest.raises(TypeError, match="caption must be a string, not int"):
        ptb.tokenize_many(["a dog", 5])


def test_coco_fakecap_raw_candidates_give_the_server_bleu(shared_data):
    results = shared_data / "coco-fakecap" / "captions_val2014_fakecap_results.json"
    annotations = shared_data / "coco-fakecap" / "captions_val2014_fakecap_subset_refs_tokenized.json"
    raw = json.loads(results.read_text())
    tokens = ptb.tokenize_many([item["caption"] for item in raw])
    candidates = {item["image_id"]: caption_tokens for item, caption_tokens in zip(raw, tokens)}
    references: dict[int, list[list[str]]] = defaultdict(list)
    for annotation in json.loads(annotations.read_text())["annotations"]:
        references[annotation["image_id"]].append(annotation["caption"].split(" "))
    report = score_tokens(candidates, dict(references))
    assert round(report.corpus["BLEU-1"], 4) == 0.5794
    assert round(report.corpus["BLEU-4"], 3) == 0.191
    assert round(report.corpus["CIDEr-D"], 3) == 0.600


@needs_java
def test_every_character_of_the_basic_multilingual_plane_as_the_jar_reads_it():
    # Which characters are letters, digits, symbols, spaces or untokenizable (deleted) to the 3.4.1
    # scanner: each one inside a word and alone, raw tokens (cased, punctuation kept).
    line_breaks = set("\n\r\u000b\u000c\u0085\u2028\u2029")
    characters = [
        chr(cp) for cp in range(1, 0x10000) if not 0xD800 <= cp <= 0xDFFF and chr(cp) not in line_breaks
    ]
    lines = [line for char in characters for line in (f"x{char}x", char)]
    reference = java_ptb_lines(lines, lowercase=False)
    ours = [ptb.ptb_tokens(line, "\n.") for line in lines[:-1]] + [ptb.ptb_tokens(lines[-1])]
    differing = [
        (lines[index], reference[index], ours[index])
        for index in range(len(lines))
        if reference[index] != ours[index]
    ]
    assert differing == []
