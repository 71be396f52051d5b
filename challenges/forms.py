"""Forms of the participants' pages."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class SubmissionForm(forms.Form):
    file = forms.FileField(
        label=_("Result file"),
        help_text=_("In one of the formats listed above."),
    )
    language = forms.CharField(
        label=_("Language of a COCO results file"),
        max_length=16,
        required=False,
        help_text=_("Its code, e.g. de; not needed for JSON lines or a zip."),
    )
    method_name = forms.CharField(label=_("Method name"), max_length=200)
    description = forms.CharField(
        label=_("Description"), widget=forms.Textarea(attrs={"rows": 3}), required=False
    )
    paper_url = forms.URLField(label=_("Paper link"), required=False, assume_scheme="https")
    code_url = forms.URLField(label=_("Code link"), required=False, assume_scheme="https")


class JoinForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    password = forms.CharField(label=_("Password"), widget=forms.PasswordInput)
    password_again = forms.CharField(label=_("Password again"), widget=forms.PasswordInput)

    def clean(self):
        data = super().clean()
        if data.get("password") != data.get("password_again"):
            raise forms.ValidationError(_("The two passwords differ."))
        return data
