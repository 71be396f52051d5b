"""The tensor image pipeline: JPEGs decoded on the GPU, resize / crop / normalise as tensor ops.

Two ways pixels reach the image tower (:data:`IMAGE_PIPELINES`):

``"pil"`` (the default, and the only one before)
    Each image is decoded by PIL and preprocessed by open_clip's own transform (PIL resize, crop,
    ``ToTensor``, normalise), on CPU threads (:mod:`.embedding`).
``"tensor"``
    JPEG files are decoded by the GPU's JPEG decoder, a batch at a time
    (``torchvision.io.decode_jpeg(list, device="cuda")``); anything else (PNG, WebP, a PIL image), and
    every image on a host without a GPU decoder, is decoded by PIL on the loading threads. The decoded
    ``uint8`` pixels are then resized, centre-cropped and normalised as tensor ops on the model's
    device (:func:`preprocess_tensor`), with the sizes, interpolation, mean and std read from
    open_clip's transform (:func:`tensor_preprocess_spec`). The resize is torchvision's antialiased
    tensor resize, which follows PIL's filter and, on ``uint8`` input, rounds back to ``uint8`` as
    PIL does; the result is not bit-identical to PIL's (``docs/clip-on-gpu.md`` gives the measured
    difference), so image embeddings of this pipeline are cached under their own key
    (:func:`.embedding.embedding_cache_key`), never mixed with PIL ones.

The EXIF orientation setting applies to both decoders: the GPU decoder ignores the tag (torchvision
applies ``apply_exif_orientation`` on the CPU only), so the loading thread reads the tag from the file's
header and the decoded tensor is flipped or rotated as ``PIL.ImageOps.exif_transpose`` would
(:func:`exif_transpose_tensor`).
torch and torchvision are imported inside the functions.
"""

from __future__ import annotations

import io
import os
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from .choices import choice_check

__all__ = [
    "DEFAULT_IMAGE_PIPELINE",
    "IMAGE_PIPELINES",
    "TensorPreprocess",
    "exif_orientation",
    "exif_transpose_tensor",
    "gpu_jpeg_decoding",
    "image_pipeline_check",
    "is_jpeg",
    "preprocess_tensor",
    "tensor_preprocess_spec",
]

IMAGE_PIPELINES = ("pil", "tensor")
DEFAULT_IMAGE_PIPELINE = "pil"
_JPEG_MAGIC = b"\xff\xd8\xff"


def image_pipeline_check(pipeline: object) -> str:
    """``pipeline`` if it is ``"pil"`` or ``"tensor"``; ValueError naming the choices otherwise."""
    return choice_check(
        pipeline,
        IMAGE_PIPELINES,
        "image pipeline",
        "pil (open_clip's PIL preprocessing) or tensor (JPEGs decoded on the GPU, resize and crop as tensor ops)",
    )


@dataclass(frozen=True)
class TensorPreprocess:
    """open_clip's eval transform as tensor-op parameters."""

    resize: tuple[int, ...]  # torchvision Resize size: (shortest side,) or (height, width)
    interpolation: str  # torchvision InterpolationMode value: "bicubic", "bilinear", ...
    crop: tuple[int, int] | None  # (height, width) of the centre crop, or None
    mean: tuple[float, float, float]
    std: tuple[float, float, float]


def tensor_preprocess_spec(preprocess: Any) -> TensorPreprocess | None:
    """The tensor form of an open_clip eval transform (``Resize``, optional ``CenterCrop``, RGB conversion,
    ``ToTensor``, ``Normalize``), or None for any transform it cannot reproduce (open_clip's ``longest``
    resize mode with padding, a custom transform): those stay on the PIL pipeline."""
    transforms = getattr(preprocess, "transforms", None)
    if not transforms:
        return None
    resize = interpolation = crop = mean = std = None
    for transform in transforms:
        name = type(transform).__name__
        if name == "Resize" and resize is None and getattr(transform, "max_size", None) is None:
            size = transform.size
            resize = (int(size),) if isinstance(size, int) else tuple(int(s) for s in size)
            interpolation = getattr(transform.interpolation, "value", str(transform.interpolation))
        elif name == "CenterCrop" and resize is not None and crop is None:
            size = transform.size
            crop = (int(size), int(size)) if isinstance(size, int) else (int(size[0]), int(size[-1]))
        elif _passes_through(transform):
            continue
        elif name == "Normalize" and mean is None:
            mean = tuple(float(m) for m in transform.mean)
            std = tuple(float(s) for s in transform.std)
        else:
            return None
    if resize is None or mean is None or len(mean) != 3 or interpolation not in ("bicubic", "bilinear"):
        return None
    return TensorPreprocess(resize=resize, interpolation=interpolation, crop=crop, mean=mean, std=std)


def _passes_through(transform) -> bool:
    """An RGB conversion or ``ToTensor``: done by the tensor pipeline's decoding and scaling."""
    name = type(transform).__name__
    if name == "MaybeConvertMode":
        return getattr(transform, "mode", None) in (None, "RGB")
    return name in ("ToTensor", "MaybeToTensor") or (name == "function" and "rgb" in transform.__name__)


