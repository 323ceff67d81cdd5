"""More GPUs: NVIDIA's L4, L40S, H100 PCIe and H20, AMD's MI325X and MI355X, as their datasheets, product pages and
ROCm docs describe them (gathered with the others in ``vendor_chips``). Values in plain SI units (see
``vendor_chips``); dense peaks only. Chapter :ref:`ch-rooflines` and the hardware appendix.
"""

from __future__ import annotations

from hwlib.data.records import Chip, cite
from hwlib.data.vendor_notes import BIDIRECTIONAL, SPARSE, THIRD_PARTY_REPORT, third_party
from hwlib.units import GB, MB, PETA, TB, TERA, GiB, MiB

_READ = "2026-12-06"


def _smi(mib: int, where: str, quoted: str, note: str = ""):
    """A capacity nvidia-smi printed in a public repository file (the search index's file id in ``where``)."""
    return cite(f"nvidia-smi output in a public repository file ({where})", _READ)(
        mib * MiB, "B", quoted, f"{mib} MiB = {mib * MiB / GB:.2f} GB. {note} {THIRD_PARTY_REPORT}".replace("  ", " ")
    )


# --- NVIDIA ---------------------------------------------------------------------------

_L4_PAGE = cite("NVIDIA L4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/l4/", _READ)
_L4_TP = third_party(
    "a copy of the datasheet hosted by Cisco (cisco.com/.../nvidia-l4-gpu.pdf: 'BFLOAT16 Tensor Core 242 teraFLOPS* "
    "FP8 Tensor Core 485 teraFLOPs*') and stas00/ml-engineering's notes quoting the page ('24 GB, 300 GB/s, "
    '"485 teraFLOPs" FP8 and "242 teraFLOPS" BF16 with sparsity ... 72 W\')'
)
_L40S_PAGE = cite("NVIDIA L40S GPU datasheet, https://www.nvidia.com/en-us/data-center/l40s/", _READ)
_L40S_TP = third_party(
    'a repository note quoting the page (\'48 GB GDDR6 ECC, 864 GB/s, "BFLOAT16 Tensor Core: 362.05 | 733*" '
    "(* with sparsity), \"FP8 Tensor Core: 733 | 1,466*\" ... 350 W') and stas00/ml-engineering's TFLOPS table "
    "(L40S bf16 362, fp8 733, dense)"
)
_L40S_DENSE = "The page prints the dense figure, then the with-sparsity one (twice it)."
_H100_DATASHEET = cite(
    "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe column), "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet",
    _READ,
)
_H100_PCIE_TP = third_party(
    "copies of the datasheet's table ('H100 PCIe | ... 1,513 teraFLOPS* | 1,513 teraFLOPS* | 3026 teraFLOPS* | "
    "... 80GB HBM2e | 2TB/s'; * with sparsity) and stas00/ml-engineering's TFLOPS table (H100 PCIe bf16 756, "
    "fp8 1513, dense)"
)
_H100_PCIE_BRIEF = cite(
    "NVIDIA H100 PCIe Product Brief PB-11133-001_v02 (Nov 2022); third-party copy on manuals.plus "
    "(research/costs/power.csv, S-H100PCIE-PB)",
    _READ,
)
_H20_TP = cite(
    "Third-party spec summaries only (NVIDIA publishes no H20 page): willitrunai.com/gpus/h20-96gb ('96 GB HBM3 — "
    "4,000 GB/s bandwidth', '148 TFLOPS FP16 ... / 296 INT8 TOPS', 'NVLink 4.0 (900 GB/s)', '400W TDP'); a "
    "repository table ('H20 | Hopper (China-export) | 96GB HBM3 | 4.0 TB/s | 148 | 296'); zangshuxian.com "
    "('H20的FP16稠密算力为148TFLOPS')",
    _READ,
)
_H20_NOTE = "No vendor page: NVIDIA did not publish H20 specifications; third-party figures, dense."

