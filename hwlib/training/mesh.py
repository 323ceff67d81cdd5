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
the fsdp x cp ranks (ZeRO-3, as torchtitan and Megatron's distributed optimizer shard over the
context-parallel ranks too); the activations of the micro-batches in flight (``hw.activation_bytes``).
FSDP gathers the weights once per step where they fit beside the rest, else for every micro-batch's
forward and backward.
Chapter "Sharding a training step".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hwlib._checks import one_of, positive
from hwlib.data import doc000
from hwlib.data.records import Cluster, ModelShape, TrainingRecipe, require
from hwlib.memory import RECOMPUTE, activation_bytes, logits_bytes, training_state_breakdown, usable_bytes
from hwlib.placement import group_time_s, group_topology, send_time_s
from hwlib.units import dtype_bytes

AXES = ("tp", "cp", "fsdp", "dp", "pp")
"""Mesh axes from innermost (fastest links) to outermost; ``ep`` reuses the data-parallel ranks."""
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


@dataclass(frozen=True)
class Mesh:
    """Degrees of data (dp), fully sharded data (fsdp, ZeRO-3), tensor (tp), pipeline (pp), expert (ep) and
    context (cp) parallelism. Chapter "Sharding a training step"."""

    dp: int = 1
    fsdp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    cp: int = 1

    def __post_init__(self) -> None:
        for name in ("dp", "fsdp", "tp", "pp", "ep", "cp"):
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
        parts = [
            f"{name}={getattr(self, name)}"
            for name in ("dp", "fsdp", "tp", "pp", "ep", "cp")
            if getattr(self, name) > 1
        ]
        return " ".join(parts) or "one chip"


