"""Serving benchmarks under load, by engine: NVIDIA NIM (its TensorRT-LLM backend) serving Llama 3 8B and 70B on DGX
A100 and DGX H100 at 1 to 250 concurrent clients, from NVIDIA's Deep Learning Institute course dataset; SemiAnalysis
InferenceX's DeepSeek-R1 on one node of H200s, B200s or MI300Xs under SGLang and TensorRT-LLM, in fp8 and (B200)
NVFP4 (both found only in third-party copies, ``load_runs/README.md``); GPUStack's performance lab's Qwen3-8B on one
H100 under vLLM, SGLang and TensorRT-LLM; the SGLang team's SGLang 0.3.0 against vLLM 0.6.0 and DataCrunch's SGLang
on H200s, both at Poisson request rates; and the vLLM blog's long prompts on one H100. Chapter
:ref:`ch-serving-measured`.
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
SGLANG_VLLM_FILE = Path(__file__).with_name("load_runs") / "sglang_vllm060.csv"
SGLANG_VLLM_SOURCE = cite(
    "SGLang team, 'How to reproduce the benchmark results for SGLang v0.3.0 compared to vLLM v0.6.0', "
    "sgl-project/sglang benchmark/benchmark_vllm_060/README.md at commit 120affb9: sglang.bench_serving, ShareGPT, "
    "Poisson arrivals; vLLM started with --num-scheduler-steps 10",
    "2026-12-07",
)
"""Where the SGLang team's runs of SGLang 0.3.0 and vLLM 0.6.0 come from."""
DATACRUNCH_FILE = Path(__file__).with_name("load_runs") / "datacrunch_h200.csv"
DATACRUNCH_SOURCE = cite(
    "DataCrunch, datacrunch-research/h200-benchmarks at commit c091ef53 (2024-12-14): "
    "sglang/outputs/llama_3_3_70b_online_output.jsonl and llama_405b_online_output.jsonl, launch commands in "
    "sglang/experiments/: sglang.bench_serving, Poisson arrivals",
    "2026-12-07",
)
"""Where DataCrunch's SGLang runs on H200s come from."""
VLLM_BLOG_FILE = Path(__file__).with_name("load_runs") / "vllm_fp8_kv_blog.csv"
VLLM_BLOG_SOURCE = cite(
    "vLLM blog, 'The State of FP8 KV-Cache and Attention Quantization in vLLM' (2026-04-22), Table 4 'Throughput "
    "under Load', vllm-project/vllm-project.github.io _posts/2026-04-22-fp8-kvcache.md at commit c3a01c4a",
    "2026-12-07",
)
"""Where the vLLM blog's closed-loop run comes from."""
VLLM_RECIPES_FILE = Path(__file__).with_name("load_runs") / "vllm_recipes_mi355x.csv"
VLLM_RECIPES_SOURCE = cite(
    "vLLM recipes, 'Quick Start Recipe for Llama 3.3 70B on vLLM - AMD MI355', vllm-project/recipes "
    "Llama/Llama3.3-70B-ROCm.md at commit be7e1c5d (2025-11-27): its two sample outputs of vllm bench serve",
    "2026-12-07",
)
"""Where vLLM's recipe runs of Llama 3.3 70B on one MI355X come from."""
SOURCES = (
    "NVIDIA DLI (NIM)",
    "SemiAnalysis InferenceX",
    "GPUStack performance lab",
    "SGLang team",
    "DataCrunch",
    "vLLM blog",
    "vLLM recipes",
)
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
VLLM_SCHEDULER_STEPS = 10
"""The decode steps vLLM 0.6.0 ran per scheduling in the SGLang team's runs (``--num-scheduler-steps 10``): a request
that arrives waits for the next scheduling, as at SGLang's receive interval (``recv_interval``)."""
_NS = 1e-9
_MS = 1e-3
_GS_ENGINES = {"vLLM": "vllm", "SGLang": "sglang", "TensorRT-LLM": "trtllm"}
_LLAMA = {
    "Llama 3.1 8B Instruct": "llama-3-8b",
    "Llama 3.1 70B Instruct": "llama-3-70b",
    "meta-llama/Llama-3.3-70B-Instruct": "llama-3-70b",
    "meta-llama/Llama-3.1-405B-Instruct": "llama-3.1-405b",
}
"""The Llama 3.1 and 3.3 checkpoints as hwlib shapes (8B and 70B keep Llama 3's shapes)."""
_GPUS = {"A100 80G": "hgx-a100-hdr", "H100 80G": "hgx-h100-ndr"}


