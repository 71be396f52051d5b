"""CLIP fine-tuning runs as jobs, eagerly, on the demo's tiny model and real campaign data.

The tiny model's numbers mean nothing: these tests check the data that reaches training (never the
test split), the refusals, the registered model, resuming after a killed worker, access, and that a
metric run can use the fine-tuned model under its own id.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from core.errors import Conflict, JobsUnavailable, NotFound, ValidationFailed
from evaluation.finetune import compute as jobs
from evaluation.finetune.plan import (
    DEMO_MODEL_NAME,
    clip_model_demo_register,
    fine_tune_create,
    fine_tune_resume,
    fine_tune_train,
)
from evaluation.models import ClipFineTune, ClipModel, RunStatus
from evaluation.research.finetune_tables import before_after
from evaluation.runs.plan import metric_run_plan
from tests import factories as f

VALUES = ["excellent", "good", "medium", "bad", "nei"]
SMALL = {"epochs": 1, "batch_size": 4, "learning_rate": 1e-4, "min_ratings": 5}


def caption_work(campaign, annotators, batches):
    """Whole caption batches per annotator, screen-1 ratings cycling over the five answers."""
    from annotation.assignment.engine import batch_request
    from annotation.services import work

    for _ in range(batches):
        for annotator in annotators:
            batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
            assignments = list(batch.assignments.order_by("position"))
            for a in assignments:
                value = VALUES[(a.item.image_id + a.annotator_id) % len(VALUES)]
                work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value=value)
            work.writing_open(annotator=annotator, batch_id=batch.pk)
            for a in assignments:
                work.draft_save(
                    annotator=annotator,
                    batch_id=batch.pk,
                    assignment_id=a.pk,
                    text=f"Ein Bild {a.item.image.key} von {annotator.user.username}",
                    base_revision=0,
                )
            work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)


@pytest.fixture(autouse=True)
def one_thread(settings):
    """The CI machine is shared: one torch thread is faster there than fighting over cores."""
    settings.CLIP_TORCH_THREADS = 1


@pytest.fixture
def rated_campaign(db, german):
    campaign = f.open_caption_campaign(images=20, batch_size=5, replication=2, language=german, name="Bilder")
    people = [f.AnnotatorFactory(user__username=n, languages=[german]) for n in ("ft-one", "ft-two")]
    caption_work(campaign, people, batches=4)
    return campaign


@pytest.fixture
def demo_model(db):
    return clip_model_demo_register()


def start(django_capture_on_commit_callbacks, **kwargs) -> ClipFineTune:
    kwargs = {**SMALL, "campaigns": ["Bilder"], "base": DEMO_MODEL_NAME, "register_as": "bilder-ft", **kwargs}
    with django_capture_on_commit_callbacks(execute=True):
        run = fine_tune_create(**kwargs)
    run.refresh_from_db()
    return run


def test_a_run_trains_on_the_campaign_and_registers_a_model_with_its_provenance(
    rated_campaign, demo_model, django_capture_on_commit_callbacks
):
    run = start(django_capture_on_commit_callbacks)
    assert run.status == RunStatus.SUCCEEDED, run.error
    selection = run.selection
    # 40 written captions in de; 40 screen-1 ratings of the English prompt captions, 8 of them NEI.
    assert selection["pairs_per_language"] == {"de": 40}
    assert selection["rated_per_language"] == {"en": 32}
    assert selection["images_per_split"] == {"train": 16, "dev": 2, "test": 2}
    model = ClipModel.objects.get(name="bilder-ft")
    assert run.model == model and model.is_demo and Path(model.checkpoint).is_file()
    assert model.model_id.startswith("captioneval-demo-tiny-clip:sha256-")
    assert model.base_model_id.startswith("captioneval-demo-tiny-clip:sha256-")
    assert model.model_id != model.base_model_id  # its own weights, its own id
    assert model.provenance["hyperparameters"]["learning_rate"] == 1e-4
    assert model.provenance["split_seed"] == 0 and "torch" in model.provenance["versions"]
    assert model.provenance["dev"]["history"][0]["epoch"] == 1
    assert run.epoch == 1 and run.step >= 1 and run.device == "cpu"
    # The before/after table is per language of the ratings, over the test split only.
    test_images = {int(k) for k, v in run.data["splits"].items() if v == "test"}
    assert {int(row[1].split(":")[0]) for row in run.results["test"]} <= test_images
    table = before_after(run.results["test"], n_boot=50)
    assert list(table) == ["en"] and table["en"]["n"] == len(run.results["test"])


def test_nothing_of_the_test_split_reaches_training(
    rated_campaign, demo_model, django_capture_on_commit_callbacks, monkeypatch
):
    seen = {}
    real = jobs.fine_tune

    def spy(**kwargs):
        seen["images"] = {p.image for p in kwargs["pairs"]} | {r.image for r in kwargs["rated"]}
        seen["dev"] = {r.image for r in kwargs["rated_dev"]}
        loaded = []
        pixels = kwargs["pixels"]
        kwargs["pixels"] = lambda key: loaded.append(key) or pixels(key)
        seen["pixels"] = loaded
        return real(**kwargs)

    monkeypatch.setattr(jobs, "fine_tune", spy)
    run = start(django_capture_on_commit_callbacks)
    assert run.status == RunStatus.SUCCEEDED, run.error
    splits = run.data["splits"]
    test = {k for k, v in splits.items() if v == "test"}
    assert test and seen["images"] and seen["dev"]
    assert not (seen["images"] | seen["dev"] | set(seen["pixels"])) & test
    assert {splits[k] for k in seen["images"]} == {"train"} and {splits[k] for k in seen["dev"]} == {"dev"}


def test_a_killed_run_resumes_from_its_checkpoint(
    rated_campaign, demo_model, django_capture_on_commit_callbacks
):
    run = start(django_capture_on_commit_callbacks, epochs=2)
    assert run.status == RunStatus.SUCCEEDED, run.error
    first_steps = run.step
    with django_capture_on_commit_callbacks(execute=False):
        run = fine_tune_create(
            **{**SMALL, "epochs": 2}, campaigns=["Bilder"], base=DEMO_MODEL_NAME, register_as="again"
        )
    ClipFineTune.objects.filter(pk=run.pk).update(status=RunStatus.QUEUED)
    steps = []
    assert (
        fine_tune_train(
            run_id=run.pk, on_progress=lambda v: steps.append(v), should_stop=lambda: len(steps) >= 2
        )
        == "interrupted"
    )
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "interrupted" in run.error and Path(run.checkpoint).is_file()
    assert not ClipModel.objects.filter(name="again").exists()
    # A worker killed mid-run leaves it "running" and silent; it is resumable once silent long enough.
    ClipFineTune.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, heartbeat_at=timezone.now())
    with pytest.raises(Conflict, match="is running"):
        fine_tune_resume(run_id=run.pk)
    ClipFineTune.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    resumed_steps = []
    fine_tune_resume(run_id=run.pk, enqueue=False)
    assert (
        fine_tune_train(run_id=run.pk, on_progress=lambda v: resumed_steps.append(v["step"])) == "succeeded"
    )
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.attempts == 2
    assert resumed_steps[0] > 1 and run.step == first_steps  # continued where it stopped, same length
    assert fine_tune_train(run_id=run.pk) == "skipped"  # a second delivery does nothing
    assert fine_tune_resume(run_id=run.pk).status == RunStatus.SUCCEEDED
    with pytest.raises(NotFound):
        fine_tune_resume(run_id=run.pk + 100)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"campaigns": []}, "Name caption or rating campaigns"),
        ({"campaigns": ["nope"]}, "Unknown campaign(s): nope"),
        (
            {"min_ratings": 50},
            "Too few rated captions to fine-tune and judge on (NOT-ENOUGH-INFO left out; at least 50 per language): en has 32",
        ),
        ({"languages": ["de"]}, "There are no rated captions in Bilder"),
        ({"languages": ["de", "fr"]}, "No captions or ratings in fr in Bilder"),
        ({"languages": ["xx"]}, "Unknown language(s): xx"),
        ({"languages": ["de", "en"], "min_ratings": 40}, "en has 32"),
        ({"base": "missing"}, "There is no registered CLIP model “missing”"),
        ({"batch_size": 2}, "Batch size must be at least 3"),
        ({"trainable": "vision"}, "Trainable must be one of"),
        ({"register_as": DEMO_MODEL_NAME}, "exists or is being trained"),
    ],
)
def test_bad_requests_are_refused_with_the_reason_and_store_nothing(
    rated_campaign, demo_model, kwargs, message
):
    f.LanguageFactory(code="fr", name="French")
    with pytest.raises((ValidationFailed, NotFound)) as caught:
        fine_tune_create(
            **{**SMALL, "campaigns": ["Bilder"], "base": DEMO_MODEL_NAME, "register_as": "x", **kwargs}
        )
    assert message in caught.value.message
    assert ClipFineTune.objects.count() == 0


def test_campaigns_without_image_files_are_refused_with_the_counts(rated_campaign, demo_model):
    from annotation.models import Image

    Image.objects.update(file="")
    with pytest.raises(
        ValidationFailed, match=r"Bilder holds no images with files \(20 images, 20 without a file\)"
    ):
        fine_tune_create(**SMALL, campaigns=["Bilder"], base=DEMO_MODEL_NAME, register_as="x")
    assert ClipFineTune.objects.count() == 0


def test_external_files_are_read_and_a_malformed_one_is_refused_by_line(rated_campaign, demo_model, tmp_path):
    from annotation.models import Image

    keys = list(Image.objects.order_by("key").values_list("key", flat=True))
    good = tmp_path / "ratings.csv"
    good.write_text(
        "image,caption,language,rating\n"
        + "".join(f"{k},ein Hund,de,{1 + i % 4}\n" for i, k in enumerate(keys[:12]))
        + f"{keys[0]},ein Hund,de,NOT-ENOUGH-INFO\n",
        encoding="utf-8",
    )
    from evaluation.finetune.plan import fine_tune_plan

    plan = fine_tune_plan(
        **SMALL, campaigns=["Bilder"], ratings_file=str(good), base=DEMO_MODEL_NAME, register_as="x"
    )
    assert plan.selection["rated_per_language"] == {"de": 12, "en": 32}
    assert plan.selection["not_enough_info_left_out"] == 1
    bad = tmp_path / "bad.csv"
    bad.write_text(f"image,caption,language,rating\n{keys[0]},ein Hund,de,7\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match=r"line 2: rating '7' is not one of 1, 2, 3, 4"):
        fine_tune_create(
            **SMALL, campaigns=["Bilder"], ratings_file=str(bad), base=DEMO_MODEL_NAME, register_as="x"
        )
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("image,caption,language,rating\nno-such-image,ein Hund,de,3\n", encoding="utf-8")
    with pytest.raises(
        ValidationFailed,
        match=r"1 image key\(s\) of the files are not images of the platform \(no-such-image\)",
    ):
        fine_tune_create(
            **SMALL, campaigns=["Bilder"], ratings_file=str(unknown), base=DEMO_MODEL_NAME, register_as="x"
        )
    assert ClipFineTune.objects.count() == 0


def test_an_unreachable_broker_fails_the_run_visibly_and_it_stays_resumable(
    rated_campaign, demo_model, django_capture_on_commit_callbacks, monkeypatch
):
    from evaluation.finetune import tasks

    def down(*args, **kwargs):
        raise ConnectionError("connection refused")

    monkeypatch.setattr(tasks.train_clip, "apply_async", down)
    with pytest.raises(JobsUnavailable, match="could not be queued"):
        start(django_capture_on_commit_callbacks)
    run = ClipFineTune.objects.get()
    assert run.status == RunStatus.FAILED and "broker is unreachable" in run.error
    monkeypatch.undo()
    with django_capture_on_commit_callbacks(execute=True):
        fine_tune_resume(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error


def test_a_metric_run_can_choose_the_fine_tuned_model_under_its_own_id(
    rated_campaign, demo_model, django_capture_on_commit_callbacks, tmp_path
):
    from annotation.models import Image, Language

    run = start(django_capture_on_commit_callbacks)
    german = Language.objects.get(code="de")
    images = list(Image.objects.order_by("key")[:3])
    refs = f.reference_set_with(
        images, [["ein Hund"], ["eine Katze"], ["ein Bus"]], name="refs-de", language=german
    )
    system = f.SystemFactory(name="sys")
    for image in images:
        f.SystemCaptionFactory(system=system, image=image, language=german, text="ein Tier")
    plan = metric_run_plan(
        name="ft",
        language_code="de",
        system_names=["sys"],
        reference_set_id=refs.pk,
        metrics=["CLIPScore"],
        clip_model_name="bilder-ft",
    )
    assert plan.params["clip_registered"] == "bilder-ft"
    assert plan.params["clip_checkpoint"] == run.output and plan.params["clip_model_config"]
    from evaluation.runs.plan import metric_run_store

    with django_capture_on_commit_callbacks(execute=True):
        metric_run = metric_run_store(plan=plan)
    metric_run.refresh_from_db()
    assert metric_run.status == RunStatus.SUCCEEDED, metric_run.error
    sha = run.model.model_id.rsplit("sha256-", 1)[1]
    assert f"ckpt:sha256-{sha[:16]}" in metric_run.signatures["CLIPScore"]
    assert sha not in run.model.base_model_id
    # The report of that metric run shows the model's before/after table, labelled as the demo's.
    from evaluation.research.reports.report import report_from_db

    report = report_from_db(metric_run_ids=[metric_run.pk], n_boot=50, sxs_n_boot=50, n_permutations=50)
    assert [s.model for s in report.fine_tunes] == ["bilder-ft"] and report.fine_tunes[0].run_id == run.pk
    assert "en" in report.fine_tunes[0].table and "not results" in report.fine_tunes[0].text
    from evaluation.research.reports.render import report_write

    written = {path.name: path for path in report_write(report, tmp_path / "report")}
    assert "not results" in written["finetune.txt"].read_text(encoding="utf-8")
    assert "finetune.txt" in written["index.txt"].read_text(encoding="utf-8")
    researcher = f.RoleUserFactory(username="reader")
    client = Client()
    client.force_login(researcher)
    html = client.get(reverse("reports:report") + f"?runs={metric_run.pk}").content.decode()
    assert f'id="finetune-{run.pk}"' in html and "before and after, on its test split" in html
    assert "These numbers show the workflow; they are not results." in html
    body = {"language": "de", "systems": ["sys"], "reference_set": refs.pk, "metrics": ["CLIPScore"]}
    refused = client.post(
        "/api/metric-runs/", {**body, "clip_model": "nope"}, content_type="application/json"
    )
    assert refused.status_code == 404 and "no registered CLIP model “nope”" in refused.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        made = client.post(
            "/api/metric-runs/", {**body, "clip_model": "bilder-ft"}, content_type="application/json"
        )
    assert made.status_code == 201 and made.json()["params"]["clip_registered"] == "bilder-ft"
    with pytest.raises(NotFound, match="no registered CLIP model “nope”"):
        metric_run_plan(
            name="x",
            language_code="de",
            system_names=["sys"],
            reference_set_id=refs.pk,
            metrics=["CLIPScore"],
            clip_model_name="nope",
        )


def test_the_command_trains_with_a_progress_bar_and_prints_the_demo_table(rated_campaign, capsys):
    call_command(
        "finetune_clip",
        "--demo-base",
        "--campaigns",
        "Bilder",
        "--register-as",
        "cmd-ft",
        "--epochs",
        "1",
        "--batch-size",
        "4",
        "--min-ratings",
        "5",
    )
    out, err = capsys.readouterr()
    assert "registered CLIP model “cmd-ft”" in out
    assert "DEMO: a tiny random model on demo data. These numbers are not results." in out
    assert "Δτ_b" in out and "step" in err
    with pytest.raises(CommandError, match="Too few rated captions"):
        call_command(
            "finetune_clip",
            "--demo-base",
            "--campaigns",
            "Bilder",
            "--register-as",
            "cmd-2",
            "--min-ratings",
            "40",
        )
    call_command(
        "finetune_clip", "--campaigns", "Bilder", "--min-ratings", "5", "--dry-run", "--register-as", "dry"
    )
    assert "Dry run: nothing stored." in capsys.readouterr().out
    assert ClipFineTune.objects.count() == 1
    with pytest.raises(CommandError, match="LANGUAGE=PATH"):
        call_command("finetune_clip", "--campaigns", "Bilder", "--captions-file", "nolanguage")


def test_a_manager_starts_a_run_in_the_admin_and_sees_its_table_a_researcher_only_reads(
    rated_campaign,
    demo_model,
    pm_client,
    researcher_client,
    annotator,
    django_capture_on_commit_callbacks,
    settings,
):
    annotator_client = Client()
    annotator_client.force_login(annotator.user)
    url = reverse("admin:evaluation_clipfinetune_add")
    assert pm_client.get(url).status_code == 200
    form = {
        "name": "",
        "campaigns": [rated_campaign.pk],
        "language_codes": "",
        "base": demo_model.pk,
        "register_as": "admin-ft",
        "learning_rate": "0.0001",
        "batch_size": "4",
        "epochs": "1",
        "patience": "1",
        "seed": "0",
        "split_seed": "0",
        "trainable": "text",
    }
    settings.CLIP_FINETUNE_MIN_RATINGS = 40
    refused = pm_client.post(url, form)
    assert "Too few rated captions" in refused.content.decode() and "en has 32" in refused.content.decode()
    assert ClipFineTune.objects.count() == 0
    settings.CLIP_FINETUNE_MIN_RATINGS = 5
    with django_capture_on_commit_callbacks(execute=True):
        response = pm_client.post(url, form)
    assert response.status_code == 302, response.content.decode()[:3000]
    run = ClipFineTune.objects.get()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.config["trainable"] == "text"
    page = researcher_client.get(
        reverse("admin:evaluation_clipfinetune_change", args=[run.pk])
    ).content.decode()
    assert "id='finetune-before-after'" in page and "not results" in page and "epoch 1/1" in page
    assert researcher_client.get(url).status_code == 403
    model_page = researcher_client.get(reverse("admin:evaluation_clipmodel_change", args=[run.model.pk]))
    assert model_page.status_code == 200 and "finetune-before-after" in model_page.content.decode()
    # The fine-tuned model is a choice of the metric-run form.
    choice = pm_client.get(reverse("admin:evaluation_metricrun_add")).content.decode()
    assert f'<option value="{run.model.pk}">admin-ft (tiny demo model)</option>' in choice
    for target in (url, reverse("admin:evaluation_clipfinetune_change", args=[run.pk])):
        assert annotator_client.get(target).status_code == 302  # to the admin login: not staff


def test_the_demo_fine_tunes_its_tiny_model_on_its_own_data_labelled_as_such(db, capsys, settings):
    from evaluation.demo.captions import CAPTIONS

    for code, name in (("de", "German"), ("ar", "Arabic"), ("ja", "Japanese")):
        f.LanguageFactory(code=code, name=name)
    for key in sorted(CAPTIONS["de"]):
        f.ImageFactory(key=key)
    call_command("finetune_clip", "--demo", "--register-as", "demo-ft", "--epochs", "1", "--batch-size", "16")
    out = capsys.readouterr().out
    run = ClipFineTune.objects.get()
    assert run.status == RunStatus.SUCCEEDED and run.is_demo and run.model.is_demo
    assert run.selection["rated_per_language"] == {"ar": 68, "de": 68, "ja": 68}
    assert run.selection["pairs_per_language"] == {"ar": 34, "de": 34, "ja": 34}
    assert "DEMO: a tiny random model on demo data. These numbers are not results." in out
    assert str(ClipModel.objects.get(name=DEMO_MODEL_NAME)) == "demo-tiny-clip (tiny demo model)"


def test_the_api_reads_runs_and_models_for_research_roles_only(
    rated_campaign, demo_model, researcher_client, annotator, django_capture_on_commit_callbacks
):
    run = start(django_capture_on_commit_callbacks)
    listed = researcher_client.get("/api/fine-tunes/").json()
    assert listed["count"] == 1 and listed["results"][0]["model"] == "bilder-ft"
    detail = researcher_client.get(f"/api/fine-tunes/{run.pk}/").json()
    assert detail["is_demo"] is True and detail["config"]["epochs"] == 1
    assert set(detail["before_after"]) == {"en"} and "delta_tau_b" in detail["before_after"]["en"]
    assert "data" not in detail  # the frozen data stays in the database
    models = researcher_client.get("/api/clip-models/").json()
    assert {m["name"] for m in models["results"]} == {DEMO_MODEL_NAME, "bilder-ft"}
    model = researcher_client.get(f"/api/clip-models/{run.model.pk}/").json()
    assert model["fine_tune_run"] == run.pk and model["provenance"]["split_seed"] == 0
    assert researcher_client.get("/api/clip-models/?is_demo=false").json()["count"] == 0
    assert researcher_client.get("/api/fine-tunes/?status=failed").json()["count"] == 0
    assert researcher_client.get("/api/fine-tunes/?bogus=1").status_code == 400
    for url in (f"/api/fine-tunes/{run.pk + 1}/", f"/api/clip-models/{run.model.pk + 10}/"):
        assert researcher_client.get(url).status_code == 404
    for url in (f"/api/fine-tunes/{run.pk}/", "/api/fine-tunes/", f"/api/clip-models/{run.model.pk}/"):
        assert researcher_client.post(url, {}).status_code == 405
        assert researcher_client.delete(url).status_code == 405
    outsider = Client()
    outsider.force_login(annotator.user)
    for url in (
        "/api/fine-tunes/",
        f"/api/fine-tunes/{run.pk}/",
        "/api/clip-models/",
        f"/api/clip-models/{run.model.pk}/",
    ):
        assert outsider.get(url).status_code == 403
        assert Client().get(url).status_code in (401, 403)


def test_verification_ratings_of_human_captions_join_the_pearson_data(rated_campaign, demo_model, german):
    from annotation.assignment.engine import batch_request
    from annotation.services import work
    from annotation.services.campaigns import campaign_open, rating_campaign_create
    from evaluation.finetune.plan import fine_tune_plan

    verification = rating_campaign_create(name="Prüfung", source_campaign_id=rated_campaign.pk, batch_size=20)
    verification = campaign_open(campaign_id=verification.pk)
    for n in range(3):
        rater = f.AnnotatorFactory(languages=[german], reads_english=False)
        batch, _ = batch_request(annotator=rater, campaign_id=verification.pk)
        for a in batch.assignments.all():
            value = VALUES[(a.item.image_id + n) % len(VALUES)]
            work.rating_save(annotator=rater, batch_id=batch.pk, assignment_id=a.pk, value=value)
        work.judgment_batch_submit(annotator=rater, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    plan = fine_tune_plan(**SMALL, campaigns=["Bilder", "Prüfung"], base=DEMO_MODEL_NAME, register_as="x")
    # 20 captions × 3 raters, NOT-ENOUGH-INFO (one in five) left out: 48 ratings of German human captions.
    assert plan.selection["rated_by_source"] == {"screen1": 32, "verification": 48}
    assert plan.selection["rated_per_language"] == {"de": 48, "en": 32}
    texts = {row[1] for row in plan.data["rated"] if row[4] == "verification"}
    assert all(text.startswith("Ein Bild") for text in texts)  # the human captions, not the prompt captions


def test_a_rolled_back_start_queues_nothing_and_the_sweep_requeues_a_silent_run(
    rated_campaign, demo_model, django_capture_on_commit_callbacks
):
    from django.db import transaction

    from evaluation.finetune.tasks import requeue_orphaned_fine_tunes

    with (
        django_capture_on_commit_callbacks(execute=True) as sent,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        fine_tune_create(**SMALL, campaigns=["Bilder"], base=DEMO_MODEL_NAME, register_as="gone")
        raise RuntimeError("rolled back")
    assert sent == [] and ClipFineTune.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=False):
        run = fine_tune_create(**SMALL, campaigns=["Bilder"], base=DEMO_MODEL_NAME, register_as="swept")
    # A worker that claimed the run and died: running, silent for longer than the orphan timeout.
    ClipFineTune.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, heartbeat_at=timezone.now() - timedelta(hours=2)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert requeue_orphaned_fine_tunes() == 1
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert requeue_orphaned_fine_tunes() == 0
