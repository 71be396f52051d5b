"""Serializers of the research API that are not nested in one API class.

Each endpoint keeps its own filter / input / output serializers nested in its API class
(:mod:`.apis`); here are the strict bases that refuse what a client must not send (RELIABILITY 14),
and the outputs that a list and a detail endpoint share or that nest inside other outputs (kept at
module level so drf-spectacular names each component once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import get_args

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from annotation.models import AssignmentState, CampaignKind, CampaignState, RatingValue, Side, SxsChoice
from core.bounds import BIGINT_MAX
from core.scales import SXS
from evaluation.human.sxs import normalise_choice
from evaluation.research.correlation import CORRELATION_N_BOOT
from evaluation.research.meta_evaluation import DEFAULT_N_PERMUTATIONS, Status
from evaluation.retrieval.selectors import check_trust, run_clip_trust

TRUST_STATUSES = get_args(Status)

# Query parameters every list endpoint accepts besides its filters.
COMMON_QUERY_PARAMETERS = frozenset({"page", "format"})


class StrictInputSerializer(serializers.Serializer):
    """A request body: a key that is not a field of the serializer is refused (400, naming it)
    instead of silently dropped, so a client never believes it set ``status`` or ``created_by``."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["This field cannot be set (it is not part of this request)."] for name in unknown}
                )
        return super().to_internal_value(data)


class StrictFilterSerializer(serializers.Serializer):
    """Query parameters of a list endpoint: an unknown parameter (a misspelt filter) is refused
    rather than ignored, which would answer with everything."""

    def validate(self, attrs):
        unknown = sorted(set(self.initial_data) - set(self.fields) - COMMON_QUERY_PARAMETERS)
        if unknown:
            known = ", ".join(sorted(set(self.fields) | {"page"}))
            raise serializers.ValidationError(
                f"Unknown query parameter(s): {', '.join(unknown)}. This endpoint takes: {known}."
            )
        return attrs


@extend_schema_field(OpenApiTypes.STR)
class CommaSeparatedIdsField(serializers.Field):
    """``1,2,3`` -> [1, 2, 3] (positive integers, order kept, duplicates dropped)."""

    default_error_messages = {
        "invalid": "Give ids as positive integers separated by commas, e.g. 3,7.",
        "empty": "Give at least one id.",
        "too_many": "At most {max} ids.",
    }

    def __init__(self, *, max_ids: int = 100, **kwargs):
        self.max_ids = max_ids
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        parts = [part.strip() for part in data.split(",") if part.strip()]
        if not parts:
            self.fail("empty")
        if not all(part.isascii() and part.isdigit() and 0 < int(part) <= BIGINT_MAX for part in parts):
            self.fail("invalid")
        ids = list(dict.fromkeys(int(part) for part in parts))
        if len(ids) > self.max_ids:
            self.fail("too_many", max=self.max_ids)
        return ids

    def to_representation(self, value):
        return ",".join(str(v) for v in value)


# The most bootstrap resamples or permutation draws one request may ask for: it bounds the request's time.
MAX_DRAWS = 10_000


class ComparisonFilterSerializer(StrictFilterSerializer):
    """The selection and the draws of the endpoints built on the comparisons (``comparisons_from_db``):
    correlations and the trust table, so the same parameters give the same comparisons in both."""

    runs = CommaSeparatedIdsField(help_text="Metric run ids, comma-separated (succeeded runs).")
    campaigns = CommaSeparatedIdsField(
        required=False,
        help_text="Side-by-side campaign ids, any state; default: every finished one (closed, or every item "
        "judged K times), the unfinished ones listed in `skipped`.",
    )
    n_boot = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_DRAWS,
        default=CORRELATION_N_BOOT,
        help_text="Bootstrap resamples of the 95% intervals; 0: no intervals.",
    )
    n_permutations = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_DRAWS,
        default=DEFAULT_N_PERMUTATIONS,
        help_text="Draws of each permutation test (soft pairwise accuracy; significance between metrics).",
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=BIGINT_MAX, default=0)


# --- Outputs used by several endpoints ------------------------------------------------------------


@extend_schema_serializer(component_name="NamedObject")
class NamedObjectSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


