"""Research reports: comparisons read from side-by-side campaigns and metric runs, per-caption rows from
screen-1 ratings, the scatter plots, the ``report`` command, the demo end to end, and the report page.

Campaigns are built and worked through the annotation services; metric runs get their scores as
rows (what a run stores), except on the demo, where a real text-metric run computes them.
"""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image as PILImage
from scipy import stats

from annotation.assignment.engine import batch_request
from annotation.models import Annotator, Assignment, Campaign, CampaignKind, ControlKind, SystemCaption
from annotation.services import work
from annotation.services.campaigns import campaign_open, sxs_campaign_create
from annotation.services.demo import GOOD_SYSTEM, PHOTOS, SXS_CAMPAIGN, WEAK_SYSTEM, demo_load
from core.csp import directives_from_string
from core.errors import ValidationFailed
from evaluation.metrics.references import reference_set_from_campaign
from evaluation.models import (
    MetricRun,
    RunStatus,
)
from evaluation.research.caption_rows import per_caption_agreement_from_rows, per_caption_rows
from evaluation.research.comparisons import comparisons_from_db
from evaluation.research.comparisons_csv import read_comparisons_csv
from evaluation.research.correlation import Comparison
from evaluation.research.meta_evaluation import tie_calibrated_pairs
from evaluation.research.reports.plots import language_styles, scatter, scatter_filename, write_scatter_plots
from evaluation.runs.plan import metric_run_create
from tests import factories as f

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def succeeded_run(name, language, systems, metrics, *, reference_set=None):
    return f.MetricRunFactory(
        name=name,
        language=language,
        reference_set=reference_set or f.ReferenceSetFactory(name=f"refs for {name}", language=language),
        metrics=list(metrics),
        systems=systems,
    )


def corpus(run, system, images=(), **values):
    """Corpus scores of ``system`` in ``run``; with ``images``, also the per-caption scores a real run
    stores with them (each equal to the corpus score, so their mean is it)."""
    names = {"cider_d": "CIDEr-D", "bleu_4": "BLEU-4", "clipscore": "CLIPScore"}
    for key, value in values.items():
        f.CorpusScoreFactory(run=run, system=system, metric=names[key], value=value)
        for image in images:
            f.CaptionScoreFactory(run=run, system=system, image=image, metric=names[key], value=value)


# --- Two side-by-side campaigns and their comparisons ----------------------------------------------


@pytest.fixture
def world(db, german):
    """German captions of systems sys-a, sys-b, sys-c for images i0, i1, i2; campaign 1 compares
    sys-a (m1) with sys-b (m2), campaign 2 sys-b (m1) with sys-c (m2), K = 3, no controls.

    Scores from m2's side per image (three annotators):
    campaign 1: i0 2, 1, -1 -> WIN; i1 -2, -3, 0 -> LOSS; i2 3, 3, 0 -> WIN   => ΔS×S = +33.3
    campaign 2: i0 1, 1, 1 -> WIN;  i1 1, 2, 0 -> WIN;    i2 0, 0, 1 -> tie   => ΔS×S = +66.7
    """
    systems = {name: f.SystemFactory(name=name) for name in ("sys-a", "sys-b", "sys-c")}
    images = [f.ImageFactory(key=f"i{n}") for n in range(3)]
    for name, system in systems.items():
        for image in images:
            SystemCaption.objects.create(
                system=system, image=image, language=german, text=f"{name} beschreibt {image.key}"
            )
    plans = {
        "c1": {"i0": [2, 1, -1], "i1": [-2, -3, 0], "i2": [3, 3, 0]},
        "c2": {"i0": [1, 1, 1], "i1": [1, 2, 0], "i2": [0, 0, 1]},
    }
    annotators = [f.AnnotatorFactory(user__username=n, languages=[german]) for n in ("ann", "ben", "cid")]
    campaigns = {}
    for label, (m1, m2) in {"c1": ("sys-a", "sys-b"), "c2": ("sys-b", "sys-c")}.items():
        campaign = sxs_campaign_create(
            name=f"Vergleich {label}",
            language_code="de",
            base_system=systems[m1],
            test_system=systems[m2],
            batch_size=3,
            replication=3,
            seed=1,
        )
        campaign = campaign_open(campaign_id=campaign.pk)
        for n, annotator in enumerate(annotators):
            f.sxs_judged_all(annotator, campaign, lambda key, plan=plans[label], n=n: plan[key][n])
        campaigns[label] = campaign
    run = succeeded_run("de run", german, systems.values(), ["CIDEr-D", "BLEU-4"])
    corpus(run, systems["sys-a"], images, cider_d=0.50, bleu_4=0.20)
    corpus(run, systems["sys-b"], images, cider_d=0.70, bleu_4=0.25)
    corpus(run, systems["sys-c"], images, cider_d=0.60)  # no BLEU-4 for sys-c
    return {
        "systems": systems,
        "images": images,
        "campaigns": campaigns,
        "run": run,
        "annotators": annotators,
    }


