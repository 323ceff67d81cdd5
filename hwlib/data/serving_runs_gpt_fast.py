"""Serving runs from gpt-fast (PyTorch): the README's batch-1 decode speeds on A100-80GB, with the answer length
its generate.py defaults to (``GPT_FAST_MAX_NEW_TOKENS``). Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from hwlib.data.records import ServingRun, cite
from hwlib.data.serving_rows import BF16 as _BF16
from hwlib.data.serving_rows import INT8_WEIGHTS as _INT8_WEIGHTS
from hwlib.data.serving_rows import Page as _Page
from hwlib.data.serving_rows import row as _row

_GPT_FAST = "pytorch-labs/gpt-fast, README.md (commit 0f925b5d), https://github.com/pytorch-labs/gpt-fast"
_GPT_FAST_GENERATE = (
    "pytorch-labs/gpt-fast, generate.py (commit 0055c42d; the same lines at a4bd2f89; not stored at the "
    "README's commit 0f925b5d), "
    "https://github.com/pytorch-labs/gpt-fast"
)


GPT_FAST_MAX_NEW_TOKENS = cite(_GPT_FAST_GENERATE)(
    200,
    "tokens",
    "parser.add_argument('--max_new_tokens', type=int, default=200, help='Maximum number of new tokens.')",
    "The README's benchmarks do not state their answer length and its commands pass no --max_new_tokens: the "
    "default assumed. The tokens/s counts them all ('tokens_generated = y.size(0) - prompt_length', "
    "'tokens_sec = tokens_generated / t') over a time that includes the prefill ('t0 = time.perf_counter()' "
    "before 'generate(...)'); the weights are bfloat16 unless quantized ('precision = torch.bfloat16').",
)
"""The answer length of gpt-fast's README benchmarks: generate.py's default number of new tokens."""


_GPT_FAST_PAGE = _Page(
    "gpt-fast, README",
    cite(_GPT_FAST),
    "'all benchmarks are run at *batch size=1*' with 'a very small prompt length (just 5 tokens)': a static "
    "batch of one. Answer: generate.py's default of 200 new tokens (GPT_FAST_MAX_NEW_TOKENS), its tokens/s "
    "including the prefill. 'Base' is bfloat16 ('precision = torch.bfloat16' in generate.py), KV cache too; "
    "'8-bit' is int8 weight-only quantization (bf16 compute). Tensor parallel over the GPUs (torchrun). "
    "'Benchmarks run on an 8xA100-80GB, power limited to 330W': the cap is not modelled, the bound takes the "
    "chip's full peak and bandwidth, so it stays a bound. Columns: Tokens/Second | Memory Bandwidth (GB/s).",
    "static batch",
)


RUNS: tuple[ServingRun, ...] = (
    # gpt-fast README, A100-80GB at 330 W, batch 1 (section 12).
    _row(
        _GPT_FAST_PAGE,
        "gptfast-a100-llama2-7b-bf16-tp1",
        "1 x A100-80GB (330 W cap)",
        "a100-80gb",
        1,
        "llama-2-7b",
        "BF16 ('Base')",
        _BF16,
        104.9,
        "| Llama-2-7B | Base | 104.9 | 1397.31 |",
        (5, GPT_FAST_MAX_NEW_TOKENS.value),
        "Llama 2 7B, one GPU; 1,397 GB/s achieved as printed.",
        batch=1,
    ),
    _row(
        _GPT_FAST_PAGE,
        "gptfast-a100-llama2-7b-int8-tp1",
        "1 x A100-80GB (330 W cap)",
        "a100-80gb",
        1,
        "llama-2-7b",
        "INT8 weight-only",
        _INT8_WEIGHTS,
        155.58,
        "| | 8-bit | 155.58 | 1069.20 |",
        (5, GPT_FAST_MAX_NEW_TOKENS.value),
        "Llama 2 7B (the row below 'Base'), one GPU.",
        batch=1,
    ),
    _row(
        _GPT_FAST_PAGE,
        "gptfast-a100-llama2-70b-int8-tp1",
        "1 x A100-80GB (330 W cap)",
        "a100-80gb",
        1,
        "llama-2-70b",
        "INT8 weight-only",
        _INT8_WEIGHTS,
        19.13,
        "| | 8-bit | 19.13 | 1322.58 |",
        (5, GPT_FAST_MAX_NEW_TOKENS.value),
        "Llama 2 70B (the row below '| Llama-2-70B | Base | OOM |'), one GPU.",
        batch=1,
    ),
    _row(
        _GPT_FAST_PAGE,
        "gptfast-a100-llama2-70b-bf16-tp2",
        "2 x A100-80GB (330 W cap)",
        "a100-80gb",
        2,
        "llama-2-70b",
        "BF16 ('Base')",
        _BF16,
        21.32,
        "| | 2 | 21.32 | 1481.87 |",
        (5, GPT_FAST_MAX_NEW_TOKENS.value),
        "Llama 2 70B on 2 GPUs (the Tensor Parallelism table: Model | Number of GPUs | Tokens/Second | ...).",
        batch=1,
    ),
    _row(
        _GPT_FAST_PAGE,
        "gptfast-a100-llama2-70b-bf16-tp8",
        "8 x A100-80GB (330 W cap)",
        "a100-80gb",
        8,
        "llama-2-70b",
        "BF16 ('Base')",
        _BF16,
        62.50,
        "| | 8 | 62.50 | 1135.29 |",
        (5, GPT_FAST_MAX_NEW_TOKENS.value),
        "Llama 2 70B on 8 GPUs (Tensor Parallelism table).",
        batch=1,
    ),
    _row(
        _GPT_FAST_PAGE,
        "gptfast-a100-llama2-7b-bf16-tp8",
        "8 x A100-80GB (330 W cap)",
        "a100-80gb",
        8,
        "llama-2-7b",
        "BF16 ('Base')",
        _BF16,
        328.43,
        "| | 8 | 328.43 | 704.10 |",
        (5, GPT_FAST_MAX_NEW_TOKENS.value),
        "Llama 2 7B on 8 GPUs (Tensor Parallelism table).",
        batch=1,
    ),
)
"""The README's rows."""
