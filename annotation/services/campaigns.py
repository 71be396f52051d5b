"""Campaign life cycle: draft -> open -> closed, and the items an open campaign offers."""

from __future__ import annotations

import random

from django.db import transaction

from annotation.errors import Conflict, ValidationFailed
from annotation.models import Campaign, CampaignKind, CampaignState, Item, SystemCaption

PROMPT_LANGUAGE = "en"


def campaign_items_sync(*, campaign: Campaign) -> int:
    """Add an item for every eligible image the campaign does not have yet; returns how many.

    For a caption campaign an image is eligible when its file is stored and the prompt
    system has an English caption for it. Idempotent (unique (campaign, image)).
    """
    if campaign.kind != CampaignKind.CAPTION:
        return 0
    if campaign.prompt_system_id is None:
        raise ValidationFailed("A caption campaign needs a prompt system.")
    have = set(campaign.items.values_list("image_id", flat=True))
    captions = (
        SystemCaption.objects.filter(system_id=campaign.prompt_system_id, language__code=PROMPT_LANGUAGE)
        .exclude(image__file="")
        .exclude(image_id__in=have)
        .values_list("pk", "image_id")
    )
    rng = random.SystemRandom()
    new = [
        Item(
            campaign=campaign,
            image_id=image_id,
            prompt_caption_id=caption_id,
            shuffle_key=rng.randrange(2**31),
        )
        for caption_id, image_id in captions
    ]
    Item.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)


def campaign_open(*, campaign_id: int) -> Campaign:
    """Open a draft (or reopen a closed) campaign, adding the items it can offer.

    Locks the campaign row. Idempotent. Raises ValidationFailed when there is nothing to
    annotate (no image with a stored file and a prompt caption).
    """
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        campaign_items_sync(campaign=campaign)
        if not campaign.items.exists():
            raise ValidationFailed(
                f"“{campaign.name}” has no image to annotate: load image files and the prompt system's "
                "English captions first."
            )
        if campaign.state != CampaignState.OPEN:
            campaign.state = CampaignState.OPEN
            campaign.save(update_fields=["state", "updated_at"])
        return campaign


def campaign_close(*, campaign_id: int) -> Campaign:
    """Close a campaign: no new batches; batches already handed out can still be submitted."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        if campaign.state == CampaignState.DRAFT:
            raise Conflict(f"“{campaign.name}” was never opened.")
        if campaign.state != CampaignState.CLOSED:
            campaign.state = CampaignState.CLOSED
            campaign.save(update_fields=["state", "updated_at"])
        return campaign
