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
