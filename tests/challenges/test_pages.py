"""The participants' pages and API: invitation, upload (errors by position), scores, leaderboards, export,
and isolation: no other team's entries, no admin, no annotation screen, no hidden reference anywhere."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from challenges.models import Invitation, Submission, Team
from challenges.services import invitation_create, phase_close
from tests import factories as f
from tests.challenges.conftest import SECRET, coco

HIDDEN = [f"{SECRET}{i}x" for i in range(6, 14)]  # the test images' references (indices 6..13)


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


@pytest.fixture
def member_client(bench):
    client = Client()
    client.force_login(bench["member"])
    return client


def upload(client, phase, data, name="r.json", language="de", method="m1"):
    return client.post(
        reverse("challenges:submit", args=[phase.pk]),
        {"file": SimpleUploadedFile(name, data), "language": language, "method_name": method},
    )


def test_an_invitation_creates_a_participant_once(bench):
    invitation = invitation_create(team_id=bench["team"].pk)
    client = Client()
    url = reverse("challenges:join", args=[invitation.token])
    assert "Join team" in client.get(url).content.decode()
    response = client.post(
        url,
        {"username": "newbie", "password": "a-long-passphrase-42", "password_again": "a-long-passphrase-42"},
    )
    assert response.status_code == 302 and response["Location"] == reverse("challenges:home")
    assert bench["team"].members.filter(username="newbie").exists()
    home = client.get(reverse("challenges:home")).content.decode()
    assert bench["benchmark"].name in home
    # A used link says so and what to do; the account it made is sent on to its benchmarks.
    used = Client().get(url)
    assert used.status_code == 410 and "was used already" in used.content.decode()
    assert "ask a member of the team" in used.content.decode()
    assert client.get(url)["Location"] == reverse("challenges:home")
    expired = invitation_create(team_id=bench["team"].pk, days=0)
    Invitation.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    late = Client().get(reverse("challenges:join", args=[expired.token]))
    assert late.status_code == 410 and "has expired" in late.content.decode()
    # Posting to a spent link creates nothing.
    before = bench["team"].members.count()
    Client().post(
        reverse("challenges:join", args=[expired.token]),
        {"username": "late", "password": "a-long-passphrase-42", "password_again": "a-long-passphrase-42"},
    )
    assert bench["team"].members.count() == before
    assert Client().get(reverse("challenges:join", args=["x" * 43])).status_code == 404


def test_a_file_with_errors_is_refused_by_line_and_a_valid_one_is_scored(bench, member_client):
    bad = json.dumps([{"image_id": 101, "caption": ""}, {"image_id": 999, "caption": "x"}]).encode()
    response = upload(member_client, bench["val"], bad)
    page = response.content.decode()
    assert response.status_code == 400
    assert "r.json entry 1: empty caption for image “101”" in page
    assert "r.json entry 2: unknown image id “999”" in page
    assert Submission.objects.count() == 0
    response = upload(member_client, bench["val"], coco(bench["val_images"]))
    submission = Submission.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "challenges:submission", args=[submission.pk]
    )
    page = member_client.get(response["Location"]).content.decode()
    assert "CIDEr-D" in page and "Per-image scores" in page


def test_the_api_takes_a_token(bench):
    from challenges.services import api_token_rotate

    token = api_token_rotate(user=bench["member"])
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    url = reverse("challenges-api:submissions", args=[bench["test"].pk])
    refused = client.post(
        url, {"file": SimpleUploadedFile("r.json", b"[]"), "method_name": "m", "language": "de"}
    )
    assert refused.status_code == 400 and refused.json()["details"]["total"] >= 1
    created = client.post(
        url,
        {
            "file": SimpleUploadedFile("r.json", coco(bench["test_images"])),
            "method_name": "m",
            "language": "de",
        },
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["status"] == "succeeded"
    assert {s["split"] for s in body["scores"]} == {"public"}  # all and private sealed while the phase runs
    board = client.get(reverse("challenges-api:leaderboard", args=[bench["test"].pk]) + "?language=de").json()
    assert board["split"] == "public" and board["rows"][0]["method"] == "m"
    assert Client().post(url, {"method_name": "m"}).status_code in (401, 403)


def test_the_leaderboard_shows_the_private_part_after_closing(bench, member_client):
    upload(member_client, bench["test"], coco(bench["test_images"]), method="first")
    upload(
        member_client,
        bench["test"],
        coco(bench["test_images"], text=lambda i, im: "ein hund am strand"),
        method="second",
    )
    url = reverse("challenges:leaderboard", args=[bench["test"].pk]) + "?language=de"
    page = member_client.get(url).content.decode()
    assert "public part" in page and "first" in page and "second" in page
    phase_close(phase_id=bench["test"].pk)
    page = member_client.get(url).content.decode()
    assert "Final ranking" in page
    csv = member_client.get(
        reverse("challenges:leaderboard-csv", args=[bench["test"].pk]) + "?language=de"
    ).content.decode()
    assert csv.splitlines()[0].startswith("rank,submission_id,method") and ",private," in csv


@pytest.fixture
def outsider(bench):
    from tests.challenges.conftest import make_benchmark

    other = make_benchmark("Other", base=1000)
    user = f.UserFactory(username="rival")
    other["team"].members.add(user)
    client = Client()
    client.force_login(user)
    return client


def test_teams_are_isolated(bench, member_client, outsider):
    upload(member_client, bench["val"], coco(bench["val_images"]))
    submission = Submission.objects.get()
    for url in (
        reverse("challenges:submission", args=[submission.pk]),
        reverse("challenges:benchmark", args=[bench["benchmark"].slug]),
        reverse("challenges:leaderboard", args=[bench["val"].pk]),
        reverse("challenges:references", args=[bench["val"].pk]),
        reverse("challenges-api:submission", args=[submission.pk]),
        reverse("challenges-api:submissions", args=[bench["val"].pk]),
    ):
        assert outsider.get(url).status_code == 404, url
    assert outsider.post(reverse("challenges:submission-select", args=[submission.pk])).status_code == 404
    assert outsider.post(reverse("challenges:submit", args=[bench["val"].pk])).status_code == 404
    # Neither the admin nor the annotation screens.
    assert member_client.get("/admin/").status_code == 302
    assert member_client.get(reverse("annotation:dashboard")).status_code in (302, 403)


def test_hidden_references_never_reach_a_participant(bench, member_client):
    upload(member_client, bench["test"], coco(bench["test_images"]))
    upload(member_client, bench["val"], coco(bench["val_images"]))
    test_submission = Submission.objects.get(phase=bench["test"])
    urls = [
        reverse("challenges:home"),
        reverse("challenges:benchmark", args=[bench["benchmark"].slug]),
        reverse("challenges:submission", args=[test_submission.pk]),
        reverse("challenges:leaderboard", args=[bench["test"].pk]),
        reverse("challenges:leaderboard-csv", args=[bench["test"].pk]),
        reverse("challenges:leaderboard-json", args=[bench["test"].pk]),
        reverse("challenges:references", args=[bench["val"].pk]),
        reverse("challenges:references", args=[bench["test"].pk]),
        reverse("challenges-api:benchmarks"),
        reverse("challenges-api:submission", args=[test_submission.pk]),
        reverse("challenges-api:submissions", args=[bench["test"].pk]),
        reverse("challenges-api:leaderboard", args=[bench["test"].pk]),
    ]
    for url in urls:
        body = member_client.get(url).content.decode()
        assert not any(secret in body for secret in HIDDEN), url
    assert member_client.get(reverse("challenges:references", args=[bench["test"].pk])).status_code == 404
    validation_refs = member_client.get(
        reverse("challenges:references", args=[bench["val"].pk])
    ).content.decode()
    assert f"{SECRET}0x0" in validation_refs  # validation references are downloadable
    page = member_client.get(reverse("challenges:submission", args=[test_submission.pk])).content.decode()
    assert "Per-image scores" not in page


def test_a_phase_visible_to_hosts_only(bench, member_client):
    bench["val"].visibility = "hosts"
    bench["val"].save()
    assert member_client.get(reverse("challenges:leaderboard", args=[bench["val"].pk])).status_code == 404
    assert Client().get(reverse("challenges:leaderboard", args=[bench["val"].pk])).status_code in (302, 404)


def test_hosts_manage_in_the_admin(bench, pm_client):
    response = pm_client.post(
        reverse("admin:challenges_team_changelist"),
        {"action": "invite", "_selected_action": [bench["team"].pk]},
    )
    assert response.status_code == 302
    assert Invitation.objects.filter(team=bench["team"]).count() == 1
    response = pm_client.post(
        reverse("admin:challenges_submission_add"),
        {
            "phase": bench["val"].pk,
            "method_name": "Baseline",
            "language": "de",
            "file": SimpleUploadedFile("b.json", coco(bench["val_images"])),
        },
    )
    assert response.status_code == 302
    baseline = Submission.objects.get(is_baseline=True)
    assert baseline.team is None and baseline.status == "succeeded"
    pm_client.post(
        reverse("admin:challenges_phase_changelist"),
        {"action": "close_phases", "_selected_action": [bench["val"].pk]},
    )
    bench["val"].refresh_from_db()
    assert not bench["val"].is_open and bench["val"].closed_at is not None
    assert Team.objects.count() == 1


def test_the_api_takes_files_past_the_research_body_limit_but_not_past_its_own(bench, settings):
    from challenges.services import api_token_rotate

    token = api_token_rotate(user=bench["member"])
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    url = reverse("challenges-api:submissions", args=[bench["test"].pk])
    padded = coco(bench["test_images"], text=lambda i, im: f"ein hund {i} " + "und noch mehr " * 4000)
    assert len(padded) > settings.API_MAX_BODY_BYTES
    settings.SUBMISSION_MAX_CAPTION_CHARS = 100_000
    ok = client.post(
        url, {"file": SimpleUploadedFile("r.json", padded), "method_name": "long", "language": "de"}
    )
    assert ok.status_code == 201, ok.content
    settings.SUBMISSION_MAX_BYTES = 100_000
    too_big = client.post(
        url, {"file": SimpleUploadedFile("r.json", padded), "method_name": "long", "language": "de"}
    )
    assert too_big.status_code == 413 and too_big.json()["error"] == "too_large"
    assert Submission.objects.count() == 1


def test_the_mean_over_languages_has_intervals_and_paired_tests(bench, member_client):
    from tests.challenges.conftest import jsonl

    for method, data in (
        ("both", jsonl(bench["val_images"])),
        ("other", jsonl(bench["val_images"], caption="ein hund am strand")),
    ):
        member_client.post(
            reverse("challenges:submit", args=[bench["val"].pk]),
            {"file": SimpleUploadedFile("r.jsonl", data), "method_name": method},
        )
    rows = member_client.get(
        reverse("challenges-api:leaderboard", args=[bench["val"].pk]) + "?language=mean"
    ).json()["rows"]
    assert len(rows) == 2 and rows[0]["value"] >= rows[1]["value"] and rows[0]["metric"] == "CIDEr-D"
    # CIDEr-D's corpus score is the mean of its per-image scores: the mean lies in its interval.
    assert all(r["low"] <= r["value"] <= r["high"] for r in rows)
    assert (
        rows[0]["p_vs_next"] is not None
        and rows[0]["value_de"] is not None
        and rows[0]["value_en"] is not None
    )


def test_method_names_render_escaped_and_exports_neutralise_formulas(bench, member_client):
    upload(member_client, bench["val"], coco(bench["val_images"]), method="=HYPERLINK(1)<script>x</script>")
    page = member_client.get(
        reverse("challenges:leaderboard", args=[bench["val"].pk]) + "?language=de"
    ).content.decode()
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    csv = member_client.get(
        reverse("challenges:leaderboard-csv", args=[bench["val"].pk]) + "?language=de"
    ).content.decode()
    assert ",'=HYPERLINK(1)<script>x</script>," in csv


def test_a_visitor_not_logged_in_is_asked_to_log_in_for_a_benchmark_they_cannot_see(bench, member_client):
    url = reverse("challenges:benchmark", args=[bench["benchmark"].slug])
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login")) and "next=" in response["Location"]
    # Unknown slugs the same way: nothing tells an anonymous visitor which benchmarks exist.
    assert Client().get(reverse("challenges:benchmark", args=["no-such"])).status_code == 302
    # After logging in, a member sees it.
    assert member_client.get(url).status_code == 200


RLO, PDF = "\u202e", "\u202c"


def test_direction_controls_in_names_reorder_nothing_beside_them(bench, member_client, pm_client):
    """A right-to-left override in a method or team name is isolated wherever the name is shown: <bdi> on
    the pages and in the admin, a first-strong isolate around the CSV cell (its closing PDI ends the
    override, so the cells after it keep their order)."""
    Team.objects.filter(pk=bench["team"].pk).update(name=f"{RLO}maet")
    upload(member_client, bench["val"], coco(bench["val_images"]), method=f"{RLO}dohtem")
    method, team = f"{RLO}dohtem", f"{RLO}maet"
    board = reverse("challenges:leaderboard", args=[bench["val"].pk]) + "?language=de"
    page = member_client.get(board).content.decode()
    assert f"<bdi>{method}</bdi>" in page and f"<bdi>{team}</bdi>" in page
    assert method not in page.replace(f"<bdi>{method}</bdi>", "")  # nowhere unisolated
    benchmark = member_client.get(
        reverse("challenges:benchmark", args=[bench["benchmark"].slug])
    ).content.decode()
    assert f"<bdi>{method}</bdi>" in benchmark and f"<bdi>{team}</bdi>" in benchmark
    submission = Submission.objects.get(method_name=method)
    detail = member_client.get(reverse("challenges:submission", args=[submission.pk])).content.decode()
    assert f"<h1><bdi>{method}</bdi>" in detail and f"<bdi>{team}</bdi>" in detail
    for url in (
        reverse("admin:challenges_submission_changelist"),
        reverse("admin:challenges_team_changelist"),
    ):
        admin_page = pm_client.get(url).content.decode()
        assert f"<bdi>{method}</bdi>" in admin_page or f"<bdi>{team}</bdi>" in admin_page, url
    csv = member_client.get(
        reverse("challenges:leaderboard-csv", args=[bench["val"].pk]) + "?language=de"
    ).content.decode()
    row = next(line for line in csv.splitlines() if "dohtem" in line)
    assert f",\u2068{method}\u2069,\u2068{team}\u2069," in row


def test_a_csv_cell_cannot_close_its_own_isolate():
    from core.csv_cells import csv_safe

    cell = csv_safe(f"\u2069{RLO}x{PDF}\u2066y")
    assert cell == f"\u2068{RLO}x{PDF}y\u2069"  # its own isolate controls dropped, then wrapped
    assert csv_safe("plain") == "plain" and csv_safe("=1") == "'=1"
