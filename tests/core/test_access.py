"""One rule for who reads research outputs (RELIABILITY 13, 15): every research URL (the API with its
schema and docs, the report page and its plots, every export) asks ``core.access.can_read_research``,
so each kind of account gets the same answer everywhere, for GET and for every write method."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RegexPattern
from rest_framework.test import APIClient

from core.access import (
    PROJECT_MANAGERS,
    RESEARCHERS,
    can_read_research,
    is_annotator,
    is_project_manager,
    is_researcher,
    role_grant,
    roles_ensure,
)
from tests import factories as f

RESEARCH_NAMESPACES = ("api", "reports", "exports")
# Values for the URL arguments; the objects need not exist: the rule is checked before any lookup.
SAMPLE_ARGUMENTS = {"language": "de", "metric": "CIDEr-D", "fmt": "png"}
WRITE_METHODS = ("post", "put", "patch", "delete")


def research_urls() -> list[str]:
    """Every URL under /api/, /reports/ and /exports/, found from the URLconf (a new one is covered)."""
    urls = []
    for resolver in get_resolver().url_patterns:
        if not isinstance(resolver, URLResolver) or resolver.namespace not in RESEARCH_NAMESPACES:
            continue
        for pattern in resolver.url_patterns:
            assert isinstance(pattern, URLPattern), pattern
            if isinstance(pattern.pattern, RegexPattern):
                names = pattern.pattern.regex.groupindex
            else:
                names = pattern.pattern.converters
            kwargs = {name: SAMPLE_ARGUMENTS.get(name, 1) for name in names}
            urls.append(reverse(f"{resolver.namespace}:{pattern.name}", kwargs=kwargs))
    return urls


@pytest.fixture
def accounts(db):
    roles_ensure()
    german = f.LanguageFactory(code="de", name="German")
    researcher = f.UserFactory(username="acc-researcher")
    role_grant(user=researcher, role=RESEARCHERS)
    manager = f.UserFactory(username="acc-manager")
    role_grant(user=manager, role=PROJECT_MANAGERS)
    # An annotator put in a role group by mistake is still an annotator: never research outputs.
    misfiled = f.AnnotatorFactory(user__username="acc-misfiled", languages=[german]).user
    role_grant(user=misfiled, role=RESEARCHERS)
    return {
        "annotator": f.AnnotatorFactory(user__username="acc-annotator", languages=[german]).user,
        "annotator in a role group": misfiled,
        "researcher": researcher,
        "project manager": manager,
        "staff without a role": f.UserFactory(username="acc-staff", is_staff=True),
        "superuser": f.UserFactory(username="acc-root", is_staff=True, is_superuser=True),
        "account without a role": f.UserFactory(username="acc-plain"),
    }


ALLOWED = {"researcher", "project manager", "superuser"}


def test_the_url_list_covers_the_api_the_report_page_and_the_exports():
    urls = research_urls()
    assert {"/api/languages/", "/api/metric-runs/", "/api/schema/", "/api/docs/", "/reports/"} <= set(urls)
    assert "/reports/scatter/CIDEr-D.png" in urls
    assert "/exports/" in urls and "/exports/campaigns/1/ratings.csv.provenance.json" in urls
    assert (
        len([url for url in urls if url.startswith("/exports/")]) == 27
    )  # index, 12 campaign exports (captions 2, ratings 2, judgments 2, work time 2, hours 2, controls 2),
    # 1 system export, and each export's provenance sidecar


def test_the_predicates(accounts):
    for name, user in accounts.items():
        assert can_read_research(user) is (name in ALLOWED), name
    assert is_annotator(accounts["annotator"]) and not is_annotator(accounts["researcher"])
    assert is_researcher(accounts["researcher"]) and not is_researcher(accounts["annotator in a role group"])
    assert is_project_manager(accounts["project manager"]) and not is_project_manager(accounts["researcher"])
    accounts["researcher"].is_active = False
    assert not can_read_research(accounts["researcher"])


def test_anonymous_visitors_are_refused_everywhere():
    client = APIClient()
    for url in research_urls():
        for method in ("get", *WRITE_METHODS):
            response = getattr(client, method)(url)
            if url.startswith("/api/"):
                assert response.status_code == 401, (method, url)
            else:
                assert response.status_code == 302, (method, url)
                assert response["Location"].startswith(reverse("login")), (method, url)


@pytest.mark.parametrize(
    "name",
    ["annotator", "annotator in a role group", "staff without a role", "account without a role"],
)
def test_every_research_url_refuses_accounts_without_a_research_role(accounts, name):
    client = APIClient()
    client.force_login(accounts[name])
    for url in research_urls():
        for method in ("get", *WRITE_METHODS):
            response = getattr(client, method)(url)
            assert response.status_code == 403, (name, method, url, response.status_code)


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_every_research_url_lets_researchers_managers_and_superusers_past_the_rule(accounts, name):
    """Past the rule: the view answers (200, or 404 for an object that does not exist, 400 for a
    missing parameter, 405 for a method it does not take), never 401, 403 or the login page."""
    client = APIClient()
    client.force_login(accounts[name])
    for url in research_urls():
        for method in ("get", *WRITE_METHODS):
            response = getattr(client, method)(url)
            assert response.status_code in (200, 400, 404, 405), (name, method, url, response.status_code)
        assert client.get(url).status_code != 405, url
    assert client.get("/reports/").status_code == 200
    assert client.get("/exports/").status_code == 200
    assert client.get("/api/campaigns/").status_code == 200


def test_every_migrate_grants_the_roles_the_permissions_of_new_models(db):
    """A deployment never runs load_demo: the role groups come from migrate itself, and an upgrade that
    adds a model (the retrieval checks) gives managers its add/change/view and researchers its view."""
    from django.apps import apps
    from django.contrib.auth.models import Group

    from core.apps import roles_after_migrate

    managers = Group.objects.get(name=PROJECT_MANAGERS)  # created by the test database's migrate
    assert managers.permissions.filter(codename="add_retrievalcheck").exists()
    managers.permissions.clear()  # as before an upgrade brought the model
    roles_after_migrate(sender=apps.get_app_config("annotation"))  # another app's turn: nothing yet
    assert not managers.permissions.exists()
    roles_after_migrate(sender=apps.get_app_config("core"))
    assert managers.permissions.filter(codename="add_retrievalcheck").exists()
    assert Group.objects.get(name=RESEARCHERS).permissions.filter(codename="view_retrievalcheck").exists()
