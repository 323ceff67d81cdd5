"""Google's TPUs as Google's Cloud TPU pages, its JAX repository and the scaling book describe them.

Values in plain SI units (see ``vendor_chips``). Rendered in the chapter :ref:`ch-rooflines` and the
hardware appendix.
"""

from __future__ import annotations

from hwlib.data.records import Chip, Sourced, cite
from hwlib.data.vendor_notes import BIDIRECTIONAL
from hwlib.units import GB, TERA, GiB, MiB

_TPU_INFO = cite("jax-ml/jax, jax/_src/pallas/mosaic/tpu_info.py (commit 4f32df24), Google's JAX repository")
_SCALING_BOOK = cite(
    "Austin et al., 'How to Scale Your Model', Google DeepMind (jax-ml/scaling-book, tpus.md, "
    "commit 54e2c439), table 'ICI BW/link (one-way, bytes/s)'"
)
_LINKS_NOTE = (
    "The scaling book: 'TPU v4 and TPU v5p are connected to the nearest 6 neighbors (forming a 3D torus)'; "
    "v5e and v6e connect 'the 4 nearest neighbors' (a 2D torus); Google's v5e and v6e pages list "
    "'ICI ports per chip | 4'."
)
_LINK_NOTE = (
    "One direction of one link. An older revision of the book's table gave about 10 % more; its footnote says "
    "links run at slightly different rates depending on the operation."
)


def _ici(links: int, one_way: float) -> dict[str, Sourced]:
    return {
        "ici_links": _SCALING_BOOK(float(links), "links", f"nearest {links} neighbors", _LINKS_NOTE),
        "ici_link_bandwidth": _SCALING_BOOK(one_way, "B/s", f"{one_way:.2g}".replace("e+", "e"), _LINK_NOTE),
    }


_SCALING_BOOK_NEW = cite(
    "Austin et al., 'How to Scale Your Model', Google DeepMind, https://jax-ml.github.io/scaling-book/tpus/ "
    "(a stored copy of the rendered page newer than commit 54e2c439, with TPU7x rows), tables of TPU specs and "
    "'ICI BW/link (one-way, bytes/s)'"
)

_VMEM_NOTE = (
    "Per TensorCore, as the file states ('all specs ... are per TensorCore' on "
    "https://docs.jax.dev/en/latest/pallas/tpu/hardware.html): the scratchpad one core's matmul "
    "tiles live in, the memory the re-blocking term needs."
)

# --- Google Cloud TPU documentation -----------------------------------------------------

_TPU_V4 = cite("https://docs.cloud.google.com/tpu/docs/v4.md.txt")
_TPU_V5E = cite("https://docs.cloud.google.com/tpu/docs/v5e.md.txt")
_TPU_V5E_OLD = cite("https://docs.cloud.google.com/tpu/docs/v5e")
_TPU_V5P = cite("https://docs.cloud.google.com/tpu/docs/v5p")
_TPU_V5P_ZH = cite("https://docs.cloud.google.com/tpu/docs/v5p?hl=zh-TW")
_TPU_V6E = cite("https://docs.cloud.google.com/tpu/docs/v6e.md.txt")
_TPU7X = cite("https://docs.cloud.google.com/tpu/docs/tpu7x")