def test_comparisons_from_db_pairs_delta_sxs_with_corpus_score_differences(world):
    comparisons = comparisons_from_db(metric_run_ids=[world["run"].pk])
    assert [(c.m1, c.m2, c.language) for c in comparisons] == [
        ("sys-a", "sys-b", "de"),
        ("sys-b", "sys-c", "de"),
    ]
    first, second = comparisons
    assert first.delta_sxs == pytest.approx(100 / 3)
    assert first.deltas == pytest.approx({"CIDEr-D": 0.20, "BLEU-4": 0.05})
    assert second.delta_sxs == pytest.approx(200 / 3)
    assert second.deltas == pytest.approx({"CIDEr-D": -0.10})
    # The missing BLEU-4 of sys-c is said, not hidden.
    assert [(s.m1, s.m2, s.metrics) for s in comparisons.skipped] == [("sys-b", "sys-c", ("BLEU-4",))]
    source = comparisons.sources[0]
    assert source.campaign_id == world["campaigns"]["c1"].pk
    assert (source.n_images, source.n_judgments) == (3, 9)
    assert source.runs == {"CIDEr-D": world["run"].pk, "BLEU-4": world["run"].pk}
    assert source.m1_scores["CIDEr-D"] == 0.50 and source.m2_scores["CIDEr-D"] == 0.70


def test_comparisons_filter_by_campaign_language_and_metric(world, db):
    c2 = world["campaigns"]["c2"]
    only = comparisons_from_db(metric_run_ids=[world["run"].pk], campaign_ids=[c2.pk], metrics=["cider-d"])
    assert [(c.m1, c.m2, dict(c.deltas)) for c in only] == [
        ("sys-b", "sys-c", pytest.approx({"CIDEr-D": -0.1}))
    ]
    f.LanguageFactory(code="fr", name="French")
    assert list(comparisons_from_db(metric_run_ids=[world["run"].pk], language_codes=["fr"])) == []
    with pytest.raises(ValidationFailed, match="no language “xx”"):
        comparisons_from_db(metric_run_ids=[world["run"].pk], language_codes=["xx"])
    with pytest.raises(ValidationFailed, match="Unknown metric"):
        comparisons_from_db(metric_run_ids=[world["run"].pk], metrics=["SPICE"])
    with pytest.raises(ValidationFailed, match="no side-by-side campaign #999999"):
        comparisons_from_db(metric_run_ids=[world["run"].pk], campaign_ids=[999999])


def test_comparisons_skip_with_reasons_and_refuse_unfinished_runs(world, german):
    systems = world["systems"]
    # A third campaign nobody has judged yet, and one repeating pair c1 the other way round.
    idle = campaign_open(
        campaign_id=sxs_campaign_create(
            name="Noch leer", language_code="de", base_system=systems["sys-a"], test_system=systems["sys-c"]
        ).pk
    )
    again = campaign_open(
        campaign_id=sxs_campaign_create(
            name="Nochmal", language_code="de", base_system=systems["sys-b"], test_system=systems["sys-a"]
        ).pk
    )
    # By default only finished campaigns count; the unfinished ones are listed, not dropped.
    comparisons = comparisons_from_db(metric_run_ids=[world["run"].pk])
    reasons = {s.campaign_id: s.reason for s in comparisons.skipped if not s.metrics}
    assert (
        reasons[idle.pk]
        == "not finished (open; 0 of 3 items judged 3 times): choose the campaign to include it"
    )
    assert reasons[again.pk].startswith("not finished (open; 0 of ")
    assert len(comparisons) == 2
    # Chosen by id, a campaign counts whatever its state, and what cannot be used says why.
    chosen_ids = [*(c.pk for c in world["campaigns"].values()), idle.pk, again.pk]
    comparisons = comparisons_from_db(metric_run_ids=[world["run"].pk], campaign_ids=chosen_ids)
    reasons = {s.campaign_id: s.reason for s in comparisons.skipped if not s.metrics}
    assert reasons[idle.pk] == "no submitted judgment of a real pair yet"
    assert "already compared by campaign “Vergleich c1”" in reasons[again.pk]
    assert len(comparisons) == 2

    # A run that scores only one of the systems: the pair is skipped, and the reason says so.
    english = f.LanguageFactory(code="en", name="English")
    partial = succeeded_run("partial", german, [systems["sys-a"]], ["CIDEr-D"])
    corpus(partial, systems["sys-a"], cider_d=0.4)
    other = succeeded_run("english", english, [systems["sys-a"], systems["sys-b"]], ["CIDEr-D"])
    only_partial = comparisons_from_db(metric_run_ids=[partial.pk, other.pk])
    assert list(only_partial) == []
    c1_reason = next(s.reason for s in only_partial.skipped if s.campaign_id == world["campaigns"]["c1"].pk)
    assert c1_reason == (
        f"no selected run in de scores both sys-a and sys-b (run #{partial.pk} scores sys-a but not sys-b)"
    )

    # Two runs score the same pair: the first given is used, the other is noted.
    second = succeeded_run("second", german, [systems["sys-a"], systems["sys-b"]], ["CIDEr-D"])
    corpus(second, systems["sys-a"], cider_d=0.1)
    corpus(second, systems["sys-b"], cider_d=0.9)
    chosen = comparisons_from_db(metric_run_ids=[second.pk, world["run"].pk], metrics=["CIDEr-D"])
    assert chosen[0].deltas["CIDEr-D"] == pytest.approx(0.8)
    assert any(f"also scored by run #{world['run'].pk}" in s.reason for s in chosen.skipped)

    running = succeeded_run("running", german, [systems["sys-a"]], ["CIDEr-D"])
    MetricRun.objects.filter(pk=running.pk).update(status=RunStatus.RUNNING)
    with pytest.raises(ValidationFailed, match=f"run #{running.pk} has not succeeded"):
        comparisons_from_db(metric_run_ids=[running.pk])
    with pytest.raises(ValidationFailed, match="no metric run #999999"):
        comparisons_from_db(metric_run_ids=[999999])
    with pytest.raises(ValidationFailed, match="at least one metric run"):
        comparisons_from_db(metric_run_ids=[])


