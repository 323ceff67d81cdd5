"""The forecast's fitted values: what no kernel record covers, fitted by ``hw.calibration()`` on the measured runs.

Each is the value the fit over every measured run in the error targets returns (serving runs for the first three,
training runs for the next four), then the forecast's errors; ``tests/test_forecast.py`` refits and checks that these
are its result, so a change to the runs or the model that moves the fit fails until they are updated here (the
failure prints the new ``FORECAST_ERRORS`` entries, from ``hwlib.calibration_fit.forecast_error_lines``). Chapter
:ref:`ch-forecast`.
"""

from __future__ import annotations

from hwlib.data.records import ForecastError, cite

_FIT = cite("hw.calibration(), fitted on the measured runs of hw.training_runs() and hw.serving_runs()")

HBM_FRACTION = _FIT(
    0.7,
    "1",
    "fitted",
    "Share of the HBM bandwidth the kernels of a serving step reach on every chip: no published stream measurement "
    "of these chips was found to quote.",
)
"""Share of HBM bandwidth kernels reach (fitted)."""

LAYER_OVERHEAD_S = _FIT(
    54e-6,
    "s",
    "fitted",
    "Seconds each layer adds to every serving step beyond its kernels' priced time: launches, the gaps between "
    "kernels, sampling and scheduling, spread over the layers.",
)
"""Seconds each layer adds to every serving step (fitted)."""

SEQUENCE_OVERHEAD_S = _FIT(
    20e-6,
    "s",
    "fitted",
    "Seconds each sequence in a batch adds to every serving step beyond its kernels' priced time: sampling, "
    "detokenization and the scheduler's work per request.",
)
"""Seconds each sequence adds to every serving step (fitted)."""

SYSTEM_POWER_PER_TDP = cite(
    "hwlib.cost_check.power_fit(): the measured system powers of hwlib.data.power_runs in the fit", "2026-12-06"
)(
    1.247,
    "1",
    "fitted",
    "A system's power at the wall under load, per GPU, over the GPU's TDP: the mean over the measured systems (MLPerf "
    "Inference Power's B200 servers, an 8-GPU H100 node training); what the hosts, fans, NICs and power supplies add "
    "to GPUs running near their limit.",
)
"""System power per GPU under load, as a multiple of the GPU's TDP (fitted)."""

REQUEST_OVERHEAD_S = cite(
    "hwlib.serving.closed_loop.request_overhead_fit(): NIM's TensorRT-LLM runs of one client and 200-token prompts "
    "(hwlib.data.concurrency_runs)",
    "2026-12-06",
)(
    5.8e-3,
    "s",
    "fitted",
    "Seconds between a request's sending and its scheduling, with its first token's way back: the median of the "
    "measured time to first token less the simulated one over the closed-loop runs of one client and 200-token "
    "prompts, where a prompt's prefill is short and no other request waits beside it.",
)
"""Seconds a simulated server takes between a request's sending and its scheduling (fitted)."""

DECODE_WALK_SHARE = cite(
    "hwlib.serving.closed_loop.decode_walk_fit(): NIM's TensorRT-LLM runs of one client (hwlib.data.concurrency_runs), "
    "their time per output token at 7,000-token prompts less that at 200-token prompts",
    "2026-12-06",
)(
    2.23,
    "1",
    "fitted",
    "Bandwidth one SM reaches walking a sequence's KV cache alone, as a multiple of its even share of the HBM "
    "bandwidth (the chip's bandwidth over its SMs): what prices a decode step's attention in an engine that gives "
    "each (sequence, KV head) one thread block and does not split its context over several "
    "(EngineProfile.splits_attention).",
)
"""A lone SM's KV-cache bandwidth, as a multiple of its even share of HBM (fitted)."""

ELEMENTWISE_PASSES = _FIT(
    3.0,
    "1",
    "fitted",
    "Passes of a training step's elementwise kernels (norms, activations, residual adds, rotary embeddings, "
    "softmax outside fused attention, casts) over the activations its matmuls read and write, per forward, "
    "backward (twice) and recomputed forward, at the chip's achieved HBM bandwidth.",
)
"""Passes of training's elementwise kernels over the matmuls' activations (fitted)."""

