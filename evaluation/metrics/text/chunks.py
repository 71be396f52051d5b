"""A text file cut at its spaces into chunks, equal chunks numbered alike, with numpy.

Why. Scoring 50,000 images with five references each tokenises a file of ~3M space-separated
chunks of which a few hundred to a few tens of thousands are distinct: caption files repeat their
words endlessly. ``str.split`` makes a Python string of every chunk (~55 bytes each, ~180 MB of
small objects whose memory the interpreter asks the kernel for page by page, a fault each, costly
on a virtual machine), and numbering them through a dict walks them all again. Here the file's
UTF-8 bytes are cut with numpy, each chunk becomes one 64-bit key, a hash table in numpy numbers
the keys, and only the distinct chunks are ever decoded to Python strings.

Cutting bytes is cutting text: in UTF-8 the space byte never occurs inside a multi-byte character.

Keys. A chunk of at most 7 bytes is its own key: its bytes in the low 7 bytes of the key and its
length in the top byte (so that ``"a"`` and ``"a\\0"`` differ). A longer chunk's key is a hash of
its length and bytes with the top bit set, so that it never equals a short chunk's key. Each long
chunk is then compared byte by byte with one chunk of the same number, and any that differ are
numbered again from their decoded text: the numbering is exact whatever the hash does, the hash
only decides how often that check finds anything to do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PADDING", "Chunks", "split_chunks"]

_SPACE = 0x20
# _LOW_BYTES[k]: the mask of a word's first k bytes (numpy reads words little-endian here).
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
# _LENGTH_TAG[k]: a short chunk's length k in its key's top byte (k = 8 is a long chunk, re-keyed).
_LENGTH_TAG = np.array([k << 56 for k in range(9)], dtype=np.uint64)
_LONG_TAG = np.uint64(1 << 63)
_SHORT = 7  # bytes that fit in a key beside the length byte
_MASK64 = (1 << 64) - 1
# Odd multipliers: 2**64 / golden ratio (Fibonacci hashing, whose top bits are well mixed), and the
# 64-bit FNV prime for folding a long chunk's words.
_FIBONACCI = 0x9E3779B97F4A7C15
_FOLD = np.uint64(0x100000001B3)


@dataclass(frozen=True, eq=False)
class Chunks:
    """A file's chunks: chunk ``i`` is ``distinct[codes[i]]``; two chunks have the same code exactly
    when their texts are equal.

    There is one chunk more than there are spaces: ``""`` between two spaces, and at either end of a
    file that starts or ends with one.
    """

    codes: np.ndarray
    distinct: list[str]

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, index: int) -> str:
        return self.distinct[self.codes[index]]

    def code_of(self, text: str) -> int | None:
        """The code of the chunks whose text is ``text``, or None when there are none."""
        try:
            return self.distinct.index(text)
        except ValueError:
            return None


#: What :func:`split_chunks` needs after the text when ``padded`` (so that a word can be read at
#: every chunk start, even the last, without copying the file to add it).
PADDING = bytes(8)


def split_chunks(blob: bytes, *, padded: bool = False) -> Chunks:
    """Cut UTF-8 text at its spaces (byte 0x20) and number the distinct chunks (see the module notes).

    ``blob`` must be valid UTF-8 (``"surrogatepass"`` encodings of lone surrogates included); the
    distinct texts are decoded with the same error handler. ``padded``: ``blob`` ends with
    :data:`PADDING`, which is not part of the text.
    """
    if not padded:
        blob += PADDING
    size = len(blob) - len(PADDING)
    data = np.frombuffer(blob, dtype=np.uint8)
    # A chunk starts at the file's start and after each space.
    is_start = np.empty(size + 1, dtype=bool)
    is_start[0] = True
    np.equal(data[:size], _SPACE, out=is_start[1:])
    starts = np.flatnonzero(is_start)
    del is_start
    lengths = np.empty(len(starts), dtype=np.int64)
    np.subtract(starts[1:], starts[:-1], out=lengths[:-1])
    lengths[:-1] -= 1  # the space
    lengths[-1] = size - starts[-1]
    # The 8 bytes that start at every offset, as one little-endian word (an unaligned view, no copy).
    words = np.ndarray(shape=(size + 1,), dtype="<u8", buffer=data, strides=(1,))
    clipped = np.minimum(lengths, 8)
    keys = words[starts]
    bits = np.take(_LOW_BYTES, clipped)
    keys &= bits
    keys |= np.take(_LENGTH_TAG, clipped, out=bits, mode="clip")  # the same buffer
    del clipped, bits
    long = np.flatnonzero(lengths > _SHORT)
    long_starts, long_lengths = starts[long], lengths[long]
    if len(long):
        keys[long] = _long_keys(words, long_starts, long_lengths)
    codes, code_keys = _dense_codes(keys)
    del keys
    # One chunk of each long code, to decode it and to compare the others with.
    long_codes = codes[long]
    representative = np.zeros(len(code_keys), dtype=np.int64)
    representative[long_codes] = long
    distinct = [
        _decode(key, data, starts, lengths, first)
        for key, first in zip(code_keys.tolist(), representative.tolist())
    ]
    if len(long):
        representative = representative[long_codes]
        differ = _differ(words, long_starts, long_lengths, starts[representative], lengths[representative])
        if differ.any():
            _renumber(data, long_starts[differ], long_lengths[differ], long[differ], codes, distinct)
    return Chunks(codes=codes, distinct=distinct)


def _long_keys(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Hash keys (top bit set) of the chunks of at least 8 bytes that start at ``starts``."""
    keys = lengths.astype(np.uint64)
    keys *= _FOLD
    keys ^= words[starts]  # every one has a whole first word
    keys *= _FOLD
    offset = 8
    pending = np.flatnonzero(lengths > offset)
    while len(pending):
        word = words[starts[pending] + offset] & _LOW_BYTES[np.minimum(lengths[pending] - offset, 8)]
        keys[pending] = (keys[pending] ^ word) * _FOLD
        offset += 8
        pending = pending[lengths[pending] > offset]
    keys |= _LONG_TAG
    return keys


