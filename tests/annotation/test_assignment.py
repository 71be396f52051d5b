"""The assignment choice (pure, no database) and the engine driven by one thread.

Concurrency claims live in ``test_concurrency.py`` (PostgreSQL, parallel connections);
here every behaviour a single annotator can observe: batch size, returning the open
batch, never the same image twice, even filling, refusals, lease expiry.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.assignment.choice import Candidate, choose_items
from annotation.assignment.engine import batch_request, leases_expire
from annotation.models import (
    Assignment,
    AssignmentState,
    Batch,
    BatchStage,
    CampaignState,
    Image,
    Item,
    WrittenCaption,
)
from annotation.services import work
from annotation.services.campaigns import campaign_close
from core.errors import Conflict, NotAllowed, NotFound, NoWorkAvailable
from tests import factories as f

# --- The pure choice ------------------------------------------------------------------------


def test_choice_takes_the_neediest_items_first():
    candidates = [Candidate(1, 1, 0), Candidate(2, 0, 50), Candidate(3, 1, 1), Candidate(4, 0, 99)]
    assert choose_items(candidates, batch_size=2, replication=2) == [2, 4]
    assert choose_items(candidates, batch_size=3, replication=2) == [2, 4, 1]


def test_choice_breaks_ties_by_shuffle_key_then_id():
    candidates = [Candidate(10, 0, 7), Candidate(11, 0, 3), Candidate(12, 0, 5), Candidate(9, 0, 5)]
    assert choose_items(candidates, batch_size=4, replication=1) == [11, 9, 12, 10]


def test_choice_never_takes_an_item_at_or_above_replication():
    candidates = [Candidate(1, 2), Candidate(2, 3), Candidate(3, 1), Candidate(4, 0)]
    assert choose_items(candidates, batch_size=10, replication=2) == [4, 3]
    assert choose_items([Candidate(1, 2), Candidate(2, 2)], batch_size=5, replication=2) == []


def test_choice_skips_excluded_items_and_duplicates():
    candidates = [Candidate(1, 0), Candidate(2, 0), Candidate(2, 0), Candidate(3, 0)]
    assert choose_items(candidates, batch_size=5, replication=2, exclude={1}) == [2, 3]


def test_choice_returns_at_most_batch_size_and_order_of_input_does_not_matter():
    candidates = [Candidate(i, i % 3, (i * 7919) % 101) for i in range(1, 40)]
    chosen = choose_items(candidates, batch_size=5, replication=3)
    assert len(chosen) == 5
    assert chosen == choose_items(list(reversed(candidates)), batch_size=5, replication=3)
    assert all(i % 3 == 0 for i in chosen)  # all five from the count-0 group


@pytest.mark.parametrize("kwargs", [{"batch_size": 0, "replication": 2}, {"batch_size": 3, "replication": 0}])
def test_choice_rejects_nonsense_parameters(kwargs):
    with pytest.raises(ValueError):
        choose_items([Candidate(1, 0)], **kwargs)


# --- The engine, one thread ------------------------------------------------------------------


def finish(annotator, batch, *, key="key-00000000"):
    """Rate, open screen 2, write and submit every image of ``batch`` through the services."""
    assignments = list(batch.assignments.order_by("position"))
    for a in assignments:
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    for a in assignments:
        work.draft_save(
            annotator=annotator,
            batch_id=batch.pk,
            assignment_id=a.pk,
            text=f"Bild {a.item_id}",
            base_revision=0,
        )
    return work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=key)


def items_of(batch) -> set[int]:
    return set(batch.assignments.values_list("item_id", flat=True))


def counts(campaign) -> list[int]:
    return sorted(Item.objects.filter(campaign=campaign).values_list("active_count", flat=True))


@pytest.mark.django_db
def test_new_batch_holds_n_items_and_raises_their_counters(campaign, annotator):
    batch, created = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert created
    assert batch.stage == BatchStage.RATING
    assert batch.lease_expires_at > timezone.now() + timedelta(minutes=campaign.lease_minutes - 1)
    assignments = list(batch.assignments.order_by("position"))
    assert [a.position for a in assignments] == [0, 1, 2]
    assert all(a.annotator_id == annotator.pk and a.state == AssignmentState.LIVE for a in assignments)
    assert counts(campaign) == [0, 0, 0, 1, 1, 1]


@pytest.mark.django_db
def test_batch_is_smaller_than_n_when_fewer_images_are_left(german, annotator):
    campaign = f.open_caption_campaign(images=2, batch_size=5, replication=1, language=german)
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert batch.assignments.count() == 2


@pytest.mark.django_db
def test_open_batch_is_returned_instead_of_a_new_one(campaign, annotator):
    first, created = batch_request(annotator=annotator, campaign_id=campaign.pk)
    again, created_again = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert created and not created_again
    assert again.pk == first.pk
    assert Batch.objects.filter(annotator=annotator).count() == 1
    assert counts(campaign) == [0, 0, 0, 1, 1, 1]  # nothing handed out twice

    # Also on screen 2.
    for a in first.assignments.all():
        work.rating_save(annotator=annotator, batch_id=first.pk, assignment_id=a.pk, value="bad")
    work.writing_open(annotator=annotator, batch_id=first.pk)
    assert batch_request(annotator=annotator, campaign_id=campaign.pk) == (first, False)


@pytest.mark.django_db
def test_a_lease_run_out_but_not_yet_expired_by_the_job_is_renewed(campaign, annotator):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    Batch.objects.filter(pk=batch.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=5))

    again, created = batch_request(annotator=annotator, campaign_id=campaign.pk)

    assert (again.pk, created) == (batch.pk, False)
    batch.refresh_from_db()
    assert batch.stage == BatchStage.RATING
    assert batch.lease_expires_at > timezone.now() + timedelta(minutes=campaign.lease_minutes - 1)
    # ... so the expiry job no longer takes it.
    assert leases_expire() == 0
    assert counts(campaign) == [0, 0, 0, 1, 1, 1]


@pytest.mark.django_db
def test_never_the_same_image_twice_to_one_annotator(german, annotator):
    campaign = f.open_caption_campaign(images=7, batch_size=3, replication=3, language=german)
    seen = []
    for n in range(3):
        batch, created = batch_request(annotator=annotator, campaign_id=campaign.pk)
        assert created
        seen.extend(items_of(batch))
        finish(annotator, batch, key=f"key-{n:08d}")
    # 7 images: 3 + 3 + 1, although every image could still take two more annotators.
    assert len(seen) == 7 == len(set(seen))
    with pytest.raises(NoWorkAvailable):
        batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert counts(campaign) == [1] * 7


@pytest.mark.django_db
def test_an_image_without_a_file_is_never_assigned(german):
    campaign = f.open_caption_campaign(images=2, batch_size=5, replication=1, language=german)
    fileless = Image.objects.create(key="no-file-yet")
    assert not fileless.has_file
    # An item can exist for it (e.g. its file was removed after the campaign opened).
    Item.objects.create(campaign=campaign, image=fileless, shuffle_key=0)

    first = f.AnnotatorFactory(languages=[german])
    batch, _ = batch_request(annotator=first, campaign_id=campaign.pk)
    assert fileless.pk not in batch.assignments.values_list("item__image_id", flat=True)
    assert batch.assignments.count() == 2
    with pytest.raises(NoWorkAvailable):
        batch_request(annotator=f.AnnotatorFactory(languages=[german]), campaign_id=campaign.pk)
    assert not Assignment.objects.filter(item__image=fileless).exists()


@pytest.mark.django_db
def test_a_draft_campaign_is_refused(german, annotator):
    campaign = f.CampaignFactory(language=german)
    assert campaign.state == CampaignState.DRAFT
    with pytest.raises(Conflict, match="not open"):
        batch_request(annotator=annotator, campaign_id=campaign.pk)


@pytest.mark.django_db
def test_a_closed_campaign_gives_no_new_batch_but_the_open_one_back(campaign, annotator, other_annotator):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    campaign_close(campaign_id=campaign.pk)
    with pytest.raises(Conflict, match="not open"):
        batch_request(annotator=other_annotator, campaign_id=campaign.pk)
    # Work already handed out can still be finished.
    assert batch_request(annotator=annotator, campaign_id=campaign.pk) == (batch, False)
    finish(annotator, batch)
    with pytest.raises(Conflict):
        batch_request(annotator=annotator, campaign_id=campaign.pk)


@pytest.mark.django_db
def test_an_unknown_campaign_is_not_found(annotator):
    with pytest.raises(NotFound):
        batch_request(annotator=annotator, campaign_id=987654)


@pytest.mark.django_db
def test_annotator_without_the_language_is_refused(campaign):
    french = f.LanguageFactory(code="fr", name="French")
    outsider = f.AnnotatorFactory(languages=[french])
    with pytest.raises(NotAllowed, match="German"):
        batch_request(annotator=outsider, campaign_id=campaign.pk)
    assert not Batch.objects.exists()


@pytest.mark.django_db
def test_annotator_who_does_not_read_english_is_refused(campaign, german):
    no_english = f.AnnotatorFactory(languages=[german], reads_english=False)
    with pytest.raises(NotAllowed, match="English"):
        batch_request(annotator=no_english, campaign_id=campaign.pk)
    assert not Batch.objects.exists()


@pytest.mark.django_db
def test_no_work_available_when_every_image_has_k_live_or_done_assignments(german):
    campaign = f.open_caption_campaign(images=4, batch_size=2, replication=1, language=german)
    a, b, c = (f.AnnotatorFactory(languages=[german]) for _ in range(3))
    batch_a, _ = batch_request(annotator=a, campaign_id=campaign.pk)
    batch_b, _ = batch_request(annotator=b, campaign_id=campaign.pk)
    assert items_of(batch_a).isdisjoint(items_of(batch_b))
    # Live (not yet submitted) assignments count: the campaign is full for c already, and c is told
    # that the images are in others' batches, which may come back.
    with pytest.raises(NoWorkAvailable, match="in someone else's batch right now"):
        batch_request(annotator=c, campaign_id=campaign.pk)
    finish(a, batch_a)
    with pytest.raises(NoWorkAvailable, match="in someone else's batch right now"):
        batch_request(annotator=c, campaign_id=campaign.pk)
    finish(b, batch_b)
    with pytest.raises(NoWorkAvailable, match="no image left for you"):
        batch_request(annotator=c, campaign_id=campaign.pk)
    assert counts(campaign) == [1, 1, 1, 1]


@pytest.mark.django_db
def test_campaign_fills_evenly(campaign, german):
    # 6 images, N=3, K=2: every image gets its first annotator before any gets a second.
    a, b, c = (f.AnnotatorFactory(languages=[german]) for _ in range(3))
    batch_a, _ = batch_request(annotator=a, campaign_id=campaign.pk)
    batch_b, _ = batch_request(annotator=b, campaign_id=campaign.pk)
    assert items_of(batch_a).isdisjoint(items_of(batch_b))
    assert counts(campaign) == [1] * 6
    batch_c, _ = batch_request(annotator=c, campaign_id=campaign.pk)
    assert counts(campaign) == [1, 1, 1, 2, 2, 2]
    assert max(counts(campaign)) - min(counts(campaign)) <= 1
    for who, batch in ((a, batch_a), (b, batch_b), (c, batch_c)):
        finish(who, batch)
    # A fourth annotator takes exactly the three images still short of K.
    d = f.AnnotatorFactory(languages=[german])
    batch_d, _ = batch_request(annotator=d, campaign_id=campaign.pk)
    assert counts(campaign) == [2] * 6
    assert items_of(batch_d).isdisjoint(items_of(batch_c))


@pytest.mark.django_db
def test_lease_expiry_returns_unfinished_images_and_keeps_late_work(german):
    campaign = f.open_caption_campaign(images=3, batch_size=3, replication=1, language=german)
    first, second = (f.AnnotatorFactory(languages=[german]) for _ in range(2))
    abandoned, _ = batch_request(annotator=first, campaign_id=campaign.pk)
    with pytest.raises(NoWorkAvailable):
        batch_request(annotator=second, campaign_id=campaign.pk)

    assert leases_expire(now=timezone.now() + timedelta(minutes=campaign.lease_minutes + 1)) == 1
    abandoned.refresh_from_db()
    assert abandoned.stage == BatchStage.EXPIRED and abandoned.expired_at is not None
    assert counts(campaign) == [0, 0, 0]
    assert leases_expire(now=timezone.now() + timedelta(days=1)) == 0  # idempotent

    taken, _ = batch_request(annotator=second, campaign_id=campaign.pk)
    assert items_of(taken) == items_of(abandoned)

    late = finish(first, abandoned)
    assert late.stage == BatchStage.SUBMITTED and late.is_late
    assert WrittenCaption.objects.filter(assignment__batch=abandoned, is_late=True).count() == 3
    assert counts(campaign) == [2, 2, 2]  # above K=1 only through the late work ...
    finish(second, taken)
    per_item = Counter(
        Assignment.objects.filter(state__in=[AssignmentState.LIVE, AssignmentState.SUBMITTED]).values_list(
            "item_id", flat=True
        )
    )
    assert max(per_item.values()) == 1  # ... never through assignment


# --- Verification: nobody rates their own caption (issue 9, item 6) --------------------------------


@pytest.mark.django_db
def test_a_verification_batch_never_holds_its_raters_own_captions(captioned, annotator, other_annotator):
    from annotation.services.campaigns import campaign_open, rating_campaign_create

    # Each of the two writers captioned every image once; one caption per image is drawn, so
    # each writer is the author of some items and may rate only the others.
    # The draw depends on the image keys, which come from a factory sequence shared by the whole
    # run: try seeds until both writers are authors of some items (almost always the first).
    for seed in range(40):
        created = rating_campaign_create(
            name=f"Prüfung {seed}", source_campaign_id=captioned.pk, batch_size=15, seed=seed
        )
        authors = dict(created.items.values_list("pk", "written_caption__annotator"))
        if set(authors.values()) == {annotator.pk, other_annotator.pk}:
            break
    campaign = campaign_open(campaign_id=created.pk)

    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    got = set(batch.assignments.values_list("item_id", flat=True))
    assert got == {pk for pk, author in authors.items() if author != annotator.pk}
    # What is left for them is only their own captions: no work, at once (not "fillable" by them).
    for pk in batch.assignments.values_list("pk", flat=True):
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=pk, value="good")
    work.judgment_batch_submit(annotator=annotator, batch_id=batch.pk, submit_key="k" * 16)
    with pytest.raises(NoWorkAvailable):
        batch_request(annotator=annotator, campaign_id=campaign.pk)
