"""The one family of domain errors that services raise, and the handlers that render them.

Views and API views never build error responses by hand: a service raises, and
``api_exception_handler`` (DRF) or ``DomainErrorMiddleware``-style handling in the views
turns the error into a status code and a message the user can act on.
"""

from __future__ import annotations

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
    status_code = 400
    code = "invalid"


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
        return Response(exc.as_dict(), status=exc.status_code)
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
