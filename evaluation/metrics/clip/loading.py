"""Load an open_clip model, its image transform and tokenizer for scoring.

Weights come either from an open_clip pretrained tag (downloaded through
open_clip's own ``download_pretrained``, i.e. the Hugging Face cache under
``HF_HOME``) or from a local checkpoint file. Both end in the same call,
``open_clip.create_model_and_transforms(model_name, pretrained=<local file>)``:
a tag is resolved to its cached file first, and its preprocessing (mean, std,
interpolation, resize mode, QuickGELU) is passed along explicitly, which is
exactly what open_clip does for a tag. Resolving first means one hub round-trip
and lets a single :class:`ClipUnavailable` name everything that is missing.

No weights at all is an error, never a silent random initialisation: scores from
random weights look like numbers but mean nothing.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .compat import ensure_torchvision_loadable
from .compiled import compile_choice_check
from .hashing import content_hash
from .packing import packing_choice_check
from .pixels import image_pipeline_check
from .runtime import autocast_choice_check

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_PRETRAINED",
    "ClipUnavailable",
    "LoadedClip",
    "load_clip",
    "register_model_config",
]

DEFAULT_MODEL = "xlm-roberta-base-ViT-B-32"
DEFAULT_PRETRAINED = "laion5b_s13b_b90k"

_HOW_TO_PROVIDE_WEIGHTS = (
    "set CLIP_CHECKPOINT to a local .pt/.bin/.safetensors file with these weights, or download them once "
    "where there is network (open_clip.create_model_and_transforms(model, pretrained=tag)) and copy the "
    "Hugging Face cache into HF_HOME here; without network, set HF_HUB_OFFLINE=1 so this fails fast"
)


class ClipUnavailable(RuntimeError):
    """The CLIP model cannot be loaded here; the message says what is missing and how to provide it."""


@dataclass(frozen=True, eq=False)
class LoadedClip:
    """A ready-to-use CLIP model.

    ``model_id`` identifies the weights *and* image preprocessing: ``"<model>:<tag>"`` for tag
    weights, ``"<model>:sha256-<hex>"`` for a checkpoint file, ``"<model>:<tag>:sha256-<hex>"``
    for a checkpoint file of a tag. ``autocast`` (``""``, ``"bf16"``, ``"fp16"``; see
    :mod:`.runtime`) is the precision the forward passes run in; :meth:`with_autocast` gives the
    same model in another precision. ``image_pipeline`` (``"pil"``, ``"tensor"``; see :mod:`.pixels`)
    is how image pixels are made; :meth:`with_image_pipeline` switches it. Cached embeddings are keyed by :attr:`embedding_key`.
    """

    model: Any  # open_clip CLIP / CustomTextCLIP, in eval mode, on ``device``
    preprocess: Callable[[Any], Any]  # PIL.Image -> float tensor (3, H, W)
    tokenizer: Callable[[list[str]], Any]  # list[str] -> LongTensor (n, context_length)
    device: str
    model_id: str
    model_name: str
    pretrained: str | None
    checkpoint_path: str | None
    embed_dim: int
    autocast: str = ""
    image_pipeline: str = "pil"  # "pil" or "tensor": how image pixels are made (see .pixels)
    text_packing: str = "auto"  # "auto", "on", "off": texts packed without padding (see .packing)
    text_compile: str = "off"  # "off", "compile", "reduce-overhead": the text pass compiled (see .compiled)

    @property
    def embedding_key(self) -> str:
        """The key cached embeddings of this model are stored under: ``model_id``, plus the precision
        when it is not fp32 (fp32 keeps the plain ``model_id``, as before autocast existed)."""
        return f"{self.model_id}|autocast={self.autocast}" if self.autocast else self.model_id

    def with_autocast(self, autocast: str) -> LoadedClip:
        """This model (the same weights in memory) computing in ``autocast``; ValueError for an unknown one."""
        return dataclasses.replace(self, autocast=autocast_choice_check(autocast))

    def with_image_pipeline(self, pipeline: str) -> LoadedClip:
        """This model making its image pixels by ``pipeline`` (``"pil"`` or ``"tensor"``, see :mod:`.pixels`);
        ValueError for another."""
        return dataclasses.replace(self, image_pipeline=image_pipeline_check(pipeline))

    def with_text_pass(self, *, packing: str | None = None, compile: str | None = None) -> LoadedClip:
        """This model embedding texts packed or not (``packing``: :mod:`.packing`) and compiled or not
        (``compile``: :mod:`.compiled`); None keeps the current choice. Neither changes the numbers
        beyond float rounding, so neither enters :attr:`embedding_key`. ValueError for an unknown choice."""
        return dataclasses.replace(
            self,
            text_packing=self.text_packing if packing is None else packing_choice_check(packing),
            text_compile=self.text_compile if compile is None else compile_choice_check(compile),
        )


def _import_open_clip():
    try:
        ensure_torchvision_loadable()
        import open_clip
    except (ImportError, RuntimeError) as exc:
        raise ClipUnavailable(
            f"open_clip cannot be imported ({exc}); install open_clip_torch and a torchvision build "
            "that matches the installed torch"
        ) from exc
    return open_clip


# --- custom model configs -------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_config_lock = threading.Lock()
_config_dir: Path | None = None
_registered: dict[str, dict] = {}


def _private_config_dir() -> Path:
    global _config_dir
    if _config_dir is None:
        _config_dir = Path(tempfile.mkdtemp(prefix="clip-model-configs-"))
        atexit.register(shutil.rmtree, _config_dir, ignore_errors=True)
    return _config_dir


def register_model_config(name: str, config: Mapping[str, Any] | str | os.PathLike[str]) -> None:
    """Make an open_clip architecture config (a dict, or a path to its JSON file) loadable as ``name``.

    The config goes through open_clip's own registry (``open_clip.add_model_config``), so
    the model is then built by the same code as the built-in ones. Idempotent for an identical
    config. Raises ValueError for a malformed config, an unsafe name, or an attempt to
    redefine a built-in or already registered model with a different config.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"model config name {name!r} must match {_NAME.pattern}")
    if not isinstance(config, Mapping):
        config = json.loads(Path(config).read_text(encoding="utf-8"))
    config = json.loads(json.dumps(config))  # plain, detached copy
    missing = [k for k in ("embed_dim", "vision_cfg", "text_cfg") if k not in config]
    if missing:
        raise ValueError(f"model config {name!r} lacks {', '.join(missing)}")
    open_clip = _import_open_clip()
    with _config_lock:
        if _registered.get(name) == config:
            return
        existing = open_clip.get_model_config(name)
        if existing is not None and existing != config:
            raise ValueError(f"model config {name!r} already exists with a different definition")
        path = _private_config_dir() / f"{name}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        open_clip.add_model_config(path)
        _registered[name] = config


