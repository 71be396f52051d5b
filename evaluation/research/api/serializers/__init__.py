"""Serializers of the research API that are not nested in one API class.

Each endpoint keeps its own filter / input / output serializers nested in its API class
(:mod:`..apis`); here are the strict bases that refuse what a client must not send (a field the client
may not set is refused, never silently stored), and the outputs that a list and a detail endpoint
share or that nest inside other outputs (kept at module level so drf-spectacular names each component
once). One module per resource: ``base``, ``runs``, ``campaigns``, ``correlations``.
"""

from evaluation.research.api.serializers.base import (
    COMMON_QUERY_PARAMETERS,
    MAX_DRAWS,
    TRUST_STATUSES,
    CommaSeparatedIdsField,
    ComparisonFilterSerializer,
    StrictFilterSerializer,
    StrictInputSerializer,
)
from evaluation.research.api.serializers.campaigns import (
    CampaignProgressSerializer,
    CampaignSerializer,
    ControlRowSerializer,
    QualitySerializer,
    RatingSerializer,
    StatisticsSerializer,
    SxsJudgmentSerializer,
    SxsResultsSerializer,
    SxsSummarySerializer,
    VerificationSerializer,
    WrittenCaptionSerializer,
)
from evaluation.research.api.serializers.correlations import (
    N_SOFT_HELP,
    PAIRWISE_ACCURACY_CI_HELP,
    PAIRWISE_ACCURACY_HELP,
    SOFT_PAIRWISE_ACCURACY_CI_HELP,
    SOFT_PAIRWISE_ACCURACY_HELP,
    CorrelationComparisonSerializer,
    CorrelationResultSerializer,
    CorrelationSkippedSerializer,
    CorrelationsSerializer,
    TrustCellSerializer,
    TrustLanguageSerializer,
    TrustSerializer,
)
from evaluation.research.api.serializers.runs import (
    ClipFineTuneSerializer,
    ClipModelSerializer,
    CorpusScoreSerializer,
    MetricRunProgressSerializer,
    MetricRunSerializer,
    NamedObjectSerializer,
    RetrievalCheckSerializer,
)

__all__ = [
    "COMMON_QUERY_PARAMETERS",
    "CampaignProgressSerializer",
    "CampaignSerializer",
    "ClipFineTuneSerializer",
    "ClipModelSerializer",
    "CommaSeparatedIdsField",
    "ComparisonFilterSerializer",
    "ControlRowSerializer",
    "CorpusScoreSerializer",
    "CorrelationComparisonSerializer",
    "CorrelationResultSerializer",
    "CorrelationSkippedSerializer",
    "CorrelationsSerializer",
    "MAX_DRAWS",
    "MetricRunProgressSerializer",
    "MetricRunSerializer",
    "N_SOFT_HELP",
    "NamedObjectSerializer",
    "PAIRWISE_ACCURACY_CI_HELP",
    "PAIRWISE_ACCURACY_HELP",
    "QualitySerializer",
    "RatingSerializer",
    "RetrievalCheckSerializer",
    "SOFT_PAIRWISE_ACCURACY_CI_HELP",
    "SOFT_PAIRWISE_ACCURACY_HELP",
    "StatisticsSerializer",
    "StrictFilterSerializer",
    "StrictInputSerializer",
    "SxsJudgmentSerializer",
    "SxsResultsSerializer",
    "SxsSummarySerializer",
    "TRUST_STATUSES",
    "TrustCellSerializer",
    "TrustLanguageSerializer",
    "TrustSerializer",
    "VerificationSerializer",
    "WrittenCaptionSerializer",
]
