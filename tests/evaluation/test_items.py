"""The item level of the comparisons builder: one meta-evaluation Item per judged image of a compared
pair, its human score the mean of the image's judgments, its metric deltas from the per-caption
scores of the run that gave the comparison's Δmetric.

Campaigns are built and judged through the annotation services; runs get their scores as rows (what
a run stores).
"""

from __future__ import annotations

import pytest

from annotation.services.campaigns import campaign_open, sxs_campaign_create
from evaluation.models import CaptionScore
from evaluation.research.comparisons import comparisons_from_db
from evaluation.research.meta_evaluation import Item
from tests import factories as f

# Real pairs i1, i2, i3 (i0 is an identical pair), judged by three annotators, scores from m2's side.
PLAN = {1: (2, 1, 3), 2: (-1, 0, -2), 3: (0, 1, 1)}
IDENTICAL_SCORE = 3  # the identical pair i0 and the control: would move every mean if they counted
# Per-caption scores (m1, m2) of images i0 … i3.
CIDER = {0: (0.1, 0.1), 1: (0.2, 0.5), 2: (0.6, 0.4), 3: (0.3, 0.35)}
BLEU4 = {0: (0.0, 0.0), 1: (0.1, 0.4), 2: (0.2, 0.1), 3: (0.3, 0.3)}


def scored_run(name, language, m1, m2, images, per_caption, *, corpus=None):
    """A finished run whose per-caption scores are ``per_caption[metric][i] = (m1's, m2's)`` on
    ``images[i]``, and whose corpus scores are their means (or ``corpus[metric] = (m1's, m2's)``)."""
    run = f.MetricRunFactory(
        name=name, language=language, metrics=list(per_caption), systems=[m1, m2], reference_set__name=name
    )
    for metric, values in per_caption.items():
        for column, system in enumerate((m1, m2)):
            for i, pair in values.items():
                f.CaptionScoreFactory(
                    run=run, system=system, image=images[i], metric=metric, value=pair[column]
                )
            mean = sum(pair[column] for pair in values.values()) / len(values)
            value = corpus[metric][column] if corpus and metric in corpus else mean
            f.CorpusScoreFactory(run=run, system=system, metric=metric, value=value)
    return run


@pytest.fixture
def judged(db, german):
    """A finished German campaign, m2 against m1, over i0 … i3 (i0 an identical pair) and one
    identical control, K = 3, judged as PLAN says."""
    m1, m2, images = f.sxs_systems(images=4, language=german, identical=1, m1_name="base", m2_name="test")
    campaign = campaign_open(
        campaign_id=sxs_campaign_create(
            name="Vergleich",
            language_code="de",
            base_system=m1,
            test_system=m2,
            batch_size=10,
            replication=3,
            controls_identical=1,
            seed=3,
        ).pk
    )
    index = {image.key: i for i, image in enumerate(images)}
    annotators = [f.AnnotatorFactory(languages=[german]) for _ in range(3)]
    for n, annotator in enumerate(annotators):
        f.sxs_judged_all(
            annotator,
            campaign,
            lambda key, n=n: PLAN[index[key]][n] if index[key] in PLAN else IDENTICAL_SCORE,
            control_score=lambda kind: IDENTICAL_SCORE,
        )
    assert campaign.items.filter(is_identical_pair=True).count() == 1
    assert campaign.items.filter(is_control=True).count() == 1
    return {"campaign": campaign, "m1": m1, "m2": m2, "images": images, "language": german}


def test_items_are_the_judged_real_pairs_with_their_mean_and_caption_deltas(judged):
    m1, m2, images = judged["m1"], judged["m2"], judged["images"]
    run = scored_run("r", judged["language"], m1, m2, images, {"CIDEr-D": CIDER, "BLEU-4": BLEU4})

    found = comparisons_from_db(metric_run_ids=[run.pk])

    assert len(found) == 1
    # i0 (identical pair) and the control are not items; the rest come by image key.
    assert [(i.language, i.m1, i.m2, i.image, i.n_judgments) for i in found.items] == [
        ("de", "base", "test", images[n].key, 3) for n in (1, 2, 3)
    ]
    assert [i.human for i in found.items] == pytest.approx([2.0, -1.0, 2 / 3])
    assert [i.deltas for i in found.items] == [
        pytest.approx({"CIDEr-D": 0.3, "BLEU-4": 0.3}),
        pytest.approx({"CIDEr-D": -0.2, "BLEU-4": -0.1}),
        pytest.approx({"CIDEr-D": 0.05, "BLEU-4": 0.0}),
    ]
    assert all(isinstance(i, Item) for i in found.items)
    assert found.skipped == []


