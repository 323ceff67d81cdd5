"""Serving runs from JetStream (Google): the jetstream-pytorch benchmark summary's Llama 3 8B and Llama 2 runs on
TPU v5e-8. Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from hwlib.data.records import ServingRun, cite
from hwlib.data.serving_rows import BF16 as _BF16
from hwlib.data.serving_rows import Page as _Page
from hwlib.data.serving_rows import row as _row

_JETSTREAM = "AI-Hypercomputer/jetstream-pytorch, benchmarks/summary.md (commit 2ba0dd8b), Google"


_JETSTREAM_PAGE = _Page(
    "JetStream, benchmark summary (Google)",
    cite(_JETSTREAM),
    "ShareGPT, '--num-prompts 2000', 'max input length 1024, max output length 1024', the '-chat' weights: the "
    "mean lengths are not stated, so the bound takes the shortest contexts (the weights only). Model parallel "
    "over the 8 chips (implied). Columns: date | device | quantization | batch | cache length | max input | "
    "max output | throughput (token/s).",
    "ShareGPT",
)


LLAMA_3_RUNS: tuple[ServingRun, ...] = (
    ServingRun(
        key="jetstream-v5e8-llama3-8b-bf16",
        source="JetStream, benchmark summary (Google)",
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
        source="JetStream, benchmark summary (Google)",
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
"""The Llama 3 8B rows, bf16 and int8."""


LLAMA_2_RUNS: tuple[ServingRun, ...] = (
    # JetStream-PyTorch, Llama 2 on TPU v5e-8 (section 13).
    _row(
        _JETSTREAM_PAGE,
        "jetstream-v5e8-llama2-7b-bf16",
        "TPU v5e-8",
        "v5e",
        8,
        "llama-2-7b",
        "BF16",
        _BF16,
        3663.0,
        "2024-03-28 | TPU v5e-8 | bfloat16 | 96 | 2048 | 1024 | 1024 | 3663",
        (None, None),
        "Llama 2 7B chat, batch 96, cache length 2048.",
        batch=96,
    ),
    _row(
        _JETSTREAM_PAGE,
        "jetstream-v5e8-llama2-13b-bf16",
        "TPU v5e-8",
        "v5e",
        8,
        "llama-2-13b",
        "BF16",
        _BF16,
        2056.0,
        "2024-03-28 | TPU v5e-8 | bfloat16 | 48 | 2048 | 1024 | 1024 | 2056",
        (None, None),
        "Llama 2 13B chat, batch 48, cache length 2048.",
        batch=48,
    ),
)
"""The Llama 2 rows."""
