"""A tiny, randomly initialised open_clip model for offline tests.

It is built from an architecture config with open_clip's built-in BPE tokenizer (its
vocabulary ships inside the open_clip package), saved as a plain state_dict and loaded back
through ``load_clip(..., checkpoint_path=...)``: the code path real weights take. Its scores
mean nothing; tests use it only to check that formulas and plumbing agree with an
independent computation.
"""

from __future__ import annotations

from pathlib import Path

TINY_MODEL_NAME = "captioneval-tiny-test-clip"
TINY_IMAGE_SIZE = 64
TINY_CONFIG = {
    "embed_dim": 32,
    "vision_cfg": {
        "image_size": TINY_IMAGE_SIZE,
        "layers": 2,
        "width": 64,
        "head_width": 32,
        "patch_size": 16,
    },
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 64, "heads": 2, "layers": 2},
}


def build_tiny_model(seed: int = 0):
    """A fresh ``open_clip.CLIP`` of :data:`TINY_CONFIG`, initialised under ``torch.manual_seed(seed)``."""
    import torch

    from evaluation.metrics.clip import ensure_torchvision_loadable

    ensure_torchvision_loadable()
    import open_clip

    torch.manual_seed(seed)
    return open_clip.CLIP(**TINY_CONFIG).eval()


def save_tiny_checkpoint(path: str | Path, seed: int = 0) -> Path:
    """Write the tiny model's state_dict to ``path`` (torch.save) and return the path."""
    import torch

    path = Path(path)
    torch.save(build_tiny_model(seed).state_dict(), path)
    return path


# --- a tiny model with a Hugging Face text tower (the default model's kind) ------------------------

TINY_HF_PAD, TINY_HF_BOS, TINY_HF_EOS = 1, 0, 2
TINY_HF_VOCAB = 500


def build_tiny_hf_model(folder: str | Path, seed: int = 0):
    """A fresh ``open_clip.CustomTextCLIP`` with a 2-layer XLM-RoBERTa text tower (mean pooler, pad id 1),
    built offline: the transformers config is written to ``folder`` and nothing is downloaded."""
    import torch
    from transformers import XLMRobertaConfig

    from evaluation.metrics.clip import ensure_torchvision_loadable

    ensure_torchvision_loadable()
    import open_clip

    XLMRobertaConfig(
        vocab_size=TINY_HF_VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=80,
        type_vocab_size=1,
        pad_token_id=TINY_HF_PAD,
        bos_token_id=TINY_HF_BOS,
        eos_token_id=TINY_HF_EOS,
    ).save_pretrained(folder)
    text_cfg = {"hf_model_name": str(folder), "hf_tokenizer_name": str(folder), "hf_model_pretrained": False}
    torch.manual_seed(seed)
    return open_clip.CustomTextCLIP(
        embed_dim=32, vision_cfg=TINY_CONFIG["vision_cfg"], text_cfg=text_cfg
    ).eval()


class WordIdTokenizer:
    """open_clip's HF tokenizer contract without tokenizer files: a word's id is fixed by its characters,
    ``<s> words </s>`` padded with id 1 to a context of 77 (longer texts truncated, ``</s>`` kept)."""

    context_length = 77

    def __call__(self, texts):
        import torch

        out = torch.full((len(texts), self.context_length), TINY_HF_PAD, dtype=torch.long)
        for i, text in enumerate(texts):
            words = [5 + sum(map(ord, w)) % (TINY_HF_VOCAB - 5) for w in text.split()]
            ids = [TINY_HF_BOS, *words[: self.context_length - 2], TINY_HF_EOS]
            out[i, : len(ids)] = torch.tensor(ids)
        return out
