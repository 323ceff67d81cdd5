"""Serving runs from TensorRT-LLM's (NVIDIA) v0.14 online-serving table (Triton backend, the saturated rows), as
the v0.17 performance page reproduces it. Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from hwlib.data.records import ServingRun, cite
from hwlib.data.serving_rows import BF16 as _BF16
from hwlib.data.serving_rows import Page as _Page
from hwlib.data.serving_rows import row as _row
from hwlib.data.serving_runs_trtllm_v017 import TRTLLM_017_PAGE as _TRTLLM_017_PAGE

_TRT014_REQUESTS = 500
"""Requests each v0.14 benchmark sends: no batch holds more."""
_TRT014 = _Page(
    "TensorRT-LLM, v0.14 online serving (Triton backend)",
    cite(_TRTLLM_017_PAGE),
    "'All data in the table below was generated using version 0.14.0, with 500 requests and BF16 precision', "
    "through the Triton TensorRT-LLM backend; QPS 'INF': all requests at once. BF16 weights, activations and "
    "KV cache assumed from 'BF16 precision'; only TP is printed (GPUs = TP assumed); whether the lengths are "
    "fixed or means is not stated; batch not stated. Columns: QPS | Tput(req/s) | Mean TTFT(ms) | Mean ITL(ms) "
    "| Total Token Tput (tok/s) | Output Tput (tok/s).",
    "online, QPS INF",
)


RUNS: tuple[ServingRun, ...] = (
    # QPS INF (research/serving_runs_more.md, section 1).
    _row(
        _TRT014,
        "trtllm014-h100-llama31-70b-tp4-467-256-qpsinf",
        "4 x H100 80GB HBM3, Triton",
        "h100-sxm",
        4,
        "llama-3-70b",
        "BF16",
        _BF16,
        4103.0,
        "||||||INF|16|9123|85|11593|4103|",
        (467, 256),
        "Llama 3.1 70B, TP 4, 467/256 (the row below '|LLaMA 3.1 70B|H100 80GB HBM3|4|467|256|2|2|62|21|1406|498|'): "
        "16 req/s, mean TTFT 9,123 ms, mean ITL 85 ms, 11,593 total tokens/s.",
        batch=_TRT014_REQUESTS,
    ),
    _row(
        _TRT014,
        "trtllm014-h100-llama31-70b-tp4-202-214-qpsinf",
        "4 x H100 80GB HBM3, Triton",
        "h100-sxm",
        4,
        "llama-3-70b",
        "BF16",
        _BF16,
        3459.0,
        "||||||INF|16|4482|50|6725|3459|",
        (202, 214),
        "Llama 3.1 70B, TP 4, 202/214 (the row below '||||202|214|2|2|48|20|780|401|'): 16 req/s, mean TTFT "
        "4,482 ms, mean ITL 50 ms, 6,725 total tokens/s.",
        batch=_TRT014_REQUESTS,
        outside_model="The same 16 requests/s as the 467/256 row on the same four GPUs, although each of its "
        "requests is about half the work (202 + 214 tokens against 467 + 256): a limit outside the engine's steps "
        "(the client or the Triton front end), which no step model holds.",
    ),
    _row(
        _TRT014,
        "trtllm014-h100-llama31-8b-tp1-467-256-qpsinf",
        "1 x H100 80GB HBM3, Triton",
        "h100-sxm",
        1,
        "llama-3-8b",
        "BF16",
        _BF16,
        9420.0,
        "||||||INF|37|3335|39|26614|9420|",
        (467, 256),
        "Llama 3.1 8B, TP 1, 467/256 (the row below '|LLaMA 3.1 8B||1|467|256|2|2|23|8|1423|504|', GPU cell "
        "continuing 'H100 80GB HBM3'): 37 req/s, mean TTFT 3,335 ms, mean ITL 39 ms, 26,614 total tokens/s.",
        batch=_TRT014_REQUESTS,
    ),
    _row(
        _TRT014,
        "trtllm014-h200-llama31-70b-tp4-467-256-qpsinf",
        "4 x H200 ('131GB HBM3'), Triton",
        "h200",
        4,
        "llama-3-70b",
        "BF16",
        _BF16,
        4185.0,
        "||||||INF|16|9222|83|11826|4185|",
        (467, 256),
        "Llama 3.1 70B, TP 4, 467/256 (the row below '|LLaMA 3.1 70B|H200 131GB HBM3|4|467|256|2|2|58|18|1411|499|'; "
        "'131GB' as printed, the H200 is the 141 GB part): 16 req/s, mean TTFT 9,222 ms, mean ITL 83 ms, "
        "11,826 total tokens/s.",
        batch=_TRT014_REQUESTS,
    ),
    _row(
        _TRT014,
        "trtllm014-h200-llama31-8b-tp1-467-256-qpsinf",
        "1 x H200 ('131GB HBM3'), Triton",
        "h200",
        1,
        "llama-3-8b",
        "BF16",
        _BF16,
        10121.0,
        "||||||INF|40|3237|36|28596|10121|",
        (467, 256),
        "Llama 3.1 8B, TP 1, 467/256 (the row below '|LLaMA 3.1 8B|H200 131GB HBM3|1|467|256|2|2|21|6|1425|504|'): "
        "40 req/s, mean TTFT 3,237 ms, mean ITL 36 ms, 28,596 total tokens/s.",
        batch=_TRT014_REQUESTS,
    ),
)
"""The v0.14 online-serving rows at QPS INF."""
