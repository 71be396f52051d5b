"""Side-by-side and verification campaigns: creation (sample, seed, controls), the side drawn per
assignment, judgments and their score from m2's side, and the one-screen submit."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.assignment.engine import annotator_qualification_problem, batch_request, leases_expire
from annotation.models import (
    Assignment,
    AssignmentState,
    Batch,
    BatchStage,
    Campaign,
    CampaignKind,
    CampaignState,
    ControlKind,
    Item,
    Rating,
    SxsJudgment,
)
from annotation.services import work
from annotation.services.campaigns import campaign_open, rating_campaign_create, sxs_campaign_create
from core.errors import AlreadySubmitted, Conflict, NotFound, ValidationFailed
from core.scales import LEFT_ADVANTAGE, SXS
from tests import factories as f

pytestmark = pytest.mark.django_db


def create(m1, m2, language, **kwargs):
    kwargs.setdefault("name", "vergleich")
    return sxs_campaign_create(language_code=language.code, base_system=m1, test_system=m2, **kwargs)


def real_image_ids(campaign) -> list[int]:
    return list(
        campaign.items.filter(is_control=False).order_by("image__key").values_list("image_id", flat=True)
    )


# --- Creating a side-by-side campaign --------------------------------------------------------------


def test_items_are_the_images_with_captions_from_both_systems_and_a_file(german):
    m1, m2, images = f.sxs_systems(images=5, language=german)
    only_m1 = f.ImageFactory()
    f.SystemCaptionFactory(system=m1, image=only_m1, language=german, text="nur m1")
    other_language = f.ImageFactory()
    english = f.LanguageFactory(code="en", name="English")
    f.SystemCaptionFactory(system=m1, image=other_language, language=english)
    f.SystemCaptionFactory(system=m2, image=other_language, language=english)
    no_file = f.ImageFactory(with_file=False)
    f.SystemCaptionFactory(system=m1, image=no_file, language=german)
    f.SystemCaptionFactory(system=m2, image=no_file, language=german)

    campaign = create(m1, m2, german)

    assert campaign.kind == CampaignKind.SIDE_BY_SIDE and campaign.state == CampaignState.DRAFT
    assert (campaign.base_system, campaign.test_system, campaign.replication) == (m1, m2, 3)
    assert sorted(real_image_ids(campaign)) == sorted(i.pk for i in images)
    for item in campaign.items.select_related("caption_m1", "caption_m2"):
        assert (item.caption_m1.system, item.caption_m2.system) == (m1, m2)
        assert item.caption_m1.image_id == item.caption_m2.image_id == item.image_id
    assert campaign.sample_size is None and campaign.sample_seed is not None


def test_a_sample_is_drawn_with_a_stored_seed_and_can_be_reproduced(german):
    m1, m2, images = f.sxs_systems(images=12, language=german)
    first = create(m1, m2, german, name="a", sample_size=5, seed=600)
    again = create(m1, m2, german, name="b", sample_size=5, seed=600)
    other = create(m1, m2, german, name="c", sample_size=5, seed=601)
    assert (first.sample_size, first.sample_seed) == (5, 600)
    assert len(real_image_ids(first)) == 5
    assert real_image_ids(first) == real_image_ids(again)
    assert real_image_ids(first) != real_image_ids(other)
    # The stored seed alone reproduces the sample: random.Random(seed).sample over images by key.
    import random

    by_key = sorted(images, key=lambda i: i.key)
    expected = random.Random(600).sample([i.pk for i in by_key], 5)
    assert sorted(real_image_ids(first)) == sorted(expected)


def test_a_seed_is_drawn_and_stored_when_none_is_given(german):
    m1, m2, _ = f.sxs_systems(images=8, language=german)
    campaign = create(m1, m2, german, sample_size=3)
    assert campaign.sample_seed is not None
    replay = create(m1, m2, german, name="replay", sample_size=3, seed=campaign.sample_seed)
    assert real_image_ids(replay) == real_image_ids(campaign)


def test_identical_pairs_are_flagged_ignoring_case_and_spacing(german):
    m1, m2, images = f.sxs_systems(images=4, language=german, identical=1)
    m2_caption = m2.captions.get(image=images[1])
    m2_caption.text = "  " + m1.captions.get(image=images[1]).text.upper().replace(" ", "  ") + " "
    m2_caption.save()
    campaign = create(m1, m2, german)
    flagged = set(campaign.items.filter(is_identical_pair=True).values_list("image_id", flat=True))
    assert flagged == {images[0].pk, images[1].pk}


def test_controls_are_mixed_in_and_built_as_documented(german):
    m1, m2, images = f.sxs_systems(images=6, language=german)
    campaign = create(m1, m2, german, controls_identical=2, controls_wrong_image=3, seed=7)
    controls = list(campaign.items.filter(is_control=True).select_related("caption_m1", "caption_m2"))
    kinds = Counter(c.control_kind for c in controls)
    assert kinds == {ControlKind.IDENTICAL: 2, ControlKind.WRONG_IMAGE: 3}
    assert campaign.items.filter(is_control=False).count() == 6
    sample = set(real_image_ids(campaign))
    for c in controls:
        assert c.image_id in sample
        # m1's real caption of the image is always on the m1 side.
        assert c.caption_m1.image_id == c.image_id and c.caption_m1.system == m1
        if c.control_kind == ControlKind.IDENTICAL:
            assert c.caption_m2_id == c.caption_m1_id
        else:
            assert c.caption_m2.image_id != c.image_id and c.caption_m2.system == m2
    # Distinct images per kind; a control shares its image with a real pair (the partial unique constraint).
    assert len({c.image_id for c in controls if c.control_kind == ControlKind.WRONG_IMAGE}) == 3


def test_the_database_keeps_one_real_item_per_image_and_consistent_control_kinds(german):
    m1, m2, _ = f.sxs_systems(images=2, language=german)
    campaign = create(m1, m2, german)
    item = campaign.items.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Item.objects.create(campaign=campaign, image=item.image)
    with pytest.raises(IntegrityError), transaction.atomic():
        Item.objects.create(campaign=campaign, image=item.image, is_control=True, control_kind="")
    Item.objects.create(
        campaign=campaign, image=item.image, is_control=True, control_kind=ControlKind.IDENTICAL
    )


def test_the_database_refuses_a_side_by_side_campaign_without_two_different_systems(german):
    system = f.SystemFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Campaign.objects.create(name="x", kind=CampaignKind.SIDE_BY_SIDE, language=german, base_system=system)
    with pytest.raises(IntegrityError), transaction.atomic():
        Campaign.objects.create(
            name="y", kind=CampaignKind.SIDE_BY_SIDE, language=german, base_system=system, test_system=system
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        Campaign.objects.create(name="z", kind=CampaignKind.RATING, language=german)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sample_size": 7}, "Only 6 images"),
        ({"controls_identical": 7}, "At most 6 identical"),
        ({"controls_wrong_image": -1}, "cannot be negative"),
        ({"replication": 0}, "replication"),
        ({"batch_size": 101}, "batch size"),
        ({"seed": -5}, "seed"),
        ({"name": "  "}, "name"),
        ({"control_pass_threshold": 1.5}, "threshold"),
    ],
)
def test_bad_requests_are_refused_and_nothing_is_stored(german, kwargs, message):
    m1, m2, _ = f.sxs_systems(images=6, language=german)
    with pytest.raises(ValidationFailed, match=message):
        create(m1, m2, german, **kwargs)
    assert not Campaign.objects.exists() and not Item.objects.exists()


def test_same_system_twice_unknown_system_and_no_eligible_image_are_refused(german):
    m1, m2, _ = f.sxs_systems(images=2, language=german)
    with pytest.raises(ValidationFailed, match="different"):
        create(m1, m1, german)
    with pytest.raises(ValidationFailed, match="no captioning system"):
        create(m1, "nonexistent", german)
    french = f.LanguageFactory(code="fr", name="French")
    with pytest.raises(ValidationFailed, match="No image"):
        create(m1, m2, french)
    # Never "a Arabic caption": the language comes after the noun, no article to get wrong.
    arabic = f.LanguageFactory(code="ar", name="Arabic")
    with pytest.raises(ValidationFailed, match=r"a stored file and a caption in Arabic from both"):
        create(m1, m2, arabic)
    assert not Campaign.objects.exists()


def test_a_name_that_gives_the_systems_away_is_refused(german):
    m1, m2, _ = f.sxs_systems(images=2, language=german)
    with pytest.raises(ValidationFailed, match="Annotators see the campaign name"):
        create(m1, m2, german, name=f"{m1.name} gegen {m2.name}")


# --- The engine, unchanged but for the side drawn per assignment -----------------------------------


def test_qualification_needs_the_language_but_not_english(german):
    campaign = f.open_sxs_campaign(images=3, language=german)
    no_english = f.AnnotatorFactory(languages=[german], reads_english=False)
    assert annotator_qualification_problem(no_english, campaign) is None
    french = f.AnnotatorFactory(languages=[f.LanguageFactory(code="fr", name="French")])
    assert "German" in annotator_qualification_problem(french, campaign)


def test_m2_side_is_drawn_at_random_per_assignment_and_stored(german):
    campaign = f.open_sxs_campaign(images=40, batch_size=40, replication=3, language=german)
    sides = []
    for _ in range(3):
        annotator = f.AnnotatorFactory(languages=[german])
        batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
        sides += list(batch.assignments.values_list("m2_side", flat=True))
    counts = Counter(sides)
    assert set(counts) == {"left", "right"}
    # 120 fair coin flips: each side strictly between 30 and 90 (P(fail) ≈ 4e-8).
    assert 30 < counts["left"] < 90
    # Per (annotator, item): the same item has different draws for different annotators somewhere.
    per_item = {}
    for item_id, side in Assignment.objects.values_list("item_id", "m2_side"):
        per_item.setdefault(item_id, set()).add(side)
    assert any(len(s) == 2 for s in per_item.values())


def test_caption_campaigns_get_no_side(campaign, annotator):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert set(batch.assignments.values_list("m2_side", flat=True)) == {""}


# --- Judging ------------------------------------------------------------------------------------


@pytest.fixture
def sxs_batch(german, annotator):
    campaign = f.open_sxs_campaign(images=4, batch_size=4, language=german)
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    return batch


def with_side(batch, side):
    a = batch.assignments.first()
    Assignment.objects.filter(pk=a.pk).update(m2_side=side)
    return a


@pytest.mark.parametrize(
    ("choice", "side", "score"),
    [
        ("much_better", "left", 3),
        ("much_better", "right", -3),
        ("better", "left", 2),
        ("better", "right", -2),
        ("slightly_better", "left", 1),
        ("slightly_better", "right", -1),
        ("similar", "left", 0),
        ("similar", "right", 0),
        ("slightly_worse", "left", -1),
        ("slightly_worse", "right", 1),
        ("worse", "left", -2),
        ("worse", "right", 2),
        ("much_worse", "left", -3),
        ("much_worse", "right", 3),
    ],
)
def test_the_score_is_from_m2s_side_whichever_side_it_was_on(sxs_batch, annotator, choice, side, score):
    a = with_side(sxs_batch, side)
    judgment = work.sxs_judgment_save(
        annotator=annotator, batch_id=sxs_batch.pk, assignment_id=a.pk, choice=choice, seconds=3.5
    )
    judgment.refresh_from_db()
    assert (judgment.choice, judgment.score, judgment.seconds) == (choice, score, 3.5)


def test_the_annotation_scale_agrees_with_the_evaluation_functions():
    from annotation.models import SxsChoice
    from core.scales import choice_to_score as here
    from evaluation.human import SXS_LABELS, choice_to_score
    from evaluation.human.sxs import normalise_choice

    assert list(SXS.codes) == list(LEFT_ADVANTAGE) == SxsChoice.values
    assert [normalise_choice(value) for value in SxsChoice.values] == list(SXS_LABELS)
    assert [point.key for point in SXS] == [str(k) for k in range(1, 8)]
    for value in SxsChoice.values:
        for side in ("left", "right"):
            assert here(value, side) == choice_to_score(normalise_choice(value), side)


def test_a_judgment_can_change_until_submit_and_then_not(sxs_batch, annotator):
    a = with_side(sxs_batch, "right")
    for choice in ["much_better", "worse"]:
        work.sxs_judgment_save(annotator=annotator, batch_id=sxs_batch.pk, assignment_id=a.pk, choice=choice)
    assert SxsJudgment.objects.get(assignment=a).score == 2
    for other in sxs_batch.assignments.exclude(pk=a.pk):
        work.sxs_judgment_save(
            annotator=annotator, batch_id=sxs_batch.pk, assignment_id=other.pk, choice="similar"
        )
    work.judgment_batch_submit(annotator=annotator, batch_id=sxs_batch.pk, submit_key="k" * 16, seconds=30)
    with pytest.raises(Conflict, match="already been submitted"):
        work.sxs_judgment_save(
            annotator=annotator, batch_id=sxs_batch.pk, assignment_id=a.pk, choice="similar"
        )
    assert SxsJudgment.objects.get(assignment=a).choice == "worse"


def test_unknown_choice_other_annotators_batch_and_caption_batches_are_refused(
    sxs_batch, annotator, other_annotator, campaign
):
    a = sxs_batch.assignments.first()
    with pytest.raises(ValidationFailed):
        work.sxs_judgment_save(annotator=annotator, batch_id=sxs_batch.pk, assignment_id=a.pk, choice="best")
    with pytest.raises(NotFound):
        work.sxs_judgment_save(
            annotator=other_annotator, batch_id=sxs_batch.pk, assignment_id=a.pk, choice="similar"
        )
    caption_batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    with pytest.raises(Conflict):
        work.sxs_judgment_save(
            annotator=annotator,
            batch_id=caption_batch.pk,
            assignment_id=caption_batch.assignments.first().pk,
            choice="similar",
        )
    # The caption screens' services refuse a side-by-side batch.
    with pytest.raises(Conflict):
        work.rating_save(annotator=annotator, batch_id=sxs_batch.pk, assignment_id=a.pk, value="good")
    with pytest.raises(Conflict):
        work.writing_open(annotator=annotator, batch_id=sxs_batch.pk)
    with pytest.raises(Conflict):
        work.batch_submit(annotator=annotator, batch_id=sxs_batch.pk, submit_key="k" * 16)
    with pytest.raises(Conflict):
        work.judgment_batch_submit(annotator=annotator, batch_id=caption_batch.pk, submit_key="k" * 16)
    assert not SxsJudgment.objects.exists() and not Rating.objects.exists()


def test_submit_needs_every_pair_judged_and_stores_nothing_otherwise(sxs_batch, annotator):
    first = sxs_batch.assignments.order_by("position").first()
    work.sxs_judgment_save(
        annotator=annotator, batch_id=sxs_batch.pk, assignment_id=first.pk, choice="better"
    )
    with pytest.raises(ValidationFailed, match=r"still open: 2, 3, 4") as exc:
        work.judgment_batch_submit(annotator=annotator, batch_id=sxs_batch.pk, submit_key="k" * 16)
    assert len(exc.value.details) == 3
    sxs_batch.refresh_from_db()
    assert sxs_batch.stage == BatchStage.RATING
    assert set(sxs_batch.assignments.values_list("state", flat=True)) == {AssignmentState.LIVE}


def test_submit_goes_straight_to_submitted_and_is_idempotent(sxs_batch, annotator):
    for a in sxs_batch.assignments.all():
        work.sxs_judgment_save(
            annotator=annotator, batch_id=sxs_batch.pk, assignment_id=a.pk, choice="better"
        )
    first = work.judgment_batch_submit(
        annotator=annotator, batch_id=sxs_batch.pk, submit_key="a" * 16, seconds=12
    )
    again = work.judgment_batch_submit(
        annotator=annotator, batch_id=sxs_batch.pk, submit_key="a" * 16, seconds=99
    )
    assert first.pk == again.pk
    # Another key is another page (a stale tab): told the batch is submitted, nothing changes.
    with pytest.raises(AlreadySubmitted, match="already been submitted"):
        work.judgment_batch_submit(annotator=annotator, batch_id=sxs_batch.pk, submit_key="b" * 16, seconds=7)
    sxs_batch.refresh_from_db()
    assert sxs_batch.stage == BatchStage.SUBMITTED and sxs_batch.writing_opened_at is None
    assert (sxs_batch.submit_key, sxs_batch.rating_seconds, sxs_batch.is_late) == ("a" * 16, 12, False)
    assert set(sxs_batch.assignments.values_list("state", flat=True)) == {AssignmentState.SUBMITTED}
    assert SxsJudgment.objects.count() == 4


def test_late_judgments_are_kept_and_counted_again(sxs_batch, annotator):
    Batch.objects.filter(pk=sxs_batch.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    assert leases_expire() == 1
    assert set(Item.objects.filter(assignments__batch=sxs_batch).values_list("active_count", flat=True)) == {
        0
    }
    for a in sxs_batch.assignments.all():
        work.sxs_judgment_save(annotator=annotator, batch_id=sxs_batch.pk, assignment_id=a.pk, choice="worse")
    batch = work.judgment_batch_submit(
        annotator=annotator, batch_id=sxs_batch.pk, submit_key=uuid.uuid4().hex
    )
    assert batch.is_late and batch.stage == BatchStage.SUBMITTED
    assert set(batch.assignments.values_list("state", flat=True)) == {AssignmentState.LATE}
    assert set(Item.objects.filter(assignments__batch=sxs_batch).values_list("active_count", flat=True)) == {
        1
    }


# --- Verification campaigns ---------------------------------------------------------------------


def test_a_verification_campaign_rates_one_random_caption_per_image_with_a_stored_seed(captioned):
    first = rating_campaign_create(name="verify 1", source_campaign_id=captioned.pk, seed=11)
    again = rating_campaign_create(name="verify 2", source_campaign_id=captioned.pk, seed=11)
    assert (first.kind, first.language, first.source_campaign, first.replication, first.batch_size) == (
        CampaignKind.RATING,
        captioned.language,
        captioned,
        3,
        15,
    )
    items = list(first.items.select_related("written_caption"))
    assert len(items) == 6 == len({i.image_id for i in items})
    for item in items:
        assert (
            item.written_caption.campaign_id == captioned.pk
            and item.written_caption.image_id == item.image_id
        )
    chosen = sorted(first.items.values_list("written_caption_id", flat=True))
    assert chosen == sorted(again.items.values_list("written_caption_id", flat=True))
    assert first.sample_seed == 11
    # Over many seeds both captions of an image get chosen: the choice is really random.
    seen = set()
    for seed in range(12):
        c = rating_campaign_create(name=f"seed {seed}", source_campaign_id=captioned.pk, seed=seed)
        seen |= set(c.items.values_list("written_caption_id", flat=True))
    assert len(seen) > 6


def test_a_verification_sample_and_its_refusals(captioned, german):
    sampled = rating_campaign_create(name="sample", source_campaign_id=captioned.pk, sample_size=4)
    assert sampled.items.count() == 4 and sampled.sample_size == 4 and sampled.sample_seed is not None
    with pytest.raises(ValidationFailed, match="Only 6 images"):
        rating_campaign_create(name="too many", source_campaign_id=captioned.pk, sample_size=7)
    with pytest.raises(ValidationFailed, match="not a caption campaign"):
        rating_campaign_create(name="of sxs", source_campaign_id=sampled.pk)
    empty = f.open_caption_campaign(images=2, language=german)
    with pytest.raises(ValidationFailed, match="no written caption"):
        rating_campaign_create(name="empty", source_campaign_id=empty.pk)
    with pytest.raises(NotFound):
        rating_campaign_create(name="missing", source_campaign_id=987654)


def test_a_verification_batch_is_rated_and_submitted_in_one_screen(captioned, german):
    verification = campaign_open(
        campaign_id=rating_campaign_create(name="verify", source_campaign_id=captioned.pk, batch_size=6).pk
    )
    rater = f.AnnotatorFactory(languages=[german], reads_english=False)
    batch, _ = batch_request(annotator=rater, campaign_id=verification.pk)
    assert set(batch.assignments.values_list("m2_side", flat=True)) == {""}
    assignments = list(batch.assignments.order_by("position"))
    for a in assignments[:-1]:
        work.rating_save(annotator=rater, batch_id=batch.pk, assignment_id=a.pk, value="good")
    with pytest.raises(ValidationFailed, match="still open: 6"):
        work.judgment_batch_submit(annotator=rater, batch_id=batch.pk, submit_key="k" * 16)
    work.rating_save(annotator=rater, batch_id=batch.pk, assignment_id=assignments[-1].pk, value="nei")
    with pytest.raises(Conflict):
        work.writing_open(annotator=rater, batch_id=batch.pk)
    work.judgment_batch_submit(annotator=rater, batch_id=batch.pk, submit_key="k" * 16)
    batch.refresh_from_db()
    assert batch.stage == BatchStage.SUBMITTED
    assert Rating.objects.filter(assignment__batch=batch).count() == 6
