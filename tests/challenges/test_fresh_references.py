"""Fresh references (issue 35, item 5): a benchmark language's second references, written on the platform's
own caption campaign, kept by their verification ratings and sealed; every entry is scored on both, and the
leaderboard shows each entry's rank on them. A public dataset's references are flagged wherever they are
scored."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from challenges.fresh import fresh_references_attach
from challenges.models import BenchmarkLanguage, SubmissionScore
from core.errors import Conflict, ValidationFailed
from tests import factories as f
from tests.challenges.conftest import SECRET, submit

WORDS = ["hund", "katze", "strand", "haus", "baum", "auto", "berg", "see", "stadt"]


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


def fresh_text(image) -> str:
    return f"eine frische beschreibung von bild {image.key} mit eigenen worten"


@pytest.fixture
def fresh_campaign(bench):
    """A German caption campaign over the test phase's images (their English prompt captions), every image
    captioned once with :func:`fresh_text`."""
    from annotation.services.campaigns import campaign_open

    system = f.SystemFactory()
    for image in bench["test_images"]:
        f.SystemCaptionFactory(system=system, language=bench["en"], image=image)
    campaign = f.CampaignFactory(
        name="Frische Referenzen", language=bench["de"], prompt_system=system, batch_size=8, replication=1
    )
    campaign = campaign_open(campaign_id=campaign.pk)
    writer = f.AnnotatorFactory(user__username="wanda", languages=[bench["de"]])
    f.written_captions(campaign, annotators=[writer], text=lambda a: fresh_text(a.item.image))
    return campaign


def memorised(bench) -> bytes:
    """The test images' first public reference, word for word: what a model trained on them would write."""
    index = {image.pk: 6 + n for n, image in enumerate(bench["test_images"])}
    return json.dumps(
        [
            {
                "image_id": int(image.key),
                "caption": f"ein {WORDS[index[image.pk] % 9]} am {WORDS[index[image.pk] % 9]} {SECRET}{index[image.pk]}x0",
            }
            for image in bench["test_images"]
        ]
    ).encode()


def own_words(bench) -> bytes:
    return json.dumps(
        [{"image_id": int(image.key), "caption": fresh_text(image)} for image in bench["test_images"]]
    ).encode()


def test_entries_are_ranked_on_both_and_the_rank_change_shows_memorisation(bench, fresh_campaign, pm_client):
    done = fresh_references_attach(
        benchmark_id=bench["benchmark"].pk,
        language_code="de",
        campaign_id=fresh_campaign.pk,
        min_verified_rating="",
    )
    assert [(c.phase.name, c.covered, c.images) for c in done.coverage] == [
        ("validation", 0, 6),
        ("test", 8, 8),
    ]
    assert "sealed" in done.summary() and "test: 8 of 8 images" in done.summary()
    fresh_campaign.refresh_from_db()
    assert fresh_campaign.captions_sealed

    submit(bench, "test", data=memorised(bench), method_name="memoriser")
    submit(bench, "test", data=own_words(bench), method_name="own words")
    board_url = reverse("challenges:leaderboard", args=[bench["test"].pk]) + "?language=de&metric=CIDEr-D"
    member = Client()
    member.force_login(bench["member"])
    page = member.get(board_url).content.decode()
    assert 'id="fresh"' in page and "Fresh references" in page
    rows = member.get(
        reverse("challenges:leaderboard-json", args=[bench["test"].pk]) + "?language=de&metric=CIDEr-D"
    ).json()
    rows = rows["rows"]
    by_method = {row["method"]: row for row in rows}
    assert by_method["memoriser"]["rank"] == 1 and by_method["memoriser"]["fresh_rank"] == 2
    assert by_method["memoriser"]["rank_change"] == -1 and by_method["own words"]["rank_change"] == 1
    assert by_method["own words"]["fresh_value"] > by_method["memoriser"]["fresh_value"]
    # A team sees only the public part of the fresh scores too, while the phase runs.
    assert {row["split"] for row in rows} == {"public"}
    assert "▼1" in page and "▲1" in page
    # The submission page has a block of its own for them.
    entry = SubmissionScore.objects.filter(fresh=True).first().submission
    page = member.get(reverse("challenges:submission", args=[entry.pk])).content.decode()
    assert 'id="scores-de-fresh"' in page
    # The validation phase, which the fresh references do not cover, is scored on the public ones only.
    val = submit(bench, "val")
    assert not SubmissionScore.objects.filter(submission=val, fresh=True).exists()
    assert SubmissionScore.objects.filter(submission=val, fresh=False).exists()
    # No fresh caption reaches a team's page.
    assert "frische beschreibung" not in member.get(board_url).content.decode()


