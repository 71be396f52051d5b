"""The site's URLs plus pages whose views let a domain error through, for tests/core/test_domain_errors.py."""

from django.urls import path

from config.urls import urlpatterns as site_urlpatterns
from core.errors import Conflict, NotFound


def conflicting(request):
    raise Conflict("The campaign “Tiles <b>” is not open.")


def missing(request):
    raise NotFound("No such batch.")


urlpatterns = [
    *site_urlpatterns,
    path("test-conflict/", conflicting),
    path("test-missing/", missing),
]
