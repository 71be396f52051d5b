"""``Cache-Control: private, no-store`` on every answer that carries research data.

Research data (the API, the report page and its plots, the exports) are for the signed-in researcher
only: no browser cache or shared proxy may keep a copy, so nobody sees it who is not entitled to. One middleware, keyed on
the URL prefixes in ``settings.NO_STORE_PATH_PREFIXES``, covers every answer under them, including
errors (401, 403, 404), redirects to the login page and endpoints added later; views never restate it.
A view that means its answer to be cached sets its own Cache-Control, which is kept (none does today).
"""

from __future__ import annotations

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings

NO_STORE = "private, no-store"


class ResearchNoStoreMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.prefixes = tuple(settings.NO_STORE_PATH_PREFIXES)

    def __call__(self, request):
        response = self.get_response(request)
        if request.path_info.startswith(self.prefixes) and not response.has_header("Cache-Control"):
            response["Cache-Control"] = NO_STORE
        return response


class CachedCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, with the policy's header text built once rather than per response.

    django-csp rebuilds the header from the settings on every response (copying, sorting and joining
    each directive, for the policy and for the report-only one): about 0.1 ms of CPU a request for a
    text that only changes with the settings. A response that carries its own policy (django-csp's
    view decorators) or a page that used a nonce still gets its header built by django-csp itself."""

    _built: tuple[object, object, str, str] | None = None

    def process_response(self, request, response):
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, name, None) is not None for name in _PER_RESPONSE_POLICY
        ):
            return super().process_response(request, response)
        if response.status_code in (500, 404) and settings.DEBUG:
            return response  # Django's debug pages, as django-csp leaves them
        policy = getattr(settings, "CONTENT_SECURITY_POLICY", None)
        report_only = getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None)
        built = self._built
        if built is None or built[0] is not policy or built[1] is not report_only:
            # Settings replaced (override_settings in tests): build again.
            built = self._built = (policy, report_only, build_policy(), build_policy(report_only=True))
        for header, text, exempt, config in (
            (HEADER, built[2], "_csp_exempt", policy),
            (HEADER_REPORT_ONLY, built[3], "_csp_exempt_ro", report_only),
        ):
            excluded = (config or {}).get("EXCLUDE_URL_PREFIXES") or ()
            if (
                text
                and header not in response
                and getattr(response, exempt, False) is False
                and not request.path_info.startswith(tuple(excluded))
            ):
                response[header] = text
        # As django-csp: a nonce asked for after the header is written is an error, not a silent gap.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response


# Where django-csp's decorators put a view's own policy on its response.
_PER_RESPONSE_POLICY = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
)
