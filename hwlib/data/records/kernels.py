"""What a chip's kernels reach in practice: the record ``hwlib.data.efficiencies`` holds per chip; and how a measured
run's expert kernels run (``ExpertKernel``). Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from hwlib._checks import describe, one_of
from hwlib.data.records.quantities import Sourced
from hwlib.units import BYTES_PER_ELEMENT


@dataclass(frozen=True)
class KernelEfficiency:
    """What a chip's kernels reach in practice, as published measurements give it: the fraction of the dense peak
    large matmuls reach per dtype (``matmul``), the fraction of the bf16 peak attention kernels reach forward and
    backward (``attention``), and the output tile (rows, columns) and the number of tiles the chip runs at once
    (``parallel_tiles``: SMs, compute units, or 1 for a TPU core's MXUs taking tiles in turn) that set tile and wave
    quantization. ``overlap_slowdown``: how much longer compute kernels take while a collective runs beside them
    (0.189: 18.9 % longer), or None where no measurement applies. ``hides_collectives``: the source saying the
    chip's usual software hides collectives as the bound does ("": it does not). ``fuses_elementwise``: the source
    saying its usual compiler fuses a training step's elementwise work into the matmuls beside it, so that no
    elementwise kernel passes over the activations on its own ("": it does not). Fractions are Sourced, unit "1".
    Chapter :ref:`ch-forecast`.
    """

    chip_key: str
    matmul: Mapping[str, Sourced]
    attention: Sourced
    tile: tuple[int, int]
    parallel_tiles: Sourced
    overlap_slowdown: Sourced | None = None
    note: str = ""
    hides_collectives: str = ""
    fuses_elementwise: str = ""

    def __post_init__(self) -> None:
        for dtype in self.matmul:
            one_of("matmul dtype", dtype, BYTES_PER_ELEMENT)
        object.__setattr__(self, "matmul", MappingProxyType(dict(self.matmul)))
        for name, quantity in (("attention", self.attention), *self.matmul.items()):
            if not 0 < float(quantity.value) <= 1:
                raise ValueError(f"KernelEfficiency {self.chip_key}: {name} must be a fraction in (0, 1]")
        if self.overlap_slowdown is not None and not 0 <= float(self.overlap_slowdown.value) < 1:
            raise ValueError(f"KernelEfficiency {self.chip_key}: overlap_slowdown must be in [0, 1)")


@dataclass(frozen=True)
class ExpertKernel:
    """How a measured run's routed experts run, where not as one dropless grouped GEMM at the chip's tile
    (``hw.train_step(experts=...)``): ``capacity_factor`` c > 0 for capacity-padded einsum dispatch (None: dropless),
    or ``tile`` (rows, inner, columns) of a grouped matmul that tiles its own rows (None: the chip's tile). Priced by
    ``hwlib.training.experts``; chapter :ref:`ch-forecast`."""

    capacity_factor: float | None = None
    tile: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        factor = self.capacity_factor
        if factor is not None and (isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0):
            raise ValueError(f"ExpertKernel.capacity_factor must be a number > 0 or None, got {describe(factor)}")
        if self.tile is not None and (
            not isinstance(self.tile, tuple)
            or len(self.tile) != 3
            or not all(isinstance(size, int) and not isinstance(size, bool) and size > 0 for size in self.tile)
        ):
            raise ValueError(f"ExpertKernel.tile must be three whole numbers > 0 or None, got {describe(self.tile)}")
        if self.capacity_factor is not None and self.tile is not None:
            raise ValueError("ExpertKernel takes capacity_factor (einsum dispatch) or tile (grouped matmul), not both")
