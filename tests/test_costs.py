"""The cost of chip time: dollars, energy and CO2e of served tokens and training runs (hwlib.costs)."""

import numpy as np
import pytest

import hwlib as hw
from hwlib.data import prices
from hwlib.training.run import plan_run

H100 = hw.chip("h100-sxm")


def test_a_cost_is_price_times_chip_hours_and_power_times_pue_times_time():
    cost = hw.costs.cost(7200.0, H100, bound_chip_seconds=3600.0, tokens=1e6, price=3.0, pue=1.2, grid=400.0)
    assert cost.chip_hours == 2.0 and cost.bound_chip_hours == 1.0
    assert cost.usd == pytest.approx(6.0) and cost.bound_usd == pytest.approx(3.0)
    wall = hw.data.calibrated.SYSTEM_POWER_PER_TDP.value * 700.0  # per H100 (TDP 700 W) at the wall
    assert cost.power_w == pytest.approx(wall) and cost.energy_j == pytest.approx(7200.0 * wall * 1.2)
    assert cost.co2e_kg == pytest.approx(7200.0 * wall * 1.2 / 3.6e6 * 400.0 / 1e3)
    assert cost.usd_per_million_tokens == pytest.approx(6.0)
    assert cost.joules_per_token == pytest.approx(7200.0 * wall * 1.2 / 1e6)
    assert hw.costs.cost(7200.0, H100, power_w=700.0, pue=1.0).energy_j == 7200.0 * 700.0  # the chip alone
    assert cost.tokens_per_kwh == pytest.approx(3.6e6 / cost.joules_per_token)
    assert cost.co2e_kg_per_million_tokens == pytest.approx(cost.co2e_kg)


def test_defaults_are_the_chips_list_price_a_fleet_pue_and_a_grid():
    cost = hw.costs.cost(3600.0, H100)
    assert cost.price_key == prices.DEFAULT_PRICES["h100-sxm"] == "aws-p5-h100"
    assert cost.usd_per_chip_hour == pytest.approx(55.04 / 8)
    assert cost.pue == prices.PUES[prices.DEFAULT_PUE].value == 1.15
    assert cost.grid_g_per_kwh == pytest.approx(1.53e15 / 4.18e12)
    assert hw.costs.cost(3600.0, H100, price="nebius-h100").usd == pytest.approx(23.60 / 8)


def test_every_price_is_dated_and_per_chip():
    for record in prices.PRICES:
        assert record.terms in prices.TERMS and record.instance.unit == "USD/h" and record.instance.read_on
        assert record.usd_per_chip_hour == pytest.approx(record.instance.value / record.chips)
        assert hw.chip(record.chip_key).key == record.chip_key
    for key in prices.DEFAULT_PRICES.values():
        assert prices.PRICE_BY_KEY[key].terms in ("on-demand", "assumed rental")
    assert prices.PRICE_BY_KEY["gcp-v5p"].chips == 4  # a v5p-8 slice is eight cores on four chips


def test_serving_cost_of_a_million_tokens_falls_with_the_rate():
    cost = hw.costs.serving_cost(np.array([1000.0, 2000.0]), H100, bound_tokens_per_s_per_chip=4000.0)
    np.testing.assert_allclose(cost.usd_per_million_tokens, [6.88e6 / 3600 / 1000, 6.88e6 / 3600 / 2000])
    assert cost.bound_usd_per_million_tokens == pytest.approx(6.88e6 / 3600 / 4000)


def test_a_simulated_load_pays_for_its_idle_time():
    served = hw.simulate_serving(
        hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr"), 1, arrival_rate_per_s=1.0, prompt_len=512, output_len=128,
        n_requests=40,
    )  # fmt: skip
    cost = hw.costs.simulated_cost(served, H100)
    assert cost.chip_seconds == pytest.approx(served.duration_s)
    assert cost.usd_per_million_tokens == pytest.approx(
        6.88 * served.duration_s / 3600 / served.output_tokens.sum() * 1e6
    )


def test_a_training_step_through_a_budget_and_a_whole_run():
    model, cluster = hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr")
    step = hw.train_step(model, cluster, hw.Mesh(fsdp=8), 8 * 8192, 8192)
    cost = hw.costs.training_cost(step, H100, tokens=1e12)
    assert cost.chip_seconds == pytest.approx(8 * 1e12 / step.forecast_tokens_per_s)
    assert cost.bound_chip_seconds == pytest.approx(8 * 1e12 / step.tokens_per_s)
    assert cost.bound_usd < cost.usd
    run = plan_run(model, cluster, 8, 1e12, 8192, global_batch_tokens=8 * 8192)
    whole = hw.costs.training_cost(run, H100)
    assert whole.chip_hours == pytest.approx(run.forecast_chip_hours)
    assert whole.bound_chip_hours == pytest.approx(run.bound_chip_hours)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: hw.costs.cost(-1.0, H100), ValueError, "chip_seconds"),
        (lambda: hw.costs.cost(1.0, H100, bound_chip_seconds=2.0), ValueError, "bound_chip_seconds"),
        (lambda: hw.costs.cost(1.0, H100, price="gcp-v5e"), ValueError, "for chip 'v5e'"),
        (lambda: hw.costs.cost(1.0, H100, price="aws-h100"), KeyError, "aws-p5-h100"),
        (lambda: hw.costs.cost(1.0, H100, pue="best"), KeyError, "aws-2023"),
        (lambda: hw.costs.cost(1.0, H100, grid=0.0), ValueError, "grid"),
        (lambda: hw.costs.cost(1.0, hw.chip("v4")), ValueError, "no price"),
        (lambda: hw.costs.cost(1.0, H100).usd_per_million_tokens, ValueError, "tokens"),
        (lambda: hw.costs.cost(1.0, hw.chip("v5e")).energy_j, ValueError, "power_w"),
        (lambda: hw.costs.simulated_cost("a run", H100), TypeError, "simulate_serving"),
        (lambda: hw.costs.training_cost("a run", H100), TypeError, "plan_run"),
    ],
)
def test_bad_input_names_the_parameter(call, error, match):
    with pytest.raises(error, match=match):
        call()
