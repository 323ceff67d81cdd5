"""The serving simulation against measured runs under load: the records quote what they hold, each run is simulated
as it states, a measured run never beats the bound, and the forecast's errors stay where the chapter says."""

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import hwlib as hw
from hwlib.data.records import LOAD_METRICS, LoadRun, SpeculationRun
from hwlib.data.request_traces import DATASET_PERCENTILES, PERCENTILES
from hwlib.serving import closed_loop as closed
from hwlib.serving import load_check as check

RUNS = check.load_runs()
H200_SERVER, H100_SERVER = RUNS[0], RUNS[1]
PREFIX_10 = next(run for run in RUNS if run.key == "vllm-pr1983-llama13b-10qps-prefix")


def _numbers(text: str) -> list[float]:
    return [float(number) for number in re.findall(r"\d+(?:\.\d+)?", text)]


def test_every_measured_number_is_in_its_quote():
    for run in RUNS:
        quoted = [run.rate_per_s, *run.measured.values()] + ([run.capacity_per_s] if run.capacity_per_s else [])
        for value in quoted:
            scales = (1.0, 1e-3, 1e-9)
            assert any(np.isclose(value.value, n * s, rtol=1e-9) for n in _numbers(value.quoted) for s in scales), (
                run.key,
                value,
            )
        assert set(run.measured) <= set(LOAD_METRICS) and run.n_chips % run.tensor_parallel == 0
    for run in check.speculation_runs():
        assert [float(s) for s in run.speedups] == _numbers(run.speedups[0].quoted)[1:]  # "EAGLE-3" then the row


def test_the_dataset_lengths_follow_their_percentiles():
    trace = hw.request_trace("mlperf-llama2-openorca")
    prompts, answers = DATASET_PERCENTILES["mlperf-llama2-openorca"]
    np.testing.assert_allclose(np.percentile(trace.prompt_tokens, PERCENTILES[1:-1]), prompts[1:-1], rtol=0.02)
    assert trace.prompt_tokens.min() >= prompts[0] and trace.output_tokens.max() <= answers[-1]
    assert trace.prompt_tokens.mean() == pytest.approx(222.33, rel=0.02)  # the dataset's own mean prompt
    assert trace.arrival_s is None
    with pytest.raises(ValueError, match="without arrival times"):
        _ = trace.rate_per_s
    with pytest.raises(ValueError, match="without segments"):
        hw.request_trace("mlperf-llama2-openorca", segment=1)


def test_each_run_is_simulated_as_it_states():
    prompts, answers = check.load_run_lengths(H200_SERVER, 4000)
    assert answers.mean() == pytest.approx(H200_SERVER.output_len, rel=0.03) and prompts.max() <= 1021
    fixed = check.load_run_lengths(PREFIX_10, 5)
    assert list(fixed[0]) == [230] * 5 and list(fixed[1]) == [50] * 5
    one = check.simulate_load_run(PREFIX_10, n_requests=300)
    direct = hw.simulate_serving(
        hw.model("llama-2-13b"),
        hw.chip("a100-80gb"),
        n_requests=300,
        arrival_rate_per_s=10,
        prompt_len=230,
        output_len=50,
        prefix_tokens=200,
        prefix_hit_rate=1.0,
        max_batch_tokens=8192,
        **PREFIX_10.dtypes,
    )
    np.testing.assert_array_equal(one.ttft_s, direct.ttft_s)
    assert check.simulated_metric(PREFIX_10, one, "ttft_mean_s") == pytest.approx(direct.ttft_s.mean())
    assert check.simulated_metric(PREFIX_10, one, "ttft_p99_s") == pytest.approx(np.percentile(direct.ttft_s, 99))
    share = check.simulate_load_run(H100_SERVER, n_requests=300)
    assert check.simulated_metric(H100_SERVER, share, "requests_per_s") == pytest.approx(4 * share.steady_per_s()[0])


def test_no_measured_run_beats_the_bound():
    for row in check.load_check(n_requests=1000):
        if row["metric"] in ("requests_per_s", "output_tokens_per_s"):
            continue  # the offered load, which both simulations complete
        if row["metric"] == "capacity_per_s":
            assert row["bound"] >= row["measured"], row
        else:
            assert row["bound"] <= row["measured"], row


