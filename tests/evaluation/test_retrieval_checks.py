"""Retrieval checks as jobs, run eagerly: numbers, resume after a kill, clear errors, the cache.

The CLIP model is the tiny random one (tests/evaluation/clip_tiny.py): its recalls mean nothing,
the tests check that the job stores what an independent computation gives. Where a known answer is
needed, the embeddings are monkeypatched so that it is known (each caption built to retrieve its
own image, or all captions of a language collapsed onto one point).
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.core.files.storage import default_storage
from django.test import override_settings
from django.utils import timezone

from core.errors import NotFound, ValidationFailed
from core.jobs.engine import unit_claim
from evaluation.clip_choice import ClipModelChoice
from evaluation.metrics.clip import (
    embed_images,
    embed_texts,
    ensure_torchvision_loadable,
    load_clip,
    register_model_config,
)
from evaluation.metrics.clip.retrieval import retrieval_recall
from evaluation.models import (
    ChunkStatus,
    ClipEmbedding,
    RetrievalCheck,
    RetrievalChunkKind,
    RunStatus,
)
from evaluation.retrieval import compute as jobs
from evaluation.retrieval.plan import retrieval_check_create, retrieval_check_resume
from evaluation.retrieval.tasks import RETRIEVAL_CHECK, compute_retrieval_chunk
from tests import factories as f
from tests.evaluation.clip_tiny import TINY_CONFIG, TINY_MODEL_NAME, save_tiny_checkpoint

CAPTIONS = {
    "en": [
        ["A brown dog runs on the beach.", "A dog on the sand."],
        ["Two children play football."],
        ["A woman rides a bicycle."],
        ["A red bus at the stop."],
        ["A cat sleeps on a sofa."],
    ],
    "de": [
        ["Ein brauner Hund am Strand."],
        ["Zwei Kinder spielen Fußball.", "Kinder mit Ball."],
        ["Eine Frau fährt Fahrrad."],
        ["Ein roter Bus."],
        ["Eine Katze schläft."],
    ],
}


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    ensure_torchvision_loadable()
    register_model_config(TINY_MODEL_NAME, TINY_CONFIG)
    return save_tiny_checkpoint(tmp_path_factory.mktemp("clip") / "tiny.pt", seed=11)


@pytest.fixture
def tiny_clip(tiny_checkpoint):
    with override_settings(
        CLIP_MODEL=TINY_MODEL_NAME,
        CLIP_PRETRAINED="",
        CLIP_CHECKPOINT=str(tiny_checkpoint),
        METRIC_CLIP_CHUNK_SIZE=2,
    ):
        yield tiny_checkpoint


@pytest.fixture
def data(db):
    english = f.LanguageFactory(code="en", name="English")
    german = f.LanguageFactory(code="de", name="German")
    images = [f.ImageFactory() for _ in range(5)]
    sets = {
        "en": f.reference_set_with(images, CAPTIONS["en"], name="xm-en", language=english),
        "de": f.reference_set_with(images, CAPTIONS["de"], name="xm-de", language=german),
    }
    return {"images": images, "sets": sets}


def check_now(django_capture_on_commit_callbacks, **kwargs) -> RetrievalCheck:
    kwargs.setdefault("reference_sets", ["xm-en", "xm-de"])
    with django_capture_on_commit_callbacks(execute=True):
        check = retrieval_check_create(**kwargs)
    check.refresh_from_db()
    return check


def expected(tiny_checkpoint, data, code):
    loaded = load_clip(TINY_MODEL_NAME, checkpoint_path=tiny_checkpoint, device="cpu")
    images = embed_images(loaded, [default_storage.open(image.file.name).read() for image in data["images"]])
    owner = [i for i, texts in enumerate(CAPTIONS[code]) for _ in texts]
    texts = embed_texts(loaded, [t for texts in CAPTIONS[code] for t in texts])
    return retrieval_recall(images, texts, owner).as_dict(), loaded


def test_a_check_stores_per_language_recalls_of_an_independent_computation(
    data, tiny_clip, django_capture_on_commit_callbacks
):
    check = check_now(django_capture_on_commit_callbacks)
    assert check.status == RunStatus.SUCCEEDED, check.error
    assert check.languages == ["de", "en"]
    # 5 images in chunks of 2 -> 3; de 6 captions -> 3, en 6 -> 3; one recall per language.
    assert check.chunks_total == check.chunks_done == 3 + 3 + 3 + 2
    for code in ("en", "de"):
        want, loaded = expected(tiny_clip, data, code)
        got = check.results[code]
        assert {k: got[k] for k in want if k != "notes"} == pytest.approx(
            {k: v for k, v in want.items() if k != "notes"}, abs=1e-9
        )
        assert got["n_images"] == 5 and got["n_captions"] == 6
        assert "only 5 images" in got["notes"][0]
    assert check.model_id == loaded.model_id
    assert "ckpt:sha256-" in check.model_key
    # 5 image vectors and 12 distinct caption vectors in the shared cache.
    assert ClipEmbedding.objects.count() == 5 + 12
    assert check.timings["embeddings_computed"] == 17

    # A second check of the same model embeds nothing: every vector comes from the cache.
    again = check_now(django_capture_on_commit_callbacks)
    assert again.results == check.results
    assert again.timings["embeddings_computed"] == 0
    assert ClipEmbedding.objects.count() == 17


def test_a_check_killed_after_its_image_chunks_resumes_to_the_same_result(
    data, tiny_clip, django_capture_on_commit_callbacks
):
    reference = check_now(django_capture_on_commit_callbacks)
    ClipEmbedding.objects.all().delete()  # the resumed check must compute, not read the first one's

    check = retrieval_check_create(reference_sets=["xm-en", "xm-de"], enqueue=False)
    for chunk in check.chunks.filter(kind=RetrievalChunkKind.IMAGES):
        assert compute_retrieval_chunk.apply(args=[chunk.pk]).get() == "done"
    # The worker dies while embedding the first text chunk: claimed, then silent.
    victim = check.chunks.filter(kind=RetrievalChunkKind.TEXTS).order_by("language", "index").first()
    assert unit_claim(RETRIEVAL_CHECK, unit_id=victim.pk) == 1
    long_ago = timezone.now() - timedelta(hours=1)
    check.chunks.filter(pk=victim.pk).update(heartbeat_at=long_ago, started_at=long_ago)
    # A recall chunk sent too early waits for the embeddings.
    recall = check.chunks.filter(kind=RetrievalChunkKind.RECALL).first()
    assert compute_retrieval_chunk.apply(args=[recall.pk]).get() == "waiting"

    with django_capture_on_commit_callbacks(execute=True):
        result = retrieval_check_resume(check_id=check.pk)
    assert result.requeued == check.chunks_total - 3  # every chunk but the 3 image chunks
    check.refresh_from_db()
    assert check.status == RunStatus.SUCCEEDED, check.error
    assert check.results == reference.results
    assert check.chunks.get(pk=victim.pk).attempts == 2
    # Images embedded once (before the kill), never again.
    assert ClipEmbedding.objects.count() == 17 and check.timings["embeddings_computed"] == 17
    # Resuming a succeeded check changes nothing.
    assert retrieval_check_resume(check_id=check.pk).requeued == 0


def test_an_unavailable_model_fails_the_check_visibly_and_it_resumes(
    data, tiny_clip, django_capture_on_commit_callbacks
):
    with override_settings(CLIP_CHECKPOINT="/nonexistent/tiny.pt"):
        check = check_now(django_capture_on_commit_callbacks)
    assert check.status == RunStatus.FAILED
    assert "images chunk 0" in check.error and "tiny.pt" in check.error
    assert check.chunks.filter(status=ChunkStatus.FAILED).exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reference_sets": []}, "Name caption campaigns or reference sets"),
        ({"reference_sets": ["xm-en"], "campaigns": ["c"]}, "one of the two"),
        ({"reference_sets": ["nope"]}, "Unknown reference set(s): nope."),
        (
            {"reference_sets": ["xm-en"], "languages": ["de"]},
            "de has no captions in the reference set(s) xm-en",
        ),
        ({"reference_sets": ["xm-en"], "languages": ["xx"]}, "Unknown language(s): xx."),
        ({"reference_sets": ["xm-en", "en-again"]}, "Two reference sets are in en"),
        ({"reference_sets": ["one-image"]}, "sw has captions of only 1 image: retrieval needs at least 2"),
        ({"reference_sets": ["empty"]}, "en has no captions in the reference set(s) empty"),
    ],
)
def test_a_check_that_cannot_run_says_why_and_stores_nothing(data, kwargs, message):
    english = data["sets"]["en"].language
    f.reference_set_with(data["images"][:1], [["Another one."]], name="en-again", language=english)
    f.reference_set_with(
        data["images"][:1], [["Paka."]], name="one-image", language=f.LanguageFactory(code="sw")
    )
    f.ReferenceSetFactory(name="empty", language=english)
    with pytest.raises(ValidationFailed) as caught:
        retrieval_check_create(**kwargs)
    assert message in caught.value.message
    assert RetrievalCheck.objects.count() == 0


def test_campaign_captions_are_checked_per_language(captioned, tiny_clip, django_capture_on_commit_callbacks):
    check = check_now(django_capture_on_commit_callbacks, reference_sets=None, campaigns=[captioned.name])
    assert check.status == RunStatus.SUCCEEDED, check.error
    assert list(check.results) == ["de"]
    assert check.results["de"]["n_images"] == 6 and check.results["de"]["n_captions"] == 12
    assert list(check.campaigns.all()) == [captioned]


def test_captions_built_to_retrieve_their_own_image_give_r1_of_one_and_collapsed_ones_zero(
    data, tiny_clip, monkeypatch, django_capture_on_commit_callbacks
):
    # Known answer: an image's vector is one-hot on its position; an English caption's vector is its
    # image's; every German caption is the same vector, so German retrieves nothing at 1.
    keys = [image.key for image in data["images"]]
    position = {image.content_hash: i for i, image in enumerate(data["images"])}
    text_image = {t: i for code in CAPTIONS for i, texts in enumerate(CAPTIONS[code]) for t in texts}

    def images(loaded, items, cache, **kwargs):
        return np.eye(len(keys), dtype=np.float32)[[position[h] for h, _ in items]]

    def texts(loaded, batch, prefix="", cache=None):
        german = {t for texts in CAPTIONS["de"] for t in texts}
        rows = [
            np.ones(len(keys)) / np.sqrt(len(keys)) if t in german else np.eye(len(keys))[text_image[t]]
            for t in batch
        ]
        return np.asarray(rows, dtype=np.float32)

    monkeypatch.setattr(jobs, "embed_images_cached", images)
    monkeypatch.setattr(jobs, "embed_texts", texts)
    check = check_now(django_capture_on_commit_callbacks)
    assert check.status == RunStatus.SUCCEEDED, check.error
    en, de = check.results["en"], check.results["de"]
    assert (en["t2i_r1"], en["i2t_r1"], en["mean_recall"]) == (1.0, 1.0, 1.0)
    assert (de["t2i_r1"], de["i2t_r1"]) == (0.0, 0.0)  # all tied: pessimistic
    assert de["t2i_r5"] == 1.0  # 5 images: every image is in the top 5


def test_the_command_computes_prints_and_shows_a_check(data, tiny_clip, capsys):
    import json

    from django.core.management import CommandError, call_command

    call_command("clip_retrieval", "--reference-sets", "xm-en", "xm-de", "--name", "cli check")
    out, err = capsys.readouterr()
    check = RetrievalCheck.objects.get(name="cli check")
    assert check.status == RunStatus.SUCCEEDED
    assert f"Retrieval check #{check.pk} “cli check”: {TINY_MODEL_NAME}" in out
    lines = out.splitlines()
    en = next(line for line in lines if line.startswith("en"))
    assert f"{100 * check.results['en']['t2i_r1']:.1f}" in en and "the English baseline" in en
    assert lines.index(en) < lines.index(next(line for line in lines if line.startswith("de")))
    assert f"[{'#' * 30}] 11/11 chunks" in err  # the progress bar reached the end

    call_command("clip_retrieval", "--show", str(check.pk), "--format", "json")
    shown = json.loads(capsys.readouterr().out)
    assert shown["languages"]["de"]["t2i_r1"] == check.results["de"]["t2i_r1"]
    assert shown["languages"]["en"]["trust"]["status"] == "baseline"

    with pytest.raises(CommandError, match=r"Unknown language\(s\): sw\."):
        call_command("clip_retrieval", "--reference-sets", "xm-en", "--languages", "sw")
    with pytest.raises(CommandError, match="no retrieval check #999"):
        call_command("clip_retrieval", "--show", "999")


@pytest.fixture
def demo_model(db, tmp_path):
    from evaluation.finetune.plan import clip_model_demo_register

    with override_settings(CLIP_FINETUNE_DIR=str(tmp_path)):
        yield clip_model_demo_register()


def test_a_check_runs_with_a_registered_clip_model(data, demo_model, django_capture_on_commit_callbacks):
    # The demo's registered tiny model: its architecture is registered from the model's row, not typed.
    check = check_now(django_capture_on_commit_callbacks, clip_model_name=demo_model.name)
    assert check.status == RunStatus.SUCCEEDED, check.error
    assert check.params["clip_registered"] == "demo-tiny-clip"
    assert check.params["clip_model"] == demo_model.model_name
    assert check.params["clip_checkpoint"] == demo_model.checkpoint
    assert check.name.startswith("demo-tiny-clip on ")
    assert set(check.results) == {"de", "en"}


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"clip": ClipModelChoice(model="demo-tiny-clip")},
            ValidationFailed,
            "“demo-tiny-clip” is a registered CLIP model",
        ),
        (
            {"clip": ClipModelChoice(model="no-such-architecture")},
            ValidationFailed,
            "is not an open_clip architecture",
        ),
        (
            {"clip_model_name": "demo-tiny-clip", "clip": ClipModelChoice(model="ViT-B-32")},
            ValidationFailed,
            "not both",
        ),
        ({"clip_model_name": "missing"}, NotFound, "There is no registered CLIP model “missing”"),
    ],
)
def test_a_model_the_workers_would_not_know_is_refused_before_anything_is_stored(
    data, demo_model, kwargs, error, message
):
    with pytest.raises(error) as caught:
        retrieval_check_create(reference_sets=["xm-en", "xm-de"], **kwargs)
    assert message in caught.value.message
    assert RetrievalCheck.objects.count() == 0
