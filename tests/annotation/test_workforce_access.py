"""Access rules for recruitment and onboarding (RELIABILITY 13-16, 23, 24): a participant of one campaign
reaches nothing of another campaign or of other participants, crowd ids are no path to anyone's data
and are shown to project managers only, fields a client must not set are ignored, CSRF is enforced."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from django.urls import reverse

from annotation.assignment.engine import batch_request
from annotation.models import (
    Batch,
    CampaignOnboarding,
    Enrolment,
    EntryLink,
    TutorialAnswer,
    TutorialItem,
)
from tests import factories as f
from tests.annotation.workforce_helpers import (
    PID,
    SESSION,
    crowd_join,
    declare,
    join_url,
    link_for,
    prolific,
    tutorial_for,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_studies(campaign, german):
    """Campaign A (``campaign``) and B, both German, open, each with a tutorial, a link and a participant
    who passed the tutorial and holds a batch."""
    other = f.open_caption_campaign(images=6, batch_size=3, language=german, name="Studie B")
    clients, annotators, batches = {}, {}, {}
    for key, c, pid in (("a", campaign, PID), ("b", other, "b" * 24)):
        items = tutorial_for(c, expected=("good",), threshold=1.0)
        client, _ = crowd_join(link_for(c), prolific(pid=pid, session=f"s-{key}"))
        declare(client, c, german)
        client.post(reverse("annotation:tutorial", args=[c.pk]), {"item": items[0].pk, "answer": "good"})
        annotator = Enrolment.objects.get(campaign=c).annotator
        batches[key], _ = batch_request(annotator=annotator, campaign_id=c.pk)
        clients[key], annotators[key] = client, annotator
    CampaignOnboarding.objects.filter(campaign=other).update(is_pilot=True)
    return {"a": campaign, "b": other, "clients": clients, "annotators": annotators, "batches": batches}


def campaign_urls(campaign_id: int, item_id: int) -> list[tuple[str, str]]:
    return [
        ("get", reverse("annotation:participant_languages", args=[campaign_id])),
        ("post", reverse("annotation:participant_languages", args=[campaign_id])),
        ("get", reverse("annotation:tutorial", args=[campaign_id])),
        ("post", reverse("annotation:tutorial", args=[campaign_id])),
        ("get", reverse("annotation:tutorial_feedback", args=[campaign_id])),
        ("get", reverse("annotation:tutorial_image", args=[campaign_id, item_id])),
        ("get", reverse("annotation:pilot_feedback", args=[campaign_id])),
        ("post", reverse("annotation:campaign_work", args=[campaign_id])),
        ("get", reverse("annotation:screened_out", args=[campaign_id])),
    ]


def test_a_participant_of_one_campaign_reaches_nothing_of_another(two_studies):
    a, b = two_studies["a"], two_studies["b"]
    client = two_studies["clients"]["a"]
    dashboard = client.get(reverse("annotation:dashboard")).content.decode()
    assert a.name in dashboard and b.name not in dashboard
    b_item = b.tutorial_items.get()
    for method, url in campaign_urls(b.pk, b_item.pk):
        response = getattr(client, method)(url, {"item": b_item.pk, "answer": "good", "native": []})
        assert response.status_code == 404, (method, url, response.status_code)
    # A's own tutorial image, asked for through B's id, and B's image through A's id.
    a_item = a.tutorial_items.get()
    assert client.get(reverse("annotation:tutorial_image", args=[b.pk, a_item.pk])).status_code == 404
    assert client.get(reverse("annotation:tutorial_image", args=[a.pk, b_item.pk])).status_code == 404
    assert client.get(reverse("annotation:tutorial_image", args=[a.pk, a_item.pk])).status_code == 200
    # Nothing of B's participant either: their batch, its screens and completion page.
    theirs = two_studies["batches"]["b"]
    for name in ("annotation:batch", "annotation:screen1", "annotation:screen2", "annotation:completion"):
        assert client.get(reverse(name, args=[theirs.pk])).status_code == 404, name
    assert client.get(reverse("annotation:image", args=[b_item.image_id])).status_code == 404
    assert not TutorialAnswer.objects.filter(item=b_item, annotator=two_studies["annotators"]["a"]).exists()
    assert Batch.objects.filter(annotator=two_studies["annotators"]["a"]).count() == 1


def test_sequential_ids_answer_404_except_ones_own(two_studies):
    a = two_studies["a"]
    client = two_studies["clients"]["a"]
    own = {a.pk}
    top = max(two_studies["b"].pk, a.pk) + 3
    for campaign_id in range(1, top):
        for method, url in campaign_urls(campaign_id, 1)[2:3] + campaign_urls(campaign_id, 1)[4:5]:
            status = getattr(client, method)(url).status_code
            if campaign_id in own:
                assert status in (200, 302)
            else:
                assert status == 404, (url, status)
    own_batch = two_studies["batches"]["a"].pk
    for batch_id in range(1, own_batch + 5):
        status = client.get(reverse("annotation:completion", args=[batch_id])).status_code
        assert status == (302 if batch_id == own_batch else 404)


def test_crowd_ids_are_shown_to_project_managers_only(two_studies, pm_client, researcher_client):
    changelist = reverse("admin:annotation_enrolment_changelist")
    assert PID in pm_client.get(changelist).content.decode()
    assert researcher_client.get(changelist).status_code == 403
    assert researcher_client.get(reverse("admin:annotation_entrylink_changelist")).status_code == 403
    # Nowhere in what researchers read: the annotator list and the campaign page.
    for url in (
        reverse("admin:annotation_annotator_changelist"),
        reverse("admin:annotation_campaign_change", args=[two_studies["a"].pk]),
    ):
        page = researcher_client.get(url)
        assert (
            page.status_code == 200
            and PID not in page.content.decode()
            and SESSION not in page.content.decode()
        )
    # Nor in the other participant's pages.
    for url in (reverse("annotation:dashboard"), reverse("annotation:tutorial", args=[two_studies["b"].pk])):
        assert PID not in two_studies["clients"]["b"].get(url).content.decode()


def test_annotators_reach_none_of_the_managers_pages(two_studies):
    client = two_studies["clients"]["a"]
    onboarding = CampaignOnboarding.objects.get(campaign=two_studies["a"])
    for url in (
        reverse("admin:annotation_entrylink_changelist"),
        reverse("admin:annotation_entrylink_add"),
        reverse("admin:annotation_enrolment_changelist"),
        reverse("admin:annotation_campaignonboarding_change", args=[onboarding.pk]),
        reverse("admin:annotation_campaignonboarding_review", args=[onboarding.pk]),
        reverse("admin:annotation_tutorialitem_changelist"),
        reverse("admin:annotation_tutorialresult_changelist"),
    ):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"], url


def test_researchers_read_onboarding_but_change_nothing(two_studies, researcher_client):
    onboarding = CampaignOnboarding.objects.get(campaign=two_studies["a"])
    url = reverse("admin:annotation_campaignonboarding_change", args=[onboarding.pk])
    assert researcher_client.get(url).status_code == 200
    researcher_client.post(
        url, {"campaign": onboarding.campaign_id, "pass_threshold": "0.1", "tutorial_enabled": ""}
    )
    onboarding.refresh_from_db()
    assert onboarding.pass_threshold == 1.0 and onboarding.tutorial_enabled
    assert (
        researcher_client.post(
            reverse("admin:annotation_entrylink_add"), {"campaign": onboarding.campaign_id}
        ).status_code
        == 403
    )


def test_fields_a_client_must_not_set_are_ignored(campaign, german):
    link = link_for(campaign, max_signups=3)
    params = {
        **prolific(),
        "is_staff": "on",
        "is_superuser": "on",
        "campaign": campaign.pk + 1,
        "signups": 0,
        "max_signups": 1000,
        "account_created": "",
        "username": "chosen-name",
    }
    client, response = crowd_join(link, params)
    assert response.status_code == 302
    enrolment = Enrolment.objects.get()
    user = enrolment.annotator.user
    assert not user.is_staff and not user.is_superuser and user.username != "chosen-name"
    assert enrolment.campaign == campaign and enrolment.account_created
    link.refresh_from_db()
    assert (link.signups, link.max_signups) == (1, 3)
    other = f.AnnotatorFactory(user__username="someone-else", languages=[german])
    client.post(
        reverse("annotation:participant_languages", args=[campaign.pk]),
        {"native": [german.pk], "annotator": other.pk, "reads_english": "on"},
    )
    assert not other.skills.exclude(language=german).exists() and enrolment.annotator.skills.count() == 1


def test_a_get_of_the_link_writes_nothing(campaign):
    link = link_for(campaign)
    for _ in range(3):
        Client().get(join_url(link), prolific())
    assert not Enrolment.objects.exists() and EntryLink.objects.get().signups == 0


def test_csrf_is_enforced_on_the_participants_writes(campaign, german):
    link = link_for(campaign)
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(join_url(link), prolific()).status_code == 403
    assert not Enrolment.objects.exists()
    client, _ = crowd_join(link)
    declare(client, campaign, german)
    items = tutorial_for(campaign)
    strict.cookies = client.cookies
    response = strict.post(
        reverse("annotation:tutorial", args=[campaign.pk]), {"item": items[0].pk, "answer": "good"}
    )
    assert response.status_code == 403 and not TutorialAnswer.objects.exists()


@override_settings(LOGIN_RATE_LIMIT="3/m")
def test_guesses_of_a_crowd_session_are_limited_like_logins(campaign):
    cache.clear()
    link = link_for(campaign)
    crowd_join(link)
    for i in range(2):
        _, response = crowd_join(link, prolific(session=f"guess-{i}"))
        assert response.status_code == 403
    # From another address too: the worker id has had its three tries.
    client = Client(REMOTE_ADDR="10.9.8.7")
    response = client.post(join_url(link), prolific(session="guess-last"))
    assert response.status_code == 429 and "Too many attempts" in response.content.decode()
    assert Enrolment.objects.count() == 1
    cache.clear()


def test_markup_in_gold_items_and_link_labels_renders_escaped(campaign, annotator_client, annotator):
    items = tutorial_for(campaign, expected=("good",), explanations={1: "<script>alert(1)</script>"})
    TutorialItem.objects.filter(pk=items[0].pk).update(caption="<img src=x onerror=alert(2)>")
    page = annotator_client.get(reverse("annotation:tutorial", args=[campaign.pk])).content.decode()
    assert "&lt;img src=x onerror=alert(2)&gt;" in page and "<img src=x" not in page
    annotator_client.post(
        reverse("annotation:tutorial", args=[campaign.pk]), {"item": items[0].pk, "answer": "bad"}
    )
    feedback = annotator_client.get(
        reverse("annotation:tutorial_feedback", args=[campaign.pk])
    ).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in feedback and "<script>alert" not in feedback
    assert (
        "Content-Security-Policy"
        in annotator_client.get(reverse("annotation:tutorial", args=[campaign.pk])).headers
    )
