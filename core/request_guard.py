"""What a request may carry before any view sees it, and the answers for what it may not.

* A NUL character in a query parameter (name or value) is a 400 on every page: PostgreSQL cannot
  compare text with NUL in it, so an admin list filter such as ``?key=%00`` used to end in a 500.
* An API request (any path with an ``/api/`` segment) whose declared body is larger than
  ``API_MAX_BODY_BYTES`` is a 413 before the body is read.
* Errors Django raises itself before a view runs (a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, too many
  form fields, a path that resolves to nothing) answer API paths in the API's one error shape,
  ``{"error": code, "message": text}``, and pages with the site's own error pages.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views import defaults

UPLOAD_API_PREFIX = "/api/challenges/"
UPLOAD_OVERHEAD = 64 * 1024  # the multipart form's other fields and boundaries


def is_api_path(path: str) -> bool:
    return "/api/" in path or path.startswith("/api")


def api_error(code: str, message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": code, "message": message}, status=status)


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


class RequestGuardMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if any(
            "\x00" in key or any("\x00" in value for value in values) for key, values in request.GET.lists()
        ):
            message = _("A query parameter contains a NUL character; nothing was changed.")
            if is_api_path(request.path_info):
                return api_error("invalid", message, 400)
            return render(request, "400.html", {"error": message}, status=400)
        limit = settings.API_MAX_BODY_BYTES
        if request.path_info.startswith(UPLOAD_API_PREFIX):
            # Result files of the evaluation server: their own limit (and the file's checks after it).
            limit = settings.SUBMISSION_MAX_BYTES + UPLOAD_OVERHEAD
        if is_api_path(request.path_info) and _declared_length(request) > limit:
            return api_error(
                "too_large", f"The request body is larger than {limit:,} bytes; nothing was changed.", 413
            )
        return self.get_response(request)


def bad_request(request, exception, template_name="400.html"):
    """Django's 400 (a SuspiciousOperation such as a body over DATA_UPLOAD_MAX_MEMORY_SIZE): JSON on API
    paths, 413 when the body was too large."""
    if is_api_path(request.path_info):
        if isinstance(exception, RequestDataTooBig):
            return api_error("too_large", "The request body is too large; nothing was changed.", 413)
        return api_error("bad_request", "The request could not be read; nothing was changed.", 400)
    return defaults.bad_request(request, exception, template_name)


def page_not_found(request, exception, template_name="404.html"):
    if is_api_path(request.path_info):
        return api_error("not_found", "Not found.", 404)
    return defaults.page_not_found(request, exception, template_name)


def server_error(request, template_name="500.html"):
    if is_api_path(request.path_info):
        return api_error("server_error", "The server failed; nothing was changed. Try again.", 500)
    return defaults.server_error(request, template_name)
