"""Serving runs from TensorRT-LLM's (NVIDIA) newer performance overviews: the v1.0 page, the v0.19 B200 FP4
table and the developer-guide overview (PyTorch backend), every request of fixed lengths, all queued at once.
Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from hwlib.data.records import ServingRun, cite
from hwlib.data.serving_rows import FP8 as _FP8
from hwlib.data.serving_rows import NVFP4_FP8_KV as _NVFP4_FP8_KV
from hwlib.data.serving_rows import NVFP4_NOTE as _NVFP4_NOTE
from hwlib.data.serving_rows import Page as _Page
from hwlib.data.serving_rows import row as _row

_TRTLLM = (
    "NVIDIA TensorRT-LLM performance overview, docs/source/performance/perf-overview.md (commit 00f37686), "
    "https://nvidia.github.io/TensorRT-LLM/performance/perf-overview.html"
)


_TRTLLM_019 = (
    "NVIDIA TensorRT-LLM 0.19.0 performance overview, "
    "https://nvidia.github.io/TensorRT-LLM/0.19.0/performance/perf-overview.html"
)
_TRTLLM_DEV = (
    "NVIDIA TensorRT-LLM, docs/source/developer-guide/perf-overview.md (commit 03e27c7d), "
    "https://github.com/NVIDIA/TensorRT-LLM"
)


_TRT_METHOD = (
    "Every request has exactly the stated input and output lengths ('--input-stdev=0 --output-stdev=0'), "
    "all queued at once ('infinite rate'); the page does not state the KV-cache dtype: fp8 assumed."
)


_TRT10 = _Page("TensorRT-LLM, v1.0 performance overview", cite(_TRTLLM), _TRT_METHOD)
_TRT019 = _Page(
    "TensorRT-LLM, v0.19 perf overview",
    cite(_TRTLLM_019),
    "'The reported metric is Total Output Throughput (tokens/sec)', the system's; nvidia/Llama-3.3-70B-Instruct-"
    "FP4, fixed lengths, all requests at once, as on the v0.17 page. KV and activation dtypes not stated: nvfp4 "
    "activations and an fp8 cache assumed, as for the v1.0 rows; batch not stated. Columns: TP 1 | 2 | 4 | 8. "
    + _NVFP4_NOTE,
)
_TRT_DEV = _Page(
    "TensorRT-LLM, developer-guide perf overview",
    cite(_TRTLLM_DEV),
    "'All performance values are measured in `output tokens per second per GPU`, where `output tokens` "
    "includes the first and all subsequent generated tokens (input tokens are not included)'; trtllm-bench "
    "throughput, PyTorch backend, fixed lengths ('--input-stdev=0 --output-stdev=0'), all requests at once; "
    "nvidia/Llama-3.3-70B-Instruct-FP4 and -FP8. The KV dtype is not stated for Llama: fp8 assumed; the engine "
    "version and batch not stated. Columns: B200 TP1 (FP4) | GB200 TP1 (FP4) | H200 TP2 (FP8) | H100 TP2 (FP8).",
)


V1_0_RUNS: tuple[ServingRun, ...] = (
    _row(
        _TRT10,
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
    _row(
        _TRT10,
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
    _row(
        _TRT10,
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
    _row(
        _TRT10,
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
    _row(
        _TRT10,
        "trtllm-b200-llama33-70b-1000",
        "1 x B200",
        "b200",
        1,
        "llama-3-70b",
        "FP4",
        _NVFP4_FP8_KV,
        7007.0,
        "| 1000/1000 | 7,007 | 7,326 | 2,909 | 4,205 |",
        (1000, 1000),
        "nvidia/Llama-3.3-70B-Instruct-FP4, TP1; nvfp4 activations and an fp8 cache assumed. " + _NVFP4_NOTE,
    ),
    _row(
        _TRT10,
        "trtllm-b200-llama33-70b-128-2048",
        "1 x B200",
        "b200",
        1,
        "llama-3-70b",
        "FP4",
        _NVFP4_FP8_KV,
        9922.0,
        "| 128/2048 | 9,922 | 11,309 | 4,336 | 6,651 |",
        (128, 2048),
        "Llama 3.3 70B FP4, TP1. " + _NVFP4_NOTE,
    ),
    _row(
        _TRT10,
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
)
"""The v1.0 performance overview's rows."""


