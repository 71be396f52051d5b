"""COCO annotations (``"coco_annotations"``): ``{"images": [{"id": 1, ...}], "annotations": [{"image_id":
1, "caption": "..."}, ...]}``, several reference captions per image in one language (pure).

Read whole (a references file an operator gives, not an upload): :func:`captions` takes the parsed
JSON. The annotations are COCO results entries (:func:`core.caption_files.coco.entry`)."""

from __future__ import annotations

from collections.abc import Hashable

import ijson

from core.caption_files import coco
from core.caption_files.entries import ShapeError, kind

NAME = "coco_annotations"
# The top-level keys of a COCO annotations file (its first key is one of them, whatever the writer).
KEYS = frozenset({"info", "images", "annotations", "licenses", "type", "categories"})


def sniff(head: bytes) -> bool:
    """An object whose first key is one of COCO's (``images``, ``annotations``, ``info``, ...)."""
    if head[:1] != b"{":
        return False
    try:
        for event, value in ijson.basic_parse(head[:4096]):
            if event == "map_key":
                return value in KEYS
    except (ijson.JSONError, ValueError):
        pass  # a head cut in the middle of a value
    return False


def captions(data: object) -> tuple[dict[Hashable, list[str]], list[Hashable]]:
    """({image id: [captions]} in the order of ``images`` or of first appearance, [ids without any]).

    Images listed without an annotation are the second; an annotation for an image not listed in
    ``images`` is a ShapeError with its ``entry``."""
    if not isinstance(data, dict) or not isinstance(data.get("annotations"), list):
        hint = " (this looks like a COCO results file)" if isinstance(data, list) else ""
        raise ShapeError(f"expected a JSON object with an 'annotations' array{hint}")
    found: dict[Hashable, list[str]] = {}
    images = data.get("images")
    if images is not None:
        if not isinstance(images, list):
            raise ShapeError(f"'images' must be an array, got {kind(images)}")
        for index, image in enumerate(images):
            image_id = image.get("id") if isinstance(image, dict) else None
            if isinstance(image_id, bool) or not (
                isinstance(image_id, int) or (isinstance(image_id, str) and image_id)
            ):
                raise ShapeError(f"images[{index}]: missing or invalid 'id'")
            found[image_id] = []
    for index, item in enumerate(data["annotations"]):
        try:
            entry = coco.entry(item, where=f"entry {index}")
        except ShapeError as exc:
            raise ShapeError(exc.message, entry=index) from None
        caption = entry.records[0].captions[0]
        if images is None:
            found.setdefault(entry.image, []).append(caption)
        elif entry.image in found:
            found[entry.image].append(caption)
        else:
            raise ShapeError(
                f"annotation for image_id {entry.image!r}, which is not in 'images'", entry=index
            )
    missing = [image_id for image_id, texts in found.items() if not texts]
    return {image_id: texts for image_id, texts in found.items() if texts}, missing
