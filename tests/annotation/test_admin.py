"""The admin: who reaches it (RELIABILITY 15), what the campaign page shows, its actions,
escaping (RELIABILITY 20), and list pages whose query count does not grow with the rows."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.assignment.engine import batch_request
from annotation.models import (
    Annotator,
    Batch,
    BatchStage,
    Campaign,
    CampaignState,
    CaptioningSystem,
    Image,
    Language,
    SystemCaption,
    WrittenCaption,
)
from annotation.services import work
from core.access import PROJECT_MANAGERS, RESEARCHERS, roles_ensure
from tests import factories as f

MARKUP = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"

MODELS = [Language, Annotator, Image, CaptioningSystem, SystemCaption, Campaign, Batch, WrittenCaption]


def admin_url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def submit_batch(annotator, campaign, *, text=None, seconds=(40.0, 80.0)) -> Batch:
    """One whole batch through the services: request, rate all, open screen 2, write, submit."""
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assignments = list(batch.assignments.order_by("position"))
    for a in assignments:
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
    work.writing_open(annotator=annotator, batch_id=batch.pk, rating_seconds=seconds[0])
    for a in assignments:
        caption = text(a) if text else f"Ein Bild Nummer {a.pk} von {annotator}"
        work.draft_save(
            annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, text=caption, base_revision=0
        )
    return work.batch_submit(
        annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex, writing_seconds=seconds[1]
    )


@pytest.fixture
def worked_campaign(campaign, annotator, other_annotator):
    """The conftest campaign (6 images, N=3, K=2) after three submitted batches:
    three images with 2 captions, three with 1."""
    submit_batch(annotator, campaign)
    submit_batch(other_annotator, campaign)
    submit_batch(annotator, campaign)
    return campaign


def one_of_each(worked_campaign) -> dict:
    return {
        Language: worked_campaign.language,
        Annotator: Annotator.objects.first(),
        Image: Image.objects.first(),
        CaptioningSystem: worked_campaign.prompt_system,
        SystemCaption: SystemCaption.objects.first(),
        Campaign: worked_campaign,
        Batch: Batch.objects.first(),
        WrittenCaption: WrittenCaption.objects.first(),
    }


# --- Who gets in ----------------------------------------------------------------------------


def test_every_admin_page_opens_for_a_project_manager(pm_client, worked_campaign):
    for model, obj in one_of_each(worked_campaign).items():
        for url in [admin_url(model, "changelist"), admin_url(model, "change", obj.pk)]:
            response = pm_client.get(url)
            assert response.status_code == 200, url
            # CSP allows no inline style: the pages must not need any.
            assert " style=" not in response.content.decode(), url
    for model in [Language, Annotator, Image, CaptioningSystem, SystemCaption, Campaign]:
        assert pm_client.get(admin_url(model, "add")).status_code == 200, model
    # Work records are never written by hand.
    for model in [Batch, WrittenCaption]:
        assert pm_client.get(admin_url(model, "add")).status_code == 403, model


def test_annotators_and_other_non_staff_users_never_reach_the_admin(client, annotator, worked_campaign):
    plain = f.UserFactory(username="nobody")
    for user in [annotator.user, plain]:
        client.force_login(user)
        for model, obj in one_of_each(worked_campaign).items():
            for url in [admin_url(model, "changelist"), admin_url(model, "change", obj.pk)]:
                response = client.get(url)
                assert response.status_code == 302, url
                assert response["Location"].startswith(reverse("admin:login")), url
        response = client.post(
            admin_url(Campaign, "changelist"),
            {"action": "close_campaigns", "_selected_action": [worked_campaign.pk]},
        )
        assert response.status_code == 302
    worked_campaign.refresh_from_db()
    assert worked_campaign.state == CampaignState.OPEN


def test_researchers_read_but_do_not_write_campaigns(client, researcher, worked_campaign):
    client.force_login(researcher)
    for model, obj in one_of_each(worked_campaign).items():
        assert client.get(admin_url(model, "changelist")).status_code == 200, model
        assert client.get(admin_url(model, "change", obj.pk)).status_code == 200, model
    page = client.get(admin_url(Campaign, "change", worked_campaign.pk)).content.decode()
    assert 'name="_save"' not in page
    assert 'id="progress-histogram"' in page  # reading includes the progress figures
    assert client.get(admin_url(Campaign, "add")).status_code == 403
    response = client.post(
        admin_url(Campaign, "change", worked_campaign.pk),
        {"name": "renamed", "batch_size": 3, "lease_minutes": 30},
    )
    assert response.status_code == 403
    changelist = client.get(admin_url(Campaign, "changelist")).content.decode()
    assert "close_campaigns" not in changelist
    client.post(
        admin_url(Campaign, "changelist"),
        {"action": "close_campaigns", "_selected_action": [worked_campaign.pk]},
    )
    worked_campaign.refresh_from_db()
    assert (worked_campaign.name, worked_campaign.state) != ("renamed", CampaignState.CLOSED)
    assert worked_campaign.state == CampaignState.OPEN


def test_roles_ensure_is_idempotent_and_researchers_only_view(roles):
    roles_ensure()
    # The same function serves a data migration, on the historical app registry.
    roles_ensure(apps=MigrationExecutor(connection).loader.project_state().apps)
    pm = Group.objects.get(name=PROJECT_MANAGERS)
    researchers = Group.objects.get(name=RESEARCHERS)
    pm_codenames = set(
        pm.permissions.filter(content_type__app_label="annotation").values_list("codename", flat=True)
    )
    assert {"add_campaign", "change_campaign", "delete_campaign", "view_campaign"} <= pm_codenames
    assert "change_user" not in set(pm.permissions.values_list("codename", flat=True))
    research = set(researchers.permissions.values_list("codename", flat=True))
    assert "view_campaign" in research and "view_writtencaption" in research
    assert all(codename.startswith("view_") for codename in research)
    assert Group.objects.filter(name__in=[PROJECT_MANAGERS, RESEARCHERS]).count() == 2


# --- The campaign page ------------------------------------------------------------------------


def histogram_of(page: str) -> dict[int, int]:
    table = page[page.index('id="progress-histogram"') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r'data-captions="(\d+)">\s*<td>[^<]*</td>\s*<td class="num">(\d+)</td>', table)
    return {int(k): int(n) for k, n in rows}


def test_campaign_page_shows_the_fill_histogram_batches_and_annotators(pm_client, worked_campaign):
    page = pm_client.get(admin_url(Campaign, "change", worked_campaign.pk)).content.decode()
    assert histogram_of(page) == {0: 0, 1: 3, 2: 3}
    page = " ".join(page.split())
    assert "3 of 6 images have 2 or more captions (50%)" in page
    batches = page[page.index('id="progress-batches"') :]
    assert '<td>submitted</td><td class="num">3</td>' in batches
    annotators = page[page.index('id="progress-annotators"') :]
    # anna: 2 batches, 6 captions; otto: 1 batch, 3 captions; screens 40 s + 80 s = 2 min.
    assert re.search(r"<td>anna</td>.*?<td class=\"num\">2</td>.*?<td class=\"num\">6</td>", annotators, re.S)
    assert re.search(r"<td>otto</td>.*?<td class=\"num\">1</td>.*?<td class=\"num\">3</td>", annotators, re.S)
    assert "2 min 00 s" in annotators


def test_campaign_changelist_summarises_progress(pm_client, worked_campaign):
    page = pm_client.get(admin_url(Campaign, "changelist")).content.decode()
    assert "9 / 12 captions (75%) · 6 images" in page


# --- Actions ----------------------------------------------------------------------------------


def run_action(client, action: str, *campaigns):
    return client.post(
        admin_url(Campaign, "changelist"),
        {"action": action, "_selected_action": [c.pk for c in campaigns]},
        follow=True,
    )


def messages_of(response) -> list[tuple[str, str]]:
    return [(m.level_tag, m.message) for m in response.context["messages"]]


def test_open_action_opens_and_reports_what_cannot_open(pm_client, german):
    english = f.LanguageFactory(code="en", name="English")
    system = f.SystemFactory()
    f.SystemCaptionFactory(system=system, language=english)
    ready = f.CampaignFactory(name="ready", language=german, prompt_system=system)
    empty = f.CampaignFactory(name="empty", language=german)  # its system has no caption
    response = run_action(pm_client, "open_campaigns", ready, empty)
    msgs = messages_of(response)
    assert ("success", "Opened: ready.") in msgs
    assert any(level == "error" and "has no image to annotate" in text for level, text in msgs)
    ready.refresh_from_db()
    empty.refresh_from_db()
    assert (ready.state, ready.items.count()) == (CampaignState.OPEN, 1)
    assert empty.state == CampaignState.DRAFT


def test_close_action_closes_and_reports_a_never_opened_campaign(pm_client, campaign, german):
    draft = f.CampaignFactory(name="draft one", language=german)
    response = run_action(pm_client, "close_campaigns", campaign, draft)
    msgs = messages_of(response)
    assert ("success", f"Closed: {campaign.name}.") in msgs
    assert ("error", "“draft one” was never opened.") in msgs
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.CLOSED


def test_expire_action_returns_stale_batches_to_the_pool(pm_client, campaign, annotator):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    Batch.objects.filter(pk=batch.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    response = run_action(pm_client, "expire_stale_leases", campaign)
    assert any(
        level == "success" and text.startswith("Expired 1 batch ") for level, text in messages_of(response)
    )
    batch.refresh_from_db()
    assert batch.stage == BatchStage.EXPIRED
    assert set(campaign.items.values_list("active_count", flat=True)) == {0}


def test_opened_campaign_cannot_be_deleted_or_have_its_protocol_changed(pm_client, campaign):
    page = pm_client.get(admin_url(Campaign, "change", campaign.pk)).content.decode()
    assert 'name="replication"' not in page and 'name="language"' not in page
    assert pm_client.get(admin_url(Campaign, "delete", campaign.pk)).status_code == 403


# --- Images -------------------------------------------------------------------------------------


def test_image_changelist_shows_thumbnails_without_inline_styles(pm_client, db):
    image = f.ImageFactory(key="thumb-me")
    page = pm_client.get(admin_url(Image, "changelist")).content.decode()
    src = reverse("annotation:image", args=[image.pk])
    assert f'<img src="{src}" class="admin-thumb"' in page
    assert "css/admin.css" in page
    tag = re.search(r"<img [^>]*admin-thumb[^>]*>", page).group(0)
    assert "style" not in tag
    # The thumbnail URL really serves the picture to staff.
    assert pm_client.get(src).status_code == 200
    # The change page previews through the same view and never links the raw media file.
    change = pm_client.get(admin_url(Image, "change", image.pk)).content.decode()
    assert f'<img src="{src}" class="admin-preview"' in change
    assert image.file.url not in change


def test_project_manager_uploads_an_image_through_the_image_service(pm_client, db):
    upload = SimpleUploadedFile("photo.png", f.png_bytes(size=(32, 24)), content_type="image/png")
    response = pm_client.post(
        admin_url(Image, "add"), {"key": "uploaded-1", "upload": upload, "license": "CC0"}, follow=True
    )
    assert response.status_code == 200
    image = Image.objects.get(key="uploaded-1")
    assert (image.format, image.width, image.height, image.license) == ("PNG", 32, 24, "CC0")
    assert image.content_hash and image.file

    fake = SimpleUploadedFile("evil.png", b"<svg onload=alert(1)></svg>", content_type="image/png")
    response = pm_client.post(admin_url(Image, "add"), {"key": "uploaded-2", "upload": fake})
    assert response.status_code == 200  # the form again, with the reason
    assert "not an image" in response.content.decode()
    assert not Image.objects.filter(key="uploaded-2").exists()


# --- Escaping (RELIABILITY 20) ------------------------------------------------------------------


def test_markup_in_captions_and_names_is_escaped_everywhere_in_the_admin(pm_client, german, annotator):
    campaign = f.open_caption_campaign(images=3, batch_size=3, language=german, name=f"camp {MARKUP}")
    SystemCaption.objects.filter(image__items__campaign=campaign).update(text=f"prompt {MARKUP}")
    CaptioningSystem.objects.filter(pk=campaign.prompt_system_id).update(name=f"sys {MARKUP}")
    Image.objects.filter(items__campaign=campaign).update(license=f"lic {MARKUP}")
    # Enough of its own words not to be a near copy of the prompt (annotation.caption_checks).
    submit_batch(annotator, campaign, text=lambda a: f"Ein Hund im Garten neben dem Haus {MARKUP} {a.pk}")
    Annotator.objects.filter(pk=annotator.pk).update(pseudonym="A-<b>x</b>")
    caption = WrittenCaption.objects.first()
    batch = Batch.objects.first()

    pages = [
        admin_url(WrittenCaption, "changelist"),
        admin_url(WrittenCaption, "change", caption.pk),
        admin_url(SystemCaption, "changelist"),
        admin_url(CaptioningSystem, "changelist"),
        admin_url(Image, "changelist"),
        admin_url(Campaign, "changelist"),
        admin_url(Campaign, "change", campaign.pk),
        admin_url(Batch, "change", batch.pk),
    ]
    for url in pages:
        page = pm_client.get(url).content.decode()
        assert ESCAPED in page, url
        assert MARKUP not in page, url
    for url in [admin_url(Annotator, "changelist"), admin_url(Campaign, "change", campaign.pk)]:
        page = pm_client.get(url).content.decode()
        assert "A-&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page, url

    response = run_action(pm_client, "close_campaigns", campaign)
    assert MARKUP not in response.content.decode()
    assert ESCAPED in response.content.decode()


# --- Speed: list pages do a fixed number of queries, whatever the number of rows ----------------


def changelist_query_counts(client) -> dict[str, int]:
    counts = {}
    for model in MODELS:
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(admin_url(model, "changelist"))
        assert response.status_code == 200
        counts[model._meta.model_name] = len(ctx.captured_queries)
    return counts


def test_list_pages_do_not_grow_queries_with_rows(
    pm_client, german, annotator, django_assert_max_num_queries
):
    def add_campaigns(n):
        for _ in range(n):
            campaign = f.open_caption_campaign(images=10, batch_size=10, replication=1, language=german)
            submit_batch(annotator, campaign)

    add_campaigns(2)
    few = changelist_query_counts(pm_client)
    add_campaigns(18)  # 20 campaigns, 200 written captions, 200 images, 20 systems, 20 batches
    assert WrittenCaption.objects.count() == 200
    many = changelist_query_counts(pm_client)
    assert many == few
    with django_assert_max_num_queries(12):
        pm_client.get(admin_url(Campaign, "changelist"))
    # The change page's panels each cost a fixed few queries (recruitment and onboarding 3, control
    # items 2), whatever the rows.
    with django_assert_max_num_queries(22):
        pm_client.get(admin_url(Campaign, "change", Campaign.objects.first().pk))
