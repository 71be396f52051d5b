"""Hostile result files: what a file can make is bounded, not only its bytes; a body over the limit is
refused before it is read on the upload page and the API alike; refused files are limited per account
and per team; nothing is stored for any of them."""

from __future__ import annotations

import io
import json
import random
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile, TemporaryUploadedFile
from django.test import Client
from django.urls import reverse

from challenges.files import SubmissionInvalid, submission_parse
from challenges.models import ScoringUnit, Submission, SubmissionCaption, Team
from challenges.services import SubmissionRefused, api_token_rotate, submission_from_upload
from tests import factories as f
from tests.challenges.conftest import coco

MB = 1024 * 1024
KEYS = [str(i) for i in range(1, 7)]


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def empty_lists(n_bytes: int) -> bytes:
    """``[[],[],...]``: three bytes make a list object of 56 bytes and its slot in the outer list."""
    return b"[" + b"[]," * (n_bytes // 3) + b"[]]"


def peak_while(operation) -> tuple[int, object]:
    """The peak of Python's allocations (bytes) while ``operation`` runs, and what it raised or returned."""
    tracemalloc.start()
    try:
        try:
            outcome = operation()
        except Exception as exc:  # noqa: BLE001 - returned to the test
            outcome = exc
        return tracemalloc.get_traced_memory()[1], outcome
    finally:
        tracemalloc.stop()


def parse(data, filename="r.zip", language=None):
    return submission_parse(
        data, filename=filename, languages=["de", "en"], image_keys=KEYS, language=language
    )


def test_a_60_kb_zip_of_60_mb_of_empty_lists_is_refused_in_bounded_memory():
    bomb = zipped({"de.json": empty_lists(60 * MB)})
    assert len(bomb) < 100 * 1024  # json.loads made 20 million lists of it: 1.3 GB
    peak, error = peak_while(lambda: parse(bomb))
    assert isinstance(error, SubmissionInvalid)
    assert peak < 50 * MB, f"{peak / MB:.0f} MB"
    stop = "de.json entry 125: more than 124 entries in the file (the phase needs 12: one caption per image"
    assert error.problems[-1].startswith(stop) and error.total == 125


def test_a_60_kb_json_of_small_objects_stops_at_the_entry_budget():
    bomb = empty_lists(60 * 1024)
    error = pytest.raises(SubmissionInvalid, parse, bomb, filename="r.json", language="de").value
    assert error.problems[-1].startswith("r.json entry 113: more than 112 entries in the file")
    assert error.total == 113  # 112 entries that are not objects, then nothing after the budget was read


def test_a_file_of_wrong_entries_is_read_only_up_to_a_thousand_problems():
    # An XM3600-size phase of two languages may hold 14,500 entries; the bomb holds 20 million.
    keys = [str(100_000 + i) for i in range(3600)]
    bomb = zipped({"de.json": empty_lists(60 * MB)})
    error = pytest.raises(
        SubmissionInvalid, submission_parse, bomb, filename="r.zip", languages=["de", "en"], image_keys=keys
    ).value
    assert error.total == 1001 and len(error.problems) == 21
    assert (
        error.problems[-1] == "de.json entry 1001: 1,000 problems before this; nothing from here on was read"
    )


def test_an_entry_of_a_million_values_is_refused_at_its_limit():
    bomb = b'[{"image_id": 1, "caption": "x", "score": [' + b"0," * 500_000 + b"0]}]"
    peak, error = peak_while(lambda: parse(bomb, filename="r.json", language="de"))
    assert isinstance(error, SubmissionInvalid) and peak < 10 * MB
    assert "r.json entry 1: more than 64 keys and values in one entry" in error.problems[0]


def test_an_xm3600_line_of_100_000_language_blocks_is_refused_at_its_limit():
    # An XM3600 line may hold a block per language (16 keys and values each, beyond the flat 64), so the
    # limit of one line grows with the benchmark's languages, never with the file.
    blocks = b",".join(b'"l%d": {"caption": ["x"]}' % i for i in range(100_000))
    bomb = b'{"image/key": "1", ' + blocks + b"}\n"
    peak, error = peak_while(lambda: parse(bomb, filename="r.jsonl"))
    assert isinstance(error, SubmissionInvalid) and peak < 10 * MB, f"{peak / MB:.0f} MB"
    assert error.problems[0].startswith("r.jsonl line 1: more than 96 keys and values in one entry")


def test_a_zip_member_inflating_past_its_declared_size_is_stopped_in_bounded_memory():
    data = bytearray(zipped({"de.json": empty_lists(30 * MB)}))
    # The central directory says the member inflates to 1 KB; it inflates to 30 MB.
    at = data.rfind(b"PK\x01\x02")
    data[at + 24 : at + 28] = (1024).to_bytes(4, "little")
    peak, error = peak_while(lambda: parse(bytes(data)))
    assert isinstance(error, SubmissionInvalid) and peak < 50 * MB, f"{peak / MB:.0f} MB"
    # zipfile stops at the declared size and finds the checksum wrong: nothing past 1 KB was inflated.
    assert error.problems == ["archive member “de.json”: cannot be read (Bad CRC-32 for file 'de.json')"]


def test_a_zip_of_a_thousand_to_one_blank_is_stopped_at_the_value_limit():
    bomb = zipped({"de.json": b"[" + b" " * (60 * MB) + b"]"})
    assert len(bomb) < 80 * 1024
    peak, error = peak_while(lambda: parse(bomb))
    assert isinstance(error, SubmissionInvalid) and peak < 50 * MB, f"{peak / MB:.0f} MB"
    assert "a single JSON value (or run of blanks) of more than 4,194,304 bytes" in error.problems[0]


def test_a_zip_inside_a_zip_is_not_opened_whatever_its_name():
    inner = zipped({"de.json": empty_lists(10 * MB)})
    error = pytest.raises(SubmissionInvalid, parse, zipped({"inner.zip": inner, "de.json": inner})).value
    assert error.problems[:2] == [
        "inner.zip: only .json and .jsonl members are read",
        "de.json: only .json and .jsonl members are read",
    ]


def junk_upload(n_bytes: int) -> TemporaryUploadedFile:
    upload = TemporaryUploadedFile("r.json", "application/json", n_bytes, None)
    rng = random.Random(34)
    for _ in range(n_bytes // MB):
        upload.write(rng.randbytes(MB))
    upload.seek(0)
    return upload


def test_45_mb_of_junk_through_the_upload_service_is_refused_in_bounded_memory(bench):
    upload = junk_upload(45 * MB)
    fields = {"language": "de", "method_name": "m", "description": "", "paper_url": "", "code_url": ""}
    peak, error = peak_while(
        lambda: submission_from_upload(
            phase=bench["val"], user=bench["member"], cleaned={"file": upload, **fields}
        )
    )
    upload.close()
    assert isinstance(error, SubmissionRefused), error
    assert peak < 10 * MB, f"{peak / MB:.0f} MB"  # the file was read whole before: 45 MB and more
    assert error.total == 1 and "r.json: line 1: not UTF-8 text (byte " in error.problems[0]
    assert Submission.objects.count() == 0


class Unreadable(io.RawIOBase):
    """A request body that fails the test if anything reads it."""

    def read(self, size=-1):
        raise AssertionError("the body was read")

    readline = readinto = read


def unread_post(client: Client, url: str, length: int, **headers):
    return client.post(
        url,
        CONTENT_TYPE="multipart/form-data; boundary=xyz",
        CONTENT_LENGTH=str(length),
        **{"wsgi.input": Unreadable()},
        **headers,
    )


def stored() -> tuple:
    media = Path(django_settings.MEDIA_ROOT) / "submissions"
    files = sorted(p.name for p in media.rglob("*") if p.is_file()) if media.exists() else []
    return (
        Submission.objects.count(),
        SubmissionCaption.objects.count(),
        ScoringUnit.objects.count(),
        files,
    )


def test_a_body_declared_over_the_limit_is_refused_on_both_paths_without_reading_it(bench, settings):
    before = stored()
    over = settings.SUBMISSION_MAX_BYTES + 64 * 1024 + 1
    page = Client()
    page.force_login(bench["member"])
    answer = unread_post(page, reverse("challenges:submit", args=[bench["val"].pk]), over)
    assert answer.status_code == 413
    assert "The file is larger than 50.0\xa0MB, the limit for this upload" in answer.content.decode()
    token = api_token_rotate(user=bench["member"])
    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    answer = unread_post(api, reverse("challenges-api:submissions", args=[bench["val"].pk]), over)
    assert answer.status_code == 413 and answer.json()["error"] == "too_large"
    assert f"larger than {over - 1:,} bytes (a file of at most 52,428,800 bytes" in answer.json()["message"]
    # Within the limit the body is read: the same unreadable body now fails the test.
    with pytest.raises(AssertionError, match="the body was read"):
        unread_post(api, reverse("challenges-api:submissions", args=[bench["val"].pk]), over - 1)
    assert stored() == before


def test_an_account_in_no_team_of_a_public_benchmark_is_refused_before_its_body_is_read(bench):
    before = stored()
    bench["val"].visibility = "public"
    bench["val"].save()
    stranger = f.UserFactory(username="stranger")
    client = Client()
    client.force_login(stranger)
    answer = unread_post(client, reverse("challenges:submit", args=[bench["val"].pk]), 10 * MB)
    assert answer.status_code == 403
    assert "Only a member of a team of this benchmark can submit." in answer.content.decode()
    token = api_token_rotate(user=stranger)
    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    answer = unread_post(api, reverse("challenges-api:submissions", args=[bench["val"].pk]), 10 * MB)
    assert answer.status_code == 403 and answer.json()["error"] == "forbidden"
    assert stored() == before


def test_a_file_past_the_limit_within_the_multipart_allowance_is_stopped_while_it_streams(bench, settings):
    settings.SUBMISSION_MAX_BYTES = 1000
    before = stored()
    client = Client()
    client.force_login(bench["member"])
    data = coco(bench["val_images"], text=lambda i, im: f"ein hund {i} " + "x" * 900)
    assert 1000 < len(data) < 64 * 1024
    answer = client.post(
        reverse("challenges:submit", args=[bench["val"].pk]),
        {"file": SimpleUploadedFile("r.json", data), "language": "de", "method_name": "m"},
    )
    assert answer.status_code == 413
    assert "The file is larger than 1000\xa0bytes, the limit for this upload" in answer.content.decode()
    assert stored() == before


BAD = json.dumps([{"image_id": 999, "caption": "x"}]).encode()


def page_upload(client, phase, data):
    return client.post(
        reverse("challenges:submit", args=[phase.pk]),
        {"file": SimpleUploadedFile("r.json", data), "language": "de", "method_name": "m"},
    )


def api_upload(client, phase, data):
    return client.post(
        reverse("challenges-api:submissions", args=[phase.pk]),
        {"file": SimpleUploadedFile("r.json", data), "language": "de", "method_name": "m"},
    )


def second_team(bench, name):
    team = Team.objects.create(name=f"{name} team")
    team.benchmarks.add(bench["benchmark"])
    user = f.UserFactory(username=name)
    team.members.add(user)
    return user


@pytest.fixture
def clock(monkeypatch):
    """A still clock at the start of a minute: the limit's windows (core/ratelimit.py) then end exactly
    61 minutes on (its 60 slots of a minute and the current one)."""
    monkeypatch.setattr(time, "time", lambda: 1_800_000_000.0)


def test_the_twenty_first_refused_file_of_an_hour_is_refused_unread_on_the_page(bench, settings, clock):
    assert settings.SUBMISSION_REFUSED_RATE == "20/h"
    phase = bench["val"]
    client = Client()
    client.force_login(bench["member"])
    for _ in range(19):
        assert page_upload(client, phase, BAD).status_code == 400
    assert page_upload(client, phase, coco(bench["val_images"])).status_code == 302  # accepted: not counted
    assert page_upload(client, phase, BAD).status_code == 400  # the 20th refused file
    before = stored()
    answer = page_upload(client, phase, coco(bench["val_images"]))
    assert answer.status_code == 429 and answer["Retry-After"] == "3660"
    page = answer.content.decode()
    assert "Too many refused files from your account or team: try again in 61 minutes." in page
    assert "Refused files use none of your submissions" in page
    assert stored() == before
    # The team's other member is refused too (the team's count); another team is not.
    teammate = f.UserFactory(username="tom")
    bench["team"].members.add(teammate)
    client.force_login(teammate)
    assert page_upload(client, phase, coco(bench["val_images"])).status_code == 429
    client.force_login(second_team(bench, "rita"))
    assert page_upload(client, phase, coco(bench["val_images"])).status_code == 302


def test_the_twenty_first_refused_file_of_an_hour_is_a_429_in_the_api(bench, clock):
    phase = bench["val"]
    api = Client(HTTP_AUTHORIZATION=f"Token {api_token_rotate(user=bench['member'])}")
    for _ in range(10):
        assert api_upload(api, phase, BAD).status_code == 400
    assert api_upload(api, phase, coco(bench["val_images"])).status_code == 201
    for _ in range(10):
        assert api_upload(api, phase, BAD).status_code == 400
    before = stored()
    answer = unread_post(api, reverse("challenges-api:submissions", args=[phase.pk]), 1000)
    assert answer.status_code == 429 and answer["Retry-After"] == "3660"
    body = answer.json()
    assert body["error"] == "too_many_refused" and "try again in 61 minutes" in body["message"]
    assert stored() == before
    other = Client(HTTP_AUTHORIZATION=f"Token {api_token_rotate(user=second_team(bench, 'rita'))}")
    assert api_upload(other, phase, coco(bench["val_images"])).status_code == 201


def test_a_mistyped_refused_rate_stops_the_start(settings):
    from django.core.checks import run_checks

    settings.SUBMISSION_REFUSED_RATE = "20 an hour"
    errors = [e for e in run_checks() if e.id == "core.E001"]
    assert [e.obj for e in errors] == ["SUBMISSION_REFUSED_RATE"]
