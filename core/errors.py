"""The one family of domain errors that services raise, and the handlers that render them.

Views and API views never build error responses by hand: a service raises, and
``api_exception_handler`` (DRF, the API) or ``DomainErrorMiddleware`` (HTML pages) turns the error
into a status code and a message the user can act on. A view catches a domain error only to do
something else with it: re-show its form with the message, or redirect with it.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.cache import add_never_cache_headers
from django.views.defaults import page_not_found
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler


class DomainError(Exception):
    """Base of every error a service raises on purpose. ``message`` is shown to the user."""

    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, details: dict | list | None = None):
        super().__init__(message)
        self.message = message
        self.details = details

    def as_dict(self) -> dict:
        body = {"error": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return body


class ValidationFailed(DomainError):
    """The input breaks a rule: the base's status 400 and code "invalid"."""


class NotFound(DomainError):
    # Also used for objects that exist but belong to someone else: a probe learns nothing.
    status_code = 404
    code = "not_found"


class NotAllowed(DomainError):
    status_code = 403
    code = "forbidden"


class Conflict(DomainError):
    """The request is valid but the object is in a state that does not allow it."""

    status_code = 409
    code = "conflict"


class AlreadySubmitted(Conflict):
    """The batch was submitted (from this page or another tab): the page must turn read-only."""

    code = "submitted"


class EditConflict(Conflict):
    """Another tab or window changed the same thing since this page last saw it. ``details``
    carries, per item, both versions so the user can choose."""

    code = "edit_conflict"


class TooLarge(DomainError):
    """A body or file over its limit, refused before it was read."""

    status_code = 413
    code = "too_large"


class RateLimited(DomainError):
    """Too many of something in a while: ``retry_after`` seconds until it is let through again (the
    answer's ``Retry-After``)."""

    status_code = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int, details: dict | list | None = None):
        super().__init__(message, details=details)
        self.retry_after = retry_after


class JobsUnavailable(DomainError):
    """A job could not be handed to the workers (the broker is down). Nothing else is affected: the
    job is stored, marked failed with the reason, and can be resumed once the broker is back."""

    status_code = 503
    code = "jobs_unavailable"


class NoWorkAvailable(DomainError):
    status_code = 409
    code = "no_work"


def _first_message(detail) -> str:
    if isinstance(detail, dict):
        for field, value in detail.items():
            message = _first_message(value)
            return message if field == "non_field_errors" else f"{field}: {message}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


def api_exception_handler(exc, context):
    if isinstance(exc, DomainError):
        response = Response(exc.as_dict(), status=exc.status_code)
        if isinstance(exc, RateLimited):
            response["Retry-After"] = str(exc.retry_after)
        return response
    response = exception_handler(exc, context)
    if response is not None and isinstance(exc, drf_exceptions.ValidationError):
        # Same shape as domain errors, so the pages can always show ``message``.
        response.data = {"error": "invalid", "message": _first_message(exc.detail), "details": exc.detail}
    elif response is not None and isinstance(exc, drf_exceptions.APIException):
        # Parse errors, 401/403/405/413/429: ``message`` too (``detail`` stays for existing clients).
        detail, code = str(exc.detail), exc.get_codes()
        response.data = {
            "error": code if isinstance(code, str) else "error",
            "message": detail,
            "detail": detail,
        }
    return response


def domain_error_page(request, exc: DomainError) -> HttpResponse:
    """The HTML page for a domain error a view let through, in the visitor's interface language.

    ``NotFound`` is the site's own 404 page, word for word what a missing address gives: a probe of
    someone else's batch or image learns nothing more. Any other error shows its message on the
    error page under its own status. Never cached: the same address may work a moment later."""
    if isinstance(exc, NotFound):
        response = page_not_found(request, Http404())
    else:
        response = render(request, "core/domain_error.html", {"message": exc.message}, status=exc.status_code)
        if isinstance(exc, RateLimited):
            response["Retry-After"] = str(exc.retry_after)
    add_never_cache_headers(response)
    return response


class DomainErrorMiddleware:
    """Renders a ``DomainError`` raised by a page's view (:func:`domain_error_page`). API views never
    get here: DRF hands their errors to :func:`api_exception_handler` first."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, DomainError):
            return domain_error_page(request, exception)
        return None
