"""Rated control items of caption (screen 1) and verification campaigns (docs/crowd-quality.md).

Side-by-side campaigns get their controls when they are created (``sxs_campaign_create``). Caption
and verification campaigns get theirs from :func:`campaign_controls_add`, at any time: each control
is an item of the campaign, flagged ``is_control``, that looks on the screen like any other image:

* ``mismatched``: an image of the campaign shown with the caption of ANOTHER of its images (screen
  1: the prompt system's English caption of another image; verification: a human caption written
  for another image). It should be rated BAD or MEDIUM.
* ``reference``: an image of the campaign shown with a human reference caption, taken from the
  captions of a *reference system* (human references loaded like a system's captions: in English for
  screen 1, in the campaign language for verification). It should not be rated BAD.

Rated controls are not capped by K: every annotator can get every control once, and the engine
puts ``controls_per_batch`` of them into each new batch, on top of its N images and on images the
annotator has not seen in the campaign. Screen 2 never shows them (nothing is written for a
control). Their ratings count only in the pass rates (``evaluation.human.selectors.rated_controls``).
"""

from __future__ import annotations

import random

from django.db import transaction

from annotation.models import (
    Campaign,
    CampaignKind,
    CaptioningSystem,
    ControlKind,
    Item,
    SystemCaption,
    WrittenCaption,
)
from annotation.services.campaigns import PROMPT_LANGUAGE, SEED_MAX, campaign_items_sync
from annotation.services.campaigns.checks import same_text, shuffle_key, system_of
from core.errors import NotFound, ValidationFailed

MAX_CONTROLS_PER_BATCH = 10


def campaign_controls_add(
    *,
    campaign_id: int,
    mismatched: int = 0,
    reference: int = 0,
    reference_system: CaptioningSystem | str | int | None = None,
    controls_per_batch: int = 1,
    control_pass_threshold: float | None = None,
    control_min_judgments: int | None = None,
    seed: int | None = None,
) -> list[Item]:
    """Add ``mismatched`` and ``reference`` control items to a caption or verification campaign,
    each on a different image of the campaign drawn with ``random.Random(seed)``, and set how many
    go into each batch (and, when given, the pass threshold and the minimum number of control
    ratings). Adding again adds more (on images without a control of that kind yet).

    Runs in one transaction; locks the campaign row. Raises NotFound for an unknown campaign,
    ValidationFailed (nothing stored) for a side-by-side campaign, no control asked for, bad
    numbers, a reference kind without a reference system, or more controls than images can carry.
    """
    for count in (mismatched, reference):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValidationFailed("The number of control items is a whole number, 0 or more.")
    if mismatched + reference == 0:
        raise ValidationFailed("Ask for at least one control item.")
    if not 1 <= controls_per_batch <= MAX_CONTROLS_PER_BATCH:
        raise ValidationFailed(f"Controls per batch: from 1 to {MAX_CONTROLS_PER_BATCH}.")
    if control_pass_threshold is not None and not 0.0 <= control_pass_threshold <= 1.0:
        raise ValidationFailed("The control pass threshold is a share, from 0 to 1.")
    if control_min_judgments is not None and control_min_judgments < 1:
        raise ValidationFailed("The minimum number of control ratings is at least 1.")
    if seed is not None and not 0 <= seed <= SEED_MAX:
        raise ValidationFailed(f"The seed must be a whole number from 0 to {SEED_MAX}.")
    if reference and reference_system in (None, ""):
        raise ValidationFailed("Reference controls need the system that holds the human reference captions.")
    system = system_of(reference_system, "reference captions") if reference else None
    rng = random.Random(seed if seed is not None else random.SystemRandom().randrange(2**31))
    with transaction.atomic():
        try:
            campaign = Campaign.objects.select_for_update().select_related("language").get(pk=campaign_id)
        except (Campaign.DoesNotExist, ValueError, TypeError):
            raise NotFound("No such campaign.") from None
        if campaign.kind == CampaignKind.SIDE_BY_SIDE:
            raise ValidationFailed("Side-by-side campaigns get their control items when they are created.")
        if campaign.kind == CampaignKind.CAPTION:
            campaign_items_sync(campaign=campaign)
        real = list(
            Item.objects.filter(campaign=campaign, is_control=False)
            .exclude(image__file="")
            .order_by("image__key")
            .values_list("image_id", "prompt_caption_id", "written_caption_id")
        )
        if not real:
            raise ValidationFailed(f"“{campaign.name}” has no image yet to put a control on.")
        have = {
            kind: set(
                Item.objects.filter(campaign=campaign, control_kind=kind).values_list("image_id", flat=True)
            )
            for kind in (ControlKind.MISMATCHED, ControlKind.REFERENCE)
        }
        items = []
        if mismatched:
            items += _mismatched(campaign, real, mismatched, have[ControlKind.MISMATCHED], rng)
        if reference:
            items += _reference(campaign, real, reference, system, have[ControlKind.REFERENCE], rng)
        Item.objects.bulk_create(items)
        campaign.controls_per_batch = controls_per_batch
        fields = ["controls_per_batch", "updated_at"]
        if control_pass_threshold is not None:
            campaign.control_pass_threshold = control_pass_threshold
            fields.append("control_pass_threshold")
        if control_min_judgments is not None:
            campaign.control_min_judgments = control_min_judgments
            fields.append("control_min_judgments")
        campaign.save(update_fields=fields)
        return items


