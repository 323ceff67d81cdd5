"""Serving runs on 8 x MI300X (AMD): the ROCm vLLM dev-docker README's throughput and latency tables, and an
Oracle Cloud blog's Llama 3.1 405B FP8 runs. Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from hwlib.data.records import ServingRun, cite
from hwlib.data.serving_rows import FP8 as _FP8
from hwlib.data.serving_rows import Page as _Page
from hwlib.data.serving_rows import latency_row as _latency_row
from hwlib.data.serving_rows import row as _row

_ROCM_VLLM = "ROCm/vllm, docs/dev-docker/README.md (commit 040de12d), https://github.com/ROCm/vllm"


_ORACLE = (
    "Oracle Cloud Infrastructure blog, 'Serving Llama 3.1 405B model with AMD MI300X GPUs' (October 10, 2024), "
    "https://blogs.oracle.com/cloud-infrastructure/post/serving-llama-31-405b-model-with-amd-mi300x-gpus"
)


_ROCM_TOTAL_OR_OUTPUT = (
    "the page's 'Throughput (tokens/s)' may count prompt tokens as well as output tokens (not stated)"
)


_VLLM_MAX_NUM_SEQS = 256
"""vLLM's largest batch where a run sets none: the V0 engine's default max_num_seqs (github.com/vllm-project/vllm,
vllm/engine/arg_utils.py, commit 001999d2f360c2c5da23a916510c273b1a73d06c, read 2026-12-02:
'self.max_num_seqs = 256 if not envs.VLLM_USE_V1 else 1024'); runs of 2024 predate the V1 engine."""


_ROCM_THROUGHPUT = _Page(
    "ROCm vLLM, dev-docker README",
    cite(_ROCM_VLLM),
    "vLLM v0.10.0 on ROCm 6.4.1 ('Benchmarks were run with benchmark scripts from [v0.8.5]'), 8 x MI300X "
    "(192GiB, 750W); benchmark_throughput.py '--kv-cache-dtype fp8 --dtype float16 ... --tensor-parallel-size "
    "$TP --num-prompts $PROMPTS --max-num-seqs $MAX_NUM_SEQS', all requests at once ('fed requests at an "
    "infinite rate'), fixed lengths; Quark FP8 weights and activations. Batch: max-num-seqs. The column is "
    "'Throughput (tokens/s)': whether it counts the prompts' tokens too is not stated (vLLM's script prints "
    "both); recorded as output tokens/s, which the bound allows.",
)
_ROCM_LATENCY = _Page(
    "ROCm vLLM, dev-docker README",
    cite(_ROCM_VLLM),
    "benchmark_latency.py ('--num-iters-warmup 3 --num-iters 5'): one static batch of the stated size and "
    "lengths, its end-to-end latency (prefill included) printed. The command passes no '--kv-cache-dtype': KV "
    "dtype not stated, fp8 (the smallest) assumed; Quark FP8 weights and activations. vLLM v0.10.0, ROCm 6.4.1, "
    "8 x MI300X (192GiB, 750W).",
    "static batch",
)


_ORACLE_LATENCY = _Page(
    "Oracle Cloud, MI300X blog",
    cite(_ORACLE),
    "'a single instance of the Llama 3.1 405B FP8 model on a single OCI bare metal instance. All eight GPUs "
    "were assigned for serving' (one replica, TP8 implied), vLLM; 'Offline benchmarks were measured using the "
    "scripts/benchmark_latency.py in the vLLM. Each test had input size 128 and an output size 128 tokens.': "
    "one static batch. FP8 weights; the KV and activation dtypes are not stated: fp8, the smallest, assumed. "
    "Columns: Batch Size | Output throughput in token per second (TPS) | Average latency in seconds.",
    "static batch",
)
_ORACLE_THROUGHPUT = _Page(
    "Oracle Cloud, MI300X blog",
    cite(_ORACLE),
    "One replica of Llama 3.1 405B FP8 on all eight GPUs (TP8 implied), vLLM's offline benchmark_throughput.py; "
    "FP8 weights, the KV and activation dtypes not stated: fp8, the smallest, assumed; batch not stated.",
)


ROCM_RUNS: tuple[ServingRun, ...] = (
    # ROCm vLLM dev-docker README, 8 x MI300X (section 10).
    _row(
        _ROCM_THROUGHPUT,
        "rocm-vllm-mi300x-llama31-70b-tp8-128-2048",
        "8 x MI300X, vLLM",
        "mi300x",
        8,
        "llama-3-70b",
        "FP8, FP8 KV cache",
        _FP8,
        13383.3,
        "| Llama 3.1 70B (amd/Llama-3.1-70B-Instruct-FP8-KV) | FP8 | 8 | 128 | 2048 | 3200 | 3200 | 13383.3 |",
        (128, 2048),
        "3200 prompts, max-num-seqs 3200. Were the figure total tokens/s, output would be 13,383.3 x 2048 / 2176 "
        "= 12,596 (derived).",
        batch=3200,
        outside_model=_ROCM_TOTAL_OR_OUTPUT,
    ),
    _row(
        _ROCM_THROUGHPUT,
        "rocm-vllm-mi300x-llama31-70b-tp8-2048-2048",
        "8 x MI300X, vLLM",
        "mi300x",
        8,
        "llama-3-70b",
        "FP8, FP8 KV cache",
        _FP8,
        7560.9,
        "| | | | 2048 | 2048 | 1500 | 1500 | 7560.9 |",
        (2048, 2048),
        "Llama 3.1 70B (the row continues the one above), 1500 prompts, max-num-seqs 1500. Were the figure total "
        "tokens/s, output would be half, 3,780 (derived).",
        batch=1500,
        outside_model=_ROCM_TOTAL_OR_OUTPUT,
    ),
    _row(
        _ROCM_THROUGHPUT,
        "rocm-vllm-mi300x-llama31-405b-tp8-128-2048",
        "8 x MI300X, vLLM",
        "mi300x",
        8,
        "llama-3.1-405b",
        "FP8, FP8 KV cache",
        _FP8,
        3867.7,
        "| Llama 3.1 405B (amd/Llama-3.1-405B-Instruct-FP8-KV) | FP8 | 8 | 128 | 2048 | 1500 | 1500 | 3867.7 |",
        (128, 2048),
        "1500 prompts, max-num-seqs 1500. Were the figure total tokens/s, output would be 3,640 (derived).",
        batch=1500,
        outside_model=_ROCM_TOTAL_OR_OUTPUT,
    ),
    _row(
        _ROCM_THROUGHPUT,
        "rocm-vllm-mi300x-llama31-405b-tp8-2048-2048",
        "8 x MI300X, vLLM",
        "mi300x",
        8,
        "llama-3.1-405b",
        "FP8, FP8 KV cache",
        _FP8,
        2174.1,
        "| | | | 2048 | 2048 | 500 | 500 | 2174.1 |",
        (2048, 2048),
        "Llama 3.1 405B (the row continues the one above), 500 prompts, max-num-seqs 500. Were the figure total "
        "tokens/s, output would be half, 1,087 (derived).",
        batch=500,
        outside_model=_ROCM_TOTAL_OR_OUTPUT,
    ),
    _latency_row(
        _ROCM_LATENCY,
        "rocm-vllm-mi300x-llama31-70b-tp8-b1-128-2048",
        1,
        17.236,
        "| Llama 3.1 70B (amd/Llama-3.1-70B-Instruct-FP8-KV) | FP8 | 8 | 1 | 128 | 2048 | 17.236 |",
        (128, 2048),
        system="8 x MI300X, vLLM",
        chip_key="mi300x",
        n_chips=8,
        model_key="llama-3-70b",
        precision="FP8 (KV cache not stated)",
        dtypes=_FP8,
        note="Batch 1, latency 17.236 s.",
    ),
    _latency_row(
        _ROCM_LATENCY,
        "rocm-vllm-mi300x-llama31-70b-tp8-b32-128-2048",
        32,
        24.932,
        "| | | | 32 | 128 | 2048 | 24.932 |",
        (128, 2048),
        system="8 x MI300X, vLLM",
        chip_key="mi300x",
        n_chips=8,
        model_key="llama-3-70b",
        precision="FP8 (KV cache not stated)",
        dtypes=_FP8,
        note="Llama 3.1 70B (the row continues the 70B block), batch 32, latency 24.932 s.",
    ),
    _latency_row(
        _ROCM_LATENCY,
        "rocm-vllm-mi300x-llama31-70b-tp8-b128-128-2048",
        128,
        46.484,
        "| | | | 128 | 128 | 2048 | 46.484 |",
        (128, 2048),
        system="8 x MI300X, vLLM",
        chip_key="mi300x",
        n_chips=8,
        model_key="llama-3-70b",
        precision="FP8 (KV cache not stated)",
        dtypes=_FP8,
        note="Llama 3.1 70B (the 70B block), batch 128, latency 46.484 s.",
    ),
    _latency_row(
        _ROCM_LATENCY,
        "rocm-vllm-mi300x-llama31-70b-tp8-b1-2048-2048",
        1,
        17.500,
        "| | | | 1 | 2048 | 2048 | 17.500 |",
        (2048, 2048),
        system="8 x MI300X, vLLM",
        chip_key="mi300x",
        n_chips=8,
        model_key="llama-3-70b",
        precision="FP8 (KV cache not stated)",
        dtypes=_FP8,
        note="Llama 3.1 70B (the 70B block), batch 1, latency 17.500 s.",
    ),
    _latency_row(
        _ROCM_LATENCY,
        "rocm-vllm-mi300x-llama31-405b-tp8-b1-128-2048",
        1,
        48.453,
        "| Llama 3.1 405B (amd/Llama-3.1-405B-Instruct-FP8-KV) | FP8 | 8 | 1 | 128 | 2048 | 48.453 |",
        (128, 2048),
        system="8 x MI300X, vLLM",
        chip_key="mi300x",
        n_chips=8,
        model_key="llama-3.1-405b",
        precision="FP8 (KV cache not stated)",
        dtypes=_FP8,
        note="Batch 1, latency 48.453 s.",
    ),
    _latency_row(
        _ROCM_LATENCY,
        "rocm-vllm-mi300x-llama31-405b-tp8-b128-128-2048",
        128,
        117.027,
        "| | | | 128 | 128 | 2048 | 117.027 |",
        (128, 2048),
        system="8 x MI300X, vLLM",
        chip_key="mi300x",
        n_chips=8,
        model_key="llama-3.1-405b",
        precision="FP8 (KV cache not stated)",
        dtypes=_FP8,
        note="Llama 3.1 405B (the row continues the 405B block), batch 128, latency 117.027 s.",
    ),
)
"""The ROCm vLLM README's rows, throughput then latency."""


