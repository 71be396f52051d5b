"""Reference sets, image sets and the CLIP embedding cache in the admin."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django import forms
from django.contrib import admin

from annotation.models import Campaign, CampaignKind, Language
from core.admin import ReadOnlyAdminMixin, StyledModelAdmin, count_of, service_form_view
from evaluation.human.selectors import reference_captions
from evaluation.metrics.references import (
    FORMATS,
    reference_set_describe,
    reference_set_from_campaign,
    references_import,
)
from evaluation.models import ClipEmbedding, ImageSet, Reference, ReferenceSet, ReferenceSetKind


class ReferenceSetCreateForm(forms.Form):
    """A reference set is made by a service, never by a plain model form: the campaign's written
    captions (language taken from the campaign, and checked) or an uploaded file (validated and
    imported whole, or not at all)."""

    name = forms.CharField(
        max_length=200,
        required=False,
        help_text="Empty for a campaign: the campaign's name followed by “(written captions)”.",
    )
    kind = forms.ChoiceField(choices=ReferenceSetKind.choices, widget=forms.RadioSelect)
    campaign = forms.ModelChoiceField(
        queryset=Campaign.objects.filter(kind=CampaignKind.CAPTION).select_related("language"),
        required=False,
        help_text="For “campaign”: its written captions are the references, in the campaign's language.",
    )
    language = forms.ModelChoiceField(
        queryset=Language.objects.all(),
        required=False,
        help_text="Required for an imported file. For a campaign it must be the campaign's language.",
    )
    file = forms.FileField(
        required=False,
        help_text="For “imported”: an XM3600 captions file (JSONL) or COCO annotations (JSON).",
    )
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS], initial="auto")
    min_verified_rating = forms.ChoiceField(
        label="Keep",
        choices=ReferenceSet._meta.get_field("min_verified_rating").choices,
        required=False,
        help_text="For “campaign”: every counted caption, or only those its verification campaigns rated "
        "MEDIUM or GOOD or better (median of the raters).",
    )
    public_dataset = forms.CharField(
        max_length=200,
        required=False,
        help_text="For “imported”: the public dataset the file comes from, with its licence (e.g. “XM3600, "
        "CC-BY 4.0”). Shown wherever a benchmark is scored on these references: anyone may have trained on them.",
    )
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    language_check_reason = forms.CharField(
        label="Import anyway, because",
        max_length=500,
        required=False,
        help_text="References go through the script and language checks of annotators' captions; a file "
        "that fails them is refused with the counts per problem. To import it anyway, say why (recorded on "
        "the set).",
    )

    def clean(self):
        data = super().clean()
        kind = data.get("kind")
        if kind == ReferenceSetKind.CAMPAIGN and not data.get("campaign"):
            self.add_error("campaign", "Choose the caption campaign whose captions are the references.")
        if kind == ReferenceSetKind.IMPORTED:
            if not data.get("file"):
                self.add_error("file", "Upload the file of references.")
            if not data.get("language"):
                self.add_error("language", "Choose the language of the references.")
            if not (data.get("name") or "").strip():
                self.add_error("name", "Name the reference set.")
        return data


def _reference_set_create(data) -> ReferenceSet:
    language = data.get("language")
    if data["kind"] == ReferenceSetKind.CAMPAIGN:
        return reference_set_from_campaign(
            campaign_id=data["campaign"].pk,
            name=data.get("name"),
            language_code=language.code if language else None,
            description=data.get("description") or "",
            min_verified_rating=data.get("min_verified_rating") or "",
        )
    upload = data["file"]
    name = data["name"].strip()
    with tempfile.TemporaryDirectory(prefix="references-") as folder:
        # The importer records the file's name; keep the uploaded one, never a path from the client.
        path = Path(folder) / (Path(upload.name).name or "references")
        with open(path, "wb") as handle:
            for part in upload.chunks():
                handle.write(part)
        references_import(
            path=path,
            name=name,
            language_code=language.code,
            format=data["format"],
            language_check_reason=data.get("language_check_reason") or "",
            public_dataset=data.get("public_dataset") or "",
        )
    reference_set = ReferenceSet.objects.get(name=name)
    if data.get("description"):
        reference_set = reference_set_describe(
            reference_set_id=reference_set.pk, name=name, description=data["description"]
        )
    return reference_set


@admin.register(ReferenceSet)
class ReferenceSetAdmin(StyledModelAdmin):
    list_display = [
        "name",
        "language",
        "kind",
        "campaign",
        "reference_count",
        "source_name",
        "public_dataset",
        "updated_at",
    ]
    list_filter = ["kind", "language"]
    search_fields = ["name", "source_name"]
    readonly_fields = [
        "language",
        "kind",
        "campaign",
        "min_verified_rating",
        "source_name",
        "source_format",
        "source_sha256",
        "reference_count",
        "language_check_override",
    ]
    fields = ["name", "description", "public_dataset", *readonly_fields]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("language", "campaign")
            .annotate(n_references=count_of(Reference, "reference_set"))
        )

    def add_view(self, request, form_url="", extra_context=None):
        def done(reference_set):
            count = (
                reference_set.references.count()
                if reference_set.kind == ReferenceSetKind.IMPORTED
                else f"the campaign's {reference_captions(campaign_ids=[reference_set.campaign_id]).count()}"
            )
            return (
                f"Reference set “{reference_set.name}” ({reference_set.language.code}, "
                f"{reference_set.get_kind_display()}): {count} references."
            )

        initial = {"kind": ReferenceSetKind.CAMPAIGN}
        campaign = request.GET.get("campaign")
        if campaign and campaign.isdigit():
            initial["campaign"] = int(campaign)
        return service_form_view(
            self,
            request,
            form_class=ReferenceSetCreateForm,
            create=_reference_set_create,
            title="Add reference set",
            done=done,
            initial=initial,
        )

    def save_model(self, request, obj, form, change):
        # Only the name and description change after creation, through the service.
        reference_set_describe(
            reference_set_id=obj.pk,
            name=obj.name,
            description=obj.description,
            public_dataset=obj.public_dataset,
        )

    @admin.display(description="imported references", ordering="n_references")
    def reference_count(self, reference_set):
        return getattr(reference_set, "n_references", None) or reference_set.references.count()


@admin.register(ImageSet)
class ImageSetAdmin(StyledModelAdmin):
    list_display = ["name", "language", "image_count", "seed", "updated_at"]
    list_filter = ["language"]
    search_fields = ["name"]
    autocomplete_fields = ["images"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("language")
            .annotate(n_images=count_of(ImageSet.images.through, "imageset"))
        )

    @admin.display(description="images", ordering="n_images")
    def image_count(self, image_set):
        return getattr(image_set, "n_images", None)


@admin.register(ClipEmbedding)
class ClipEmbeddingAdmin(ReadOnlyAdminMixin, StyledModelAdmin):
    deletable = True

    list_display = ["model_id", "content_hash", "dim", "created_at"]
    list_filter = ["model_id"]
    search_fields = ["=content_hash"]
    fields = ["model_id", "content_hash", "dim", "created_at"]
    readonly_fields = fields
