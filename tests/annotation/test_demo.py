"""The embedded demo: real photographs, two systems, three languages, accounts that can work."""

from __future__ import annotations

import contextlib
import io
import uuid
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import override_settings
from PIL import Image as PILImage
from PIL import ImageStat

from annotation.assignment.engine import annotator_qualification_problem, batch_request
from annotation.models import (
    Annotator,
    AnnotatorSkill,
    Assignment,
    AssignmentState,
    Campaign,
    CampaignKind,
    CampaignState,
    CaptioningSystem,
    Image,
    Item,
    Language,
    SystemCaption,
    TextDirection,
    Tokenizer,
    WrittenCaption,
)
from annotation.services import work
from annotation.services.demo import DEMO_PASSWORD, GOOD_SYSTEM, PHOTOS, WEAK_SYSTEM, demo_load
from core.access import PROJECT_MANAGERS, RESEARCHERS
from core.errors import NoWorkAvailable

ALL_MODELS = [Image, SystemCaption, CaptioningSystem, Language, Annotator, AnnotatorSkill, Campaign, Item]


@pytest.fixture
def demo(db):
    return demo_load()


def counts() -> dict[str, int]:
    counted = {model.__name__: model.objects.count() for model in ALL_MODELS}
    counted["users"] = get_user_model().objects.count()
    return counted


def test_demo_stores_at_least_15_real_photographs(demo):
    images = list(Image.objects.filter(key__startswith="skimage-"))
    assert len(images) == len(PHOTOS) >= 15
    hashes = set()
    for image in images:
        assert image.format in {"PNG", "JPEG"}
        assert image.width * image.height >= 60_000, image.key
        assert image.license, image.key
        with image.file.open("rb") as fh, PILImage.open(fh) as im:
            im.load()
            assert im.size == (image.width, image.height)
            grey = im.convert("L")
            # A photograph, not a drawn shape: many distinct tones and real contrast.
            assert sum(1 for n in grey.histogram() if n) > 100, image.key
            assert ImageStat.Stat(grey).stddev[0] > 10, image.key
        hashes.add(image.content_hash)
    assert len(hashes) == len(images)
    assert demo.images == len(PHOTOS) and demo.images_created == len(PHOTOS)
    astronaut = Image.objects.get(key="skimage-astronaut")
    assert "public domain" in astronaut.license and astronaut.source_url.startswith("https://")


def test_two_systems_caption_every_image_in_english(demo):
    english = Language.objects.get(code="en")
    for name in [GOOD_SYSTEM, WEAK_SYSTEM]:
        system = CaptioningSystem.objects.get(name=name)
        captioned = set(
            SystemCaption.objects.filter(system=system, language=english).values_list("image_id", flat=True)
        )
        assert captioned == set(Image.objects.values_list("pk", flat=True))
    good = SystemCaption.objects.get(
        system__name=GOOD_SYSTEM, image__key="skimage-chelsea", language=english
    ).text
    weak = SystemCaption.objects.get(
        system__name=WEAK_SYSTEM, image__key="skimage-chelsea", language=english
    ).text
    assert "cat" in good and good != weak


def test_both_systems_also_caption_every_image_in_german(demo):
    for name in [GOOD_SYSTEM, WEAK_SYSTEM]:
        german = SystemCaption.objects.filter(system__name=name, language__code="de")
        assert set(german.values_list("image_id", flat=True)) == set(
            Image.objects.values_list("pk", flat=True)
        )
    good = SystemCaption.objects.get(
        system__name=GOOD_SYSTEM, image__key="skimage-chelsea", language__code="de"
    )
    weak = SystemCaption.objects.get(
        system__name=WEAK_SYSTEM, image__key="skimage-chelsea", language__code="de"
    )
    assert "Katze" in good.text and "Katze" not in weak.text


def test_three_target_languages_one_right_to_left_one_per_character(demo):
    languages = {lang.code: lang for lang in Language.objects.all()}
    assert {"de", "ar", "ja"} <= set(languages)
    assert languages["ar"].direction == TextDirection.RTL
    assert languages["de"].direction == TextDirection.LTR
    assert languages["ja"].tokenizer == Tokenizer.CHAR


def test_one_open_caption_campaign_per_language_with_qualified_annotators(demo):
    campaigns = list(
        Campaign.objects.filter(kind=CampaignKind.CAPTION).select_related("language", "prompt_system")
    )
    assert sorted(c.language.code for c in campaigns) == ["ar", "de", "ja"]
    for campaign in campaigns:
        assert campaign.state == CampaignState.OPEN
        assert (campaign.batch_size, campaign.replication) == (15, 2)
        assert campaign.prompt_system.name == GOOD_SYSTEM
        assert campaign.items.count() == len(PHOTOS)
        qualified = [
            a for a in Annotator.objects.all() if annotator_qualification_problem(a, campaign) is None
        ]
        # German has a third annotator, for the side-by-side campaign's K = 3, and a fourth for a
        # verification with K = 3 (nobody rates their own caption).
        assert len(qualified) == (4 if campaign.language.code == "de" else 2), campaign.language.code
    assert {name for name, _code, state in demo.campaigns if state == CampaignState.OPEN} == {
        c.name for c in Campaign.objects.all()
    }


