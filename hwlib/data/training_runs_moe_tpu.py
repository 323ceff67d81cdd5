"""Mixture-of-experts training runs on TPUs from Google's MaxText, as AI-Hypercomputer/tpu-recipes' READMEs print them:
Mixtral 8x7B and 8x22B on a v6e-256, Llama 4 Scout and Maverick and DeepSeek-V3 on v5p, DeepSeek-V3 and Qwen3-235B-A22B
on TPU7x (Ironwood). Each v6e and v5p run carries how its experts run (``ExpertKernel``): Mixtral's as capacity-padded
einsums, the others' as megablox grouped matmuls at MaxText's tiles. The runs that route each token to 8 experts, and
Maverick's tensor-parallel experts, depend on costs the step does not model: they are shown and kept out of the fit
(``outside_model``). Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from hwlib.data.records import ExpertKernel, TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL

_EIGHT_COPIES = (
    "an MoE on a TPU routing each token to 8 of {experts} experts through a dropless sort-based grouped matmul: "
    "it stays slower than its forecast by more than any run in the fit (with the grouped matmul's tiles priced on "
    "v5p as well), and no published measurement says what takes the time (candidates: the sort and gathers of 8 "
    "copies of each token; the gathers of the fp32 weights, 'weight_dtype: float32')"
)
_TENSOR_SPLIT_EXPERTS = (
    "Llama 4 Maverick on v5p with tensor parallelism inside MaxText's sparse matmul: each of the 4 tensor-parallel "
    "chips sorts and permutes all 16 sequences' tokens, and the step needs more HBM than a v5p has without the "
    "recipe's host offload ('decoder_layer_input: offload'), neither of which the step models"
)
_DROPPED = (
    " Token dropping at capacity factor 1.25 with einsum dispatch ('megablox: False', 'capacity_factor: 1.25'): each "
    "expert computes 1.25 times its share of tokens, and two einsums move them in and out: the forecast prices both, "
    "the bound does not (it stays a bound)."
)
_CUSTOM = (
    "MaxText's 'custom' remat policy offloads the named tensors to host memory and recomputes the rest (recorded as "
    "full recomputation, as for the dense MaxText rows)"
)
_IRONWOOD = (
    "Per TPU7x chip, two JAX devices each (the recipes' per_device_batch_size is half a chip's sequences); FSDP over "
    "the slice"
)


_CAPACITY = ExpertKernel(capacity_factor=1.25)
"""MaxText's einsum dispatch at capacity factor 1.25 ('megablox: False', 'sparse_matmul: False')."""
_MEGABLOX = ExpertKernel(tile=(512, 1024, 1024))
"""Megablox's grouped matmul at MaxText's default tiling, (tile_batch_seq, tile_activation_dim, tile_weight_dim) =
(512, 1024, 1024) in MaxText/configs/base.yml at tag tpu-recipes-v0.1.3, as MaxText/layers/moe.py passes it to
``gmm``."""
_MEGABLOX_V5P = ExpertKernel(tile=(512, 1024, 1024))
"""The DeepSeek-V3 v5p recipe's own tiles: 'tile_batch_seq: 512', 'tile_embed_dim: 1024', 'tile_mlp_dim: 1024'
(benchmarks/maxtext_v5p_model_configs.py at MaxText 3eb77db3)."""


def _recipe(path: str, commit: str) -> object:
    return cite(f"AI-Hypercomputer/tpu-recipes, training/{path}/README.md (commit {commit[:8]})", "2026-12-06")


def _log_line(key, model, cluster, path, commit, chips, mesh, per_chip, seq, line, note, experts, outside=""):
    tokens = float(line.split("Tokens/s/device: ")[1].split(",")[0])
    return TrainingRun(
        key=key,
        source="MaxText, tpu-recipes",
        model=_MODEL[model],
        cluster_key=cluster,
        mesh=mesh,
        global_batch_sequences=chips * per_chip,
        seq_len=seq,
        recompute="full",
        dtype="bf16",
        metric="tokens_per_s_per_chip",
        measured=_recipe(path, commit)(tokens, "tokens/s", line, "Tokens/s/device of the printed log line."),
        note=f"{chips} chips, one slice; {per_chip} sequences per chip [derived from total_weights], all of a "
        f"data-parallel rank's in one micro-batch (no gradient accumulation); {_CUSTOM}. {note}",
        micro_batch_sequences=per_chip * mesh.get("tp", 1),
        outside_model=outside,
        experts=experts,
    )


_IRONWOOD_TABLE = cite(
    "AI-Hypercomputer/tpu-recipes, training/ironwood/README.md (the row as set at the commit named), with each "
    "recipe's run_recipe.sh MAXTEXT_ARGS",
    "2026-12-06",
)
_IRONWOOD_HEADER = (
    "| Model ID | Number of chips | GBS | Sequence length | Precision | Step time (seconds) | TFLOPs/sec/chip "
    "| Tokens/sec/chip |"
)
# (key, model, chips, global batch, sequence, dtype, tokens/s per chip, commit that set the row, the recipe's note)
_IRONWOOD_ROWS = (
    ("deepseek-v3", 128, 2048, 4096, "bf16", 2425.75, "216f3e1b", "learned routing replaced by random routing"),
    ("deepseek-v3", 256, 4096, 4096, "bf16", 2446.25, "216f3e1b", "random routing; 2-D FSDP"),
    ("deepseek-v3", 256, 4096, 4096, "fp8", 2968.49, "216f3e1b", "learned routing; 'quantization=fp8_full'"),
    ("qwen3-235b-a22b", 256, 8192, 4096, "bf16", 4245.89, "1302a862", "random routing"),
    ("qwen3-235b-a22b", 256, 8192, 4096, "fp8", 4736.72, "5ccfce2b", "random routing; 'quantization=fp8_full'"),
)


