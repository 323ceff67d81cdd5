"""Serving runs from TensorRT-LLM's (NVIDIA) static-batch tables: the v0.6.1 performance tables and the v0.5.0
H200 launch blog, each one static batch of the stated size and lengths. Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from hwlib.data.records import ServingRun, cite
from hwlib.data.serving_rows import FP8 as _FP8
from hwlib.data.serving_rows import Page as _Page
from hwlib.data.serving_rows import row as _row

_TRTLLM_061 = (
    "NVIDIA TensorRT-LLM, docs/source/performance.md (commit 138f96d4), https://github.com/NVIDIA/TensorRT-LLM"
)
_TRTLLM_H200 = (
    "NVIDIA TensorRT-LLM, docs/source/blogs/H200launch.md on branch release/0.5.0, "
    "https://raw.githubusercontent.com/NVIDIA/TensorRT-LLM/release/0.5.0/docs/source/blogs/H200launch.md"
)


_BEFORE_XQA = (
    "Llama 2 70B's grouped-query decode attention before TensorRT-LLM's Hopper XQA kernels (v0.10.0 release notes, "
    "github.com/NVIDIA/TensorRT-LLM/releases/tag/v0.10.0, read 2026-12-02: 'Integrated the new NVIDIA Hopper XQA "
    "kernels for LLaMA 2 70B model'); the long-answer rows reach half of what the same chips reach in v0.17"
)


_TRT061 = _Page(
    "TensorRT-LLM, v0.6.1 performance tables",
    cite(_TRTLLM_061),
    "'reference data at large batch sizes, representing high throughput offline tasks. This data has been "
    "updated for v0.6.1'; gptSessionBenchmark runs one static batch of the stated size, every sequence of the "
    "stated lengths. H100 engines built with '--enable_fp8 --fp8_kv_cache'. 'LLaMA 70B' and 'LLaMA 7B' are "
    "Llama 2 ('the GPT-J, Llama2-7b, and Llama2-70b benchmarks were ran using a single-setting engine build').",
    "static batch",
)
_TRT_H200 = _Page(
    "TensorRT-LLM, H200 launch blog (v0.5.0)",
    cite(_TRTLLM_H200),
    "'Preliminary measured performance, subject to change. TensorRT-LLM v0.5.0, TensorRT v9.1.0.4 | H200, H100 "
    "FP8.'; batch '(1) Largest batch supported on given TP configuration by power of 2', run as one static "
    "batch of the stated lengths, as TensorRT-LLM's benchmark of that release did. Whether the KV cache was FP8 "
    "is not stated: fp8, the smallest, assumed. 'llama_70b' and 'llama_13b' are Llama 2 (November 2023). "
    "Column 'Throughput (out tok/s)'.",
    "static batch",
)


RUNS: tuple[ServingRun, ...] = (
    # TensorRT-LLM v0.6.1 static batches (section 3).
    _row(
        _TRT061,
        "trtllm061-h100-llama2-70b-tp2-b1024-128-128",
        "2 x H100 80GB HBM3",
        "h100-sxm",
        2,
        "llama-2-70b",
        "FP8, FP8 KV cache",
        _FP8,
        2657.0,
        "| LLaMA 70B | 1024 | 2 | 128 | 128 | 2,657 |",
        (128, 128),
        "Batch 1024, TP 2; column 'Throughput (out tok/s/GPU)'.",
        batch=1024,
        per_gpu=True,
        outside_model=_BEFORE_XQA,
    ),
    _row(
        _TRT061,
        "trtllm061-h100-llama2-70b-tp4-b480-128-2048",
        "4 x H100 80GB HBM3",
        "h100-sxm",
        4,
        "llama-2-70b",
        "FP8, FP8 KV cache",
        _FP8,
        1486.0,
        "| LLaMA 70B | 480 | 4 | 128 | 2048 | 1,486 |",
        (128, 2048),
        "Batch 480, TP 4; per GPU.",
        batch=480,
        per_gpu=True,
        outside_model=_BEFORE_XQA,
    ),
    _row(
        _TRT061,
        "trtllm061-h100-llama2-70b-tp2-b96-2048-128",
        "2 x H100 80GB HBM3",
        "h100-sxm",
        2,
        "llama-2-70b",
        "FP8, FP8 KV cache",
        _FP8,
        306.0,
        "| LLaMA 70B | 96 | 2 | 2048 | 128 | 306 |",
        (2048, 128),
        "Batch 96, TP 2; per GPU.",
        batch=96,
        per_gpu=True,
        outside_model=_BEFORE_XQA,
    ),
    _row(
        _TRT061,
        "trtllm061-h100-llama2-70b-tp2-b64-2048-2048",
        "2 x H100 80GB HBM3",
        "h100-sxm",
        2,
        "llama-2-70b",
        "FP8, FP8 KV cache",
        _FP8,
        547.0,
        "| LLaMA 70B | 64 | 2 | 2048 | 2048 | 547 |",
        (2048, 2048),
        "Batch 64, TP 2; per GPU.",
        batch=64,
        per_gpu=True,
        outside_model=_BEFORE_XQA,
    ),
    _row(
        _TRT061,
        "trtllm061-h100-llama2-7b-tp1-b768-128-128",
        "1 x H100 80GB HBM3",
        "h100-sxm",
        1,
        "llama-2-7b",
        "FP8, FP8 KV cache",
        _FP8,
        19694.0,
        "| LLaMA 7B | 768 | 1 | 128 | 128 | 19,694 |",
        (128, 128),
        "Batch 768, one GPU (per GPU = system).",
        batch=768,
    ),
    _row(
        _TRT061,
        "trtllm061-h100-llama2-7b-tp1-b48-2048-2048",
        "1 x H100 80GB HBM3",
        "h100-sxm",
        1,
        "llama-2-7b",
        "FP8, FP8 KV cache",
        _FP8,
        2740.0,
        "| LLaMA 7B | 48 | 1 | 2048 | 2048 | 2,740 |",
        (2048, 2048),
        "Batch 48, one GPU (per GPU = system).",
        batch=48,
    ),
    # TensorRT-LLM H200 launch blog, v0.5.0 (section 4).
    _row(
        _TRT_H200,
        "trtllm05-h200-llama2-70b-tp1-b512-128-128",
        "1 x H200",
        "h200",
        1,
        "llama-2-70b",
        "FP8 (KV cache not stated)",
        _FP8,
        3014.0,
        "| llama_70b | 512 | 1 | 128 | 128 | 3,014 |",
        (128, 128),
        "Batch 512, TP 1.",
        batch=512,
        outside_model=_BEFORE_XQA,
    ),
    _row(
        _TRT_H200,
        "trtllm05-h200-llama2-70b-tp1-b32-2048-128",
        "1 x H200",
        "h200",
        1,
        "llama-2-70b",
        "FP8 (KV cache not stated)",
        _FP8,
        303.0,
        "| llama_70b | 32 | 1 | 2048 | 128 | 303 |",
        (2048, 128),
        "Batch 32, TP 1.",
        batch=32,
        outside_model=_BEFORE_XQA,
    ),
    _row(
        _TRT_H200,
        "trtllm05-h200-llama2-13b-tp1-b1024-128-128",
        "1 x H200",
        "h200",
        1,
        "llama-2-13b",
        "FP8 (KV cache not stated)",
        _FP8,
        11819.0,
        "| llama_13b | 1024 | 1 | 128 | 128 | 11,819 |",
        (128, 128),
        "Batch 1024, TP 1.",
        batch=1024,
    ),
    _row(
        _TRT_H200,
        "trtllm05-h200-llama2-13b-tp1-b128-128-2048",
        "1 x H200",
        "h200",
        1,
        "llama-2-13b",
        "FP8 (KV cache not stated)",
        _FP8,
        4750.0,
        "| llama_13b | 128 | 1 | 128 | 2048 | 4,750 |",
        (128, 2048),
        "Batch 128, TP 1.",
        batch=128,
    ),
    _row(
        _TRT_H200,
        "trtllm05-h200-llama2-70b-tp4-b512-128-2048",
        "4 x H200",
        "h200",
        4,
        "llama-2-70b",
        "FP8 (KV cache not stated)",
        _FP8,
        6616.0,
        "| llama_70b | 512 | 4 | 128 | 2048 | 6,616 |",
        (128, 2048),
        "Batch 512, TP 4, the system's tokens/s on this release/0.5.0 page. The later edit of the blog prints "
        "'| llama_70b | 512 | 2 | 128 | 2048 | 1,654 |' under 'out tok/s/GPU': 6,616 / 4 = 1,654 (derived) with "
        "the TP misprinted, not used.",
        batch=512,
        outside_model=_BEFORE_XQA,
    ),
)
"""The v0.6.1 static batches, then the H200 launch blog's."""
