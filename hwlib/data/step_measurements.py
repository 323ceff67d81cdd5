"""Published measurements of collectives and of one decode step, each with the configuration it states: the
runs that hold ``hw.collective_time_s`` on a cluster's placement, and ``hw.inference_step`` on a TPU slice, to
their bounds (a measurement faster than a bound is a bug in the model). Sources and caveats in
research/collective_sources.md and research/palm_shape.md. Chapters :ref:`ch-sharding` and :ref:`ch-serving`.
"""

from __future__ import annotations

import dataclasses

from hwlib.data.paper_shapes import PAPER_SHAPES
from hwlib.data.records import CollectiveRun, DecodeRun, cite

GIB = 2**30

_EXEMPLAR = cite(
    "NVIDIA/exemplar-performance, microbenchmarks/nccl/README.md (commit b4ac983a), sample all_reduce_perf output"
)
_AZURE_AKS = cite(
    "Azure/aks-rdma-infiniband, tests/expected-output.md (commit 065a099d), the mpijob's all_reduce_perf output; "
    'tests/README.md (commit 143a2538) sets NODE_POOL_VM_SIZE="Standard_ND96asr_v4"'
)
_NCCL_309 = cite("https://github.com/NVIDIA/nccl-tests/issues/309 (2025-05-23, a user's report)")
_ROCM_SMOKE = cite(
    "hisohara/ai-scripts, training/01_rccl-smoketest/README.md (commit 0780bb3c), rccl-tests output (third party)"
)
_COREWEAVE = cite("coreweave/nccl-tests, README.md (commit 0120901a), 'Expected Performance' (a cloud's repository)")
_POPE = cite(
    "Pope et al., 'Efficiently Scaling Transformer Inference', MLSys 2023, arXiv:2211.05102, abstract "
    "(https://proceedings.mlsys.org/paper_files/paper/2023/hash/523f87e9d08e6071a3bbd150e6da40fb-Abstract-mlsys2023.html)"
)


PALM_540B_64_HEADS = dataclasses.replace(
    next(shape for shape in PAPER_SHAPES if shape.key == "palm-540b"),
    key="palm-540b-64-heads",
    name="PaLM 540B, heads padded to 64",
    n_heads=64,
    n_params=None,
    source="google-research/google-research, scaling_transformer_inference_efficiency/checkpoint.py "
    "(commit 8d8a4f1b): 'heads=64,  # actually 48, but 16 padded', 'padded_heads=16'",
    note="PaLM 540B as Pope et al. ran it on 64 TPU v4 chips: 'we padded the number of attention heads up from 48 "
    "to 64 in order to partition more effectively on 64+ chips' (their Sec. 4, in a third-party quote), 18 "
    "billion parameters more than the published model; no count of its own is published.",
)
"""The shape Pope et al.'s PaLM 540B runs ran (not in the catalogue: it has no published count)."""


def _algbw(cite_: object, value: float, quoted: str, note: str) -> object:
    return cite_(value, "B/s", quoted, note)


