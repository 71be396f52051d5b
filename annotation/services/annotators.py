"""Onboarding: an annotator's account, profile and language skills, created in one step.

A project manager may create annotators, never staff: every account made here is active,
not staff, not superuser, in no group, and has no usable password. The annotator chooses
their password through a one-time link built on Django's password-reset tokens (valid for
``PASSWORD_RESET_TIMEOUT``, void once the password is set), so no password is ever shown to,
or chosen by, the manager, and no client can make an account staff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext

from annotation.interface import interface_languages
from annotation.models import Annotator, AnnotatorSkill, Language, SkillLevel
from core.errors import ValidationFailed

SKILL_SEPARATORS = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class AnnotatorSpec:
    """What one new annotator is made of (one admin form, or one CSV line)."""

    username: str
    email: str
    skills: tuple[tuple[str, str], ...]  # (language code, level), in the order given
    reads_english: bool = True


def skills_parse(text: str) -> tuple[tuple[str, str], ...]:
    """``"de:native; en:fluent"`` (``;``, ``,`` or spaces between) -> (("de", "native"), ("en", "fluent")).

    Raises ValidationFailed naming the first bad part: no level, an unknown level, a language twice, none
    at all (:func:`skills_parse_all` names every one).
    """
    skills, problems = skills_parse_all(text)
    if problems:
        raise ValidationFailed(problems[0])
    return skills


def skills_parse_all(text: str) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """The skills that could be read from ``text`` and a sentence for every part that could not."""
    skills: dict[str, str] = {}
    problems: list[str] = []
    levels = ", ".join(SkillLevel.values)
    for part in SKILL_SEPARATORS.split(text or ""):
        if not part:
            continue
        code, colon, level = part.partition(":")
        code, level = code.strip(), level.strip().lower()
        if not colon or not code:
            problems.append(f"“{part}”: write a language as code:level, e.g. de:native.")
        elif level not in SkillLevel.values:
            problems.append(f"“{part}”: the level is one of {levels}.")
        elif code in skills:
            problems.append(f"language “{code}” is given twice.")
        else:
            skills[code] = level
    if not skills and not problems:
        problems.append(f"no language: give at least one as code:level ({levels}).")
    return tuple(skills.items()), problems


def annotator_spec_check(spec: AnnotatorSpec, *, languages: dict[str, Language]) -> None:
    """The checks every new annotator passes, from the form or from a CSV line.

    ``languages`` maps the known codes to their rows. Raises ValidationFailed with the first reason
    (:func:`annotator_spec_problems` gives them all).
    """
    problems = annotator_spec_problems(spec, languages=languages)
    if problems:
        raise ValidationFailed(problems[0])


def annotator_spec_problems(spec: AnnotatorSpec, *, languages: dict[str, Language]) -> list[str]:
    """Every reason ``spec`` cannot be an annotator: its username, its e-mail address, its languages."""
    problems = []
    max_length = get_user_model()._meta.get_field("username").max_length
    if not spec.username:
        problems.append("no username.")
    elif len(spec.username) > max_length:
        problems.append(f"the username is longer than {max_length} characters.")
    else:
        try:
            UnicodeUsernameValidator()(spec.username)
        except ValidationError:
            problems.append(f"“{spec.username}” is not a username: letters, digits and @ . + - _ only.")
    try:
        validate_email(spec.email)
    except ValidationError:
        problems.append(f"“{spec.email}” is not an e-mail address.")
    unknown = [code for code, _ in spec.skills if code not in languages]
    if unknown:
        problems.append(
            f"unknown language {', '.join(f'“{c}”' for c in unknown)} (add it under Languages first)."
        )
    if not spec.skills:
        problems.append("no language.")
    return problems


def existing_user_check(user, spec: AnnotatorSpec) -> str:
    """What an existing account with ``spec.username`` means for an import: "unchanged" or "updated".

    Only an existing annotator can be met again (a re-run of the same file); any other account,
    staff above all, is refused: an annotator profile would change what the account may do.
    """
    annotator = getattr(user, "annotator", None)  # RelatedObjectDoesNotExist is an AttributeError
    if user.is_staff or user.is_superuser or annotator is None:
        raise ValidationFailed(f"the account “{user.get_username()}” exists and is not an annotator.")
    if user.email.casefold() != spec.email.casefold():
        raise ValidationFailed(
            f"annotator “{user.get_username()}” exists with another e-mail address; change it on their page."
        )
    have = {skill.language.code: skill.level for skill in annotator.skills.all()}
    if all(have.get(code) == level for code, level in spec.skills) and (
        annotator.reads_english == spec.reads_english
    ):
        return "unchanged"
    return "updated"


def annotator_save(*, spec: AnnotatorSpec, languages: dict[str, Language]) -> tuple[Annotator, bool]:
    """Create the account, profile and skills of ``spec``, or bring an existing annotator's
    skills and "reads English" up to it (skills are added or their level changed, never
    removed). Returns (annotator, created). The caller has run the checks and holds the
    transaction."""
    User = get_user_model()
    user = User.objects.filter(username=spec.username).first()
    created = user is None
    if created:
        user = User(
            username=spec.username, email=spec.email, is_active=True, is_staff=False, is_superuser=False
        )
        user.set_unusable_password()
        user.save()
        annotator = Annotator.objects.create(user=user, reads_english=spec.reads_english)
    else:
        annotator = user.annotator
        if annotator.reads_english != spec.reads_english:
            annotator.reads_english = spec.reads_english
            annotator.save(update_fields=["reads_english", "updated_at"])
    have = {skill.language.code: skill for skill in annotator.skills.select_related("language")}
    for code, level in spec.skills:
        skill = have.get(code)
        if skill is None:
            AnnotatorSkill.objects.create(annotator=annotator, language=languages[code], level=level)
        elif skill.level != level:
            skill.level = level
            skill.save(update_fields=["level", "updated_at"])
    return annotator, created


def annotator_create(
    *, username: str, email: str, skills: tuple[tuple[str, str], ...] | list, reads_english: bool = True
) -> Annotator:
    """Create a new annotator: account (not staff, no usable password), profile and skills.

    Runs in one transaction. Not idempotent by design: an existing username is refused
    (ValidationFailed), as are a bad username or e-mail address, an unknown language or none.
    """
    spec = AnnotatorSpec(
        username=(username or "").strip(),
        email=(email or "").strip(),
        skills=tuple((code.strip(), level) for code, level in skills),
        reads_english=reads_english,
    )
    languages = {lang.code: lang for lang in Language.objects.filter(code__in=[c for c, _ in spec.skills])}
    try:
        annotator_spec_check(spec, languages=languages)
    except ValidationFailed as exc:
        raise ValidationFailed(exc.message[:1].upper() + exc.message[1:]) from None
    with transaction.atomic():
        if get_user_model().objects.filter(username=spec.username).exists():
            raise ValidationFailed(f"The username “{spec.username}” is taken.")
        annotator, _ = annotator_save(spec=spec, languages=languages)
        return annotator


def password_set_path(user) -> str:
    """The path of ``user``'s one-time set-password page (Django's password-reset token: it
    expires after PASSWORD_RESET_TIMEOUT and is void once the password has been set)."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("password_set", args=[uid, default_token_generator.make_token(user)])


def annotator_interface_language_set(*, annotator: Annotator, language: str) -> Annotator:
    """Store the annotator's choice of interface language ("" for the pages' defaults) on their
    profile, so that it follows them to every device. Only that field is written; idempotent.
    Raises ``ValidationFailed`` for a language the interface does not have (nothing changed)."""
    codes = {code for code, _name in interface_languages()}
    if language and language not in codes:
        raise ValidationFailed(
            gettext("This language is not available for the interface: “%(language)s”.")
            % {"language": language}
        )
    with transaction.atomic():
        Annotator.objects.filter(pk=annotator.pk).update(interface_language=language)
    annotator.interface_language = language
    return annotator