@extend_schema_serializer(component_name="CorpusScore")
class CorpusScoreSerializer(serializers.Serializer):
    system = serializers.CharField(source="system.name")
    metric = serializers.CharField()
    value = serializers.FloatField()
    signature = serializers.SerializerMethodField(help_text="The signature of this number (see the run's).")

    def get_signature(self, score) -> str:
        return score.run.signature(score.metric)


@extend_schema_serializer(component_name="MetricRunProgress")
class MetricRunProgressSerializer(serializers.Serializer):
    chunks_done = serializers.IntegerField()
    chunks_total = serializers.IntegerField()
    fraction = serializers.FloatField(source="progress", help_text="Share of chunks done, 0..1.")


@extend_schema_serializer(component_name="MetricRun")
class MetricRunSerializer(serializers.Serializer):
    """A metric run: what it scores, its status and progress, and its corpus scores."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    language = serializers.CharField(source="language.code")
    systems = serializers.SerializerMethodField()
    reference_set = NamedObjectSerializer()
    image_set = NamedObjectSerializer(allow_null=True)
    metrics = serializers.ListField(child=serializers.CharField())
    params = serializers.DictField(
        help_text="Tokenisation scheme (tokenizer, and whether the run chose it), CIDEr df source (cider_df), "
        "METEOR setting, CLIP model, checkpoint, prompt prefix and image orientation."
    )
    signatures = serializers.SerializerMethodField(
        help_text="Metric -> signature of its numbers; two numbers are comparable exactly when their signatures "
        "match. Runs made before signatures say “not recorded”."
    )
    versions = serializers.DictField(help_text="Package versions of the worker that computed the run.")
    status = serializers.CharField()
    error = serializers.CharField()
    not_computed = serializers.DictField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text="Requested metrics not computed, per system, with the reason (METEOR without Java): "
        "{metric: {system: reason}}. The run's other scores are complete.",
    )
    progress = MetricRunProgressSerializer(source="*")
    created_at = serializers.DateTimeField()
    queued_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    duration_seconds = serializers.FloatField(allow_null=True)
    timings = serializers.DictField()
    corpus_scores = CorpusScoreSerializer(many=True)
    clip_trust = serializers.SerializerMethodField(
        help_text="For a run with CLIP metrics: the verdict of the latest retrieval check of its CLIP model in "
        "its language (status unreliable = “CLIP-based scores unreliable here”; not_checked without a check). "
        "Null for a run without CLIP metrics."
    )

    def get_clip_trust(self, run) -> dict | None:
        verdict = run_clip_trust(run)
        return None if verdict is None else verdict.as_dict()

    def get_systems(self, run) -> list[str]:
        return sorted(system.name for system in run.systems.all())

    def get_signatures(self, run) -> dict[str, str]:
        return {metric: run.signature(metric) for metric in run.metrics}


@extend_schema_serializer(component_name="RetrievalCheck")
class RetrievalCheckSerializer(serializers.Serializer):
    """A retrieval check: per language, text→image and image→text R@1/5/10 and mean recall of a CLIP
    model over human captions (fractions 0..1), with each language's verdict against English."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField()
    error = serializers.CharField()
    source = serializers.CharField()
    campaigns = serializers.SerializerMethodField()
    reference_sets = serializers.SerializerMethodField()
    languages = serializers.ListField(child=serializers.CharField())
    params = serializers.DictField(
        help_text="CLIP model, pretrained tag, checkpoint, prompt prefix, image orientation."
    )
    model_id = serializers.CharField(
        help_text="The model as the workers loaded it (with the checkpoint's hash)."
    )
    model_key = serializers.CharField(
        help_text="What metric runs are matched on: model, weights tag, checkpoint hash."
    )
    progress = MetricRunProgressSerializer(source="*")
    results = serializers.DictField(
        help_text="{language: {t2i_r1, t2i_r5, t2i_r10, i2t_r1, i2t_r5, i2t_r10, t2i_mean_recall, i2t_mean_recall, "
        "mean_recall, n_images, n_captions, notes}}; recalls are fractions."
    )
    trust = serializers.SerializerMethodField(
        help_text="{language: verdict}: unreliable when its t2i R@1 is below CLIP_UNRELIABLE_R1_RATIO × English's."
    )
    unreliable_r1_ratio = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    queued_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    timings = serializers.DictField()

    def get_campaigns(self, check) -> list[str]:
        return [c.name for c in check.campaigns.all()]

    def get_reference_sets(self, check) -> list[str]:
        return [r.name for r in check.reference_sets.all()]

    def get_trust(self, check) -> dict:
        return {code: verdict.as_dict() for code, verdict in check_trust(check).items()}

    def get_unreliable_r1_ratio(self, check) -> float:
        return settings.CLIP_UNRELIABLE_R1_RATIO


