"""A phase's metrics are names the scorers compute and its ranking metric is one of them, checked on every
save (the admin, create_benchmark, any service); the leaderboard and the choice of top entries for human
evaluation read the ranking metric through one rule (``Phase.ranked_by``)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from challenges.human import top_entries
from challenges.models import Phase
from challenges.selectors import leaderboard
from challenges.services import submission_create
from tests.challenges.conftest import coco


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"metrics": ["BLEU-4", "CLIPscore"]}, "metrics", "Unknown metric(s) CLIPscore"),
        ({"metrics": ["BLEU-4", "ROUGE-L"]}, "ranking_metric", "not among the phase's metrics"),
        ({"metrics": ["BLEU-4", "BLEU-4", "CIDEr-D"]}, "metrics", "Each metric once"),
        ({"metrics": "CIDEr-D"}, "metrics", "A list of metric names"),
        ({"ranking_metric": "METEOR", "metrics": ["CIDEr-D"]}, "ranking_metric", "METEOR is not among"),
        ({"reference_counts": [0, "5"]}, "reference_counts", "distinct reference counts"),
        ({"reference_counts": []}, "reference_counts", "distinct reference counts"),
    ],
)
def test_a_phase_with_metrics_no_scorer_computes_is_refused_on_save(bench, changes, field, words):
    phase = Phase.objects.get(pk=bench["test"].pk)
    for name, value in changes.items():
        setattr(phase, name, value)
    with pytest.raises(ValidationError) as raised:
        phase.save()
    assert field in raised.value.message_dict and words in " ".join(raised.value.message_dict[field])
    stored = Phase.objects.get(pk=phase.pk)
    assert stored.metrics == ["BLEU-4", "ROUGE-L", "CIDEr-D"] and stored.ranking_metric == "CIDEr-D"


def _phase_form_data(pm_client, phase, **changes):
    url = reverse("admin:challenges_phase_change", args=[phase.pk])
    page = pm_client.get(url)
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {name: form.initial.get(name) for name in form.fields}
    data.update(
        {
            "image_set": phase.image_set_id,
            "benchmark": phase.benchmark_id,
            "clip_model": "",
            "starts_at_0": "",
            "starts_at_1": "",
            "ends_at_0": "",
            "ends_at_1": "",
        }
    )
    data = {k: ("" if v is None else v) for k, v in data.items()}
    data["is_open"] = "on"
    data["human_comparison"] = "on"
    data.update(changes)
    return url, page, data


def test_the_admin_form_offers_metrics_and_reference_counts_as_boxes(bench, pm_client):
    phase = bench["test"]
    url, page, data = _phase_form_data(
        pm_client, phase, metrics=["METEOR", "BLEU-4", "CIDEr-D"], reference_counts=["5", "0"]
    )
    html = page.content.decode()
    assert 'type="checkbox" name="metrics" value="CLIPScore"' in html
    assert 'type="checkbox" name="reference_counts" value="40"' in html
    response = pm_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    stored = Phase.objects.get(pk=phase.pk)
    assert stored.metrics == ["BLEU-4", "CIDEr-D", "METEOR"] and stored.reference_counts == [0, 5]


def test_the_admin_form_names_the_misspelt_metric_and_changes_nothing(bench, pm_client):
    phase = bench["test"]
    url, _page, data = _phase_form_data(
        pm_client, phase, metrics=["BLEU-4", "CLIPscore"], reference_counts=["0"]
    )
    response = pm_client.post(url, data)
    assert response.status_code == 200  # the form again, with its error
    assert "CLIPscore is not one of the available choices" in response.content.decode()
    # A ranking metric outside the boxes ticked: named by the phase's own check.
    url, _page, data = _phase_form_data(pm_client, phase, metrics=["BLEU-4"], reference_counts=["0"])
    response = pm_client.post(url, data)
    assert (
        response.status_code == 200 and "is not among the phase&#x27;s metrics" in response.content.decode()
    )
    assert Phase.objects.get(pk=phase.pk).metrics == ["BLEU-4", "ROUGE-L", "CIDEr-D"]


def test_the_leaderboard_and_the_top_entries_rank_by_one_rule(bench, manager):
    phase = bench["test"]
    good = coco(bench["test_images"], text=lambda i, im: f"ein hund am strand {i}")
    weak = coco(bench["test_images"], text=lambda i, im: "ein auto")
    for name, data in (("good", good), ("weak", weak)):
        submission_create(
            phase_id=phase.pk,
            user=bench["member"],
            team_id=bench["team"].pk,
            data=data,
            filename="de.json",
            language="de",
            method_name=name,
        )
    # A phase stored before the check (an update bypasses save): its ranking metric is not computed.
    Phase.objects.filter(pk=phase.pk).update(ranking_metric="METEOR")
    phase = Phase.objects.get(pk=phase.pk)
    assert phase.ranked_by == "BLEU-4"
    board = leaderboard(phase=phase, user=manager, language="de")
    assert board.metric == phase.ranked_by
    top = top_entries(phase, bench["de"], 2)
    assert [e.submission_id for e in board.entries][: len(top)] == [s.pk for s in top] and len(top) == 2


def test_the_admin_form_offers_the_upload_formats_and_the_upload_form_lists_only_those(bench, pm_client):
    from django.test import Client

    phase = bench["val"]
    url, page, data = _phase_form_data(
        pm_client, phase, metrics=phase.metrics, reference_counts=[str(k) for k in phase.reference_counts]
    )
    html = page.content.decode()
    assert all(
        f'type="checkbox" name="accepted_formats" value="{name}"' in html for name in ("coco", "jsonl", "zip")
    )
    assert "COCO results (one language)" in html
    response = pm_client.post(url, {**data, "accepted_formats": ["jsonl", "coco"]})
    assert response.status_code == 302, response.content.decode()[:3000]
    assert Phase.objects.get(pk=phase.pk).accepted_formats == ["coco", "jsonl"]  # the registry's order

    member = Client()
    member.force_login(bench["member"])
    page = member.get(reverse("challenges:benchmark", args=[bench["benchmark"].slug])).content.decode()
    restricted = page[page.index(f'id="formats-{phase.pk}"') :]
    restricted = restricted[: restricted.index("</div>")]
    assert "COCO results (one language)" in restricted and "JSON lines (XM3600 or flat)" in restricted
    assert "zip of" not in restricted and 'class="format-zip"' not in restricted
    every = page[page.index(f'id="formats-{bench["test"].pk}"') :]
    assert 'class="format-zip"' in every[: every.index("</div>")]


def test_the_upload_formats_are_listed_in_the_page_language():
    from django.utils import translation

    from challenges.templatetags.caption_formats import accepted_formats

    with translation.override("de"):
        assert [f.label for f in accepted_formats(["zip", "coco"])] == [
            "ZIP mit <Sprache>.json- / *.jsonl-Dateien",
            "COCO-Ergebnisse (eine Sprache)",
        ]
    with translation.override("ja"):
        assert [f.name for f in accepted_formats([])] == ["zip", "coco", "jsonl"]
        assert accepted_formats(["jsonl"])[0].label == "JSON Lines（XM3600形式またはフラット）"
