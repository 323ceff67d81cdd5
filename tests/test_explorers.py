"""The explorers (hwlib.viz.explorers): built on one base, they follow every control quickly,
reject bad arguments clearly, report hwlib's own numbers, and run on every chip their model covers."""

from __future__ import annotations

import ast
import pathlib
import re

import ipywidgets as widgets
import numpy as np
import pytest

import hwlib as hw
from hwlib.data import doc002
from hwlib.viz.explorers import Explorer

UNSOLD = hw.custom_chip("unsold", peak_flops_per_s={"bf16": 1e15}, hbm_bytes_per_s=1e12, hbm_bytes=64e9)
"""A chip given inline, sold in no deployment size."""

A100 = hw.chip("A100-80GB", source="doc002")
H100 = hw.chip("H100-SXM", source="doc002")
V6E = hw.chip("TPU v6e")
DOC000 = hw.chips("doc000")

CLASSES = (
    hw.viz.RooflineExplorer,
    hw.viz.MemoryBudgetExplorer,
    hw.viz.KVCacheExplorer,
    hw.viz.ByteEnergyExplorer,
    hw.viz.StepIntensityExplorer,
    hw.viz.EnergyShareExplorer,
    hw.viz.RegimeExplorer,
    hw.viz.BatchSqueezeExplorer,
    hw.viz.CollectiveExplorer,
    hw.viz.ServingExplorer,
    hw.viz.TrainingExplorer,
    hw.viz.CostExplorer,
)
ENERGY_CLASSES = (hw.viz.ByteEnergyExplorer, hw.viz.EnergyShareExplorer, hw.viz.RegimeExplorer)
TIME_CLASSES = (hw.viz.RooflineExplorer, hw.viz.StepIntensityExplorer)
BUILD = {hw.viz.RegimeExplorer: {"n_chips": 64}}
"""Arguments that put an explorer where every control matters (the fabric needs more than one chip)."""
PICTURE_UNCHANGED = {
    (hw.viz.BatchSqueezeExplorer, "model size"),
    (hw.viz.MemoryBudgetExplorer, "sharding"),
    (hw.viz.CostExplorer, "PUE"),
    (hw.viz.CostExplorer, "grid"),
}
"""Controls that move only the summary: the squeeze's curve does not depend on the model size; where the
memory explorer's default (Llama 3 8B on a v5e) fits under no sharding, each shows the same one chip; the cost
explorer's picture draws dollars, which the facility's PUE and its grid do not change."""


EXPONENT = re.compile(r"\de[+-]\d")
"""A number printed as Python's repr prints it (1.5e+03): summaries print numbers for people (issue 36)."""


def explorer_of(cls: type) -> Explorer:
    return cls(**BUILD.get(cls, {}))


def other_value(control: widgets.ValueWidget) -> object:
    """A value of ``control`` other than its current one (an end of its range)."""
    if isinstance(control, widgets.FloatSlider):
        return control.max if control.value != control.max else control.min
    values = [option[1] if isinstance(option, tuple) else option for option in control.options]
    return values[-1] if control.value is not values[-1] and control.value != values[-1] else values[0]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_builds_with_defaults(cls):
    explorer = cls()
    assert isinstance(explorer, Explorer)
    assert explorer.image.value[:4] == b"\x89PNG"
    assert explorer.summary.value
    assert explorer.controls and all(control in vars(explorer).values() for control in explorer.controls)
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_control_updates_the_summary_and_the_picture(cls):
    for index in range(len(explorer_of(cls).controls)):
        explorer = explorer_of(cls)  # each control moved from the defaults
        control = explorer.controls[index]
        summary, picture = explorer.summary.value, explorer.image.value
        control.value = other_value(control)
        assert explorer.summary.value != summary, f"{control.description} left the summary as it was"
        if (cls, control.description) in PICTURE_UNCHANGED:
            assert explorer.image.value == picture
        else:
            assert explorer.image.value != picture, f"{control.description} left the picture as it was"
        assert explorer.image.value[:4] == b"\x89PNG"
        assert " us " not in explorer.summary.value and " us<" not in explorer.summary.value
        assert not EXPONENT.search(explorer.summary.value), f"{control.description}: {explorer.summary.value}"


