"""The interface language of every request (annotation.interface decides; this applies it)."""

from __future__ import annotations

from django.conf import settings
from django.utils import translation
from django.utils.cache import patch_vary_headers

from annotation.interface import language_for, language_from_page
from core.access import can_read_research, can_use_admin


class InterfaceLanguageMiddleware:
    """Activates the request's interface language: an annotator's own choice or their default
    (batch screens switch to their campaign's language in the view); for the annotator JSON
    endpoints without a choice, the language of the page that calls them; for visitors not
    logged in (and accounts with no role yet), the selector's cookie or the browser's languages;
    English for managers and researchers."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        language = self.language(request)
        translation.activate(language)
        request.LANGUAGE_CODE = language
        response = self.get_response(request)
        language = translation.get_language()
        patch_vary_headers(response, ("Accept-Language", "Cookie"))
        response.headers.setdefault("Content-Language", language)
        return response

    def language(self, request) -> str:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return translation.get_language_from_request(request)
        annotator = getattr(user, "annotator", None) if hasattr(user, "annotator") else None
        if annotator is None:
            # Managers and researchers work in English (the admin and the research pages are not
            # translated); an account with no role yet reads its pages like a visitor.
            if can_use_admin(user) or can_read_research(user):
                return settings.LANGUAGE_CODE
            return translation.get_language_from_request(request)
        request.interface_annotator = annotator
        if not annotator.interface_language and request.headers.get("Accept", "").startswith(
            "application/json"
        ):
            page = language_from_page(request)
            if page:
                return page
        return language_for(annotator, request=request)
