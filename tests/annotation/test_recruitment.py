"""Recruitment links (issue 14): entry links per campaign, revocable, with expiry and cap; accounts made
or identified from Prolific / MTurk parameters; the language declaration; the completion code and
redirect; the command. Bad input changes nothing (RELIABILITY 19, 23)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone, translation

from annotation.assignment.engine import batch_request
from annotation.models import Annotator, AnnotatorSkill, CampaignState, Enrolment, EntryLink
from annotation.workforce.services import (
    CrowdIdentity,
    crowd_identity_parse,
    entry_admit,
    entry_link_create,
    entry_link_revoke,
)
from core.errors import Conflict, NotAllowed, NotFound, NoWorkAvailable, ValidationFailed
from tests import factories as f
from tests.annotation.workforce_helpers import (
    PID,
    SESSION,
    STUDY,
    crowd_join,
    declare,
    in_manager_order,
    join_url,
    link_for,
    prolific,
    tutorial_for,
)

pytestmark = pytest.mark.django_db
User = get_user_model()


def session_user(client):
    return User.objects.get(pk=client.session["_auth_user_id"])


# --- Entry links -------------------------------------------------------------------------------------


def test_a_link_has_a_long_random_token_and_its_settings(campaign):
    link = link_for(campaign, max_signups=5, quota_batches=2, label="Prolific wave 1")
    assert len(link.token) >= 40 and re.fullmatch(r"[A-Za-z0-9_-]+", link.token)
    assert link_for(campaign).token != link.token
    assert (link.max_signups, link.quota_batches, link.signups, link.revoked_at) == (5, 2, 0, None)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"expires_at": timezone.now() - timedelta(minutes=1)}, "The expiry must lie in the future."),
        ({"max_signups": 0}, "The sign-up cap must be at least 1"),
        ({"quota_batches": 0}, "The quota must be at least 1 batch"),
        ({"completion_code": "bad code!"}, "A completion code is 1 to 64 letters"),
        ({"completion_url": "javascript:alert(1)"}, "is not an http(s) address"),
        ({"completion_url": "ftp://example.org/x"}, "is not an http(s) address"),
    ],
)
def test_bad_link_settings_are_refused_and_nothing_is_stored(campaign, kwargs, message):
    with pytest.raises(ValidationFailed, match=re.escape(message)):
        entry_link_create(campaign_id=campaign.pk, **kwargs)
    assert not EntryLink.objects.exists()


def test_no_link_to_an_unknown_or_closed_campaign(campaign):
    with pytest.raises(NotFound):
        entry_link_create(campaign_id=campaign.pk + 1000)
    campaign.state = CampaignState.CLOSED
    campaign.save()
    with pytest.raises(Conflict, match="is closed"):
        entry_link_create(campaign_id=campaign.pk)
    assert not EntryLink.objects.exists()


# --- Crowd parameters ------------------------------------------------------------------------------------


def test_prolific_and_mturk_parameters_are_read():
    assert crowd_identity_parse(prolific()) == CrowdIdentity("prolific", PID, STUDY, SESSION)
    mturk = crowd_identity_parse({"workerId": "A1B2C3D4E5", "assignmentId": "3XYZ", "hitId": "3HIT"})
    assert mturk == CrowdIdentity("mturk", "A1B2C3D4E5", "3HIT", "3XYZ")
    assert crowd_identity_parse({}) == CrowdIdentity()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"PROLIFIC_PID": "../../etc/passwd", "SESSION_ID": "s1"}, "malformed"),
        ({"PROLIFIC_PID": "<script>", "SESSION_ID": "s1"}, "malformed"),
        ({"PROLIFIC_PID": "a" * 65, "SESSION_ID": "s1"}, "malformed"),
        ({"PROLIFIC_PID": PID}, "missing your participant or session id"),
        ({"workerId": "W1", "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}, "Accept the HIT"),
        ({"PROLIFIC_PID": PID, "SESSION_ID": "s", "workerId": "W1"}, "both Prolific and MTurk"),
    ],
)
def test_malformed_crowd_parameters_are_refused_with_a_message_and_create_nothing(campaign, params, message):
    link = link_for(campaign)
    client = Client()
    page = client.get(join_url(link), params)
    assert page.status_code == 400 and message in page.content.decode()
    response = client.post(join_url(link), params)
    assert response.status_code == 400 and message in response.content.decode()
    assert (
        not Enrolment.objects.exists()
        and not Annotator.objects.filter(user__username__startswith="p-").exists()
    )
    assert EntryLink.objects.get().signups == 0


# --- Admission -------------------------------------------------------------------------------------------


def test_a_prolific_participant_gets_an_account_named_by_no_crowd_id(campaign, german):
    link = link_for(campaign)
    client = Client()
    page = client.get(join_url(link), prolific())
    assert page.status_code == 200 and campaign.name in page.content.decode()
    response = client.post(join_url(link), prolific())
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:participant_languages", args=[campaign.pk])
    user = session_user(client)
    assert user.username.startswith("p-") and PID not in user.username and not user.has_usable_password()
    assert not user.is_staff and not user.is_superuser and not user.groups.exists()
    enrolment = Enrolment.objects.get()
    assert (enrolment.platform, enrolment.worker_id, enrolment.study_id, enrolment.session_id) == (
        "prolific",
        PID,
        STUDY,
        SESSION,
    )
    assert enrolment.account_created and enrolment.annotator.user == user
    assert EntryLink.objects.get().signups == 1
    # The crowd ids never come back in a page the participant sees.
    for url in (response["Location"], reverse("annotation:dashboard")):
        body = client.get(url).content.decode()
        assert PID not in body and SESSION not in body and STUDY not in body


def test_a_new_participant_reads_the_campaign_language_from_the_first_page(campaign, german):
    # A German campaign, a participant who declared nothing yet and chose nothing: the language
    # page, and the tutorial after it, speak German (the campaign's language), language names too.
    client, _ = crowd_join(link_for(campaign), language="")
    page = client.get(reverse("annotation:participant_languages", args=[campaign.pk])).content.decode()
    assert '<html lang="de"' in page and "Ihre Sprachen" in page and "Deutsch" in page
    # Away from the campaign's pages, with no language declared: the browser's language.
    japanese = Client(HTTP_ACCEPT_LANGUAGE="ja")
    japanese.cookies = client.cookies
    assert '<html lang="ja"' in japanese.get(reverse("annotation:dashboard")).content.decode()


def test_the_same_crowd_session_comes_back_to_the_same_account_and_takes_no_second_place(campaign):
    link = link_for(campaign, max_signups=1)
    first, _ = crowd_join(link)
    again, response = crowd_join(link)  # another browser, same PID and session
    assert response.status_code == 302
    assert session_user(again) == session_user(first)
    assert EntryLink.objects.get().signups == 1 and Enrolment.objects.count() == 1


def test_a_crowd_id_alone_is_no_way_into_an_account(campaign):
    """Someone who learns a participant's PROLIFIC_PID (not their session) gets nothing of theirs."""
    link = link_for(campaign)
    crowd_join(link)
    intruder, response = crowd_join(link, prolific(session="guessed-session-id"))
    assert response.status_code == 403
    assert "already been used in this study from another session" in response.content.decode()
    assert "_auth_user_id" not in intruder.session
    assert Enrolment.objects.count() == 1 and User.objects.filter(username__startswith="p-").count() == 1


