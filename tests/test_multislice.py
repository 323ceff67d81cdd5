"""Multislice: every published TPU slice shape, the data-centre network (DCN) between slices, groups placed across
slices, and PaLM 540B's run on two TPU v4 pods (hwlib.placement, hwlib.data.vendor_dcn, vendor_systems)."""

import dataclasses
import math
import re

import pytest

import hwlib as hw
from hwlib.collectives import Hierarchy, Switch, Torus
from hwlib.data import assumptions
from hwlib.data.records import Sourced
from hwlib.data.vendor_dcn import DCN_FABRICS
from hwlib.placement import multislice, scope_of
from hwlib.training.mesh import WIRE_BYTES, local_params
from hwlib.training.plan import training_run_bound, training_run_forecast
from hwlib.training.schedules import SPMD_SCHEDULES

V4 = hw.cluster("tpu-v4-multislice")
V5P = hw.cluster("tpu-v5p-multislice")
PALM = hw.model("palm-540b")
PALM_MESH = hw.Mesh(dp=2, fsdp=256, tp=12)


def _shapes(chip_key: str) -> dict[int, str]:
    plan = hw.deployment(hw.chip(chip_key))
    return dict(zip(plan.sizes, plan.topologies))


def test_every_published_slice_shape_is_listed_with_its_source():
    assert _shapes("tpu7x")[256] == "4x8x8"  # the shape Google's Ironwood training recipes use
    assert {4096: "16x16x16", 6144: "16x16x24", 8192: "16x16x32", 9216: "4x4x576"}.items() <= _shapes("tpu7x").items()
    assert {768: "8x8x12", 3072: "12x16x16", 3456: "12x12x24", 4096: "16x16x16"}.items() <= _shapes("v4").items()
    # the entries read before stay, each with its source: v5p is Google's table, 2D slices their pages' lists
    assert tuple(_shapes("v5p")) == (4, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144)
    assert _shapes("v5e") == _shapes("v6e") and tuple(_shapes("v6e").values())[-1] == "16x16"
    for plan in hw.deployments():
        for added in plan.added:
            assert isinstance(added, Sourced) and added.unit == "chips" and added.read_on == "2026-12-06"
            assert re.search(r"https?://", added.source) and added.quoted
            assert int(added.value) in plan.sizes
    assert {int(s.value) for s in hw.deployment(hw.chip("tpu7x")).added} == {256, 4096, 6144, 8192}
    with pytest.raises(ValueError, match="added must be Sourced chip counts among its sizes"):
        dataclasses.replace(hw.deployment(hw.chip("v4")), added=hw.deployment(hw.chip("tpu7x")).added)  # 6144


def test_the_dcn_of_each_generation_is_sourced_per_chip_and_direction():
    per_chip = {f.chip_keys[0]: f.bytes_per_s for f in DCN_FABRICS}
    assert per_chip == {"v4": 6.25e9, "v5e": 3.125e9, "v5p": 6.25e9, "v6e": 12.5e9, "tpu7x": 12.5e9}
    for fabric in DCN_FABRICS:
        assert fabric.kind == "scale-out" and fabric.directions == 1 and fabric.domain_chips is None
        assert fabric.latency is assumptions.DCN_STEP_LATENCY and fabric.latency_s == pytest.approx(2.7e-6)
        assert fabric.bandwidth.read_on == "2026-12-06" and fabric.bandwidth.quoted
        assert fabric not in hw.fabrics()  # the catalogue keeps ICI, NVLink and NICs; a cluster's dcn holds these
    assert all(per_chip[c.chip.key] == c.dcn.bytes_per_s for c in hw.clusters() if c.dcn is not None)


def test_multislice_clusters_hold_slices_of_the_ici_domain():
    assert [c.key for c in hw.clusters() if c.dcn is not None] == [
        "tpu-v4-multislice",
        "tpu-v5e-multislice",
        "tpu-v5p-multislice",
        "tpu-v6e-multislice",
        "tpu-7x-multislice",
    ]
    assert V5P.node_size == 6144 and V5P.max_chips == 18432 and V5P.network is None
    assert V4.node_size == 4096 and V4.max_chips is None  # no page states a v4 limit
    assert hw.clusters(chip=hw.chip("v4"))[0].key == "tpu-v4"  # a chip's first cluster stays its one slice
    assert hw.cluster("tpu-v4").dcn is None and hw.cluster("tpu-v4").max_chips == 4096
    assert multislice(V4, 6144) == (2, 3072)  # PaLM's two pods of 3,072 chips
    assert multislice(V4, 4096) == (1, 4096) and multislice(V5P, 18432) == (3, 6144)
    assert multislice(hw.cluster("tpu-v5e-multislice"), 1024) == (4, 256)


