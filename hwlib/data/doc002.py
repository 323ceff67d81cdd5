"""Everything document 002 states, and nothing else: its GPUs, traffic constants, model and tables.

Document 002 is ``002_501c62d3c87c2a8c.txt`` (``backprop_memory_wall.py``), the
compute-to-commute script that the chapters :ref:`ch-moving-bytes` to :ref:`ch-batch-squeeze` reproduce. Each value
keeps the document's own spelling in ``quoted``. Where the
document is silent (HBM capacity) its records borrow the vendor's, and say so. Formulas
that use these numbers live in the topic modules; defaults there name these constants.
"""

from __future__ import annotations

from types import MappingProxyType

from hwlib.data.records import Chip, Cluster, Fabric, ModelShape, Scenario, Sourced, cite
from hwlib.data.vendor_chips import CHIPS as _VENDOR_CHIPS

FILE = "002_501c62d3c87c2a8c.txt"
"""The document's file name, the one place it is spelled."""


def _in(part: str) -> str:
    return f"{FILE} ({part})"


def _in_cite(part: str):
    return cite(_in(part))


_GPUS = cite(_in("GPUS"))
_TRAFFIC = cite(_in("section 3, traffic constants"))
_VENDOR = {record.key: record for record in _VENDOR_CHIPS}


def _gpu(
    key: str,
    name: str,
    *,
    peak: float,
    bw: float,
    l2: float,
    e_hbm: float,
    e_flop: float,
    p_static: float,
    tdp: float,
    aliases: tuple[str, ...] = (),
) -> Chip:
    return Chip(
        key=key,
        name=name,
        vendor="NVIDIA",
        source="doc002",
        hbm=_VENDOR[key].hbm,
        hbm_visible=_VENDOR[key].hbm_visible,
        hbm_bandwidth=_GPUS(bw, "B/s", f"bw={bw:g}"),
        peak_flops={"bf16": _GPUS(peak, "FLOP/s", f"peak={peak:g}")},
        on_chip=_GPUS(l2, "B", f"l2={l2:g}", "the L2 a GEMM blocks into"),
        tdp=_GPUS(tdp, "W", f"tdp={tdp:g}"),
        hbm_energy=_GPUS(e_hbm, "J/B", f"e_hbm={e_hbm:g}", "all-in: interface plus on-die transport"),
        flop_energy=_GPUS(
            e_flop, "J/FLOP", f"e_flop={e_flop:g}", "derived in the document as (TDP - static - HBM power) / peak"
        ),
        static_power=_GPUS(p_static, "W", f"p_static={p_static:g}", "idle/leakage power"),
        aliases=aliases,
        note="The document gives no HBM capacity; the vendor's is used.",
    )


CHIPS: tuple[Chip, ...] = (
    _gpu(
        "a100-80gb",
        "A100-80GB",
        peak=312e12,
        bw=2.039e12,
        l2=40e6,
        e_hbm=60e-12,
        e_flop=0.90e-12,
        p_static=60.0,
        tdp=400.0,
    ),
    _gpu(
        "a100-40gb",
        "A100-40GB",
        peak=312e12,
        bw=1.555e12,
        l2=40e6,
        e_hbm=60e-12,
        e_flop=0.90e-12,
        p_static=60.0,
        tdp=400.0,
    ),
    _gpu(
        "h100-sxm",
        "H100-SXM",
        peak=989e12,
        bw=3.35e12,
        l2=50e6,
        e_hbm=50e-12,
        e_flop=0.55e-12,
        p_static=90.0,
        tdp=700.0,
    ),
    _gpu(
        "b200",
        "B200",
        peak=2.25e15,
        bw=8.0e12,
        l2=126e6,
        e_hbm=45e-12,
        e_flop=0.33e-12,
        p_static=150.0,
        tdp=1000.0,
        aliases=("B200 (approx.)",),
    ),
)
"""The document's four GPUs (its ``GPUS`` dict), with its energy parameters."""

E_DATAPATH_A100 = _GPUS(
    0.10e-12,
    "J/FLOP",
    "e_dp=0.10e-12",
    "the A100's datapath-only energy per BF16 FLOP, stored but never used by the model",
)

