"""Side-by-side and verification campaigns: their items are fixed once, when they are created (the possibly
sampled image set, stored with the seed that drew it)."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

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
from annotation.services.campaigns.checks import (
    campaign_settings_check,
    language_of,
    same_text,
    shuffle_key,
    system_of,
)
from core.errors import NotFound, ValidationFailed
from core.scales import SXS_CONTROL_MIN_JUDGMENTS


def _sample(
    rng: random.Random, keyed: list[tuple[str, int]], sample_size: int | None, what: str
) -> list[int]:
    """Ids of a seeded random sample of ``keyed`` = [(image key, id)] (all when no size), sorted by key.

    The population is sorted by image key first, so the same seed on the same images gives
    the same sample whatever order the database returns rows in.
    """
    keyed = sorted(keyed)
    if sample_size is None:
        return [pk for _, pk in keyed]
    if sample_size > len(keyed):
        raise ValidationFailed(f"Only {len(keyed)} images {what}: the sample cannot hold {sample_size}.")
    chosen = set(rng.sample([pk for _, pk in keyed], sample_size))
    return [pk for _, pk in keyed if pk in chosen]


@dataclass(frozen=True)
class _PairCaption:
    caption_id: int
    text: str


def sxs_campaign_create(
    *,
    name: str,
    language_code: str,
    base_system: CaptioningSystem | str | int,
    test_system: CaptioningSystem | str | int,
    sample_size: int | None = None,
    seed: int | None = None,
    batch_size: int = 10,
    replication: int = 3,
    controls_identical: int = 0,
    controls_wrong_image: int = 0,
    control_pass_threshold: float = 0.75,
    control_min_judgments: int = SXS_CONTROL_MIN_JUDGMENTS,
    lease_minutes: int = 60,
) -> Campaign:
    """Create a side-by-side campaign (seed 000, sec. 3.3), as a draft, with its items.

    The images are those with a stored file and a caption in the language from BOTH systems;
    with ``sample_size``, a random sample of them drawn with ``random.Random(seed).sample``
    over the images sorted by key (XM600 is such a sample of 600). The seed is drawn when not
    given; it is stored with the sample size, and it also draws the control items, so the
    same seed on the same data gives the same items. A pair whose two captions have the same
    text (ignoring case and spacing) is flagged ``is_identical_pair``: judged like any pair,
    reported separately.

    Controls (mixed in; on the page they look like any pair), each on an image of the sample:

    * ``controls_identical``: both sides show m1's caption. Expected SIMILAR; a judgment
      passes when |score| <= 1.
    * ``controls_wrong_image``: m1's real caption against m2's caption of ANOTHER image.
      Expected a clear preference for the real caption; a judgment passes when it favours
      it by at least 2 points (score from m2's side <= -2).

    Annotators who pass less than ``control_pass_threshold`` of their control items are
    flagged in the results, once they have ``control_min_judgments`` control judgments. Runs in one transaction. Raises ValidationFailed (nothing stored) for an unknown language
    or system, the same system twice, a name that contains a system's name (annotators see
    the name), no eligible image, a sample larger than the eligible
    images, more controls of a kind than sampled images, or bad numbers.
    """
    settings = campaign_settings_check(
        name=name, batch_size=batch_size, replication=replication, sample_size=sample_size, seed=seed
    )
    for count in (controls_identical, controls_wrong_image):
        if count < 0:
            raise ValidationFailed("The number of control items cannot be negative.")
    if not 0.0 <= control_pass_threshold <= 1.0:
        raise ValidationFailed("The control pass threshold is a share, from 0 to 1.")
    if isinstance(control_min_judgments, bool) or not isinstance(control_min_judgments, int):
        raise ValidationFailed("The minimum number of control judgments is a whole number.")
    if control_min_judgments < 1:
        raise ValidationFailed("The minimum number of control judgments is at least 1.")
    language = language_of(language_code)
    m1 = system_of(base_system, "base system m1")
    m2 = system_of(test_system, "test system m2")
    if m1.pk == m2.pk:
        raise ValidationFailed("The base system m1 and the test system m2 must be different systems.")
    for system in (m1, m2):
        # Annotators see the campaign name: it must not tell them which systems are compared.
        if system.name.casefold() in name.casefold():
            raise ValidationFailed(
                f"Annotators see the campaign name: leave the system name “{system.name}” out of it."
            )

    with transaction.atomic():
        captions: dict[int, dict[int, _PairCaption]] = {m1.pk: {}, m2.pk: {}}
        keys: dict[int, str] = {}
        rows = (
            SystemCaption.objects.filter(system_id__in=[m1.pk, m2.pk], language=language)
            .exclude(image__file="")
            .values_list("system_id", "image_id", "pk", "text", "image__key")
        )
        for system_id, image_id, caption_id, text, key in rows:
            captions[system_id][image_id] = _PairCaption(caption_id, text)
            keys[image_id] = key
        eligible = sorted(set(captions[m1.pk]) & set(captions[m2.pk]), key=keys.__getitem__)
        if not eligible:
            raise ValidationFailed(
                # "a caption in X", not "a X caption": no article to get wrong before Arabic, Urdu or Igbo.
                f"No image has a stored file and a caption in {language.name} from both {m1.name} and {m2.name}."
            )
        rng = random.Random(settings.sample_seed)
        chosen = _sample(
            rng,
            [(keys[i], i) for i in eligible],
            sample_size,
            f"have {language.name} captions from both systems",
        )
        for count, what in ((controls_identical, "identical"), (controls_wrong_image, "wrong-image")):
            if count > len(chosen):
                raise ValidationFailed(
                    f"At most {len(chosen)} {what} control items (one per image of the sample)."
                )

        campaign = settings.campaign_create(
            kind=CampaignKind.SIDE_BY_SIDE,
            language=language,
            base_system=m1,
            test_system=m2,
            lease_minutes=lease_minutes,
            control_pass_threshold=control_pass_threshold,
            control_min_judgments=control_min_judgments,
        )

        def pair(image_id: int, left: _PairCaption, right: _PairCaption, **flags) -> Item:
            return Item(
                campaign=campaign,
                image_id=image_id,
                caption_m1_id=left.caption_id,
                caption_m2_id=right.caption_id,
                shuffle_key=shuffle_key(),
                **flags,
            )

        items = []
        for image_id in chosen:
            a, b = captions[m1.pk][image_id], captions[m2.pk][image_id]
            items.append(pair(image_id, a, b, is_identical_pair=same_text(a.text, b.text)))
        for image_id in rng.sample(chosen, controls_identical):
            a = captions[m1.pk][image_id]
            items.append(pair(image_id, a, a, is_control=True, control_kind=ControlKind.IDENTICAL))
        for image_id in rng.sample(chosen, controls_wrong_image):
            real = captions[m1.pk][image_id]
            others = [
                other
                for other in eligible
                if other != image_id and not same_text(captions[m2.pk][other].text, real.text)
            ]
            if not others:
                raise ValidationFailed("A wrong-image control needs another image with a different caption.")
            wrong = captions[m2.pk][rng.choice(others)]
            items.append(pair(image_id, real, wrong, is_control=True, control_kind=ControlKind.WRONG_IMAGE))
        Item.objects.bulk_create(items)
        return campaign


def rating_campaign_create(
    *,
    name: str,
    source_campaign_id: int,
    seed: int | None = None,
    sample_size: int | None = None,
    replication: int = 3,
    batch_size: int = 15,
    lease_minutes: int = 60,
) -> Campaign:
    """Create a verification campaign (seed 000, sec. 2.5), as a draft, with its items.

    From the caption campaign ``source_campaign_id``: the images with at least one written
    caption (all, or a random sample of ``sample_size`` drawn over the images sorted by key;
    the paper used 600), and for each image ONE of its captions chosen at random. Both draws
    use ``random.Random(seed)`` (the sample first, then one choice per image in key order,
    over its captions in the order they were stored); the seed is drawn when not given and
    stored, so the selection can be reproduced. The language is the source campaign's; its
    annotators rate each caption on the 5-level scale, K = ``replication`` times.

    Runs in one transaction. Raises NotFound for an unknown campaign; ValidationFailed
    (nothing stored) when the source is not a caption campaign, has no written caption, or
    the sample is larger than its captioned images.
    """
    settings = campaign_settings_check(
        name=name, batch_size=batch_size, replication=replication, sample_size=sample_size, seed=seed
    )
    with transaction.atomic():
        try:
            source = Campaign.objects.select_related("language").get(pk=source_campaign_id)
        except (Campaign.DoesNotExist, ValueError, TypeError):
            raise NotFound("No such caption campaign.") from None
        if source.kind != CampaignKind.CAPTION:
            raise ValidationFailed(
                f"“{source.name}” is not a caption campaign: there are no captions to verify."
            )
        by_image: dict[int, list[int]] = defaultdict(list)
        keys: dict[int, str] = {}
        for caption_id, image_id, key in (
            WrittenCaption.objects.counted()
            .filter(campaign=source)
            .exclude(image__file="")
            .order_by("pk")
            .values_list("pk", "image_id", "image__key")
        ):
            by_image[image_id].append(caption_id)
            keys[image_id] = key
        if not by_image:
            raise ValidationFailed(f"“{source.name}” has no written caption yet.")
        rng = random.Random(settings.sample_seed)
        chosen = _sample(
            rng, [(keys[i], i) for i in by_image], sample_size, f"have captions in “{source.name}”"
        )
        campaign = settings.campaign_create(
            kind=CampaignKind.RATING,
            language=source.language,
            source_campaign=source,
            lease_minutes=lease_minutes,
        )
        Item.objects.bulk_create(
            Item(
                campaign=campaign,
                image_id=image_id,
                written_caption_id=rng.choice(by_image[image_id]),
                shuffle_key=shuffle_key(),
            )
            for image_id in chosen
        )
        return campaign
