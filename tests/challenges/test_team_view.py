"""What a team sees of its own work (issue 35, item 2): the limits in sight beside the upload form and in
the API, a submission page that updates itself until scoring ends, its state in the team's language, and
the method's description, links and date on the leaderboard, its CSV and JSON."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from challenges.models import Submission
from challenges.selectors import team_usage
from challenges.services import QuotaExceeded
from tests.challenges.conftest import submit


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


def _member(bench) -> Client:
    client = Client()
    client.force_login(bench["member"])
    return client


def test_usage_counts_what_the_upload_checks(bench):
    test = bench["test"]
    first = submit(bench, "test")
    second = submit(bench, "test")
    # Yesterday's submission counts in the total, not today; a failed one counts in neither.
    Submission.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(days=1))
    Submission.objects.filter(pk=second.pk).update(status="running")
    failed = submit(bench, "test")
    Submission.objects.filter(pk=failed.pk).update(status="failed")
    usage = team_usage(test, bench["team"])
    assert (usage.today, usage.total, usage.scoring) == (1, 2, 1)
    assert (usage.max_per_day, usage.max_total, usage.max_concurrent) == (3, 3, 3)
    assert not usage.exhausted
    submit(bench, "test")
    assert team_usage(test, bench["team"]).exhausted
    # The page's "a new upload would be refused" is the upload's own answer.
    with pytest.raises(QuotaExceeded):
        submit(bench, "test")


def test_the_limits_are_in_sight_beside_the_upload_form_and_in_the_api(bench):
    submit(bench, "val")
    page = _member(bench).get(reverse("challenges:benchmark", args=[bench["benchmark"].slug]))
    text = page.content.decode()
    val = bench["val"]
    start = text.index(f'id="usage-{val.pk}"')
    line = text[start : text.index("</p>", start)]
    assert "1 of 10 today" in line and "1 of 20 in total" in line and "0 scoring now" in line
    assert "at most 5 at once" in line and "refused" not in line

    token = Token.objects.create(user=bench["member"])
    api = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    data = api.get("/api/challenges/benchmarks/").json()
    phases = {p["id"]: p for b in data for p in b["phases"]}
    assert phases[val.pk]["usage"] == {
        "today": 1,
        "max_per_day": 10,
        "total": 1,
        "max_total": 20,
        "scoring": 0,
        "max_concurrent": 5,
    }
    assert data[0]["team"] == bench["team"].name


def test_an_exhausted_limit_is_said_before_the_upload(bench):
    for _ in range(3):
        submit(bench, "test")
    text = _member(bench).get(reverse("challenges:benchmark", args=[bench["benchmark"].slug])).content
    start = text.decode().index(f'id="usage-{bench["test"].pk}"')
    assert "a new upload would be refused now" in text.decode()[start : start + 800]


def test_the_submission_page_updates_itself_until_scoring_ends(bench):
    submission = submit(bench)
    client = _member(bench)
    url = reverse("challenges:submission", args=[submission.pk])
    Submission.objects.filter(pk=submission.pk).update(status="queued", chunks_done=0)
    waiting = client.get(url).content.decode()
    assert '<meta http-equiv="refresh" content="5">' in waiting
    assert "0 of 1 language scored" in waiting and "queued" in waiting
    Submission.objects.filter(pk=submission.pk).update(status="succeeded", chunks_done=1)
    done = client.get(url).content.decode()
    assert 'http-equiv="refresh"' not in done and "scored" in done


@pytest.mark.parametrize(("code", "queued"), [("de", "in der Warteschlange"), ("ar", "في قائمة الانتظار")])
def test_states_are_in_the_team_language(bench, code, queued):
    submission = submit(bench)
    Submission.objects.filter(pk=submission.pk).update(status="queued", chunks_done=0)
    client = _member(bench)
    client.cookies["django_language"] = code
    page = client.get(reverse("challenges:submission", args=[submission.pk])).content.decode()
    assert queued in page
    listing = client.get(reverse("challenges:benchmark", args=[bench["benchmark"].slug])).content.decode()
    assert queued in listing


def test_the_leaderboard_shows_description_links_and_date(bench):
    submission = submit(
        bench,
        method_name="mine",
        description="A captioner with a long description.",
        paper_url="https://example.org/paper",
        code_url="https://example.org/code",
    )
    client = _member(bench)
    val = bench["val"]
    page = client.get(reverse("challenges:leaderboard", args=[val.pk]) + "?language=de").content.decode()
    assert "A captioner with a long description." in page
    assert 'href="https://example.org/paper"' in page and 'href="https://example.org/code"' in page
    day = submission.created_at.date().isoformat()
    assert f">{day}</time>" in page

    rows = client.get(reverse("challenges:leaderboard-json", args=[val.pk]) + "?language=de").json()["rows"]
    row = next(r for r in rows if r["submission_id"] == submission.pk)
    assert row["description"] == "A captioner with a long description."
    assert row["paper_url"] == "https://example.org/paper" and row["code_url"] == "https://example.org/code"
    assert row["submitted_at"].startswith(day)
    table = client.get(reverse("challenges:leaderboard-csv", args=[val.pk]) + "?language=de").content
    line = next(r for r in csv.DictReader(io.StringIO(table.decode())) if r["method"] == "mine")
    assert line["paper_url"] == "https://example.org/paper" and line["submitted_at"].startswith(day)


def test_the_submission_table_is_compact_and_labels_the_human_comparison(bench):
    from challenges.models import Phase, SubmissionScore

    Phase.objects.filter(pk=bench["val"].pk).update(human_comparison=True)
    submission = submit(bench)
    page = _member(bench).get(reverse("challenges:submission", args=[submission.pk])).content.decode()
    scores = SubmissionScore.objects.filter(submission=submission)
    assert scores.filter(held_out=True).exists()
    # One row per metric in each block, not one per stored score.
    block = page[page.index('id="scores-de"') : page.index('id="scores-de-human"')]
    assert block.count('<th scope="row">') == len(bench["val"].metrics)
    assert ">all<" in block and ">c1<" in block
    human = page[page.index('id="scores-de-human"') :]
    assert "human comparison" in human and "less one held-out human caption" in human
    # One signature line per distinct signature of the block, naming its metrics.
    signatures = set(scores.filter(language__code="de", held_out=False).values_list("signature", flat=True))
    assert block.count('class="signature"') == len(signatures)


def test_word_agreement_opens_at_the_largest_k_the_references_allow(bench, pm_client):
    # Three references per image: the (k+1)-th predicts the first k, so k = 2.
    page = pm_client.get(reverse("challenges:word-agreement", args=[bench["val"].pk]) + "?language=de")
    text = page.content.decode()
    assert 'name="k" min="1" max="2" value="2"' in text and 'id="figure"' in text
    # A k beyond what the references allow is brought back within them.
    capped = pm_client.get(reverse("challenges:word-agreement", args=[bench["val"].pk]) + "?k=9")
    assert 'value="2"' in capped.content.decode()


def test_word_agreement_axes_are_in_the_reader_language(bench):
    client = _member(bench)
    client.cookies["django_language"] = "de"
    text = client.get(reverse("challenges:word-agreement", args=[bench["val"].pk])).content.decode()
    svg = text[text.index("<svg") : text.index("</svg>")]
    assert ">recall<" not in svg and ">precision<" not in svg and ">Präzision<" in svg


def test_participant_pages_speak_without_jargon_and_show_the_api(bench):
    client = _member(bench)
    Token.objects.create(user=bench["member"])
    home = client.get(reverse("challenges:home")).content.decode()
    assert "docs/" not in home and "curl -H" in home and reverse("challenges:api-help") in home
    val = bench["val"]
    board = client.get(
        reverse("challenges:leaderboard", args=[val.pk]) + "?comparison=human"
    ).content.decode()
    assert "seed 00" not in board and "COCO captions paper" in board
    help_page = client.get(reverse("challenges:api-help")).content.decode()
    for path in (
        "/api/challenges/benchmarks/",
        f"/api/challenges/phases/{val.pk}/images/",
        f"/api/challenges/phases/{val.pk}/submissions/",
        f"/api/challenges/phases/{val.pk}/leaderboard/",
    ):
        assert "$SERVER" + path in help_page, path
    assert "export SERVER=http://testserver" in help_page
    assert "Retry-After" in help_page and "429" in help_page


def test_an_invalid_leaderboard_parameter_says_what_is_shown_instead(bench):
    submit(bench)
    client = _member(bench)
    val = bench["val"]
    page = client.get(
        reverse("challenges:leaderboard", args=[val.pk]) + "?language=xx&metric=CLIPscore&refs=7"
    ).content.decode()
    notes = page[page.index('id="notes"') : page.index("</ul>", page.index('id="notes"'))]
    assert "“xx” is not a language of this benchmark; shown: the mean over languages." in notes
    assert "does not compute “CLIPscore”; shown: CIDEr-D" in notes
    assert "no scores with 7 references per image; shown: all references." in notes
    api = client.get(f"/api/challenges/phases/{val.pk}/leaderboard/?refs=abc&language=de").json()
    assert api["notes"] == ["“abc” is not a number of references; shown: all references."]
    assert api["reference_count"] == 0
    # Nothing asked amiss: no note.
    clean = client.get(reverse("challenges:leaderboard", args=[val.pk]) + "?language=de&refs=1")
    assert 'id="notes"' not in clean.content.decode()
    # A team asking for a test phase's private part is told what it sees instead.
    test = client.get(reverse("challenges:leaderboard", args=[bench["test"].pk]) + "?split=private")
    assert "Only the public part can be shown now." in test.content.decode()


def test_a_teams_only_leaderboard_sends_someone_logged_out_to_the_login(bench):
    from challenges.models import Visibility

    val = bench["val"]
    assert val.visibility != Visibility.PUBLIC
    for name in ("challenges:leaderboard", "challenges:leaderboard-csv", "challenges:word-agreement"):
        response = Client().get(reverse(name, args=[val.pk]))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), name
    submission = submit(bench)
    response = Client().get(reverse("challenges:submission", args=[submission.pk]))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    # A logged-in outsider still gets the 404, which names nothing.
    outsider = Client()
    from tests import factories as f

    outsider.force_login(f.UserFactory(username="outsider"))
    assert outsider.get(reverse("challenges:leaderboard", args=[val.pk])).status_code == 404


def test_a_member_withdraws_an_entry_and_puts_it_back(bench):
    from challenges.human import top_entries

    submission = submit(bench, method_name="regret")
    client = _member(bench)
    board_url = reverse("challenges:leaderboard", args=[bench["val"].pk]) + "?language=de"
    assert "regret" in client.get(board_url).content.decode()
    Submission.objects.filter(pk=submission.pk).update(is_selected=True)
    response = client.post(reverse("challenges:submission-withdraw", args=[submission.pk]))
    assert response.status_code == 302
    submission.refresh_from_db()
    assert submission.withdrawn_at is not None and not submission.is_selected
    assert "regret" not in client.get(board_url).content.decode()
    assert submission not in top_entries(bench["val"], bench["de"], 10)
    # It still counts toward the limits.
    assert team_usage(bench["val"], bench["team"]).total == 1
    page = client.get(reverse("challenges:submission", args=[submission.pk])).content.decode()
    assert 'id="withdrawn"' in page and "Put back on the leaderboards" in page
    # Another team's member (or someone outside) cannot withdraw it: 404, nothing changes.
    from tests import factories as f

    outsider = Client()
    outsider.force_login(f.UserFactory(username="other"))
    assert outsider.post(reverse("challenges:submission-withdraw", args=[submission.pk])).status_code == 404
    client.post(reverse("challenges:submission-withdraw", args=[submission.pk]))
    submission.refresh_from_db()
    assert submission.withdrawn_at is None and "regret" in client.get(board_url).content.decode()


def test_a_member_invites_a_teammate_with_a_one_use_link(bench, settings):
    from challenges.models import Invitation

    settings.TEAM_OPEN_INVITATIONS = 2
    client = _member(bench)
    url = reverse("challenges:team-invite", args=[bench["team"].pk])
    slug = bench["benchmark"].slug
    response = client.post(url, {"benchmark": slug})
    assert response["Location"] == reverse("challenges:benchmark", args=[slug])
    page = client.get(response["Location"]).content.decode()
    invitation = Invitation.objects.get(team=bench["team"])
    link = "http://testserver" + reverse("challenges:join", args=[invitation.token])
    assert link in page
    assert link not in client.get(response["Location"]).content.decode()  # shown once
    joined = Client()
    joined.post(
        link,
        {"username": "mate", "password": "a-long-passphrase-42", "password_again": "a-long-passphrase-42"},
    )
    assert bench["team"].members.filter(username="mate").exists()
    # At most TEAM_OPEN_INVITATIONS unused links at once; the used one does not count.
    client.post(url, {"benchmark": slug})
    client.post(url, {"benchmark": slug})
    refused = client.post(url, {"benchmark": slug}, follow=True).content.decode()
    assert "the most it may hold at once" in refused
    assert Invitation.objects.filter(team=bench["team"], used_at__isnull=True).count() == 2
    # Someone outside the team cannot make a link into it.
    from tests import factories as f

    outsider = Client()
    outsider.force_login(f.UserFactory(username="stranger"))
    assert outsider.post(url, {"benchmark": slug}).status_code == 404
    assert Invitation.objects.filter(team=bench["team"]).count() == 3


def test_a_member_of_a_team_in_no_benchmark_is_told_so(db):
    from challenges.models import Team
    from tests import factories as f

    team = Team.objects.create(name="lonely")
    user = f.UserFactory(username="alone")
    team.members.add(user)
    client = Client()
    client.force_login(user)
    page = client.get(reverse("challenges:home")).content.decode()
    assert "<bdi>lonely</bdi> is in no benchmark yet" in page


def test_host_actions_say_what_they_made_with_links_and_warn_of_a_team_in_no_benchmark(bench, pm_client):
    from challenges.models import Team

    phase = bench["test"]
    response = pm_client.post(
        reverse("admin:challenges_phase_changelist"),
        {"action": "close_phases", "_selected_action": [phase.pk]},
        follow=True,
    )
    text = response.content.decode()
    assert "1 phase closed; its leaderboard:" in text
    assert f'href="{reverse("challenges:leaderboard", args=[phase.pk])}"' in text
    lonely = Team.objects.create(name="no-bench")
    response = pm_client.post(
        reverse("admin:challenges_team_changelist"),
        {"action": "invite", "_selected_action": [lonely.pk]},
        follow=True,
    )
    text = response.content.decode()
    assert "Invitation into no-bench" in text and "is in no benchmark" in text
