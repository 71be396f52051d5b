"""The platform's version and the versions of the packages results depend on, recorded with every job."""

from __future__ import annotations

import functools
import sys
import tomllib
from importlib import metadata

from django.conf import settings


@functools.cache
def platform_version() -> str:
    try:
        with open(settings.BASE_DIR / "pyproject.toml", "rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def package_versions() -> dict[str, str]:
    """Versions of what the numbers depend on, read without importing the packages (torch is slow)."""

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return {
        "platform": platform_version(),
        "python": sys.version.split()[0],
        "numpy": version("numpy"),
        "scipy": version("scipy"),
        "torch": version("torch"),
        "open_clip": version("open_clip_torch"),
        "django": version("django"),
        "celery": version("celery"),
    }
