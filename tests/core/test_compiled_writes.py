"""A stored row written with SQL built once (core.compiled_writes): the same row as ``save()`` leaves,
and ``save()`` itself wherever the two could differ."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models.signals import pre_save
from django.test.utils import CaptureQueriesContext

from annotation.models import CaptionDraft
from core.compiled_writes import row_update
from tests.annotation.test_screens import start_batch

pytestmark = pytest.mark.django_db


def _row(draft) -> dict:
    return {k: v for k, v in vars(CaptionDraft.objects.get(pk=draft.pk)).items() if k != "_state"}


@pytest.fixture
def assignments(annotator_client, campaign):
    return list(start_batch(annotator_client, campaign).assignments.order_by("position"))


def test_an_update_stores_the_row_save_would_store(assignments):
    ours = CaptionDraft.objects.create(assignment=assignments[0], text="Ein Hund", revision=1)
    theirs = CaptionDraft.objects.create(assignment=assignments[1], text="Ein Hund", revision=1)
    stamped = ours.updated_at
    for draft in (ours, theirs):
        draft.text, draft.revision, draft.seconds = "Ein Hund am Strand", 2, None
        draft.saves, draft.saves_dropped = [[1_700_000_000_000, 8], [1_700_000_004_000, 18]], 3
    with CaptureQueriesContext(connection) as ctx:
        row_update(ours)
    theirs.save()
    assert len(ctx.captured_queries) == 1 and ctx.captured_queries[0]["sql"].startswith("UPDATE")
    assert ours.updated_at > stamped  # auto_now stamped on the object, as save() does
    mine, orm = _row(ours), _row(theirs)
    for row in (mine, orm):
        row.pop("id"), row.pop("assignment_id"), row.pop("created_at")
    assert mine.pop("updated_at") == ours.updated_at
    orm.pop("updated_at")
    assert (
        mine
        == orm
        == {
            "text": "Ein Hund am Strand",
            "seconds": None,
            "revision": 2,
            "saves": [[1_700_000_000_000, 8], [1_700_000_004_000, 18]],
            "saves_dropped": 3,
        }
    )


def test_a_new_row_or_one_deleted_meanwhile_is_inserted_as_save_inserts_it(assignments):
    new = CaptionDraft(assignment=assignments[0], text="Ein Hund", revision=1)
    row_update(new)
    assert _row(new)["text"] == "Ein Hund"
    gone = CaptionDraft.objects.create(assignment=assignments[1], text="Eine Katze", revision=1)
    CaptionDraft.objects.filter(pk=gone.pk).delete()
    gone.text = "Eine Katze im Gras"
    row_update(gone)
    assert CaptionDraft.objects.get(assignment=assignments[1]).text == "Eine Katze im Gras"


def test_a_model_with_save_receivers_is_saved_through_save(assignments):
    draft = CaptionDraft.objects.create(assignment=assignments[0], text="Ein Hund", revision=1)
    seen = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance.text)

    pre_save.connect(receiver, sender=CaptionDraft)
    try:
        draft.text = "Ein Hund am Strand"
        row_update(draft)
    finally:
        pre_save.disconnect(receiver, sender=CaptionDraft)
    assert seen == ["Ein Hund am Strand"] and _row(draft)["text"] == "Ein Hund am Strand"


def test_an_instance_with_deferred_columns_is_saved_through_save(assignments):
    draft = CaptionDraft.objects.create(assignment=assignments[0], text="Ein Hund", revision=1)
    CaptionDraft.objects.filter(pk=draft.pk).update(revision=5)
    partial = CaptionDraft.objects.only("pk", "text").get(pk=draft.pk)
    partial.text = "Ein Hund am Strand"
    with CaptureQueriesContext(connection) as ctx:
        row_update(partial)
    # save() writes the loaded columns only: no read of the deferred ones, and their values stay.
    assert len(ctx.captured_queries) == 1 and "revision" not in ctx.captured_queries[0]["sql"]
    stored = CaptionDraft.objects.get(pk=draft.pk)
    assert (stored.text, stored.revision) == ("Ein Hund am Strand", 5)
