"""A project manager on the demo starts every CLIP job of the admin (retrieval, zero-shot and foil
checks, a metric run with CLIPScore, fine-tuning) with the demo's own registered model, chosen in the
one *CLIP model* choice each form offers, and sees each succeed; the empty default is refused on save
with what to do, since the demo's settings model is not on the machine (issue 36, item 2).

The embedded default: eager Celery and the local runner, so a started job runs on a worker thread of
the live server and its page follows it."""

from __future__ import annotations

import time

import pytest

from annotation.models import Language
from annotation.services.demo import DEMO_PASSWORD, demo_load
from evaluation.demo.captions import SIM_SYSTEMS
from evaluation.demo.clip_probe_data import demo_foil_files, demo_zeroshot_files
from evaluation.demo.services import demo_results_load, reference_set_name
from evaluation.models import (
    ClipFineTune,
    ClipModel,
    ClipProbeCheck,
    MetricRun,
    ReferenceSet,
    RetrievalCheck,
    RunStatus,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect

DEMO_MODEL = "demo-tiny-clip (tiny demo model)"
# The demo's settings model as this machine has it: weights that are not here (no download offline).
NOT_HERE = {"CLIP_MODEL": "ViT-B-32", "CLIP_PRETRAINED": "", "CLIP_CHECKPOINT": "/nonexistent/weights.pt"}


@pytest.fixture
def demo(settings, tmp_path, django_capture_on_commit_callbacks):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.JOBS_LOCAL_RUNNER = True
    settings.CLIP_FINETUNE_DIR = str(tmp_path / "finetune")
    for name, value in NOT_HERE.items():
        setattr(settings, name, value)
    demo_load()
    with django_capture_on_commit_callbacks(execute=True):
        demo_results_load()  # registers demo-tiny-clip, as the demo does
    yield
    from core.jobs.local import local_wait

    local_wait()


def login(page, live_server):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "manager")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url("**/admin/")


def finished(model, name: str, timeout: float = 240):
    """The job of this name once its worker thread has finished it."""
    deadline = time.monotonic() + timeout
    while True:
        job = model.objects.filter(name=name).first()
        if job is not None and job.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
            return job
        assert time.monotonic() < deadline, f"{name}: {job and job.status}"
        time.sleep(0.5)


def written(tmp_path, files) -> list[str]:
    paths = []
    for file_name, content, *_ in files:
        path = tmp_path / file_name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        paths.append(str(path))
    return paths


def choose_demo_model(page, name: str = "clip_model"):
    select = page.locator(f"select[name={name}]")
    expect(select.locator("option").first).to_contain_text("none: the CLIP_* settings (ViT-B-32)")
    select.select_option(label=DEMO_MODEL)


def save_and_follow(page, live_server, screenshot, model, name: str, admin_name: str, shot: str):
    page.click("input[name=_save]")
    job = finished(model, name)
    assert job.status == RunStatus.SUCCEEDED, job.error
    page.goto(f"{live_server.url}/admin/evaluation/{admin_name}/{job.pk}/change/")
    expect(page.locator("div.form-row.field-status")).to_contain_text("succeeded")
    screenshot(shot)
    return job


