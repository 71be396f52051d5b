"""A running test phase is sealed: a team sees only numbers computed on its public part, on every page,
API answer and export, for every reference count and for the human comparison too. The all-image and
private numbers appear when the host closes the phase.

The test walks every URL pattern of the evaluation server (pages and API, with a session and with an
API token), every leaderboard variant a team can ask for, and searches each answer for every stored
all-image or private value (score and interval bounds, written as pages and exports write numbers).
A URL pattern added later and not walked here fails the test until it is."""

from __future__ import annotations

import itertools

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from challenges import api_urls, urls
from challenges.models import Split, Submission, SubmissionScore, Team
from challenges.services import api_token_rotate, invitation_create, phase_close, submission_create
from tests import factories as f
from tests.challenges.conftest import coco, jsonl


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


def _formats(x: float) -> set[str]:
    """How a page, an export or an API answer may write ``x``."""
    fixed = f"{x:.4f}"
    return {fixed, fixed.replace(".", ","), repr(x), str(round(x, 6)), f"{x:.6f}"}


@pytest.fixture
def scored(bench):
    """The test phase with two reference counts and the human comparison, two teams with two entries
    each (one in German only, one in both languages) and a host's baseline, all scored."""
    test = bench["test"]
    test.reference_counts = [0, 1]
    test.metrics = ["BLEU-1", "BLEU-4", "ROUGE-L", "CIDEr-D"]
    test.save()
    rival_team = Team.objects.create(name="Rivals")
    rival_team.benchmarks.add(bench["benchmark"])
    rival = f.UserFactory(username="rico")
    rival_team.members.add(rival)
    images = bench["test_images"]
    words = ["hund", "katze", "strand", "haus", "baum", "auto", "berg", "see"]
    for user, team, n in ((bench["member"], bench["team"], 0), (rival, rival_team, 3)):
        submission_create(
            phase_id=test.pk,
            user=user,
            team_id=team.pk,
            data=coco(images, text=lambda i, im, n=n: f"ein {words[(i + n) % 8]} am {words[(2 * i) % 8]}"),
            filename="de.json",
            language="de",
            method_name=f"coco-{team.name}",
        )
        submission_create(
            phase_id=test.pk,
            user=user,
            team_id=team.pk,
            data=jsonl(images, caption=f"ein {words[n]} am see"),
            filename="both.jsonl",
            method_name=f"lines-{team.name}",
        )
    submission_create(
        phase_id=test.pk,
        user=None,
        team_id=None,
        data=coco(images, text=lambda i, im: f"ein haus am {words[i % 8]}"),
        filename="base.json",
        language="de",
        method_name="baseline",
        baseline=True,
    )
    assert set(Submission.objects.filter(phase=test).values_list("status", flat=True)) == {"succeeded"}
    assert SubmissionScore.objects.filter(submission__phase=test, held_out=True, split=Split.PRIVATE).exists()
    return bench


def _sealed_strings(phase) -> set[str]:
    """Every all-image and private number stored for the phase, in each way it could be written, less the
    writings that a public number (or a trivial 0 or 1) shares."""
    hidden, shown = set(), set()
    for split, value, low, high in SubmissionScore.objects.filter(submission__phase=phase).values_list(
        "split", "value", "low", "high"
    ):
        for x in (value, low, high):
            if x is None:
                continue
            (shown if split == Split.PUBLIC else hidden).update(_formats(x))
    shown.update(_formats(0.0) | _formats(1.0))
    strings = hidden - shown
    assert len(strings) > 100  # the search has something to find
    return strings


def _pattern_names(module) -> set[str]:
    return {p.name for p in module.urlpatterns if isinstance(p, URLPattern)}


