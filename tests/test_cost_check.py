"""The cost model against published GPU-hours and a model card's emissions (hwlib.cost_check)."""

import numpy as np
import pytest

import hwlib as hw
from hwlib.data import prices


def test_published_gpu_hours_from_the_forecast_of_each_stages_measured_mesh():
    table = hw.cost_check.gpu_hours_check()
    assert list(table.index) == ["llama-3.1-405b", "deepseek-v3"]
    assert table.loc["llama-3.1-405b", "published GPU-hours"] == 30.84e6
    assert table.loc["llama-3.1-405b", "tokens"] == 15.6e12 + 0.8e12 and table.loc["llama-3.1-405b", "stages"] == 2
    assert table.loc["deepseek-v3", "published GPU-hours"] == 2664e3
    assert (table["bound GPU-hours"] < table["published GPU-hours"]).all()  # no run beats its bound
    assert (table["bound GPU-hours"] < table["forecast GPU-hours"]).all()
    llama = table.loc["llama-3.1-405b"]
    assert llama["forecast over effective time"] == pytest.approx(llama["forecast GPU-hours"] / 0.9)
    assert llama["error (%)"] == pytest.approx(100 * (llama["forecast GPU-hours"] / 0.9 / 30.84e6 - 1))
    assert table.loc["deepseek-v3", "effective time"] == 1.0  # not stated
    # each within the dense training forecast's mean band, and DeepSeek-V3 within the MoE one
    assert abs(llama["error (%)"]) < 8 and abs(table.loc["deepseek-v3", "error (%)"]) < 10


def test_each_model_card_rebuilt_from_the_grid_the_other_cards_imply():
    table = hw.cost_check.emissions_check()
    assert len(table) == 10 and set(table["chip"]) == {"h100-sxm", "a100-80gb"}
    assert table.loc["llama-3.1-405b", "implied grid (gCO2e/kWh)"] == pytest.approx(8930e6 / (30.84e6 * 0.7))
    assert table.loc["llama-2-70b", "implied grid (gCO2e/kWh)"] == pytest.approx(291.42e6 / (1720320 * 0.4))
    cards = {"llama-2": 291.42e6 / (1720320 * 0.4), "llama-4": 645e6 / (2.38e6 * 0.7)}
    rebuilt = table.loc["llama-3.1-405b", "rebuilt, card left out (tCO2e)"]
    others = [
        table.loc[[k for k in table.index if k.startswith(card + "-")], "implied grid (gCO2e/kWh)"].mean()
        for card in ("llama-2", "llama-3", "llama-4")
    ]
    assert rebuilt == pytest.approx(30.84e6 * 0.7 * float(np.mean(others)) / 1e6)
    assert others[0] == pytest.approx(cards["llama-2"], rel=1e-3) and others[2] == pytest.approx(
        np.mean([1354e6 / (5.0e6 * 0.7), cards["llama-4"]])
    )
    assert table["error (%)"].abs().max() < 10  # Llama 4's 2025 grid is the cleanest: 9 % fewer grams
    assert hw.cost_check.emissions_check(pue="meta-2021")["implied grid (gCO2e/kWh)"].iloc[0] == pytest.approx(
        8930e6 / (30.84e6 * 0.7 * 1.09)
    )
    with pytest.raises(KeyError, match="aws-2023"):
        hw.cost_check.emissions_check(pue="best")


def test_each_published_cost_is_sourced():
    for run in prices.PUBLISHED_RUN_COSTS:
        assert run.gpu_hours.unit == "h" and run.gpu_hours.quoted
        assert run.co2e is None or run.co2e.unit == "kg"


def test_system_power_is_a_fitted_multiple_of_the_tdp_and_no_system_beats_its_rating():
    from hwlib.data.power_runs import POWER_RUNS

    assert hw.cost_check.power_fit() == pytest.approx(hw.data.calibrated.SYSTEM_POWER_PER_TDP.value, abs=5e-4)
    table = hw.cost_check.power_check()
    assert len(table) == len(POWER_RUNS) and table["in fit"].sum() == 7
    fitted = table[table["in fit"]]
    assert set(fitted["source"]) == {"MLPerf Inference Power", "Brookhaven National Laboratory"}
    assert fitted["error (%)"].abs().max() < 12 and fitted["error, leave source out (%)"].abs().max() < 25
    rated = table.dropna(subset=["bound W per GPU"])
    assert (rated["measured W per GPU"] < rated["bound W per GPU"]).all()  # no system draws more than its rating
    b200 = table.loc["mlperf51-b200-air-llama2-offline"]
    assert b200["measured W per GPU"] == pytest.approx(10401.0 / 8)
    assert b200["measured J per token"] == pytest.approx(10401.0 / 102909.0)
    assert hw.cost_check.power_fit(left_out="Brookhaven National Laboratory") == pytest.approx(
        np.mean([10401.0, 10442.26, 9891.76, 9566.18, 9436.05, 9011.07]) / 8 / 1000
    )
