"""Forms of the annotator pages (what they validate is shown to annotators: every text is translated)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.interface import interface_languages


class InterfaceLanguageForm(forms.Form):
    """The top bar's language selector: an interface language, or "" for the pages' defaults."""

    language = forms.ChoiceField(
        required=False,
        error_messages={"invalid_choice": _("This language is not available for the interface.")},
    )
    next = forms.CharField(required=False, max_length=2000)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["language"].choices = [("", _("Automatic")), *interface_languages()]