# No key has a top byte from 8 to 0x7F (a short chunk's holds its length, a long chunk's has the top
# bit set), so such a value marks an empty slot of the hash table.
_EMPTY_SLOT = np.uint64(0x7F << 56)


def _dense_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, code_keys)``: ``keys[i] == code_keys[codes[i]]``, codes ``0..len(code_keys) - 1``.

    A hash table in numpy: each key is written into the slot its hash names, so that each occupied
    slot ends up holding one of the keys written there (all occurrences of a key go to the same
    slot); those keys are numbered, one number per occupied slot, and the keys that find another
    key in their slot try again with another multiplier and a larger table. The first table has
    about one slot per 64 chunks, which keeps it in the processor's cache and is plenty for the few
    thousand distinct chunks of a caption file; every round numbers at least one key, so the loop ends.
    """
    codes = np.empty(0, dtype=np.int64)
    code_keys: list[np.ndarray] = []
    numbered = 0
    todo, where = keys, None  # keys still without their code, and their positions (None: all)
    bits = min(max(len(keys).bit_length() - 6, 10), 22)
    multiplier = _FIBONACCI
    while len(todo):
        slot = todo * np.uint64(multiplier)
        slot >>= np.uint64(64 - bits)  # the top bits of the product are the well-mixed ones
        slot = slot.view(np.int64)
        table = np.full(1 << bits, _EMPTY_SLOT, dtype=np.uint64)
        table[slot] = todo
        occupied = table != _EMPTY_SLOT
        number = np.cumsum(occupied, dtype=np.int64)
        number += numbered - 1
        code_keys.append(table[occupied])
        numbered += len(code_keys[-1])
        # Right for the keys that kept their slot; the others are numbered again in the next round.
        if where is None:
            codes = number[slot]
        else:
            codes[where] = number[slot]
        lost = np.flatnonzero(table[slot] != todo)
        where = lost if where is None else where[lost]
        todo = todo[lost]
        bits = min(bits + 1, 24)
        multiplier = (multiplier * _FIBONACCI) & _MASK64  # odd times odd: still odd
    return codes, np.concatenate(code_keys) if code_keys else np.zeros(0, dtype=np.uint64)


def _decode(key: int, data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, representative: int) -> str:
    if key >> 63:  # a long chunk: read it where it occurs
        start = int(starts[representative])
        raw = data[start : start + int(lengths[representative])].tobytes()
    else:
        raw = (key & ((1 << 56) - 1)).to_bytes(_SHORT, "little")[: key >> 56]
    return raw.decode("utf-8", "surrogatepass")


def _differ(
    words: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    other_starts: np.ndarray,
    other_lengths: np.ndarray,
) -> np.ndarray:
    """Whether each chunk of at least 8 bytes differs from the other chunk given for it."""
    differ = lengths != other_lengths
    differ |= words[starts] != words[other_starts]  # every one has a whole first word
    offset = 8
    pending = np.flatnonzero(~differ & (lengths > offset))
    while len(pending):
        mask = _LOW_BYTES[np.minimum(lengths[pending] - offset, 8)]
        mine = words[starts[pending] + offset] & mask
        theirs = words[other_starts[pending] + offset] & mask
        differ[pending[mine != theirs]] = True
        offset += 8
        pending = pending[~differ[pending] & (lengths[pending] > offset)]
    return differ


def _renumber(
    data: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    indices: np.ndarray,
    codes: np.ndarray,
    distinct: list[str],
) -> None:
    """New codes (in place) for chunks that differ from their code's representative.

    Equal texts have equal keys and so share a code; a chunk whose bytes differ from its
    representative's therefore has a text no other code has, and chunks with equal such texts
    get one new code together.
    """
    new_codes: dict[str, int] = {}
    for index, start, length in zip(indices.tolist(), starts.tolist(), lengths.tolist()):
        text = data[start : start + length].tobytes().decode("utf-8", "surrogatepass")
        if text not in new_codes:
            new_codes[text] = len(distinct)
            distinct.append(text)
        codes[index] = new_codes[text]
