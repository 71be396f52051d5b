"""The web tier's cost per request (issue 24): what an annotator's request waits on, and how many
queries each endpoint of the annotator path makes. The load itself is measured by
benchmarks/load_annotators.py; these tests keep what it found from coming back."""

from __future__ import annotations

import importlib
import threading
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import caption_checks as cc
from annotation.assignment.engine import batch_request
from annotation.models import WrittenCaption
from annotation.quality.models import TypingRecord
from annotation.services import work
from annotation.services.work import captions as captions_module
from tests import factories as f
from tests.annotation.parallel import fail_on_db_errors, run_threads
from tests.annotation.test_screens import open_writing, rate_all, start_batch

# The most queries each request of the annotator path may make, in these tests (issue 24; before it:
# rating 13, a draft with its typing record 14, the submit of 2 captions 20 and of 6 captions 36;
# a next batch with a rated control 18, going on to screen 2 8, as the load benchmark counts them).
RATING_QUERIES = 6
DRAFT_QUERIES = 7
SUBMIT_QUERIES = 13
NEXT_BATCH_QUERIES = 17
OPEN_WRITING_QUERIES = 7
SCREEN_QUERIES = 7


@pytest.fixture
def cold_identifier(monkeypatch):
    """The caption checks' language identifier as a fresh server process has it: not loaded yet."""
    monkeypatch.setattr(cc, "_IDENTIFIER", None)


def test_threads_reaching_their_first_submit_together_load_the_language_model_once(
    cold_identifier, monkeypatch
):
    # A cold server process: its 8 threads all submit at once. The model took half a second of CPU
    # per load, and each thread loaded its own: the first submits waited seconds behind each other.
    from py3langid import langid

    real = langid.LanguageIdentifier.from_model_file
    loads = []

    def slow_load(*args, **kwargs):
        loads.append(1)
        time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(langid.LanguageIdentifier, "from_model_file", staticmethod(slow_load))
    answers = []
    threads = [
        threading.Thread(target=lambda: answers.append(cc.language_verdict("Ein Hund am Strand", "de")))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1
    assert len(answers) == 8 and len(set(answers)) == 1


def test_the_web_server_process_loads_the_language_model_as_it_starts(cold_identifier):
    import config.wsgi

    importlib.reload(config.wsgi)
    assert cc._IDENTIFIER is not None


# --- queries per request on the annotator path ----------------------------------------------------

JSON = {"content_type": "application/json", "HTTP_ACCEPT": "application/json", "HTTP_ACCEPT_LANGUAGE": "de"}
T0 = 1_763_900_000_000  # an epoch millisecond of November 2025


def _typing(step: int) -> dict:
    return {
        "keystrokes": 30 * step,
        "paste_count": 0,
        "pasted_chars": 0,
        "first_key_ms": T0,
        "last_key_ms": T0 + 6000 * step,
    }


def _on_screen2(client, campaign):
    batch = start_batch(client, campaign)
    rate_all(client, batch)
    open_writing(client, batch)
    return batch


def _draft(client, batch, assignment, text, base, step=1):
    r = client.post(
        reverse("annotation:api_draft", args=[batch.pk]),
        {"assignment": assignment.pk, "text": text, "base_revision": base, "typing": _typing(step)},
        **JSON,
    )
    assert r.status_code == 200, r.content
    return r.json()["revision"]


def _submit_as_shown(client, batch, texts, revisions):
    return client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {
            "submit_key": f"key-{batch.pk:08d}",
            "writing_seconds": 60.0,
            "captions": [
                {"assignment": pk, "text": texts[pk], "base_revision": revisions[pk], "typing": _typing(2)}
                for pk in texts
            ],
        },
        **JSON,
    )


def test_a_rating_save_is_one_statement_not_a_savepointed_update_or_create(
    annotator_client, campaign, django_assert_max_num_queries
):
    batch = start_batch(annotator_client, campaign)
    a = batch.assignments.first()
    url = reverse("annotation:api_rating", args=[batch.pk])
    for value in ("good", "bad"):  # the first save creates the rating, the second changes it
        with django_assert_max_num_queries(RATING_QUERIES):
            r = annotator_client.post(url, {"assignment": a.pk, "value": value, "seconds": 2.0}, **JSON)
        assert r.status_code == 200 and r.json()["value"] == value
        assert r.json()["lease_expires_at"]
    a.rating.refresh_from_db()
    assert a.rating.value == "bad" and a.rating.seconds == 2.0