# --- AMD ------------------------------------------------------------------------------

_ROCM_SPECS = cite("https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html", _READ)
_AMD_MI325X = cite("https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html", _READ)
_AMD_MI355X = cite("https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html", _READ)
_ML_ENG = (
    "stas00/ml-engineering compute/accelerator/README.md (TFLOPS table, AMD's dense figures, citing the "
    "AMD product page)"
)
_MI355X_MLPERF = cite(
    "AMD's MLPerf Inference v5.1 system description, mlcommons/inference_results_v5.1, "
    "open/AMD/systems/8xMI355X_2xEPYC_9575F.json",
    _READ,
)
_MI325X_SAME_COMPUTE = (
    "Same CDNA 3 compute as the MI300X (304 CUs at 2100 MHz peak engine clock), so the same peaks as ROCm's MI300X "
    f"table. {third_party(_ML_ENG + ': MI325X fp16 1300, bf16 1300, fp8 2610; MI325X is the same compute as MI300X')}"
)
_CDNA_L2 = (
    "Total of the eight XCDs' 4 MiB L2 caches; the 256 MiB Infinity Cache ('L3 Cache (MiB): 256' in the same "
    "table) is not counted."
)
_NO_FABRIC = (
    "No interconnect stored: AMD quotes Infinity Fabric as a per-link peak and a link count rather than a "
    "per-GPU total (as for the MI300X)."
)