def test_the_forecast_finds_the_rate_mlperf_reports():
    for run in (H200_SERVER, H100_SERVER):
        found = check.largest_rate_within_limits(run, steps=6)
        assert found == pytest.approx(run.rate_per_s.value, rel=0.08), (run.key, found)
        assert check.simulated_capacity_per_s(run) == pytest.approx(run.capacity_per_s.value, rel=0.08)
    with pytest.raises(ValueError, match="states no latency limits"):
        check.largest_rate_within_limits(PREFIX_10)


def test_eagle3_speedups_fall_with_the_batch_as_the_forecast_does():
    result = check.speculation_check(check.speculation_runs()[0])
    assert result["forecast"][0] == pytest.approx(result["measured"][0], rel=1e-6)  # fitted there
    assert 0.5 < result["acceptance"] < 0.8
    held_out = np.abs(result["error"][1:])
    assert held_out.mean() < 0.12 and held_out.max() < 0.25
    assert np.all(np.diff(result["forecast"]) <= 1e-9)  # the forecast speed-up never grows with the batch
    with pytest.raises(TypeError, match="run must be a SpeculationRun"):
        check.speculation_check(H200_SERVER)


def test_bad_records_and_arguments_are_named():
    with pytest.raises(ValueError, match="allowed"):
        replace(PREFIX_10, measured={"ttft_p95_s": PREFIX_10.measured["ttft_mean_s"]})
    with pytest.raises(ValueError, match="tensor_parallel 3 must divide"):
        replace(PREFIX_10, tensor_parallel=3)
    with pytest.raises(ValueError, match="one speed-up per batch"):
        replace(check.speculation_runs()[0], batches=(2,))
    with pytest.raises(ValueError, match="rate_scale must be > 0"):
        check.simulate_load_run(PREFIX_10, rate_scale=0)
    with pytest.raises(ValueError, match="estimate must be one of"):
        check.simulate_load_run(PREFIX_10, estimate="guess")
    with pytest.raises(TypeError, match="run must be a LoadRun"):
        check.simulate_load_run("h200")
    assert isinstance(H200_SERVER, LoadRun) and isinstance(check.speculation_runs()[0], SpeculationRun)


def test_the_tables_show_each_measured_number_beside_the_simulation():
    table = hw.viz.load_check_table([PREFIX_10])
    assert list(table.index.get_level_values("measured")) == [
        "completed requests/s",
        "latency mean (ms)",
        "TTFT mean (ms)",
    ]
    row = table.loc[(PREFIX_10.key, "TTFT mean (ms)")]
    assert row["value"] == pytest.approx(1e3 * PREFIX_10.measured["ttft_mean_s"].value)
    assert row["error (%)"] == pytest.approx(100 * (row["forecast"] / row["value"] - 1))
    sources = hw.viz.load_sources_table([PREFIX_10])
    assert sources.loc[PREFIX_10.key, "load quoted"] == PREFIX_10.rate_per_s.quoted
    assert "vLLM" in sources.loc[PREFIX_10.key, "outside the model"]
    curve = hw.viz.speculation_check_table()
    assert list(curve.index) == list(check.speculation_runs()[0].batches)
    for table_of in (hw.viz.load_check_table, hw.viz.load_sources_table):
        with pytest.raises(TypeError, match="LoadRun records"):
            table_of(["sglang"])


