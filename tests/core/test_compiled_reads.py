"""The reads every request makes with SQL built once (core.compiled_reads, core.sessions): the same
objects as the ORM's, every row read afresh, and sessions that behave as Django's database sessions
(logout, expiry, a new key at login)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.models import Session
from django.db.models.sql.query import Query
from django.utils import timezone

from annotation.auth import _USER_READ, AnnotatorAwareBackend
from core.sessions import SessionStore
from tests.annotation.test_screens import start_batch

pytestmark = pytest.mark.django_db
PASSWORD = "pw-for-the-compiled-read-test"


def _fields(obj) -> dict:
    return {k: v for k, v in vars(obj).items() if k != "_state"}


def test_the_user_and_profile_read_are_the_objects_the_orm_builds(annotator):
    ours = _USER_READ.read(pk=annotator.user.pk)
    orm = get_user_model().objects.select_related("annotator").get(pk=annotator.user.pk)
    assert _fields(ours) == _fields(orm)
    assert _fields(ours.annotator) == _fields(orm.annotator)
    assert ours.annotator.user is ours and ours._state.db == "default" and not ours._state.adding


def test_an_account_without_a_profile_reads_as_the_orm_reads_it(django_assert_num_queries):
    manager = get_user_model().objects.create_user("manager-c", password=PASSWORD)
    with django_assert_num_queries(1):
        user = _USER_READ.read(pk=manager.pk)
        assert not hasattr(user, "annotator")  # known absent: no second query to find out


def test_a_missing_row_is_none_and_a_changed_row_is_read_at_once(annotator):
    assert _USER_READ.read(pk=annotator.user.pk + 1000) is None
    get_user_model().objects.filter(pk=annotator.user.pk).update(first_name="Anna", is_active=False)
    user = _USER_READ.read(pk=annotator.user.pk)
    assert (user.first_name, user.is_active) == ("Anna", False)
    # An update() bypasses save() and every signal: the backend still refuses the account at once.
    assert AnnotatorAwareBackend().get_user(annotator.user.pk) is None


def test_the_sql_is_built_once_per_thread(annotator, monkeypatch):
    _USER_READ.read(pk=annotator.user.pk)
    built = []
    real = Query.get_compiler
    monkeypatch.setattr(Query, "get_compiler", lambda self, *a, **kw: built.append(1) or real(self, *a, **kw))
    for _ in range(3):
        assert _USER_READ.read(pk=annotator.user.pk).pk == annotator.user.pk
    assert built == []


def test_requests_read_their_session_from_the_database_in_one_query(annotator_client, campaign):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    batch = start_batch(annotator_client, campaign)
    with CaptureQueriesContext(connection) as ctx:
        assert (
            annotator_client.get(
                f"/work/api/batch/{batch.pk}/state/", HTTP_ACCEPT="application/json"
            ).status_code
            == 200
        )
    assert sum('FROM "django_session"' in q["sql"] for q in ctx.captured_queries) == 1


def _login(client, username):
    response = client.post("/accounts/login/", {"username": username, "password": PASSWORD})
    assert response.status_code == 302
    return client.cookies["sessionid"].value


@pytest.fixture
def anna_with_password(annotator):
    annotator.user.set_password(PASSWORD)
    annotator.user.save()
    return annotator


def test_login_gives_a_new_session_key_and_logout_ends_the_session(client, anna_with_password):
    client.get("/accounts/login/")
    store = SessionStore()
    store["before-login"] = 1
    store.save()
    client.cookies["sessionid"] = store.session_key
    key = _login(client, "anna")
    assert key != store.session_key  # no session fixation
    assert SessionStore(key).load()[SESSION_KEY] == str(anna_with_password.user.pk)
    assert client.get("/work/").status_code == 200

    client.post("/accounts/logout/")
    assert not Session.objects.filter(session_key=key).exists()
    client.cookies["sessionid"] = key  # the old cookie, replayed
    assert client.get("/work/").status_code == 302


def test_an_expired_session_is_never_read(client, anna_with_password):
    key = _login(client, "anna")
    assert client.get("/work/").status_code == 200
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    store = SessionStore(key)
    assert store.load() == {} and store.session_key is None
    assert client.get("/work/").status_code == 302  # to the login page


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_threads_reading_users_at_once_each_get_their_own_user(german):
    from django.db import connection

    from tests import factories as f
    from tests.annotation.parallel import fail_on_db_errors, run_threads

    if connection.vendor != "postgresql":
        pytest.skip("parallel connections are proven on PostgreSQL (set DATABASE_URL)")
    # As gunicorn's threads do: each compiles on its own connection, then reads many users.
    users = [f.AnnotatorFactory(languages=[german]).user for _ in range(8)]
    wrong = []

    def reader(offset):
        def read():
            for n in range(40):
                user = users[(offset + n) % len(users)]
                got = _USER_READ.read(pk=user.pk)
                if (got.pk, got.username, got.annotator.user_id) != (user.pk, user.username, user.pk):
                    wrong.append((user.pk, got.pk))

        return read

    fail_on_db_errors(run_threads([reader(i) for i in range(8)]))
    assert wrong == []


# --- the batch request's and the screens' reads (issue 24): two keys of one kind, constants, many rows


def test_a_batch_read_is_the_object_the_orm_builds_and_only_its_annotators(
    annotator_client, campaign, annotator
):
    from annotation.models import Batch
    from annotation.selectors import _BATCH_READS, batch_of
    from core.errors import NotFound
    from tests import factories as f

    batch = start_batch(annotator_client, campaign)
    orm = Batch.objects.select_related("campaign", "campaign__language").get(pk=batch.pk)
    for lock in (False, True):
        ours = _BATCH_READS[lock].read(batch_id=batch.pk, annotator_id=annotator.pk)
        assert _fields(ours) == _fields(orm)
        assert _fields(ours.campaign) == _fields(orm.campaign)
        assert _fields(ours.campaign.language) == _fields(orm.campaign.language)
    stranger = f.AnnotatorFactory(languages=[campaign.language])
    for who, batch_id in (
        (stranger, batch.pk),
        (annotator, batch.pk + 1000),
        (annotator, 2**63),
        (annotator, "x"),
    ):
        with pytest.raises(NotFound):
            batch_of(who, batch_id)


def test_two_keys_of_one_kind_each_reach_their_own_parameter(annotator_client, campaign, annotator):
    from annotation.models import Batch
    from annotation.selectors import _BATCH_READS

    batch = start_batch(annotator_client, campaign)
    # Swapped keys find nothing: each keyword went to its own column.
    if annotator.pk != batch.pk:
        assert _BATCH_READS[False].read(batch_id=annotator.pk, annotator_id=batch.pk) is None
    compiled = _BATCH_READS[True]._compile("default")
    assert sorted(compiled.slots) == ["annotator_id", "batch_id"]
    assert "FOR UPDATE" in compiled.sql or not compiled.connection.features.has_select_for_update
    assert Batch.objects.filter(pk=batch.pk).exists()


def test_constant_parameters_are_kept_and_a_finished_batch_is_not_open(annotator_client, campaign, annotator):
    from annotation.assignment.engine import _OPEN_BATCH_READ
    from annotation.models import Batch, BatchStage

    batch = start_batch(annotator_client, campaign)
    compiled = _OPEN_BATCH_READ._compile("default")
    assert [s for s in compiled.slots if isinstance(s, tuple)] == [("rating",), ("writing",)]
    assert _OPEN_BATCH_READ.read(campaign_id=campaign.pk, annotator_id=annotator.pk).pk == batch.pk
    Batch.objects.filter(pk=batch.pk).update(stage=BatchStage.SUBMITTED)
    assert _OPEN_BATCH_READ.read(campaign_id=campaign.pk, annotator_id=annotator.pk) is None


def test_all_reads_every_row_as_the_orm_does(annotator, campaign):
    from annotation.models import Enrolment
    from annotation.workforce.selectors import _ENROLMENTS_READ
    from tests import factories as f
    from tests.annotation.workforce_helpers import link_for

    assert _ENROLMENTS_READ.all(annotator_id=annotator.pk) == []
    other = f.CampaignFactory(language=campaign.language)
    for c in (campaign, other):
        Enrolment.objects.create(link=link_for(c), campaign=c, annotator=annotator)
    orm = list(Enrolment.objects.select_related("link").filter(annotator=annotator).order_by("pk"))
    ours = _ENROLMENTS_READ.all(annotator_id=annotator.pk)
    assert [_fields(o) for o in ours] == [_fields(o) for o in orm]
    assert [_fields(o.link) for o in ours] == [_fields(o.link) for o in orm]


def test_a_keyword_that_reaches_no_parameter_is_refused(annotator):
    from core.compiled_reads import CompiledRead

    read = CompiledRead(
        get_user_model(),
        lambda pk, other: get_user_model().objects.filter(pk=pk),
        {"pk": int, "other": int},
    )
    with pytest.raises(ValueError, match="no filter compares"):
        read.read(pk=annotator.user.pk, other=1)


def test_a_key_outside_its_columns_range_matches_no_row_without_a_query(annotator, django_assert_num_queries):
    from annotation.assignment.engine import _CAMPAIGN_READ

    _USER_READ.read(pk=annotator.user.pk)  # compiled
    _CAMPAIGN_READ.read(pk=1)
    with django_assert_num_queries(0):
        # As the ORM's lookups: an integer the column cannot hold finds nothing (SQLite could not bind it).
        assert _USER_READ.read(pk=2**63) is None
        assert _CAMPAIGN_READ.read(pk=-(2**63) - 1) is None