def test_background_is_redrawn_only_when_its_key_changes():
    explorer = hw.viz.RooflineExplorer(chip=hw.chip("TPU v5e"))
    calls = []
    original = explorer.draw_background
    explorer.draw_background = lambda: (calls.append(1), original())
    first = explorer.image.value
    explorer.m.value = 1
    explorer.m.value = 1024
    assert calls == [] and explorer.image.value == first  # restored background, marker back in place
    explorer.chip.value = V6E
    assert len(calls) == 1
    explorer.dtype.value = "int8"
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.viz.RooflineExplorer(chip="TPU v5e"), TypeError, "chip must be a Chip record"),
        (lambda: hw.viz.RooflineExplorer(chips=["v5e"]), TypeError, "chips must be a non-empty sequence"),
        (
            lambda: hw.viz.RooflineExplorer(chips=DOC000, chip=hw.chip("H100-SXM")),
            ValueError,
            "not among the explorer's chips",
        ),
        (lambda: hw.viz.RooflineExplorer(m=1000), ValueError, "m must be a power of two"),
        (lambda: hw.viz.CollectiveExplorer(kind="broadcast"), ValueError, "kind must be one of"),
        (lambda: hw.viz.CollectiveExplorer(n_chips=3), ValueError, "n_chips must be one of"),
        (lambda: hw.viz.CollectiveExplorer(n_bytes=5e8), ValueError, "n_bytes must be one of 1e3"),
        (
            lambda: hw.viz.RooflineExplorer(chips=DOC000, chip=DOC000[0], dtype="fp8"),
            ValueError,
            "dtype must be one of",
        ),
        (lambda: hw.viz.MemoryBudgetExplorer(chip="TPU v5e"), TypeError, "chip must be a Chip record"),
        (lambda: hw.viz.MemoryBudgetExplorer(model="Llama 3 8B"), TypeError, "model must be a ModelShape record"),
        (
            lambda: hw.viz.MemoryBudgetExplorer(recipe="zero_mixed_adam"),
            TypeError,
            "recipe must be a TrainingRecipe record",
        ),
        (lambda: hw.viz.MemoryBudgetExplorer(seq_len=1000), ValueError, "seq_len must be a power of two"),
        (lambda: hw.viz.MemoryBudgetExplorer(model=hw.model("document 000, 7B")), ValueError, "d_model"),
        (lambda: hw.viz.MemoryBudgetExplorer(chips=[UNSOLD], chip=UNSOLD), KeyError, "no deployment sizes"),
        (lambda: hw.viz.MemoryBudgetExplorer(usable_fraction=0.2), ValueError, "usable_fraction must be"),
        (lambda: hw.viz.KVCacheExplorer(chip="H100-SXM"), TypeError, "chip must be a Chip record"),
        (lambda: hw.viz.KVCacheExplorer(models=["llama-3-8b"]), TypeError, "models must be a non-empty sequence"),
        (lambda: hw.viz.KVCacheExplorer(batch=3), ValueError, "batch must be a power of two"),
        (lambda: hw.viz.KVCacheExplorer(weight_dtype="fp16"), ValueError, "weight_dtype must be one of"),
        (lambda: hw.viz.KVCacheExplorer(chips=["v5e"]), TypeError, "chips must be a non-empty sequence"),
        (lambda: hw.viz.KVCacheExplorer(usable_fraction=0), ValueError, "usable_fraction must be > 0"),
        (lambda: hw.viz.StepIntensityExplorer(chip="A100-80GB"), TypeError, "chip must be a Chip record"),
        (lambda: hw.viz.StepIntensityExplorer(chips=[A100], chip=H100), ValueError, "not among the explorer's chips"),
        (lambda: hw.viz.StepIntensityExplorer(d=1000), ValueError, "d must be one of"),
        (lambda: hw.viz.EnergyShareExplorer(T=3), ValueError, "T must be one of"),
        (lambda: hw.viz.ByteEnergyExplorer(b_w=-1), ValueError, "b_w must be a number"),
        (lambda: hw.viz.ByteEnergyExplorer(a="x"), ValueError, "a must be a number"),
        (lambda: hw.viz.RegimeExplorer(chips=["A100"]), TypeError, "chips must be a non-empty sequence"),
        (lambda: hw.viz.RegimeExplorer(n_layers=0), ValueError, "n_layers must be > 0"),
        (lambda: hw.viz.RegimeExplorer(fabric="ib"), ValueError, "fabric must be one of"),
        (lambda: hw.viz.RegimeExplorer(n_chips=3), ValueError, "n_chips must be one of"),
        (lambda: hw.viz.BatchSqueezeExplorer(cluster="hgx-a100-hdr"), TypeError, "cluster must be a Cluster record"),
        (lambda: hw.viz.BatchSqueezeExplorer(clusters=["hgx-a100-hdr"]), TypeError, "clusters must be a non-empty"),
        (
            lambda: hw.viz.BatchSqueezeExplorer(clusters=hw.clusters()[:2], cluster=hw.cluster("hgx-h100-ndr")),
            ValueError,
            "not among the explorer's clusters",
        ),
        (lambda: hw.viz.BatchSqueezeExplorer(n_chips=3), ValueError, "n_chips must be one of"),
        (lambda: hw.viz.BatchSqueezeExplorer(n_params=7e9), ValueError, "n_params must be one of"),
    ],
)
def test_bad_arguments_raise_clear_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


