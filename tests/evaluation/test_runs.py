"""Metric runs as jobs, run eagerly: numbers, rows, idempotency, resume, CLIP, enqueue on commit, broker down.

RELIABILITY 9 (enqueue on commit), 10 (idempotent chunks, resume) and 11 (broker down) are
proven here eagerly; tests/evaluation/test_jobs_redis.py repeats the job cases with a real
broker and a real worker.
"""

from __future__ import annotations

import logging
import os
import time
from contextlib import contextmanager
from datetime import timedelta
from unittest import mock

import numpy as np
import pytest
from django.db import transaction
from django.test import override_settings
from django.utils import timezone

from annotation.models import SystemCaption
from core.errors import DomainError, JobsUnavailable, ValidationFailed
from evaluation.metrics.clip import ensure_torchvision_loadable, load_clip, register_model_config, score_clip
from evaluation.metrics.references import reference_set_from_campaign
from evaluation.metrics.text.scoring import score_texts
from evaluation.models import (
    CLIP_METRICS,
    TEXT_METRICS,
    CaptionScore,
    ChunkKind,
    ChunkStatus,
    ClipEmbedding,
    CorpusScore,
    MetricChunk,
    MetricRun,
    RunStatus,
)
from evaluation.runs.plan import metric_run_create, metric_run_resume
from evaluation.runs.selectors import corpus_table
from evaluation.runs.tasks import compute_metric_chunk
from tests import factories as f
from tests.evaluation.clip_tiny import TINY_CONFIG, TINY_MODEL_NAME, save_tiny_checkpoint

CAPTIONS = {
    "sys-a": [
        "Ein brauner Hund rennt über den Strand.",
        "Zwei Kinder spielen Fußball im Park.",
        "Eine Frau fährt Fahrrad auf der Straße.",
        "Ein roter Bus steht an der Haltestelle.",
    ],
    "sys-b": [
        "Ein Hund läuft am Meer.",
        "Kinder mit einem Ball auf einer Wiese.",
        "Eine Person auf einem Fahrrad.",
        "Ein Bus in der Stadt.",
    ],
}
REFERENCES = [
    ["Ein brauner Hund läuft am Strand entlang.", "Ein Hund rennt über den Sand am Meer."],
    ["Zwei Kinder spielen im Park Fußball.", "Kinder spielen mit einem Ball auf der Wiese."],
    ["Eine Frau fährt mit dem Fahrrad die Straße entlang.", "Eine Radfahrerin auf einer Straße."],
    ["Ein roter Bus hält an einer Haltestelle.", "Ein Stadtbus wartet an der Haltestelle."],
]


@contextmanager
def celery_conf(**overrides):
    """Change the Celery app's configuration for a block (settings are read once, at app configuration)."""
    from config.celery import app

    def reset_pools():
        # Forget the app's pools (kombu keeps one per broker URL and hands it out again).
        app._pool = None
        if "amqp" in app.__dict__:
            app.__dict__["amqp"]._producer_pool = None

    old = {key: app.conf[key] for key in overrides}
    # Celery reads CELERY_BROKER_URL from the environment before its configuration (CI sets it).
    old_env = os.environ.get("CELERY_BROKER_URL")
    if "broker_url" in overrides:
        os.environ["CELERY_BROKER_URL"] = overrides["broker_url"]
    app.conf.update(overrides)
    reset_pools()
    try:
        yield app
    finally:
        app.conf.update(old)
        if "broker_url" in overrides:
            if old_env is None:
                os.environ.pop("CELERY_BROKER_URL", None)
            else:
                os.environ["CELERY_BROKER_URL"] = old_env
        reset_pools()


@pytest.fixture
def setup(db, german):
    """Four images with files, two systems' German captions, an imported German reference set."""
    images = [f.ImageFactory() for _ in REFERENCES]
    for name, texts in CAPTIONS.items():
        system = f.SystemFactory(name=name)
        for image, text in zip(images, texts):
            SystemCaption.objects.create(system=system, image=image, language=german, text=text)
    reference_set = f.reference_set_with(images, REFERENCES, name="refs-de", language=german)
    return {"images": images, "references": reference_set, "language": german}


def create(
    setup, *, metrics=TEXT_METRICS, systems=("sys-a", "sys-b"), language_code="de", **kwargs
) -> MetricRun:
    return metric_run_create(
        name="test run",
        language_code=language_code,
        system_names=list(systems),
        reference_set_id=setup["references"].pk,
        metrics=list(metrics),
        **kwargs,
    )


def run_now(setup, django_capture_on_commit_callbacks, **kwargs) -> MetricRun:
    with django_capture_on_commit_callbacks(execute=True):
        run = create(setup, **kwargs)
    run.refresh_from_db()
    return run


def expected_text_scores(setup, system_name, metrics=TEXT_METRICS):
    images = setup["images"]
    candidates = {image.pk: text for image, text in zip(images, CAPTIONS[system_name])}
    references = {image.pk: texts for image, texts in zip(images, REFERENCES)}
    return score_texts(candidates, references, scheme="whitespace", metrics=metrics, language="de")


# The session fixture ``java`` (tests/conftest.py) skips these without java, and fails them under CI.
requires_java = pytest.mark.usefixtures("java")


# --- Text metrics -----------------------------------------------------------------------------