def test_a_group_across_slices_is_its_torus_joined_by_the_dcn():
    across = hw.group_topology(V4, 512, 12, 6144)  # 256 chips of each slice's 16x16 plane, two slices
    assert isinstance(across, Hierarchy) and across.where == "dcn" and scope_of(across) == "network"
    assert isinstance(across.inner, Torus) and across.inner.shape == (16, 16)
    assert isinstance(across.outer, Switch) and across.outer.n_chips == 2
    assert across.outer.bytes_per_s == V4.dcn.bytes_per_s and across.outer.latency_s == V4.dcn.latency_s
    pods = hw.group_topology(V4, 2, 3072, 6144)  # one chip per slice: the DCN alone
    assert isinstance(pods, Switch) and pods.where == "dcn" and pods.bytes_per_s == V4.dcn.bytes_per_s
    inside = hw.group_topology(V4, 256, 12, 6144)  # fsdp within one slice stays on its ICI
    assert isinstance(inside, Torus) and inside.where == "torus" and scope_of(inside) == "node"
    assert hw.group_topology(V4, 12, 1, 6144).shape == (12,)


def test_a_collective_across_slices_is_slower_than_within_one():
    n_bytes = 1e9
    within = hw.group_topology(V4, 2, 1536, 6144)  # two chips of one slice
    across = hw.group_topology(V4, 2, 3072, 6144)  # the same pair's peers in the two slices
    assert isinstance(within, Torus) and isinstance(across, Switch)
    assert hw.collective_time_s("all-reduce", n_bytes, across) > 5 * hw.collective_time_s("all-reduce", n_bytes, within)
    plane = hw.group_topology(V4, 256, 12, 6144)
    spread = hw.group_topology(V4, 512, 12, 6144)
    assert hw.collective_time_s("all-reduce", n_bytes, spread) > hw.collective_time_s("all-reduce", n_bytes, plane)


