"""The rules the one transformer table counts by (``hwlib.data.records.transformer_table``), and the formulas it
shares with the functions that take bare numbers (``hw.kv_cache_bytes``, ``hw.activation_bytes``).

``ModelShape.table()`` gives it. Serving (``hw.inference_step``), training (``hw.train_step``,
``hw.training_memory``, ``hw.activation_bytes``) and the source documents' layer model (``hw.layer_step``)
take their parameters, FLOPs, weight bytes, activations, KV bytes and the elements each parallel axis moves
from here; nothing else restates a count. The conventions, stated once:

* **Parameters** per layer: attention d n_h d_h (Q) + 2 d n_kv d_h (K, V) + n_h d_h d (output), plus biases;
  a dense MLP of 2 (GELU: up, down) or 3 (gated, SwiGLU: gate, up, down) matrices d x d_ff, or n_e experts of
  that shape at width d_ff_e plus a d x n_e router and any shared experts; the norms' weights (and LayerNorm's
  biases). Beside the layers: the embedding V d, an untied output head V d, learned positions, a final norm
  (Vaswani et al. 2017; Shazeer 2020, arXiv:2002.05202; Jiang et al. 2024, arXiv:2401.04088).
* **FLOPs**: 2 per weight a token multiplies (the attention projections, the MLP or the experts it is routed
  to, the router, the output head; the embedding lookup and the norms multiply nothing) plus the attention
  scores, 4 n_h d_h per layer per (query, key) pair: Q K^T and the weighted sum of V. The model record says
  which pairs (``ModelShape.causal``): causal, a token attends to itself and the tokens before it, as
  FlashAttention-style kernels compute it (they skip the masked blocks), for every decoder in the catalogue;
  the whole matrix for the source documents' model, whose counts are reproduced exactly (they also leave the
  output head's matmul out: ``ModelShape.head_flops``). A caller may count
  every pair anyway (``causal=False``), as kernels that mask after computing do. Training is forward +
  backward = 3 x the forward (Kaplan et al. 2020, Sec. 2.1); activation
  recomputation adds the attention scores' forward (selective) or the whole forward (full) (Korthikanti et al.
  2022, arXiv:2205.05198).
* **Weight bytes a step reads**: the matmul weights it touches, each once (an MoE's experts only where a token
  of the step was routed, in expectation); the embedding table is gathered a row per token and not counted.
  Stored weights (``ModelShape.weight_bytes``, memory) count every parameter.
* **Activations between kernels** (inference): each matmul's input read and output written, per token per
  layer. **Activations kept for the backward pass** (training): Korthikanti et al.'s accounting for the
  model's own widths (see ``kept_activation_bytes``).
* **Elements each parallel axis moves**, per token: tensor parallelism all-reduces the d-wide hidden state
  twice per layer per pass (after attention, after the MLP; Shoeybi et al. 2019); context parallelism gathers
  the keys and values, 2 n_kv d_h per layer; expert parallelism dispatches each token to its k experts and
  combines them back, k d each way per MoE layer; a pipeline stage boundary sends d forward and d back. Data
  parallelism and FSDP move the parameters' shard (``ModelShape.params``).

The source documents' layer (12 d^2 parameters, 72 d^2 T training FLOPs per layer, full attention) is the
special case of a GELU MLP of width 4d, multi-head attention, no biases and no norms.

**Layer kinds.** Layers may differ: a windowed layer attends to at most its window and caches at most that many
tokens (Beltagy et al. 2020, arXiv:2004.05150; Jiang et al. 2023, arXiv:2310.06825; Gemma Team 2024,
arXiv:2408.00118); an MoE model's dense layers have a dense MLP (DeepSeek-V3, arXiv:2412.19437, Sec. 4.2; Llama 4).
Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1) caches kv_lora_rank + qk_rope_head_dim
elements per token per layer, once for all heads, and computes its scores two ways: expanded ("naive": each cached
latent multiplied out to per-head keys and values, 2 n_h (d_qk + d_v) FLOPs per pair plus the expansion of every
cached token) or with the expansion absorbed into the query and output projections ("absorbed": 2 n_h
(2 r_kv + d_rope) per pair, nothing per cached token). A step takes the cheaper ("auto"): absorbed in decode,
expanded in prefill and training. Chapters :ref:`ch-counting` (the counts), :ref:`ch-kv-cache`, :ref:`ch-serving`,
:ref:`ch-hbm-budgets`, :ref:`ch-sharding` and :ref:`ch-compute-and-commute`.
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import Number

MATMULS_PER_MLP = {"gelu": 2, "gated": 3}
"""Weight matrices of an MLP: GELU up and down; gated gate, up and down."""
HIDDEN_TENSORS_PER_MLP = {"gelu": 2, "gated": 3}
"""MLP hidden tensors a layer keeps for the backward pass: GELU's input and output; gate, up and their product."""
NORM_VECTORS = {"rmsnorm": 1, "layernorm": 2, "none": 0}
"""Weight vectors per norm: RMSNorm's scale; LayerNorm's scale and bias."""
FORWARD_FLOPS_PER_PARAM = 2.0
"""One multiply and one add per weight per token."""
TRAINING_OVER_FORWARD = 3.0
"""Forward + backward: the backward pass costs twice the forward (input and weight gradients)."""
SCORE_FLOPS_PER_HEAD_DIM = 4.0
"""Attention per layer per (query, key) pair per unit of n_h d_h: Q K^T (2) and scores x V (2)."""
KV_TENSORS = 2
"""The cache holds keys and values."""
TP_ALLREDUCES_PER_LAYER = 2
"""Megatron's tensor-parallel layer, per pass: one all-reduce after attention, one after the MLP."""
TP_ALLREDUCES_PER_PARALLEL_LAYER = 1
"""A parallel layer (attention and MLP on the same input, their outputs added: Chowdhery et al. 2022, "PaLM",
arXiv:2204.02311, Sec. 2, "Parallel Layers"), per pass: the two partial sums are reduced together, once."""
EP_ALL_TO_ALLS_PER_LAYER = 2
"""An expert-parallel MoE layer, per pass: dispatch each token to its experts, then combine their outputs."""
KEPT_ACTIVATION_BYTES = 2.0
"""Activations kept for the backward pass in 16 bits (bf16 or fp16), as in Korthikanti et al. 2022."""
MASK_BYTES = 1.0
"""A dropout mask keeps one byte per element (Korthikanti et al. 2022, Sec. 4.1)."""
RECOMPUTE = ("none", "up-projections", "selective", "full")
"""Activation recomputation strategies: Korthikanti et al. 2022's (Sec. 4-5: none, the attention core
``selective``, ``full``) and DeepSeek-V3's (arXiv:2412.19437, Sec. 3.2.3: "we recompute all RMSNorm operations and
MLA up-projections during back-propagation", Megatron-Core's recompute modules "layernorm" and "mla_up_proj"): the
norms' outputs and an MLA layer's up-projected queries, keys and values are recomputed from what is kept."""
MLA_MODES = ("auto", "absorbed", "naive")
"""How multi-head latent attention computes its scores: the cheaper of the two for the step, or one of them."""


