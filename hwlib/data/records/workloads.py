"""Workload records: a way to hold a model's training state, a training regime, measured serving runs.

Explained in the chapters :ref:`ch-hbm-budgets`, :ref:`ch-kv-cache`, :ref:`ch-serving`, :ref:`ch-serving-many` and
:ref:`ch-seven-b-regimes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from hwlib._checks import one_of
from hwlib.data.records.hardware import CHIP_FAMILIES, FABRIC_KINDS
from hwlib.data.records.quantities import Sourced

TRAINING_PARTS = ("weights", "gradients", "master", "optimizer")
"""The four parts of a training state, in the order tables and figures show them."""


@dataclass(frozen=True)
class TrainingRecipe:
    """Bytes per parameter of one way to hold a model for training, part by part.

    ``weights``: the copy the passes read; ``gradients``: the gradient buffer; ``master``:
    a separate fp32 copy for the update (0 when the weights are fp32); ``optimizer``:
    optimizer state. ``parts`` describes each in words. Chapter :ref:`ch-hbm-budgets`.
    """

    key: str
    label: str
    weights: float
    gradients: float
    master: float
    optimizer: float
    parts: Mapping[str, str]
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        for name in TRAINING_PARTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ValueError(f"TrainingRecipe.{name} must be a number >= 0, got {value!r}")
        if set(self.parts) != set(TRAINING_PARTS):
            raise ValueError(f"TrainingRecipe.parts must describe exactly {TRAINING_PARTS}, got {sorted(self.parts)}")
        object.__setattr__(self, "parts", MappingProxyType(dict(self.parts)))

    @property
    def bytes_per_param(self) -> float:
        """Bytes per parameter, all four parts together."""
        return float(self.weights + self.gradients + self.master + self.optimizer)

    def breakdown(self) -> dict[str, float]:
        """Bytes per parameter of each part, in ``TRAINING_PARTS`` order."""
        return {name: float(getattr(self, name)) for name in TRAINING_PARTS}

    def __str__(self) -> str:
        terms = " + ".join(f"{getattr(self, name):g}" for name in TRAINING_PARTS)
        return f"{self.label}: {terms} = {self.bytes_per_param:g} B/param [{self.source}]"


@dataclass(frozen=True)
class Scenario:
    """One training regime: T tokens per micro-batch, micro-batches per step, chips, fabric kind.

    ``fabric`` is "scale-up", "scale-out" or None (one chip). Chapter :ref:`ch-seven-b-regimes`.
    """

    name: str
    T: int
    micro_batches: int
    n_chips: int
    fabric: str | None = None

    def __post_init__(self) -> None:
        if self.fabric is not None:
            one_of("fabric", self.fabric, FABRIC_KINDS)


@dataclass(frozen=True)
class ServingRun:
    """One published, measured serving result and the configuration it states.

    ``tokens_per_s`` is the measured output tokens/s of the whole system (Sourced). ``input_len`` and
    ``output_len`` are tokens per request, fixed or a mean (None: not stated); ``batch`` the engine's
    largest batch per replica where stated (a static batch, every sequence run together, where
    ``scenario`` is "static batch"). Dtypes are what the run states or, where it does not,
    the smallest it could have used (said in ``note``). ``outside_model`` says what the run depends on that
    the forecast does not model ("" where it models all of it); such runs keep their bound check but are
    left out of the calibration's error targets. ``source`` begins with the publisher, up to its first comma
    (the group a leave-one-source-out fit drops). Chapter :ref:`ch-serving`.
    """

    key: str
    source: str
    system: str
    chip_key: str
    n_chips: int
    tensor_parallel: int
    model_key: str
    precision: str
    weight_dtype: str
    kv_dtype: str
    activation_dtype: str
    compute_dtype: str
    scenario: str
    tokens_per_s: object
    input_len: int | None
    output_len: float | None
    batch: int | None = None
    note: str = ""
    outside_model: str = ""

    def __post_init__(self) -> None:
        if self.n_chips % self.tensor_parallel:
            raise ValueError(f"tensor_parallel {self.tensor_parallel} must divide n_chips {self.n_chips}")


@dataclass(frozen=True)
class TrainingRun:
    """One published, measured training run and the configuration it states.

    ``mesh`` maps Mesh degrees (dp, fsdp, tp, pp, ep, cp) to sizes; ``global_batch_sequences`` of
    ``seq_len`` tokens. ``measured`` is a Sourced value in the ``metric`` the run reports:
    "megatron_tflops" (teraFLOP/s per GPU counted by Narayanan et al.'s Eq. 3, which includes the
    recomputed forward), "mfu" (model FLOPs utilization) or "tokens_per_s_per_chip". ``dtype`` is the
    matmuls' peak the bound uses; ``causal`` False where the run's kernels computed the whole score matrix.
    ``micro_batch_sequences``, ``interleave`` (pipeline chunks per stage) and ``schedule`` (the pipeline schedule,
    ``hwlib.training.schedules.SCHEDULES``) where the run states them; ``ep_overlap`` where its configuration overlaps
    the expert all-to-alls with another micro-batch's compute and ``experts`` (an
    ``hwlib.data.records.ExpertKernel``) how its routed experts run, where not dropless at the chip's tile
    (``hw.train_step``'s options).
    ``attention``: the fraction of the bf16 peak its attention kernels reach, where the run's stated software
    predates the kernel the chip's record holds (None: the chip's record). ``outside_model`` says what the run
    depends on that the step model leaves out ("" where nothing); such
    runs keep their bound check but are left out of the calibration's error targets. ``source`` begins with
    the publisher, up to its first comma (the group a leave-one-source-out fit drops). Chapter :ref:`ch-sharding`.
    """

    key: str
    source: str
    model: object
    cluster_key: str
    mesh: Mapping
    global_batch_sequences: int
    seq_len: int
    recompute: str
    dtype: str
    metric: str
    measured: object
    causal: bool = True
    note: str = ""
    micro_batch_sequences: int | None = None
    interleave: int | None = None
    attention: object = None
    schedule: str | None = None
    outside_model: str = ""
    ep_overlap: bool = False
    experts: object = None

    def __post_init__(self) -> None:
        one_of("metric", self.metric, ("megatron_tflops", "mfu", "tokens_per_s_per_chip"))
        object.__setattr__(self, "mesh", MappingProxyType(dict(self.mesh)))


@dataclass(frozen=True)
class CollectiveRun:
    """One published, measured collective: ``kind`` over ``n_bytes`` per chip on ``n_chips`` chips of the cluster
    ``cluster_key``, at the measured ``algorithm_bandwidth`` (a Sourced B/s: the array's bytes over the time, as
    nccl-tests prints 'algbw'). Chapter :ref:`ch-sharding`."""

    key: str
    source: str
    cluster_key: str
    n_chips: int
    kind: str
    n_bytes: float
    algorithm_bandwidth: object
    note: str = ""

    @property
    def time_s(self) -> float:
        """The measured time of one collective (s)."""
        return self.n_bytes / float(self.algorithm_bandwidth.value)


@dataclass(frozen=True)
class DecodeRun:
    """One published, measured decode: ``time_per_token`` (a Sourced s) for ``batch`` sequences at
    ``context_len`` tokens of ``model`` (a ModelShape, as run) on ``n_chips`` tensor-parallel chips of
    ``cluster_key``, with the dtypes and the KV-cache layout it states (``hw.inference_step``'s ``kv_layout``).
    Chapter :ref:`ch-serving`."""

    key: str
    source: str
    cluster_key: str
    n_chips: int
    model: object
    batch: int
    context_len: int
    weight_dtype: str
    kv_dtype: str
    time_per_token: object
    kv_layout: str = "heads"
    note: str = ""


LOAD_METRICS = (
    "ttft_p50_s",
    "ttft_p99_s",
    "ttft_mean_s",
    "tpot_p50_s",
    "tpot_p99_s",
    "tpot_mean_s",
    "latency_mean_s",
    "requests_per_s",
    "output_tokens_per_s",
)
"""What a ``LoadRun`` may report: time to first token, time per output token and request latency (s; p50, p99
or mean over requests), completed requests/s and output tokens/s of the whole system."""


@dataclass(frozen=True, eq=False)
class LoadRun:
    """One published serving measurement under a stated load: requests arriving at ``rate_per_s`` (Sourced,
    the whole system's) to ``n_chips`` chips in replicas of ``tensor_parallel``, with the lengths it states
    (``prompt_len`` and ``output_len`` tokens, fixed or a mean) or a shipped dataset's (``lengths``: a
    ``hw.request_trace`` name, answers scaled to ``output_len`` where that is the measured mean), and what it
    measured (``measured``: ``LOAD_METRICS`` name -> Sourced). ``limits``: the p99 TTFT and TPOT (s) the run had
    to meet, where it had any; ``capacity_per_s``: requests/s the same system completed given all its requests at
    once (Sourced; None: not measured); ``n_requests``: how many the run sent (or, where it sent more, enough for
    a steady p99); ``chunked_prefill``: the engine mixes prompts into decode steps (else a
    step that takes prompts decodes nothing); ``outside_model`` what the run depends on that the simulation does
    not model (such runs are shown, not counted in its error). Chapter :ref:`ch-serving-measured`."""

    key: str
    source: str
    system: str
    where_key: str
    n_chips: int
    tensor_parallel: int
    model_key: str
    dtypes: Mapping[str, str]
    rate_per_s: object
    prompt_len: float
    output_len: float
    measured: Mapping[str, object]
    lengths: str = ""
    limits: tuple[float, float] | None = None
    capacity_per_s: object = None
    n_requests: int = 2000
    max_sequences: int = 256
    chunked_prefill: bool = False
    prefix_tokens: int = 0
    prefix_hit_rate: float = 0.0
    outside_model: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if self.n_chips % self.tensor_parallel:
            raise ValueError(f"tensor_parallel {self.tensor_parallel} must divide n_chips {self.n_chips}")
        unknown = set(self.measured) - set(LOAD_METRICS)
        if unknown:
            raise ValueError(f"LoadRun.measured names {sorted(unknown)}; allowed: {LOAD_METRICS}")
        object.__setattr__(self, "measured", MappingProxyType(dict(self.measured)))
        object.__setattr__(self, "dtypes", MappingProxyType(dict(self.dtypes)))

    @property
    def replicas(self) -> int:
        """Engines the load is spread over."""
        return self.n_chips // self.tensor_parallel


@dataclass(frozen=True, eq=False)
class SpeculationRun:
    """A published speed-up of speculative decoding against the batch: ``speedups`` (Sourced, output tokens/s
    with speculation over without) at ``batches`` concurrent requests of ``model_key`` on one ``chip_key``, with
    ``draft_tokens`` proposed per step by ``draft`` ("one layer": one decoder layer of the model with its head,
    as EAGLE's; else a model key). The acceptance is not stated; the check fits it at the first batch. Chapter
    :ref:`ch-serving-measured`."""

    key: str
    source: str
    system: str
    chip_key: str
    model_key: str
    draft: str
    draft_tokens: int
    batches: tuple[int, ...]
    speedups: tuple[object, ...]
    context_len: int
    note: str = ""

    def __post_init__(self) -> None:
        if len(self.batches) != len(self.speedups) or len(self.batches) < 2:
            raise ValueError("SpeculationRun needs one speed-up per batch, at two batches or more")


FORECAST_DOMAINS = ("training", "serving")
"""The two kinds of step a forecast prices: a training step, a serving step."""
MODEL_KINDS = ("dense", "MoE")
"""A model's MLP: dense, or a mixture of experts (``ModelShape.is_moe``)."""
MICRO_BATCH_KINDS = ("one", "many")
"""A training step's micro-batches per data-parallel rank: one (the gradients reduced behind its own backward pass
and nothing to spread a step's fixed costs over) or many."""


@dataclass(frozen=True)
class ForecastError:
    """The forecast's measured error on one kind of run: ``domain`` (training or serving), ``model`` ("dense" or
    "MoE"), ``family`` (the chips' "GPU" or "TPU") and, for training, ``micro_batches`` (``MICRO_BATCH_KINDS``; ""
    for serving). Over ``runs`` measured runs from ``sources`` sources, each source's runs left out of the fit in
    turn, the ``mean`` and ``worst`` absolute relative error of the forecast (Sourced fractions, unit "1"). Chapter
    :ref:`ch-forecast`.
    """

    domain: str
    model: str
    family: str
    runs: int
    sources: int
    mean: Sourced
    worst: Sourced
    micro_batches: str = ""

    def __post_init__(self) -> None:
        one_of("ForecastError.domain", self.domain, FORECAST_DOMAINS)
        one_of("ForecastError.model", self.model, MODEL_KINDS)
        one_of("ForecastError.family", self.family, CHIP_FAMILIES)
        allowed = MICRO_BATCH_KINDS if self.domain == "training" else ("",)
        one_of("ForecastError.micro_batches", self.micro_batches, allowed)
        if not 0 < self.sources <= self.runs:
            raise ValueError(f"ForecastError needs 0 < sources <= runs, got {self.sources} sources, {self.runs} runs")
        if self.worst.value < self.mean.value:
            raise ValueError(f"ForecastError.worst {self.worst.value} must be at least its mean {self.mean.value}")

    @property
    def kind(self) -> tuple[str, str, str, str]:
        """(domain, model, family, micro_batches), e.g. ("training", "dense", "GPU", "many")."""
        return (self.domain, self.model, self.family, self.micro_batches)
