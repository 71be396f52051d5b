"""The forms behind the campaign add pages: caption, side-by-side and verification campaigns, and the
translated guidelines of a campaign. Each validates only; the page then calls the kind's service."""

from __future__ import annotations

import re

from django import forms
from django.conf import settings

from annotation.models import (
    Campaign,
    CampaignGuidelines,
    CampaignKind,
    CaptioningSystem,
    Language,
    WrittenCaption,
)
from annotation.services.campaigns import (
    MAX_BATCH_SIZE,
    MAX_REPLICATION,
    SEED_MAX,
)
from core.admin import count_of
from core.scales import SXS_CONTROL_MIN_JUDGMENTS

SXS_DEFAULT_CONTROLS = 5
KEY_SEPARATORS = re.compile(r"[\s,;]+")


class _CreateForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Annotators see this name.")
    sample_size = forms.IntegerField(
        required=False, min_value=1, help_text="Empty: every eligible image. The paper used 600."
    )
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=SEED_MAX,
        help_text="Seed of the random choices. Empty: drawn now; it is stored with the campaign either way.",
    )
    replication = forms.IntegerField(
        min_value=1, max_value=MAX_REPLICATION, initial=3, help_text="K judgments per item."
    )
    open_now = forms.BooleanField(required=False, initial=True, label="Open it now")


class SxsCampaignForm(_CreateForm):
    language = forms.ModelChoiceField(Language.objects.all())
    base_system = forms.ModelChoiceField(CaptioningSystem.objects.all(), label="Base system (m1)")
    test_system = forms.ModelChoiceField(CaptioningSystem.objects.all(), label="Test system (m2)")
    batch_size = forms.IntegerField(min_value=1, max_value=MAX_BATCH_SIZE, initial=10)
    # Five of each kind: with the default batch size most annotators then meet enough
    # controls to be judged (see control_min_judgments); 0 switches a kind off.
    controls_identical = forms.IntegerField(
        min_value=0,
        initial=SXS_DEFAULT_CONTROLS,
        label="Identical-caption controls",
        help_text="Both sides the same caption: expected Similar.",
    )
    controls_wrong_image = forms.IntegerField(
        min_value=0,
        initial=SXS_DEFAULT_CONTROLS,
        label="Wrong-image controls",
        help_text="One side is a caption of another image: expected a clear preference for the real caption.",
    )
    control_pass_threshold = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0.75,
        help_text="Annotators passing a smaller share of controls are flagged.",
    )
    control_min_judgments = forms.IntegerField(
        min_value=1,
        initial=SXS_CONTROL_MIN_JUDGMENTS,
        label="Minimum control judgments",
        help_text="An annotator is judged (and flagged) only from this many control judgments on; "
        "fewer show as “too few to judge”.",
    )
    field_order = [
        "name",
        "language",
        "base_system",
        "test_system",
        "sample_size",
        "seed",
        "replication",
        "batch_size",
        "controls_identical",
        "controls_wrong_image",
        "control_pass_threshold",
        "control_min_judgments",
        "open_now",
    ]

    def clean(self):
        data = super().clean()
        if data.get("base_system") and data.get("base_system") == data.get("test_system"):
            self.add_error("test_system", "Choose a system other than the base system.")
        return data


IMAGE_SELECTIONS = [
    ("all", "Every image with a file and a prompt caption (images loaded later join when it is reopened)"),
    ("keys", "Only the images whose keys are listed below"),
    ("campaign", "The images of another campaign"),
]


class CaptionCampaignForm(forms.Form):
    """A caption campaign: the settings, which images, and whether it opens now."""

    name = forms.CharField(max_length=200, help_text="Annotators see this name.")
    language = forms.ModelChoiceField(Language.objects.all(), help_text="The language annotators write in.")
    prompt_system = forms.ModelChoiceField(
        CaptioningSystem.objects.all(), help_text="Its English captions are rated on screen 1."
    )
    batch_size = forms.IntegerField(
        min_value=1, max_value=MAX_BATCH_SIZE, initial=15, help_text="N images per batch."
    )
    replication = forms.IntegerField(
        min_value=1, max_value=MAX_REPLICATION, initial=2, help_text="K captions per image."
    )
    lease_minutes = forms.IntegerField(
        min_value=1, initial=60, help_text="An unfinished batch goes back after this."
    )
    images = forms.ChoiceField(choices=IMAGE_SELECTIONS, initial="all", widget=forms.RadioSelect)
    image_keys = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="One key per line (or separated by spaces or commas), e.g. the keys of an image set.",
    )
    images_of = forms.ModelChoiceField(
        Campaign.objects.order_by("name"), required=False, label="Images of campaign"
    )
    rating_guidelines = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text="Empty: the built-in text."
    )
    writing_guidelines = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text="Empty: the built-in text."
    )
    open_now = forms.BooleanField(
        required=False,
        initial=True,
        label="Open it now",
        help_text="Annotators can start at once. Unticked, it is saved as a draft: open it later with "
        "the “Open selected campaigns” action.",
    )

    def clean(self):
        data = super().clean()
        if data.get("images") == "keys" and not (data.get("image_keys") or "").strip():
            self.add_error("image_keys", "List the keys of the images.")
        if data.get("images") == "campaign" and not data.get("images_of"):
            self.add_error("images_of", "Choose the campaign whose images to take.")
        return data


class CaptionCampaignChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return f"{obj.name} [{obj.language.code}, {obj.n_written} captions, {obj.get_state_display()}]"


class VerificationCampaignForm(_CreateForm):
    source_campaign = CaptionCampaignChoice(
        queryset=Campaign.objects.none(),
        help_text="One of its written captions per image is chosen at random and rated by the language's annotators.",
    )
    batch_size = forms.IntegerField(min_value=1, max_value=MAX_BATCH_SIZE, initial=15)
    field_order = ["name", "source_campaign", "sample_size", "seed", "replication", "batch_size", "open_now"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["source_campaign"].queryset = (
            Campaign.objects.filter(kind=CampaignKind.CAPTION)
            .select_related("language")
            .annotate(n_written=count_of(WrittenCaption, "campaign"))
            .filter(n_written__gt=0)
            .order_by("name")
        )


class CampaignGuidelinesForm(forms.ModelForm):
    interface_language = forms.ChoiceField(
        choices=settings.LANGUAGES,
        help_text="Annotators whose interface is in this language read these texts.",
    )

    class Meta:
        model = CampaignGuidelines
        fields = ["interface_language", "rating", "writing", "sxs"]
        widgets = {name: forms.Textarea(attrs={"rows": 4}) for name in ["rating", "writing", "sxs"]}