MORE_GPUS: tuple[Chip, ...] = (
    Chip(
        key="l4",
        name="L4",
        vendor="NVIDIA",
        source="vendor",
        hbm=_L4_PAGE(24 * GB, "B", "24GB", "GDDR6, not HBM; NVIDIA's GB, stored as printed, 24e9 B. " + _L4_TP),
        hbm_visible=_smi(23034, "index id 49087902293", "NVIDIA L4 ... 11W /   72W |       0MiB /  23034MiB"),
        hbm_bandwidth=_L4_PAGE(300 * GB, "B/s", "300GB/s", "GDDR6 bandwidth. " + _L4_TP),
        peak_flops={
            "fp32": _L4_PAGE(30.3 * TERA, "FLOP/s", "30.3 teraFLOPs", "Non-tensor FP32, dense. " + _L4_TP),
            "tf32": _L4_PAGE(120 * TERA / 2, "FLOP/s", "120 teraFLOPS*", SPARSE),
            "bf16": _L4_PAGE(242 * TERA / 2, "FLOP/s", "242 teraFLOPS*", f"{SPARSE} Derived: 121e12. {_L4_TP}"),
            "fp16": _L4_PAGE(242 * TERA / 2, "FLOP/s", "242 teraFLOPS*", SPARSE),
            "fp8": _L4_PAGE(485 * TERA / 2, "FLOP/s", "485 teraFLOPs*", f"{SPARSE} Derived: 242.5e12. {_L4_TP}"),
            "int8": _L4_PAGE(485 * TERA / 2, "FLOP/s", "485 TOPs*", SPARSE),
        },
        tdp=_L4_PAGE(72.0, "W", "72W", "Max thermal design power of the low-profile PCIe card. " + _L4_TP),
        aliases=("NVIDIA L4", "L4 Tensor Core", "L4-24GB"),
        note="Ada Lovelace PCIe card with 24 GB of GDDR6 (not HBM; stored in the hbm field all the same). "
        "No NVLink: the card talks to its peers over PCIe Gen4, so no interconnect is stored. On-chip L2 "
        "not sourced.",
    ),
    Chip(
        key="l40s",
        name="L40S",
        vendor="NVIDIA",
        source="vendor",
        hbm=_L40S_PAGE(
            48 * GB, "B", "48GB GDDR6 with ECC", "GDDR6; NVIDIA's GB, stored as printed, 48e9 B. " + _L40S_TP
        ),
        hbm_visible=_smi(46068, "index id 53425348813", "NVIDIA L40S ... 22W / 350W |       0MiB / 46068MiB"),
        hbm_bandwidth=_L40S_PAGE(864 * GB, "B/s", "864GB/s", "GDDR6 bandwidth. " + _L40S_TP),
        peak_flops={
            "fp32": _L40S_PAGE(91.6 * TERA, "FLOP/s", "91.6 teraFLOPS", "Non-tensor FP32, dense."),
            "tf32": _L40S_PAGE(183 * TERA, "FLOP/s", "183 | 366*", _L40S_DENSE),
            "bf16": _L40S_PAGE(362.05 * TERA, "FLOP/s", "362.05 | 733*", f"{_L40S_DENSE} {_L40S_TP}"),
            "fp16": _L40S_PAGE(362.05 * TERA, "FLOP/s", "362.05 | 733*", _L40S_DENSE),
            "fp8": _L40S_PAGE(733 * TERA, "FLOP/s", "733 | 1,466*", f"{_L40S_DENSE} {_L40S_TP}"),
            "int8": _L40S_PAGE(733 * TERA, "FLOP/s", "733 | 1,466*", _L40S_DENSE),
        },
        tdp=_L40S_PAGE(350.0, "W", "350W", "Max power consumption of the dual-slot PCIe card. " + _L40S_TP),
        aliases=("NVIDIA L40S", "L40S-48GB"),
        note="Ada Lovelace PCIe card with 48 GB of GDDR6 (not HBM; stored in the hbm field all the same). No "
        "NVLink: peers over PCIe Gen4, so no interconnect is stored. On-chip L2 not sourced.",
    ),
    Chip(
        key="h100-pcie",
        name="H100-PCIe",
        vendor="NVIDIA",
        source="vendor",
        hbm=_H100_DATASHEET(80 * GB, "B", "80GB", "H100 PCIe, HBM2e; NVIDIA's GB, stored as printed. " + _H100_PCIE_TP),
        hbm_visible=_smi(81920, "index id 9934846536", "NVIDIA H100 PCIe ... 73W /  350W |   1024MiB /  81920MiB"),
        hbm_bandwidth=_H100_DATASHEET(
            2 * TB, "B/s", "2TB/s", "H100 PCIe column (the SXM's is 3.35TB/s). " + _H100_PCIE_TP
        ),
        peak_flops={
            "fp32": _H100_DATASHEET(51 * TERA, "FLOP/s", "51 teraFLOPS", "Non-tensor FP32, dense."),
            "tf32": _H100_DATASHEET(756 * TERA / 2, "FLOP/s", "756 teraFLOPS*", SPARSE),
            "bf16": _H100_DATASHEET(
                1513 * TERA / 2, "FLOP/s", "1,513 teraFLOPS*", f"{SPARSE} Derived: 756.5e12. {_H100_PCIE_TP}"
            ),
            "fp16": _H100_DATASHEET(1513 * TERA / 2, "FLOP/s", "1,513 teraFLOPS*", SPARSE),
            "fp8": _H100_DATASHEET(
                3026 * TERA / 2, "FLOP/s", "3,026 teraFLOPS*", f"{SPARSE} Derived: 1513e12. {_H100_PCIE_TP}"
            ),
            "int8": _H100_DATASHEET(3026 * TERA / 2, "FLOP/s", "3,026 TOPS*", SPARSE),
        },
        tdp=_H100_PCIE_BRIEF(
            350.0,
            "W",
            "350 W",
            "Max board power of the PCIe card; the datasheet's PCIe column prints '300-350W (configurable)'.",
        ),
        interconnect=_H100_DATASHEET(
            600 * GB,
            "B/s",
            "NVLink: 600GB/s",
            "Through an NVLink bridge joining two or four cards, not an NVSwitch domain; PCIe Gen5: 128GB/s "
            f"otherwise. {BIDIRECTIONAL} {_H100_PCIE_TP}",
        ),
        aliases=("H100 PCIe", "H100-PCIe-80GB", "H100 PCIe 80GB"),
        note="PCIe card (114 of GH100's SMs enabled) with the SXM's tensor cores at lower clocks and HBM2e. No source "
        "giving the PCIe card's own L2 was found, so none is stored (the SXM's 50 MB is not copied over).",
    ),
    Chip(
        key="h20",
        name="H20",
        vendor="NVIDIA",
        source="vendor",
        hbm=_H20_TP(96 * GB, "B", "96 GB HBM3", f"{_H20_NOTE} NVIDIA's GB, 96e9 B."),
        hbm_visible=_smi(
            97871,
            "index id 53244009727",
            "NVIDIA H20 ... 74W /  500W |       4MiB /  97871MiB",
            "The same card's power cap reads 500 W, above the 400 W TDP third parties quote.",
        ),
        hbm_bandwidth=_H20_TP(4 * TB, "B/s", "4,000 GB/s", _H20_NOTE),
        peak_flops={
            "fp32": _H20_TP(44 * TERA, "FLOP/s", "FP32为44TFLOPS", _H20_NOTE),
            "tf32": _H20_TP(74 * TERA, "FLOP/s", "TF32为74TFLOPS", _H20_NOTE),
            "bf16": _H20_TP(148 * TERA, "FLOP/s", "148 TFLOPS FP16", f"{_H20_NOTE} BF16 taken at the FP16 rate."),
            "fp16": _H20_TP(148 * TERA, "FLOP/s", "148 TFLOPS FP16", _H20_NOTE),
            "fp8": _H20_TP(296 * TERA, "FLOP/s", "H20 | ... | 148 | 296", f"{_H20_NOTE} The table's FP8 column."),
            "int8": _H20_TP(296 * TERA, "FLOP/s", "296 INT8 TOPS", _H20_NOTE),
        },
        on_chip=cite("https://ke60.top/article/1471031.html (third-party H20 memory article)", _READ)(
            60 * MB, "B", "60MB of L2 cache", f"{_H20_NOTE} NVIDIA's MB as the page writes it, 60e6 B."
        ),
        tdp=_H20_TP(400.0, "W", "400W TDP", _H20_NOTE),
        interconnect=_H20_TP(900 * GB, "B/s", "NVLink 4.0 (900 GB/s)", f"{_H20_NOTE} {BIDIRECTIONAL}"),
        aliases=("NVIDIA H20", "H20-96GB"),
        note="China-export Hopper part (78 SMs by third-party reports): H100-class memory and NVLink, about 15 % "
        "of its dense compute. Every number is third-party; NVIDIA published no H20 datasheet.",
    ),
    # --- AMD ---
    Chip(
        key="mi325x",
        name="MI325X",
        vendor="AMD",
        source="vendor",
        hbm=_ROCM_SPECS(
            256 * GiB,
            "B",
            "VRAM (GiB): MI325X | CDNA3 | gfx942 | 256",
            "The table's VRAM (GiB) column; AMD's product page writes '256 GB' HBM3E.",
        ),
        hbm_bandwidth=_AMD_MI325X(
            6 * TB,
            "B/s",
            "6.0 TB/s",
            "Peak HBM3E bandwidth. "
            + third_party(
                "docs.vultr.com's ROCm inference cookbook ('MI325X | 256 GB HBM3E | 6.0 TB/s', 'Specifications from "
                "AMD MI325X product page')"
            ),
        ),
        peak_flops={
            "fp32": _AMD_MI325X(163.4 * TERA, "FLOP/s", "163.4", _MI325X_SAME_COMPUTE),
            "tf32": _AMD_MI325X(653.7 * TERA, "FLOP/s", "653.7", _MI325X_SAME_COMPUTE),
            "bf16": _AMD_MI325X(1307.4 * TERA, "FLOP/s", "1307.4", _MI325X_SAME_COMPUTE),
            "fp16": _AMD_MI325X(1307.4 * TERA, "FLOP/s", "1307.4", _MI325X_SAME_COMPUTE),
            "fp8": _AMD_MI325X(2614.9 * TERA, "FLOP/s", "2614.9", _MI325X_SAME_COMPUTE),
            "int8": _AMD_MI325X(2614.9 * TERA, "FLOP/s", "2614.9", _MI325X_SAME_COMPUTE),
        },
        on_chip=_ROCM_SPECS(32 * MiB, "B", "L2 Cache (MiB): 32 (4 per XCD)", _CDNA_L2),
        tdp=_AMD_MI325X(
            1000.0,
            "W",
            "1000W",
            "Peak total board power of the OAM module. "
            + third_party(
                "stas00/ml-engineering's MAMF table (MI325X run noted '1000W'); AMD's MLPerf v5.0 system files "
                "name the part 'AMD Instinct MI325X 256GB HBM3E' without a wattage"
            ),
        ),
        aliases=("Instinct MI325X", "AMD Instinct MI325X", "MI325X 256GB HBM3E"),
        note=_NO_FABRIC,
    ),
    Chip(
        key="mi355x",
        name="MI355X",
        vendor="AMD",
        source="vendor",
        hbm=_ROCM_SPECS(
            288 * GiB,
            "B",
            "VRAM (GiB): MI355X | CDNA4 | gfx950 | 288",
            "The table's VRAM (GiB) column (seen in the ROCm 7.13 preview copy of the page); AMD's product page and "
            "MLPerf system files write '288 GB' HBM3E.",
        ),
        hbm_bandwidth=_AMD_MI355X(
            8 * TB,
            "B/s",
            "8 TB/s",
            "Peak HBM3E bandwidth. "
            + third_party("tomshardware.com ('288GB HBM3E memory that will offer up to 8 TB/s of bandwidth')"),
        ),
        peak_flops={
            "fp32": _AMD_MI355X(157.3 * TERA, "FLOP/s", "157.3", third_party(_ML_ENG)),
            "bf16": _AMD_MI355X(
                2516.6 * TERA,
                "FLOP/s",
                "2.5 PFLOPS",
                "Dense BF16 matrix. Stored at the unrounded 2400 MHz x 1024 matrix cores x 512 FMA x 2 = 2516.6e12 "
                "(derived); AMD prints it to two digits and a 'with Structured Sparsity' figure at twice it. "
                + third_party(_ML_ENG),
            ),
            "fp16": _AMD_MI355X(2516.6 * TERA, "FLOP/s", "2.5 PFLOPS", "Dense; as bf16. " + third_party(_ML_ENG)),
            "fp8": _AMD_MI355X(
                5033.2 * TERA,
                "FLOP/s",
                "5 PFLOPS",
                "Dense OCP-FP8 matrix, twice bf16 (derived 5033.2e12); AMD's 10.1 PFLOPS is with sparsity. AMD's "
                "ISSCC 2026 paper: 'five petaflops' of FP8. " + third_party(_ML_ENG),
            ),
            "fp4": _AMD_MI355X(
                10.1 * PETA,
                "FLOP/s",
                "10.1 PFLOPS",
                "Dense MXFP4 (no sparsity qualifier on AMD's page). " + third_party(_ML_ENG),
            ),
        },
        on_chip=_ROCM_SPECS(32 * MiB, "B", "L2 Cache (MiB): 32 (4 per XCD)", _CDNA_L2),
        tdp=_MI355X_MLPERF(
            1400.0,
            "W",
            '"hw_notes": "MI355X TGP 1400W"',
            "Total graphics power of the liquid-cooled OAM module (the MI350X is the same part at 1000 W).",
        ),
        aliases=("Instinct MI355X", "AMD Instinct MI355X", "MI355X 288GB HBM3e"),
        note=f"CDNA 4, 256 CUs. {_NO_FABRIC}",
    ),
)
"""NVIDIA's and AMD's GPUs beyond ``vendor_gpus``' first ones."""
