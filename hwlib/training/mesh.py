"""Sharding a training step: a mesh of data, FSDP, tensor, context, pipeline and expert parallelism on a cluster.

A ``Mesh`` splits ``n_chips = dp x fsdp x tp x cp x pp`` chips; ``ep`` experts groups are carved
out of the data-parallel ``dp x fsdp`` ranks. Groups are laid out innermost first in the order
tp, cp, fsdp, dp, pp (Megatron-LM's; Narayanan et al. 2021, arXiv:2104.04473, Sec. 3), so a
group of size k at stride s (the product of the groups inside it) stays in one node when s k is at
most the node size, crosses only NICs when s is a whole node, and is a hierarchy between; on a TPU
slice the groups take the torus axes in the same order. Per chip and step:

* **compute**: the model's training FLOPs (``ModelShape.flops_per_token``, 6 P per token plus
  attention) and the forward again under recomputation (all of it for ``full``, the attention
  for ``selective``), at the chip's peak;
* **pipeline bubble**: (pp - 1) / (v m) of the compute for m micro-batches and v interleaved
  chunks per stage (Narayanan et al. 2021, Sec. 2.2);
* **collectives** (``collective_time_s`` on each group's topology) and what of them hides behind
  compute: data-parallel gradient all-reduce and FSDP's weight all-gathers and gradient
  reduce-scatters overlap the passes they serve; tensor parallelism's all-reduces (two per layer
  per pass, Megatron's; Shoeybi et al. 2019) and expert parallelism's all-to-alls do not; context
  parallelism's key-value all-gathers overlap attention; pipeline sends sit on the critical path.

Memory per chip: the training state after sharding over tp x pp (experts over ep as well) and over
the fsdp x cp ranks (ZeRO-3, as torchtitan folds the context-parallel ranks into its FSDP mesh; under
plain data parallelism, dp > 1 without fsdp, the weights stay whole on the context-parallel ranks); the
activations of the micro-batches in flight (``hw.activation_bytes``).
FSDP gathers the weights once per step where they fit beside the rest, else for every micro-batch's
forward and backward.
Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hwlib._checks import one_of, positive, scalar_or_array
from hwlib.data import assumptions
from hwlib.data.records import TRAINING_PARTS, Cluster, ModelShape, TrainingRecipe, require
from hwlib.data.records.layer_rules import (
    EP_ALL_TO_ALLS_PER_LAYER,
    RECOMPUTE,
    TP_ALLREDUCES_PER_LAYER,
    TRAINING_OVER_FORWARD,
)
from hwlib.efficiency import Efficiency, layer_quantization, require_efficiency
from hwlib.memory import usable_bytes
from hwlib.placement import group_topology
from hwlib.pricing import Collective, Part, Work, price
from hwlib.training.zero import chip_bytes
from hwlib.units import dtype_bytes

MESH_AXES = ("dp", "fsdp", "tp", "pp", "ep", "cp")
"""A mesh's axes, as ``Mesh`` names them, the CLI's ``--mesh`` takes them and results list them."""
LAYOUT = ("tp", "cp", "fsdp", "dp", "pp")
"""The axes laid out on the chips from innermost (fastest links) to outermost; ``ep`` reuses the data-parallel
ranks."""
STEP_PARTS = (
    "compute",
    "pipeline bubble",
    "tp all-reduce",
    "cp all-gather",
    "fsdp all-gather + reduce-scatter",
    "dp all-reduce",
    "pp send/recv",
    "ep all-to-all",
)
"""The parts of a step's time: compute, the pipeline bubble, then each collective's exposed time."""
WIRE_BYTES = dtype_bytes("bf16")
"""Weights, gradients and activations cross the links in bf16."""
TP_PASSES = 2
"""Passes over a micro-batch that run the tensor-parallel all-reduces: forward and backward."""
TP_PASSES_FULL_RECOMPUTE = 3
"""With full recomputation the forward runs again in the backward pass, its all-reduces too."""


@dataclass(frozen=True)
class Mesh:
    """Degrees of data (dp), fully sharded data (fsdp, ZeRO-3), tensor (tp), pipeline (pp), expert (ep) and
    context (cp) parallelism. Chapter :ref:`ch-sharding`."""

    dp: int = 1
    fsdp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    cp: int = 1

    def __post_init__(self) -> None:
        for name in MESH_AXES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Mesh.{name} must be a whole number >= 1, got {value!r}")
        if (self.dp * self.fsdp) % self.ep:
            raise ValueError(
                f"Mesh.ep={self.ep} must divide dp x fsdp = {self.dp * self.fsdp} (experts are "
                "sharded over the data-parallel ranks)"
            )

    @property
    def n_chips(self) -> int:
        return self.dp * self.fsdp * self.tp * self.cp * self.pp

    @property
    def data_parallel(self) -> int:
        return self.dp * self.fsdp

    def __str__(self) -> str:
        parts = [f"{name}={getattr(self, name)}" for name in MESH_AXES if getattr(self, name) > 1]
        return " ".join(parts) or "one chip"


@dataclass(frozen=True)
class TrainStep:
    """One optimizer step under a mesh: times (s), MFU, memory per chip (B) and whether it fits.

    ``comm_time_s`` and ``exposed_comm_time_s`` give each collective's time and the part of it that
    compute does not hide. ``reason`` says why the step does not fit ("" when it does). The ``forecast_*``
    fields price the same step at the efficiencies kernels reach (``hw.Efficiency``); ``forecast_parts_s``
    splits its time into ``hwlib.training.forecast.FORECAST_PARTS``. Chapters :ref:`ch-sharding` and :ref:`ch-forecast`.
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

    @property
    def parts_s(self) -> dict[str, float]:
        """Seconds of each of ``STEP_PARTS`` in the bound; they sum to ``time_s``."""
        known = {"compute": self.compute_time_s, "pipeline bubble": self.bubble_time_s, **self.exposed_comm_time_s}
        return {name: known.get(name, 0.0) for name in STEP_PARTS}


