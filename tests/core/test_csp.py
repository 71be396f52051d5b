"""The Content-Security-Policy (RELIABILITY 20): the policy django-csp sends, on every kind of
response, and the environment override."""

from __future__ import annotations

import pytest
from django.conf import settings

from core.csp import directives_from_string

EXPECTED = {
    "default-src": ["'self'"],
    "img-src": ["'self'", "data:", "blob:"],
    "style-src": ["'self'"],
    "script-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}


def test_the_default_policy_is_the_strict_one():
    assert settings.CONTENT_SECURITY_POLICY["DIRECTIVES"] == EXPECTED


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    ["/accounts/login/", "/healthz", "/api/languages/", "/no-such-page/", "/exports/"],
)
def test_every_response_carries_the_whole_policy(client, url):
    response = client.get(url)
    assert directives_from_string(response["Content-Security-Policy"]) == EXPECTED, url
    assert "unsafe-inline" not in response["Content-Security-Policy"]


def test_a_policy_string_from_the_environment_becomes_directives():
    assert directives_from_string(
        "default-src 'self';  img-src 'self' https://img.example.org ; upgrade-insecure-requests;"
    ) == {
        "default-src": ["'self'"],
        "img-src": ["'self'", "https://img.example.org"],
        "upgrade-insecure-requests": True,
    }


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ("default-src 'self'; scirpt-src 'self'", "Unknown Content-Security-Policy directive 'scirpt-src'"),
        ("default-src 'self'; img-src 'self'; img-src data:", "'img-src' is given twice"),
        ("default-src 'self'; script-src", "'script-src' has no sources"),
        ("script-src 'self'", "needs a default-src"),
    ],
)
def test_a_policy_string_with_a_typo_is_refused(policy, message):
    with pytest.raises(ValueError, match=message):
        directives_from_string(policy)


@pytest.mark.django_db
def test_the_header_built_once_is_the_one_django_csp_builds(client):
    from csp.utils import build_policy

    first, second = client.get("/healthz"), client.get("/accounts/login/")
    assert first["Content-Security-Policy"] == second["Content-Security-Policy"] == build_policy()
    assert "Content-Security-Policy-Report-Only" not in first


@pytest.mark.django_db
def test_a_changed_policy_is_sent_at_once_and_a_report_only_policy_too(client, settings):
    from csp.utils import build_policy

    client.get("/healthz")  # the header text of the old policy is built
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"img-src": ["'self'"]}}
    response = client.get("/healthz")
    assert response["Content-Security-Policy"] == "default-src 'none'"
    assert "img-src 'self'" in response["Content-Security-Policy-Report-Only"]
    assert response["Content-Security-Policy-Report-Only"] == build_policy(report_only=True)


def test_a_view_with_its_own_policy_or_a_nonce_gets_the_header_django_csp_builds(rf, settings):
    from csp.constants import NONCE
    from csp.decorators import csp_update
    from csp.middleware import CSPMiddleware
    from django.http import HttpResponse

    from core.middleware import CachedCSPMiddleware

    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {**EXPECTED, "script-src": ["'self'", NONCE]}}

    @csp_update({"img-src": ["https://maps.example.org"]})
    def own_policy(request):
        return HttpResponse("ok")

    def with_nonce(request):
        return HttpResponse(str(request.csp_nonce))

    def plain(request):
        return HttpResponse("ok")

    for view in (own_policy, with_nonce, plain):
        ours, theirs = CachedCSPMiddleware(view)(rf.get("/")), CSPMiddleware(view)(rf.get("/"))
        if view is with_nonce:  # a fresh nonce per response, in the header
            assert f"'nonce-{ours.content.decode()}'" in ours["Content-Security-Policy"]
            ours_header = ours["Content-Security-Policy"].replace(ours.content.decode(), "N")
            theirs_header = theirs["Content-Security-Policy"].replace(theirs.content.decode(), "N")
            assert ours_header == theirs_header
        else:
            assert ours["Content-Security-Policy"] == theirs["Content-Security-Policy"], view
    assert (
        "https://maps.example.org" in CachedCSPMiddleware(own_policy)(rf.get("/"))["Content-Security-Policy"]
    )
