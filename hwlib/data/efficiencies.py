"""What kernels reach in practice, per chip: published GEMM, attention and small-collective measurements.

Each fraction is of the datasheet peak the chip record holds. Where no measurement of a chip was found, its record
takes a stated stand-in from another chip (said in the quantity's note). Achieved HBM bandwidth is not here: no
published stream measurement was found to quote, so it is fitted (``hwlib.data.calibrated.HBM_FRACTION``).
Research notes: ``research/efficiency_sources.md``. Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from hwlib.data.records import KernelEfficiency, cite

_MAMF = cite(
    "Stas Bekman, ml-engineering, compute/accelerator/README.md, 'Maximum Achievable Matmul FLOPS comparison table' "
    "(github.com/stas00/ml-engineering, commit b9e29720eebd4aa946fa9678975385efbc90a777 and a later stored version "
    "adding B200 and H200 FP8; third-party: torch.matmul, best shape of a search, mean of 100 iterations)",
    "2026-12-02",
)
_AMD_MAF = cite(
    "AMD ROCm blogs, 'Measuring Max-Achievable FLOPs - Part 2', 28 Feb 2025, "
    "https://rocm.blogs.amd.com/software-tools-optimization/measuring-max-achievable-flops-part2/README.html "
    "(github.com/ROCm/rocm-blogs, commit d957560caad3fa312521119366c7f15a1b7bfb5b; hipBLASLt, ROCm 6.3.0)",
    "2026-12-02",
)
_TPU_GEMM = cite(
    "Google AI-Hypercomputer, accelerator-microbenchmarks, Ironwood/Ironwood_Microbenchmarks_readme.md "
    "(github.com/AI-Hypercomputer/accelerator-microbenchmarks, commit 5b4dce3df87061783dc4b1a38aa94dfcb6f28911; "
    "gemm_multiple_run, bf16, libtpu 0.0.26 nightly)",
    "2026-12-02",
)
_JAX_MATMUL = cite(
    "JAX documentation, Pallas TPU guide 'Matrix Multiplication', docs/pallas/tpu/matmul.ipynb (github.com/jax-ml/jax, "
    "commit 1082251cde876f91608b403d1995b5e0025f0398; bf16 on one TPU v5e, each call timed with Python's timeit over "
    "100 calls, dispatch included)",
    "2026-12-06",
)
_FA2 = cite("T. Dao, 'FlashAttention-2', arXiv:2307.08691 (2023), sections 1 and 4.1 (A100 80GB SXM4)", "2026-12-02")
_FA3 = cite(
    "J. Shah et al., 'FlashAttention-3', arXiv:2407.08608 (2024), abstract (H100 80GB SXM5, CUDA 12.3)", "2026-12-02"
)
_OVERLAP = cite(
    "'Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning: "
    "Performance and Power Implications', arXiv:2507.03114 (2025), abstract (GPT and Llama training on 4 A100s, "
    "H100s, MI250s and MI210s)",
    "2026-12-02",
)
_OVERLAP_SLOWDOWN = _OVERLAP(
    0.189,
    "1",
    "'overlapping computation and communication can result in an average computational slowdown of 18.9%, with a "
    "maximum of 40.0% slowdown'",
    "The mean over the paper's GPUs and models, for every GPU: the collective's kernels take SMs and HBM bandwidth "
    "from the compute beside them.",
)
_NVIDIA_SMS = cite("T. Dao, 'FlashAttention-2', arXiv:2307.08691, section 2.1 (A100's SMs)", "2026-12-02")
_AMD_CUS = cite(
    "AMD ROCm blogs, 'Measuring Max-Achievable FLOPs - Part 2' (MI300X's CUs, and H100's SMs as AMD counts them)",
    "2026-12-02",
)
_B200_SMS = cite("pytorch/ao pull request 4002, a B200's device query (third-party)", "2026-12-02")
_TPU_CORE = cite(
    "Google Cloud, TPU v5e, https://cloud.google.com/tpu/docs/v5e?hl=es (only the Spanish copy was found)", "2026-12-02"
)

_A100_BF16 = _MAMF(0.869, "1", "| NVIDIA A100 SXM | 271.2 | 312 | 86.9% | 1024x10240x5120 | 2.6.0+cu126 |")
_H100_BF16 = _MAMF(
    0.803, "1", "| NVIDIA H100 SXM | 794.5 | 989 | 80.3% | 2048x2048x13312 | 2.7.0+cu126 | H200 is the same |"
)
_FA2_FORWARD, _FA2_BACKWARD = 0.73, 0.63
_FA2_TRAINING = _FA2(
    3.5 / (1 / _FA2_FORWARD + 2.5 / _FA2_BACKWARD),
    "1",
    "'reaching up to 73% of the theoretical max throughput in the forward pass, and up to 63% ... in the "
    "backward pass'",
    "Forward and backward together, the backward pass taking 2.5x the forward's FLOPs as the paper counts them: "
    "3.5 / (1/0.73 + 2.5/0.63) (derived).",
)
_FA3_BF16 = _FA3(0.75, "1", "'with FP16 reaching up to 740 TFLOPs/s (75% utilization)'", "Forward pass.")
_FA2_ON_H100 = _FA2(
    335 / 989,
    "1",
    "'we obtain up to 335 TFLOPs/s' on H100 with code not written for Hopper",
    "335 / 989 (derived); the stand-in for a chip whose attention kernels have no published fraction of peak.",
)
_FA1_ON_A100 = _FA2(
    0.40,
    "1",
    "'FlashAttention is still not nearly as fast as optimized matrix-multiply (GEMM) operations, reaching only "
    "25-40% of the theoretical maximum FLOPs/s' (abstract)",
    "The top of the range the FlashAttention-2 paper gives for the first FlashAttention on A100.",
)
ATTENTION_BEFORE_FLASH_ATTENTION_2 = {
    "a100-80gb": _FA1_ON_A100,
    "a100-40gb": _FA1_ON_A100,
    "h100-sxm": replace(
        _FA2_ON_H100,
        note="335 / 989 (derived): FlashAttention-2 on H100 without Hopper-specific code, the most a kernel of the "
        "first FlashAttention's generation (or its Triton port) could reach there.",
    ),
}
"""Fraction of the bf16 peak the attention kernels of software older than FlashAttention-2 (July 2023) reach, per
chip: what a measured run whose stated software predates it takes in place of the chip's own record."""
_SMALL_ALLREDUCE_NOTE = "the only small-message all-reduce measurements found; stood in for other chips"


