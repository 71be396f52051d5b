# ruff: noqa: F811 — the ``world`` fixture is imported from test_reports
"""A stable default report (a researcher's saved selection; the site default says when it changed),
scores from demo or untrained models tagged wherever they appear, and simulated raters left out of
the hours page by default."""

from __future__ import annotations

from django.urls import reverse
from django.utils import timezone

from evaluation.models import ClipModel, SavedReportSelection
from tests.evaluation.test_reports import corpus, page_query, succeeded_run, world  # noqa: F401

REPORT = "reports:report"


def _finish(run):
    run.finished_at = timezone.now()
    run.save(update_fields=["finished_at"])
    return run


def test_a_saved_selection_stays_the_default_when_runs_finish(world, german, researcher, client):
    client.force_login(researcher)
    _finish(world["run"])
    site = client.get(reverse(REPORT)).content.decode()
    assert 'id="default-selection"' in site and f"run #{world['run'].pk}" in site and "last changed" in site
    saved = client.post(
        reverse("reports:selection-save"), {"query": f"runs={world['run'].pk}", "action": "save"}
    )
    assert saved.status_code == 302
    # Someone else's run finishes: the site default moves, the saved selection does not.
    other = _finish(succeeded_run("another de run", german, world["systems"].values(), ["CIDEr-D"]))
    corpus(other, world["systems"]["sys-a"], world["images"], cider_d=0.1)
    page = client.get(reverse(REPORT)).content.decode()
    assert 'id="saved-selection"' in page and 'id="default-selection"' not in page
    assert f"#{other.pk} another de run" in page  # listed in the form …
    assert f'value="{other.pk}" checked' not in page and f'value="{world["run"].pk}"' in page  # … not chosen
    assert "Forget my saved selection" in page and 'id="saved-selection-changed"' not in page
    # Its data changes (a campaign's judgment): the page says so.
    from annotation.models import SxsJudgment

    judgment = SxsJudgment.objects.first()
    judgment.score = 3 if judgment.score != 3 else 2
    judgment.save()
    changed = client.get(reverse(REPORT)).content.decode()
    assert 'id="saved-selection-changed"' in changed
    # Forget it: back to the site default, which now names the newer run.
    client.post(reverse("reports:selection-save"), {"action": "forget"})
    assert not SavedReportSelection.objects.exists()
    back = client.get(reverse(REPORT)).content.decode()
    assert 'id="default-selection"' in back and f"run #{other.pk}" in back


def test_a_selection_the_form_refuses_is_not_saved(world, researcher, client):
    client.force_login(researcher)
    bad = client.post(reverse("reports:selection-save"), {"query": "runs=987654", "action": "save"})
    assert bad.status_code == 400 and "not saved" in bad.content.decode()
    assert client.post(reverse("reports:selection-save"), {"action": "delete-all"}).status_code == 400
    assert "no-saved-selection" in client.get(reverse("reports:selection-save")).content.decode()
    assert not SavedReportSelection.objects.exists()


def test_scores_of_a_demo_model_are_tagged_everywhere(world, german, researcher, client, tmp_path):
    ClipModel.objects.create(
        name="demo-tiny-clip", model_name="tiny", checkpoint="/tmp/tiny.pt", is_demo=True
    )
    clip = succeeded_run("de clip", german, world["systems"].values(), ["CLIPScore"])
    clip.params = {"clip_registered": "demo-tiny-clip"}
    clip.save(update_fields=["params"])
    for name, value in (("sys-a", 0.6), ("sys-b", 0.7), ("sys-c", 0.65)):
        corpus(clip, world["systems"][name], world["images"], clipscore=value)
    client.force_login(researcher)
    query = page_query(world, runs=[world["run"].pk, clip.pk])
    page = client.get(reverse(REPORT), query).content.decode()
    assert (
        'data-metric="CLIPScore"><th scope="row">CLIPScore <span class="demo-tag">demo model — not results'
        in page
    )
    assert "CLIPScore [demo model — not results]" in page  # the correlation table
    assert 'data-demo-model="true"' in page and 'id="correlations-demo"' in page
    assert "CIDEr-D [demo model" not in page
    heatmap = client.get(reverse("reports:trust-heatmap", kwargs={"fmt": "svg"}), query).content.decode()
    assert "demo model — not results" in heatmap
    scatter = client.get(
        reverse("reports:scatter", kwargs={"metric": "CLIPScore", "fmt": "svg"}), query
    ).content.decode()
    assert "demo model — not results" in scatter
    trust = client.get("/api/trust/", {"runs": f"{world['run'].pk},{clip.pk}"}).json()
    assert trust["demo_metrics"] == ["CLIPScore"]
    assert {c["metric"] for c in trust["cells"] if c["demo_model"]} == {"CLIPScore"}
    correlations = client.get("/api/correlations/", {"runs": f"{world['run'].pk},{clip.pk}"}).json()
    assert correlations["demo_metrics"] == ["CLIPScore"]
    # The report command's files (exports) carry it too.
    from django.core.management import call_command

    call_command(
        "report", "--runs", f"{world['run'].pk},{clip.pk}", "--out", str(tmp_path), "--bootstrap", "20"
    )
    assert "demo_model" in (tmp_path / "trust.csv").read_text().splitlines()[0]
    assert "CLIPScore [demo model — not results]" in (tmp_path / "trust.txt").read_text()


def test_simulated_raters_are_left_out_of_the_hours_page_by_default(world, pm_client):
    rater = world["annotators"][0]
    rater.user.email = "sim-rater-de-1@simulated.invalid"
    rater.user.save(update_fields=["email"])
    url = reverse("admin:evaluation_annotatorhours_changelist")
    page = pm_client.get(url).content.decode()
    assert 'data-annotator="ann"' not in page and 'data-annotator="ben"' in page
    assert 'id="simulated-hidden"' in page and "1 simulated rater of the demo left out" in page
    shown = pm_client.get(url, {"simulated": "on"}).content.decode()
    assert 'data-annotator="ann"' in shown and 'id="simulated-hidden"' not in shown
    csv = b"".join(pm_client.get(url, {"format": "csv"}).streaming_content).decode()
    assert ",ann," not in csv and ",ben," in csv
