"""Pipeline schedules: each one's bubble, the activations its most loaded stage keeps, and what else it changes.

A pipeline of p = ``pp`` stages runs m = ``micro_batches`` micro-batches per optimizer step. Per micro-batch a
stage's forward takes T_F, its backward T_B for the input gradient and T_W for the weight gradient (Qi et al.'s
split; the full backward is T_B + T_W). A stage's ideal compute is m (T_F + T_B + T_W); ``bubble_share`` is its
idle time over that ideal, the factor a step multiplies its compute time by (``bubble_time_s / compute_time_s``).
The default split T_F : T_B : T_W = 1 : 1 : 1 is the transformer table's rule (the backward costs twice the
forward, input and weight gradients alike; ``layer_rules.TRAINING_OVER_FORWARD``), and the zero-bubble paper's
assumption; attention's backward is all input gradient, so pass other times where it weighs.

Per stage and step (p stages, m micro-batches, v chunks per stage):

- ``gpipe``: idle (p-1)(T_F + T_B + T_W); m micro-batches in flight; any m.
- ``1f1b``: idle (p-1)(T_F + T_B + T_W); min(p, m) in flight; any m.
- ``interleaved-1f1b``: idle (p-1)(T_F + T_B + T_W) / v; min(p + (p-1)/v, m) in flight; m a multiple of p.
- ``circular``: idle (p-1)(T_F + T_B + T_W) / v; m in flight; m a multiple of p.
- ``zb-h1``: idle (p-1)(T_F + T_B - T_W); p in flight; m >= p.
- ``zb-v``: idle (p-1)(T_F + T_B - 2 T_W); p in flight; m >= 2p.
- ``dualpipe``: idle (p/2 - 1)(T_FB + T_B - 2 T_W), T_FB the overlapped forward and backward pair; p + 1 in
  flight and two copies of the stage's parameters; even p, even m >= 2p.

``in_flight`` counts one micro-batch's activations through L/p layers (a stage's share of an evenly split
model; ``zero.chip_bytes``'s unit): an interleaved chunk of L/(p v) layers counts 1/v, a ZB-V chunk 1/2.
A step prices it so: bubble time = ``bubble_share`` x the stage's compute time (forward, backward and any
recompute); activations = one layer's bytes x L/p x ``in_flight``; the training state of its L/p layers x
``weight_copies``; pipeline sends x ``p2p_factor``; the parts in ``hidden_comm`` hide behind compute; the model
must hold ``model_chunks`` <= L pieces. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, broadcast, describe, non_negative, one_of, positive, scalar_or_array, whole_or_array
from hwlib.data.records.layer_rules import TRAINING_OVER_FORWARD

SCHEDULES = ("gpipe", "1f1b", "interleaved-1f1b", "circular", "zb-h1", "zb-v", "dualpipe")
"""The pipeline schedules hwlib prices, as ``schedule`` names them."""
INTERLEAVED = ("interleaved-1f1b", "circular")
"""Schedules that cut each stage's layers into ``interleave`` chunks."""
SPMD_SCHEDULES = ("gpipe", "circular")
"""The schedules a single-program (SPMD) pipeline runs: the backward is the automatic derivative of a loop of
forwards over the micro-batches, so every forward runs before any backward. MaxText, the JAX trainer of every
published TPU run, "currently supports ``gPipe`` and ``circular pipelines``"; 1F1B and DualPipe await
multiple-program (MPMD) JAX (AI-Hypercomputer/maxtext, docs/guides/optimization/sharding.md, "Pipeline
Parallelism (PP)" and "Other Pipeline Schedules", commit c01ff78e, read 2026-12-06). The planner offers these on
TPUs, the others on GPUs (``default_schedule``)."""
SPLIT_BACKWARD = ("zb-h1", "zb-v", "dualpipe")
"""Schedules that run the backward as two passes, B (input gradient) and W (weight gradient), and move W into
the bubbles (Qi et al. 2023, Sec. 2; DeepSeek-V3's DualPipe as well)."""
DUALPIPE_HIDDEN = ("ep all-to-all", "pp send/recv")
"""Step parts DualPipe hides behind the paired chunk's compute: "both all-to-all and PP communication can be
fully hidden during execution" (DeepSeek-AI 2024, arXiv:2412.19437, Sec. 3.2.1), named as a step's parts are."""
BACKWARD_INPUT_OVER_FORWARD = (TRAINING_OVER_FORWARD - 1) / 2
"""T_B / T_F: half the backward, which costs twice the forward, is the input gradient (1)."""
BACKWARD_WEIGHT_OVER_FORWARD = (TRAINING_OVER_FORWARD - 1) / 2
"""T_W / T_F: the other half is the weight gradient (1)."""
EMBEDDING_AND_LOSS_CHUNKS = 2
"""Pipeline chunks beyond the transformer layers a model may be cut into: the embedding and the output head with
the loss each take a chunk's place, as Megatron-LM's ``account_for_embedding_in_pipeline_split`` and
``account_for_loss_in_pipeline_split`` count each as "a standard transformer layer" and Llama 3 405B's pipeline
gives its first and last stages one layer fewer (``stage_layers``): a model of L layers takes at most L + 2 chunks."""
_MODEL_CHUNKS = {"interleaved-1f1b": None, "circular": None, "zb-v": 2}  # pieces per stage; None: ``interleave``
_P2P = {"zb-v": 2.0}  # pipeline sends per micro-batch over 1F1B's; interleaving's is ``interleave``