def concurrency_runs() -> object:
    """The runs as a table, one row each: the publisher (``source``, one of ``SOURCES``), the engine profile
    (``hwlib.data.serving_engines``), model and cluster keys, tensor-parallel chips, whether the experts are split by
    expert parallelism and the attention by data parallelism (``attention_dp``), precision (a key of ``hw.PRECISIONS``),
    prompt and answer tokens and the shortest share of them the client draws (``length_low``: 1 for fixed lengths), the
    steps between the scheduler's intakes of new requests that the run's recipe sets (``recv_interval``) and the
    tokens a step takes where its server's command sets them (``max_batch_tokens``: 0 for the engine's default), the
    requests the benchmark sent and measured (``requests``: 0 where the source does not say), clients (``concurrency``;
    0 for Poisson arrivals at ``request_rate`` requests/s, NaN for a closed loop), the measured mean time to first
    token and per output token after it (s) and their medians (``ttft_median_s``, ``tpot_median_s``), NaN where the
    source does not print them, and the percentile of them the source prints
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
            "request_rate": np.nan,
            "concurrency": raw["input_config-concurrency"].astype(int),
            "requests": 0,
            "ttft_mean_s": raw["time_to_first_token-avg"] * _NS,
            "ttft_median_s": np.nan,
            "tpot_mean_s": raw["inter_token_latency-avg"] * _NS,
            "tpot_median_s": np.nan,
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
            "request_rate": np.nan,
            "concurrency": ix["conc"].astype(int),
            "requests": INFERENCEX_PROMPTS_PER_CLIENT * ix["conc"].astype(int),
            "ttft_mean_s": ix["mean_ttft"],
            "ttft_median_s": ix["median_ttft"],
            "tpot_mean_s": ix["mean_tpot"],
            "tpot_median_s": ix["median_tpot"],
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
            "request_rate": np.nan,
            "concurrency": gs["concurrency"].astype(int),
            "requests": gs["successful_requests"].astype(int),
            "ttft_mean_s": gs["mean_ttft_ms"] * 1e-3,
            "ttft_median_s": np.nan,
            "tpot_mean_s": gs["mean_tpot_ms"] * 1e-3,
            "tpot_median_s": np.nan,
            "tail_percentile": 0,
            "ttft_tail_s": np.nan,
            "tpot_tail_s": np.nan,
        }
    )
    runs = pd.concat([nim, inferencex, gpustack, *_open_loops(), _vllm_blog(), _vllm_recipes()], ignore_index=True)
    runs["max_batch_tokens"] = runs["max_batch_tokens"].fillna(0)
    return runs.astype({"concurrency": int, "requests": int, "recv_interval": int, "max_batch_tokens": int})


def _measured(**columns: object) -> dict:
    """The columns a run's source may leave unprinted, NaN unless given."""
    names = ("ttft_mean_s", "ttft_median_s", "tpot_mean_s", "tpot_median_s", "ttft_tail_s", "tpot_tail_s")
    return {name: columns.get(name, np.nan) for name in names} | {"tail_percentile": columns.get("tail_percentile", 0)}


def _open_loops() -> list:
    """The SGLang team's and DataCrunch's runs: Poisson arrivals at ``request_rate``, no closed loop (concurrency 0)."""
    import pandas as pd

    dc = pd.read_csv(DATACRUNCH_FILE)
    # sglang.bench_serving's seeded ShareGPT sample of 1,200 or 2,400 prompts, as DataCrunch's runs print its totals
    # (the SGLang team's runs, with the same client, counts and Llama 3 tokenizer, print none)
    sharegpt = dc[dc["dataset_name"] == "sharegpt"].drop_duplicates("completed").set_index("completed")
    sg = pd.read_csv(SGLANG_VLLM_FILE)
    sample = sharegpt.loc[sg["num_prompts"]]
    mean_of = lambda total: np.rint(sample[total].to_numpy() / sample.index.to_numpy())  # noqa: E731
    engine = sg["engine"].map(_GS_ENGINES)
    team = pd.DataFrame(
        {
            "source": SOURCES[3],
            "engine": engine,
            "model": sg["model"].map(_LLAMA),
            "cluster": sg["gpu"].map(_GPUS),
            "chips": sg["tp"].astype(int),
            "prompt_tokens": mean_of("total_input_tokens"),
            "output_tokens": mean_of("total_output_tokens"),
            "length_low": 1.0,
            "recv_interval": np.where(engine == "vllm", VLLM_SCHEDULER_STEPS, 1),
            "request_rate": sg["request_rate"].astype(float),
            "requests": sg["num_prompts"].astype(int),
            **_measured(ttft_median_s=sg["median_ttft_ms"] * _MS, tpot_median_s=sg["median_tpot_ms"] * _MS),
        }
    )
    random = dc["dataset_name"] == "random"
    datacrunch = pd.DataFrame(
        {
            "source": SOURCES[4],
            "engine": "sglang",
            "model": dc["model"].map(_LLAMA),
            "cluster": "hgx-h200-ndr",
            "chips": dc["tp"].astype(int),
            # random: each length uniform from 1 to the stated one (range ratio 0); ShareGPT: the printed means
            "prompt_tokens": np.where(
                random, dc["random_input_len"], (dc["total_input_tokens"] / dc["completed"]).round()
            ),
            "output_tokens": np.where(
                random, dc["random_output_len"], (dc["total_output_tokens"] / dc["completed"]).round()
            ),
            "length_low": np.where(random, dc["random_range_ratio"], 1.0),
            "recv_interval": 1,
            "request_rate": dc["request_rate"].astype(float),
            "requests": dc["completed"].astype(int),
            # the median gap between streamed tokens is not a request's time per output token: not compared
            **_measured(ttft_median_s=dc["median_ttft_ms"] * _MS),
        }
    )
    frames = [team, datacrunch]
    for frame in frames:
        frame[["expert_parallel", "attention_dp", "precision", "concurrency"]] = (False, False, "bf16", 0)
        frame[["prompt_tokens", "output_tokens"]] = frame[["prompt_tokens", "output_tokens"]].astype(int)
    return frames