def kv_bytes(
    seq_len: object, n_layers: object, n_kv_heads: object, head_dim: object, bytes_per_element: float, batch: object = 1
) -> object:
    """KV-cache bytes: 2 x n_layers x seq_len x n_kv_heads x head_dim x bytes per element x batch (the one formula)."""
    return KV_TENSORS * n_layers * seq_len * n_kv_heads * head_dim * bytes_per_element * batch


def attended_pairs(
    new_tokens: Number, context_len: Number = 0, causal: bool = True, window: Number = 0, kind: str = "sliding"
) -> Number:
    """(query, key) pairs of ``new_tokens`` new tokens after ``context_len`` cached ones: each new token attends
    to the whole context and, causally, to itself and the new tokens before it, n (n + 1) / 2; with
    ``causal=False`` to all n. A training sequence of s tokens is new_tokens = s, context 0. A ``window`` w > 0
    caps what a token sees: the last w tokens ("sliding"), or the tokens of its own w-token chunk ("chunked").
    Vectorised over every argument but ``kind``."""
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    new, context = np.asarray(new_tokens, dtype=float), np.asarray(context_len, dtype=float)
    window = np.asarray(window, dtype=float)
    whole = new * context + (new * (new + 1) / 2 if causal else new * new)
    if not np.any(window > 0):
        return whole * np.ones_like(window)
    w = np.where(window > 0, window, 1.0)
    if kind == "chunked":

        def seen(tokens: np.ndarray) -> np.ndarray:  # sum over positions p < tokens of (p mod w) + 1
            chunks, rest = np.floor(tokens / w), np.mod(tokens, w)
            return chunks * w * (w + 1) / 2 + rest * (rest + 1) / 2

    else:

        def seen(tokens: np.ndarray) -> np.ndarray:  # sum over positions p < tokens of min(p + 1, w)
            inside = np.minimum(tokens, w)
            return inside * (inside + 1) / 2 + w * np.maximum(tokens - w, 0.0)

    capped = seen(context + new) - seen(context) if causal else new * np.minimum(context + new, w)
    return np.where(window > 0, capped, whole)


def recomputed_norm_bytes(d_model: Number) -> Number:
    """Bytes per token per layer ``up-projections`` recomputation does not keep: the outputs of the norms before
    the attention and the MLP, recomputed from their inputs (DeepSeek-V3, Sec. 3.2.3)."""
    return KEPT_ACTIVATION_BYTES * 2 * d_model


def kept_activation_bytes(
    d_model: Number,
    q_width: Number,
    kv_width: Number,
    n_heads: Number,
    mlp_width: Number,
    mlp: str,
    norms_per_layer: Number = 2,
    dropout: bool = False,
) -> tuple[Number, Number, Number]:
    """Bytes one token keeps per layer for the backward pass, in three terms: (kept whole by every chip, split by
    tensor parallelism, per attended token of the score matrix); vectorised over the widths.

    Kept whole: each norm's input and the inputs of the attention and MLP blocks' first matmuls (and their
    dropout masks). Split over tensor-parallel ranks: Q and K (for Q K^T), V, the attention output, the MLP's
    hidden tensors (two for GELU, three gated) at the width a token uses. Scores: the softmax output per head
    (and its dropout mask and output with dropout). Korthikanti et al. 2022's GPT layer (q = kv = d, a GELU MLP
    of 4d, two LayerNorms, dropout) gives their Table 2: 10 d, 24 d and 5 n_h.
    """
    e = KEPT_ACTIVATION_BYTES
    whole = e * d_model * (norms_per_layer + 2) + (2 * MASK_BYTES * d_model if dropout else 0.0)
    split = e * (2 * q_width + 2 * kv_width) + e * HIDDEN_TENSORS_PER_MLP[mlp] * mlp_width
    scores = n_heads * (e + (MASK_BYTES + e if dropout else 0.0))
    return whole, split, scores