def test_the_closed_loop_runs_read_as_their_file_states():
    from hwlib.data.concurrency_runs import GPUSTACK_FILE, INFERENCEX_FILE, RUNS_FILE, SOURCES, concurrency_runs

    runs = concurrency_runs()
    printed = ["ttft_mean_s", "ttft_median_s", "tpot_mean_s", "tpot_median_s", "ttft_tail_s", "tpot_tail_s"]
    stated = runs.drop(columns=[*printed, "request_rate"])  # only where the source prints them, or runs open loops
    assert not stated.isna().any().any() and set(runs["precision"]) <= set(hw.PRECISIONS)
    assert (runs["ttft_mean_s"].notna() | runs["ttft_median_s"].notna()).all()  # every run prints a first token
    assert ((runs["concurrency"] == 0) == runs["request_rate"].notna()).all()  # a closed loop or Poisson arrivals
    nim, ix, gs, team, datacrunch, blog, recipes = (runs[runs["source"] == source] for source in SOURCES)
    assert len(gs) == 7 and set(gs["engine"]) == {"vllm", "sglang", "trtllm"} and set(gs["model"]) == {"qwen3-8b"}
    assert set(gs["prompt_tokens"]) == {233} and set(gs["output_tokens"]) == {221}  # 23,260 and 22,061 over 100
    assert set(gs.loc[gs["engine"] == "vllm", "concurrency"]) == {1, 2, 4, 8}
    assert (gs["precision"] == "fp8, bf16 KV").sum() == 1
    assert gs["ttft_mean_s"].iloc[0] == pytest.approx(27.70e-3) and gs["tpot_mean_s"].iloc[0] == pytest.approx(7.19e-3)
    assert GPUSTACK_FILE.read_text().count("\n") == 8
    assert set(runs["engine"]) == {"vllm", "sglang", "trtllm", "trtllm-0.11"}  # three engines, TensorRT-LLM twice
    assert len(team) == 8 and set(team["request_rate"]) == {4.0, 8.0} and team["ttft_mean_s"].isna().all()
    assert set(team.loc[team["engine"] == "vllm", "recv_interval"]) == {10}  # --num-scheduler-steps 10
    # ShareGPT's seeded sample as DataCrunch's runs print it: 269,081 and 226,901 tokens over 1,200 requests
    assert set(zip(team["requests"], team["prompt_tokens"], team["output_tokens"])) == {
        (1200, 224, 189),
        (2400, 225, 192),
    }
    assert len(datacrunch) == 13 and datacrunch["tpot_median_s"].isna().all()  # a median ITL is not a TPOT
    random = datacrunch[datacrunch["length_low"] == 0]
    assert len(random) == 9 and set(random["prompt_tokens"]) == {1024} and set(random["chips"]) == {4, 8}
    assert random["ttft_median_s"].max() == pytest.approx(123.71862683666404)  # 405B at 8 requests/s, in s
    assert len(blog) == 1 and blog["prompt_tokens"].iloc[0] == 23000 and blog["length_low"].iloc[0] * 23000 == 17000
    # vLLM's MI355X recipe: 1,048,448 prompt tokens over 128 requests, its server's 32,768 tokens a step
    assert list(recipes["precision"]) == ["fp8", "mxfp4, fp8 KV"] and set(recipes["prompt_tokens"]) == {8191}
    assert set(recipes["max_batch_tokens"]) == {32768} and (runs.drop(recipes.index)["max_batch_tokens"] == 0).all()
    assert recipes["ttft_mean_s"].iloc[0] == pytest.approx(11.63966) and (recipes["tail_percentile"] == 99).all()
    assert set(nim["engine"]) == {"trtllm-0.11"} and set(nim["precision"]) == {"fp16", "bf16", "fp8"}
    assert len(nim) == 787 and set(nim["model"]) == {"llama-3-8b", "llama-3-70b"}
    assert set(nim["concurrency"]) == {1, 2, 5, 10, 25, 50, 100, 150, 200, 250}
    first = RUNS_FILE.read_text().splitlines()[1].split(",")
    assert first[0] == "meta-llama3-8b-instruct" and float(first[11]) * 1e-9 == pytest.approx(runs["ttft_mean_s"][0])
    assert len(ix) == 75 and set(ix["engine"]) == {"sglang", "trtllm"} and set(ix["model"]) == {"deepseek-v3"}
    assert (ix["requests"] == 10 * ix["concurrency"]).all() and (gs["requests"] == 100).all()  # as each client sent
    assert (nim["requests"] == 0).all()  # GenAI-Perf's count is not in the dataset
    assert (nim["tail_percentile"] == 95).all() and (ix["tail_percentile"] == 99).all()
    assert (gs["tail_percentile"] == 0).all() and gs[["ttft_tail_s", "tpot_tail_s"]].isna().all().all()
    assert float(first[12]) * 1e-9 == pytest.approx(runs["ttft_tail_s"][0])  # time_to_first_token-p95, in ns
    assert ix["tpot_tail_s"].isna().all() and (ix["ttft_tail_s"] > ix["ttft_mean_s"]).all()  # p99 printed, TTFT only
    assert set(ix["cluster"]) == {"hgx-h200-ndr", "hgx-b200-ndr", "mi300x-node"} and (ix["length_low"] == 0.8).all()
    assert set(ix["precision"]) == {"fp8", "nvfp4, fp8 KV"} and ix["attention_dp"].sum() == 3
    assert set(ix[ix["precision"] != "fp8"]["cluster"]) == {"hgx-b200-ndr"}
    line = INFERENCEX_FILE.read_text().splitlines()[1].split(",")
    assert float(line[13]) == ix["ttft_mean_s"].iloc[0] and float(line[16]) == ix["tpot_mean_s"].iloc[0]
    assert float(line[14]) == ix["ttft_median_s"].iloc[0] and float(line[17]) == ix["tpot_median_s"].iloc[0]
    assert pd.concat([nim, gs])[["ttft_median_s", "tpot_median_s"]].isna().all().all()
    # SGLang's B200 recipes take in requests every 10th step, every 30th from 16 clients on; every other run each step
    b200 = (ix["cluster"] == "hgx-b200-ndr") & (ix["engine"] == "sglang") & ~ix["attention_dp"]
    expected = np.where(b200, np.where(ix["concurrency"] >= 16, 30, 10), 1)
    assert (ix["recv_interval"] == expected).all() and (
        runs.loc[~runs.index.isin(ix.index) & (runs["engine"] != "vllm"), "recv_interval"] == 1
    ).all()
    assert b200.sum() > 20


