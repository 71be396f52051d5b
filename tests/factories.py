"""factory_boy factories shared by the whole suite."""

from __future__ import annotations

import io

import factory
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from PIL import Image as PILImage

from annotation import models as m
from evaluation import models as em


def png_bytes(color=(120, 160, 200), size=(8, 8), text: str = "") -> bytes:
    """A PNG; ``text`` goes into a tEXt chunk (inside the picture, so it is part of what is stored)."""
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    if text:
        info.add_text("key", text)
    buf = io.BytesIO()
    PILImage.new("RGB", size, color).save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests-only")


class RoleUserFactory(UserFactory):
    """A staff user in a role (``role=RESEARCHERS`` or ``PROJECT_MANAGERS``); creates the role groups."""

    class Meta:
        skip_postgeneration_save = True

    @factory.post_generation
    def role(obj, create, extracted, **kwargs):
        from core.access import RESEARCHERS, role_grant, roles_ensure

        roles_ensure()
        role_grant(user=obj, role=extracted or RESEARCHERS)


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

        # Distinct bytes per image (the key in a tEXt chunk): the hash is unique.
        data = png_bytes(color=(obj.pk % 256 if obj.pk else 1, 100, 150), text=obj.key)
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
    # The tests written before the interface had other languages read its English text, in
    # campaigns that are mostly German: they get English by choice. The tests of the language
    # defaults (tests/annotation/test_interface_language.py) pass interface_language="".
    interface_language = "en"

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
    # Tests of other behaviour write placeholder captions ("Bild 12"): the length and language
    # checks are off here and switched on by their own tests (tests/annotation/test_caption_checks.py).
    # The script check, the exact copy and the near-copy check stay on everywhere.
    min_caption_length = 1
    language_check = False


def open_caption_campaign(
    *, images: int = 6, batch_size: int = 3, replication: int = 2, language=None, **kwargs
):
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


def sxs_systems(*, images: int = 6, language=None, identical: int = 0, m1_name=None, m2_name=None):
    """Two systems with a caption in ``language`` for each of ``images`` new images (files stored).

    The first ``identical`` images get the same text from both systems. Returns (m1, m2, images).
    """
    language = language or LanguageFactory()
    m1 = SystemFactory(**({"name": m1_name} if m1_name else {}))
    m2 = SystemFactory(**({"name": m2_name} if m2_name else {}))
    made = []
    for i in range(images):
        image = ImageFactory()
        made.append(image)
        SystemCaptionFactory(
            system=m1, image=image, language=language, text=f"Ein Hund am Strand {image.key}"
        )
        text = f"Ein Hund am Strand {image.key}" if i < identical else f"Zwei Kinder im Park {image.key}"
        SystemCaptionFactory(system=m2, image=image, language=language, text=text)
    return m1, m2, made


def open_sxs_campaign(
    *, images: int = 6, batch_size: int = 3, replication: int = 3, language=None, identical: int = 0, **kwargs
):
    """A side-by-side campaign over ``images`` new images of two new systems, opened."""
    from annotation.services.campaigns import campaign_open, sxs_campaign_create

    language = language or LanguageFactory()
    m1, m2, _ = sxs_systems(images=images, language=language, identical=identical)
    kwargs.setdefault("name", f"compare {m.Campaign.objects.count() + 1}")
    campaign = sxs_campaign_create(
        language_code=language.code,
        base_system=m1,
        test_system=m2,
        batch_size=batch_size,
        replication=replication,
        **kwargs,
    )
    return campaign_open(campaign_id=campaign.pk)


# The side-by-side screen's choices, from the LEFT caption's side: +3 "left much better" ... -3.
CHOICE_FOR_LEFT_ADVANTAGE = {
    3: "much_better",
    2: "better",
    1: "slightly_better",
    0: "similar",
    -1: "slightly_worse",
    -2: "worse",
    -3: "much_worse",
}


