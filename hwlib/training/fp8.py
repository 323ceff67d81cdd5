"""What FP8 training costs beyond the fp8 matmul peak (``hw.train_step(..., dtype="fp8", fp8=...)``).

``dtype="fp8"`` alone prices the matmuls at the chip's fp8 peak (the measured runs' records do so). ``fp8=`` names
how the tensors are scaled (``FP8_SCALINGS``) and adds what that costs:

* **casts**: every matmul operand is cast from bf16 to fp8 before its GEMM (Micikevicius et al. 2022,
  arXiv:2209.05433, Sec. 4; torchtitan's float8 docs): each layer's matmul inputs in the forward pass (again under
  full recomputation) and the gradients of its outputs in the backward pass. A cast reads the bf16 tensor and
  writes its fp8 copy, 2 + 1 B an element; dynamic per-tensor scaling reads it once more first for its amax,
  +2 B (torchtitan: "Scales are calculated from max(abs) of a high precision tensor"); Transformer Engine's delayed
  scaling takes the scale from earlier iterations' amax, and DeepSeek-V3 finds each 1x128 tile's amax inside the
  cast, which also writes one fp32 scale per tile (+4/128 B). The bytes are the step's ``fp8 scaling`` part.
* **weights**: the bf16 weights (and the fp32 master) stay; they are cast to fp8 in each micro-batch's forward
  and again in its backward pass (torchtitan; ``force_recompute_fp8_weight_in_bwd``), or, with Transformer Engine,
  once a step into an fp8 copy and its transpose that stay in HBM across the micro-batches (2 B a weight).
* **FP8 all-gathers**: torchtitan's tensorwise recipe casts each weight shard before FSDP gathers it, so the
  gathers move 1 B a linear-layer weight instead of 2 (``enable_fsdp_float8_all_gather``).
* **FP8 activations and dispatch** (DeepSeek-V3's recipe, Sec. 3.3.3): "it is a natural choice to cache
  activations in FP8 format for the backward pass of the Linear operator", the inputs of the MoE's SwiGLU among
  them, so the MLP's kept hidden tensors take 1 B an element and its scale; and "we quantize the activation before
  MoE up-projections into FP8 and then apply dispatch components", the gradient before the down-projections too,
  while the "combine components" stay in bf16: half of the expert all-to-alls move fp8.

The linear layers are the transformer blocks' (attention's projections, the MLP or its experts): the embedding,
the output head, the router and the norms stay in bf16, as torchtitan's converter and QLoRA's quantizer leave them.
The per-step all-reduce of the weights' scales is left out (one small all-reduce). Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import describe
from hwlib.data import finetuning
from hwlib.data.records import ModelShape
from hwlib.data.records.layer_rules import HIDDEN_TENSORS_PER_MLP, KEPT_ACTIVATION_BYTES
from hwlib.units import dtype_bytes

BF16_BYTES, FP8_BYTES = dtype_bytes("bf16"), dtype_bytes("fp8")
LINEAR_PARTS = ("attention", "mlp", "experts", "shared experts")
"""The parameter parts (``ModelShape.param_breakdown``) that are the transformer blocks' linear layers."""


@dataclass(frozen=True)
class FP8Scaling:
    """How an FP8 recipe scales its tensors: ``amax_reads`` extra reads of each bf16 tensor to find its amax before
    the cast, ``scale_bytes_per_element`` of scales written beside it, ``cached_weight_copies`` fp8 copies of each
    weight held across a step's micro-batches (0: cast when used), and whether FSDP gathers the weights in fp8;
    ``cached_mlp_bytes`` and ``dispatch_bytes``: bytes an element of the MLP's kept hidden tensors and of an expert
    dispatch take (bf16's 2 unless the recipe keeps and sends them in fp8). Chapter :ref:`ch-sharding`."""

    key: str
    label: str
    amax_reads: int
    scale_bytes_per_element: float
    cached_weight_copies: int
    fp8_all_gather: bool
    source: str
    cached_mlp_bytes: float = 2.0
    dispatch_bytes: float = 2.0

    @property
    def cast_bytes(self) -> float:
        """HBM bytes one element's cast moves: its bf16 value read (once more per amax read), its fp8 value and
        scales written (B/element)."""
        return (1 + self.amax_reads) * BF16_BYTES + FP8_BYTES + self.scale_bytes_per_element


FP8_SCALINGS = {
    "tensorwise": FP8Scaling(
        "tensorwise",
        "dynamic per-tensor scaling, fp8 FSDP all-gathers (torchtitan, torchao)",
        1,
        0.0,
        0,
        True,
        f"{finetuning.TORCHTITAN_FLOAT8}; {finetuning.FP8_FORMATS}",
    ),
    "delayed": FP8Scaling(
        "delayed",
        "delayed per-tensor scaling, fp8 weights cached (Transformer Engine)",
        0,
        0.0,
        2,
        False,
        f"{finetuning.TRANSFORMER_ENGINE}; {finetuning.FP8_FORMATS}",
    ),
    "blockwise": FP8Scaling(
        "blockwise",
        "1x128 activation tiles and 128x128 weight blocks, amax found in the cast (DeepSeek-V3)",
        0,
        dtype_bytes("fp32") / finetuning.FP8_TILE_ELEMENTS.value,
        0,
        False,
        finetuning.DEEPSEEK_V3_FP8,
        cached_mlp_bytes=FP8_BYTES + dtype_bytes("fp32") / finetuning.FP8_TILE_ELEMENTS.value,
        dispatch_bytes=FP8_BYTES + dtype_bytes("fp32") / finetuning.FP8_TILE_ELEMENTS.value,
    ),
}
"""The FP8 recipes ``hw.train_step(fp8=...)`` takes, by key."""


