"""Human agreement for word prediction (seed 002, sec. 4.2): counts by hand, the model, PHR, the page."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from challenges.word_agreement import agreement_svg, human_agreement, model_precision, system_agreement

CAPTIONS = {"A": [{"dog"}, {"dog"}], "B": [{"cat"}, {"dog"}]}


def test_weighted_precision_and_recall_by_hand():
    rows = {r.word: r for r in human_agreement(CAPTIONS, k=1)}
    # dog: cw = 1 (A); A predicts it with 1 caption containing it (tp 1), B predicts it with none (fp 1).
    assert rows["dog"].human_precision == 0.5 and rows["dog"].human_recall == 1.0 and rows["dog"].p == 1.0
    # cat: in B's reference, never predicted: recall 0, precision undefined.
    assert rows["cat"].human_precision is None and rows["cat"].human_recall == 0.0


def test_the_model_of_the_paper():
    # Hp = pk / (pk + (1 - p)^k): with k = 4 and p = 0.5, 2 / (2 + 1/16).
    assert model_precision(0.5, 4) == pytest.approx(2 / (2 + 0.0625))
    assert model_precision(1.0, 1) == 1.0 and model_precision(0.0, 3) == 0.0


def test_precision_at_human_recall():
    human = human_agreement(CAPTIONS, k=1)
    system = {r.word: r for r in system_agreement({"A": {"dog"}, "B": {"cat"}}, CAPTIONS, human, k=1)}
    assert system["dog"].precision == 1.0 and system["dog"].phr == 1.0  # recall 1 reaches the human's 1
    assert system["cat"].recall == 1.0 and system["cat"].phr == 1.0  # human recall 0: reached


def test_the_figure_escapes_words():
    rows = human_agreement({"A": [{"<b>x"}, {"<b>x"}]}, k=1)
    svg = agreement_svg(rows, k=1)
    assert svg.startswith("<svg") and "&lt;b&gt;x" in svg and "<b>" not in svg


def test_the_report_page(bench, pm_client):
    page = pm_client.get(reverse("challenges:word-agreement", args=[bench["val"].pk]) + "?language=de&k=2")
    assert page.status_code == 200
    body = page.content.decode()
    assert "<svg" in body and "hund" in body
    member = Client()
    member.force_login(bench["member"])
    assert member.get(reverse("challenges:word-agreement", args=[bench["val"].pk])).status_code == 200
    # A test phase's words are the hidden references': hosts only.
    assert member.get(reverse("challenges:word-agreement", args=[bench["test"].pk])).status_code == 404


def test_every_entry_s_mean_phr_is_over_the_same_words(bench, pm_client, monkeypatch):
    """An entry that reaches human recall on 1 word and one that reaches it on 7 are averaged over the
    words both reach, not each over its own (where the first showed 0.714 over 1 word against 0.616
    over 7 for an entry above it)."""
    from challenges.human import word_agreement_report
    from challenges.services import submission_create
    from challenges.word_agreement import human_agreement, system_agreement
    from tests.challenges.conftest import coco

    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())
    words = ["hund", "katze", "strand", "haus", "baum", "auto", "berg", "see", "stadt"]
    phase = bench["val"]
    images = bench["val_images"]
    rich = coco(images, text=lambda i, im: f"ein {words[i % 9]} am {words[(i + 1) % 9]} {words[(i + 2) % 9]}")
    poor = coco(images, text=lambda i, im: "ein hund am strand")
    for name, data in (("rich", rich), ("poor", poor)):
        submission_create(
            phase_id=phase.pk,
            user=bench["member"],
            team_id=bench["team"].pk,
            data=data,
            filename="de.json",
            language="de",
            method_name=name,
        )
    report = word_agreement_report(phase, "de", k=2)
    by_method = {e.method: e for e in report.systems}
    assert by_method["rich"].reached != by_method["poor"].reached  # they reach different word sets
    common = report.common_words
    assert common  # the fixture's captions share some reached words
    # Independently: each entry's PHR per word, the words where all reach it, the mean over those.
    from challenges.scoring.selectors import phase_image_ids, phase_references

    ids = phase_image_ids(phase)
    refs = {
        i: [set(t.lower().split()) for t in ts]
        for i, ts in phase_references(phase, bench["de"].pk, ids).items()
    }
    rows = human_agreement(refs, k=2)
    per_entry = {}
    for name, text in (("rich", rich), ("poor", poor)):
        import json

        captions = {int(im.pk): set(e["caption"].lower().split()) for im, e in zip(images, json.loads(text))}
        per_entry[name] = {
            s.word: s.phr for s in system_agreement(captions, refs, rows, k=2) if s.phr is not None
        }
    shared = [r.word for r in rows if all(r.word in phr for phr in per_entry.values())]
    assert common == shared
    for name, phr in per_entry.items():
        assert by_method[name].phr == pytest.approx(sum(phr[w] for w in shared) / len(shared), abs=1e-12)
    page = pm_client.get(
        reverse("challenges:word-agreement", args=[phase.pk]) + "?language=de&k=2"
    ).content.decode()
    assert f"over the same {len(shared)} words" in page or "over the same word," in page