def default_schedule(family: str, interleave: int = 1) -> str:
    """The schedule a pipeline on a chip of ``family`` ("GPU", "TPU", "" for a chip given inline) runs unless told:
    on TPUs the SPMD schedules (``SPMD_SCHEDULES``: GPipe, circular with ``interleave`` > 1), elsewhere 1F1B
    (interleaved with ``interleave`` > 1), Megatron-LM's. Chapter :ref:`ch-sharding`."""
    spmd = family == "TPU"
    if int(interleave) == 1:
        return "gpipe" if spmd else "1f1b"
    return "circular" if spmd else "interleaved-1f1b"


@dataclass(frozen=True)
class PipelineCost:
    """What a pipeline schedule costs a step (``pipeline_schedule``). Chapter :ref:`ch-sharding`.

    - ``bubble_share``: idle time of a stage over its ideal compute m (T_F + T_B + T_W), the factor a step's
      compute time takes for the bubble.
    - ``in_flight``: micro-batches' activations the most loaded stage holds at its peak, in units of one
      micro-batch through L/p layers (may be fractional for interleaving).
    - ``weight_copies``: copies of its stage's parameters a device keeps (and so of its gradients and
      optimizer state): 2 for DualPipe, else 1.
    - ``model_chunks``: the pieces the layers are cut into: p, p v interleaved, 2p for ZB-V.
    - ``p2p_factor``: pipeline sends (activations forward, gradients back) per micro-batch and stage, over
      1F1B's: v interleaved, 2 for ZB-V, else 1.
    - ``splits_backward``: the backward runs as B and W passes, W deferred into the bubbles.
    - ``hidden_comm``: step parts the schedule hides behind compute (DualPipe: EP all-to-all, pipeline sends).
    - ``min_micro_batches``: the fewest micro-batches the schedule takes.
    """

    schedule: str
    bubble_share: Number
    in_flight: Number
    weight_copies: int
    model_chunks: Number
    p2p_factor: Number
    splits_backward: bool
    hidden_comm: tuple[str, ...]
    min_micro_batches: Number


@dataclass(frozen=True)
class UnevenStages:
    """A pipeline whose stages carry unequal work (``uneven_stages``). Chapter :ref:`ch-sharding`.

    ``pace`` is the slowest stage's work over the mean (1 when even), ``slowest_stage`` its index, and
    ``bubble_share`` the idle time over the even split's ideal compute, the schedule's bubble included; ``even``
    is the schedule on even stages."""

    stage_work: tuple[float, ...]
    pace: float
    slowest_stage: int
    bubble_share: Number
    even: PipelineCost


def _fail(name: str, value: object, allowed: str, schedule: str) -> None:
    raise ValueError(f"{name} must be {allowed} for schedule {schedule!r}, got {describe(value)}")


