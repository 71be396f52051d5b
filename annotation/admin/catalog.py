"""Admin of what campaigns are built from: languages, annotators, images, systems and their captions."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db import models
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from annotation.admin.common import StyledModelAdmin, count_of, run_service
from annotation.models import (
    AnnotatorSkill,
    Campaign,
    CaptioningSystem,
    Image,
    Language,
    SystemCaption,
    WrittenCaption,
)
from annotation.services.images import METADATA_FIELDS, image_store, image_validate
from core.errors import ValidationFailed


@admin.register(Language)
class LanguageAdmin(StyledModelAdmin):
    list_display = ["code", "name", "direction", "tokenizer", "annotators", "campaigns", "written_captions"]
    list_filter = ["direction", "tokenizer"]
    search_fields = ["code", "name"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_annotators=count_of(AnnotatorSkill, "language"),
                n_campaigns=count_of(Campaign, "language"),
                n_written=count_of(WrittenCaption, "language"),
            )
        )

    @admin.display(description="annotators", ordering="n_annotators")
    def annotators(self, obj):
        return obj.n_annotators

    @admin.display(description="campaigns", ordering="n_campaigns")
    def campaigns(self, obj):
        return obj.n_campaigns

    @admin.display(description="written captions", ordering="n_written")
    def written_captions(self, obj):
        return obj.n_written


class HasFileFilter(admin.SimpleListFilter):
    title = "file"
    parameter_name = "has_file"

    def lookups(self, request, model_admin):
        return [("yes", "stored"), ("no", "missing")]

    def queryset(self, request, queryset):
        missing = Q(file="") | Q(file__isnull=True)
        if self.value() == "yes":
            return queryset.exclude(missing)
        if self.value() == "no":
            return queryset.filter(missing)
        return queryset


def image_tag(image: Image, css_class: str):
    if not image.file:
        return "–"
    return format_html(
        '<img src="{}" class="{}" alt="{}" loading="lazy">',
        reverse("annotation:image", args=[image.pk]),
        css_class,
        image.key,
    )


class ImageUploadForm(forms.ModelForm):
    """Adds one image: the file goes through the image service, with all its checks (RELIABILITY 18)."""

    upload = forms.FileField(label="image file", help_text="JPEG, PNG, WebP or GIF.")
    source_url = forms.URLField(required=False, max_length=500, assume_scheme="https")

    class Meta:
        model = Image
        fields = ["key", *METADATA_FIELDS]

    def clean_upload(self):
        upload = self.cleaned_data["upload"]
        if upload.size > settings.IMAGE_MAX_BYTES:
            raise forms.ValidationError(f"The file is larger than {settings.IMAGE_MAX_BYTES:,} bytes.")
        data = upload.read()
        try:
            validated = image_validate(data, name=upload.name)
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from None
        other = (
            Image.objects.filter(content_hash=validated.content_hash).values_list("key", flat=True).first()
        )
        if other is not None:
            raise forms.ValidationError(f"This picture is already stored as image “{other}”.")
        self.file_bytes = data
        return upload


@admin.register(Image)
class ImageAdmin(StyledModelAdmin):
    list_display = [
        "thumbnail",
        "key",
        "has_file",
        "format",
        "width",
        "height",
        "country",
        "continent",
        "license",
    ]
    list_display_links = ["thumbnail", "key"]
    list_filter = [HasFileFilter, "continent", "format", "country"]
    search_fields = ["key", "title"]
    show_full_result_count = False
    list_per_page = 50
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    # The file is shown as its stored name, never as a media URL: pictures are served only
    # through the access-checked image view.
    readonly_fields = [
        "key",
        "preview",
        "stored_as",
        "content_hash",
        "format",
        "width",
        "height",
        "created_at",
    ]
    fieldsets = [
        (None, {"fields": ["key", "preview", "stored_as", "content_hash", "format", "width", "height"]}),
        ("Source and licence", {"fields": ["title", "author", "license", "source_url"]}),
        ("Place", {"fields": ["latitude", "longitude", "country", "region", "continent"]}),
    ]
    add_fieldsets = [
        (None, {"fields": ["key", "upload"]}),
        ("Source and licence", {"fields": ["title", "author", "license", "source_url"]}),
        ("Place", {"fields": ["latitude", "longitude", "country", "region", "continent"]}),
    ]

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = ImageUploadForm
        return super().get_form(request, obj, **kwargs)

    def get_fieldsets(self, request, obj=None):
        return self.add_fieldsets if obj is None else self.fieldsets

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            # Metadata only: the file, its hash and size are read-only here.
            return super().save_model(request, obj, form, change)
        metadata = {name: form.cleaned_data.get(name) for name in METADATA_FIELDS}
        result = run_service(
            self,
            request,
            image_store,
            key=obj.key,
            data=form.file_bytes,
            name=form.cleaned_data["upload"].name,
            **metadata,
        )
        if result is not None:
            stored, _ = result
            obj.pk = stored.pk
            obj._state.adding = False
            for name in ("file", "content_hash", "format", "width", "height", "created_at", "updated_at"):
                setattr(obj, name, getattr(stored, name))

    def log_addition(self, request, obj, message):
        if obj.pk is not None:
            return super().log_addition(request, obj, message)
        return None

    def response_add(self, request, obj, post_url_continue=None):
        if obj.pk is None:  # the service refused it; its message is already shown
            return HttpResponseRedirect(request.path)
        return super().response_add(request, obj, post_url_continue)

    @admin.display(description="image")
    def thumbnail(self, obj):
        return image_tag(obj, "admin-thumb")

    @admin.display(description="preview")
    def preview(self, obj):
        return image_tag(obj, "admin-preview")

    @admin.display(description="file", boolean=True, ordering="file")
    def has_file(self, obj):
        return obj.has_file

    @admin.display(description="stored as")
    def stored_as(self, obj):
        return obj.file.name if obj.file else "–"

    @admin.display(description="licence", ordering="license")
    def licence(self, obj):
        return Truncator(obj.license).chars(40)


@admin.register(CaptioningSystem)
class CaptioningSystemAdmin(StyledModelAdmin):
    list_display = ["name", "captions", "prompt_campaigns", "description_short"]
    search_fields = ["name"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_captions=count_of(SystemCaption, "system"),
                n_prompt=count_of(Campaign, "prompt_system"),
            )
        )

    @admin.display(description="captions", ordering="n_captions")
    def captions(self, obj):
        return obj.n_captions

    @admin.display(description="prompt system of", ordering="n_prompt")
    def prompt_campaigns(self, obj):
        return f"{obj.n_prompt} campaign{'s' if obj.n_prompt != 1 else ''}"

    @admin.display(description="description")
    def description_short(self, obj):
        return Truncator(obj.description).chars(80)


@admin.register(SystemCaption)
class SystemCaptionAdmin(StyledModelAdmin):
    list_display = ["image", "system", "language", "text_short"]
    list_select_related = ["image", "system", "language"]
    list_filter = ["system", "language"]
    search_fields = ["=image__key", "text"]
    autocomplete_fields = ["image"]
    show_full_result_count = False

    @admin.display(description="text")
    def text_short(self, obj):
        return Truncator(obj.text).chars(120)