@pytest.mark.parametrize("state", ["revoked", "expired", "full", "closed campaign"])
def test_a_closed_link_admits_nobody_and_says_why(campaign, state):
    link = link_for(campaign, max_signups=1)
    crowd_join(link, prolific(pid="first0000000000000000000", session="s-first"))
    if state == "revoked":
        entry_link_revoke(link_id=link.pk)
        why = "withdrawn"
    elif state == "expired":
        EntryLink.objects.filter(pk=link.pk).update(
            max_signups=None, expires_at=timezone.now() - timedelta(seconds=1)
        )
        why = "expired"
    elif state == "closed campaign":
        EntryLink.objects.filter(pk=link.pk).update(max_signups=None)
        campaign.state = CampaignState.CLOSED
        campaign.save()
        why = "This study has ended"
    else:
        why = "full"
    users = User.objects.count()
    direct = Client().get(join_url(link))
    assert direct.status_code == 410 and why in direct.content.decode()
    assert 'name="password"' not in direct.content.decode()
    client, response = crowd_join(link, prolific(pid="second000000000000000000", session="s-second"))
    assert response.status_code == 403 and why in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert User.objects.count() == users and Enrolment.objects.count() == 1


def test_a_revoked_link_still_lets_an_admitted_participant_back_in(campaign):
    link = link_for(campaign)
    first, _ = crowd_join(link)
    entry_link_revoke(link_id=link.pk)
    again, response = crowd_join(link)
    assert response.status_code == 302 and session_user(again) == session_user(first)