def _stand_in(quantity, chip: str):
    """``quantity`` as the stand-in for ``chip``, which has no measurement of its own."""
    return replace(quantity, note=f"{quantity.note} No measurement on {chip} found: a stand-in.".strip())


_TPU_BF16 = _TPU_GEMM(
    956.38 / 1153.5,
    "1",
    "| 32768 | 956.3824592 | (TFLOP/s per device; a device is half a TPU7x chip)",
    "956.38 / 1153.5 TFLOP/s per device (derived). v6e, whose MXUs are 256 x 256 as TPU7x's, has no published GEMM "
    "measurement; this one stands in for it (a third-party v6e run with wall-clock timing reached 75%).",
)
_V5E_BF16 = _JAX_MATMUL(
    0.922960,
    "1",
    "'================ XLA matmul ===================' ... '----- 8192 x 8192 x 8192 -----' ... "
    "'FLOP/s utilization: 92.2960%'",
    "jnp.matmul of two bf16 8192 x 8192 matrices against v5e's 197 TFLOP/s: with dispatch in the timing, a floor of "
    "what XLA's matmuls reach. v4 and v5p, whose MXUs are 128 x 128 as v5e's, have no published GEMM measurement; "
    "this one stands in for them.",
)
_XLA_OVERLAP = (
    "AI-Hypercomputer/maxtext, the LIBTPU_INIT_ARGS of its published TPU runs (MaxText/configs/largest_job/128b.sh, "
    "commit e47fa1b5, the 2023 v5e runs; the same flags in tpu-recipes' Trillium recipes): "
    "'--xla_tpu_enable_async_collective_fusion=true ... --xla_tpu_overlap_compute_collective_tc=true', XLA's "
    "collectives run asynchronously beside the computation, and its collective matmuls split a tensor-parallel "
    "matmul so its transfers overlap the pieces they feed (Wang et al., ASPLOS 2023), read 2026-12-06"
)
_XLA_FUSION = (
    "JAX documentation, Pallas TPU guide 'Matrix Multiplication' (jax-ml/jax commit 1082251c, TPU v5e): a ReLU fused "
    "into a bf16 8192^3 matmul's epilogue leaves its utilization at 91.04 % against 91.38 % without ('The additional "
    "fused activation barely affects our utilization at all!'), so that an elementwise op fused beside a matmul "
    "moves no bytes of its own; XLA fuses a training step's elementwise ops (norms, residual adds, activations, "
    "rotary embeddings) into the fusions of the matmuls that produce or consume them, read 2026-12-06"
)
_TPU_CORE_TILES = _TPU_CORE(
    1,
    "tiles at a time",
    "'Cada chip v5e contiene un Tensor Core. Cada Tensor Core tiene cuatro unidades de multiplicación de matrices'",
    "One TensorCore whose MXUs take a matmul's tiles in turn: no wave quantization.",
)