@extend_schema_serializer(component_name="ClipModel")
class ClipModelSerializer(serializers.Serializer):
    """A CLIP model metric runs can choose by name (``clip_model`` of a metric run); a fine-tuned one
    carries its provenance (base model, data, hyperparameters, seeds, versions, dev history)."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    model_name = serializers.CharField(help_text="open_clip architecture.")
    pretrained = serializers.CharField()
    model_id = serializers.CharField(help_text="The model as loaded, with its weights' hash.")
    base_model_id = serializers.CharField()
    is_demo = serializers.BooleanField(
        help_text="The demo's tiny random model: its numbers are never results."
    )
    description = serializers.CharField()
    provenance = serializers.DictField()
    fine_tune_run = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_fine_tune_run(self, model) -> int | None:
        run = getattr(model, "fine_tune", None)
        return run.pk if run is not None else None


@extend_schema_serializer(component_name="ClipFineTune")
class ClipFineTuneSerializer(serializers.Serializer):
    """A CLIP fine-tuning run: its data selection, settings, progress, and per language the before/after
    agreement with people on its test split (τ_b, τ_c, ρ, acc23 with intervals, base and fine-tuned)."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField()
    error = serializers.CharField()
    is_demo = serializers.BooleanField()
    base = serializers.SerializerMethodField()
    base_params = serializers.DictField()
    campaigns = serializers.SerializerMethodField()
    languages = serializers.ListField(child=serializers.CharField())
    selection = serializers.DictField(help_text="Counts per language and split, files, what was left out.")
    config = serializers.DictField(
        help_text="Learning rate, batch size, epochs, seed, trainable, patience, …"
    )
    split_seed = serializers.IntegerField()
    register_as = serializers.CharField()
    model = serializers.SerializerMethodField()
    epoch = serializers.IntegerField()
    step = serializers.IntegerField()
    loss_contrastive = serializers.FloatField(allow_null=True)
    loss_pearson = serializers.FloatField(allow_null=True)
    dev_score = serializers.FloatField(allow_null=True)
    history = serializers.ListField(child=serializers.DictField())
    before_after = serializers.SerializerMethodField(
        help_text="{language: {n, base: {...}, fine_tuned: {...}, delta_tau_b, delta_tau_b_ci}}; empty until it succeeds."
    )
    device = serializers.CharField()
    versions = serializers.DictField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_base(self, run) -> str | None:
        return run.base.name if run.base_id else None

    def get_campaigns(self, run) -> list[str]:
        return [c.name for c in run.campaigns.all()]

    def get_model(self, run) -> str | None:
        return run.model.name if run.model_id else None

    def get_before_after(self, run) -> dict:
        from evaluation.research.finetune_tables import before_after

        return before_after(run.results.get("test", [])) if run.status == "succeeded" else {}


@extend_schema_serializer(component_name="SxsSummary")
class SxsSummarySerializer(serializers.Serializer):
    """ΔS×S and what goes with it (percentages 0..100, ΔS×S and its interval in points)."""

    n_images = serializers.IntegerField()
    n_judgments = serializers.IntegerField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    wins_pct = serializers.FloatField(allow_null=True)
    losses_pct = serializers.FloatField(allow_null=True)
    ties_pct = serializers.FloatField(allow_null=True)
    delta_sxs = serializers.FloatField(allow_null=True, help_text="WINS − LOSSES, −100..+100.")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField()
    n_boot = serializers.IntegerField()
    seed = serializers.IntegerField()
    sign_test_p = serializers.FloatField(allow_null=True)
    mean_score_per_judgment = serializers.FloatField(allow_null=True)
    mean_score_per_image = serializers.FloatField(allow_null=True)
    decided_judgments = serializers.IntegerField()
    left_preferred = serializers.IntegerField()
    left_preferred_share = serializers.FloatField(allow_null=True)
    position_bias_p = serializers.FloatField(allow_null=True)
    alpha_ordinal = serializers.FloatField(allow_null=True)