def test_a_phase_partly_covered_is_not_scored_on_them_and_says_why(bench, fresh_campaign):
    fresh_references_attach(
        benchmark_id=bench["benchmark"].pk,
        language_code="de",
        campaign_id=fresh_campaign.pk,
        min_verified_rating="",
    )
    bench["test"].image_set.images.add(bench["val_images"][0])  # an image no fresh caption has
    data = json.dumps(
        [
            {"image_id": int(im.key), "caption": "ein hund"}
            for im in [*bench["test_images"], bench["val_images"][0]]
        ]
    ).encode()
    entry = submit(bench, "test", data=data)
    entry.refresh_from_db()
    assert not entry.scores.filter(fresh=True).exists()
    assert (
        "1 of the phase's 9 images have no fresh de reference"
        in entry.signatures["de"]["fresh references not computed"]
    )


def test_sealed_captions_are_never_exported_nor_listed_by_the_research_api(
    bench, fresh_campaign, researcher_client
):
    from evaluation.research.exports.services import export_prepare

    fresh_references_attach(
        benchmark_id=bench["benchmark"].pk,
        language_code="de",
        campaign_id=fresh_campaign.pk,
        min_verified_rating="",
    )
    with pytest.raises(Conflict, match="hidden references of a test phase"):
        export_prepare(kind="captions", campaign_id=fresh_campaign.pk, fmt="coco")
    listed = researcher_client.get("/api/captions/").json()
    texts = json.dumps(listed)
    assert "frische beschreibung" not in texts


