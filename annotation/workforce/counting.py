"""What a crowd batch must contain to count: plain functions over plain figures (no Django).

A batch of a participant who came through an entry link counts (towards the quota, the completion
code, the items' K and every result) when, on each screen, at most a share of its real images is
left without an answer:

* screen 1 of a caption batch, and a verification batch: an image rated NOT-ENOUGH-INFO;
* screen 2 of a caption batch: an image left without a caption (only a reported image may be).

NOT-ENOUGH-INFO is a legitimate answer for some images, and a broken image may be reported and left
without a caption; a batch where most images get neither a judgment nor a caption is no work. The
share is ``settings.CROWD_MAX_UNANSWERED_SHARE`` (default 0.5: more than half of the images left
unanswered on a screen holds the batch). Control items are left out: the control checks judge them.
A side-by-side batch has a judgment for every pair (its 7-point scale has no "cannot tell"), so it
always counts; its controls catch random clicking.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BatchWork:
    """The figures of one submitted batch, real images only."""

    images: int
    not_enough_info: int = 0
    without_caption: int = 0


def batch_counts(work: BatchWork, max_unanswered_share: float) -> bool:
    """True when ``work`` leaves at most ``max_unanswered_share`` of its images unanswered on each
    screen. A batch of no real image (controls only) counts: there is nothing to leave out."""
    if work.images <= 0:
        return True
    return (
        work.not_enough_info <= max_unanswered_share * work.images
        and work.without_caption <= max_unanswered_share * work.images
    )


def most_allowed(images: int, max_unanswered_share: float) -> int:
    """The most images of a batch of ``images`` that may stay unanswered on one screen."""
    return int(max_unanswered_share * images + 1e-9)
