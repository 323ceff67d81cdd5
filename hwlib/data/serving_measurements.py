"""Published, measured serving results that state their hardware, model, precision and lengths.

MLPerf Inference (closed division; each submitter's own log in MLCommons' results repository),
NVIDIA's TensorRT-LLM performance overview and Google's JetStream benchmark summary. Every tokens/s
counts generated tokens only. Where a run does not state a dtype, the record takes the smallest the
run could have used, so the model's bound stays a bound (said in each note). The hunt behind them
is in research/serving_measurements.md. Compared with ``hw.throughput_bound`` in :ref:`ch-serving`.
"""

from __future__ import annotations

from hwlib.data.records import ServingRun, cite

_V41 = "https://github.com/mlcommons/inference_results_v4.1 (commit a2f5d66d)"
_V50 = (
    "https://github.com/mlcommons/inference_results_v5.0, read in the fork ntuhpc/mlperf_inference_results_v5.0 "
    "(commit cf354115), whose pages link back to it"
)
_TRTLLM = (
    "NVIDIA TensorRT-LLM performance overview, docs/source/performance/perf-overview.md (commit 00f37686), "
    "https://nvidia.github.io/TensorRT-LLM/performance/perf-overview.html"
)
_JETSTREAM = "AI-Hypercomputer/jetstream-pytorch, benchmarks/summary.md (commit 2ba0dd8b), Google"

_MLPERF_OUTPUT = (
    "Mean generated tokens per sample: the log's tokens per second over its samples per second; "
    "MLPerf's reference run gives 'Tokens per sample: 294.45'. Prompts are up to 1,024 tokens; "
    "their mean is not stated in any source found."
)
_TRT_METHOD = (
    "Every request has exactly the stated input and output lengths ('--input-stdev=0 --output-stdev=0'), "
    "all queued at once ('infinite rate'); the page does not state the KV-cache dtype: fp8 assumed."
)


MLPERF_LLAMA2_MAX_TOKENS = cite(
    "mlcommons/inference, language/llama2-70b/processorca.py (commit 01b4e7eb), https://github.com/mlcommons/inference"
)(
    1024,
    "tokens",
    "parser.add_argument('--seqlen_limit', type=int, default=1024, help=\"Upper limit of the "
    'input/output sequence lengths")',
    "The OpenOrca set of MLPerf's Llama 2 70B benchmark; its mean prompt length is not stated in any source found.",
)
"""The longest prompt (and answer) in MLPerf's Llama 2 70B dataset (tokens)."""


_FP8 = dict(weight_dtype="fp8", kv_dtype="fp8", activation_dtype="fp8", compute_dtype="fp8")
_FP4_FP8_KV = dict(weight_dtype="fp4", kv_dtype="fp8", activation_dtype="fp4", compute_dtype="fp4")
_BF16 = dict(weight_dtype="bf16", kv_dtype="bf16", activation_dtype="bf16", compute_dtype="bf16")


def _trtllm(
    key: str,
    system: str,
    chip_key: str,
    n_chips: int,
    model_key: str,
    precision: str,
    dtypes: dict,
    tokens_per_s: float,
    quoted: str,
    lengths: tuple[int, int],
    note: str,
) -> ServingRun:
    """One row of TensorRT-LLM's overview: fixed lengths, all requests queued at once, tensor parallel over all."""
    return ServingRun(
        key=key,
        source="TensorRT-LLM performance overview",
        system=system,
        chip_key=chip_key,
        n_chips=n_chips,
        tensor_parallel=n_chips,
        model_key=model_key,
        precision=precision,
        **dtypes,
        scenario="max throughput",
        tokens_per_s=cite(_TRTLLM)(tokens_per_s, "tokens/s", quoted),
        input_len=lengths[0],
        output_len=lengths[1],
        note=note + " " + _TRT_METHOD,
    )


def _mlperf(path: str, repo: str, value: float, quoted: str) -> object:
    return cite(f"{repo}, {path}")(value, "tokens/s", quoted)


