"""Fixtures shared by the evaluation tests."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest


@pytest.fixture
def coco(shared_data):
    """coco-fakecap as the server tokenised it (candidates and PTB references split on spaces)."""
    folder = shared_data / "coco-fakecap"
    results = json.loads((folder / "captions_val2014_fakecap_results.json").read_text())
    candidates = {item["image_id"]: item["caption"].split(" ") for item in results}
    references: dict[int, list[list[str]]] = defaultdict(list)
    annotations = json.loads((folder / "captions_val2014_fakecap_subset_refs_tokenized.json").read_text())
    for annotation in annotations["annotations"]:
        references[annotation["image_id"]].append(annotation["caption"].split(" "))
    return candidates, dict(references)