def _gpu(key, matmul, attention, sms, note=""):
    return KernelEfficiency(
        chip_key=key,
        matmul=matmul,
        attention=attention,
        tile=(128, 128),
        parallel_tiles=sms,
        overlap_slowdown=_OVERLAP_SLOWDOWN,
        note=note,
    )


_A100_SMS = _NVIDIA_SMS(108, "SMs", "'192KB of on-chip SRAM per each of 108 streaming multiprocessors'")
_H100_SMS = _AMD_CUS(132, "SMs", "'132 CUs is 12x11' (AMD's count of H100 SXM's SMs; no NVIDIA page found)")

RECORDS: tuple[KernelEfficiency, ...] = (
    _gpu("a100-80gb", {"bf16": _A100_BF16}, _FA2_TRAINING, _A100_SMS),
    _gpu("a100-40gb", {"bf16": _A100_BF16}, _FA2_TRAINING, _A100_SMS, "The MAMF row is 'A100 SXM', memory unstated."),
    _gpu(
        "h100-sxm",
        {"bf16": _H100_BF16, "fp8": _MAMF(0.709, "1", "| NVIDIA H100 SXM | 1402.6 | 1979 | 70.9% | 1024x9216x14336 |")},
        _FA3_BF16,
        _H100_SMS,
    ),
    _gpu(
        "h200",
        {
            "bf16": _H100_BF16,
            "fp8": _MAMF(0.734, "1", "| NVIDIA H200 SXM | 1453.4 | 1979 | 73.4% | 1280x4096x12032 | 2.7.1+cu128 |"),
        },
        _FA3_BF16,
        _H100_SMS,
        "Same GH100 die as H100: its bf16 MAMF row says 'H200 is the same', and its SMs are H100's.",
    ),
    _gpu(
        "b200",
        {
            "bf16": _MAMF(0.776, "1", "| NVIDIA B200 SXM | 1745.0 | 2250 | 77.6% | 1792x16128x3072 | 2.7.1+cu128 |"),
            "fp8": _MAMF(0.763, "1", "| NVIDIA B200 SXM | 3432.5 | 4500 | 76.3% | 15360x4096x3072 | 2.7.1+cu128 |"),
        },
        _stand_in(_FA3_BF16, "B200"),
        _B200_SMS(148, "SMs", "'Number of SMs: 148'"),
        "No FP4 GEMM measurement found: FP4 matmuls take the FP8 fraction (the lowest the record holds).",
    ),
    _gpu(
        "mi300x",
        {
            "bf16": _AMD_MAF(
                708 / 1307.4,
                "1",
                "| AMD Instinct MI300X | 654 TFLOPs (1115 MHz) | 708 TFLOPs (1207 MHz) | 1273 TFLOPs (1230 MHz) |",
                "708 / 1307.4 TFLOP/s datasheet (derived); the clock falls to 1207 MHz under dense matmuls.",
            ),
            "fp8": _AMD_MAF(
                1273 / 2614.9,
                "1",
                "| AMD Instinct MI300X | ... | 1273 TFLOPs (1230 MHz) |",
                "1273 / 2614.9 TFLOP/s datasheet (derived); the blog's footnote prints 1223.6 TFLOPs instead.",
            ),
        },
        _stand_in(_FA2_ON_H100, "MI300X"),
        _AMD_CUS(304, "CUs", "'A good size for the AMD Instinct MI300 GPU with its 304 CUs'"),
    ),
    *(
        KernelEfficiency(
            chip_key=key,
            matmul={"bf16": gemm},
            attention=_stand_in(_FA2_TRAINING, "a TPU"),
            tile=tile,
            parallel_tiles=_TPU_CORE_TILES,
            note="MXUs of 128 x 128 (256 x 256 on v6e and TPU7x): the tile a matmul's shape is padded to. No "
            "measurement of compute slowed by a collective beside it was found for a TPU, whose transfers over ICI "
            "are not kernels on its TensorCores: none is applied.",
            hides_collectives=_XLA_OVERLAP,
            fuses_elementwise=_XLA_FUSION,
        )
        for key, tile, gemm in (
            ("v4", (128, 128), _stand_in(_V5E_BF16, "v4")),
            ("v5e", (128, 128), _V5E_BF16),
            ("v5p", (128, 128), _stand_in(_V5E_BF16, "v5p")),
            ("v6e", (256, 256), _stand_in(_TPU_BF16, "v6e")),
            ("tpu7x", (256, 256), _TPU_BF16),
        )
    ),
)
BY_CHIP = {record.chip_key: record for record in RECORDS}

