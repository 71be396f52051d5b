"""Issue 9, items 3 and 4: a page whose batch moved on (submitted, or saved from another tab)
never stores or keeps what it did not show, and is told so; no annotator screen or endpoint is
kept by a browser cache.

Through the JSON endpoints the pages use; tests/browser/test_stale_tabs.py walks the same in
Chromium.
"""

from __future__ import annotations

import pytest
from django.urls import URLPattern, reverse

from annotation import urls as annotation_urls
from annotation.models import Batch, BatchStage, CaptionDraft, Rating, SxsJudgment, WrittenCaption
from tests import factories as f
from tests.annotation.test_never_lose_work import api, post_json, save_draft, submit, to_screen2, write_all

pytestmark = pytest.mark.django_db


def shown(ids, texts, revisions):
    return [
        {"assignment": pk, "text": text, "base_revision": rev}
        for pk, text, rev in zip(ids, texts, revisions, strict=True)
    ]


def submit_shown(client, batch_id, captions, key="submit-key-0001"):
    return post_json(client, api(batch_id, "submit"), {"submit_key": key, "captions": captions})


def written(batch_id) -> list[str]:
    return list(
        WrittenCaption.objects.filter(assignment__batch_id=batch_id)
        .order_by("assignment__position")
        .values_list("text", flat=True)
    )


# --- Drafts: compare-and-set on the stored revision ----------------------------------------------


def test_a_save_based_on_the_stored_revision_is_accepted_and_counted_on_the_server(
    annotator_client, campaign
):
    batch_id, ids = to_screen2(annotator_client, campaign)
    first = save_draft(annotator_client, batch_id, ids[0], "Ein Hund", 0)
    second = save_draft(annotator_client, batch_id, ids[0], "Ein Hund am Strand", 1)

    assert (first.status_code, first.json()["revision"]) == (200, 1)
    assert (second.status_code, second.json()["revision"]) == (200, 2)
    draft = CaptionDraft.objects.get(assignment_id=ids[0])
    assert (draft.text, draft.revision) == ("Ein Hund am Strand", 2)


def test_two_tabs_from_the_same_revision_the_second_save_is_refused_with_both_texts(
    annotator_client, campaign
):
    batch_id, ids = to_screen2(annotator_client, campaign)
    assert save_draft(annotator_client, batch_id, ids[1], "Tab A schreibt", 0).status_code == 200

    # Tab B loaded the page before A's save: its text grew from revision 0, however long it is.
    tab_b = save_draft(annotator_client, batch_id, ids[1], "Tab B schreibt viel mehr Text als A", 0)

    assert tab_b.status_code == 409
    body = tab_b.json()
    assert body["error"] == "edit_conflict"
    assert body["message"] == "Changed in another tab or window: image 2. Choose which text to keep."
    assert body["details"][str(ids[1])] == {
        "position": 2,
        "message": "Image 2 was changed in another tab or window. Choose which text to keep.",
        "mine": "Tab B schreibt viel mehr Text als A",
        "theirs": "Tab A schreibt",
        "revision": 1,
    }
    assert CaptionDraft.objects.get(assignment_id=ids[1]).text == "Tab A schreibt"
    # B chooses to keep its own text: saved over the revision it now knows.
    keep = save_draft(annotator_client, batch_id, ids[1], "Tab B schreibt viel mehr Text als A", 1)
    assert keep.status_code == 200 and keep.json()["revision"] == 2
    assert CaptionDraft.objects.get(assignment_id=ids[1]).text == "Tab B schreibt viel mehr Text als A"


def test_a_save_after_submit_is_refused_as_submitted(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)
    assert submit(annotator_client, batch_id).status_code == 200

    late = save_draft(annotator_client, batch_id, ids[0], "noch eine Änderung", 1)

    assert late.status_code == 409
    assert late.json() == {"error": "submitted", "message": "This batch has already been submitted."}
    assert written(batch_id)[0] == f"Ein Bild mit der Nummer {ids[0]}"


# --- Submit: exactly what the page shows, or a conflict naming the image ------------------------


def test_submit_stores_what_the_page_shows_when_its_revisions_are_current(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)
    # Image 3 was typed on after the last save: the page shows more than the draft holds.
    texts = [f"Ein Bild mit der Nummer {ids[0]}", "Zweites Bild", "Drittes Bild, zu Ende getippt  "]

    response = submit_shown(annotator_client, batch_id, shown(ids, texts, [1, 1, 1]))

    assert response.status_code == 200
    assert written(batch_id) == [texts[0], "Zweites Bild", "Drittes Bild, zu Ende getippt"]


