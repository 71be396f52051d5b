"""The demo's simulated side-by-side set: loaded on top of load_demo, finished, scored, idempotent, and
what the report builder makes of it. The raters' model is tested alone, without a database."""

from __future__ import annotations

import io
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import override_settings

from annotation.models import (
    Annotator,
    Assignment,
    AssignmentState,
    Campaign,
    CampaignKind,
    CampaignState,
    CaptioningSystem,
    SxsJudgment,
    SystemCaption,
)
from annotation.selectors import campaign_is_finished, campaigns_progress
from annotation.services.demo import SXS_CAMPAIGN, demo_load
from core.errors import ValidationFailed
from evaluation.demo.captions import CAPTIONS, GRADES, SIM_SYSTEMS
from evaluation.demo.services import METRICS, demo_results_load
from evaluation.demo.simulation import RaterModel
from evaluation.human.selectors import sxs_results
from evaluation.models import CaptionScore, CorpusScore, MetricRun, Reference, RunStatus
from evaluation.research.comparisons import comparisons_from_db

SIM = [system.name for system in SIM_SYSTEMS]
LANGUAGES = ("ar", "de", "ja")
MODELS = [CaptioningSystem, SystemCaption, Reference, Annotator, Campaign, Assignment, SxsJudgment]


def counts() -> dict[str, int]:
    counted = {model.__name__: model.objects.count() for model in MODELS}
    counted |= {model.__name__: model.objects.count() for model in (MetricRun, CaptionScore, CorpusScore)}
    counted["users"] = get_user_model().objects.count()
    return counted


# --- The raters' model, alone ----------------------------------------------------------------------


def test_the_model_is_seeded_and_follows_the_quality_gap():
    model = RaterModel()
    a, e = model.quality("A", "de|sim-a|x"), model.quality("E", "de|sim-d|x")
    assert a == model.quality("A", "de|sim-a|x")  # the same caption, the same draw
    assert RaterModel(seed=1).quality("A", "de|sim-a|x") != a
    assert 1.0 < a < 3.0 and -3.0 < e < -1.0

    def scores(q_m1, q_m2, n=300):
        return [model.score(rater=f"r{k % 3}", judgment=f"j{k}", q_m1=q_m1, q_m2=q_m2) for k in range(n)]

    much_better = scores(e, a)
    assert set(much_better) <= {1, 2, 3} and Counter(much_better).most_common(1)[0][0] == 3
    assert set(scores(a, e)) <= {-1, -2, -3}
    # One grade apart: slightly better on average; the same caption twice (an identical control): similar.
    one_grade = scores(model.quality("B", "b"), model.quality("A", "a"))
    assert 0.5 < sum(one_grade) / len(one_grade) < 2.0
    identical = scores(a, a)
    assert sum(abs(s) <= 1 for s in identical) / len(identical) > 0.9
    assert all(-3 <= s <= 3 for s in scores(-10.0, 10.0) + scores(10.0, -10.0))


def test_every_caption_has_a_grade_and_every_photo_two_references():
    for code in LANGUAGES:
        photos = CAPTIONS[code]
        assert len(photos) == 17
        for key, photo in photos.items():
            assert len(photo.references) == 2 and all(text.strip() for text in photo.references), key
            assert sorted(photo.systems) == SIM, key
            texts = [text for _, text in photo.systems.values()]
            assert all(grade in GRADES for grade, _ in photo.systems.values()), key
            # No identical pair, and no reference copied from a system.
            assert len(set(texts)) == 4 and not set(texts) & set(photo.references), key


# --- Loaded on top of the demo ---------------------------------------------------------------------


