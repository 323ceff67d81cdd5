"""Training runs from MosaicML's llm-foundry MPT benchmarks on H100 and A100, with the MPT shapes its pretraining
configs state. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.efficiencies import ATTENTION_BEFORE_FLASH_ATTENTION_2
from hwlib.data.records import ModelShape, TrainingRun, cite
from hwlib.data.training_rows import gpt_style as _gpt_style

# --- MosaicML llm-foundry MPT benchmarks ---------------------------------------------------------------------------

_FOUNDRY = cite(
    "mosaicml/llm-foundry, scripts/train/benchmarking/README.md (commit 061f2c7c), "
    "https://github.com/mosaicml/llm-foundry/tree/main/scripts/train/benchmarking"
)
# size: (d_model, n_layers, n_heads) from scripts/train/yamls/pretrain/mpt-<size>.yaml; every one has
# 'expansion_ratio: 4' and 'vocab_size: 50368'.
_MPT_SHAPES = {
    "1b": (2048, 24, 16),
    "3b": (2560, 32, 20),
    "7b": (4096, 32, 32),
    "13b": (5120, 40, 40),
    "30b": (7168, 48, 56),
    "70b": (8192, 80, 64),
}


def _mpt(size: str, seq: int, params: int) -> ModelShape:
    d, layers, heads = _MPT_SHAPES[size]
    return _gpt_style(
        key=f"mpt-{size}" + ("" if seq == 2048 else f"-{seq // 1024}k"),
        name=f"MPT-{size.upper()}" + ("" if seq == 2048 else f" ({seq:,} positions)"),
        layers=layers,
        d=d,
        heads=heads,
        vocab=50368,
        positions=seq,
        n_params=_FOUNDRY(float(params), "parameters", str(params), "The NumParams column."),
        source=f"mosaicml/llm-foundry, scripts/train/yamls/pretrain/mpt-{size}.yaml: 'd_model: {d}', "
        f"'n_layers: {layers}', 'n_heads: {heads}', 'expansion_ratio: 4', 'vocab_size: 50368' (read at other commits "
        "than the benchmark README's)",
        note="params() equals the README's NumParams exactly with learned positions of the sequence length, biases "
        "on every linear layer and LayerNorm biases (the benchmark configs' settings, which the README does not "
        "print; the yamls read set none of them, so MPTConfig's defaults).",
    )


_MPT_CLUSTER = {"h100_80gb": "hgx-h100-ndr", "a100_80gb": "hgx-a100-hdr", "a100_40gb": "hgx-a100-40gb-hdr"}
_MPT_NETWORK = {
    "h100_80gb": "H100 80 GB (interconnect not stated: modelled as the NDR cluster)",
    "a100_80gb": "'A100 80GB with 1600 Gbps node-node interconnect (RoCE)' (modelled as 8 HDR NICs, the same 1600 "
    "Gb/s)",
    "a100_40gb": "'A100 40GB with 1600 Gbps node-node interconnect (RoCE)' (modelled as 8 HDR NICs, the same 1600 "
    "Gb/s)",
}
_MPT_CHIP = {"h100_80gb": "h100-sxm", "a100_80gb": "a100-80gb", "a100_40gb": "a100-40gb"}
_MPT_SOFTWARE = (
    "Attention kernels older than FlashAttention-2: the sweep that produced the tables runs "
    "'IMAGE=\"mosaicml/pytorch:2.0.1_cu118-python3.10-ubuntu20.04\"' (scripts/train/benchmarking/sweep.sh, commit "
    "2542a2e26dd7a958d0a1d4deb3712e956503ecdd) with submit_benchmarks.py's \"parser.add_argument('--attn_impl', "
    "type=str, default='triton')\" (commit 12a631913c786ac70e33e42047d2eae6f443ee69): PyTorch 2.0.1 and CUDA 11.8, "
    "before FlashAttention-2 (July 2023) and any Hopper-specific kernel."
)
_MPT_PRECISION = {"amp_bf16": "bf16", "bf16": "bf16", "amp_fp8": "fp8"}
# (key, the row as printed: Model | SeqLen (T) | # GPUs | GPU | MFU | HFU | Model TFLOP | MicroBatchSize | GradAccum |
# GlobalBatchSize | Throughput (S/s) | Throughput (T/s) | Throughput (T/s/GPU) | GlobalBatchSize (T) | Precision |
# MP Mode | Sharding Strategy | Activation Checkpointing | Activation CPUOffload | NumParams)
_MPT_ROWS = (
    (
        "mpt-h100-70b-64",
        "|  70b | 2048 | 64 | h100_80gb | 42.57 | 56.76 |  4.212583E+14 | 8 | 4 | 2048 | 32 | 66523 | 1039 | 4194304 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | True | False | 64862437376 |",
    ),
    (
        "mpt-h100-70b-32",
        "|  70b | 2048 | 32 | h100_80gb | 36.15 | 48.2 |  3.576911E+14 | 2 | 16 | 1024 | 13 | 28242 | 882 | 2097152 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | True | False | 64862437376 |",
    ),
    (
        "mpt-h100-30b-32",
        "|  30b | 2048 | 32 | h100_80gb | 43.92 | 58.57 |  4.346371E+14 | 14 | 3 | 1344 | 36 | 73860 | 2308 | "
        "2752512 | amp_bf16 | DEFAULT | FULL_SHARD | True | False | 29975214080 |",
    ),
    (
        "mpt-h100-30b-8",
        "|  30b | 2048 | 8 | h100_80gb | 38.11 | 50.82 |  3.771361E+14 | 3 | 21 | 504 | 7 | 16022 | 2002 | 1032192 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | True | False | 29975214080 |",
    ),
    (
        "mpt-h100-13b-64",
        "|  13b | 2048 | 64 | h100_80gb | 39.86 | 39.86 |  3.943653E+14 | 2 | 1 | 128 | 150 | 307209 | 4800 | 262144 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | False | False | 12853954560 |",
    ),
    (
        "mpt-h100-13b-8",
        "|  13b | 2048 | 8 | h100_80gb | 39.79 | 39.79 |  3.937055E+14 | 2 | 1 | 16 | 18 | 38336 | 4792 | 32768 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | False | False | 12853954560 |",
    ),
    (
        "mpt-h100-7b-8-2k",
        "|  7b | 2048 | 8 | h100_80gb | 46.44 | 46.44 |  4.595096E+14 | 6 | 1 | 48 | 41 | 85144 | 10643 | 98304 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | False | False | 6658859008 |",
    ),
    (
        "mpt-h100-7b-8-8k",
        "|  7b | 8192 | 8 | h100_80gb | 37.14 | 49.52 |  3.674893E+14 | 8 | 2 | 128 | 6 | 55481 | 6935 | 1048576 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | True | False | 6684024832 |",
    ),
    (
        "mpt-h100-3b-64",
        "|  3b | 2048 | 64 | h100_80gb | 40.8 | 40.8 |  4.037625E+14 | 6 | 3 | 1152 | 703 | 1441663 | 22525 | "
        "2359296 | amp_bf16 | DEFAULT | FULL_SHARD | False | False | 2651837440 |",
    ),
    (
        "mpt-h100-1b-64",
        "|  1b | 2048 | 64 | h100_80gb | 40.85 | 40.85 |  4.042246E+14 | 20 | 1 | 1280 | 1387 | 2841754 | 44402 | "
        "2621440 | amp_bf16 | DEFAULT | FULL_SHARD | False | False | 1315950592 |",
    ),
    (
        "mpt-h100fp8-3b-8",
        "|  3b | 2048 | 8 | h100_80gb | 27.7 | 27.7 |  5.482421E+14 | 10 | 6 | 480 | 119 | 244692 | 30586 | 983040 | "
        "amp_fp8 | DEFAULT | FULL_SHARD | False | False | 2651837440 |",
    ),
    (
        "mpt-a100-70b-64",
        "|  70b | 2048 | 64 | a100_80gb | 53.33 | 71.1 | 1.663896E+16 | 8 | 4 | 2048 | 12 | 26274 | 410 | 4194304 | "
        "bf16 | PURE | FULL_SHARD | True | False | 64862437376 |",
    ),
    (
        "mpt-a100-30b-8",
        "|  30b | 2048 | 8 | a100_80gb | 55.3 | 73.74 |  1.725420E+14 | 3 | 21 | 504 | 3 | 7330 | 916 | 1032192 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | True | False | 29975214080 |",
    ),
    (
        "mpt-a100-13b-8",
        "|  13b | 2048 | 8 | a100_80gb | 59.57 | 59.57 |  1.858556E+14 | 2 | 3 | 48 | 8 | 18097 | 2262 | 98304 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | False | False | 12853954560 |",
    ),
    (
        "mpt-a100-7b-8",
        "|  7b | 2048 | 8 | a100_80gb | 64.23 | 64.23 |  2.003836E+14 | 6 | 2 | 96 | 18 | 37130 | 4641 | 196608 | "
        "amp_bf16 | DEFAULT | FULL_SHARD | False | False | 6658859008 |",
    ),
    (
        "mpt-a10040-70b-128",
        "|  70b | 2048 | 128 | a100_40gb | 48.91 | 65.21 |  1.525992E+16 | 4 | 1 | 512 | 23 | 48194 | 376 | 1048576 | "
        "bf16 | PURE | FULL_SHARD | True | False | 64862437376 |",
    ),
    (
        "mpt-a10040-13b-128",
        "|  13b | 2048 | 128 | a100_40gb | 51.93 | 69.24 |  1.620216E+16 | 16 | 1 | 2048 | 123 | 252444 | 1972 | "
        "4194304 | bf16 | PURE | FULL_SHARD | True | False | 12853954560 |",
    ),
    (
        "mpt-a10040-7b-128",
        "|  7b | 2048 | 128 | a100_40gb | 50.14 | 66.85 |  1.564368E+16 | 18 | 1 | 2304 | 226 | 463749 | 3623 | "
        "4718592 | bf16 | PURE | FULL_SHARD | True | False | 6658859008 |",
    ),
)


def _mpt_run(key: str, row: str) -> TrainingRun:
    cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
    size, seq, gpus, gpu = cells[0], int(cells[1]), int(cells[2]), cells[3]
    micro, accum, batch, per_gpu = int(cells[7]), int(cells[8]), int(cells[9]), float(cells[12])
    precision, checkpointing, params = cells[14], cells[17], int(cells[19])
    if batch != gpus * micro * accum or cells[16] != "FULL_SHARD" or cells[18] != "False":
        raise ValueError(f"{key}: not GPUs x MicroBatchSize x GradAccum, FULL_SHARD, no CPU offload")
    return TrainingRun(
        key=key,
        source="llm-foundry, MPT benchmarks",
        model=_mpt(size, seq, params),
        cluster_key=_MPT_CLUSTER[gpu],
        mesh={"fsdp": gpus},
        global_batch_sequences=batch,
        seq_len=seq,
        recompute="full" if checkpointing == "True" else "none",
        dtype=_MPT_PRECISION[precision],
        metric="tokens_per_s_per_chip",
        measured=_FOUNDRY(per_gpu, "tokens/s", row, "The Throughput (T/s/GPU) column."),
        note=f"{_MPT_NETWORK[gpu]}; 'FULL_SHARD' FSDP over all {gpus} GPUs; micro-batch {micro}, {accum} accumulation "
        f"steps; precision {precision!r}; activation checkpointing {checkpointing} (recorded as "
        f"{'full' if checkpointing == 'True' else 'no'} recomputation), no CPU offload. The attention kernel is "
        f"not stated per row (the yamls use triton or flash). {_MPT_SOFTWARE}",
        micro_batch_sequences=micro,
        attention=ATTENTION_BEFORE_FLASH_ATTENTION_2[_MPT_CHIP[gpu]],
    )


RUNS: tuple[TrainingRun, ...] = tuple(_mpt_run(key, row) for key, row in _MPT_ROWS)
