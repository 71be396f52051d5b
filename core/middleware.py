"""``Cache-Control: private, no-store`` on every answer that carries research data.

Research data (the API, the report page and its plots, the exports) are for the signed-in researcher
only: no browser cache or shared proxy may keep a copy, so nobody sees it who is not entitled to. One middleware, keyed on
the URL prefixes in ``settings.NO_STORE_PATH_PREFIXES``, covers every answer under them, including
errors (401, 403, 404), redirects to the login page and endpoints added later; views never restate it.
A view that means its answer to be cached sets its own Cache-Control, which is kept (none does today).
"""

from __future__ import annotations

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