COLLECTIVE_RUNS: tuple[CollectiveRun, ...] = (
    CollectiveRun(
        "h100-8-nvls",
        "NVIDIA exemplar-performance",
        "hgx-h100-ndr",
        8,
        "all-reduce",
        8 * GIB,
        _algbw(
            _EXEMPLAR,
            274.38e9,
            "8589934592    2147483648     float     sum      -1    31307  274.38  480.16",
            "8 x H100 80GB HBM3 in one host, 8 GiB, algbw 274.38 GB/s: faster than a ring on 450 GB/s links allows "
            "(257 GB/s), so NCCL reduced in the NVSwitch (NVLink SHARP, its default for all-reduce on H100).",
        ),
        note="The README names neither the algorithm nor the NCCL version.",
    ),
    CollectiveRun(
        "h100-16-two-nodes",
        "nccl-tests issue 309",
        "hgx-h100-ndr",
        16,
        "all-reduce",
        8 * GIB,
        _algbw(
            _NCCL_309,
            470e9 * 16 / 30,
            "each 2 nodes with 16 pairs can still get 470 GB/s",
            "Two HGX H100 hosts, 8 GPU-NIC pairs each, sizes up to 16 GiB: busbw 470 GB/s, algbw = busbw x 16 / 30 "
            "= 251 GB/s (derived; nccl-tests' all-reduce busbw is algbw x 2 (n - 1) / n). Faster than the two levels "
            "in series allow: NCCL overlaps them. NIC speed and NCCL version not stated.",
        ),
    ),
    CollectiveRun(
        "a100-16-two-nodes",
        "Azure aks-rdma-infiniband",
        "hgx-a100-40gb-hdr",
        16,
        "all-reduce",
        8 * GIB,
        _algbw(
            _AZURE_AKS,
            99.85e9,
            "8589934592    2147483648     float     sum      -1    86026   99.85  187.22",
            "Two ND96asr_v4 nodes (8 A100 40GB each, HDR InfiniBand), 8 GiB, algbw 99.85 GB/s; the rank count and "
            "NCCL version are not printed in the excerpt (two nodes is the README's reading).",
        ),
    ),
    CollectiveRun(
        "mi300x-8",
        "rccl-tests (third party)",
        "mi300x-node",
        8,
        "all-reduce",
        8 * GIB,
        _algbw(
            _ROCM_SMOKE,
            180.40e9,
            "8589934592    2147483648     float     sum      -1    47617  180.40  315.69",
            "8 x AMD Instinct MI300X in one node over Infinity Fabric, 8 GiB, algbw 180.40 GB/s.",
        ),
    ),
    CollectiveRun(
        "gb200-nvl72",
        "CoreWeave nccl-tests",
        "gb200-nvl72-ndr",
        72,
        "all-reduce",
        8 * GIB,
        _algbw(
            _COREWEAVE,
            423.16e9,
            "8589934592    2147483648     float     sum      -1    20299  423.16  834.57",
            "One GB200 NVL72 rack, 72 GPUs in one NVLink domain, NCCL 2.26.2, 8 GiB, algbw 423.16 GB/s.",
        ),
    ),
    CollectiveRun(
        "h100-64-sharp",
        "CoreWeave nccl-tests",
        "hgx-h100-ndr",
        64,
        "all-reduce",
        8 * GIB,
        _algbw(
            _COREWEAVE,
            195.31e9,
            "8589934592    2147483648     float     sum      -1    43980  195.31  386.56",
            "64 H100s in 8 nodes with NCCL's SHARP path (CollNet chain), 8 GiB, algbw 195.31 GB/s; the log's header "
            "and rows disagree on the largest size, and no NCCL version is printed.",
        ),
    ),
)
"""Measured all-reduces, on one node and across nodes, NVIDIA and AMD."""

PALM_540B_DECODE = DecodeRun(
    "palm-540b-64-v4",
    "Pope et al. 2023",
    "tpu-v4",
    64,
    PALM_540B_64_HEADS,
    64,
    2048,
    "int8",
    "bf16",
    _POPE(
        29e-3,
        "s",
        "we achieve a low-batch-size latency of 29ms per token during generation (using int8 weight quantization) "
        "... while supporting a long 2048-token context length on the PaLM 540B parameter model",
        "On 64 TPU v4 chips. The batch of 64 is the paper's Table 2 (low-latency decode: batch 64, 1.82 s for 64 "
        "tokens, 28.4 ms each), read only in a third-party reproduction; the cache's dtype is not stated (bf16 "
        "taken). The run padded the 48 heads to 64 (the model record it runs).",
    ),
    kv_layout="batch",
    note="Pope et al. shard the weights in 2D over the 4x4x4 torus and the attention by batch; the bound places "
    "Megatron-style tensor parallelism with the cache split by sequence on the same torus.",
)
"""PaLM 540B decoding on 64 TPU v4 chips, the measurement a flat ring of 64 chips' hops would beat."""
