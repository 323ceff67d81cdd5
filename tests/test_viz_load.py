"""The chapters "Serving many users", "Prefix caching, speculation and disaggregation" and "Serving under load,
measured": their figures (hwlib.viz.load_figures) draw what the simulation and the step
model say, and the first's explorer (hw.viz.ServingLoadExplorer) shows a direct hw.simulate_serving call; bad input is
named."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

import hwlib as hw
from hwlib.serving.simulate import queue_wait_s
from hwlib.viz import load_figures
from hwlib.viz.explorers import Explorer
from hwlib.viz.explorers import load as load_explorer

LLAMA8, H100 = hw.model("llama-3-8b"), hw.chip("H100-SXM")
QWEN7, DRAFT = hw.model("qwen2.5-7b"), hw.model("qwen2.5-1.5b")


def simulated(rate: float, **options: object) -> hw.simulate_serving:
    return hw.simulate_serving(
        LLAMA8, H100, arrival_rate_per_s=rate, n_requests=60, prompt_len=512, output_len=32, **options
    )


RUNS = {rate: simulated(rate) for rate in (2.0, 8.0, 32.0)}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_the_names_load_lazily_from_their_module():
    for name in ("plot_queue_wait", "plot_latency_under_load", "plot_batch_over_time", "plot_speculation"):
        assert getattr(hw.viz, name) is getattr(load_figures, name)
    assert hw.viz.plot_goodput is load_figures.plot_goodput
    assert hw.viz.ServingLoadExplorer is load_explorer.ServingLoadExplorer


def test_queue_wait_draws_the_closed_form_and_the_simulated_means():
    service, loads, waits = 2.0, [0.3, 0.6, 0.9], [0.4, 1.5, 9.0]
    ax = hw.viz.plot_queue_wait(service, loads, waits, errors_s=[0.1, 0.2, 3.0])
    closed, dots = ax.get_lines()[0], ax.get_lines()[1]
    np.testing.assert_allclose(closed.get_ydata(), queue_wait_s(closed.get_xdata() / service, service) / service)
    np.testing.assert_allclose(dots.get_xdata(), loads)
    np.testing.assert_allclose(dots.get_ydata(), np.array(waits) / service)
    assert "M/D/1" in closed.get_label() and ax.get_yscale() == "log"
    spread = hw.viz.plot_queue_wait(service, loads, waits, service_cv=1.0).get_lines()[0]
    assert "c = 1" in spread.get_label()
    np.testing.assert_allclose(spread.get_ydata(), queue_wait_s(spread.get_xdata() / service, service, 1.0) / service)


def test_latency_under_load_draws_each_runs_percentiles():
    axes = hw.viz.plot_latency_under_load(RUNS, capacity_per_s=18.0)
    ttft, tpot = axes
    p50, p99 = ttft.get_lines()[0], ttft.get_lines()[1]
    np.testing.assert_allclose(p50.get_xdata(), sorted(RUNS))
    np.testing.assert_allclose(p50.get_ydata(), [RUNS[r].percentile("ttft", 50) for r in sorted(RUNS)])
    np.testing.assert_allclose(p99.get_ydata(), [RUNS[r].percentile("ttft", 99) for r in sorted(RUNS)])
    per_token = tpot.get_lines()[1]
    np.testing.assert_allclose(per_token.get_ydata(), [1e3 * RUNS[r].percentile("tpot", 99) for r in sorted(RUNS)])
    assert (p50.get_label(), p99.get_label()) == ("p50", "p99")
    capacity = ttft.get_lines()[2]
    assert list(capacity.get_xdata()) == [18.0, 18.0]
    assert "(s)" in ttft.get_ylabel() and "(ms)" in tpot.get_ylabel()


def test_latency_under_load_takes_labelled_setups_other_settings_and_baselines():
    chunked = {budget: simulated(8.0, chunked_prefill=True, max_batch_tokens=budget) for budget in (512, 2048)}
    axes = hw.viz.plot_latency_under_load(
        {"plain": RUNS, "other": RUNS}, capacity_per_s={"plain": 18.0}, quantiles=[99], axes=None
    )
    plain, mark, other = axes[0].get_lines()
    assert (plain.get_label(), other.get_label()) == ("plain, p99", "other, p99")
    assert list(mark.get_xdata()) == [18.0, 18.0] and mark.get_color() == plain.get_color() != other.get_color()
    axes = hw.viz.plot_latency_under_load(
        chunked, x_label="prefill chunk: tokens per step", x_scale="log", baselines={"whole prompts": RUNS[8.0]}
    )
    whole = [line for line in axes[1].get_lines() if line.get_label() == "whole prompts, p50"][0]
    assert whole.get_ydata()[0] == pytest.approx(1e3 * RUNS[8.0].percentile("tpot", 50))
    np.testing.assert_allclose(axes[1].get_lines()[0].get_xdata(), [512, 2048])
    assert axes[0].get_xscale() == "log" and axes[0].get_xlabel() == "prefill chunk: tokens per step"


def test_batch_over_time_draws_each_step_and_keeps_decode_steps_when_asked():
    run = RUNS[8.0]
    ax = hw.viz.plot_batch_over_time({"8 requests/s": run}, limits={"cap": 256}, until_s=5)
    line = ax.get_lines()[0]
    np.testing.assert_allclose(line.get_xdata(), run.step_end_s)
    np.testing.assert_allclose(line.get_ydata(), run.step_sequences)
    assert ax.get_lines()[1].get_ydata()[0] == 256 and ax.get_xlim() == (0.0, 5.0)
    decoding = hw.viz.plot_batch_over_time({"8 requests/s": run}, decode_only=True).get_lines()[0]
    kept = run.step_tokens == run.step_sequences
    assert 0 < kept.sum() < len(kept)  # this run has prefill steps too
    np.testing.assert_allclose(decoding.get_ydata(), run.step_sequences[kept])


def test_speculation_draws_the_speedup_of_inference_step():
    spec = hw.Speculation(4, 0.8, DRAFT)
    batches = np.array([1, 8, 64, 512])
    ax = hw.viz.plot_speculation(QWEN7, H100, {"a = 0.8": spec}, batches, 1024, bound=True)
    forecast, bound = ax.get_lines()[0], ax.get_lines()[1]
    plain = hw.inference_step(QWEN7, H100, batches, 1024)
    guessed = hw.inference_step(QWEN7, H100, batches, 1024, speculation=spec)
    np.testing.assert_allclose(
        forecast.get_ydata(), spec.tokens_per_step * plain.forecast_time_s / guessed.forecast_time_s
    )
    np.testing.assert_allclose(bound.get_ydata(), spec.tokens_per_step * plain.time_s / guessed.time_s)
    assert forecast.get_ydata()[0] > 1 > forecast.get_ydata()[-1]  # pays at batch 1, loses at 512
    assert (forecast.get_label(), bound.get_label()) == ("a = 0.8, forecast", "a = 0.8, bound")
    assert len(hw.viz.plot_speculation(QWEN7, H100, {"a": spec}, batches, 1024).get_lines()) == 2  # line and 1


def test_goodput_draws_the_given_values_beside_the_diagonal():
    rates, values = [4, 8, 12], {"colocated": [4.0, 7.5, 3.0], "split": [4.0, 8.0, 11.0]}
    ax = hw.viz.plot_goodput(rates, values)
    diagonal, colocated, split = ax.get_lines()
    np.testing.assert_allclose(diagonal.get_ydata(), rates)
    np.testing.assert_allclose(colocated.get_ydata(), values["colocated"])
    np.testing.assert_allclose(split.get_xdata(), rates)
    assert split.get_label() == "split" and "requests/s" in ax.get_ylabel()


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.viz.plot_queue_wait(2.0, [0.5, 1.0], [1.0, 2.0]), ValueError, "loads must each be below 1"),
        (lambda: hw.viz.plot_queue_wait(2.0, [0.5], [1.0, 2.0]), ValueError, "simulated_wait_s must hold one"),
        (lambda: hw.viz.plot_queue_wait(2.0, [0.5], [1.0], errors_s=[1, 2]), ValueError, "errors_s must hold one"),
        (lambda: hw.viz.plot_queue_wait(-1.0, [0.5], [1.0]), ValueError, "service_s"),
        (lambda: hw.viz.plot_latency_under_load({}), TypeError, "runs must be a non-empty mapping"),
        (lambda: hw.viz.plot_latency_under_load({1.0: "run"}), TypeError, r"runs\[1.0\] must be"),
        (lambda: hw.viz.plot_latency_under_load({-1.0: RUNS[2.0]}), ValueError, "the keys of runs"),
        (lambda: hw.viz.plot_latency_under_load(RUNS, quantiles=[101]), ValueError, "quantiles must be"),
        (lambda: hw.viz.plot_latency_under_load(RUNS, x_scale="symlog"), ValueError, "x_scale must be one of"),
        (
            lambda: hw.viz.plot_latency_under_load({"a": RUNS}, capacity_per_s={"b": 1.0}),
            ValueError,
            "capacity_per_s names",
        ),
        (lambda: hw.viz.plot_batch_over_time([RUNS[2.0]]), TypeError, "runs must be a non-empty mapping"),
        (lambda: hw.viz.plot_batch_over_time({"a": RUNS[2.0]}, decode_only="yes"), TypeError, "decode_only"),
        (lambda: hw.viz.plot_batch_over_time({"a": RUNS[2.0]}, limits={"cap": 0}), ValueError, "limits"),
        (lambda: hw.viz.plot_speculation(QWEN7, H100, {"a": (4, 0.8)}, [1], 1024), TypeError, "speculations"),
        (lambda: hw.viz.plot_speculation("qwen", H100, {}, [1], 1024), TypeError, "model must be"),
        (
            lambda: hw.viz.plot_speculation(QWEN7, H100, {"a": hw.Speculation(4, 0.8, DRAFT)}, [0], 1024),
            ValueError,
            "batches",
        ),
        (lambda: hw.viz.plot_goodput([1, 2], {"a": [1.0]}), ValueError, r"goodput\['a'\] must hold one value"),
        (lambda: hw.viz.plot_goodput([1, 2], [1.0, 2.0]), TypeError, "goodput must be a non-empty mapping"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()


def other_value(control: widgets.ValueWidget) -> object:
    values = [option[1] if isinstance(option, tuple) else option for option in control.options]
    return values[-1] if control.value != values[-1] else values[0]


def test_explorer_builds_with_defaults_and_offers_closed_form_models():
    explorer = hw.viz.ServingLoadExplorer()
    assert isinstance(explorer, Explorer) and explorer.image.value[:4] == b"\x89PNG"
    assert explorer.model.value is LLAMA8 and explorer.chip.value is H100
    offered = [record for _, record in explorer.model.options]
    assert all(not m.windows and m.mla is None for m in offered) and hw.model("llama-3-70b") in offered
    assert "application/vnd.jupyter.widget-view+json" in explorer._repr_mimebundle_()


def test_explorer_lines_are_a_direct_simulation():
    explorer = hw.viz.ServingLoadExplorer(rate_per_s=16, prompt_len=512, output_len=128, budget=1024)
    run = hw.simulate_serving(
        LLAMA8,
        H100,
        n_requests=load_explorer.REQUESTS,
        arrival_rate_per_s=16,
        prompt_len=512,
        output_len=128,
        chunked_prefill=True,
        max_batch_tokens=1024,
    )
    share = np.arange(1, load_explorer.REQUESTS + 1) / load_explorer.REQUESTS
    ttft, tpot = explorer._ttft, explorer._tpot
    np.testing.assert_allclose(ttft.get_xdata(), np.sort(run.ttft_s))
    np.testing.assert_allclose(tpot.get_xdata(), np.sort(run.tpot_s))
    np.testing.assert_allclose(ttft.get_ydata(), share)
    summary = explorer.summary.value
    assert hw.format_seconds(run.percentile("ttft", 99)) in summary
    assert hw.format_seconds(run.percentile("tpot", 50)) in summary
    assert f"{run.output_tokens_per_s:,.0f}" in summary and explorer.n_requests == load_explorer.REQUESTS
    explorer.acceptance.value = 0.7  # speculation by one layer of the model
    drafted = hw.simulate_serving(
        LLAMA8,
        H100,
        n_requests=load_explorer.REQUESTS,
        arrival_rate_per_s=16,
        prompt_len=512,
        output_len=128,
        chunked_prefill=True,
        max_batch_tokens=1024,
        speculation=hw.Speculation(load_explorer.DRAFT_TOKENS, 0.7, "one layer"),
    )
    np.testing.assert_allclose(explorer._tpot.get_xdata(), np.sort(drafted.tpot_s))


def test_every_explorer_control_updates_the_summary_and_the_picture():
    for index in range(len(hw.viz.ServingLoadExplorer().controls)):
        explorer = hw.viz.ServingLoadExplorer()
        control = explorer.controls[index]
        summary, picture = explorer.summary.value, explorer.image.value
        control.value = other_value(control)
        assert explorer.summary.value != summary, f"{control.description} left the summary as it was"
        assert explorer.image.value != picture, f"{control.description} left the picture as it was"


def test_explorer_says_when_a_model_does_not_fit():
    explorer = hw.viz.ServingLoadExplorer(model=hw.model("llama-3-70b"))
    assert "do not fit" in explorer.summary.value
    assert not explorer._ttft.get_visible()


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        (dict(rate_per_s=3), ValueError, "rate_per_s must be one of"),
        (dict(prompt_len=4096), ValueError, "prompt_len must be one of"),
        (dict(output_len=1000), ValueError, "output_len must be one of"),
        (dict(budget=256), ValueError, "budget must be one of"),
        (dict(acceptance=0.95), ValueError, "acceptance must be one of"),
        (dict(chip="H100-SXM"), TypeError, "chip must be a Chip record"),
        (dict(model=hw.model("gemma-2-9b")), ValueError, "not among the explorer's models"),
    ],
)
def test_explorer_bad_arguments_are_named(options, error, words):
    with pytest.raises(error, match=words):
        hw.viz.ServingLoadExplorer(**options)


def test_the_closed_loop_check_draws_each_engine_and_publisher_against_the_diagonal():
    """Two log-log panels: one scatter per (engine, publisher) with one point per simulated run, its measured mean
    (else median) against the simulated one, the diagonal, and the aims' band around it; runs without a simulation
    are left out."""
    import pandas as pd

    table = pd.DataFrame(
        {
            "source": ["A", "A", "B", "B"],
            "engine": ["vllm", "vllm", "trtllm", "sglang"],
            "ttft_measured_s": [0.1, 0.2, 0.3, 0.4],
            "ttft_s": [0.11, 0.18, np.nan, 0.5],
            "tpot_measured_s": [0.01, 0.02, 0.03, np.nan],
            "tpot_s": [0.012, 0.019, np.nan, 0.035],
        }
    )
    ttft, tpot = hw.viz.plot_closed_loop_check(table, aims=(0.25, 0.1))
    for ax, name, drawn in ((ttft, "ttft", [2, 1]), (tpot, "tpot", [2])):
        assert ax.get_xscale() == ax.get_yscale() == "log"
        points = [collection.get_offsets() for collection in ax.collections[1:]]
        assert [
            len(p) for p in points
        ] == drawn  # vLLM's two runs of A, SGLang's of B (no TPOT printed); trtllm's unsimulated
        np.testing.assert_allclose(points[0], table[[f"{name}_measured_s", f"{name}_s"]].to_numpy()[:2])
        (diagonal,) = ax.get_lines()
        np.testing.assert_allclose(diagonal.get_xdata(), diagonal.get_ydata())
    band = ttft.collections[0].get_paths()[0].vertices[:, 1] / ttft.collections[0].get_paths()[0].vertices[:, 0]
    assert band.min() == pytest.approx(0.75) and band.max() == pytest.approx(1.25)
    assert "vLLM 0.11.0 defaults, A" in [text.get_text() for text in ttft.get_legend().get_texts()]


def test_the_closed_loop_check_refuses_what_it_cannot_draw():
    import pandas as pd

    with pytest.raises(TypeError, match="table must be a concurrency_check"):
        hw.viz.plot_closed_loop_check([1, 2])
    with pytest.raises(ValueError, match="lacks the columns"):
        hw.viz.plot_closed_loop_check(pd.DataFrame({"source": ["A"]}))
    table = pd.DataFrame({name: [np.nan] for name in ("ttft_measured_s", "ttft_s", "tpot_measured_s", "tpot_s")})
    table = table.assign(source="A", engine="vllm")
    with pytest.raises(ValueError, match="no simulated run"):
        hw.viz.plot_closed_loop_check(table)
    with pytest.raises(ValueError, match="aims must be two fractions"):
        hw.viz.plot_closed_loop_check(table, aims=(0.25, 1.5))