def test_closed_loop_runs_are_simulated_as_run_and_beat_no_bound():
    from hwlib.data.concurrency_runs import concurrency_runs

    runs = concurrency_runs()
    some = runs[runs["concurrency"].isin([1, 4, 50, 250])].groupby(["model", "chips", "engine"]).head(2)
    table = closed.concurrency_check(some).dropna(subset=["ttft_s"])
    assert set(table["engine"]) == {"sglang", "trtllm", "trtllm-0.11", "vllm"} and len(table) >= len(some) - 1
    assert (table["ttft_mean_s"] >= table["ttft_bound_s"]).all() and (table["ttft_s"] > table["ttft_bound_s"]).all()
    assert (table["tpot_mean_s"] >= table["tpot_bound_s"]).all() and set(table["statistic"]) == {"mean"}
    row = table.iloc[0]
    simulated = hw.simulate_serving(
        hw.model(row["model"]),
        hw.cluster(row["cluster"]),
        int(row["chips"]),
        prompt_len=int(row["prompt_tokens"]),
        output_len=int(row["output_tokens"]),
        n_requests=max(closed.CLOSED_LOOP_WAVES * int(row["concurrency"]), closed.CLOSED_LOOP_LEAST),
        concurrency=int(row["concurrency"]),
        precision=row["precision"],
        engine=row["engine"],
    )
    assert row["ttft_s"] == pytest.approx(simulated.ttft_s.mean())  # fixed lengths draw the stated ones
    stated = runs[runs["source"] == "GPUStack performance lab"].head(1)
    gs_row = closed.concurrency_check(stated).iloc[0]
    sent = hw.simulate_serving(
        hw.model("qwen3-8b"),
        hw.cluster("hgx-h100-ndr"),
        prompt_len=int(gs_row["prompt_tokens"]),
        output_len=int(gs_row["output_tokens"]),
        n_requests=100,
        concurrency=int(gs_row["concurrency"]),
        precision=gs_row["precision"],
        engine=gs_row["engine"],
    )
    assert gs_row["tpot_s"] == pytest.approx(sent.tpot_s.mean())  # the 100 requests its client sent
    assert np.isnan(gs_row["ttft_tail_forecast_s"]) and np.isnan(gs_row["ttft_tail_error"])  # no tail printed
    ix_run = runs[(runs["source"] == "SemiAnalysis InferenceX") & (runs["concurrency"] == 4)].head(1)
    ix_row = closed.concurrency_check(ix_run).iloc[0]
    low = int(np.ceil(0.8 * ix_row["prompt_tokens"]))
    rng = np.random.default_rng(0)
    count = int(ix_row["requests"])
    prompts = rng.integers(low, int(ix_row["prompt_tokens"]) + 1, count)
    answers = rng.integers(int(np.ceil(0.8 * ix_row["output_tokens"])), int(ix_row["output_tokens"]) + 1, count)
    ix_sim = hw.simulate_serving(
        hw.model("deepseek-v3"),
        hw.cluster(ix_row["cluster"]),
        int(ix_row["chips"]),
        prompt_len=prompts,
        output_len=answers,
        n_requests=count,
        concurrency=4,
        precision=ix_row["precision"],
        engine=ix_row["engine"],
        expert_parallel=bool(ix_row["expert_parallel"]),
        attention_dp=bool(ix_row["attention_dp"]),
    )
    assert ix_row["ttft_tail_forecast_s"] == pytest.approx(ix_sim.percentile("ttft", 99))  # InferenceX prints p99
    assert not np.isnan(ix_row["tpot_tail_forecast_s"]) and np.isnan(ix_row["tpot_tail_error"])  # none measured
    assert row["ttft_error"] == pytest.approx(row["ttft_s"] / row["ttft_mean_s"] - 1)
    tail = int(row["tail_percentile"])
    assert row["ttft_tail_forecast_s"] == pytest.approx(simulated.percentile("ttft", tail))  # at the run's percentile
    assert row["tpot_tail_forecast_s"] == pytest.approx(simulated.percentile("tpot", tail))
    assert row["tpot_tail_error"] == pytest.approx(row["tpot_tail_forecast_s"] / row["tpot_tail_s"] - 1)
    four = runs[(runs["cluster"] == "hgx-b200-ndr") & (runs["chips"] == 4) & (runs["engine"] == "sglang")]
    unfit = closed.concurrency_check(four)
    assert unfit.loc[unfit["precision"] == "fp8", "ttft_s"].isna().all()  # no cache under SGLang's defaults
    assert unfit.loc[unfit["precision"] != "fp8", "ttft_s"].notna().all()  # NVFP4's weights leave room for one


