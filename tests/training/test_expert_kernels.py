"""How a run's routed experts run (hwlib/training/experts.py, ExpertKernel in hwlib/data/records/kernels.py):
capacity-padded einsum dispatch and a grouped matmul's own tiles, each worked by hand, and what they change in a
step (the forecast only) and in the measured TPU MoE runs."""

from __future__ import annotations

import dataclasses

import pytest

import hwlib as hw
from hwlib.data.records import ExpertKernel
from hwlib.training.experts import capacity_share, expert_kernel_share, tile_share
from hwlib.training.mesh import expert_split
from hwlib.training.plan import training_run_forecast

MIXTRAL, SCOUT, QWEN3 = hw.model("mixtral-8x7b"), hw.model("llama-4-scout"), hw.model("qwen3-235b-a22b")
V6E = hw.cluster("tpu-v6e")
MEGABLOX = ExpertKernel(tile=(512, 1024, 1024))


def test_capacity_padding_and_the_dispatch_and_combine_einsums_by_hand():
    # Mixtral 8x7B, S = 4,096, k = 2 of E = 8, f = 14,336, c = 1.25: C = ceil(4096 * 2 / 8) * 1.25 = 1,280 rows.
    padded = 8 * 1280 / (4096 * 2)  # 1.25: the experts compute E C rows where S k are real
    einsums = 2 * 8 * 1280 / (3 * 2 * 14336)  # dispatch and combine, 2 S E C d each, over 2 * 3 S k d f
    assert capacity_share(MIXTRAL, 1.25, 4096) == pytest.approx(1 / (padded + einsums), rel=1e-12)
    assert capacity_share(MIXTRAL, 1.25, 4096) == pytest.approx(0.672, abs=5e-4)
    # The buffer is a whole number of rows, at least the factor: 100 tokens give ceil(25) * 1.25 = 31.25 -> 31.
    assert capacity_share(MIXTRAL, 1.25, 100) == pytest.approx(1 / (8 * 31 / 200 + 2 * 8 * 31 / (6 * 14336)))
    assert capacity_share(MIXTRAL, 1.25, 1) == pytest.approx(1 / (8 * 1 / 2 + 2 * 8 / (6 * 14336)))
    plain = dataclasses.replace(MIXTRAL, mlp="gelu")  # two weight matrices an expert: the einsums weigh more
    assert capacity_share(plain, 1.25, 4096) == pytest.approx(1 / (padded + 2 * 8 * 1280 / (2 * 2 * 14336)))
    assert capacity_share(MIXTRAL, 2.0, 4096) < capacity_share(MIXTRAL, 1.25, 4096)


def test_a_grouped_matmul_computes_one_more_row_tile_per_expert_after_the_first_by_hand():
    # Llama 4 Scout's 65,536 routed rows over 16 experts, 512-row tiles: 128 tiles and 15 revisited ones.
    assert tile_share(SCOUT, (512, 1024, 1024), 65536, tp=1, ep=1) == pytest.approx(65536 / (143 * 512), rel=1e-12)
    # Expert parallelism leaves 16 / 4 experts a chip: 3 revisits.
    assert tile_share(SCOUT, (512, 1024, 1024), 65536, tp=1, ep=4) == pytest.approx(65536 / (131 * 512), rel=1e-12)
    # Rows not a whole number of tiles round up: 1,000 rows take 2 tiles, then 15 more.
    assert tile_share(SCOUT, (512, 1024, 1024), 1000, tp=1, ep=1) == pytest.approx(1000 / (17 * 512), rel=1e-12)


def test_inner_and_output_dimensions_round_up_to_their_tiles_by_hand():
    # Qwen3-235B's 1,536-wide experts in 1,024-wide tiles: up and gate (4,096 -> 1,536 columns) and down (1,536 deep)
    # each compute 2,048 where 1,536 are real; the rows fill their tiles (one expert, whole tiles).
    rows = 128 * 512
    single = dataclasses.replace(QWEN3, n_experts=1, experts_per_token=1)
    assert tile_share(single, (512, 1024, 1024), rows, tp=1, ep=1) == pytest.approx(0.75, rel=1e-12)
    # 512-wide output tiles fit 1,536 columns (up and gate whole) but not 768 of them under tensor parallelism 2.
    assert tile_share(single, (512, 1024, 512), rows, tp=1, ep=1) == pytest.approx(3 / (2 / 1 + 1 / 0.75), rel=1e-12)
    assert tile_share(single, (512, 1024, 512), rows, tp=2, ep=1) == pytest.approx(0.75, rel=1e-12)
    # The up and gate projections weigh two to the down projection's one.
    lopsided = tile_share(single, (512, 4096, 1024), rows, tp=1, ep=1)  # up's 1,536 columns round to 2,048; down's
    assert lopsided == pytest.approx(
        3 / (2 / 0.75 + 1 / (1536 * 4096 / (4096 * 4096))), rel=1e-12
    )  # 1,536 deep in 4,096


