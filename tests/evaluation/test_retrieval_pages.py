"""Where the retrieval check and its flag show: API, admin, the report page, the trust table.

The check rows here are written directly with known recalls (the job that computes them is proven in
test_retrieval_checks.py): English t2i R@1 48%, German 40% (kept), Swahili 2% (flagged).
"""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from evaluation.metrics.clip.trust import clip_model_key
from evaluation.models import ClipModel, RetrievalCheck, RunStatus
from evaluation.research.meta_evaluation import Item, trust_table
from evaluation.research.trust_tables import Trust, trust_html, trust_text
from tests import factories as f

FLAG = "CLIP-based scores unreliable here"


def recalls(r1: float) -> dict:
    values = {f"{d}_r{k}": min(1.0, r1 * k**0.5) for d in ("t2i", "i2t") for k in (1, 5, 10)}
    return values | {
        "mean_recall": r1,
        "t2i_mean_recall": r1,
        "i2t_mean_recall": r1,
        "n_images": 100,
        "n_captions": 200,
        "notes": [],
    }


@pytest.fixture
def checked(db):
    for code, name in (("en", "English"), ("de", "German"), ("sw", "Swahili"), ("fr", "French")):
        f.LanguageFactory(code=code, name=name)
    params = {
        "clip_model": "xlm-roberta-base-ViT-B-32",
        "clip_pretrained": "laion5b_s13b_b90k",
        "clip_checkpoint": "",
    }
    check = RetrievalCheck.objects.create(
        name="xm3600 check",
        source="reference_sets",
        languages=["de", "en", "sw"],
        params=params,
        model_key=clip_model_key(model=params["clip_model"], pretrained=params["clip_pretrained"]),
        model_id="xlm-roberta-base-ViT-B-32:laion5b_s13b_b90k",
        status=RunStatus.SUCCEEDED,
        chunks_total=3,
        chunks_done=3,
        finished_at=timezone.now(),
        results={"en": recalls(0.48), "de": recalls(0.40), "sw": recalls(0.02)},
    )
    runs = {
        code: f.MetricRunFactory(
            name=f"clip {code}",
            language=f.LanguageFactory(code=code),
            metrics=["CLIPScore", "RefCLIPScore"],
            params=params,
        )
        for code in ("sw", "de", "fr")
    }
    return {"check": check, "runs": runs}


def test_the_api_lists_checks_with_recalls_and_verdicts(checked, researcher_client):
    listed = researcher_client.get("/api/retrieval-checks/").json()
    assert listed["count"] == 1
    item = listed["results"][0]
    assert item["results"]["sw"]["t2i_r1"] == 0.02
    assert item["trust"]["sw"]["status"] == "unreliable" and item["trust"]["sw"]["label"] == FLAG
    assert item["trust"]["de"]["status"] == "reliable" and item["trust"]["en"]["status"] == "baseline"
    assert item["unreliable_r1_ratio"] == 0.5
    detail = researcher_client.get(f"/api/retrieval-checks/{checked['check'].pk}/").json()
    assert detail["model_id"] == "xlm-roberta-base-ViT-B-32:laion5b_s13b_b90k"
    assert researcher_client.get("/api/retrieval-checks/?status=failed").json()["count"] == 0
    assert researcher_client.get(f"/api/retrieval-checks/{checked['check'].pk + 1}/").status_code == 404
    assert researcher_client.get("/api/retrieval-checks/?bogus=1").status_code == 400
    # Read-only.
    assert researcher_client.post("/api/retrieval-checks/", {}).status_code == 405
    assert researcher_client.delete(f"/api/retrieval-checks/{checked['check'].pk}/").status_code == 405


def test_annotators_and_strangers_reach_no_retrieval_check(checked, annotator_client, client):
    url = f"/api/retrieval-checks/{checked['check'].pk}/"
    assert annotator_client.get(url).status_code == 403
    assert annotator_client.get("/api/retrieval-checks/").status_code == 403
    client.logout()
    assert client.get(url).status_code in (401, 403)


