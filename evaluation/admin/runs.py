"""Metric runs in the admin: start one (through the service, planned once), follow its chunks, resume it."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from annotation.models import Tokenizer
from core.admin import ServiceCheckedForm, StyledModelAdmin
from core.jobs.admin import JobAdminMixin, PlannedJobAdminMixin, unit_liveness
from evaluation.admin.clip_model_form import RegisteredClipModelField
from evaluation.metrics.signatures import group_signatures
from evaluation.models import ALL_METRICS, CLIP_METRICS, TEXT_METRICS, MetricChunk, MetricRun
from evaluation.retrieval.selectors import run_clip_trust
from evaluation.runs.plan import (
    CIDER_DF_CHOICES,
    CIDER_DF_TEST,
    metric_run_plan,
    metric_run_store,
)
from evaluation.runs.selectors import corpus_table, metric_run_queryset
from evaluation.runs.tasks import METRIC_RUN

# Metrics the run list shows per system, when the run has them (all of a run's scores are on its page).
HEADLINE_METRICS = ("CIDEr-D", "BLEU-4", "CLIPScore", "RefCLIPScore")


class MetricRunStartForm(ServiceCheckedForm, forms.ModelForm):
    """Start a run: validated by the same checks as the service, so problems show on the form."""

    name = forms.CharField(
        required=False,
        help_text="Empty: the systems' names, “vs” and the reference set's name (“demo-good, demo-weak vs German refs”).",
    )
    metric_names = forms.MultipleChoiceField(
        label="Metrics",
        choices=[(m, m) for m in ALL_METRICS],
        initial=list(TEXT_METRICS),
        widget=forms.CheckboxSelectMultiple,
        help_text="CLIPScore and RefCLIPScore use the CLIP model below and need the image files; METEOR needs Java.",
    )
    cider_df = forms.ChoiceField(
        label="CIDEr document frequencies",
        choices=list(CIDER_DF_CHOICES.items()),
        initial=CIDER_DF_TEST,
        required=False,  # left out: the default
        help_text="From the scored images (the COCO server's behaviour), or from every image of the reference "
        "set: steadier for a small image set.",
    )
    image_orientation = forms.ChoiceField(
        label="Image orientation (CLIP)",
        choices=[
            ("exif", "exif: upright by the EXIF tag, as annotators see the image"),
            ("stored", "stored: pixels as stored, as the reference CLIPScore code reads them"),
        ],
        initial=lambda: settings.CLIP_IMAGE_ORIENTATION,
        required=False,  # left out: the CLIP_IMAGE_ORIENTATION setting
        widget=forms.RadioSelect,
        help_text="Only CLIP metrics use it; recorded in the run's parameters. Rotated photos score differently.",
    )
    scheme = forms.ChoiceField(
        label="Tokenisation scheme",
        required=False,
        choices=[("", "the language's setting"), *Tokenizer.choices],
        help_text="For the text metrics of this run only; the language's own setting is left as it is.",
    )

    clip_model = RegisteredClipModelField(
        label="CLIP model",
        help_text="CLIP metrics: a registered model (the demo's, or one fine-tuned on this platform's ratings). "
        "Its scores carry its own model id in their signature.",
    )

    class Meta:
        model = MetricRun
        fields = ["name", "language", "systems", "reference_set", "image_set"]

    def check(self, data):
        if data.get("clip_model") is None and set(data["metric_names"]) & set(CLIP_METRICS):
            self.fields["clip_model"].settings_check()
        self.plan = metric_run_plan(
            name=data.get("name"),
            language_code=data["language"].code,
            system_names=[system.name for system in data["systems"]],
            reference_set_id=data["reference_set"].pk,
            image_set_id=data["image_set"].pk if data.get("image_set") else None,
            metrics=data["metric_names"],
            image_orientation=data["image_orientation"],
            cider_df=data.get("cider_df") or CIDER_DF_TEST,
            scheme=data.get("scheme") or None,
            clip_model_name=data["clip_model"].name if data.get("clip_model") else None,
        )


class MetricChunkInline(admin.TabularInline):
    model = MetricChunk
    fields = [
        "system",
        "kind",
        "index",
        "status",
        "liveness",
        "attempts",
        "images",
        "started_at",
        "heartbeat_at",
        "finished_at",
        "error",
    ]
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("system")

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="images")
    def images(self, chunk):
        return len(chunk.image_ids)

    @admin.display(description="worker")
    def liveness(self, chunk):
        return unit_liveness(chunk)


@admin.register(MetricRun)
class MetricRunAdmin(JobAdminMixin, PlannedJobAdminMixin, StyledModelAdmin):
    list_display = ["id", "name", "language", "status", "progress", "started_at", "duration", "scores"]
    list_filter = ["status", "language"]
    search_fields = ["name"]
    date_hierarchy = "created_at"
    job_kind = METRIC_RUN
    inlines = [MetricChunkInline]
    run_fields = [
        "name",
        "status",
        "error",
        "not_computed_notes",
        "progress",
        "liveness",
        "language",
        "systems_list",
        "reference_set",
        "image_set",
        "metrics",
        "params",
        "signature_list",
        "clip_trust",
        "versions",
        *JobAdminMixin.LIFECYCLE_FIELDS,
        "corpus_scores_table",
    ]
    job_fields = run_fields
    job_store = staticmethod(metric_run_store)
    job_start_form = MetricRunStartForm
    job_start_fields = [
        "name",
        "language",
        "systems",
        "reference_set",
        "image_set",
        "metric_names",
        "scheme",
        "clip_model",
        "cider_df",
        "image_orientation",
    ]

    @admin.display(description="not computed")
    def not_computed_notes(self, obj):
        notes = [
            (metric, system, reason)
            for metric, by_system in sorted((obj.not_computed or {}).items())
            for system, reason in sorted(by_system.items())
        ]
        if not notes:
            return "–"
        return format_html_join(mark_safe("<br>"), "{} for {}: {}", notes)

    def get_queryset(self, request):
        # Language, reference set and every corpus score of the page in a fixed number of queries.
        return metric_run_queryset()

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    # --- columns --------------------------------------------------------------------------------

    @admin.display(description="CLIP trust in this language")
    def clip_trust(self, run):
        verdict = run_clip_trust(run)
        if verdict is None:
            return "– (no CLIP metric)"
        if verdict.check_id:
            link = reverse("admin:evaluation_retrievalcheck_change", args=[verdict.check_id])
            return format_html(
                "<strong class='{}'>{}</strong>: {} (<a href='{}'>retrieval check #{}</a>)",
                "clip-flag" if verdict.flagged else "",
                verdict.label,
                verdict.note,
                link,
                verdict.check_id,
            )
        return format_html("<strong>{}</strong>: {}", verdict.label, verdict.note)

    @admin.display(description="signatures")
    def signature_list(self, run):
        lines = [
            (", ".join(names), signature)
            for names, signature in group_signatures(run.metrics, run.signatures)
        ]
        if not lines:
            return "–"
        return format_html_join(mark_safe("<br>"), "{}: <code>{}</code>", lines)  # noqa: S308  (a constant)

    @admin.display(description="systems")
    def systems_list(self, run):
        return ", ".join(system.name for system in run.systems.all())

    @admin.display(description="corpus scores")
    def scores(self, run):
        table = corpus_table(run)
        shown = [i for i, metric in enumerate(table.metrics) if metric in HEADLINE_METRICS] or list(
            range(min(2, len(table.metrics)))
        )
        lines = [
            (name, " · ".join(f"{table.metrics[i]} {values[i]:.3f}" for i in shown if values[i] is not None))
            for name, values in table.rows
        ]
        lines = [(name, text) for name, text in lines if text]
        if not lines:
            return "–"
        return format_html_join(mark_safe("<br>"), "{}: {}", lines)  # noqa: S308  (a constant)

    @admin.display(description="corpus scores")
    def corpus_scores_table(self, run):
        table = corpus_table(run)
        if not table.rows:
            return "–"
        head = format_html_join("", "<th>{}</th>", ((m,) for m in table.metrics))
        body = format_html_join(
            "",
            "<tr><th>{}</th>{}</tr>",
            (
                (
                    name,
                    format_html_join(
                        "", "<td>{}</td>", (("–" if v is None else f"{v:.4f}",) for v in values)
                    ),
                )
                for name, values in table.rows
            ),
        )
        return format_html(
            "<table><thead><tr><th>system</th>{}</tr></thead><tbody>{}</tbody></table>", head, body
        )
