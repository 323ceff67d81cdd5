"""The one transformer table: every count a step model reads, per layer and per part, from a ModelShape.

``ModelShape.table()`` gives it; the conventions it counts by are stated once in
``hwlib.data.records.layer_rules``. Chapters :ref:`ch-counting`, :ref:`ch-kv-cache`, :ref:`ch-serving`,
:ref:`ch-hbm-budgets`, :ref:`ch-sharding` and :ref:`ch-compute-and-commute`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hwlib._checks import Number, non_negative, scalar_or_array
from hwlib.data.records.layer_rules import (
    FORWARD_FLOPS_PER_PARAM,
    KV_TENSORS,
    MATMULS_PER_MLP,
    MLA_MODES,
    NORM_VECTORS,
    RECOMPUTE,
    SCORE_FLOPS_PER_HEAD_DIM,
    TRAINING_OVER_FORWARD,
    attended_pairs,
    kept_activation_bytes,
)
from hwlib.units import dtype_bytes

if TYPE_CHECKING:  # the table is built by ModelShape.table()
    from hwlib.data.records.model_shape import ModelShape


@dataclass(frozen=True)
class TransformerTable:
    """Counts of one model per layer and per part (see the module docstring for each convention).

    Widths are elements: ``q_width`` = n_h d_h (an MLA query's n_h (d_nope + d_rope)), ``kv_width`` = n_kv d_h,
    ``mlp_width`` the MLP hidden width one token uses in a layer (d_ff, or d_ff_e times the experts it visits plus
    the shared experts), averaged over the layers where they differ. Chapter :ref:`ch-counting`.
    """

    model: ModelShape

    def _structured(self) -> ModelShape:
        """The model, where it has every field a count needs (else a ValueError naming those missing)."""
        self.model._require_structure()
        return self.model

    # --- widths and layer kinds ----------------------------------------------------------

    @property
    def n_layers(self) -> int:
        return self.model.n_layers

    @property
    def d_model(self) -> int:
        return self.model.d_model

    @property
    def q_width(self) -> int:
        mla = self.model.mla
        return self.model.n_heads * (mla.qk_head_dim if mla else self.model.head_dim)

    @property
    def kv_width(self) -> int:
        return self.model.n_kv_heads * self.model.head_dim

    @property
    def cache_heads(self) -> int:
        """KV heads the cache holds per layer: an MLA layer caches one latent for every head."""
        return 1 if self.model.mla else self.model.n_kv_heads

    @property
    def moe_mask(self) -> np.ndarray:
        """Per layer, whether its MLP is a mixture of experts."""
        model = self.model
        if not model.is_moe:
            return np.zeros(model.n_layers, dtype=bool)
        return np.array(model.moe_layers, dtype=bool) if model.moe_layers else np.ones(model.n_layers, dtype=bool)

    @property
    def n_moe_layers(self) -> int:
        return int(self.moe_mask.sum())

    @property
    def windows(self) -> np.ndarray:
        """Per layer, the most tokens it attends to (0: all)."""
        model = self.model
        return np.array(model.windows, dtype=float) if model.windows else np.zeros(model.n_layers)

    @property
    def shared_width(self) -> int:
        """Width of an MoE layer's shared experts together (0 without them)."""
        model = self.model
        if not model.n_shared_experts:
            return 0
        return model.d_ff_shared if model.d_ff_shared is not None else model.n_shared_experts * model.d_ff_expert

    @property
    def experts_used(self) -> int:
        """Routed experts one token's MLP visits in an MoE layer, plus one for the shared experts (0: dense)."""
        return self.model.experts_per_token + (1 if self.shared_width else 0) if self.model.is_moe else 0

    @property
    def mlp_width(self) -> float:
        model = self.model
        if not model.is_moe:
            return model.d_ff
        moe = self.moe_mask
        routed = model.d_ff_expert * model.experts_per_token + self.shared_width
        dense = model.d_ff if model.d_ff is not None else 0
        return float(np.where(moe, routed, dense).mean())

    # --- parameters --------------------------------------------------------------------

    def _attention_params(self) -> float:
        """Weights (and biases) of one layer's attention projections."""
        model, d = self.model, self.d_model
        if model.mla is not None:
            return model.mla.params(d, model.n_heads)
        q_width, kv_width = self.q_width, self.kv_width
        attention = d * q_width + 2 * d * kv_width + q_width * d
        if model.qkv_bias or model.linear_bias:
            attention += q_width + 2 * kv_width
        if model.linear_bias:
            attention += d
        return float(attention)

    def _mlp_params(self, width: int) -> float:
        """Weights (and biases) of one MLP of hidden width ``width``."""
        model, d = self.model, self.d_model
        matrices = MATMULS_PER_MLP[model.mlp]
        biases = (matrices - 1) * width + d if (model.mlp_bias or model.linear_bias) else 0
        return float(matrices * d * width + biases)

    def _layer_norms(self) -> float:
        """Norm weights of one layer: its block norms, query and key norms, an MLA's latent norms."""
        model = self.model
        vectors = NORM_VECTORS[model.norm]
        qk = {"none": 0, "head": 2 * model.head_dim, "full": self.q_width + self.kv_width}[model.qk_norm]
        latent = model.mla.norm_width() if model.mla else 0
        return float(vectors * (model.norms_per_layer * model.d_model + qk + latent))

    def params(self, active: bool = False) -> dict[str, float]:
        """Parameters by part: "embedding", "positions", "attention", "mlp" (dense layers), "experts", "shared
        experts" and "router" (MoE layers), "norms", the head ("lm_head", or "classifier"; none for a headless
        model) and "vision" (a vision tower). ``active=True`` counts what one text token uses: its routed experts, no
        vision tower."""
        model = self._structured()
        if not isinstance(active, bool):
            raise TypeError(f"active must be True or False, got {active!r}")
        d = self.d_model
        moe_layers = self.n_moe_layers
        dense_layers = model.n_layers - moe_layers
        parts = {
            "embedding": float(model.vocab * d),
            "positions": float(model.learned_positions * d),
            "attention": model.n_layers * self._attention_params(),
        }
        if dense_layers:
            parts["mlp"] = dense_layers * self._mlp_params(model.d_ff)
        if moe_layers:
            used = model.experts_per_token if active else model.n_experts
            parts["experts"] = float(moe_layers * used * self._mlp_params(model.d_ff_expert))
            if self.shared_width:
                gate = d if model.shared_expert_gate else 0
                parts["shared experts"] = moe_layers * (self._mlp_params(self.shared_width) + gate)
            parts["router"] = float(moe_layers * (d * model.n_experts + (model.n_experts if model.router_bias else 0)))
        vectors = NORM_VECTORS[model.norm] * d
        parts["norms"] = model.n_layers * self._layer_norms() + (vectors if model.norms_per_layer else 0)
        if model.head == "lm":
            bias = model.vocab if model.head_bias else 0
            parts["lm_head"] = (0.0 if model.tied_embeddings else float(model.vocab * d)) + bias
        elif model.head == "classifier":
            parts["classifier"] = float(model.n_labels * (d + (1 if model.head_bias else 0)))
        if model.vision_params and not active:
            parts["vision"] = float(model.vision_params)
        return parts

    def mtp_params(self) -> float:
        """Parameters of the multi-token-prediction layers (DeepSeek-V3, Sec. 2.2), beside the main model's: each
        a layer like the last one, the projection of [hidden; embedding] (2d x d) and its three norms; the
        embedding and the output head are shared with the main model and not counted again."""
        model = self._structured()
        if not model.mtp_layers:
            return 0.0
        d = self.d_model
        last = bool(self.moe_mask[-1])
        if last:
            mlp = model.n_experts * self._mlp_params(model.d_ff_expert) + d * model.n_experts
            mlp += (model.n_experts if model.router_bias else 0) + (
                self._mlp_params(self.shared_width) if self.shared_width else 0
            )
        else:
            mlp = self._mlp_params(model.d_ff)
        layer = self._attention_params() + mlp + self._layer_norms()
        return float(model.mtp_layers * (layer + 2 * d * d + 3 * NORM_VECTORS[model.norm] * d))

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
        """Weights a token is multiplied by: attention, the MLP or its experts (and shared experts), the router
        and the head (the embedding matrix where the head is tied to it; none where the record's counts leave the
        head out, ``ModelShape.head_flops``, or there is none). The embedding lookup, the norms and a vision tower
        multiply no text token."""
        parts = self.params(active)
        if self.model.head == "lm":
            head = parts["embedding"] if self.model.tied_embeddings else parts["lm_head"]
        else:
            head = parts.get("classifier", 0.0)
        head = head if self.model.head_flops else 0.0
        names = ("attention", "mlp", "experts", "shared experts", "router")
        return sum(parts.get(name, 0.0) for name in names) + head

    def expert_params(self) -> float:
        """Parameters of one routed expert over all MoE layers (0 for a dense model)."""
        if not self.model.is_moe:
            return 0.0
        return self.n_moe_layers * self._mlp_params(self.model.d_ff_expert)

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

    def experts_touched(self, tokens: Number) -> Number:
        """Routed experts a step of ``tokens`` tokens touches in each MoE layer, in expectation (0: dense)."""
        tokens = np.asarray(tokens, dtype=float)
        model = self.model
        if not model.is_moe:
            return np.zeros(tokens.shape)
        return model.n_experts * (1.0 - (1.0 - model.experts_per_token / model.n_experts) ** tokens)

    # --- FLOPs -------------------------------------------------------------------------

    def weight_flops(self, tokens: Number) -> Number:
        """Forward FLOPs of ``tokens`` tokens through the weights: 2 per matmul weight a token uses."""
        return FORWARD_FLOPS_PER_PARAM * self.matmul_params(active=True) * np.asarray(tokens, dtype=float)

    def attention_flops(
        self, new_tokens: Number, context_len: Number = 0, causal: bool | None = None, mla: str = "auto"
    ) -> Number:
        """Forward FLOPs of one sequence's attention, all layers: ``new_tokens`` new tokens after ``context_len``
        cached ones, each layer over the pairs its window allows (``attended_pairs``); ``causal`` defaults to the
        model's own. An MLA model also expands every cached latent the naive way (``mla``: ``MLA_MODES``;
        "auto" takes the cheaper per step). Vectorised over tokens and context."""
        if mla not in MLA_MODES:
            raise ValueError(f"mla must be one of {MLA_MODES}, got {mla!r}")
        self._structured()
        causal = self.model.causal if causal is None else causal
        new = np.asarray(new_tokens, dtype=float)[..., None]
        context = np.asarray(context_len, dtype=float)[..., None]
        pairs = attended_pairs(new, context, causal, self.windows, self.model.window_kind).sum(axis=-1)
        latent, heads = self.model.mla, self.model.n_heads
        if latent is None:
            return SCORE_FLOPS_PER_HEAD_DIM * self.q_width * pairs
        cached = np.minimum(context, np.where(self.windows > 0, self.windows, np.inf)).sum(axis=-1)
        naive = latent.pair_flops(heads, "naive") * pairs + latent.expansion_flops(heads) * cached
        absorbed = latent.pair_flops(heads, "absorbed") * pairs
        return {"naive": naive, "absorbed": absorbed}.get(mla, np.minimum(naive, absorbed))

    def forward_flops(self, tokens: Number, attention: Number) -> Number:
        """Forward FLOPs of ``tokens`` tokens whose attention takes ``attention`` FLOPs (``attention_flops``)."""
        return self.weight_flops(tokens) + np.asarray(attention, dtype=float)

    def flops_per_token(self, seq_len: Number = 0, training: bool = False, causal: bool = True) -> Number:
        """Matmul FLOPs per token of sequences of ``seq_len`` tokens: forward, or with ``training`` 3 x forward."""
        if not isinstance(training, bool):
            raise TypeError(f"training must be True or False, got {training!r}")
        sequence = np.asarray(non_negative("context_len", seq_len), dtype=float)
        attention = self.attention_flops(sequence, 0, causal)
        per_token = np.divide(attention, sequence, out=np.zeros_like(sequence), where=sequence > 0)
        forward = self.weight_flops(1.0) + per_token
        return scalar_or_array(forward * (TRAINING_OVER_FORWARD if training else 1.0))

    def recompute_flops(self, tokens: Number, attention: Number, recompute: str) -> Number:
        """FLOPs recomputed in the backward pass of ``tokens`` tokens whose attention takes ``attention`` FLOPs:
        none; the attention's forward (``selective``); or the whole forward (``full``)."""
        if recompute not in RECOMPUTE:
            raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
        attention = np.asarray(attention, dtype=float)
        if recompute == "none":
            return np.zeros(np.broadcast(np.asarray(tokens), attention).shape)
        return attention if recompute == "selective" else self.forward_flops(tokens, attention)

    def layer_matmuls(self, tokens: Number, tp: int = 1, expert_parallel: bool = False) -> tuple:
        """The forward matmuls of one layer on one of ``tp`` tensor-parallel chips for ``tokens`` tokens, as
        (rows, columns, FLOP share, groups) of their outputs: QKV (columns (n_h + 2 n_kv) d_h / tp; an MLA's query
        and latent projections), the attention output (d), the MLP's up and gate (their widths / tp) and down (d).
        An MoE's experts run as one grouped GEMM over the experts the step touches (``groups``), each taking its
        share of the k routed copies of the tokens; ``expert_parallel`` keeps experts whole (widths unsplit), 1/tp
        of those touched per chip. Shares sum to 1; rows and groups broadcast with ``tokens``."""
        model = self._structured()
        rows = np.asarray(tokens, dtype=float)
        d, q, kv = model.d_model, self.q_width, self.kv_width
        kv = model.mla.cache_width / 2 if model.mla is not None else kv
        inner_out = (model.n_heads * model.mla.v_head_dim if model.mla is not None else q) / tp
        moe = model.is_moe and bool(self.moe_mask.any())
        width = model.d_ff_expert if moe else model.d_ff
        up = (2 if model.mlp == "gated" else 1) * width
        touched = np.maximum(self.experts_touched(rows), 1.0) if moe else np.ones_like(rows)
        mlp_rows = np.maximum(rows * model.experts_per_token / touched, 1.0) if moe else rows
        split = 1 if expert_parallel and moe else tp
        groups = np.maximum(touched * split / tp, 1.0)
        columns = np.array([(q + 2 * kv) / tp, d, up / split, d])
        inner = np.array([d, inner_out, d, width / split])
        used = max(self.experts_used, 1) if moe else 1
        flops = columns * inner * np.array([1.0, 1.0, used, used])
        all_rows = np.stack(np.broadcast_arrays(rows, rows, mlp_rows, mlp_rows), axis=-1)
        ones = np.ones_like(groups)
        all_groups = np.stack(np.broadcast_arrays(ones, ones, groups, groups), axis=-1)
        return all_rows, columns, flops / flops.sum(), all_groups

    # --- bytes -------------------------------------------------------------------------

    def kv_elements_per_layer(self) -> float:
        """Elements one token caches in one layer: keys and values of its KV heads, or an MLA latent."""
        model = self.model
        return float(model.mla.cache_width if model.mla else KV_TENSORS * model.n_kv_heads * model.head_dim)

    def kv_bytes_per_token(self, dtype: str = "bf16") -> float:
        """KV-cache bytes one token adds while every layer still holds it (``kv_elements_per_layer`` x layers x
        element size)."""
        return float(self.n_layers * self.kv_elements_per_layer() * dtype_bytes(dtype))

    def kv_bytes(self, context_len: Number, dtype: str = "bf16") -> Number:
        """KV-cache bytes of one sequence of ``context_len`` tokens: each layer holds at most its window.
        Vectorised over the context."""
        context = np.asarray(non_negative("context_len", context_len), dtype=float)
        windows = self.windows
        held = np.minimum(context[..., None], np.where(windows > 0, windows, np.inf)).sum(axis=-1)
        return scalar_or_array(held * self.kv_elements_per_layer() * dtype_bytes(dtype))

    def activation_elements_per_token(self) -> float:
        """Elements of activations one token moves between kernels in an inference step, all layers: each matmul's
        input read and output written (QKV, attention output, the MLP's up/gate and down projections)."""
        self._structured()
        d, q_width, kv_width, width = self.d_model, self.q_width, self.kv_width, self.mlp_width
        if self.model.mla is not None:
            kv_width = self.model.mla.cache_width / 2
        mlp_out = (2 if self.model.mlp == "gated" else 1) * width
        per_layer = (d + q_width + 2 * kv_width) + (q_width + d) + (d + mlp_out) + (width + d)
        return float(self.n_layers * per_layer)

    def kept_activation_bytes(self, dropout: bool = False) -> tuple[float, float, float]:
        """Bytes one token keeps per layer for the backward pass (``kept_activation_bytes`` at this model's
        widths, the MLP's averaged over the layers where they differ; an MLA layer keeps its expanded keys and
        values): (kept whole, split by tensor parallelism, per attended token)."""
        model = self._structured()
        kv_width = self.kv_width
        if model.mla is not None:
            kv_width = model.n_heads * (model.mla.qk_head_dim + model.mla.v_head_dim) / 2
        return kept_activation_bytes(
            model.d_model,
            self.q_width,
            kv_width,
            model.n_heads,
            self.mlp_width,
            model.mlp,
            model.norms_per_layer,
            dropout,
        )

    # --- what each parallel axis moves, elements per token ---------------------------------

    def tp_elements_per_token(self) -> float:
        """Elements one tensor-parallel all-reduce carries per token (two a layer a pass), or a pipeline stage
        sends across its boundary each way: the d-wide hidden state."""
        return float(self.d_model)

    def cp_elements_per_token(self) -> float:
        """Elements of keys and values one token contributes per layer to a context-parallel all-gather."""
        return self.kv_elements_per_layer()

    def ep_elements_per_token(self) -> float:
        """Elements one expert-parallel all-to-all moves per token per MoE layer, averaged over all layers: the
        token's d-wide state to each of its k routed experts (``EP_ALL_TO_ALLS_PER_LAYER``: dispatch, then
        combine)."""
        if not self.model.is_moe:
            return 0.0
        return float(self.model.experts_per_token * self.d_model * self.n_moe_layers / self.n_layers)

    pp_elements_per_token = tp_elements_per_token