def test_no_kernel_or_a_dense_model_keeps_the_whole_rate_and_bad_kernels_are_refused():
    assert expert_kernel_share(None, MIXTRAL, 49152, 4096, 1, 1) == 1.0
    assert expert_kernel_share(ExpertKernel(), MIXTRAL, 49152, 4096, 1, 1) == 1.0
    assert expert_kernel_share(MEGABLOX, hw.model("llama-3-8b"), 49152, 4096, 1, 1) == 1.0
    assert expert_kernel_share(MEGABLOX, SCOUT, 65536, 8192, 1, 1) == tile_share(SCOUT, MEGABLOX.tile, 65536, 1, 1)
    # the rows are the routed copies: k = 2 of Mixtral's experts for each of 4,096 tokens
    assert expert_kernel_share(MEGABLOX, MIXTRAL, 4096, 4096, 1, 1) == tile_share(MIXTRAL, MEGABLOX.tile, 8192, 1, 1)
    with pytest.raises(TypeError, match="experts must be"):
        expert_kernel_share("megablox", SCOUT, 65536, 8192, 1, 1)
    for bad in (0, -1.0, True, "1.25"):
        with pytest.raises(ValueError, match="capacity_factor"):
            ExpertKernel(capacity_factor=bad)
    for bad in ((512, 1024), (512, 0, 1024), [512, 1024, 1024], (512.0, 1024, 1024)):
        with pytest.raises(ValueError, match="tile"):
            ExpertKernel(tile=bad)
    with pytest.raises(ValueError, match="not both"):
        ExpertKernel(capacity_factor=1.25, tile=(512, 1024, 1024))


def test_a_step_forecasts_its_experts_kernel_as_its_own_part_and_keeps_its_bound():
    mesh = hw.Mesh(fsdp=256)
    plain = hw.train_step(MIXTRAL, V6E, mesh, 256 * 12 * 4096, 4096, recompute="full")
    padded = hw.train_step(MIXTRAL, V6E, mesh, 256 * 12 * 4096, 4096, recompute="full", experts=ExpertKernel(1.25))
    share = capacity_share(MIXTRAL, 1.25, 4096)
    _, routed = expert_split(MIXTRAL, 1.0)
    routed_s = plain.forecast_parts_s["matmuls"] * routed  # the experts' time at the dropless rate
    assert plain.forecast_parts_s["expert kernels"] == 0.0
    assert padded.forecast_parts_s["expert kernels"] == pytest.approx(routed_s * (1 / share - 1), rel=1e-9)
    assert padded.forecast_parts_s["matmuls"] == pytest.approx(plain.forecast_parts_s["matmuls"], rel=1e-12)
    assert padded.time_s == plain.time_s and padded.mfu == plain.mfu  # the bound keeps dropless experts
    assert sum(padded.forecast_parts_s.values()) == pytest.approx(padded.forecast_time_s, rel=1e-12)
    dropless = hw.train_step(
        MIXTRAL,
        V6E,
        mesh,
        256 * 12 * 4096,
        4096,
        recompute="full",
        experts=ExpertKernel(1.25),
        efficiency=hw.Efficiency(expert_kernels=False),
    )
    assert dropless.forecast_parts_s["expert kernels"] == 0.0
    assert dropless.forecast_time_s == pytest.approx(plain.forecast_time_s, rel=1e-12)
    with pytest.raises(TypeError, match="experts must be"):
        hw.train_step(MIXTRAL, V6E, mesh, 256 * 12 * 4096, 4096, experts=1.25)
    with pytest.raises(TypeError, match="Efficiency.expert_kernels"):
        hw.Efficiency(expert_kernels="yes")


def test_the_tpu_moe_runs_carry_their_kernels_and_the_fit_takes_those_it_models():
    runs = {run.key: run for run in hw.training_runs()}
    mixtral, scout = runs["maxtext-v6e256-mixtral-8x7b"], runs["maxtext-v5p256-llama4-scout"]
    assert mixtral.experts == ExpertKernel(capacity_factor=1.25) and scout.experts == MEGABLOX
    assert mixtral.outside_model == "" == scout.outside_model
    assert runs["maxtext-v5p256-llama4-maverick"].outside_model and runs["maxtext-v5p1024-deepseek-v3"].outside_model
    as_dropless = dataclasses.replace(mixtral, experts=None)
    share = capacity_share(MIXTRAL, 1.25, 4096)
    assert training_run_forecast(mixtral) < training_run_forecast(as_dropless) * (1 - (1 - share) * 0.5)


def test_the_waterfall_of_a_capacity_padded_run_shows_its_experts_kernel():
    from hwlib.viz.forecast_figures import forecast_waterfall

    runs = {run.key: run for run in hw.training_runs()}
    label = "the experts' capacity padding and matmul tiles"
    assert forecast_waterfall(runs["maxtext-v6e256-mixtral-8x7b"]).loc[label, "seconds"] > 0
    assert forecast_waterfall(runs["moe-zoo-h100-qwen3-235b-a22b-tp4"]).loc[label, "seconds"] == 0