def test_the_cap_admits_exactly_that_many(campaign):
    link = link_for(campaign, max_signups=2)
    for i in range(2):
        _, response = crowd_join(link, prolific(pid=f"pid{i:021d}", session=f"s{i}"))
        assert response.status_code == 302
    _, response = crowd_join(link, prolific(pid="pid-too-late", session="s-late"))
    assert response.status_code == 403 and "full" in response.content.decode()
    assert EntryLink.objects.get().signups == 2 and Enrolment.objects.count() == 2


def test_an_unknown_token_is_a_404_and_a_token_like_a_path_does_not_resolve(campaign):
    link = link_for(campaign)
    assert Client().get(join_url(link)[:-5] + "xxxx/").status_code == 404
    assert Client().get("/work/join/../../admin/").status_code == 404
    assert Client().post(reverse("annotation:join", args=["A" * 43])).status_code == 404


def test_direct_sign_up_with_a_password(campaign, german):
    link = link_for(campaign)
    client = Client()
    bad = client.post(join_url(link), {"username": "lena", "password": "Xk7-long-pass", "password2": "other"})
    assert bad.status_code == 400 and "The two passwords differ." in bad.content.decode()
    weak = client.post(join_url(link), {"username": "lena", "password": "123", "password2": "123"})
    assert weak.status_code == 400 and not User.objects.filter(username="lena").exists()
    f.UserFactory(username="taken")
    taken = client.post(
        join_url(link), {"username": "TAKEN", "password": "Xk7-long-pass", "password2": "Xk7-long-pass"}
    )
    assert taken.status_code == 400 and "This user name is taken" in taken.content.decode()
    assert EntryLink.objects.get().signups == 0
    ok = client.post(
        join_url(link), {"username": "lena", "password": "Xk7-long-pass", "password2": "Xk7-long-pass"}
    )
    assert ok.status_code == 302
    user = User.objects.get(username="lena")
    assert user.check_password("Xk7-long-pass") and user.annotator.enrolments.get().platform == ""
    # The account logs in with its password like any other.
    assert Client().login(username="lena", password="Xk7-long-pass")


def test_a_signed_in_annotator_joins_with_their_own_account(campaign, annotator_client, annotator):
    link = link_for(campaign)
    page = annotator_client.get(join_url(link))
    assert "You take part with your account" in page.content.decode()
    response = annotator_client.post(join_url(link))
    assert response.status_code == 302 and response["Location"] == reverse("annotation:dashboard")
    enrolment = Enrolment.objects.get()
    assert enrolment.annotator == annotator and not enrolment.account_created
    # Joining twice changes nothing.
    annotator_client.post(join_url(link))
    assert Enrolment.objects.count() == 1 and EntryLink.objects.get().signups == 1


def test_staff_cannot_join(campaign, pm_client):
    link = link_for(campaign)
    response = pm_client.post(join_url(link), prolific())
    assert response.status_code == 403 and not Enrolment.objects.exists()


def test_entry_admit_refuses_an_unknown_token(campaign):
    with pytest.raises(NotFound):
        entry_admit(token="nope", identity=CrowdIdentity())


# --- Language declaration ----------------------------------------------------------------------------------