def test_submit_refuses_text_another_tab_saved_since_and_stores_nothing(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)  # every draft at revision 1
    # Tab B edits image 1.
    assert save_draft(annotator_client, batch_id, ids[0], "Text aus Tab B", 1).json()["revision"] == 2

    # Tab A still shows its own text for image 1, grown from revision 1.
    mine = [f"Ein Bild mit der Nummer {pk}" for pk in ids]
    response = submit_shown(annotator_client, batch_id, shown(ids, mine, [1, 1, 1]))

    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "edit_conflict"
    assert body["message"] == "Changed in another tab or window: image 1. Choose which text to keep."
    assert body["details"] == {
        str(ids[0]): {
            "position": 1,
            "message": "Image 1 was changed in another tab or window. Choose which text to keep.",
            "mine": mine[0],
            "theirs": "Text aus Tab B",
            "revision": 2,
        }
    }
    assert not WrittenCaption.objects.exists()
    assert Batch.objects.get(pk=batch_id).stage == BatchStage.WRITING
    assert CaptionDraft.objects.get(assignment_id=ids[0]).text == "Text aus Tab B"

    # A chooses "keep mine": the same text, now based on revision 2, is stored as shown.
    again = submit_shown(annotator_client, batch_id, shown(ids, mine, [2, 1, 1]))
    assert again.status_code == 200
    assert written(batch_id) == mine


def test_a_stale_revision_with_the_same_text_is_no_conflict(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)
    same = f"Ein Bild mit der Nummer {ids[0]}"
    assert save_draft(annotator_client, batch_id, ids[0], "kurz anders", 1).status_code == 200
    assert save_draft(annotator_client, batch_id, ids[0], same, 2).json()["revision"] == 3

    texts = [f"Ein Bild mit der Nummer {pk}" for pk in ids]
    response = submit_shown(annotator_client, batch_id, shown(ids, texts, [1, 1, 1]))

    assert response.status_code == 200
    assert written(batch_id) == texts


def test_a_submit_must_carry_every_image_once(annotator_client, campaign, other_annotator):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)
    texts = [f"Text {pk}" for pk in ids]
    message = "The submit must carry the caption of every image of this batch, once."

    missing = submit_shown(annotator_client, batch_id, shown(ids[:2], texts[:2], [1, 1]))
    twice = submit_shown(annotator_client, batch_id, shown([ids[0], *ids], [texts[0], *texts], [1, 1, 1, 1]))
    others = f.AnnotatorFactory(languages=[campaign.language])
    from annotation.assignment.engine import batch_request

    foreign_batch, _ = batch_request(annotator=others, campaign_id=campaign.pk)
    foreign = foreign_batch.assignments.first().pk
    swapped = submit_shown(annotator_client, batch_id, shown([foreign, *ids[1:]], texts, [0, 1, 1]))

    for response in (missing, twice, swapped):
        assert response.status_code == 400 and response.json()["message"] == message
    assert not WrittenCaption.objects.exists()


def test_resubmit_with_the_same_key_answers_the_same_and_another_key_is_told_it_is_submitted(
    annotator_client, campaign
):
    batch_id, ids = to_screen2(annotator_client, campaign)
    texts = [f"Bild {pk}" for pk in ids]
    captions = shown(ids, texts, [0, 0, 0])
    first = submit_shown(annotator_client, batch_id, captions)
    same_key = submit_shown(annotator_client, batch_id, captions)
    # A stale tab's submit (its own key), with other text: refused, nothing replaced.
    stale = submit_shown(
        annotator_client, batch_id, shown(ids, ["x", "y", "z"], [0, 0, 0]), key="other-tab-key"
    )

    assert first.status_code == same_key.status_code == 200
    assert (
        first.json()
        == same_key.json()
        == {
            "batch": batch_id,
            "stage": "submitted",
            "late": False,
            "next": f"/work/batch/{batch_id}/",
        }
    )
    assert stale.status_code == 409
    assert stale.json() == {"error": "submitted", "message": "This batch has already been submitted."}
    assert written(batch_id) == texts
    assert Batch.objects.get(pk=batch_id).submit_key == "submit-key-0001"


# --- Ratings and judgments: the same stale-tab rule --------------------------------------------


def test_a_rating_after_submit_is_refused_as_submitted(client, verification):
    rater = f.AnnotatorFactory(languages=[verification.language])
    client.force_login(rater.user)
    batch_id = int(client.post(f"/work/campaign/{verification.pk}/work/")["Location"].split("/")[3])
    ids = list(Batch.objects.get(pk=batch_id).assignments.order_by("position").values_list("pk", flat=True))
    for pk in ids:
        assert (
            post_json(client, api(batch_id, "rating"), {"assignment": pk, "value": "good"}).status_code == 200
        )
    assert post_json(client, api(batch_id, "submit-judgments"), {"submit_key": "k" * 16}).status_code == 200

    late = post_json(client, api(batch_id, "rating"), {"assignment": ids[0], "value": "bad"})

    assert late.status_code == 409 and late.json()["error"] == "submitted"
    assert Rating.objects.get(assignment_id=ids[0]).value == "good"


