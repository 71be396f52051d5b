"""The simulated raters of the demo's side-by-side set: a seeded model, plain functions (no Django).

The model. Each caption ``c`` has a latent quality

    q(c) = Q[grade(c)] + u(c),     u(c) ~ N(0, CAPTION_SD²),

with ``Q = {A: 2, B: 1, C: 0, D: −0.5, E: −2}`` (the grades of :mod:`evaluation.demo.captions`:
accurate and specific, accurate but brief, vague, one wrong detail, another picture) and u(c) a
fixed draw per caption (two captions of one grade are not exactly as good). A caption of another
photograph (the m2 side of a wrong-image control) has q = ``WRONG_IMAGE_QUALITY`` = −3. Rater ``r``
has a fixed leaning b(r) ~ N(0, RATER_SD²) towards m2 (or away from it) and judges a pair with

    score = clip(round(q(m2's caption) − q(m1's caption) + b(r) + e),  −3, +3),   e ~ N(0, NOISE_SD²),

a fresh e per judgment: from m2's side, as the platform stores it. So one grade apart is mostly
SLIGHTLY-BETTER, an accurate caption against a wrong one MUCH-BETTER, and an identical control
SIMILAR give or take a slip. Every draw comes from ``random.Random`` seeded with the model's seed and
a text naming what is drawn (the caption, the rater, the judgment), so the same seed gives the same
scores whatever order the judgments are made in.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["GRADE_QUALITY", "WRONG_IMAGE_QUALITY", "RaterModel"]

GRADE_QUALITY: dict[str, float] = {"A": 2.0, "B": 1.0, "C": 0.0, "D": -0.5, "E": -2.0}
WRONG_IMAGE_QUALITY = -3.0
CAPTION_SD = 0.3
RATER_SD = 0.3
NOISE_SD = 0.7
SEED = 2026


@dataclass(frozen=True)
class RaterModel:
    """The model of the module docstring, with its constants as fields (a test can sharpen it)."""

    seed: int = SEED
    grade_quality: dict[str, float] = field(default_factory=lambda: dict(GRADE_QUALITY))
    wrong_image_quality: float = WRONG_IMAGE_QUALITY
    caption_sd: float = CAPTION_SD
    rater_sd: float = RATER_SD
    noise_sd: float = NOISE_SD

    def _draw(self, what: str, sd: float) -> float:
        # A str seed is hashed with SHA-512 by random.seed (version 2): stable across processes,
        # unlike hash(), which Python salts per process.
        return random.Random(f"{self.seed}|{what}").gauss(0.0, sd) if sd else 0.0

    def quality(self, grade: str, caption: str) -> float:
        """Latent quality of the caption named ``caption`` (any stable name) of grade ``grade``.
        Raises KeyError for an unknown grade."""
        return self.grade_quality[grade] + self._draw(f"caption|{caption}", self.caption_sd)

    def leaning(self, rater: str) -> float:
        """Rater ``rater``'s fixed leaning towards m2, b(r)."""
        return self._draw(f"rater|{rater}", self.rater_sd)

    def score(self, *, rater: str, judgment: str, q_m1: float, q_m2: float) -> int:
        """The score from m2's side (−3 … +3) that ``rater`` gives the pair of qualities ``q_m1``,
        ``q_m2``; ``judgment`` names this judgment (its noise draw)."""
        raw = q_m2 - q_m1 + self.leaning(rater) + self._draw(f"judgment|{rater}|{judgment}", self.noise_sd)
        return max(-3, min(3, round(raw)))
