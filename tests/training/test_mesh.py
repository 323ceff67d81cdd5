"""hw.Mesh, hw.train_step, the planner and every measured training run under its bound."""

import pytest

import hwlib as hw
from hwlib.training.plan import candidate_meshes, megatron_step_flops, training_run_bound

H100 = hw.cluster("hgx-h100-ndr")
V5P = hw.cluster("tpu-v5p")
LLAMA70 = hw.model("llama-3-70b")


def test_one_chip_step_is_its_compute():
    llama8 = hw.model("llama-3-8b")
    step = hw.train_step(llama8, H100, hw.Mesh(), 8 * 4096, 4096, recompute="none", usable_fraction=1.0)
    flops = llama8.flops_per_token(4096, training=True) * 8 * 4096
    assert step.time_s == pytest.approx(flops / H100.chip.peak("bf16"))
    assert step.mfu == pytest.approx(1.0) and step.comm_time_s == {} and step.bubble_time_s == 0
    full = hw.train_step(llama8, H100, hw.Mesh(), 8 * 4096, 4096, recompute="full")
    assert full.mfu == pytest.approx(flops / (flops + llama8.flops_per_token(4096) * 8 * 4096))


def test_groups_sit_on_the_fabric_their_stride_reaches():
    node = hw.group_topology(H100, 8, 1, 64)
    assert isinstance(node, hw.collectives.Switch) and node.bytes_per_s == H100.node_fabric.bytes_per_s
    across = hw.group_topology(H100, 8, 8, 64)
    assert across.bytes_per_s == H100.network.bytes_per_s
    mixed = hw.group_topology(H100, 16, 4, 64)
    assert mixed.inner.n_chips == 2 and mixed.outer.n_chips == 8
    cube = hw.group_topology(V5P, 64, 1, 64)
    assert cube.shape == (4, 4, 4) and all(cube.wraparound)
    tp = hw.group_topology(V5P, 4, 1, 128)
    assert tp.shape == (4,) and tp.wraparound == (True,)


def test_pipeline_bubble_and_tensor_parallel_cost():
    base = dict(model=LLAMA70, cluster=H100, global_batch_tokens=512 * 4096, seq_len=4096)
    pp = hw.train_step(mesh=hw.Mesh(dp=8, tp=8, pp=4), **base)
    micro = 512 // 8
    assert pp.bubble_time_s == pytest.approx(3 / micro * pp.compute_time_s)
    interleaved = hw.train_step(mesh=hw.Mesh(dp=8, tp=8, pp=4), interleave=4, **base)
    assert interleaved.bubble_time_s == pytest.approx(pp.bubble_time_s / 4)
    assert pp.comm_time_s["tp all-reduce"] > 0 == pp.exposed_comm_time_s["tp all-reduce"]  # hidden at the bound
    exposed_in_forecast = pp.forecast_parts_s["exposed communication"]
    assert exposed_in_forecast > pp.comm_time_s["tp all-reduce"]  # Megatron's layers run them between matmuls
    assert pp.comm_time_s["pp send/recv"] > 0


def test_fsdp_hides_behind_compute_above_the_threshold():
    mesh = hw.Mesh(fsdp=64)
    threshold = hw.fsdp_threshold_tokens(LLAMA70, H100, mesh, 512)
    small, large = (
        hw.train_step(LLAMA70, H100, mesh, tokens * 64, 512, usable_fraction=1.0) for tokens in (512, 16 * 512)
    )
    assert 512 < threshold < 16 * 512
    name = "fsdp all-gather + reduce-scatter"
    assert small.exposed_comm_time_s[name] > 0 and large.exposed_comm_time_s[name] == 0


def test_memory_splits_as_the_mesh_says():
    one = hw.train_step(LLAMA70, H100, hw.Mesh(dp=8, tp=8), 8 * 4096, 4096)
    sharded = hw.train_step(LLAMA70, H100, hw.Mesh(fsdp=8, tp=8), 8 * 4096, 4096)
    assert sharded.memory_parts["optimizer"] == pytest.approx(one.memory_parts["optimizer"] / 8)
    assert one.memory_parts["weights"] == pytest.approx(LLAMA70.params() * 2 / 8)
    assert not one.fits and "GiB usable" in one.reason and sharded.fits