def test_control_items_never_enter_delta_sxs(db, german):
    m1, m2, _ = f.sxs_systems(images=3, language=german, m1_name="base", m2_name="test")
    campaign = campaign_open(
        campaign_id=sxs_campaign_create(
            name="Mit Kontrollen",
            language_code="de",
            base_system=m1,
            test_system=m2,
            batch_size=5,
            replication=1,
            controls_identical=1,
            controls_wrong_image=1,
            seed=5,
        ).pk
    )
    annotator = f.AnnotatorFactory(languages=[german])
    # Every real pair a loss; the controls judged as wins would turn ΔS×S positive if they counted.
    f.sxs_judged_all(annotator, campaign, lambda key: -2, control_score=lambda kind: 3)
    run = succeeded_run("r", german, [m1, m2], ["CIDEr-D"])
    corpus(run, m1, cider_d=0.3)
    corpus(run, m2, cider_d=0.2)
    (comparison,) = comparisons_from_db(metric_run_ids=[run.pk])
    assert comparison.delta_sxs == -100.0
    assert campaign.items.filter(is_control=True).count() == 2


# --- Per-caption rows from screen-1 ratings ---------------------------------------------------------


RATINGS = {  # image key -> (first annotator, second annotator)
    "p0": ("excellent", "good"),
    "p1": ("bad", "bad"),
    "p2": ("medium", "nei"),
    "p3": ("good", "medium"),
}
SCORES = {"p0": 0.9, "p1": 0.1, "p2": 0.5, "p3": 0.6}


@pytest.fixture
def rated(db, german):
    """A German caption campaign whose prompt system is `prompt-sys`; two annotators rate its English
    captions of p0..p3 as RATINGS and submit. English and German runs score the system's captions."""
    english = f.LanguageFactory(code="en", name="English")
    system = f.SystemFactory(name="prompt-sys")
    other = f.SystemFactory(name="other-sys")
    images = {key: f.ImageFactory(key=key) for key in RATINGS}
    for key, image in images.items():
        SystemCaption.objects.create(system=system, image=image, language=english, text=f"a photo {key}")
        SystemCaption.objects.create(system=system, image=image, language=german, text=f"ein Foto {key}")
        SystemCaption.objects.create(system=other, image=image, language=english, text=f"something {key}")
    campaign = f.CampaignFactory(language=german, prompt_system=system, batch_size=4, replication=2)
    campaign = campaign_open(campaign_id=campaign.pk)
    for n in range(2):
        annotator = f.AnnotatorFactory(user__username=f"rater{n}", languages=[german])
        batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
        for a in batch.assignments.select_related("item__image"):
            work.rating_save(
                annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value=RATINGS[a.item.image.key][n]
            )
        work.writing_open(annotator=annotator, batch_id=batch.pk)
        for a in batch.assignments.all():
            work.draft_save(
                annotator=annotator,
                batch_id=batch.pk,
                assignment_id=a.pk,
                text=f"Bild {a.pk}",
                base_revision=0,
            )
        work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    en_run = succeeded_run("rated en", english, [system, other], ["CLIPScore"])
    de_run = succeeded_run("rated de", german, [system], ["CLIPScore"])
    for key, image in images.items():
        f.CaptionScoreFactory(run=en_run, system=system, image=image, metric="CLIPScore", value=SCORES[key])
        f.CaptionScoreFactory(run=en_run, system=other, image=image, metric="CLIPScore", value=0.0)
        f.CaptionScoreFactory(run=de_run, system=system, image=image, metric="CLIPScore", value=SCORES[key])
    return {"en_run": en_run, "de_run": de_run, "campaign": campaign, "system": system}


def expected_agreement(variant="seed-001 (m=4)"):
    scale = {"excellent": 4, "good": 3, "medium": 2, "bad": 1}
    pairs = [(SCORES[k], scale[v]) for k, values in RATINGS.items() for v in values if v != "nei"]
    x, y = zip(*pairs)
    calibrated = tie_calibrated_pairs(y, x)
    assert calibrated.n == 21
    return {
        "n": 7,
        "n_not_enough_info": 1,
        "kendall_tau_b": stats.kendalltau(x, y, variant="b").statistic,
        # Every rating occurs and the scores take 4 values: seed 001's τ_c equals scipy's here.
        "kendall_tau_c": stats.kendalltau(x, y, variant="c").statistic,
        "spearman": stats.spearmanr(x, y).statistic,
        "kendall_tau_c_variant": variant,
        # Tie-calibrated over the 21 caption pairs (the definitions are pinned in test_meta_evaluation).
        "tau23": calibrated.tau23,
        "acc23": calibrated.acc23,
        "acc23_epsilon": calibrated.epsilon,
        "acc23_pairs_sampled": False,
    }


def test_per_caption_rows_pair_each_screen1_rating_with_the_score_of_that_caption(rated):
    rows = per_caption_rows(metric_run_ids=[rated["en_run"].pk, rated["de_run"].pk])
    # Only the English run scores the rated (English) captions; the other system was never rated.
    assert {(r.language, r.system, r.transferred) for r in rows} == {("en", "prompt-sys", False)}
    assert len(rows) == 8
    by_key = {}
    for r in rows:
        by_key.setdefault(r.image_key, []).append((r.score, r.rating, r.rater_language))
    assert sorted(by_key["p2"]) == [(0.5, "MEDIUM", "de"), (0.5, "NOT-ENOUGH-INFO", "de")]
    agreement = per_caption_agreement_from_rows(rows)
    assert list(agreement) == ["CLIPScore"]
    assert agreement["CLIPScore"]["en"] == pytest.approx(expected_agreement())


