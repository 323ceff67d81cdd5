"""A training step on a mesh (``hwlib.training.mesh``): its work, priced by the one pricer (``hwlib.pricing``), and
its memory per chip. Per chip and step:

* **compute**: the model's training FLOPs (``ModelShape.flops_per_token``) and the forward again under
  recomputation (all of it for ``full``, the attention for ``selective``), at the chip's peak;
* **pipeline bubble**: the schedule's (``hwlib.training.schedules``);
* **collectives** (``collective_time_s`` on each group's topology) and what hides behind compute: the
  data-parallel gradient all-reduce in the last micro-batch's backward (the gradients are whole only then); FSDP's
  gathers and reduce-scatters behind the passes they serve; context parallelism's behind attention; tensor
  parallelism's all-reduces (two per layer per pass; Shoeybi et al. 2019) and the expert all-to-alls (each
  tensor-parallel rank dispatching 1/tp of the tokens) exposed in the forecast, hidden in the bound as the best
  implementations run them (collective matmuls: Wang et al., ASPLOS 2023, "Overlap Communication with Dependent
  Computation via Decomposition in Large Deep Learning Models", XLA's async collective fusion, Transformer Engine's
  ``tp_comm_overlap``; all-to-alls behind another micro-batch: DualPipe, arXiv:2412.19437, Sec. 3.2.1); pipeline
  sends on the critical path, but interleaved 1F1B's steady phase overlaps them (Megatron-Core's
  ``overlap_p2p_comm``: "The PP communications in pipeline fill and flush are still exposed", NeMo's guide
  "Communication Overlap", read 2026-12-06) and DualPipe hides them all.

Memory per chip: the training state after sharding over tp x pp (experts over ep as well) and over
the fsdp x cp ranks (ZeRO-3, as torchtitan folds the context-parallel ranks into its FSDP mesh; under
plain data parallelism, dp > 1 without fsdp, the weights stay whole on the context-parallel ranks); the
activations of the micro-batches in flight (``hw.activation_bytes``).
FSDP gathers the weights once per step where they fit beside the rest, else for every micro-batch's
forward and backward. Fine-tuning (LoRA, QLoRA), offload to the host and FP8 training's costs are options of the
same step (``hwlib.training.savers``).
Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hwlib._checks import one_of, scalar_or_array
from hwlib.data import assumptions
from hwlib.data.records import TRAINING_PARTS, Cluster, ModelShape, TrainingRecipe, require
from hwlib.data.records.layer_rules import RECOMPUTE, TRAINING_OVER_FORWARD
from hwlib.efficiency import Efficiency, fp8_expert_share, layer_quantization, require_efficiency
from hwlib.memory import usable_bytes
from hwlib.pricing import Part, Work, price
from hwlib.training.batch import split_batch
from hwlib.training.collectives import step_collectives
from hwlib.training.experts import ExpertKernel, expert_kernel_share
from hwlib.training.finetune import LoRA, step_flops
from hwlib.training.fp8 import BF16_BYTES, FP8Scaling, dispatch_share, fp8_activation_share
from hwlib.training.mesh import WIRE_BYTES, Mesh, accumulator_bytes, expert_split, fsdp_shards, routing_imbalance_of
from hwlib.training.savers import (
    HOST_PART,
    Offload,
    gathered_bytes,
    offload_memory,
    saved_state,
    saver_work,
    savers_of,
    update_bytes,
)
from hwlib.training.zero import ZERO_SHARDED, chip_bytes, zero_stage
from hwlib.units import dtype_bytes, element_dtype

STEP_PARTS = (
    "compute",
    "pipeline bubble",
    "tp all-reduce",
    "cp all-gather",
    "fsdp all-gather + reduce-scatter",
    "dp all-reduce",
    "pp send/recv",
    "ep all-to-all",
    HOST_PART,
)
"""The parts of a step's time: compute, the pipeline bubble, then each collective's exposed time (the host link's
copies under ``offload`` last)."""
ELEMENTWISE_PARTS = ("dequantize", "fp8 scaling", "optimizer step")
"""Work parts of HBM bytes beside the matmuls and attention (a quantized base's dequantization, FP8's casts, the
optimizer's update); the forecast reports them with the elementwise passes."""


@dataclass(frozen=True)
class TrainStep:
    """One optimizer step under a mesh: times (s), MFU, memory per chip (B) and whether it fits.

    ``comm_time_s`` and ``exposed_comm_time_s`` give each collective's time and the part of it that
    compute does not hide. ``reason`` says why the step does not fit ("" when it does). The ``forecast_*``
    fields price the same step at the efficiencies kernels reach (``hw.Efficiency``); ``forecast_parts_s``
    splits its time into ``hwlib.training.forecast.FORECAST_PARTS``; ``time_upper_s`` is the no-overlap bound. The
    step's choices: ``micro_batch_tokens`` per data-parallel rank, ``recompute``, ``zero`` over the dp ranks and
    ``interleave`` chunks per pipeline stage and its ``schedule`` ("" without a pipeline); ``host_memory_bytes``
    what ``offload`` keeps in host memory per chip. ``mfu`` counts the model's FLOPs (the attention's too);
    ``active_param_mfu`` 6 per active parameter per token, as MoE runs are often quoted (Kaplan et al. 2020's
    C = 6N). ``micro_batches``: per data-parallel rank and step. Chapters :ref:`ch-sharding` and :ref:`ch-forecast`.
    """

    mesh: Mesh
    n_chips: int
    time_s: float
    compute_time_s: float
    bubble_time_s: float
    comm_time_s: dict = field(default_factory=dict)
    exposed_comm_time_s: dict = field(default_factory=dict)
    tokens_per_s: float = 0.0
    mfu: float = 0.0
    hardware_flops_utilization: float = 0.0
    memory_parts: dict = field(default_factory=dict)
    memory_per_chip_bytes: float = 0.0
    usable_bytes: float = 0.0
    fits: bool = False
    reason: str = ""
    forecast_time_s: float = 0.0
    forecast_tokens_per_s: float = 0.0
    forecast_mfu: float = 0.0
    forecast_parts_s: dict = field(default_factory=dict)
    time_upper_s: float = 0.0
    micro_batch_tokens: float = 0.0
    recompute: str = "selective"
    zero: int = 0
    interleave: int = 1
    schedule: str = ""
    host_memory_bytes: float = 0.0
    active_param_mfu: float = 0.0
    micro_batches: int = 1

    @property
    def parts_s(self) -> dict[str, float]:
        """Seconds of each of ``STEP_PARTS`` in the bound; they sum to ``time_s``."""
        known = {"compute": self.compute_time_s, "pipeline bubble": self.bubble_time_s, **self.exposed_comm_time_s}
        return {name: known.get(name, 0.0) for name in STEP_PARTS}


def _memory(model, recipe, mesh, batch, recompute, chip, usable_fraction, zero, saved) -> tuple:
    """(bytes per chip by part, usable bytes, whether FSDP can keep the gathered weights for the whole step, bytes
    offloaded to the host) under the step's ``saved`` (``hwlib.training.savers.Savers``). Where it keeps them, the
    gathered weights are a part of their own."""
    in_flight = batch.pipeline.in_flight if batch.pipeline else 1  # the schedule's most loaded stage
    parts = chip_bytes(
        model,
        recipe,
        batch.seq_len,
        batch.micro_tokens / batch.seq_len,
        sharded=TRAINING_PARTS,
        shards=fsdp_shards(mesh),
        tp=mesh.tp,
        pp=mesh.pp,
        cp=mesh.cp,
        ep=mesh.ep,
        in_flight=in_flight,
        recompute=recompute,
    )
    parts["activations"] *= fp8_activation_share(saved.fp8, model, recompute)
    parts = saved_state(parts, model, mesh, recipe, saved)
    for name in ZERO_SHARDED[zero]:  # ZeRO over the dp ranks, on top of FSDP's split
        parts[name] = parts[name] / mesh.dp
    copies = batch.pipeline.weight_copies if batch.pipeline else 1  # DualPipe holds two stages' parameters
    for name in TRAINING_PARTS:
        parts[name] = parts[name] * copies
    parts, host = offload_memory(parts, saved.offload, model.n_layers / mesh.pp * in_flight)
    room = float(usable_bytes(chip, usable_fraction))
    gathered = gathered_bytes(model, mesh, saved)
    keep = sum(parts.values()) + gathered <= room
    if keep and gathered > 0:  # FSDP keeps the gathered weights from the forward to the backward: they are held
        parts["gathered weights"] = gathered
    return parts, room, keep, host


def step_memory(
    model: ModelShape,
    cluster: Cluster,
    mesh: Mesh,
    global_batch_tokens: float,
    seq_len: int,
    micro_batch_tokens: float | None = None,
    recompute: str = "selective",
    *,
    recipe: str | TrainingRecipe = "zero_mixed_adam",
    zero: int = 0,
    interleave: int = 1,
    schedule: str | None = None,
    usable_fraction: float = assumptions.USABLE_HBM_FRACTION,
    adapter: LoRA | None = None,
    offload: Offload | None = None,
    fp8: str | FP8Scaling | None = None,
    dtype: str = "bf16",
) -> tuple[dict, float]:
    """The bytes per chip by part of ``train_step`` with these arguments, and the usable bytes, without pricing the
    step (the planner's check of which choices fit). Chapter :ref:`ch-sharding`."""
    one_of("recompute", recompute, RECOMPUTE)
    saved = savers_of(model, adapter, offload, fp8, dtype)
    batch = split_batch(model, cluster, mesh, global_batch_tokens, seq_len, micro_batch_tokens, interleave, schedule)
    chip, zero = cluster.chip, zero_stage(zero)
    parts, room, _, _ = _memory(model, recipe, mesh, batch, recompute, chip, usable_fraction, zero, saved)
    return parts, room


def train_step(
    model: ModelShape,
    cluster: Cluster,
    mesh: Mesh,
    global_batch_tokens: float,
    seq_len: int,
    micro_batch_tokens: float | None = None,
    recompute: str = "selective",
    *,
    recipe: str | TrainingRecipe = "zero_mixed_adam",
    dtype: str = "bf16",
    interleave: int = 1,
    usable_fraction: float = assumptions.USABLE_HBM_FRACTION,
    causal: bool | None = None,
    efficiency: Efficiency | None = None,
    zero: int = 0,
    schedule: str | None = None,
    adapter: LoRA | None = None,
    offload: Offload | None = None,
    fp8: str | FP8Scaling | None = None,
    routing_imbalance: float = 1.0,
    ep_overlap: bool = False,
    experts: ExpertKernel | None = None,
) -> TrainStep:
    """One training step of ``model`` on ``mesh.n_chips`` chips of ``cluster``: times, MFU and memory per chip.

    ``global_batch_tokens`` per optimizer step in sequences of ``seq_len``; ``micro_batch_tokens`` per
    data-parallel rank and micro-batch (default: the rank's whole batch, or one sequence under a pipeline).
    ``interleave`` chunks per pipeline stage. ``zero`` (``hwlib.training.zero.ZERO_STAGES``) splits the training
    state over the dp ranks as well (1: Megatron-LM's distributed optimizer; 2: the gradients too, reduce-scattered
    per micro-batch).
    ``schedule`` (``hwlib.training.schedules.SCHEDULES``; default 1F1B, interleaved 1F1B where ``interleave`` > 1)
    sets the pipeline's bubble, its in-flight activations, its weight copies and sends, and what it hides.
    MFU counts the model's FLOPs without recomputation;
    ``hardware_flops_utilization`` with it. ``causal`` defaults to the model's own; False computes the whole
    attention score matrix, as kernels that mask it afterwards do. Raises ValueError for a mesh that does not
    divide the model or the batch. The bound (``time_s``, ``mfu``) prices every FLOP at the peak; the forecast
    (``forecast_time_s``, ``forecast_mfu``) at what kernels reach, ``efficiency`` overriding any assumption.
    ``adapter`` (``hw.LoRA``) fine-tunes adapters on a frozen base (``hwlib.training.finetune``; MFU then counts
    the FLOPs LoRA needs: the base's forward and input gradients, the adapters' passes, the attention);
    ``offload`` (``hw.Offload``) keeps the optimizer state or the activations in host memory; ``fp8`` (a key of
    ``hwlib.training.fp8.FP8_SCALINGS``, with ``dtype="fp8"``) adds FP8 training's casts, cached weights and fp8
    all-gathers (``hwlib.training.savers``); with ``dtype="fp8"`` an MoE's routed experts are forecast at their
    measured fp8 grouped-GEMM speed-up over bf16 (``hwlib.efficiency.fp8_grouped_speedup``; the forecast part
    "fp8 experts" is what that adds). ``routing_imbalance`` (an MoE's) is the busiest expert-parallel
    rank's routed tokens over the mean: its experts' matmuls and its all-to-alls take that much longer, and the
    step waits for it (1: balanced, as benchmarks that force-balance the routing run; a capacity factor c caps
    it at c). ``ep_overlap`` hides the expert all-to-alls of each micro-batch behind another's compute, as
    Megatron-Core's ``--overlap-moe-expert-parallel-comm`` does (``hwlib.training.collectives``). ``experts``
    (``hwlib.data.records.ExpertKernel``) says how the routed experts run where not as one dropless grouped
    GEMM at the chip's tile (capacity-padded einsums, a grouped matmul's own tile); the forecast part "expert
    kernels" is what that adds. Each micro-batch's weight-gradient GEMMs also read and write their fp32
    accumulator (``hwlib.training.mesh.accumulator_bytes``): where a micro-batch's few tokens meet many weights (a
    pipeline's many micro-batches through many local experts) those bytes, not the FLOPs, set the GEMMs' time, and
    the forecast part "gradient accumulation" is what they add. Chapters :ref:`ch-sharding` and :ref:`ch-forecast`.
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-70b')")
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    mesh = require(Mesh, "mesh", mesh, "hw.Mesh(fsdp=8, tp=8)")
    efficiency = require_efficiency(efficiency)
    one_of("recompute", recompute, RECOMPUTE)
    saved = savers_of(model, adapter, offload, fp8, dtype)
    imbalance = routing_imbalance_of(model, routing_imbalance)
    batch = split_batch(model, cluster, mesh, global_batch_tokens, seq_len, micro_batch_tokens, interleave, schedule)
    chip, count = cluster.chip, mesh.n_chips
    peak = chip.peak(dtype)
    table = model.table()
    sequences = batch.tokens / batch.seq_len
    attention = sequences * float(table.attention_flops(batch.seq_len, 0, causal))
    model_flops, extra = step_flops(model, batch.tokens, attention, recompute, saved.adapter)
    attention_passes = TRAINING_OVER_FORWARD + (recompute in ("selective", "full"))  # scores recomputed too
    zero = zero_stage(zero)
    memory, room, keep_gathered, host = _memory(
        model, recipe, mesh, batch, recompute, chip, usable_fraction, zero, saved
    )
    micro_tokens = batch.micro_tokens / mesh.cp
    quantized = layer_quantization(chip, table, micro_tokens, mesh.tp, ep=mesh.ep) if efficiency.quantization else 1.0
    if not isinstance(ep_overlap, bool):
        raise TypeError(f"ep_overlap must be True or False, got {ep_overlap!r}")
    found = step_collectives(
        model, cluster, mesh, batch, recompute, keep_gathered, zero, imbalance, ep_overlap, dispatch_share(saved.fp8)
    )
    names = (("fsdp all-gather + reduce-scatter", "dp all-reduce"), "fsdp all-gather + reduce-scatter")  # grads, FSDP
    added, found = saver_work(model, cluster, mesh, batch, recipe, recompute, zero, saved, found, names)
    matmul_flops = (model_flops + extra - attention_passes * attention) / count
    dense, routed = expert_split(model, imbalance)
    fp8_share = _fp8_expert_share(model, chip, dtype, efficiency)
    kernel_share = expert_kernel_share(experts, model, micro_tokens, batch.seq_len, mesh.tp, mesh.ep)
    kernel_share = kernel_share if efficiency.expert_kernels else 1.0
    expert_rate = fp8_share * kernel_share
    # each micro-batch's weight-gradient GEMMs, apart: they also read and write the fp32 accumulator (none under LoRA)
    weight_grads = 0.0 if saved.adapter else float(table.weight_flops(batch.tokens)) / count
    dense_bytes, expert_bytes = (0.0, 0.0) if saved.adapter else accumulator_bytes(model, mesh, batch.micro_batches)
    work = Work(
        parts={
            "matmuls": Part((matmul_flops - weight_grads) * dense, 0.0, "matmul", quantized),
            "weight gradients": Part(weight_grads * dense, dense_bytes, "matmul", quantized),
            "routed experts": Part(
                (matmul_flops - weight_grads) * routed, 0.0, "matmul", quantized, rate_share=expert_rate
            ),
            "expert weight gradients": Part(
                weight_grads * routed, expert_bytes, "matmul", quantized, rate_share=expert_rate
            ),
            "attention": Part(attention_passes * attention / count, 0.0, "attention"),
            "optimizer step": Part(0.0, update_bytes(model, mesh, recipe, zero, saved), per_step=True),
            **added,
        },
        collectives=tuple(found),
        bubble_share=batch.pipeline.bubble_share if batch.pipeline else 0.0,
        elementwise_bytes=(TRAINING_OVER_FORWARD + (1.0 if recompute == "full" else 0.0))
        * table.activation_elements_per_token()
        * batch.tokens
        / count
        * WIRE_BYTES,
        unmodelled=True,
        accumulation=batch.micro_batches,
        **moe_passes(model, mesh, batch.micro_batches, recompute, dtype),
    )
    priced = price(work, chip, dtype, efficiency)
    compute = max(float(priced.compute_s), float(priced.memory_s))  # the roofline of the chip's work
    time = float(priced.bound_s)
    total = sum(memory.values())
    fits = total <= room
    forecast_time = priced.forecast_s
    parts, waits = priced.forecast_parts_s, priced.forecast_memory_excess_s
    experts_at_rate = parts["routed experts"] + parts["expert weight gradients"] - waits["expert weight gradients"]
    forecast_parts = {
        "matmuls": parts["matmuls"]
        + parts["weight gradients"]
        - waits["weight gradients"]
        + fp8_share * kernel_share * experts_at_rate,
        "fp8 experts": (1.0 - fp8_share) * kernel_share * experts_at_rate,
        "expert kernels": (1.0 - kernel_share) * experts_at_rate,
        "gradient accumulation": waits["weight gradients"] + waits["expert weight gradients"],
        "attention": parts["attention"],
        "elementwise": parts["elementwise"] + sum(parts[name] for name in ELEMENTWISE_PARTS if name in parts),
        "pipeline bubble": parts["pipeline bubble"],
        "exposed communication": sum(priced.forecast_exposed_s.values(), 0.0),
        "overlap slowdown": parts["overlap slowdown"],
        "overhead": parts["overhead"],
        "unmodelled": parts["unmodelled"],
    }
    return TrainStep(
        mesh=mesh,
        n_chips=count,
        time_s=time,
        compute_time_s=compute,
        bubble_time_s=float(priced.bound_parts_s["pipeline bubble"]),
        comm_time_s={name: float(seconds) for name, seconds in priced.comm_s.items()},
        exposed_comm_time_s={name: float(seconds) for name, seconds in priced.exposed_s.items()},
        tokens_per_s=batch.tokens / time,
        mfu=model_flops / (count * peak * time),
        hardware_flops_utilization=(model_flops + extra) / (count * peak * time),
        active_param_mfu=6.0 * model.params(active=True) * batch.tokens / (count * peak * time),
        memory_parts=memory,
        memory_per_chip_bytes=total,
        usable_bytes=room,
        fits=fits,
        reason="" if fits else f"needs {total / 2**30:,.1f} GiB per chip, {room / 2**30:,.1f} GiB usable",
        forecast_time_s=scalar_or_array(forecast_time),
        forecast_tokens_per_s=scalar_or_array(batch.tokens / forecast_time),
        forecast_mfu=scalar_or_array(model_flops / (count * peak * forecast_time)),
        forecast_parts_s={name: scalar_or_array(seconds) for name, seconds in forecast_parts.items()},
        time_upper_s=float(priced.no_overlap_s),
        micro_batch_tokens=batch.micro_tokens,
        recompute=recompute,
        zero=zero,
        interleave=batch.chunks,
        schedule=batch.pipeline.schedule if batch.pipeline else "",
        host_memory_bytes=host,
        micro_batches=batch.micro_batches,
    )


def _fp8_expert_share(model: ModelShape, chip: object, dtype: str, efficiency: Efficiency) -> float:
    """``efficiency.fp8_experts``, else the measured ``fp8_expert_share`` of the model's experts in an fp8 step (1
    in any other dtype or for a dense model)."""
    if efficiency.fp8_experts is not None:
        return efficiency.fp8_experts
    if not model.is_moe or element_dtype(dtype) != "fp8":
        return 1.0
    return fp8_expert_share(chip, model.d_ff_expert)


def moe_passes(model: ModelShape, mesh: Mesh, micro_batches: int, recompute: str, dtype: str = "bf16") -> dict:
    """The MoE layers the busiest pipeline stage runs in a step (whole layers: at least ceil(L_MoE / pp) of them),
    each counted once per micro-batch's forward and backward (a recomputed forward adds a third, as its FLOPs do),
    and, in a step whose experts run in a block-scaled or fp8 dtype, those layers times the chip's local experts:
    each expert's operands are quantized on their own (Transformer Engine's ``GroupedLinear`` at v2.12 loops over
    the experts' quantizers and weight casts in fp8, and casts nothing in bf16). These are the counts
    ``Work.moe_layer_passes`` and ``Work.expert_passes`` that the forecast's MoE overheads multiply."""
    if not model.is_moe:
        return {}
    passes = math.ceil(model.table().n_moe_layers / mesh.pp) * micro_batches
    passes *= 1.0 + (recompute == "full") / TRAINING_OVER_FORWARD
    quantized = dtype_bytes(element_dtype(dtype)) < BF16_BYTES  # fp8 and narrower
    return {"moe_layer_passes": passes, "expert_passes": passes * model.n_experts / mesh.ep * quantized}
