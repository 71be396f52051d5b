"""factory_boy factories shared by the whole suite."""

from __future__ import annotations

import io

import factory
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from PIL import Image as PILImage

from annotation import models as m


def png_bytes(color=(120, 160, 200), size=(8, 8)) -> bytes:
    buf = io.BytesIO()
    PILImage.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests-only")


class LanguageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Language
        django_get_or_create = ("code",)

    code = "de"
    name = "German"


class ImageFactory(factory.django.DjangoModelFactory):
    """An image with a real (tiny) stored PNG file and its content hash."""

    class Meta:
        model = m.Image
        skip_postgeneration_save = True

    key = factory.Sequence(lambda n: f"img{n:05d}")
    format = "PNG"

    @factory.post_generation
    def with_file(obj, create, extracted, **kwargs):
        if extracted is False:
            return
        import hashlib

        data = png_bytes(color=(obj.pk % 256 if obj.pk else 1, 100, 150))
        data += obj.key.encode()  # distinct bytes per image: the hash is unique
        obj.content_hash = hashlib.sha256(data).hexdigest()
        obj.file.save(f"{obj.key}.png", ContentFile(data), save=create)


class SystemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.CaptioningSystem
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"system-{n}")


class SystemCaptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.SystemCaption

    system = factory.SubFactory(SystemFactory)
    image = factory.SubFactory(ImageFactory)
    language = factory.SubFactory(LanguageFactory, code="en", name="English")
    text = factory.Sequence(lambda n: f"a dog running on the beach number {n}")


class AnnotatorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Annotator
        skip_postgeneration_save = True

    user = factory.SubFactory(UserFactory)
    reads_english = True

    @factory.post_generation
    def languages(obj, create, extracted, **kwargs):
        for language in extracted or []:
            m.AnnotatorSkill.objects.get_or_create(
                annotator=obj, language=language, defaults={"level": m.SkillLevel.NATIVE}
            )


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Campaign

    name = factory.Sequence(lambda n: f"campaign {n}")
    kind = m.CampaignKind.CAPTION
    language = factory.SubFactory(LanguageFactory)
    prompt_system = factory.SubFactory(SystemFactory)
    batch_size = 3
    replication = 2
    lease_minutes = 30


def open_caption_campaign(*, images: int = 6, batch_size: int = 3, replication: int = 2, language=None, **kwargs):
    """A caption campaign with ``images`` images (files + English prompt captions), opened."""
    from annotation.services.campaigns import campaign_open

    language = language or LanguageFactory()
    english = LanguageFactory(code="en", name="English")
    system = SystemFactory()
    for _ in range(images):
        SystemCaptionFactory(system=system, language=english)
    campaign = CampaignFactory(
        language=language, prompt_system=system, batch_size=batch_size, replication=replication, **kwargs
    )
    return campaign_open(campaign_id=campaign.pk)
