"""Caption checks (issue 9, item 5): wrong script or language, too short, near copies of the prompt.

The pure rules (annotation.caption_checks) and the submit that applies them: refused with a
message at the image, nothing stored, the draft kept.
"""

from __future__ import annotations

import uuid

import pytest

from annotation import caption_checks as cc
from annotation.assignment.engine import batch_request
from annotation.models import BatchStage, CaptionDraft, SystemCaption, Tokenizer, WrittenCaption
from annotation.services import work
from core.errors import ValidationFailed
from tests import factories as f

PROMPT = "A cat sits beside a laptop on a wooden desk."
NEAR_COPY = "A cat sits next to a laptop on a wooden desk."

GERMAN = cc.CaptionRules(language="de", per_character=False)
ARABIC = cc.CaptionRules(language="ar", per_character=False)
JAPANESE = cc.CaptionRules(language="ja", per_character=True)


# --- the pure rules -------------------------------------------------------------------------------


def test_a_real_german_caption_passes_every_check():
    text = "Eine graue Katze sitzt neben einem Laptop auf einem Holztisch."
    assert cc.caption_rules_problem(text, PROMPT, GERMAN) is None


@pytest.mark.parametrize(
    ("rules", "text", "expected"),
    [
        (JAPANESE, "a cat on the desk", "not written in Japanese: write it in kana or kanji"),
        (ARABIC, "A cat on a desk", "not written in Arabic: write it in Arabic script"),
        (GERMAN, "Кошка сидит на столе", "not written in German: write it in Latin script"),
    ],
)
def test_the_wrong_script_is_refused_with_what_to_write(rules, text, expected):
    assert expected in cc.caption_rules_problem(text, None, rules)


def test_a_few_latin_letters_inside_japanese_are_fine():
    assert cc.script_problem("赤いTシャツを着た男の子がiPhoneを見ている。", JAPANESE) is None


def test_english_written_as_german_is_refused_by_the_language_check():
    problem = cc.caption_rules_problem("A dog is running across a green meadow.", None, GERMAN)
    assert problem == "This caption looks like English, not German. Write it in German."
    # Off in the campaign: nothing refuses it (it is Latin script and long enough).
    assert (
        cc.caption_rules_problem(
            "A dog is running across a green meadow.",
            None,
            GERMAN.__class__(language="de", per_character=False, language_check=False),
        )
        is None
    )


def test_the_language_threshold_decides():
    text = "A dog is running across a green meadow."
    _label, prob = cc.language_verdict(text, "de")
    assert prob > 0.9
    strict = cc.CaptionRules(language="de", per_character=False, language_threshold=min(1.0, prob + 0.001))
    assert cc.language_problem(text, strict) is None
    assert cc.language_problem(text, GERMAN) is not None


@pytest.mark.parametrize(
    ("rules", "text", "n", "unit"),
    [
        (JAPANESE, "猫", 1, "characters"),
        (JAPANESE, "赤い車。", 3, "characters"),
        (GERMAN, "Ein Hund.", 2, "words"),
        (ARABIC, "قطة نائمة", 2, "words"),
    ],
)
def test_too_short_is_refused_in_the_units_of_the_language(rules, text, n, unit):
    minimum = rules.minimum
    assert cc.caption_rules_problem(text, None, rules) == (
        f"This caption is too short ({n} of at least {minimum} {unit}). "
        "Describe what the image shows in a full sentence."
    )


def test_lengths_count_grapheme_clusters_or_words():
    assert JAPANESE.minimum == 5 and GERMAN.minimum == 3 and ARABIC.minimum == 3
    assert cc.length("赤い車が走る", per_character=True) == 6
    # A base letter and its combining mark are one character; punctuation and spaces are none.
    assert cc.length("e\u0301 e\u0301 。", per_character=True) == 2
    assert cc.length("Ein  Hund, der läuft.", per_character=False) == 4
    assert cc.caption_rules_problem("公園を走る犬。", None, JAPANESE) is None
    # The campaign's own minimum replaces the default.
    assert (
        cc.length_problem("Ein Hund.", cc.CaptionRules(language="de", per_character=False, min_length=2))
        is None
    )


def test_a_near_copy_of_the_prompt_is_refused_at_the_threshold():
    score = cc.similarity(NEAR_COPY, PROMPT)
    assert cc.DEFAULT_NEAR_COPY_THRESHOLD <= score < 1
    english = cc.CaptionRules(language="en", per_character=False)
    assert "almost the English caption from screen 1" in cc.caption_rules_problem(NEAR_COPY, PROMPT, english)
    looser = cc.CaptionRules(language="en", per_character=False, near_copy_threshold=min(1.0, score + 0.01))
    assert cc.near_copy_problem(NEAR_COPY, PROMPT, looser) is None
    # Another person's description of the same picture is not a copy.
    assert (
        cc.near_copy_problem("A grey kitten naps next to an open notebook computer.", PROMPT, english) is None
    )
    # Nor is a German translation.
    assert cc.similarity("Eine Katze sitzt neben einem Laptop auf einem Holztisch.", PROMPT) < 0.5


