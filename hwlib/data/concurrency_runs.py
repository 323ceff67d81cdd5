"""Closed-loop serving benchmarks: NVIDIA NIM (its TensorRT-LLM backend) serving Llama 3 8B and 70B on DGX A100 and
DGX H100 at 1 to 250 concurrent clients, from NVIDIA's Deep Learning Institute course dataset; SemiAnalysis
InferenceX's DeepSeek-R1 on one node of H200s, B200s or MI300Xs under SGLang and TensorRT-LLM, in fp8 and (B200)
NVFP4 (both found only in third-party copies, ``load_runs/README.md``); and GPUStack's performance lab's Qwen3-8B on
one H100 under vLLM, SGLang and TensorRT-LLM. Chapter :ref:`ch-serving-measured`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hwlib.data.records import cite

RUNS_FILE = Path(__file__).with_name("load_runs") / "nim_dli.csv"
INFERENCEX_FILE = Path(__file__).with_name("load_runs") / "inferencex_dsr1.csv"
SOURCE = cite(
    "NVIDIA Deep Learning Institute, 'Sizing LLM inference systems' course dataset nim.csv (NIM with its "
    "TensorRT-LLM backend, GenAI-Perf), as redistributed in github.com/wbing520/ai-performance-engineering, "
    "code/ch10_inference/inference_gpu_cluster_sizing/dataset/nim.csv, commit 0e25b2e2 (2025-04-27): a third-party "
    "copy, no NVIDIA page holds it",
    "2026-12-06",
)
"""Where the NIM runs come from."""
INFERENCEX_SOURCE = cite(
    "SemiAnalysis InferenceX results, the dashboard's API snapshot packages/app/cypress/fixtures/api/benchmarks.json "
    "in github.com/vngcloud/InferenceX-app, commit 7fe6d62a (file changed at 528c4146, 2026-06-14): a third-party "
    "copy of a test fixture; the client's settings from SemiAnalysisAI/InferenceX, commit 843c6254",
    "2026-12-06",
)
"""Where the InferenceX runs come from."""
GPUSTACK_FILE = Path(__file__).with_name("load_runs") / "gpustack_qwen3_8b.csv"
GPUSTACK_SOURCE = cite(
    "GPUStack performance lab, 'Optimizing Qwen3-8B Latency on NVIDIA H100 GPUs', gpustack/gpustack "
    "docs/performance-lab/qwen3-8b/h100-latency.md at commit 47277d79 (docs.gpustack.ai/latest/performance-lab/): "
    "vllm bench serve, ShareGPT, 100 prompts, the OpenAI chat endpoint",
    "2026-12-06",
)
"""Where the GPUStack runs come from."""
SOURCES = ("NVIDIA DLI (NIM)", "SemiAnalysis InferenceX", "GPUStack performance lab")
"""The publishers, as the table's ``source`` column names them."""
INFERENCEX_RANGE = 0.8
"""The shortest length InferenceX's client draws, as a share of the stated one (``--random-range-ratio 0.8``)."""
_MODELS = {"meta-llama3-8b-instruct": "llama-3-8b", "meta-llama3-70b-instruct": "llama-3-70b"}
_CLUSTERS = {"A100-SXM4-80GB": "hgx-a100-hdr", "H100_80GB_HBM3": "hgx-h100-ndr"}
INFERENCEX_RECV_INTERVALS = ((16, 30), (1, 10))
"""SGLang's ``--scheduler-recv-interval`` in InferenceX's B200 DeepSeek-R1 recipes without attention data parallelism,
by the fewest clients it applies from: 30 from 16 clients on, else 10 (SemiAnalysisAI/InferenceX, dsr1_fp8_b200 and
dsr1_fp4_b200 recipes, the same at every commit from 2025-11-02 to 2026-05-22, the dates of the runs; at 843c6254,
benchmarks/single_node/fixed_seq_len/). Its other recipes leave SGLang's default, 1."""
INFERENCEX_PROMPTS_PER_CLIENT = 10
"""Requests InferenceX's client sends and measures per client (``--num-prompts $(( CONC * 10 ))``; its warm-up
requests come before and are not measured)."""
_IX_CLUSTERS = {"h200": "hgx-h200-ndr", "b200": "hgx-b200-ndr", "mi300x": "mi300x-node"}
_IX_ENGINES = {"sglang": "sglang", "trt": "trtllm"}
_IX_PRECISIONS = {"fp8": "fp8", "fp4": "nvfp4, fp8 KV"}
"""InferenceX's precisions as ``hw.PRECISIONS`` keys: its B200 FP4 runs serve nvidia/DeepSeek-R1-0528-FP4(-V2),
NVFP4 checkpoints (the KV cache's dtype is not stated: fp8, as for the fp8 runs)."""
_NS = 1e-9
_GS_ENGINES = {"vLLM": "vllm", "SGLang": "sglang", "TensorRT-LLM": "trtllm"}