def test_a_draft_save_with_its_typing_record_reads_draft_and_record_with_the_image(
    annotator_client, campaign, django_assert_max_num_queries
):
    batch = _on_screen2(annotator_client, campaign)
    a = batch.assignments.order_by("position").first()
    base = 0
    for step, text in enumerate(("Ein Hund", "Ein Hund am Strand", "Ein Hund am Strand im Abendlicht"), 1):
        with django_assert_max_num_queries(DRAFT_QUERIES):
            base = _draft(annotator_client, batch, a, text, base, step)
    assert base == 3
    record = TypingRecord.objects.get(assignment=a)
    assert (record.keystrokes, record.first_key_ms, record.last_key_ms) == (90, T0, T0 + 18000)


def test_a_draft_save_writes_its_draft_and_record_with_the_statements_built_once(annotator_client, campaign):
    # The draft and the typing record exist after the first save: later saves send one UPDATE of
    # every column by primary key each (core.compiled_writes), not the ORM's statement rebuilt per save.
    batch = _on_screen2(annotator_client, campaign)
    a = batch.assignments.order_by("position").first()
    base = _draft(annotator_client, batch, a, "Ein Hund", 0, 1)
    with CaptureQueriesContext(connection) as ctx:
        r = annotator_client.post(
            reverse("annotation:api_draft", args=[batch.pk]),
            {"assignment": a.pk, "text": "Ein Hund am Strand", "base_revision": base, "typing": _typing(2)},
            **JSON,
        )
    assert r.status_code == 200 and r.json()["revision"] == 2
    updates = [q["sql"] for q in ctx.captured_queries if q["sql"].startswith("UPDATE")]
    assert [u.split('"')[1] for u in updates] == ["annotation_typingrecord", "annotation_captiondraft"]
    assert all('WHERE "id" = ' in u for u in updates)
    a.draft.refresh_from_db()
    assert (a.draft.text, a.draft.revision, len(a.draft.saves)) == ("Ein Hund am Strand", 2, 2)
    assert a.draft.updated_at.isoformat() == r.json()["saved_at"]
    record = TypingRecord.objects.get(assignment=a)
    assert (record.keystrokes, record.first_key_ms, record.last_key_ms) == (60, T0, T0 + 12000)


@pytest.mark.parametrize("batch_size", [2, 6])
def test_a_submit_makes_as_many_queries_for_six_images_as_for_two(
    client, german, batch_size, django_assert_max_num_queries
):
    # The typing records of a batch are read with its images and stored in two statements: a
    # submit's queries do not grow with the batch (they did: five per caption).
    campaign = f.open_caption_campaign(images=8, batch_size=batch_size, replication=2, language=german)
    person = f.AnnotatorFactory(languages=[german])
    client.force_login(person.user)
    batch = _on_screen2(client, campaign)
    texts, revisions = {}, {}
    for i, a in enumerate(batch.assignments.order_by("position")):
        texts[a.pk] = f"Ein Hund läuft am Strand entlang, Bild {i}"
        revisions[a.pk] = _draft(client, batch, a, texts[a.pk], 0)
    with django_assert_max_num_queries(SUBMIT_QUERIES):
        r = _submit_as_shown(client, batch, texts, revisions)
    assert r.status_code == 200, r.content
    stored = dict(WrittenCaption.objects.filter(assignment__batch=batch).values_list("assignment_id", "text"))
    assert stored == texts
    records = TypingRecord.objects.filter(assignment__batch=batch)
    assert records.count() == batch_size
    assert {(r.keystrokes, r.chars) for r in records} == {(60, len(t)) for t in texts.values()}
    assert all(r.review in ("", "pending") for r in records)


# --- what a submit holds ---------------------------------------------------------------------------


def _ready_to_submit(annotator, campaign) -> tuple[int, list[dict]]:
    """A batch of ``annotator`` on screen 2 with every caption saved as a draft; the captions as shown."""
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    for a in batch.assignments.all():
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    shown = []
    for i, a in enumerate(batch.assignments.order_by("position")):
        text = f"Ein Hund läuft am Strand entlang, Bild {i}"
        result = work.draft_save(
            annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, text=text, base_revision=0
        )
        shown.append({"assignment": a.pk, "text": text, "base_revision": result.revision})
    return batch.pk, shown