RUNS: tuple[ServingRun, ...] = (
    ServingRun(
        key="mlperf41-h100x8-llama2-70b",
        source="MLPerf Inference v4.1, NVIDIA",
        system="DGX H100 (8 x H100-SXM)",
        chip_key="h100-sxm",
        n_chips=8,
        tensor_parallel=2,
        model_key="llama-2-70b",
        precision="FP8",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99.9/Offline/"
            "performance/run_1/mlperf_log_summary.txt",
            _V41,
            24524.9,
            "Tokens per second: 24524.9",
        ),
        input_len=None,
        output_len=24524.9 / 84.4792,
        batch=896,
        note="Config: 'class H100_SXM_80GB_TP2x4 ... gpu_batch_size = {'llama2-70b': 896} use_fp8 = True ... "
        "tensor_parallelism = 2' (closed/NVIDIA/configs/llama2-70b/Offline/__init__.py); KV dtype not stated, "
        "fp8 assumed. " + _MLPERF_OUTPUT,
    ),
    ServingRun(
        key="mlperf41-h200x8-llama2-70b",
        source="MLPerf Inference v4.1, NVIDIA",
        system="8 x H200-SXM-141GB",
        chip_key="h200",
        n_chips=8,
        tensor_parallel=1,
        model_key="llama-2-70b",
        precision="FP8",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
            _V41,
            31302.7,
            "Tokens per second: 31302.7",
        ),
        input_len=None,
        output_len=31302.7 / 107.477,
        batch=806,
        note="Config: 'class H200_SXM_141GBx1 ... gpu_batch_size = {'llama2-70b': 806} use_fp8 = True ... "
        "tensor_parallelism = 1'; KV dtype not stated, fp8 assumed. " + _MLPERF_OUTPUT,
    ),
    ServingRun(
        key="mlperf50-h100x8-llama2-70b",
        source="MLPerf Inference v5.0, NVIDIA",
        system="DGX H100 (8 x H100-SXM)",
        chip_key="h100-sxm",
        n_chips=8,
        tensor_parallel=1,
        model_key="llama-2-70b",
        precision="FP8",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99/Offline/"
            "performance/run_1/mlperf_log_summary.txt",
            _V50,
            31306.8,
            "Tokens per second: 31306.8",
        ),
        input_len=None,
        output_len=31306.8 / 107.256,
        note="Config: 'HopperOfflineGPUBaseConfig ... precision = \"fp8\" ... 'kv_cache_dtype': 'fp8' ... "
        "'tensor_parallelism': 1, 'pipeline_parallelism': 2'; modelled as eight one-GPU replicas (the pipeline's "
        "transfers left out, in the run's favour). " + _MLPERF_OUTPUT,
    ),
    ServingRun(
        key="mlperf50-b200x8-llama2-70b",
        source="MLPerf Inference v5.0, NVIDIA",
        system="DGX B200 (8 x B200)",
        chip_key="b200",
        n_chips=8,
        tensor_parallel=1,
        model_key="llama-2-70b",
        precision="FP4, FP8 KV cache",
        **_FP4_FP8_KV,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/B200-SXM-180GBx8_TRT/llama2-70b-99.9/Offline/performance/"
            "run_1/mlperf_log_summary.txt",
            _V50,
            98858.0,
            "Tokens per second: 98858",
        ),
        input_len=None,
        output_len=98858.0 / 363.895,
        batch=2048,
        note="Config: 'BlackwellOfflineGPUBaseConfig: precision = 'fp4' ... 'kv_cache_dtype': 'fp8''; B200 "
        "'gpu_batch_size = {'llama2-70b': 2048}', pipeline parallel 2, modelled as one-GPU replicas. " + _MLPERF_OUTPUT,
    ),
    ServingRun(
        key="mlperf41-mi300x8-llama2-70b",
        source="MLPerf Inference v4.1, AMD",
        system="8 x MI300X (2 x EPYC 9374F), vLLM",
        chip_key="mi300x",
        n_chips=8,
        tensor_parallel=1,
        model_key="llama-2-70b",
        precision="FP8 weights, activations and KV cache",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
            _V41,
            23514.8,
            "Tokens per second: 23514.8",
        ),
        input_len=None,
        output_len=23514.8 / 80.15,
        note="Precision: '--quant_scheme w_fp8_a_fp8_o_fp8' and FP8 KV scales (closed/AMD/code/llama2-70b-99/"
        "README.md). Tensor parallelism not read: modelled as one-GPU replicas, the most generous. " + _MLPERF_OUTPUT,
    ),
    ServingRun(
        key="mlperf41-h100x8-mixtral",
        source="MLPerf Inference v4.1, NVIDIA",
        system="DGX H100 (8 x H100-SXM)",
        chip_key="h100-sxm",
        n_chips=8,
        tensor_parallel=1,
        model_key="mixtral-8x7b",
        precision="FP8",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/mixtral-8x7b/Offline/performance/"
            "run_1/mlperf_log_summary.txt",
            _V41,
            52415.9,
            "Tokens per second: 52415.9",
        ),
        input_len=None,
        output_len=52415.9 / 359.173,
        batch=896,
        note="Config: use_fp8 = True, tensor parallelism 1, gpu_batch_size 896 (NVIDIA's file as shipped in "
        "closed/GigaComputing/configs/mixtral-8x7b/Offline/__init__.py); KV dtype not stated, fp8 assumed. "
        "Dataset: OpenOrca, GSM8K and MBXP, 5,000 samples each; reference mean output 144.84 tokens; mean "
        "prompt not stated.",
    ),
    _trtllm(
        "trtllm-h100-llama31-8b-1000",
        "1 x H100-SXM",
        "h100-sxm",
        1,
        "llama-3-8b",
        "FP8",
        _FP8,
        15220.0,
        "| 1000/1000 | 17,744 | 15,220 |",
        (1000, 1000),
        "nvidia/Llama-3.1-8B-Instruct-FP8 (Llama 3 8B's architecture).",
    ),
    _trtllm(
        "trtllm-h200-llama31-8b-2048",
        "1 x H200",
        "h200",
        1,
        "llama-3-8b",
        "FP8",
        _FP8,
        12194.0,
        "| 2048/2048 | 12,194 | 9,305 |",
        (2048, 2048),
        "Llama 3.1 8B FP8.",
    ),
    _trtllm(
        "trtllm-h100x2-llama33-70b-1000",
        "2 x H100-SXM",
        "h100-sxm",
        2,
        "llama-3-70b",
        "FP8",
        _FP8,
        4205.0,
        "| 1000/1000 | 7,007 | 7,326 | 2,909 | 4,205 |",
        (1000, 1000),
        "Llama 3.3 70B (Llama 3 70B's architecture), TP2.",
    ),
    _trtllm(
        "trtllm-h200-llama33-70b-1000",
        "1 x H200",
        "h200",
        1,
        "llama-3-70b",
        "FP8",
        _FP8,
        2909.0,
        "| 1000/1000 | 7,007 | 7,326 | 2,909 | 4,205 |",
        (1000, 1000),
        "Llama 3.3 70B FP8, TP1.",
    ),
    _trtllm(
        "trtllm-b200-llama33-70b-1000",
        "1 x B200",
        "b200",
        1,
        "llama-3-70b",
        "FP4",
        _FP4_FP8_KV,
        7007.0,
        "| 1000/1000 | 7,007 | 7,326 | 2,909 | 4,205 |",
        (1000, 1000),
        "nvidia/Llama-3.3-70B-Instruct-FP4, TP1; fp4 activations and an fp8 cache assumed.",
    ),
    _trtllm(
        "trtllm-b200-llama33-70b-128-2048",
        "1 x B200",
        "b200",
        1,
        "llama-3-70b",
        "FP4",
        _FP4_FP8_KV,
        9922.0,
        "| 128/2048 | 9,922 | 11,309 | 4,336 | 6,651 |",
        (128, 2048),
        "Llama 3.3 70B FP4, TP1.",
    ),
    _trtllm(
        "trtllm-h100x8-llama31-405b-1000",
        "8 x H100-SXM",
        "h100-sxm",
        8,
        "llama-3.1-405b",
        "FP8",
        _FP8,
        2919.0,
        "| 1000/1000 | 5,209 | 5,389 | 3,330 | 2,919 |",
        (1000, 1000),
        "Llama 3.1 405B FP8, TP8.",
    ),
    ServingRun(
        key="jetstream-v5e8-llama3-8b-bf16",
        source="JetStream benchmark summary (Google)",
        system="TPU v5e-8",
        chip_key="v5e",
        n_chips=8,
        tensor_parallel=8,
        model_key="llama-3-8b",
        precision="BF16",
        **_BF16,
        scenario="ShareGPT",
        tokens_per_s=cite(_JETSTREAM)(
            8249.0, "tokens/s", "2024-04-24 | TPU v5e-8 | bfloat16 | 128 | 2048 | 1024 | 1024 | 8249"
        ),
        input_len=None,
        output_len=None,
        batch=128,
        note="Batch 128, cache length 2048, ShareGPT prompts of up to 1,024 tokens and answers of up to 1,024: "
        "the mean lengths are not stated, so the bound takes the shortest contexts (the weights only).",
    ),
    ServingRun(
        key="jetstream-v5e8-llama3-8b-int8",
        source="JetStream benchmark summary (Google)",
        system="TPU v5e-8",
        chip_key="v5e",
        n_chips=8,
        tensor_parallel=8,
        model_key="llama-3-8b",
        precision="INT8 weights and KV cache",
        weight_dtype="int8",
        kv_dtype="int8",
        activation_dtype="bf16",
        compute_dtype="bf16",
        scenario="ShareGPT",
        tokens_per_s=cite(_JETSTREAM)(
            10873.0, "tokens/s", "2024-04-24 | TPU v5e-8 | int8 | 256 | 2048 | 1024 | 1024 | 10873"
        ),
        input_len=None,
        output_len=None,
        batch=256,
        note="Batch 256, otherwise as the bf16 row; int8 weights with bf16 compute assumed (weight-only).",
    ),
)
"""Measured serving runs, compared with ``hw.throughput_bound`` in :ref:`ch-serving`."""

