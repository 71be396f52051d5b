import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
application = get_wsgi_application()

# Load the caption checks' language identifier as the process starts (about half a second),
# not during the first submits each server process answers (docs/operations.md, "Web tier").
from annotation.caption_checks import language_identifier_load  # noqa: E402

language_identifier_load()
