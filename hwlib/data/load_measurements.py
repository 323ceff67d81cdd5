"""Serving measurements under a stated load on hwlib's generic engine: MLPerf Inference Server runs and a vLLM
prefix-cache prototype's rate sweep, each with the load, lengths and system it states (runs of a named engine are
in ``concurrency_runs``); and EAGLE-3's speculative-decoding speed-ups against the batch.
Collected in research/serving_many_measurements.md. Chapter :ref:`ch-serving-measured`.
"""

from __future__ import annotations

from hwlib.data.records import LoadRun, SpeculationRun, cite
from hwlib.data.serving_rows import FP8, FP16, V41

_READ = "2026-12-02"
_MLPERF_LENGTHS = (
    "Prompts: the dataset's own token counts (hw.request_trace('mlperf-llama2-openorca')); answers: the dataset's "
    "reference answer lengths scaled to the log's mean generated tokens (tokens/s over samples/s), since the "
    "lengths Llama 2 generated are not published per sample."
)
_SERVER_LIMITS = (
    "Server limits in the log: 'ttft_latency (ns): 2000000000' and 'tpot_latency (ns): 200000000'. Capacity: the "
    "same round's Offline run of the same system (every sample issued at once). TensorRT-LLM's in-flight batching "
    "runs new prompts in the same iterations as decoding sequences: simulated with chunked prefill."
)


def _mlperf(path: str) -> object:
    return cite(f"{V41}, {path}", _READ)


_H200_OFFLINE = _mlperf(
    "closed/NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt"
)
_H100_OFFLINE = _mlperf(
    "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99.9/Offline/performance/run_1/"
    "mlperf_log_summary.txt"
)
_H200 = _mlperf(
    "closed/NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Server/performance/run_1/mlperf_log_summary.txt"
)
_H100 = _mlperf(
    "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99.9/Server/performance/run_1/mlperf_log_summary.txt"
)
_PREFIX = cite(
    "https://github.com/vllm-project/vllm/pull/1983 ('[WIP] Prefix prompt cache', description of 2023-12-08), "
    "a contributor's measurement in an unmerged pull request",
    _READ,
)
_NS = 1e-9
_HOST_2023 = (
    "the host work of a vLLM of late 2023 (its Python scheduler, tokenizer and HTTP server), which later releases "
    "cut: 'vLLM achieves 2.7x higher throughput and 5x faster TPOT (time per output token) on Llama 8B model' "
    "(vLLM blog, 2024-09-05, on v0.6.0 against v0.5.3)"
)


def _prefix_run(rate: int, cached: bool, served: float, latency: float, ttft: float, quoted: str) -> LoadRun:
    label = "prefix cache" if cached else "no prefix cache"
    return LoadRun(
        key=f"vllm-pr1983-llama13b-{rate}qps-{'prefix' if cached else 'base'}",
        source="vLLM pull request 1983, prefix prompt cache prototype",
        system=f"1 x A100-80GB, vLLM fork of 2023 ({label})",
        where_key="a100-80gb",
        n_chips=1,
        tensor_parallel=1,
        model_key="llama-2-13b",
        dtypes=FP16,
        rate_per_s=_PREFIX(rate, "requests/s", quoted),
        prompt_len=230,
        output_len=50,
        n_requests=1000,
        measured={
            "requests_per_s": _PREFIX(served, "requests/s", quoted),
            "latency_mean_s": _PREFIX(latency, "s", quoted),
            "ttft_mean_s": _PREFIX(ttft, "s", quoted),
        },
        prefix_tokens=200 if cached else 0,
        prefix_hit_rate=1.0 if cached else 0.0,
        outside_model=_HOST_2023,
        note="'For each request, the prefix length is 200, the input length is 30, and the output length is 50.' "
        "'model : llama 13B ,  A100 80G'. Columns: 'Load (QPS) | Method | Requests/s | Average Latency per Req | "
        "First Token Time'. Precision and request count not stated: fp16 and vLLM's benchmark default of 1,000 "
        "requests assumed. LLaMA 13B has Llama 2 13B's shape.",
    )