@requires_java
def test_meteor_is_stored_with_the_text_metrics(setup, django_capture_on_commit_callbacks):
    run = run_now(setup, django_capture_on_commit_callbacks, metrics=["text"])
    assert run.status == RunStatus.SUCCEEDED and run.not_computed == {}
    assert "METEOR" in run.metrics
    assert run.params["meteor"] == "meteor-1.5 de norm exact+stem"
    expected = expected_text_scores(setup, "sys-a", metrics=["METEOR"])
    stored = CorpusScore.objects.get(run=run, system__name="sys-a", metric="METEOR").value
    assert stored == expected.corpus["METEOR"] > 0
    per_caption = dict(
        CaptionScore.objects.filter(run=run, system__name="sys-a", metric="METEOR").values_list(
            "image_id", "value"
        )
    )
    assert per_caption == expected.per_caption["METEOR"]


def test_without_java_the_run_keeps_the_other_metrics_and_says_why_meteor_is_missing(
    setup, django_capture_on_commit_callbacks
):
    with override_settings(METEOR_JAVA="/nonexistent/bin/java"):
        run = run_now(setup, django_capture_on_commit_callbacks, metrics=["BLEU-4", "CIDEr-D", "METEOR"])
    # Done with a note: the other scores are complete and correct, METEOR is named as not computed.
    assert run.status == RunStatus.SUCCEEDED
    assert run.error == ""
    assert set(run.not_computed) == {"METEOR"}
    assert set(run.not_computed["METEOR"]) == {"sys-a", "sys-b"}
    reason = run.not_computed["METEOR"]["sys-a"]
    assert "Java was not found" in reason and "apt-get install default-jre-headless" in reason
    assert not CaptionScore.objects.filter(run=run, metric="METEOR").exists()
    assert not CorpusScore.objects.filter(run=run, metric="METEOR").exists()
    expected = expected_text_scores(setup, "sys-a", metrics=["BLEU-4", "CIDEr-D"])
    for metric in ("BLEU-4", "CIDEr-D"):
        assert (
            CorpusScore.objects.get(run=run, system__name="sys-a", metric=metric).value
            == expected.corpus[metric]
        )
    assert CaptionScore.objects.filter(run=run, metric="CIDEr-D").count() == 2 * 4


def test_cider_df_from_the_whole_reference_set_is_recorded_and_used(
    setup, django_capture_on_commit_callbacks
):
    images = setup["images"]
    image_set = f.ImageSetFactory(name="one image", language=setup["language"], images=[images[0]])
    default = run_now(
        setup, django_capture_on_commit_callbacks, metrics=["CIDEr-D"], image_set_id=image_set.pk
    )
    whole = run_now(
        setup,
        django_capture_on_commit_callbacks,
        metrics=["CIDEr-D"],
        image_set_id=image_set.pk,
        cider_df="refset",
    )
    assert default.params["cider_df"] == "test"
    assert whole.params["cider_df"] == "refset:refs-de"
    # One image with its own df: every n-gram weighs log(1) - log(1) = 0.
    assert CorpusScore.objects.get(run=default, system__name="sys-a", metric="CIDEr-D").value == 0.0
    stored = CorpusScore.objects.get(run=whole, system__name="sys-a", metric="CIDEr-D").value
    expected = score_texts(
        {images[0].pk: CAPTIONS["sys-a"][0]},
        {images[0].pk: REFERENCES[0]},
        metrics=["CIDEr-D"],
        df_references={image.pk: texts for image, texts in zip(images, REFERENCES)},
        df_name="refset:refs-de",
    )
    assert stored == expected.corpus["CIDEr-D"] > 0
    # The single image scores what it scores inside a run over all four images (same df).
    full = run_now(setup, django_capture_on_commit_callbacks, metrics=["CIDEr-D"])
    inside = CaptionScore.objects.get(run=full, system__name="sys-a", image=images[0], metric="CIDEr-D").value
    assert stored == pytest.approx(inside, abs=1e-12)


def test_an_unknown_cider_df_source_is_refused(setup):
    with pytest.raises(ValidationFailed, match="Unknown CIDEr document-frequency source “corpus”"):
        create(setup, cider_df="corpus")


def test_run_stores_the_numbers_of_the_pure_engine(setup, django_capture_on_commit_callbacks):
    run = run_now(setup, django_capture_on_commit_callbacks)

    assert run.status == RunStatus.SUCCEEDED, run.error
    assert (run.chunks_done, run.chunks_total) == (2, 2)
    assert run.params["tokenizer"] == "whitespace"
    assert run.versions["django"] and run.versions["numpy"] and run.versions["python"]
    assert run.started_at and run.finished_at and run.timings["text_seconds"] >= 0
    assert CaptionScore.objects.filter(run=run).count() == 2 * 4 * len(TEXT_METRICS)
    for name in CAPTIONS:
        expected = expected_text_scores(setup, name)
        corpus = dict(CorpusScore.objects.filter(run=run, system__name=name).values_list("metric", "value"))
        assert corpus == expected.corpus
        for metric in TEXT_METRICS:
            stored = dict(
                CaptionScore.objects.filter(run=run, system__name=name, metric=metric).values_list(
                    "image_id", "value"
                )
            )
            assert stored == expected.per_caption[metric]
    # Not a degenerate example: the systems differ and the scores are not all zero.
    table = corpus_table(MetricRun.objects.get(pk=run.pk))
    assert [row[0] for row in table.rows] == ["sys-a", "sys-b"]
    cider = table.metrics.index("CIDEr-D")
    assert table.rows[0][1][cider] > table.rows[1][1][cider] > 0


