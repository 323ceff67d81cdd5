"""Planning a training step: every mesh of a cluster ranked, and measured runs beside their bound.

Built on ``hw.train_step`` (``parallelism``). Megatron-LM's FLOP count, Eq. (3) of Narayanan et al.,
"Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC 2021,
arXiv:2104.04473, Sec. 5.1, is the one its Table 1 reports. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, one_of, positive, whole_count
from hwlib.data import assumptions
from hwlib.data import cluster as find_cluster
from hwlib.data.records import Cluster, ModelShape, TrainingRun, require
from hwlib.data.records.layer_rules import RECOMPUTE
from hwlib.efficiency import Efficiency, with_fit
from hwlib.training.batch import most_chunks
from hwlib.training.mesh import Mesh
from hwlib.training.schedules import INTERLEAVED
from hwlib.training.step import TrainStep, step_memory, train_step
from hwlib.units import GiB


def megatron_step_flops(batch: float, seq_len: float, n_layers: float, d: float, vocab: float) -> float:
    """FLOPs of one step as Narayanan et al. 2021 count them (Eq. 3), the recomputed forward included:
    96 B s l h^2 (1 + s / 6h + V / 16 l h). Chapter :ref:`ch-sharding`."""
    batch, seq_len, n_layers, d, vocab = (
        float(positive(name, value))
        for name, value in (("batch", batch), ("seq_len", seq_len), ("n_layers", n_layers), ("d", d), ("vocab", vocab))
    )
    return 96.0 * batch * seq_len * n_layers * d**2 * (1.0 + seq_len / (6.0 * d) + vocab / (16.0 * n_layers * d))


def training_run_bound(run: TrainingRun, efficiency: Efficiency | None = None) -> tuple[float, TrainStep]:
    """The most a measured run could reach in its own metric under ``train_step`` for its mesh, and the step.

    The run's micro-batch, schedule and interleaved chunks where it states them; else micro-batches of one sequence
    under a pipeline and the chunks per stage (1, 2, 4 ... up to what the layers allow) whose step is the shortest:
    more chunks shrink the bubble and add pipeline sends. All of HBM (the run fitted). The
    step carries the forecast at ``efficiency`` (``training_run_forecast`` gives it in the run's metric), with the
    run's own attention kernel where it states an older one (``run.attention``) and ``efficiency`` sets none.
    Chapter :ref:`ch-sharding`.
    """
    run = require(TrainingRun, "run", run, "hw.training_runs()[0]")
    mesh = Mesh(**run.mesh)
    model = run.model
    most = max(1, most_chunks(model, mesh) // mesh.pp) if mesh.pp > 1 else 1
    if run.interleave is not None or run.schedule not in (None, *INTERLEAVED):
        chunks = [run.interleave or 1]
    else:
        chunks = sorted({*(2**k for k in range(8) if 2**k < most), most})
    micro = None if run.micro_batch_sequences is None else run.micro_batch_sequences * run.seq_len
    if run.attention is not None:
        efficiency = with_fit(efficiency, attention=float(run.attention.value))
    steps = []
    for chunk in chunks:
        try:
            steps.append(
                train_step(
                    model,
                    find_cluster(run.cluster_key),
                    mesh,
                    run.global_batch_sequences * run.seq_len,
                    run.seq_len,
                    micro,
                    recompute=run.recompute,
                    dtype=run.dtype,
                    interleave=chunk,
                    schedule=run.schedule,
                    ep_overlap=run.ep_overlap,
                    experts=run.experts,
                    usable_fraction=assumptions.BOUND_HBM_FRACTION,
                    causal=run.causal,
                    efficiency=efficiency,
                )
            )
        except ValueError:
            if len(chunks) == 1:
                raise
    step = min(steps, key=lambda step: step.time_s)
    return _in_metric(run, step.time_s, step.mfu, step.tokens_per_s), step


def training_run_forecast(run: TrainingRun, efficiency: Efficiency | None = None) -> Number:
    """The forecast of a measured run in its own metric (``training_run_bound``'s step priced at ``efficiency``;
    an array where the efficiency's fields are). Chapter :ref:`ch-forecast`."""
    _, step = training_run_bound(run, efficiency)
    return _in_metric(run, step.forecast_time_s, step.forecast_mfu, step.forecast_tokens_per_s)


def _in_metric(run: TrainingRun, time_s: Number, mfu: Number, tokens_per_s: Number) -> Number:
    """A step's time, MFU or tokens/s in the run's metric."""
    chips = Mesh(**run.mesh).n_chips  # ep reuses the data-parallel ranks
    if run.metric == "megatron_tflops":
        model = run.model
        flops = megatron_step_flops(run.global_batch_sequences, run.seq_len, model.n_layers, model.d_model, model.vocab)
        return flops / (chips * np.asarray(time_s))
    if run.metric == "mfu":
        return mfu
    return tokens_per_s / chips


def _powers_of_two(limit: int) -> list[int]:
    return [2**k for k in range(int(limit).bit_length()) if 2**k <= limit]


def candidate_meshes(model: ModelShape, cluster: Cluster, n_chips: int, seq_len: int) -> list[Mesh]:
    """Every mesh of ``n_chips`` with power-of-two degrees: tp within one node and dividing the heads, pp up
    to the layers, cp only for sequences of ``assumptions.CONTEXT_PARALLEL_FROM_TOKENS`` or more, ep for a
    mixture of experts, the rest split between fsdp and dp. Chapter :ref:`ch-sharding`."""
    model = require(ModelShape, "model", model, "hw.model('llama-3-70b')")
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    count = whole_count("n_chips", n_chips)
    sequence = int(positive("seq_len", seq_len, integral=True))
    node = cluster.node_size or count
    meshes = []
    for tp in _powers_of_two(min(node, count)):
        for pp in _powers_of_two(min(model.n_layers, count // tp)):
            for cp in (
                _powers_of_two(count // (tp * pp)) if sequence >= assumptions.CONTEXT_PARALLEL_FROM_TOKENS else [1]
            ):
                rest = count // (tp * pp * cp)
                if tp * pp * cp * rest != count:
                    continue
                for fsdp in _powers_of_two(rest):
                    dp = rest // fsdp
                    if dp * fsdp != rest:
                        continue
                    experts = _powers_of_two(min(rest, model.n_experts)) if model.is_moe else [1]
                    meshes += [Mesh(dp=dp, fsdp=fsdp, tp=tp, pp=pp, ep=ep, cp=cp) for ep in experts if rest % ep == 0]
    return meshes


@dataclass(frozen=True)
class PlannedMesh:
    """One candidate mesh of a plan: its step (None where ``train_step`` refuses the mesh) and, where it does not
    fit or is refused, why ("" where it fits). Chapter :ref:`ch-sharding`."""

    mesh: Mesh
    step: TrainStep | None
    reason: str

    @property
    def fits(self) -> bool:
        return self.step is not None and self.step.fits


PLAN_ORDERS = ("forecast", "bound")
"""What ``plan_training`` ranks meshes by: the forecast step time, or the bound's."""


@dataclass(frozen=True)
class TrainingPlan:
    """Every candidate mesh of a cluster for one training step, feasible ones first by forecast step time (or by
    the bound's, ``by``) in ``meshes``, ``feasible`` those that fit, for sequences of ``seq_len`` tokens;
    ``to_frame()`` is the table a chapter shows.
    Chapters :ref:`ch-sharding` and :ref:`ch-forecast`."""

    meshes: tuple[PlannedMesh, ...]
    by: str = "forecast"
    seq_len: int = 1

    @property
    def feasible(self) -> tuple[PlannedMesh, ...]:
        return tuple(planned for planned in self.meshes if planned.fits)

    def to_frame(self) -> object:
        """A pandas DataFrame, one row per mesh (index: the mesh): the bound's step (s), tokens/s and MFU (%), the
        forecast's step and MFU, the planner's choices, memory per chip (GiB), whether it fits and why not."""
        import pandas as pd

        rows = [
            {
                "mesh": str(planned.mesh),
                "step (s)": planned.step.time_s if planned.step else None,
                "tokens/s": planned.step.tokens_per_s if planned.step else None,
                "MFU (%)": 100 * planned.step.mfu if planned.step else None,
                "forecast step (s)": float(planned.step.forecast_time_s) if planned.step else None,
                "forecast MFU (%)": 100 * float(planned.step.forecast_mfu) if planned.step else None,
                "micro-batch (sequences)": planned.step.micro_batch_tokens / self.seq_len if planned.step else None,
                "micro-batches": planned.step.micro_batches if planned.step else None,
                "recompute": planned.step.recompute if planned.step else None,
                "ZeRO over dp": planned.step.zero if planned.step else None,
                "schedule": planned.step.schedule if planned.step else None,
                "chunks per stage": planned.step.interleave if planned.step else None,
                "memory per chip (GiB)": planned.step.memory_per_chip_bytes / GiB if planned.step else None,
                "fits": planned.fits,
                "why not": planned.reason,
            }
            for planned in self.meshes
        ]
        return pd.DataFrame(rows).set_index("mesh")


CHOICES = ("micro_batch_tokens", "recompute", "zero")
"""What the planner chooses for each mesh unless the caller fixes it: the micro-batch, the recomputation and the
ZeRO stage over the dp ranks; under a pipeline also its schedule (``PIPELINES``), unless an interleave or a schedule
is given."""
MEMORY_OPTIONS = ("recipe", "interleave", "schedule", "usable_fraction", "adapter", "offload", "fp8", "dtype")
"""The step options that change its memory, which the planner's memory checks take too."""
INTERLEAVES = (2, 4, 8)
"""The chunks per pipeline stage the planner tries beside one (Megatron-LM's interleaved 1F1B)."""
PIPELINES = {
    "GPU": (*(("interleaved-1f1b", chunks) for chunks in INTERLEAVES), ("zb-h1", 1), ("zb-v", 1), ("dualpipe", 1)),
    "TPU": tuple(("circular", chunks) for chunks in INTERLEAVES),
}
"""The (schedule, chunks per stage) the planner tries beside the default (``default_schedule``: 1F1B on GPUs, GPipe
on TPUs), interleaved ones in order of more chunks, per chip family: a TPU's pipelines are SPMD ones
(``SPMD_SCHEDULES``); a chip given inline takes the GPUs'."""


def searched_recomputes(model: ModelShape) -> list[str]:
    """The recomputations the planner tries on ``model``, least first: ``up-projections`` only where it saves what
    DeepSeek-V3 made it for, an MLA layer's expanded queries, keys and values (elsewhere it saves the norms'
    outputs alone; ``train_step`` takes it for any model). Chapter :ref:`ch-sharding`."""
    return [name for name in RECOMPUTE if name != "up-projections" or model.mla is not None]


def _best_choices(model, cluster, mesh, global_batch_tokens, seq_len, by, options) -> PlannedMesh:
    """The fastest step of ``mesh`` (by the forecast or the bound) over the choices that fit: micro-batches of 1,
    2, 4 ... sequences (up to ``assumptions.LARGEST_MICRO_BATCH_SEQUENCES`` and the rank's share), for each the
    least recomputation and ZeRO stage that fit (each only costs time); where none fits, the most frugal choice
    with its reason."""
    fixed = {name: options[name] for name in CHOICES if name in options}
    rest = {name: value for name, value in options.items() if name not in CHOICES}
    sequences = global_batch_tokens / seq_len / mesh.data_parallel
    if "micro_batch_tokens" in fixed:
        micros = [fixed["micro_batch_tokens"]]
    else:
        largest = min(sequences, assumptions.LARGEST_MICRO_BATCH_SEQUENCES)
        micros = [2**k * seq_len for k in range(8) if 2**k <= largest and sequences % 2**k == 0] or [None]
    recomputes = [fixed["recompute"]] if "recompute" in fixed else searched_recomputes(model)
    zeros = [fixed["zero"]] if "zero" in fixed else ([1, 2] if mesh.dp > 1 else [0])
    memory_options = {name: rest[name] for name in MEMORY_OPTIONS if name in rest}
    starts = dict.fromkeys(zeros, 0)  # a larger micro-batch needs at least the recomputation a smaller one needed
    steps, choices = [], {}
    try:
        for micro in micros:
            fitting = []  # for each ZeRO stage, the least recomputation that fits: which costs less time varies
            for zero in zeros:
                for index in range(starts[zero], len(recomputes)):
                    parts, room = step_memory(
                        model,
                        cluster,
                        mesh,
                        global_batch_tokens,
                        seq_len,
                        micro,
                        recomputes[index],
                        zero=zero,
                        **memory_options,
                    )
                    if sum(parts.values()) <= room:
                        fitting.append((recomputes[index], zero))
                        starts[zero] = index
                        break
                else:
                    starts[zero] = len(recomputes)
            if not fitting:
                break
            priced = [
                train_step(model, cluster, mesh, global_batch_tokens, seq_len, micro, r, zero=z, **rest)
                for r, z in fitting
            ]
            step = min(priced, key=lambda step: _seconds(step, by))
            if steps and _seconds(step, by) >= _seconds(steps[-1], by):
                break  # larger micro-batches help until they do not: the smaller, which holds less, stays
            steps.append(step)
            choices[id(step)] = [(micro, r, z) for r, z in fitting]
        if not steps:  # nothing fits: the most frugal choice, with its reason
            frugal = (micros[0], recomputes[-1])
            steps = [train_step(model, cluster, mesh, global_batch_tokens, seq_len, *frugal, zero=zeros[-1], **rest)]
    except ValueError as error:
        return PlannedMesh(mesh, None, str(error).split(": ", 1)[-1])
    best = min(steps, key=lambda step: (not step.fits, _seconds(step, by)))
    if best.fits and mesh.pp > 1 and "interleave" not in options and "schedule" not in options:
        fitting = choices.get(id(best), [(best.micro_batch_tokens, best.recompute, best.zero)])
        best = _pipelined(model, cluster, mesh, global_batch_tokens, seq_len, by, best, fitting, rest, memory_options)
    return PlannedMesh(mesh, best, best.reason)


def _pipelined(
    model, cluster, mesh, global_batch_tokens, seq_len, by, best, fitting, rest, memory_options
) -> TrainStep:
    """``best`` or, faster, one of the ``fitting`` choices (micro-batch, recompute, ZeRO stage) under another
    schedule (``PIPELINES``, where the layers, the micro-batches and the memory allow): interleaving shrinks the
    bubble with more, partly hidden, sends and more in flight, until the sends outweigh it; the zero-bubble
    schedules fill it with deferred weight gradients; DualPipe halves it and hides the sends for two copies of the
    stage's weights."""
    stop_interleaving = False
    for schedule, chunks in PIPELINES.get(cluster.chip.family, PIPELINES["GPU"]):
        interleaved = schedule in INTERLEAVED
        if interleaved and stop_interleaving:
            continue
        settings = {"schedule": schedule, "interleave": chunks}
        tried = [
            _fitting_step(
                model,
                cluster,
                mesh,
                global_batch_tokens,
                seq_len,
                (micro, recompute),
                zero,
                {**memory_options, **settings},
                {**rest, **settings},
            )
            for micro, recompute, zero in fitting
        ]
        found = [step for step in tried if step is not None]
        step = min(found, key=lambda step: _seconds(step, by)) if found else None
        if step is not None and _seconds(step, by) < _seconds(best, by):
            best = step
        elif interleaved:
            stop_interleaving = True  # more chunks hold more in flight and send more
    return best


def _fitting_step(model, cluster, mesh, global_batch_tokens, seq_len, choice, zero, memory_options, options):
    """``train_step`` with ``choice`` (micro-batch, recompute) and ``zero`` where its memory fits, else None (as
    where the schedule refuses the micro-batches or the layers)."""
    try:
        parts, room = step_memory(
            model, cluster, mesh, global_batch_tokens, seq_len, *choice, zero=zero, **memory_options
        )
        if sum(parts.values()) > room:
            return None
        return train_step(model, cluster, mesh, global_batch_tokens, seq_len, *choice, zero=zero, **options)
    except ValueError:
        return None


def best_step(
    model: ModelShape,
    cluster: Cluster,
    mesh: Mesh,
    global_batch_tokens: float,
    seq_len: int,
    *,
    by: str = "forecast",
    **options: object,
) -> TrainStep:
    """``train_step`` of ``mesh`` with the fastest of its choices that fit (``CHOICES``, as ``plan_training`` picks
    them; an option fixes one), else its most frugal choice, which says why it does not fit. Raises ValueError
    for a mesh that does not divide the model or the batch. Chapter :ref:`ch-sharding`."""
    one_of("by", by, PLAN_ORDERS)
    model = require(ModelShape, "model", model, "hw.model('llama-3-70b')")
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    mesh = require(Mesh, "mesh", mesh, "hw.Mesh(fsdp=8, tp=8)")
    planned = _best_choices(model, cluster, mesh, global_batch_tokens, seq_len, by, options)
    if planned.step is None:
        raise ValueError(f"mesh {mesh}: {planned.reason}")
    return planned.step


def _seconds(step: TrainStep, by: str) -> float:
    return float(step.forecast_time_s if by == "forecast" else step.time_s)


def plan_training(
    model: ModelShape,
    cluster: Cluster,
    global_batch_tokens: float,
    seq_len: int,
    n_chips: int | None = None,
    *,
    by: str = "forecast",
    **options: object,
) -> TrainingPlan:
    """``train_step`` for every candidate mesh of ``n_chips`` chips of ``cluster`` (default: the cluster's
    largest), each with the fastest of its choices that fit (``CHOICES``: micro-batch, recomputation, ZeRO stage
    over dp; an option fixes one), feasible ones first by forecast step time (``by="bound"``: by the bound's), each
    other one with its reason. ``options`` go to ``train_step`` (``efficiency=`` among them). Chapters
    :ref:`ch-sharding` and :ref:`ch-forecast`."""
    one_of("by", by, PLAN_ORDERS)
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    count = cluster.max_chips if n_chips is None else n_chips
    if count is None:
        raise ValueError(f"n_chips is needed: {cluster.name} has no largest size")
    planned = [
        _best_choices(model, cluster, mesh, global_batch_tokens, seq_len, by, options)
        for mesh in candidate_meshes(model, cluster, count, seq_len)
    ]

    def seconds(planned: PlannedMesh) -> float:
        return float("inf") if planned.step is None else _seconds(planned.step, by)

    return TrainingPlan(tuple(sorted(planned, key=lambda p: (not p.fits, seconds(p)))), by, int(seq_len))
