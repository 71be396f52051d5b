"""CLIPScore and RefCLIPScore on the leaderboard where the phase names a CLIP model (a tiny random model:
its numbers check plumbing and formulas, they mean nothing), with the language's CLIP trust flag."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from challenges.models import ImageScores, SubmissionScore
from challenges.services import submission_create
from evaluation.models import ClipModel
from tests.challenges.conftest import coco
from tests.evaluation.clip_tiny import TINY_CONFIG, TINY_MODEL_NAME, save_tiny_checkpoint


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


def test_clip_metrics_are_scored_and_flagged_where_clip_is_not_trusted(bench, tmp_path):
    checkpoint = save_tiny_checkpoint(tmp_path / "tiny.pt", seed=3)
    model = ClipModel.objects.create(
        name="tiny",
        model_name=TINY_MODEL_NAME,
        checkpoint=str(checkpoint),
        architecture=TINY_CONFIG,
        is_demo=True,
    )
    phase = bench["test"]
    phase.metrics = ["CIDEr-D", "CLIPScore", "RefCLIPScore"]
    phase.clip_model = model
    phase.save()
    submission = submission_create(
        phase_id=phase.pk,
        user=bench["member"],
        team_id=bench["team"].pk,
        data=coco(bench["test_images"]),
        filename="r.json",
        language="de",
        method_name="clip",
    )
    submission.refresh_from_db()
    assert submission.status == "succeeded", submission.error
    per_image = ImageScores.objects.get(submission=submission, metric="CLIPScore", held_out=False)
    corpus = SubmissionScore.objects.get(
        submission=submission, metric="CLIPScore", split="all", held_out=False
    )
    assert corpus.value == pytest.approx(sum(per_image.values) / 8)
    assert all(0 <= v <= 2.5 for v in per_image.values)
    assert "clip" in corpus.signature.lower() or TINY_MODEL_NAME in corpus.signature
    assert SubmissionScore.objects.filter(
        submission=submission, metric="RefCLIPScore", split="public"
    ).exists()
    client = Client()
    client.force_login(bench["member"])
    page = client.get(reverse("challenges:leaderboard", args=[phase.pk]) + "?language=de&metric=CLIPScore")
    assert "CLIP is not trusted in this language" in page.content.decode()
    board = client.get(
        reverse("challenges-api:leaderboard", args=[phase.pk]) + "?language=de&metric=CLIPScore"
    ).json()
    assert board["clip_trust"]["status"] == "not_checked" and board["rows"][0]["method"] == "clip"