def test_rerunning_a_finished_runs_tasks_changes_nothing(setup, django_capture_on_commit_callbacks):
    run = run_now(setup, django_capture_on_commit_callbacks)
    before = list(
        CaptionScore.objects.filter(run=run).order_by("pk").values_list("pk", "value", "updated_at")
    )
    corpus_before = list(CorpusScore.objects.filter(run=run).order_by("pk").values_list("pk", "value"))

    for chunk in run.chunks.all():
        assert compute_metric_chunk.delay(chunk.pk).get() == "already done"

    assert (
        list(CaptionScore.objects.filter(run=run).order_by("pk").values_list("pk", "value", "updated_at"))
        == before
    )
    assert (
        list(CorpusScore.objects.filter(run=run).order_by("pk").values_list("pk", "value")) == corpus_before
    )
    assert set(run.chunks.values_list("attempts", flat=True)) == {1}


def test_a_chunk_rerun_after_a_crash_leaves_no_duplicates(setup):
    run = create(setup, enqueue=False)
    chunk = run.chunks.get(system__name="sys-a")
    # A worker died after writing part of the rows: chunk 'running', some rows, some wrong, and
    # no heartbeat since (a chunk still beating is its worker's and is not taken over).
    silent_since = timezone.now() - timedelta(minutes=5)
    MetricChunk.objects.filter(pk=chunk.pk).update(
        status=ChunkStatus.RUNNING, attempts=1, started_at=silent_since, heartbeat_at=silent_since
    )
    images = setup["images"]
    for image in images[:3]:
        f.CaptionScoreFactory(run=run, system=chunk.system, image=image, metric="BLEU-4", value=-1.0)
    f.CorpusScoreFactory(run=run, system=chunk.system, metric="CIDEr", value=-1.0)

    assert compute_metric_chunk.delay(chunk.pk).get() == "done"

    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.DONE and chunk.attempts == 2
    rows = CaptionScore.objects.filter(run=run, system=chunk.system)
    assert rows.count() == 4 * len(TEXT_METRICS)
    expected = expected_text_scores(setup, "sys-a")
    assert (
        dict(rows.filter(metric="BLEU-4").values_list("image_id", "value")) == expected.per_caption["BLEU-4"]
    )
    assert (
        CorpusScore.objects.get(run=run, system=chunk.system, metric="CIDEr").value
        == expected.corpus["CIDEr"]
    )
    run.refresh_from_db()
    assert (run.chunks_done, run.status) == (1, RunStatus.RUNNING)  # sys-b still to do


@override_settings(METRIC_CLIP_CHUNK_SIZE=2)
def test_resume_requeues_only_unfinished_chunks(setup, django_capture_on_commit_callbacks):
    run = create(setup, metrics=["BLEU-4", "CLIPScore"], enqueue=False)
    chunks = {(c.system.name, c.kind, c.index): c for c in run.chunks.select_related("system")}
    assert len(chunks) == 6  # per system: one text chunk, two CLIP chunks of 2 images
    done = chunks["sys-a", ChunkKind.TEXT, 0]
    assert compute_metric_chunk.delay(done.pk).get() == "done"
    failed, stale, fresh, pending = (
        chunks["sys-a", ChunkKind.CLIP, 0],
        chunks["sys-a", ChunkKind.CLIP, 1],
        chunks["sys-b", ChunkKind.CLIP, 0],
        chunks["sys-b", ChunkKind.TEXT, 0],
    )
    MetricChunk.objects.filter(pk=failed.pk).update(status=ChunkStatus.FAILED, error="boom")
    long_ago = timezone.now() - timedelta(hours=3)
    MetricChunk.objects.filter(pk=stale.pk).update(status=ChunkStatus.RUNNING, started_at=long_ago)
    MetricChunk.objects.filter(pk=fresh.pk).update(status=ChunkStatus.RUNNING, started_at=timezone.now())
    MetricRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, error="boom")

    with (
        mock.patch.object(compute_metric_chunk, "apply_async") as send,
        django_capture_on_commit_callbacks(execute=True),
    ):
        result = metric_run_resume(run_id=run.pk)

    sent = {call.kwargs["args"][0] for call in send.call_args_list}
    left_pending = chunks["sys-b", ChunkKind.CLIP, 1]
    assert sent == {failed.pk, stale.pk, pending.pk, left_pending.pk}
    assert (result.requeued, result.running) == (4, 1)
    run.refresh_from_db()
    assert (run.status, run.error) == (RunStatus.QUEUED, "")
    assert MetricChunk.objects.get(pk=fresh.pk).status == ChunkStatus.RUNNING
    assert MetricChunk.objects.get(pk=done.pk).status == ChunkStatus.DONE


def test_resume_of_a_succeeded_run_does_nothing(setup, django_capture_on_commit_callbacks):
    run = run_now(setup, django_capture_on_commit_callbacks)
    with (
        mock.patch.object(compute_metric_chunk, "apply_async") as send,
        django_capture_on_commit_callbacks(execute=True),
    ):
        result = metric_run_resume(run_id=run.pk)
    assert result.requeued == 0 and send.call_count == 0


