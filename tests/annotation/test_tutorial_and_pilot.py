"""Onboarding and pilots (issue 14): the per-campaign tutorial of gold items with feedback after each
answer, its threshold and stored result, no real work before passing; the pilot review page, where a
manager accepts or returns captions with a comment the annotator sees."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.assignment.engine import batch_request
from annotation.models import (
    CampaignOnboarding,
    CaptionReview,
    TutorialAnswer,
    TutorialItem,
    TutorialResult,
    WrittenCaption,
)
from annotation.workforce.services import caption_review, tutorial_answer, tutorial_reset
from core.errors import Conflict, NotAllowed, NotFound, ValidationFailed
from tests import factories as f
from tests.annotation.workforce_helpers import in_manager_order, tutorial_for

pytestmark = pytest.mark.django_db


def tutorial_url(campaign):
    return reverse("annotation:tutorial", args=[campaign.pk])


def answer(client, campaign, item, value):
    return client.post(tutorial_url(campaign), {"item": item.pk, "answer": value})


def test_no_batch_before_the_tutorial_is_passed(campaign, annotator):
    tutorial_for(campaign)
    with pytest.raises(NotAllowed, match="Pass the tutorial of this campaign first"):
        batch_request(annotator=annotator, campaign_id=campaign.pk)


def test_a_tutorial_without_gold_items_or_switched_off_asks_nothing(campaign, annotator):
    CampaignOnboarding.objects.create(campaign=campaign, tutorial_enabled=True)
    assert batch_request(annotator=annotator, campaign_id=campaign.pk)[1]
    other = f.open_caption_campaign(images=3, batch_size=3, language=campaign.language)
    tutorial_for(other)
    CampaignOnboarding.objects.filter(campaign=other).update(tutorial_enabled=False)
    assert batch_request(annotator=annotator, campaign_id=other.pk)[1]


def test_feedback_after_each_answer_then_a_stored_result_and_real_work(campaign, annotator, annotator_client):
    items = tutorial_for(campaign, expected=("good", "bad"), threshold=0.5, explanations={1: "Close enough."})
    in_manager_order(campaign, annotator)
    page = annotator_client.get(tutorial_url(campaign)).content.decode()
    assert "1 of 2" in page and items[0].caption in page
    # The expected answer and its explanation are not in the page before the answer.
    assert "Close enough." not in page and "expected good" not in page

    wrong = answer(annotator_client, campaign, items[0], "bad")
    assert wrong["Location"] == reverse("annotation:tutorial_feedback", args=[campaign.pk])
    feedback = annotator_client.get(wrong["Location"]).content.decode()
    assert "Not quite" in feedback and "Your answer: BAD." in feedback
    assert "Expected: GOOD (one level above or below also counts as right)." in feedback
    assert "Close enough." in feedback and "Next" in feedback
    # A second answer to the same item (reload, double click) keeps the first.
    answer(annotator_client, campaign, items[0], "good")
    assert TutorialAnswer.objects.get(item=items[0]).answer == "bad"

    page = annotator_client.get(tutorial_url(campaign)).content.decode()
    assert "2 of 2" in page and items[1].caption in page
    right = answer(annotator_client, campaign, items[1], "medium")
    feedback = annotator_client.get(right["Location"]).content.decode()
    assert "Right" in feedback and "See your result" in feedback

    result = TutorialResult.objects.get(annotator=annotator, campaign=campaign)
    assert (result.correct, result.total, result.threshold, result.verdict) == (1, 2, 0.5, "passed")
    page = annotator_client.get(tutorial_url(campaign)).content.decode()
    assert "You answered 1 of 2 right." in page and 'id="tutorial-passed"' in page
    assert batch_request(annotator=annotator, campaign_id=campaign.pk)[1]
    with pytest.raises(Conflict, match="already finished"):
        tutorial_answer(annotator=annotator, campaign_id=campaign.pk, item_id=items[0].pk, answer="good")


def test_failing_the_tutorial_bars_the_campaign_until_a_manager_allows_another_attempt(campaign, annotator):
    items = tutorial_for(campaign, expected=("good", "bad"), threshold=1.0)
    tutorial_answer(annotator=annotator, campaign_id=campaign.pk, item_id=items[0].pk, answer="bad")
    tutorial_answer(annotator=annotator, campaign_id=campaign.pk, item_id=items[1].pk, answer="bad")
    assert TutorialResult.objects.get().verdict == "failed"
    with pytest.raises(NotAllowed, match="did not reach the score"):
        batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert tutorial_reset(campaign_id=campaign.pk, annotator_id=annotator.pk) == 2
    assert not TutorialResult.objects.exists()
    with pytest.raises(NotAllowed, match="Pass the tutorial"):
        batch_request(annotator=annotator, campaign_id=campaign.pk)


def test_side_by_side_gold_items_score_the_direction(german):
    campaign = f.open_sxs_campaign(images=3, batch_size=3, language=german)
    annotator = f.AnnotatorFactory(user__username="sxs-ann", languages=[german], reads_english=False)
    items = tutorial_for(campaign, expected=("left", "similar"), threshold=1.0)
    in_manager_order(campaign, annotator)
    client = Client()
    client.force_login(annotator.user)
    page = client.get(tutorial_url(campaign)).content.decode()
    assert "Left much better" in page and items[0].caption_right in page
    answer(client, campaign, items[0], "slightly_better")
    answer(client, campaign, items[1], "worse")
    feedback = client.get(reverse("annotation:tutorial_feedback", args=[campaign.pk])).content.decode()
    assert "Not quite" in feedback and "about as good" in feedback
    assert TutorialResult.objects.get().correct == 1


def test_bad_tutorial_answers_change_nothing(campaign, annotator, annotator_client):
    items = tutorial_for(campaign)
    for data in ({"item": items[0].pk, "answer": "great"}, {"item": "x", "answer": "good"}, {}):
        response = annotator_client.post(tutorial_url(campaign), data)
        assert response.status_code == 400 and "Choose one of the answers shown." in response.content.decode()
    with pytest.raises(ValidationFailed):
        tutorial_answer(
            annotator=annotator, campaign_id=campaign.pk, item_id=items[0].pk, answer="much_better"
        )
    other = f.open_caption_campaign(images=3, batch_size=3, language=campaign.language)
    foreign = tutorial_for(other)[0]
    assert answer(annotator_client, campaign, foreign, "good").status_code == 404
    assert not TutorialAnswer.objects.exists()


# --- Pilot review ----------------------------------------------------------------------------------------


@pytest.fixture
def pilot(captioned):
    CampaignOnboarding.objects.create(campaign=captioned, tutorial_enabled=False, is_pilot=True)
    return captioned


def review_url(campaign):
    return reverse("admin:annotation_campaignonboarding_review", args=[campaign.onboarding.pk])


def test_the_manager_accepts_or_returns_pilot_captions_and_the_author_sees_the_comment(
    pilot, pm_client, annotator, other_annotator
):
    page = pm_client.get(review_url(pilot)).content.decode()
    assert page.count('name="decision"') == 12
    anna = WrittenCaption.objects.filter(annotator=annotator).order_by("pk")
    returned = pm_client.post(
        review_url(pilot),
        {"caption": anna[0].pk, "decision": "returned", "comment": "Beschreibe auch <b>den Hintergrund</b>."},
        follow=True,
    )
    assert "Saved the decision." in returned.content.decode()
    pm_client.post(review_url(pilot), {"caption": anna[1].pk, "decision": "accepted", "comment": ""})
    assert CaptionReview.objects.count() == 2

    client = Client()
    client.force_login(annotator.user)
    feedback = client.get(reverse("annotation:pilot_feedback", args=[pilot.pk])).content.decode()
    assert "Beschreibe auch &lt;b&gt;den Hintergrund&lt;/b&gt;." in feedback
    assert "Returned with a comment" in feedback and "Accepted" in feedback
    feedback_link = f'href="{reverse("annotation:pilot_feedback", args=[pilot.pk])}"'
    assert feedback_link in client.get(reverse("annotation:dashboard")).content.decode()
    # Otto sees none of Anna's reviews.
    otto = Client()
    otto.force_login(other_annotator.user)
    assert (
        "Hintergrund" not in otto.get(reverse("annotation:pilot_feedback", args=[pilot.pk])).content.decode()
    )


def test_a_return_needs_a_comment_and_only_pilots_are_reviewed(pilot, captioned, manager, pm_client):
    caption = WrittenCaption.objects.first()
    response = pm_client.post(
        review_url(pilot), {"caption": caption.pk, "decision": "returned", "comment": " "}, follow=True
    )
    assert "Say in a comment what the annotator should change." in response.content.decode()
    for data in (
        {"caption": caption.pk, "decision": "maybe"},
        {"caption": "x", "decision": "accepted"},
        {"caption": 10**9, "decision": "accepted"},
    ):
        pm_client.post(review_url(pilot), data)
    assert not CaptionReview.objects.exists()
    CampaignOnboarding.objects.filter(campaign=pilot).update(is_pilot=False)
    with pytest.raises(Conflict, match="not a pilot"):
        caption_review(caption_id=caption.pk, decision="accepted", comment="", reviewer=manager)
    with pytest.raises(NotFound):
        caption_review(caption_id=10**9, decision="accepted", comment="", reviewer=manager)


def test_researchers_read_the_review_page_but_cannot_decide_and_annotators_cannot_reach_it(
    pilot, researcher_client, annotator_client
):
    caption = WrittenCaption.objects.first()
    page = researcher_client.get(review_url(pilot))
    assert page.status_code == 200 and 'name="decision"' not in page.content.decode()
    denied = researcher_client.post(review_url(pilot), {"caption": caption.pk, "decision": "accepted"})
    assert denied.status_code == 403
    assert annotator_client.get(review_url(pilot)).status_code == 302  # the admin's login page
    assert (
        annotator_client.post(review_url(pilot), {"caption": caption.pk, "decision": "accepted"}).status_code
        == 302
    )
    assert not CaptionReview.objects.exists()


# --- Writing items: a caption a person checks -------------------------------------------------------------


def test_a_written_tutorial_caption_that_decides_keeps_the_verdict_pending_and_then_final(
    campaign, annotator, pm_client
):
    annotator_client = Client()  # pm_client holds the ``client`` fixture
    annotator_client.force_login(annotator.user)
    items = tutorial_for(campaign, expected=("good", "write"), threshold=1.0)
    CampaignOnboarding.objects.filter(campaign=campaign).update(review_hours=24)
    TutorialItem.objects.filter(pk=items[1].pk).update(caption="Ein Hund läuft über einen Sandstrand.")
    answer(annotator_client, campaign, items[0], "good")
    page = annotator_client.get(tutorial_url(campaign)).content.decode()
    assert 'name="text"' in page and "Ein Hund läuft" not in page  # the example only after the answer
    empty = annotator_client.post(tutorial_url(campaign), {"item": items[1].pk, "text": "   "})
    assert empty.status_code == 400 and not TutorialAnswer.objects.filter(item=items[1]).exists()
    sent = annotator_client.post(tutorial_url(campaign), {"item": items[1].pk, "text": "Ein Hund am Meer"})
    feedback = annotator_client.get(sent["Location"]).content.decode()
    assert "Caption received" in feedback and "A person will check your caption." in feedback
    assert "Ein Hund läuft über einen Sandstrand." in feedback

    # 1 of 2 right and the caption decides (threshold 1): pending, neither passed nor failed.
    result = TutorialResult.objects.get()
    assert (result.correct, result.total, result.pending, result.verdict) == (1, 1, 1, "pending")
    page = annotator_client.get(tutorial_url(campaign)).content.decode()
    assert (
        "a person is checking it. Come back later" in page and "Captions are checked within 24 hours." in page
    )
    assert 'id="tutorial-failed"' not in page and 'id="tutorial-passed"' not in page
    with pytest.raises(NotAllowed, match="being checked; come back later"):
        batch_request(annotator=annotator, campaign_id=campaign.pk)
    dashboard = annotator_client.get(reverse("annotation:dashboard")).content.decode()
    assert (
        "Your tutorial caption is being checked; come back later. Captions are checked within 24 hours."
        in (dashboard)
    )

    written = TutorialAnswer.objects.get(item=items[1])
    changelist = reverse("admin:annotation_tutorialanswer_changelist")
    page = pm_client.get(f"{changelist}?check=pending").content.decode()
    assert "Ein Hund am Meer" in page and "not checked yet" in page
    pm_client.post(changelist, {"action": "mark_wrong", "_selected_action": [written.pk]})
    result.refresh_from_db()
    assert (result.correct, result.total, result.pending, result.verdict) == (1, 2, 0, "failed")
    written.refresh_from_db()
    assert written.correct is False and written.checked_by is not None
    with pytest.raises(NotAllowed, match="did not reach the score"):
        batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert 'id="tutorial-failed"' in annotator_client.get(tutorial_url(campaign)).content.decode()

    # Failed was shown: deciding the check again does not turn it into a pass.
    refused = pm_client.post(
        changelist, {"action": "mark_right", "_selected_action": [written.pk]}, follow=True
    )
    assert "a verdict shown is never turned around: allow another attempt" in refused.content.decode()
    written.refresh_from_db()
    result.refresh_from_db()
    assert written.correct is False and result.verdict == "failed"
    # Only the manager's "another attempt" starts over.
    results = reverse("admin:annotation_tutorialresult_changelist")
    pm_client.post(results, {"action": "allow_another_attempt", "_selected_action": [result.pk]})
    assert 'name="item"' in annotator_client.get(tutorial_url(campaign)).content.decode()


def test_a_written_caption_that_cannot_change_the_outcome_leaves_the_verdict_final_at_once(
    campaign, annotator, manager
):
    from annotation.workforce.services import tutorial_writing_check

    items = tutorial_for(campaign, expected=("good", "bad", "good", "bad", "write"), threshold=0.8)
    for item in items[:4]:
        tutorial_answer(annotator=annotator, campaign_id=campaign.pk, item_id=item.pk, answer=item.expected)
    written = tutorial_answer(
        annotator=annotator, campaign_id=campaign.pk, item_id=items[4].pk, text="Ein Hund"
    )
    # 4 of 5 right whatever the caption turns out to be: passed, and work may start.
    assert TutorialResult.objects.get().verdict == "passed"
    assert batch_request(annotator=annotator, campaign_id=campaign.pk)[1]
    tutorial_writing_check(answer_id=written.pk, correct=False, checker=manager)
    result = TutorialResult.objects.get()
    assert (result.correct, result.total, result.pending, result.verdict) == (4, 5, 0, "passed")


def test_only_written_captions_are_checked_by_a_person(campaign, annotator, manager):
    from annotation.workforce.services import tutorial_writing_check

    items = tutorial_for(campaign, expected=("good",))
    rated = tutorial_answer(annotator=annotator, campaign_id=campaign.pk, item_id=items[0].pk, answer="good")
    with pytest.raises(Conflict, match="Only written captions"):
        tutorial_writing_check(answer_id=rated.pk, correct=False, checker=manager)
    with pytest.raises(NotFound):
        tutorial_writing_check(answer_id=10**9, correct=False, checker=manager)
    assert TutorialResult.objects.get().verdict == "passed"


def test_the_pilot_review_names_authors_as_the_other_admin_lists_do(
    pilot, pm_client, annotator, other_annotator
):
    """By user name (``Annotator.__str__``), as the typing list, the reports and the captions list
    do: the same participant is not a pseudonym here and a user name there."""
    page = pm_client.get(review_url(pilot)).content.decode()
    for author in (annotator, other_annotator):
        assert f"<td>{author}</td>" in page and str(author) == author.user.username
        assert author.pseudonym not in page
