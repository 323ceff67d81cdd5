"""How a step's routed experts run, where a run states it: the share of the chip's matmul rate their kernels keep.

By default an MoE's routed experts run dropless, as one grouped GEMM at the chip's own tile (``hw.train_step``).
Two other ways the measured runs use, each priced from its code and configuration (the forecast only; the bound
keeps the dropless experts at the peak):

* **capacity-padded einsums** (GShard, Lepikhin et al. 2020, arXiv:2006.16668; MaxText's ``dense_matmul`` with
  ``capacity_factor`` > 0): each sequence of S tokens gives every one of the E experts a buffer of
  C = ceil(S k / E) x c rows (c the capacity factor, at least c; MaxText ``generate_masks``), so the experts compute
  E C rows where k S are real, and two more einsums move the tokens into the buffers and back (dispatch
  ``BSM,BSEC -> EBCM`` and combine ``EBCM,BSEC -> BSM``): 2 S E C d FLOPs each against the experts' 2 m S k d f
  (m weight matrices of d x f: 3 for a gated MLP).
* **a grouped matmul with its own tile** (megablox's ``gmm`` on TPUs): the rows of all local experts, sorted by
  expert, are cut into tiles of t_m rows, and a tile that holds the first rows of an expert is computed once more
  for it ("tiles_m <= group_tiles.sum() <= tiles_m + num_groups - 1", MaxText/kernels/megablox/gmm.py at
  tpu-recipes-v0.1.3), so G local experts over R rows take ceil(R / t_m) + G - 1 tiles of work; the inner and
  output dimensions round up to their tiles (t_k, t_n).

Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

import math

from hwlib._checks import describe
from hwlib.data.records import ExpertKernel, ModelShape

GATED_MATRICES, PLAIN_MATRICES = 3, 2
"""Weight matrices of one expert: gate, up and down for a gated MLP; up and down otherwise."""


def _matrices(model: ModelShape) -> int:
    return GATED_MATRICES if model.mlp == "gated" else PLAIN_MATRICES


def capacity_share(model: ModelShape, capacity_factor: float, seq_len: int) -> float:
    """Share of the dropless experts' rate that capacity-padded einsum dispatch keeps: the real expert FLOPs over
    the padded experts' and the dispatch and combine einsums'. Chapter :ref:`ch-forecast`."""
    experts, chosen, width = model.n_experts, model.experts_per_token, model.d_ff_expert
    buffer = int(max(math.ceil(seq_len * chosen / experts) * capacity_factor, capacity_factor))
    padded = experts * buffer / (seq_len * chosen)
    einsums = 2.0 * experts * buffer / (_matrices(model) * chosen * width)
    return 1.0 / (padded + einsums)


def tile_share(model: ModelShape, tile: tuple[int, int, int], rows: float, tp: int, ep: int) -> float:
    """Share of the experts' work a grouped matmul with ``tile`` (rows, inner, columns) does usefully, for ``rows``
    routed token copies on one device, the experts split over ``ep`` ranks and their width over ``tp``: the row
    tiles' (one more for each local expert after the first) times the inner and output dimensions' rounding, FLOP-
    weighted over the up (and gate) and down projections. Chapter :ref:`ch-forecast`."""
    tile_rows, tile_inner, tile_columns = tile
    groups = max(model.n_experts // ep, 1)
    row_share = rows / ((math.ceil(rows / tile_rows) + groups - 1) * tile_rows)
    width, d = model.d_ff_expert / tp, model.d_model

    def rounded(inner: float, columns: float) -> float:
        return (inner * columns) / (
            math.ceil(inner / tile_inner) * tile_inner * math.ceil(columns / tile_columns) * tile_columns
        )

    up, down = _matrices(model) - 1, 1
    return row_share * (up + down) / (up / rounded(d, width) + down / rounded(width, d))


def expert_kernel_share(
    kernel: ExpertKernel | None, model: ModelShape, tokens: float, seq_len: int, tp: int, ep: int
) -> float:
    """The share of the chip's matmul rate ``kernel`` keeps for ``model``'s routed experts, ``tokens`` the tokens of a
    data-parallel rank's micro-batch (1 for None or a dense model). Chapter :ref:`ch-forecast`."""
    if kernel is not None and not isinstance(kernel, ExpertKernel):
        raise TypeError(f"experts must be an hwlib.data.records.ExpertKernel or None, got {describe(kernel)}")
    if kernel is None or not model.is_moe:
        return 1.0
    if kernel.capacity_factor is not None:
        return capacity_share(model, kernel.capacity_factor, seq_len)
    if kernel.tile is not None:
        rows = tokens * model.experts_per_token
        return tile_share(model, kernel.tile, rows, tp, ep)
    return 1.0
