"""Reading and checking submission files (pure): every problem named with its place, nothing else read."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from challenges.files import COCO, JSONL, ZIP, Limits, SubmissionInvalid, submission_parse

KEYS = ["1", "2", "3"]
LANGS = ["de", "en"]


def parse(data: bytes, filename="r.json", language="de", limits=None):
    return submission_parse(
        data, filename=filename, languages=LANGS, image_keys=KEYS, language=language, limits=limits
    )


def refused(data: bytes, **kwargs) -> SubmissionInvalid:
    with pytest.raises(SubmissionInvalid) as caught:
        parse(data, **kwargs)
    return caught.value


def test_coco_results_are_read_for_the_chosen_language():
    data = json.dumps([{"image_id": i, "caption": f" cap {i} "} for i in (1, 2, 3)]).encode()
    parsed = parse(data)
    assert parsed.format == COCO
    assert parsed.captions == {"de": {"1": "cap 1", "2": "cap 2", "3": "cap 3"}}


def test_jsonl_carries_its_languages():
    lines = [
        json.dumps({"image_id": i, "language": c, "caption": f"{c}{i}"}) for c in LANGS for i in (1, 2, 3)
    ]
    parsed = parse("\n".join(lines).encode(), filename="r.jsonl", language=None)
    assert parsed.format == JSONL
    assert parsed.captions["en"]["2"] == "en2" and len(parsed.captions["de"]) == 3


def test_unknown_duplicate_and_empty_are_named_with_their_position():
    data = json.dumps(
        [
            {"image_id": 1, "caption": "a"},
            {"image_id": 1, "caption": "b"},
            {"image_id": 99, "caption": "c"},
            {"image_id": 2, "caption": "  "},
        ]
    ).encode()
    error = refused(data)
    text = " | ".join(error.problems)
    assert "entry 2: duplicate image id “1” in de (first at r.json entry 1)" in text
    assert "entry 3: unknown image id “99”" in text
    assert "entry 4: empty caption for image “2”" in text
    assert "de: 2 image(s) of the phase have no caption (first: 2, 3)" in text
    assert error.total == 4


def test_only_the_first_twenty_problems_are_listed_but_all_are_counted():
    data = json.dumps([{"image_id": 1000 + i, "caption": "x"} for i in range(50)]).encode()
    error = refused(data)
    assert len(error.problems) == 20 and error.total == 50
    assert "(and 30 more)" in str(error)


def test_not_utf8_names_the_line():
    error = refused(b'[{"image_id": 1,\n "caption": "caf\xe9"}]')
    assert error.problems == ["r.json: line 2: not UTF-8 text (byte 33)"]


def test_deep_json_is_refused():
    error = refused(b"[" * 100_000 + b"]" * 100_000)
    assert "nested deeper" in error.problems[0]


def test_a_huge_caption_is_refused():
    data = json.dumps([{"image_id": i, "caption": "x" * 1_000_000} for i in (1, 2, 3)]).encode()
    assert "caption of 1,000,000 characters" in refused(data).problems[0]


def test_oversized_file_is_refused_before_reading():
    error = refused(b"[" + b" " * 200 + b"]", limits=Limits(max_bytes=100))
    assert error.problems == ["the file is 202 bytes; at most 100 are allowed"]


def zipped(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def coco_bytes(prefix: str) -> bytes:
    return json.dumps([{"image_id": i, "caption": f"{prefix}{i}"} for i in (1, 2, 3)]).encode()


def test_a_zip_of_per_language_files():
    parsed = parse(
        zipped({"de.json": coco_bytes("d"), "en.json": coco_bytes("e")}), filename="r.zip", language=None
    )
    assert parsed.format == ZIP and parsed.captions["en"]["3"] == "e3"


def test_paths_in_an_archive_are_refused():
    error = refused(zipped({"../de.json": coco_bytes("d"), "sub/en.json": coco_bytes("e")}), filename="r.zip")
    assert len(error.problems) == 2 and all("paths are not allowed" in p for p in error.problems)


def test_a_zip_bomb_is_refused_without_inflating_it():
    bomb = zipped({"de.json": b"[" + b" " * 50_000_000 + b"]"})
    assert len(bomb) < 100_000
    error = refused(bomb, filename="r.zip", limits=Limits(max_unzipped_bytes=1_000_000))
    assert "inflates to more than 1,000,000 bytes" in error.problems[0]


def test_a_member_lying_about_its_size_is_stopped():
    data = bytearray(zipped({"de.json": coco_bytes("d") + b" " * 5000}))
    # Patch the central directory's uncompressed size to 10 bytes: the member inflates past it.
    index = data.rfind(b"PK\x01\x02")
    data[index + 24 : index + 28] = (10).to_bytes(4, "little")
    error = refused(bytes(data), filename="r.zip")
    assert any("declared size" in p or "cannot be read" in p for p in error.problems)


def test_a_language_outside_the_benchmark_is_refused():
    lines = [json.dumps({"image_id": i, "language": "xx", "caption": "c"}) for i in (1, 2, 3)]
    error = refused("\n".join(lines).encode(), filename="r.jsonl")
    assert error.problems[0] == "r.jsonl line 1: language “xx” is not a language of this benchmark"


def xm3600_line(key, **blocks) -> str:
    return json.dumps(
        {
            "image/key": key,
            "image/locale": "de",
            **{
                code: {"caption": texts, "caption/tokenized": [t.lower() for t in texts]}
                for code, texts in blocks.items()
            },
        }
    )


def test_the_xm3600_line_shape_is_a_submission():
    # The dataset's own shape, as create_benchmark and the reference importer read it: one line per
    # image holding a block per language (image/locale and the tokenized lists are the dataset's too).
    text = "\n".join(xm3600_line(str(i), de=[f"Ein Hund {i}."], en=[f"A dog {i}."]) for i in (1, 2, 3))
    parsed = parse(text.encode(), filename="captions.jsonl", language=None)
    assert parsed.format == JSONL
    assert parsed.captions == {
        "de": {"1": "Ein Hund 1.", "2": "Ein Hund 2.", "3": "Ein Hund 3."},
        "en": {"1": "A dog 1.", "2": "A dog 2.", "3": "A dog 3."},
    }


def test_flat_and_xm3600_lines_mix_and_a_block_of_two_captions_is_refused():
    lines = [
        xm3600_line("1", de=["Ein Hund.", "Noch ein Hund."]),
        json.dumps({"image/key": "2", "image/locale": "de", "caption": "Zwei."}),
        xm3600_line("3", de=["Drei."]),
    ]
    error = refused("\n".join(lines).encode(), filename="r.jsonl", language=None)
    assert error.problems[0] == (
        "r.jsonl line 1: 2 captions for 'de' of 1: give exactly one per image and language"
    )
    assert "de: 1 image(s) of the phase have no caption (first: 1)" in error.problems[1]


def test_a_phase_of_coco_results_only_refuses_json_lines_naming_what_it_accepts():
    lines = [json.dumps({"image_id": i, "language": "de", "caption": "c"}) for i in (1, 2, 3)]
    with pytest.raises(SubmissionInvalid) as caught:
        submission_parse(
            "\n".join(lines).encode(), filename="r.jsonl", languages=LANGS, image_keys=KEYS, formats=["coco"]
        )
    assert caught.value.problems == [
        "r.jsonl: a file of JSON lines (XM3600 or flat); this phase accepts only COCO results (one language)"
    ]
    coco = json.dumps([{"image_id": i, "caption": "c"} for i in (1, 2, 3)]).encode()
    parsed = submission_parse(
        coco, filename="r.json", languages=LANGS, image_keys=KEYS, language="de", formats=["coco"]
    )
    assert parsed.format == COCO and parsed.captions["de"]["2"] == "c"