def _stride_groups(mesh: Mesh) -> dict[str, tuple[int, int]]:
    """Each axis's (size, stride) in the layout tp, cp, fsdp, dp, pp."""
    stride, groups = 1, {}
    for name in LAYOUT:
        size = getattr(mesh, name)
        groups[name] = (size, stride)
        stride *= size
    return groups


@dataclass(frozen=True)
class _Batch:
    """How one step's global batch splits: sequences of ``seq_len`` tokens, the tokens each data-parallel rank
    takes, its micro-batches of ``micro_tokens`` and the interleaved chunks per pipeline stage."""

    seq_len: int
    tokens: float
    rank_tokens: float
    micro_tokens: float
    micro_batches: int
    chunks: int


def _split_batch(model, cluster, mesh, global_batch_tokens, seq_len, micro_batch_tokens, interleave) -> _Batch:
    """The batch's split over the mesh, or a ValueError naming what does not divide."""
    sequence = int(positive("seq_len", seq_len, integral=True))
    batch_sequences = float(positive("global_batch_tokens", global_batch_tokens)) / sequence
    rank_tokens = batch_sequences * sequence / mesh.data_parallel
    if micro_batch_tokens is None:  # without a pipeline a rank runs its whole batch at once; with one, a sequence
        micro = rank_tokens if mesh.pp == 1 else float(sequence)
    else:
        micro = float(positive("micro_batch_tokens", micro_batch_tokens))
    chunks = int(positive("interleave", interleave, integral=True))
    if cluster.max_chips is not None and mesh.n_chips > cluster.max_chips:
        raise ValueError(f"mesh needs {mesh.n_chips} chips; {cluster.name} holds at most {cluster.max_chips}")
    problems = [
        (model.n_heads % mesh.tp != 0, f"tp={mesh.tp} does not divide the {model.n_heads} attention heads"),
        (
            mesh.pp * chunks > model.n_layers,
            f"pp x interleave = {mesh.pp * chunks} exceeds the {model.n_layers} layers",
        ),
        (sequence % mesh.cp != 0, f"cp={mesh.cp} does not divide the {sequence}-token sequences"),
        (
            batch_sequences != round(batch_sequences) or round(batch_sequences) % mesh.data_parallel != 0,
            f"the global batch of {batch_sequences:g} sequences does not split over dp x fsdp = {mesh.data_parallel}",
        ),
        (
            model.is_moe and model.n_experts % mesh.ep != 0,
            f"ep={mesh.ep} does not divide the {model.n_experts} experts",
        ),
        (not model.is_moe and mesh.ep > 1, "ep > 1 needs a mixture-of-experts model"),
    ]
    for bad, why in problems:
        if bad:
            raise ValueError(f"mesh {mesh}: {why}")
    if micro % sequence or micro > rank_tokens or (rank_tokens / micro) != round(rank_tokens / micro):
        raise ValueError(
            f"mesh {mesh}: micro_batch_tokens={micro:g} must be whole sequences of {sequence} tokens "
            f"dividing the {rank_tokens:g} tokens each data-parallel rank takes per step"
        )
    return _Batch(sequence, batch_sequences * sequence, rank_tokens, micro, int(round(rank_tokens / micro)), chunks)