def test_a_failed_run_resumes_to_success(setup, django_capture_on_commit_callbacks):
    run = create(setup, enqueue=False)
    chunk = run.chunks.get(system__name="sys-b")
    SystemCaption.objects.filter(system__name="sys-b", image=setup["images"][0]).delete()
    assert compute_metric_chunk.delay(chunk.pk).get() == "failed"
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "captions of “sys-b” were deleted after the run was created" in run.error

    SystemCaption.objects.create(
        system=chunk.system, image=setup["images"][0], language=setup["language"], text="Ein Hund."
    )
    with django_capture_on_commit_callbacks(execute=True):
        metric_run_resume(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.error == ""
    assert CaptionScore.objects.filter(run=run).count() == 2 * 4 * len(TEXT_METRICS)
    assert MetricChunk.objects.get(pk=chunk.pk).attempts == 2


# --- Validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"systems": ["sys-a", "nope"]}, "Unknown captioning system(s): nope."),
        ({"metrics": ["BLEU-5"]}, "Unknown metric(s): BLEU-5."),
        ({"systems": ["sys-c"]}, "“sys-c” has no captions in German (de)."),
    ],
)
def test_creating_a_run_explains_what_is_wrong(setup, kwargs, message):
    f.SystemFactory(name="sys-c")
    with pytest.raises(ValidationFailed) as caught:
        create(setup, **kwargs)
    assert message in caught.value.message
    assert not MetricRun.objects.exists()


def test_a_reference_set_without_references_is_refused(setup, german):
    campaign = f.CampaignFactory(language=german)
    reference_set = reference_set_from_campaign(campaign_id=campaign.pk)
    with pytest.raises(ValidationFailed, match="has no references: nobody has written a caption"):
        metric_run_create(
            name="",
            language_code="de",
            system_names=["sys-a"],
            reference_set_id=reference_set.pk,
            metrics=["BLEU-4"],
        )


def test_an_image_set_needs_every_caption(setup, german, django_capture_on_commit_callbacks):
    image_set = f.ImageSetFactory(name="XM-tiny", images=setup["images"][:3])
    SystemCaption.objects.filter(system__name="sys-b", image=setup["images"][1]).delete()
    with pytest.raises(
        ValidationFailed, match=r"“sys-b” has no de caption for 1 of the 3 images of “XM-tiny”"
    ):
        create(setup, image_set_id=image_set.pk)

    with django_capture_on_commit_callbacks(execute=True):
        run = create(setup, systems=["sys-a"], image_set_id=image_set.pk)
    assert CaptionScore.objects.filter(run=run).values("image").distinct().count() == 3


def test_campaign_references_are_the_written_captions(setup, german, django_capture_on_commit_callbacks):
    from annotation.models import WrittenCaption

    campaign = f.open_caption_campaign(images=2, language=german)
    annotator = f.AnnotatorFactory(languages=[german])
    batch = f.m.Batch.objects.create(campaign=campaign, annotator=annotator, lease_expires_at=timezone.now())
    image = setup["images"][0]
    item = f.m.Item.objects.create(campaign=campaign, image=image)
    assignment = f.m.Assignment.objects.create(batch=batch, item=item, annotator=annotator, position=0)
    WrittenCaption.objects.create(
        assignment=assignment,
        image=image,
        language=german,
        annotator=annotator,
        campaign=campaign,
        text=REFERENCES[0][0],
    )
    reference_set = reference_set_from_campaign(campaign_id=campaign.pk)
    assert reference_set_from_campaign(campaign_id=campaign.pk) == reference_set  # idempotent

    with django_capture_on_commit_callbacks(execute=True):
        run = metric_run_create(
            name="",
            language_code="de",
            system_names=["sys-a"],
            reference_set_id=reference_set.pk,
            metrics=["BLEU-1", "CIDEr-D"],
        )
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    expected = score_texts(
        {image.pk: CAPTIONS["sys-a"][0]}, {image.pk: [REFERENCES[0][0]]}, metrics=["BLEU-1"]
    )
    assert CorpusScore.objects.get(run=run, metric="BLEU-1").value == expected.corpus["BLEU-1"]
    assert CaptionScore.objects.filter(run=run).count() == 2


# --- CLIP metrics -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    ensure_torchvision_loadable()
    register_model_config(TINY_MODEL_NAME, TINY_CONFIG)
    return save_tiny_checkpoint(tmp_path_factory.mktemp("clip") / "tiny.pt", seed=7)


@pytest.fixture
def tiny_clip(tiny_checkpoint):
    with override_settings(
        CLIP_MODEL=TINY_MODEL_NAME,
        CLIP_PRETRAINED="",
        CLIP_CHECKPOINT=str(tiny_checkpoint),
        METRIC_CLIP_CHUNK_SIZE=3,
    ):
        yield tiny_checkpoint


