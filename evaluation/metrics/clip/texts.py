"""CLIP text embeddings: each distinct text once, batched by length, padded only as far as needed.

Why it is fast, and why it stays exact
--------------------------------------
The text towers cost in proportion to the token positions they process, and open_clip's
tokenizers pad every text to the full context (77). A caption is about 20 tokens, so most of a
fixed-context batch is padding. Here the texts are tokenised with the model's own tokenizer
(same cleaning and truncation as open_clip), sorted by length and cut into batches of similar
length (:func:`length_batches`: the cut that pads least, counting what each extra batch costs),
and each batch keeps only the columns up to its longest text. That is exact, not an
approximation, for the towers where padding cannot reach the output:

- a Hugging Face text tower (``open_clip.hf_model.HFTextEncoder``: the default
  xlm-roberta-base-ViT-B-32) builds its attention mask from ``pad_token_id``, XLM-R numbers
  positions from the same mask, and the mean / CLS poolers read only unmasked positions: a
  pad column changes nothing, so dropping trailing ones changes nothing;
- open_clip's own CLIP text tower (causal mask, pooled at the EOT token, or at the first
  token): a position only sees the positions before it, so everything after the pooled token
  is dead weight. The batch keeps the columns up to its last pooled position, with the
  positional embedding and causal mask sliced to match.

Any other tower (no causal mask, "last" pooling, an appended CLS token) is fed the full
context, as open_clip would. :func:`text_trimming` says which case a model is.

The results equal open_clip's fixed-context ``encode_text`` to float rounding (the tests hold
them to 1e-5; the benchmark measures about 1e-7).

Each distinct text (after the prompt prefix) is embedded once per call; with a ``cache``
(:class:`~.embedding.ImageEmbeddingCache`-shaped: ``get_many``/``put_many`` per model key and
sha256) it is embedded once per model, ever: references shared by several systems, or a second
run, or a second worker, read the stored vector.

torch is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from .device import TEXT_BATCH_SIZES, text_batch_size
from .embedding import ImageEmbeddingCache, apply_prompt_prefix
from .hashing import content_hash
from .runtime import inference, inference_model

if TYPE_CHECKING:
    from .loading import LoadedClip

__all__ = [
    "BATCH_OVERHEAD_TOKENS",
    "TEXT_BATCH_SIZE",
    "embed_texts",
    "length_batches",
    "text_hash",
    "text_trimming",
]

TEXT_BATCH_SIZE = TEXT_BATCH_SIZES["cpu"]  # the CPU default; see .device.text_batch_size
# What one forward pass costs beyond its token positions, in token positions: layer launches, small
# matrices the CPU multiplies less efficiently. Measured on the default architecture (2 CPU cores):
# about 50 ms per batch against 1.1 ms per token position, i.e. about 40 positions.
BATCH_OVERHEAD_TOKENS = 40
# Texts tokenised at a time by one tokenizer call.
_TOKENIZE_BLOCK = 2048
# Batches per slice: a slice is tokenised (on a thread, ahead), embedded, fetched and, with a cache,
# stored as one unit; its full-context token matrix (77 int64 per text) bounds the memory.
_SLICE_BATCHES = 16
_TRIMMED_HF_POOLERS = ("MeanPooler", "ClsPooler", "ClsLastHiddenStatePooler")
_TRIMMED_CLIP_POOLS = ("argmax", "eos", "first")


def text_hash(text: str) -> str:
    """The cache key of a text: sha256 of its UTF-8 bytes (the text as embedded, prefix included)."""
    return content_hash(text.encode("utf-8"))


def text_trimming(model) -> str:
    """``"hf-mask"``, ``"clip-causal"`` or ``"full"``: how far a batch of texts can be trimmed (module doc)."""
    text = getattr(model, "text", None)
    if type(text).__name__ == "HFTextEncoder":
        pooler = type(getattr(text, "pooler", None)).__name__
        pad = getattr(getattr(text, "config", None), "pad_token_id", None)
        return "hf-mask" if pooler in _TRIMMED_HF_POOLERS and pad is not None else "full"
    if (
        text is None
        and getattr(model, "attn_mask", None) is not None
        and getattr(model, "text_pool_type", None) in _TRIMMED_CLIP_POOLS
        and hasattr(model, "positional_embedding")
    ):
        return "clip-causal"
    return "full"


def _lengths(model, trimming: str, tokens):
    """Per row, how many leading columns the tower's output depends on."""
    import torch

    n, context = tokens.shape
    if trimming == "hf-mask":
        real = tokens != model.text.config.pad_token_id
        # Index of the last real token + 1 (a row of pads only: 1 column, as the mask is all zero).
        last = torch.where(real, torch.arange(context), torch.full_like(tokens, -1)).max(dim=1).values
        return (last + 1).clamp(min=1)
    if trimming == "clip-causal":
        pool = model.text_pool_type
        if pool == "first":
            return torch.ones(n, dtype=torch.long)
        if pool == "argmax":
            return tokens.argmax(dim=-1) + 1
        return (tokens == model.text_eos_id).int().argmax(dim=-1) + 1
    return torch.full((n,), context, dtype=torch.long)


