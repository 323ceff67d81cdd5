"""Training runs from Google's MaxText recipes on TPU v6e (Trillium), as AI-Hypercomputer/tpu-recipes' READMEs
print them. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
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


RUNS: tuple[TrainingRun, ...] = tuple(_maxtext_run(*row) for row in _MAXTEXT_ROWS)
