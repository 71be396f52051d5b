"""What every research API endpoint shares: authentication, access, strict validation, pagination, the root."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
)
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from core.access import ResearchAccess
from evaluation.research.api.filters import ResearchFilterBackend, StrictFilterSet

ERRORS = {
    400: OpenApiResponse(description="Invalid query parameters or body: `error`, `message`, `details`."),
    401: OpenApiResponse(description="No credentials: send `Authorization: Token <key>`."),
    403: OpenApiResponse(description="Not a researcher or project manager."),
}
NOT_FOUND = {404: OpenApiResponse(description="No such object.")}
DETAIL_ERRORS = {
    401: ERRORS[401],
    403: ERRORS[403],
    **NOT_FOUND,
}
LIST_ERRORS = {**ERRORS, 404: OpenApiResponse(description="No such page.")}


class ResearchApi(APIView):
    """Token first, so a request without credentials gets 401 with ``WWW-Authenticate: Token``."""

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [ResearchAccess]

    @staticmethod
    def validated(serializer_class, data) -> dict:
        serializer = serializer_class(data=data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


# (URL name, what it lists) of the root's index, in reading order.
API_INDEX = (
    ("api:language-list", "languages"),
    ("api:system-list", "captioning systems"),
    ("api:reference-set-list", "reference sets"),
    ("api:image-set-list", "image sets"),
    (
        "api:image-selection-list",
        "geographically diverse image selections with their per-language level table",
    ),
    ("api:campaign-list", "campaigns with their progress (a detail adds ΔS×S, agreement, controls)"),
    ("api:caption-list", "submitted captions"),
    ("api:judgment-list", "side-by-side judgments"),
    ("api:rating-list", "ratings"),
    ("api:metric-run-list", "metric runs (POST starts one)"),
    (
        "api:clip-model-list",
        "registered CLIP models metric runs can choose (fine-tuned ones with provenance)",
    ),
    ("api:clip-check-list", "zero-shot and foil checks of CLIP models, per language against English"),
    ("api:clip-trust", "CLIP trust per model and language: retrieval, zero-shot and foils against English"),
    ("api:fine-tune-list", "CLIP fine-tuning runs with their before/after table per language"),
    ("api:correlations", "correlation of metrics with ΔS×S (?runs=1,2)"),
    ("api:trust", "which metric to trust: acc23 per language with significance clusters (?runs=1,2)"),
    ("api:schema", "the OpenAPI schema"),
    ("api:docs", "browsable documentation"),
)


# Endpoints that answer 400 without ``?runs=``: the root links them with the finished runs of now.
NEEDS_RUNS = frozenset({"api:correlations", "api:trust"})
EXAMPLE_RUNS = 3


def _root_link(request, name: str, runs: str) -> str:
    url = request.build_absolute_uri(reverse(name))
    return f"{url}?runs={runs}" if name in NEEDS_RUNS and runs else url


class ApiRootApi(ResearchApi):
    @extend_schema(exclude=True)
    def get(self, request):
        """What the API has, with absolute links that work as they are: the endpoints that need
        ``?runs=`` are linked with the latest finished metric runs (none yet: the link says so)."""
        from evaluation.models import MetricRun, RunStatus

        latest = MetricRun.objects.filter(status=RunStatus.SUCCEEDED).order_by("-pk")[:EXAMPLE_RUNS]
        runs = ",".join(str(pk) for pk in sorted(latest.values_list("pk", flat=True)))
        return Response(
            {
                "endpoints": [
                    {
                        "url": _root_link(request, name, runs),
                        "what": what
                        if runs or name not in NEEDS_RUNS
                        else f"{what}; no metric run has finished yet, so there is nothing to link",
                    }
                    for name, what in API_INDEX
                ],
                "authentication": "Token (Authorization: Token <key>) or the signed-in session; "
                "researchers and project managers only.",
            }
        )


class ResearchListApi(ResearchApi):
    """A paginated list whose query parameters are its ``filterset_class`` (:mod:`.filters`)."""

    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS
    filter_backends = [ResearchFilterBackend]
    filterset_class: type[StrictFilterSet]

    def get_queryset(self):
        """Only for the schema generator, which reads the model here to type the filters."""
        return self.filterset_class._meta.model._default_manager.none()

    def filtered(self, request, queryset):
        """``queryset`` narrowed by the validated query parameters (400 for a bad or unknown one)."""
        for backend in self.filter_backends:
            queryset = backend().filter_queryset(request, queryset, self)
        return queryset

    def page_of(self, request, queryset) -> tuple:
        paginator = self.pagination_class()
        return paginator, paginator.paginate_queryset(queryset, request, view=self)

    def paginated(self, request, queryset, serializer_class) -> Response:
        paginator, page = self.page_of(request, queryset)
        return paginator.get_paginated_response(serializer_class(page, many=True).data)


def _named(view: type, name: str) -> type:
    """``view`` under its endpoint's own name: the browsable API titles its pages with it."""
    view.__name__ = view.__qualname__ = name
    return view


def list_endpoint(name: str, filterset, rows, output, **schema) -> type[ResearchListApi]:
    """A list endpoint: ``rows()`` narrowed by ``filterset``, paginated, every row shown by ``output``.
    ``schema``: the operation's ``summary`` (and ``description``) in the OpenAPI schema."""

    class ListApi(ResearchListApi):
        filterset_class = filterset

        @extend_schema(responses={200: output(many=True), **LIST_ERRORS}, **schema)
        def get(self, request):
            return self.paginated(request, self.filtered(request, rows()), output)

    return _named(ListApi, name)


def detail_endpoint(name: str, get_one, output, **schema) -> type[ResearchApi]:
    """A detail endpoint: ``get_one(**the URL's id)`` shown by ``output``; 404 for an id that is not there."""

    class DetailApi(ResearchApi):
        @extend_schema(responses={200: output, **DETAIL_ERRORS}, **schema)
        def get(self, request, **lookup):
            return Response(output(get_one(**lookup)).data)

    return _named(DetailApi, name)
