"""Result panels on a campaign's admin page, contributed by other apps.

``annotation`` owns the campaign admin but may not import ``evaluation`` (the numbers live there).
Instead of ``evaluation`` unregistering and re-registering the campaign admin (which made the admin
depend on the order of ``INSTALLED_APPS``), an app registers a panel here from its
``AppConfig.ready()``: which campaign kinds it applies to, the template that draws it, and a
function from the campaign to the template's ``panel`` context (or None to show nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ResultPanel:
    name: str
    kinds: frozenset[str]
    template: str
    build: Callable[[Any], Any]


_PANELS: dict[str, ResultPanel] = {}


def campaign_panel_register(*, name: str, kinds: Iterable[str], template: str, build: Callable) -> None:
    """Add (or replace, by ``name``: ``ready()`` may run twice in tests) a panel. Idempotent."""
    _PANELS[name] = ResultPanel(name=name, kinds=frozenset(kinds), template=template, build=build)


def campaign_panels(campaign) -> list[dict[str, Any]]:
    """The panels for ``campaign``'s page, in registration order: ``{"template", "panel"}`` each."""
    out = []
    for panel in _PANELS.values():
        if campaign.kind in panel.kinds:
            context = panel.build(campaign)
            if context is not None:
                out.append({"name": panel.name, "template": panel.template, "panel": context})
    return out