def test_the_participant_declares_languages_before_any_work(campaign, german):
    link = link_for(campaign)
    client, _ = crowd_join(link)
    annotator = session_user(client).annotator
    with pytest.raises(NotAllowed, match="Declare your languages first"):
        batch_request(annotator=annotator, campaign_id=campaign.pk)
    empty = client.post(reverse("annotation:participant_languages", args=[campaign.pk]), {})
    assert empty.status_code == 400 and "Tick at least one language" in empty.content.decode()
    assert not AnnotatorSkill.objects.filter(annotator=annotator).exists()
    response = declare(client, campaign, german)
    assert response.status_code == 302 and response["Location"] == reverse("annotation:dashboard")
    assert dict(annotator.skills.values_list("language__code", "level")) == {"de": "native"}
    annotator.refresh_from_db()
    assert annotator.reads_english
    batch, created = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert created


def test_a_participant_who_does_not_read_english_gets_no_caption_batch(campaign, german):
    client, _ = crowd_join(link_for(campaign))
    declare(client, campaign, german, reads_english=False)
    with pytest.raises(NotAllowed, match="English"):
        batch_request(annotator=session_user(client).annotator, campaign_id=campaign.pk)


def test_hand_made_annotators_keep_the_skills_their_manager_set(
    campaign, annotator_client, annotator, german
):
    response = annotator_client.post(
        reverse("annotation:participant_languages", args=[campaign.pk]), {"native": [german.pk]}
    )
    assert response.status_code == 404


# --- Completion --------------------------------------------------------------------------------------------


def _submit_a_batch(annotator, campaign):
    from annotation.services import work as services

    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    for a in batch.assignments.all():
        services.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
    services.writing_open(annotator=annotator, batch_id=batch.pk)
    for a in batch.assignments.all():
        services.draft_save(
            annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, text=f"Bild {a.pk}", base_revision=0
        )
    services.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=f"key-{batch.pk:08d}")
    return batch


def _reads_english(annotator):
    # A participant of a German campaign sees German pages by default; these tests read the English.
    annotator.interface_language = "en"
    annotator.save(update_fields=["interface_language"])
    translation.activate("en")


def test_the_completion_code_and_redirect_come_when_the_quota_is_done(campaign, german):
    link = link_for(campaign, quota_batches=1)
    client, _ = crowd_join(link)
    declare(client, campaign, german)
    annotator = session_user(client).annotator
    _reads_english(annotator)
    batch = _submit_a_batch(annotator, campaign)
    response = client.get(reverse("annotation:batch", args=[batch.pk]))
    assert response["Location"] == reverse("annotation:completion", args=[batch.pk])
    page = client.get(response["Location"]).content.decode()
    assert 'id="completion-code">C0DE42<' in page
    assert 'data-redirect="https://app.prolific.example/submissions/complete?cc=C0DE42"' in page
    assert "Do another batch" not in page
    with pytest.raises(NoWorkAvailable, match="every batch of this study"):
        batch_request(annotator=annotator, campaign_id=campaign.pk)
    # Left the page before copying the code: the dashboard still has it.
    dashboard = client.get(reverse("annotation:dashboard")).content.decode()
    assert "You have done every batch of this study." in dashboard and ">C0DE42<" in dashboard


def test_without_a_quota_the_code_comes_after_every_batch_and_more_work_is_offered(campaign, german):
    link = link_for(campaign)
    client, _ = crowd_join(link)
    declare(client, campaign, german)
    annotator = session_user(client).annotator
    _reads_english(annotator)
    batch = _submit_a_batch(annotator, campaign)
    page = client.get(reverse("annotation:completion", args=[batch.pk])).content.decode()
    assert "C0DE42" in page and "data-redirect" not in page and "Do another batch" in page


def test_annotators_not_recruited_by_a_link_see_the_usual_submitted_page(
    campaign, annotator_client, annotator
):
    batch = _submit_a_batch(annotator, campaign)
    response = annotator_client.get(reverse("annotation:batch", args=[batch.pk]))
    assert response.status_code == 200 and "Batch submitted" in response.content.decode()
    assert annotator_client.get(reverse("annotation:completion", args=[batch.pk])).status_code == 302


# --- The command ------------------------------------------------------------------------------------------


