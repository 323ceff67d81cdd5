"""Training figures (hwlib.viz.training_figures): a step's breakdown by part."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import hwlib as hw


def test_step_breakdown_legend_has_solid_swatches_and_one_hatched_for_what_does_not_fit():
    node = hw.cluster("hgx-h100-ndr")
    llama = hw.model("llama-3-70b")
    steps = [
        hw.train_step(llama, node, mesh, 2**22, 4096, 4096) for mesh in (hw.Mesh(fsdp=256), hw.Mesh(fsdp=32, tp=8))
    ]
    assert not steps[0].fits and steps[1].fits  # the first bar drawn is hatched
    ax = hw.viz.plot_step_breakdown(steps)
    handles = ax.get_legend().legend_handles
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels[-1] == "does not fit" and handles[-1].get_hatch() == "///"
    assert all(not handle.get_hatch() for handle in handles[:-1]) and "compute" in labels
    fitting = hw.viz.plot_step_breakdown(steps[1:])
    assert "does not fit" not in [text.get_text() for text in fitting.get_legend().get_texts()]
    plt.close("all")


def test_share_of_bound_puts_each_group_on_its_row_and_refuses_mismatched_shares():
    import numpy as np
    import pytest

    groups = ["a", "b", "a"]
    ax = hw.viz.plot_share_of_bound(groups, [10.0, 50.0, 30.0], [20.0, 40.0, 35.0])
    assert [label.get_text() for label in ax.get_yticklabels()] == ["a", "b"]
    measured, forecast = ax.collections
    rows = np.round(measured.get_offsets()[:, 1])
    assert list(rows) == [0.0, 1.0, 0.0] and list(measured.get_offsets()[:, 0]) == [10.0, 50.0, 30.0]
    assert list(forecast.get_offsets()[:, 0]) == [20.0, 40.0, 35.0]
    plt.close("all")
    with pytest.raises(ValueError, match="measured_pct"):
        hw.viz.plot_share_of_bound(groups, [10.0, 50.0])
    with pytest.raises(ValueError, match="forecast_pct"):
        hw.viz.plot_share_of_bound(groups, [10.0, 50.0, 30.0], [1.0])
    with pytest.raises(ValueError, match="measured_pct"):
        hw.viz.plot_share_of_bound(groups, [10.0, -5.0, 30.0])