def _ironwood(model, chips, gbs, seq, dtype, tokens, commit, detail) -> TrainingRun:
    return TrainingRun(
        key=f"maxtext-tpu7x{chips}-{model}-{dtype}",
        source="MaxText, tpu-recipes",
        model=_MODEL[model],
        cluster_key="tpu-7x",
        mesh={"fsdp": chips},
        global_batch_sequences=gbs,
        seq_len=seq,
        recompute="full",
        dtype=dtype,
        metric="tokens_per_s_per_chip",
        measured=_IRONWOOD_TABLE(
            tokens,
            "tokens/s",
            f"{model}, {chips} chips, GBS {gbs}, {seq}, {dtype}: {tokens:,} Tokens/sec/chip",
            f"Row set at commit {commit}. Header: {_IRONWOOD_HEADER}",
        ),
        note=f"{_IRONWOOD}; dropless megablox (tokamax) grouped matmuls; {detail}; {_CUSTOM}.",
        micro_batch_sequences=gbs // chips,
        outside_model=_EIGHT_COPIES.format(experts=_MODEL[model].n_experts),
    )


RUNS: tuple[TrainingRun, ...] = (
    _log_line(
        "maxtext-v6e256-mixtral-8x7b",
        "mixtral-8x7b",
        "tpu-v6e",
        "trillium/Mixtral-8x7B-MaxText",
        "7e88b6d146a00901446f8a11244d49a471d8242b",
        256,
        {"fsdp": 256},
        12,
        4096,
        "completed step: 11, seconds: 13.484, TFLOP/s/device: 302.311, Tokens/s/device: 3645.203, "
        "total_weights: 12582912, loss: 10.546",
        "'mixtral_8x7b_dropped' at MaxText tag tpu-recipes-v0.1.2: 'per_device_batch_size: 12', "
        "'ici_fsdp_parallelism: -1', 'max_target_length: 4096', bf16 activations, fp32 weights." + _DROPPED,
        _CAPACITY,
    ),
    _log_line(
        "maxtext-v6e256-mixtral-8x22b",
        "mixtral-8x22b",
        "tpu-v6e",
        "trillium/Mixtral-8x22B-MaxText",
        "c78c38e16b0e1eae214a873a3b5fba953ad80a7a",
        256,
        {"fsdp": 256, "ep": 4},
        8,
        4096,
        "completed step: 9, seconds: 24.706, TFLOP/s/device: 332.463, Tokens/s/device: 1326.307, "
        "total_weights: 8388608, loss: 0.045",
        "'mixtral_8x22b_dropped' (MaxText 449b4fe5, the commit that added it the day of the recipe; the README's "
        "261a8be0 lacks it): 'ici_fsdp_parallelism: 64', 'ici_expert_parallelism: 4' (modelled as FSDP 256 with the "
        "experts in 4 groups), bf16 weights." + _DROPPED,
        _CAPACITY,
    ),
    _log_line(
        "maxtext-v5p256-llama4-scout",
        "llama-4-scout",
        "tpu-v5p",
        "v5p/Llama4-Scout-17B-16E-Maxtext",
        "c51f658196068d5bb03f1201ca00b92c03aec73e",
        128,
        {"fsdp": 128},
        8,
        8192,
        "completed step: 12, seconds: 31.494, TFLOP/s/device: 251.760, Tokens/s/device: 2080.892, "
        "total_weights: 8388608, loss: 10.929",
        "v5p-256 = 128 chips; 'llama4_scout_dropless_v5p_256': 'per_device_batch_size: 8', "
        "'max_target_length: 8192', 'ici_fsdp_parallelism: -1', 'megablox: True', 'sparse_matmul: True'; dropless.",
        _MEGABLOX,
    ),
    _log_line(
        "maxtext-v5p256-llama4-maverick",
        "llama-4-maverick",
        "tpu-v5p",
        "v5p/Llama4-Maverick-17B-128E-Maxtext",
        "c51f658196068d5bb03f1201ca00b92c03aec73e",
        128,
        {"fsdp": 32, "tp": 4},
        4,
        8192,
        "completed step: 12, seconds: 24.792, TFLOP/s/device: 160.005, Tokens/s/device: 1321.725, "
        "total_weights: 4194304, loss: 10.034",
        "v5p-256 = 128 chips; 'llama4_maverick_dropless_v5p_256': 'per_device_batch_size: 4', "
        "'ici_fsdp_parallelism: 32', 'ici_tensor_parallelism: 4', 'megablox: True'; dropless.",
        _MEGABLOX,
        _TENSOR_SPLIT_EXPERTS,
    ),
    _log_line(
        "maxtext-v5p1024-deepseek-v3",
        "deepseek-v3",
        "tpu-v5p",
        "v5p/DeepSeek3-671B-MaxText",
        "7e88b6d146a00901446f8a11244d49a471d8242b",
        512,
        {"fsdp": 512},
        6,
        8192,
        "completed step: 11, seconds: 90.668, TFLOP/s/device: 152.415, Tokens/s/device: 542.108, "
        "total_weights: 25165824, loss: 10.989",
        "v5p-1024 = 512 chips ('512 v5p chips'); 'deepseek3_671b_v5p_1024' at MaxText 3eb77db3: "
        "'ici_fsdp_parallelism: -1', 'per_device_batch_size: 6', 'max_target_length: 8192', 'megablox: True'; "
        "dropless, learned routing.",
        _MEGABLOX_V5P,
        _EIGHT_COPIES.format(experts=256),
    ),
    *(_ironwood(*row) for row in _IRONWOOD_ROWS),
)
"""MaxText's MoE runs on TPUs, shown beside the forecast and outside its fit."""