_SERVER_LOG = cite(
    f"{_V41}, closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99.9/Server/performance/"
    "run_1/mlperf_log_summary.txt"
)
_INTERACTIVE_LOG = cite(
    f"{_V50}, closed/NVIDIA/results/B200-SXM-180GBx8_TRT/llama2-70b-interactive-99/Server/"
    "performance/run_1/mlperf_log_summary.txt"
)
MLPERF_SERVER_TTFT = _SERVER_LOG(
    2.0, "s", "ttft_latency (ns): 2000000000", "Llama 2 70B Server scenario; LoadGen applies it to the 99th percentile."
)
MLPERF_SERVER_TPOT = _SERVER_LOG(0.2, "s", "tpot_latency (ns): 200000000", "As the TTFT limit.")
MLPERF_INTERACTIVE_TTFT = _INTERACTIVE_LOG(
    0.45, "s", "ttft_latency (ns): 450000000", "Llama 2 70B Interactive scenario (v5.0 on), 99th percentile."
)
MLPERF_INTERACTIVE_TPOT = _INTERACTIVE_LOG(
    0.04, "s", "tpot_latency (ns): 40000000", "25 tokens/s per user, as AMD's v5.1 write-up puts it."
)
"""MLPerf Inference's latency limits for Llama 2 70B: time to first token and time per output token (s)."""
