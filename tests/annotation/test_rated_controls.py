"""Issue 14: control items on caption (screen 1) and verification campaigns, as side by side has.

A control looks like any image on the screen; a caption of another image must be rated BAD or
MEDIUM, a human reference caption must not be rated BAD. Pass rates per annotator are flagged
against the campaign's threshold, shown in the admin, and controls never enter a number.
"""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from annotation.assignment.engine import batch_request
from annotation.models import Batch, CampaignKind, Item, Rating, WrittenCaption
from annotation.services import work
from annotation.services.controls import campaign_controls_add
from core.errors import NotFound, NoWorkAvailable, ValidationFailed
from evaluation.human.selectors import quality_rows, rated_controls
from evaluation.research.exports import export_prepare
from tests import factories as f

pytestmark = pytest.mark.django_db


def _controlled(campaign, *, mismatched=2, per_batch=1, **kwargs):
    campaign_controls_add(
        campaign_id=campaign.pk,
        mismatched=mismatched,
        controls_per_batch=per_batch,
        control_min_judgments=kwargs.pop("minimum", 1),
        seed=7,
        **kwargs,
    )
    campaign.refresh_from_db()
    return campaign


def _caption_batch_done(annotator, campaign, *, control_value="bad", value="good"):
    """Request, rate (controls with ``control_value``), write and submit one caption batch."""
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assignments = list(batch.assignments.select_related("item").order_by("position"))
    for a in assignments:
        rated = control_value if a.item.is_control else value
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value=rated)
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    for a in assignments:
        if not a.item.is_control:
            work.draft_save(
                annotator=annotator,
                batch_id=batch.pk,
                assignment_id=a.pk,
                text=f"Ein Bild {a.item.image.key}",
                base_revision=0,
            )
    work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    return batch


def test_mismatched_controls_show_the_caption_of_another_image(campaign):
    items = campaign_controls_add(campaign_id=campaign.pk, mismatched=3, controls_per_batch=1, seed=1)
    assert len(items) == 3
    for item in Item.objects.filter(campaign=campaign, is_control=True).select_related("prompt_caption"):
        assert item.control_kind == "mismatched"
        assert item.prompt_caption.image_id != item.image_id
    campaign.refresh_from_db()
    assert campaign.controls_per_batch == 1


def test_reference_controls_take_the_reference_systems_caption(campaign):
    english = campaign.prompt_system.captions.first().language
    reference = f.SystemFactory(name="human references")
    images = list(campaign.items.values_list("image_id", flat=True))
    for image_id in images[:2]:
        f.SystemCaptionFactory(system=reference, language=english, image_id=image_id, text="A human caption")
    campaign_controls_add(
        campaign_id=campaign.pk, reference=2, reference_system="human references", controls_per_batch=1
    )
    controls = Item.objects.filter(campaign=campaign, control_kind="reference").select_related(
        "prompt_caption"
    )
    assert {c.image_id for c in controls} == set(images[:2])
    assert {c.prompt_caption.system_id for c in controls} == {reference.pk}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "at least one control"),
        ({"mismatched": -1}, "whole number"),
        ({"mismatched": 99}, "At most 6"),
        ({"reference": 1}, "reference captions"),
        ({"reference": 1, "reference_system": "nobody"}, "no captioning system"),
        ({"mismatched": 1, "controls_per_batch": 0}, "Controls per batch"),
        ({"mismatched": 1, "control_pass_threshold": 1.5}, "share"),
    ],
)
def test_bad_control_requests_change_nothing(campaign, kwargs, message):
    before = Item.objects.count()
    with pytest.raises(ValidationFailed, match=message):
        campaign_controls_add(campaign_id=campaign.pk, **kwargs)
    assert Item.objects.count() == before
    campaign.refresh_from_db()
    assert campaign.controls_per_batch == 0


def test_side_by_side_campaigns_and_unknown_ones_are_refused(db):
    sxs = f.open_sxs_campaign(images=4, batch_size=2, replication=3)
    with pytest.raises(ValidationFailed, match="Side-by-side"):
        campaign_controls_add(campaign_id=sxs.pk, mismatched=1)
    with pytest.raises(NotFound):
        campaign_controls_add(campaign_id=987654, mismatched=1)