def test_a_clip_metric_run_in_the_api_carries_its_languages_verdict(checked, researcher_client):
    runs = checked["runs"]
    sw = researcher_client.get(f"/api/metric-runs/{runs['sw'].pk}/").json()
    assert sw["clip_trust"]["flagged"] is True and sw["clip_trust"]["label"] == FLAG
    assert "2.0% is below 0.5 × en's 48.0%" in sw["clip_trust"]["note"]
    assert (
        researcher_client.get(f"/api/metric-runs/{runs['de'].pk}/").json()["clip_trust"]["flagged"] is False
    )
    fr = researcher_client.get(f"/api/metric-runs/{runs['fr'].pk}/").json()["clip_trust"]
    assert fr["status"] == "not_checked" and fr["flagged"] is False
    text_run = f.MetricRunFactory(metrics=["BLEU-4"])
    assert researcher_client.get(f"/api/metric-runs/{text_run.pk}/").json()["clip_trust"] is None


def test_a_researcher_reads_the_check_its_table_and_figure_but_cannot_start_one(checked, researcher_client):
    check = checked["check"]
    page = researcher_client.get(reverse("admin:evaluation_retrievalcheck_change", args=[check.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "id='retrieval-results'" in html
    assert "<tr class='clip-unreliable' data-language='sw'>" in html
    assert "2.0% is below 0.5 × en&#x27;s 48.0%" in html
    # English first, then the other languages.
    assert (
        html.index("data-language='en'") < html.index("data-language='de'") < html.index("data-language='sw'")
    )
    png = researcher_client.get(reverse("admin:evaluation_retrievalcheck_figure", args=[check.pk, "png"]))
    assert (
        png.status_code == 200
        and png["Content-Type"] == "image/png"
        and png.content[:8] == b"\x89PNG\r\n\x1a\n"
    )
    svg = researcher_client.get(
        reverse("admin:evaluation_retrievalcheck_figure", args=[check.pk, "svg"])
    ).content
    assert b"<svg" in svg and b"R@1" in svg
    listing = researcher_client.get(reverse("admin:evaluation_retrievalcheck_changelist")).content.decode()
    assert "xm3600 check" in listing and "succeeded" in listing
    assert researcher_client.get(reverse("admin:evaluation_retrievalcheck_add")).status_code == 403
    run_page = researcher_client.get(
        reverse("admin:evaluation_metricrun_change", args=[checked["runs"]["sw"].pk])
    )
    assert FLAG in run_page.content.decode()


def test_a_manager_starts_a_check_from_the_admin_and_a_bad_one_is_refused(
    checked, pm_client, django_capture_on_commit_callbacks, tmp_path
):
    english = f.LanguageFactory(code="en")
    images = [f.ImageFactory() for _ in range(3)]
    refs = f.reference_set_with(images, [["a"], ["b"], ["c"]], name="refs-en", language=english)
    (tmp_path / "w.pt").write_bytes(b"0")  # weights on this machine (the check is not computed)
    model = ClipModel.objects.create(name="on-disk", model_name="ViT-B-32", checkpoint=str(tmp_path / "w.pt"))
    url = reverse("admin:evaluation_retrievalcheck_add")
    assert pm_client.get(url).status_code == 200
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = pm_client.post(
            url, {"name": "", "reference_sets": [refs.pk], "language_codes": "en", "clip_model": model.pk}
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    created = RetrievalCheck.objects.exclude(pk=checked["check"].pk).get()
    assert created.languages == ["en"] and created.chunks_total == 3 and len(sent) == 1
    refused = pm_client.post(
        url, {"name": "", "reference_sets": [refs.pk], "language_codes": "sw", "clip_model": model.pk}
    )
    assert "sw has no captions in the reference set(s) refs-en" in refused.content.decode()
    assert RetrievalCheck.objects.count() == 2


def test_a_manager_chooses_a_registered_clip_model_and_a_typed_one_is_validated_on_save(
    checked, pm_client, django_capture_on_commit_callbacks, tmp_path
):
    english = f.LanguageFactory(code="en")
    images = [f.ImageFactory() for _ in range(3)]
    refs = f.reference_set_with(images, [["a"], ["b"], ["c"]], name="refs-en", language=english)
    (tmp_path / "demo.pt").write_bytes(b"0")  # weights on this machine (the check is not computed)
    demo = ClipModel.objects.create(
        name="demo-tiny-clip",
        model_name="captioneval-demo-tiny-clip",
        checkpoint=str(tmp_path / "demo.pt"),
        is_demo=True,
    )
    url = reverse("admin:evaluation_retrievalcheck_add")
    page = pm_client.get(url).content.decode()
    assert "Registered CLIP model" in page and "demo-tiny-clip (tiny demo model)" in page
    # The registered model's name typed as an open_clip model is refused on save, with the way out.
    typed = pm_client.post(
        url, {"reference_sets": [refs.pk], "language_codes": "en", "model": "demo-tiny-clip"}
    )
    assert typed.status_code == 200
    assert "is a registered CLIP model, not an open_clip architecture" in typed.content.decode()
    assert RetrievalCheck.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=False):
        chosen = pm_client.post(
            url, {"reference_sets": [refs.pk], "language_codes": "en", "clip_model": demo.pk}
        )
    assert chosen.status_code == 302, chosen.content.decode()[:2000]
    created = RetrievalCheck.objects.exclude(pk=checked["check"].pk).get()
    assert created.params["clip_registered"] == "demo-tiny-clip"
    assert created.params["clip_checkpoint"] == str(tmp_path / "demo.pt")


def test_the_report_page_shows_the_check_and_flags_clip_scores(checked, researcher_client):
    runs = checked["runs"]
    query = "&".join(f"runs={run.pk}" for run in runs.values())
    html = researcher_client.get(reverse("reports:report") + "?" + query).content.decode()
    assert 'id="clip-trust-table"' in html
    assert '<tr class="clip-unreliable" data-language="sw">' in html
    assert f"<strong>{FLAG}</strong>" in html
    assert "CLIP not checked in this language" in html  # fr has no check
    assert "CLIPScore and RefCLIPScore, sw: CLIP-based scores unreliable here" in html
    assert "CLIPScore and RefCLIPScore in fr: the CLIP model has no retrieval check" in html


def _items(language, human, deltas):
    return [
        Item(language, "m1", "m2", f"img{i}", float(h), 3, {name: float(v[i]) for name, v in deltas.items()})
        for i, h in enumerate(human)
    ]


def test_the_trust_table_marks_clip_cells_of_a_flagged_language():
    rng = np.random.default_rng(0)
    human = rng.integers(-3, 4, size=40)
    deltas = {"CLIPScore": human + rng.normal(size=40), "BLEU-4": rng.normal(size=40)}
    table = trust_table(
        _items("sw", human, deltas) + _items("de", human, deltas), n_boot=20, n_permutations=20
    )
    cells = {
        (row["metric"], cell["language"]): cell["clip_flag"]
        for row in trust_html(table, ["sw"])["rows"]
        for cell in row["cells"]
    }
    assert cells[("CLIPScore", "sw")] is True
    assert cells[("CLIPScore", "de")] is False and cells[("BLEU-4", "sw")] is False
    assert any("CLIP-based scores unreliable here" in note for note in trust_html(table, ["sw"])["notes"])
    assert not any("unreliable" in note for note in trust_html(table)["notes"])
    text = trust_text(Trust(table, clip_flags=["sw"]))
    clip_line = next(line for line in text.splitlines() if line.startswith("CLIPScore"))
    assert clip_line.count("!") == 1
    assert "! CLIP-based scores unreliable here" in text
    # The same flag in the records the JSON, the CSV and /api/trust/ are made of, and on the heatmap.
    import json

    from evaluation.research.reports.heatmap import trust_heatmap
    from evaluation.research.trust_tables import trust_csv, trust_json

    data = json.loads(trust_json(Trust(table, clip_flags=["sw"])))
    assert data["CLIPScore"]["sw"]["clip_flag"] is True and data["CLIPScore"]["de"]["clip_flag"] is False
    assert "clip_flag" in trust_csv(Trust(table, clip_flags=["sw"])).splitlines()[0]
    svg = trust_heatmap(table, "svg", clip_flags=["sw"]).decode()
    assert "CLIP-based scores unreliable here (sw)" in svg
    assert "unreliable" not in trust_heatmap(table, "svg").decode()


def test_an_unfinished_jobs_page_reloads_itself_and_a_finished_ones_does_not(checked, researcher_client):
    from core.jobs.models import JobStatus
    from evaluation.models import MetricRun

    run = checked["runs"]["sw"]
    url = reverse("admin:evaluation_metricrun_change", args=[run.pk])
    assert 'http-equiv="refresh"' not in researcher_client.get(url).content.decode()
    MetricRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING)
    page = researcher_client.get(url).content.decode()
    assert '<meta http-equiv="refresh" content="5">' in page