def _interval_field(help_text: str | None = None):
    return serializers.ListField(
        child=serializers.FloatField(),
        min_length=2,
        max_length=2,
        allow_null=True,
        default=None,  # a record without the interval says null, not nothing
        help_text=help_text,
    )


# What the model level's accuracies are, for the correlations and the trust table alike.
PAIRWISE_ACCURACY_HELP = (
    "Pairwise accuracy (Kocmi et al. 2021): the share of the comparisons where Δmetric has the sign of "
    "ΔS×S (a zero agrees only with a zero), over the comparisons as entered: mirroring does not change it."
)
PAIRWISE_ACCURACY_CI_HELP = (
    "95% percentile bootstrap interval over comparisons, from the coefficients' resamples."
)
SOFT_PAIRWISE_ACCURACY_HELP = (
    "Soft pairwise accuracy (WMT24): 1 − the mean over comparisons of |p_people − p_metric|, each p the "
    "permutation p-value (sign flips over images, `n_permutations` draws) that m2 beats m1, from people's "
    "scores and from the metric's per-caption differences. Only comparisons whose judgments the platform "
    "holds, and whose every judged image the run scored, count (`n_soft`); null when none does."
)
SOFT_PAIRWISE_ACCURACY_CI_HELP = (
    "95% percentile bootstrap interval over the comparisons it is computed on (their p-values fixed); "
    "`all` resamples within each language."
)
N_SOFT_HELP = "Comparisons the soft pairwise accuracy is computed on."


@extend_schema_serializer(component_name="CorrelationResult")
class CorrelationResultSerializer(serializers.Serializer):
    """The four coefficients of ΔS×S against one Δmetric, with intervals and p-values
    (see evaluation.research.correlation: p-values are on the comparisons in one direction)."""

    n = serializers.IntegerField()
    n_comparisons = serializers.IntegerField()
    pearson = serializers.FloatField(allow_null=True)
    spearman = serializers.FloatField(allow_null=True)
    kendall_tau_b = serializers.FloatField(allow_null=True)
    kendall_tau_c = serializers.FloatField(allow_null=True)
    pearson_ci = _interval_field()
    spearman_ci = _interval_field()
    kendall_tau_b_ci = _interval_field()
    kendall_tau_c_ci = _interval_field()
    pearson_p = serializers.FloatField(allow_null=True)
    spearman_p = serializers.FloatField(allow_null=True)
    kendall_tau_b_p = serializers.FloatField(allow_null=True)
    kendall_tau_c_p = serializers.FloatField(allow_null=True)
    p_n = serializers.IntegerField()
    n_boot = serializers.IntegerField()
    mirrored = serializers.BooleanField()
    note = serializers.CharField()
    kendall_tau_c_variant = serializers.CharField(
        help_text="Whose τ_c (coefficient, p-value and interval): always “scipy (m=min distinct)” here, "
        "m being the smaller number of distinct values; ΔS×S is not a rating scale, so seed 001's m "
        "(points of the ratings' scale) does not apply."
    )
    pairwise_accuracy = serializers.FloatField(allow_null=True, help_text=PAIRWISE_ACCURACY_HELP)
    pairwise_accuracy_ci = _interval_field(PAIRWISE_ACCURACY_CI_HELP)
    soft_pairwise_accuracy = serializers.FloatField(allow_null=True, help_text=SOFT_PAIRWISE_ACCURACY_HELP)
    soft_pairwise_accuracy_ci = _interval_field(SOFT_PAIRWISE_ACCURACY_CI_HELP)
    n_soft = serializers.IntegerField(help_text=N_SOFT_HELP)


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


