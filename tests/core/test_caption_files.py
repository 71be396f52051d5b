"""The caption-file registry (pure): every format named, described and sniffed in one place, and the
JSON-lines format reading both of its line shapes."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from core import caption_files
from core.caption_files import CANDIDATES, REFERENCES, jsonl
from core.caption_files.entries import ShapeError


def zip_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("de.json", "[]")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("head", "filename", "expected"),
    [
        (zip_bytes()[:64], "upload.bin", "zip"),
        (b'\xef\xbb\xbf \n[{"image_id": 1, "caption": "a"}]', "r.txt", "coco"),
        (b'{"image/key": "x", "de": {"caption": ["a"]}}\n', "r.json", "jsonl"),
        (b'{"image_id": 1, "language": "de", "caption": "a"}', "", "jsonl"),
        (b'{\n  "info": {}, "images": [{"id": 1}], "annotations": [', "refs.json", "coco_annotations"),
        (b'{"annotations": [{"image_id": 1, "caption": "a"}]}', "", "coco_annotations"),
        (b"A dog on a sofa.\nTwo cats.\n", "captions.txt", "caption_lines"),
        (b"\xff\xfe junk", "r.jsonl", "jsonl"),  # the bytes say nothing: the name tells
    ],
)
def test_the_registry_sniffs_each_format_from_its_bytes_then_its_name(head, filename, expected):
    assert caption_files.sniff(head, filename).name == expected


def test_sniffing_only_among_the_formats_asked_for():
    annotations = b'{"images": [], "annotations": []}'
    assert caption_files.sniff(annotations, "r.json", among=caption_files.UPLOAD_FORMATS).name == "jsonl"
    assert caption_files.sniff(b"junk", "r.bin", among=["coco", "jsonl"]) is None


def test_each_format_says_what_it_holds_and_the_server_takes_three():
    formats = caption_files.FORMATS
    assert caption_files.UPLOAD_FORMATS == ("zip", "coco", "jsonl")
    assert formats["jsonl"].holds == {CANDIDATES, REFERENCES}
    assert formats["coco_annotations"].holds == {REFERENCES}
    assert all(spec.label and spec.suffixes and spec.examples for spec in formats.values())
    with pytest.raises(KeyError, match="known: zip, coco_annotations, coco, jsonl, caption_lines"):
        caption_files.format_get("csv")


def test_a_json_line_is_read_in_either_shape():
    xm = jsonl.line(
        {"image/key": "k", "image/locale": "fr", "de": {"caption": ["a", "b"]}, "en": {"caption": ["c"]}},
        where="line 1",
    )
    assert [(r.language, r.captions) for r in xm.records] == [("de", ("a", "b")), ("en", ("c",))]
    assert xm.shape == "xm3600" and not xm.unknown
    flat = jsonl.line({"image_id": 7, "image/locale": "de", "caption": "a", "extra": 1}, where="line 2")
    assert (flat.shape, flat.key, flat.records[0].language, flat.unknown) == ("flat", "7", "de", ("extra",))
    only_fr = jsonl.line({"image/key": "k", "de": {"caption": ["a"]}}, where="line 3", language="fr")
    assert only_fr.records == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"de": {"caption": ["a"]}}, "missing or invalid 'image/key' (or 'image_id')"),
        ({"image/key": "k", "image_id": 1, "caption": "a"}, "both 'image_id' and 'image/key': give one"),
        ({"image/key": "k"}, 'no caption: expected "<language>": {"caption": [...]}'),
        ({"image/key": "k", "de": {"caption": "a"}}, "de/caption of 'k' must be a list of strings"),
        ({"image/key": "k", "language": "de", "image/locale": "de", "caption": "a"}, "both 'language'"),
    ],
)
def test_a_json_line_of_neither_shape_says_why(value, message):
    with pytest.raises(ShapeError) as caught:
        jsonl.line(value, where="line 1")
    assert caught.value.message.startswith(message)


def test_one_caption_per_candidate_refuses_or_takes_the_first_as_asked():
    record = jsonl.line({"image/key": "k", "de": {"caption": ["a", "b"]}}, where="line 1").records[0]
    assert jsonl.one_caption(record, several="first") == "a"
    with pytest.raises(ShapeError, match="2 captions for 'de' of k: give exactly one"):
        jsonl.one_caption(record, several="refuse")
    empty = jsonl.line({"image/key": "k", "de": {"caption": []}}, where="line 1").records[0]
    with pytest.raises(ShapeError, match="no caption for 'de'"):
        jsonl.one_caption(empty, several="first")
    assert json.loads(caption_files.FORMATS["coco"].examples[0])[0]["caption"]


def test_every_problem_a_team_may_read_is_in_the_catalogues():
    # The templates marked with gettext_noop in the readers the evaluation server uses, read from the
    # source as makemessages reads them; each must be translated in German, Arabic and Japanese.
    import ast
    from pathlib import Path

    from django.conf import settings

    from annotation.catalogues import read_catalogue

    root = Path(__file__).resolve().parents[2]
    sources = [*sorted((root / "core" / "caption_files").glob("*.py")), root / "challenges" / "files.py"]
    marked = {
        node.args[0].value
        for path in sources
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "gettext_noop" and node.args
        if isinstance(node.args[0], ast.Constant)
    }
    assert len(marked) > 60
    for language in ("de", "ar", "ja"):
        catalog = read_catalogue(settings.LOCALE_PATHS[0] / language / "LC_MESSAGES" / "django.po")
        translated = {m.id for m in catalog if m.id and m.string}
        assert sorted(marked - translated) == [], language


def test_a_message_renders_in_english_or_through_a_translation():
    from core.caption_files.messages import Message, located, plain

    where = Message("%(name)s line %(number)s", name="r.jsonl", number=3)
    problem = located(where, Message("no caption for '%(language)s'", language="de"))
    assert str(problem) == "r.jsonl line 3: no caption for 'de'"
    german = {
        "%(where)s: %(message)s": "%(where)s: %(message)s",
        "%(name)s line %(number)s": "%(name)s Zeile %(number)s",
        "no caption for '%(language)s'": "keine Beschreibung für '%(language)s'",
    }
    assert problem.render(german.get) == "r.jsonl Zeile 3: keine Beschreibung für 'de'"
    # A file name or a parser's reason is never looked up, whatever it says.
    assert plain("100% sure").render(lambda t: {"100% sure": "übersetzt"}.get(t, t)) == "100% sure"
