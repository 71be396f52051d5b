"""Importers of image metadata, image files and system captions, and their commands."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.importers import images_import, system_captions_import
from annotation.models import CaptioningSystem, Image, Language, SystemCaption, Tokenizer
from core.errors import ValidationFailed
from tests.factories import ImageFactory, png_bytes

pytestmark = pytest.mark.django_db

XM3600_KEYS = 3600


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def jpeg_bytes(color=(200, 10, 10)) -> bytes:
    from PIL import Image as PILImage

    buf = io.BytesIO()
    PILImage.new("RGB", (20, 10), color).save(buf, format="JPEG")
    return buf.getvalue()


def xm3600(shared_data: Path) -> dict:
    folder = shared_data / "xm3600-images"
    return {
        "metadata": folder / "image_ids.txt",
        "attributions": folder / "image_attributions.csv",
        "shapes": folder / "image_shapes.csv",
    }


def run(command: str, *args, **options) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out, **options)
    return out.getvalue()


# --- XM3600 metadata, as it is ----------------------------------------------------------------


def test_xm3600_metadata_imports_3600_images_with_attributions_and_shapes(shared_data):
    report = images_import(**xm3600(shared_data))

    assert (report.created, report.updated, report.unchanged) == (XM3600_KEYS, 0, 0)
    assert report.without_file == XM3600_KEYS and report.files_stored == 0
    assert Image.objects.count() == XM3600_KEYS
    image = Image.objects.get(key="69c585b2a529af93")
    assert image.license == "https://creativecommons.org/licenses/by/2.0/"
    assert (image.author, image.title) == ("coloredby", "IMG_4894")
    assert image.source_url == "https://www.flickr.com/photos/74881150@N00/8644566109"
    assert (image.width, image.height) == (641, 479) and not image.has_file
    assert Image.objects.get(key="000411001ff7dd4f").width == 640
    assert Image.objects.filter(license="").count() == 0
    assert Image.objects.filter(width__isnull=True).count() == 0
    assert report.unknown_fields == [
        "image_attributions.csv: Subset, OriginalURL, AuthorProfileURL, OriginalSize, OriginalMD5, "
        "Thumbnail300KURL, Rotation"
    ]


def test_xm3600_rerun_changes_nothing(shared_data):
    images_import(**xm3600(shared_data))
    stamps = dict(Image.objects.values_list("key", "updated_at"))

    report = images_import(**xm3600(shared_data))

    assert (report.created, report.updated, report.unchanged) == (0, 0, XM3600_KEYS)
    assert dict(Image.objects.values_list("key", "updated_at")) == stamps


def test_xm3600_through_the_command_with_dry_run_first(shared_data):
    paths = xm3600(shared_data)
    args = [
        "--metadata",
        paths["metadata"],
        "--attributions",
        paths["attributions"],
        "--shapes",
        paths["shapes"],
    ]

    out = run("import_images", *args, "--dry-run")
    assert "3600 images: 3600 would be created" in out and "Dry run: nothing was written." in out
    assert Image.objects.count() == 0

    assert "3600 images: 3600 created, 0 updated, 0 unchanged" in run("import_images", *args)
    assert "0 created, 0 updated, 3600 unchanged" in run("import_images", *args)
    assert run("import_images", *args, verbosity=0) == ""


# --- Malformed input imports nothing --------------------------------------------------------


def test_malformed_attribution_line_imports_nothing_and_names_the_line(shared_data, tmp_path):
    lines = (
        (shared_data / "xm3600-images" / "image_attributions.csv").read_text(encoding="utf-8").splitlines()
    )
    lines[16] = lines[16].rsplit(",", 1)[0]  # line 17 loses its last cell
    bad = write(tmp_path / "image_attributions.csv", "\n".join(lines) + "\n")

    with pytest.raises(ValidationFailed) as exc:
        images_import(metadata=xm3600(shared_data)["metadata"], attributions=bad)

    assert (
        exc.value.message
        == "image_attributions.csv line 17: 11 cells, the header has 12. Nothing was imported."
    )
    assert Image.objects.count() == 0


def test_bad_latitude_names_file_line_and_value(tmp_path):
    rows = ["key,title,latitude,longitude"] + [f"k{i},t{i},{i},{i}" for i in range(2, 30)]
    rows[16] = "k17,Market,abc,10"
    metadata = write(tmp_path / "metadata.csv", "\n".join(rows) + "\n")

    with pytest.raises(CommandError) as exc:
        run("import_images", "--metadata", metadata)

    assert "metadata.csv line 17: latitude 'abc' is not a number" in str(exc.value)
    assert Image.objects.count() == 0


def test_every_problem_is_listed(tmp_path):
    shapes = write(tmp_path / "shapes.csv", "a,10,10\nb,wide,10\nc,10\na,5,5\n")
    with pytest.raises(ValidationFailed) as exc:
        images_import(shapes=shapes)
    assert exc.value.message.splitlines() == [
        "3 problems; nothing was imported:",
        "  shapes.csv line 2: width 'wide' is not a whole number of pixels.",
        "  shapes.csv line 3: expected key,width,height; found 2 cells.",
        "  shapes.csv line 4: image “a” appears twice (also shapes.csv line 1).",
    ]


def test_path_trick_key_in_metadata_is_refused(tmp_path):
    ids = write(tmp_path / "ids.txt", "good1\n../../etc/passwd\ngood2\n")
    with pytest.raises(
        ValidationFailed, match=r"ids.txt line 2: image key '../../etc/passwd' contains a path"
    ):
        images_import(metadata=ids)
    assert Image.objects.count() == 0


def test_file_that_is_not_utf8_names_the_line(tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_bytes(b"good1\ngood2\nbad\xff\n")
    with pytest.raises(ValidationFailed, match="ids.txt line 3: not UTF-8 text"):
        images_import(metadata=ids)
    assert Image.objects.count() == 0


def test_missing_input_file(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run("import_images", "--metadata", tmp_path / "nope.txt")


# --- Unknown keys and fields ------------------------------------------------------------------


def test_rows_for_unknown_keys_are_reported_and_skipped(tmp_path):
    ids = write(tmp_path / "ids.txt", "k1\nk2\n")
    shapes = write(tmp_path / "shapes.csv", "key,width,height\nk1,10,20\nstranger,30,40\n")

    report = images_import(metadata=ids, shapes=shapes)

    assert report.created == 2 and report.unknown_keys == ["stranger"] and report.skipped == 1
    assert "shapes.csv line 3 (stranger)" in report.warnings[0]
    assert sorted(Image.objects.values_list("key", "width")) == [("k1", 10), ("k2", None)]


def test_jsonl_metadata_with_unknown_fields_reported(tmp_path):
    lines = [
        {"key": "k1", "country": "Japan", "latitude": 35.6, "longitude": "139.7", "camera": "X100"},
        {"key": "k2", "continent": "Europe", "mood": "sunny"},
    ]
    metadata = write(tmp_path / "meta.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n")

    report = images_import(metadata=metadata)

    assert report.created == 2
    assert report.unknown_fields == ["meta.jsonl: camera, mood"]
    k1 = Image.objects.get(key="k1")
    assert (k1.country, k1.latitude, k1.longitude) == ("Japan", 35.6, 139.7)
    out = run("import_images", "--metadata", metadata)
    assert "2 unchanged" in out and "meta.jsonl: camera, mood" in out


def test_changed_metadata_is_updated_and_reported(tmp_path):
    write(tmp_path / "m.csv", "key,title\nk1,Old\nk2,Same\n")
    images_import(metadata=tmp_path / "m.csv")
    write(tmp_path / "m.csv", "key,title\nk1,New\nk2,Same\n")

    report = images_import(metadata=tmp_path / "m.csv")

    assert (report.created, report.updated, report.unchanged) == (0, 1, 1)
    assert report.changed_keys == ["k1"]
    assert Image.objects.get(key="k1").title == "New"


# --- Image files ------------------------------------------------------------------------------


@pytest.fixture
def folder(tmp_path) -> Path:
    folder = tmp_path / "images"
    folder.mkdir()
    (folder / "k1.jpg").write_bytes(jpeg_bytes())
    (folder / "k2.png").write_bytes(png_bytes(color=(3, 33, 133)))
    (folder / "stranger.png").write_bytes(png_bytes(color=(4, 44, 144)))
    (folder / "README.txt").write_text("where these come from")
    return folder


def test_folder_with_metadata(tmp_path, folder):
    ids = write(tmp_path / "ids.txt", "k1\nk2\nk3\n")

    report = images_import(folder=folder, metadata=ids)

    assert (report.created, report.files_stored, report.without_file) == (3, 2, 1)
    assert report.unknown_keys == ["stranger"]
    assert any("README.txt" in w for w in report.warnings)
    k1 = Image.objects.get(key="k1")
    assert k1.has_file and (k1.format, k1.width, k1.height) == ("JPEG", 20, 10)
    assert not Image.objects.get(key="k3").has_file
    assert not Image.objects.filter(key="stranger").exists()

    again = images_import(folder=folder, metadata=ids)
    assert (again.created, again.updated, again.unchanged, again.files_stored) == (0, 0, 3, 0)


def test_folder_alone_imports_every_file(folder):
    report = images_import(folder=folder)
    assert report.created == 3 and report.unknown_keys == []
    assert set(Image.objects.values_list("key", flat=True)) == {"k1", "k2", "stranger"}


def test_files_attach_to_metadata_imported_first(tmp_path, folder):
    write(tmp_path / "shapes.csv", "k1,640,480\nk2,800,600\n")
    images_import(metadata=write(tmp_path / "ids.txt", "k1\nk2\n"), shapes=tmp_path / "shapes.csv")
    assert Image.objects.get(key="k1").width == 640

    report = images_import(folder=folder, shapes=tmp_path / "shapes.csv")

    assert (report.created, report.updated, report.files_stored) == (1, 2, 3)  # stranger: no metadata given
    k1 = Image.objects.get(key="k1")
    assert k1.has_file and (k1.width, k1.height) == (20, 10)  # the file's size wins
    assert any("size differs from the shapes file" in w for w in report.warnings)


def test_a_disguised_file_in_the_folder_imports_nothing(tmp_path, folder):
    (folder / "evil.jpg").write_bytes(b"<html><script>alert(1)</script></html>")
    (folder / "cut.jpg").write_bytes(jpeg_bytes()[:200])

    with pytest.raises(ValidationFailed) as exc:
        images_import(folder=folder)

    assert "“evil.jpg”: not an image: the file is an HTML document." in exc.value.message
    assert "“cut.jpg”: the file is truncated or corrupt" in exc.value.message
    assert Image.objects.count() == 0


def test_the_same_picture_under_two_keys_imports_nothing(folder):
    shutil.copy(folder / "k2.png", folder / "k9.png")
    with pytest.raises(ValidationFailed, match="“k9.png”: the same picture as “k2.png”"):
        images_import(folder=folder)
    assert Image.objects.count() == 0


def test_a_picture_already_stored_under_another_key_imports_nothing(tmp_path):
    stored = ImageFactory(key="old")
    folder = tmp_path / "images"
    folder.mkdir()
    shutil.copy(stored.file.path, folder / "new.png")
    with pytest.raises(
        ValidationFailed, match="“new.png”: the same picture is already stored as image “old”"
    ):
        images_import(folder=folder)
    assert Image.objects.count() == 1


def test_oversize_file_in_folder_is_never_read(settings, folder):
    settings.IMAGE_MAX_BYTES = 100
    with pytest.raises(ValidationFailed, match="“k1.jpg”: the file is [\\d,]+ bytes; the limit is 100 bytes"):
        images_import(folder=folder)


def test_folder_dry_run_writes_nothing(tmp_path, folder):
    report = images_import(folder=folder, dry_run=True)
    assert (report.created, report.files_stored) == (3, 3)
    assert Image.objects.count() == 0


# --- System captions ----------------------------------------------------------------------------


@pytest.fixture
def coco_results(shared_data) -> Path:
    return shared_data / "coco-fakecap" / "captions_val2014_fakecap_results.json"


@pytest.fixture
def coco_images(coco_results) -> list[str]:
    keys = [str(entry["image_id"]) for entry in json.loads(coco_results.read_text())]
    Image.objects.bulk_create(Image(key=key) for key in keys)
    return keys


def test_coco_results_import_and_rerun(coco_results, coco_images):
    report = system_captions_import(path=coco_results, system_name="fakecap", language_code="en")

    assert (report.created, report.updated, report.unchanged) == (1000, 0, 0)
    caption = SystemCaption.objects.get(image__key="404464")
    assert caption.text == "black and white photo of a man standing in front of a building"
    assert (caption.system.name, caption.language.code) == ("fakecap", "en")

    again = system_captions_import(path=coco_results, system_name="fakecap", language_code="en")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 1000)
    assert SystemCaption.objects.count() == 1000


def test_changed_caption_is_updated_and_reported(tmp_path, coco_images):
    entries = [{"image_id": int(key), "caption": f"caption {key}"} for key in coco_images[:3]]
    path = write(tmp_path / "results.json", json.dumps(entries))
    system_captions_import(path=path, system_name="m1", language_code="en")
    entries[1]["caption"] = "a better caption"
    write(path, json.dumps(entries))

    report = system_captions_import(path=path, system_name="m1", language_code="en")

    assert (report.created, report.updated, report.unchanged) == (0, 1, 2)
    assert report.changed_keys == [f"{coco_images[1]} [en]"]
    assert SystemCaption.objects.get(image__key=coco_images[1]).text == "a better caption"


def test_coco_results_need_a_language(coco_results):
    with pytest.raises(CommandError, match="COCO results carry no language"):
        run("import_system_captions", coco_results, "--system", "fakecap")


def test_unknown_image_keys_are_reported_and_nothing_imported(coco_results, coco_images):
    Image.objects.filter(key__in=coco_images[:2]).delete()

    with pytest.raises(ValidationFailed) as exc:
        system_captions_import(path=coco_results, system_name="fakecap", language_code="en")
    assert "2 image keys not among the stored images" in exc.value.message
    assert exc.value.details == coco_images[:2]
    assert SystemCaption.objects.count() == 0 and not CaptioningSystem.objects.exists()

    report = system_captions_import(
        path=coco_results, system_name="fakecap", language_code="en", skip_unknown=True
    )
    assert report.created == 998 and report.unknown_keys == coco_images[:2] and report.skipped == 2


def xm3600_line(key: str, **captions: list[str]) -> str:
    line = {"image/key": key, "image/locale": "en"}
    for lang, texts in captions.items():
        line[lang] = {"caption": texts, "caption/tokenized": texts, "caption/tokenized/lowercase": texts}
    return json.dumps(line, ensure_ascii=False)


@pytest.fixture
def xm3600_captions(tmp_path) -> Path:
    for key in ("a1", "a2"):
        ImageFactory(key=key, with_file=False)
    lines = [
        xm3600_line(
            "a1", en=["A red tram.", "A tram."], de=["Eine rote Straßenbahn."], zh=["一辆红色电车。"]
        ),
        xm3600_line("a2", en=["Two dogs."], de=["Zwei Hunde."], zh=["两只狗。"]),
    ]
    return write(tmp_path / "captions.jsonl", "\n".join(lines) + "\n")


def test_xm3600_jsonl_imports_the_first_caption_of_every_language(xm3600_captions):
    report = system_captions_import(path=xm3600_captions, system_name="xm3600-refs")

    assert (report.created, report.languages) == (6, ["de", "en", "zh"])
    assert SystemCaption.objects.get(image__key="a1", language__code="en").text == "A red tram."
    assert Language.objects.get(code="zh").tokenizer == Tokenizer.CHAR
    again = system_captions_import(path=xm3600_captions, system_name="xm3600-refs")
    assert (again.created, again.unchanged) == (0, 6)


def test_xm3600_jsonl_one_language(xm3600_captions):
    out = run("import_system_captions", xm3600_captions, "--system", "refs", "--language", "de")
    assert "2 system captions: 2 created" in out
    assert set(SystemCaption.objects.values_list("language__code", flat=True)) == {"de"}


def test_flat_json_lines_import_as_the_evaluation_server_reads_them(tmp_path):
    # The server's flat line ({"image_id" | "image/key", "language" | "image/locale", "caption"}),
    # which the XM3600 reader refused, mixed with the dataset's own shape.
    ImageFactory(key="1", with_file=False)
    ImageFactory(key="a2", with_file=False)
    lines = [
        json.dumps({"image_id": 1, "language": "de", "caption": "Ein Hund.", "score": 0.5}),
        json.dumps({"image/key": "a2", "image/locale": "de", "caption": "Zwei Hunde."}),
        xm3600_line("a2", en=["Two dogs."]),
    ]
    path = write(tmp_path / "flat.jsonl", "\n".join(lines) + "\n")

    report = system_captions_import(path=path, system_name="flat")

    assert (report.created, report.languages) == (3, ["de", "en"])
    assert SystemCaption.objects.get(image__key="1", language__code="de").text == "Ein Hund."
    assert SystemCaption.objects.get(image__key="a2", language__code="de").text == "Zwei Hunde."
    assert report.unknown_fields == []  # score is COCO's own


def test_captions_dry_run_writes_nothing(xm3600_captions):
    out = run("import_system_captions", xm3600_captions, "--system", "refs", "--dry-run")
    assert "6 would be created" in out
    assert not SystemCaption.objects.exists() and not CaptioningSystem.objects.exists()
    assert not Language.objects.filter(code="zh").exists()


@pytest.mark.parametrize(
    ("second_line", "message"),
    [
        ('{"image/key": "a2", "en": {"caption": ["x"]}', "captions.jsonl line 2: malformed JSON"),
        (
            xm3600_line("a1", en=["Again."]),
            "captions.jsonl line 2: image/key “a1” appears twice (also captions.jsonl line 1)",
        ),
        (xm3600_line("a2", en=["   "]), "captions.jsonl line 2: empty caption."),
        (xm3600_line("a2", en=[]), "captions.jsonl line 2: no caption for 'en'."),
        (
            xm3600_line("a2", en=["x" * 1001]),
            "captions.jsonl line 2: the caption is 1001 characters; at most 1000.",
        ),
        ('{"something": "else"}', "captions.jsonl line 2: missing or invalid 'image/key' (or 'image_id')."),
    ],
)
def test_a_bad_caption_line_imports_nothing_and_names_the_line(tmp_path, second_line, message):
    ImageFactory(key="a1", with_file=False)
    ImageFactory(key="a2", with_file=False)
    path = write(tmp_path / "captions.jsonl", xm3600_line("a1", en=["A tram."]) + "\n" + second_line + "\n")

    with pytest.raises(CommandError) as exc:
        run("import_system_captions", path, "--system", "m1")

    assert message in str(exc.value)
    assert not SystemCaption.objects.exists() and not CaptioningSystem.objects.exists()


def test_duplicate_image_id_in_coco_results(tmp_path, coco_images):
    entries = [{"image_id": 1, "caption": "a"}, {"image_id": 1, "caption": "b"}]
    path = write(tmp_path / "results.json", json.dumps(entries, indent=1))
    with pytest.raises(ValidationFailed, match="results.json entry 2: image_id “1” appears twice"):
        system_captions_import(path=path, system_name="m1", language_code="en")


def test_malformed_coco_json_names_the_line(tmp_path):
    path = write(
        tmp_path / "results.json", '[\n{"image_id": 1, "caption": "a"},\n{"image_id": 2 "caption": "b"}\n]'
    )
    with pytest.raises(
        ValidationFailed, match=r"results.json line 3: malformed JSON \(Expecting ',' delimiter"
    ):
        system_captions_import(path=path, system_name="m1", language_code="en")