def test_the_command_creates_lists_and_revokes(campaign, capsys):
    call_command(
        "entry_link",
        "create",
        "--campaign",
        str(campaign.pk),
        "--cap",
        "30",
        "--days",
        "7",
        "--completion-code",
        "ABC123",
        "--base-url",
        "https://eval.example.org",
    )
    out = capsys.readouterr().out
    link = EntryLink.objects.get()
    assert (
        f"https://eval.example.org/work/join/{link.token}/" in out
        and "PROLIFIC_PID={{%PROLIFIC_PID%}}" in out
    )
    assert link.max_signups == 30 and link.completion_code == "ABC123" and link.expires_at > timezone.now()
    call_command("entry_link", "list", "--campaign", str(campaign.pk))
    assert "0/30 joined\tadmitting" in capsys.readouterr().out
    call_command("entry_link", "revoke", str(link.pk))
    link.refresh_from_db()
    assert link.revoked_at is not None


@pytest.mark.parametrize(
    "args",
    [
        ["--cap", "0"],
        ["--expires", "2001-01-01"],
        ["--expires", "tomorrow"],
        ["--completion-url", "javascript:alert(1)"],
        ["--days", "0"],
    ],
)
def test_the_command_refuses_bad_input_and_stores_nothing(campaign, args):
    with pytest.raises(CommandError):
        call_command("entry_link", "create", "--campaign", str(campaign.pk), *args)
    assert not EntryLink.objects.exists()


def test_the_command_dry_run_stores_nothing(campaign, capsys):
    call_command("entry_link", "create", "--campaign", str(campaign.pk), "--dry-run")
    assert "nothing stored" in capsys.readouterr().out and not EntryLink.objects.exists()
    with pytest.raises(CommandError, match="No campaign"):
        call_command("entry_link", "create", "--campaign", "999999")
    with pytest.raises(CommandError, match="No entry link"):
        call_command("entry_link", "revoke", "999999")


def test_a_link_to_a_campaign_not_yet_open_admits_nobody_until_it_opens(german):
    from annotation.services.campaigns import campaign_open

    draft = f.CampaignFactory(language=german)
    link = link_for(draft)
    page = Client().get(join_url(link))
    assert page.status_code == 410 and "This study has not started yet" in page.content.decode()
    _, refused = crowd_join(link)
    assert refused.status_code == 403 and not Enrolment.objects.exists()
    f.SystemCaptionFactory(system=draft.prompt_system, language=f.LanguageFactory(code="en", name="English"))
    campaign_open(campaign_id=draft.pk)
    _, admitted = crowd_join(link)
    assert admitted.status_code == 302 and Enrolment.objects.count() == 1


def test_a_participant_who_does_not_speak_the_language_is_told_so(campaign, german):
    french = f.LanguageFactory(code="fr", name="French")
    client, _ = crowd_join(link_for(campaign))
    response = client.post(
        reverse("annotation:participant_languages", args=[campaign.pk]), {"native": [french.pk]}, follow=True
    )
    page = response.content.decode()
    assert "This study needs people who speak German natively or fluently." in page
    assert response.redirect_chain[-1][0] == reverse("annotation:screened_out", args=[campaign.pk])
    assert f'data-campaign="{campaign.pk}"' not in page  # no work offered
    with pytest.raises(NotAllowed):
        batch_request(annotator=Enrolment.objects.get().annotator, campaign_id=campaign.pk)


def test_the_screen_out_page_speaks_one_language_and_leads_back_to_the_language_form(campaign, german):
    french = f.LanguageFactory(code="fr", name="French")
    # No interface language chosen: the language form spoke German, the campaign's language.
    link = link_for(campaign)
    client, _ = crowd_join(link, language="")
    languages = reverse("annotation:participant_languages", args=[campaign.pk])
    response = client.post(languages, {"native": [french.pk], "reads_english": "on"}, follow=True)
    page = response.content.decode()
    # The reason reads in the page's own language (it came as a German banner on an English page).
    assert '<html lang="de"' in page
    assert "Diese Studie braucht Menschen, die Deutsch als Muttersprache oder fließend sprechen." in page
    assert "This study needs people who speak" not in page
    assert f'id="change-answers" href="{languages}"' in page
    # Following the entry link again comes back here, not to an empty dashboard.
    _, again = crowd_join(link, client=client, language="")
    assert again["Location"] == reverse("annotation:screened_out", args=[campaign.pk])

    # Changing the answers: the page lets them go on, and the screen-out page sends them on too.
    declare(client, campaign, german)
    assert client.get(reverse("annotation:screened_out", args=[campaign.pk]))["Location"] == reverse(
        "annotation:dashboard"
    )


