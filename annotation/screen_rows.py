"""Reads of the annotator screens: the rows each screen shows for one batch.

The screens read plain values, not model instances: building an assignment, its item, image, caption
and rating (or draft and typing record) per image was most of a screen's own CPU, and the page shows a
handful of their columns. None of them carries who wrote a caption or which system made it.
"""

from __future__ import annotations

from annotation.models import Batch


def _reported_images(batch: Batch, image_ids: list[int]) -> set[int]:
    """Images among ``image_ids`` (the batch's) its annotator reported (the page marks them; screen 2
    lets them stay empty)."""
    from annotation.quality.models import ImageReport

    return set(
        ImageReport.objects.filter(
            annotator_id=batch.annotator_id, campaign_id=batch.campaign_id, image_id__in=image_ids
        ).values_list("image_id", flat=True)
    )


# The image row is not read at all (its id is on the item).
_TYPING_SHOWN = ("keystrokes", "paste_count", "pasted_chars", "first_key_ms", "last_key_ms")


def screen1_rows(batch: Batch) -> list[dict]:
    """Screen 1: each image with the prompt system's English caption and the rating so far."""
    found = list(
        batch.assignments.order_by("position").values_list(
            "pk", "position", "item__image_id", "item__prompt_caption__text", "rating__value"
        )
    )
    reported = _reported_images(batch, [image_id for _pk, _pos, image_id, _text, _value in found])
    return [
        {
            "assignment_id": pk,
            "position": position + 1,
            "image_id": image_id,
            "caption": caption or "",
            "value": value or "",
            "reported": image_id in reported,
        }
        for pk, position, image_id, caption, value in found
    ]


def screen2_rows(batch: Batch) -> list[dict]:
    """Screen 2: each image with the draft so far and its typing figures so far (the page counts on
    from them; None without a record). Never carries the English caption. Rated control items are
    on screen 1 only."""
    found = list(
        batch.assignments.filter(item__is_control=False)
        .order_by("position")
        .values_list(
            "pk",
            "item__image_id",
            "draft__text",
            "draft__revision",
            "typing__id",
            *(f"typing__{name}" for name in _TYPING_SHOWN),
        )
    )
    reported = _reported_images(batch, [row[1] for row in found])
    rows = []
    for index, (pk, image_id, text, revision, typing_id, *typing) in enumerate(found):
        rows.append(
            {
                "assignment_id": pk,
                # Numbered on this screen (a control of screen 1 leaves no gap).
                "position": index + 1,
                "image_id": image_id,
                "draft": text or "",
                "revision": revision or 0,
                "typing": dict(zip(_TYPING_SHOWN, typing, strict=True)) if typing_id is not None else None,
                "reported": image_id in reported,
            }
        )
    return rows


def sxs_rows(batch: Batch) -> list[dict]:
    """Side-by-side screen: each image with its two captions in the order drawn for this
    annotator, and the choice so far. Carries neither system names nor which side is m2:
    only the texts, already placed left and right."""
    rows = []
    for a in batch.assignments.select_related(
        "item__caption_m1", "item__caption_m2", "sxs_judgment"
    ).order_by("position"):
        m1 = a.item.caption_m1.text if a.item.caption_m1_id else ""
        m2 = a.item.caption_m2.text if a.item.caption_m2_id else ""
        left, right = (m2, m1) if a.m2_side == "left" else (m1, m2)
        judgment = getattr(a, "sxs_judgment", None)
        rows.append(
            {
                "assignment_id": a.pk,
                "position": a.position + 1,
                "image_id": a.item.image_id,
                "left": left,
                "right": right,
                "value": judgment.choice if judgment else "",
            }
        )
    return rows


def verification_rows(batch: Batch) -> list[dict]:
    """Verification screen: each image with the human caption to rate and the rating so far.
    Carries no author (annotator) of the caption."""
    rows = []
    for a in batch.assignments.select_related(
        "item__written_caption", "item__prompt_caption", "rating"
    ).order_by("position"):
        rating = getattr(a, "rating", None)
        item = a.item
        # A reference control shows a reference caption (a system caption) where others show a human one.
        shown = item.written_caption if item.written_caption_id else item.prompt_caption
        rows.append(
            {
                "assignment_id": a.pk,
                "position": a.position + 1,
                "image_id": a.item.image_id,
                "caption": shown.text if shown is not None else "",
                "value": rating.value if rating else "",
            }
        )
    return rows
