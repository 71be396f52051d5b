"""Human evaluation of the best entries: side-by-side campaigns of their pairs in one step, and the
human ranking (ΔS×S with its interval) beside the metric ranking on the leaderboard."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Campaign, CampaignState, SystemCaption
from challenges.human import human_evaluation_create, human_ranking
from challenges.models import HumanComparison
from challenges.services import submission_create
from core.errors import ValidationFailed
from core.jobs.models import JobStatus
from evaluation.models import MetricRun
from evaluation.research.comparisons import comparisons_from_db
from tests import factories as f
from tests.challenges.conftest import SECRET, coco


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


def entry(bench, method, text):
    return submission_create(
        phase_id=bench["test"].pk,
        user=bench["member"],
        team_id=bench["team"].pk,
        data=coco(bench["test_images"], text=text),
        filename="r.json",
        language="de",
        method_name=method,
    )


def test_top_entries_go_to_side_by_side_and_come_back_as_a_ranking(bench, pm_client):
    good = entry(
        bench,
        "good",
        lambda i, im: (
            f"ein {['hund', 'katze', 'strand', 'haus', 'baum', 'auto', 'berg', 'see'][i]} am strand"
        ),
    )
    weak = entry(bench, "weak", lambda i, im: "etwas")
    created = human_evaluation_create(phase_id=bench["test"].pk, top_n=2, replication=1, batch_size=4)
    assert len(created) == 1
    comparison = created[0]
    assert (comparison.entry_a_id, comparison.entry_b_id) == (good.pk, weak.pk)  # better metric rank is m1
    campaign = comparison.campaign
    assert campaign.state == CampaignState.OPEN and campaign.items.count() == 8
    assert SystemCaption.objects.filter(system=campaign.base_system).count() == 8
    assert "good" not in campaign.name and "weak" not in campaign.name
    # Again: the pair is compared already, nothing new.
    assert human_evaluation_create(phase_id=bench["test"].pk, top_n=2, replication=1) == []
    annotator = f.AnnotatorFactory(user__username="judge", languages=[bench["de"]])
    f.sxs_judged_all(annotator, campaign, lambda key: -2)  # m2 (weak) judged worse on every image
    ranking = human_ranking(bench["test"], "de")
    assert ranking.pairs[0].delta_sxs == -100.0
    assert [e for e, _ in ranking.ranking] == [good.pk, weak.pk]
    page = pm_client.get(
        reverse("challenges:leaderboard", args=[bench["test"].pk]) + "?language=de"
    ).content.decode()
    assert "Human ranking" in page and "-100.0" in page
    # The pair counts the campaign's images, says complete once each has its K judgments, and explains
    # its sign; a baseline above the entries does not move their metric rank.
    pair = ranking.pairs[0]
    assert (pair.n_complete, pair.n_campaign_images, pair.complete) == (8, 8, True)
    pairs = page[page.index('id="human-pairs"') :]
    assert "8 of 8" in pairs and "<strong>complete</strong>" in pairs and "positive: m2 better" in pairs
    submission_create(
        phase_id=bench["test"].pk,
        user=None,
        team_id=None,
        # The first reference of each image itself (conftest's texts): the baseline tops the board.
        data=coco(
            bench["test_images"],
            text=lambda i, im: f"ein {WORDS[(i + 6) % 9]} am {WORDS[(i + 6) % 9]} {SECRET}{i + 6}x0",
        ),
        filename="b.json",
        language="de",
        method_name="host baseline",
        baseline=True,
    )
    page = pm_client.get(
        reverse("challenges:leaderboard", args=[bench["test"].pk]) + "?language=de&split=all"
    ).content.decode()
    board = page[page.index('id="leaderboard"') : page.index('id="human-ranking"')]
    assert board.index("host baseline") < board.index("<bdi>good</bdi>")
    human_table = page[page.index('id="human"') : page.index('id="human-pairs"')]
    assert "<td>1</td><td><bdi>good</bdi></td><td>1</td>" in human_table
    # The entries were scored by a metric run too, so the meta-evaluation pairs the campaign's
    # judgments with metric scores (correlations, the trust table).
    run = MetricRun.objects.get(systems__name=campaign.base_system.name)
    assert run.status == JobStatus.SUCCEEDED
    assert set(run.systems.values_list("name", flat=True)) == {f"entry-{good.pk}", f"entry-{weak.pk}"}
    found = comparisons_from_db(metric_run_ids=[run.pk], campaign_ids=[campaign.pk])
    assert len(found) == 1 and len(found.items) == 8


WORDS = ["hund", "katze", "strand", "haus", "baum", "auto", "berg", "see", "stadt"]


def test_one_entry_is_not_enough(bench):
    entry(bench, "alone", lambda i, im: "x")
    with pytest.raises(ValidationFailed):
        human_evaluation_create(phase_id=bench["test"].pk, top_n=3)
    assert not Campaign.objects.exists() and not HumanComparison.objects.exists()


def test_nothing_an_annotator_sees_maps_to_an_entry(bench):
    import re

    from django.test import Client

    from challenges.models import Submission

    good = entry(bench, "good-method", lambda i, im: f"ein hund am strand {i}")
    weak = entry(bench, "weak-method", lambda i, im: "etwas")
    third = entry(bench, "third-method", lambda i, im: f"ein haus {i}")
    created = human_evaluation_create(phase_id=bench["test"].pk, top_n=3, replication=1, batch_size=4)
    assert len(created) == 3
    ids = {str(s.pk) for s in (good, weak, third)}
    names = [c.campaign.name for c in created]
    assert len(set(names)) == 3
    for name in names:
        # No submission id (which the leaderboard's CSV, JSON and API pair with team and method), no order.
        label = name.split(" · ", 3)[-1]
        assert not re.search(r"\d", label) and not ids & set(re.findall(r"\d+", name)), name
        assert "pair" not in name and "method" not in name
    annotator = f.AnnotatorFactory(user__username="judge", languages=[bench["de"]])
    client = Client()
    client.force_login(annotator.user)
    pages = [client.get(reverse("annotation:dashboard")).content.decode()]
    for comparison in created:
        response = client.post(
            reverse("annotation:campaign_work", args=[comparison.campaign.pk]), follow=True
        )
        assert response.status_code == 200
        pages.append(response.content.decode())
    seen = "\n".join(pages)
    assert all(name in seen for name in names)  # the campaigns were on the pages looked at
    methods = Submission.objects.filter(phase=bench["test"]).values_list("method_name", flat=True)
    for leaked in [*methods, bench["team"].name, *(f"pair {a.entry_a_id}" for a in created)]:
        assert leaked not in seen, leaked
    assert not re.search(r"entry-\d", seen)


def test_campaigns_named_before_the_blinding_are_renamed(bench):
    import importlib

    from django.apps import apps

    good = entry(bench, "good", lambda i, im: f"ein hund am strand {i}")
    weak = entry(bench, "weak", lambda i, im: "etwas")
    (comparison,) = human_evaluation_create(phase_id=bench["test"].pk, top_n=2, replication=1)
    old = f"XM-mini · test · de · pair {good.pk}/{weak.pk}"
    Campaign.objects.filter(pk=comparison.campaign_id).update(name=old)
    importlib.import_module("challenges.migrations.0004_blind_comparison_names").blind(apps, None)
    renamed = Campaign.objects.get(pk=comparison.campaign_id).name
    assert renamed.startswith("XM-mini · test · de · comparison ") and "pair" not in renamed


def test_the_admin_action_names_the_campaigns_it_made_with_links(bench, pm_client):
    entry(bench, "good", lambda i, im: f"ein {WORDS[i]} am strand")
    entry(bench, "weak", lambda i, im: "etwas")
    response = pm_client.post(
        reverse("admin:challenges_phase_changelist"),
        {"action": "human_evaluation_top", "_selected_action": [bench["test"].pk]},
        follow=True,
    )
    text = response.content.decode()
    campaign = Campaign.objects.get()
    assert "1 side-by-side campaign created and opened:" in text
    assert reverse("admin:annotation_campaign_change", args=[campaign.pk]) in text and campaign.name in text
