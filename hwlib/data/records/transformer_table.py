"""The one transformer table: every count a step model reads, per layer and per part, from a ModelShape.

``ModelShape.table()`` gives it; the conventions it counts by are stated once in
``hwlib.data.records.layer_rules``. Chapters :ref:`ch-counting`, :ref:`ch-kv-cache`, :ref:`ch-serving`,
:ref:`ch-hbm-budgets`, :ref:`ch-sharding` and :ref:`ch-compute-and-commute`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, non_negative, scalar_or_array
from hwlib.data.records.layer_rules import (
    FORWARD_FLOPS_PER_PARAM,
    KV_TENSORS,
    MLA_MODES,
    RECOMPUTE,
    SCORE_FLOPS_PER_HEAD_DIM,
    TP_ALLREDUCES_PER_LAYER,
    TP_ALLREDUCES_PER_PARALLEL_LAYER,
    TRAINING_OVER_FORWARD,
    attended_pairs,
    kept_activation_bytes,
    recomputed_norm_bytes,
)
from hwlib.data.records.parameter_table import ParameterTable
from hwlib.units import dtype_bytes


@dataclass(frozen=True)
class TransformerTable(ParameterTable):
    """Counts of one model per layer and per part (see the module docstring for each convention): its widths and
    parameters (``ParameterTable``), the FLOPs and bytes of a step, and what each parallel axis moves. Chapter
    :ref:`ch-counting`."""

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
        new, context = np.asarray(new_tokens, dtype=float), np.asarray(context_len, dtype=float)
        kind = self.model.window_kind
        pairs = sum(layers * attended_pairs(new, context, causal, window, kind) for window, layers in self._windows())
        latent, heads = self.model.mla, self.model.n_heads
        if latent is None:
            return SCORE_FLOPS_PER_HEAD_DIM * self.q_width * pairs
        cached = self._held(context)
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
        none; an MLA layer's up-projections (``up-projections``; the norms are elementwise work); the attention's
        forward (``selective``); or the whole forward (``full``)."""
        if recompute not in RECOMPUTE:
            raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
        attention = np.asarray(attention, dtype=float)
        if recompute in ("none", "up-projections"):
            nothing = np.zeros(np.broadcast(np.asarray(tokens), attention).shape)
            return nothing + (np.asarray(tokens) * self.up_projection_flops_per_token() if recompute != "none" else 0)
        return attention if recompute == "selective" else self.forward_flops(tokens, attention)

    def up_projection_flops_per_token(self) -> float:
        """Forward FLOPs one token spends, all layers, expanding an MLA layer's latents to every head's query, key
        and value (0 without MLA): what ``up-projections`` recomputation computes again."""
        model = self.model
        mla = model.mla
        if mla is None:
            return 0.0
        query = (mla.q_lora_rank or 0) * model.n_heads * mla.qk_head_dim
        keys_values = mla.kv_lora_rank * model.n_heads * (mla.qk_nope_head_dim + mla.v_head_dim)
        return float(2 * (query + keys_values) * self.n_layers)

    def layer_matmuls(self, tokens: Number, tp: int = 1, expert_parallel: bool = False, ep: int = 1) -> tuple:
        """The forward matmuls of one layer on one of ``tp`` tensor-parallel chips for ``tokens`` tokens, as
        (rows, columns, FLOP share, groups) of their outputs: QKV (columns (n_h + 2 n_kv) d_h / tp; an MLA's query
        and latent projections), the attention output (d), the MLP's up and gate (their widths / tp) and down (d).
        An MoE's experts run as one grouped GEMM over the experts the step touches (``groups``), each taking its
        share of the k routed copies of the tokens; ``expert_parallel`` keeps experts whole (widths unsplit), 1/tp
        of those touched per chip. Under ``ep``-way expert parallelism (training) the tokens of ``ep`` ranks meet at
        each chip's 1/ep of the experts: ep times the rows over 1/ep of the groups. Shares sum to 1; rows and groups
        broadcast with ``tokens``."""
        model = self._structured()
        rows = np.asarray(tokens, dtype=float)
        d, q, kv = model.d_model, self.q_width, self.kv_width
        kv = model.mla.cache_width / 2 if model.mla is not None else kv
        inner_out = (model.n_heads * model.mla.v_head_dim if model.mla is not None else q) / tp
        moe = model.is_moe and bool(self.moe_mask.any())
        width = model.d_ff_expert if moe else model.d_ff
        up = (2 if model.mlp == "gated" else 1) * width
        touched = np.maximum(self.experts_touched(rows * ep), 1.0) if moe else np.ones_like(rows)
        mlp_rows = np.maximum(rows * ep * model.experts_per_token / touched, 1.0) if moe else rows
        split = 1 if expert_parallel and moe else tp
        groups = np.maximum(touched * split / (tp * ep), 1.0)
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
        return scalar_or_array(self._held(context) * self.kv_elements_per_layer() * dtype_bytes(dtype))

    def _windows(self) -> tuple[tuple[float, int], ...]:
        """(window, how many layers have it) for each distinct window (0: global attention), found once."""
        if "_window_groups" not in self.__dict__:
            values, counts = np.unique(self.windows, return_counts=True)
            object.__setattr__(self, "_window_groups", tuple(zip(values.tolist(), counts.tolist())))
        return self.__dict__["_window_groups"]

    def _held(self, context: np.ndarray) -> np.ndarray:
        """Tokens the layers' caches hold at ``context``, summed over the layers: each at most its window."""
        return sum(
            layers * (np.minimum(context, window) if window > 0 else context) for window, layers in self._windows()
        )

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

    def kept_activation_bytes(self, dropout: bool = False, recompute: str = "none") -> tuple[float, float, float]:
        """Bytes one token keeps per layer for the backward pass (``kept_activation_bytes`` at this model's
        widths, the MLP's averaged over the layers where they differ; an MLA layer keeps its expanded keys and
        values): (kept whole, split by tensor parallelism, per attended token). Under ``up-projections``
        recomputation the norms' outputs are not kept, and an MLA layer keeps its query latent and its key-value
        latent in place of the expanded queries, keys and values."""
        model = self._structured()
        q_width, kv_width = self.q_width, self.kv_width
        if model.mla is not None:
            kv_width = model.n_heads * (model.mla.qk_head_dim + model.mla.v_head_dim) / 2
            if recompute == "up-projections":  # Q's latent beside the attention output; K and V's latent
                q_width = ((model.mla.q_lora_rank or model.d_model) + q_width) / 2
                kv_width = model.mla.cache_width / 2
        whole, split, scores = kept_activation_bytes(
            model.d_model, q_width, kv_width, model.n_heads, self.mlp_width, model.mlp, model.norms_per_layer, dropout
        )
        if recompute == "up-projections":
            whole = whole - recomputed_norm_bytes(model.d_model)
        return whole, split, scores

    # --- what each parallel axis moves, elements per token ---------------------------------

    def tp_elements_per_token(self) -> float:
        """Elements one tensor-parallel all-reduce carries per token (``tp_allreduces_per_layer`` a layer a pass),
        or a pipeline stage sends across its boundary each way: the d-wide hidden state."""
        return float(self.d_model)

    @property
    def tp_allreduces_per_layer(self) -> int:
        """Tensor-parallel all-reduces per layer per pass: Megatron's two, or one for a parallel block."""
        return TP_ALLREDUCES_PER_PARALLEL_LAYER if self.model.parallel_block else TP_ALLREDUCES_PER_LAYER

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

    def ep_remote_elements_per_token(self, domains: int) -> float:
        """Elements one expert-parallel dispatch sends across the scale-out network per token per MoE layer
        (averaged over all layers) when the group spans ``domains`` nodes, each holding 1/domains of the experts, and
        a token goes once to each node that holds one of its experts, to be forwarded inside it (DeepEP's
        hierarchical dispatch; DeepSeek-AI 2024, arXiv:2412.19437, Sec. 3.2.2): its d-wide state times the remote
        nodes it touches. Under balanced routing a node misses all k of a token's experts with probability
        C(E - E/n, k) / C(E, k); group-limited routing (``ModelShape.groups_per_token``) caps the nodes touched."""
        model = self.model
        if not model.is_moe or domains <= 1:
            return 0.0
        experts, chosen = model.n_experts, model.experts_per_token
        elsewhere = experts - experts / domains
        missed = float(np.prod((elsewhere - np.arange(chosen)) / (experts - np.arange(chosen))).clip(0.0))
        touched = domains * (1.0 - missed)
        if model.expert_groups:
            touched = min(touched, domains, model.groups_per_token * max(1.0, domains / model.expert_groups))
        remote = touched * (1.0 - 1.0 / domains)
        return float(remote * self.d_model * self.n_moe_layers / self.n_layers)

    pp_elements_per_token = tp_elements_per_token