def test_per_caption_rows_can_transfer_ratings_to_translations(rated):
    rows = per_caption_rows(metric_run_ids=[rated["de_run"].pk], transfer=True)
    assert {(r.language, r.transferred) for r in rows} == {("de", True)}
    assert per_caption_agreement_from_rows(rows)["CLIPScore"]["de"] == pytest.approx(expected_agreement())
    # Only the ratings of caption campaigns in the languages asked for.
    assert list(per_caption_rows(metric_run_ids=[rated["en_run"].pk], language_codes=["en"])) == []


# --- Plots -------------------------------------------------------------------------------------------


PAPER_LIKE = [
    Comparison("m-a", "m-b", "de", 20.0, {"CIDEr-D": 0.05, "BLEU-4": 0.01}),
    Comparison("m-b", "m-c", "de", -10.0, {"CIDEr-D": -0.02, "BLEU-4": 0.0}),
    Comparison("m-a", "m-c", "de", 8.0, {"CIDEr-D": 0.03, "BLEU-4": 0.01}),
    Comparison("m-a", "m-b", "ja", 35.0, {"CIDEr-D": 0.11, "BLEU-4": 0.02}),
    Comparison("m-b", "m-c", "ja", -4.0, {"CIDEr-D": 0.01}),
]


def test_scatter_png_is_a_real_image():
    data = scatter(PAPER_LIKE, "CIDEr-D")
    assert data.startswith(PNG_MAGIC)
    image = PILImage.open(io.BytesIO(data))
    image.load()
    assert image.format == "PNG"
    assert image.size[0] >= 900 and image.size[1] >= 600  # 150 dpi
    assert image.getextrema() != ((255, 255), (255, 255), (255, 255), (255, 255))  # not blank


def test_scatter_svg_is_xml_with_readable_labels_and_a_legend():
    data = scatter(PAPER_LIKE, "CIDEr-D", fmt="svg")
    root = ET.fromstring(data)  # noqa: S314 (our own output)
    assert root.tag.endswith("svg")
    text = data.decode("utf-8")
    assert "Δ CIDEr-D (m2 − m1)" in text
    assert "ΔS×S (percentage points)" in text
    assert "de (3)" in text and "ja (2)" in text  # one legend entry per language
    assert "mirrored (m1 vs m2)" in text
    assert "N = 10 (5 comparisons × 2 directions)" in text
    # Without mirroring the legend has no mirrored entry and N is the comparisons.
    once = scatter(PAPER_LIKE, "CIDEr-D", fmt="svg", both_directions=False).decode("utf-8")
    assert "mirrored" not in once and "N = 5 ·" in once
    # Deterministic: no timestamp.
    assert scatter(PAPER_LIKE, "CIDEr-D", fmt="svg") == data


def test_scatter_with_fewer_than_three_comparisons_says_so():
    text = scatter(PAPER_LIKE[:2], "BLEU-4", fmt="svg").decode("utf-8")
    assert "n/a (fewer than 3 comparisons)" in text
    with pytest.raises(ValueError, match="unknown plot format"):
        scatter(PAPER_LIKE, "CIDEr-D", fmt="gif")


def test_languages_keep_their_marker_across_plots(tmp_path):
    styles = language_styles(["ja", "de", "ar", "de"])
    assert list(styles) == ["ar", "de", "ja"]
    assert len(set(styles.values())) == 3
    written = write_scatter_plots(PAPER_LIKE, tmp_path)
    assert [p.name for p in written] == [
        "scatter_CIDEr-D.png",
        "scatter_CIDEr-D.svg",
        "scatter_BLEU-4.png",
        "scatter_BLEU-4.svg",
    ]
    assert all(p.stat().st_size > 1000 for p in written)
    assert scatter_filename("Ref CLIP/Score", "png") == "scatter_Ref_CLIP_Score.png"


# --- The report command ------------------------------------------------------------------------------