PESSIMISTIC = KernelEfficiency(
    chip_key="unrecorded",
    matmul={"bf16": min((q for r in RECORDS for q in r.matmul.values()), key=lambda q: q.value)},
    attention=min((r.attention for r in RECORDS), key=lambda q: q.value),
    tile=(128, 128),
    parallel_tiles=_A100_SMS,
    overlap_slowdown=_OVERLAP_SLOWDOWN,
    note="A chip with no record: the lowest fraction of every record, A100's 108 SMs and the GPUs' overlap slowdown.",
)
"""The record a chip without one takes: the lowest fraction every record holds."""

SMALL_ALLREDUCE_S = {
    2: cite("NVIDIA/nccl issue 1259 (third-party run: 2 x H100, NVLS, NCCL 2.20.5, CUDA graphs)", "2026-12-02")(
        6e-6, "s", "'When I run with 2 GPUs the latency is approximately 6us'", _SMALL_ALLREDUCE_NOTE
    ),
    8: cite(
        "NVIDIA exemplar-performance, microbenchmarks/nccl/README.md, 'View sample output (AllReduce excerpt)' "
        "(github.com/NVIDIA/exemplar-performance, commit b4ac983a38b181164a8c0f3a8ed6400817699726; 8 x H100 80GB)",
        "2026-12-01",
    )(13.67e-6, "s", "'8 ... 13.67  0.00  0.00' (8 bytes, µs, out of place)", _SMALL_ALLREDUCE_NOTE),
}
"""Time of the smallest all-reduce over 2 and 8 chips in one node (s): the floor of every all-reduce's forecast,
taken between the two in log2 of the chips (``hw.small_allreduce_s``)."""

_DEEPEP = cite(
    "deepseek-ai/DeepEP, docs/legacy.md 'Normal kernels with NVLink and RDMA forwarding' "
    "(github.com/deepseek-ai/DeepEP, commit 0297fc801788b14b338a46554faca28d419e518a; H800 with one CX7 400 Gb/s NIC "
    "each, 4096 tokens per batch, "
    "7168 hidden, top-4 groups, top-8 experts, FP8 dispatching and BF16 combining)",
    "2026-12-06",
)
ALL_TO_ALL_SHARE = {
    "node": _DEEPEP(
        (153 + 158) / 2 / 200,
        "1",
        "| Intranode | 8 | 153 GB/s (NVLink) | 8 | 158 GB/s (NVLink) |",
        "Dispatch and combine on 8 H800s, their mean over the 200 GB/s each way H800's NVLink gives "
        "(hwlib's 'nvlink4-h800'; DeepEP's own text says '~160 GB/s NVLink maximum bandwidth') [derived].",
    ),
    "network": _DEEPEP(
        1.0,
        "1",
        "| Internode | 64 | 51 GB/s (RDMA) | 64 | 50 GB/s (RDMA) |",
        "At 16, 32 and 64 GPUs dispatch and combine reach 43 to 58 GB/s of 'bottleneck bandwidth' over a NIC of "
        "'~50 GB/s maximum bandwidth': the forecast prices an expert all-to-all across the NICs at its bound.",
    ),
}
"""Share of the bound an expert-parallel all-to-all reaches within a node and across the NICs, as DeepEP's normal
kernels measure it (``hwlib.pricing.forecast_collective_s`` prices every all-to-all so; the other collectives
take the all-reduces of ``step_measurements.COLLECTIVE_RUNS``)."""

