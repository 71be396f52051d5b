"""Caption campaigns and every campaign's life cycle: create, draft -> open -> closed. A caption campaign
gains its items when it opens (every image with a file and a prompt caption)."""

from __future__ import annotations

from django.db import transaction

from annotation.importers.report import plural
from annotation.models import (
    Campaign,
    CampaignKind,
    CampaignState,
    CaptioningSystem,
    Image,
    Item,
    SystemCaption,
)
from annotation.services.campaigns.checks import (
    PROMPT_LANGUAGE,
    campaign_settings_check,
    language_of,
    shuffle_key,
    system_of,
)
from core.errors import Conflict, ValidationFailed


def campaign_items_sync(*, campaign: Campaign) -> int:
    """Add an item for every eligible image the campaign does not have yet; returns how many.

    For a caption campaign an image is eligible when its file is stored and the prompt
    system has an English caption for it. Idempotent (unique (campaign, image)).
    """
    if campaign.kind != CampaignKind.CAPTION or campaign.fixed_images:
        return 0
    if campaign.prompt_system_id is None:
        raise ValidationFailed("A caption campaign needs a prompt system.")
    have = set(campaign.items.values_list("image_id", flat=True))
    captions = {
        image_id: caption_id
        for image_id, caption_id in _prompt_captions(campaign.prompt_system_id).items()
        if image_id not in have
    }
    return _caption_items_create(campaign, captions)


def _prompt_captions(system_id: int, image_ids: list[int] | None = None) -> dict[int, int]:
    """image id -> the prompt system's English caption id, for images with a stored file (the
    images a caption campaign can offer), optionally only among ``image_ids``."""
    captions = SystemCaption.objects.filter(system_id=system_id, language__code=PROMPT_LANGUAGE).exclude(
        image__file=""
    )
    if image_ids is not None:
        captions = captions.filter(image_id__in=image_ids)
    return dict(captions.values_list("image_id", "pk"))


def _caption_items_create(campaign: Campaign, captions: dict[int, int]) -> int:
    """One item per (image id -> prompt caption id), in that order, with a random shuffle key.
    Idempotent (unique (campaign, image)); returns how many were asked for."""
    Item.objects.bulk_create(
        [
            Item(
                campaign=campaign,
                image_id=image_id,
                prompt_caption_id=caption_id,
                shuffle_key=shuffle_key(),
            )
            for image_id, caption_id in captions.items()
        ],
        ignore_conflicts=True,
    )
    return len(captions)


def caption_campaign_create(
    *,
    name: str,
    language_code: str,
    prompt_system: CaptioningSystem | str | int,
    batch_size: int = 15,
    replication: int = 2,
    lease_minutes: int = 60,
    image_keys: list[str] | None = None,
    images_of_campaign_id: int | None = None,
    rating_guidelines: str = "",
    writing_guidelines: str = "",
) -> Campaign:
    """Create a caption campaign, as a draft.

    Without a selection, every image with a stored file and a prompt caption joins when the
    campaign opens (and on every reopening). With ``image_keys``, or the images of the campaign
    ``images_of_campaign_id`` (any kind), exactly those images become its items now and the
    campaign is marked ``fixed_images``: opening it adds no other. Every selected image must have
    a stored file and an English caption from the prompt system.

    Runs in one transaction. Raises ValidationFailed (nothing stored) for a taken or empty name,
    bad numbers, an unknown language or system, both kinds of selection at once, an empty
    selection, unknown keys, or selected images that cannot be shown (each listed, up to 10).
    """
    settings = campaign_settings_check(
        name=name, batch_size=batch_size, replication=replication, sample_size=None, seed=0
    )
    if lease_minutes < 1:
        raise ValidationFailed("The lease is at least one minute.")
    language = language_of(language_code)
    system = system_of(prompt_system, "prompt system")
    if image_keys is not None and images_of_campaign_id is not None:
        raise ValidationFailed("Choose the images by key or from a campaign, not both.")
    with transaction.atomic():
        selected: list[int] | None = None
        if image_keys is not None:
            keys = list(dict.fromkeys(k.strip() for k in image_keys if k and k.strip()))
            if not keys:
                raise ValidationFailed("No image key given.")
            found = dict(Image.objects.filter(key__in=keys).values_list("key", "pk"))
            unknown = [k for k in keys if k not in found]
            if unknown:
                raise ValidationFailed(f"{plural(len(unknown), 'unknown image key')}: {_listed(unknown)}.")
            selected = [found[k] for k in keys]
        elif images_of_campaign_id is not None:
            source = Campaign.objects.filter(pk=images_of_campaign_id).first()
            if source is None:
                raise ValidationFailed("No such campaign to take the images from.")
            selected = list(
                Item.objects.filter(campaign=source)
                .order_by("image__key")
                .values_list("image_id", flat=True)
                .distinct()
            )
            if not selected:
                raise ValidationFailed(f"“{source.name}” has no images.")
        campaign = settings.campaign_create(
            kind=CampaignKind.CAPTION,
            language=language,
            prompt_system=system,
            lease_minutes=lease_minutes,
            rating_guidelines=rating_guidelines,
            writing_guidelines=writing_guidelines,
            fixed_images=selected is not None,
            # It draws no sample: no seed is stored.
            sample_seed=None,
        )
        if selected is not None:
            captions = _prompt_captions(system.pk, selected)
            missing = [pk for pk in selected if pk not in captions]
            if missing:
                keys = list(
                    Image.objects.filter(pk__in=missing).order_by("key").values_list("key", flat=True)
                )
                raise ValidationFailed(
                    f"{plural(len(keys), 'selected image')} without a stored file or an English caption from "
                    f"{system.name}: {_listed(keys)}."
                )
            _caption_items_create(campaign, {image_id: captions[image_id] for image_id in selected})
        return campaign


def _listed(items: list[str], shown: int = 10) -> str:
    text = ", ".join(f"“{item}”" for item in items[:shown])
    return text + (f", … ({len(items)} in all)" if len(items) > shown else "")


def campaign_open(*, campaign_id: int) -> Campaign:
    """Open a draft (or reopen a closed) campaign, adding the items it can offer.

    Locks the campaign row. Idempotent. Raises ValidationFailed when there is nothing to
    annotate (no image with a stored file and a prompt caption).
    """
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        campaign_items_sync(campaign=campaign)
        if not campaign.items.exists():
            if campaign.kind == CampaignKind.CAPTION:
                why = "load image files and the prompt system's English captions first."
            else:
                why = "it was created without items."
            raise ValidationFailed(f"“{campaign.name}” has no image to annotate: {why}")
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