@dataclass(frozen=True)
class TrainStep:
    """One optimizer step under a mesh: times (s), MFU, memory per chip (B) and whether it fits.

    ``comm_time_s`` and ``exposed_comm_time_s`` give each collective's time and the part of it that
    compute does not hide. ``reason`` says why the step does not fit ("" when it does).
    Chapter "Sharding a training step".
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

    @property
    def parts_s(self) -> dict[str, float]:
        """Seconds of each of ``STEP_PARTS``; they sum to ``time_s``."""
        known = {"compute": self.compute_time_s, "pipeline bubble": self.bubble_time_s, **self.exposed_comm_time_s}
        return {name: known.get(name, 0.0) for name in STEP_PARTS}


def _stride_groups(mesh: Mesh) -> dict[str, tuple[int, int]]:
    """Each axis's (size, stride) in the layout tp, cp, fsdp, dp, pp."""
    stride, groups = 1, {}
    for name in AXES:
        size = getattr(mesh, name)
        groups[name] = (size, stride)
        stride *= size
    return groups


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
    usable_fraction: float = doc000.USABLE_FRACTION,
    causal: bool = True,
) -> TrainStep:
    """One training step of ``model`` on ``mesh.n_chips`` chips of ``cluster``: times, MFU and memory per chip.

    ``global_batch_tokens`` per optimizer step in sequences of ``seq_len``; ``micro_batch_tokens`` per
    data-parallel rank and micro-batch (default: the rank's whole batch, or one sequence under a pipeline).
    ``interleave`` chunks per pipeline
    stage. MFU counts the model's FLOPs without recomputation; ``hardware_flops_utilization`` with it.
    ``causal=False`` computes the whole attention score matrix, as kernels that mask it afterwards do.
    Raises ValueError for a mesh that does not divide the model or the batch. Chapter "Sharding a training step".
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-70b')")
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    mesh = require(Mesh, "mesh", mesh, "hw.Mesh(fsdp=8, tp=8)")
    one_of("recompute", recompute, RECOMPUTE)
    chip, count = cluster.chip, mesh.n_chips
    peak = chip.peak(dtype)
    sequence = int(positive("seq_len", seq_len, integral=True))
    batch_sequences = float(positive("global_batch_tokens", global_batch_tokens)) / sequence
    per_rank_tokens = batch_sequences * sequence / mesh.data_parallel
    if micro_batch_tokens is None:  # without a pipeline a rank runs its whole batch at once; with one, a sequence
        micro = per_rank_tokens if mesh.pp == 1 else float(sequence)
    else:
        micro = float(positive("micro_batch_tokens", micro_batch_tokens))
    chunks = int(positive("interleave", interleave, integral=True))
    if cluster.max_chips is not None and count > cluster.max_chips:
        raise ValueError(f"mesh needs {count} chips; {cluster.name} holds at most {cluster.max_chips}")
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
    if micro % sequence or micro > per_rank_tokens or (per_rank_tokens / micro) != round(per_rank_tokens / micro):
        raise ValueError(
            f"mesh {mesh}: micro_batch_tokens={micro:g} must be whole sequences of {sequence} tokens "
            f"dividing the {per_rank_tokens:g} tokens each data-parallel rank takes per step"
        )
    micro_batches = int(round(per_rank_tokens / micro))
    tokens = batch_sequences * sequence

    # compute: the model's FLOPs, and the forward again where recomputed
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    model_flops = float(model.flops_per_token(sequence, training=True, causal=causal)) * tokens
    forward = float(model.flops_per_token(sequence, causal=causal)) * tokens
    attention_forward = forward - 2.0 * model.matmul_params(active=True) * tokens
    extra = {"none": 0.0, "selective": attention_forward, "full": forward}[recompute]
    compute = (model_flops + extra) / count / peak
    bubble = (mesh.pp - 1) / (chunks * micro_batches) * compute if mesh.pp > 1 else 0.0
    forward_share = forward / (model_flops + extra)

    groups = {
        name: group_topology(cluster, size, stride, count) for name, (size, stride) in _stride_groups(mesh).items()
    }
    shards = mesh.fsdp * mesh.cp  # ZeRO-3 shards the state over the context-parallel ranks too (torchtitan, Megatron)
    shard_group = group_topology(cluster, shards, mesh.tp, count)
    ep_topology = group_topology(cluster, mesh.ep, mesh.tp * mesh.cp, count) if mesh.ep > 1 else None
    element = dtype_bytes("bf16")  # weights, gradients and activations on the wire
    dense_params, expert_params = split_params(model)
    local_params = (dense_params + expert_params / mesh.ep) / (mesh.tp * mesh.pp)
    layers_per_stage = model.n_layers / mesh.pp

    state = training_state_breakdown(local_params, recipe)
    sharded = {name: value / shards for name, value in state.items()}
    in_flight = min(mesh.pp, micro_batches)  # 1F1B: the first stage holds pp micro-batches
    sequences = micro / sequence
    per_layer = activation_bytes(
        sequence // mesh.cp,
        sequences,
        model,
        tensor_parallel=mesh.tp,
        sequence_parallel=mesh.tp > 1,
        recompute=recompute,
        flash_attention=True,
    )
    memory = {
        **sharded,
        "activations": float(per_layer) * layers_per_stage * in_flight,
        "logits": float(logits_bytes(sequence // mesh.cp, sequences, model)) / mesh.tp,
    }
    total = sum(memory.values())
    room = float(usable_bytes(chip, usable_fraction))
    # FSDP keeps the gathered weights for the whole step where they fit beside the rest, else re-gathers them
    # for every micro-batch's forward and backward (ZeRO-3)
    keep_gathered = total + local_params * element * (1 - 1 / shards) <= room

    micro_activation = micro / mesh.cp * model.d_model * element  # one micro-batch's hidden states, per cp rank
    per_layer_collectives = 6 if recompute == "full" else 4  # 2 forward, 2 backward, 2 in the recomputed forward
    comm, hidden = {}, {}
    if mesh.tp > 1:  # two all-reduces per layer per pass over the micro-batch's activations; not overlapped
        comm["tp all-reduce"] = (
            per_layer_collectives
            * layers_per_stage
            * micro_batches
            * group_time_s("all-reduce", micro_activation, groups["tp"])
        )
        hidden["tp all-reduce"] = 0.0
    if mesh.cp > 1:  # key-value all-gather forward, reduce-scatter of their gradients backward; hide behind attention
        kv = 2.0 * micro * model.n_kv_heads * model.head_dim * element / mesh.tp  # the whole sequence's K and V
        comm["cp all-gather"] = (
            layers_per_stage
            * micro_batches
            * (group_time_s("all-gather", kv, groups["cp"]) + group_time_s("reduce-scatter", kv, groups["cp"]))
        )
        hidden["cp all-gather"] = min(comm["cp all-gather"], (attention_forward * 3 / count / peak))
    if shards > 1:  # weights gathered, gradients reduce-scattered, behind the passes they serve
        shard = local_params * element
        gathers = 1 if keep_gathered else 2 * micro_batches
        reduces = 1 if keep_gathered else micro_batches
        fsdp = gathers * group_time_s("all-gather", shard, shard_group) + reduces * group_time_s(
            "reduce-scatter", shard, shard_group
        )
        comm["fsdp all-gather + reduce-scatter"] = fsdp
        hidden["fsdp all-gather + reduce-scatter"] = min(fsdp, compute)
    if mesh.dp > 1:  # gradients all-reduced, bucket by bucket during the backward pass
        grads = local_params * element / shards
        comm["dp all-reduce"] = group_time_s("all-reduce", grads, groups["dp"])
        hidden["dp all-reduce"] = min(comm["dp all-reduce"], compute * (1.0 - forward_share))
    if mesh.pp > 1:  # activations forward and their gradients back, per micro-batch, on the critical path
        send = micro_activation / mesh.tp  # Megatron's scatter/gather: each tensor-parallel rank sends its slice
        comm["pp send/recv"] = 2 * (micro_batches + mesh.pp - 1) * send_time_s(send, groups["pp"])
        hidden["pp send/recv"] = 0.0
    if mesh.ep > 1 and model.is_moe:  # dispatch and combine all-to-all per MoE layer per pass; not overlapped
        routed = micro / mesh.cp * model.experts_per_token * model.d_model * element
        comm["ep all-to-all"] = (
            per_layer_collectives * layers_per_stage * micro_batches * group_time_s("all-to-all", routed, ep_topology)
        )
        hidden["ep all-to-all"] = 0.0
    exposed = {name: comm[name] - hidden[name] for name in comm}
    time = compute + bubble + sum(exposed.values())
    fits = total <= room
    reason = "" if fits else (f"needs {total / 2**30:,.1f} GiB per chip, {room / 2**30:,.1f} GiB usable")
    return TrainStep(
        mesh=mesh,
        n_chips=count,
        time_s=time,
        compute_time_s=compute,
        bubble_time_s=bubble,
        comm_time_s=comm,
        exposed_comm_time_s=exposed,
        tokens_per_s=tokens / time,
        mfu=model_flops / (count * peak * time),
        hardware_flops_utilization=(model_flops + extra) / (count * peak * time),
        memory_parts=memory,
        memory_per_chip_bytes=total,
        usable_bytes=room,
        fits=fits,
        reason=reason,
    )


def split_params(model: ModelShape) -> tuple[float, float]:
    """(dense, expert) parameters: the experts of an MoE are sharded over ep, the rest is not."""
    if not model.is_moe:
        return float(model.params()), 0.0
    experts = model.param_breakdown()["experts"]
    return float(model.params() - experts), float(experts)
