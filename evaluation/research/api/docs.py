"""The OpenAPI schema and the Swagger UI page of the research API, for the same people as the API.

The Content-Security-Policy allows scripts and styles from our own origin only (``script-src 'self';
style-src 'self'``), so the page loads Swagger UI from drf-spectacular-sidecar's static files (no CDN),
its start-up script from a second request to the same view (``?script``, no inline script), and has no
inline style (drf-spectacular's own template carries a ``<style>`` block, hence the page below).
"""

from __future__ import annotations

from django.http import HttpResponse
from django.template import engines
from django.templatetags.static import static
from drf_spectacular.plumbing import set_query_parameters
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from evaluation.research.api.apis import ResearchApi

SIDECAR = "drf_spectacular_sidecar/swagger-ui-dist/"

PAGE = engines["django"].from_string(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<link rel="icon" href="{{ favicon_href }}">
<link rel="stylesheet" href="{{ swagger_ui_css }}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{{ swagger_ui_bundle }}"></script>
<script src="{{ swagger_ui_standalone }}"></script>
<script src="{{ script_url }}"></script>
</body>
</html>
"""
)


class SchemaApi(SpectacularAPIView):
    authentication_classes = ResearchApi.authentication_classes
    permission_classes = ResearchApi.permission_classes

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class DocsView(SpectacularSwaggerSplitView):
    authentication_classes = ResearchApi.authentication_classes
    permission_classes = ResearchApi.permission_classes
    url_name = "api:schema"

    @staticmethod
    def _swagger_ui_resource(filename):
        return static(SIDECAR + filename)

    @staticmethod
    def _swagger_ui_favicon():
        return static(SIDECAR + "favicon-32x32.png")

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        if request.GET.get("script") is not None:
            return super().get(request, *args, **kwargs)
        html = PAGE.render(
            {
                "title": self.title,
                "favicon_href": self._swagger_ui_favicon(),
                "swagger_ui_css": self._swagger_ui_resource("swagger-ui.css"),
                "swagger_ui_bundle": self._swagger_ui_resource("swagger-ui-bundle.js"),
                "swagger_ui_standalone": self._swagger_ui_resource("swagger-ui-standalone-preset.js"),
                "script_url": set_query_parameters(url=request.get_full_path(), script=""),
            }
        )
        return HttpResponse(html)