def _fsdp_shards(mesh: Mesh) -> int:
    """The ranks ZeRO-3 shards the state over: fsdp, and the context-parallel ranks too, as torchtitan folds them
    into its FSDP mesh; none under plain data parallelism (dp > 1, fsdp 1: Megatron's DDP keeps the weights whole on
    the context-parallel ranks and all-reduces their gradients over dp x cp)."""
    return mesh.fsdp * mesh.cp if mesh.fsdp > 1 or mesh.dp == 1 else 1


def _memory(model, recipe, mesh, batch, recompute, chip, usable_fraction) -> tuple[dict, float, bool]:
    """(bytes per chip by part, usable bytes, whether FSDP can keep the gathered weights for the whole step)."""
    in_flight = min(mesh.pp, batch.micro_batches)  # 1F1B: the first stage holds pp micro-batches
    parts = chip_bytes(
        model,
        recipe,
        batch.seq_len,
        batch.micro_tokens / batch.seq_len,
        sharded=TRAINING_PARTS,
        shards=_fsdp_shards(mesh),
        tp=mesh.tp,
        pp=mesh.pp,
        cp=mesh.cp,
        ep=mesh.ep,
        in_flight=in_flight,
        recompute=recompute,
    )
    room = float(usable_bytes(chip, usable_fraction))
    gathered = local_params(model, mesh) * WIRE_BYTES * (1 - 1 / _fsdp_shards(mesh))
    return parts, room, sum(parts.values()) + gathered <= room


def local_params(model: ModelShape, mesh: Mesh) -> float:
    """Parameters one tensor- and pipeline-parallel rank holds before ZeRO: its share, experts over ep as well
    (the FSDP shard before its split over fsdp x cp). Chapter :ref:`ch-sharding`."""
    dense, experts = split_params(model)
    return (dense + experts / mesh.ep) / (mesh.tp * mesh.pp)