def _stages(schedule: object, pp: object, interleave: object) -> tuple[str, np.ndarray, np.ndarray]:
    """The schedule, pp and interleave, validated against each other."""
    one_of("schedule", schedule, SCHEDULES)
    p = positive("pp", pp, integral=True)
    v = positive("interleave", interleave, integral=True)
    if schedule in INTERLEAVED:
        if (v < 2).any():
            plain = "1f1b" if schedule == "interleaved-1f1b" else "gpipe"
            _fail("interleave", interleave, f">= 2 (1 is plain {plain!r})", schedule)
        if (p < 2).any():
            _fail("pp", pp, ">= 2", schedule)
    elif (v != 1).any():
        _fail("interleave", interleave, f"1 (chunks per stage apply to {INTERLEAVED} only)", schedule)
    if schedule == "dualpipe" and (p % 2 != 0).any():
        _fail("pp", pp, "even (DualPipe feeds micro-batches from both ends)", schedule)
    return schedule, p, v


def _pass_times(schedule: str, t_f: object, t_b: object, t_w: object, t_fb: object):
    """(T_F, T_B, T_W, T_FB), validated; T_FB defaults to T_F + T_B + T_W and applies to DualPipe only."""
    f = positive("t_f", t_f)
    b = positive("t_b", t_b)
    w = non_negative("t_w", t_w)
    if t_fb is None:
        return f, b, w, f + b + w
    if schedule != "dualpipe":
        _fail("t_fb", t_fb, "None (the overlapped forward-and-backward time applies to 'dualpipe' only)", schedule)
    fb = positive("t_fb", t_fb)
    if ((fb < np.maximum(f, b + w)) | (fb > f + b + w)).any():
        _fail("t_fb", t_fb, "between max(t_f, t_b + t_w) and t_f + t_b + t_w", schedule)
    return f, b, w, fb


def min_micro_batches(schedule: str, pp: Number, interleave: Number = 1) -> Number:
    """The fewest micro-batches per step ``schedule`` takes on ``pp`` stages (1; p; 2p), to search from.

    GPipe and 1F1B run any m >= 1. Interleaved 1F1B needs m a multiple of p (Narayanan et al. 2021,
    arXiv:2104.04473, Sec. 2.2.2; Megatron-LM runs m >= p in groups of ``microbatch_group_size_per_vp_stage``,
    p by default). ZB-H1 defers p-1 weight passes into the cool-down, so m >= p. ZB-V fills its warm-up with
    up to 2p chunk forwards (``max_mem = f_mem * n_stage * 2`` in sail-sg/zero-bubble-pipeline-parallelism,
    ``zerobubble/scheduler/zbv.py``): at m = p its own scheduler still idles (p-1) chunk forwards. DualPipe
    asserts ``num_chunks % 2 == 0 and num_chunks >= num_ranks * 2`` (deepseek-ai/DualPipe, ``dualpipe.py``).
    MaxText's circular pipeline takes m a multiple of p ("num_pipeline_microbatches must be a multiple of the
    number of pipeline stages", ``src/maxtext/configs/base.yml``, commit e591f30c). Chapter :ref:`ch-sharding`."""
    schedule, p, _ = _stages(schedule, pp, interleave)
    fewest = {"interleaved-1f1b": p, "circular": p, "zb-h1": p, "zb-v": 2 * p, "dualpipe": 2 * p}
    fewest = fewest.get(schedule, np.ones_like(p))
    return whole_or_array(fewest)


