"""The locked side of the assignment engine: handing out batches and expiring leases.

Guarantees, on PostgreSQL under any concurrency (proven by tests/annotation/test_concurrency.py):

- an item never has more than K live-or-done assignments when it is handed out: candidate
  item rows are locked with ``SELECT ... FOR UPDATE SKIP LOCKED`` and their counter is raised
  in the same transaction, so two annotators never take the same last slot;
- an annotator never gets the same item twice (unique constraint on (item, annotator));
- nobody rates their own caption in a verification campaign: the author is left out of the
  candidate pool (proven under the same stress in tests/annotation/test_concurrency.py);
- an annotator holds at most one open batch per campaign: requests of one annotator are
  serialised by a transaction-scoped advisory lock, backed by a partial unique constraint;
- no deadlock: handing out never waits (SKIP LOCKED), expiry skips batches others hold, and
  whoever changes several item counters locks those rows in ascending id order.

On SQLite (the embedded demo) every write transaction takes the database write lock at
BEGIN (``transaction_mode = IMMEDIATE``), which serialises the same code path.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone
from django.utils.translation import gettext

from annotation.assignment.choice import Candidate, choose_items
from annotation.assignment.qualification import annotator_qualification_problem
from annotation.models import (
    OPEN_BATCH_STAGES,
    Annotator,
    Assignment,
    AssignmentState,
    Batch,
    BatchStage,
    Campaign,
    CampaignKind,
    CampaignState,
    ImageWithdrawal,
    Item,
    Side,
)
from annotation.models import UNCAPPED_CONTROL_KINDS as UNCAPPED
from annotation.workforce.selectors import work_check
from core.compiled_reads import CompiledRead
from core.errors import Conflict, NotAllowed, NotFound, NoWorkAvailable

# How many candidate rows to lock per request, as a multiple of the batch size: a little
# slack lets the pure choice skip rows it must not take without a second round trip.
_CANDIDATE_WINDOW = 2
# When every free row is locked by other annotators' requests for a moment, look again for up
# to this long before saying there is nothing left (those locks last milliseconds).
_LOCKED_PATIENCE_SECONDS = 3.0


def _lock_annotator_campaign(annotator_id: int, campaign_id: int) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"batch:{campaign_id}:{annotator_id}"]
            )


def _m2_sides(campaign: Campaign, n: int) -> list[str]:
    """Side by side: where m2's caption goes for each new assignment, drawn on the server with
    the OS's randomness (never predictable from the page); blank for the other kinds."""
    if campaign.kind != CampaignKind.SIDE_BY_SIDE:
        return [""] * n
    rng = random.SystemRandom()
    return [rng.choice((Side.LEFT, Side.RIGHT)) for _ in range(n)]


# The two reads every batch request starts with, their SQL built once per connection
# (core.compiled_reads): the campaign (the language is not joined: only a refusal names it, one
# query then), and the annotator's open batch of it, locked, so that a concurrent lease expiry cannot
# expire the batch between this read and its renewal (the annotator would be sent to an expired batch).
_CAMPAIGN_READ = CompiledRead(Campaign, lambda pk: Campaign.objects.filter(pk=pk), {"pk": int})
_OPEN_BATCH_READ = CompiledRead(
    Batch,
    lambda campaign_id, annotator_id: (
        Batch.objects.select_for_update()
        .filter(campaign_id=campaign_id, annotator_id=annotator_id, stage__in=OPEN_BATCH_STAGES)
        .order_by("pk")[:1]
    ),
    {"campaign_id": int, "annotator_id": int},
)


def _renew_lease(batch: Batch, now: datetime) -> None:
    batch.lease_expires_at = now + timedelta(minutes=batch.campaign.lease_minutes)
    Batch.objects.filter(pk=batch.pk).update(lease_expires_at=batch.lease_expires_at)


