"""The shared admin plumbing (core.admin): a read-only record offers no add or change to anyone, not even a
superuser, and is deleted only where the admin says so; the count columns sort and show their counts."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import RequestFactory

from annotation.models import Batch, Enrolment, Language
from tests import factories as f

pytestmark = pytest.mark.django_db


def _request(user):
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def test_read_only_records_offer_no_add_or_change_even_to_a_superuser():
    request = _request(f.UserFactory(is_staff=True, is_superuser=True))
    batches, enrolments = admin.site._registry[Batch], admin.site._registry[Enrolment]
    for model_admin in (batches, enrolments):
        assert not model_admin.has_add_permission(request)
        assert not model_admin.has_change_permission(request)
        assert model_admin.has_view_permission(request)
    # A batch is annotators' work: never deleted here. An enrolment may go (deletable = True).
    assert not batches.has_delete_permission(request)
    assert enrolments.has_delete_permission(request)
    # ... but only for someone who has the delete permission at all.
    assert not enrolments.has_delete_permission(_request(f.UserFactory(is_staff=True)))


def test_the_language_list_counts_and_sorts_by_annotators(admin_client):
    german, french = f.LanguageFactory(code="de", name="German"), f.LanguageFactory(code="fr", name="French")
    f.AnnotatorFactory(languages=[german])
    f.AnnotatorFactory(languages=[german, french])
    column = admin.site._registry[Language].annotators
    assert column.short_description == "annotators" and column.admin_order_field == "n_annotators"
    response = admin_client.get("/admin/annotation/language/", {"o": "-5"})
    assert response.status_code == 200
    rows = [(lang.code, lang.n_annotators) for lang in response.context["cl"].result_list]
    assert rows[:2] == [("de", 2), ("fr", 1)]


def test_a_condition_filter_shows_the_rows_that_meet_the_chosen_condition(admin_client):
    stored, missing = f.ImageFactory(key="with-file"), f.ImageFactory(key="without-file", with_file=False)
    url = "/admin/annotation/image/"
    keys = {
        choice: {image.key for image in admin_client.get(url, {"has_file": choice}).context["cl"].result_list}
        for choice in ("yes", "no")
    }
    assert keys == {"yes": {stored.key}, "no": {missing.key}}
    # No choice: every row.
    assert len(admin_client.get(url).context["cl"].result_list) == 2


def test_a_service_checked_form_shows_the_services_refusal_and_stores_nothing(admin_client):
    from annotation.models import LanguageArea

    german = f.LanguageFactory(code="de", name="German")
    response = admin_client.post(
        "/admin/annotation/languagearea/add/",
        {"language": german.pk, "country_code": "XX", "region": "", "note": ""},
    )
    assert response.status_code == 200  # the form again, with the service's message
    assert response.context["adminform"].form.non_field_errors()
    assert not LanguageArea.objects.exists()