def test_clip_metrics_are_stored_and_image_embeddings_cached(
    setup, tiny_clip, django_capture_on_commit_callbacks
):
    from evaluation.metrics.clip import embedding

    metrics = ["BLEU-4", *CLIP_METRICS]
    with mock.patch.object(embedding, "pixel_batches", wraps=embedding.pixel_batches) as spy:
        run = run_now(setup, django_capture_on_commit_callbacks, metrics=metrics)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.chunks_total == 2 * (1 + 2)  # per system: text, and CLIP chunks of 3 + 1 images
    assert CaptionScore.objects.filter(run=run).count() == 2 * 4 * 3
    assert ClipEmbedding.objects.filter(kind="image").count() == 4  # the two systems share the images
    assert run.timings["images_embedded"] == 4 and spy.call_count >= 1

    # The stored numbers are the engine's, computed independently here.
    loaded = load_clip(TINY_MODEL_NAME, checkpoint_path=tiny_clip, device="cpu")
    assert run.timings["clip_model_id"] == loaded.model_id
    images = {image.pk: image.file.read() for image in setup["images"]}
    for name in CAPTIONS:
        candidates = {image.pk: text for image, text in zip(setup["images"], CAPTIONS[name])}
        references = {image.pk: texts for image, texts in zip(setup["images"], REFERENCES)}
        report = score_clip(loaded, candidates, images, references)
        stored = dict(
            CaptionScore.objects.filter(run=run, system__name=name, metric="CLIPScore").values_list(
                "image_id", "value"
            )
        )
        assert stored == pytest.approx(report.clipscore, abs=1e-6)
        stored_ref = dict(
            CaptionScore.objects.filter(run=run, system__name=name, metric="RefCLIPScore").values_list(
                "image_id", "value"
            )
        )
        assert stored_ref == pytest.approx(report.refclipscore, abs=1e-6)
        corpus = CorpusScore.objects.get(run=run, system__name=name, metric="CLIPScore").value
        assert corpus == pytest.approx(np.mean(list(stored.values())), abs=1e-12)
        assert corpus == pytest.approx(report.corpus_clipscore, abs=1e-6)

    # A second run computes no image embedding: all of them come from the database.
    with mock.patch.object(embedding, "pixel_batches", wraps=embedding.pixel_batches) as spy:
        again = run_now(setup, django_capture_on_commit_callbacks, metrics=["CLIPScore"])
    assert again.status == RunStatus.SUCCEEDED
    assert spy.call_count == 0
    assert again.timings["images_embedded"] == 0 and again.timings["images_cached"] == 8
    assert ClipEmbedding.objects.filter(kind="image").count() == 4


def test_chunks_of_a_run_share_the_cache_so_nothing_is_embedded_twice(
    setup, tiny_clip, django_capture_on_commit_callbacks
):
    """Four CLIP chunks (2 systems x images 3 + 1) run one after the other, as two workers would take them:
    the second system's chunks find the images and the shared references stored by the first's."""
    from evaluation.metrics.clip import text_hash

    run = run_now(setup, django_capture_on_commit_callbacks, metrics=list(CLIP_METRICS))
    assert run.status == RunStatus.SUCCEEDED, run.error
    distinct_texts = {t for texts in CAPTIONS.values() for t in texts} | {
        t for refs in REFERENCES for t in refs
    }
    # Each image and each text embedded exactly once over the four chunks; the rest read from the cache.
    assert run.timings["images_embedded"] == 4 and run.timings["images_cached"] == 4
    assert run.timings["texts_embedded"] == len(distinct_texts) == 16
    assert run.timings["texts_cached"] == 8  # sys-b's chunks: the 8 references
    rows = ClipEmbedding.objects.filter(kind="text")
    assert sorted(rows.values_list("content_hash", flat=True)) == sorted(text_hash(t) for t in distinct_texts)

    # A second run of the same model embeds nothing at all.
    again = run_now(setup, django_capture_on_commit_callbacks, metrics=list(CLIP_METRICS))
    assert again.timings["images_embedded"] == 0 and again.timings["texts_embedded"] == 0
    assert again.timings["texts_cached"] == 2 * (4 + 8)
    assert ClipEmbedding.objects.count() == 4 + 16


def test_image_orientation_is_recorded_and_keys_the_embedding_cache(
    setup, tiny_clip, django_capture_on_commit_callbacks
):
    # The default, exif (as annotators see the image), is recorded with the other CLIP settings.
    first = run_now(setup, django_capture_on_commit_callbacks, metrics=["CLIPScore"])
    assert first.status == RunStatus.SUCCEEDED, first.error
    assert first.params["image_orientation"] == "exif"
    assert first.timings["image_orientation"] == "exif"
    model_id = first.timings["clip_model_id"]
    assert set(ClipEmbedding.objects.filter(kind="image").values_list("model_id", flat=True)) == {model_id}

    # A run asking for the pixels as stored never reuses the upright embeddings: it computes its own.
    stored = run_now(
        setup, django_capture_on_commit_callbacks, metrics=["CLIPScore"], image_orientation="stored"
    )
    assert stored.status == RunStatus.SUCCEEDED, stored.error
    assert stored.params["image_orientation"] == "stored"
    # 4 images embedded again; the second system's chunk then finds them under the stored key.
    assert stored.timings["images_embedded"] == 4 and stored.timings["images_cached"] == 4
    assert ClipEmbedding.objects.filter(model_id=model_id, kind="image").count() == 4
    assert (
        ClipEmbedding.objects.filter(model_id=f"{model_id}|image_orientation=stored", kind="image").count()
        == 4
    )

    # The setting changes the default; a text-only run has no CLIP parameters to record.
    with override_settings(CLIP_IMAGE_ORIENTATION="stored"):
        by_setting = create(setup, metrics=["CLIPScore"], enqueue=False)
        assert by_setting.params["image_orientation"] == "stored"
        assert "image_orientation" not in create(setup, metrics=["BLEU-4"], enqueue=False).params
    with pytest.raises(ValidationFailed, match="Unknown image orientation 'sideways'; choose exif"):
        create(setup, metrics=["CLIPScore"], image_orientation="sideways", enqueue=False)


