"""Item 10 of issue 9: a caption campaign is added with "Open it now" and can take its images from a
selection (keys, e.g. an image set's, or another campaign's images) instead of every image."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Campaign, CampaignState, Item
from annotation.services.campaigns import campaign_open, caption_campaign_create
from core.errors import ValidationFailed
from tests import factories as f

ADD_URL = "/admin/annotation/campaign/add/"


@pytest.fixture
def prompt(db, german):
    """Five images with files and English captions of ``prompt``, and one image without a caption."""
    english = f.LanguageFactory(code="en", name="English")
    system = f.SystemFactory(name="prompt-sys")
    for n in range(5):
        f.SystemCaptionFactory(system=system, language=english, image=f.ImageFactory(key=f"k{n}"))
    f.ImageFactory(key="bare")
    return system


def form(german, system, **extra):
    return {
        "name": "Deutsch 1",
        "language": german.pk,
        "prompt_system": system.pk,
        "batch_size": 15,
        "replication": 2,
        "lease_minutes": 60,
        "images": "all",
        "image_keys": "",
        "images_of": "",
        **extra,
    }


def test_the_add_page_offers_open_now_and_the_image_choice(pm_client, german, prompt):
    page = pm_client.get(ADD_URL).content.decode()
    assert 'name="open_now"' in page and "Open it now" in page and "saved as a draft" in page
    assert 'name="images"' in page and 'name="image_keys"' in page and 'name="images_of"' in page
    assert " style=" not in page


def test_open_now_opens_it_with_every_eligible_image(pm_client, german, prompt):
    response = pm_client.post(ADD_URL, form(german, prompt, open_now="on"), follow=True)
    campaign = Campaign.objects.get(name="Deutsch 1")
    assert campaign.state == CampaignState.OPEN and not campaign.fixed_images
    assert sorted(campaign.items.values_list("image__key", flat=True)) == [f"k{n}" for n in range(5)]
    message = next(str(m) for m in response.context["messages"])
    assert message == "Created “Deutsch 1” (open): 5 items."


def test_without_open_now_it_is_a_draft_and_says_how_to_open_it(pm_client, german, prompt):
    response = pm_client.post(ADD_URL, form(german, prompt), follow=True)
    campaign = Campaign.objects.get(name="Deutsch 1")
    assert campaign.state == CampaignState.DRAFT and not campaign.items.exists()
    message = next(str(m) for m in response.context["messages"])
    assert "It is a draft: annotators see it once you open it (“Open selected campaigns”)." in message


def test_a_campaign_from_listed_keys_keeps_exactly_those_images(pm_client, german, prompt):
    response = pm_client.post(
        ADD_URL, form(german, prompt, images="keys", image_keys="k3\nk1, k1", open_now="on")
    )
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="Deutsch 1")
    assert campaign.fixed_images and campaign.state == CampaignState.OPEN
    assert sorted(campaign.items.values_list("image__key", flat=True)) == ["k1", "k3"]
    # Images loaded later do not join a campaign made from a selection, even when it reopens.
    f.SystemCaptionFactory(
        system=prompt, language=prompt.captions.first().language, image=f.ImageFactory(key="k9")
    )
    campaign_open(campaign_id=campaign.pk)
    assert campaign.items.count() == 2
    page = pm_client.get(reverse("admin:annotation_campaign_change", args=[campaign.pk])).content.decode()
    assert 'name="prompt_system"' not in page  # its items hold that system's captions


def test_a_campaign_from_another_campaigns_images(pm_client, german, prompt):
    source = caption_campaign_create(
        name="Quelle", language_code="de", prompt_system=prompt, image_keys=["k0", "k4"]
    )
    pm_client.post(ADD_URL, form(german, prompt, images="campaign", images_of=source.pk))
    campaign = Campaign.objects.get(name="Deutsch 1")
    assert sorted(campaign.items.values_list("image__key", flat=True)) == ["k0", "k4"]


def test_unknown_or_unusable_keys_are_named_and_nothing_is_stored(pm_client, german, prompt):
    page = pm_client.post(
        ADD_URL, form(german, prompt, images="keys", image_keys="k1 nope zilch")
    ).content.decode()
    assert "2 unknown image keys: “nope”, “zilch”." in page
    page = pm_client.post(ADD_URL, form(german, prompt, images="keys", image_keys="k1 bare")).content.decode()
    assert "1 selected image without a stored file or an English caption from prompt-sys: “bare”." in page
    page = pm_client.post(ADD_URL, form(german, prompt, images="keys")).content.decode()
    assert "List the keys of the images." in page
    assert not Campaign.objects.exists() and not Item.objects.exists()


def test_the_service_refuses_both_selections(german, prompt):
    with pytest.raises(ValidationFailed, match="not both"):
        caption_campaign_create(
            name="x", language_code="de", prompt_system=prompt, image_keys=["k1"], images_of_campaign_id=1
        )
    assert not Campaign.objects.exists()
