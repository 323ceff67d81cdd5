"""Constants from the papers and framework documents on fine-tuning and memory savers: LoRA and QLoRA (a frozen
base, low-rank adapters, NF4 and int8 storage), ZeRO-Offload, and FP8 training's scaling.

Each value cites its source (section, equation or file); read 2026-12-06. Used by ``hwlib.training.finetune``,
``hwlib.training.offload`` and ``hwlib.training.fp8``; explained in the chapters :ref:`ch-hbm-budgets` and
:ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import cite

READ = "2026-12-06"

# --- LoRA and QLoRA ---------------------------------------------------------------------------

LORA = (
    "Hu et al., 'LoRA: Low-Rank Adaptation of Large Language Models', ICLR 2022, arXiv:2106.09685, Sec. 4.1 "
    "(h = W_0 x + B A x with B in R^{d x r}, A in R^{r x k}: r (d + k) trained parameters for a d x k matrix; "
    "W_0 frozen, 'does not receive gradient updates') and Sec. 7.1 (adapting W_q and W_v)"
)
QLORA = (
    "Dettmers, Pagnoni, Holtzman and Zettlemoyer, 'QLoRA: Efficient Finetuning of Quantized LLMs', NeurIPS 2023, "
    "arXiv:2305.14314"
)
QLORA_CODE = (
    "artidoro/qlora, qlora.py (commit 00e5ad2a): defaults lora_r=64, double_quant=True, quant_type='nf4', "
    "optim='paged_adamw_32bit', per_device_train_batch_size=1, gradient_checkpointing=True; "
    "'if isinstance(module, LoraLayer): if args.bf16: module = module.to(torch.bfloat16)'; LoRA on every "
    "bnb Linear4bit but lm_head (find_all_linear_names); scripts/finetune_guanaco_65b.sh: '--lora_modules all', "
    "'--source_max_len 16', '--target_max_len 512'"
)
QLORA_DEQUANTIZE = (
    f"{QLORA}, Sec. 3: 'We dequantize the storage data type to the computation data type to perform the forward "
    "and backward pass, but we only compute weight gradients for the LoRA parameters which use 16-bit BrainFloat.'"
)
QLORA_ALL_LINEAR = (
    f"{QLORA}, Sec. 4: 'LoRA on all linear transformer block layers are required to match full finetuning performance'"
)
LLM_INT8 = (
    "Dettmers, Lewis, Belkada and Zettlemoyer, 'LLM.int8(): 8-bit Matrix Multiplication for Transformers at "
    "Scale', NeurIPS 2022, arXiv:2208.07339, Sec. 3.1-3.2 (vector-wise quantization: one normalization constant "
    "per row of the weight matrix)"
)

NF4_BITS_PER_PARAM = cite(f"{QLORA}, Sec. 3 (4-bit NormalFloat, Double Quantization)", READ)(
    4 + 8 / 64 + 32 / (64 * 256),
    "bit/parameter",
    "reduces the memory footprint per parameter from 32/64 = 0.5 bits, to 8/64 + 32/(64 * 256) = 0.127 bits",
    "4 bits per NF4 weight plus its share of the quantization constants: blocks of 64 weights, each block's fp32 "
    "constant quantized again to 8 bits in blocks of 256 with fp32 second-level constants (QLoRA's setting, "
    "double_quant=True in its code). Without double quantization it is 4.5.",
)
"""Bits a QLoRA base stores per weight: NF4 and its double-quantized constants (4.127 bit/parameter)."""

INT8_BITS_PER_PARAM = cite(LLM_INT8, READ)(
    8,
    "bit/parameter",
    "vector-wise quantization with separate normalization constants for each inner product",
    "8 bits per weight; each row of a d_in-wide weight matrix adds one fp32 constant, 32 / d_in bits per weight "
    "(0.004 at d_in = 8192), counted by hwlib.training.finetune.",
)
"""Bits an int8 base stores per weight before its row constants (8 bit/parameter)."""

INT8_ROW_CONSTANT_BITS = cite(LLM_INT8, READ)(
    32,
    "bit",
    "separate normalization constants for each inner product",
    "One fp32 constant per row of the weight matrix (bitsandbytes keeps them as Linear8bitLt's SCB).",
)
"""Bits of the constant each row of an int8 weight matrix carries (fp32)."""

QLORA_RANK = cite(QLORA_CODE, READ)(
    64, "1", "lora_r: int = field(default=64", "The rank of every Guanaco adapter (finetune_guanaco_65b.sh too)."
)
"""LoRA rank of QLoRA's Guanaco runs."""

