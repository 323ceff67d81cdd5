import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

import hwlib as hw

DOC = hw.chips("doc002")
A100 = hw.chip("A100-80GB", source="doc002")
H100 = hw.chip("H100-SXM", source="doc002")


def test_balance_table_reproduces_table_2_and_adds_the_true_limit():
    table = hw.balance_table(DOC)
    row = table.loc["A100-80GB [doc002]"]
    assert round(row["time balance (FLOP/B)"]) == 153 and round(row["energy balance (FLOP/B)"]) == 67
    assert round(row["d_min"]) == 447
    assert round(row['document: "T_min(inf d) = 2 beta"']) == 306
    assert round(row["large-d limit of T_min"]) == 322
    assert f"{table.loc['A100-40GB [doc002]', 'HBM (TB/s)']:.2f}" == "1.55"


def test_t_min_table_matches_t_min():
    ds = [512, 4096]
    table = hw.t_min_table(ds, [A100, H100])
    assert table.loc[4096, A100.label] == hw.t_min(4096, A100)
    assert np.isinf(table.loc[512, H100.label])
    assert list(table.index) == ds


def test_elementwise_tax_table_has_ratio_share_and_energy():
    table = hw.elementwise_tax_table([768], [H100])
    assert f"{table.loc[768, (H100.label, 'time ratio')]:.2f}" == "1.07"
    assert f"{table.loc[768, (H100.label, 'energy ratio (%)')]:.2f}" == "32.88"
    ratio = table.loc[768, (H100.label, "time ratio")]
    assert table.loc[768, (H100.label, "time share (%)")] == pytest.approx(100 * ratio / (1 + ratio))


def test_regime_table_is_table_5():
    table = hw.regime_table(A100)
    assert list(table.index) == [s.name for s in hw.DOC002_SCENARIOS]
    assert [f"{v:.3f}" for v in table["mJ/token"]] == ["25337.196", "60.060", "54.548", "82.841", "55.054",
                                                        "51.580"]
    assert [f"{v:.0f}" for v in table["I (FLOP/B)"]] == ["0", "237", "472", "539", "548", "549"]
    steps = hw.regime_steps(A100)
    assert np.allclose(steps.time_per_token_s * 1e3, table["ms/token"])
    assert (steps.power_w < A100.tdp.value).all()


def test_plots_have_units_and_the_right_curves():
    ax = hw.plot_step_intensity(A100, ds=(768, 4096), balance_chips=[H100])
    assert "FLOP/byte" in ax.get_ylabel() and "tokens" in ax.get_xlabel()
    curve = ax.get_lines()[1]
    assert curve.get_ydata()[-1] == pytest.approx(hw.layer_intensity(4096, curve.get_xdata()[-1], A100))
    ax = hw.plot_t_min([A100, H100])
    assert "hidden size" in ax.get_xlabel() and "T_min" in ax.get_ylabel()
    first = ax.get_lines()[0]
    np.testing.assert_allclose(first.get_ydata(), hw.t_min(first.get_xdata(), A100))
    assert "322" in ax.get_legend().get_texts()[0].get_text()  # the true limit, not "2 beta" = 306
    ax = hw.plot_energy_shares(4096, A100)
    assert "energy" in ax.get_ylabel()
    legend = ax.get_legend()
    # the legend sits below the axes, covering no data
    assert legend.get_bbox_to_anchor().y1 < ax.get_window_extent().y0 + 1
    ax = hw.plot_energy_per_flop([A100])
    assert "pJ" in ax.get_ylabel()
    plt.close("all")


EXPLORERS = (hw.ByteEnergyExplorer, hw.StepIntensityExplorer, hw.EnergyShareExplorer, hw.RegimeExplorer)