def test_a_judgment_submit_showing_another_choice_is_refused(client, german):
    campaign = f.open_sxs_campaign(images=4, batch_size=4, replication=3, language=german)
    judge = f.AnnotatorFactory(languages=[german], reads_english=False)
    client.force_login(judge.user)
    batch_id = int(client.post(f"/work/campaign/{campaign.pk}/work/")["Location"].split("/")[3])
    ids = list(Batch.objects.get(pk=batch_id).assignments.order_by("position").values_list("pk", flat=True))
    for pk in ids:
        post_json(client, api(batch_id, "judgment"), {"assignment": pk, "choice": "similar"})
    # Tab B changed image 2 after tab A showed "similar" for it.
    post_json(client, api(batch_id, "judgment"), {"assignment": ids[1], "choice": "much_better"})
    page_a = {str(pk): "similar" for pk in ids}

    refused = post_json(client, api(batch_id, "submit-judgments"), {"submit_key": "a" * 16, "shown": page_a})

    assert refused.status_code == 409
    assert refused.json()["details"] == {
        str(ids[1]): {
            "position": 2,
            "message": "Image 2 was judged differently in another tab or window. "
            "This page now shows that judgment: keep it or change it, then go on.",
            "mine": "similar",
            "theirs": "much_better",
        }
    }
    assert Batch.objects.get(pk=batch_id).stage == BatchStage.RATING
    page_a[str(ids[1])] = "much_better"  # the page now shows the stored choice
    ok = post_json(client, api(batch_id, "submit-judgments"), {"submit_key": "a" * 16, "shown": page_a})
    assert ok.status_code == 200
    assert SxsJudgment.objects.get(assignment_id=ids[1]).choice == "much_better"


def test_going_on_to_writing_with_a_rating_changed_elsewhere_is_refused(annotator_client, campaign):
    from tests.annotation.test_never_lose_work import start_batch

    batch_id = start_batch(annotator_client, campaign)
    ids = list(Batch.objects.get(pk=batch_id).assignments.order_by("position").values_list("pk", flat=True))
    for pk in ids:
        post_json(annotator_client, api(batch_id, "rating"), {"assignment": pk, "value": "good"})
    post_json(annotator_client, api(batch_id, "rating"), {"assignment": ids[2], "value": "bad"})  # tab B

    refused = post_json(
        annotator_client, api(batch_id, "open-writing"), {"shown": {str(pk): "good" for pk in ids}}
    )

    assert refused.status_code == 409 and list(refused.json()["details"]) == [str(ids[2])]
    assert Batch.objects.get(pk=batch_id).writing_opened_at is None


# --- What a page re-checks when it comes back ---------------------------------------------------


def test_state_says_submitted_and_carries_the_drafts_while_writing(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    save_draft(annotator_client, batch_id, ids[0], "Ein Hund", 0)

    writing = annotator_client.get(api(batch_id, "state")).json()
    assert writing["submitted"] is False and writing["stage"] == "writing"
    assert writing["drafts"][str(ids[0])] == {"text": "Ein Hund", "revision": 1}
    assert writing["drafts"][str(ids[1])] == {"text": "", "revision": 0}

    write_all_from = [f"Bild {pk}" for pk in ids]
    submit_shown(annotator_client, batch_id, shown(ids, write_all_from, [1, 0, 0]))
    done = annotator_client.get(api(batch_id, "state")).json()
    assert done == {
        "batch": batch_id,
        "stage": "submitted",
        "submitted": True,
        "writing_opened": True,
        "drafts": {},
        "next": f"/work/batch/{batch_id}/",
    }


# --- No browser cache keeps an annotator screen or answer ---------------------------------------


def _every_annotation_url(batch_id, campaign_id, image_id) -> list[tuple[str, str]]:
    """Every URL pattern of annotation.urls, filled in, with the method the pages use."""
    args = {
        "batch_id": batch_id,
        "campaign_id": campaign_id,
        "image_id": image_id,
        "item_id": image_id,
        "token": "t" * 43,  # an entry link's token (re_path: no converters to read the names from)
    }
    out = []
    for pattern in annotation_urls.urlpatterns:
        assert isinstance(pattern, URLPattern)
        names = pattern.pattern.converters or pattern.pattern.regex.groupindex
        kwargs = {k: args[k] for k in names}
        url = reverse(f"annotation:{pattern.name}", kwargs=kwargs)
        method = (
            "post"
            if pattern.name == "campaign_work" or "/api/" in url and pattern.name != "api_state"
            else "get"
        )
        out.append((pattern.name, method, url))
    return out


def test_every_annotator_screen_and_endpoint_is_no_store(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    image_id = Batch.objects.get(pk=batch_id).assignments.first().item.image_id
    seen = set()
    for name, method, url in _every_annotation_url(batch_id, campaign.pk, image_id):
        if method == "get":
            response = annotator_client.get(url)
        else:
            response = annotator_client.post(url, {}, content_type="application/json")
        seen.add(name)
        cache = response.get("Cache-Control", "")
        if name == "image":
            # A picture never changes under its id: the one response a browser may keep (privately).
            assert response.status_code == 200 and cache == "private, max-age=3600"
            continue
        assert "no-store" in cache, (name, response.status_code, cache)
    assert seen == {p.name for p in annotation_urls.urlpatterns}
    # The refusal to someone logged out (the redirect to the login page) too.
    annotator_client.logout()
    refused = annotator_client.get(reverse("annotation:screen2", args=[batch_id]))
    assert refused.status_code == 302 and "no-store" in refused["Cache-Control"]