def preprocess_tensor(images: list, spec: TensorPreprocess):
    """``(n, 3, H, W)`` float32 pixels from decoded ``uint8`` ``(3, h, w)`` images (on any device, all on one),
    as open_clip's transform computes them from a PIL image: resize (antialiased, rounded to uint8),
    centre crop, scale to [0, 1], normalise. ValueError for an image that is not 3-channel uint8."""
    import torch
    from torchvision.transforms.v2 import functional as TF

    mode = TF.InterpolationMode(spec.interpolation)
    out = []
    for image in images:
        if image.dtype != torch.uint8 or image.ndim != 3 or image.shape[0] != 3:
            raise ValueError(f"expected a (3, h, w) uint8 image, got {tuple(image.shape)} {image.dtype}")
        x = TF.resize(image, list(spec.resize), interpolation=mode, antialias=True)
        if spec.crop is not None:
            x = TF.center_crop(x, list(spec.crop))
        out.append(x)
    batch = torch.stack(out).float().div_(255)
    mean = torch.tensor(spec.mean, dtype=batch.dtype, device=batch.device).view(1, 3, 1, 1)
    std = torch.tensor(spec.std, dtype=batch.dtype, device=batch.device).view(1, 3, 1, 1)
    return batch.sub_(mean).div_(std)


def is_jpeg(data: bytes) -> bool:
    return data[:3] == _JPEG_MAGIC


def uint8_chw(image) -> Any:
    """A PIL RGB image as a ``(3, h, w)`` uint8 tensor."""
    import torch

    return torch.from_numpy(np.array(image, dtype=np.uint8, copy=True)).permute(2, 0, 1).contiguous()


def encoded_bytes(source) -> bytes | None:
    """The file bytes of a path or bytes source; None for a PIL image (it is already decoded)."""
    if isinstance(source, bytes):
        return source
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            return f.read()
    if isinstance(source, io.IOBase):
        return source.read()
    return None


_gpu_decoder: dict[str, bool] = {}
_gpu_decoder_lock = threading.Lock()


def gpu_jpeg_decoding(device: object) -> bool:
    """Whether ``device`` is a CUDA device and torchvision's GPU JPEG decoder works there (probed once per
    device on a tiny JPEG; a torchvision without its image extension answers False)."""
    from .device import device_type

    if device_type(device) != "cuda":
        return False
    key = str(device)
    with _gpu_decoder_lock:
        if key not in _gpu_decoder:
            _gpu_decoder[key] = _probe_gpu_decoder(device)
        return _gpu_decoder[key]


def _probe_gpu_decoder(device) -> bool:  # pragma: no cover - needs a GPU
    import torch
    from PIL import Image

    from .compat import ensure_torchvision_loadable

    try:
        ensure_torchvision_loadable()
        from torchvision.io import ImageReadMode, decode_jpeg

        buffer = io.BytesIO()
        Image.new("RGB", (16, 16), (200, 100, 50)).save(buffer, "JPEG")
        data = torch.frombuffer(bytearray(buffer.getvalue()), dtype=torch.uint8)
        decoded = decode_jpeg([data], mode=ImageReadMode.RGB, device=device)
        return tuple(decoded[0].shape) == (3, 16, 16)
    except Exception:
        return False


def exif_orientation(data: bytes) -> int:
    """The EXIF orientation tag (1–8) of an encoded image, read from its header without decoding the
    pixels; 1 (as stored) when there is none or it is out of range."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        tag = image.getexif().get(0x0112, 1)
    return tag if isinstance(tag, int) and 1 <= tag <= 8 else 1


def exif_transpose_tensor(image, tag: int):
    """A ``(c, h, w)`` image turned upright by EXIF orientation ``tag``, as ``PIL.ImageOps.exif_transpose``
    turns it (the GPU decoder ignores the tag: ``torchvision.io.decode_jpeg`` applies it on the CPU only)."""
    import torch

    if tag == 2:  # mirrored
        return image.flip(-1)
    if tag == 3:  # upside down
        return image.flip(-2, -1)
    if tag == 4:  # mirrored upside down
        return image.flip(-2)
    if tag == 5:  # transposed (main diagonal)
        return image.transpose(-2, -1)
    if tag == 6:  # turned 90° clockwise to view (PIL: ROTATE_270)
        return torch.rot90(image, -1, dims=(-2, -1))
    if tag == 7:  # transversed (anti-diagonal)
        return image.transpose(-2, -1).flip(-2, -1)
    if tag == 8:  # turned 90° counter-clockwise to view (PIL: ROTATE_90)
        return torch.rot90(image, 1, dims=(-2, -1))
    return image


def decode_jpegs_on_device(data: list[bytes], device) -> list:  # pragma: no cover - GPU
    """Decode JPEG bytes in one batched call of the GPU decoder; ``(3, h, w)`` uint8 tensors on ``device``,
    as stored (the caller applies the EXIF orientation: :func:`exif_transpose_tensor`)."""
    import torch
    from torchvision.io import ImageReadMode, decode_jpeg

    tensors = [torch.frombuffer(bytearray(d), dtype=torch.uint8) for d in data]
    return decode_jpeg(tensors, mode=ImageReadMode.RGB, device=device)
