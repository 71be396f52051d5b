"""The project manager's pages for recruitment and onboarding: entry links (create, revoke, change),
participants, onboarding settings and gold items, tutorial results, the panel on the campaign page."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import CampaignOnboarding, EntryLink, TutorialItem, TutorialResult
from annotation.workforce.services import tutorial_answer
from tests import factories as f
from tests.annotation.workforce_helpers import crowd_join, link_for, tutorial_for

pytestmark = pytest.mark.django_db


def test_a_manager_creates_an_entry_link_and_gets_the_urls_for_prolific_and_mturk(campaign, pm_client):
    add = reverse("admin:annotation_entrylink_add")
    form = pm_client.get(f"{add}?campaign={campaign.pk}").content.decode()
    assert f'<option value="{campaign.pk}" selected>' in form
    response = pm_client.post(
        add,
        {
            "campaign": campaign.pk,
            "label": "Prolific wave 1",
            "max_signups": "40",
            "quota_batches": "2",
            "completion_code": "CX12",
            "completion_url": "https://app.prolific.com/submissions/complete?cc=CX12",
        },
        follow=True,
    )
    link = EntryLink.objects.get()
    page = response.content.decode()
    assert "Created the entry link “Prolific wave 1”" in page
    assert f"http://testserver/work/join/{link.token}/" in page
    assert f"/work/join/{link.token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&amp;STUDY_ID=" in page
    assert (link.max_signups, link.quota_batches, link.completion_code) == (40, 2, "CX12")


def test_bad_link_forms_store_nothing(campaign, pm_client):
    add = reverse("admin:annotation_entrylink_add")
    for data in (
        {"campaign": campaign.pk, "max_signups": "0"},
        {"campaign": campaign.pk, "completion_url": "javascript:alert(1)"},
        {"campaign": campaign.pk, "completion_code": "has space"},
        {"campaign": campaign.pk, "expires_at": "2001-01-01 00:00"},
        {"campaign": 10**9},
    ):
        page = pm_client.post(add, data).content.decode()
        assert "errornote" in page or "errorlist" in page, data
    assert not EntryLink.objects.exists()


def test_revoke_and_the_cap_cannot_go_below_the_sign_ups(campaign, pm_client):
    link = link_for(campaign, max_signups=5)
    crowd_join(link)
    crowd_join(link, {"PROLIFIC_PID": "x" * 24, "SESSION_ID": "s2"})
    change = reverse("admin:annotation_entrylink_change", args=[link.pk])
    response = pm_client.post(change, {"label": "w", "max_signups": "1", "completion_code": "C0DE42"})
    assert "2 people have already joined: the cap cannot be below that." in response.content.decode()
    link.refresh_from_db()
    assert link.max_signups == 5
    changelist = reverse("admin:annotation_entrylink_changelist")
    assert "2 / 5" in pm_client.get(changelist).content.decode()
    pm_client.post(changelist, {"action": "revoke", "_selected_action": [link.pk]})
    link.refresh_from_db()
    assert link.revoked_at is not None
    assert "withdrawn" in pm_client.get(changelist).content.decode()


def test_the_campaign_page_sums_up_recruitment_and_onboarding(campaign, pm_client, annotator):
    link_for(campaign, max_signups=10, label="Wave A")
    items = tutorial_for(campaign, expected=("good",), threshold=1.0)
    tutorial_answer(annotator=annotator, campaign_id=campaign.pk, item_id=items[0].pk, answer="bad")
    page = pm_client.get(reverse("admin:annotation_campaign_change", args=[campaign.pk])).content.decode()
    assert 'id="campaign-recruitment"' in page and "Wave A: 0 / 10 joined" in page
    assert "1 gold item, pass at 1.00; 0 passed, 1 failed" in page


def test_gold_items_must_have_an_answer_key_of_their_campaigns_kind(campaign, german, pm_client):
    add = reverse("admin:annotation_tutorialitem_add")
    image = f.ImageFactory()
    data = {"campaign": campaign.pk, "position": 1, "image": image.pk, "caption": "A dog", "expected": "left"}
    response = pm_client.post(add, data)
    assert (
        "The expected answer is one of excellent, good, medium, bad, nei, write." in response.content.decode()
    )
    sxs = f.open_sxs_campaign(images=3, language=german)
    response = pm_client.post(add, {**data, "campaign": sxs.pk})
    assert "A side-by-side gold item needs a right-hand caption." in response.content.decode()
    assert not TutorialItem.objects.exists()
    pm_client.post(add, {**data, "expected": "good"})
    assert TutorialItem.objects.get().expected == "good"


def test_onboarding_threshold_outside_0_1_is_refused(campaign, pm_client):
    add = reverse("admin:annotation_campaignonboarding_add")
    response = pm_client.post(
        add, {"campaign": campaign.pk, "pass_threshold": "1.5", "tutorial_enabled": "on"}
    )
    assert "A share between 0 and 1" in response.content.decode()
    assert not CampaignOnboarding.objects.exists()


def test_a_manager_allows_another_attempt(campaign, pm_client, annotator):
    items = tutorial_for(campaign, expected=("good",), threshold=1.0)
    tutorial_answer(annotator=annotator, campaign_id=campaign.pk, item_id=items[0].pk, answer="bad")
    result = TutorialResult.objects.get()
    changelist = reverse("admin:annotation_tutorialresult_changelist")
    assert "0 / 1 (needs 100%)" in pm_client.get(changelist).content.decode()
    pm_client.post(changelist, {"action": "allow_another_attempt", "_selected_action": [result.pk]})
    assert not TutorialResult.objects.exists()


def test_the_main_campaign_shows_how_its_pilots_review_stands(captioned, german, pm_client, manager):
    from annotation.models import WrittenCaption
    from annotation.workforce.services import caption_review

    main = f.open_caption_campaign(images=3, batch_size=3, language=german, name="Hauptkampagne")
    add = reverse("admin:annotation_campaignonboarding_add")
    refused = pm_client.post(
        add, {"campaign": captioned.pk, "pass_threshold": "0.8", "main_campaign": main.pk}
    )
    assert "Only a pilot prepares a main campaign" in refused.content.decode()
    own = pm_client.post(
        add,
        {"campaign": captioned.pk, "pass_threshold": "0.8", "is_pilot": "on", "main_campaign": captioned.pk},
    )
    assert "A pilot cannot be its own main campaign." in own.content.decode()
    assert not CampaignOnboarding.objects.exists()
    pm_client.post(
        add, {"campaign": captioned.pk, "pass_threshold": "0.8", "is_pilot": "on", "main_campaign": main.pk}
    )
    first, second = WrittenCaption.objects.order_by("pk")[:2]
    caption_review(caption_id=first.pk, decision="accepted", comment="", reviewer=manager)
    caption_review(caption_id=second.pk, decision="returned", comment="Mehr Details", reviewer=manager)
    page = pm_client.get(reverse("admin:annotation_campaign_change", args=[main.pk])).content.decode()
    assert f"Pilot “{captioned.name}”: 12 captions, 1 accepted, 1 returned — not all reviewed yet." in page


def test_a_writing_gold_item_saves_without_an_example_and_then_shows_none(campaign, annotator, pm_client):
    add = reverse("admin:annotation_tutorialitem_add")
    form = pm_client.get(add).content.decode()
    assert "Caption (writing items: example shown after the answer)" in form
    data = {"campaign": campaign.pk, "position": 1, "image": f.ImageFactory().pk, "caption": ""}
    refused = pm_client.post(add, {**data, "expected": "good"})
    assert "A rating or side-by-side gold item needs its caption." in refused.content.decode()
    assert not TutorialItem.objects.exists()
    saved = pm_client.post(add, {**data, "expected": "write"})
    assert saved.status_code == 302
    item = TutorialItem.objects.get()
    assert (item.expected, item.caption) == ("write", "")

    CampaignOnboarding.objects.create(campaign=campaign, tutorial_enabled=True, pass_threshold=0.5)
    participant = Client()
    participant.force_login(annotator.user)
    tutorial = reverse("annotation:tutorial", args=[campaign.pk])
    sent = participant.post(tutorial, {"item": item.pk, "text": "Ein Hund am Meer"})
    feedback = participant.get(sent["Location"]).content.decode()
    assert "Caption received" in feedback and "Ein Hund am Meer" in feedback
    assert "An example of a good caption" not in feedback and 'id="feedback-example"' not in feedback


def gold_item_post(pm_client, campaign, position, expected):
    add = reverse("admin:annotation_tutorialitem_add")
    data = {
        "campaign": campaign.pk,
        "position": position,
        "image": f.ImageFactory().pk,
        "caption": f"A dog on a beach ({position})",
        "expected": expected,
    }
    return pm_client.post(add, data, follow=True)


def test_the_admin_warns_of_a_gold_set_a_constant_answer_passes_and_will_not_switch_it_on(
    campaign, pm_client
):
    onboarding = CampaignOnboarding.objects.create(
        campaign=campaign, tutorial_enabled=False, pass_threshold=0.8
    )
    # The gold set of the issue: EXCELLENT, GOOD, MEDIUM, GOOD ("within one level").
    for position, expected in enumerate(("excellent", "good", "medium", "good"), start=1):
        page = gold_item_post(pm_client, campaign, position, expected).content.decode()
    warning = "A constant answer passes this tutorial: answering GOOD (4 of 4 right) to every gold item"
    assert warning in page
    change = reverse("admin:annotation_campaignonboarding_change", args=[onboarding.pk])
    assert warning in pm_client.get(change).content.decode()

    refused = pm_client.post(
        change, {"campaign": campaign.pk, "pass_threshold": "0.8", "tutorial_enabled": "on"}
    )
    assert "The tutorial cannot be on with this gold set." in refused.content.decode()
    onboarding.refresh_from_db()
    assert not onboarding.tutorial_enabled

    # A fifth item far from GOOD and a sixth NOT-ENOUGH-INFO: GOOD now gets 4 of 6, below 0.8.
    gold_item_post(pm_client, campaign, 5, "bad")
    page = gold_item_post(pm_client, campaign, 6, "nei").content.decode()
    assert "A constant answer passes" not in page
    assert "No constant answer passes this gold set." in pm_client.get(change).content.decode()
    pm_client.post(change, {"campaign": campaign.pk, "pass_threshold": "0.8", "tutorial_enabled": "on"})
    onboarding.refresh_from_db()
    assert onboarding.tutorial_enabled

    # Deleting the items that stopped it says so again.
    changelist = reverse("admin:annotation_tutorialitem_changelist")
    weak = TutorialItem.objects.filter(position__in=[5, 6]).values_list("pk", flat=True)
    done = pm_client.post(
        changelist, {"action": "delete_selected", "_selected_action": list(weak), "post": "yes"}, follow=True
    )
    assert warning in done.content.decode() and TutorialItem.objects.count() == 4


def test_each_participant_meets_the_gold_items_in_an_order_of_their_own_that_a_reload_keeps(
    campaign, annotator, other_annotator
):
    from annotation.models import TutorialAttempt
    from annotation.workforce.scoring import gold_order

    items = tutorial_for(campaign, expected=("good", "bad", "excellent", "medium", "nei", "good"))
    by_id = {item.pk: item for item in items}
    tutorial = reverse("annotation:tutorial", args=[campaign.pk])

    def shown(client):
        page = client.get(tutorial).content.decode()
        return next(item for item in items if f'name="item" value="{item.pk}"' in page)

    def walk(person):
        client = Client()
        client.force_login(person.user)
        first = shown(client)
        assert shown(client) == first  # a reload keeps the item
        seed = TutorialAttempt.objects.get(annotator=person, campaign=campaign).seed
        seen = []
        for _ in items:
            item = shown(client)
            seen.append(item)
            client.post(tutorial, {"item": item.pk, "answer": item.expected})
        assert seen[0] == first and seen == [by_id[pk] for pk in gold_order(list(by_id), seed)]
        return [item.pk for item in seen]

    anna = walk(annotator)  # her seed is drawn when she opens the tutorial
    # Otto's seed is set to one that orders the items otherwise (a drawn one might, once in 720, not).
    seed = next(s for s in range(100) if gold_order(list(by_id), s) != anna)
    TutorialAttempt.objects.create(campaign=campaign, annotator=other_annotator, seed=seed)
    assert walk(other_annotator) != anna


def test_an_entry_link_carries_a_screen_out_code_and_url(campaign, pm_client):
    add = reverse("admin:annotation_entrylink_add")
    assert 'name="screenout_code"' in pm_client.get(add).content.decode()
    bad = pm_client.post(add, {"campaign": campaign.pk, "screenout_code": "no way!"})
    assert "A screen-out code is 1 to 64 letters" in bad.content.decode() and not EntryLink.objects.exists()
    pm_client.post(
        add,
        {
            "campaign": campaign.pk,
            "screenout_code": "SCRN01",
            "screenout_url": "https://app.prolific.com/submissions/complete?cc=SCRN01",
        },
    )
    link = EntryLink.objects.get()
    assert (link.screenout_code, link.screenout_url) == (
        "SCRN01",
        "https://app.prolific.com/submissions/complete?cc=SCRN01",
    )
    change = reverse("admin:annotation_entrylink_change", args=[link.pk])
    refused = pm_client.post(change, {"label": "w", "screenout_code": "bad code"})
    assert "A screen-out code is 1 to 64 letters" in refused.content.decode()