@pytest.mark.parametrize("cls", ENERGY_CLASSES, ids=lambda c: c.__name__)
def test_energy_explorers_offer_only_chips_with_energy_parameters(cls):
    explorer = cls()
    offered = [record for _, record in explorer.chip.options]
    assert offered == [c for c in hw.chips() if all(getattr(c, f) is not None for f in hw.data.records.ENERGY_FIELDS)]
    assert explorer.chip.value is A100
    with pytest.raises(ValueError, match="has no hbm_energy, flop_energy, static_power"):
        cls(chip=hw.chip("H100-SXM"))
    with pytest.raises(ValueError, match="has no hbm_energy, flop_energy, static_power"):
        cls(chips=[A100, V6E])


@pytest.mark.parametrize("cls", TIME_CLASSES, ids=lambda c: c.__name__)
def test_time_explorers_work_on_every_chip(cls):
    explorer = cls(chip=V6E)
    assert V6E.label in explorer.figure.axes[0].get_title()
    assert len(explorer.chip.options) == len(hw.chips("vendor"))  # the source documents' records only when asked for
    for record in hw.chips("vendor"):
        explorer.chip.value = record
        assert explorer.image.value[:4] == b"\x89PNG" and record.label in explorer.figure.axes[0].get_title()


def test_roofline_explorer_follows_the_roofline():
    explorer = hw.viz.RooflineExplorer(chips=DOC000, chip=DOC000[0])
    assert "compute-bound" in explorer.summary.value
    explorer.n.value = 1
    assert "memory-bound" in explorer.summary.value
    explorer.n.value = 1024
    explorer.chip.value = hw.chip("v6e", source="doc000")
    assert "memory-bound" in explorer.summary.value and "573.8" in explorer.summary.value
    assert explorer.dtype.value == "bf16"
    vendor = hw.viz.RooflineExplorer(chip=V6E, dtype="int8")
    assert list(vendor.dtype.options) == list(V6E.peak_flops_per_s)
    assert f"ridge {hw.format_number(hw.ridge_point(V6E, 'int8'), 4)}" in vendor.summary.value
    vendor.chip.value = hw.chip("H100-SXM")
    assert vendor.dtype.value == "int8" and "fp32" in vendor.dtype.options
    vendor.chip.value = hw.chip("TPU7x")
    assert vendor.dtype.value == "bf16"  # TPU7x has no int8 peak: the first dtype it has
    time_text = hw.format_seconds(
        hw.roofline_time_s(hw.matmul_flops(1024, 1024, 1024), hw.matmul_bytes(1024, 1024, 1024), hw.chip("TPU7x"))
    )
    assert time_text in vendor.summary.value
    assert "time at least 10.9 µs" in hw.viz.RooflineExplorer(chip=hw.chip("TPU v5e")).summary.value