@pytest.mark.django_db(transaction=True)
def test_a_submit_in_progress_blocks_no_other_annotators_submit_or_save(german, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("row locks and parallel connections are only proven on PostgreSQL (set DATABASE_URL)")
    campaign = f.open_caption_campaign(images=12, batch_size=3, replication=2, language=german)
    anna, ben, cleo = (f.AnnotatorFactory(languages=[german]) for _ in range(3))
    anna_batch, anna_shown = _ready_to_submit(anna, campaign)
    ben_batch, ben_shown = _ready_to_submit(ben, campaign)
    inside, release = threading.Event(), threading.Event()
    real_hold = captions_module.batch_hold_if_empty

    def paused_hold(*, batch):
        # The last step of Anna's submit: every row her submit writes or locks is held from here on.
        if batch.annotator_id == anna.pk:
            inside.set()
            assert release.wait(20), "the test never let Anna's submit finish"
        return real_hold(batch=batch)

    monkeypatch.setattr(captions_module, "batch_hold_if_empty", paused_hold)
    others_done = []

    def anna_submits():
        work.batch_submit(annotator=anna, batch_id=anna_batch, submit_key="anna-0001", captions=anna_shown)

    def the_others_work_meanwhile():
        assert inside.wait(20), "Anna's submit never reached its last step"
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")  # waiting on Anna's locks fails instead of passing
        first = ben_shown[0]
        work.draft_save(
            annotator=ben,
            batch_id=ben_batch,
            assignment_id=first["assignment"],
            text=first["text"] + " am Abend",
            base_revision=first["base_revision"],
        )
        first["text"] += " am Abend"
        first["base_revision"] += 1
        work.batch_submit(annotator=ben, batch_id=ben_batch, submit_key="ben-00001", captions=ben_shown)
        batch_request(annotator=cleo, campaign_id=campaign.pk)
        others_done.append(time.monotonic())
        release.set()

    errors = run_threads([anna_submits, the_others_work_meanwhile], timeout=40)
    release.set()
    fail_on_db_errors(errors)
    assert others_done, (
        "Ben's save and submit and Cleo's next batch did not finish while Anna's submit was open"
    )
    stored = WrittenCaption.objects.filter(campaign=campaign)
    assert stored.filter(annotator=anna).count() == 3
    assert sorted(stored.filter(annotator=ben).values_list("text", flat=True)) == sorted(
        s["text"] for s in ben_shown
    )


# --- what a save reads -----------------------------------------------------------------------------


def _locking_read(queries) -> str:
    if not connection.features.has_select_for_update:  # SQLite: the same read, without FOR UPDATE
        return next(
            q["sql"]
            for q in queries
            if q["sql"].startswith("SELECT")
            and "annotation_assignment" in q["sql"]
            and "annotation_batch" in q["sql"]
        )
    return next(q["sql"] for q in queries if "FOR UPDATE" in q["sql"] and "annotation_assignment" in q["sql"])


@pytest.mark.parametrize("endpoint", ["rating", "draft"])
def test_a_save_reads_the_columns_it_uses_not_the_whole_campaign_and_language(
    annotator_client, campaign, endpoint
):
    # The save's one locking read built and converted 94 columns over six tables (the campaign's 27,
    # the language's 7) for a stage, a lease and a kind: 40% of a draft save's CPU (issue 24).
    from django.test.utils import CaptureQueriesContext

    batch = (
        start_batch(annotator_client, campaign)
        if endpoint == "rating"
        else _on_screen2(annotator_client, campaign)
    )
    a = batch.assignments.order_by("position").first()
    body = (
        {"assignment": a.pk, "value": "good", "seconds": 2.0}
        if endpoint == "rating"
        else {"assignment": a.pk, "text": "Ein Hund", "base_revision": 0, "typing": _typing(1)}
    )
    with CaptureQueriesContext(connection) as ctx:
        r = annotator_client.post(reverse(f"annotation:api_{endpoint}", args=[batch.pk]), body, **JSON)
    assert r.status_code == 200, r.content
    sql = _locking_read(ctx.captured_queries)
    assert '"annotation_language"' not in sql
    assert '"annotation_campaign"."name"' not in sql and '"annotation_batch"."submit_key"' not in sql
    assert '"annotation_campaign"."lease_minutes"' in sql
    if endpoint == "draft":
        assert '"annotation_captiondraft"."saves"' in sql and '"annotation_typingrecord"."flags"' in sql


def test_a_submit_reads_no_image_row(client, german):
    # A caption needs its image's id only (the item carries it): the submit's read of the batch's
    # assignments joined the image table and built an Image per caption (issue 24, third pass).
    from django.test.utils import CaptureQueriesContext

    campaign = f.open_caption_campaign(images=8, batch_size=2, replication=2, language=german)
    person = f.AnnotatorFactory(languages=[german])
    client.force_login(person.user)
    batch = _on_screen2(client, campaign)
    texts, revisions = {}, {}
    for i, a in enumerate(batch.assignments.order_by("position")):
        texts[a.pk] = f"Ein Hund läuft am Strand entlang, Bild {i}"
        revisions[a.pk] = _draft(client, batch, a, texts[a.pk], 0)
    with CaptureQueriesContext(connection) as ctx:
        r = _submit_as_shown(client, batch, texts, revisions)
    assert r.status_code == 200, r.content
    assert not [q["sql"] for q in ctx.captured_queries if '"annotation_image"' in q["sql"]]
    stored = WrittenCaption.objects.filter(assignment__batch=batch).select_related("assignment__item")
    assert {c.image_id for c in stored} == {c.assignment.item.image_id for c in stored}
    assert {c.assignment_id: c.text for c in stored} == texts


def test_asking_again_for_work_reads_the_campaign_once(annotator, campaign):
    # The open batch is looked up after the campaign was read: it is not joined and read again.
    from django.test.utils import CaptureQueriesContext

    first, created = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert created
    with CaptureQueriesContext(connection) as ctx:
        again, created = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assert (again.pk, created) == (first.pk, False)
    assert again.campaign.pk == campaign.pk and again.campaign.language.pk == campaign.language_id
    # A query that builds a campaign selects its columns (batch_size among them).
    reads = [q["sql"] for q in ctx.captured_queries if '"annotation_campaign"."batch_size"' in q["sql"]]
    assert len(reads) == 1, reads


def test_a_next_batch_with_a_control_reads_the_seen_images_once(
    client, german, django_assert_max_num_queries
):
    # The images an annotator has seen were read twice per new batch (for the pool and for the
    # controls), with the model's ordering inside the DISTINCT; the campaign's language was joined
    # for a refusal's sentence only.
    from django.test.utils import CaptureQueriesContext

    from annotation.services.controls import campaign_controls_add

    campaign = f.open_caption_campaign(images=12, batch_size=3, replication=2, language=german)
    campaign_controls_add(campaign_id=campaign.pk, mismatched=4, controls_per_batch=1, seed=7)
    person = f.AnnotatorFactory(languages=[german])
    client.force_login(person.user)
    shown = set()
    for _ in range(2):  # the second batch has seen images to leave out
        with CaptureQueriesContext(connection) as ctx, django_assert_max_num_queries(NEXT_BATCH_QUERIES):
            batch = start_batch(client, campaign)
        items = list(batch.assignments.select_related("item"))
        # A control when one is left on an image neither seen nor in this batch (drawn at random).
        assert sum(not a.item.is_control for a in items) == 3 and sum(a.item.is_control for a in items) <= 1
        images = {a.item.image_id for a in items}
        assert len(images) == len(items) and not images & shown  # no image twice, in a batch or across
        shown |= images
        seen_reads = [q["sql"] for q in ctx.captured_queries if q["sql"].startswith("SELECT DISTINCT")]
        assert len(seen_reads) == 1, seen_reads
        assert '"annotation_batch"' not in seen_reads[0]  # no ordering column dragged into the DISTINCT
        assert not [q["sql"] for q in ctx.captured_queries if '"annotation_language"' in q["sql"]]
        for a in items:
            work.rating_save(annotator=person, batch_id=batch.pk, assignment_id=a.pk, value="good")
        work.writing_open(annotator=person, batch_id=batch.pk)
        for a in items:
            if not a.item.is_control:
                work.draft_save(
                    annotator=person,
                    batch_id=batch.pk,
                    assignment_id=a.pk,
                    text="Ein Hund am Strand",
                    base_revision=0,
                )
        work.batch_submit(annotator=person, batch_id=batch.pk, submit_key=f"key-{batch.pk:08d}")


@pytest.mark.parametrize("screen", ["screen1", "screen2"])
def test_a_screen_reads_its_rows_as_values_without_the_image_row(
    annotator_client, campaign, screen, django_assert_max_num_queries
):
    # Screen 1 and 2 built an assignment, item, image, caption and rating or draft and typing record
    # per image to show a few columns; the image row itself was read and never shown.
    from django.test.utils import CaptureQueriesContext

    batch = (
        start_batch(annotator_client, campaign)
        if screen == "screen1"
        else _on_screen2(annotator_client, campaign)
    )
    a = batch.assignments.order_by("position").first()
    if screen == "screen2":
        _draft(annotator_client, batch, a, "Ein Hund <am> Strand", 0)
    with CaptureQueriesContext(connection) as ctx, django_assert_max_num_queries(SCREEN_QUERIES):
        r = annotator_client.get(reverse(f"annotation:{screen}", args=[batch.pk]))
    assert r.status_code == 200
    assert not [q["sql"] for q in ctx.captured_queries if '"annotation_image"' in q["sql"]]
    page = r.content.decode()
    assert reverse("annotation:image", args=[a.item.image_id]) in page
    if screen == "screen1":
        assert a.item.prompt_caption.text in page
    else:
        assert ">Ein Hund &lt;am&gt; Strand</textarea>" in page
        assert (
            'class="typing-keystrokes" value="30"' in page
            and f'class="typing-first-key" value="{T0}"' in page
        )
        assert 'class="typing-keystrokes" value="0"' in page and 'class="typing-first-key" value=""' in page


def test_going_on_to_screen_2_reads_the_ratings_once(
    annotator_client, campaign, django_assert_max_num_queries
):
    # The switch read the unrated positions, then every assignment with its rating as objects.
    batch = start_batch(annotator_client, campaign)
    rate_all(annotator_client, batch)
    shown = {str(a.pk): "good" for a in batch.assignments.all()}
    with django_assert_max_num_queries(OPEN_WRITING_QUERIES):
        r = annotator_client.post(
            reverse("annotation:api_open_writing", args=[batch.pk]), {"shown": shown}, **JSON
        )
    assert r.status_code == 200, r.content
    batch.refresh_from_db()
    assert batch.writing_opened_at is not None and batch.stage == "writing"


def test_the_save_read_answers_what_the_orm_answered(
    annotator, other_annotator, campaign, django_assert_num_queries
):
    # The save's locked read is written by hand (one statement per connection, its row built with
    # Model.from_db): the objects must behave as select_related + only() left them.
    from annotation.models import CaptionDraft
    from annotation.selectors import batch_and_assignment
    from core.errors import NotFound

    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    first, second = batch.assignments.select_related("item").order_by("position")[:2]
    CaptionDraft.objects.create(assignment=second, text="Ein Hund", revision=2, saves=[[T0, 8]])
    with django_assert_num_queries(1):
        got_batch, a = batch_and_assignment(annotator, batch.pk, str(first.pk), writing=True)
        # Everything a save reads is there, the absent draft and typing record included.
        assert (a.pk, a.position, a.item.image_id, a.item.is_control) == (
            first.pk,
            first.position,
            first.item.image_id,
            False,
        )
        assert a.batch is got_batch and got_batch.pk == batch.pk and got_batch.stage == "rating"
        assert got_batch.lease_expires_at == batch.lease_expires_at and got_batch.lease_expires_at.tzinfo
        assert (got_batch.campaign.kind, got_batch.campaign.lease_minutes) == (
            "caption",
            campaign.lease_minutes,
        )
        assert getattr(a, "draft", None) is None and getattr(a, "typing", None) is None
    with django_assert_num_queries(1):
        assert got_batch.submit_key == batch.submit_key  # a column not read loads as a deferred one
    _, b = batch_and_assignment(annotator, batch.pk, second.pk, writing=True)
    assert (b.draft.text, b.draft.revision, b.draft.saves, b.draft.assignment is b) == (
        "Ein Hund",
        2,
        [[T0, 8]],
        True,
    )
    b.draft.text = "Ein Hund am Strand"
    b.draft.save()  # an UPDATE of the stored row, not a second draft
    assert CaptionDraft.objects.get(assignment=second).text == "Ein Hund am Strand"
    other, _ = batch_request(annotator=other_annotator, campaign_id=campaign.pk)
    foreign = other.assignments.first()
    assert batch_and_assignment(annotator, batch.pk, foreign.pk) == (batch, None)  # not of this batch
    assert batch_and_assignment(annotator, batch.pk, "x")[1] is None
    with pytest.raises(NotFound):
        batch_and_assignment(annotator, other.pk, foreign.pk)  # another annotator's batch
