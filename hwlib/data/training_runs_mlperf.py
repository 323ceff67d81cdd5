"""Training runs from MLPerf Training v4.0's GPT-3 175B: NVIDIA's on H100 (NeMo) and Google's on TPU v5p
(MaxText), read in mlcommons/training_results_v4.0. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL

# --- MLPerf Training v4.0, GPT-3 175B (mlcommons/training_results_v4.0, commit 62f111b7) ---------------------------

_MLPERF_NVIDIA = cite(
    "mlcommons/training_results_v4.0 (commit 62f111b7), NVIDIA/benchmarks/gpt3/implementations/nemo configs and "
    "NVIDIA/results/*/gpt3/result_0.txt"
)
_MLPERF_GOOGLE = cite(
    "mlcommons/training_results_v4.0 (commit 62f111b7), Google/benchmarks/gpt3/implementations/maxtext/*.sh and "
    "Google/results/cloud-tpu-*/gpt3/result_0.txt"
)


def _block_rate(tokens: int, start_ms: int, stop_ms: int, chips: int) -> float:
    """Tokens per second per chip over one MLPerf block: its epoch_count tokens between block_start and block_stop."""
    return tokens / ((stop_ms - start_ms) / 1e3) / chips


# Google's v5p-12288 run (6144 chips, 'ici_data_parallelism=16 ici_fsdp_parallelism=48 ici_tensor_parallelism=8',
# 343 tokens/s per chip [derived]) is left out: hwlib's placement cannot tile an fsdp group of 48 chips at stride 8
# in the (16, 16, 24) torus it models for 6144 v5p chips, and the run's split over slices is not stated.
RUNS: tuple[TrainingRun, ...] = (
    TrainingRun(
        key="mlperf40-nvidia-gpt3-512",
        source="MLPerf Training v4.0, NVIDIA",
        model=_MODEL["gpt-3-175b"],
        cluster_key="hgx-h100-ndr",
        mesh={"tp": 4, "pp": 8, "dp": 16},
        global_batch_sequences=2304,
        seq_len=2048,
        recompute="none",
        dtype="fp8",
        metric="tokens_per_s_per_chip",
        measured=_MLPERF_NVIDIA(
            _block_rate(51904512, 1715043403579, 1715043523545, 512),
            "tokens/s",
            '"time_ms": 1715043403579, ... "key": "block_start", ... "epoch_count": 51904512 -> '
            '"time_ms": 1715043523545, ... "key": "block_stop"',
            "eos_n64_ngc24.04_nemo/gpt3/result_0.txt. [derived] 51,904,512 tokens (11 steps of 2304 x 2048) in "
            "119.966 s over 512 GPUs: 845 tokens/s per GPU.",
        ),
        note="64 DGX H100 ('NVIDIA H100-SXM5-80GB', '8x ConnectX-7 IB NDR 400Gb/s'); "
        "config_DGXH100_64x8x128x4x8_mbs2.sh: 'TENSOR_MODEL_PARALLEL=4', 'PIPELINE_MODEL_PARALLEL=8', "
        "'MICRO_BATCH_SIZE=2', 'INTERLEAVED_PIPELINE=4', config_fp8.sh; the log's 'global_batch_size' 2304 "
        "(the config's default MINIBS=128 was overridden) and 'max_sequence_length' 2048. Recomputation not read: "
        "none, the least. MLPerf's GPT-3 is the 175B model; the catalogue's shape is used.",
        micro_batch_sequences=2,
        interleave=4,
    ),
    TrainingRun(
        key="mlperf40-nvidia-gpt3-10752",
        source="MLPerf Training v4.0, NVIDIA",
        model=_MODEL["gpt-3-175b"],
        cluster_key="hgx-h100-ndr",
        mesh={"tp": 4, "pp": 6, "dp": 448},
        global_batch_sequences=2688,
        seq_len=2048,
        recompute="none",
        dtype="fp8",
        metric="tokens_per_s_per_chip",
        measured=_MLPERF_NVIDIA(
            _block_rate(55050240, 1714681273993, 1714681283196, 10752),
            "tokens/s",
            '"time_ms": 1714681273993, ... "block_start", ... "epoch_count": 55050240 -> '
            '"time_ms": 1714681283196, ... "block_stop"',
            "eos-dfw_n1344_ngc24.04_nemo/gpt3/result_0.txt ('1344xNVIDIA DGX H100'). [derived] 55,050,240 tokens "
            "(10 steps of 2688 x 2048) in 9.203 s over 10,752 GPUs: 556 tokens/s per GPU.",
        ),
        note="1,344 DGX H100 nodes; config_DGXH100_1344x8x6x4x6_mbs1_cg.sh: 'TP:=4', 'PP:=6', "
        "'MICRO_BATCH_SIZE=1', 'INTERLEAVED_PIPELINE=8', 'LAYER_CUDA_GRAPH=1', FP8; the log's 'global_batch_size' "
        "2688, 'max_sequence_length' 2048; dp 448 [derived]. Recomputation not read: none, the least.",
        micro_batch_sequences=1,
        interleave=8,
    ),
    TrainingRun(
        key="mlperf40-google-v5p1024-gpt3",
        source="MLPerf Training v4.0, Google",
        model=_MODEL["gpt-3-175b"],
        cluster_key="tpu-v5p",
        mesh={"fsdp": 64, "tp": 8},
        global_batch_sequences=2048,
        seq_len=2048,
        recompute="full",
        dtype="int8",
        metric="tokens_per_s_per_chip",
        measured=_MLPERF_GOOGLE(
            _block_rate(50331648, 1709184112964, 1709184398702, 512),
            "tokens/s",
            '"time_ms": 1709184112964, ... "block_start", ... "epoch_count": 50331648 -> '
            '"time_ms": 1709184398702, ... "block_stop"',
            "cloud-tpu-v5p-1024-maxtext/gpt3/result_0.txt. [derived] 50,331,648 tokens (12 steps of 2048 x 2048) "
            "in 285.738 s over 512 chips: 344 tokens/s per chip. eval_accuracy is stamped at block_stop's "
            "millisecond, so the block probably includes the eval pass (the rate is a lower bound).",
        ),
        note="v5p-1024 = 512 chips; v5p-1024.sh (maxtext f586e43f): 'per_device_batch_size=4', "
        "'ici_data_parallelism=1 ici_fsdp_parallelism=64 ici_tensor_parallelism=8', 'remat_policy=full', "
        "'attention=flash', 'quantization=int8' (int8 training: the bound takes v5p's int8 peak); the log's "
        "'global_batch_size' 2048, 'max_sequence_length' 2048.",
        micro_batch_sequences=4,
        outside_model="int8 training (quantization=int8, AQT): which matmuls run in int8 and what quantizing costs are "
        "not modelled, and the bound prices every matmul at v5p's int8 peak",
    ),
)