def sxs_judged(
    annotator,
    *,
    score,
    campaign=None,
    batch=None,
    side: str | None = None,
    submit: bool = True,
    seconds: float | None = None,
    screen_seconds: float | None = None,
):
    """Judge every pair of ``batch`` (or of a new batch in ``campaign``) through the services, so
    that each pair's score from m2's side is ``score(assignment)``; returns the batch.

    With ``side`` ("left"/"right") m2 is first moved to that side; otherwise the server's draw
    stands. ``seconds`` is stored per judgment, ``screen_seconds`` with the submit.
    """
    import uuid

    from annotation.assignment.engine import batch_request
    from annotation.services import work

    if batch is None:
        batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    for a in batch.assignments.select_related("item__image"):
        if side is not None:
            m.Assignment.objects.filter(pk=a.pk).update(m2_side=side)
            a.m2_side = side
        value = score(a)
        work.sxs_judgment_save(
            annotator=annotator,
            batch_id=batch.pk,
            assignment_id=a.pk,
            choice=CHOICE_FOR_LEFT_ADVANTAGE[value if a.m2_side == "left" else -value],
            seconds=seconds,
        )
    if submit:
        work.judgment_batch_submit(
            annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex, seconds=screen_seconds
        )
    return batch


def sxs_judged_all(annotator, campaign, score_of_image_key, *, control_score=None):
    """Take batches until ``campaign`` has no more work for ``annotator``; judge each pair so that its
    score from m2's side is ``score_of_image_key(key)`` (controls: ``control_score(kind)``); submit."""
    from annotation.assignment.engine import batch_request
    from core.errors import NoWorkAvailable

    while True:
        try:
            batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
        except NoWorkAvailable:
            return
        sxs_judged(
            annotator,
            batch=batch,
            score=lambda a: (
                control_score(a.item.control_kind)
                if a.item.is_control
                else score_of_image_key(a.item.image.key)
            ),
        )


def written_captions(campaign, *, annotators, batches: int = 1, text=None):
    """Submit ``batches`` whole caption batches per annotator in ``campaign`` (services only)."""
    import uuid

    from annotation.assignment.engine import batch_request
    from annotation.services import work

    for _ in range(batches):
        for annotator in annotators:
            batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
            assignments = list(batch.assignments.order_by("position"))
            for a in assignments:
                work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
            work.writing_open(annotator=annotator, batch_id=batch.pk)
            for a in assignments:
                caption = text(a) if text else f"Ein Bild Nummer {a.pk} von {annotator}"
                work.draft_save(
                    annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, text=caption, base_revision=0
                )
            work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex)


# --- Evaluation: reference sets, image sets, metric runs and their scores ----------------------------


class ReferenceSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = em.ReferenceSet

    name = factory.Sequence(lambda n: f"refs {n}")
    language = factory.SubFactory(LanguageFactory)
    kind = em.ReferenceSetKind.IMPORTED


class ReferenceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = em.Reference

    reference_set = factory.SubFactory(ReferenceSetFactory)
    image = factory.SubFactory(ImageFactory, with_file=False)
    position = 0
    text = factory.Sequence(lambda n: f"ein hund am strand {n}")


def reference_set_with(images, texts, **kwargs):
    """A reference set (``kwargs`` go to :class:`ReferenceSetFactory`) in which ``texts[i]``, a list,
    are the references of ``images[i]``, at positions 0, 1, ..."""
    reference_set = ReferenceSetFactory(**kwargs)
    for image, references in zip(images, texts, strict=True):
        for position, text in enumerate(references):
            ReferenceFactory(reference_set=reference_set, image=image, position=position, text=text)
    return reference_set


class ImageSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = em.ImageSet
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"image set {n}")

    @factory.post_generation
    def images(obj, create, extracted, **kwargs):
        if extracted:
            obj.images.set(extracted)


class MetricRunFactory(factory.django.DjangoModelFactory):
    """A metric run row as the run service leaves it finished (no chunks): ``systems=[...]`` to set them."""

    class Meta:
        model = em.MetricRun
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"run {n}")
    language = factory.SubFactory(LanguageFactory)
    reference_set = factory.SubFactory(ReferenceSetFactory, language=factory.SelfAttribute("..language"))
    metrics = factory.LazyFunction(lambda: ["CIDEr-D"])
    status = em.RunStatus.SUCCEEDED

    @factory.post_generation
    def systems(obj, create, extracted, **kwargs):
        if extracted:
            obj.systems.set(extracted)


class CorpusScoreFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = em.CorpusScore

    run = factory.SubFactory(MetricRunFactory)
    system = factory.SubFactory(SystemFactory)
    metric = "CIDEr-D"
    value = 0.5


class CaptionScoreFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = em.CaptionScore

    run = factory.SubFactory(MetricRunFactory)
    system = factory.SubFactory(SystemFactory)
    image = factory.SubFactory(ImageFactory, with_file=False)
    metric = "CIDEr-D"
    value = 0.5