def test_a_manager_starts_every_clip_job_with_the_demos_model_and_each_succeeds(
    live_server, page, screenshot, demo, tmp_path
):
    login(page, live_server)
    german = Language.objects.get(code="de")
    refs = ReferenceSet.objects.get(name=reference_set_name(german))

    # Retrieval: the empty default is refused with the way out, the demo's model runs.
    page.goto(f"{live_server.url}/admin/evaluation/retrievalcheck/add/")
    page.fill("input[name=name]", "Browser retrieval")
    page.check(f"input[name=reference_sets][value='{refs.pk}']")
    page.click("input[name=_save]")
    expect(page.locator(".errornote, .errorlist").first).to_be_visible()
    expect(page.locator("body")).to_contain_text(
        "The CLIP model of the CLIP_* settings (ViT-B-32) is not available on this machine"
    )
    expect(page.locator("body")).to_contain_text(
        "Choose a registered CLIP model (on the demo: demo-tiny-clip)"
    )
    screenshot("clip-models-01-empty-default-refused")
    assert not RetrievalCheck.objects.filter(name="Browser retrieval").exists()
    choose_demo_model(page)
    screenshot("clip-models-02-demo-model-chosen")
    check = save_and_follow(
        page,
        live_server,
        screenshot,
        RetrievalCheck,
        "Browser retrieval",
        "retrievalcheck",
        "clip-models-03-retrieval",
    )
    assert check.params["clip_registered"] == "demo-tiny-clip"

    # Zero-shot, from the demo's own files.
    files = demo_zeroshot_files()
    page.goto(f"{live_server.url}/admin/evaluation/clipprobecheck/add/")
    expect(page.locator(".field-foil_files .help")).to_contain_text("<language code>.json")
    page.fill("input[name=name]", "Browser zero-shot")
    page.select_option("select[name=probe]", "zeroshot")
    page.set_input_files("input[name=labels]", written(tmp_path, [files["labels"]]))
    page.set_input_files("input[name=labelled_images]", written(tmp_path, [files["images"]]))
    page.set_input_files("input[name=templates]", written(tmp_path, [files["templates"]]))
    choose_demo_model(page)
    check = save_and_follow(
        page,
        live_server,
        screenshot,
        ClipProbeCheck,
        "Browser zero-shot",
        "clipprobecheck",
        "clip-models-04-zeroshot",
    )
    assert check.params["clip_registered"] == "demo-tiny-clip" and check.results

    # Foils, one file per language.
    page.goto(f"{live_server.url}/admin/evaluation/clipprobecheck/add/")
    page.fill("input[name=name]", "Browser foils")
    page.select_option("select[name=probe]", "foil")
    page.set_input_files("input[name=foil_files]", written(tmp_path, demo_foil_files()))
    choose_demo_model(page)
    check = save_and_follow(
        page,
        live_server,
        screenshot,
        ClipProbeCheck,
        "Browser foils",
        "clipprobecheck",
        "clip-models-05-foils",
    )
    assert check.params["clip_registered"] == "demo-tiny-clip" and check.results

    # A metric run with CLIPScore.
    page.goto(f"{live_server.url}/admin/evaluation/metricrun/add/")
    page.fill("input[name=name]", "Browser CLIPScore")
    page.select_option("select[name=language]", str(german.pk))
    page.select_option("select[name=systems]", label=[spec.name for spec in SIM_SYSTEMS[:2]])
    page.select_option("select[name=reference_set]", str(refs.pk))
    boxes = page.locator("input[name=metric_names]")
    for i in range(boxes.count()):
        boxes.nth(i).set_checked(boxes.nth(i).get_attribute("value") in ("BLEU-4", "CLIPScore"))
    choose_demo_model(page)
    run = save_and_follow(
        page,
        live_server,
        screenshot,
        MetricRun,
        "Browser CLIPScore",
        "metricrun",
        "clip-models-06-metric-run",
    )
    assert run.params["clip_registered"] == "demo-tiny-clip"
    assert run.corpus_scores.filter(metric="CLIPScore").count() == 2

    # Fine-tuning the demo's model on the demo's data.
    page.goto(f"{live_server.url}/admin/evaluation/clipfinetune/add/")
    page.fill("input[name=name]", "Browser fine-tuning")
    choose_demo_model(page, "base")
    page.check("input[name=demo_data]")
    page.fill("input[name=register_as]", "browser-ft")
    page.fill("input[name=epochs]", "1")
    page.fill("input[name=batch_size]", "8")
    page.fill("input[name=learning_rate]", "0.0001")
    tune = save_and_follow(
        page,
        live_server,
        screenshot,
        ClipFineTune,
        "Browser fine-tuning",
        "clipfinetune",
        "clip-models-07-fine-tuning",
    )
    assert tune.base.name == "demo-tiny-clip"
    assert ClipModel.objects.filter(name="browser-ft").exists()