def test_the_tensor_image_pipeline_is_recorded_signed_and_cached_apart(
    setup, tiny_clip, django_capture_on_commit_callbacks
):
    """CLIP_IMAGE_PIPELINE=tensor (docs/clip-on-gpu.md): the run records it, its signature says so, and its
    image embeddings never mix with PIL ones; a PIL run keeps the parameters and signature it always had."""
    pil = run_now(setup, django_capture_on_commit_callbacks, metrics=["CLIPScore"])
    assert pil.status == RunStatus.SUCCEEDED, pil.error
    assert "clip_image_pipeline" not in pil.params
    model_id = pil.timings["clip_model_id"]
    with override_settings(CLIP_IMAGE_PIPELINE="tensor"):
        tensor = run_now(setup, django_capture_on_commit_callbacks, metrics=["CLIPScore"])
    assert tensor.status == RunStatus.SUCCEEDED, tensor.error
    assert tensor.params["clip_image_pipeline"] == "tensor"
    assert "|pixels:tensor|" in tensor.signatures["CLIPScore"]
    assert "pixels:" not in pil.signatures["CLIPScore"]
    assert tensor.timings["images_embedded"] == 4  # nothing read from the PIL entries
    key = f"{model_id}|image_pipeline=tensor"
    assert ClipEmbedding.objects.filter(model_id=key, kind="image").count() == 4
    # On the CPU the tensor pipeline decodes with PIL and resizes as tensor ops: the scores agree closely.
    for system in ("sys-a", "sys-b"):
        by_pil, by_tensor = (
            dict(
                CaptionScore.objects.filter(run=run, system__name=system, metric="CLIPScore").values_list(
                    "image_id", "value"
                )
            )
            for run in (pil, tensor)
        )
        assert by_tensor == pytest.approx(by_pil, abs=2e-3)


def test_clip_unavailable_fails_the_run_and_keeps_text_scores(
    setup, tiny_checkpoint, django_capture_on_commit_callbacks
):
    with override_settings(
        CLIP_MODEL=TINY_MODEL_NAME, CLIP_PRETRAINED="", CLIP_CHECKPOINT="/nonexistent/clip.pt"
    ):
        run = run_now(setup, django_capture_on_commit_callbacks, metrics=["BLEU-4", "CIDEr-D", "CLIPScore"])
    assert run.status == RunStatus.FAILED
    assert "the checkpoint file '/nonexistent/clip.pt' does not exist" in run.error
    assert "set CLIP_CHECKPOINT" in run.error
    assert set(run.chunks.filter(kind=ChunkKind.TEXT).values_list("status", flat=True)) == {ChunkStatus.DONE}
    assert set(run.chunks.filter(kind=ChunkKind.CLIP).values_list("status", flat=True)) == {
        ChunkStatus.FAILED
    }
    assert CaptionScore.objects.filter(run=run, metric__in=["BLEU-4", "CIDEr-D"]).count() == 2 * 4 * 2
    assert not CaptionScore.objects.filter(run=run, metric="CLIPScore").exists()
    assert CorpusScore.objects.filter(run=run, metric="CIDEr-D").count() == 2


# --- Bad data fails a chunk with its reason; a bug fails it as a bug; the database is retried ------


def task_errors(caplog) -> list:
    return [r for r in caplog.records if r.name == "core.jobs.tasks" and r.levelno >= logging.ERROR]


def test_an_unreadable_image_file_fails_its_clip_chunk_as_bad_data(
    setup, tiny_clip, django_capture_on_commit_callbacks, caplog
):
    from django.core.files.storage import default_storage

    broken = setup["images"][0]
    with default_storage.open(broken.file.name, "wb") as fh:
        fh.write(b"<html>not an image</html>")
    run = run_now(setup, django_capture_on_commit_callbacks, metrics=["CLIPScore"], systems=("sys-a",))
    assert run.status == RunStatus.FAILED
    assert f"the file of image “{broken.key}” cannot be read as an image" in run.error
    assert "internal error" not in run.error
    failed = run.chunks.get(status=ChunkStatus.FAILED)
    assert failed.index == 0 and failed.error.startswith(f"the file of image “{broken.key}”")
    assert run.chunks.get(index=1).status == ChunkStatus.DONE  # the other images are scored
    assert task_errors(caplog) == []  # bad data is the data's fault: no traceback


@pytest.mark.parametrize(
    "error", [TypeError("unsupported operand"), KeyError("CIDEr-D"), ValueError("bad shape")]
)
def test_a_bug_in_the_scoring_code_fails_the_chunk_visibly_with_its_traceback(
    setup, django_capture_on_commit_callbacks, monkeypatch, caplog, error
):
    from evaluation.runs import compute as chunks

    real = chunks.score_texts

    def buggy(candidates, references, **kwargs):
        if "Ein Hund läuft am Meer." in candidates.values():  # sys-b only
            raise error
        return real(candidates, references, **kwargs)

    monkeypatch.setattr(chunks, "score_texts", buggy)
    run = run_now(setup, django_capture_on_commit_callbacks)
    assert run.status == RunStatus.FAILED
    kind = type(error).__name__
    assert run.error == (
        f"sys-b, text chunk 0: internal error, not a data problem ({kind}: {error}); see the worker log"
    )
    chunk = run.chunks.get(system__name="sys-b")
    assert chunk.status == ChunkStatus.FAILED and chunk.error.startswith(
        f"internal error, not a data problem ({kind}"
    )
    assert chunk.attempts == 1  # a bug is not retried: it would fail the same way
    assert run.chunks.get(system__name="sys-a").status == ChunkStatus.DONE
    (record,) = task_errors(caplog)
    assert record.exc_info[0] is type(error) and f"metric run chunk {chunk.pk}" in record.getMessage()