def test_each_batch_gets_its_controls_on_top_and_never_an_image_twice(campaign, annotator):
    _controlled(campaign, mismatched=4, per_batch=1)
    seen_images = []
    for _ in range(3):
        try:
            batch = _caption_batch_done(annotator, campaign)
        except NoWorkAvailable:
            break
        kinds = [a.item.is_control for a in batch.assignments.select_related("item")]
        assert kinds.count(True) <= 1
        assert kinds.count(False) <= campaign.batch_size
        seen_images += list(batch.assignments.values_list("item__image_id", flat=True))
    assert len(seen_images) == len(set(seen_images)), "an image came back to the same annotator"
    # Controls keep no counter (they have no K), real items are counted as before.
    assert set(
        Item.objects.filter(campaign=campaign, is_control=True).values_list("active_count", flat=True)
    ) == {0}


def test_screen_2_leaves_controls_out_and_submit_writes_no_caption_for_them(
    annotator_client, annotator, campaign
):
    # 4 controls on 6 images: at least one is on an image outside the batch's 3.
    _controlled(campaign, mismatched=4, per_batch=1)
    response = annotator_client.post(reverse("annotation:campaign_work", args=[campaign.pk]))
    batch = Batch.objects.get(annotator=annotator)
    control = batch.assignments.get(item__is_control=True)
    page1 = annotator_client.get(reverse("annotation:screen1", args=[batch.pk])).content.decode()
    assert control.item.prompt_caption.text in page1
    assert "control" not in page1.lower().replace("aria-controls", "")
    for a in batch.assignments.all():
        annotator_client.post(
            reverse("annotation:api_rating", args=[batch.pk]),
            {"assignment": a.pk, "value": "medium"},
            content_type="application/json",
        )
    annotator_client.post(
        reverse("annotation:api_open_writing", args=[batch.pk]), {}, content_type="application/json"
    )
    page2 = annotator_client.get(reverse("annotation:screen2", args=[batch.pk])).content.decode()
    assert f'data-assignment="{control.pk}"' not in page2
    assert f"Image 1 of {campaign.batch_size}" in page2 and f"Image {campaign.batch_size} of" in page2
    # Its draft cannot be written either: the control is not an image of screen 2.
    r = annotator_client.post(
        reverse("annotation:api_draft", args=[batch.pk]),
        {"assignment": control.pk, "text": "Ein Hund", "base_revision": 0},
        content_type="application/json",
    )
    assert r.status_code == 404
    assert response.status_code == 302
    for a in batch.assignments.filter(item__is_control=False):
        annotator_client.post(
            reverse("annotation:api_draft", args=[batch.pk]),
            {"assignment": a.pk, "text": f"Ein Bild {a.pk}", "base_revision": 0},
            content_type="application/json",
        )
    r = annotator_client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": "k" * 12},
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    assert WrittenCaption.objects.filter(assignment=control).count() == 0
    assert WrittenCaption.objects.filter(assignment__batch=batch).count() == campaign.batch_size
    control.refresh_from_db()
    assert control.state == "submitted"


def test_pass_rates_flag_annotators_below_the_threshold(campaign, annotator, other_annotator):
    _controlled(campaign, mismatched=4, per_batch=1, control_pass_threshold=0.75)
    _caption_batch_done(annotator, campaign, control_value="good")  # fails: another image's caption
    _caption_batch_done(other_annotator, campaign, control_value="medium")  # passes
    result = rated_controls(campaign)
    rows = {row.username: row for row in result.controls}
    assert rows["anna"].n_controls == 1 and rows["anna"].n_passed == 0 and rows["anna"].flagged
    assert rows["otto"].n_passed == 1 and not rows["otto"].flagged
    assert [row.username for row in result.flagged] == ["anna"]


def test_too_few_control_ratings_are_not_judged(campaign, annotator):
    _controlled(campaign, mismatched=4, per_batch=1, minimum=5)
    _caption_batch_done(annotator, campaign, control_value="good")
    (row,) = rated_controls(campaign).controls
    assert row.too_few and not row.flagged


