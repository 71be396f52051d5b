"""What a request may carry before any view sees it, and the answers for what it may not.

* A NUL character in a query parameter (name or value) is a 400 on every page: PostgreSQL cannot
  compare text with NUL in it, so an admin list filter such as ``?key=%00`` used to end in a 500.
* An API request (any path with an ``/api/`` segment) whose declared body is larger than
  ``API_MAX_BODY_BYTES`` is a 413 before the body is read.
* A view marked with :func:`accepts_files` (the upload page and the upload API alike) takes files of at
  most its setting's bytes: a body declared larger than that plus :data:`UPLOAD_OVERHEAD` is a 413
  before the body is read (JSON on API paths, the error page elsewhere), and a body that sends more
  than it declared, or declares nothing, is stopped once a file passes the limit
  (:class:`FileSizeLimitHandler`); the view then answers 413 through :func:`files_too_large`.
* Errors Django raises itself before a view runs (a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, too many
  form fields, a path that resolves to nothing) answer API paths in the API's one error shape,
  ``{"error": code, "message": text}``, and pages with the site's own error pages.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _
from django.views import defaults

from core.errors import TooLarge, domain_error_page

UPLOAD_OVERHEAD = 64 * 1024  # the multipart form's other fields and boundaries
_FILE_LIMIT = "max_file_bytes_setting"  # the attribute accepts_files sets
_STOPPED = "files_stopped_at"  # set on a request whose upload FileSizeLimitHandler stopped


def is_api_path(path: str) -> bool:
    return "/api/" in path or path.startswith("/api")


def api_error(code: str, message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": code, "message": message}, status=status)


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def accepts_files(setting: str) -> Callable:
    """Mark a view function or class as taking uploaded files of at most ``settings.<setting>`` bytes
    each: its body is held to that (and :data:`UPLOAD_OVERHEAD`) before it is read."""

    def mark(view):
        setattr(view, _FILE_LIMIT, setting)
        return view

    return mark


def _file_limit(view_func) -> int | None:
    for holder in (view_func, getattr(view_func, "view_class", None), getattr(view_func, "cls", None)):
        setting = getattr(holder, _FILE_LIMIT, None)
        if setting:
            return int(getattr(settings, setting))
    return None


def _too_large_message(file_limit: int) -> str:
    return _("The file is larger than %(size)s, the limit for this upload; nothing was read or changed.") % {
        "size": filesizeformat(file_limit)
    }


class FileSizeLimitHandler(FileUploadHandler):
    """First of a marked view's upload handlers: stops reading the body once one file passes
    ``limit`` bytes, for bodies whose size was not declared or not kept to. The other handlers never
    see the rest of the file; :func:`files_too_large` then says so."""

    def __init__(self, request, limit: int):
        super().__init__(request)
        self.limit = limit

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > self.limit:
            setattr(self.request, _STOPPED, self.limit)
            raise StopUpload(connection_reset=True)
        return raw_data

    def file_complete(self, file_size):
        return None  # the next handler (memory or temporary file) makes the file


def files_too_large(request) -> None:
    """Raise :class:`~core.errors.TooLarge` when :class:`FileSizeLimitHandler` stopped the request's
    upload; call it after the body was parsed (``request.FILES``, DRF's ``request.data``)."""
    limit = getattr(request, _STOPPED, None)
    if limit is not None:
        raise TooLarge(_too_large_message(limit))


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
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        # Before every other middleware's process_view: CSRF's reads a form body.
        api = is_api_path(request.path_info)
        file_limit = _file_limit(view_func)
        if file_limit is None:
            limit = settings.API_MAX_BODY_BYTES if api else None
        else:
            limit = file_limit + UPLOAD_OVERHEAD
            request.upload_handlers.insert(0, FileSizeLimitHandler(request, file_limit))
        if limit is None or _declared_length(request) <= limit:
            return None
        if api:
            file_part = (
                f" (a file of at most {file_limit:,} bytes and the form's fields)" if file_limit else ""
            )
            return api_error(
                "too_large",
                f"The request body is larger than {limit:,} bytes{file_part}; nothing was changed.",
                413,
            )
        return domain_error_page(request, TooLarge(_too_large_message(file_limit)))


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
