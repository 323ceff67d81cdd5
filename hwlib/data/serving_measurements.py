"""Published, measured serving results that state their hardware, model, precision and lengths.

The sources, each a group of its own up to the first comma of ``ServingRun.source``:

- MLPerf Inference v4.1 and v5.0, closed division (each submitter's own log in MLCommons' results repository);
- TensorRT-LLM (NVIDIA): the v1.0 performance overview, the v0.17 page's throughput table and its v0.14
  online-serving table, the v0.19 B200 table, the developer-guide overview (PyTorch backend),
  the v0.6.1 static-batch tables and the v0.5.0 H200 launch blog;
- JetStream (Google): the jetstream-pytorch benchmark summary on TPU v5e;
- ROCm vLLM (AMD): the dev-docker README's throughput and latency tables on 8 x MI300X;
- gpt-fast (PyTorch): the README's batch-1 decode speeds on A100-80GB;
- Oracle Cloud: a blog's Llama 3.1 405B runs on 8 x MI300X.

Every tokens/s counts generated tokens only, for the whole system (a per-GPU figure is multiplied by the GPUs,
marked derived); one table whose column may count the prompts' tokens too is recorded as printed and says so. Where
a run does not state a dtype, the record takes the smallest the run could have used, so the model's bound stays a
bound (said in each note). Quoted Markdown table rows have their runs of padding spaces collapsed to one and may
leave out the leading empty cells that carry on from the rows above (the note names the block). Llama 3.1 and 3.3
70B have Llama 3 70B's shapes and Llama 3.1 8B Llama 3 8B's, so they use those models. Runs on chips hwlib lacks
(MI325X) are left out. The hunt behind them is in research/serving_measurements.md and
research/serving_runs_more.md. Compared with ``hw.throughput_bound`` in :ref:`ch-serving`.
"""

from __future__ import annotations

from hwlib.data import (
    serving_runs_amd,
    serving_runs_gpt_fast,
    serving_runs_jetstream,
    serving_runs_mlperf,
    serving_runs_trtllm,
    serving_runs_trtllm_static,
    serving_runs_trtllm_v014,
    serving_runs_trtllm_v017,
)
from hwlib.data.records import ServingRun, cite
from hwlib.data.serving_rows import V41 as _V41
from hwlib.data.serving_rows import V50 as _V50

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

GPT_FAST_MAX_NEW_TOKENS = serving_runs_gpt_fast.GPT_FAST_MAX_NEW_TOKENS
"""The answer length of gpt-fast's README benchmarks: generate.py's default number of new tokens."""


RUNS: tuple[ServingRun, ...] = (
    *serving_runs_mlperf.RUNS,
    *serving_runs_trtllm.V1_0_RUNS,
    *serving_runs_jetstream.LLAMA_3_RUNS,
    *serving_runs_trtllm_v017.RUNS,
    *serving_runs_trtllm_v014.RUNS,
    *serving_runs_trtllm_static.RUNS,
    *serving_runs_trtllm.V0_19_RUNS,
    *serving_runs_trtllm.DEVELOPER_GUIDE_RUNS,
    *serving_runs_amd.ROCM_RUNS,
    *serving_runs_gpt_fast.RUNS,
    *serving_runs_amd.ORACLE_RUNS,
    *serving_runs_jetstream.LLAMA_2_RUNS,
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