def test_controls_never_enter_exports_or_per_caption_ratings(campaign, annotator):
    _controlled(campaign, mismatched=4, per_batch=1)
    batch = _caption_batch_done(annotator, campaign, control_value="bad")
    control = batch.assignments.get(item__is_control=True)
    assert Rating.objects.filter(assignment=control).exists()
    assert not Rating.objects.counted().filter(assignment=control).exists()
    exported = "".join(export_prepare(kind="ratings", fmt="csv", campaign_id=campaign.pk).chunks())
    assert exported.count("\r\n") == 1 + campaign.batch_size  # header + the real images only
    assert str(Rating.objects.get(assignment=control).pk) not in [
        line.split(",")[0] for line in exported.splitlines()[1:]
    ]


@pytest.fixture
def small_batches(captioned):
    """A verification campaign over the 6 captioned images, in batches of 2."""
    from annotation.services.campaigns import campaign_open, rating_campaign_create

    created = rating_campaign_create(name="Prüfung klein", source_campaign_id=captioned.pk, batch_size=2)
    return campaign_open(campaign_id=created.pk)


def test_verification_controls_are_rated_like_any_caption_and_left_out_of_table_2(small_batches):
    verification = small_batches
    rater = f.AnnotatorFactory(user__username="rita", languages=[verification.language])
    # 4 controls on 6 images, 2 per batch: at least 2 are on images outside the batch's 2.
    campaign_controls_add(
        campaign_id=verification.pk, mismatched=4, controls_per_batch=2, control_min_judgments=1
    )
    verification.refresh_from_db()
    batch, _ = batch_request(annotator=rater, campaign_id=verification.pk)
    controls = list(batch.assignments.filter(item__is_control=True).select_related("item__written_caption"))
    assert len(controls) == 2
    for c in controls:
        assert c.item.written_caption.image_id != c.item.image_id
    page = batch.assignments.count()
    for a in batch.assignments.select_related("item"):
        work.rating_save(
            annotator=rater,
            batch_id=batch.pk,
            assignment_id=a.pk,
            value="good" if a.item.is_control else "excellent",
        )
    work.judgment_batch_submit(annotator=rater, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    (row,) = rated_controls(verification).controls
    assert (row.n_controls, row.n_passed, row.flagged) == (2, 0, True)
    (quality,) = quality_rows(campaign_id=verification.pk)
    assert quality.n_ratings == page - 2
    assert quality.pct_good_plus == 100.0


def test_reference_control_in_verification_shows_the_reference_text(small_batches):
    verification = small_batches
    reference = f.SystemFactory(name="refs")
    rater = f.AnnotatorFactory(user__username="rita", languages=[verification.language])
    image_id = verification.items.order_by("image__key").last().image_id
    f.SystemCaptionFactory(
        system=reference, language=verification.language, image_id=image_id, text="Ein Referenzsatz"
    )
    campaign_controls_add(
        campaign_id=verification.pk, reference=1, reference_system=reference.pk, controls_per_batch=1
    )
    from annotation.screen_rows import verification_rows

    # Real work first until the control's image is not among the batch's images.
    Item.objects.filter(campaign=verification, image_id=image_id, is_control=False).update(
        active_count=verification.replication
    )
    batch, _ = batch_request(annotator=rater, campaign_id=verification.pk)
    rows = verification_rows(batch)
    control = batch.assignments.get(item__is_control=True)
    assert [r["caption"] for r in rows if r["assignment_id"] == control.pk] == ["Ein Referenzsatz"]
    assert verification.kind == CampaignKind.RATING


# --- Admin: the page that adds controls, the panel that shows the pass rates ---------------------------


def test_manager_adds_controls_in_the_admin_and_sees_flags(pm_client, campaign, annotator):
    url = reverse("admin:annotation_campaign_add_controls", args=[campaign.pk])
    page = pm_client.get(url)
    assert page.status_code == 200
    # 4 controls on 6 images: whatever 3 images the batch takes, one control's image is left for it
    # (with 3, all three were in the batch one time in 20, and the batch had no control).
    r = pm_client.post(
        url,
        {
            "mismatched": 4,
            "reference": 0,
            "controls_per_batch": 1,
            "control_pass_threshold": 0.75,
            "control_min_judgments": 1,
        },
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    assert Item.objects.filter(campaign=campaign, is_control=True).count() == 4
    _caption_batch_done(annotator, campaign, control_value="excellent")
    change = pm_client.get(reverse("admin:annotation_campaign_change", args=[campaign.pk])).content.decode()
    assert 'id="rated-controls"' in change
    assert "0 of 1 passed — flagged" in change
    assert 'data-annotator="anna"' in change


def test_bad_input_on_the_admin_page_shows_why_and_changes_nothing(pm_client, campaign):
    url = reverse("admin:annotation_campaign_add_controls", args=[campaign.pk])
    r = pm_client.post(
        url,
        {
            "mismatched": 0,
            "reference": 2,
            "controls_per_batch": 1,
            "control_pass_threshold": 0.75,
            "control_min_judgments": 5,
        },
    )
    assert r.status_code == 200
    assert "human reference captions" in r.content.decode()
    assert not Item.objects.filter(campaign=campaign, is_control=True).exists()


def test_only_managers_add_controls(researcher_client, client, campaign, annotator):
    url = reverse("admin:annotation_campaign_add_controls", args=[campaign.pk])
    assert researcher_client.get(url).status_code == 403
    assert researcher_client.post(url, {"mismatched": 1}).status_code == 403
    client.force_login(annotator.user)
    assert client.get(url).status_code == 302  # the admin's login page: annotators are not staff
    assert not Item.objects.filter(is_control=True).exists()


def test_side_by_side_campaigns_have_no_add_controls_page(pm_client):
    sxs = f.open_sxs_campaign(images=3, batch_size=2, replication=3)
    assert pm_client.get(reverse("admin:annotation_campaign_add_controls", args=[sxs.pk])).status_code == 404
    assert pm_client.get(reverse("admin:annotation_campaign_add_controls", args=[99999])).status_code == 404


def test_the_command_adds_controls_and_its_dry_run_stores_nothing(campaign):
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command("add_controls", campaign.pk, "--mismatched", "2", "--dry-run", stdout=out)
    assert "Dry run: would add 2" in out.getvalue()
    assert not Item.objects.filter(is_control=True).exists()
    call_command("add_controls", campaign.pk, "--mismatched", "2", "--per-batch", "1", stdout=out)
    assert Item.objects.filter(campaign=campaign, is_control=True).count() == 2
    with pytest.raises(CommandError, match="reference captions"):
        call_command("add_controls", campaign.pk, "--reference", "1")
    assert Item.objects.filter(campaign=campaign, is_control=True).count() == 2


def test_the_controls_export_has_the_pass_rates(campaign, annotator, other_annotator):
    _controlled(campaign, mismatched=4, per_batch=1)
    _caption_batch_done(annotator, campaign, control_value="excellent")
    _caption_batch_done(other_annotator, campaign, control_value="bad")
    text = "".join(export_prepare(kind="controls", fmt="csv", campaign_id=campaign.pk).chunks())
    lines = text.splitlines()
    assert (
        lines[0] == "campaign_id,campaign,annotator,control_items,passed,pass_rate,threshold,too_few,flagged"
    )
    assert lines[1].endswith(",1,0,0.0,0.75,false,true") and lines[2].endswith(",1,1,1.0,0.75,false,false")


def test_side_by_side_control_rates_match_the_results_page(db):
    from evaluation.human.selectors import sxs_results

    campaign = f.open_sxs_campaign(images=6, batch_size=3, replication=3, controls_identical=2)
    rater = f.AnnotatorFactory(languages=[campaign.language], reads_english=False)
    f.sxs_judged_all(rater, campaign, lambda key: 0, control_score=lambda kind: 3)
    ours = [(r.username, r.n_controls, r.n_passed) for r in rated_controls(campaign).controls]
    theirs = [(r.username, r.n_controls, r.n_passed) for r in sxs_results(campaign, n_boot=10).controls]
    assert ours == theirs and ours


def test_progress_counts_real_images_only(pm_client, campaign, annotator):
    from annotation.selectors import campaign_progress, campaigns_progress, dashboard_cards

    _controlled(campaign, mismatched=4, per_batch=1)
    progress = campaigns_progress([campaign.pk])[campaign.pk]
    assert (progress.items, progress.control_items) == (6, 4)
    assert campaign_progress(campaign)["items"] == 6
    (card,) = dashboard_cards(annotator)
    assert card.items_total == 6
    listing = pm_client.get(reverse("admin:annotation_campaign_changelist")).content.decode()
    assert "0 / 12 captions (0%) · 6 images" in listing
