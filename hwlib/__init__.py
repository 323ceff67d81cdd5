"""hwlib: the companion library of the book on ML-accelerator performance modelling.

Chapters use it as ``import hwlib as hw``. Every hardware number and every formula of the
book lives here once; the docstring of each function names the chapter that explains it.
"""

from hwlib.hardware import SOURCES, Chip, Sourced, chip, chips
from hwlib.publish import glue
from hwlib.roofline import (
    attainable_flops_per_s,
    elementwise_intensity,
    is_compute_bound,
    matmul_bytes,
    matmul_flops,
    matmul_intensity,
    ridge_point,
    roofline_time_s,
)
from hwlib.plotting import PALETTE, mark_kernel, plot_capacity_and_ridge, plot_roofline, use_book_style
from hwlib.tables import chip_table, provenance_table
from hwlib.units import (
    BYTE_UNITS,
    BYTES_PER_ELEMENT,
    GB,
    GIGA,
    MB,
    PB,
    PETA,
    TB,
    TERA,
    GiB,
    KiB,
    MiB,
    TiB,
    convert_bytes,
    dtype_bytes,
    format_bytes,
    format_bytes_per_s,
    format_flops,
    format_flops_per_s,
    format_seconds,
    kB,
)
from hwlib.widgets import RooflineExplorer

__version__ = "0.1.0"