def test_only_captions_rated_well_enough_are_kept(bench, fresh_campaign):
    from annotation.assignment.engine import batch_request
    from annotation.services import work
    from annotation.services.campaigns import campaign_open, rating_campaign_create
    from evaluation.human.selectors import campaign_references

    verification = rating_campaign_create(name="Prüfung", source_campaign_id=fresh_campaign.pk, batch_size=8)
    verification = campaign_open(campaign_id=verification.pk)
    bad_key = bench["test_images"][0].key
    for n in range(verification.replication):
        rater = f.AnnotatorFactory(user__username=f"rater{n}", languages=[bench["de"]], reads_english=False)
        batch, _ = batch_request(annotator=rater, campaign_id=verification.pk)
        for a in batch.assignments.select_related("item__image"):
            value = "bad" if a.item.image.key == bad_key else "good"
            work.rating_save(annotator=rater, batch_id=batch.pk, assignment_id=a.pk, value=value)
        work.judgment_batch_submit(annotator=rater, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    kept = set(
        campaign_references(fresh_campaign.pk, min_verified_rating="GOOD").values_list(
            "image__key", flat=True
        )
    )
    assert kept == {im.key for im in bench["test_images"]} - {bad_key}
    done = fresh_references_attach(
        benchmark_id=bench["benchmark"].pk, language_code="de", campaign_id=fresh_campaign.pk
    )
    assert done.captions == 7 and done.reference_set.min_verified_rating == "GOOD"
    assert "test: 7 of 8 images have one: not scored on them" in done.summary()


def test_attaching_refuses_what_cannot_be_fresh_references(bench, fresh_campaign, campaign):
    benchmark = bench["benchmark"].pk
    with pytest.raises(ValidationFailed, match="no caption rated GOOD or better"):
        fresh_references_attach(benchmark_id=benchmark, language_code="de", campaign_id=fresh_campaign.pk)
    with pytest.raises(ValidationFailed, match="not en"):
        fresh_references_attach(benchmark_id=benchmark, language_code="en", campaign_id=fresh_campaign.pk)
    with pytest.raises(ValidationFailed, match="not a language"):
        fresh_references_attach(benchmark_id=benchmark, language_code="ar", campaign_id=fresh_campaign.pk)
    with pytest.raises(ValidationFailed, match="cover no image"):
        f.written_captions(
            campaign, annotators=[f.AnnotatorFactory(languages=[campaign.language])], batches=2
        )
        fresh_references_attach(
            benchmark_id=benchmark, language_code="de", campaign_id=campaign.pk, min_verified_rating=""
        )
    assert not BenchmarkLanguage.objects.filter(fresh_reference_set__isnull=False).exists()
    campaign.refresh_from_db()
    assert not campaign.captions_sealed  # a refusal changes nothing
    fresh_references_attach(
        benchmark_id=benchmark, language_code="de", campaign_id=fresh_campaign.pk, min_verified_rating=""
    )
    with pytest.raises(ValidationFailed, match="have fresh references already"):
        fresh_references_attach(
            benchmark_id=benchmark, language_code="de", campaign_id=fresh_campaign.pk, min_verified_rating=""
        )


def test_a_host_adds_them_in_the_admin_and_is_warned_of_a_public_dataset(bench, fresh_campaign, pm_client):
    link = BenchmarkLanguage.objects.get(benchmark=bench["benchmark"], language=bench["de"])
    link.reference_set.public_dataset = "XM3600, CC-BY 4.0"
    link.reference_set.save()
    change = pm_client.get(reverse("admin:challenges_benchmark_change", args=[bench["benchmark"].pk]))
    assert "come from a public dataset" in change.content.decode()
    listing = pm_client.get(reverse("admin:challenges_benchmark_changelist")).content.decode()
    assert "public dataset: XM3600, CC-BY 4.0" in listing and "Add fresh references" in listing
    response = pm_client.post(
        reverse("admin:challenges_benchmark_fresh"),
        {
            "benchmark": bench["benchmark"].pk,
            "language": bench["de"].pk,
            "campaign": fresh_campaign.pk,
            "min_verified_rating": "",
        },
        follow=True,
    )
    assert "test: 8 of 8 images have one" in response.content.decode()
    link.refresh_from_db()
    assert link.fresh_reference_set.source_name == f"campaign #{fresh_campaign.pk} “Frische Referenzen”"
    assert link.fresh_reference_set.references.count() == 8
    member = Client()
    member.force_login(bench["member"])
    page = member.get(reverse("challenges:benchmark", args=[bench["benchmark"].slug])).content.decode()
    assert 'id="public-de"' in page and "XM3600, CC-BY 4.0" in page and "fresh references" in page


def test_the_command_attaches_and_refuses_clearly(bench, fresh_campaign, capsys):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No benchmark has the slug"):
        call_command("fresh_references", "nope", "--language", "de", "--campaign", str(fresh_campaign.pk))
    call_command(
        "fresh_references",
        bench["benchmark"].slug,
        "--language",
        "de",
        "--campaign",
        str(fresh_campaign.pk),
        "--min-rating",
        "any",
    )
    assert "test: 8 of 8 images have one: scored on them from now on" in capsys.readouterr().out


def test_create_benchmark_records_a_public_dataset_and_says_what_it_means(db, tmp_path, capsys):
    images = [f.ImageFactory(key=f"k{i}", with_file=False) for i in range(4)]
    f.LanguageFactory(code="de", name="German")
    path = tmp_path / "captions.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"image/key": im.key, "de": {"caption": [f"ein hund {i}", f"eine katze {i}"]}})
            for i, im in enumerate(images)
        ),
        encoding="utf-8",
    )
    call_command("create_benchmark", str(path), "--name", "Public one", "--validation-images", "1")
    assert "say so with --public-dataset" in capsys.readouterr().out
    call_command(
        "create_benchmark",
        str(path),
        "--name",
        "Public two",
        "--validation-images",
        "1",
        "--public-dataset",
        "XM3600, CC-BY 4.0",
    )
    out = capsys.readouterr().out
    assert "come from a public dataset (XM3600, CC-BY 4.0)" in out and "fresh_references" in out
    link = BenchmarkLanguage.objects.get(benchmark__name="Public two")
    assert link.reference_set.public_dataset == "XM3600, CC-BY 4.0"
    assert BenchmarkLanguage.objects.get(benchmark__name="Public one").reference_set.public_dataset == ""


