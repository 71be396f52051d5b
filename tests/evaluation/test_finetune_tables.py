"""The fine-tuning before/after table reads as a table: rounded numbers, a reason for every empty
cell, no difference of zero without saying why, the configuration as a list and the history as a
small figure (admin and report)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import ClipFineTune, RunStatus
from evaluation.research.finetune_tables import (
    before_after,
    before_after_rows,
    before_after_text,
    config_items,
)
from evaluation.research.reports.finetune_plots import history_plot

# [language, key, base score, fine-tuned score, rating 1-4]
TEST_ROWS = [
    # de: two captions only
    ["de", "d1", 0.2, 0.3, 4],
    ["de", "d2", 0.1, 0.4, 1],
    # ja: the fine-tuned model orders the captions exactly as the base model
    *[["ja", f"j{i}", 0.1 * i, 0.1 * i + 0.05, 1 + i % 4] for i in range(12)],
    # en: a real change
    *[["en", f"e{i}", 0.1 * (i % 3), 0.1 * i, 1 + i % 4] for i in range(12)],
]
HISTORY = [
    {
        "epoch": 1,
        "step": 10,
        "loss_contrastive": 2.31234,
        "loss_pearson": 0.912,
        "dev_score": 0.2171573599189619,
    },
    {"epoch": 2, "step": 20, "loss_contrastive": 1.9, "loss_pearson": None, "dev_score": 0.25},
]
CONFIG = {"learning_rate": 1e-05, "batch_size": 16, "epochs": 2, "trainable": ["text", "proj"], "seed": 0}


def test_every_empty_cell_says_why_and_a_zero_difference_too():
    table = before_after(TEST_ROWS, n_boot=200)
    rows = {(row[0], row[2]): row for row in before_after_rows(table)}
    assert rows["de", "base"][3] == "– (n = 2 < 3)" and rows["de", "fine-tuned"][4] == "– (n = 2 < 3)"
    assert all(cell != "–" for row in rows.values() for cell in row)
    text = before_after_text(table)
    assert "de: Δτ_b (fine-tuned − base) = n/a (n = 2 < 3)" in text
    ja = next(line for line in text.splitlines() if line.startswith("ja: Δτ_b"))
    assert "+0.000 [+0.000, +0.000] (both models order the 12 captions the same way" in ja
    en = next(line for line in text.splitlines() if line.startswith("en: Δτ_b"))
    assert "(" not in en.split("=", 1)[1].split("]")[-1]  # a real difference needs no excuse
    # Rounded: no raw float anywhere.
    assert all(
        len(part.split(".")[-1]) <= 4 for row in rows.values() for part in row[3:] if part[:1].isdigit()
    )


def test_config_is_a_readable_list():
    items = dict(config_items(CONFIG))
    assert items == {
        "learning rate": "1e-05",
        "batch size": "16",
        "epochs (at most)": "2",
        "training seed": "0",
        "trained parameters": "text, proj",
    }


def test_history_is_a_small_figure():
    svg = history_plot(HISTORY, "svg").decode()
    assert "contrastive loss" in svg and "dev score" in svg and "Pearson loss" in svg
    assert history_plot(HISTORY, "png").startswith(b"\x89PNG")
    with pytest.raises(ValueError):
        history_plot([], "svg")


@pytest.mark.django_db
def test_the_admin_page_shows_rounded_scores_a_config_list_and_the_history_figure(researcher, client):
    run = ClipFineTune.objects.create(
        name="ft-readable",
        register_as="ft-readable",
        status=RunStatus.SUCCEEDED,
        config=CONFIG,
        history=HISTORY,
        dev_score=HISTORY[0]["dev_score"],
        results={"test": TEST_ROWS},
    )
    client.force_login(researcher)
    page = client.get(reverse("admin:evaluation_clipfinetune_change", args=[run.pk])).content.decode()
    assert "0.2171573599189619" not in page and "0.217" in page
    assert "<li>learning rate: 1e-05</li>" in page and "{&quot;learning_rate" not in page
    figure_url = reverse("reports:finetune-history", kwargs={"run_id": run.pk, "fmt": "svg"})
    assert figure_url in page
    assert "n/a (n = 2 &lt; 3)" in page
    figure = client.get(figure_url)
    assert figure.status_code == 200 and figure["Content-Type"] == "image/svg+xml"
    missing = reverse("reports:finetune-history", kwargs={"run_id": run.pk + 1000, "fmt": "svg"})
    assert client.get(missing).status_code == 404