def fp8_scaling(fp8: object, dtype: str) -> FP8Scaling | None:
    """The recipe ``fp8`` names (a key of ``FP8_SCALINGS`` or an ``FP8Scaling``; None: none), which needs
    ``dtype="fp8"`` matmuls; else a ValueError or TypeError naming the parameter. Chapter :ref:`ch-sharding`."""
    if fp8 is None:
        return None
    if isinstance(fp8, str):
        if fp8 not in FP8_SCALINGS:
            raise ValueError(f"fp8 must be one of {tuple(FP8_SCALINGS)}, an FP8Scaling or None, got {fp8!r}")
        fp8 = FP8_SCALINGS[fp8]
    if not isinstance(fp8, FP8Scaling):
        raise TypeError(f"fp8 must be one of {tuple(FP8_SCALINGS)}, an FP8Scaling or None, got {describe(fp8)}")
    if dtype != "fp8":
        raise ValueError(f"fp8={fp8.key!r} prices FP8 training's scaling: it needs dtype='fp8', got dtype={dtype!r}")
    return fp8


def linear_params(model: ModelShape) -> float:
    """Parameters of the transformer blocks' linear layers (``LINEAR_PARTS``): what FP8 training casts and a QLoRA
    base quantizes. Chapter :ref:`ch-sharding`."""
    parts = model.param_breakdown()
    return float(sum(parts.get(name, 0.0) for name in LINEAR_PARTS))


def matmul_operand_elements(model: ModelShape) -> tuple[float, float]:
    """Elements per token, all layers, that FP8 training casts: (the matmuls' inputs in a forward pass, the
    gradients of their outputs in a backward pass), from the transformer table's matmul inputs and outputs
    (``activation_elements_per_token``). Chapter :ref:`ch-sharding`."""
    table = model.table()
    both = table.activation_elements_per_token()
    inputs = table.n_layers * (2 * table.d_model + table.q_width + table.mlp_width)  # QKV, O, up/gate, down
    return float(inputs), float(both - inputs)


def scaling_bytes(
    model: ModelShape,
    fp8: FP8Scaling,
    tokens: float,
    micro_batches: int,
    local_linear: float,
    recompute: str,
    n_chips: int,
) -> float:
    """HBM bytes one chip's FP8 casts move in a step of ``tokens`` tokens over ``n_chips`` chips in
    ``micro_batches`` micro-batches, its ``local_linear`` linear-layer weights (after tensor and pipeline
    parallelism) cast per micro-batch and pass, or once a step into cached copies. Chapter :ref:`ch-sharding`."""
    inputs, outputs = matmul_operand_elements(model)
    forward_casts = 2.0 if recompute == "full" else 1.0  # full recomputation casts the inputs again
    activations = (forward_casts * inputs + outputs) * tokens / n_chips * fp8.cast_bytes
    if fp8.cached_weight_copies:  # once a step: read (and amax), write each copy
        weights = local_linear * ((1 + fp8.amax_reads) * BF16_BYTES + fp8.cached_weight_copies * FP8_BYTES)
    else:  # each micro-batch's forward and backward pass
        weights = 2.0 * micro_batches * local_linear * fp8.cast_bytes
    return float(np.asarray(activations + weights, dtype=float))


def fp8_activation_share(fp8: FP8Scaling | None, model: ModelShape, recompute: str) -> float:
    """Share of a layer's kept activations left when ``fp8`` keeps the MLP's hidden tensors in fp8 (1 with none, or
    under full recomputation, which keeps only the layer's input). Chapter :ref:`ch-hbm-budgets`."""
    if fp8 is None or recompute == "full":
        return 1.0
    whole, split, _ = model.table().kept_activation_bytes(recompute=recompute)
    mlp = KEPT_ACTIVATION_BYTES * HIDDEN_TENSORS_PER_MLP[model.mlp] * model.table().mlp_width
    return float(1.0 - (1.0 - fp8.cached_mlp_bytes / KEPT_ACTIVATION_BYTES) * mlp / (whole + split))


def dispatch_share(fp8: FP8Scaling | None) -> float:
    """Share of bf16's bytes an expert all-to-all moves under ``fp8``: the dispatch forward and the gradient sent
    back before the down-projections at ``dispatch_bytes``, the two combines in bf16. Chapter :ref:`ch-sharding`."""
    return 1.0 if fp8 is None else (fp8.dispatch_bytes + BF16_BYTES) / (2 * BF16_BYTES)


def cached_weight_bytes(fp8: FP8Scaling | None, local_linear: float) -> float:
    """Bytes of fp8 weight copies a chip holds across a step's micro-batches (B). Chapter :ref:`ch-hbm-budgets`."""
    return 0.0 if fp8 is None else float(fp8.cached_weight_copies * FP8_BYTES * local_linear)
