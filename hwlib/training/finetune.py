"""LoRA and QLoRA fine-tuning as an option of the training step (``hw.train_step(..., adapter=hw.LoRA(...))``).

A frozen base is stored at ``base_dtype`` and trains nothing; low-rank adapters train beside its linear layers
(Hu et al. 2022, arXiv:2106.09685, Sec. 4.1: h = W_0 x + B A x, so a d_in x d_out matrix gains r (d_in + d_out)
parameters). Per step:

* **memory**: the base at its dtype (bf16: 2 B a weight; int8: 1 B plus one fp32 constant per row, LLM.int8()'s
  vector-wise quantization; NF4: QLoRA's 4.127 bits, 4-bit weights and their double-quantized constants,
  Dettmers et al. 2023, arXiv:2305.14314, Sec. 3) for the blocks' linear layers, bf16 for the embedding, head and
  norms; the adapters' training state under the step's ``recipe`` (weights, gradients, master copy, optimizer
  state); no gradients, master copy or optimizer state for the base. Activations are full training's: the backward
  pass runs through the frozen base, and the adapters on its linear layers need those layers' inputs.
* **FLOPs**: the base's forward (2 P a token, P its matmul weights) and its input gradients (2 P) but no weight
  gradients: 4 P instead of 6 P; the adapters' own 6 P_a (forward, input and weight gradients); the attention's
  three passes as in full training; recomputation runs the forward again. MFU counts these FLOPs, the ones LoRA
  needs, without recomputation.
* **dequantization** (int8, NF4): QLoRA dequantizes its storage type to bf16 for the forward and the backward
  pass (Sec. 3): each pass (and a full recomputation's) reads the local base at its dtype and writes it in bf16,
  once per micro-batch (the step's ``dequantize`` part, HBM bytes).
* **collectives**: data parallelism reduces the adapters' gradients alone; FSDP gathers the base at its dtype.

Dense models with standard attention only; an MoE's experts or a latent-attention model raise a ValueError.
Chapters :ref:`ch-hbm-budgets` and :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hwlib._checks import describe, one_of
from hwlib.data import finetuning
from hwlib.data.records import TRAINING_PARTS, ModelShape, TrainingRecipe
from hwlib.data.records.layer_rules import FORWARD_FLOPS_PER_PARAM, RECOMPUTE, TRAINING_OVER_FORWARD
from hwlib.memory import training_state_breakdown
from hwlib.training.fp8 import BF16_BYTES, FP8_BYTES, FP8Scaling, linear_params

LORA_TARGETS = {
    "all-linear": ("q", "k", "v", "o", "gate", "up", "down"),
    "attention": ("q", "k", "v", "o"),
    "qv": ("q", "v"),
}
"""The linear layers each ``LoRA.targets`` adapts: every one of a block (QLoRA, Sec. 4: "LoRA on all linear
transformer block layers are required to match full finetuning performance"), attention's four projections, or
W_q and W_v (Hu et al., Sec. 7.1). The embedding and the output head are never adapted (QLoRA's code drops
lm_head)."""
BASE_DTYPES = ("bf16", "int8", "nf4")
"""How a LoRA base is stored: bf16, int8 (LLM.int8()) or NF4 with double quantization (QLoRA)."""
BITS_PER_BYTE = 8
LORA_BASE_PASSES = 2
"""Passes of a step through the frozen base's weights: the forward and the input gradients (no weight gradients)."""
DEQUANTIZED_PASSES = {"none": 2, "up-projections": 2, "selective": 2, "full": 3}
"""Passes per micro-batch that dequantize a quantized base: forward, backward, and a full recomputation's forward."""


@dataclass(frozen=True)
class LoRA:
    """Low-rank adapters of ``rank`` on the ``targets`` linear layers (``LORA_TARGETS``) of a frozen base stored
    at ``base_dtype`` (``BASE_DTYPES``; "nf4" is QLoRA). ``hw.train_step(..., adapter=hw.LoRA(...))`` prices the
    fine-tuning step; its ``recipe`` holds the adapters' training state. Chapters :ref:`ch-hbm-budgets` and
    :ref:`ch-sharding`."""

    rank: int = 16
    targets: str = "all-linear"
    base_dtype: str = "bf16"

    def __post_init__(self) -> None:
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank < 1:
            raise ValueError(f"LoRA.rank must be a whole number >= 1, got {self.rank!r}")
        one_of("LoRA.targets", self.targets, LORA_TARGETS)
        one_of("LoRA.base_dtype", self.base_dtype, BASE_DTYPES)

    @property
    def quantized(self) -> bool:
        """Whether the base is stored below bf16 and dequantized for each pass."""
        return self.base_dtype != "bf16"


def require_adapter(adapter: object) -> LoRA | None:
    """``adapter`` itself if it is a ``LoRA`` (or None), else a TypeError naming the parameter."""
    if adapter is not None and not isinstance(adapter, LoRA):
        raise TypeError(f"adapter must be an hw.LoRA(...) or None, got {describe(adapter)}")
    return adapter


def _matrices(model: ModelShape) -> dict[str, tuple[float, float]]:
    """(d_in, d_out) of each linear layer of one block of a dense model with standard attention."""
    if model.is_moe or model.mla is not None:
        kind = "a mixture of experts" if model.is_moe else "latent attention (MLA)"
        raise ValueError(f"adapter: LoRA is modelled for dense models with standard attention; {model.name} has {kind}")
    table = model.table()
    d, q, kv, width = table.d_model, table.q_width, table.kv_width, model.d_ff
    found = {"q": (d, q), "k": (d, kv), "v": (d, kv), "o": (q, d), "up": (d, width), "down": (width, d)}
    if model.mlp == "gated":
        found["gate"] = (d, width)
    return found


def adapter_params(model: ModelShape, adapter: LoRA) -> float:
    """Parameters of ``adapter`` on ``model``: r (d_in + d_out) for each targeted matrix of each layer (Hu et al.
    2022, Sec. 4.1). Chapter :ref:`ch-hbm-budgets`."""
    matrices = _matrices(model)
    per_layer = sum(adapter.rank * sum(matrices[name]) for name in LORA_TARGETS[adapter.targets] if name in matrices)
    return float(model.n_layers * per_layer)


def base_linear_bytes(model: ModelShape, adapter: LoRA) -> float:
    """Bytes of the frozen base's linear layers at ``adapter.base_dtype`` (B): 2 a weight in bf16; int8's byte and
    one fp32 constant per row of each matrix; NF4's 4.127 bits (``finetuning.NF4_BITS_PER_PARAM``). Chapter
    :ref:`ch-hbm-budgets`."""
    linear = linear_params(model)
    if adapter.base_dtype == "bf16":
        return linear * BF16_BYTES
    if adapter.base_dtype == "nf4":
        return linear * finetuning.NF4_BITS_PER_PARAM.value / BITS_PER_BYTE
    rows = model.n_layers * sum(d_out for _, d_out in _matrices(model).values())
    bits = linear * finetuning.INT8_BITS_PER_PARAM.value + rows * finetuning.INT8_ROW_CONSTANT_BITS.value
    return bits / BITS_PER_BYTE


def lora_state(model: ModelShape, adapter: LoRA, recipe: str | TrainingRecipe) -> dict[str, float]:
    """The training state of the whole model by part (``TRAINING_PARTS``, B) under ``adapter``: the frozen base's
    weights (its linear layers at their dtype, the rest in bf16) beside the adapters' weights, and the adapters'
    gradients, master copy and optimizer state under ``recipe``. Chapter :ref:`ch-hbm-budgets`."""
    adapters = training_state_breakdown(adapter_params(model, adapter), recipe)
    base = base_linear_bytes(model, adapter) + (model.params() - linear_params(model)) * BF16_BYTES
    state = {name: float(adapters[name]) for name in TRAINING_PARTS}
    state["weights"] += base
    return state


def trained_share(model: ModelShape, adapter: LoRA | None) -> float:
    """Parameters a step trains, as a share of the model's: 1 in full training, the adapters' under LoRA."""
    return 1.0 if adapter is None else adapter_params(model, adapter) / model.params()


def gathered_bytes_per_param(model: ModelShape, adapter: LoRA | None, fp8: FP8Scaling | None) -> float:
    """Bytes per model parameter FSDP gathers (B): bf16 weights; a LoRA base at its dtype and its adapters in bf16;
    the linear layers in fp8 where the FP8 recipe gathers in fp8. Chapter :ref:`ch-sharding`."""
    in_fp8 = fp8 is not None and fp8.fp8_all_gather
    if adapter is None and not in_fp8:
        return BF16_BYTES
    linear, params = linear_params(model), model.params()
    if adapter is not None and adapter.quantized:
        linear_bytes = base_linear_bytes(model, adapter)
    else:
        linear_bytes = linear * (FP8_BYTES if in_fp8 else BF16_BYTES)
    extra = 0.0 if adapter is None else adapter_params(model, adapter) * BF16_BYTES
    return (linear_bytes + (params - linear) * BF16_BYTES + extra) / params


def rescale_collectives(found: list, gradient_parts: tuple, gather_part: str, trained: float, gathered: float) -> list:
    """``found`` with the collectives of ``gradient_parts`` carrying ``trained`` of their bytes (LoRA reduces the
    adapters' gradients alone) and the all-gathers of ``gather_part`` ``gathered`` of theirs (a quantized base,
    fp8 all-gathers). Chapter :ref:`ch-sharding`."""
    scaled = []
    for collective in found:
        if collective.part == gather_part and collective.kind == "all-gather":
            collective = replace(collective, n_bytes=collective.n_bytes * gathered)
        elif collective.part in gradient_parts:
            collective = replace(collective, n_bytes=collective.n_bytes * trained)
        scaled.append(collective)
    return scaled


def step_flops(
    model: ModelShape, tokens: float, attention: float, recompute: str, adapter: LoRA | None
) -> tuple[float, float]:
    """(FLOPs a step needs, FLOPs recomputed) for ``tokens`` tokens whose attention takes ``attention`` forward
    FLOPs: full training's 3 x forward, or under LoRA the base's forward and input gradients (4 P a token), the
    adapters' 6 P_a and the attention's three passes. Chapter :ref:`ch-sharding`."""
    one_of("recompute", recompute, RECOMPUTE)
    table = model.table()
    if adapter is None:
        forward = float(table.forward_flops(tokens, attention))
        return TRAINING_OVER_FORWARD * forward, float(table.recompute_flops(tokens, attention, recompute))
    base = float(table.weight_flops(tokens))
    adapters = FORWARD_FLOPS_PER_PARAM * adapter_params(model, adapter) * tokens
    needed = LORA_BASE_PASSES * base + TRAINING_OVER_FORWARD * (adapters + attention)
    up = float(table.recompute_flops(tokens, attention, "up-projections"))
    recomputed = {"none": 0.0, "up-projections": up, "selective": attention, "full": base + adapters + attention}
    return float(needed), float(recomputed[recompute])


def dequantize_bytes(
    model: ModelShape, adapter: LoRA | None, local_share: float, micro_batches: int, recompute: str
) -> float:
    """HBM bytes one chip moves dequantizing its ``local_share`` of a quantized base in a step of
    ``micro_batches`` micro-batches: each pass reads the base at its dtype and writes it in bf16 (QLoRA, Sec. 3);
    0 for a bf16 base. Chapter :ref:`ch-sharding`."""
    if adapter is None or not adapter.quantized:
        return 0.0
    stored = base_linear_bytes(model, adapter)
    per_pass = (stored + linear_params(model) * BF16_BYTES) * local_share
    return float(micro_batches * DEQUANTIZED_PASSES[recompute] * per_pass)