def test_item_deltas_come_from_the_run_that_gave_the_comparisons_delta(judged):
    m1, m2, images, german = judged["m1"], judged["m2"], judged["images"], judged["language"]
    # Both runs score CIDEr-D; only the second has BLEU-4.
    first = scored_run("first", german, m1, m2, images, {"CIDEr-D": CIDER})
    flipped = {i: (b, a) for i, (a, b) in CIDER.items()}
    second = scored_run("second", german, m1, m2, images, {"CIDEr-D": flipped, "BLEU-4": BLEU4})

    found = comparisons_from_db(metric_run_ids=[first.pk, second.pk])
    assert found.sources[0].runs == {"CIDEr-D": first.pk, "BLEU-4": second.pk}
    assert [item.deltas["CIDEr-D"] for item in found.items] == pytest.approx([0.3, -0.2, 0.05])
    assert [item.deltas["BLEU-4"] for item in found.items] == pytest.approx([0.3, -0.1, 0.0])

    # The other order: the second run wins CIDEr-D, and its per-caption scores give the deltas.
    found = comparisons_from_db(metric_run_ids=[second.pk, first.pk])
    assert found.sources[0].runs == {"CIDEr-D": second.pk, "BLEU-4": second.pk}
    assert [item.deltas["CIDEr-D"] for item in found.items] == pytest.approx([-0.3, 0.2, -0.05])


def test_a_missing_caption_score_leaves_the_metric_out_of_that_item_and_says_so(judged):
    m1, m2, images = judged["m1"], judged["m2"], judged["images"]
    run = scored_run("r", judged["language"], m1, m2, images, {"CIDEr-D": CIDER, "BLEU-4": BLEU4})
    CaptionScore.objects.filter(run=run, system=m1, image=images[2], metric="BLEU-4").delete()

    found = comparisons_from_db(metric_run_ids=[run.pk])

    assert [sorted(item.deltas) for item in found.items] == [
        ["BLEU-4", "CIDEr-D"],
        ["CIDEr-D"],
        ["BLEU-4", "CIDEr-D"],
    ]
    assert found.items[1].human == -1.0  # the item stays, with its judgments
    assert found.items[1].deltas["CIDEr-D"] == pytest.approx(-0.2)
    (skipped,) = found.skipped
    assert (skipped.campaign_id, skipped.m1, skipped.m2, skipped.metrics) == (
        judged["campaign"].pk,
        "base",
        "test",
        ("BLEU-4",),
    )
    assert f"run #{run.pk} has no per-caption score of both systems on 1 of the 3 judged images" in str(
        skipped
    )
    # The comparison itself keeps its corpus-level Δ.
    assert "BLEU-4" in found[0].deltas


def test_a_campaign_that_gives_no_comparison_gives_no_items(judged, db):
    m1, m2, images = judged["m1"], judged["m2"], judged["images"]
    # A run in another language: the campaign is left out, so are its images.
    french = f.LanguageFactory(code="fr", name="French")
    elsewhere = f.MetricRunFactory(name="fr", language=french, systems=[m1, m2])
    found = comparisons_from_db(metric_run_ids=[elsewhere.pk])
    assert list(found) == [] and found.items == []
    assert "no selected metric run is in de" in found.skipped[0].reason

    # A campaign nobody has judged: no comparison, no item, even with a run that scores it.
    german = judged["language"]
    m3 = f.SystemFactory(name="third")
    for image in images:
        f.SystemCaptionFactory(system=m3, image=image, language=german, text=f"Drei {image.key}")
    unjudged = sxs_campaign_create(
        name="Ungeprüft", language_code="de", base_system=m1, test_system=m3, replication=3, seed=1
    )
    run = scored_run("r", german, m1, m3, images, {"CIDEr-D": CIDER})
    found = comparisons_from_db(metric_run_ids=[run.pk], campaign_ids=[unjudged.pk])
    assert list(found) == [] and found.items == []


def test_items_cost_one_query_for_all_caption_scores(judged, german, django_assert_num_queries):
    m1, m2, images = judged["m1"], judged["m2"], judged["images"]
    run = scored_run("r", german, m1, m2, images, {"CIDEr-D": CIDER, "BLEU-4": BLEU4})
    # Run, campaigns, their progress, corpus scores, one judgments query per campaign, caption scores.
    with django_assert_num_queries(6):
        found = comparisons_from_db(metric_run_ids=[run.pk])
    assert len(found.items) == 3

    # A second campaign over the same images (another pair), in the same run: one query more, for
    # its judgments; still one for every caption score.
    m3 = f.SystemFactory(name="third")
    for i, image in enumerate(images):
        f.SystemCaptionFactory(system=m3, image=image, language=german, text=f"Drei {image.key}")
        for metric in ("CIDEr-D", "BLEU-4"):
            f.CaptionScoreFactory(run=run, system=m3, image=image, metric=metric, value=i / 10)
    for metric in ("CIDEr-D", "BLEU-4"):
        f.CorpusScoreFactory(run=run, system=m3, metric=metric, value=0.15)
    run.systems.add(m3)
    other = campaign_open(
        campaign_id=sxs_campaign_create(
            name="Zweiter", language_code="de", base_system=m2, test_system=m3, batch_size=10, replication=1
        ).pk
    )
    f.sxs_judged_all(f.AnnotatorFactory(languages=[german]), other, lambda key: 1)
    with django_assert_num_queries(7):
        found = comparisons_from_db(metric_run_ids=[run.pk])
    assert len(found) == 2 and len(found.items) == 3 + 4
    assert [item.key for item in found.items] == [("base", "test", "de")] * 3 + [("test", "third", "de")] * 4
    assert found.items[3].deltas == pytest.approx({"CIDEr-D": 0.0 - 0.1, "BLEU-4": 0.0 - 0.0})


