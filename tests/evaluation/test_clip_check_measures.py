"""The zero-shot and foil measures and the joined trust verdict, on plain arrays (no database)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.clip_checks.measures import class_vectors, foil_compare, foil_measures, zeroshot_measures
from evaluation.metrics.clip.trust import ProbeRatio, TrustStatus, language_trust, not_checked, with_probes


def test_class_vectors_average_the_normalised_prompts_of_each_class():
    classes, vectors = class_vectors(np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 3.0]]), [7, 7, 3])
    assert classes == [3, 7]
    assert vectors[0] == pytest.approx([0.0, 1.0])
    assert vectors[1] == pytest.approx([np.sqrt(0.5), np.sqrt(0.5)])


def test_zeroshot_top1_top5_and_english_on_the_same_classes():
    eye = np.eye(6)
    images = eye[[0, 1, 2, 3, 4, 5]]
    # Class 5's label is class 4's image: image 4 ties its own label with it (pessimistic: wrong), and
    # image 5 is as far from every label (cosine 0), so it ranks last: wrong at 1 and at 5.
    labels = eye[[0, 1, 2, 3, 4, 4]]
    result = zeroshot_measures(
        images, [0, 1, 2, 3, 4, 5], list(range(6)), labels, baseline=([0, 1], eye[[0, 1]])
    )
    assert result["n_classes"] == 6 and result["n_images"] == 6
    assert result["top1"] == pytest.approx(4 / 6)
    assert result["top5"] == pytest.approx(5 / 6)
    assert result["per_class"]["4"]["top1"] == result["per_class"]["5"]["top1"] == 0.0
    # English covers only classes 0 and 1: it is compared on those (and their 2 images).
    assert result["baseline"] == {"top1": 1.0, "top5": 1.0, "n_classes": 2, "n_images": 2}
    assert "English is compared on the 2 of its classes it has labels for" in result["notes"]


def test_foil_accuracy_ties_and_before_after_on_shared_pairs():
    image = np.array([[1.0, 0.0]] * 4)
    caption = np.array([[1.0, 0.0]] * 4)
    foil = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    after = foil_measures(image, caption, foil, ["a", "a", "b", "b"], ["k1", "k2", "k3", "k4"], n_boot=50)
    assert after["accuracy"] == 0.75
    assert (after["phenomena"]["a"]["ties"], after["phenomena"]["a"]["accuracy"]) == (1, 0.5)
    assert after["phenomena"]["b"] | {"interval": None} == {
        "n_pairs": 2,
        "accuracy": 1.0,
        "ties": 0,
        "interval": None,
    }
    assert after["phenomena"]["b"]["interval"] == [1.0, 1.0]
    # Both below zero clip to a CLIPScore of 0: a tie.
    clipped = foil_measures(image[:1], -caption[:1], np.array([[0.0, -1.0]]), ["a"], ["k"], n_boot=10)
    assert clipped["phenomena"]["a"]["ties"] == 1 and clipped["accuracy"] == 0.0
    before = {"pairs": [["k1", "a", 0.0, 1.0], ["k2", "a", 0.0, 1.0], ["k9", "b", 1.0, 0.0]]}
    compared = foil_compare(after, before, n_boot=50)
    assert compared["n_shared"] == 2 and compared["n_after_only"] == 2
    assert compared["phenomena"]["a"]["before"] == 0.0 and compared["phenomena"]["a"]["after"] == 0.5
    assert compared["phenomena"]["all"]["delta"] == 0.5


def test_a_failing_probe_flags_a_language_retrieval_trusts_and_says_why():
    retrieval = language_trust({"en": {"t2i_r1": 0.5}, "sw": {"t2i_r1": 0.4}}, threshold=0.5)
    assert retrieval["sw"].status == TrustStatus.RELIABLE
    flagged = with_probes(retrieval["sw"], [ProbeRatio("zero-shot accuracy", 0.084, 0.4, 0.5, check_id=3)])
    assert flagged.flagged and flagged.reasons == ["zero-shot accuracy 0.21× English"]
    assert "CLIP-based scores unreliable here: zero-shot accuracy 0.21× English" in flagged.note
    assert flagged.as_dict()["probes"][0]["failed"] is True
    passing = with_probes(retrieval["sw"], [ProbeRatio("foil accuracy", 0.64, 0.68, 0.9)])
    assert passing.status == TrustStatus.RELIABLE and "foil accuracy 64.0%, 0.94× English" in passing.note
    # Unchecked by retrieval, failing a probe: flagged; passing: still not trusted.
    assert with_probes(not_checked("mi"), [ProbeRatio("foil accuracy", 0.5, 0.7, 0.9)]).flagged
    assert not with_probes(not_checked("mi"), [ProbeRatio("foil accuracy", 0.7, 0.7, 0.9)]).trusted
    # Both fail: both reasons.
    low = language_trust({"en": {"t2i_r1": 0.5}, "te": {"t2i_r1": 0.01}}, threshold=0.5)["te"]
    both = with_probes(low, [ProbeRatio("foil accuracy", 0.5, 0.7, 0.9)])
    assert both.reasons == ["text→image R@1 0.02× English", "foil accuracy 0.71× English"]