# --- weights and tokenizer ------------------------------------------------------------------------

_checkpoint_hashes: dict[tuple[str, int, int], str] = {}


def _checkpoint_sha256(path: str) -> str:
    # Hashing a multi-GB checkpoint takes seconds; remember it while the file is unchanged.
    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_size, stat.st_mtime_ns)
    if key not in _checkpoint_hashes:
        _checkpoint_hashes[key] = content_hash(path)
    return _checkpoint_hashes[key]


def _first_line(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _hub_cache() -> str:
    try:
        from huggingface_hub import constants
    except ImportError:
        return os.environ.get("HF_HOME", "~/.cache/huggingface")
    return str(constants.HF_HUB_CACHE)


def _resolve_tag(open_clip, model_name: str, tag: str) -> tuple[dict, str | None, str | None]:
    """Return (tag config, local weights file or None, problem or None)."""
    from open_clip import pretrained as oc_pretrained

    tag_cfg = oc_pretrained.get_pretrained_cfg(model_name, tag)
    if not tag_cfg:
        known = oc_pretrained.list_pretrained_tags_by_model(model_name)
        problem = (
            f"{tag!r} is not a pretrained tag of {model_name!r} (known tags: {', '.join(known) or 'none'}); "
            "set CLIP_PRETRAINED to one of them, or CLIP_CHECKPOINT to a local weights file"
        )
        return {}, None, problem
    try:
        path = oc_pretrained.download_pretrained(tag_cfg)
    except Exception as exc:
        source = tag_cfg.get("hf_hub") or tag_cfg.get("url") or "?"
        problem = (
            f"weights {model_name}:{tag} (from {source}) are not in the local Hugging Face cache "
            f"({_hub_cache()}, set by HF_HOME) and could not be downloaded "
            f"({_first_line(exc)}); {_HOW_TO_PROVIDE_WEIGHTS}"
        )
        return tag_cfg, None, problem
    if not path or not os.path.isfile(path):
        return tag_cfg, None, f"weights {model_name}:{tag} could not be located; {_HOW_TO_PROVIDE_WEIGHTS}"
    return tag_cfg, path, None


def _load_tokenizer(open_clip, model_name: str, model_cfg: dict) -> tuple[Any, str | None]:
    hf_name = model_cfg.get("text_cfg", {}).get("hf_tokenizer_name")
    try:
        return open_clip.get_tokenizer(model_name), None
    except Exception as exc:
        if hf_name:
            return None, (
                f"the Hugging Face tokenizer {hf_name!r} is not available ({_first_line(exc)}); install "
                f"`transformers` and pre-download the tokenizer into HF_HOME "
                f"(transformers.AutoTokenizer.from_pretrained({hf_name!r}) where there is network, "
                "then copy the cache)"
            )
        return None, f"the tokenizer of {model_name!r} cannot be built ({_first_line(exc)})"


def _default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_clip(
    model_name: str,
    pretrained: str | None = None,
    *,
    checkpoint_path: str | os.PathLike[str] | None = None,
    device: str | None = None,
    model_config: Mapping[str, Any] | None = None,
) -> LoadedClip:
    """Load ``model_name`` with weights from a pretrained tag or a local checkpoint file.

    - ``pretrained``: an open_clip tag (e.g. ``"laion5b_s13b_b90k"``) or a path to a weights file.
    - ``checkpoint_path``: a local weights file; takes precedence over the tag for the weights, while
      the tag (if given) still supplies its image preprocessing.
    - ``model_config``: an architecture dict registered under ``model_name`` first
      (see :func:`register_model_config`).
    - ``device``: defaults to ``"cuda"`` when available, else ``"cpu"``. Always fp32.

    Raises :class:`ClipUnavailable` naming every missing piece (weights, tokenizer files,
    packages) and how to provide it; ValueError for a malformed ``model_config``.
    Loading is not cached here: callers keep the returned object for the life of a worker.
    """
    open_clip = _import_open_clip()
    if model_config is not None:
        register_model_config(model_name, model_config)
    try:
        model_cfg = open_clip.get_model_config(model_name)
    except Exception as exc:  # 'hf-hub:' / 'local-dir:' names fetch or read their config here
        raise ClipUnavailable(
            f"the config of CLIP model {model_name!r} cannot be read: {_first_line(exc)}"
        ) from exc
    if model_cfg is None:
        raise ClipUnavailable(
            f"unknown CLIP model {model_name!r}: set CLIP_MODEL to one of open_clip.list_models() "
            "or register its architecture config"
        )

    problems: list[str] = []
    tag_cfg: dict = {}
    weights: str | None = None
    tag = pretrained
    if tag and checkpoint_path is None and os.path.isfile(tag) and not _is_tag(model_name, tag):
        checkpoint_path, tag = tag, None

    if checkpoint_path is not None:
        checkpoint_path = os.fspath(checkpoint_path)
        if not os.path.isfile(checkpoint_path):
            problems.append(
                f"the checkpoint file {checkpoint_path!r} does not exist; set CLIP_CHECKPOINT to an "
                "existing local .pt/.bin/.safetensors file (or install the model files there)"
            )
        else:
            weights = checkpoint_path
        if tag:
            from open_clip import pretrained as oc_pretrained

            tag_cfg = oc_pretrained.get_pretrained_cfg(model_name, tag)
            if not tag_cfg:
                problems.append(
                    f"{tag!r} is not a pretrained tag of {model_name!r}, so its image preprocessing is "
                    "unknown; leave CLIP_PRETRAINED empty for a checkpoint of another origin"
                )
    elif tag:
        tag_cfg, weights, problem = _resolve_tag(open_clip, model_name, tag)
        if problem:
            problems.append(problem)
    else:
        problems.append(
            "no weights were given; set CLIP_PRETRAINED to a pretrained tag or CLIP_CHECKPOINT to a local "
            "weights file (random weights would give meaningless scores)"
        )

    tokenizer, problem = _load_tokenizer(open_clip, model_name, model_cfg)
    if problem:
        problems.append(problem)
    if problems:
        raise ClipUnavailable(f"CLIP model {model_name!r} cannot be loaded: " + "; and ".join(problems))

    device = device or _default_device()
    try:
        model, _, preprocess = open_clip.create_model_and_transforms(
            model_name,
            pretrained=weights,
            device=device,
            precision="fp32",
            force_quick_gelu=bool(tag_cfg.get("quick_gelu", False)),
            image_mean=tag_cfg.get("mean"),
            image_std=tag_cfg.get("std"),
            image_interpolation=tag_cfg.get("interpolation"),
            image_resize_mode=tag_cfg.get("resize_mode"),
        )
    except Exception as exc:
        raise ClipUnavailable(
            f"CLIP model {model_name!r} could not be built from {weights!r}: {_first_line(exc)}. "
            "Check that the weights belong to this architecture; a model with a Hugging Face text tower "
            "also needs `transformers` and that tower's config files in HF_HOME"
        ) from exc
    model.eval()

    if checkpoint_path is not None:
        digest = f"sha256-{_checkpoint_sha256(checkpoint_path)}"
        model_id = f"{model_name}:{tag}:{digest}" if tag else f"{model_name}:{digest}"
    else:
        model_id = f"{model_name}:{tag}"
    return LoadedClip(
        model=model,
        preprocess=preprocess,
        tokenizer=tokenizer,
        device=str(device),
        model_id=model_id,
        model_name=model_name,
        pretrained=tag,
        checkpoint_path=checkpoint_path,
        embed_dim=int(model_cfg["embed_dim"]),
    )


def _is_tag(model_name: str, value: str) -> bool:
    from open_clip import pretrained as oc_pretrained

    return oc_pretrained.is_pretrained_cfg(model_name, value)
