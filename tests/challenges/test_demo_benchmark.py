"""The demo's benchmark: filled leaderboards at first login, and a team account that can submit."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.services.demo import DEMO_PASSWORD, demo_load
from challenges.demo import DEMO_SLUG, DEMO_TEAM_USER, demo_benchmark_load
from challenges.models import Benchmark, Phase, Submission
from evaluation.demo.services import demo_results_load


def test_the_demo_benchmark_is_scored_and_the_team_can_submit(db, django_capture_on_commit_callbacks):
    demo_load()
    with django_capture_on_commit_callbacks(execute=True):
        demo_results_load()
    with django_capture_on_commit_callbacks(execute=True):
        summary = demo_benchmark_load()
    assert summary.created and len(summary.submissions) == 3 * 2 + 2 + 1
    assert set(Submission.objects.values_list("status", flat=True)) == {"succeeded"}
    assert not demo_benchmark_load().created and Benchmark.objects.count() == 1  # idempotent

    client = Client()
    assert client.login(username=DEMO_TEAM_USER, password=DEMO_PASSWORD)
    assert client.get(reverse("home"))["Location"] == reverse("challenges:home")
    test = Phase.objects.get(benchmark__slug=DEMO_SLUG, kind="test")
    page = client.get(reverse("challenges:leaderboard", args=[test.pk]) + "?language=de").content.decode()
    for method in ("sim-a (simulated)", "sim-b (simulated)", "sim-d (simulated)", "sim-c (simulated)"):
        assert method in page
    # One marker for the baseline and one for the human row, in the team column.
    assert "(baseline)" not in page and "(human)" not in page
    assert "<em><bdi>baseline</bdi></em>" in page
    human = client.get(reverse("challenges:leaderboard", args=[test.pk]) + "?language=de&comparison=human")
    assert "<em><bdi>human</bdi></em>" in human.content.decode() and "(human)" not in human.content.decode()
    val = Phase.objects.get(benchmark__slug=DEMO_SLUG, kind="validation")
    keys = list(val.image_set.images.values_list("key", flat=True))
    data = json.dumps([{"image_id": key, "caption": "ein Foto"} for key in keys]).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("challenges:submit", args=[val.pk]),
            {"file": SimpleUploadedFile("mine.json", data), "language": "de", "method_name": "mine"},
        )
    assert response.status_code == 302
    assert Submission.objects.get(method_name="mine").status == "succeeded"
