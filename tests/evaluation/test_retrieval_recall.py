"""Retrieval recall and the trust flag on hand-built embeddings, where the right answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.metrics.clip.retrieval import RetrievalDataError, retrieval_ranks, retrieval_recall
from evaluation.metrics.clip.trust import TrustStatus, clip_model_key, language_trust


def _unit(rows) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_captions_built_to_retrieve_their_own_image_give_recall_one():
    rng = np.random.default_rng(0)
    images = _unit(rng.normal(size=(12, 16)))
    owner = np.repeat(np.arange(12), 2)  # two captions per image, as XM3600
    captions = _unit(images[owner] + 0.01 * rng.normal(size=(24, 16)))
    result = retrieval_recall(images, captions, owner)
    assert result.t2i == {1: 1.0, 5: 1.0, 10: 1.0}
    assert result.i2t == {1: 1.0, 5: 1.0, 10: 1.0}
    assert result.mean_recall == 1.0
    assert (result.n_images, result.n_captions, result.notes) == (12, 24, [])


def test_a_shuffled_set_gives_the_recalls_of_its_known_ranks():
    n = 12
    images = np.eye(n)
    # Caption j = e_j + 0.5 e_{(j+1) % n}: own image at similarity 1, next image 0.5, the rest 0.
    captions = _unit(np.eye(n) + 0.5 * np.roll(np.eye(n), 1, axis=1))
    owner = np.arange(n)
    # The first four captions are given to the wrong image (their neighbour's): rank 2 for each.
    owner_shifted = owner.copy()
    owner_shifted[:4] = (owner[:4] + 1) % n
    t2i, i2t = retrieval_ranks(images, captions, owner_shifted)
    assert list(t2i[:4]) == [2, 2, 2, 2] and list(t2i[4:]) == [1] * 8
    result = retrieval_recall(images, captions, owner_shifted)
    assert result.t2i[1] == pytest.approx(8 / 12)
    assert result.t2i[5] == result.t2i[10] == 1.0
    # Image 0 has no caption left (caption 0 now belongs to image 1): it is no image→text query.
    assert i2t[0] == -1
    assert result.notes == ["1 images have no caption: they are candidates only, not image→text queries"]
    # Image 1's caption is caption 0 (similarity 0.447 to image 1); caption 1 scores 0.894: rank 2.
    assert i2t[1] == 2


def test_an_image_counts_as_retrieved_when_any_of_its_captions_is_in_the_top_k():
    images = np.eye(3)
    # Image 0 has a bad caption (pointing at image 2) and a good one; image 1 and 2 one good each.
    captions = _unit([[0, 0.3, 1.0], [1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])
    owner = [0, 0, 1, 2]
    t2i, i2t = retrieval_ranks(images, captions, owner)
    assert i2t[0] == 1  # the good caption is first, the bad one does not matter
    # As a text query the bad caption retrieves images 2 and 1 before its own: rank 3.
    assert t2i[0] == 3
    result = retrieval_recall(images, captions, owner)
    assert result.i2t[1] == 1.0 and result.t2i[1] == 0.75


def test_ties_are_broken_pessimistically():
    # Images 0 and 1 are the same vector: a caption of either ties with the other and ranks second.
    images = np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 0, 1.0]])
    captions = np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 0, 1.0]])
    t2i, i2t = retrieval_ranks(images, captions, [0, 1, 2])
    assert list(t2i) == [2, 2, 1]
    assert list(i2t) == [2, 2, 1]
    # A model that maps everything to one point retrieves nothing at 1, not everything.
    flat = np.ones((5, 4))
    result = retrieval_recall(flat, flat, range(5))
    assert result.t2i[1] == 0.0 and result.i2t[1] == 0.0 and result.t2i[5] == 1.0


def test_fewer_than_ten_images_say_that_r10_is_one_by_construction():
    result = retrieval_recall(np.eye(4), np.eye(4), range(4))
    assert result.t2i[10] == 1.0
    assert "only 4 images" in result.notes[0] and "chance R@1 is 1/4" in result.notes[0]


@pytest.mark.parametrize(
    ("images", "captions", "owner", "message"),
    [
        (np.eye(1), np.eye(1), [0], "at least 2 images, got 1"),
        (np.eye(3), np.zeros((0, 3)), [], "no captions"),
        (np.eye(3), np.eye(2), [0, 1], "2 dimensions, image embeddings 3"),
        (np.eye(3), np.eye(3), [0, 1], "3 captions, 2 indices"),
        (np.eye(3), np.eye(3), [0, 1, 3], "outside 0..2"),
        (np.eye(3), np.full((3, 3), np.nan), [0, 1, 2], "finite"),
    ],
)
def test_bad_input_gives_a_clear_error(images, captions, owner, message):
    with pytest.raises(RetrievalDataError, match=message):
        retrieval_recall(images, captions, owner)


RESULTS = {"en": {"t2i_r1": 0.48}, "de": {"t2i_r1": 0.40}, "sw": {"t2i_r1": 0.02}, "hi": {"t2i_r1": 0.24}}


def test_a_language_below_half_of_english_is_flagged():
    trust = language_trust(RESULTS, threshold=0.5, check_id=7)
    assert trust["en"].status == TrustStatus.BASELINE
    assert trust["de"].status == TrustStatus.RELIABLE and not trust["de"].flagged
    assert trust["sw"].flagged and trust["sw"].label == "CLIP-based scores unreliable here"
    assert "2.0% is below 0.5 × en's 48.0%" in trust["sw"].note
    # Exactly half is not below half.
    assert trust["hi"].status == TrustStatus.RELIABLE
    assert language_trust(RESULTS, threshold=0.6)["hi"].flagged


def test_without_english_nothing_is_trusted_and_an_english_zero_flags_all():
    trust = language_trust({"de": {"t2i_r1": 0.4}}, threshold=0.5)
    assert trust["de"].status == TrustStatus.NOT_COMPARED and not trust["de"].trusted
    zero = language_trust({"en": {"t2i_r1": 0.0}, "de": {"t2i_r1": 0.3}}, threshold=0.5)
    assert zero["en"].flagged and zero["de"].flagged
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        language_trust(RESULTS, threshold=0)


def test_the_model_key_names_weights_not_paths():
    a = clip_model_key(model="m", checkpoint="/a/x.pt", model_id="m:sha256-0123456789abcdef0000")
    b = clip_model_key(model="m", checkpoint="/b/y.pt", model_id="m:sha256-0123456789abcdef1111")
    assert a == b == "clip:m|weights:none|ckpt:sha256-0123456789abcdef"
    assert clip_model_key(model="m", checkpoint="/a/x.pt") == "clip:m|weights:none|ckpt:pending"
    assert clip_model_key(model="m", pretrained="laion") == "clip:m|weights:laion|ckpt:none"


def test_a_collapsed_model_scores_zero_even_when_float32_round_off_splits_its_ties():
    """A model that maps everything to one direction: its vectors, each normalised in float32 on its
    own, differ by an ulp or two, so bit-for-bit tie-breaking gave text→image R@5 = 1/47 by luck."""
    from evaluation.metrics.clip.retrieval import TIE_TOLERANCE

    rng = np.random.default_rng(7)
    direction = rng.standard_normal(512).astype(np.float32)

    def collapsed(n):
        rows = np.stack([direction * np.float32(1 + 1e-7 * rng.integers(1, 50)) for _ in range(n)])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    images, captions = collapsed(47), collapsed(47)
    similarity = captions.astype(np.float64) @ images.astype(np.float64).T
    assert 0 < np.ptp(similarity) < TIE_TOLERANCE  # not bit-equal, yet the same within the tolerance
    result = retrieval_recall(images, captions, list(range(47)))
    assert result.t2i == {1: 0.0, 5: 0.0, 10: 0.0} and result.i2t == {1: 0.0, 5: 0.0, 10: 0.0}


def test_fewer_captions_than_k_says_image_to_text_recall_is_one_by_construction():
    images = np.eye(12)
    captions = np.eye(12)[[0, 1, 2, 3]]
    result = retrieval_recall(images, captions, [0, 1, 2, 3])
    assert result.i2t[5] == 1.0 and result.i2t[10] == 1.0
    assert any("only 4 captions: image→text R@5/10 is 1 by construction" in note for note in result.notes)