def test_fsdp_holds_the_weights_it_keeps_gathered():
    name = "fsdp all-gather + reduce-scatter"
    kept = hw.train_step(LLAMA70, H100, hw.Mesh(fsdp=32, tp=8), 256 * 1024, 1024, 1024)  # an eighth: 17.6 GB
    again = hw.train_step(LLAMA70, H100, hw.Mesh(fsdp=256), 256 * 1024, 1024, 1024)  # all 141 GB: gathered twice
    eighth = LLAMA70.params() / 8 * 2 * (1 - 1 / 32)  # bf16, beside the chip's own shard
    assert kept.memory_parts["gathered weights"] == pytest.approx(eighth)
    assert kept.memory_per_chip_bytes == pytest.approx(sum(kept.memory_parts.values()))
    assert "gathered weights" not in again.memory_parts
    assert again.comm_time_s[name] == pytest.approx(1.5 * kept.comm_time_s[name], rel=0.01)  # 3 transfers, not 2


def test_no_measured_run_beats_its_bound():
    runs = hw.training_runs()
    assert sum(run.key.startswith("megatron") for run in runs) == 10 and len(runs) >= 15
    for run in runs:
        bound, step = training_run_bound(run)
        assert 0 < run.measured.value < bound, run.key
        assert step.n_chips == hw.Mesh(**run.mesh).n_chips
    table = hw.viz.training_check_table()
    assert (table["% of bound"] < 100).all()
    first = hw.training_runs()[0]
    flops = megatron_step_flops(512, 2048, 24, 2304, 51200)
    assert flops == pytest.approx(96 * 512 * 2048 * 24 * 2304**2 * (1 + 2048 / (6 * 2304) + 51200 / (16 * 24 * 2304)))
    assert first.model.params() == pytest.approx(1.7e9, rel=0.03)  # Table 1's parameter count from the shape