RUNS: tuple[LoadRun, ...] = (
    LoadRun(
        key="mlperf41-h200x8-llama2-70b-server",
        source="MLPerf Inference v4.1, NVIDIA",
        system="8 x H200-SXM-141GB, TensorRT-LLM, 8 replicas of TP1",
        where_key="h200",
        n_chips=8,
        tensor_parallel=1,
        model_key="llama-2-70b",
        dtypes=FP8,
        rate_per_s=_H200(101, "requests/s", "target_qps : 101"),
        prompt_len=0,
        output_len=29228.22 / 100.35,
        lengths="mlperf-llama2-openorca",
        measured={
            "requests_per_s": _H200(100.35, "requests/s", "Completed samples per second    : 100.35"),
            "output_tokens_per_s": _H200(29228.22, "tokens/s", "Completed tokens per second: 29228.22"),
            "ttft_p50_s": _H200(180758928 * _NS, "s", "50.00 percentile first token latency (ns)   : 180758928"),
            "ttft_p99_s": _H200(452744202 * _NS, "s", "99.00 percentile first token latency (ns)   : 452744202"),
            "ttft_mean_s": _H200(198269106 * _NS, "s", "Mean First Token latency (ns)               : 198269106"),
            "tpot_mean_s": _H200(123263268 * _NS, "s", "Mean Time to Output Token (ns)               : 123263268"),
            "tpot_p99_s": _H200(146040006 * _NS, "s", "99.00 percentile time to output token (ns)   : 146040006"),
        },
        limits=(2.0, 0.2),
        capacity_per_s=_H200_OFFLINE(107.477, "requests/s", "Samples per second: 107.477"),
        max_sequences=896,
        chunked_prefill=True,
        note="Config (closed/NVIDIA/configs/llama2-70b/Server/__init__.py): 'class H200_SXM_141GBx1"
        "(ServerGPUBaseConfig): ... gpu_batch_size = {'llama2-70b': 896} use_fp8 = True ... tensor_parallelism = 1'; "
        "KV dtype not stated, fp8 assumed. " + _SERVER_LIMITS + " " + _MLPERF_LENGTHS,
    ),
    LoadRun(
        key="mlperf41-h100x8-llama2-70b-server",
        source="MLPerf Inference v4.1, NVIDIA",
        system="DGX H100 (8 x H100-SXM), TensorRT-LLM, 4 replicas of TP2",
        where_key="hgx-h100-ndr",
        n_chips=8,
        tensor_parallel=2,
        model_key="llama-2-70b",
        dtypes=FP8,
        rate_per_s=_H100(75, "requests/s", "target_qps : 75"),
        prompt_len=0,
        output_len=21605.79 / 74.42,
        lengths="mlperf-llama2-openorca",
        measured={
            "requests_per_s": _H100(74.42, "requests/s", "Completed samples per second    : 74.42"),
            "output_tokens_per_s": _H100(21605.79, "tokens/s", "Completed tokens per second: 21605.79"),
            "ttft_p99_s": _H100(461278089 * _NS, "s", "99.00 percentile first token latency (ns)   : 461278089"),
            "ttft_mean_s": _H100(275926440 * _NS, "s", "Mean First Token latency (ns)               : 275926440"),
            "tpot_mean_s": _H100(154960329 * _NS, "s", "Mean Time to Output Token (ns)               : 154960329"),
            "tpot_p99_s": _H100(175354317 * _NS, "s", "99.00 percentile time to output token (ns)   : 175354317"),
        },
        limits=(2.0, 0.2),
        capacity_per_s=_H100_OFFLINE(84.4792, "requests/s", "Samples per second: 84.4792"),
        max_sequences=1024,
        chunked_prefill=True,
        note="Config: 'class H100_SXM_80GB_TP2x1(ServerGPUBaseConfig): ... gpu_batch_size = {'llama2-70b': 1024} "
        "use_fp8 = True tensor_parallelism = 2'; KV dtype not stated, fp8 assumed. "
        + _SERVER_LIMITS
        + " "
        + _MLPERF_LENGTHS,
    ),
    _prefix_run(10, False, 9.80, 2.87, 0.45, "10 QPS | Base | 9.80 requests/s | 2.87 s | 0.45 s"),
    _prefix_run(10, True, 9.83, 1.97, 0.29, "10 QPS | Prefix Cache | 9.83 requests/s | 1.97 s | 0.29 s"),
    _prefix_run(15, False, 13.24, 8.65, 1.02, "15 QPS | Base | 13.24 requests/s | 8.65 s | 1.02 s"),
    _prefix_run(15, True, 14.30, 2.98, 0.39, "15 QPS | Prefix Cache | 14.30 requests/s | 2.98 s | 0.39 s"),
    _prefix_run(25, False, 14.08, 13.67, 4.74, "25 QPS | Base | 14.08 requests/s | 13.67 s | 4.74 s"),
    _prefix_run(25, True, 19.81, 6.46, 0.84, "25 QPS | Prefix Cache | 19.81 requests/s | 6.46 s | 0.84 s"),
)
"""Every serving run under load the chapter :ref:`ch-serving-measured` checks the simulation against."""

_EAGLE3 = cite(
    "Li et al., 'EAGLE-3: Scaling up Inference Acceleration of Large Language Models via Training-Time Test', "
    "arXiv:2503.01840, Table 3, read in a stored copy of the paper's text",
    _READ,
)
_EAGLE3_ROW = "| EAGLE-3      | 1.81x | 1.82x | 1.62x | 1.48x | 1.39x | 1.32x | 1.38x | 1.34x | 1.38x |"

SPECULATION_RUNS: tuple[SpeculationRun, ...] = (
    SpeculationRun(
        key="eagle3-sglang044-h100-llama31-8b",
        source="EAGLE-3 paper, Table 3",
        system="1 x H100, SGLang 0.4.4, a chain of 3 draft tokens",
        chip_key="h100-sxm",
        model_key="llama-3-8b",
        draft="one layer",
        draft_tokens=3,
        batches=(2, 4, 8, 16, 24, 32, 48, 56, 64),
        speedups=tuple(
            _EAGLE3(value, "", _EAGLE3_ROW) for value in (1.81, 1.82, 1.62, 1.48, 1.39, 1.32, 1.38, 1.34, 1.38)
        ),
        context_len=512,
        note="'The performance of EAGLE-3 for large batches on a single H100 GPU and LLaMA-Instruct 3.1 8B in the "
        "SGLang v0.4.4 environment [9] was evaluated in Table 3. This part of the experiment did not use the tree "
        "structure, the chain length was set to 3, and the testing dataset was MT-Bench.' Batch header: '| 2     | "
        "4     | 8     | 16    | 24    | 32    | 48    | 56    | 64    |'. Precision and acceptance not stated: "
        "bf16 assumed; the context (512 tokens) is an assumption for MT-Bench's short prompts and answers. "
        "EAGLE-3's drafter is one decoder layer with its own head.",
    ),
)
"""Published speed-ups of speculative decoding against the batch."""