def test_the_simulated_set_loads_finished_scored_and_only_once(db, django_capture_on_commit_callbacks):
    demo_load()
    with django_capture_on_commit_callbacks(execute=True):
        summary = demo_results_load()

    # Four systems, captions in three languages, two references per photo and language.
    assert summary.systems_created == 4 and summary.captions_created == 4 * 3 * 17
    assert summary.references_created == 2 * 3 * 17
    for name in SIM:
        system = CaptioningSystem.objects.get(name=name)
        assert "Simulated" in system.description
        assert Counter(system.captions.values_list("language__code", flat=True)) == dict.fromkeys(
            LANGUAGES, 17
        )

    # Three simulated raters per language, who cannot log in and are labelled so.
    raters = Annotator.objects.filter(user__username__startswith="sim-rater-").select_related("user")
    assert sorted(r.user.username for r in raters) == [
        f"sim-rater-{c}-{n}" for c in LANGUAGES for n in (1, 2, 3)
    ]
    for rater in raters:
        assert not rater.user.has_usable_password()
        assert rater.pseudonym.startswith("SIM-") and "Simulated" in rater.user.get_full_name()

    # Six closed, finished campaigns per language, each pair once, K = 3 submitted judgments per item.
    simulated = Campaign.objects.filter(name__startswith="Demo (simulated raters)").select_related("language")
    assert Counter(c.language.code for c in simulated) == dict.fromkeys(LANGUAGES, 6)
    progress = campaigns_progress(c.pk for c in simulated)
    for campaign in simulated:
        assert campaign.state == CampaignState.CLOSED and campaign_is_finished(
            campaign, progress[campaign.pk]
        )
        assert progress[campaign.pk].complete == progress[campaign.pk].items == 17 + 2
        assert not campaign.items.filter(is_identical_pair=True).exists()
        results = sxs_results(campaign, n_boot=1)
        assert results.summary.n_images == 17 and results.summary.n_judgments == 51
        assert len(results.controls) == 3  # the raters judged the controls too
    assert (
        not Assignment.objects.filter(item__campaign__in=simulated)
        .exclude(state=AssignmentState.SUBMITTED)
        .exists()
    )
    assert summary.judgments_created == 18 * 19 * 3 == SxsJudgment.objects.count()
    pairs = {
        (c.language.code, frozenset((c.base_system.name, c.test_system.name)))
        for c in simulated.select_related("base_system", "test_system")
    }
    assert len(pairs) == 18

    # The real demo's German side-by-side campaign is as load_demo left it: open, unjudged.
    real = Campaign.objects.get(name=SXS_CAMPAIGN)
    assert real.state == CampaignState.OPEN and not Assignment.objects.filter(item__campaign=real).exists()

    # One succeeded text-metric run per language, over the four systems.
    runs = list(MetricRun.objects.filter(pk__in=summary.run_ids).order_by("pk"))
    assert [run.language.code for run in runs] == ["de", "ar", "ja"]
    assert {run.params["tokenizer"] for run in runs} == {"whitespace", "char"}
    for run in runs:
        assert run.status == RunStatus.SUCCEEDED, run.error
        assert run.metrics == METRICS
        assert CaptionScore.objects.filter(run=run).count() == 4 * 17 * len(METRICS)

    # The report builder: 3 languages × 6 pairs, every judged image an item with every metric.
    found = comparisons_from_db(metric_run_ids=summary.run_ids, n_boot=1)
    assert Counter(c.language for c in found) == dict.fromkeys(LANGUAGES, 6)
    assert len(found.items) == 18 * 17
    assert all(item.n_judgments == 3 and sorted(item.deltas) == sorted(METRICS) for item in found.items)
    # Nothing left out but the real demo's open campaign.
    assert [(s.campaign, s.metrics) for s in found.skipped] == [(SXS_CAMPAIGN, ())]
    # The grades show through: in German sim-a (accurate) beats sim-d (wrong details) for people and
    # for CIDEr-D; in Arabic it is sim-b that loses to the vague sim-c.
    by_pair = {(c.language, c.m1, c.m2): c for c in found}
    a_vs_d = by_pair[("de", "sim-a", "sim-d")]
    assert a_vs_d.delta_sxs < -50 and a_vs_d.deltas["CIDEr-D"] < 0
    assert by_pair[("ar", "sim-c", "sim-b")].delta_sxs < 0

    # The CLIP checks of the tiny random-weight model: finished, labelled as not results, and the
    # trust table joins them per language (English is the baseline of zero-shot and foils).
    from evaluation.models import ClipProbeCheck, RetrievalCheck
    from evaluation.research.clip_trust_tables import clip_trust_table

    kinds = {kind: check_id for kind, check_id, created in summary.clip_checks}
    assert sorted(kinds) == ["foil", "retrieval", "zeroshot"]
    retrieval = RetrievalCheck.objects.get(pk=kinds["retrieval"])
    assert retrieval.status == RunStatus.SUCCEEDED, retrieval.error
    assert "not results" in retrieval.name
    zeroshot = ClipProbeCheck.objects.get(pk=kinds["zeroshot"])
    foil = ClipProbeCheck.objects.get(pk=kinds["foil"])
    for check in (zeroshot, foil):
        assert check.status == RunStatus.SUCCEEDED, check.error
        assert "not results" in check.name and check.model_key == retrieval.model_key
    assert zeroshot.results["ar"]["n_classes"] == 12 and zeroshot.results["de"]["n_classes"] == 17
    assert zeroshot.results["ar"]["baseline"]["n_classes"] == 12
    assert {code: r["phenomena"]["all"]["n_pairs"] for code, r in foil.results.items()} == dict.fromkeys(
        ["ar", "de", "en", "ja"], 12
    )
    table = clip_trust_table(retrieval.model_key)
    assert [row["language"] for row in table["languages"]] == ["en", "ar", "de", "ja"]
    assert all(row["probes"]["zeroshot"] is not None for row in table["languages"])

    # A second run finds everything and changes nothing.
    before = counts()
    with django_capture_on_commit_callbacks(execute=True):
        again = demo_results_load()
    assert not again.changed and counts() == before
    assert again.run_ids == summary.run_ids


def test_without_the_demo_nothing_is_stored_and_the_message_says_what_to_run(db):
    with pytest.raises(ValidationFailed, match=r"run `manage.py load_demo` first\. Nothing was stored"):
        demo_results_load()
    assert CaptioningSystem.objects.count() == 0 and Campaign.objects.count() == 0


def test_the_command_refuses_a_deployment_and_its_dry_run_stores_nothing(db):
    with override_settings(DEBUG=False), pytest.raises(CommandError, match="simulated judgments"):
        call_command("load_demo_results")
    demo_load()
    before = counts()
    out = io.StringIO()
    with override_settings(DEBUG=True):
        call_command("load_demo_results", "--dry-run", stdout=out)
    assert counts() == before
    assert "Dry run: nothing was stored." in out.getvalue()
    assert "side-by-side campaigns 18 (18 new, 1026 judgments)" in out.getvalue()
    assert Campaign.objects.filter(kind=CampaignKind.SIDE_BY_SIDE).count() == 1