def test_step_explorer_reports_t_min_and_draws_the_energy_balance_only_where_known():
    offered = (A100, V6E, hw.chip("TPU v5e", source="doc000"))
    explorer = hw.viz.StepIntensityExplorer(chips=offered, chip=A100, T=64)
    assert f"T_min = {hw.t_min(doc002.D_MODEL, A100):,.0f}" in explorer.summary.value
    assert "energy" in explorer.figure.axes[0].get_title()
    explorer.d.value = 384
    assert "no T reaches it" in explorer.summary.value
    tpu = hw.viz.StepIntensityExplorer(chips=offered, chip=V6E)
    assert f"T_min = {hw.t_min(doc002.D_MODEL, V6E):,.0f}" in tpu.summary.value
    assert "energy" not in tpu.figure.axes[0].get_title()
    tpu.chip.value = hw.chip("TPU v5e", source="doc000")  # no on-chip memory sourced: no re-blocking term
    assert f"d_min = {hw.d_min(tpu.chip.value):,.0f}" in tpu.summary.value


def test_memory_explorer_reports_the_budget():
    # per chip under a sharding, each chip with its own micro-batch's activations (never pooled)
    v5p, llama = hw.chip("TPU v5p"), hw.model("Llama 3 8B")
    explorer = hw.viz.MemoryBudgetExplorer(chip=v5p, model=llama, recipe=hw.recipe("zero_mixed_adam"), seq_len=4096)
    expected = hw.training_memory(llama, "zero_mixed_adam", v5p, 4096, sharding="zero-3")
    assert explorer.parts_bytes() == expected.parts and expected.n_chips is not None
    assert f"{expected.n_chips:,} chips</b> under zero-3" in explorer.summary.value
    explorer.sharding.value = "replicated"
    assert "does not fit" in explorer.summary.value and "shard more" in explorer.summary.value
    explorer.recompute.value = "full"
    one_layer = hw.activation_bytes(4096, 1, llama, flash_attention=True)  # recomputed, in its backward
    assert explorer.parts_bytes()["activations"] == 32 * 2 * 4096 * 4096 + one_layer - 2 * 4096 * 4096
    default = hw.viz.MemoryBudgetExplorer()  # Llama 3 8B on a v5e: one sequence's activations overflow one chip
    assert default.chip.value is hw.chip("TPU v5e") and default.usable.value == hw.doc000.USABLE_FRACTION
    assert (
        "does not fit" in default.summary.value and "tensor, sequence or context parallelism" in default.summary.value
    )


def test_memory_explorer_offers_only_the_recipes_it_is_given():
    offered = hw.literature.RECIPES
    explorer = hw.viz.MemoryBudgetExplorer(recipes=offered)
    assert [value for _, value in explorer.recipe.options] == list(offered)
    assert explorer.recipe.value is hw.recipe("zero_mixed_adam")
    with pytest.raises(ValueError, match="not among the explorer's recipes"):
        hw.viz.MemoryBudgetExplorer(recipes=offered, recipe=hw.recipe("doc000_mixed_bf16"))
    with pytest.raises(TypeError, match="recipes must be a non-empty sequence"):
        hw.viz.MemoryBudgetExplorer(recipes=["zero_mixed_adam"])