@extend_schema_serializer(component_name="QualityRow")
class QualitySerializer(serializers.Serializer):
    language = serializers.CharField()
    n_captions = serializers.IntegerField()
    n_rated = serializers.IntegerField()
    pct_good_plus = serializers.FloatField(allow_null=True)
    pct_med_plus = serializers.FloatField(allow_null=True)
    pct_bad = serializers.FloatField(allow_null=True)
    nei_rate = serializers.FloatField(allow_null=True)
    n_no_median = serializers.IntegerField()
    n_ratings = serializers.IntegerField()


@extend_schema_serializer(component_name="VerificationResults")
class VerificationSerializer(serializers.Serializer):
    quality = QualitySerializer(allow_null=True, help_text="Table 2 row; null while nothing is rated.")
    alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's alpha, ordinal, NEI missing.")
    n_ratings = serializers.IntegerField()


@extend_schema_serializer(component_name="CaptionStatistics")
class StatisticsSerializer(serializers.Serializer):
    language = serializers.CharField()
    n_captions = serializers.IntegerField()
    n_images = serializers.IntegerField()
    images_1 = serializers.IntegerField()
    images_2 = serializers.IntegerField()
    images_3_plus = serializers.IntegerField()
    mean_words = serializers.FloatField()
    mean_chars = serializers.FloatField()
    tokenizer = serializers.CharField(allow_null=True)


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


@extend_schema_serializer(component_name="CorrelationComparison")
class CorrelationComparisonSerializer(serializers.Serializer):
    campaign = serializers.IntegerField(source="campaign_id")
    campaign_name = serializers.CharField(source="campaign")
    state = serializers.CharField(help_text="The campaign's state when the comparison was read.")
    m1 = serializers.CharField()
    m2 = serializers.CharField()
    language = serializers.CharField()
    delta_sxs = serializers.FloatField()
    delta_sxs_ci_low = serializers.FloatField(source="ci_low", allow_null=True)
    delta_sxs_ci_high = serializers.FloatField(source="ci_high", allow_null=True)
    n_images = serializers.IntegerField()
    n_judgments = serializers.IntegerField()
    deltas = serializers.DictField(
        child=serializers.FloatField(), help_text="metric -> score(m2) − score(m1)"
    )
    m1_scores = serializers.DictField(
        child=serializers.FloatField(), help_text="metric -> corpus score of m1"
    )
    m2_scores = serializers.DictField(
        child=serializers.FloatField(), help_text="metric -> corpus score of m2"
    )
    runs = serializers.DictField(
        child=serializers.IntegerField(), help_text="metric -> the metric run whose scores gave the delta"
    )
    signatures = serializers.DictField(
        child=serializers.CharField(),
        help_text="metric -> the signature of that run's numbers (“not recorded” for runs made before signatures)",
    )


@extend_schema_serializer(component_name="CorrelationSkipped")
class CorrelationSkippedSerializer(serializers.Serializer):
    campaign = serializers.IntegerField(source="campaign_id", allow_null=True)
    campaign_name = serializers.CharField(source="campaign")
    language = serializers.CharField()
    m1 = serializers.CharField()
    m2 = serializers.CharField()
    metrics = serializers.ListField(
        child=serializers.CharField(),
        help_text="Empty: the whole comparison is left out; else only these metrics.",
    )
    reason = serializers.CharField()


@extend_schema_serializer(component_name="Correlations")
class CorrelationsSerializer(serializers.Serializer):
    both_directions = serializers.BooleanField()
    n_boot = serializers.IntegerField()
    n_permutations = serializers.IntegerField(
        help_text="Draws of each soft pairwise accuracy's permutation test."
    )
    seed = serializers.IntegerField()
    comparisons = CorrelationComparisonSerializer(many=True)
    skipped = CorrelationSkippedSerializer(many=True)
    results = serializers.DictField(
        child=serializers.DictField(child=CorrelationResultSerializer()),
        help_text='metric -> {"all" | language -> coefficients}',
    )


# --- Which metric to trust: the item level's acc23 with significance clusters ----------------------


@extend_schema_serializer(component_name="TrustLanguage")
class TrustLanguageSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=TRUST_STATUSES,
        help_text="ranked: the clusters tell some metrics apart; undecided: every metric in the first "
        "cluster; too_few: fewer than `min_items` items, no test; empty: no metric on these items.",
    )
    note = serializers.CharField(help_text="Why the metrics are not ranked here; empty when they are.")
    n_items = serializers.IntegerField(help_text="Items: judged images of compared pairs.")
    n_pairs = serializers.IntegerField(help_text="Compared pairs (comparisons) the items belong to.")


