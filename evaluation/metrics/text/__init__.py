"""Text metrics for caption evaluation: preprocessing, BLEU-1..4, ROUGE-L, CIDEr and CIDEr-D.

Plain functions over plain data (no Django), so the importers, the Celery tasks and the command line
all share them and the tests run without a database.

- :mod:`.schemes` turns raw captions into tokens (named, versioned tokenisation schemes) and gives
  the signature of text-metric numbers; :mod:`.preprocess` normalises text and interns tokens
  into the integer arrays every metric works on (:class:`.preprocess.TokenCorpus`).
- :mod:`.bleu`, :mod:`.rouge`, :mod:`.cider` compute the metrics exactly as the COCO evaluation
  server's reference code (pycocoevalcap 1.2; CIDEr from github.com/vrama91/cider), vectorised.
- :mod:`.scoring` is the entry point: ``score_texts`` (raw captions) and ``score_tokens``
  (pre-tokenised captions) return a :class:`.scoring.ScoreReport`.
- :mod:`.formats` reads COCO results/annotations and XM3600 caption files.

This module holds only the result type shared by the metric modules; import the functions from their
modules (``from evaluation.metrics.text.scoring import score_texts``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

# The version of the platform's text-metric implementations, in every text signature (``impl:text-N``).
# Bump it when a change to BLEU, ROUGE-L, CIDEr(-D) or their inputs changes any number.
TEXT_METRICS_VERSION = "1"


@dataclass(frozen=True)
class MetricResult:
    """One metric over one set of candidates.

    ``score`` is the corpus score as the reference code reports it (the pooled BLEU, or the mean of
    the per-caption scores for ROUGE-L and CIDEr(-D)). ``per_caption`` maps each candidate key to its
    score, in the order the candidates were given.
    """

    name: str
    score: float
    per_caption: dict[Hashable, float]
