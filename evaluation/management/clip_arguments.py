"""The options every CLIP check command takes for its model and output (``clip_retrieval``,
``clip_zeroshot``, ``clip_foils``), declared once so their names and help read alike."""

from __future__ import annotations


def add_clip_check_arguments(parser) -> None:
    parser.add_argument("--languages", nargs="+", metavar="CODE", help="only these languages")
    parser.add_argument("--model", help="open_clip model name (default: the CLIP_MODEL setting)")
    parser.add_argument(
        "--pretrained", help="pretrained tag (default: CLIP_PRETRAINED for the default model)"
    )
    parser.add_argument("--checkpoint", help="a checkpoint file instead of a pretrained tag")
    parser.add_argument("--name", default="", help="a name for the check")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument(
        "--queue", action="store_true", help="hand the check to the Celery workers and return"
    )


def clip_check_options(options: dict) -> dict:
    """The plan's keyword arguments among the options of :func:`add_clip_check_arguments`."""
    return {name: options[name] for name in ("languages", "name", "model", "pretrained", "checkpoint")}
