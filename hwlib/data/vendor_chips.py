"""Chips as their vendors describe them: Google's TPU pages (``vendor_tpus``), NVIDIA's datasheets and AMD's
ROCm docs (``vendor_gpus``, more of them in ``vendor_more``), Intel's and AWS's accelerators (``vendor_other``), and
the notes they use.

Values are in plain SI units: bytes, bytes/s, dense FLOP/s, W. ``quoted`` keeps the text as
the page printed it, so that "GB" against "GiB" and per-direction against bidirectional stay
visible. Where a program sees a different capacity from the printed one, ``hbm_visible``
holds it with the device report it comes from. INT8 peaks are integer operations per second
(TOPS), kept under 'int8'. Rendered in the chapter :ref:`ch-rooflines` and the
hardware appendix.
"""

from __future__ import annotations

from hwlib.data.records import Chip
from hwlib.data.vendor_gpus import GPUS
from hwlib.data.vendor_more import MORE_GPUS
from hwlib.data.vendor_other import OTHER_ACCELERATORS
from hwlib.data.vendor_tpus import TPUS

CHIPS: tuple[Chip, ...] = (*TPUS, *GPUS, *MORE_GPUS, *OTHER_ACCELERATORS)
"""Every vendor chip record, TPUs first, then ``vendor_gpus``' and ``vendor_more``'s GPUs, then ``vendor_other``'s."""
