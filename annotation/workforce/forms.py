"""Forms of the participant's pages. Labels and errors are translated (the annotator's interface)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.interface import language_name
from annotation.models import Language


class SignupForm(forms.Form):
    username = forms.CharField(label=_("User name"), max_length=150)
    password = forms.CharField(label=_("Password"), widget=forms.PasswordInput, max_length=128)
    password2 = forms.CharField(label=_("Password again"), widget=forms.PasswordInput, max_length=128)


class LanguagesForm(forms.Form):
    native = forms.ModelMultipleChoiceField(
        label=_("Languages I speak natively"),
        queryset=Language.objects.order_by("name"),
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    fluent = forms.ModelMultipleChoiceField(
        label=_("Languages I speak fluently"),
        queryset=Language.objects.order_by("name"),
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    reads_english = forms.BooleanField(label=_("I can read English"), required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Language names in the interface language ("Deutsch", "ドイツ語"), from CLDR.
        for name in ("native", "fluent"):
            self.fields[name].label_from_instance = language_name


class TutorialAnswerForm(forms.Form):
    item = forms.IntegerField(min_value=1, max_value=2**31 - 1)
    answer = forms.CharField(max_length=16, required=False)
    # A writing item's caption (bounded like a caption on screen 2).
    text = forms.CharField(max_length=1000, required=False, strip=False)

    def clean(self):
        data = super().clean()
        if not data.get("answer") and not (data.get("text") or "").strip():
            raise forms.ValidationError(_("Choose one of the answers shown."))
        return data