def batch_request(*, annotator: Annotator, campaign_id: int) -> tuple[Batch, bool]:
    """Give ``annotator`` work in campaign ``campaign_id``: their open batch, or a new one.

    Returns ``(batch, created)``. An annotator who still holds an unfinished batch of the
    campaign gets it back (its lease renewed) instead of a new one. A new batch holds up to
    N items the annotator was never assigned, neediest first.

    Locks: an advisory lock per (annotator, campaign); candidate item rows FOR UPDATE SKIP
    LOCKED. Idempotent in effect: concurrent calls of one annotator return the same batch.
    Raises NotFound for an unknown campaign, NotAllowed if the annotator is not qualified, ``Conflict`` if the
    campaign is not open, ``NoWorkAvailable`` when no item is left for this annotator.
    """
    with transaction.atomic():
        _lock_annotator_campaign(annotator.pk, campaign_id)
        campaign = _CAMPAIGN_READ.read(pk=campaign_id)
        if campaign is None:
            raise NotFound(gettext("No such campaign."))
        # Entry-link scope, language declaration, tutorial and quota (annotation.workforce).
        work_check(annotator=annotator, campaign=campaign)
        problem = annotator_qualification_problem(annotator, campaign)
        if problem:
            raise NotAllowed(problem)
        now = timezone.now()
        # Locked (see _OPEN_BATCH_READ). The campaign is the one just read: not joined and built again.
        existing = _OPEN_BATCH_READ.read(campaign_id=campaign.pk, annotator_id=annotator.pk)
        if existing is not None:
            existing.campaign = campaign
            if existing.lease_expires_at < now:
                _renew_lease(existing, now)
            return existing, False
        if campaign.state != CampaignState.OPEN:
            raise Conflict(gettext("The campaign “%(name)s” is not open.") % {"name": campaign.name})

        # Read once for the pool and the controls (it was read twice).
        seen = _seen_images(campaign, annotator) if _uses_controls(campaign) else []
        chosen = _lock_and_choose(campaign, annotator, seen)
        if not chosen:
            raise NoWorkAvailable(no_work_message(campaign, annotator))
        controls = _rated_controls_choose(campaign, annotator, chosen, seen)

        batch = Batch.objects.create(
            campaign=campaign,
            annotator=annotator,
            lease_expires_at=now + timedelta(minutes=campaign.lease_minutes),
        )
        ordered = [pk for pk, _image in chosen]
        if controls:
            # Controls sit among the real images, at random places: nothing on the page tells them apart.
            ordered += controls
            random.SystemRandom().shuffle(ordered)
        sides = _m2_sides(campaign, len(ordered))
        Assignment.objects.bulk_create(
            Assignment(batch=batch, item_id=item_id, annotator=annotator, position=pos, m2_side=side)
            for pos, (item_id, side) in enumerate(zip(ordered, sides))
        )
        Item.objects.filter(pk__in=[pk for pk, _image in chosen]).update(active_count=F("active_count") + 1)
        return batch, True


def _uses_controls(campaign: Campaign) -> bool:
    """Whether ``campaign`` puts rated controls in its batches (caption and verification campaigns)."""
    return campaign.kind != CampaignKind.SIDE_BY_SIDE and bool(campaign.controls_per_batch)


def _seen_images(campaign: Campaign, annotator: Annotator) -> list[int]:
    """Images already shown to ``annotator`` in ``campaign`` (as a real item or a control): with rated
    controls an image can stand behind two items. A plain list (one indexed query, as long as the
    annotator's own work): a correlated EXISTS per candidate row made the locked pool scan 4x slower
    on PostgreSQL (benchmarks/bench_controls.py)."""
    return list(
        Assignment.objects.filter(annotator=annotator, item__campaign=campaign)
        .values_list("item__image_id", flat=True)
        .order_by()  # not the model's ordering, which DISTINCT would add its columns (and a join) to
        .distinct()
    )


def _withdrawn_images(campaign: Campaign):
    """The images kept out of ``campaign``'s pool after reports (annotation.quality.reports), as a subquery."""
    return ImageWithdrawal.objects.in_force(campaign.pk).values("image_id")