def test_the_report_judges_metrics_on_these_items(judged, tmp_path):
    from evaluation.research.reports.render import report_write
    from evaluation.research.reports.report import report_from_db

    m1, m2, images = judged["m1"], judged["m2"], judged["images"]
    run = scored_run("r", judged["language"], m1, m2, images, {"CIDEr-D": CIDER, "BLEU-4": BLEU4})
    report = report_from_db(metric_run_ids=[run.pk], n_boot=50, n_permutations=50)
    # By hand: i1 (mean +2), i2 (−1), i3 (+2/3) against ΔCIDEr-D +0.3, −0.2, +0.05: all three agree;
    # ΔBLEU-4 is 0 on i3, a tie against a preference: 2 of 3.
    de = report.trust.languages["de"]
    assert (de.n_items, de.n_pairs, de.status) == (3, 1, "too_few")
    assert de.verdict("CIDEr-D").result.acc23 == 1.0
    assert de.verdict("BLEU-4").result.acc23 == pytest.approx(2 / 3)
    assert report.correlations["CIDEr-D"]["de"].n_soft == 1
    assert any("too few items" in note for note in report.notes())
    names = {path.name for path in report_write(report, tmp_path)}
    assert {"trust.txt", "trust.csv", "trust.json", "trust_heatmap.png", "trust_heatmap.svg"} <= names
    assert (tmp_path / "trust_heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "too few items (3)" in (tmp_path / "trust.txt").read_text()
    assert "trust_heatmap.svg: the same as SVG" in (tmp_path / "index.txt").read_text()


def test_the_report_page_shows_the_trust_table_and_its_heatmap(judged, researcher, client):
    from django.urls import reverse

    m1, m2, images = judged["m1"], judged["m2"], judged["images"]
    run = scored_run("r", judged["language"], m1, m2, images, {"CIDEr-D": CIDER, "BLEU-4": BLEU4})
    client.force_login(researcher)
    page = client.get(reverse("reports:report"), {"runs": run.pk}).content.decode()
    assert 'id="trust-table"' in page
    assert '<tr data-metric="CIDEr-D"><th scope="row">CIDEr-D</th><td class="num" data-language="all"' in page
    assert "too few items (3)" in page
    assert "soft pairwise acc [95% CI]" in page  # the correlation table has the judgments behind it
    for fmt, start in (("png", b"\x89PNG"), ("svg", b"<?xml")):
        response = client.get(reverse("reports:trust-heatmap", kwargs={"fmt": fmt}), {"runs": run.pk})
        assert response.status_code == 200 and response.content.startswith(start)
        if fmt == "svg":  # text stays text: the figure names the runs its numbers come from
            assert (
                f"metric runs: #{run.pk}" in response.content.decode()
                and "too few" in response.content.decode()
            )
    assert (
        client.get(reverse("reports:trust-heatmap", kwargs={"fmt": "png"}), {"runs": 98765}).status_code
        == 404
    )
    client.logout()
    anonymous = client.get(reverse("reports:trust-heatmap", kwargs={"fmt": "png"}), {"runs": run.pk})
    assert anonymous.status_code == 302


def test_correlate_runs_adds_the_soft_pairwise_accuracy_of_the_judged_pairs(judged):
    import io
    import json

    from django.core.management import call_command

    m1, m2, images = judged["m1"], judged["m2"], judged["images"]
    run = scored_run("r", judged["language"], m1, m2, images, {"CIDEr-D": CIDER})
    out = io.StringIO()
    call_command(
        "correlate",
        "--runs",
        str(run.pk),
        "--format",
        "json",
        "--bootstrap",
        "0",
        stdout=out,
        stderr=io.StringIO(),
    )
    cell = json.loads(out.getvalue())["CIDEr-D"]["de"]
    # Three judged images, people and CIDEr-D agree on the direction of each: the same sign-flip
    # draws give both the same p-value.
    assert cell["pairwise_accuracy"] == 1.0 and cell["n_soft"] == 1
    assert cell["soft_pairwise_accuracy"] == 1.0
