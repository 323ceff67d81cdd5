"""Roofline tables and figures, glue and the book style (hwlib.viz.tables, figures, glue, style).

Ported from the 0.1 tests/test_tables_plots_widgets.py without its explorer tests (tests/test_explorers.py).
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

import hwlib as hw

DOC = hw.chips("doc000")


def test_chip_table_is_computed_from_the_records():
    table = hw.viz.chip_table(DOC)
    assert list(table.index) == [record.label for record in DOC]
    row = table.loc["TPU v5e [doc000]"]
    # 0.1's "HBM (GiB)" column is "HBM as printed" (in the printed unit), beside what a program sees
    assert row["HBM as printed"] == "16 GiB" and row["HBM a program sees (GiB)"] == 16.0
    assert row["HBM bandwidth (GB/s)"] == 819.0
    assert row["ridge point (FLOP/byte)"] == hw.ridge_point(DOC[0])
    assert row["bf16 peak (TFLOP/s)"] == 197.0


def test_chip_table_shows_the_capacity_a_program_sees():
    table = hw.viz.chip_table([hw.chip("H100"), hw.chip("v5p")])
    assert table.loc["H100-SXM", "HBM as printed"] == "80 GB"
    assert table.loc["H100-SXM", "HBM a program sees (GiB)"] == 81559 / 1024
    assert (
        table.loc["TPU v5p", "HBM as printed"] == "95 GiB" and table.loc["TPU v5p", "HBM a program sees (GiB)"] == 95.0
    )
    assert list(hw.viz.chip_table([hw.chip("H100")], dtype="fp8").columns)[0] == "fp8 peak (TFLOP/s)"
    amd = hw.viz.chip_table([hw.chip(key) for key in ("MI300X", "MI325X", "MI355X")])  # ROCm's table, in GiB
    assert list(amd["HBM as printed"]) == ["192 GiB", "256 GiB", "288 GiB"]


def test_provenance_table_lists_every_sourced_field():
    table = hw.viz.provenance_table(hw.chip("v5e", source="doc000"))
    assert set(table.index) == {"peak_flops[bf16]", "hbm", "hbm_bandwidth"}
    assert table.loc["hbm_bandwidth", "value"] == 819e9


def test_tables_reject_non_chips():
    with pytest.raises(TypeError, match="chips must be a non-empty sequence of Chip records"):
        hw.viz.chip_table(["v5e"])
    with pytest.raises(TypeError, match="chip must be a Chip record"):
        hw.viz.provenance_table("v5e")


def test_plots_draw_one_roofline_per_chip_with_units():
    ax = hw.viz.plot_roofline(DOC)
    assert len([line for line in ax.get_lines() if len(line.get_xdata()) > 1]) == len(DOC)
    assert "FLOP/byte" in ax.get_xlabel() and "TFLOP/s" in ax.get_ylabel()
    top = max(line.get_ydata().max() for line in ax.get_lines())
    assert top == pytest.approx(918.0)
    hw.viz.mark_kernel(ax, 1024 / 3, DOC[0], "matmul")
    axes = hw.viz.plot_capacity_and_ridge(DOC)
    assert "GiB" in axes[0].get_xlabel() and "FLOP/byte" in axes[1].get_xlabel()
    widths = [bar.get_width() for bar in axes[1].patches]
    np.testing.assert_allclose(widths, [hw.ridge_point(record) for record in DOC])
    plt.close("all")


def test_glue_writes_what_myst_nb_glue_writes(monkeypatch):
    import IPython.display
    import myst_nb.ext.glue as myst_glue

    ours, theirs = [], []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: ours.append((a, k)))
    monkeypatch.setattr(myst_glue, "ipy_display", lambda *a, **k: theirs.append((a, k)))
    hw.viz.glue(ridge=np.float64(240.5), chip="TPU v5e", count=10)
    for name, value in (("ridge", 240.5), ("chip", "TPU v5e"), ("count", 10)):
        myst_glue.glue(name, value, display=False)
    assert ours == theirs and len(ours) == 3


def test_glue_rejects_what_prose_cannot_show():
    with pytest.raises(TypeError, match="table must be a number or a string"):
        hw.viz.glue(table=[1, 2])


def test_plots_reject_bad_input():
    with pytest.raises(TypeError, match="chips must be a non-empty sequence of Chip records"):
        hw.viz.plot_roofline(["v5e"])
    with pytest.raises(KeyError, match="dtype 'fp8'"):
        hw.viz.plot_roofline(DOC, dtype="fp8")
    with pytest.raises(ValueError, match=r"intensity_range must be \(low, high\)"):
        hw.viz.plot_roofline(DOC, intensity_range=(10.0, 1.0))
    with pytest.raises(ValueError, match="intensity_range must be > 0"):
        hw.viz.plot_roofline(DOC, intensity_range=(0.0, 1.0))
    ax = hw.viz.plot_roofline(DOC)
    with pytest.raises(ValueError, match="intensity must be >= 0"):
        hw.viz.mark_kernel(ax, -1.0, DOC[0], "bad")
    with pytest.raises(TypeError, match="chips must be a non-empty sequence of Chip records"):
        hw.viz.plot_capacity_and_ridge([DOC[0], "v6e"])
    plt.close("all")


def test_book_style_is_applied():
    hw.viz.use_book_style()
    assert plt.rcParams["axes.spines.top"] is False