def test_an_open_side_by_side_campaign_in_german_weak_against_good(demo):
    campaign = Campaign.objects.get(kind=CampaignKind.SIDE_BY_SIDE)
    assert campaign.state == CampaignState.OPEN and campaign.language.code == "de"
    assert (campaign.base_system.name, campaign.test_system.name) == (WEAK_SYSTEM, GOOD_SYSTEM)
    assert campaign.replication == 3 and campaign.sample_seed is not None
    # Annotators see the name: it must not give the systems away.
    assert GOOD_SYSTEM not in campaign.name and WEAK_SYSTEM not in campaign.name
    real = campaign.items.filter(is_control=False)
    assert real.count() == len(PHOTOS)
    assert sorted(campaign.items.filter(is_control=True).values_list("control_kind", flat=True)) == [
        "identical",
        "wrong_image",
    ]
    qualified = [a for a in Annotator.objects.all() if annotator_qualification_problem(a, campaign) is None]
    assert sorted(a.user.username for a in qualified) == ["anna-de", "ben-de", "clara-de", "dora-de"]


def test_demo_accounts_log_in_with_their_roles(client, demo):
    User = get_user_model()
    manager = User.objects.get(username="manager")
    researcher = User.objects.get(username="researcher")
    assert manager.is_staff and manager.groups.filter(name=PROJECT_MANAGERS).exists()
    assert researcher.is_staff and researcher.groups.filter(name=RESEARCHERS).exists()
    assert not manager.is_superuser and not researcher.is_superuser
    for account in demo.accounts:
        assert client.login(username=account.username, password=DEMO_PASSWORD), account.username
    annotators = User.objects.filter(annotator__isnull=False)
    assert annotators.count() == 8 and not annotators.filter(is_staff=True).exists()


def submit_whole_batch(annotator, campaign) -> int:
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assignments = list(batch.assignments.all())
    for a in assignments:
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    for a in assignments:
        work.draft_save(
            annotator=annotator,
            batch_id=batch.pk,
            assignment_id=a.pk,
            text=f"Auf diesem Foto sieht man das Motiv Nummer {a.pk}.",
            base_revision=0,
        )
    work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    return len(assignments)


def test_the_two_german_annotators_can_complete_k_equals_2(demo):
    campaign = Campaign.objects.get(language__code="de", kind=CampaignKind.CAPTION)
    anna = Annotator.objects.get(user__username="anna-de")
    ben = Annotator.objects.get(user__username="ben-de")
    assert submit_whole_batch(anna, campaign) == 15
    for _ in range(4):
        for annotator in (ben, anna):
            with contextlib.suppress(NoWorkAvailable):
                submit_whole_batch(annotator, campaign)
    done = Counter(
        Assignment.objects.filter(item__campaign=campaign, state=AssignmentState.SUBMITTED).values_list(
            "item_id", flat=True
        )
    )
    assert sorted(done.values()) == [2] * len(PHOTOS)
    assert WrittenCaption.objects.filter(campaign=campaign).count() == 2 * len(PHOTOS)


def test_the_three_german_annotators_fill_the_side_by_side_campaign_to_k_equals_3(demo):
    campaign = Campaign.objects.get(kind=CampaignKind.SIDE_BY_SIDE)
    people = [Annotator.objects.get(user__username=name) for name in ("anna-de", "ben-de", "clara-de")]
    for _ in range(3):
        for annotator in people:
            with contextlib.suppress(NoWorkAvailable):
                batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
                for a in batch.assignments.all():
                    work.sxs_judgment_save(
                        annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, choice="similar"
                    )
                work.judgment_batch_submit(
                    annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex
                )
    done = Counter(
        Assignment.objects.filter(item__campaign=campaign, state=AssignmentState.SUBMITTED).values_list(
            "item_id", flat=True
        )
    )
    assert sorted(done.values()) == [3] * campaign.items.count()


def test_demo_load_is_idempotent(demo):
    before = counts()
    manager = get_user_model().objects.get(username="manager")
    manager.set_password("changed-by-its-owner")
    manager.save()
    Campaign.objects.filter(language__code="ja").update(state=CampaignState.CLOSED)
    again = demo_load()
    assert counts() == before
    assert not again.changed and again.images == len(PHOTOS) and again.images_created == 0
    manager.refresh_from_db()
    assert manager.check_password("changed-by-its-owner")
    assert Campaign.objects.get(language__code="ja").state == CampaignState.CLOSED


@override_settings(DEBUG=True)
def test_load_demo_command_prints_the_url_and_logins_every_time(db):
    for _ in range(2):
        out = io.StringIO()
        call_command("load_demo", stdout=out)
        text = out.getvalue()
        assert "http://127.0.0.1:8000/" in text
        for username in [
            "anna-de",
            "ben-de",
            "clara-de",
            "dora-de",
            "omar-ar",
            "layla-ar",
            "yuki-ja",
            "kenji-ja",
            "manager",
            "researcher",
        ]:
            assert username in text
        assert DEMO_PASSWORD in text
        assert "Demo: side by side in German" in text and "dora-de in turn" in text
    assert Image.objects.count() == len(PHOTOS)


@override_settings(DEBUG=True)
def test_load_demo_dry_run_stores_nothing(db):
    out = io.StringIO()
    call_command("load_demo", "--dry-run", stdout=out)
    assert "Dry run" in out.getvalue()
    assert Image.objects.count() == 0 and get_user_model().objects.count() == 0


def test_load_demo_refuses_a_deployment_without_force(db):
    with pytest.raises(CommandError, match="DEBUG is off"):
        call_command("load_demo", stdout=io.StringIO())
    assert get_user_model().objects.count() == 0
    call_command("load_demo", "--force", stdout=io.StringIO())
    assert get_user_model().objects.filter(username="manager").exists()
