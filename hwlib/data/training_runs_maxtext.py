"""Training runs from Google's MaxText: its recipes on TPU v6e (Trillium), as AI-Hypercomputer/tpu-recipes' READMEs
print them, and its 2023 Multislice table on 1 to 32 TPU v5e slices of 256 chips. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import ModelShape, TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL

# --- MaxText on TPU v6e (Trillium): AI-Hypercomputer/tpu-recipes READMEs -------------------------------------------


def _tpu_recipe(path: str, commit: str) -> object:
    return cite(f"AI-Hypercomputer/tpu-recipes, training/trillium/{path}/README.md (commit {commit[:8]})")


_OFFLOAD_ALL = "'remat_policy': 'custom' with decoder_layer_input, out_proj and query/key/value_proj 'offload'"
_OFFLOAD_ATTN = "'remat_policy': 'custom' with decoder_layer_input and query/key/value_proj 'offload'"
# (key, model, path, commit, chips, per_device_batch_size, sequence, remat, the measured log line)
_MAXTEXT_ROWS = (
    (
        "maxtext-v6e256-llama31-8b",
        "llama-3-8b",
        "Llama3.1-8B-MaxText/v6e-256",
        "a9e09290174425595a0ef6ec5f765d5f04360423",
        256,
        4,
        8192,
        _OFFLOAD_ALL,
        "completed step: 14, seconds: 4.546, TFLOP/s/device: 417.397, Tokens/s/device: 7207.336, "
        "total_weights: 8388608, loss: 10.131",
    ),
    (
        "maxtext-v6e8-llama31-8b",
        "llama-3-8b",
        "Llama3.1-8B-MaxText/v6e-8",
        "10ca5b92b479825ce36305c06e05aefdcb90541f",
        8,
        3,
        8192,
        _OFFLOAD_ALL,
        "completed step: 14, seconds: 3.443, TFLOP/s/device: 413.433, Tokens/s/device: 7138.890, "
        "total_weights: 196608, loss: 2.136",
    ),
    (
        "maxtext-v6e16-llama31-8b",
        "llama-3-8b",
        "Llama3.1-8B-MaxText/v6e-16",
        "43e52ff572cdb3c71be1c4bae4494aa64f12f5b7",
        16,
        3,
        8192,
        _OFFLOAD_ALL,
        "completed step: 14, seconds: 3.393, TFLOP/s/device: 419.485, Tokens/s/device: 7243.378, "
        "total_weights: 393216, loss: 3.974",
    ),
    (
        "maxtext-v6e32-llama31-8b",
        "llama-3-8b",
        "Llama3.1-8B-MaxText/v6e-32",
        "43e52ff572cdb3c71be1c4bae4494aa64f12f5b7",
        32,
        3,
        8192,
        _OFFLOAD_ALL,
        "completed step: 14, seconds: 3.495, TFLOP/s/device: 407.225, Tokens/s/device: 7031.689, "
        "total_weights: 786432, loss: 5.864",
    ),
    (
        "maxtext-v6e32-llama31-70b",
        "llama-3-70b",
        "Llama3.1-70B-MaxText/v6e-32",
        "3596002ad03c04ae20d5f04c711e8a1d2557b7f8",
        32,
        2,
        8192,
        _OFFLOAD_ATTN,
        "completed step: 34, seconds: 17.790, TFLOP/s/device: 443.385, Tokens/s/device: 920.965, "
        "total_weights: 524288, loss: 11.457",
    ),
    (
        "maxtext-v6e64-llama31-70b",
        "llama-3-70b",
        "Llama3.1-70B-MaxText/v6e-64",
        "3596002ad03c04ae20d5f04c711e8a1d2557b7f8",
        64,
        2,
        8192,
        _OFFLOAD_ATTN,
        "completed step: 14, seconds: 18.688, TFLOP/s/device: 422.091, Tokens/s/device: 876.736, "
        "total_weights: 1048576, loss: 0.865",
    ),
    (
        "maxtext-v6e128-llama31-70b",
        "llama-3-70b",
        "Llama3.1-70B-MaxText/v6e-128",
        "3596002ad03c04ae20d5f04c711e8a1d2557b7f8",
        128,
        4,
        8192,
        _OFFLOAD_ATTN,
        "completed step: 14, seconds: 34.786, TFLOP/s/device: 453.500, Tokens/s/device: 941.976, "
        "total_weights: 4194304, loss: 4.174",
    ),
    (
        "maxtext-v6e256-llama31-70b",
        "llama-3-70b",
        "Llama3.1-70B-MaxText/v6e-256",
        "3596002ad03c04ae20d5f04c711e8a1d2557b7f8",
        256,
        5,
        8192,
        _OFFLOAD_ATTN,
        "completed step: 14, seconds: 42.656, TFLOP/s/device: 462.297, Tokens/s/device: 960.248, "
        "total_weights: 10485760, loss: 6.658",
    ),
    (
        "maxtext-v6e256-llama2-70b",
        "llama-2-70b",
        "Llama2-70B-MaxText",
        "9e458c71883a862cb3ba0cd466a223b8a9cba426",
        256,
        2,
        4096,
        "'remat_policy': 'qkv_proj_offloaded'",
        "completed step: 16, seconds: 9.052, TFLOP/s/device: 402.274, Tokens/s/device: 905.021, "
        "total_weights: 2097152, loss: 1.104",
    ),
    (
        "maxtext-v6e8-mistral-7b",
        "mistral-7b",
        "Mistral-7B-MaxText",
        "7f2f5e62e140401c1c2acf56dbc21cecf80512bd",
        8,
        6,
        8192,
        _OFFLOAD_ALL,
        "completed step: 6, seconds: 6.320, TFLOP/s/device: 431.981, Tokens/s/device: 7776.813, "
        "total_weights: 393216, loss: 7.378",
    ),
    (
        "maxtext-v6e256-gpt3-175b",
        "gpt-3-175b",
        "GPT3-175B-MaxText/bf16",
        "c855fe6b669fb691ea98ca8ff7b2ea81d3d27f38",
        256,
        3,
        2048,
        "'remat_policy': 'full'",
        "completed step: 15, seconds: 17.182, TFLOP/s/device: 384.891, Tokens/s/device: 357.580, "
        "total_weights: 1572864, loss: 388.622",
    ),
)
_MAXTEXT_EXTRA = {
    "maxtext-v6e256-llama2-70b": " The printed config says 'per_device_batch_size': 3, but total_weights 2097152 = "
    "256 x 2 x 4096 [derived]: 2 sequences per chip (GBS 512) are used, as the log line implies; 'ici_fsdp_parallelism'"
    " 1 with 'ici_fsdp_transpose_parallelism' -1 (FSDP over the slice, transposed); SparseCore offload of all-reduce.",
    "maxtext-v6e8-mistral-7b": " Mistral 7B's sliding-window attention is not modelled (full causal attention).",
    "maxtext-v6e256-gpt3-175b": " max_target_length not printed: 1572864 / (256 x 3) = 2048 [derived]; model_name "
    "gpt-3-175b-bf16.",
}


def _maxtext_run(key, model_key, path, commit, chips, pdbs, seq, remat, line) -> TrainingRun:
    tokens = float(line.split("Tokens/s/device: ")[1].split(",")[0])
    weights = int(line.split("total_weights: ")[1].split(",")[0])
    if weights != chips * pdbs * seq:  # total_weights: the global batch's non-padding tokens [derived]
        raise ValueError(f"{key}: total_weights {weights} is not chips x per-device batch x sequence")
    offload = "offload" in remat
    return TrainingRun(
        key=key,
        source="MaxText, tpu-recipes v6e",
        model=_MODEL[model_key],
        cluster_key="tpu-v6e",
        mesh={"fsdp": chips},
        global_batch_sequences=chips * pdbs,
        seq_len=seq,
        recompute="full",
        dtype="bf16",
        metric="tokens_per_s_per_chip",
        measured=_tpu_recipe(path, commit)(tokens, "tokens/s", line, "Tokens/s/device of the printed log line."),
        note=f"v6e-{chips}, one slice; FSDP over the slice"
        + ("" if key == "maxtext-v6e256-llama2-70b" else " ('ici_fsdp_parallelism': -1)")
        + "; TP/PP/CP 1; "
        f"{pdbs} sequences per chip [derived from total_weights]; bf16; synthetic data; flash (splash) attention; "
        f"{remat}"
        + (
            ": MaxText's 'custom' policy (jax.checkpoint_policies.save_and_offload_only_these_names) keeps or "
            "offloads to host memory only the tensors it names and recomputes the rest, the MLP's and attention's "
            "among them; recorded as full recomputation, which also counts the named projections' forward (about a "
            "fifth of a Llama layer's weight FLOPs) that the run offloads instead."
            if offload
            else "."
        )
        + (" Llama 3.1 shapes as the catalogue's Llama 3." if "llama31" in key else "")
        + _MAXTEXT_EXTRA.get(key, ""),
        micro_batch_sequences=pdbs,
    )


# --- MaxText's Multislice table on TPU v5e (2023) ----------------------------------------------------------------

_V5E_TABLE = cite(
    "AI-Hypercomputer/maxtext, README.md 'Runtime Performance Results', 'TPU v5e' (commit 75a43060; the table as "
    "commit e47fa1b5 left it on 2023-10-31, with the run scripts MaxText/configs/largest_job/{16b,32b,64b,128b}.sh "
    "and MaxText/configs/base.yml at e47fa1b5)",
    "2026-12-06",
)
_V5E_HEADER = (
    "| Hardware | 16B TFLOP/sec/chip | 16B MFU | 32B TFLOP/sec/chip | 32B MFU | 64B TFLOP/sec/chip | 64B MFU | "
    "128B TFLOP/sec/chip | 128B MFU |"
)
_V5E_ROWS = (
    "| 1x v5e-256 | 120 | 61.10% | 132 | 66.86% | 118 | 59.90% | 110 | 56.06% |",
    "| 2x v5e-256 | 117 | 59.37% | 128 | 64.81% | 112 | 56.66% | 110 | 55.82% |",
    "| 4x v5e-256 | 117 | 59.14% | 126 | 64.10% | 110 | 55.85% | 108 | 54.93% |",
    "| 8x v5e-256 | 115 | 58.27% | 125 | 63.67% | 108 | 54.96% | 104 | 52.93% |",
    "| 16x v5e-256 | 111 | 56.56% | 123 | 62.26% | 105 | 53.29% | 100 | 50.86% |",
    "| 32x v5e-256 | 108 | 54.65% | 119 | 60.40% | 99 | 50.18% | 91 | 46.25% |",
)
_V5E_BASE = (
    "base.yml at e47fa1b5: 'base_emb_dim: 2560', 'base_num_heads: 8', 'base_mlp_dim: 8192', "
    "'base_num_decoder_layers: 16', 'head_dim: 256', 'mlp_activations: [\"relu\"]', 'logits_via_embedding: True', "
    "'vocab_size: 32_768'; pyconfig.get_individual_scales multiplies d, heads, the MLP and the layers by 2^k "
    "(global_parameter_scale {scale}: x{emb}, x{heads}, x{heads}, x{layers}); layers.py: one RMS pre-norm, attention "
    "and a ReLU MLP in parallel ('next_layer_addition = mlp_lnx + attention_lnx'), no biases, tied embeddings, T5 "
    "relative-position biases of (heads, 32) per layer (left out: {bias:,} parameters)"
)


def _maxtext_2023(size: str, scale: int, emb: int, heads: int, layers: int) -> ModelShape:
    d, n_heads, n_layers = 2560 * emb, 8 * heads, 16 * layers
    return ModelShape(
        key=f"maxtext-2023-{size}",
        name=f"MaxText {size.upper()} (2023)",
        n_layers=n_layers,
        d_model=d,
        n_heads=n_heads,
        n_kv_heads=n_heads,
        head_dim=256,
        d_ff=8192 * heads,
        mlp="gelu",
        vocab=32768,
        tied_embeddings=True,
        norms_per_layer=1,
        parallel_block=True,
        causal=False,
        source=_V5E_BASE.format(scale=scale, emb=emb, heads=heads, layers=layers, bias=32 * n_heads * n_layers),
        note="The model MaxText's global_parameter_scale built in October 2023 (its defaults changed in 2024): a "
        "parallel block, a ReLU MLP (priced as the plain two-matrix MLP, 'gelu'), multi-head attention with 256-wide "
        "heads. causal=False: the flash kernel of that code ran 'causal = False', and the table's FLOPs count the "
        "whole score matrix (train.py: 'attention_tflops = 12 * config.num_heads * config.num_decoder_layers * "
        "config.head_dim * config.max_target_length**2').",
    )


_V5E_MODELS = {  # size: (model, per-device batch, remat, ICI mesh within a slice)
    "16b": (_maxtext_2023("16b", 16, 2, 4, 2), 6, {"fsdp": 256}),
    "32b": (_maxtext_2023("32b", 32, 4, 4, 2), 4, {"fsdp": 256}),
    "64b": (_maxtext_2023("64b", 64, 4, 4, 4), 2, {"fsdp": 256}),
    "128b": (_maxtext_2023("128b", 128, 4, 8, 4), 1, {"fsdp": 16, "tp": 16}),
}


def _v5e_run(row: str, column: int, size: str) -> TrainingRun:
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    slices = int(cells[0].split("x")[0])
    model, per_device, ici = _V5E_MODELS[size]
    mfu = cells[2 * column + 2]
    chips = 256 * slices
    return TrainingRun(
        key=f"maxtext-v5e-{slices}x256-{size}",
        source="MaxText, v5e Multislice table (2023)",
        model=model,
        cluster_key="tpu-v5e-multislice",
        mesh={**ici, "dp": slices},
        global_batch_sequences=per_device * chips,
        seq_len=2048,
        recompute="full",
        dtype="bf16",
        metric="mfu",
        causal=False,
        measured=_V5E_TABLE(
            float(mfu.rstrip("%")) / 100,
            "1",
            f"{_V5E_HEADER} {row}",
            f"{size.upper()} MFU on {slices} x v5e-256. The README does not say which peak; every cell's TFLOP/s "
            "over its MFU is 196 to 198, v5e's 197 TFLOP/s BF16 [derived]. bf16 compute ('dtype: \"bfloat16\"', "
            "'int8_training: False'), fp32 parameters.",
        ),
        note=f"{chips:,} chips in {slices} slice{'s' if slices > 1 else ''} of 256; "
        f"'per_device_batch_size={per_device}', 'max_target_length=2048', 'remat_policy=full', flash attention, "
        "synthetic data, each data-parallel rank's whole batch at once (no gradient accumulation); within a slice "
        + ("'ici_fsdp_parallelism=16 ici_tensor_parallelism=16'" if "tp" in ici else "FSDP over its 256 chips")
        + " ('ici_fsdp_parallelism: -1'), across slices data parallelism over the DCN ('dcn_data_parallelism: -1').",
    )


RUNS: tuple[TrainingRun, ...] = tuple(_maxtext_run(*row) for row in _MAXTEXT_ROWS) + tuple(
    _v5e_run(row, column, size) for column, size in enumerate(_V5E_MODELS) for row in _V5E_ROWS
)