TPUS: tuple[Chip, ...] = (
    Chip(
        key="v4",
        name="TPU v4",
        vendor="Google",
        source="vendor",
        hbm=_TPU_V4(32 * GiB, "B", "HBM2 capacity and bandwidth | 32 GiB, 1200 GBps"),
        hbm_bandwidth=_TPU_V4(1200 * GB, "B/s", "HBM2 capacity and bandwidth | 32 GiB, 1200 GBps"),
        peak_flops={
            "bf16": _TPU_V4(275 * TERA, "FLOP/s", "275 teraflops (bf16 or int8)"),
            "int8": _TPU_V4(275 * TERA, "FLOP/s", "275 teraflops (bf16 or int8)", "One figure for both."),
        },
        on_chip=_TPU_INFO(
            16 * MiB,
            "B",
            "vmem_capacity_bytes=16 * 1024 * 1024,  # 16 MiB per core",
            f"{_VMEM_NOTE} Beside it v4 has a 128 MiB CMEM per chip ('cmem_capacity_bytes="
            "134_000_000 // tensor_cores_per_chip'), not counted here.",
        ),
        **_ici(6, 4.5e10),
        aliases=("Cloud TPU v4",),
        note="The page gives no TDP and no per-chip ICI bandwidth; it lists measured "
        "min/mean/max power of 90/170/192 W.",
    ),
    Chip(
        key="v5e",
        name="TPU v5e",
        vendor="Google",
        source="vendor",
        hbm=_TPU_V5E(
            16 * GiB,
            "B",
            "| HBM capacity per chip | 16 GiB |",
            "Older revisions of the page printed '16 GB' for the same chip.",
        ),
        hbm_bandwidth=_TPU_V5E(
            819 * GB,
            "B/s",
            "| HBM bandwidth per chip | 819 GBps |",
            "As in document 000. Another stored revision prints '800 GiBps', and the v5e column of "
            "an older v6e page '800 GBps', for the same chip.",
        ),
        peak_flops={
            "bf16": _TPU_V5E(197 * TERA, "FLOP/s", "197 TFLOPs"),
            "int8": _TPU_V5E(393 * TERA, "FLOP/s", "| Peak compute per chip (Int8) | 393 TOPs |"),
        },
        interconnect=_TPU_V5E_OLD(
            400 * GB,
            "B/s",
            "400 GBps",
            f"ICI bandwidth per chip over its 4 ICI ports. {BIDIRECTIONAL} Older revisions print "
            "'Inter-chip interconnect BW 1,600 Gbps' = 200e9 B/s, the one-direction figure.",
        ),
        on_chip=_TPU_INFO(
            128 * MiB,
            "B",
            "vmem_capacity_bytes=128 * 1024 * 1024,  # 128 MiB per core",
            f"{_VMEM_NOTE} One TensorCore per chip. The scaling book gives the same '128 MiB on TPU v5e'.",
        ),
        **_ici(4, 4.5e10),
        aliases=("v5litepod", "TPU v5 lite", "Cloud TPU v5e"),
    ),
    Chip(
        key="v5p",
        name="TPU v5p",
        vendor="Google",
        source="vendor",
        hbm=_TPU_V5P(
            95 * GiB,
            "B",
            "| HBM capacity per chip (GiB) | 95 |",
            "Older revisions printed '95GB'. The chip has 96 GiB physically; see hbm_visible.",
        ),
        hbm_visible=_TPU_V5P_ZH(
            95 * GiB,
            "B",
            "96 GiB 的實體高頻寬記憶體 ... 上表列出 95 GiB ... tpu-info、JAX 和 PyTorch 等工具和"
            "框架會回報使用者可分配的 HBM",
            "Google's note under the table: each chip has 96 GiB of physical HBM; the table lists "
            "95 GiB because the TPU system and the libtpu runtime reserve the rest, and tpu-info, "
            "JAX and PyTorch report the user-allocatable 95 GiB. Found only in the page's "
            "Traditional Chinese localisation; the stored English copies predate the note.",
        ),
        hbm_bandwidth=_TPU_V5P(
            2765 * GB,
            "B/s",
            "| HBM bandwidth per chip (GBps) | 2765 |",
            "As in document 000. One stored revision prints '(GiBps) | 2575', the same rate.",
        ),
        peak_flops={
            "bf16": _TPU_V5P(459 * TERA, "FLOP/s", "459 TFLOPs"),
            "fp8": _TPU_V5P(
                459 * TERA,
                "FLOP/s",
                "| Peak compute per chip (FP8) (TFLOPs) | 459 |",
                "The bf16 rate: fp8 is accepted but runs no faster (JAX's tpu_info.py lists no fp8 unit for v5p).",
            ),
            "int8": _TPU_INFO(
                918 * TERA,
                "FLOP/s",
                "int8_ops_per_second=int(9.18e14 // num_chip_cores)",
                "Per core in the file, times the chip's two cores; Google's v5p page has no Int8 "
                "row. The scaling book's table gives the same 9.18e14.",
            ),
        },
        interconnect=_TPU_V5P(
            1200 * GB,
            "B/s",
            "| Bidirectional inter-chip interconnect (ICI) bandwidth per chip (GBps) | 1200 |",
            f"Over the chip's 6 torus links. {BIDIRECTIONAL} Older revisions print 'Interchip "
            "Interconnect BW 4800 Gbps' = 600e9 B/s, the one-direction figure.",
        ),
        on_chip=_TPU_INFO(
            64 * MiB,
            "B",
            "vmem_capacity_bytes=64 * 1024 * 1024,  # 64 MiB per core",
            f"{_VMEM_NOTE} Two TensorCores per chip.",
        ),
        **_ici(6, 9e10),
        aliases=("Cloud TPU v5p", "TPU v5"),
    ),
    Chip(
        key="v6e",
        name="TPU v6e (Trillium)",
        vendor="Google",
        source="vendor",
        hbm=_TPU7X(
            32 * GiB,
            "B",
            "| HBM capacity per chip (GiB) | 95 | 32 | 192 |",
            "v6e column of the TPU7x page's comparison table, whose row says GiB; the v6e page itself prints '32 GB'.",
        ),
        hbm_bandwidth=_TPU_V6E(
            1638 * GB,
            "B/s",
            "| HBM bandwidth per chip | 1638 GBps |",
            "Matches the TPU7x page's v6e column (1638 GB/s). A 2024 revision printed 1640 GBps; "
            "another stored revision, and document 000, use 1600 GBps.",
        ),
        peak_flops={
            "bf16": _TPU_V6E(918 * TERA, "FLOP/s", "918 TFLOPs"),
            "int8": _TPU_V6E(1836 * TERA, "FLOP/s", "| Peak compute per chip (Int8) | 1836 TOPs |"),
            "fp8": _TPU7X(
                918 * TERA,
                "FLOP/s",
                "| Peak compute per chip (FP8) (TFLOPs) | 459 | 918 | 4614 |",
                "v6e column of the TPU7x page's comparison table: the bf16 rate.",
            ),
        },
        interconnect=_TPU_V6E(
            800 * GB,
            "B/s",
            "800 GBps",
            f"ICI bandwidth per chip. {BIDIRECTIONAL} The 2024 revision printed 'Inter-chip "
            "interconnect (ICI) bandwidth 3584 Gbps' (448e9 B/s) without a direction.",
        ),
        on_chip=_TPU_INFO(
            128 * MiB,
            "B",
            "vmem_capacity_bytes=128 * 1024 * 1024,  # 128 MiB per core",
            f"{_VMEM_NOTE} One TensorCore per chip.",
        ),
        **_ici(4, 9e10),
        aliases=("Trillium", "Cloud TPU v6e", "TPU v6 lite"),
    ),
    Chip(
        key="tpu7x",
        name="TPU7x (Ironwood)",
        vendor="Google",
        source="vendor",
        hbm=_TPU7X(
            192 * GiB,
            "B",
            "HBM capacity per chip (GiB): 192",
            "TPU7x column of the page's comparison table. Google's April 2025 Ironwood announcement wrote '192 GB'.",
        ),
        hbm_bandwidth=_TPU7X(
            7380 * GB, "B/s", "HBM bandwidth per chip (GB/s): 7380", "The April 2025 announcement wrote 7.37 TB/s."
        ),
        peak_flops={
            "bf16": _TPU7X(2307 * TERA, "FLOP/s", "Peak compute per chip (BF16) (TFLOPs): 2307"),
            "fp8": _TPU7X(4614 * TERA, "FLOP/s", "Peak compute per chip (FP8) (TFLOPs): 4614"),
        },
        interconnect=_TPU7X(
            1200 * GB,
            "B/s",
            "Bi-directional inter-chip interconnect (ICI) bandwidth per chip (GB/s): 1200",
            BIDIRECTIONAL,
        ),
        on_chip=_TPU_INFO(
            64 * MiB,
            "B",
            "vmem_capacity_bytes=64 * 1024 * 1024,  # 64 MiB per core",
            f"{_VMEM_NOTE} Two TensorCores per chip.",
        ),
        ici_links=_SCALING_BOOK_NEW(
            6.0,
            "links",
            "| TPU7x | 4x4x576 | 2x2x1 |",
            "A 3D pod shape (4x4x576), so six torus neighbours as on v4 and v5p; no Google page gives the link "
            "count (a third-party report: 'ICI uses a 3D torus topology (4x4x4 cubes of 64 TPUs)', "
            "nextbigfuture.com).",
        ),
        ici_link_bandwidth=_SCALING_BOOK_NEW(
            9.0e10,
            "B/s",
            "**TPU7x** | 9.0e10 | 1.8e11",
            "One direction of one link. Six of them give 1080 GB/s with both directions summed, against the "
            "1200 GB/s Google's page prints per chip.",
        ),
        aliases=("Ironwood", "TPU v7", "v7x", "TPU v7x"),
    ),
)
