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
