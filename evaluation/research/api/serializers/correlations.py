"""Outputs of the correlations and of the trust table (the item level's acc23 with significance clusters)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from evaluation.research.api.serializers.base import TRUST_STATUSES


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
    "permutation p-value (sign flips over images: every pattern up to 18 images, else at least "
    "`n_permutations` draws and enough for a Monte-Carlo error within 0.01) that m2 beats m1, from people's "
    "scores and from the metric's per-caption differences. Only comparisons whose judgments the platform "
    "holds, and whose every judged image the run scored, count (`n_soft`); null when none does."
)
SOFT_PAIRWISE_ACCURACY_CI_HELP = (
    "95% percentile bootstrap interval over the comparisons it is computed on (their p-values fixed); "
    "`all` resamples within each language."
)
N_SOFT_HELP = "Comparisons the soft pairwise accuracy is computed on."
SOFT_PAIRWISE_ACCURACY_MC_ERROR_HELP = (
    "A bound on the soft pairwise accuracy's Monte-Carlo standard error: 0 when every p-value behind it "
    "was enumerated exactly; null when there is no soft pairwise accuracy."
)


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
    soft_pairwise_accuracy_mc_error = serializers.FloatField(
        allow_null=True, help_text=SOFT_PAIRWISE_ACCURACY_MC_ERROR_HELP
    )
    n_soft = serializers.IntegerField(help_text=N_SOFT_HELP)


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
    demo_metrics = serializers.ListField(
        child=serializers.CharField(),
        help_text="Metrics scored by a demo or untrained model: demo model — not results.",
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
    languages = serializers.ListField(
        child=serializers.CharField(),
        help_text="The languages whose items the cell covers (for `all`: every language, unless `pooled` is false).",
    )
    demo_model = serializers.BooleanField(
        help_text="Scored by a demo or untrained model (the registry's `is_demo`): demo model — not results."
    )
    pooled = serializers.BooleanField(
        help_text="False for an `all` cell of a metric some language lacks: it covers only its own languages "
        "and is left out of the ranking (`rank` null) and the verdict.",
    )
    p_better_than = serializers.DictField(
        child=serializers.FloatField(),
        help_text="metric ranked below -> p-value that this metric is better (paired permutation test over "
        "items, as mt-metrics-eval's test named in `significance_test`).",
    )
    pairwise_accuracy = serializers.FloatField(
        allow_null=True, default=None, help_text=PAIRWISE_ACCURACY_HELP
    )
    pairwise_accuracy_ci = _interval_field(PAIRWISE_ACCURACY_CI_HELP)
    soft_pairwise_accuracy = serializers.FloatField(
        allow_null=True, default=None, help_text=SOFT_PAIRWISE_ACCURACY_HELP
    )
    soft_pairwise_accuracy_ci = _interval_field(SOFT_PAIRWISE_ACCURACY_CI_HELP)
    soft_pairwise_accuracy_mc_error = serializers.FloatField(
        allow_null=True, default=None, help_text=SOFT_PAIRWISE_ACCURACY_MC_ERROR_HELP
    )
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
    significance_test = serializers.CharField(
        help_text="The permutation test behind every p-value and cluster: mt-metrics-eval's "
        "`PermutationSigDiff` (the default) or its pairwise variant `PairwisePermutationSigDiff`."
    )
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
    demo_metrics = serializers.ListField(
        child=serializers.CharField(),
        help_text="Metrics scored by a demo or untrained model: demo model — not results.",
    )
    clip_flags = serializers.ListField(
        child=serializers.CharField(),
        help_text="Languages whose CLIP-based scores the retrieval check flags as unreliable here.",
    )
    skipped = CorrelationSkippedSerializer(many=True)
    note = serializers.CharField(help_text="Empty when there are cells; otherwise why there are none.")
