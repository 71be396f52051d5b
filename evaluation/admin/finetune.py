"""CLIP fine-tuning in the admin: start a run (planned once, through the service), follow its progress
(epoch, step, losses, dev score), read its before/after table, resume it; and the registered CLIP models
metric runs can choose."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from annotation.models import Campaign, CampaignKind
from core.admin import ServiceCheckedForm, StyledModelAdmin
from core.jobs.admin import JobAdminMixin, PlannedJobAdminMixin
from core.jobs.engine import ResumeResult
from evaluation.admin.clip_model_form import LanguageCodesField, RegisteredClipModelField
from evaluation.finetune.plan import (
    DEMO_MODEL_NAME,
    clip_model_demo_register,
    demo_data_files,
    fine_tune_plan,
    fine_tune_resume,
    fine_tune_store,
)
from evaluation.finetune.tasks import FINE_TUNE
from evaluation.metrics.clip.finetune import TRAINABLE_CHOICES
from evaluation.models import ClipFineTune, ClipModel, RunStatus
from evaluation.research.finetune_tables import (
    HEADERS,
    before_after,
    before_after_rows,
    config_items,
    delta_text,
    score_text,
)

DEMO_WARNING = "Demo: a tiny random model. These numbers show the workflow; they are not results."


class ClipFineTuneStartForm(ServiceCheckedForm, forms.ModelForm):
    """Start a run: the service's own validation, so every refusal (with its counts) shows on the form."""

    name = forms.CharField(required=False, help_text="Empty: the base model and the campaigns.")
    campaigns = forms.ModelMultipleChoiceField(
        queryset=Campaign.objects.filter(kind__in=[CampaignKind.CAPTION, CampaignKind.RATING])
        .select_related("language")
        .order_by("name"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Caption campaigns give (image, human caption) pairs and their screen-1 ratings; "
        "verification campaigns give ratings of human captions.",
    )
    language_codes = LanguageCodesField(
        help_text="Codes separated by spaces or commas; empty: every language.",
    )
    base = RegisteredClipModelField(
        label="Base",
        what="base model",
        help_text="The model to start from. Where this server also trains (no job broker), a base model "
        "whose weights are not on this machine is refused here, with what is missing.",
    )
    demo_base = forms.BooleanField(
        label="Start from the demo's tiny model",
        required=False,
        help_text="Registers a tiny random CLIP built offline, for trying the workflow; its numbers mean nothing.",
    )
    demo_data = forms.BooleanField(
        label="Add the demo's data",
        required=False,
        help_text="The demo photographs' hand-written references and SIMULATED ratings of the simulated systems' "
        "captions (evaluation/demo): for trying the workflow, never for results.",
    )
    register_as = forms.CharField(help_text="The name metric runs will choose the fine-tuned model by.")
    learning_rate = forms.FloatField(initial=1e-5)
    batch_size = forms.IntegerField(initial=32, min_value=3)
    epochs = forms.IntegerField(initial=5, min_value=1)
    patience = forms.IntegerField(
        initial=2, min_value=1, help_text="Epochs without a better dev score before stopping."
    )
    seed = forms.IntegerField(initial=0, help_text="Training seed.")
    split_seed = forms.IntegerField(initial=0, help_text="Seed of the train/dev/test split of the images.")
    trainable = forms.ChoiceField(choices=[(c, c) for c in TRAINABLE_CHOICES], initial="all")

    class Meta:
        model = ClipFineTune
        fields = ["name"]

    def check(self, data):
        base = data.get("base")
        if data.get("demo_base"):
            if base is not None:
                raise forms.ValidationError("Choose a base model or the demo's tiny model, not both.")
            base = ClipModel.objects.filter(name=DEMO_MODEL_NAME).first() or clip_model_demo_register()
        if base is None:
            self.fields["base"].settings_check()
        elif data.get("demo_base"):
            # Chosen through the box, not the field: the field's check of its weights is made here.
            self.fields["base"].clean(base.pk)
        captions_files, ratings_file = demo_data_files() if data.get("demo_data") else ({}, None)
        self.plan = fine_tune_plan(
            campaigns=[str(c.pk) for c in data.get("campaigns") or []],
            captions_files=captions_files,
            ratings_file=ratings_file,
            languages=data.get("language_codes") or [],
            base=base.name if base else None,
            name=data.get("name") or "",
            register_as=data.get("register_as") or "",
            learning_rate=data["learning_rate"],
            batch_size=data["batch_size"],
            epochs=data["epochs"],
            seed=data["seed"],
            split_seed=data["split_seed"],
            trainable=data["trainable"],
            patience=data["patience"],
        )


def before_after_html(run: ClipFineTune):
    if run.status != RunStatus.SUCCEEDED or not run.results.get("test"):
        return "no results yet"
    table = before_after(run.results["test"])
    head = format_html_join("", "<th>{}</th>", ((h,) for h in HEADERS))
    body = format_html_join(
        "",
        "<tr>{}</tr>",
        ((format_html_join("", "<td>{}</td>", ((c,) for c in row)),) for row in before_after_rows(table)),
    )
    deltas = format_html_join(
        "", "<li>{}: Δτ_b (fine-tuned − base) = {}</li>", ((code, delta_text(e)) for code, e in table.items())
    )
    warning = format_html("<p class='errornote'>{}</p>", DEMO_WARNING) if run.is_demo else ""
    return format_html(
        "{}<table id='finetune-before-after'><thead><tr>{}</tr></thead><tbody>{}</tbody></table><ul>{}</ul>",
        warning,
        head,
        body,
        deltas,
    )


@admin.register(ClipFineTune)
class ClipFineTuneAdmin(JobAdminMixin, PlannedJobAdminMixin, StyledModelAdmin):
    list_display = [
        "id",
        "name",
        "base_label",
        "status",
        "progress",
        "dev_score_text",
        "registered",
        "finished_at",
    ]
    search_fields = ["name", "register_as"]
    job_kind = FINE_TUNE
    run_fields = [
        "name",
        "status",
        "error",
        "liveness",
        "progress",
        "loss_contrastive",
        "loss_pearson",
        "dev_score_text",
        "before_after_table",
        "registered",
        "base_label",
        "data_selection",
        "config_list",
        "split_seed",
        "history_figure",
        "device",
        "checkpoint",
        "output",
        "attempts",
        "started_by",
        "created_at",
        "queued_at",
        "started_at",
        "heartbeat_at",
        "finished_at",
        "duration",
        "versions",
    ]
    job_fields = run_fields
    job_store = staticmethod(fine_tune_store)
    job_start_form = ClipFineTuneStartForm
    job_start_fields = [
        "name",
        "campaigns",
        "language_codes",
        "base",
        "demo_base",
        "demo_data",
        "register_as",
        "learning_rate",
        "batch_size",
        "epochs",
        "patience",
        "seed",
        "split_seed",
        "trainable",
    ]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("base", "model", "created_by")

    @staticmethod
    def job_resume_service(*, job_id: int):
        # The service refuses (Conflict) a run whose worker is alive, with when it may be resumed.
        fine_tune_resume(run_id=job_id)
        return ResumeResult(job=None, requeued=1, running=0)

    # --- columns ----------------------------------------------------------------------------------

    @admin.display(description="base model")
    def base_label(self, run):
        label = run.base.name if run.base else f"{run.base_params.get('clip_model')} (settings)"
        return f"{label} — tiny demo model" if run.is_demo else label

    @admin.display(description="progress")
    def progress(self, run):
        epochs = run.config.get("epochs", "?")
        return f"epoch {run.epoch}/{epochs}, step {run.step}"

    @admin.display(description="registered model")
    def registered(self, run):
        if run.model is None:
            # Only a run that may still finish will register its name, and only while it is free.
            taken = ClipModel.objects.filter(name=run.register_as).exists()
            if run.status == RunStatus.FAILED:
                return (
                    f"none (the run failed; “{run.register_as}” now names another model)"
                    if taken
                    else "none (the run failed)"
                )
            if taken:
                return f"none (“{run.register_as}” now names another model)"
            return f"(will be “{run.register_as}”)"
        url = reverse("admin:evaluation_clipmodel_change", args=[run.model.pk])
        return format_html("<a href='{}'>{}</a>", url, run.model.name)

    @admin.display(description="data")
    def data_selection(self, run):
        return format_html_join("", "<div>{}: {}</div>", ((k, v) for k, v in (run.selection or {}).items()))

    @admin.display(description="before/after on the test split")
    def before_after_table(self, run):
        return before_after_html(run)

    @admin.display(description="best dev score", ordering="dev_score")
    def dev_score_text(self, run):
        return score_text(run.dev_score)

    @admin.display(description="configuration")
    def config_list(self, run):
        items = config_items(run.config)
        if not items:
            return "–"
        return format_html(
            "<ul class='finetune-config'>{}</ul>", format_html_join("", "<li>{}: {}</li>", items)
        )

    @admin.display(description="history")
    def history_figure(self, run):
        if not run.history:
            return "no epoch finished yet"
        url = reverse("reports:finetune-history", kwargs={"run_id": run.pk, "fmt": "svg"})
        return format_html(
            "<img src='{}' alt='Training losses and dev score per epoch' width='480' height='260'>"
            " <a href='{}'>PNG</a>",
            url,
            reverse("reports:finetune-history", kwargs={"run_id": run.pk, "fmt": "png"}),
        )


@admin.register(ClipModel)
class ClipModelAdmin(StyledModelAdmin):
    list_display = ["name", "model_name", "weights", "is_demo", "created_at"]
    search_fields = ["name", "model_name", "model_id"]
    readonly_fields = ["model_id", "base_model_id", "provenance", "fine_tune_link", "test_table"]
    fields = [
        "name",
        "model_name",
        "pretrained",
        "checkpoint",
        "architecture",
        "is_demo",
        "description",
        "model_id",
        "base_model_id",
        "fine_tune_link",
        "test_table",
        "provenance",
    ]

    @admin.display(description="weights")
    def weights(self, model):
        return model.checkpoint or model.pretrained

    @admin.display(description="fine-tuning run")
    def fine_tune_link(self, model):
        run = getattr(model, "fine_tune", None)
        if run is None:
            return "–"
        return format_html(
            "<a href='{}'>{}</a>", reverse("admin:evaluation_clipfinetune_change", args=[run.pk]), run
        )

    @admin.display(description="test split: base vs this model")
    def test_table(self, model):
        run = getattr(model, "fine_tune", None)
        return before_after_html(run) if run is not None else "–"