def test_open_loops_are_simulated_at_their_rate_and_compared_at_their_median():
    from hwlib.data.concurrency_runs import concurrency_runs

    runs = concurrency_runs()
    team = runs[runs["source"] == "SGLang team"]
    table = closed.concurrency_check(team[team["request_rate"] == 4])
    assert set(table["statistic"]) == {"median"} and (table["ttft_measured_s"] == table["ttft_median_s"]).all()
    assert (table["ttft_measured_s"] >= table["ttft_bound_s"]).all() and (
        table["tpot_measured_s"] >= table["tpot_bound_s"]
    ).all()
    row = table[(table["engine"] == "sglang") & (table["model"] == "llama-3-8b")].iloc[0]
    simulated = hw.simulate_serving(
        hw.model("llama-3-8b"),
        hw.cluster("hgx-a100-hdr"),
        prompt_len=224,
        output_len=189,
        n_requests=1200,
        arrival_rate_per_s=4,
        precision="bf16",
        engine="sglang",
    )
    assert row["ttft_s"] == pytest.approx(np.median(simulated.ttft_s)) and row["tpot_s"] == pytest.approx(
        np.median(simulated.tpot_s)
    )
    assert row["ttft_error"] == pytest.approx(row["ttft_s"] / row["ttft_median_s"] - 1)
    # vLLM 0.6.0 schedules once every 10 decode steps: a new prompt waits about 5 of them, which its first token shows
    vllm = table[table["engine"] == "vllm"]
    assert (vllm["ttft_error"].abs() < 0.3).all() and (
        table.loc[table["engine"] == "sglang", "tpot_error"].abs() < 0.1
    ).all()
    every_step = closed.concurrency_check(
        team[(team["request_rate"] == 4) & (team["engine"] == "vllm")].assign(recv_interval=1)
    )
    assert (every_step["ttft_error"] < -0.6).all()  # the same runs scheduled every step: far too soon