def _collectives(model, cluster, mesh, batch, recompute, keep_gathered) -> list:
    """The step's collectives (``hwlib.pricing.Collective``) on their groups, those that overlap compute first in
    the order they take the links: context parallelism's behind attention, the gradient all-reduce behind the
    backward pass, FSDP's behind all of it; tensor parallelism's, pipeline sends and expert all-to-alls exposed."""
    table, count = model.table(), mesh.n_chips
    topology = {
        name: group_topology(cluster, size, stride, count) for name, (size, stride) in _stride_groups(mesh).items()
    }
    layers = model.n_layers / mesh.pp
    per_pass = layers * batch.micro_batches  # each layer once per micro-batch
    micro = batch.micro_tokens / mesh.cp  # tokens of one micro-batch on one context-parallel rank
    passes = TP_PASSES_FULL_RECOMPUTE if recompute == "full" else TP_PASSES  # forward, backward (and recompute)
    found = []
    if mesh.cp > 1:  # keys and values gathered forward, their gradients reduce-scattered backward
        kv = batch.micro_tokens * table.cp_elements_per_token() * WIRE_BYTES / mesh.tp  # the whole sequence's K, V
        for kind in ("all-gather", "reduce-scatter"):
            found.append(Collective("cp all-gather", kind, kv, topology["cp"], per_pass, "attention"))
    shards = _fsdp_shards(mesh)
    if mesh.dp > 1:  # gradients all-reduced, bucket by bucket during the backward pass (over cp too without FSDP)
        grads = local_params(model, mesh) * WIRE_BYTES / shards
        group = (
            topology["dp"] if shards > 1 or mesh.cp == 1 else group_topology(cluster, mesh.dp * mesh.cp, mesh.tp, count)
        )
        found.append(Collective("dp all-reduce", "all-reduce", grads, group, 1, "backward"))
    if shards > 1:  # weights gathered for the passes, gradients reduce-scattered
        shard_group = group_topology(cluster, shards, mesh.tp, count)
        shard = local_params(model, mesh) * WIRE_BYTES
        gathers, reduces = (1, 1) if keep_gathered else (2 * batch.micro_batches, batch.micro_batches)
        name = "fsdp all-gather + reduce-scatter"
        found.append(Collective(name, "all-gather", shard, shard_group, gathers, "compute"))
        found.append(Collective(name, "reduce-scatter", shard, shard_group, reduces, "compute"))
    if mesh.tp > 1:  # per layer per pass, the micro-batch's hidden state; not overlapped
        tp_bytes = micro * table.tp_elements_per_token() * WIRE_BYTES
        calls = passes * TP_ALLREDUCES_PER_LAYER * per_pass
        found.append(Collective("tp all-reduce", "all-reduce", tp_bytes, topology["tp"], calls))
    if mesh.pp > 1:  # activations forward and their gradients back, per micro-batch, on the critical path
        send = micro * table.pp_elements_per_token() * WIRE_BYTES / mesh.tp  # Megatron scatters over tp ranks
        calls = 2 * (batch.micro_batches + mesh.pp - 1)
        found.append(Collective("pp send/recv", "send", send, topology["pp"], calls))
    if mesh.ep > 1:  # dispatch and combine per MoE layer per pass; not overlapped
        ep_group = group_topology(cluster, mesh.ep, mesh.tp * mesh.cp, count)
        routed = micro * table.ep_elements_per_token() * WIRE_BYTES
        calls = passes * EP_ALL_TO_ALLS_PER_LAYER * per_pass
        found.append(Collective("ep all-to-all", "all-to-all", routed, ep_group, calls))
    return found


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
) -> TrainStep:
    """One training step of ``model`` on ``mesh.n_chips`` chips of ``cluster``: times, MFU and memory per chip.

    ``global_batch_tokens`` per optimizer step in sequences of ``seq_len``; ``micro_batch_tokens`` per
    data-parallel rank and micro-batch (default: the rank's whole batch, or one sequence under a pipeline).
    ``interleave`` chunks per pipeline stage. MFU counts the model's FLOPs without recomputation;
    ``hardware_flops_utilization`` with it. ``causal`` defaults to the model's own; False computes the whole
    attention score matrix, as kernels that mask it afterwards do. Raises ValueError for a mesh that does not
    divide the model or the batch. The bound (``time_s``, ``mfu``) prices every FLOP at the peak; the forecast
    (``forecast_time_s``, ``forecast_mfu``) at what kernels reach, ``efficiency`` overriding any assumption.
    Chapters :ref:`ch-sharding` and :ref:`ch-forecast`.
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-70b')")
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    mesh = require(Mesh, "mesh", mesh, "hw.Mesh(fsdp=8, tp=8)")
    efficiency = require_efficiency(efficiency)
    one_of("recompute", recompute, RECOMPUTE)
    batch = _split_batch(model, cluster, mesh, global_batch_tokens, seq_len, micro_batch_tokens, interleave)
    chip, count = cluster.chip, mesh.n_chips
    peak = chip.peak(dtype)
    table = model.table()
    sequences = batch.tokens / batch.seq_len
    attention = sequences * float(table.attention_flops(batch.seq_len, 0, causal))
    model_flops = TRAINING_OVER_FORWARD * float(table.forward_flops(batch.tokens, attention))
    extra = float(table.recompute_flops(batch.tokens, attention, recompute))
    attention_passes = TRAINING_OVER_FORWARD + (0.0 if recompute == "none" else 1.0)  # scores recomputed too
    memory, room, keep_gathered = _memory(model, recipe, mesh, batch, recompute, chip, usable_fraction)
    micro_tokens = batch.micro_tokens / mesh.cp
    quantized = layer_quantization(chip, table, micro_tokens, mesh.tp) if efficiency.quantization else 1.0
    work = Work(
        parts={
            "matmuls": Part((model_flops + extra - attention_passes * attention) / count, 0.0, "matmul", quantized),
            "attention": Part(attention_passes * attention / count, 0.0, "attention"),
        },
        collectives=tuple(_collectives(model, cluster, mesh, batch, recompute, keep_gathered)),
        bubble_share=(mesh.pp - 1) / (batch.chunks * batch.micro_batches) if mesh.pp > 1 else 0.0,
        elementwise_bytes=(TRAINING_OVER_FORWARD + (1.0 if recompute == "full" else 0.0))
        * table.activation_elements_per_token()
        * batch.tokens
        / count
        * WIRE_BYTES,
        unmodelled=True,
    )
    priced = price(work, chip, dtype, efficiency)
    compute = float(priced.compute_s)
    time = float(priced.bound_s)
    total = sum(memory.values())
    fits = total <= room
    forecast_time = priced.forecast_s
    parts = priced.forecast_parts_s
    forecast_parts = {
        "matmuls": parts["matmuls"],
        "attention": parts["attention"],
        "elementwise": parts["elementwise"],
        "pipeline bubble": parts["pipeline bubble"],
        "exposed communication": sum(priced.forecast_exposed_s.values(), 0.0),
        "overlap slowdown": parts["overlap slowdown"],
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
    )


def split_params(model: ModelShape) -> tuple[float, float]:
    """(dense, expert) parameters: the experts of an MoE are sharded over ep, the rest is not."""
    if not model.is_moe:
        return float(model.params()), 0.0
    experts = model.param_breakdown()["experts"]
    return float(model.params() - experts), float(experts)