def _vllm_blog() -> object:
    """The vLLM blog's closed loop of 8 clients, each length within 15 % of the stated one, its first token (it prints
    the median gap between streamed tokens, not a request's time per output token), its 16-bit cache's run
    (the fp8 cache's keeps bf16 weights and matmuls beside an fp8 cache and attention, which ``hw.PRECISIONS`` does
    not hold)."""
    import pandas as pd

    blog = pd.read_csv(VLLM_BLOG_FILE)
    blog = blog[blog["config"] == "BF16"]
    high = 1 + blog["length_variance"]
    return pd.DataFrame(
        {
            "source": SOURCES[5],
            "engine": "vllm",
            "model": "llama-3-8b",
            "cluster": "hgx-h100-ndr",
            "chips": 1,
            "expert_parallel": False,
            "attention_dp": False,
            "precision": "bf16",
            "prompt_tokens": (blog["input_tokens"] * high).round().astype(int),
            "output_tokens": (blog["output_tokens"] * high).round().astype(int),
            "length_low": (1 - blog["length_variance"]) / high,
            "recv_interval": 1,
            "request_rate": np.nan,
            "concurrency": blog["concurrency"].astype(int),
            "requests": blog["num_prompts"].astype(int),
            **_measured(ttft_median_s=blog["median_ttft_ms"] * _MS),  # its median ITL is not a TPOT either
        }
    )


def _vllm_recipes() -> object:
    """vLLM's recipe runs of Llama 3.3 70B on one MI355X: 64 clients of fixed 8k/1k lengths (the printed means), 128
    requests, fp8 and MXFP4 weights with an fp8 cache, the server's token budget as its command sets it."""
    import pandas as pd

    recipes = pd.read_csv(VLLM_RECIPES_FILE)
    return pd.DataFrame(
        {
            "source": SOURCES[6],
            "engine": "vllm",
            "model": "llama-3-70b",
            "cluster": "mi355x-node",
            "chips": 1,
            "expert_parallel": False,
            "attention_dp": False,
            "precision": np.where(recipes["model"].str.contains("MXFP4"), "mxfp4, fp8 KV", "fp8"),
            "prompt_tokens": np.rint(recipes["total_input_tokens"] / recipes["successful_requests"]).astype(int),
            "output_tokens": np.rint(recipes["total_generated_tokens"] / recipes["successful_requests"]).astype(int),
            "length_low": 1.0,
            "recv_interval": 1,
            "max_batch_tokens": recipes["max_num_batched_tokens"].astype(int),
            "request_rate": np.nan,
            "concurrency": recipes["maximum_request_concurrency"].astype(int),
            "requests": recipes["successful_requests"].astype(int),
            **_measured(
                ttft_mean_s=recipes["mean_ttft_ms"] * _MS,
                ttft_median_s=recipes["median_ttft_ms"] * _MS,
                tpot_mean_s=recipes["mean_tpot_ms"] * _MS,
                tpot_median_s=recipes["median_tpot_ms"] * _MS,
                ttft_tail_s=recipes["p99_ttft_ms"] * _MS,
                tpot_tail_s=recipes["p99_tpot_ms"] * _MS,
                tail_percentile=99,
            ),
        }
    )