def _requests(bench, phase) -> dict[str, list[str]]:
    """URL pattern name -> the URLs walked for it (every pattern of the server's pages and API)."""
    val = bench["val"]
    own = list(Submission.objects.filter(team=bench["team"]).values_list("pk", flat=True))
    others = list(
        Submission.objects.filter(phase=phase).exclude(team=bench["team"]).values_list("pk", flat=True)
    )
    token = invitation_create(team_id=bench["team"].pk).token
    variants = [
        f"?language={language}&metric={metric}&refs={refs}&split={split}{comparison}"
        for language, metric, refs, split, comparison in itertools.product(
            ["de", "en", "mean"],
            phase.metrics,
            [0, 1],
            ["all", "private"],
            ["", "&comparison=human"],
        )
    ] + ["", "?split=all", "?split=private&comparison=human", "?refs=7&metric=METEOR&language=xx"]

    def boards(name):
        return [reverse(name, args=[phase.pk]) + v for v in variants] + [reverse(name, args=[val.pk])]

    return {
        "challenges:home": [reverse("challenges:home")],
        "challenges:join": [reverse("challenges:join", args=[token])],
        "challenges:api-token": [],  # POST only: it answers with a redirect to home, walked above
        "challenges:api-help": [reverse("challenges:api-help")],
        "challenges:submission": [reverse("challenges:submission", args=[pk]) for pk in own + others],
        "challenges:submission-select": [],  # POST only: a redirect to the submission page
        "challenges:submission-withdraw": [],  # POST only: a redirect to the submission page
        "challenges:team-invite": [],  # POST only: a redirect to the benchmark page
        "challenges:submit": [],  # POST only: walked with a refused upload below
        "challenges:leaderboard": boards("challenges:leaderboard"),
        "challenges:leaderboard-csv": boards("challenges:leaderboard-csv"),
        "challenges:leaderboard-json": boards("challenges:leaderboard-json"),
        "challenges:word-agreement": [
            reverse("challenges:word-agreement", args=[p.pk]) + f"?k={k}"
            for p in (phase, val)
            for k in (1, 2)
        ],
        "challenges:references": [reverse("challenges:references", args=[p.pk]) for p in (phase, val)],
        "challenges:images-csv": [reverse("challenges:images-csv", args=[p.pk]) for p in (phase, val)],
        "challenges:images-json": [reverse("challenges:images-json", args=[p.pk]) for p in (phase, val)],
        # The image files and their zip are the stored pictures' bytes (tests/challenges/test_phase_images.py).
        "challenges:images-zip": [],
        "challenges:image": [],
        "challenges:benchmark": [reverse("challenges:benchmark", args=[bench["benchmark"].slug])],
        "challenges-api:benchmarks": [reverse("challenges-api:benchmarks")],
        "challenges-api:submissions": [
            reverse("challenges-api:submissions", args=[p.pk]) for p in (phase, val)
        ],
        "challenges-api:leaderboard": boards("challenges-api:leaderboard"),
        "challenges-api:submission": [reverse("challenges-api:submission", args=[pk]) for pk in own + others],
        "challenges-api:images": [reverse("challenges-api:images", args=[p.pk]) for p in (phase, val)],
        "challenges-api:images-zip": [],  # the stored pictures' bytes, as the pages' own
        "challenges-api:image": [],
    }


def _bodies(client, requests) -> list[tuple[str, str]]:
    out = []
    for url in itertools.chain.from_iterable(requests.values()):
        response = client.get(url)
        assert response.status_code in (200, 302, 404), (url, response.status_code)
        out.append((url, response.content.decode()))
    return out


def test_no_all_image_or_private_number_reaches_a_team_while_the_test_phase_runs(scored):
    phase = scored["test"]
    strings = _sealed_strings(phase)
    requests = _requests(scored, phase)
    assert set(requests) == {f"challenges:{n}" for n in _pattern_names(urls)} | {
        f"challenges-api:{n}" for n in _pattern_names(api_urls)
    }, "a URL pattern of the evaluation server is not walked by this test"
    session = Client()
    session.force_login(scored["member"])
    token = Client(HTTP_AUTHORIZATION=f"Token {api_token_rotate(user=scored['member'])}")
    bodies = _bodies(session, requests) + _bodies(
        token, {"api": [u for k, v in requests.items() if "api" in k for u in v]}
    )
    # The POST-only patterns answer with pages too: a refused upload, a selection, a new token.
    for client in (session, token):
        refused = client.post(
            reverse("challenges:submit", args=[phase.pk]),
            {"file": _upload(), "method_name": "m", "language": "de"},
        )
        bodies.append(("submit", refused.content.decode()))
    own = Submission.objects.filter(team=scored["team"]).first()
    selected = session.post(reverse("challenges:submission-select", args=[own.pk]), follow=True)
    bodies.append(("select", selected.content.decode()))
    bodies.append(("api-token", session.post(reverse("challenges:api-token"), follow=True).content.decode()))
    assert len(bodies) > 500
    leaks = [(url, s) for url, body in bodies for s in strings if s in body]
    assert not leaks, f"{len(leaks)} sealed numbers shown, first: {leaks[:5]}"
    # What the team does see: the public part, and it says so.
    page = session.get(reverse("challenges:submission", args=[own.pk])).content.decode()
    assert 'id="sealed"' in page
    public = SubmissionScore.objects.filter(submission=own, split=Split.PUBLIC).first()
    assert f"{public.value:.4f}" in page
    api = session.get(reverse("challenges-api:submission", args=[own.pk])).json()
    assert {s["split"] for s in api["scores"]} == {"public"} and any(s["held_out"] for s in api["scores"])


def test_closing_the_phase_shows_the_all_image_and_private_numbers(scored):
    phase = scored["test"]
    session = Client()
    session.force_login(scored["member"])
    own = Submission.objects.filter(team=scored["team"]).order_by("pk").first()
    private = SubmissionScore.objects.get(
        submission=own,
        split=Split.PRIVATE,
        metric="CIDEr-D",
        reference_count=0,
        held_out=False,
        language__code="de",
    )
    url = reverse("challenges:submission", args=[own.pk])
    assert f"{private.value:.4f}" not in session.get(url).content.decode()
    phase_close(phase_id=phase.pk)
    page = session.get(url).content.decode()
    assert f"{private.value:.4f}" in page and 'id="sealed"' not in page
    api = session.get(reverse("challenges-api:submission", args=[own.pk])).json()
    assert {s["split"] for s in api["scores"]} == {"all", "public", "private"}


def test_a_host_sees_every_split_while_the_phase_runs(scored, pm_client):
    own = Submission.objects.filter(team=scored["team"]).order_by("pk").first()
    api = pm_client.get(reverse("challenges-api:submission", args=[own.pk])).json()
    assert {s["split"] for s in api["scores"]} == {"all", "public", "private"}


def _upload():
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("r.json", b"[]")