QLORA_SEQUENCE_TOKENS = cite(QLORA_CODE, READ)(
    16 + 512,
    "tokens",
    "--source_max_len 16 --target_max_len 512",
    "The longest example Guanaco 65B trains on: a prompt of at most 16 tokens and a response of at most 512.",
)
"""The longest sequence of QLoRA's Guanaco 65B run (tokens)."""

# --- ZeRO-Offload ---------------------------------------------------------------------------------

ZERO_OFFLOAD = (
    "Ren et al., 'ZeRO-Offload: Democratizing Billion-Scale Model Training', USENIX ATC 2021, arXiv:2101.06840, "
    "Sec. 4 (the offload strategy: the fp16 gradients go to the CPU, which holds the fp32 parameters and the "
    "optimizer state and runs the update; the updated fp16 parameters come back: 2M bytes each way for M "
    "parameters) and Sec. 5 (the schedule: the gradients' copies overlap the backward pass; one-step delayed "
    "parameter update, DPU, overlaps the CPU's update and the copy back with the next step's passes)"
)
DEEPSPEED_OFFLOAD_CONFIG = (
    "DeepSpeed docs, config-json.md, offload_optimizer's cpu_offload note (PR 2178): 'Performance benefit grows "
    "with gradient accumulation steps (more copying between optimizer steps)', https://www.deepspeed.ai/docs/"
    "config-json/"
)

# --- FP8 training ---------------------------------------------------------------------------------

FP8_FORMATS = (
    "Micikevicius et al., 'FP8 Formats for Deep Learning', arXiv:2209.05433, Sec. 4 (per-tensor scaling factors "
    "chosen from each tensor's maximum magnitude; higher-precision master weights, fp8 GEMM inputs)"
)
TORCHTITAN_FLOAT8 = (
    "pytorch/torchtitan, docs/float8.md: 'Scales are calculated from max(abs) of a high precision tensor'; 'we "
    "cast input and weight into float8 inside forward'; '--float8.enable_fsdp_float8_all_gather: cast "
    "Float8Linear.weight from high precision to float8 before FSDP all-gather so we can communicate in float8 to "
    "save bandwidth'; '--float8.force_recompute_fp8_weight_in_bwd'"
)
TRANSFORMER_ENGINE = (
    "NVIDIA Transformer Engine docs, https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/: "
    "DelayedScaling (the scaling factor from an amax history of earlier iterations, so the cast needs no pass of "
    "its own to find the current amax) and Linear.forward's is_first_microbatch (caching the FP8 weights and their "
    "transposes across the micro-batches of a step)"
)
DEEPSEEK_V3_FP8 = (
    "DeepSeek-AI, 'DeepSeek-V3 Technical Report', arXiv:2412.19437, Sec. 3.3.2: 'for activations, we group and "
    "scale elements on a 1x128 tile basis (i.e., per token per 128 channels); and for weights, we group and scale "
    "elements on a 128x128 block basis'; 'we calculate the maximum absolute value online for each 1x128 "
    "activation tile or 128x128 weight block'"
)

FP8_TILE_ELEMENTS = cite(DEEPSEEK_V3_FP8, READ)(
    128,
    "elements",
    "we group and scale elements on a 1x128 tile basis (i.e., per token per 128 channels)",
    "One fp32 scale per 1x128 activation tile: 4 / 128 B of scales per element cast.",
)
"""Elements of an activation tile that share one fp32 scale in DeepSeek-V3's FP8 training."""