def test_a_fresh_reference_test_phase_on_the_demo_data(db, django_capture_on_commit_callbacks):
    """The walk of docs/evaluation-server.md on the demo: the demo's German caption campaign is written by
    two of its annotators, its captions become the demo benchmark's fresh German references, the entries
    are scored again, and the leaderboard ranks every entry on both."""
    from annotation.models import Annotator, Campaign
    from annotation.services.demo import demo_load
    from challenges.demo import DEMO_SLUG, demo_benchmark_load
    from challenges.fresh import phase_rescore
    from challenges.models import Benchmark, Phase
    from core.access import PROJECT_MANAGERS
    from evaluation.demo.services import demo_results_load

    demo_load()
    with django_capture_on_commit_callbacks(execute=True):
        demo_results_load()
    with django_capture_on_commit_callbacks(execute=True):
        demo_benchmark_load()
    campaign = Campaign.objects.get(name="Demo: captions in German")
    writers = list(Annotator.objects.filter(skills__language__code="de").order_by("pk"))[:2]
    f.written_captions(
        campaign,
        annotators=writers,
        batches=2,
        text=lambda a: (
            f"Auf diesem Foto sieht man eine ruhige Szene, die ich selbst beschreibe (Nummer {a.pk})"
        ),
    )
    benchmark = Benchmark.objects.get(slug=DEMO_SLUG)
    done = fresh_references_attach(
        benchmark_id=benchmark.pk, language_code="de", campaign_id=campaign.pk, min_verified_rating=""
    )
    assert all(item.complete for item in done.coverage), done.summary()
    test = Phase.objects.get(benchmark=benchmark, kind="test")
    with django_capture_on_commit_callbacks(execute=True):
        sent = phase_rescore(phase_id=test.pk)
    # Three simulated teams, the baseline and the human row (which gets its human comparison again only).
    assert len(sent) == 5
    client = Client()
    client.force_login(f.RoleUserFactory(username="host", role=PROJECT_MANAGERS))
    rows = client.get(
        reverse("challenges:leaderboard-json", args=[test.pk]) + "?language=de&split=private"
    ).json()["rows"]
    assert rows and all(row["fresh_rank"] for row in rows)
    assert sorted(row["fresh_rank"] for row in rows) == list(range(1, len(rows) + 1))


def test_fresh_references_are_a_copy_that_later_changes_to_the_campaign_leave_alone(bench, fresh_campaign):
    from annotation.models import WrittenCaption
    from evaluation.runs.selectors import reference_texts

    done = fresh_references_attach(
        benchmark_id=bench["benchmark"].pk,
        language_code="de",
        campaign_id=fresh_campaign.pk,
        min_verified_rating="",
    )
    before = reference_texts(done.reference_set)
    WrittenCaption.objects.filter(campaign=fresh_campaign).update(text="später geändert")
    assert reference_texts(done.reference_set) == before
    assert len(done.reference_set.source_sha256) == 64 and done.reference_set.source_format == "campaign"