def _mismatched(campaign, real, n, have, rng) -> list[Item]:
    """Each chosen image gets the caption of another image whose text differs."""
    if campaign.kind == CampaignKind.CAPTION:
        texts = dict(
            SystemCaption.objects.filter(pk__in=[p for _, p, _ in real if p]).values_list("pk", "text")
        )
        captions = [(image_id, caption_id, texts.get(caption_id, "")) for image_id, caption_id, _ in real]
    else:
        texts = dict(
            WrittenCaption.objects.filter(pk__in=[w for _, _, w in real if w]).values_list("pk", "text")
        )
        captions = [(image_id, caption_id, texts.get(caption_id, "")) for image_id, _, caption_id in real]
    captions = [c for c in captions if c[1]]
    free = [c for c in captions if c[0] not in have]
    if n > len(free):
        raise ValidationFailed(f"At most {len(free)} more caption-of-another-image controls (one per image).")
    out = []
    for image_id, _, text in rng.sample(free, n):
        others = [c for c in captions if c[0] != image_id and not same_text(c[2], text)]
        if not others:
            raise ValidationFailed(
                "A caption-of-another-image control needs another image with a different caption."
            )
        _, other_caption, _ = rng.choice(others)
        caption_field = "prompt_caption_id" if campaign.kind == CampaignKind.CAPTION else "written_caption_id"
        out.append(_control(campaign, image_id, ControlKind.MISMATCHED, **{caption_field: other_caption}))
    return out


def _reference(campaign, real, n, system, have, rng) -> list[Item]:
    """Each chosen image gets the reference system's caption of it (English for screen 1, the
    campaign language for verification)."""
    code = PROMPT_LANGUAGE if campaign.kind == CampaignKind.CAPTION else campaign.language.code
    references = dict(
        SystemCaption.objects.filter(
            system=system, language__code=code, image_id__in=[image_id for image_id, _, _ in real]
        ).values_list("image_id", "pk")
    )
    free = sorted(image_id for image_id in references if image_id not in have)
    if n > len(free):
        raise ValidationFailed(
            f"{system.name} has captions in “{code}” for {len(free)} more images of this campaign: "
            f"at most {len(free)} reference controls."
        )
    return [
        _control(campaign, image_id, ControlKind.REFERENCE, prompt_caption_id=references[image_id])
        for image_id in rng.sample(free, n)
    ]


def _control(campaign: Campaign, image_id: int, kind: ControlKind, **caption) -> Item:
    """A rated control item (unsaved) of ``campaign`` on the image, showing the caption named in
    ``caption`` (``prompt_caption_id`` or ``written_caption_id``)."""
    return Item(
        campaign=campaign,
        image_id=image_id,
        is_control=True,
        control_kind=kind,
        shuffle_key=shuffle_key(),
        **caption,
    )