def test_kv_explorer_reports_the_cache_and_the_decode_bound():
    h100, llama = hw.chip("H100-SXM"), hw.model("Llama 3 8B")
    explorer = hw.viz.KVCacheExplorer(chip=h100, model=llama, seq_len=8192, batch=16)
    assert "1 GiB" in explorer.summary.value
    step = hw.inference_step(llama, h100, 16, 8192)
    forecast, bound = hw.format_seconds(step.forecast_time_s), hw.format_seconds(step.time_s)
    assert f"{forecast} (bound {bound})" in explorer.summary.value  # the forecast first, the bound after it
    assert hw.forecast_band("serving", llama, h100).text in explorer.summary.value
    fit = hw.max_batch(llama, h100, 8192)
    assert f"<td>bf16</td><td>1 GiB</td><td>{int(fit):,}</td>" in explorer.summary.value
    explorer.batch.value = 1024
    assert explorer.summary.value.count("does not fit") == 4


def test_serving_explorer_reports_the_step_and_the_plan():
    h100, llama = hw.chip("H100-SXM"), hw.model("Llama 3 70B")
    explorer = hw.viz.ServingExplorer(chip=h100, model=llama, n_chips=8, precision="fp8", context_len=4096, batch=64)
    fp8 = hw.PRECISIONS["fp8"]
    step = hw.inference_step(llama, h100, 64, 4096, 1, 8, **fp8)
    summary = explorer.summary.value
    assert hw.format_seconds(step.time_s) in summary
    assert f"{step.tokens_per_s:,.0f} / {step.tokens_per_s_per_chip:,.0f}" in summary
    forecast = f"{hw.format_seconds(step.forecast_time_s)}, {step.forecast_tokens_per_s:,.0f}"
    band = hw.forecast_band("serving", llama, h100).text
    assert summary.index(forecast) < summary.index(band) < summary.index(hw.format_seconds(step.time_s))
    largest = hw.max_batch(llama, h100, 4096, 8, "fp8", "fp8")
    assert f"<b>{largest:,}</b>" in explorer.summary.value and "1 × 8-GPU node" in explorer.summary.value
    explorer.chip.value = hw.chip("TPU v5e")  # the chips control follows the chip's slice sizes
    assert explorer.n_chips.options == hw.tensor_parallel_sizes(llama, hw.chip("TPU v5e"))
    assert "no sourced fp8 peak" in explorer.summary.value
    explorer.precision.value = "int8 weights and KV"
    assert "v5litepod-8" in explorer.summary.value
    explorer.batch.value = 4096
    assert "does not fit" in explorer.summary.value
    with pytest.raises(ValueError, match="n_chips must be one of"):
        hw.viz.ServingExplorer(chip=h100, model=llama, n_chips=16)


def test_the_training_bar_axis_always_has_room():
    from hwlib.viz.explorers.training import _nice_ceiling

    for value in (0.01, 0.96, 1.0, 4.9, 9.53, 9.99, 10.0, 123.0):
        ceiling = _nice_ceiling(value)
        assert value * 1.05 <= ceiling <= 2.2 * value * 1.05


def test_training_explorer_reports_the_step():
    cluster, llama = hw.cluster("hgx-h100-ndr"), hw.model("Llama 3 70B")
    explorer = hw.viz.TrainingExplorer(cluster=cluster, model=llama, n_chips=256, tp=8, pp=2)
    step = hw.train_step(
        llama,
        cluster,
        hw.Mesh(fsdp=16, tp=8, pp=2),
        explorer.global_batch_tokens.value,
        explorer.seq_len.value,
        micro_batch_tokens=explorer.seq_len.value,
    )
    summary = explorer.summary.value
    assert hw.format_seconds(step.time_s) in summary
    assert f"{100 * step.mfu:.0f} %" in summary and "fsdp=16 tp=8 pp=2" in summary
    forecast = f"{hw.format_seconds(step.forecast_time_s)}, {step.forecast_tokens_per_s:,.0f}, "
    band = hw.forecast_band("training", llama, cluster.chip).text
    assert summary.index(forecast) < summary.index(band) < summary.index(hw.format_seconds(step.time_s))
    assert "does not fit" not in summary
    explorer.tp.value = 16  # across two nodes
    assert "fsdp=8 tp=16 pp=2" in explorer.summary.value
    explorer.pp.value = 64
    assert "tp x pp x cp = 1024 does not divide 256 chips" in explorer.summary.value
    small = hw.viz.TrainingExplorer(cluster=cluster, model=llama, n_chips=8, tp=4, pp=1)
    assert small.summary.value.startswith("<table><tr><td>does not fit</td>")  # said first
    assert "were it to fit" in small.summary.value
    moe = hw.viz.TrainingExplorer(cluster=cluster, model=hw.model("Mixtral 8x7B"), n_chips=256, tp=8, pp=1)
    assert hw.forecast_band("training", hw.model("Mixtral 8x7B"), cluster.chip).text in moe.summary.value


