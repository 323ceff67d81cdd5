"""Constants from papers and talks: per-bit energies, optimizer state layouts, critical-batch fits.

Each value cites its paper (section, equation or table). Explained in the chapters :ref:`ch-moving-bytes` (energies),
:ref:`ch-hbm-budgets` (recipes) and :ref:`ch-batch-squeeze` (critical batch).
"""

from __future__ import annotations

from types import MappingProxyType

from hwlib.data.doc000 import FILE as DOC000_FILE
from hwlib.data.doc002 import FILE as DOC002_FILE
from hwlib.data.records import TrainingRecipe, cite

# --- W. J. Dally's energies per bit --------------------------------------------------------

DALLY_2023 = f"W. J. Dally, keynote at the AHA retreat, 31 Aug 2023, as quoted in {DOC002_FILE} (header and section 1)"
_DALLY = cite(DALLY_2023)

WIRE_ENERGY_PER_BIT_MM = _DALLY(
    100e-15, "J/bit/mm", "~100 fJ/bit-mm", "on-chip wire; document 002 stores it as E_WIRE_BIT_MM but never uses it"
)
ADD_ENERGY_PER_BIT = _DALLY(1e-15, "J/bit", "add ~1 fJ/bit")
SRAM_ENERGY_PER_BIT = _DALLY(
    50e-15,
    "J/bit",
    "small RAM ~50 fJ/bit",
    "small local SRAM array; document 002 stores it as E_SRAM_BIT but never uses it",
)
HBM_INTERFACE_ENERGY_PER_BIT = _DALLY(
    5e-12, "J/bit", "HBM access ~5 pJ/bit", "at the HBM interface, before the on-die trip to the cores"
)

# --- training-state recipes ---------------------------------------------------------------

_ZERO = (
    "Rajbhandari, Rasley, Ruwase and He, 'ZeRO: Memory Optimizations Toward Training Trillion "
    "Parameter Models', SC 2020, arXiv:1910.02054, Sec. 3.1"
)
_ADAM = "Kingma and Ba, 'Adam: A Method for Stochastic Optimization', ICLR 2015, arXiv:1412.6980, Algorithm 1"
_MIXED = "Micikevicius et al., 'Mixed Precision Training', ICLR 2018, arXiv:1710.03740, Sec. 3.1"
_ADAM8 = (
    "Dettmers, Lewis, Shleifer and Zettlemoyer, '8-bit Optimizers via Block-wise Quantization', "
    "ICLR 2022, arXiv:2110.02861, Sec. 2"
)
_ADAFACTOR = (
    "Shazeer and Stern, 'Adafactor: Adaptive Learning Rates with Sublinear Memory Cost', "
    "ICML 2018, arXiv:1804.04235, Sec. 3-4"
)
_FUSED = (
    "Lv et al., 'Full Parameter Fine-tuning for Large Language Models with Limited Resources' (LOMO), "
    "arXiv:2306.09782, Sec. 3: the update is applied inside the backward pass, so no full gradient "
    "buffer is kept"
)
_MOMENTUM = (
    "Sutskever, Martens, Dahl and Hinton, 'On the importance of initialization and momentum in deep "
    f"learning', ICML 2013, Sec. 2 (one velocity per parameter); mixed-precision layout as in {_MIXED}"
)

ADAM8_BLOCK = 2048
"""Block size of 8-bit Adam's block-wise quantization (Dettmers et al. 2022, Sec. 2): each block
of 2048 values of each moment carries one fp32 scale."""

ADAFACTOR_MATRIX_SIDE = 4096
"""Side d of the square d x d weight matrix for which Adafactor's factored second moment (one fp32
accumulator per row and per column: 2d values for d^2 parameters) is turned into bytes per
parameter, 4 x 2d / d^2 = 8 / d. Larger matrices need even less."""

_MIXED_PARTS = {"weights": "fp16/bf16 weights", "gradients": "fp16/bf16 gradients", "master": "fp32 master weights"}