def test_planner_lists_every_mesh_with_a_reason():
    planned = hw.plan_training(LLAMA70, H100, 512 * 8192, 8192, 256)
    plan = [(p.mesh, p.step, p.reason) for p in planned.meshes]
    feasible = [(mesh, step) for mesh, step, reason in plan if step is not None and step.fits]
    assert [p.mesh for p in planned.feasible] == [mesh for mesh, _ in feasible]
    assert feasible and all(a[1].forecast_time_s <= b[1].forecast_time_s for a, b in zip(feasible, feasible[1:]))
    by_bound = [p.step.time_s for p in hw.plan_training(LLAMA70, H100, 512 * 8192, 8192, 256, by="bound").feasible]
    assert by_bound == sorted(by_bound) and len(by_bound) == len(feasible)
    assert all(mesh.n_chips == 256 for mesh, _, _ in plan)
    reasons = {reason for _, step, reason in plan if step is None or not step.fits}
    assert any("GiB usable" in reason for reason in reasons)
    table = planned.to_frame()
    assert table["fits"].iloc[0] and not table["fits"].iloc[-1] and table["why not"].iloc[-1]
    assert (table["forecast step (s)"].dropna() >= table["step (s)"].dropna()).all()


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.Mesh(tp=0), ValueError, "Mesh.tp must be a whole number >= 1"),
        (lambda: hw.Mesh(dp=2, ep=4), ValueError, "Mesh.ep=4 must divide dp x fsdp"),
        (lambda: hw.train_step(LLAMA70, H100, hw.Mesh(tp=3), 3 * 4096, 4096), ValueError, "does not divide the 64"),
        (lambda: hw.train_step(LLAMA70, H100, hw.Mesh(dp=3), 4 * 4096, 4096), ValueError, "does not split over"),
        (
            lambda: hw.train_step(LLAMA70, H100, hw.Mesh(ep=1, dp=2), 2 * 4096, 4096, recompute="some"),
            ValueError,
            "recompute must be one of",
        ),
        (lambda: hw.train_step(LLAMA70, H100, {"tp": 8}, 4096, 4096), TypeError, "mesh must be a Mesh"),
        (lambda: hw.train_step(LLAMA70, "hgx", hw.Mesh(), 4096, 4096), TypeError, "cluster must be a Cluster"),
        (lambda: hw.train_step(LLAMA70, V5P, hw.Mesh(fsdp=8192), 8192 * 4096, 4096), ValueError, "holds at most"),
        (
            lambda: hw.train_step(hw.model("llama-3-8b"), H100, hw.Mesh(dp=2, ep=2), 2 * 4096, 4096),
            ValueError,
            "needs a mixture-of-experts",
        ),
        (
            lambda: hw.train_step(LLAMA70, H100, hw.Mesh(dp=2), 4 * 4096, 4096, micro_batch_tokens=1000),
            ValueError,
            "must be whole sequences",
        ),
        (lambda: hw.group_topology("hgx", 8, 1, 64), TypeError, "cluster must be a Cluster"),
        (lambda: hw.group_topology(H100, 8.5, 1, 64), ValueError, "size must be a whole number"),
        (lambda: hw.group_topology(H100, 8, 1, [64]), TypeError, "n_chips must be one whole number"),
        (lambda: candidate_meshes(LLAMA70, H100, 256, "8192"), TypeError, "seq_len must be a real number"),
        (lambda: candidate_meshes("llama", H100, 256, 8192), TypeError, "model must be a ModelShape"),
        (lambda: megatron_step_flops(512, 2048, 24, -1, 51200), ValueError, "d must be > 0"),
        (
            lambda: hw.fsdp_threshold_tokens("llama", H100, hw.Mesh(fsdp=8), 4096),
            TypeError,
            "model must be a ModelShape",
        ),
        (lambda: hw.kv_copies(LLAMA70, 0), ValueError, "n_chips must be > 0"),
        (lambda: hw.kv_copies("llama", 8), TypeError, "model must be a ModelShape"),
    ],
)
def test_bad_input_is_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_the_new_clusters():
    nvl72 = hw.cluster("gb200-nvl72-ndr")
    assert nvl72.node_size == 72 and nvl72.node_fabric.bytes_per_s == hw.fabric("nvlink5").bytes_per_s
    inside = hw.group_topology(nvl72, 64, 1, 144)
    assert isinstance(inside, hw.collectives.Switch) and inside.n_chips == 64  # one NVLink domain
    v6e = hw.cluster("tpu-v6e")
    assert v6e.max_chips == 256 and v6e.node_fabric.latency_s == hw.literature.ICI_HOP_LATENCY.value
    slab = hw.group_topology(v6e, 16, 1, 256)
    assert slab.shape == (16,) and slab.wraparound == (False,)  # 2D slices taken without wraparound
    assert hw.group_topology(v6e, 256, 1, 256).shape == (16, 16)
    with pytest.raises(ValueError, match="not a slice size"):
        hw.group_topology(v6e, 2, 1, 2)


def test_megatron_bounds_stay_below_the_peak_when_counted_like_eq_3():
    peak = hw.chip("A100-80GB").peak("bf16")
    for run in hw.training_runs():
        if run.metric == "megatron_tflops":
            bound, _ = training_run_bound(run)
            assert bound < peak and run.causal is False
    llama8 = hw.model("llama-3-8b")
    causal, full = (hw.train_step(llama8, H100, hw.Mesh(), 4096, 4096, causal=c) for c in (True, False))
    assert full.compute_time_s > causal.compute_time_s
    with pytest.raises(TypeError, match="causal must be True or False"):
        hw.train_step(llama8, H100, hw.Mesh(), 4096, 4096, causal="yes")
    assert hw.fsdp_threshold_tokens(
        LLAMA70, H100, hw.Mesh(fsdp=256), 1024, recompute="full"
    ) < hw.fsdp_threshold_tokens(LLAMA70, H100, hw.Mesh(fsdp=256), 1024, recompute="none")
