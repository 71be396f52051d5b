"""Campaigns with their progress and results, and the submitted work: captions, judgments, ratings."""

from __future__ import annotations

from drf_spectacular.utils import (
    extend_schema,
    extend_schema_serializer,
)
from rest_framework.response import Response

from annotation.selectors import (
    campaigns_progress,
)
from evaluation.research.api import filters, selectors
from evaluation.research.api.apis.base import DETAIL_ERRORS, LIST_ERRORS, ResearchApi, ResearchListApi
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


class CampaignDetailApi(ResearchApi):
    @extend_schema_serializer(component_name="CampaignDetail")
    class OutputSerializer(CampaignSerializer):
        sxs = SxsResultsSerializer(allow_null=True, help_text="Side by side: WINS, LOSSES, ΔS×S and more.")
        verification = VerificationSerializer(allow_null=True, help_text="Verification: Table 2 row, alpha.")
        statistics = StatisticsSerializer(allow_null=True, help_text="Caption campaign: Table 1 row.")

    @extend_schema(
        summary="A campaign with its progress and results",
        description=(
            "Side by side: WINS, LOSSES, ties, ΔS×S with its 95% bootstrap interval (10,000 resamples, "
            "seed 0), sign test, position bias, alpha, the identical pairs apart and the control pass rate "
            "per annotator (pseudonyms). Verification: its Table 2 row. Caption: its Table 1 row."
        ),
        responses={200: OutputSerializer, **DETAIL_ERRORS},
    )
    def get(self, request, campaign_id: int):
        campaign = selectors.campaign_detail(campaign_id=campaign_id)
        return Response(self.OutputSerializer(campaign).data)


# --- Submitted work: written captions, side-by-side judgments, ratings ------------------------------


class CaptionListApi(ResearchListApi):
    filterset_class = filters.WrittenCaptionFilter

    @extend_schema(
        summary="Written captions (submitted)",
        description="Captions annotators wrote and submitted. Drafts are never exposed.",
        responses={200: WrittenCaptionSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        captions = self.filtered(request, selectors.written_caption_list())
        return self.paginated(request, captions, WrittenCaptionSerializer)


class CaptionDetailApi(ResearchApi):
    @extend_schema(summary="A written caption", responses={200: WrittenCaptionSerializer, **DETAIL_ERRORS})
    def get(self, request, caption_id: int):
        caption = selectors.written_caption_get(caption_id=caption_id)
        return Response(WrittenCaptionSerializer(caption).data)


class JudgmentListApi(ResearchListApi):
    filterset_class = filters.SxsJudgmentFilter

    @extend_schema(
        summary="Side-by-side judgments (submitted)",
        responses={200: SxsJudgmentSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        judgments = self.filtered(request, selectors.sxs_judgment_list())
        return self.paginated(request, judgments, SxsJudgmentSerializer)


class JudgmentDetailApi(ResearchApi):
    @extend_schema(summary="A side-by-side judgment", responses={200: SxsJudgmentSerializer, **DETAIL_ERRORS})
    def get(self, request, judgment_id: int):
        judgment = selectors.sxs_judgment_get(judgment_id=judgment_id)
        return Response(SxsJudgmentSerializer(judgment).data)


class RatingListApi(ResearchListApi):
    filterset_class = filters.RatingFilter

    @extend_schema(
        summary="Ratings (submitted): verification ratings and screen-1 ratings",
        responses={200: RatingSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        ratings = self.filtered(request, selectors.rating_list())
        return self.paginated(request, ratings, RatingSerializer)


class RatingDetailApi(ResearchApi):
    @extend_schema(summary="A rating", responses={200: RatingSerializer, **DETAIL_ERRORS})
    def get(self, request, rating_id: int):
        rating = selectors.rating_get(rating_id=rating_id)
        return Response(RatingSerializer(rating).data)