def _rated_controls_choose(
    campaign: Campaign, annotator: Annotator, chosen: list[tuple[int, int]], seen: list[int]
) -> list[int]:
    """Up to ``campaign.controls_per_batch`` rated control items (caption and verification
    campaigns) the annotator has not had, on images neither ``seen`` before nor in this batch
    (``chosen``: (item, image) pairs), at random. Not locked and not counted: a control has no K
    (see ``UNCAPPED_CONTROL_KINDS``)."""
    if not _uses_controls(campaign):
        return []
    controls = (
        Item.objects.filter(campaign=campaign, is_control=True, control_kind__in=UNCAPPED)
        .exclude(image__file="")
        .exclude(image_id__in=_withdrawn_images(campaign))
        .exclude(image_id__in=[*seen, *(image for _pk, image in chosen)])
    )
    if campaign.kind == CampaignKind.RATING:
        controls = controls.exclude(written_caption__annotator=annotator)  # nobody rates their own caption
    candidates = list(controls.values_list("pk", "image_id"))
    rng = random.SystemRandom()
    rng.shuffle(candidates)
    picked, images = [], set()
    for pk, image_id in candidates:
        if image_id not in images:
            picked.append(pk)
            images.add(image_id)
        if len(picked) == campaign.controls_per_batch:
            break
    return picked


def _pool(campaign: Campaign, annotator: Annotator, *, with_own: bool = False, seen: list[int] | None = None):
    """The items a new batch of ``annotator`` may take, neediest first: below K, with a file, not
    withdrawn, never assigned to them. The one definition behind handing out (:func:`_lock_and_choose`)
    and behind saying that nothing can start (:func:`batch_start_problem`). ``with_own``: keep the
    annotator's own captions in a verification campaign (to tell that only those are left). ``seen``:
    :func:`_seen_images`, where the caller has read it already."""
    already = Assignment.objects.filter(item=OuterRef("pk"), annotator=annotator)
    pool = (
        Item.objects.filter(campaign=campaign, active_count__lt=campaign.replication)
        .exclude(image__file="")
        # An image withdrawn from this campaign (or every one) after reports goes to nobody.
        .exclude(image_id__in=_withdrawn_images(campaign))
        .filter(~Exists(already))
        .order_by("active_count", "shuffle_key", "pk")
    )
    if campaign.kind != CampaignKind.SIDE_BY_SIDE:
        # Rated controls live in the same campaign (never in this pool): an image shown as a
        # control is not shown again as real work, nor twice in one batch.
        pool = pool.filter(is_control=False)
        if campaign.controls_per_batch:
            pool = pool.exclude(image_id__in=_seen_images(campaign, annotator) if seen is None else seen)
    if campaign.kind == CampaignKind.RATING and not with_own:
        # Nobody verifies their own caption. Excluded here, in the pool itself, so that an
        # item only its author could still take is not fillable for them: they are told
        # there is no work rather than waiting on rows they may not have.
        pool = pool.exclude(written_caption__annotator=annotator)
    return pool


def no_work_message(campaign: Campaign, annotator: Annotator) -> str:
    """Why the pool of ``campaign`` has nothing for ``annotator`` (it is empty for them), in a sentence
    they can act on: only their own captions are left to verify; every remaining image is in someone
    else's batch right now (it comes back if that batch's time runs out); or nothing is left for them."""
    if campaign.kind == CampaignKind.RATING and _pool(campaign, annotator, with_own=True).exists():
        return gettext(
            "Every caption still to be rated in this campaign is one you wrote, and nobody rates their own "
            "captions. There is nothing here for you."
        )
    never_had = Item.objects.filter(campaign=campaign, is_control=False).exclude(
        assignments__annotator=annotator
    )
    if never_had.filter(assignments__state=AssignmentState.LIVE).exists():
        return gettext(
            "Every image left is in someone else's batch right now. Images come back when a batch's time runs "
            "out: look again later."
        )
    return gettext("There is no image left for you in this campaign. Thank you!")