def test_a_database_error_is_retried_not_marked_failed(setup, monkeypatch):
    from django.db import OperationalError

    from evaluation.runs import compute as chunks

    run = create(setup, enqueue=False)
    chunk = run.chunks.get(system__name="sys-a")
    real, calls = chunks.score_texts, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(*args, **kwargs)

    monkeypatch.setattr(chunks, "score_texts", flaky)
    # Run eagerly, without raising the Retry, Celery runs the retry at once.
    assert compute_metric_chunk.apply(args=[chunk.pk], throw=False).get() == "done"
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts, chunk.error, len(calls)) == (ChunkStatus.DONE, 2, "", 2)
    assert CaptionScore.objects.filter(run=run, system=chunk.system).count() == 4 * len(TEXT_METRICS)


# --- Enqueue on commit, broker down (RELIABILITY 9, 11) --------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_run_enqueues_nothing(german):
    images = [f.ImageFactory() for _ in range(2)]
    system = f.SystemFactory(name="sys-a")
    reference_set = f.reference_set_with(images, [["ein hund am strand"]] * 2, name="refs", language=german)
    for image in images:
        SystemCaption.objects.create(system=system, image=image, language=german, text="ein hund")
    kwargs = {
        "name": "r",
        "language_code": "de",
        "system_names": ["sys-a"],
        "reference_set_id": reference_set.pk,
        "metrics": ["BLEU-4"],
    }

    with mock.patch.object(compute_metric_chunk, "apply_async") as send:
        with pytest.raises(RuntimeError), transaction.atomic():
            metric_run_create(**kwargs)
            raise RuntimeError("the caller's transaction fails after creating the run")
        assert send.call_count == 0
        assert not MetricRun.objects.exists()

        with transaction.atomic():
            run = metric_run_create(**kwargs)
            assert send.call_count == 0  # not before the commit
        assert send.call_count == 1
        assert send.call_args.kwargs["args"] == [run.chunks.get().pk]


def test_broker_down_says_so_quickly_and_fails_the_run(setup, django_capture_on_commit_callbacks):
    with celery_conf(broker_url="redis://127.0.0.1:1/0", task_always_eager=False):
        started = time.monotonic()
        with pytest.raises(JobsUnavailable) as caught, django_capture_on_commit_callbacks(execute=True):
            create(setup)
        elapsed = time.monotonic() - started
    assert elapsed < 10
    assert isinstance(caught.value, DomainError)
    assert "could not be queued: the job broker is unreachable" in caught.value.message
    run = MetricRun.objects.get()
    assert run.status == RunStatus.FAILED
    assert run.error.startswith("could not be queued: the job broker is unreachable (")
    assert f"metric_run resume {run.pk}" in caught.value.message
    assert not CaptionScore.objects.exists()


# --- The metric_run command ---------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_metric_run_command_starts_shows_lists_and_resumes(setup):
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command(
        "metric_run",
        "start",
        "--language=de",
        "--systems=sys-a,sys-b",
        "--references=refs-de",
        "--metrics",
        "BLEU-4",
        "cider-d",
        "--wait",
        stdout=out,
        stderr=StringIO(),
    )
    run = MetricRun.objects.get()
    text = out.getvalue()
    assert f"Metric run #{run.pk} “sys-a, sys-b vs refs-de”: 2 chunks; metrics BLEU-4, CIDEr-D." in text
    expected = expected_text_scores(setup, "sys-a", ["BLEU-4", "CIDEr-D"])
    assert f"sys-a   {expected.corpus['BLEU-4']:.4f}   {expected.corpus['CIDEr-D']:.4f}" in text

    out = StringIO()
    call_command("metric_run", "show", str(run.pk), stdout=out)
    assert "status      succeeded" in out.getvalue() and "tokenizer=whitespace" in out.getvalue()
    out = StringIO()
    call_command("metric_run", "list", stdout=out)
    assert f"{run.pk:>5}  succeeded       2/2  de" in out.getvalue()
    out = StringIO()
    call_command("metric_run", "resume", str(run.pk), stdout=out)
    assert "nothing to resume" in out.getvalue()

    with pytest.raises(CommandError, match="No reference set is called “nope”"):
        call_command("metric_run", "start", "--language=de", "--systems=sys-a", "--references=nope")
    with pytest.raises(CommandError, match="Unknown captioning system"):
        call_command("metric_run", "start", "--language=de", "--systems=sys-x", "--references=refs-de")
    with pytest.raises(CommandError, match="There is no metric run #999"):
        call_command("metric_run", "show", "999")


@pytest.mark.django_db(transaction=True)
def test_metric_run_command_reports_a_failed_run(setup, tiny_checkpoint):
    from django.core.management import CommandError, call_command

    with (
        override_settings(
            CLIP_MODEL=TINY_MODEL_NAME, CLIP_PRETRAINED="", CLIP_CHECKPOINT="/nonexistent/clip.pt"
        ),
        pytest.raises(CommandError) as caught,
    ):
        call_command(
            "metric_run",
            "start",
            "--language=de",
            "--systems=sys-a",
            "--references=refs-de",
            "--metrics",
            "CLIPScore",
        )
    run = MetricRun.objects.get()
    assert f"Metric run #{run.pk} failed: sys-a, clip chunk 0:" in str(caught.value)
    assert f"manage.py metric_run resume {run.pk}" in str(caught.value)