_TORCHAO_MOE = cite(
    "pytorch/ao, torchao/prototype/moe_training/README.md, 'Autograd function' (github.com/pytorch/ao, commit "
    "36027d82d1ad9949597ea16002ff4940374b1b94; one B200, torchao 0.14.0, torch 2.10.0a0: MXFP8 "
    "_to_mxfp8_then_scaled_grouped_mm against bf16 torch._grouped_mm, forward and backward, the MXFP8 casts "
    "included; M = 128,000 routed tokens over G = 1, 2, 4 and 8 local experts)",
    "2026-12-06",
)
_SPEEDUP_HEADER = "| M,N,K,G | bf16_fwd_bwd_us | scaled_fwd_bwd_us | scaled_fwd_bwd_speedup |"


def _measured_speedup(shapes: str, rows: tuple[str, ...]) -> object:
    speedups = [float(row.rstrip(" |x").rsplit("|", 1)[1]) for row in rows]
    return _TORCHAO_MOE(
        float(np.exp(np.mean(np.log(speedups)))),
        "1",
        " ".join(rows),
        f"{shapes}: the geometric mean over the four expert counts [derived]. Header: {_SPEEDUP_HEADER}",
    )


FP8_GROUPED_GEMM_SPEEDUP = {
    2048: _measured_speedup(
        "DeepSeek-V3's experts (N = 2,048 wide, K = 7,168 deep)",
        (
            "| (128000, 2048, 7168, 1) | 13064.80 | 10996.00 | 1.188x |",
            "| (128000, 2048, 7168, 2) | 14900.20 | 11283.40 | 1.321x |",
            "| (128000, 2048, 7168, 4) | 15823.60 | 9919.36 | 1.595x |",
            "| (128000, 2048, 7168, 8) | 14966.80 | 10397.20 | 1.440x |",
        ),
    ),
    8192: _measured_speedup(
        "Llama 4 Scout's experts (N = 8,192 wide, K = 5,120 deep)",
        (
            "| (128000, 8192, 5120, 1) | 43140.20 | 23867.00 | 1.808x |",
            "| (128000, 8192, 5120, 2) | 39487.60 | 23359.00 | 1.690x |",
            "| (128000, 8192, 5120, 4) | 39189.20 | 23945.50 | 1.637x |",
            "| (128000, 8192, 5120, 8) | 37700.70 | 22170.60 | 1.700x |",
        ),
    ),
}
"""How much faster than bf16 a routed expert's grouped GEMMs run in block-scaled FP8, forward and backward with their
casts, by the expert's width N (its hidden size): far short of the 2x of the peaks, the less so the narrower the
expert, since each operand is cast along both of its dimensions (torchao's kernel table for DeepSeek-V3's shapes:
casts and scale layouts about a third of the GEMMs' time, the GEMMs at 52-66 % of the FP8 peak). The forecast prices
an FP8 step's routed experts at this speed-up over their bf16 rate (``hwlib.efficiency.fp8_expert_share``)."""

KV_CACHE_FRACTION = cite(
    "NVIDIA TensorRT-LLM, tensorrt_llm/llmapi/llm_args.py, KvCacheConfig.free_gpu_memory_fraction "
    "(github.com/NVIDIA/TensorRT-LLM, commit fcd3f31682808ae56118ae43c1d7864a3a945e6f)",
    "2026-12-02",
)(
    0.9,
    "1",
    "'The fraction of GPU memory fraction that should be allocated for the KV cache. Default is 90%.'",
    "Of the memory free after the weights load; vLLM's gpu_memory_utilization (0.9) is of all of it instead.",
)
"""Share of the memory left after the weights that a serving engine gives its KV cache."""
