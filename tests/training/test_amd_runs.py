"""AMD Primus's MoE runs on MI355X (hwlib/data/training_runs_amd.py) and the cluster they ran on."""

import pytest

import hwlib as hw
from hwlib.data.training_runs_amd import RUNS
from hwlib.training.plan import training_run_bound

LITE = {  # micro-batch -> the bar's label value, Tokens/Sec/GPU
    1: 10734.6,
    2: 21028.2,
    4: 28063.1,
    8: 30359.5,
    12: 30444.3,
}


def test_every_run_quotes_its_bar_and_states_its_configuration():
    assert len(RUNS) == 6 and all(run in hw.training_runs() for run in RUNS)
    for run in RUNS:
        value = float(run.measured.value)
        assert f"{value:g}" in run.measured.quoted and run.measured.read_on == "2026-12-06"
        assert run.source.split(",")[0] == "AMD Primus" and "AMD-AGI/Primus" in run.measured.source
        assert (run.cluster_key, run.seq_len, run.dtype, run.recompute) == ("mi355x-node", 4096, "bf16", "none")
        assert run.metric == "tokens_per_s_per_chip" and run.mesh["ep"] == 8 and run.mesh["tp"] == 1
        assert "force" in run.note and "multi_latent_attention" in run.note
    lite = {run.micro_batch_sequences: run for run in RUNS if run.model.key == "deepseek-v2-lite"}
    assert {mbs: float(run.measured.value) for mbs, run in lite.items()} == LITE
    for mbs, run in lite.items():
        assert f"MBS{mbs}-Baseline" in run.measured.quoted
        assert dict(run.mesh) == {"tp": 1, "pp": 1, "cp": 1, "dp": 8, "ep": 8} and run.global_batch_sequences == 768
    (v2,) = (run for run in RUNS if run.model.key == "deepseek-v2")
    assert v2.measured.quoted == "Base-1F1B 1987.6" and float(v2.measured.value) == 1987.6
    assert dict(v2.mesh) == {"tp": 1, "pp": 4, "cp": 1, "dp": 8, "ep": 8}
    assert (v2.global_batch_sequences, v2.micro_batch_sequences, v2.schedule, v2.interleave) == (256, 1, "1f1b", 1)


def test_the_host_bound_micro_batches_stay_out_of_the_fit():
    for run in RUNS:
        assert bool(run.outside_model) == (run.micro_batch_sequences <= 2), run.key  # DeepSeek-V2's one included
    (v2,) = (run for run in RUNS if run.model.key == "deepseek-v2")
    floor = 4096 / LITE[1] / hw.model("deepseek-v2-lite").n_layers  # s a layer, forward and backward
    assert floor * hw.model("deepseek-v2").n_layers / v2.mesh["pp"] == pytest.approx(0.21, abs=0.01)  # its note
    # a micro-batch of 2 takes as long as one of 1: the floor the note names
    assert 2 * 4096 / LITE[2] == pytest.approx(4096 / LITE[1], rel=0.03)


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run.key)
def test_every_run_stays_below_its_bound(run):
    bound, step = training_run_bound(run)
    assert bound > float(run.measured.value)
    assert step.mesh.ep == 8 and step.micro_batches == run.global_batch_sequences // (
        run.micro_batch_sequences * run.mesh["dp"]
    )


def test_the_models_are_the_configs_as_run():
    lite, v2 = hw.model("deepseek-v2-lite"), hw.model("deepseek-v2")
    assert (lite.n_layers, lite.d_model, lite.n_heads, lite.n_experts, lite.experts_per_token) == (27, 2048, 16, 64, 6)
    assert (lite.d_ff_expert, lite.n_shared_experts, lite.mla.kv_lora_rank, lite.mla.q_lora_rank) == (
        1408,
        2,
        512,
        None,
    )
    assert (v2.n_layers, v2.d_model, v2.n_heads, v2.n_experts, v2.d_ff_expert) == (60, 5120, 128, 160, 1536)
    assert round(lite.params() / 1e9) == 16 and round(v2.params() / 1e9) == 236  # "16B", "236B total parameters"


def test_the_mi355x_node():
    node = hw.cluster("mi355x-node")
    assert node.chip is hw.chip("mi355x") and node.node_size == 8
    assert node.node_fabric is hw.fabric("infinity-fabric-mi355x") and node.network is hw.fabric("AINIC")
    assert node.node_fabric.bandwidth.value == 1075.2e9 and node.node_fabric.directions == 2
    assert node.node_fabric.bytes_per_s == 537.6e9  # 7 links x 76.8 GB/s each way
    assert "1075.2 GB/s" in node.node_fabric.bandwidth.quoted and "76.8GB/s" in node.node_fabric.bandwidth.quoted
    assert node.network.bytes_per_s == 50e9 and "400G AI NIC" in node.network.bandwidth.quoted
    assert node.node_fabric.domain_size.value == 8
