"""The demo's data for trying CLIP fine-tuning, written in the documented external formats.

From :mod:`evaluation.demo.captions` (hand-written for the 17 demo photographs): the two references
per photograph and language as XM3600 caption files, and the four simulated systems' captions as a
ratings CSV whose rating follows each caption's grade (A → EXCELLENT, B → GOOD, C and D → MEDIUM,
E → BAD). The ratings are SIMULATED from the grades, not collected from people: with the demo's tiny
random model they show the workflow, never results.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from evaluation.demo.captions import CAPTIONS

__all__ = ["GRADE_RATINGS", "demo_finetune_files"]

GRADE_RATINGS = {"A": "EXCELLENT", "B": "GOOD", "C": "MEDIUM", "D": "MEDIUM", "E": "BAD"}


def demo_finetune_files(folder: str | os.PathLike[str]) -> tuple[dict[str, str], str]:
    """Write ``captions-<lang>.jsonl`` per language and ``ratings.csv`` into ``folder``; return
    ({language: captions file}, ratings file). Rewrites the same bytes every time (idempotent)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    captions_files = {}
    for code, photos in CAPTIONS.items():
        path = folder / f"captions-{code}.jsonl"
        lines = [
            json.dumps({"image/key": key, code: {"caption": list(photo.references)}}, ensure_ascii=False)
            for key, photo in sorted(photos.items())
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        captions_files[code] = str(path)
    ratings = folder / "ratings.csv"
    with open(ratings, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["image", "caption", "language", "rating"])
        for code, photos in CAPTIONS.items():
            for key, photo in sorted(photos.items()):
                for _, (grade, text) in sorted(photo.systems.items()):
                    writer.writerow([key, text, code, GRADE_RATINGS[grade]])
    return captions_files, str(ratings)