# --- Admin -----------------------------------------------------------------------------------------


def test_admin_lists_runs_with_scores_without_n_plus_1(
    setup, admin_client, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    url = "/admin/evaluation/metricrun/"
    run_now(setup, django_capture_on_commit_callbacks)
    with CaptureQueriesContext(connection) as one:
        response = admin_client.get(url)
    assert response.status_code == 200
    expected = expected_text_scores(setup, "sys-a")
    assert f"sys-a: BLEU-4 {expected.corpus['BLEU-4']:.3f} · CIDEr-D {expected.corpus['CIDEr-D']:.3f}" in (
        response.content.decode()
    )
    for _ in range(3):
        run_now(setup, django_capture_on_commit_callbacks)
    with CaptureQueriesContext(connection) as four:
        admin_client.get(url)
    assert len(four) == len(one)

    run = MetricRun.objects.first()
    page = admin_client.get(f"{url}{run.pk}/change/").content.decode()
    assert "<th>system</th><th>BLEU-1</th>" in page
    assert f"<td>{expected.corpus['CIDEr-D']:.4f}</td>" in page
    assert "metric chunks" in page.lower()


def test_admin_starts_a_run_and_refuses_an_impossible_one(
    setup, admin_client, django_capture_on_commit_callbacks, monkeypatch
):
    from annotation.models import CaptioningSystem
    from evaluation.admin import runs as runs_admin
    from evaluation.runs import plan as runs_service

    plans, real_plan = [], runs_service.metric_run_plan

    def counted_plan(**kwargs):
        plans.append(kwargs)
        return real_plan(**kwargs)

    monkeypatch.setattr(runs_admin, "metric_run_plan", counted_plan)
    monkeypatch.setattr(runs_service, "metric_run_plan", counted_plan)

    url = "/admin/evaluation/metricrun/add/"
    page = admin_client.get(url)
    assert page.status_code == 200
    assert 'name="image_orientation" value="exif"' in page.content.decode()  # the setting's default, ticked
    form = {
        "name": "",
        "language": setup["language"].pk,
        "systems": [CaptioningSystem.objects.get(name="sys-a").pk],
        "reference_set": setup["references"].pk,
        "image_set": "",
        "metric_names": ["BLEU-4", "CIDEr-D"],
    }
    empty = f.SystemFactory(name="sys-empty")
    response = admin_client.post(url, {**form, "systems": [empty.pk]})
    assert response.status_code == 200
    assert "“sys-empty” has no captions in German (de)." in response.content.decode()
    assert not MetricRun.objects.exists()

    plans.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, form)
    assert response.status_code == 302
    assert len(plans) == 1  # planned once, to validate the form; the service stores that plan
    run = MetricRun.objects.get()
    assert (run.status, run.name, run.metrics) == (
        RunStatus.SUCCEEDED,
        "sys-a vs refs-de",
        ["BLEU-4", "CIDEr-D"],
    )
    assert run.created_by.is_superuser
    assert CorpusScore.objects.filter(run=run).count() == 2


def test_admin_resume_action(setup, admin_client, django_capture_on_commit_callbacks):
    run = create(setup, enqueue=False)
    MetricRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, error="could not be queued: …")
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/evaluation/metricrun/", {"action": "resume", "_selected_action": [run.pk]}, follow=True
        )
    assert "2 chunks queued again." in response.content.decode()
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED


def test_admin_pages_of_the_other_models_render(
    setup, admin_client, tiny_clip, django_capture_on_commit_callbacks
):
    run_now(setup, django_capture_on_commit_callbacks, metrics=["CLIPScore"])
    f.ImageSetFactory(name="XM-tiny", images=setup["images"])
    for model in ("referenceset", "imageset", "clipembedding"):
        response = admin_client.get(f"/admin/evaluation/{model}/")
        assert response.status_code == 200, model
    assert "XM-tiny" in admin_client.get("/admin/evaluation/imageset/").content.decode()
    assert admin_client.get("/admin/evaluation/clipembedding/add/").status_code == 403
    embedding = ClipEmbedding.objects.first()
    assert admin_client.get(f"/admin/evaluation/clipembedding/{embedding.pk}/change/").status_code == 200
    assert admin_client.get("/admin/evaluation/referenceset/add/").status_code == 200


def test_the_run_name_help_says_what_an_empty_name_becomes(pm_client, setup):
    """The help text lost its placeholders (“<systems>” read as tags) and showed “ vs ”."""
    page = pm_client.get("/admin/evaluation/metricrun/add/").content.decode()
    assert "“ vs ”" not in page and "<systems>" not in page
    assert "Empty: the systems&#x27; names, “vs” and the reference set&#x27;s name" in page or (
        "Empty: the systems' names, “vs” and the reference set's name" in page
    )


def test_a_researcher_reads_a_run_page_with_no_link_they_may_not_open(setup, researcher_client):
    """The run records who started it; a researcher sees the name, not a link to the account's admin
    page (they have no view permission on accounts: such a link would answer 403)."""
    from django.contrib.auth import get_user_model

    run = create(setup, enqueue=False)
    starter = get_user_model().objects.create_user("starter")
    MetricRun.objects.filter(pk=run.pk).update(created_by=starter)
    page = researcher_client.get(f"/admin/evaluation/metricrun/{run.pk}/change/").content.decode()
    assert "starter" in page
    assert "/admin/auth/user/" not in page
