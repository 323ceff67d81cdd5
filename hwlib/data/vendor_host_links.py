"""The link between a GPU and its host's memory (PCIe, or NVLink-C2C on Grace superchips), per direction, as
NVIDIA's datasheets and product pages state it; read 2026-12-06.

``HOST_LINKS`` maps a chip's key (its PCIe link) or a cluster's key (a system whose GPUs reach their host another
way) to the rate in B/s each way. The vendors print the two directions together; each value is half of that.
Optimizer and activation offload (``hwlib.training.offload``) move their bytes at it. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from types import MappingProxyType

from hwlib.data.records import cite
from hwlib.units import GB

READ = "2026-12-06"
_BOTH_WAYS = "The datasheet's figure counts both directions; stored per direction, half of it."

_A100_DATASHEET = cite(
    "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/content/dam/en-zz/Solutions/"
    "Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
    READ,
)
_H100_DATASHEET = cite(
    "NVIDIA H100 Tensor Core GPU datasheet, https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-"
    "datasheet (H100 SXM column, Interconnect)",
    READ,
)
_H200_PAGE = cite("https://www.nvidia.com/en-us/data-center/h200/ (specifications, Interconnect)", READ)
_GH200_PAGE = cite("https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/", READ)
_GB200_PAGE = cite("https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (specifications)", READ)

A100_PCIE = _A100_DATASHEET(
    32 * GB, "B/s", "PCIe Gen4: 64GB/s", f"PCIe Gen4 x16 to the host, both A100 SXM4 sizes. {_BOTH_WAYS}"
)
H100_PCIE = _H100_DATASHEET(64 * GB, "B/s", "PCIe Gen5: 128GB/s", f"PCIe Gen5 x16 to the host. {_BOTH_WAYS}")
H200_PCIE = _H200_PAGE(64 * GB, "B/s", "PCIe Gen5: 128GB/s", f"PCIe Gen5 x16 to the host. {_BOTH_WAYS}")
GH200_C2C = _GH200_PAGE(
    450 * GB,
    "B/s",
    "NVLink-C2C ... 900GB/s",
    f"NVLink-C2C between the Grace CPU and the Hopper GPU of one superchip. {_BOTH_WAYS} No GH200 system is in "
    "the catalogue; give this rate to Offload(host_bytes_per_s=...) for one.",
)
GB200_C2C = _GB200_PAGE(
    450 * GB,
    "B/s",
    "NVLink-C2C ... 900GB/s",
    f"One Grace CPU joins two Blackwell GPUs over NVLink-C2C. {_BOTH_WAYS} The two GPUs share it when both move "
    "bytes at once; a bound gives each all of it, so that it stays a bound.",
)

HOST_LINKS = MappingProxyType(
    {
        "a100-40gb": A100_PCIE,
        "a100-80gb": A100_PCIE,
        "h100-sxm": H100_PCIE,
        "h200": H200_PCIE,
        "gb200-nvl72-ndr": GB200_C2C,
    }
)
"""A GPU's link to its host's memory per direction (B/s), by chip key (PCIe) or cluster key (NVLink-C2C)."""