def test_a_recipes_token_budget_is_simulated_as_its_server_sets_it():
    from hwlib.data.concurrency_runs import concurrency_runs

    runs = concurrency_runs()
    fp8 = runs[(runs["source"] == "vLLM recipes") & (runs["precision"] == "fp8")]
    row = closed.concurrency_check(fp8).iloc[0]
    simulated = hw.simulate_serving(
        hw.model("llama-3-70b"),
        hw.cluster("mi355x-node"),
        prompt_len=8191,
        output_len=1024,
        n_requests=128,
        concurrency=64,
        precision="fp8",
        engine="vllm",
        max_batch_tokens=32768,
    )
    assert row["statistic"] == "mean" and row["ttft_s"] == pytest.approx(simulated.ttft_s.mean())
    default = closed.concurrency_check(fp8.assign(max_batch_tokens=0)).iloc[0]
    assert default["ttft_s"] != pytest.approx(row["ttft_s"], rel=0.01)  # vLLM's own 8,192 a step differs


def test_the_stored_request_overhead_is_its_fit():
    assert closed.request_overhead_fit() == pytest.approx(hw.data.calibrated.REQUEST_OVERHEAD_S.value, abs=5e-5)


def test_the_stored_walk_share_is_its_fit_and_reproduces_the_one_client_slope():
    share = closed.decode_walk_fit()
    assert share == pytest.approx(hw.data.calibrated.DECODE_WALK_SHARE.value, abs=5e-3)
    # Llama 3 8B on one H100, one client: each cached token of a 16-bit cache's KV head costs its bytes at
    # share x the SM's even share of HBM; the simulation's time per output token grows by that, 7,000 prompts over 200
    kv = hw.model("llama-3-8b")
    chip = hw.cluster("hgx-h100-ndr").chip
    per_token = kv.kv_bytes_per_token("bf16") / 8 / (share * chip.hbm_bytes_per_s / 132)
    options = dict(n_requests=4, concurrency=1, precision="fp16", engine="trtllm-0.11")
    short = hw.simulate_serving(kv, hw.cluster("hgx-h100-ndr"), prompt_len=200, output_len=200, **options)
    long = hw.simulate_serving(kv, hw.cluster("hgx-h100-ndr"), prompt_len=7000, output_len=1000, **options)
    grown = (7000 + 499.5) - (200 + 99.5)
    assert long.tpot_s.mean() - short.tpot_s.mean() == pytest.approx(per_token * grown, rel=0.01)


def test_a_closed_loop_check_refuses_what_is_not_a_table_of_runs():
    from hwlib.data.concurrency_runs import concurrency_runs

    with pytest.raises(TypeError, match="runs must be None or a pandas DataFrame"):
        closed.concurrency_check([1, 2])
    with pytest.raises(ValueError, match=r"runs lacks the columns \['concurrency'\]"):
        closed.concurrency_check(concurrency_runs().drop(columns="concurrency").head(1))


def test_the_load_errors_count_only_the_publishers_nothing_was_fitted_to():
    nim, other, third = hw.data.concurrency_runs.SOURCES[:3]
    table = pd.DataFrame(
        {
            "source": [nim, other, other, third],
            "ttft_error": [-0.9, -0.5, 0.1, -0.2],
            "tpot_error": [0.5, 0.2, np.nan, -0.1],
        }
    )
    found = closed.load_errors(table)
    assert found["ttft"] == {"runs": 3, "publishers": 2, "mean": pytest.approx(0.8 / 3), "median": -0.2}
    assert found["tpot"] == {"runs": 2, "publishers": 2, "mean": pytest.approx(0.15), "median": pytest.approx(0.05)}
    with pytest.raises(TypeError, match="check must be None or a table concurrency_check"):
        closed.load_errors(table.drop(columns="tpot_error"))
    with pytest.raises(ValueError, match="no ttft error of a publisher other than"):
        closed.load_errors(table.head(1))
    stored = hw.data.calibrated.LOAD_ERRORS  # the chapter checks them against the whole check
    assert set(stored) == {"ttft", "tpot"} and all(
        0 < e["mean"] < 1 and e["runs"] >= e["publishers"] for e in stored.values()
    )