def test_a_step_on_two_slices_prices_its_dp_all_reduce_over_the_dcn():
    step = hw.train_step(PALM, V4, PALM_MESH, 2048 * 2048, 2048, recompute="full")
    grads = local_params(PALM, PALM_MESH) * WIRE_BYTES / PALM_MESH.fsdp
    two_chips = (2 - 1) / 2 * 2 * grads / V4.dcn.bytes_per_s + 2 * V4.dcn.latency_s  # a ring of two over the DCN
    assert step.comm_time_s["dp all-reduce"] == pytest.approx(two_chips)
    assert step.n_chips == 6144 and step.fits
    # the dp groups cross the DCN, fsdp and tp stay on each slice's ICI
    fsdp = hw.group_topology(V4, 256, 12, 6144)
    assert step.comm_time_s["dp all-reduce"] > hw.collective_time_s("all-reduce", grads, fsdp)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.train_step(PALM, V5P, hw.Mesh(fsdp=24576), 24576 * 2048, 2048), ValueError, "holds at most 18432"),
        (lambda: hw.group_topology(V5P, 2, 12288, 24576), ValueError, "holds at most 18432"),
        (
            lambda: hw.train_step(PALM, hw.cluster("tpu-v4"), PALM_MESH, 2048 * 2048, 2048),
            ValueError,
            "holds at most 4096",
        ),
        (lambda: hw.group_topology(hw.cluster("tpu-v4"), 2, 3072, 6144), ValueError, "no data-centre network"),
        (lambda: hw.group_topology(V4, 2, 2049, 4098), ValueError, "no whole number of equal TPU v4 slices"),
        (lambda: hw.group_topology(V4, 4, 3072, 6144), ValueError, "needs 12288 chips; n_chips=6144"),
        (lambda: hw.group_topology(V4, 2, 5000, 12288), ValueError, "does not tile slices of 4096 chips"),
        (lambda: hw.group_topology(V4, 512, 6, 6144), ValueError, r"does not tile the \(12, 16, 16\) slice"),
        (lambda: multislice("tpu-v4-multislice", 6144), TypeError, "cluster must be a Cluster"),
        (
            lambda: dataclasses.replace(hw.cluster("hgx-h100-ndr"), network=None, dcn=V4.dcn),
            ValueError,
            "node fabric must be a torus",
        ),
        (lambda: dataclasses.replace(V4, dcn=None, multislice_chips=V5P.multislice_chips), ValueError, "beside a dcn"),
        (lambda: dataclasses.replace(V4, dcn="dcn-v4"), TypeError, "dcn must be a Fabric record or None"),
    ],
)
def test_bad_input_names_the_problem(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_palm_540b_on_two_v4_pods_is_below_its_bound():
    (run,) = [run for run in hw.training_runs() if run.key == "palm-540b-6144-v4"]
    assert run.cluster_key == "tpu-v4-multislice" and math.prod(run.mesh.values()) == 6144
    bound, step = training_run_bound(run)
    measured = float(run.measured.value)
    assert measured == pytest.approx(238.3e3 / 6144)
    assert measured < bound < 1.7 * measured  # the bound brackets the run from above
    assert step.mfu == pytest.approx(6 / 8)  # every collective hidden: full recomputation's ceiling
    # how much of its model-parallel all-reduces (one per parallel layer and pass) the run hid is not published:
    # the forecast that hides them all (XLA's collective matmuls) and the one that hides none bracket it
    hidden, exposed = training_run_forecast(run), training_run_forecast(run, hw.Efficiency(best_overlap=False))
    assert exposed < measured < hidden < 1.25 * measured and exposed > 0.85 * measured
    # counted as the paper counts (the whole score matrix), the run's 238.3K tokens/s is its 46.2% MFU
    assert step.mfu * measured / bound == pytest.approx(0.462, abs=0.001)
    assert training_run_forecast(run) <= bound and step.forecast_mfu < step.mfu
    assert step.comm_time_s["dp all-reduce"] > 0 and run.outside_model  # out of the calibration's targets


def test_the_squeeze_joins_slices_over_the_dcn():
    one = hw.cluster_squeeze(hw.cluster("tpu-v5p"), 70e9, 6144)
    three = hw.cluster_squeeze(V5P, 70e9, 18432)
    assert three.allreduce_time_s > one.allreduce_time_s
    with pytest.raises(ValueError, match="at most 18432"):
        hw.cluster_squeeze(V5P, 70e9, 24576)


def test_maxtexts_2023_models_are_the_shapes_its_code_built():
    """MaxText's v5e table (2023): 16B, 32B, 64B and 128B from global_parameter_scale 16 to 128; the counts are the
    code's, T5 relative-position biases of (heads, 32) per layer included (the shape leaves them out)."""
    runs = {run.key: run for run in hw.training_runs() if run.key.startswith("maxtext-v5e-")}
    assert len(runs) == 24
    counts = {"16b": 16_274_101_248, "32b": 32_548_169_728, "64b": 64_760_784_896, "128b": 129_185_359_872}
    for size, count in counts.items():
        model = runs[f"maxtext-v5e-1x256-{size}"].model
        assert model.params() + 32 * model.n_heads * model.n_layers == count
        assert model.parallel_block and not model.causal and model.tied_embeddings and model.head_dim == 256


def test_maxtexts_multislice_runs_stay_below_their_bound_and_lose_little_over_the_dcn():
    runs = {run.key: run for run in hw.training_runs() if run.key.startswith("maxtext-v5e-")}
    for size in ("16b", "32b", "64b"):
        one, many = runs[f"maxtext-v5e-1x256-{size}"], runs[f"maxtext-v5e-32x256-{size}"]
        bound_one, step_one = training_run_bound(one)
        bound_many, step_many = training_run_bound(many)
        assert many.measured.value < one.measured.value < bound_one
        assert step_many.mesh == hw.Mesh(fsdp=256, dp=32) and step_many.n_chips == 8192
        assert step_many.comm_time_s["dp all-reduce"] > 0 == step_many.exposed_comm_time_s["dp all-reduce"]
        assert bound_many == pytest.approx(bound_one)  # the gradients' DCN all-reduce hides behind the backward
        assert not many.outside_model  # in the fit: v5e's matmuls at the JAX guide's 92 %, elementwise work fused


@pytest.mark.parametrize("slices", [2, 32])
def test_maxtexts_published_multislice_mesh_is_within_5_percent_of_the_planners_best(slices):
    """64B on 2 and 32 v5e-256 slices, 4 sequences of 2,048 per chip: FSDP in each slice, data parallelism across
    the DCN, full recomputation. A TPU pipeline is GPipe or circular (SPMD_SCHEDULES), which holds every
    micro-batch's activations: no pipeline escapes the recomputation. With XLA fusing the elementwise work into the
    matmuls, recomputation costs its forward FLOPs only, and the published mesh ties the planner's best."""
    (run,) = [run for run in hw.training_runs() if run.key == f"maxtext-v5e-{slices}x256-64b"]
    cluster = hw.cluster(run.cluster_key)
    tokens = run.global_batch_sequences * run.seq_len
    plan = hw.plan_training(run.model, cluster, tokens, run.seq_len, 256 * slices, causal=False)
    published = next(p for p in plan.meshes if p.mesh == hw.Mesh(fsdp=256, dp=slices))
    best = plan.feasible[0].step
    assert published.fits and published.step.recompute == "full"
    assert float(published.step.forecast_time_s / best.forecast_time_s) < 1.05
    piped = [p.step for p in plan.meshes if p.mesh.pp > 1 and p.step is not None]
    assert piped and all(step.schedule in SPMD_SCHEDULES for step in piped)


def test_the_planner_prefers_tensor_parallelism_to_recomputing_a_32b_model_on_v5e():
    """32B on 32 slices: tensor parallelism shards the activations enough to recompute nothing, which the forecast
    prices a quarter faster than MaxText's FSDP with full recomputation (whose measured step is faster than both
    forecasts: v5e's matmul efficiency is borrowed, hwlib.data.efficiencies)."""
    (run,) = [run for run in hw.training_runs() if run.key == "maxtext-v5e-32x256-32b"]
    cluster = hw.cluster(run.cluster_key)
    tokens = run.global_batch_sequences * run.seq_len
    plan = hw.plan_training(run.model, cluster, tokens, run.seq_len, 8192, causal=False)
    published = next(p for p in plan.meshes if p.mesh == hw.Mesh(fsdp=256, dp=32))
    best = plan.feasible[0].step
    assert published.fits and published.step.recompute == "full" and best.recompute == "none" and best.mesh.tp > 1
    assert 1.0 < float(published.step.forecast_time_s / best.forecast_time_s) < 8 / 6