def run_report(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("report", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


DB_FILES = {
    "correlations.txt",
    "correlations.csv",
    "correlations.json",
    "comparisons.csv",
    "comparisons.json",
    "table1.txt",
    "table1.csv",
    "table2.txt",
    "table2.csv",
    "sxs.txt",
    "sxs.csv",
    "index.txt",
}


def test_report_command_prints_the_table_and_writes_every_file(world, tmp_path):
    out_dir = tmp_path / "report"
    stdout, _ = run_report("--runs", str(world["run"].pk), "--out", str(out_dir), "--bootstrap", "200")
    assert "2 comparisons from database" in stdout
    assert "Only 2 comparisons: a correlation needs at least 3 comparisons" in stdout
    assert "kendall_tau_b [95% CI]" in stdout  # the correlate command's table
    assert "Left out: sys-c vs sys-b in de" in stdout
    names = {p.name for p in out_dir.iterdir()}
    assert DB_FILES | {"scatter_CIDEr-D.png", "scatter_CIDEr-D.svg", "scatter_BLEU-4.png"} <= names
    assert not any(name.startswith("per_caption") for name in names)  # no rated caption here

    data = json.loads((out_dir / "correlations.json").read_text())
    assert data["CIDEr-D"]["all"]["n"] == 4 and data["CIDEr-D"]["all"]["pearson"] is None
    # comparisons.csv reads back; BLEU-4, which sys-c lacks, is only in comparisons.json.
    comparisons = read_comparisons_csv(out_dir / "comparisons.csv")
    assert [(c.m1, c.m2, set(c.deltas)) for c in comparisons] == [
        ("sys-a", "sys-b", {"cider-d"}),
        ("sys-b", "sys-c", {"cider-d"}),
    ]
    assert json.loads((out_dir / "comparisons.json").read_text())["comparisons"][0]["deltas"]["BLEU-4"] == (
        pytest.approx(0.05)
    )
    sxs = list(csv.DictReader(io.StringIO((out_dir / "sxs.csv").read_text())))
    assert [(r["campaign"], r["ΔS×S"], r["in correlation"]) for r in sxs] == [
        ("Vergleich c1", str(100 / 3), "true"),
        ("Vergleich c2", str(200 / 3), "true"),
    ]
    index = (out_dir / "index.txt").read_text()
    for name in names - {"index.txt"}:
        assert name in index
    assert "read first" in index and "sys-b vs sys-a" in index
    PILImage.open(out_dir / "scatter_CIDEr-D.png").verify()
    ET.parse(out_dir / "scatter_CIDEr-D.svg")  # noqa: S314 (our own output)


def test_report_command_formats_and_errors(world, tmp_path):
    stdout, stderr = run_report("--runs", str(world["run"].pk), "--format", "json", "--bootstrap", "0")
    assert set(json.loads(stdout)) == {"CIDEr-D", "BLEU-4"}
    assert "Only 2 comparisons" in stderr
    stdout, _ = run_report("--runs", str(world["run"].pk), "--format", "csv", "--bootstrap", "0")
    assert stdout.startswith("metric,language,n,n_comparisons,pearson")
    with pytest.raises(CommandError, match="Give the metric runs"):
        run_report()
    with pytest.raises(CommandError, match="no metric run #424242"):
        run_report("--runs", "424242")
    with pytest.raises(CommandError, match="expected ids separated by commas"):
        run_report("--runs", "a,b")
    with pytest.raises(CommandError, match="leave it out with --comparisons"):
        run_report("--runs", "1", "--comparisons", str(tmp_path / "x.csv"))


def test_report_command_with_three_comparisons_gives_coefficients(world, german, tmp_path):
    systems = world["systems"]
    campaign = campaign_open(
        campaign_id=sxs_campaign_create(
            name="Vergleich c3",
            language_code="de",
            base_system=systems["sys-a"],
            test_system=systems["sys-c"],
            batch_size=3,
            replication=3,
            seed=2,
        ).pk
    )
    for n, annotator in enumerate(world["annotators"]):
        f.sxs_judged_all(annotator, campaign, lambda key, n=n: -1 if n else 0)  # every image a loss
    out_dir = tmp_path / "r"
    stdout, _ = run_report(
        "--runs", str(world["run"].pk), "--metrics", "CIDEr-D", "--out", str(out_dir), "--bootstrap", "100"
    )
    data = json.loads((out_dir / "correlations.json").read_text())["CIDEr-D"]
    # ΔS×S (33.3, 66.7, -100) against ΔCIDEr-D (0.2, -0.1, 0.1), mirrored.
    x = [100 / 3, 200 / 3, -100.0]
    y = [0.2, -0.1, 0.1]
    expected = stats.pearsonr(x + [-v for v in x], y + [-v for v in y]).statistic
    assert data["all"]["n"] == 6 and data["de"]["n"] == 6
    assert data["all"]["pearson"] == pytest.approx(expected)
    assert "Only" not in stdout
    once = json.loads(
        run_report(
            "--runs", str(world["run"].pk), "--metrics", "CIDEr-D", "--one-direction", "--format", "json"
        )[0]
    )
    assert once["CIDEr-D"]["all"]["n"] == 3
    assert once["CIDEr-D"]["all"]["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic)


def test_report_command_from_a_comparisons_file(tmp_path, db):
    path = tmp_path / "table4.csv"
    path.write_text(
        "m1,m2,language,delta_sxs,delta_cider-d\n"
        "a,b,de,20,0.05\nb,c,de,-10,-0.02\na,c,de,8,0.03\na,b,ja,35,0.11\n",
        encoding="utf-8",
    )
    out_dir = tmp_path / "out"
    stdout, _ = run_report("--comparisons", str(path), "--out", str(out_dir), "--bootstrap", "0")
    assert "4 comparisons from file" in stdout and "CIDEr-D" in stdout  # the platform's spelling
    names = {p.name for p in out_dir.iterdir()}
    assert {"correlations.txt", "scatter_CIDEr-D.png", "scatter_CIDEr-D.svg", "index.txt"} <= names
    assert not names & {"table1.txt", "sxs.csv"}
    again = read_comparisons_csv(out_dir / "comparisons.csv")
    assert [(c.m1, c.m2, c.language, c.delta_sxs, c.deltas["cider-d"]) for c in again][0] == (
        "a",
        "b",
        "de",
        20.0,
        0.05,
    )


def test_report_command_writes_per_caption_agreement(rated, tmp_path):
    out_dir = tmp_path / "pc"
    stdout, _ = run_report("--runs", str(rated["en_run"].pk), "--out", str(out_dir), "--bootstrap", "0")
    assert "Per-caption agreement with screen-1 ratings" in stdout
    data = json.loads((out_dir / "per_caption.json").read_text())
    assert data["agreement"]["CLIPScore"]["en"] == pytest.approx(expected_agreement())
    assert len(data["rows"]) == 8
    assert data["kendall_tau_c_variant"] == "seed-001 (m=4)"
    rows = list(csv.DictReader(io.StringIO((out_dir / "per_caption.csv").read_text())))
    assert [(r["metric"], r["language"], r["ratings"], r["N"], r["tau_c variant"]) for r in rows] == [
        ("CLIPScore", "en", "direct", "7", "seed-001 (m=4)")
    ]
    assert "Per-caption agreement with screen-1 ratings (τ_c: seed-001 (m=4))" in stdout
    assert "(τ_c: seed-001 (m=4))" in (out_dir / "per_caption.txt").read_text()
    index = (out_dir / "index.txt").read_text()
    assert "per-caption τ_c: seed-001 (m=4)" in index
    assert "τ_c of ΔS×S against Δmetric: scipy (m=min distinct)" in index
    # scipy's τ_c on request, named so in every file.
    stdout, _ = run_report(
        "--runs", str(rated["en_run"].pk), "--out", str(out_dir), "--bootstrap", "0", "--tau-c", "scipy"
    )
    assert "(τ_c: scipy (m=min distinct))" in stdout
    data = json.loads((out_dir / "per_caption.json").read_text())
    assert data["agreement"]["CLIPScore"]["en"] == pytest.approx(expected_agreement("scipy (m=min distinct)"))
    assert "scipy (m=min distinct)" in (out_dir / "per_caption.csv").read_text()
    # Carried over to the German translations only on request, and then labelled so.
    stdout, _ = run_report("--runs", str(rated["de_run"].pk), "--transfer-ratings", "--bootstrap", "0")
    assert re.search(r"CLIPScore\s+de\s+transferred\s+7\s", stdout)


def test_report_page_shows_per_caption_agreement(rated, researcher, client):
    client.force_login(researcher)
    page = client.get(reverse("reports:report"), {"runs": [rated["en_run"].pk]}).content.decode()
    assert 'id="per-caption"' in page
    expected = expected_agreement()
    assert f'<td class="num">{expected["kendall_tau_b"]:.3f}</td>' in page
    assert "No comparison with a metric: nothing to correlate." in page
    assert "<td>seed-001 (m=4)</td>" in page
    assert 'id="per-caption-tau-c">τ_c: seed-001 (m=4)' in page
    page = client.get(
        reverse("reports:report"), {"runs": [rated["en_run"].pk], "tau_c": "scipy"}
    ).content.decode()
    assert 'id="per-caption-tau-c">τ_c: scipy (m=min distinct)' in page
    page = client.get(
        reverse("reports:report"), {"runs": [rated["en_run"].pk], "tau_c": "b"}
    ).content.decode()
    assert "Select a valid choice" in page and 'id="per-caption"' not in page


# --- The demo, done: the "Done when" ---------------------------------------------------------


def test_report_on_the_demo_after_its_campaigns_are_done(db, tmp_path, django_capture_on_commit_callbacks):
    demo_load()
    german = {a.user.username: a for a in Annotator.objects.filter(user__username__endswith="-de")}
    good_de = {photo.key: photo.good_de for photo in PHOTOS}

    # The German caption campaign: two annotators rate screen 1 and write captions close to demo-good's.
    captions = Campaign.objects.get(kind=CampaignKind.CAPTION, language__code="de")
    for n, name in enumerate(("anna-de", "ben-de")):
        annotator = german[name]
        batch, _ = batch_request(annotator=annotator, campaign_id=captions.pk)
        for a in batch.assignments.all():
            work.rating_save(
                annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value=("good", "excellent")[n]
            )
        work.writing_open(annotator=annotator, batch_id=batch.pk)
        for a in batch.assignments.select_related("item__image"):
            work.draft_save(
                annotator=annotator,
                batch_id=batch.pk,
                assignment_id=a.pk,
                text=good_de[a.item.image.key] + ("" if n else " Gut zu sehen."),
                base_revision=0,
            )
        work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)

    # The German side-by-side campaign, filled by its three annotators: demo-good (m2) mostly better.
    sxs = Campaign.objects.get(name=SXS_CAMPAIGN)
    keys = sorted(good_de)
    for n, name in enumerate(("anna-de", "ben-de", "clara-de")):
        f.sxs_judged_all(
            german[name],
            sxs,
            lambda key, n=n: 0 if (keys.index(key) + n) % 4 == 0 else 2,
            control_score=lambda kind: 0 if kind == ControlKind.IDENTICAL else -3,
        )
    assert not Assignment.objects.filter(item__campaign=sxs, state="live").exists()

    # A real text-metric run against the German captions the annotators wrote.
    references = reference_set_from_campaign(campaign_id=captions.pk)
    with django_capture_on_commit_callbacks(execute=True):
        run = metric_run_create(
            name="demo de",
            language_code="de",
            system_names=[WEAK_SYSTEM, GOOD_SYSTEM],
            reference_set_id=references.pk,
            metrics=["CIDEr-D", "BLEU-4"],
        )
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED

    out_dir = tmp_path / "demo-report"
    stdout, _ = run_report("--runs", str(run.pk), "--transfer-ratings", "--out", str(out_dir))
    assert "1 comparison from database" in stdout
    assert "Only 1 comparison" in stdout
    names = {p.name for p in Path(out_dir).iterdir()}
    assert names >= DB_FILES
    assert {"scatter_CIDEr-D.png", "scatter_CIDEr-D.svg", "scatter_BLEU-4.png", "scatter_BLEU-4.svg"} <= names
    assert {"per_caption.csv", "per_caption.json"} <= names
    (comparison,) = json.loads((out_dir / "comparisons.json").read_text())["comparisons"]
    assert (comparison["m1"], comparison["m2"], comparison["language"]) == (WEAK_SYSTEM, GOOD_SYSTEM, "de")
    assert comparison["delta_sxs"] > 50  # demo-good won most images
    assert comparison["deltas"]["CIDEr-D"] > 0  # and scores higher against the German captions
    table1 = (out_dir / "table1.txt").read_text()
    assert "de" in table1 and "(nothing yet)" not in table1
    svg = (out_dir / "scatter_CIDEr-D.svg").read_text()
    assert "Δ CIDEr-D (m2 − m1)" in svg and f"{GOOD_SYSTEM} vs {WEAK_SYSTEM}" in svg


# --- The page ----------------------------------------------------------------------------------------


def page_query(world, **extra):
    return {"runs": [world["run"].pk], **extra}


def test_report_page_shows_the_report_to_researchers_and_managers(world, researcher, manager, client):
    for user in (researcher, manager):
        client.force_login(user)
        response = client.get(reverse("reports:report"), page_query(world))
        assert response.status_code == 200
        assert response["Cache-Control"] == "private, no-store"  # research data: never stored
        page = response.content.decode()
        assert 'id="correlations"' in page and 'data-metric="CIDEr-D"' in page
        assert "Only 2 comparisons" in page
        assert "Vergleich c1" in page and 'id="table1"' in page and 'id="table2"' in page
        svg_url = reverse("reports:scatter", kwargs={"metric": "CIDEr-D", "fmt": "svg"})
        assert f'src="{svg_url}?runs={world["run"].pk}"' in page
        # CSP: nothing inline.
        assert " style=" not in page
        assert "<script>" not in page and "<script >" not in page
        # The whole policy, default-src 'self' included (django-csp does not keep the directives' order).
        policy = directives_from_string(response["Content-Security-Policy"])
        assert policy == settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]
        assert policy["default-src"] == ["'self'"]


def test_report_page_form_without_a_choice_and_with_a_bad_one(world, researcher, client):
    client.force_login(researcher)
    # Nothing chosen: the report of every finished run, and the page says so.
    empty = client.get(reverse("reports:report")).content.decode()
    assert 'id="report-form"' in empty and 'id="default-selection"' in empty
    assert 'id="correlations"' in empty
    every_run = MetricRun.objects.filter(status=RunStatus.SUCCEEDED).values_list("pk", flat=True)
    assert all(f"runs={pk}" in empty for pk in every_run)  # the plots' links carry the selection
    bad = client.get(reverse("reports:report"), {"runs": [987654]})
    assert bad.status_code == 200 and 'id="correlations"' not in bad.content.decode()
    assert "Select a valid choice" in bad.content.decode()


def test_scatter_urls_render_png_and_svg(world, researcher, client):
    client.force_login(researcher)
    png = client.get(
        reverse("reports:scatter", kwargs={"metric": "CIDEr-D", "fmt": "png"}), page_query(world)
    )
    assert png.status_code == 200 and png["Content-Type"] == "image/png"
    assert png["Cache-Control"] == "private, no-store"  # drawn from research data: never stored
    assert PILImage.open(io.BytesIO(png.content)).format == "PNG"
    svg = client.get(reverse("reports:scatter", kwargs={"metric": "BLEU-4", "fmt": "svg"}), page_query(world))
    assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml"
    assert "Δ BLEU-4 (m2 − m1)" in svg.content.decode()
    missing = client.get(
        reverse("reports:scatter", kwargs={"metric": "ROUGE-L", "fmt": "png"}), page_query(world)
    )
    assert missing.status_code == 404


def test_report_page_is_closed_to_annotators_and_anonymous_visitors(world, client):
    url = reverse("reports:report")
    plot = reverse("reports:scatter", kwargs={"metric": "CIDEr-D", "fmt": "png"})
    for target in (url, plot):
        response = client.get(target, page_query(world))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    client.force_login(world["annotators"][0].user)
    assert client.get(url, page_query(world)).status_code == 403
    assert client.get(plot, page_query(world)).status_code == 403
    # Staff without a role: also 403 (core.access.can_read_research).
    bare = f.UserFactory(username="staff-no-role", is_staff=True)
    client.force_login(bare)
    assert client.get(url).status_code == 403


# --- One builder: the API, the report page, `report` and `correlate` agree --------------------------


def test_api_page_report_and_correlate_give_the_same_comparisons(world, researcher, client, tmp_path):
    """One selection through the four doors gives the same comparisons, the same left-out list
    (an unfinished campaign, a metric two runs both score) and the same coefficients."""
    systems, german = world["systems"], world["run"].language
    third = sxs_campaign_create(
        name="Vergleich c3",
        language_code="de",
        base_system=systems["sys-a"],
        test_system=systems["sys-c"],
        batch_size=3,
        replication=3,
        seed=1,
    )
    third = campaign_open(campaign_id=third.pk)
    plan = {"i0": [-1, -1, 0], "i1": [1, 1, 1], "i2": [-2, 0, -3]}
    for n, annotator in enumerate(world["annotators"]):
        f.sxs_judged_all(annotator, third, lambda key, n=n: plan[key][n])
    campaign_open(
        campaign_id=sxs_campaign_create(
            name="Noch offen", language_code="de", base_system=systems["sys-c"], test_system=systems["sys-b"]
        ).pk
    )
    second = succeeded_run("second", german, [systems["sys-a"], systems["sys-b"]], ["CIDEr-D"])
    corpus(second, systems["sys-a"], cider_d=0.1)
    corpus(second, systems["sys-b"], cider_d=0.9)
    runs = [second.pk, world["run"].pk]

    def key(m1, m2, language, delta_sxs, deltas, used):
        return (
            m1,
            m2,
            language,
            round(delta_sxs, 9),
            tuple(sorted((k, round(v, 9)) for k, v in deltas.items())),
            tuple(sorted(used.items())),
        )

    built = comparisons_from_db(metric_run_ids=runs)
    expected = [key(s.m1, s.m2, s.language, s.delta_sxs, s.deltas, s.runs) for s in built.sources]
    expected_skipped = sorted((s.campaign, tuple(s.metrics), s.reason) for s in built.skipped)
    assert len(expected) == 3 and any("not finished" in reason for *_, reason in expected_skipped)
    assert any(f"run #{second.pk} (given first) is used" in reason for *_, reason in expected_skipped)

    client.force_login(researcher)
    api = client.get("/api/correlations/", {"runs": ",".join(map(str, runs)), "seed": 7}).json()
    assert [
        key(c["m1"], c["m2"], c["language"], c["delta_sxs"], c["deltas"], c["runs"])
        for c in api["comparisons"]
    ] == expected
    assert (
        sorted((s["campaign_name"], tuple(s["metrics"]), s["reason"]) for s in api["skipped"])
        == expected_skipped
    )

    page = client.get(reverse("reports:report"), {"runs": runs})
    report = page.context["report"]
    assert [key(s.m1, s.m2, s.language, s.delta_sxs, s.deltas, s.runs) for s in report.sources] == expected
    assert sorted((s.campaign, tuple(s.metrics), s.reason) for s in report.skipped) == expected_skipped

    out = tmp_path / "report"
    call_command(
        "report", "--runs", ",".join(map(str, runs)), "--out", str(out), "--seed", "7", stdout=io.StringIO()
    )
    written = json.loads((out / "comparisons.json").read_text(encoding="utf-8"))
    assert [
        key(
            s["m1"],
            s["m2"],
            s["language"],
            s["delta_sxs"],
            {m: s["m2_scores"][m] - s["m1_scores"][m] for m in s["runs"]},
            s["runs"],
        )
        for s in written["sources"]
    ] == expected
    assert (
        sorted((s["campaign"], tuple(s["metrics"]), s["reason"]) for s in written["skipped"])
        == expected_skipped
    )

    # The same default bootstrap and the same seed give the same intervals everywhere.
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(
        "correlate",
        "--runs",
        ",".join(map(str, runs)),
        "--format",
        "json",
        "--seed",
        "7",
        stdout=stdout,
        stderr=stderr,
    )
    by_command = json.loads(stdout.getvalue())
    cider_api, cider_cli = api["results"]["CIDEr-D"]["all"], by_command["CIDEr-D"]["all"]
    assert cider_api["n"] == cider_cli["n"] == 6
    assert cider_api["pearson"] == pytest.approx(cider_cli["pearson"])
    assert cider_api["pearson_ci"] == pytest.approx(cider_cli["pearson_ci"])
    page_row = next(
        r
        for r in page.context["correlations"]["rows"]
        if dict(r["attrs"]) == {"metric": "CIDEr-D", "language": "all"}
    )
    assert page_row["cells"][2]["text"] == "6"  # N
    assert "Left out:" in stderr.getvalue() and "not finished" in stderr.getvalue()


# --- Signatures: which numbers are comparable ------------------------------------------------------


def test_report_shows_each_metric_signature_and_not_recorded_for_old_runs(
    world, tmp_path, researcher, client
):
    run = world["run"]
    run.signatures = {"CIDEr-D": "tok:char@2+unicode-14.0.0|case:lc|punct:unicode|df:test|impl:text-1"}
    run.save()
    out_dir = tmp_path / "report"
    run_report("--runs", str(run.pk), "--out", str(out_dir), "--bootstrap", "50")
    index = (out_dir / "index.txt").read_text()
    assert (
        "signature of CIDEr-D: tok:char@2+unicode-14.0.0|case:lc|punct:unicode|df:test|impl:text-1" in index
    )
    assert "signature of BLEU-4: not recorded (computed before signatures)" in index
    data = json.loads((out_dir / "comparisons.json").read_text())
    assert data["runs"] == [
        {
            "id": run.pk,
            "signatures": {
                "CIDEr-D": "tok:char@2+unicode-14.0.0|case:lc|punct:unicode|df:test|impl:text-1",
                "BLEU-4": "not recorded (computed before signatures)",
            },
        }
    ]
    assert data["sources"][0]["signatures"]["CIDEr-D"].startswith("tok:char@2")

    client.force_login(researcher)
    page = client.get(reverse("reports:report"), page_query(world)).content.decode()
    assert 'id="signatures"' in page
    assert "<code>tok:char@2+unicode-14.0.0|case:lc|punct:unicode|df:test|impl:text-1</code>" in page
    assert "<code>not recorded (computed before signatures)</code>" in page


def test_report_warns_when_a_metric_mixes_runs_with_different_signatures(world, german):
    systems = world["systems"]
    first = world["run"]
    first.signatures = {"CIDEr-D": "tok:whitespace@1|df:test"}
    first.save()
    # A second run scores only the second pair (sys-b, sys-c) with another scheme.
    second = succeeded_run("de run 2", german, [systems["sys-b"], systems["sys-c"]], ["CIDEr-D"])
    second.signatures = {"CIDEr-D": "tok:char@2|df:test"}
    second.save()
    corpus(second, systems["sys-b"], cider_d=0.4)
    corpus(second, systems["sys-c"], cider_d=0.5)
    from evaluation.research.reports.report import report_from_db

    report = report_from_db(metric_run_ids=[second.pk, first.pk], n_boot=50)
    assert any(
        note.startswith("Δ CIDEr-D comes from runs with different signatures")
        and "tok:char@2|df:test" in note
        and "tok:whitespace@1|df:test" in note
        for note in report.notes()
    )
