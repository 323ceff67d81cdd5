"""Compute-to-commute tables and figures (hwlib.viz.tables, hwlib.viz.commute_figures).

Ported from the 0.1 tests/test_commute_plots_widgets.py without its explorer tests (tests/test_explorers.py).
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

import hwlib as hw
from hwlib.data import doc002
from hwlib.viz.commute_figures import ENERGY_PART_LABELS

DOC = hw.chips("doc002")
A100 = hw.chip("A100-80GB", source="doc002")
H100 = hw.chip("H100-SXM", source="doc002")


def test_balance_table_reproduces_table_2_and_adds_the_true_limit():
    table = hw.viz.balance_table(DOC)
    row = table.loc["A100-80GB [doc002]"]
    assert round(row["time balance (FLOP/B)"]) == 153 and round(row["energy balance (FLOP/B)"]) == 67
    assert round(row["d_min"]) == 447
    assert round(row['document: "T_min(inf d) = 2 beta"']) == 306
    assert round(row["large-d limit of T_min"]) == 322
    assert f"{table.loc['A100-40GB [doc002]', 'HBM (TB/s)']:.2f}" == "1.55"


def test_t_min_table_matches_t_min():
    ds = [512, 4096]
    table = hw.viz.t_min_table(ds, [A100, H100])
    assert table.loc[4096, A100.label] == hw.t_min(4096, A100)
    assert np.isinf(table.loc[512, H100.label])
    assert list(table.index) == ds


def test_elementwise_tax_table_has_ratio_share_and_energy():
    table = hw.viz.elementwise_tax_table([768], [H100])
    assert f"{table.loc[768, (H100.label, 'time ratio')]:.2f}" == "1.07"
    assert f"{table.loc[768, (H100.label, 'energy ratio (%)')]:.2f}" == "32.88"
    ratio = table.loc[768, (H100.label, "time ratio")]
    assert table.loc[768, (H100.label, "time share (%)")] == pytest.approx(100 * ratio / (1 + ratio))


def test_regime_table_is_table_5():
    table = hw.viz.regime_table(A100)
    assert list(table.index) == [s.name for s in doc002.SCENARIOS]
    assert list(table.columns) == [
        "tokens/step/chip",
        "time (ms/token)",
        "energy (mJ/token)",
        "arithmetic (%)",
        "HBM (%)",
        "static (%)",
        "intensity (FLOP/B)",
        "slowdown",
    ]
    assert [f"{v:.3f}" for v in table["energy (mJ/token)"]] == [
        "25337.196",
        "60.060",
        "54.548",
        "82.841",
        "55.054",
        "51.580",
    ]
    assert [f"{v:.3f}" for v in table["time (ms/token)"]] == ["138.749", "0.196", "0.192", "0.675", "0.213", "0.155"]
    assert [f"{v:.0f}" for v in table["intensity (FLOP/B)"]] == ["0", "237", "472", "539", "548", "549"]
    assert [f"{v:.2f}" for v in table["slowdown"]] == ["1033.76", "1.46", "1.43", "5.03", "1.59", "1.16"]
    assert [f"{v:.1f}" for v in table["static (%)"]] == ["32.9", "19.6", "21.1", "48.9", "23.2", "18.1"]
    steps = hw.regime_steps(A100)
    assert np.allclose(steps.time_per_token_s * 1e3, table["time (ms/token)"])
    assert (steps.power_w < A100.tdp_w).all()


def test_tables_of_chips_without_energy_parameters_show_time_only():
    # 0.2: the time models take every chip; the energy columns appear where the chip has energy parameters
    h100 = hw.chip("H100")
    table = hw.viz.regime_table(h100)
    assert list(table.columns) == ["tokens/step/chip", "time (ms/token)", "intensity (FLOP/B)", "slowdown"]
    assert np.isfinite(table.to_numpy()).all()
    tax = hw.viz.elementwise_tax_table([768, 4096], [h100, H100])
    assert list(tax.columns) == [
        (h100.label, "time ratio"),
        (h100.label, "time share (%)"),
        (H100.label, "time ratio"),
        (H100.label, "time share (%)"),
        (H100.label, "energy ratio (%)"),
    ]
    balance = hw.viz.balance_table([hw.chip("v5e"), A100])
    assert np.isnan(balance.loc["TPU v5e", "energy balance (FLOP/B)"])
    assert balance.loc["TPU v5e", "on-chip memory (MB)"] == hw.chip("v5e").on_chip_bytes / 1e6
    assert balance.loc["A100-80GB [doc002]", "on-chip memory (MB)"] == 40.0
    assert balance.loc["TPU v5e", "time balance (FLOP/B)"] == hw.ridge_point(hw.chip("v5e"))
    assert list(hw.viz.t_min_table().index) == list(doc002.TABLE3_WIDTHS)
    assert list(hw.viz.t_min_table().columns) == [c.label for c in doc002.CHIPS]
    assert list(hw.viz.elementwise_tax_table().index) == list(doc002.TABLE4_WIDTHS)


def test_plots_have_units_and_the_right_curves():
    ax = hw.viz.plot_step_intensity(A100, ds=(768, 4096), balance_chips=[H100])
    assert "FLOP/byte" in ax.get_ylabel() and "tokens" in ax.get_xlabel()
    curve = ax.get_lines()[1]
    assert curve.get_ydata()[-1] == pytest.approx(hw.layer_step(4096, curve.get_xdata()[-1], A100).intensity)
    ax = hw.viz.plot_t_min([A100, H100])
    assert "hidden size" in ax.get_xlabel() and "T_min" in ax.get_ylabel()
    first = ax.get_lines()[0]
    np.testing.assert_allclose(first.get_ydata(), hw.t_min(first.get_xdata(), A100))
    assert "322" in ax.get_legend().get_texts()[0].get_text()  # the true limit, not "2 beta" = 306
    ax = hw.viz.plot_energy_shares(4096, A100)
    assert "energy" in ax.get_ylabel()
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == list(ENERGY_PART_LABELS.values())
    assert f"T_min = {hw.t_min(4096, A100):.0f}" in [t.get_text() for t in ax.texts]
    # the legend sits below the axes, covering no data
    assert legend.get_bbox_to_anchor().y1 < ax.get_window_extent().y0 + 1
    ax = hw.viz.plot_energy_per_flop([A100])
    assert "pJ" in ax.get_ylabel()
    plt.close("all")


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.viz.balance_table(["A100"]), TypeError, "chips must be a non-empty sequence of Chip records"),
        (lambda: hw.viz.t_min_table([0], [A100]), ValueError, "ds must be > 0"),
        (lambda: hw.viz.elementwise_tax_table([768], "H100"), TypeError, "chips must be a non-empty sequence"),
        (lambda: hw.viz.regime_table(A100, scenarios=()), TypeError, "scenarios must be a non-empty sequence"),
        (lambda: hw.regime_steps(hw.chip("H100")).energy_j, ValueError, "has no hbm_energy"),
        (lambda: hw.regime_steps(hw.chip("v5e", source="doc000")), KeyError, "no scale-up fabric known"),
        (lambda: hw.viz.t_min_table([512], ["A100"]), TypeError, "chips must be a non-empty sequence"),
    ],
)
def test_table_bad_input(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_regime_plot_shows_shares_that_add_up():
    import matplotlib.pyplot as plt

    steps = hw.regime_steps(hw.chip("A100-80GB", source="doc002"))
    names = [scenario.name for scenario in doc002.SCENARIOS]
    axes = hw.viz.plot_regimes(steps, names)
    for ax in axes:
        widths = np.array([bar.get_width() for bar in ax.patches]).reshape(3, len(names))
        np.testing.assert_allclose(widths.sum(axis=0), 1.0)
    first_time_share = axes[0].patches[0].get_width()
    assert first_time_share == pytest.approx(steps.layers_time_s[0] / steps.time_s[0])
    with pytest.raises(ValueError, match="labels must name each of the 6 regimes"):
        hw.viz.plot_regimes(steps, names[:2])
    with pytest.raises(TypeError, match="steps must be a TrainingStep"):
        hw.viz.plot_regimes("steps", names)
    plt.close("all")


@pytest.mark.parametrize("bounds", [(10.0, 1.0), (0.0, 1.0)])
def test_plot_energy_per_flop_checks_its_range(bounds):
    with pytest.raises(ValueError, match="intensity_range must be"):
        hw.viz.plot_energy_per_flop([A100], intensity_range=bounds)
    plt.close("all")
