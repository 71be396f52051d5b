"""Cutting a file into numbered chunks with numpy (evaluation.metrics.text.chunks) against str.split."""

from __future__ import annotations

import random

import numpy as np
import pytest

from evaluation.metrics.text import chunks

# Short and long pieces, NUL, 2-, 3- and 4-byte characters, a lone surrogate, line breaks and tabs.
PIECES = ["a", "b", "\x00", "\u00e9", "\u20ac", "\U0001f600", "\ud800", ".", "ab", "abcdefg", "abcdefgh"]
PIECES += ["\n", "\t", "x" * 8, "y" * 15, "z" * 16, "w" * 17]


def _random_text(rng: random.Random) -> str:
    words = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(0, 80))]
    return " ".join(words)


def _check(text: str) -> chunks.Chunks:
    split = chunks.split_chunks(text.encode("utf-8", "surrogatepass"))
    expected = text.split(" ")
    assert [split[index] for index in range(len(split))] == expected
    # One code per distinct text, and every code used.
    assert len(split.distinct) == len(set(expected))
    code_of = {text: code for code, text in enumerate(split.distinct)}
    assert split.codes.tolist() == [code_of[text] for text in expected]
    return split


def test_chunks_are_the_pieces_between_spaces_each_text_one_code():
    rng = random.Random(0)
    for _ in range(300):
        _check(_random_text(rng))
    for text in ["", " ", "  a  ", "a", "a\x00 a a\x00\x00 \x00", "abcdefgh abcdefgh abcdefghi"]:
        _check(text)
    split = _check("the dog  the\tdog the")
    assert split.distinct[split.codes[0]] == "the" and split.codes[0] == split.codes[4]
    padded = chunks.split_chunks(b"the dog  the\tdog the" + chunks.PADDING, padded=True)
    assert padded.codes.tolist() == split.codes.tolist() and padded.distinct == split.distinct


def test_long_chunks_whose_hashes_collide_still_get_their_own_codes(monkeypatch):
    # Every chunk of 8 bytes or more gets the same key: only the byte comparison tells them apart.
    monkeypatch.setattr(
        chunks, "_long_keys", lambda words, starts, lengths: np.full(len(starts), 1 << 63, np.uint64)
    )
    rng = random.Random(1)
    for _ in range(100):
        _check(_random_text(rng))
    split = _check("skateboard surfboards skateboard abcdefgh abcdefgi")
    assert sorted(split.distinct) == ["abcdefgh", "abcdefgi", "skateboard", "surfboards"]
    assert split.codes[0] == split.codes[2]


def test_more_distinct_chunks_than_the_first_hash_table_holds():
    # The first table has 2**14 slots for 200,000 chunks: most keys are numbered in later rounds.
    text = " ".join(f"{index:x}" * (index % 3 + 1) for index in range(200_000))
    split = _check(text)
    assert len(split.distinct) > 2**14


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 16])
def test_padding_lets_a_chunk_at_the_very_end_be_read(size):
    _check("x " + "q" * size)
