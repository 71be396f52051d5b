"""Where the zero-shot and foil checks and the joined verdict show: admin, API, the report page, the
metric-run API. Check rows are written with known results (the jobs are proven in test_clip_checks.py):
English t2i R@1 48%, German 40% (kept by retrieval) but zero-shot 0.21× English (flagged), Swahili
retrieval 2% (flagged), French only a foil check at 0.95× English (kept, not checked by retrieval)."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from evaluation.metrics.clip.trust import clip_model_key
from evaluation.models import ClipModel, ClipProbeCheck, RetrievalCheck, RunStatus
from tests import factories as f
from tests.evaluation.test_retrieval_pages import recalls

FLAG = "CLIP-based scores unreliable here"
PARAMS = {
    "clip_model": "xlm-roberta-base-ViT-B-32",
    "clip_pretrained": "laion5b_s13b_b90k",
    "clip_checkpoint": "",
}
KEY = clip_model_key(model=PARAMS["clip_model"], pretrained=PARAMS["clip_pretrained"])
DONE = {
    "status": RunStatus.SUCCEEDED,
    "chunks_total": 1,
    "chunks_done": 1,
    "params": PARAMS,
    "model_key": KEY,
}


def zeroshot(top1: float, base: float, n_classes: int) -> dict:
    return {
        "top1": top1,
        "top5": min(1.0, 2 * top1),
        "n_classes": n_classes,
        "n_images": 50,
        "per_class": {"0": {"n_images": 50, "correct": int(50 * top1), "top1": top1}},
        "baseline": {"top1": base, "top5": 0.9, "n_classes": n_classes, "n_images": 50},
        "notes": [],
    }


def foil_pairs(right: int, n: int = 20) -> list:
    return [[f"p:{i}", "counting", 1.0 if i < right else 0.0, 0.5] for i in range(n)]


def foils(right: int, n: int = 20, english: float = 1.0) -> dict:
    cell = {"n_pairs": n, "accuracy": right / n, "ties": 0, "interval": [0.4, 0.9]}
    return {
        "accuracy": right / n,
        "phenomena": {"counting": cell, "all": cell},
        "baseline": {"accuracy": english, "n_pairs": n},
    }


@pytest.fixture
def checked(db):
    for code in ("en", "de", "sw", "fr"):
        f.LanguageFactory(code=code)
    now = timezone.now()
    RetrievalCheck.objects.create(
        name="xm3600",
        source="reference_sets",
        languages=["de", "en", "sw"],
        finished_at=now,
        results={"en": recalls(0.48), "de": recalls(0.40), "sw": recalls(0.02)},
        **DONE,
    )
    zs = ClipProbeCheck.objects.create(
        name="babel",
        probe="zeroshot",
        languages=["de", "en"],
        finished_at=now,
        results={"en": zeroshot(0.62, 0.62, 1000), "de": zeroshot(0.13, 0.62, 700)},
        **DONE,
    )
    foil = ClipProbeCheck.objects.create(
        name="valse",
        probe="foil",
        languages=["en", "fr"],
        finished_at=now,
        results={"en": foils(20), "fr": foils(19)},
        pairs={"en": foil_pairs(20), "fr": foil_pairs(19)},
        data={"rule": "pairs with mturk.caption ≥ 2"},
        **DONE,
    )
    runs = {
        code: f.MetricRunFactory(
            name=f"clip {code}", language=f.LanguageFactory(code=code), metrics=["CLIPScore"], params=PARAMS
        )
        for code in ("de", "fr", "sw")
    }
    return {"zeroshot": zs, "foil": foil, "runs": runs}


def test_a_metric_run_in_a_language_failing_zero_shot_is_flagged_with_the_reason(checked, researcher_client):
    de = researcher_client.get(f"/api/metric-runs/{checked['runs']['de'].pk}/").json()["clip_trust"]
    assert de["flagged"] is True and de["label"] == FLAG
    assert de["reasons"] == ["zero-shot accuracy 0.21× English"]
    fr = researcher_client.get(f"/api/metric-runs/{checked['runs']['fr'].pk}/").json()["clip_trust"]
    assert fr["flagged"] is False and fr["status"] == "not_checked"
    assert fr["probes"][0]["ratio"] == pytest.approx(0.95)


def test_the_api_lists_reads_compares_and_gives_the_trust_table(checked, researcher_client, annotator_client):
    listing = researcher_client.get("/api/clip-checks/?probe=foil").json()
    assert [c["name"] for c in listing["results"]] == ["valse"]
    assert "pairs" not in listing["results"][0]
    assert researcher_client.get("/api/clip-checks/?probe=nope").status_code == 400
    zs = checked["zeroshot"]
    detail = researcher_client.get(f"/api/clip-checks/{zs.pk}/").json()
    assert detail["ratios"]["de"]["ratio"] == pytest.approx(0.13 / 0.62) and detail["ratios"]["de"]["failed"]
    foil = checked["foil"]
    assert len(researcher_client.get(f"/api/clip-checks/{foil.pk}/?pairs=true").json()["pairs"]["fr"]) == 20
    compared = researcher_client.get(f"/api/clip-checks/{foil.pk}/against/{foil.pk}/").json()
    assert compared["languages"]["fr"]["phenomena"]["all"]["delta"] == 0.0
    refused = researcher_client.get(f"/api/clip-checks/{foil.pk}/against/{zs.pk}/")
    assert refused.status_code == 400 and "is not a finished foil check" in refused.json()["message"]
    trust = researcher_client.get("/api/clip-trust/").json()
    rows = {row["language"]: row for row in trust["models"][0]["languages"]}
    assert list(rows) == ["en", "de", "fr", "sw"]
    assert rows["de"]["flagged"] and rows["de"]["probes"]["zeroshot"]["ratio"] == pytest.approx(0.13 / 0.62)
    assert rows["de"]["probes"]["retrieval"]["ratio"] == pytest.approx(0.40 / 0.48)
    assert rows["sw"]["reasons"] == ["text→image R@1 0.04× English"]
    points = trust["zeroshot_vs_retrieval"]["points"]
    assert {p["language"] for p in points} == {"en", "de"}  # only they have both
    assert trust["zeroshot_vs_retrieval"]["pearson_r"] is None  # two points: no correlation
    svg = researcher_client.get("/api/clip-trust/figure.svg")
    assert svg.status_code == 200 and b"<svg" in svg.content
    assert researcher_client.get("/api/clip-trust/figure.png").content[:4] == b"\x89PNG"
    assert researcher_client.get("/api/clip-trust/?model_key=clip:nothing").json()["models"] == [
        {"model_key": "clip:nothing", "languages": []}
    ]
    assert researcher_client.get("/api/clip-trust/?models=x").status_code == 400
    assert annotator_client.get("/api/clip-trust/").status_code == 403


def test_the_report_page_shows_the_trust_table_and_the_figure(checked, researcher_client):
    query = "&".join(f"runs={run.pk}" for run in checked["runs"].values())
    html = researcher_client.get(reverse("reports:report") + "?" + query).content.decode()
    assert 'id="clip-trust-probes"' in html
    assert '<tr class="clip-unreliable" data-language="de">' in html
    assert "zero-shot accuracy 0.21× English" in html
    assert "13.0 (0.21×)" in html and "95.0 (0.95×)" in html
    assert 'id="clip-zeroshot-vs-retrieval"' in html
    # The figure is an image of the runs' models (the page's CSP forbids inline SVG styles).
    src = re.search(r'<img src="(/api/clip-trust/figure\.svg\?model_key=[^"]+)"', html).group(1)
    svg = researcher_client.get(src.replace("&amp;", "&"))
    assert svg.status_code == 200 and b"<svg" in svg.content
    # The report's own notes say why German's CLIPScore is flagged.
    assert (
        "CLIPScore and RefCLIPScore, de: CLIP-based scores unreliable here: zero-shot accuracy 0.21× English"
        in html
    )


@pytest.fixture
def on_disk(db, tmp_path):
    """A registered model whose weights are on this machine (the checks here are not computed)."""
    (tmp_path / "w.pt").write_bytes(b"0")
    return ClipModel.objects.create(name="on-disk", model_name="ViT-B-32", checkpoint=str(tmp_path / "w.pt"))


def test_a_manager_starts_a_zero_shot_check_from_the_admin_and_a_bad_file_is_refused(
    checked, pm_client, django_capture_on_commit_callbacks, on_disk
):
    for i in range(2):
        f.ImageFactory(key=f"photo{i}")
    url = reverse("admin:evaluation_clipprobecheck_add")
    assert pm_client.get(url).status_code == 200
    labels = json.dumps({"en": [[0, 1], ["dog", "cat"]], "de": [[0, 1], ["Hund", "Katze"]]}).encode()
    form = {
        "name": "admin zs",
        "probe": "zeroshot",
        "min_votes": 2,
        "clip_model": on_disk.pk,
        "labels": SimpleUploadedFile("babel.json", labels),
        "labelled_images": SimpleUploadedFile("images.csv", b"image,class_id\nphoto0,0\nphoto1,1\n"),
    }
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = pm_client.post(url, form)
    assert response.status_code == 302, response.content.decode()[:3000]
    created = ClipProbeCheck.objects.get(name="admin zs")
    assert created.languages == ["de", "en"] and created.chunks_total == 1 + 2 + 2 and len(sent) == 1
    bad = form | {
        "name": "bad",
        "labels": SimpleUploadedFile("labels.csv", b"class_id,language,label\n0,en,dog\n0,en,hound\n"),
        "labelled_images": SimpleUploadedFile("images.csv", b"image,class_id\nphoto0,0\n"),
    }
    refused = pm_client.post(url, bad).content.decode()
    assert "line 3: class 0 already has a en label" in refused
    assert not ClipProbeCheck.objects.filter(name="bad").exists()
    page = pm_client.get(reverse("admin:evaluation_clipprobecheck_change", args=[checked["zeroshot"].pk]))
    html = page.content.decode()
    assert "id='probe-results'" in html and "<tr class='clip-unreliable' data-language='de'>" in html


def test_a_manager_starts_a_foil_check_from_several_files_and_the_language_comes_from_each_name(
    checked, pm_client, django_capture_on_commit_callbacks, on_disk
):
    f.ImageFactory(key="photo0")
    item = {
        "caption": "two dogs",
        "foil": "three dogs",
        "linguistic_phenomena": "counting",
        "image_file": "photo0.jpg",
        "mturk": {"caption": 3},
    }
    url = reverse("admin:evaluation_clipprobecheck_add")
    form = {
        "name": "admin foils",
        "probe": "foil",
        "min_votes": 2,
        "clip_model": on_disk.pk,
        "foil_files": [
            SimpleUploadedFile("en_counting.json", json.dumps({"1": item}).encode()),
            SimpleUploadedFile(
                "de_counting.json", json.dumps({"1": item | {"caption": "zwei Hunde"}}).encode()
            ),
        ],
    }
    with django_capture_on_commit_callbacks(execute=False):
        response = pm_client.post(url, form)
    assert response.status_code == 302, response.content.decode()[:3000]
    created = ClipProbeCheck.objects.get(name="admin foils")
    assert created.languages == ["de", "en"] and created.data["n_pairs"] == {"de": 1, "en": 1}
    unnamed = form | {
        "name": "x",
        "foil_files": [SimpleUploadedFile("valse.json", json.dumps({"1": item}).encode())],
    }
    assert "Cannot tell the language of “valse.json”" in pm_client.post(url, unnamed).content.decode()
    assert not ClipProbeCheck.objects.filter(name="x").exists()


def test_a_report_of_runs_without_clip_metrics_shows_every_checked_model(checked, researcher_client):
    run = f.MetricRunFactory(metrics=["BLEU-4"], language=f.LanguageFactory(code="de"))
    html = researcher_client.get(reverse("reports:report") + f"?runs={run.pk}").content.decode()
    assert 'id="clip-trust-probes"' in html
    assert "No selected run has CLIP metrics: every CLIP model checked on this platform." in html
