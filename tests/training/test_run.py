"""A whole training run (hwlib/training/run.py): its time is its steps times the planner's best step, and the
batch it chooses for a target is the one the squeeze favours."""

from __future__ import annotations

import json

import pytest

import hwlib as hw
from hwlib.training.run import plan_run
from tests.test_cli import ok

H100, LLAMA8 = hw.cluster("hgx-h100-ndr"), hw.model("llama-3-8b")


def test_a_run_of_a_fixed_budget_is_its_steps_times_the_best_step():
    run = plan_run(LLAMA8, H100, 64, 1e12, 8192, global_batch_tokens=2**22)
    best = hw.plan_training(LLAMA8, H100, 2**22, 8192, 64).feasible[0].step
    assert run.steps == pytest.approx(1e12 / 2**22) and run.step.mesh == best.mesh
    assert run.forecast_time_s == pytest.approx(run.steps * float(best.forecast_time_s))
    assert run.bound_time_s == pytest.approx(run.steps * best.time_s) and run.bound_time_s < run.forecast_time_s
    assert run.forecast_chip_hours == pytest.approx(run.forecast_time_s * 64 / 3600)
    assert run.forecast_tokens_per_s == pytest.approx(1e12 / run.forecast_time_s)


def test_to_a_target_the_batch_trades_fixed_costs_against_extra_tokens():
    run = plan_run(LLAMA8, H100, 64, 1e12, 8192, critical_batch_tokens=4e6)
    batches = sorted(run.tried)
    assert batches[0] >= 4e6 / 16 and batches[-1] <= 4 * 4e6
    assert run.forecast_time_s == min(run.tried.values())
    assert run.tokens == pytest.approx(1e12 * (1 + run.global_batch_tokens / 4e6))  # McCandlish et al.'s E
    # neither end of the range is best: small batches pay each step's fixed costs, large ones the extra tokens
    assert batches[0] < run.global_batch_tokens < batches[-1]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "needs global_batch_tokens or critical_batch_tokens"),
        ({"global_batch_tokens": -1}, "global_batch_tokens must be"),
        ({"critical_batch_tokens": 0}, "critical_batch_tokens must be"),
    ],
)
def test_a_run_refuses_what_it_cannot_plan(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plan_run(LLAMA8, H100, 64, 1e12, 8192, **kwargs)


def test_train_prices_a_whole_run():
    args = ("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "64", "--seq-len", "8192")
    data = json.loads(ok(*args, "--global-batch-tokens", "4194304", "--tokens", "1000000000000", "--json"))
    run = plan_run(LLAMA8, H100, 64, 1e12, 8192, global_batch_tokens=2**22)
    assert data["forecast_run_time_s"] == pytest.approx(run.forecast_time_s)
    assert data["bound_chip_hours"] == pytest.approx(run.bound_chip_hours)
    text = ok(*args, "--global-batch-tokens", "4194304", "--tokens", "1000000000000")
    assert "whole run" in text and "1,000,000,000,000 tokens" in text
