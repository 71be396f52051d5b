"""Caption file readers: COCO results/annotations, XM3600 JSON lines, caption lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from evaluation.metrics.text.formats import (
    FormatError,
    read_caption_lines,
    read_coco_annotations,
    read_coco_results,
    read_references,
    read_xm3600_captions,
)
from tests.prerequisites import SHARED_DATA, shared_data_folder

COCO = SHARED_DATA / "coco-fakecap"


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def xm_line(key: str, **languages: list[str]) -> str:
    record = {"image/key": key, "image/locale": "fr"}
    for language, captions in languages.items():
        record[language] = {
            "caption": captions,
            "caption/tokenized": [c.lower() for c in captions],
            "caption/tokenized/lowercase": [c.lower() for c in captions],
        }
    return json.dumps(record, ensure_ascii=False)


# --------------------------------------------------------------------------------------------------
# COCO


def test_reads_the_real_coco_files():
    shared_data_folder(COCO)  # skipped when missing, failed under CI
    results = read_coco_results(COCO / "captions_val2014_fakecap_results.json")
    references = read_coco_annotations(COCO / "captions_val2014_fakecap_subset_refs_tokenized.json")
    assert len(results) == 1000 and set(results) == set(references)
    assert references.n_captions == 5005 and references.file_format == "coco"
    assert references.missing == []
    assert read_references(COCO / "captions_val2014_fakecap_subset_refs_tokenized.json") == references


def test_coco_results_from_a_binary_stream_with_bom_and_string_ids():
    data = "\ufeff" + json.dumps(
        [{"image_id": "a1", "caption": "Un chien."}, {"image_id": 7, "caption": "x"}]
    )
    assert read_coco_results(io.BytesIO(data.encode())) == {"a1": "Un chien.", 7: "x"}
    assert read_coco_results(io.StringIO(data)) == {"a1": "Un chien.", 7: "x"}


def test_coco_results_duplicate_image_id(tmp_path):
    path = write(tmp_path, "r.json", json.dumps([{"image_id": 1, "caption": "a"}] * 2))
    with pytest.raises(FormatError, match=r"entry 1: duplicate image_id 1 \(first at entry 0\)") as error:
        read_coco_results(path)
    assert error.value.entry == 1 and str(path) in str(error.value)


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"caption": "a"}, "missing 'image_id'"),
        ({"image_id": 1}, "missing 'caption'"),
        ({"image_id": 1, "caption": ["a"]}, "caption of image_id 1 must be a string"),
        ({"image_id": True, "caption": "a"}, "image_id must be an integer or a non-empty string"),
        ({"image_id": 1.5, "caption": "a"}, "image_id must be an integer or a non-empty string"),
        ("a caption", "expected an object, got a string"),
    ],
)
def test_coco_results_invalid_entries_name_the_entry(entry, reason):
    data = json.dumps([{"image_id": 0, "caption": "ok"}, entry])
    with pytest.raises(FormatError, match=reason) as error:
        read_coco_results(io.StringIO(data))
    assert error.value.entry == 1


def test_coco_results_wrong_structure_and_bad_json(tmp_path):
    with pytest.raises(FormatError, match="looks like a COCO annotations file"):
        read_coco_results(io.StringIO('{"annotations": []}'))
    path = write(tmp_path, "r.json", '[\n{"image_id": 1, "caption": "a"},\n{"image_id": 2 "caption": "b"}\n]')
    with pytest.raises(FormatError, match="invalid JSON") as error:
        read_coco_results(path)
    assert error.value.line == 3


def test_coco_annotations_missing_and_unknown_images():
    data = {
        "images": [{"id": 1}, {"id": 2}, {"id": 3}],
        "annotations": [
            {"image_id": 1, "caption": "a"},
            {"image_id": 1, "caption": "b"},
            {"image_id": 3, "caption": "c"},
        ],
    }
    references = read_coco_annotations(io.StringIO(json.dumps(data)))
    assert references == {1: ["a", "b"], 3: ["c"]}
    assert references.missing == [2]
    assert "1 images without captions (2)" in references.summary()
    data["annotations"].append({"image_id": 9, "caption": "d"})
    with pytest.raises(FormatError, match="entry 3: annotation for image_id 9, which is not in 'images'"):
        read_coco_annotations(io.StringIO(json.dumps(data)))


def test_coco_annotations_without_images_list_and_results_given_by_mistake():
    data = {"annotations": [{"image_id": "x", "caption": "a"}, {"image_id": "y", "caption": "b"}]}
    assert read_coco_annotations(io.StringIO(json.dumps(data))) == {"x": ["a"], "y": ["b"]}
    with pytest.raises(FormatError, match="looks like a COCO results file"):
        read_coco_annotations(io.StringIO('[{"image_id": 1, "caption": "a"}]'))


# --------------------------------------------------------------------------------------------------
# XM3600


def test_xm3600_reads_one_language_and_reports_missing_lines(tmp_path):
    text = "\n".join(
        [
            xm_line("k1", fr=["Un chien.", "Un chien noir."], de=["Ein Hund."]),
            xm_line("k2", de=["Eine Katze."]),
            "",
        ]
    )
    path = write(tmp_path, "captions.jsonl", "\ufeff" + text + "\n\n")
    french = read_xm3600_captions(path, "fr")
    assert french == {"k1": ["Un chien.", "Un chien noir."]}
    assert french.missing == ["k2"]
    assert french.summary() == "1 images with 2 reference captions; 1 images without a 'fr' caption (k2)"
    assert read_xm3600_captions(path, "fr", field="caption/tokenized")["k1"] == [
        "un chien.",
        "un chien noir.",
    ]
    assert read_xm3600_captions(path, "de") == {"k1": ["Ein Hund."], "k2": ["Eine Katze."]}


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        ('{"image/key": "k3", "fr": ', "invalid JSON"),
        ('["k3"]', "expected a JSON object, got an array"),
        ('{"fr": {"caption": ["x"]}}', "missing or invalid 'image/key'"),
        ('{"image/key": "k1", "fr": {"caption": ["x"]}}', "duplicate image/key 'k1' \\(first on line 1\\)"),
        ('{"image/key": "k3", "fr": ["x"]}', "'fr' of 'k3' must be an object"),
        ('{"image/key": "k3", "fr": {"caption": "x"}}', "fr/caption of 'k3' must be a list of strings"),
        ('{"image/key": "k3", "fr": {"other": []}}', "'fr' of 'k3' has no 'caption' list"),
    ],
)
def test_xm3600_malformed_lines_give_their_line_number(bad_line, reason):
    text = "\n".join([xm_line("k1", fr=["a"]), "", bad_line])
    with pytest.raises(FormatError, match=reason) as error:
        read_xm3600_captions(io.StringIO(text), "fr")
    assert error.value.line == 3


def test_flat_lines_are_read_as_the_server_reads_them(tmp_path):
    # The flat line the evaluation server takes ({"image_id" | "image/key", "language" | "image/locale",
    # "caption"}) is JSON lines too: one caption per line, several lines per image, other languages
    # ignored, mixed with XM3600 lines.
    lines = [
        json.dumps({"image_id": 1, "language": "fr", "caption": "Un chien."}),
        json.dumps({"image_id": 1, "language": "fr", "caption": "Un chien noir."}),
        json.dumps({"image_id": 2, "language": "de", "caption": "Ein Hund."}),
        json.dumps({"image/key": "k3", "image/locale": "fr", "caption": ["Un chat.", "Une chatte."]}),
        xm_line("k4", fr=["Une maison."]),
    ]
    path = write(tmp_path, "flat.jsonl", "\n".join(lines) + "\n")
    french = read_xm3600_captions(path, "fr")
    assert french == {
        1: ["Un chien.", "Un chien noir."],
        "k3": ["Un chat.", "Une chatte."],
        "k4": ["Une maison."],
    }
    assert french.missing == [2]
    assert read_references(path, "de") == {2: ["Ein Hund."]}
    one = write(tmp_path, "one.jsonl", lines[0])
    with pytest.raises(FormatError, match="the first line has fr"):
        read_references(one)


def test_an_image_on_an_xm3600_line_and_a_flat_line_is_refused():
    text = "\n".join(
        [xm_line("k1", fr=["a"]), json.dumps({"image/key": "k1", "language": "fr", "caption": "b"})]
    )
    with pytest.raises(FormatError, match="'k1' is on an XM3600 line already \\(line 1\\)") as error:
        read_xm3600_captions(io.StringIO(text), "fr")
    assert error.value.line == 2


def test_xm3600_empty_file():
    with pytest.raises(FormatError, match="no XM3600 records"):
        read_xm3600_captions(io.StringIO("\n\n"), "fr")


# --------------------------------------------------------------------------------------------------
# Sniffing


def test_read_references_sniffs_both_formats(tmp_path):
    coco = write(
        tmp_path, "refs.json", json.dumps({"annotations": [{"image_id": 1, "caption": "a"}]}, indent=2)
    )
    assert read_references(coco).file_format == "coco"
    xm = write(tmp_path, "xm.jsonl", xm_line("k1", fr=["a"]) + "\n" + xm_line("k2", fr=["b"]) + "\n")
    assert read_references(xm, "fr") == {"k1": ["a"], "k2": ["b"]}
    single = write(tmp_path, "one.jsonl", xm_line("k1", fr=["a"], de=["b"]))
    assert read_references(single, "de").file_format == "xm3600"
    with pytest.raises(FormatError, match="say which language to read \\(the first line has de, fr\\)"):
        read_references(single)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('[{"image_id": 1, "caption": "a"}]', "looks like a COCO results file"),
        ('{"images": []}', "unknown structure.*top-level keys: images"),
        ("image_id,caption\n1,a\n", "unknown structure"),
        ("", "the file is empty"),
        ('{"annotations": [', "invalid JSON"),
    ],
)
def test_read_references_rejects_unknown_structures(text, reason):
    with pytest.raises(FormatError, match=reason):
        read_references(io.StringIO(text))


# --------------------------------------------------------------------------------------------------
# Caption lines and file errors


def test_caption_lines_tolerate_bom_crlf_and_trailing_newline(tmp_path):
    path = write(tmp_path, "c.txt", "\ufeffA dog.\r\nUn chat\r\n".encode())
    assert read_caption_lines(path) == ["A dog.", "Un chat"]
    assert read_caption_lines(io.StringIO("one\ntwo")) == ["one", "two"]


def test_caption_lines_empty_line_is_an_error_unless_allowed():
    with pytest.raises(FormatError, match="line 2: empty caption") as error:
        read_caption_lines(io.StringIO("a\n  \nb\n"))
    assert error.value.line == 2
    assert read_caption_lines(io.StringIO("a\n\nb\n"), allow_empty=True) == ["a", "", "b"]


def test_unreadable_files(tmp_path):
    with pytest.raises(FormatError, match="cannot read the file"):
        read_caption_lines(tmp_path / "nope.txt")
    path = write(tmp_path, "latin1.txt", "ok\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(FormatError, match="not UTF-8 text") as error:
        read_caption_lines(path)
    assert error.value.line == 2