ORACLE_RUNS: tuple[ServingRun, ...] = (
    # Oracle Cloud blog, Llama 3.1 405B FP8 on 8 x MI300X (section 14).
    _row(
        _ORACLE_LATENCY,
        "oracle-mi300x-llama31-405b-tp8-b1-128-128",
        "OCI BM.GPU.MI300X.8 (8 x MI300X), vLLM",
        "mi300x",
        8,
        "llama-3.1-405b",
        "FP8 weights (KV cache not stated)",
        _FP8,
        36.0,
        "| 1 | 36 | 3.530 |",
        (128, 128),
        "Batch 1, latency 3.530 s (1 x 128 / 3.530 = 36.3, derived).",
        batch=1,
    ),
    _row(
        _ORACLE_LATENCY,
        "oracle-mi300x-llama31-405b-tp8-b8-128-128",
        "OCI BM.GPU.MI300X.8 (8 x MI300X), vLLM",
        "mi300x",
        8,
        "llama-3.1-405b",
        "FP8 weights (KV cache not stated)",
        _FP8,
        258.0,
        "| 8 | 258 | 3.974 |",
        (128, 128),
        "Batch 8, latency 3.974 s (8 x 128 / 3.974 = 257.7, derived).",
        batch=8,
    ),
    _row(
        _ORACLE_LATENCY,
        "oracle-mi300x-llama31-405b-tp8-b64-128-128",
        "OCI BM.GPU.MI300X.8 (8 x MI300X), vLLM",
        "mi300x",
        8,
        "llama-3.1-405b",
        "FP8 weights (KV cache not stated)",
        _FP8,
        1184.0,
        "| 64 | 1184 | 6.919 |",
        (128, 128),
        "Batch 64, latency 6.919 s (64 x 128 / 6.919 = 1,184.0, derived).",
        batch=64,
    ),
    _row(
        _ORACLE_LATENCY,
        "oracle-mi300x-llama31-405b-tp8-b256-128-128",
        "OCI BM.GPU.MI300X.8 (8 x MI300X), vLLM",
        "mi300x",
        8,
        "llama-3.1-405b",
        "FP8 weights (KV cache not stated)",
        _FP8,
        1846.0,
        "| 256 | 1846 | 17.750 |",
        (128, 128),
        "Batch 256, latency 17.750 s (256 x 128 / 17.750 = 1,846.1, derived).",
        batch=256,
    ),
    _row(
        _ORACLE_THROUGHPUT,
        "oracle-mi300x-llama31-405b-tp8-128-2048",
        "OCI BM.GPU.MI300X.8 (8 x MI300X), vLLM",
        "mi300x",
        8,
        "llama-3.1-405b",
        "FP8 weights (KV cache not stated)",
        _FP8,
        2794.0,
        "| Generation heavy use case | 128 | 2048 | 2794 |",
        (128, 2048),
        "Offline, 128/2048; batch: vLLM's default max_num_seqs.",
        batch=_VLLM_MAX_NUM_SEQS,
    ),
)
"""The Oracle Cloud blog's rows."""