def test_regime_explorer_reproduces_table_5():
    explorer = hw.viz.RegimeExplorer(chip=A100)
    steps = hw.regime_steps(A100)
    for row, scenario in enumerate(doc002.SCENARIOS):
        with explorer.holding():
            explorer.T.value = scenario.T
            explorer.micro_batches.value = scenario.micro_batches
            explorer.n_chips.value = scenario.n_chips
            explorer.fabric.value = scenario.fabric or "scale-out"
        explorer.update()
        step = explorer.training_step()
        assert step.time_per_token_s == pytest.approx(steps.time_per_token_s[row])
        assert step.energy_per_token_j == pytest.approx(steps.energy_per_token_j[row])
        assert hw.format_seconds(step.time_per_token_s) in explorer.summary.value
    with explorer.holding():
        explorer.micro_batches.value = 8
    explorer.update()
    assert "213 µs" in explorer.summary.value and "55.1 mJ" in explorer.summary.value
    assert "IB HDR" in explorer.summary.value


def test_squeeze_explorer_reports_the_optimal_batch():
    explorer = hw.viz.BatchSqueezeExplorer()
    system = hw.cluster("hgx-a100-hdr")
    assert explorer.system.value is system
    squeeze = hw.cluster_squeeze(system, explorer.n_params.value, 64, doc002.CRITICAL_BATCH.value)
    assert f"{squeeze.optimal_batch_tokens / 1e6:,.3g} M" in explorer.summary.value
    assert f"{squeeze.fixed_cost_tokens:,.0f}" in explorer.summary.value
    explorer.network.value = hw.fabric("ib-ndr")
    assert explorer.current_cluster().network is hw.fabric("ib-ndr")
    explorer.system.value = hw.cluster("tpu-v5p")
    explorer.n_chips.value = 8192
    assert "exceed" in explorer.summary.value and explorer.image.value[:4] == b"\x89PNG"
    explorer.n_chips.value = 64
    assert "no network to replace" in explorer.summary.value