# --- the submit -------------------------------------------------------------------------------


def _campaign(code: str, name: str, *, tokenizer=Tokenizer.WHITESPACE, **settings):
    language = f.LanguageFactory(code=code, name=name, tokenizer=tokenizer)
    # The campaign's real defaults, not the test factory's placeholders.
    settings = {"language_check": True, "min_caption_length": None, **settings}
    campaign = f.open_caption_campaign(images=3, batch_size=3, language=language, **settings)
    SystemCaption.objects.filter(image__items__campaign=campaign).update(text=PROMPT)
    return campaign, f.AnnotatorFactory(languages=[language])


def _write(campaign, annotator, texts):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assignments = list(batch.assignments.order_by("position"))
    for a in assignments:
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    for a, text in zip(assignments, texts):
        work.draft_save(
            annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, text=text, base_revision=0
        )
    return batch, assignments


def _refused(campaign, annotator, texts) -> dict:
    batch, assignments = _write(campaign, annotator, texts)
    with pytest.raises(ValidationFailed) as refused:
        work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    # Nothing stored, the batch still on screen 2, every draft as it was typed.
    assert not WrittenCaption.objects.exists()
    batch.refresh_from_db()
    assert batch.stage == BatchStage.WRITING
    for a, text in zip(assignments, texts):
        assert CaptionDraft.objects.get(assignment=a).text == text
    details = refused.value.details
    return {details[k]["position"]: details[k]["message"] for k in details}, assignments


GOOD_DE = (
    "Eine graue Katze sitzt neben einem Laptop auf einem Holztisch.",
    "Zwei Kinder spielen am Strand mit einem roten Ball.",
    "Ein altes Fahrrad lehnt an einer gelben Hauswand.",
)


@pytest.mark.django_db
def test_real_german_captions_are_stored():
    campaign, annotator = _campaign("de", "German")
    batch, _ = _write(campaign, annotator, GOOD_DE)
    work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    assert sorted(WrittenCaption.objects.values_list("text", flat=True)) == sorted(GOOD_DE)


@pytest.mark.django_db
def test_german_submit_refuses_english_a_near_copy_and_a_short_caption_keeping_the_drafts():
    campaign, annotator = _campaign("de", "German")
    messages, _ = _refused(
        campaign, annotator, [NEAR_COPY, "A dog is running across a green meadow.", "Ein Hund."]
    )
    assert messages == {
        1: "This is almost the English caption from screen 1 with a few words changed. "
        "Describe the image in your own words, in German.",
        2: "This caption looks like English, not German. Write it in German.",
        3: "This caption is too short (2 of at least 3 words). Describe what the image shows in a full sentence.",
    }


@pytest.mark.django_db
def test_japanese_submit_refuses_latin_text_and_one_character():
    campaign, annotator = _campaign("ja", "Japanese", tokenizer=Tokenizer.CHAR)
    messages, _ = _refused(campaign, annotator, ["a", "猫", "ソファで寝ている猫。"])
    assert messages == {
        1: "This caption is not written in Japanese: write it in kana or kanji.",
        2: "This caption is too short (1 of at least 5 characters). "
        "Describe what the image shows in a full sentence.",
    }


@pytest.mark.django_db
def test_arabic_submit_refuses_latin_script_and_one_word():
    campaign, annotator = _campaign("ar", "Arabic")
    messages, _ = _refused(
        campaign, annotator, ["A cat sleeping on a sofa.", "قطة", "قطة نائمة على الأريكة."]
    )
    assert messages == {
        1: "This caption is not written in Arabic: write it in Arabic script.",
        2: "This caption is too short (1 of at least 3 words). Describe what the image shows in a full sentence.",
    }


@pytest.mark.django_db
def test_the_campaign_settings_decide():
    # Language check off, a minimum of 2 words and a near-copy threshold above this copy's score.
    campaign, annotator = _campaign(
        "de",
        "German",
        language_check=False,
        min_caption_length=2,
        near_copy_threshold=min(1.0, cc.similarity(NEAR_COPY, PROMPT) + 0.01),
    )
    texts = [NEAR_COPY, "A dog is running across a green meadow.", "Ein Hund."]
    batch, _ = _write(campaign, annotator, texts)
    work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    assert WrittenCaption.objects.count() == 3


@pytest.mark.django_db
def test_the_refusal_reaches_the_page_as_a_400_with_the_image_named(client):
    campaign, annotator = _campaign("ja", "Japanese", tokenizer=Tokenizer.CHAR)
    batch, assignments = _write(campaign, annotator, ["猫", "ソファで寝ている猫。", "公園を走る犬。"])
    client.force_login(annotator.user)
    response = client.post(
        f"/work/api/batch/{batch.pk}/submit/",
        {"submit_key": uuid.uuid4().hex},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["details"] == {
        str(assignments[0].pk): {
            "position": 1,
            "message": "This caption is too short (1 of at least 5 characters). "
            "Describe what the image shows in a full sentence.",
        }
    }
    assert CaptionDraft.objects.get(assignment=assignments[0]).text == "猫"
    assert not WrittenCaption.objects.exists()
