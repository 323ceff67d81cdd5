"""Inference: the lower bound on one decode step.

Each generated token reads every weight once (shared by the batch) and each sequence's whole
KV cache once, so a decode step takes at least (weight bytes + batch x KV bytes per sequence)
/ HBM bandwidth, with the bandwidths of ``n_chips`` chips adding when the model is sharded
over them: the bandwidth roof of Williams et al. 2009, applied as in Pope et al., "Efficiently
Scaling Transformer Inference", MLSys 2023, arXiv:2211.05102, Sec. 2. Compute time and
communication are left out here. Explained in the chapter "KV-cache precision".
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import Number, broadcast, non_negative, positive, scalar_or_array
from hwlib.data.records import Chip, require_chip
from hwlib.roofline import roofline_bound_s


def decode_step_time_s(weight_bytes: Number, kv_bytes_per_sequence: Number, batch: Number, chip: Chip,
                       n_chips: Number = 1) -> Number:
    """Lower bound on one decode step: (weight bytes + batch x KV bytes) / (n_chips x HBM bandwidth), in s.

    The bandwidth side of the roofline (``hw.roofline_time_s`` with no FLOPs), compute and
    communication left out. Chapter "KV-cache precision".
    """
    chip = require_chip(chip)
    weights, kv, batches, count = broadcast(
        weight_bytes=non_negative("weight_bytes", weight_bytes),
        kv_bytes_per_sequence=non_negative("kv_bytes_per_sequence", kv_bytes_per_sequence),
        batch=positive("batch", batch, integral=True),
        n_chips=positive("n_chips", n_chips, integral=True),
    )
    per_chip_bytes = (weights + batches * kv) / count
    return scalar_or_array(roofline_bound_s(np.zeros_like(per_chip_bytes), per_chip_bytes, chip))