RECIPES: tuple[TrainingRecipe, ...] = (
    TrainingRecipe(
        key="fp32_adam",
        label="fp32 Adam",
        weights=4,
        gradients=4,
        master=0,
        optimizer=8,
        parts={
            "weights": "fp32 weights (they are the master copy)",
            "gradients": "fp32 gradients",
            "master": "none: the weights are already fp32",
            "optimizer": "fp32 Adam m and v",
        },
        source=f"{_ADAM}; {DOC000_FILE}'s 'fp32_train_state' (16 B/param)",
    ),
    TrainingRecipe(
        key="zero_mixed_adam",
        label="ZeRO mixed-precision Adam",
        weights=2,
        gradients=2,
        master=4,
        optimizer=8,
        parts={**_MIXED_PARTS, "optimizer": "fp32 Adam m and v"},
        source=f"{_ZERO}: 2 + 2 + K with K = 12, '16 Psi bytes'",
        note="Document 002 labels this 16 B/param 'Adam mixed-precision state'.",
    ),
    TrainingRecipe(
        key="bf16_grads_fp32_moments",
        label="bf16 weights and gradients, fp32 moments",
        weights=2,
        gradients=2,
        master=0,
        optimizer=8,
        parts={
            "weights": "bf16 weights, updated in place (no master copy)",
            "gradients": "bf16 gradients",
            "master": "none",
            "optimizer": "fp32 Adam m and v",
        },
        source=f"{_ADAM}; ZeRO's layout (Sec. 3.1) without the fp32 master copy",
        note="Updating bf16 weights directly loses small updates unless stochastic rounding or "
        "compensated summation is used.",
    ),
    TrainingRecipe(
        key="bf16_fp32_moments",
        label="bf16 weights, fp32 moments, fused update",
        weights=2,
        gradients=0,
        master=0,
        optimizer=8,
        parts={
            "weights": "bf16 weights, updated in place",
            "gradients": "none held: each layer's gradient is applied as soon as it is computed",
            "master": "none",
            "optimizer": "fp32 Adam m and v",
        },
        source=f"{_FUSED}; Adam moments as in {_ADAM}",
        note="Counts persistent state only: one layer's gradient at a time is transient.",
    ),
    TrainingRecipe(
        key="adam_8bit",
        label="8-bit Adam (mixed precision)",
        weights=2,
        gradients=2,
        master=4,
        optimizer=2 + 2 * 4 / ADAM8_BLOCK,
        parts={**_MIXED_PARTS, "optimizer": "8-bit m and v, plus one fp32 scale per 2048-value block of each"},
        source=_ADAM8,
    ),
    TrainingRecipe(
        key="sgd_momentum",
        label="SGD with momentum (mixed precision)",
        weights=2,
        gradients=2,
        master=4,
        optimizer=4,
        parts={**_MIXED_PARTS, "optimizer": "one fp32 momentum buffer"},
        source=_MOMENTUM,
    ),
    TrainingRecipe(
        key="adafactor",
        label="Adafactor, no momentum (mixed precision)",
        weights=2,
        gradients=2,
        master=4,
        optimizer=4 * 2 * ADAFACTOR_MATRIX_SIDE / ADAFACTOR_MATRIX_SIDE**2,
        parts={
            **_MIXED_PARTS,
            "optimizer": "factored fp32 second moment: one value per row and per column, "
            "8/d B/param for a d x d matrix (d = 4096); no first moment (beta1 = 0)",
        },
        source=_ADAFACTOR,
        note="Vectors and biases keep a full second moment; they are a negligible share of a "
        "transformer's parameters and are not counted.",
    ),
)
"""Training-state recipes from the literature (document 000's own is in ``doc000``)."""

# --- the critical batch ---------------------------------------------------------------------

_KAPLAN = cite("Kaplan et al. 2020, arXiv:2001.08361, Sec. 5.1, Eq. 5.1")
KAPLAN_CRITICAL_BATCH = MappingProxyType(
    {
        "b_star": _KAPLAN(
            2e8,
            "tokens",
            "B_* ~ 2e8 tokens",
            "Figure 10's legend prints the fit as B_crit = 2.1e8 tokens L^-4.8 (seen in a stored "
            "description of the figure); the paper's table of fits is not among stored copies.",
        ),
        "alpha_b": _KAPLAN(0.21, "1", "alpha_B ~ 0.21", "1 / 0.21 = 4.8, the exponent of Figure 10's legend."),
    }
)
"""Kaplan et al.'s power law for the critical batch in the loss L (nats): B_crit = B_* / L^(1/alpha_B)."""