TRAFFIC = MappingProxyType(
    {
        "b_w": _TRAFFIC(
            12.0,
            "B/param per micro-batch",
            "B_W_DEFAULT = 12",
            "bf16 weights read forward 2 + backward 2, fp32 gradient read-modify-write 8",
        ),
        "a": _TRAFFIC(
            200.0,
            "B/token/layer per unit d",
            "A_DEFAULT = 200",
            "inter-kernel activation traffic of a fused FlashAttention layer",
        ),
        "a_store": _TRAFFIC(
            34.0,
            "B/token/layer per unit d",
            "A_STORE = 34",
            "saved-activation capacity (Korthikanti et al. 2022), used only in Table 5's header",
        ),
        "b_opt": _TRAFFIC(
            30.0,
            "B/param per step",
            "B_OPT_DEFAULT = 30",
            "Adam update: the document names fp32 master + m + v read and written (24) and the bf16 copy "
            "written (2), 26 in all; the 30 also takes the fp32 gradient read (4), which it leaves unnamed",
        ),
        "b_ar": _TRAFFIC(
            4.0,
            "B/param per step",
            "B_AR_DEFAULT = 4",
            "ring all-reduce of bf16 gradients: 2 x 2 bytes per parameter per direction",
        ),
        "l2_fraction": _TRAFFIC(0.5, "1", "l2_frac=0.5", "share of the L2 that holds a GEMM's blocks"),
    }
)
"""The document's traffic constants, each with its unit and meaning."""

B_W = TRAFFIC["b_w"].value
"""b_w: weight-side HBM bytes per parameter per weight visit (12)."""
A = TRAFFIC["a"].value
"""a: inter-kernel activation HBM bytes per token per layer per unit d (200)."""
B_OPT = TRAFFIC["b_opt"].value
"""b_opt: HBM bytes per parameter of one Adam update (30)."""
B_AR = TRAFFIC["b_ar"].value
"""b_ar: bytes per parameter per direction of a ring all-reduce of bf16 gradients (4)."""
L2_FRACTION = TRAFFIC["l2_fraction"].value
"""Share of the on-chip memory that holds a GEMM's blocks (0.5)."""
BLOCK_ELEMENT_BYTES = 2.0
"""On-chip blocks hold bf16 elements (the document's ``Z = l2_frac * l2 / 2``)."""

D_MODEL = 4096
"""Hidden size d of Table 5's 7B-class model."""
N_LAYERS = 32
"""Layers L of Table 5's model."""
SEQ_LEN = 2048
"""Sequence length s of Table 5's model (tokens)."""
CAUSAL = False
"""The document's attention FLOPs count the whole s x s score matrix (12 s d T per layer in training), not the
causal half the book's models count (``hwlib.data.records.transformer_table``)."""
VOCAB = 50000
"""Vocabulary of Table 5's "+ embeddings (rough)" parameter count (Table 6 counts no embeddings)."""

MODEL = ModelShape(
    key="doc002-7b",
    name="document 002, 7B-class",
    n_layers=N_LAYERS,
    d_model=D_MODEL,
    n_heads=32,
    n_kv_heads=32,
    head_dim=D_MODEL // 32,
    d_ff=4 * D_MODEL,
    mlp="gelu",
    vocab=VOCAB,
    norm="none",
    norms_per_layer=0,
    causal=CAUSAL,
    head_flops=False,
    n_params=_in_cite("worked_example")(
        12 * D_MODEL**2 * N_LAYERS + 2 * VOCAB * D_MODEL,
        "parameters",
        "P = 12 * d * d * L + 2 * 50000 * d  # + embeddings (rough)",
        "The document's own count; it names no head count, so 32 heads of 128 "
        "(a 7B GPT's) are assumed, which changes no count it makes.",
    ),
    source=FILE,
    note="Table 5's model: 12 d^2 per layer (a GELU MLP of width 4d, multi-head attention, no biases "
    "or norms counted), untied embeddings of 50000 tokens, and the whole s x s score matrix counted.",
)
"""Table 5's 7B-class model as a ModelShape: its 12 d^2 L + 2 V d and 72 d^2 T come out exactly through it."""

TABLE3_WIDTHS = (512, 768, 1024, 2048, 4096, 8192, 12288)
"""Hidden sizes of Table 3 (T_min)."""
TABLE4_WIDTHS = (768, 1024, 2048, 4096, 12288)
"""Hidden sizes of Table 4 (the element-wise tax)."""
TABLE6_CHIP_COUNTS = (8, 64, 256, 1024)
"""Chip counts N of Table 6 (the batch-size squeeze)."""
FIGURE_WIDTHS = (768, 2048, 4096, 12288)
"""Panel (a)'s hidden sizes; panel (c) uses 4096."""
FIGURE_MODELS = ((768, "GPT-2 small"), (1600, "GPT-2 XL"), (4096, "7B / 13B"), (12288, "GPT-3 175B"))
"""Panel (b)'s marked widths and their labels."""

CRITICAL_BATCH = cite(_in("table_squeeze"))(
    1e6,
    "tokens",
    "Bcrit = 1e6",
    "Hard-coded, no source given. Kaplan et al.'s fit gives about this value at a WebText2 loss near 3 nats.",
)

_FABRIC_NOTE = "per-direction B/s for NVLink and one IB NIC"

