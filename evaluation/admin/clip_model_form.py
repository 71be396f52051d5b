"""What the admin pages of CLIP checks (retrieval, zero-shot and foil) share: the start forms' weights
fields and how the form's data becomes the plan's model and language arguments (the same as the
commands' options), and the checks' model and languages columns. The Languages field serves the
fine-tuning start form too."""

from __future__ import annotations

from django import forms
from django.contrib import admin

from evaluation.clip_choice import ClipModelChoice
from evaluation.models import ClipModel


class LanguageCodesField(forms.CharField):
    """A start form's "Languages": codes separated by spaces or commas, cleaned to a list of codes; empty
    (every language) by default."""

    def __init__(self, *, help_text: str, **kwargs):
        super().__init__(label="Languages", required=False, help_text=help_text, **kwargs)

    def clean(self, value) -> list[str]:
        return (super().clean(value) or "").replace(",", " ").split()


class RegisteredClipModelField(forms.ModelChoiceField):
    """A start form's choice of a registered CLIP model (``ClipModel``: the demo's, a fine-tuned one);
    optional, the form's help says what empty means."""

    def __init__(self, **kwargs):
        super().__init__(queryset=ClipModel.objects.all(), required=False, **kwargs)


class ClipCheckModelFields(forms.Form):
    """Mixed into a check's start form, which declares its own ``language_codes`` (a
    :class:`LanguageCodesField`) and ``model`` (their help differs by check)."""

    pretrained = forms.CharField(
        required=False, help_text="Pretrained tag; empty with an empty model: the setting."
    )
    checkpoint = forms.CharField(
        required=False, help_text="A checkpoint file on the workers, instead of a tag."
    )

    @staticmethod
    def clip_check_arguments(data: dict) -> dict:
        """languages, name and the CLIP model choice for the plan; an empty model means the settings
        (pretrained and checkpoint then ``None``, the settings' too)."""
        model = data.get("model") or None
        return {
            "languages": data.get("language_codes") or [],
            "name": data.get("name") or "",
            "clip": ClipModelChoice(
                model=model,
                pretrained=data.get("pretrained") or (None if model is None else ""),
                checkpoint=data.get("checkpoint") or (None if model is None else ""),
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