def bubble_time(
    schedule: str,
    pp: Number,
    *,
    interleave: Number = 1,
    t_f: Number = 1.0,
    t_b: Number = BACKWARD_INPUT_OVER_FORWARD,
    t_w: Number = BACKWARD_WEIGHT_OVER_FORWARD,
    t_fb: Number | None = None,
) -> Number:
    """Idle time of one pipeline stage per step, in the unit of ``t_f``, ``t_b`` and ``t_w`` (per micro-batch
    and stage: forward, input-gradient and weight-gradient passes; ``t_fb`` DualPipe's overlapped pair).

    - GPipe and 1F1B: (p-1)(T_F + T_B + T_W). The last micro-batch's forward reaches the last stage p-1
      forward slots after the first stage began, and its backward comes back through p-1 backward slots, so
      each stage waits (p-1)(t_f + t_b) in Narayanan et al.'s notation (arXiv:2104.04473, Sec. 2.2.1,
      t_pb = (p-1)(t_f + t_b), bubble fraction (p-1)/m of the ideal m (t_f + t_b)); 1F1B reorders the passes
      but keeps the fill and drain; GPipe's is the same (Huang et al. 2019, arXiv:1811.06965, Sec. 2.3,
      O((p-1)/(m+p-1)) of the total time, i.e. (p-1)/m of the ideal).
    - Interleaved 1F1B with v chunks per stage: each slot is a chunk of L/(p v) layers, so fill and drain take
      1/v as long: (p-1)(t_f + t_b)/v (Narayanan et al., Sec. 2.2.2).
    - Circular (GPipe with v repeats): the same, MaxText's "Bubble = (PP - 1) / (repeats * Microbatches + PP -
      1)" of the step (docs/guides/optimization/sharding.md), (p-1)/(v m) of the ideal.
    - ZB-H1: (p-1)(T_F + T_B - T_W), against 1F1B's (p-1)(T_F + T_B + T_W) (Qi et al. 2023, "Zero Bubble
      Pipeline Parallelism", arXiv:2401.10241, Sec. 2.1 and Table 2): W passes deferred by the warm-up count
      fill the tail, a third of 1F1B's bubble at T_F = T_B = T_W, at 1F1B's peak memory.
    - ZB-V: the model in 2p chunks, two per device in a "V"; its authors give bubble rate 0 at
      T_F = T_B = T_W with 1F1B's activation memory and twice its pipeline traffic (arXiv:2401.10241 v2,
      ZB-V; the README of sail-sg/zero-bubble-pipeline-parallelism). For other splits no closed form is
      published: hwlib takes ZB-H2's (p-1)(T_F + T_B - 2 T_W) (Table 2), the zero-bubble schedule's idle,
      floored at 0. The authors' V scheduler (``zbv.py``) idles longer where T_F and T_B differ,
      so read it as the bound's bubble, not a forecast of that scheduler.
    - DualPipe: (PP/2 - 1)(F&B + B - 3W), with B the full backward T_B + T_W: (p/2-1)(T_FB + T_B - 2 T_W)
      (DeepSeek-AI 2024, DeepSeek-V3 technical report, arXiv:2412.19437, Sec. 3.2.1, Table 2; ZB1P's
      (PP-1)(F + B - 2W) there is ZB-H1's). F&B is "the execution time of two mutually overlapped forward and
      backward chunks": their compute runs one after the other, the overlap hides communication, so T_FB
      defaults to T_F + T_B + T_W (DualPipe's published schedule for 8 ranks and 20 micro-batches idles 6 of
      66 slots a row, (8/2-1)(3 + 2 - 3) at unit passes).

    The zero-bubble forms are floored at 0. Vectorised over ``pp`` and the times.
    Chapter :ref:`ch-sharding`."""
    schedule, p, v = _stages(schedule, pp, interleave)
    f, b, w, fb = _pass_times(schedule, t_f, t_b, t_w, t_fb)
    p, v, f, b, w, fb = broadcast(pp=p, interleave=v, t_f=f, t_b=b, t_w=w, t_fb=fb)
    if schedule in ("gpipe", "1f1b"):
        idle = (p - 1) * (f + b + w)
    elif schedule in INTERLEAVED:
        idle = (p - 1) * (f + b + w) / v
    elif schedule == "zb-h1":
        idle = (p - 1) * np.maximum(f + b - w, 0.0)
    elif schedule == "zb-v":
        idle = (p - 1) * np.maximum(f + b - 2 * w, 0.0)
    else:  # dualpipe: (PP/2 - 1)(F&B + B_full - 3W) with B_full = T_B + T_W
        idle = (p / 2 - 1) * np.maximum(fb + (b + w) - 3 * w, 0.0)
    return scalar_or_array(idle)


