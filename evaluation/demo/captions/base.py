"""The demo's grades, simulated systems and the record of one photograph in one language (plain data)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GRADES", "SIM_SYSTEMS", "PhotoCaptions", "SimSystem", "photo"]

GRADES: dict[str, str] = {
    "A": "accurate and specific",
    "B": "accurate but brief",
    "C": "vague",
    "D": "specific, with a wrong detail",
    "E": "wrong (describes another picture)",
}


@dataclass(frozen=True)
class SimSystem:
    name: str
    description: str


SIM_SYSTEMS: tuple[SimSystem, ...] = (
    SimSystem(
        "sim-a",
        "Simulated system for the demo: detailed, accurate captions (some wrong details in Japanese).",
    ),
    SimSystem(
        "sim-b", "Simulated system for the demo: short, correct captions (poor and often wrong in Arabic)."
    ),
    SimSystem("sim-c", "Simulated system for the demo: vague captions that say little."),
    SimSystem("sim-d", "Simulated system for the demo: fluent but invents details (good in Arabic)."),
)


@dataclass(frozen=True)
class PhotoCaptions:
    """One photograph in one language: two references, and per system (grade, caption)."""

    references: tuple[str, str]
    systems: dict[str, tuple[str, str]]


def photo(
    references: tuple[str, str],
    a: tuple[str, str],
    b: tuple[str, str],
    c: tuple[str, str],
    d: tuple[str, str],
):
    return PhotoCaptions(references, {"sim-a": a, "sim-b": b, "sim-c": c, "sim-d": d})