@pytest.mark.parametrize(
    ("platform_params", "link_settings", "shown", "not_shown"),
    [
        (
            prolific(),
            {"screenout_code": "SCRN01"},
            ["Enter this screen-out code on Prolific", 'id="screen-out-code">SCRN01<'],
            ["Please return this study"],
        ),
        (
            prolific(),
            {"screenout_url": "https://app.prolific.example/submissions/complete?cc=SCRN02"},
            ['id="screen-out-link" href="https://app.prolific.example/submissions/complete?cc=SCRN02"'],
            ["screen-out code"],
        ),
        (prolific(), {}, ["Please return this study on Prolific"], ['id="screen-out-code"']),
        (
            {"workerId": "A2XYZ0123456", "assignmentId": "3ASSIGN0001", "hitId": "3HIT0001"},
            {},
            ["Please return this HIT on MTurk"],
            ["Prolific"],
        ),
    ],
)
def test_a_screened_out_participant_gets_the_platform_s_instruction_or_the_link_s_code(
    campaign, german, platform_params, link_settings, shown, not_shown
):
    french = f.LanguageFactory(code="fr", name="French")
    link = link_for(campaign, **link_settings)
    client, _ = crowd_join(link, platform_params)
    declare(client, campaign, french)
    page = client.get(reverse("annotation:screened_out", args=[campaign.pk])).content.decode()
    for text in shown:
        assert text in page
    for text in not_shown:
        assert text not in page


def test_a_participant_who_does_not_read_english_is_screened_out_of_a_caption_campaign(campaign, german):
    client, _ = crowd_join(link_for(campaign, screenout_code="NOENG1"))
    response = declare(client, campaign, german, reads_english=False)
    assert response["Location"] == reverse("annotation:screened_out", args=[campaign.pk])
    page = client.get(response["Location"]).content.decode()
    assert "so it needs people who read English." in page and "NOENG1" in page


def test_an_mturk_worker_is_admitted_from_the_external_question_parameters(campaign):
    link = link_for(campaign)
    params = {"workerId": "A2XYZ0123456", "assignmentId": "3ASSIGN0001", "hitId": "3HIT0001"}
    preview = Client().get(join_url(link), {**params, "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    assert preview.status_code == 400 and "Accept the HIT on MTurk first" in preview.content.decode()
    client, response = crowd_join(link, params)
    assert response.status_code == 302
    enrolment = Enrolment.objects.get()
    assert (enrolment.platform, enrolment.worker_id, enrolment.session_id, enrolment.study_id) == (
        "mturk",
        "A2XYZ0123456",
        "3ASSIGN0001",
        "3HIT0001",
    )
    assert "A2XYZ0123456" not in session_user(client).username


def test_a_participant_who_fails_the_tutorial_gets_the_link_s_screen_out_code(campaign, german):
    """Failing the tutorial is a screen-out too: the page gives the crowd platform's code (it was a dead
    end: 'you cannot take part' and nothing to tell Prolific)."""
    items = tutorial_for(campaign, expected=("good", "bad"), threshold=1.0)
    client, _ = crowd_join(link_for(campaign, screenout_code="TUTOUT"))
    declare(client, campaign, german)
    in_manager_order(campaign, Enrolment.objects.get().annotator)
    url = reverse("annotation:tutorial", args=[campaign.pk])
    for item in items:
        client.post(url, {"item": item.pk, "answer": "excellent" if item.expected == "bad" else "good"})
    page = client.get(url).content.decode()
    assert 'id="tutorial-failed"' in page
    assert "Enter this screen-out code on Prolific" in page and 'id="screen-out-code">TUTOUT<' in page