def concurrency_runs() -> object:
    """The runs as a table, one row each: the publisher (``source``, one of ``SOURCES``), the engine profile
    (``hwlib.data.serving_engines``), model and cluster keys, tensor-parallel chips, whether the experts are split by
    expert parallelism and the attention by data parallelism (``attention_dp``), precision (a key of ``hw.PRECISIONS``),
    prompt and answer tokens and the shortest share of them the client draws (``length_low``: 1 for fixed lengths), the
    steps between the scheduler's intakes of new requests that the run's recipe sets (``recv_interval``), the
    requests the benchmark sent and measured (``requests``: 0 where the source does not say), clients, the measured mean
    time to first token and per output token after it (s), the median first token where the source prints it
    (``ttft_median_s``: InferenceX only, else NaN), and the percentile of them the source prints
    (``tail_percentile``: 95 for NIM, both; 99 for InferenceX, the first token's only; 0 for none) with its values
    (``ttft_tail_s``, ``tpot_tail_s``: NaN where not printed). Chapter :ref:`ch-serving-measured`."""
    import pandas as pd

    raw = pd.read_csv(RUNS_FILE)
    nim = pd.DataFrame(
        {
            "source": SOURCES[0],
            "engine": "trtllm-0.11",
            "model": raw["task_inputs-model"].map(_MODELS),
            "cluster": raw["task_inputs-GPU"].map(_CLUSTERS),
            "chips": raw["task_inputs-n_gpus"].astype(int),
            "expert_parallel": False,
            "attention_dp": False,
            "precision": raw["task_inputs-precision"],
            "prompt_tokens": raw["input_config-synthetic_input_tokens_mean"].astype(int),
            "output_tokens": raw["input_config-output_tokens_mean"].astype(int),
            "length_low": 1.0,
            "recv_interval": 1,
            "concurrency": raw["input_config-concurrency"].astype(int),
            "requests": 0,
            "ttft_mean_s": raw["time_to_first_token-avg"] * _NS,
            "ttft_median_s": np.nan,
            "tpot_mean_s": raw["inter_token_latency-avg"] * _NS,
            "tail_percentile": 95,
            "ttft_tail_s": raw["time_to_first_token-p95"] * _NS,
            "tpot_tail_s": raw["inter_token_latency-p95"] * _NS,
        }
    )
    ix = pd.read_csv(INFERENCEX_FILE)
    inferencex = pd.DataFrame(
        {
            "source": SOURCES[1],
            "engine": ix["framework"].map(_IX_ENGINES),
            "model": "deepseek-v3",
            "cluster": ix["hardware"].map(_IX_CLUSTERS),
            "chips": ix["tp"].astype(int),
            "expert_parallel": ix["ep"] > 1,
            "attention_dp": ix["dp_attention"].astype(bool),
            "precision": ix["precision"].map(_IX_PRECISIONS),
            "prompt_tokens": ix["isl"].astype(int),
            "output_tokens": ix["osl"].astype(int),
            "length_low": INFERENCEX_RANGE,
            "recv_interval": np.where(
                (ix["hardware"] == "b200") & (ix["framework"] == "sglang") & ~ix["dp_attention"].astype(bool),
                np.select(
                    [ix["conc"] >= least for least, _ in INFERENCEX_RECV_INTERVALS],
                    [steps for _, steps in INFERENCEX_RECV_INTERVALS],
                ),
                1,
            ),
            "concurrency": ix["conc"].astype(int),
            "requests": INFERENCEX_PROMPTS_PER_CLIENT * ix["conc"].astype(int),
            "ttft_mean_s": ix["mean_ttft"],
            "ttft_median_s": ix["median_ttft"],
            "tpot_mean_s": ix["mean_tpot"],
            "tail_percentile": 99,
            "ttft_tail_s": ix["p99_ttft"],
            "tpot_tail_s": np.nan,
        }
    )
    gs = pd.read_csv(GPUSTACK_FILE)
    gpustack = pd.DataFrame(
        {
            "source": SOURCES[2],
            "engine": gs["engine"].map(_GS_ENGINES),
            "model": "qwen3-8b",
            "cluster": "hgx-h100-ndr",
            "chips": 1,
            "expert_parallel": False,
            "attention_dp": False,
            # Qwen3-8B-FP8 is fp8 weights and matmuls; SGLang's cache keeps the model's bf16 by default
            "precision": gs["serving_command"].str.contains("FP8").map({True: "fp8, bf16 KV", False: "bf16"}),
            # ShareGPT's lengths are printed only as totals: each request takes the mean
            "prompt_tokens": (gs["total_input_tokens"] / gs["successful_requests"]).round().astype(int),
            "output_tokens": (gs["total_generated_tokens"] / gs["successful_requests"]).round().astype(int),
            "length_low": 1.0,
            "recv_interval": 1,
            "concurrency": gs["concurrency"].astype(int),
            "requests": gs["successful_requests"].astype(int),
            "ttft_mean_s": gs["mean_ttft_ms"] * 1e-3,
            "ttft_median_s": np.nan,
            "tpot_mean_s": gs["mean_tpot_ms"] * 1e-3,
            "tail_percentile": 0,
            "ttft_tail_s": np.nan,
            "tpot_tail_s": np.nan,
        }
    )
    return pd.concat([nim, inferencex, gpustack], ignore_index=True)
