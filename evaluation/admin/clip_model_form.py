"""What the admin forms that need a CLIP model share: the one choice of a registered CLIP model (metric
runs, retrieval, zero-shot and foil checks, fine-tuning, the evaluation server's phases), validated on
save; the CLIP checks' weights fields and how the form's data becomes the plan's model and language
arguments (the same as the commands' options), and the checks' model and languages columns. The
Languages field serves the fine-tuning start form too."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin
from django.utils.functional import lazy

from evaluation.clip_choice import ClipModelChoice
from evaluation.finetune.availability import base_weights_problem
from evaluation.models import ClipModel


class LanguageCodesField(forms.CharField):
    """A start form's "Languages": codes separated by spaces or commas, cleaned to a list of codes; empty
    (every language) by default."""

    def __init__(self, *, help_text: str, **kwargs):
        super().__init__(label="Languages", required=False, help_text=help_text, **kwargs)

    def clean(self, value) -> list[str]:
        return (super().clean(value) or "").replace(",", " ").split()


def _local_weights_problem(*, model_name: str, pretrained: str, checkpoint: str) -> str | None:
    """Why this server's own jobs cannot load these weights, or None. Only where this server computes
    the jobs (no job broker): a broker's workers have caches this process cannot see. A pretrained tag
    not in the cache is a problem only while the Hugging Face libraries are offline (the embedded
    default); online, it downloads on first use."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    if not checkpoint and not settings.HF_OFFLINE:
        return None
    return base_weights_problem(model_name=model_name, pretrained=pretrained, checkpoint=checkpoint)


def _settings_label() -> str:
    return f"the CLIP_* settings ({settings.CLIP_MODEL})"


def _demo_hint() -> str:
    demo = ClipModel.objects.filter(is_demo=True).order_by("name").first()
    return f" (on the demo: {demo.name})" if demo else ""


class RegisteredClipModelField(forms.ModelChoiceField):
    """The one choice of a registered CLIP model (``ClipModel``: the demo's, a fine-tuned one, one
    registered by hand) in every form that needs a CLIP model; optional, empty meaning the CLIP_*
    settings. ``what`` names the model in messages ("base model").

    A chosen model whose weights this server's own jobs cannot load is refused when the form is
    cleaned; a form that needs the model when none is chosen calls :meth:`settings_check`."""

    def __init__(self, *, label: str = "CLIP model", help_text: str = "", what: str = "CLIP model", **kwargs):
        self.what = what
        settings_note = (
            " Empty: the CLIP_* settings' model, refused on save where this server runs the jobs itself "
            "and cannot load it."
        )
        super().__init__(
            queryset=ClipModel.objects.all(),
            required=False,
            label=label,
            empty_label=lazy(lambda: f"– none: {_settings_label()} –", str)(),
            help_text=f"{help_text}{settings_note}".strip(),
            **kwargs,
        )

    def clean(self, value):
        model = super().clean(value)
        if model is not None:
            params = model.clip_params
            problem = _local_weights_problem(
                model_name=params["clip_model"],
                pretrained=params["clip_pretrained"],
                checkpoint=params["clip_checkpoint"],
            )
            if problem:
                raise forms.ValidationError(
                    f"The {self.what} “{model.name}” is not available on this machine: {problem}. Choose "
                    f"another registered model{_demo_hint()}, or put its weights there first."
                )
        return model

    def settings_check(self) -> None:
        """Refuse the empty choice (the CLIP_* settings) when this server's own jobs cannot load that
        model, naming what to do; a form calls it when it needs a model and none is chosen."""
        problem = _local_weights_problem(
            model_name=settings.CLIP_MODEL,
            pretrained=settings.CLIP_PRETRAINED or "",
            checkpoint=settings.CLIP_CHECKPOINT or "",
        )
        if problem:
            raise forms.ValidationError(
                f"The {self.what} of {_settings_label()} is not available on this machine: {problem}. "
                f"Choose a registered CLIP model{_demo_hint()}, or put its weights in the Hugging Face "
                "cache (or CLIP_CHECKPOINT) first.",
            )


class ClipCheckModelFields(forms.Form):
    """Mixed into a check's start form, which declares its own ``language_codes`` (a
    :class:`LanguageCodesField`): the registered model, or an open_clip model typed with its weights."""

    clip_model = RegisteredClipModelField(
        label="Registered CLIP model",
        help_text="A registered model (the demo's, or one fine-tuned on this platform's ratings), as for metric "
        "runs; or an open_clip model typed below instead.",
    )
    model = forms.CharField(
        label="open_clip model",
        required=False,
        help_text="An open_clip architecture, only without a registered model; empty: the CLIP_MODEL setting.",
    )
    pretrained = forms.CharField(
        required=False, help_text="Pretrained tag; empty with an empty model: the setting."
    )
    checkpoint = forms.CharField(
        required=False, help_text="A checkpoint file on the workers, instead of a tag."
    )

    def clip_check_arguments(self, data: dict) -> dict:
        """languages, name and the CLIP model choice for the plan: the registered model, else the typed
        one, else the settings (pretrained and checkpoint then ``None``, the settings' too), which are
        refused here when this server's own jobs cannot load them."""
        registered = data.get("clip_model")
        model = data.get("model") or None
        if registered is None and model is None and not data.get("pretrained") and not data.get("checkpoint"):
            self.fields["clip_model"].settings_check()
        return {
            "languages": data.get("language_codes") or [],
            "name": data.get("name") or "",
            "clip": ClipModelChoice(
                model=model,
                pretrained=data.get("pretrained") or (None if model is None else ""),
                checkpoint=data.get("checkpoint") or (None if model is None else ""),
                registered=registered.name if registered is not None else None,
            ),
        }


class ClipCheckColumns:
    """Mixed into a CLIP check's ``ModelAdmin``: its model and languages, as columns and read-only fields.

    Not "model": a ModelAdmin's ``model`` is the model class, so a column of that name showed the class's
    verbose name as its header and the check itself as its value."""

    # What a check's page shows after its name (and probe): its state, then its model as set and as loaded.
    CHECK_HEAD_FIELDS = ("status", "error", "progress", "liveness", "clip_model_label", "model_id")

    @admin.display(description="CLIP model")
    def clip_model_label(self, check):
        return check.model_label

    @admin.display(description="languages")
    def languages_list(self, check):
        return ", ".join(check.languages)