# --- the latency of one step of a ring collective -------------------------------------------

NVLINK_RING_STEP_LATENCY = cite(
    "NVIDIA/nccl, src/graph/tuning.cc, NCCL 2.29.2 (commit ebd1e929), ncclTunerConstantsDefaults.hwLatencies "
    "(units: '// Latencies in us' in the same file's earlier versions)"
)(
    0.6e-6,
    "s",
    "/* NVLINK */ { { .6, 1.25, 4.0 }, { .6, 1.9, 3.4 }, /* Tree (LL/LL128/Simple), Ring (LL/LL128/Simple)*/",
    "NCCL's own model of one ring step over NVLink with its small-message LL protocol (3.4 us with Simple); "
    "the same for A100, H100 and B200. NCCL adds a base latency per call (6.6 us for a ring with LL), launch "
    "overhead that custom one-shot all-reduce kernels avoid: not in hwlib's bound.",
)
"""NCCL's latency of one ring step over NVLink (s), small messages."""

ICI_HOP_LATENCY = cite(
    "Austin et al., 'How to Scale Your Model', Google DeepMind (2025), Sharding, "
    "https://jax-ml.github.io/scaling-book/sharding/ (jax-ml/scaling-book, sharding.md, commit 04d8de58)"
)(
    1e-6,
    "s",
    "Each hop over an ICI link has some intrinsic overhead regardless of the data volume. "
    "This is typically around 1us.",
    "One figure for every TPU generation; the same page reports a measured 3-hop transfer on v5e taking "
    "'closer to 8us'. An older version of the book assumed 1/2 us per hop.",
)
"""Latency of one hop over a TPU's ICI (s)."""

NET_RING_STEP_LATENCY = cite(
    "NVIDIA/nccl, src/graph/tuning.cc, NCCL 2.29.2 (commit ebd1e929), ncclTunerConstantsDefaults.hwLatencies"
)(
    2.7e-6,
    "s",
    "/* NET */ { { 5.0, 8.5, 14 }, { 2.7, 4.0, 14.0 }, /* Tree (LL/LL128/Simple), Ring (LL/LL128/Simple)*/",
    "NCCL's model of one ring step over the network (InfiniBand or RoCE) with its LL protocol (14 us with Simple); "
    "NCCL adds a CPU post overhead of 1 to 2 us per step on top, not counted here.",
)
"""NCCL's latency of one ring step over the network between nodes (s), small messages."""

NVLS_LATENCY = cite(
    "NVIDIA/nccl, src/graph/tuning.cc, NCCL 2.29.2 (commit ebd1e929), ncclTunerConstantsDefaults.hwLatencies"
)(
    25e-6,
    "s",
    "/* NVLINK */ ... {  0,    0,  25 }, {  0,   0,  25 }, /* NVLS (LL/LL128/Simple), NVLSTree (LL/LL128/Simple)*/",
    "NCCL's model of an all-reduce by NVLink SHARP (NVLS), which runs only with its Simple protocol; NCCL 2.20.3 "
    "gave 23 us. For a small array a ring is faster, and NCCL picks one.",
)
"""NCCL's latency of an all-reduce that the NVSwitch reduces (NVLink SHARP), s."""

COLLNET_NET_LATENCY = cite(
    "NVIDIA/nccl, src/graph/tuning.cc, NCCL 2.29.2 (commit ebd1e929), ncclTunerConstantsDefaults.hwLatencies"
)(
    30e-6,
    "s",
    "/* NET */ ... {   0,   0, 31 }, {   0,   0,   30 }, /* CollNetDirect (LL/LL128/Simple), CollNetChain "
    "(LL/LL128/Simple)*/",
    "NCCL's model of an all-reduce that the InfiniBand switches reduce (SHARP, NCCL's CollNet chain), Simple "
    "protocol only.",
)
"""NCCL's latency of an all-reduce that the network's switches reduce (InfiniBand SHARP), s."""

