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
from tests.challenges.conftest import coco


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
    # The entries were scored by a metric run too, so the meta-evaluation pairs the campaign's
    # judgments with metric scores (correlations, the trust table).
    run = MetricRun.objects.get(systems__name=campaign.base_system.name)
    assert run.status == JobStatus.SUCCEEDED
    assert set(run.systems.values_list("name", flat=True)) == {f"entry-{good.pk}", f"entry-{weak.pk}"}
    found = comparisons_from_db(metric_run_ids=[run.pk], campaign_ids=[campaign.pk])
    assert len(found) == 1 and len(found.items) == 8


def test_one_entry_is_not_enough(bench):
    entry(bench, "alone", lambda i, im: "x")
    with pytest.raises(ValidationFailed):
        human_evaluation_create(phase_id=bench["test"].pk, top_n=3)
    assert not Campaign.objects.exists() and not HumanComparison.objects.exists()
