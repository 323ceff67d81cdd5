"""The one transformer table: every count a step model reads, per layer and per part, from a ModelShape.

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
special case of a GELU MLP of width 4d, multi-head attention, no biases and no norms. Chapters :ref:`ch-counting` (the
counts), :ref:`ch-kv-cache`, :ref:`ch-serving`, :ref:`ch-hbm-budgets`, :ref:`ch-sharding` and
:ref:`ch-compute-and-commute`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hwlib._checks import Number, non_negative, scalar_or_array
from hwlib.units import dtype_bytes

if TYPE_CHECKING:  # the table is built by ModelShape.table()
    from hwlib.data.records.model_shape import ModelShape

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
EP_ALL_TO_ALLS_PER_LAYER = 2
"""An expert-parallel MoE layer, per pass: dispatch each token to its experts, then combine their outputs."""
KEPT_ACTIVATION_BYTES = 2.0
"""Activations kept for the backward pass in 16 bits (bf16 or fp16), as in Korthikanti et al. 2022."""
MASK_BYTES = 1.0
"""A dropout mask keeps one byte per element (Korthikanti et al. 2022, Sec. 4.1)."""
RECOMPUTE = ("none", "selective", "full")
"""Activation recomputation strategies of Korthikanti et al. 2022, Sec. 4-5."""


def kv_bytes(
    seq_len: object, n_layers: object, n_kv_heads: object, head_dim: object, bytes_per_element: float, batch: object = 1
) -> object:
    """KV-cache bytes: 2 x n_layers x seq_len x n_kv_heads x head_dim x bytes per element x batch (the one formula)."""
    return KV_TENSORS * n_layers * seq_len * n_kv_heads * head_dim * bytes_per_element * batch


def attended_pairs(new_tokens: Number, context_len: Number = 0, causal: bool = True) -> Number:
    """(query, key) pairs of ``new_tokens`` new tokens after ``context_len`` cached ones: each new token attends
    to the whole context and, causally, to itself and the new tokens before it, n (n + 1) / 2; with
    ``causal=False`` to all n. A training sequence of s tokens is new_tokens = s, context 0."""
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    new, context = np.asarray(new_tokens, dtype=float), np.asarray(context_len, dtype=float)
    return new * context + (new * (new + 1) / 2 if causal else new * new)


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


@dataclass(frozen=True)
class TransformerTable:
    """Counts of one model per layer and per part (see the module docstring for each convention).

    Widths are elements: ``q_width`` = n_h d_h, ``kv_width`` = n_kv d_h, ``mlp_width`` the MLP hidden width
    one token uses (d_ff, or d_ff_e times the experts it visits). Chapter :ref:`ch-counting`.
    """

    model: ModelShape

    def _structured(self) -> ModelShape:
        """The model, where it has every field a count needs (else a ValueError naming those missing)."""
        self.model._require_structure()
        return self.model

    # --- widths ------------------------------------------------------------------------

    @property
    def n_layers(self) -> int:
        return self.model.n_layers

    @property
    def d_model(self) -> int:
        return self.model.d_model

    @property
    def q_width(self) -> int:
        return self.model.n_heads * self.model.head_dim

    @property
    def kv_width(self) -> int:
        return self.model.n_kv_heads * self.model.head_dim

    @property
    def experts_used(self) -> int:
        """Experts one token's MLP visits in each layer: its routed ones and the shared ones (0 for a dense MLP)."""
        return self.model.experts_per_token + self.model.n_shared_experts if self.model.is_moe else 0

    @property
    def mlp_width(self) -> int:
        model = self.model
        return model.d_ff if not model.is_moe else model.d_ff_expert * self.experts_used

    # --- parameters --------------------------------------------------------------------

    def params(self, active: bool = False) -> dict[str, float]:
        """Parameters by part: "embedding", "positions", "attention", "mlp" (dense) or "experts" and "router"
        (MoE), "norms", "lm_head". ``active=True`` counts only the experts one token uses."""
        model = self._structured()
        if not isinstance(active, bool):
            raise TypeError(f"active must be True or False, got {active!r}")
        d, q_width, kv_width = model.d_model, self.q_width, self.kv_width
        attention = d * q_width + 2 * d * kv_width + q_width * d
        if model.qkv_bias or model.linear_bias:
            attention += q_width + 2 * kv_width
        if model.linear_bias:
            attention += d
        matrices = MATMULS_PER_MLP[model.mlp]
        parts = {
            "embedding": float(model.vocab * d),
            "positions": float(model.learned_positions * d),
            "attention": float(model.n_layers * attention),
        }
        if model.is_moe:
            used = model.experts_per_token if active else model.n_experts
            parts["experts"] = float(
                model.n_layers * (used + model.n_shared_experts) * matrices * d * model.d_ff_expert
            )
            parts["router"] = float(model.n_layers * d * model.n_experts)
        else:
            parts["mlp"] = float(
                model.n_layers * (matrices * d * model.d_ff + ((model.d_ff + d) if model.linear_bias else 0))
            )
        vectors = NORM_VECTORS[model.norm] * d
        parts["norms"] = float(
            model.n_layers * model.norms_per_layer * vectors + (vectors if model.norms_per_layer else 0)
        )
        parts["lm_head"] = 0.0 if model.tied_embeddings else float(model.vocab * d)
        return parts

    def layer_params(self) -> float:
        """Matmul parameters of one layer that streams every weight once (attention and a dense MLP): the layer
        model's P per layer. An MoE's experts do not stream that way: a ValueError."""
        if self.model.is_moe:
            raise ValueError(
                f"model {self.model.name!r} is a mixture of experts: the layer model streams every weight "
                "once per visit, which an MoE's experts do not; it takes dense models"
            )
        parts = self.params()
        return (parts["attention"] + parts["mlp"]) / self.n_layers

    def matmul_params(self, active: bool = True) -> float:
        """Weights a token is multiplied by: attention, the MLP or its experts, the router and the output head
        (the embedding matrix where the head is tied to it; none where the record's counts leave the head out,
        ``ModelShape.head_flops``). The embedding lookup and the norms multiply nothing."""
        parts = self.params(active)
        head = parts["embedding"] if self.model.tied_embeddings else parts["lm_head"]
        head = head if self.model.head_flops else 0.0
        return parts["attention"] + parts.get("mlp", 0.0) + parts.get("experts", 0.0) + parts.get("router", 0.0) + head

    def expert_params(self) -> float:
        """Parameters of one expert over all layers (0 for a dense model)."""
        if not self.model.is_moe:
            return 0.0
        return self.params()["experts"] / (self.model.n_experts + self.model.n_shared_experts)

    def touched_matmul_params(self, tokens: Number) -> Number:
        """Matmul weights a step of ``tokens`` tokens reads, each once: all of them for a dense model; for an MoE
        each routed expert in a layer is touched unless no token picks it, E (1 - (1 - k/E)^tokens) of E in
        expectation (tokens routed independently and uniformly)."""
        tokens = np.asarray(tokens, dtype=float)
        everything = self.matmul_params(active=False)
        if not self.model.is_moe:
            return np.full(tokens.shape, everything)
        model = self.model
        untouched = (1.0 - model.experts_per_token / model.n_experts) ** tokens
        return everything - self.expert_params() * model.n_experts * untouched

    # --- FLOPs -------------------------------------------------------------------------

    def weight_flops(self, tokens: Number) -> Number:
        """Forward FLOPs of ``tokens`` tokens through the weights: 2 per matmul weight a token uses."""
        return FORWARD_FLOPS_PER_PARAM * self.matmul_params(active=True) * np.asarray(tokens, dtype=float)

    def score_flops(self, pairs: Number) -> Number:
        """Forward FLOPs of the attention scores over ``pairs`` (query, key) pairs (``attended_pairs``):
        4 n_h d_h per layer per pair."""
        return SCORE_FLOPS_PER_HEAD_DIM * self.n_layers * self.q_width * np.asarray(pairs, dtype=float)

    def forward_flops(self, tokens: Number, pairs: Number) -> Number:
        """Forward FLOPs of ``tokens`` tokens attending over ``pairs`` (query, key) pairs."""
        return self.weight_flops(tokens) + self.score_flops(pairs)

    def flops_per_token(self, seq_len: Number = 0, training: bool = False, causal: bool = True) -> Number:
        """Matmul FLOPs per token of sequences of ``seq_len`` tokens: forward, or with ``training`` 3 x forward."""
        if not isinstance(training, bool):
            raise TypeError(f"training must be True or False, got {training!r}")
        sequence = np.asarray(non_negative("context_len", seq_len), dtype=float)
        per_token = np.divide(
            attended_pairs(sequence, 0, causal), sequence, out=np.zeros_like(sequence), where=sequence > 0
        )
        forward = self.weight_flops(1.0) + self.score_flops(per_token)
        return scalar_or_array(forward * (TRAINING_OVER_FORWARD if training else 1.0))

    def recompute_flops(self, tokens: Number, pairs: Number, recompute: str) -> Number:
        """FLOPs recomputed in the backward pass: none; the attention scores' forward (``selective``); or the whole
        forward (``full``)."""
        if recompute not in RECOMPUTE:
            raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
        if recompute == "none":
            return np.zeros(np.broadcast(np.asarray(tokens), np.asarray(pairs)).shape)
        return self.score_flops(pairs) if recompute == "selective" else self.forward_flops(tokens, pairs)

    def layer_matmuls(self, tokens: Number, tp: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The forward matmuls of one layer on one of ``tp`` tensor-parallel chips for ``tokens`` tokens, as
        (rows, columns, FLOP share) of their outputs: QKV (columns (n_h + 2 n_kv) d_h / tp), the attention output
        (d), the MLP's up and gate (their widths / tp) and down (d); an MoE's experts each take the tokens routed
        to them, k / E of the batch. Shares sum to 1. Rows broadcast with ``tokens``."""
        model = self._structured()
        rows = np.asarray(tokens, dtype=float)
        d, q, kv = model.d_model, self.q_width, self.kv_width
        width = model.d_ff_expert if model.is_moe else model.d_ff
        up = (2 if model.mlp == "gated" else 1) * width
        mlp_rows = rows * model.experts_per_token / model.n_experts if model.is_moe else rows
        columns = np.array([(q + 2 * kv) / tp, d, up / tp, d])
        inner = np.array([d, q / tp, d, width / tp])
        used = max(self.experts_used, 1)
        flops = columns * inner * np.array([1.0, 1.0, used, used])
        all_rows = np.stack(np.broadcast_arrays(rows, rows, mlp_rows, mlp_rows), axis=-1)
        return all_rows, columns, flops / flops.sum()

    # --- bytes -------------------------------------------------------------------------

    def kv_bytes_per_token(self, dtype: str = "bf16") -> float:
        """KV-cache bytes one token adds: 2 x n_layers x n_kv_heads x head_dim x element size."""
        return float(kv_bytes(1, self.n_layers, self.model.n_kv_heads, self.model.head_dim, dtype_bytes(dtype)))

    def activation_elements_per_token(self) -> float:
        """Elements of activations one token moves between kernels in an inference step, all layers: each matmul's
        input read and output written (QKV, attention output, the MLP's up/gate and down projections)."""
        self._structured()
        d, q_width, kv_width, width = self.d_model, self.q_width, self.kv_width, self.mlp_width
        mlp_out = (2 if self.model.mlp == "gated" else 1) * width
        per_layer = (d + q_width + 2 * kv_width) + (q_width + d) + (d + mlp_out) + (width + d)
        return float(self.n_layers * per_layer)

    def kept_activation_bytes(self, dropout: bool = False) -> tuple[float, float, float]:
        """Bytes one token keeps per layer for the backward pass (``kept_activation_bytes`` at this model's
        widths): (kept whole, split by tensor parallelism, per attended token)."""
        model = self._structured()
        return kept_activation_bytes(
            model.d_model,
            self.q_width,
            self.kv_width,
            model.n_heads,
            self.mlp_width,
            model.mlp,
            model.norms_per_layer,
            dropout,
        )

    # --- what each parallel axis moves, elements per token ---------------------------------

    def tp_elements_per_token(self) -> float:
        """Elements one tensor-parallel all-reduce carries per token: the d-wide hidden state
        (``TP_ALLREDUCES_PER_LAYER`` of them per layer per pass)."""
        return float(self.d_model)

    def cp_elements_per_token(self) -> float:
        """Elements of keys and values one token contributes per layer to a context-parallel all-gather."""
        return float(KV_TENSORS * self.kv_width)

    def ep_elements_per_token(self) -> float:
        """Elements one expert-parallel all-to-all moves per token per MoE layer: the token's d-wide state to
        each of its k routed experts (``EP_ALL_TO_ALLS_PER_LAYER``: dispatch, then combine)."""
        return float(self.model.experts_per_token * self.d_model) if self.model.is_moe else 0.0

    def pp_elements_per_token(self) -> float:
        """Elements a pipeline stage sends per token across its boundary, each way: the hidden state."""
        return float(self.d_model)