MOE_LAYER_OVERHEAD_S = _FIT(
    1.6e-3,
    "s",
    "fitted",
    "Seconds each MoE layer adds to a training step per micro-batch it runs forward and backward, beyond its "
    "kernels' priced time: the router, the token permutation and its host synchronisation (the all-to-all's split "
    "sizes), and the small kernels between them, on software that launches kernels from the host (Megatron-Core's "
    "MoE guide: 'CPU Overhead Bottleneck', 'gaps between GPU kernels where CPU cannot launch kernels fast enough'). "
    "Serving pays it once a step in a prompt's step launched from the host (EngineProfile.eager_prefill), where the "
    "forward's routing and permutation run as they do in training; no serving run was fitted to it.",
)
"""Seconds each MoE layer adds per micro-batch, forward and backward (fitted)."""

EXPERT_OVERHEAD_S = _FIT(
    0.15e-3,
    "s",
    "fitted",
    "Seconds each of a chip's local experts adds per MoE layer and micro-batch, forward and backward, when the experts "
    "run in fp8 or narrower: each expert's inputs, weights and output gradients are quantized on their own, with "
    "their own quantizer, cast and launch (Transformer Engine's GroupedLinear at v2.12 loops over them). A bf16 step "
    "casts nothing per expert and pays none.",
)
"""Seconds each local expert adds per MoE layer and micro-batch in an fp8 step (fitted)."""

UNMODELLED_SHARE = _FIT(
    0.2,
    "1",
    "fitted",
    "Share of a training step's time outside every modelled term: data loading, synchronisation and the gaps "
    "between kernels.",
)
"""Share of a training step's time no modelled term accounts for (fitted)."""


def _error(
    domain: str, model: str, family: str, *, runs: int, sources: int, mean: float, worst: float, micro_batches: str = ""
) -> ForecastError:
    per_rank = {"one": " (one micro-batch)", "many": " (many micro-batches)", "": ""}[micro_batches]
    kind = f"{family} {model} {domain}{per_rank}"
    why = f"of the {kind} forecast, each source's runs left out of the fit in turn"
    return ForecastError(
        domain,
        model,
        family,
        runs,
        sources,
        _FIT(mean, "1", "fitted", f"Mean absolute relative error {why}: the band printed beside a {kind} forecast."),
        _FIT(worst, "1", "fitted", f"Worst absolute relative error {why}."),
        micro_batches,
    )


FORECAST_ERRORS = (
    _error("training", "MoE", "GPU", runs=27, sources=5, mean=0.131, worst=0.268, micro_batches="many"),
    _error("training", "MoE", "TPU", runs=3, sources=1, mean=0.078, worst=0.130, micro_batches="one"),
    _error("training", "dense", "GPU", runs=80, sources=9, mean=0.075, worst=0.244, micro_batches="many"),
    _error("training", "dense", "GPU", runs=13, sources=3, mean=0.102, worst=0.197, micro_batches="one"),
    _error("training", "dense", "TPU", runs=35, sources=1, mean=0.104, worst=0.249, micro_batches="one"),
    _error("serving", "MoE", "GPU", runs=6, sources=1, mean=0.234, worst=0.340),
    _error("serving", "dense", "GPU", runs=55, sources=4, mean=0.180, worst=0.486),
)
"""The forecast's leave-one-source-out error per kind of run with measured runs in the targets, training's split by
one micro-batch per rank or many (``hw.forecast_band`` reads it; a kind not listed has no measured runs)."""

LOAD_ERRORS = {
    "ttft": {"runs": 105, "publishers": 6, "mean": 0.435, "median": -0.415},
    "tpot": {"runs": 91, "publishers": 4, "mean": 0.161, "median": -0.078},
}
"""The serving simulation's error under load on published runs it was not fitted to
(``hwlib.serving.closed_loop.load_errors()``, computed 2026-12-07): the time to first token (``"ttft"``) and per output
token (``"tpot"``), each at the statistic a run prints, over ``concurrency_check()``'s runs of every publisher but
NIM's (whose runs fit the front end and the decode walk): the runs, their publishers, the mean absolute and the median
relative error (negative: too soon). ``hwlib simulate`` prints them beside its percentiles; the chapter
:ref:`ch-serving-measured` checks that they are the check's."""
