"""Outputs of metric runs, retrieval checks, CLIP models and fine-tunes (lists and details share them)."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from evaluation.retrieval.selectors import check_trust, run_clip_trust

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