def batch_start_problem(*, annotator: Annotator, campaign: Campaign) -> str | None:
    """Why ``annotator`` cannot start a new batch of ``campaign`` right now, as the sentence they read
    instead of a start button; None when a batch can start. Asks what :func:`batch_request` asks
    (the workforce rules, qualification, the campaign's state, the pool), reading only: a request
    right after may still find nothing if others took the last images meanwhile."""
    try:
        work_check(annotator=annotator, campaign=campaign)
    except (NotFound, NotAllowed, NoWorkAvailable) as exc:
        return exc.message
    problem = annotator_qualification_problem(annotator, campaign)
    if problem:
        return problem
    if campaign.state != CampaignState.OPEN:
        return gettext("The campaign “%(name)s” is not open.") % {"name": campaign.name}
    if _pool(campaign, annotator).exists():
        return None
    return no_work_message(campaign, annotator)


def _lock_and_choose(campaign: Campaign, annotator: Annotator, seen: list[int]) -> list[tuple[int, int]]:
    """The items of a new batch, locked, as (item, image) pairs: the image ids keep the batch's
    images out of its controls without another read."""
    pool = _pool(campaign, annotator, seen=seen)
    window = campaign.batch_size * _CANDIDATE_WINDOW
    deadline = time.monotonic() + _LOCKED_PATIENCE_SECONDS
    attempt = 0
    while True:
        attempt += 1
        rows = list(
            pool.select_for_update(skip_locked=True, of=("self",)).values_list(
                "pk", "active_count", "shuffle_key", "image_id"
            )[:window]
        )
        images = {pk: image for pk, _count, _key, image in rows}
        candidates = [Candidate(pk, count, key) for pk, count, key, _image in rows]
        chosen = choose_items(candidates, batch_size=campaign.batch_size, replication=campaign.replication)
        if chosen:
            return [(pk, images[pk]) for pk in chosen]
        # Nothing lockable: either the pool is empty, or others hold every free row for a
        # moment. Only in the second case is it worth looking again.
        if not pool.exists() or time.monotonic() > deadline:
            return []
        time.sleep(min(0.02 * attempt, 0.2))


def leases_expire(*, now: datetime | None = None, limit: int = 500) -> int:
    """Expire open batches whose lease has run out; their unfinished items go back to the pool.

    The batch keeps its drafts and can still be submitted (then flagged late, and kept).
    Locks the expiring batch rows (SKIP LOCKED: a batch being submitted right now is left
    for the next run) and then the affected item rows in ascending id order. Idempotent:
    an expired batch is never expired twice. Returns the number of batches expired.
    """
    now = now or timezone.now()
    total = 0
    while True:
        with transaction.atomic():
            batch_ids = list(
                Batch.objects.filter(stage__in=OPEN_BATCH_STAGES, lease_expires_at__lt=now)
                .order_by("pk")
                .select_for_update(skip_locked=True)
                .values_list("pk", flat=True)[:limit]
            )
            if not batch_ids:
                return total
            live = Assignment.objects.filter(batch_id__in=batch_ids, state=AssignmentState.LIVE)
            per_item = Counter(
                live.exclude(item__control_kind__in=UNCAPPED).values_list("item_id", flat=True)
            )
            live.update(state=AssignmentState.EXPIRED)
            item_counters_add(per_item, sign=-1)
            Batch.objects.filter(pk__in=batch_ids).update(stage=BatchStage.EXPIRED, expired_at=now)
            total += len(batch_ids)
        if len(batch_ids) < limit:
            return total


def item_counters_add(per_item: Counter, *, sign: int) -> None:
    """Add ``sign * n`` to the live-or-done counter of each item; rows locked in id order."""
    if not per_item:
        return
    ids = sorted(per_item)
    list(Item.objects.filter(pk__in=ids).order_by("pk").select_for_update().values_list("pk", flat=True))
    by_amount: dict[int, list[int]] = {}
    for item_id, n in per_item.items():
        by_amount.setdefault(n, []).append(item_id)
    for n, item_ids in by_amount.items():
        Item.objects.filter(pk__in=item_ids).update(active_count=F("active_count") + sign * n)
