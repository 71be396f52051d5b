"""Outputs of campaigns, their results and the submitted work (captions, judgments, ratings)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from annotation.models import AssignmentState, CampaignKind, CampaignState, RatingValue, Side, SxsChoice
from core.scales import SXS
from evaluation.human.quality import QualityRow
from evaluation.human.statistics import CaptionStatsRow
from evaluation.human.sxs import SxsSummary, normalise_choice
from evaluation.research.api.serializers.base import result_serializer

SxsSummarySerializer = extend_schema_serializer(component_name="SxsSummary")(
    result_serializer(
        SxsSummary,
        "SxsSummarySerializer",
        exclude=("judgments_per_image", "outcomes"),
        help_texts={"delta_sxs": "WINS − LOSSES, −100..+100."},
        doc="ΔS×S and what goes with it (percentages 0..100, ΔS×S and its interval in points).",
    )
)


# --- Campaigns and their results, submitted work, correlations -------------------------------------


def _pseudonym_field():
    return serializers.CharField(
        source="assignment.annotator.pseudonym", help_text="The annotator's pseudonym (never a user name)."
    )


@extend_schema_serializer(component_name="CampaignProgress")
class CampaignProgressSerializer(serializers.Serializer):
    items = serializers.IntegerField(help_text="Items of the campaign, control items included.")
    control_items = serializers.IntegerField()
    complete = serializers.IntegerField(help_text="Items with at least K submitted results.")
    results = serializers.IntegerField(help_text="Submitted results, late ones included.")


@extend_schema_serializer(component_name="Campaign")
class CampaignSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=CampaignKind.choices)
    state = serializers.ChoiceField(choices=CampaignState.choices)
    language = serializers.CharField(source="language.code")
    batch_size = serializers.IntegerField()
    replication = serializers.IntegerField(help_text="K results per item.")
    prompt_system = serializers.CharField(
        source="prompt_system.name", allow_null=True, default=None, help_text="Caption campaign: screen 1."
    )
    base_system = serializers.CharField(
        source="base_system.name", allow_null=True, default=None, help_text="Side by side: m1."
    )
    test_system = serializers.CharField(
        source="test_system.name", allow_null=True, default=None, help_text="Side by side: m2."
    )
    source_campaign = serializers.IntegerField(
        source="source_campaign_id", allow_null=True, help_text="Verification: the caption campaign rated."
    )
    sample_size = serializers.IntegerField(allow_null=True)
    sample_seed = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    progress = CampaignProgressSerializer()


@extend_schema_serializer(component_name="ControlPassRate")
class ControlRowSerializer(serializers.Serializer):
    annotator = serializers.CharField(source="pseudonym", help_text="Pseudonym.")
    n_controls = serializers.IntegerField()
    n_passed = serializers.IntegerField()
    pass_rate = serializers.FloatField()
    flagged = serializers.BooleanField(help_text="Pass rate below the campaign's threshold.")


@extend_schema_serializer(component_name="SxsResults")
class SxsResultsSerializer(serializers.Serializer):
    summary = SxsSummarySerializer(help_text="Real pairs: no control item, no identical pair.")
    identical_pairs = SxsSummarySerializer(
        source="identical", help_text="Pairs whose two captions are the same."
    )
    control_threshold = serializers.FloatField()
    control_judgments = serializers.IntegerField(source="n_control_judgments")
    controls = ControlRowSerializer(many=True, help_text="Control pass rate per annotator.")


QualitySerializer = extend_schema_serializer(component_name="QualityRow")(
    result_serializer(QualityRow, "QualitySerializer")
)


@extend_schema_serializer(component_name="VerificationResults")
class VerificationSerializer(serializers.Serializer):
    quality = QualitySerializer(allow_null=True, help_text="Table 2 row; null while nothing is rated.")
    alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's alpha, ordinal, NEI missing.")
    n_ratings = serializers.IntegerField()


StatisticsSerializer = extend_schema_serializer(component_name="CaptionStatistics")(
    result_serializer(CaptionStatsRow, "StatisticsSerializer")
)


@extend_schema_serializer(component_name="WrittenCaption")
class WrittenCaptionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    image = serializers.CharField(source="image.key", help_text="The image key.")
    language = serializers.CharField(source="language.code")
    campaign = serializers.IntegerField(source="campaign_id")
    annotator = serializers.CharField(source="annotator.pseudonym", help_text="Pseudonym, never a user name.")
    seconds = serializers.FloatField(allow_null=True, help_text="Time writing this caption, where measured.")
    batch_rating_seconds = serializers.FloatField(source="assignment.batch.rating_seconds", allow_null=True)
    batch_writing_seconds = serializers.FloatField(source="assignment.batch.writing_seconds", allow_null=True)
    is_late = serializers.BooleanField(help_text="Submitted after its lease ran out (kept).")
    submitted_at = serializers.DateTimeField(source="assignment.batch.submitted_at", allow_null=True)


@extend_schema_serializer(component_name="SxsJudgment")
class SxsJudgmentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    campaign = serializers.IntegerField(source="assignment.item.campaign_id")
    language = serializers.CharField(source="assignment.item.campaign.language.code")
    image = serializers.CharField(source="assignment.item.image.key")
    m1 = serializers.CharField(source="assignment.item.campaign.base_system.name", help_text="Base system.")
    m2 = serializers.CharField(source="assignment.item.campaign.test_system.name", help_text="Test system.")
    is_control = serializers.BooleanField(source="assignment.item.is_control")
    control_kind = serializers.CharField(
        source="assignment.item.control_kind", help_text="identical, wrong_image, or empty."
    )
    is_identical_pair = serializers.BooleanField(source="assignment.item.is_identical_pair")
    choice = serializers.ChoiceField(
        choices=SxsChoice.choices, help_text="As seen, from the LEFT caption's side (much_better: left)."
    )
    choice_as_seen = serializers.SerializerMethodField(
        help_text="The label the annotator clicked, e.g. “Right much better”."
    )
    choice_label = serializers.SerializerMethodField(
        help_text="The paper's label, read from the LEFT caption's side (MUCH-WORSE: right much better)."
    )
    m2_side = serializers.ChoiceField(source="assignment.m2_side", choices=Side.choices)
    score = serializers.IntegerField(help_text="From m2's side, −3..+3 (+3: m2 much better).")
    annotator = _pseudonym_field()
    seconds = serializers.FloatField(allow_null=True)
    is_late = serializers.SerializerMethodField()
    submitted_at = serializers.DateTimeField(source="assignment.batch.submitted_at", allow_null=True)

    def get_choice_as_seen(self, judgment) -> str:
        return SXS.point(judgment.choice).label

    def get_choice_label(self, judgment) -> str:
        return normalise_choice(judgment.choice)

    def get_is_late(self, judgment) -> bool:
        return judgment.assignment.state == AssignmentState.LATE


@extend_schema_serializer(component_name="Rating")
class RatingSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.SerializerMethodField(
        help_text="verification: a human caption (rating campaign); prompt: screen 1 of a caption campaign."
    )
    campaign = serializers.IntegerField(source="assignment.item.campaign_id")
    language = serializers.CharField(source="assignment.item.campaign.language.code")
    image = serializers.CharField(source="assignment.item.image.key")
    value = serializers.ChoiceField(choices=RatingValue.choices)
    value_label = serializers.CharField(source="get_value_display")
    caption_text = serializers.SerializerMethodField(help_text="The caption that was rated.")
    written_caption = serializers.IntegerField(
        source="assignment.item.written_caption_id", allow_null=True, help_text="Verification: the caption."
    )
    prompt_system = serializers.CharField(
        source="assignment.item.prompt_caption.system.name",
        allow_null=True,
        default=None,
        help_text="Screen 1: the system whose caption was rated.",
    )
    annotator = _pseudonym_field()
    seconds = serializers.FloatField(allow_null=True)
    is_late = serializers.SerializerMethodField()
    submitted_at = serializers.DateTimeField(source="assignment.batch.submitted_at", allow_null=True)

    def get_kind(self, rating) -> str:
        return "verification" if rating.assignment.item.campaign.kind == CampaignKind.RATING else "prompt"

    def get_caption_text(self, rating) -> str | None:
        item = rating.assignment.item
        caption = item.written_caption if item.written_caption_id else item.prompt_caption
        return caption.text if caption is not None else None

    def get_is_late(self, rating) -> bool:
        return rating.assignment.state == AssignmentState.LATE