TORUS_WRAPAROUND_CHIPS = cite(
    "Austin et al., 'How to Scale Your Model', Google DeepMind (2025), TPUs, "
    "https://jax-ml.github.io/scaling-book/tpus/ (jax-ml/scaling-book, tpus.md, commit 04d8de58)"
)(
    64,
    "chips",
    "A 4x4x4 or 4x4x8 will still have wraparounds along all axes provided by optical switches",
    "And 'a 2x2x4 won't have any wraparounds': 3D slices (v4, v5p) of a full 4x4x4 cube or more wrap around on "
    "every axis, smaller ones on none.",
)
"""The smallest 3D TPU slice (chips) whose torus axes all wrap around."""

# --- the scaling book's closed forms (hwlib.training.closed_forms) ---------------------------

SCALING_BOOK_TRAINING = (
    "Austin et al., 'How to Scale Your Model', Google DeepMind (2025), Part 5 'How to Parallelize a Transformer "
    "for Training', section 'Mixed FSDP and Tensor Parallelism', https://jax-ml.github.io/scaling-book/training/ "
    "(jax-ml/scaling-book, training.md, commit 0c5b5887)"
)
SCALING_BOOK_APPLIED_TRAINING = (
    "Austin et al., 'How to Scale Your Model', Google DeepMind (2025), Part 6 'Training LLaMA 3 on TPUs', "
    "https://jax-ml.github.io/scaling-book/applied-training/ (jax-ml/scaling-book, applied-training.md, "
    "commit 345a75a7)"
)
_SCALING_BOOK_APPLIED = cite(SCALING_BOOK_APPLIED_TRAINING, read_on="2026-12-06")

SCALING_BOOK_FSDP_AXES = _SCALING_BOOK_APPLIED(
    2,
    "torus axes",
    "X_{opt} = \\sqrt{\\frac{2BN}{F}}",
    "The book's X_opt = sqrt(B N M_X / (F M_Y)) (Part 5) with M_X / M_Y = 2: two of a 3D slice's three torus axes "
    "carry FSDP. Part 5 plugs in 'M_X M_Y=2 (as it must be for a 3D mesh)'; an older revision (commit 04d8de58) "
    "says 'If we assume for simplicity (incorrectly) that M_X = 2 and M_Y = 1'.",
)
"""Torus axes the scaling book gives FSDP in its mixed FSDP x tensor-parallel optimum (M_X)."""

SCALING_BOOK_TP_AXES = _SCALING_BOOK_APPLIED(
    1,
    "torus axes",
    "X_{opt} = \\sqrt{\\frac{2BN}{F}}",
    "M_Y = 1: the third torus axis carries tensor parallelism (see SCALING_BOOK_FSDP_AXES).",
)
"""Torus axes the scaling book gives tensor parallelism in that optimum (M_Y)."""

SCALING_BOOK_CHECKPOINTS_PER_LAYER = _SCALING_BOOK_APPLIED(
    4,
    "[B, D] tensors per layer",
    "You can assume bfloat16 parameters and float32 optimizer state, and that you checkpoint gradients 4 times "
    "per layer.",
    "Llama 3 70B at a 4M-token batch. The answer's table writes '2 * 8192 * 4e6 * 3 * 80 | ~20.9TB', but 20.9 TB "
    "is the product with 4 (20.97e12 B; with 3 it is 15.7e12 B), and its total '~21.6TB' adds 140 GB of bf16 "
    "weights and 560 GB of fp32 Adam moments (20.97 + 0.70 = 21.67e12 B, cut to 21.6).",
)
"""Tensors of shape [B, D] the scaling book saves per layer in its Llama 3 70B memory estimate (its k)."""

DEEPSEEK_V3_MTP_PARAMS = cite(
    "deepseek-ai/DeepSeek-V3, README.md on GitHub (the model card's text), https://github.com/deepseek-ai/DeepSeek-V3",
    "2026-12-06",
)(
    14e9,
    "parameters",
    "The total size of DeepSeek-V3 models on Hugging Face is 685B, which includes 671B of the Main Model weights and "
    "14B of the Multi-Token Prediction (MTP) Module weights.",
    "What the released checkpoint stores for the MTP module, its own copies of the embedding and output head included "
    "(the module reuses the main model's, so a count of its own parameters leaves them out).",
)
"""Parameters DeepSeek counts for DeepSeek-V3's multi-token-prediction module as released. Chapter
:ref:`ch-counting`."""