@extend_schema_serializer(component_name="TrustCell")
class TrustCellSerializer(serializers.Serializer):
    """One metric in one language: the item level (acc23 and its cluster) and the model level
    (pairwise and soft pairwise accuracy)."""

    metric = serializers.CharField()
    language = serializers.CharField(help_text="`all`: every item pooled, ε calibrated on the pool.")
    acc23 = serializers.FloatField(
        allow_null=True,
        help_text="acc23 with tie calibration (Deutsch et al. 2023): the share of items where the metric's "
        "decision (m2 better, tie when |Δmetric| ≤ ε, m1 better) is the sign of people's mean score from "
        "m2's side; ε maximises it.",
    )
    acc23_ci = _interval_field(
        "95% percentile bootstrap interval over items, ε re-calibrated in each resample."
    )
    tau23 = serializers.FloatField(allow_null=True, help_text="τ_23 = 2 × acc23 − 1.")
    epsilon = serializers.FloatField(allow_null=True, help_text="The calibrated ε: |Δmetric| ≤ ε is a tie.")
    n_items = serializers.IntegerField(help_text="Items that have this metric.")
    rank = serializers.IntegerField(
        allow_null=True,
        help_text="Significance cluster, 1 = the best; null where no test was run (fewer than `min_items`).",
    )
    best = serializers.BooleanField(help_text="In the best cluster.")
    status = serializers.ChoiceField(choices=TRUST_STATUSES, help_text="The language's status (`languages`).")
    n_pairs = serializers.IntegerField(help_text="Compared pairs in this language.")
    p_better_than = serializers.DictField(
        child=serializers.FloatField(),
        help_text="metric ranked below -> p-value that this metric is better (paired permutation test over "
        "items, as mt-metrics-eval's PermutationSigDiff).",
    )
    pairwise_accuracy = serializers.FloatField(
        allow_null=True, default=None, help_text=PAIRWISE_ACCURACY_HELP
    )
    pairwise_accuracy_ci = _interval_field(PAIRWISE_ACCURACY_CI_HELP)
    soft_pairwise_accuracy = serializers.FloatField(
        allow_null=True, default=None, help_text=SOFT_PAIRWISE_ACCURACY_HELP
    )
    soft_pairwise_accuracy_ci = _interval_field(SOFT_PAIRWISE_ACCURACY_CI_HELP)
    n_comparisons = serializers.IntegerField(default=0, help_text="Comparisons the pairwise accuracy is on.")
    n_soft = serializers.IntegerField(default=0, help_text=N_SOFT_HELP)
    clip_flag = serializers.BooleanField(
        default=False,
        help_text="A CLIPScore or RefCLIPScore cell of a language where the CLIP model's retrieval check "
        "says CLIP-based scores are unreliable (text→image R@1 far below English's).",
    )


@extend_schema_serializer(component_name="Trust")
class TrustSerializer(serializers.Serializer):
    measure = serializers.CharField(help_text="What the cells' acc23 is.")
    n_boot = serializers.IntegerField()
    n_permutations = serializers.IntegerField()
    seed = serializers.IntegerField()
    alpha = serializers.FloatField(help_text="Significance level of the tests between metrics.")
    min_items = serializers.IntegerField(
        help_text="A language with fewer items gets its accuracies but no test and no rank."
    )
    metrics = serializers.ListField(
        child=serializers.CharField(), help_text="The metrics, the best pooled acc23 first."
    )
    languages = serializers.DictField(
        child=TrustLanguageSerializer(), help_text="`all` first, then each language by code."
    )
    cells = TrustCellSerializer(many=True, help_text="One per metric and language, `all` first.")
    clip_flags = serializers.ListField(
        child=serializers.CharField(),
        help_text="Languages whose CLIP-based scores the retrieval check flags as unreliable here.",
    )
    skipped = CorrelationSkippedSerializer(many=True)
    note = serializers.CharField(help_text="Empty when there are cells; otherwise why there are none.")