def test_explorers_import_only_what_viz_may():
    allowed = (
        "__future__",
        "base64",
        "collections",
        "contextlib",
        "dataclasses",
        "io",
        "re",
        "ipywidgets",
        "matplotlib",
        "numpy",
        "PIL",
        "hwlib._checks",
        "hwlib.units",
        "hwlib.precision",
        "hwlib.calibration_fit",
        "hwlib.data",
        "hwlib.roofline",
        "hwlib.memory",
        "hwlib.serving.step",
        "hwlib.serving.plan",
        "hwlib.serving.throughput",
        "hwlib.serving.simulate",
        "hwlib.serving.speculative",
        "hwlib.serving.engine",
        "hwlib.serving.served",
        "hwlib.training.mesh",
        "hwlib.training.step",
        "hwlib.energy",
        "hwlib.layer_model",
        "hwlib.training.regimes",
        "hwlib.training.squeeze",
        "hwlib.training.zero",
        "hwlib.collectives",
        "hwlib.placement",
        "hwlib.costs",
        "hwlib.viz.style",
        "hwlib.viz.model_figures",
        "hwlib.viz.explorers",
    )
    package = pathlib.Path(hw.__file__).parent / "viz" / "explorers"
    for path in sorted(package.glob("*.py")):
        source = path.read_text()
        assert len(source.splitlines()) < 400, path.name
        for node in ast.walk(ast.parse(source)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert any(name == a or name.startswith(a + ".") for a in allowed), f"{path.name} imports {name}"


def test_shared_machinery_is_in_the_base_class():
    assert np.all([cls.update is Explorer.update for cls in CLASSES])
    assert np.all([cls._repr_mimebundle_ is Explorer._repr_mimebundle_ for cls in CLASSES])


def test_compute_to_commute_explorers_take_a_model():
    h100, llama = hw.chip("H100-SXM"), hw.model("llama-3-70b")
    explorer = hw.viz.StepIntensityExplorer(chip=h100, model=llama)
    assert f"T_min = {hw.t_min(llama, h100):,.0f}" in explorer.summary.value
    explorer.layer.value = None  # back to the source document's layer of width d
    assert f"T_min = {hw.t_min(explorer.d.value, h100):,.0f}" in explorer.summary.value
    regime = hw.viz.RegimeExplorer(model=hw.model("llama-3-8b"))
    reference = hw.training_step(hw.model("llama-3-8b"), regime.T.value, regime.chip.value, seq_len=regime.seq_len)
    assert regime.training_step().flops == pytest.approx(reference.flops)
    with pytest.raises(ValueError, match="not among"):
        hw.viz.StepIntensityExplorer(model=hw.model("mixtral-8x7b"))


def test_regime_explorer_takes_the_fabrics_of_a_custom_chip():
    chip = hw.custom_chip(
        "A100 80GB",
        peak_flops_per_s=312e12,
        hbm_bytes_per_s=2.039e12,
        hbm_bytes=80e9,
        on_chip_bytes=40e6,
        tdp_w=400,
        static_power_w=60,
        hbm_energy_j_per_byte=60e-12,
        flop_energy_j=0.9e-12,
    )
    ib = hw.custom_fabric("HDR", bytes_per_s=25e9, kind="scale-out")
    assert "no scale-out fabric known" in hw.viz.RegimeExplorer(chips=[chip], chip=chip, n_chips=64).summary.value
    explorer = hw.viz.RegimeExplorer(chips=[chip], chip=chip, n_chips=64, fabrics={chip: {"scale-out": ib}})
    step = hw.training_step(
        4096,
        2048,
        chip,
        32,
        n_chips=64,
        fabric_bytes_per_s=25e9,
        n_params=hw.transformer_params(4096, 32, 50000),
        seq_len=2048,
    )
    assert (
        f"{step.energy_per_token_j * 1e3:.3g} mJ per token" in explorer.summary.value
        and "over HDR" in explorer.summary.value
    )
    assert explorer.fabric_for(chip, "scale-out") is ib
    explorer.fabric.value = "scale-up"  # a kind the mapping leaves out falls back to regime_fabric
    assert "no scale-up fabric known" in explorer.summary.value
    for fabrics, error, match in (
        ([ib], TypeError, "must map a Chip"),
        ({chip: {"ib": ib}}, ValueError, "fabric kind"),
        ({A100: {"scale-out": ib}}, ValueError, "not among the explorer's chips"),
        ({chip: {"scale-out": 25e9}}, TypeError, "must be a Fabric record"),
    ):
        with pytest.raises(error, match=match):
            hw.viz.RegimeExplorer(chips=[chip], chip=chip, fabrics=fabrics)


# --- honest on a static page: controls disabled in the saved state, enabled once a live front end attaches ---


def _front_end_runs_the_beacon_link(explorer: Explorer) -> None:
    """What a front end with a kernel does on loading the explorer's link: an update message to the kernel."""
    link = explorer._beacon_link
    (source, source_trait), (target, target_trait) = link.source, link.target
    target._handle_msg(
        {"content": {"data": {"method": "update", "state": {target_trait: getattr(source, source_trait)}}}}
    )


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_controls_are_disabled_until_a_live_front_end_attaches(cls):
    explorer = explorer_of(cls)
    inputs = [w for w in explorer._inputs]
    assert set(map(id, explorer.controls)) <= set(map(id, inputs))
    assert all(widget.disabled for widget in inputs)
    assert all(widget.get_state()["disabled"] for widget in inputs)  # what a build saves
    assert "do not recompute" in explorer.banner.value and "make lab" in explorer.banner.value
    control = explorer.controls[0]
    control.value = other_value(control)  # a cell of the build moving a control is not a live front end
    assert not explorer.live and control.disabled and "make lab" in explorer.banner.value
    # the link runs in the front end only: beacon value -> placeholder, which the kernel observes
    assert isinstance(explorer._beacon_link, widgets.widget_link.DirectionalLink)
    assert explorer._beacon.placeholder != explorer._beacon.value
    _front_end_runs_the_beacon_link(explorer)
    assert explorer.live and not any(widget.disabled for widget in explorer.controls)
    assert explorer.banner.value.count("Live.") == 1 and "make lab" not in explorer.banner.value
    summary = explorer.summary.value
    control.value = other_value(control)
    assert explorer.summary.value != summary or (cls, control.description) in PICTURE_UNCHANGED


def test_go_live_keeps_a_control_disabled_that_the_explorer_disabled_itself():
    class Partly(hw.viz.RooflineExplorer):
        def __init__(self):
            super().__init__()

        def arrange(self):
            self.k.disabled = True  # e.g. a control that does not apply
            return super().arrange()

    explorer = Partly()
    assert explorer.k.disabled and explorer.m.disabled
    explorer.go_live()
    assert explorer.k.disabled and not explorer.m.disabled


def test_the_saved_state_a_build_writes_has_the_controls_disabled(tmp_path):
    """Execute a notebook the way Jupyter Book does (nbclient, no front end) and read its saved widget state."""
    import nbclient
    import nbformat

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import hwlib as hw\nhw.viz.RooflineExplorer(chip=hw.chip('TPU v5e'))")]
    )
    nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        store_widget_state=True,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    state = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    models = [model["state"] for model in state.values()]
    controls = [m for m in models if m.get("_model_name") in ("DropdownModel", "SelectionSliderModel")]
    assert len(controls) == 5 and all(m["disabled"] for m in controls)
    notes = [m["value"] for m in models if m.get("_model_name") == "HTMLModel" and "make lab" in m.get("value", "")]
    assert len(notes) == 1 and "do not recompute" in notes[0]
    bundle = notebook.cells[0].outputs[0]["data"]
    assert {"application/vnd.jupyter.widget-view+json", "image/png", "text/plain"} <= set(bundle)
    assert "VBox" not in bundle["text/plain"]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_mime_bundle_carries_the_figure_as_a_png_for_print(cls):
    import base64
    import io

    import PIL.Image

    explorer = explorer_of(cls)
    bundle = explorer._repr_mimebundle_()
    png = base64.b64decode(bundle["image/png"])
    width, height = PIL.Image.open(io.BytesIO(png)).size
    assert (width, height) == (round(cls.figsize[0] * 160), round(cls.figsize[1] * 160))
    assert "VBox" not in bundle["text/plain"] and cls.__name__ in bundle["text/plain"]
    # printing redrew the canvas at another size: the next move still shows the right picture
    picture, control = explorer.image.value, explorer.controls[-1]
    original = control.value
    control.value = other_value(control)
    control.value = original
    assert explorer.image.value == picture


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_dropdowns_are_wide_enough_for_their_labels_and_nothing_wider_than_the_screen(cls):
    from hwlib.viz.explorers import base

    explorer = explorer_of(cls)
    for widget in base._tree(explorer.widget):
        if isinstance(widget, widgets.Dropdown):
            width = base._pixels(widget.layout.width, 0)
            description = base._pixels(widget.style.description_width, 80)
            longest = max(len(label) for label in widget._options_labels)
            assert width >= description + base._CHAR_PX * longest, (widget.description, widget.layout.width)
        if isinstance(widget, (widgets.Box, widgets.Image)):
            assert widget.layout.max_width == "100%", widget
        elif isinstance(widget, (widgets.ValueWidget, widgets.HTML)):
            assert widget.layout.max_width == "calc(100% - 4px)", widget  # less its 2 px margins
    assert "hw-explorer" in explorer.widget._dom_classes and "@media (max-width" in explorer.banner.value
