"""The shape of a transformer and every count that follows from it: parameters, FLOPs per token, bytes.

One :class:`ModelShape` describes a decoder-only model: widths, layer count, query and key-value
heads and their size, the MLP's kind ("gelu": two matrices, up and down; "gated": three, as in
SwiGLU) and width, the vocabulary and whether the output head shares the embedding, biases,
norms, learned positions, and mixture-of-experts fields. Counting from the shape:

* parameters per layer: attention d n_h d_h (Q) + 2 d n_kv d_h (K, V) + n_h d_h d (output), plus
  biases; a dense MLP of 2 or 3 matrices of d x d_ff, or n_e experts of 3 d d_ff_e each plus a
  d x n_e router; the norms' weights (and biases for LayerNorm). Embeddings V d, an untied output
  head another V d, learned positions n_pos d, a final norm (Vaswani et al. 2017; Shazeer 2020,
  "GLU variants improve Transformer", arXiv:2002.05202; Jiang et al. 2024, "Mixtral of Experts",
  arXiv:2401.04088);
* forward FLOPs per token: 2 per matmul parameter that the token uses (every layer's attention and
  MLP weights, only the chosen experts of an MoE, and the output head; the embedding lookup costs no
  FLOPs) plus the attention scores 4 n_h d_h per layer per token attended to (Q K^T and the weighted
  sum of V). Training (forward + backward) is three times the forward (Kaplan et al. 2020, Sec. 2.1).

The source documents' transformer (12 d^2 parameters and 72 d^2 T training FLOPs per layer) is the
special case of a GELU MLP of width 4d, multi-head attention, no biases and no norms. Explained in
the chapter :ref:`ch-kv-cache` and, for document 002's special case, :ref:`ch-compute-and-commute`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hwlib._checks import one_of
from hwlib.data.records.latent_attention import LatentAttention
from hwlib.data.records.quantities import READ_ON, Sourced
from hwlib.data.records.transformer_table import TransformerTable
from hwlib.units import dtype_bytes

MLP_KINDS = ("gelu", "gated")
"""MLP kinds: "gelu" has an up and a down matrix (GPT, Falcon); "gated" adds a gate (SwiGLU, GeGLU)."""
NORMS = ("rmsnorm", "layernorm", "none")
"""Norm kinds: RMSNorm has a weight per channel, LayerNorm a weight and a bias, "none" nothing."""
WINDOW_KINDS = ("sliding", "chunked")
"""How a windowed layer caps attention: "sliding", each token sees the last w tokens (Mistral, Gemma 2 and 3);
"chunked", each token sees the tokens of its own w-token chunk (Llama 4's local layers)."""
QK_NORMS = ("none", "head", "full")
"""Norms on queries and keys before attention: none; one weight per head dimension shared by the heads (Qwen3,
Gemma 3); or over the whole query and key widths (OLMo 2)."""
HEADS = ("lm", "classifier", "none")
"""What sits on the last hidden state: the output head over the vocabulary, a classifier of ``n_labels`` outputs
(a reward model, ``...ForSequenceClassification``), or nothing (a headless ``...Model``)."""


def _whole(name: str, value: object, minimum: int = 1, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        allowed = f"a whole number >= {minimum}" + (" or None" if optional else "")
        raise ValueError(f"ModelShape.{name} must be {allowed}, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class ModelShape:
    """The shape of one decoder-only transformer (see the module docstring for what each count includes).

    ``d_model``, ``n_heads``, ``d_ff``, ``mlp`` and ``vocab`` may be None where a source gives only the
    KV geometry (document 000): the KV counts work, the parameter and FLOP counts raise a ValueError.
    ``n_experts`` = 0 means a dense MLP; an MoE routes each token to ``experts_per_token`` of
    ``n_experts`` experts of width ``d_ff_expert`` (plus ``n_shared_experts`` that every token uses, together
    ``d_ff_shared`` wide, default n_shared_experts x d_ff_expert, with a sigmoid gate where ``shared_expert_gate``;
    ``router_bias`` adds one bias per expert to the router; ``groups_per_token`` of ``expert_groups`` equal groups
    of experts are all a token's experts may come from, 0 without such a limit: DeepSeek's group-limited routing,
    "each token will be ensured to be sent to at most 4 nodes", arXiv:2412.19437, Sec. 2.1.2). ``moe_layers`` says
    per layer whether it is an MoE (empty: every layer of an MoE); the others are dense MLPs of width ``d_ff``
    (DeepSeek's first dense layers, Llama 4 Maverick's alternate ones). ``mla`` makes attention multi-head latent
    attention (:class:`LatentAttention`). ``windows`` gives per layer the tokens it attends to at most (0: all of them;
    empty: every layer global), capped the ``window_kind`` way. ``qk_norm`` (``QK_NORMS``), ``mlp_bias`` and
    ``head_bias`` add their weights. ``head`` (``HEADS``) is what sits on the last hidden state (``n_labels``
    outputs for a classifier). ``mtp_layers`` extra multi-token-prediction layers (DeepSeek-V3) are counted apart
    (``mtp_params``), as the publisher counts them; ``vision_params`` is a vision tower's count (stored, not run by
    the text steps).
    ``causal``: a token attends to itself and the tokens before it (every decoder here); False counts the whole
    score matrix, the source documents' convention; ``head_flops`` False leaves the output head's matmul out of
    the FLOPs, as their layer-by-layer counts do (its weights are still stored). ``parallel_block``: attention and
    the MLP read the same normed input and their outputs add (PaLM's "parallel layers"), so a tensor-parallel layer
    reduces once per pass, not twice. ``n_params`` is the published
    parameter count (a :class:`Sourced`), compared with ``params()`` in the tests. Chapter :ref:`ch-kv-cache`.
    """

    key: str = "custom"
    name: str = "custom model"
    n_layers: int
    d_model: int | None = None
    n_heads: int | None = None
    n_kv_heads: int
    head_dim: int
    d_ff: int | None = None
    mlp: str | None = None
    vocab: int | None = None
    tied_embeddings: bool = False
    n_experts: int = 0
    experts_per_token: int = 0
    n_shared_experts: int = 0
    d_ff_expert: int | None = None
    d_ff_shared: int | None = None
    shared_expert_gate: bool = False
    router_bias: bool = False
    expert_groups: int = 0
    groups_per_token: int = 0
    moe_layers: tuple[bool, ...] = ()
    mla: LatentAttention | None = None
    windows: tuple[int, ...] = ()
    window_kind: str = "sliding"
    qkv_bias: bool = False
    linear_bias: bool = False
    mlp_bias: bool = False
    head_bias: bool = False
    qk_norm: str = "none"
    norm: str = "rmsnorm"
    norms_per_layer: int = 2
    learned_positions: int = 0
    head: str = "lm"
    n_labels: int = 0
    mtp_layers: int = 0
    vision_params: int = 0
    causal: bool = True
    head_flops: bool = True
    parallel_block: bool = False
    n_params: Sourced | None = None
    source: str = ""
    read_on: str = READ_ON
    note: str = ""

    def __post_init__(self) -> None:
        for name in ("n_layers", "n_kv_heads", "head_dim"):
            _whole(name, getattr(self, name))
        for name in ("d_model", "n_heads", "d_ff", "vocab", "d_ff_expert"):
            _whole(name, getattr(self, name), optional=True)
        for name in (
            "n_experts",
            "experts_per_token",
            "n_shared_experts",
            "expert_groups",
            "groups_per_token",
            "norms_per_layer",
            "learned_positions",
            "n_labels",
            "mtp_layers",
            "vision_params",
        ):
            _whole(name, getattr(self, name), minimum=0)
        _whole("d_ff_shared", self.d_ff_shared, optional=True)
        for name in (
            "tied_embeddings",
            "qkv_bias",
            "linear_bias",
            "mlp_bias",
            "head_bias",
            "shared_expert_gate",
            "router_bias",
            "causal",
            "head_flops",
            "parallel_block",
        ):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"ModelShape.{name} must be True or False, got {getattr(self, name)!r}")
        if self.mlp is not None:
            one_of("ModelShape.mlp", self.mlp, MLP_KINDS)
        one_of("ModelShape.norm", self.norm, NORMS)
        one_of("ModelShape.window_kind", self.window_kind, WINDOW_KINDS)
        one_of("ModelShape.qk_norm", self.qk_norm, QK_NORMS)
        one_of("ModelShape.head", self.head, HEADS)
        if (self.head == "classifier") != (self.n_labels > 0):
            raise ValueError(f"ModelShape.n_labels must be > 0 exactly for a classifier head, got {self.n_labels!r}")
        if self.mla is not None and not isinstance(self.mla, LatentAttention):
            raise TypeError(f"ModelShape.mla must be a LatentAttention or None, got {self.mla!r}")
        for name, per_layer, kind in (("windows", self.windows, int), ("moe_layers", self.moe_layers, bool)):
            if not isinstance(per_layer, tuple) or (per_layer and len(per_layer) != self.n_layers):
                raise ValueError(f"ModelShape.{name} must be a tuple of one entry per layer ({self.n_layers}) or ()")
            for value in per_layer:
                if kind is bool and not isinstance(value, bool):
                    raise TypeError(f"ModelShape.moe_layers must hold True or False, got {value!r}")
                if kind is int:
                    _whole(f"{name} entry", value, minimum=0)
        if self.moe_layers and not self.n_experts:
            raise ValueError("ModelShape.moe_layers needs n_experts > 0")
        if self.n_experts and self.moe_layers and not all(self.moe_layers) and self.d_ff is None:
            raise ValueError("ModelShape.d_ff is needed for the dense layers of an MoE whose moe_layers has False")
        if self.n_heads is not None and self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"ModelShape.n_heads ({self.n_heads}) must be a multiple of n_kv_heads ({self.n_kv_heads})"
            )
        if self.n_experts:
            if not 1 <= self.experts_per_token <= self.n_experts:
                raise ValueError(
                    f"ModelShape.experts_per_token must be in 1..n_experts ({self.n_experts}), "
                    f"got {self.experts_per_token!r}"
                )
            if self.d_ff_expert is None:
                raise ValueError("ModelShape.d_ff_expert is needed when n_experts > 0")
            if self.expert_groups and (
                self.n_experts % self.expert_groups or not 1 <= self.groups_per_token <= self.expert_groups
            ):
                raise ValueError(
                    f"ModelShape.expert_groups ({self.expert_groups}) must divide n_experts ({self.n_experts}) and "
                    f"groups_per_token ({self.groups_per_token}) be in 1..expert_groups"
                )
            if self.groups_per_token and not self.expert_groups:
                raise ValueError("ModelShape.groups_per_token needs expert_groups > 0")
        elif self.experts_per_token or self.n_shared_experts or self.d_ff_shared or self.expert_groups:
            raise ValueError(
                "ModelShape.experts_per_token, n_shared_experts, d_ff_shared and expert_groups need n_experts > 0"
            )
        if self.n_params is not None and not isinstance(self.n_params, Sourced):
            raise TypeError(f"ModelShape.n_params must be a Sourced count or None, got {self.n_params!r}")

    # --- what the shape says ----------------------------------------------------------

    @property
    def attention(self) -> str:
        """'MLA' (multi-head latent attention), 'MHA' (one KV head per query head), 'MQA' (one KV head), 'GQA'
        (between), or 'not stated'."""
        if self.mla is not None:
            return "MLA"
        if self.n_heads is None:
            return "not stated"
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    @property
    def published_params(self) -> float | None:
        """The parameter count its source publishes (``n_params``), or None."""
        return None if self.n_params is None else float(self.n_params.value)

    def _require_structure(self) -> None:
        missing = [name for name in ("d_model", "n_heads", "mlp", "vocab") if getattr(self, name) is None]
        if self.n_experts == 0 and self.d_ff is None:
            missing.append("d_ff")
        if missing:
            raise ValueError(
                f"model {self.name!r} gives no {', '.join(missing)}: its parameter and FLOP counts "
                f"need them (its published count is model.published_params)"
            )

    # --- parameters ------------------------------------------------------------------

    def table(self) -> TransformerTable:
        """The one transformer table of this shape: every count per layer and per part
        (``hwlib.data.records.transformer_table``). Chapter :ref:`ch-counting`."""
        cached = self.__dict__.get("_table")
        if cached is None:  # built once: a planner reads it thousands of times
            cached = TransformerTable(self)
            object.__setattr__(self, "_table", cached)
        return cached

    def param_breakdown(self, active: bool = False) -> dict[str, float]:
        """Parameters by part: "embedding", "positions", "attention", "mlp" (dense) or "experts" and "router"
        (MoE), "norms", "lm_head". ``active=True`` counts only the experts one token uses."""
        self._require_structure()
        return self.table().params(active)

    def params(self, active: bool = False) -> float:
        """Parameter count from the shape; ``active=True``: those one token uses (an MoE's chosen experts)."""
        return sum(self.param_breakdown(active).values())

    def matmul_params(self, active: bool = True) -> float:
        """Weights a token is multiplied by (``TransformerTable.matmul_params``)."""
        self._require_structure()
        return self.table().matmul_params(active)

    def flops_per_token(self, context_len: object = 0, training: bool = False, causal: bool | None = None) -> object:
        """Matmul FLOPs per token: 2 per weight it uses plus 4 n_h d_h L per token it attends to; x3 with ``training``.

        ``context_len`` (a number or an array) is the sequence length s: causally the tokens of a
        sequence attend on average to (s + 1) / 2 tokens, otherwise to all s; ``causal`` defaults to the
        model's own (``ModelShape.causal``). Element-wise work is not counted.
        """
        self._require_structure()
        return self.table().flops_per_token(context_len, training, self.causal if causal is None else causal)

    def weight_bytes(self, dtype: str = "bf16") -> float:
        """Bytes of all weights stored in ``dtype`` (quantization scales not counted): ``params()``, or the
        published count where the shape gives only its KV geometry (document 000's records)."""
        size = dtype_bytes(dtype)
        if self.d_model is None and self.published_params is not None:
            return self.published_params * size
        return self.params() * size

    def kv_bytes_per_token(self, dtype: str = "bf16") -> float:
        """KV-cache bytes one token adds while every layer still holds it: 2 x n_layers x n_kv_heads x head_dim x
        element size (an MLA layer caches one latent, ``LatentAttention.cache_width``); windowed layers stop
        growing past their window (``kv_bytes``)."""
        return self.table().kv_bytes_per_token(dtype)

    def kv_bytes(self, context_len: object, dtype: str = "bf16") -> object:
        """KV-cache bytes of one sequence of ``context_len`` tokens: each layer holds at most its window."""
        return self.table().kv_bytes(context_len, dtype)

    def mtp_params(self) -> float:
        """Parameters of the multi-token-prediction layers (``mtp_layers``), counted apart from ``params()``."""
        return self.table().mtp_params()

    def __str__(self) -> str:
        count = self.published_params or (self.params() if self.d_model else None)
        size = f", {count / 1e9:.2f}B params" if count else ""
        return (
            f"{self.name}: {self.n_layers} layers, {self.n_kv_heads} KV heads x {self.head_dim}, {self.attention}{size}"
        )

    @classmethod
    def from_hf_config(
        cls,
        config: Mapping | str,
        *,
        key: str = "custom",
        name: str | None = None,
        n_params: Sourced | None = None,
        source: str = "",
        text_only: bool = False,
    ) -> ModelShape:
        """A ModelShape from a Hugging Face ``config.json`` (a dict or a path to the file).

        Reads the ``model_type`` values of ``hwlib.data.records.hf_families.FAMILIES`` (and Gemma 3's and Llama 4's
        multimodal configs; ``text_only`` reads the language model alone where hwlib does not count the vision
        tower). Keys that change a count but are not modelled raise a ValueError naming them; keys that change no
        count are ignored. Chapter :ref:`ch-counting`.
        """
        from hwlib.data.records.hf_config import shape_fields

        if not isinstance(text_only, bool):
            raise TypeError(f"text_only must be True or False, got {text_only!r}")
        fields = shape_fields(config, text_only)
        read_name = fields.pop("name", key)
        return cls(key=key, name=name or read_name, n_params=n_params, source=source, **fields)
