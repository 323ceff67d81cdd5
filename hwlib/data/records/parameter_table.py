"""The transformer table's first half: a model's widths, its layer kinds and its parameters by part.

``TransformerTable`` (``hwlib.data.records.transformer_table``) builds on it with what a step computes and moves.
Chapter :ref:`ch-counting`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hwlib._checks import Number
from hwlib.data.records.layer_rules import MATMULS_PER_MLP, NORM_VECTORS

if TYPE_CHECKING:  # the table is built by ModelShape.table()
    from hwlib.data.records.model_shape import ModelShape


@dataclass(frozen=True)
class ParameterTable:
    """What one model holds: its widths, its layer kinds and its parameters by part.

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
        if not isinstance(active, bool):
            raise TypeError(f"active must be True or False, got {active!r}")
        counted = self.__dict__.setdefault("_params", {})
        if active not in counted:
            object.__setattr__(self, "_params", {**counted, active: self._count_params(active)})
        return dict(self.__dict__["_params"][active])

    def _count_params(self, active: bool) -> dict[str, float]:
        model = self._structured()
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