def _encode_clip_causal(model, tokens):
    """open_clip's ``CLIP.encode_text`` on ``tokens`` narrower than the context (module doc)."""
    from open_clip.transformer import text_global_pool

    width = tokens.shape[1]
    cast_dtype = model.transformer.get_cast_dtype()
    x = model.token_embedding(tokens).to(cast_dtype)
    x = x + model.positional_embedding[:width].to(cast_dtype)
    x = model.transformer(x, attn_mask=model.attn_mask[:width, :width])
    x = model.ln_final(x)
    x = text_global_pool(x, tokens, model.text_pool_type, eos_token_id=getattr(model, "text_eos_id", None))
    if model.text_projection is not None:
        import torch.nn as nn

        x = (
            model.text_projection(x)
            if isinstance(model.text_projection, nn.Linear)
            else x @ model.text_projection
        )
    return x


def _tokenized(loaded: LoadedClip, texts: Sequence[str], trimming: str):
    """The full-context token matrix of ``texts`` and, per row, the columns its embedding depends on.

    Past its length a row holds only the tokenizer's padding, which the trimmed towers never read
    (module doc), so any batch may take the leading columns of its rows as they are."""
    import torch

    blocks, lengths = [], []
    for start in range(0, len(texts), _TOKENIZE_BLOCK):
        tokens = loaded.tokenizer(list(texts[start : start + _TOKENIZE_BLOCK]))
        lengths.append(_lengths(loaded.model, trimming, tokens).numpy())
        blocks.append(tokens)
    return torch.cat(blocks), np.concatenate(lengths).astype(np.int64)


def length_batches(
    lengths: np.ndarray, max_texts: int, overhead: int = BATCH_OVERHEAD_TOKENS
) -> list[tuple[int, int]]:
    """Cut texts sorted by length, longest first, into consecutive batches ``[start, end)``.

    A batch is padded to its first (longest) text, so it costs ``overhead + size * width`` token
    positions; the cut minimises the total over all batches, with at most ``max_texts`` per batch
    (dynamic programming over the sorted order, exact). Fixed-size batches waste most where lengths
    spread out, in the long tail and in small calls (a chunk's few new captions once the references
    are cached): there a batch of 32 captions would be padded to its longest, often twice the mean.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(lengths)
    if n and np.any(np.diff(lengths) > 0):
        raise ValueError("lengths must be sorted longest first")
    best = np.zeros(n + 1, dtype=np.int64)  # best[j]: least cost of the first j texts
    cut = np.zeros(n + 1, dtype=np.int64)  # cut[j]: where the last batch of that best cut starts
    for end in range(1, n + 1):
        starts = np.arange(max(0, end - max_texts), end)
        costs = best[starts] + overhead + (end - starts) * lengths[starts]
        i = int(np.argmin(costs))
        best[end], cut[end] = costs[i], starts[i]
    batches, end = [], n
    while end > 0:
        batches.append((int(cut[end]), end))
        end = int(cut[end])
    return batches[::-1]


def _encode_text(model, tokens):
    return model.encode_text(tokens)


def _padded_features(loaded: LoadedClip, model, ordered, widths: np.ndarray, batch_size: int, trimming: str):
    """The features of ``ordered`` (longest first), a batch at a time, each cut to its width; with
    ``loaded.text_compile`` the pass is compiled and a batch's rows rounded up (:mod:`.compiled`)."""
    from .compiled import compiled, compiled_rows, pad_rows

    forward = compiled(
        model, _encode_clip_causal if trimming == "clip-causal" else _encode_text, loaded.text_compile
    )
    for start, end in length_batches(widths, batch_size):
        batch = ordered[start:end, : int(widths[start])]
        if loaded.text_compile != "off":
            batch = pad_rows(batch, compiled_rows(end - start, batch_size))
        yield forward(model, batch.contiguous())[: end - start]


