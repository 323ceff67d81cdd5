"""Serving runs from MLPerf Inference v4.1 and v5.0, closed division: NVIDIA's Llama 2 70B and Mixtral 8x7B
Offline runs on H100, H200 and B200, and AMD's Llama 2 70B on MI300X, each read in the submitter's own log in
MLCommons' results repository. Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from hwlib.data.records import ServingRun, cite
from hwlib.data.serving_rows import FP8 as _FP8
from hwlib.data.serving_rows import NVFP4_FP8_KV as _NVFP4_FP8_KV
from hwlib.data.serving_rows import NVFP4_NOTE as _NVFP4_NOTE
from hwlib.data.serving_rows import V41 as _V41
from hwlib.data.serving_rows import V50 as _V50

_MLPERF_OUTPUT = (
    "Mean generated tokens per sample: the log's tokens per second over its samples per second; "
    "MLPerf's reference run gives 'Tokens per sample: 294.45'. Prompts are up to 1,024 tokens; "
    "their mean is not stated in any source found."
)


_OPENORCA = (
    "A dataset's prompts (MLPerf's OpenOrca sample), each its own length: one step at one prompt length does not "
    "price them. The chapter 'Serving under load, measured' simulates the v4.1 H100 and H200 runs request by "
    "request from the dataset's length percentiles (hw.request_trace('mlperf-llama2-openorca'))"
)


def _mlperf(path: str, repo: str, value: float, quoted: str) -> object:
    return cite(f"{repo}, {path}")(value, "tokens/s", quoted)


RUNS: tuple[ServingRun, ...] = (
    ServingRun(
        key="mlperf41-h100x8-llama2-70b",
        source="MLPerf Inference v4.1, NVIDIA",
        system="DGX H100 (8 x H100-SXM)",
        chip_key="h100-sxm",
        n_chips=8,
        tensor_parallel=2,
        model_key="llama-2-70b",
        outside_model=_OPENORCA,
        precision="FP8",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99.9/Offline/"
            "performance/run_1/mlperf_log_summary.txt",
            _V41,
            24524.9,
            "Tokens per second: 24524.9",
        ),
        input_len=None,
        output_len=24524.9 / 84.4792,
        batch=896,
        note="Config: 'class H100_SXM_80GB_TP2x4 ... gpu_batch_size = {'llama2-70b': 896} use_fp8 = True ... "
        "tensor_parallelism = 2' (closed/NVIDIA/configs/llama2-70b/Offline/__init__.py); KV dtype not stated, "
        "fp8 assumed. " + _MLPERF_OUTPUT,
    ),
    ServingRun(
        key="mlperf41-h200x8-llama2-70b",
        source="MLPerf Inference v4.1, NVIDIA",
        system="8 x H200-SXM-141GB",
        chip_key="h200",
        n_chips=8,
        tensor_parallel=1,
        model_key="llama-2-70b",
        outside_model=_OPENORCA,
        precision="FP8",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
            _V41,
            31302.7,
            "Tokens per second: 31302.7",
        ),
        input_len=None,
        output_len=31302.7 / 107.477,
        batch=806,
        note="Config: 'class H200_SXM_141GBx1 ... gpu_batch_size = {'llama2-70b': 806} use_fp8 = True ... "
        "tensor_parallelism = 1'; KV dtype not stated, fp8 assumed. " + _MLPERF_OUTPUT,
    ),
    ServingRun(
        key="mlperf50-h100x8-llama2-70b",
        source="MLPerf Inference v5.0, NVIDIA",
        system="DGX H100 (8 x H100-SXM)",
        chip_key="h100-sxm",
        n_chips=8,
        tensor_parallel=1,
        model_key="llama-2-70b",
        outside_model=_OPENORCA,
        precision="FP8",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99/Offline/"
            "performance/run_1/mlperf_log_summary.txt",
            _V50,
            31306.8,
            "Tokens per second: 31306.8",
        ),
        input_len=None,
        output_len=31306.8 / 107.256,
        note="Config: 'HopperOfflineGPUBaseConfig ... precision = \"fp8\" ... 'kv_cache_dtype': 'fp8' ... "
        "'tensor_parallelism': 1, 'pipeline_parallelism': 2'; modelled as eight one-GPU replicas (the pipeline's "
        "transfers left out, in the run's favour). " + _MLPERF_OUTPUT,
    ),
    ServingRun(
        key="mlperf50-b200x8-llama2-70b",
        source="MLPerf Inference v5.0, NVIDIA",
        system="DGX B200 (8 x B200)",
        chip_key="b200",
        n_chips=8,
        tensor_parallel=1,
        model_key="llama-2-70b",
        outside_model=_OPENORCA,
        precision="FP4, FP8 KV cache",
        **_NVFP4_FP8_KV,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/B200-SXM-180GBx8_TRT/llama2-70b-99.9/Offline/performance/"
            "run_1/mlperf_log_summary.txt",
            _V50,
            98858.0,
            "Tokens per second: 98858",
        ),
        input_len=None,
        output_len=98858.0 / 363.895,
        batch=2048,
        note="Config: 'BlackwellOfflineGPUBaseConfig: precision = 'fp4' ... 'kv_cache_dtype': 'fp8''; B200 "
        "'gpu_batch_size = {'llama2-70b': 2048}', pipeline parallel 2, modelled as one-GPU replicas. "
        + _MLPERF_OUTPUT
        + " "
        + _NVFP4_NOTE,
    ),
    ServingRun(
        key="mlperf41-mi300x8-llama2-70b",
        source="MLPerf Inference v4.1, AMD",
        system="8 x MI300X (2 x EPYC 9374F), vLLM",
        chip_key="mi300x",
        n_chips=8,
        tensor_parallel=1,
        model_key="llama-2-70b",
        outside_model=_OPENORCA,
        precision="FP8 weights, activations and KV cache",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
            _V41,
            23514.8,
            "Tokens per second: 23514.8",
        ),
        input_len=None,
        output_len=23514.8 / 80.15,
        note="Precision: '--quant_scheme w_fp8_a_fp8_o_fp8' and FP8 KV scales (closed/AMD/code/llama2-70b-99/"
        "README.md). Tensor parallelism not read: modelled as one-GPU replicas, the most generous. " + _MLPERF_OUTPUT,
    ),
    ServingRun(
        key="mlperf41-h100x8-mixtral",
        source="MLPerf Inference v4.1, NVIDIA",
        system="DGX H100 (8 x H100-SXM)",
        chip_key="h100-sxm",
        n_chips=8,
        tensor_parallel=1,
        model_key="mixtral-8x7b",
        precision="FP8",
        **_FP8,
        scenario="Offline",
        tokens_per_s=_mlperf(
            "closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/mixtral-8x7b/Offline/performance/"
            "run_1/mlperf_log_summary.txt",
            _V41,
            52415.9,
            "Tokens per second: 52415.9",
        ),
        input_len=None,
        output_len=52415.9 / 359.173,
        batch=896,
        note="Config: use_fp8 = True, tensor parallelism 1, gpu_batch_size 896 (NVIDIA's file as shipped in "
        "closed/GigaComputing/configs/mixtral-8x7b/Offline/__init__.py); KV dtype not stated, fp8 assumed. "
        "Dataset: OpenOrca, GSM8K and MBXP, 5,000 samples each; reference mean output 144.84 tokens; mean "
        "prompt not stated.",
    ),
)
"""The closed-division Offline runs, each as its submitter's log prints it."""