FABRICS: tuple[Fabric, ...] = tuple(
    Fabric(
        key=f"{kind}-{value / 1e9:g}",
        name=f"{label} {value / 1e9:g} GB/s",
        kind=scale,
        source="doc002",
        bandwidth=_GPUS(value, "B/s", f"{kind}={value:g}", _FABRIC_NOTE),
        directions=1,
        chip_keys=keys,
        aliases=(kind,) if value in (300e9, 25e9) else (),
        note=f"Document 002's per-direction {label} for {', '.join(keys)}, assumed for every chip count.",
    )
    for kind, label, scale, value, keys in (
        ("nvlink", "NVLink", "scale-up", 300e9, ("a100-80gb", "a100-40gb")),
        ("nvlink", "NVLink", "scale-up", 450e9, ("h100-sxm",)),
        ("nvlink", "NVLink", "scale-up", 900e9, ("b200",)),
        ("ib", "IB HDR", "scale-out", 25e9, ("a100-80gb", "a100-40gb")),
        ("ib", "IB NDR", "scale-out", 50e9, ("h100-sxm", "b200")),
    )
)
"""The document's fabric bandwidths per GPU (its ``nvlink`` and ``ib`` fields), per direction."""

_A100 = CHIPS[0]
CLUSTERS: tuple[Cluster, ...] = (
    Cluster(
        "doc002-nvlink",
        "document 002: NVLink 300 GB/s",
        _A100,
        FABRICS[0],
        note="Table 6's first half: NVLink for every N, as if 1024 GPUs shared one NVLink domain.",
    ),
    Cluster(
        "doc002-ib",
        "document 002: IB HDR 25 GB/s",
        _A100,
        FABRICS[3],
        note="Table 6's second half: one flat ring over the NICs, even inside a node.",
    ),
)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("online, 1 token/step, 1 GPU", 1, 1, 1),
    Scenario("1 sequence (2048 tok)/step, 1 GPU", 2048, 1, 1),
    Scenario("1 seq/GPU, 8 GPUs NVLink (DP)", 2048, 1, 8, "scale-up"),
    Scenario("1 seq/GPU, 64 GPUs over IB (DP)", 2048, 1, 64, "scale-out"),
    Scenario("8 seq/GPU (grad-accum), 64 GPUs IB", 2048, 8, 64, "scale-out"),
    Scenario("64 seq/GPU (grad-accum), 64 GPUs IB", 2048, 64, 64, "scale-out"),
)
"""The six regimes of Table 5 (``worked_example``); NVLink is the scale-up fabric, IB the scale-out."""

_TABLE1 = cite(_in("Table 1, table_boundaries"))
TABLE1: tuple[tuple[str, Sourced], ...] = tuple(
    (item, _TABLE1(joules, "J", f"{joules:g}", note))
    for item, joules, note in (
        ("int8 add (datapath)", 8e-15, "1 fJ/bit (Dally 2023)"),
        ("BF16 FLOP, datapath only", 0.10e-12, "HMMA-class MAC, 45nm->7nm scaled"),
        ("BF16 FLOP, all-in on A100", 0.90e-12, "(400 W - 60 W static - 40 W HBM)/312 TFLOP/s"),
        ("1 byte moved 1 mm", 8 * 100e-15, "100 fJ/bit-mm"),
        ("1 byte across a 16 mm die", 8 * 1.6e-12, "= 1600 int8 adds (Dally's slide)"),
        ("1 byte from register file", 0.3e-12, "~40 fJ/bit incl. local wire"),
        ("1 byte from SMEM/L1 (192 KB)", 1.0e-12, "50 fJ/bit array + ~0.5 mm round trip"),
        ("1 byte from L2 (40 MB)", 12e-12, "~0.5 pJ/bit array + ~10-20 mm round trip"),
        ("1 byte from HBM2e (interface)", 40e-12, "5 pJ/bit access (Dally 2023)"),
        ("1 byte from HBM2e (all-in)", 60e-12, "+ ~25 mm on-die round trip"),
        ("1 byte from HBM2e (far corner)", 78e-12, "+ 48 mm round trip (Dally's 28 mm die)"),
    )
)
"""Table 1 as printed: item and the energy of one operation or one byte at that boundary."""

TABLE1_HBM_POWER = _TABLE1(
    40.0, "W", "40 W HBM", "the HBM power in the note on e_flop; the model's own e_hbm x bw is larger"
)
L2_ARRAY_ENERGY_PER_BIT = _TABLE1(0.5e-12, "J/bit", "~0.5 pJ/bit array", "a 40 MB L2's SRAM array, without wire")
ROUND_TRIP_MM = MappingProxyType(
    {
        "1 byte from SMEM/L1 (192 KB)": 0.5,
        "1 byte from L2 (40 MB)": 10.0,
        "1 byte from HBM2e (all-in)": 25.0,
        "1 byte from HBM2e (far corner)": 48.0,
    }
)
"""On-die wire (mm) each Table 1 note adds to the array or interface cost (the L2's is the low
end of the note's 10-20 mm)."""

ADAM_STATE_BYTES_PER_PARAM = 16.0
"""Table 5's header: "Adam mixed-precision state (16 B/param)"."""