def pipeline_schedule(
    schedule: str,
    pp: Number,
    micro_batches: Number,
    interleave: Number = 1,
    *,
    t_f: Number = 1.0,
    t_b: Number = BACKWARD_INPUT_OVER_FORWARD,
    t_w: Number = BACKWARD_WEIGHT_OVER_FORWARD,
    t_fb: Number | None = None,
) -> PipelineCost:
    """What ``schedule`` costs a step of ``micro_batches`` micro-batches on ``pp`` stages (``interleave`` chunks
    per stage for the interleaved schedules, ``INTERLEAVED``): its bubble as a share of the ideal compute,
    ``bubble_time`` over m (T_F + T_B + T_W), and its in-flight activations, in units of one micro-batch through
    L/p layers:

    - GPipe runs every forward before any backward: all m (Huang et al. 2019, Sec. 2.2; its re-materialization
      is hwlib's ``recompute`` option, not the schedule).
    - 1F1B: the first stage runs p-1 warm-up forwards, then one forward and one backward: min(p, m)
      (Narayanan et al. 2021, Sec. 2.2.1; Megatron-LM's ``num_warmup_microbatches = pipeline_parallel_size -
      pipeline_parallel_rank - 1``).
    - Interleaved 1F1B: the first stage runs 2(p-1) + (v-1)p warm-up chunk forwards, then one more
      (Megatron-LM, ``megatron/core/pipeline_parallel/schedules.py``, ``(pipeline_parallel_size -
      pipeline_parallel_rank - 1) * 2`` plus ``(num_model_chunks - 1) * microbatch_group_size_per_vp_stage``,
      the group p by default): v p + p - 1 chunks of L/(p v) layers, p + (p-1)/v micro-batches' worth, at
      most m. This is Megatron-LM's memory estimate (``megatron/training/theoretical_memory_usage.py``, after
      Korthikanti et al. 2022, arXiv:2205.05198): the first stage's activations for p micro-batches times
      ``interleaved_schedule_memory_penalty = 1 + ((pipeline_model_parallel_size - 1) /
      (pipeline_model_parallel_size * virtual_pipeline_model_parallel_size))``.
    - Circular: GPipe's, all m: a stage holds each micro-batch's activations through its v chunks of L/(p v)
      layers until the backward loop reaches them.
    - ZB-H1: 1F1B's peak, p M_B on the first worker (Qi et al. 2023, Sec. 2.3, Table 2: worker i holds
      (p-i+1) M_B + (i-1) M_W with M_W < M_B).
    - ZB-V: 2p chunk micro-batches of L/(2p) layers, p: 1F1B's ("Activation Memory (Compared to 1F1B) 1x").
    - DualPipe: PP + 1 (DeepSeek-V3, Table 2), and "two copies of the model parameters" (Sec. 3.2.1): a device
      holds stage i for one direction and stage p-1-i for the other, so ``weight_copies`` = 2.

    Raises ValueError where the schedule does not take the input (``min_micro_batches``; interleaving only for
    ``INTERLEAVED``; an even pp and m for DualPipe, which "only requires that the pipeline stages and
    micro-batches be divisible by 2"). Vectorised over ``pp``, ``micro_batches``, ``interleave`` and the times.
    Chapter :ref:`ch-sharding`."""
    idle = np.asarray(bubble_time(schedule, pp, interleave=interleave, t_f=t_f, t_b=t_b, t_w=t_w, t_fb=t_fb))
    f, b, w, _ = _pass_times(schedule, t_f, t_b, t_w, t_fb)
    _, p, v = _stages(schedule, pp, interleave)
    m = positive("micro_batches", micro_batches, integral=True)
    fewest = np.asarray(min_micro_batches(schedule, pp, interleave), dtype=float)
    if (m < fewest).any():
        allowed = {"zb-v": ">= 2 pp", "dualpipe": ">= 2 pp"}.get(schedule, ">= pp")
        _fail("micro_batches", micro_batches, f"{allowed} (pp={describe(pp)})", schedule)
    if schedule in INTERLEAVED and (m % p != 0).any():
        _fail("micro_batches", micro_batches, f"a multiple of pp={describe(pp)}", schedule)
    if schedule == "dualpipe" and (m % 2 != 0).any():
        _fail("micro_batches", micro_batches, "even (half enter from each end)", schedule)
    p, m, v, idle, fewest, ideal = broadcast(
        pp=p, micro_batches=m, interleave=v, bubble=idle, fewest=fewest, ideal=f + b + w
    )
    in_flight = {
        "gpipe": m,
        "1f1b": np.minimum(p, m),
        "interleaved-1f1b": np.minimum(p + (p - 1) / v, m),
        "circular": m,
        "zb-h1": np.minimum(p, m),
        "zb-v": p,
        "dualpipe": p + 1,
    }[schedule]
    chunks = _MODEL_CHUNKS.get(schedule, 1)
    return PipelineCost(
        schedule=schedule,
        bubble_share=scalar_or_array(idle / (m * ideal)),
        in_flight=scalar_or_array(in_flight),
        weight_copies=2 if schedule == "dualpipe" else 1,
        model_chunks=whole_or_array(p * (v if chunks is None else chunks)),
        p2p_factor=scalar_or_array(v if schedule in INTERLEAVED else np.full_like(p, _P2P.get(schedule, 1.0))),
        splits_backward=schedule in SPLIT_BACKWARD,
        hidden_comm=DUALPIPE_HIDDEN if schedule == "dualpipe" else (),
        min_micro_batches=whole_or_array(fewest),
    )


