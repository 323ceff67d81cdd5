"""Closed-loop serving benchmarks: NVIDIA NIM (its TensorRT-LLM backend) serving Llama 3 8B and 70B on DGX A100 and
DGX H100 at 1 to 250 concurrent clients, from NVIDIA's Deep Learning Institute course dataset, which only a
third-party copy holds (``load_runs/README.md``). Chapter :ref:`ch-serving-many`.
"""

from __future__ import annotations

from pathlib import Path

from hwlib.data.records import cite

RUNS_FILE = Path(__file__).with_name("load_runs") / "nim_dli.csv"
SOURCE = cite(
    "NVIDIA Deep Learning Institute, 'Sizing LLM inference systems' course dataset nim.csv (NIM with its "
    "TensorRT-LLM backend, GenAI-Perf), as redistributed in github.com/wbing520/ai-performance-engineering, "
    "code/ch10_inference/inference_gpu_cluster_sizing/dataset/nim.csv, commit 0e25b2e2 (2025-04-27): a third-party "
    "copy, no NVIDIA page holds it",
    "2026-12-06",
)
"""Where the runs come from."""
ENGINE = "trtllm"
"""The engine profile the runs are simulated with: NIM's TensorRT-LLM backend ('NIM_TRT-LLM')."""
_MODELS = {"meta-llama3-8b-instruct": "llama-3-8b", "meta-llama3-70b-instruct": "llama-3-70b"}
_CLUSTERS = {"A100-SXM4-80GB": "hgx-a100-hdr", "H100_80GB_HBM3": "hgx-h100-ndr"}
_NS = 1e-9


def concurrency_runs() -> object:
    """The runs as a table, one row each: model and cluster keys, tensor-parallel chips, precision (a key of
    ``hw.PRECISIONS``), prompt and answer tokens, clients, and the measured mean and p95 time to first token and
    between tokens (s) and output tokens/s. Chapter :ref:`ch-serving-many`."""
    import pandas as pd

    raw = pd.read_csv(RUNS_FILE)
    return pd.DataFrame(
        {
            "model": raw["task_inputs-model"].map(_MODELS),
            "cluster": raw["task_inputs-GPU"].map(_CLUSTERS),
            "chips": raw["task_inputs-n_gpus"].astype(int),
            "precision": raw["task_inputs-precision"],
            "prompt_tokens": raw["input_config-synthetic_input_tokens_mean"].astype(int),
            "output_tokens": raw["input_config-output_tokens_mean"].astype(int),
            "concurrency": raw["input_config-concurrency"].astype(int),
            "ttft_mean_s": raw["time_to_first_token-avg"] * _NS,
            "ttft_p95_s": raw["time_to_first_token-p95"] * _NS,
            "itl_mean_s": raw["inter_token_latency-avg"] * _NS,
            "itl_p95_s": raw["inter_token_latency-p95"] * _NS,
            "output_tokens_per_s": raw["output_token_throughput-avg"],
        }
    )
