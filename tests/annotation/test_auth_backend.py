"""The authentication backend of every request (annotation.auth, issue 24): the user and their
annotator profile in one query, and Django's checks still applied at once (a deactivated account,
a changed password, a changed role)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.auth import AnnotatorAwareBackend
from core.access import is_annotator
from tests.annotation.test_screens import start_batch

JSON = {"HTTP_ACCEPT": "application/json"}


def _state(client, batch):
    return client.get(reverse("annotation:api_state", args=[batch.pk]), **JSON)


def test_the_user_and_their_annotator_profile_are_one_query(annotator, django_assert_num_queries):
    with django_assert_num_queries(1):
        user = AnnotatorAwareBackend().get_user(annotator.user.pk)
        assert is_annotator(user) and user.annotator.pk == annotator.pk


def test_an_account_without_a_profile_is_one_query_too_and_no_annotator(db, django_assert_num_queries):
    manager = get_user_model().objects.create_user("manager-x", password="pw-for-the-test-1")
    with django_assert_num_queries(1):
        user = AnnotatorAwareBackend().get_user(manager.pk)
        assert user.pk == manager.pk and not is_annotator(user)


def test_a_missing_or_deactivated_account_gets_no_user(annotator):
    backend = AnnotatorAwareBackend()
    assert backend.get_user(annotator.user.pk + 1000) is None
    annotator.user.is_active = False
    annotator.user.save(update_fields=["is_active"])
    assert backend.get_user(annotator.user.pk) is None


def test_an_annotator_request_reads_session_and_user_with_profile_and_nothing_more(
    annotator_client, campaign, django_assert_num_queries
):
    batch = start_batch(annotator_client, campaign)
    # The state endpoint reads the batch only: session, user with profile, batch (and its parts).
    with CaptureQueriesContext(connection) as ctx:
        assert _state(annotator_client, batch).status_code == 200
    tables = [q["sql"] for q in ctx.captured_queries]
    assert sum('FROM "auth_user"' in sql for sql in tables) == 1
    assert not any(sql.startswith("SELECT") and 'FROM "annotation_annotator"' in sql for sql in tables)


def test_deactivating_an_annotator_signs_their_open_session_out_at_once(
    annotator_client, campaign, annotator
):
    batch = start_batch(annotator_client, campaign)
    assert _state(annotator_client, batch).status_code == 200
    annotator.user.is_active = False
    annotator.user.save(update_fields=["is_active"])
    assert _state(annotator_client, batch).status_code == 403


def test_a_password_change_elsewhere_signs_the_old_session_out_at_once(annotator_client, campaign, annotator):
    batch = start_batch(annotator_client, campaign)
    assert _state(annotator_client, batch).status_code == 200
    user = get_user_model().objects.get(pk=annotator.user.pk)
    user.set_password("a-new-password-for-the-test")
    user.save()
    # Session hash verification: the session was made with the old password's hash.
    assert _state(annotator_client, batch).status_code == 403