def stage_layers(n_layers: int, pp: int, *, fewer_first: int = 0, fewer_last: int = 0) -> np.ndarray:
    """Transformer layers on each of ``pp`` stages when the first and last hold ``fewer_first`` and
    ``fewer_last`` fewer than the others, to make room for the embedding and the output head with the loss.

    Llama 3 405B (126 layers, pp 16): "we reduce one Transformer layer each from the first and the last
    stages" (Dubey et al. 2024, arXiv:2407.21783, Sec. 3.3.2), 7, then 8 on each of 14, then 7. Megatron-LM's
    ``account_for_embedding_in_pipeline_split`` and ``account_for_loss_in_pipeline_split`` count each as "a
    standard transformer layer" in the split; the zero-bubble authors advise ``k * pp - 2`` layers for the same
    reason. The middle stages take (L + fewer_first + fewer_last) / pp each, which must be whole.
    Chapter :ref:`ch-sharding`."""
    layers = int(positive("n_layers", n_layers, integral=True))
    stages = int(positive("pp", pp, integral=True))
    first = int(non_negative("fewer_first", fewer_first, integral=True))
    last = int(non_negative("fewer_last", fewer_last, integral=True))
    if stages == 1 and first + last:
        raise ValueError(f"fewer_first and fewer_last must be 0 with pp=1, got {first} and {last}")
    middle, left = divmod(layers + first + last, stages)
    if left or middle < max(first, last):
        raise ValueError(
            f"n_layers={layers} with fewer_first={first} and fewer_last={last} must split into pp={stages} "
            f"stages of a whole number k >= {max(first, last)} of layers, the first k - {first}, the last k - {last}"
        )
    split = np.full(stages, middle, dtype=np.int64)
    split[0] -= first
    split[-1] -= last
    return split


def uneven_stages(
    stage_work: object,
    micro_batches: Number,
    schedule: str = "1f1b",
    interleave: Number = 1,
    *,
    t_f: Number = 1.0,
    t_b: Number = BACKWARD_INPUT_OVER_FORWARD,
    t_w: Number = BACKWARD_WEIGHT_OVER_FORWARD,
    t_fb: Number | None = None,
) -> UnevenStages:
    """The bubble of ``schedule`` when its stages carry the unequal ``stage_work`` (one value per stage, any
    unit: layers, or layers plus the embedding's and the head's work in layers).

    Every slot of the schedule waits for the slowest stage, so the step is the even schedule's at the slowest
    stage's work: time = m w_max (1 + b) for the even bubble share b, against the ideal m w_mean of the even
    split (the model's FLOPs over the chips, what a step's compute time is). The bubble share is then
    r (1 + b) - 1 with the pace r = w_max / w_mean: a stage 5 % over the mean costs the whole pipeline 5 %.
    For GPipe and 1F1B the fill and drain pass each stage once (sum of w_i, not p w_max), so this overstates
    their step by at most p (r - 1) / m of the ideal. Chapter :ref:`ch-sharding`."""
    work = non_negative("stage_work", stage_work)
    if work.ndim != 1 or work.size == 0 or not work.sum() > 0:
        raise ValueError(f"stage_work must be one value >= 0 per stage, not all 0, got {describe(stage_work)}")
    even = pipeline_schedule(schedule, work.size, micro_batches, interleave, t_f=t_f, t_b=t_b, t_w=t_w, t_fb=t_fb)
    pace = float(work.max() / work.mean())
    return UnevenStages(
        stage_work=tuple(float(x) for x in work),
        pace=pace,
        slowest_stage=int(work.argmax()),
        bubble_share=scalar_or_array(pace * (1 + np.asarray(even.bubble_share)) - 1),
        even=even,
    )
