"""The data-centre network (DCN) that joins TPU slices in one job (Multislice), per chip, as Google states it.

"TPU chips in different slices communicate by transferring data to CPUs (hosts) which in turn transmit the data
over the data-center network (DCN)" (https://docs.cloud.google.com/tpu/docs/multislice-introduction, read
2026-12-06). A host's NICs serve its chips, so the records give the bandwidth per chip and per direction, as a NIC's
line rate is quoted. These fabrics join the multislice clusters of ``vendor_systems`` (``Cluster.dcn``); the
catalogue of ``hw.fabrics()`` keeps the ICI, NVLink and NIC fabrics. Chapters :ref:`ch-batch-squeeze` and
:ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.assumptions import DCN_STEP_LATENCY
from hwlib.data.records import Fabric, cite
from hwlib.data.vendor_fabrics import GBIT

READ_ON = "2026-12-06"
"""The date the pages below were read."""

_TPU7X = cite("https://docs.cloud.google.com/tpu/docs/tpu7x, specification table (v5p, v6e and TPU7x columns)", READ_ON)
_V5E = cite("https://docs.cloud.google.com/tpu/docs/v5e, table of Pod specifications", READ_ON)
_V5P = cite(
    "https://docs.cloud.google.com/tpu/docs/v5p-training?hl=zh-cn (Google's Simplified Chinese copy of the v5p page; "
    "the same sentence is on https://docs.cloud.google.com/tpu/docs/v5p?hl=zh-TW)",
    READ_ON,
)
_SCALING_BOOK = cite(
    "Austin et al., 'How to Scale Your Model', Google DeepMind, https://jax-ml.github.io/scaling-book/tpus/ "
    "(jax-ml/scaling-book, tpus.md, commit 04d8de58)",
    READ_ON,
)
_PER_CHIP = "| Data center network (DCN) bandwidth per chip (Gb/s) | 50 | 100 | 100 |"
_LINE_RATE = "Per chip and per direction, as a NIC's line rate (bits/s divided by 8)."


def _dcn(chip_key: str, label: str, bandwidth: object, note: str) -> Fabric:
    return Fabric(
        key=f"dcn-{chip_key}",
        name=f"{label} DCN",
        kind="scale-out",
        source="vendor",
        bandwidth=bandwidth,
        directions=1,
        chip_keys=(chip_key,),
        aliases=(f"DCN {chip_key}", f"{chip_key} DCN"),
        latency=DCN_STEP_LATENCY,
        note=f"{note} Step latency: hwlib's assumption (assumptions.DCN_STEP_LATENCY).",
    )


DCN_FABRICS: tuple[Fabric, ...] = (
    _dcn(
        "v4",
        "TPU v4",
        _SCALING_BOOK(
            2.5e10 / 4,
            "B/s",
            "DCN bandwidth is typically around `2.5e10` bytes / second per host",
            "No Google page gives v4's DCN: hwlib assumes a v4 host has the typical figure the scaling book states "
            "for TPU hosts, over its 4 chips (PaLM, Chowdhery et al. 2022, arXiv:2204.02311, Sec. 4: '3072 TPU v4 "
            "chips in each Pod attached to 768 hosts'). The same per-host figure is v5p's stated 50 Gb/s per chip "
            "on 4-chip hosts. PaLM's cross-pod gradient burst, '81 Tbps across all hosts' of 1536, is 53 Gb/s per "
            "host [derived], below it.",
        ),
        "Derived per chip from a per-host figure.",
    ),
    _dcn(
        "v5e",
        "TPU v5e",
        _V5E(
            6.4e12 / 8 / 256,
            "B/s",
            "| TPU Pod size | 256 chips | ... | Data center network bandwidth per Pod | 6.4 Tbps |",
            "6.4 Tbps over a Pod's 256 chips: 25 Gb/s per chip [derived]. An older revision of the page gives the "
            "same: 'Per-host NIC configuration | 2 x 100 Gbps NIC' for 'Chips per host | 8'.",
        ),
        _LINE_RATE,
    ),
    _dcn("v5p", "TPU v5p", _TPU7X(50 * GBIT, "B/s", _PER_CHIP, "v5p column."), _LINE_RATE),
    _dcn("v6e", "TPU v6e", _TPU7X(100 * GBIT, "B/s", _PER_CHIP, "v6e column."), _LINE_RATE),
    _dcn(
        "tpu7x",
        "TPU7x",
        _TPU7X(
            100 * GBIT,
            "B/s",
            _PER_CHIP,
            "TPU7x column. Google's GKE page (https://docs.cloud.google.com/kubernetes-engine/docs/concepts/"
            "tpu-ironwood?hl=ja): '各 Ironwood(TPU7x)仮想マシン(VM)には、4 つのチップと 2 つの NIC が含まれています' "
            "(each VM holds four chips and two NICs).",
        ),
        _LINE_RATE,
    ),
)
"""The DCN of each TPU generation, per chip per direction."""

V5P_MULTISLICE_CHIPS = _V5P(
    18432,
    "chips",
    "单切片训练最多支持 6144 个芯片。您可以使用多切面扩容到最多 18432 个芯片。",
    "'Single-slice training supports up to 6144 chips. You can scale up to 18432 chips with Multislice': three "
    "6144-chip slices. The stored English copies predate the sentence; no other generation's page states a limit.",
)
"""The most v5p chips one Multislice job may use."""