V0_19_RUNS: tuple[ServingRun, ...] = (
    # TensorRT-LLM v0.19 B200 FP4 (section 5).
    _row(
        _TRT019,
        "trtllm019-b200-llama33-70b-tp2-128-2048",
        "2 x B200",
        "b200",
        2,
        "llama-3-70b",
        "FP4",
        _NVFP4_FP8_KV,
        15459.71,
        "128, 2048 9,925.00 15,459.71 23,608.58 30,742.86",
        (128, 2048),
        "Llama 3.3 70B, TP 2.",
    ),
    _row(
        _TRT019,
        "trtllm019-b200-llama33-70b-tp4-128-2048",
        "4 x B200",
        "b200",
        4,
        "llama-3-70b",
        "FP4",
        _NVFP4_FP8_KV,
        23608.58,
        "128, 2048 9,925.00 15,459.71 23,608.58 30,742.86",
        (128, 2048),
        "Llama 3.3 70B, TP 4.",
    ),
    _row(
        _TRT019,
        "trtllm019-b200-llama33-70b-tp8-128-2048",
        "8 x B200",
        "b200",
        8,
        "llama-3-70b",
        "FP4",
        _NVFP4_FP8_KV,
        30742.86,
        "128, 2048 9,925.00 15,459.71 23,608.58 30,742.86",
        (128, 2048),
        "Llama 3.3 70B, TP 8.",
    ),
    _row(
        _TRT019,
        "trtllm019-b200-llama33-70b-tp8-128-128",
        "8 x B200",
        "b200",
        8,
        "llama-3-70b",
        "FP4",
        _NVFP4_FP8_KV,
        27471.49,
        "128, 128 11,253.28 17,867.66 24,944.50 27,471.49",
        (128, 128),
        "Llama 3.3 70B, TP 8.",
    ),
)
"""The v0.19 B200 FP4 rows."""


DEVELOPER_GUIDE_RUNS: tuple[ServingRun, ...] = (
    # TensorRT-LLM developer-guide overview, PyTorch backend (section 6).
    _row(
        _TRT_DEV,
        "trtllm-devguide-h200-llama33-70b-tp2-1000",
        "2 x H200",
        "h200",
        2,
        "llama-3-70b",
        "FP8",
        _FP8,
        2587.0,
        "| 1000/1000 | 6,920 | 7,769 | 2,587 | 2,209 |",
        (1000, 1000),
        "Llama 3.3 70B FP8, TP 2, 1000/1000 as printed (the method lists 3000 requests for 1024/1024).",
        per_gpu=True,
    ),
    _row(
        _TRT_DEV,
        "trtllm-devguide-h100-llama33-70b-tp2-1000",
        "2 x H100",
        "h100-sxm",
        2,
        "llama-3-70b",
        "FP8",
        _FP8,
        2209.0,
        "| 1000/1000 | 6,920 | 7,769 | 2,587 | 2,209 |",
        (1000, 1000),
        "Llama 3.3 70B FP8, TP 2.",
        per_gpu=True,
    ),
    _row(
        _TRT_DEV,
        "trtllm-devguide-b200-llama33-70b-tp1-1024-8192",
        "1 x B200",
        "b200",
        1,
        "llama-3-70b",
        "FP4",
        _NVFP4_FP8_KV,
        3242.0,
        "| 1024/8192 | 3,242 | 3,805 | 2,009 | |",
        (1024, 8192),
        "Llama 3.3 70B FP4, TP 1 (per GPU = system); nvfp4 activations assumed. " + _NVFP4_NOTE,
    ),
    _row(
        _TRT_DEV,
        "trtllm-devguide-h200-llama33-70b-tp2-1024-8192",
        "2 x H200",
        "h200",
        2,
        "llama-3-70b",
        "FP8",
        _FP8,
        2009.0,
        "| 1024/8192 | 3,242 | 3,805 | 2,009 | |",
        (1024, 8192),
        "Llama 3.3 70B FP8, TP 2.",
        per_gpu=True,
    ),
    _row(
        _TRT_DEV,
        "trtllm-devguide-h200-llama33-70b-tp2-8192-1024",
        "2 x H200",
        "h200",
        2,
        "llama-3-70b",
        "FP8",
        _FP8,
        537.0,
        "| 8192/1024 | 1,362 | 1,491 | 537 | 398 |",
        (8192, 1024),
        "Llama 3.3 70B FP8, TP 2.",
        per_gpu=True,
    ),
    _row(
        _TRT_DEV,
        "trtllm-devguide-b200-llama33-70b-tp1-32768-1024",
        "1 x B200",
        "b200",
        1,
        "llama-3-70b",
        "FP4",
        _NVFP4_FP8_KV,
        274.0,
        "| 32768/1024 | 274 | 302 | 120 | |",
        (32768, 1024),
        "Llama 3.3 70B FP4, TP 1 (per GPU = system); nvfp4 activations assumed. " + _NVFP4_NOTE,
    ),
)
"""The developer-guide overview's rows (PyTorch backend)."""