@pytest.mark.parametrize("explorer_class", EXPLORERS)
def test_explorers_update_fast_and_follow_their_controls(explorer_class):
    explorer = explorer_class(chips=DOC, chip=A100.label, d=4096, T=64)
    assert explorer.image.value[:4] == b"\x89PNG"
    before = explorer.summary.value
    timings = []
    for control, value in ((explorer.T, 4096), (explorer.d, 768), (explorer.a, 100.0), (explorer.b_w, 6.0)):
        start = time.perf_counter()
        control.value = value
        timings.append(time.perf_counter() - start)
    assert explorer.summary.value != before
    assert np.median(timings) < 0.1
    explorer.chip.value = H100
    assert explorer.image.value[:4] == b"\x89PNG"


def test_step_explorer_reports_t_min():
    explorer = hw.StepIntensityExplorer(chips=DOC, chip=A100.label, d=4096, T=64)
    assert f"T_min = {hw.t_min(4096, A100):,.0f}" in explorer.summary.value
    explorer.d.value = 384
    assert "no T reaches it" in explorer.summary.value


def test_regime_explorer_reproduces_a_table_5_row():
    explorer = hw.RegimeExplorer(chips=DOC, chip=A100.label, d=4096, T=2048)
    explorer.n_devices.value = 64
    explorer.micro_batches.value = 8
    assert "55.1 mJ" in explorer.summary.value and "0.213 ms" in explorer.summary.value


def test_explorers_reject_bad_options():
    with pytest.raises(KeyError, match="not among the explorer's chips"):
        hw.StepIntensityExplorer(chips=DOC, chip="H100")
    with pytest.raises(ValueError, match="d must be one of"):
        hw.StepIntensityExplorer(chips=DOC, chip=A100.label, d=1000)
    with pytest.raises(ValueError, match="T must be one of"):
        hw.EnergyShareExplorer(chips=DOC, chip=A100.label, T=3)
    with pytest.raises(ValueError, match="b_w must be a number"):
        hw.ByteEnergyExplorer(chips=DOC, chip=A100.label, b_w=-1)
    with pytest.raises(ValueError, match="a must be a number"):
        hw.ByteEnergyExplorer(chips=DOC, chip=A100.label, a="x")
    with pytest.raises(TypeError, match="chips must be a non-empty sequence"):
        hw.RegimeExplorer(chips=["A100"])
    with pytest.raises(ValueError, match="has no hbm_energy"):
        hw.StepIntensityExplorer(chips=[hw.chip("A100-80GB")], chip="A100-80GB")
    with pytest.raises(ValueError, match="n_layers must be > 0"):
        hw.RegimeExplorer(chips=DOC, chip=A100.label, n_layers=0)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.balance_table(["A100"]), TypeError, "chip must be a Chip record"),
        (lambda: hw.t_min_table([0], [A100]), ValueError, "ds must be > 0"),
        (lambda: hw.elementwise_tax_table([768], [hw.chip("H100")]), ValueError, "has no hbm_energy"),
        (lambda: hw.regime_table(A100, scenarios=()), TypeError, "scenarios must be a non-empty sequence"),
        (lambda: hw.regime_steps(hw.chip("v5e", source="doc000")), ValueError, "has no hbm_energy"),
    ],
)
def test_table_bad_input(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_regime_plot_shows_shares_that_add_up():
    import matplotlib.pyplot as plt

    steps = hw.regime_steps(hw.chip("A100-80GB", source="doc002"))
    names = [scenario.name for scenario in hw.DOC002_SCENARIOS]
    axes = hw.plot_regimes(steps, names)
    for ax in axes:
        widths = np.array([bar.get_width() for bar in ax.patches]).reshape(3, len(names))
        np.testing.assert_allclose(widths.sum(axis=0), 1.0)
    first_time_share = axes[0].patches[0].get_width()
    assert first_time_share == pytest.approx(steps.layers_time_s[0] / steps.time_s[0])
    with pytest.raises(ValueError, match="labels must name each of the 6 regimes"):
        hw.plot_regimes(steps, names[:2])
    with pytest.raises(TypeError, match="steps must be a TrainingStep"):
        hw.plot_regimes("steps", names)
    plt.close("all")
