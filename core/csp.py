"""The Content-Security-Policy as a string, for the environment: markup that slips into a page
(a caption, a name) cannot run a script.

django-csp (``csp.middleware.CSPMiddleware``) sends the header; it takes the policy as a dict of
directives. Operators override the policy with one familiar string in the ``CONTENT_SECURITY_POLICY``
environment variable (``"default-src 'self'; img-src 'self' data:"``), which
:func:`directives_from_string` turns into that dict. Pure: no Django import, so settings can use it.
"""

from __future__ import annotations

# The directives django-csp knows (csp.utils.DEFAULT_DIRECTIVES); it silently drops any other, so an
# operator's typo would quietly loosen the policy: refuse it instead.
KNOWN_DIRECTIVES = frozenset(
    {
        "child-src",
        "connect-src",
        "default-src",
        "script-src",
        "script-src-attr",
        "script-src-elem",
        "object-src",
        "style-src",
        "style-src-attr",
        "style-src-elem",
        "font-src",
        "frame-src",
        "img-src",
        "manifest-src",
        "media-src",
        "base-uri",
        "sandbox",
        "form-action",
        "frame-ancestors",
        "report-uri",
        "report-to",
        "require-trusted-types-for",
        "trusted-types",
        "worker-src",
        "upgrade-insecure-requests",
    }
)
# Directives without a source list: present means on.
FLAG_DIRECTIVES = frozenset({"upgrade-insecure-requests"})


def directives_from_string(policy: str) -> dict[str, list[str] | bool]:
    """``"default-src 'self'; img-src 'self' data:"`` -> ``{"default-src": ["'self'"], "img-src":
    ["'self'", "data:"]}``. Raises ValueError for an unknown or repeated directive, or a source list
    left empty (a typo that would quietly change the policy)."""
    directives: dict[str, list[str] | bool] = {}
    for part in policy.split(";"):
        words = part.split()
        if not words:
            continue
        name, sources = words[0].lower(), words[1:]
        if name not in KNOWN_DIRECTIVES:
            raise ValueError(f"Unknown Content-Security-Policy directive {name!r}.")
        if name in directives:
            raise ValueError(f"The Content-Security-Policy directive {name!r} is given twice.")
        if name in FLAG_DIRECTIVES:
            directives[name] = True
        elif not sources and name != "sandbox":
            raise ValueError(f"The Content-Security-Policy directive {name!r} has no sources.")
        else:
            directives[name] = sources
    if "default-src" not in directives:
        raise ValueError("The Content-Security-Policy needs a default-src directive.")
    return directives
