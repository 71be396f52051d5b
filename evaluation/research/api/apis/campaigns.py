"""Campaigns with their progress and results, and the submitted work: captions, judgments, ratings."""

from __future__ import annotations

from drf_spectacular.utils import (
    extend_schema,
    extend_schema_serializer,
)

from annotation.selectors import (
    campaigns_progress,
)
from evaluation.research.api import filters, selectors
from evaluation.research.api.apis.base import LIST_ERRORS, ResearchListApi, detail_endpoint, list_endpoint
from evaluation.research.api.serializers import (
    CampaignSerializer,
    RatingSerializer,
    StatisticsSerializer,
    SxsJudgmentSerializer,
    SxsResultsSerializer,
    VerificationSerializer,
    WrittenCaptionSerializer,
)

# --- Campaigns ------------------------------------------------------------------------------------


class CampaignListApi(ResearchListApi):
    """Cheap on purpose: progress for the whole page in one query, no ΔS×S (see the detail)."""

    filterset_class = filters.CampaignFilter

    @extend_schema(
        summary="Campaigns with their progress",
        description="ΔS×S and the other results are on the detail endpoint only, to keep this page cheap.",
        responses={200: CampaignSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        campaigns = self.filtered(request, selectors.campaign_list())
        paginator, page = self.page_of(request, campaigns)
        progress = campaigns_progress(c.pk for c in page)
        for campaign in page:
            campaign.progress = progress[campaign.pk]
        return paginator.get_paginated_response(CampaignSerializer(page, many=True).data)


@extend_schema_serializer(component_name="CampaignDetail")
class CampaignDetailSerializer(CampaignSerializer):
    sxs = SxsResultsSerializer(allow_null=True, help_text="Side by side: WINS, LOSSES, ΔS×S and more.")
    verification = VerificationSerializer(allow_null=True, help_text="Verification: Table 2 row, alpha.")
    statistics = StatisticsSerializer(allow_null=True, help_text="Caption campaign: Table 1 row.")


CampaignDetailApi = detail_endpoint(
    "CampaignDetailApi",
    selectors.campaign_detail,
    CampaignDetailSerializer,
    summary="A campaign with its progress and results",
    description=(
        "Side by side: WINS, LOSSES, ties, ΔS×S with its 95% bootstrap interval (10,000 resamples, "
        "seed 0), sign test, position bias, alpha, the identical pairs apart and the control pass rate "
        "per annotator (pseudonyms). Verification: its Table 2 row. Caption: its Table 1 row."
    ),
)


# --- Submitted work: written captions, side-by-side judgments, ratings ------------------------------

CaptionListApi = list_endpoint(
    "CaptionListApi",
    filters.WrittenCaptionFilter,
    selectors.written_caption_list,
    WrittenCaptionSerializer,
    summary="Written captions (submitted)",
    description="Captions annotators wrote and submitted. Drafts are never exposed.",
)
CaptionDetailApi = detail_endpoint(
    "CaptionDetailApi", selectors.written_caption_get, WrittenCaptionSerializer, summary="A written caption"
)
JudgmentListApi = list_endpoint(
    "JudgmentListApi",
    filters.SxsJudgmentFilter,
    selectors.sxs_judgment_list,
    SxsJudgmentSerializer,
    summary="Side-by-side judgments (submitted)",
)
JudgmentDetailApi = detail_endpoint(
    "JudgmentDetailApi", selectors.sxs_judgment_get, SxsJudgmentSerializer, summary="A side-by-side judgment"
)
RatingListApi = list_endpoint(
    "RatingListApi",
    filters.RatingFilter,
    selectors.rating_list,
    RatingSerializer,
    summary="Ratings (submitted): verification ratings and screen-1 ratings",
)
RatingDetailApi = detail_endpoint(
    "RatingDetailApi", selectors.rating_get, RatingSerializer, summary="A rating"
)