def _embed_tokens(
    loaded: LoadedClip, tokens, lengths: np.ndarray, batch_size: int, trimming: str
) -> np.ndarray:
    """Embeddings of the token rows, batched by length (:func:`length_batches`), in row order.

    The rows are sorted longest first and sent to the device in one copy (pinned, non-blocking on
    CUDA); each batch is a slice of them cut to its width (on CUDA rounded up to a width bucket,
    :mod:`.device`), or, where :func:`.packing.use_packing` says so, the texts are packed without
    padding (:mod:`.packing`); the normalised features stay on the device until the end, where they are
    fetched in one copy: one host synchronisation per call, not one per batch.
    """
    import torch
    import torch.nn.functional as F

    from .device import attention_backends, bucket_widths, device_type, width_buckets
    from .packing import packed_features, packing_kind, use_packing

    device = loaded.device
    kind = packing_kind(loaded.model, trimming) if loaded.text_packing != "off" else None
    packed = use_packing(loaded.text_packing, device, kind, lengths, batch_size, tokens.shape[1])
    buckets = None if packed else width_buckets(device)
    widths = bucket_widths(lengths, buckets, tokens.shape[1]) if buckets else lengths
    # Longest first: the first batch is the largest, so memory peaks at once rather than at the end.
    order = np.argsort(-widths, kind="stable")
    widths = widths[order]
    ordered = tokens[torch.from_numpy(order)]
    if device_type(device) == "cuda":
        ordered = ordered.pin_memory().to(device, non_blocking=True)
    model = inference_model(loaded)
    with inference(loaded), attention_backends(device):
        if packed:
            pieces = [
                packed_features(
                    model, ordered, widths, batch_size, compile_mode=loaded.text_compile, kind=kind
                )
            ]
        else:
            pieces = _padded_features(loaded, model, ordered, widths, batch_size, trimming)
        fetched = torch.cat([F.normalize(p.float(), dim=-1) for p in pieces])
        fetched = fetched.cpu().numpy().astype(np.float32, copy=False)
    out = np.empty_like(fetched)
    out[order] = fetched
    return out


def _compute_slices(loaded: LoadedClip, texts: Sequence[str], batch_size: int):
    """``(start, embeddings)`` per slice of ``texts`` (all distinct) of ``batch_size * _SLICE_BATCHES``
    texts, each slice batched by length within itself. The next slice is tokenised on a thread while
    this one is embedded, so tokenising overlaps the forward passes."""
    trimming = text_trimming(loaded.model)
    step = batch_size * _SLICE_BATCHES
    starts = list(range(0, len(texts), step))
    if len(starts) <= 1:
        for start in starts:
            tokens, lengths = _tokenized(loaded, texts[start : start + step], trimming)
            yield start, _embed_tokens(loaded, tokens, lengths, batch_size, trimming)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="clip-tokenize") as pool:

        def submit(start: int):
            return pool.submit(_tokenized, loaded, texts[start : start + step], trimming)

        upcoming = submit(starts[0])
        for i, start in enumerate(starts):
            tokens, lengths = upcoming.result()
            if i + 1 < len(starts):
                upcoming = submit(starts[i + 1])
            yield start, _embed_tokens(loaded, tokens, lengths, batch_size, trimming)


def _compute(loaded: LoadedClip, texts: Sequence[str], batch_size: int) -> np.ndarray:
    """Embeddings of ``texts`` (all distinct), in their order; the batching of the module doc."""
    out = np.empty((len(texts), loaded.embed_dim), dtype=np.float32)
    for start, vectors in _compute_slices(loaded, texts, batch_size):
        out[start : start + len(vectors)] = vectors
    return out


def embed_texts(
    loaded: LoadedClip,
    texts: Sequence[str],
    prompt_prefix: str = "",
    batch_size: int | None = None,
    *,
    cache: ImageEmbeddingCache | None = None,
) -> np.ndarray:
    """Embed texts, each prefixed with ``prompt_prefix`` (see :func:`apply_prompt_prefix`).

    Each distinct text is embedded once; with ``cache`` only the texts it lacks are, under
    ``loaded.embedding_key`` and :func:`text_hash`, stored one batch at a time (an interrupted
    call keeps what it computed). Texts longer than the model's context are truncated by its
    tokenizer. ``batch_size``: texts per forward pass; None (or 0) takes the device's default
    (:func:`.device.text_batch_size`: 64 on a CPU, 1024 on CUDA). Returns ``(len(texts), d)``
    L2-normalised float32 in input order. Raises ValueError for a negative batch size.
    """
    batch_size = text_batch_size(loaded.device, batch_size)
    prefixed = [apply_prompt_prefix(t, prompt_prefix) for t in texts]
    if not prefixed:
        return np.zeros((0, loaded.embed_dim), dtype=np.float32)
    distinct = list(dict.fromkeys(prefixed))
    found: dict[str, np.ndarray] = {}
    if cache is None:
        found = dict(zip(distinct, _compute(loaded, distinct, batch_size)))
    else:
        hashes = {text: text_hash(text) for text in distinct}
        stored = cache.get_many(loaded.embedding_key, list(hashes.values()))
        for text, h in hashes.items():
            vector = stored.get(h)
            if vector is not None and np.shape(vector) == (loaded.embed_dim,):
                found[text] = np.asarray(vector, dtype=np.float32)
        missing = [text for text in distinct if text not in found]
        # Stored a slice at a time, so that an interrupted call loses at most one slice of work.
        for start, vectors in _compute_slices(loaded, missing, batch_size):
            part = missing[start : start + len(vectors)]
            cache.put_many(loaded.embedding_key, {hashes[t]: v for t, v in zip(part, vectors)})
            found.update(zip(part, vectors))
    return np.stack([found[text] for text in prefixed])
