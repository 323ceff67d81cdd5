"""The command-line calculator (``python -m hwlib``, ``hwlib``): help, the numbers it prints against the library's,
Hugging Face configs, and bad input as one line on stderr with exit status 2.

Every command runs in a fresh interpreter, as a user would run it; the expected numbers are computed here with
hwlib's own functions and formatted as the command formats them.
"""

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import hwlib as hw
from hwlib.cli import SERVE_CONTEXT
from hwlib.training.plan import best_step

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("memory", "serve", "train", "plan", "simulate", "list")
LISTS = ("models", "chips", "clusters", "precisions", "recipes")
TINY_CONFIG = {
    "model_type": "llama",
    "hidden_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 688,
    "vocab_size": 1000,
    "rms_norm_eps": 1e-5,
}
LLAMA8_ON_H100 = ["--model", "llama-3-8b", "--chip", "H100-SXM"]
BAD_INPUT = [
    ("memory", ["--model", "no-such-model", "--chip", "H100-SXM"]),
    ("memory", ["--model", "llama-3-70b", "--chip", "no-such-chip"]),
    ("memory", ["--model", "llama-3-70b", "--chip", "H100-SXM", "--batch", "-1"]),
    ("memory", ["--model", "llama-3-70b", "--chip", "H100-SXM", "--recipe", "lion"]),
    ("memory", ["--model", "llama-3-70b"]),
    ("memory", ["--model", "doc000-7b", "--chip", "H100-SXM"]),  # a ValueError from the library
    ("memory", ["--config", "no/such/config.json", "--chip", "H100-SXM"]),
    ("serve", ["--model", "llama-3-70b", "--chip", "H100-SXM", "--precision", "fp64"]),
    ("serve", ["--model", "llama-3-70b", "--chip", "H100-SXM", "--batch", "-1"]),
    ("serve", ["--model", "llama-3-8b", "--chip", "v5e", "--chips", "4", "--precision", "fp8"]),  # a KeyError
    ("train", ["--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--mesh", "dq=2"]),
    ("list", ["widgets"]),
    ("simulate", ["--model", "llama-3-8b", "--chip", "H100-SXM", "--acceptance", "0.5"]),
    ("simulate", ["--model", "llama-3-8b", "--chip", "H100-SXM", "--rate", "-3"]),
    ("simulate", ["--model", "llama-3-8b", "--chip", "H100-SXM", "--prefill-chips", "1"]),
    ("simulate", [*LLAMA8_ON_H100, "--max-rate", "--ttft-ms", "500"]),  # --max-rate needs both targets
    ("simulate", [*LLAMA8_ON_H100, "--max-rate", "--ttft-ms", "1", "--tpot-ms", "9", "--rate", "5"]),
    ("simulate", [*LLAMA8_ON_H100, "--ttft-ms", "500", "--percentile", "90"]),  # --percentile needs --max-rate
    ("simulate", [*LLAMA8_ON_H100, "--max-rate", "--ttft-ms", "1", "--tpot-ms", "9", "--percentile", "120"]),
]
HELP_RUNS = [("--help",), *((command, "--help") for command in COMMANDS)]
_RUNS: dict[tuple[str, ...], subprocess.CompletedProcess] = {}


def _run(args: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hwlib", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def cli(*args: object) -> subprocess.CompletedProcess:
    """``python -m hwlib *args`` in a fresh interpreter (or its run started up front, used once)."""
    key = tuple(map(str, args))
    return _RUNS.pop(key, None) or _run(key)


@pytest.fixture(scope="module", autouse=True)
def _run_the_short_commands_side_by_side():
    """Help, lists and bad input start in parallel up front, so the file stays fast."""
    keys = [
        *HELP_RUNS,
        *(("--list", what) if what != "chips" else ("list", what) for what in LISTS),
        *((command, *args) for command, args in BAD_INPUT),
    ]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        _RUNS.update(zip(keys, pool.map(_run, keys)))
    yield
    _RUNS.clear()


def ok(*args: object) -> str:
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def row(output: str, label: str) -> list[str]:
    """The cells after ``label`` on the table line that starts with it (cells are 2+ spaces apart)."""
    for line in output.splitlines():
        if line.strip().startswith(label):
            return re.split(r"\s{2,}", line.strip()[len(label) :].strip())
    raise AssertionError(f"no line {label!r} in:\n{output}")


def labels(output: str) -> list[str]:
    """The labels of the answer's first block of fields (after the heading's blank line), in order."""
    block = output.split("\n\n")[1]
    return [re.split(r"\s{2,}", line.strip())[0] for line in block.splitlines()]


ESTIMATES = re.compile(r"time|mfu|tokens_per_s")
"""A field that is a time, an MFU or a rate: the CLI names each ``forecast_*`` or ``bound_*``."""


def unnamed_estimates(answer: object) -> list[str]:
    """The keys of a JSON answer or CSV row, outside its ``inputs``, that hold an estimate but do not say which."""
    if isinstance(answer, list):
        return [key for item in answer for key in unnamed_estimates(item)]
    if not isinstance(answer, dict):
        return []
    found = []
    for name, value in answer.items():
        if name == "inputs":
            continue
        if ESTIMATES.search(name) and not name.startswith(("bound_", "forecast_")):
            found.append(name)
        found += unnamed_estimates(value)
    return found


def test_help_at_every_level_names_the_commands_options_defaults_and_an_example():
    top = ok("--help")
    assert all(command in top for command in COMMANDS) and "examples:" in top and "--list" in top
    for command, options in (
        (
            "memory",
            (
                "--model",
                "--config",
                "--chip",
                "--recipe",
                "--seq-len",
                "--batch",
                "--usable",
                "(default: 2048)",
                "(default: 0.8)",
                "(default: zero_mixed_adam)",
            ),
        ),
        (
            "serve",
            (
                "--chips",
                "--precision",
                "--context",
                "--prompt",
                "--batch",
                "--tpot-ms",
                "--ttft-ms",
                "ms (default: none)",
                "(default: bf16)",
            ),
        ),
        ("train", ("--cluster", "--chips", "--global-batch-tokens", "--seq-len", "--mesh")),
        ("plan", ("--cluster", "--chips", "--global-batch-tokens", "--seq-len")),
        ("list", ("models", "chips", "clusters", "precisions", "recipes")),
    ):
        text = ok(command, "--help")
        assert f"usage: hwlib {command}" in text and "example:" in text, command
        assert all(option in text for option in options), (command, [o for o in options if o not in text])
    assert "--mesh" not in ok("plan", "--help")


def test_memory_of_llama_3_70b_on_h100_is_the_librarys():
    out = ok("memory", "--model", "llama-3-70b", "--chip", "H100-SXM")
    model, chip, usable = hw.model("llama-3-70b"), hw.chip("H100-SXM"), hw.doc000.USABLE_FRACTION
    state = hw.training_state_breakdown(model.params(), "zero_mixed_adam")
    total = hw.training_state_bytes(model.params(), "zero_mixed_adam")
    held = hw.training_memory(model, "zero_mixed_adam", chip, hw.doc002.SEQ_LEN)
    for part, per_param in hw.recipe("zero_mixed_adam").breakdown().items():
        assert row(out, part) == [f"{per_param:g}", hw.format_bytes(state[part]), hw.format_bytes(held.parts[part])]
    assert row(out, "activations")[-1] == hw.format_bytes(held.parts["activations"])
    assert row(out, "total") == ["16", hw.format_bytes(total), hw.format_bytes(held.per_chip_bytes)]
    pooled = hw.chips_needed(total, chip, usable)
    deployed = hw.deployment_chips(total, chip, usable)
    assert row(out, "fewest chips, state pooled") == [
        f"{pooled:,}",
        f"{deployed:,} chips ({hw.deployment_name(deployed, chip)})",
    ]
    assert (pooled, deployed, hw.deployment_name(deployed, chip)) == (17, 24, "3 × 8-GPU node")
    sharded = hw.deployment_chips(held.n_chips * hw.usable_bytes(chip, usable), chip, usable)
    assert row(out, "fewest chips, zero-3 + activations") == [
        f"{held.n_chips:,}",
        f"{sharded:,} chips ({hw.deployment_name(sharded, chip)})",
    ]
    assert held.n_chips == 53 and sharded == 56
    assert "array(" not in out and "np." not in out


def test_memory_options_reach_the_library():
    out = ok(
        "memory",
        "--model",
        "Llama 3 8B",
        "--chip",
        "H100",
        "--recipe",
        "fp32_adam",
        "--seq-len",
        "4,096",
        "--batch",
        "2",
        "--usable",
        "0.9",
        "--sharding",
        "zero-2",
        "--recompute",
        "full",
    )
    model, chip = hw.model("llama-3-8b"), hw.chip("H100")
    held = hw.training_memory(
        model, "fp32_adam", chip, 4096, 2, sharding="zero-2", recompute="full", usable_fraction=0.9
    )
    assert row(out, "total")[-1] == hw.format_bytes(held.per_chip_bytes)
    assert held.n_chips and row(out, "fewest chips, zero-2 + activations")[0] == f"{held.n_chips:,}"
    assert "90% usable" in out


def test_serve_on_given_chips_is_inference_step():
    out = ok(
        "serve",
        "--model",
        "llama-3-70b",
        "--chip",
        "H100-SXM",
        "--chips",
        "8",
        "--batch",
        "16",
        "--context",
        "4096",
        "--prompt",
        "2048",
        "--tpot-ms",
        "5",
    )
    model, chip = hw.model("llama-3-70b"), hw.chip("H100-SXM")
    step = hw.inference_step(model, chip, 16, 4096, 1, 8)
    first = hw.inference_step(model, chip, 1, 0, 2048, 8)
    assert first.time_s == hw.time_to_first_token_s(model, chip, 2048, 1, 8)
    assert row(out, "forecast") == [
        f"{hw.format_seconds(step.forecast_time_s)} per output token, {step.forecast_tokens_per_s:,.0f} tokens/s; "
        f"first token in {hw.format_seconds(first.forecast_time_s)}"
    ]
    assert row(out, "error band") == [hw.forecast_band("serving", model, chip).text]
    assert row(out, "bound, the ceiling") == [
        f"{hw.format_seconds(step.time_s)} per output token, {step.tokens_per_s:,.0f} tokens/s "
        f"({step.tokens_per_s_per_chip:,.0f} tokens/s per chip); first token in {hw.format_seconds(first.time_s)}"
    ]
    assert row(out, "bound by")[0].startswith(step.bound)
    largest = hw.max_batch(model, chip, 4096, 8)
    assert row(out, "fits in HBM") == [f"yes: batch 16 of at most {largest:,} sequences of 4,096 tokens"]
    met = "met" if step.forecast_time_s <= 5e-3 else "MISSED"
    assert row(out, "target time per output token") == [f"5 ms: {met} by the forecast"]
    assert labels(out)[:4] == ["forecast", "error band", "bound, the ceiling", "bound by"]


def test_serve_precision_names_are_forgiving():
    out = ok("serve", "--model", "llama-3-8b", "--chip", "H100", "--chips", "2", "--precision", "int8-weights-and-kv")
    step = hw.inference_step(
        hw.model("llama-3-8b"), hw.chip("H100"), 1, 4096, 1, 2, **hw.PRECISIONS["int8 weights and KV"]
    )
    assert "'int8 weights and KV'" in out
    assert row(out, "bound, the ceiling")[0].startswith(f"{hw.format_seconds(step.time_s)} per output token, ")


def test_serve_without_chips_is_serving_chips():
    out = ok(
        "serve",
        "--model",
        "llama-3-70b",
        "--chip",
        "H100-SXM",
        "--batch",
        "16",
        "--tpot-ms",
        "50",
        "--ttft-ms",
        "500",
        "--precision",
        "fp8",
    )
    plan = hw.serving_chips(
        hw.model("llama-3-70b"), hw.chip("H100-SXM"), 4096, 16, 0.05, ttft_target_s=0.5, **hw.PRECISIONS["fp8"]
    )
    assert plan.n_chips >= 1 and plan.by == "forecast"
    assert row(out, "fewest chips") == [f"{plan.n_chips:,} ({plan.deployment})"]
    assert row(out, "batch within the target") == [f"{plan.batch:,} sequences ({plan.max_batch:,} fit in HBM)"]
    assert row(out, "forecast") == [
        f"{hw.format_seconds(plan.forecast_time_per_token_s)} per output token, {plan.forecast_tokens_per_s:,.0f} "
        f"tokens/s ({plan.forecast_tokens_per_s_per_chip:,.0f} tokens/s per chip); first token in "
        f"{hw.format_seconds(plan.forecast_time_to_first_token_s)}"
    ]
    assert row(out, "bound, the ceiling") == [
        f"{hw.format_seconds(plan.time_per_token_s)} per output token, {plan.tokens_per_s:,.0f} tokens/s "
        f"({plan.tokens_per_s_per_chip:,.0f} tokens/s per chip); first token in "
        f"{hw.format_seconds(plan.time_to_first_token_s)}"
    ]
    assert labels(out) == [
        "fewest chips",
        "batch within the target",
        "forecast",
        "error band",
        "bound, the ceiling",
        "cost, output tokens",
        "cost, input tokens",
    ]
    assert "met by the forecast" in out


def test_efficiency_flags_reach_the_forecast():
    model, chip = hw.model("llama-3-70b"), hw.chip("H100-SXM")
    out = ok("serve", "--model", "llama-3-70b", "--chip", "H100-SXM", "--chips", "8", "--efficiency", "hbm=0.5")
    slow = hw.inference_step(model, chip, 1, 4096, 1, 8, efficiency=hw.Efficiency(hbm=0.5))
    assert hw.format_seconds(slow.forecast_time_s) + " per output token" in row(out, "forecast")[0]
    args = ("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--mesh", "fsdp=8,pp=2", "--json")
    tuned = json.loads(ok(*args, "--efficiency", "matmul=0.5,unmodelled_share=0,quantization=off"))
    step = best_step(
        hw.model("llama-3-8b"),
        hw.cluster("hgx-h100-ndr"),
        hw.Mesh(fsdp=8, pp=2),
        2**20,
        hw.doc002.SEQ_LEN,
        efficiency=hw.Efficiency(matmul=0.5, unmodelled_share=0.0, quantization=False),
    )
    assert tuned["forecast_time_s"] == pytest.approx(step.forecast_time_s)
    for bad, words in (("matmul=1.5", "Efficiency.matmul must be a fraction"), ("speed=2", "name=value pairs over")):
        result = cli(*args, "--efficiency", bad)
        assert result.returncode == 2 and words in result.stderr and len(result.stderr.splitlines()) == 1


def test_serve_says_when_no_size_meets_the_targets():
    result = cli("serve", "--model", "llama-3.1-405b", "--chip", "v5e", "--tpot-ms", "0.001")
    assert result.returncode == 1 and result.stderr == ""
    assert labels(result.stdout) == ["fewest chips"] and "none: no tensor-parallel size" in result.stdout
    assert "the largest within the targets" not in result.stdout


def test_a_hugging_face_config(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY_CONFIG))
    shape = hw.ModelShape.from_hf_config(TINY_CONFIG)
    out = ok("memory", "--config", path, "--chip", "v5e", "--seq-len", "512")
    assert f"{shape.params() / 1e9:,.2f}B parameters" in out
    held = hw.training_memory(shape, "zero_mixed_adam", hw.chip("v5e"), 512)
    assert row(out, "total")[-1] == hw.format_bytes(held.per_chip_bytes)
    path.write_text(json.dumps({**TINY_CONFIG, "my_own_key": 3}))
    result = cli("serve", "--config", path, "--chip", "v5e", "--chips", "1", "--context", "512")
    step = hw.inference_step(shape, hw.chip("v5e"), 1, 512)
    assert (
        result.returncode == 0
        and f" {step.tokens_per_s:,.0f} tokens/s (" in row(result.stdout, "bound, the ceiling")[0]
    )
    assert result.stderr.startswith("hwlib serve: warning: ") and "my_own_key" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    path.write_text('{"model_type": "llama",')
    result = cli("serve", "--config", path, "--chip", "v5e")
    assert result.returncode == 2 and result.stderr.startswith("hwlib serve: error: --config ")


@pytest.mark.parametrize("command, args", BAD_INPUT)
def test_bad_input_is_one_line_and_exit_status_2(command, args):
    result = cli(command, *args)
    assert result.returncode == 2, result.stdout
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hwlib {command}: error: "), result.stderr


def test_no_command_is_one_line_too():
    result = cli()
    assert result.returncode == 2 and result.stderr.startswith("hwlib: error: choose a command")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "what, names",
    [
        ("models", [m.key for m in hw.models()]),
        ("chips", [c.key for c in hw.chips("vendor")]),
        ("clusters", [c.key for c in hw.clusters()]),
        ("precisions", [repr(p) for p in hw.PRECISIONS]),
        ("recipes", [r.key for r in hw.recipes()]),
    ],
)
def test_lists_name_what_each_option_accepts(what, names):
    out = ok("--list", what) if what != "chips" else ok("list", what)
    assert all(name in out for name in names)


def test_import_hwlib_cli_is_light_and_the_console_script_is_its_main():
    heavy = ("matplotlib", "pandas", "ipywidgets", "jax")
    code = f"import sys, hwlib.cli\nprint([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stdout + result.stderr
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    scripts = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^hwlib = "hwlib.cli:main"$', scripts, re.MULTILINE)


def test_train_is_train_step():
    out = ok("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--mesh", "fsdp=8,pp=2")
    model, cluster = hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr")
    step = best_step(model, cluster, hw.Mesh(fsdp=8, pp=2), 2**20, hw.doc002.SEQ_LEN)  # the mesh's best choices
    assert step.fits
    assert row(out, "forecast") == [
        f"MFU {100 * step.forecast_mfu:.1f} %, {hw.format_seconds(step.forecast_time_s)} per step, "
        f"{step.forecast_tokens_per_s:,.0f} tokens/s"
    ]
    assert row(out, "error band") == [hw.forecast_band("training", model, cluster.chip).text]
    assert row(out, "bound, the ceiling") == [
        f"MFU {100 * step.mfu:.1f} %, {hw.format_seconds(step.time_s)} per step, {step.tokens_per_s:,.0f} tokens/s"
    ]
    assert row(out, "fits") == [f"yes: {hw.format_bytes(step.memory_per_chip_bytes)} per chip"]
    assert labels(out)[:4] == ["forecast", "error band", "bound, the ceiling", "fits"]
    for name, time in step.comm_time_s.items():
        exposed = step.exposed_comm_time_s.get(name, 0.0)
        assert row(out, name) == [hw.format_seconds(time), hw.format_seconds(exposed) if exposed else "0 s"]
    assert "communication (bound)" in out
    result = cli("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "16", "--mesh", "dp=4")
    assert result.returncode == 2 and result.stderr.startswith("hwlib train: error: --mesh")


def _plan(n_chips: int = 16, model: str = "llama-3-8b"):
    model, cluster = hw.model(model), hw.cluster("hgx-h100-ndr")
    results = [
        (p.mesh, p.step, p.reason) for p in hw.plan_training(model, cluster, 2**20, hw.doc002.SEQ_LEN, n_chips).meshes
    ]
    return results, [(mesh, step) for mesh, step, _ in results if step is not None and step.fits]


def test_plan_prints_the_ten_best_feasible_meshes_as_an_aligned_table():
    out = ok("plan", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "16")
    results, feasible = _plan()
    cluster = hw.cluster("hgx-h100-ndr")
    lines = [line for line in out.splitlines() if re.match(r"\s+\d+\s{2}", line)]
    assert len(lines) == 10 < len(feasible)
    for line, (mesh, step) in zip(lines, feasible):
        cells = re.split(r"\s{2,}", line.strip())
        assert cells[1:] == [
            str(mesh),
            f"{step.micro_batch_tokens / hw.doc002.SEQ_LEN:g}",
            step.recompute,
            str(step.zero),
            "-" if mesh.pp == 1 else step.schedule + (f" x{step.interleave}" if step.interleave > 1 else ""),
            hw.format_seconds(step.forecast_time_s),
            f"{100 * step.forecast_mfu:.1f} %",
            f"{hw.costs.training_cost(step, cluster.chip, tokens=1e6).usd:,.2f}",
            hw.format_seconds(step.time_s),
            f"{step.tokens_per_s:,.0f}",
            f"{100 * step.mfu:.1f} %",
            hw.format_bytes(step.memory_per_chip_bytes),
        ]
    times = [step.forecast_time_s for _, step in feasible[:10]]
    assert times == sorted(times)
    header = next(line for line in out.splitlines() if "mesh" in line and "forecast step" in line)
    assert re.split(r"\s{2,}", header.strip()) == [
        "#",
        "mesh",
        "micro",
        "recompute",
        "ZeRO",
        "schedule",
        "forecast step",
        "forecast MFU",
        "$ per M tokens",
        "step (bound)",
        "tokens/s (bound)",
        "MFU (bound)",
        "memory per chip",
    ]
    assert f"{len(feasible)} of {len(results)} meshes fit" in out and "by forecast step time" in out
    assert "None" not in out and "e+0" not in out and "NaN" not in out


def test_plan_top_and_all():
    top = ok("plan", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "16", "--top", "3")
    assert len([line for line in top.splitlines() if re.match(r"\s+\d+\s{2}", line)]) == 3
    results, feasible = _plan(32, "llama-3-70b")  # 70B on 32 GPUs: some meshes fit, some do not
    every = ok("plan", "--model", "llama-3-70b", "--cluster", "hgx-h100-ndr", "--chips", "32", "--all")
    lines = [line for line in every.splitlines() if re.match(r"\s+\d+\s{2}", line)]
    assert len(lines) == len(results) > len(feasible)
    failing = [(mesh, step, reason) for mesh, step, reason in results if step is None or not step.fits]
    assert failing and all(reason for _, _, reason in failing)
    for mesh, _, reason in failing:
        line = next(line for line in lines if re.split(r"\s{2,}", line.strip())[1] == str(mesh))
        assert line.rstrip().endswith(reason) and "  no  " in line
    assert "None" not in every
    result = cli("plan", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--top", "3", "--all")
    assert result.returncode == 2 and "not allowed with argument" in result.stderr


def test_every_command_answers_in_json_with_the_tables_fields_in_si_units(tmp_path):
    memory = json.loads(ok("memory", "--model", "llama-3-70b", "--chip", "H100-SXM", "--json"))
    held = hw.training_memory(hw.model("llama-3-70b"), "zero_mixed_adam", hw.chip("H100-SXM"), hw.doc002.SEQ_LEN)
    assert memory["command"] == "memory" and memory["inputs"]["chip"] == "h100-sxm"
    total = next(part for part in memory["parts"] if part["part"] == "total")
    assert total["per_chip_bytes"] == pytest.approx(held.per_chip_bytes)
    assert [c["n_chips"] for c in memory["fewest_chips"]] == [17, 53]
    assert memory["fewest_chips"][1]["deployment_chips"] == 56

    serve = json.loads(
        ok("serve", "--model", "llama-3-70b", "--chip", "H100-SXM", "--chips", "8", "--batch", "16", "--json")
    )
    step = hw.inference_step(hw.model("llama-3-70b"), hw.chip("H100-SXM"), 16, 4096, 1, 8)
    assert serve["bound_tokens_per_s"] == pytest.approx(step.tokens_per_s)
    assert serve["forecast_tokens_per_s"] == pytest.approx(step.forecast_tokens_per_s)
    assert serve["bound_time_per_output_token_s"] == pytest.approx(step.time_s)
    assert serve["forecast_time_per_output_token_s"] == pytest.approx(step.forecast_time_s)
    assert serve["bound_memory_time_s"] == pytest.approx(step.memory_time_s) and serve["bound_by"] == step.bound
    assert serve["compute_bound_batch"] is None and serve["fits"] is True and serve["reason"] == ""
    assert (
        serve["forecast_mean_error"] == hw.forecast_band("serving", hw.model("llama-3-70b"), hw.chip("H100-SXM")).mean
    )
    assert "tpot_target_met" not in serve and serve["inputs"]["tpot_target_s"] is None

    train = json.loads(
        ok("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--mesh", "fsdp=8,pp=2", "--json")
    )
    step = best_step(
        hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr"), hw.Mesh(fsdp=8, pp=2), 2**20, hw.doc002.SEQ_LEN
    )
    assert train["bound_time_s"] == pytest.approx(step.time_s) and train["bound_mfu"] == pytest.approx(step.mfu)
    assert train["forecast_time_s"] == pytest.approx(step.forecast_time_s)
    assert train["forecast_mfu"] == pytest.approx(step.forecast_mfu) and train["fits"] is True
    assert {c["collective"]: c["bound_time_s"] for c in train["communication"]} == pytest.approx(step.comm_time_s)
    assert train["inputs"]["mesh"]["pp"] == 2

    plan = json.loads(ok("plan", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "16", "--json"))
    _, feasible = _plan()
    assert [row["mesh"] for row in plan["meshes"]] == [str(mesh) for mesh, _ in feasible[:10]]
    assert plan["meshes"][0]["bound_time_s"] == pytest.approx(feasible[0][1].time_s) and plan["meshes"][0]["fits"]
    assert plan["meshes"][0]["forecast_mfu"] == pytest.approx(feasible[0][1].forecast_mfu)
    for answer in (serve, train, plan):
        assert not unnamed_estimates(answer), unnamed_estimates(answer)

    chips = json.loads(ok("list", "chips", "--json"))["chips"]
    assert [c["key"] for c in chips] == [c.key for c in hw.chips("vendor")]
    assert chips[0]["hbm_bytes"] == hw.chips("vendor")[0].capacity_bytes


def test_tables_answer_in_csv():
    import csv
    import io

    plan = list(
        csv.DictReader(
            io.StringIO(
                ok("plan", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "16", "--csv", "--top", "4")
            )
        )
    )
    _, feasible = _plan()
    assert [row["mesh"] for row in plan] == [str(mesh) for mesh, _ in feasible[:4]]
    assert float(plan[0]["bound_time_s"]) == pytest.approx(feasible[0][1].time_s) and int(plan[0]["fsdp"]) >= 1
    assert float(plan[0]["forecast_time_s"]) == pytest.approx(feasible[0][1].forecast_time_s)
    assert not unnamed_estimates(plan[0]) and {"bound_mfu", "forecast_mfu", "fits", "reason"} <= set(plan[0])
    memory = list(csv.DictReader(io.StringIO(ok("memory", "--model", "llama-3-8b", "--chip", "v5e", "--csv"))))
    assert [row["part"] for row in memory][-1] == "total" and memory[4]["bytes_per_param"] == ""
    held = hw.training_memory(hw.model("llama-3-8b"), "zero_mixed_adam", hw.chip("v5e"), hw.doc002.SEQ_LEN)
    assert {(row["fits"], row["reason"], row["n_chips"]) for row in memory} == {("True", "", str(held.n_chips))}
    models = list(csv.DictReader(io.StringIO(ok("list", "models", "--csv"))))
    assert [row["key"] for row in models] == [m.key for m in hw.models()]
    for command in ("serve", "train"):
        args = ["--chip", "v5e"] if command == "serve" else ["--cluster", "hgx-h100-ndr"]
        result = cli(command, "--model", "llama-3-8b", *args, "--csv")
        assert result.returncode == 2 and "use --json" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_configuration_that_does_not_fit_says_so_first_prints_no_time_and_exits_1():
    serve = cli("serve", "--model", "llama-3.1-405b", "--chip", "H100-SXM", "--chips", "4")
    assert serve.returncode == 1 and serve.stderr == ""
    assert labels(serve.stdout) == ["fits in HBM"] and row(serve.stdout, "fits in HBM")[0].startswith("NO: the weights")
    assert not re.search(r"tokens/s|per output token|first token in| ms\b", serve.stdout)
    data = json.loads(cli("serve", "--model", "llama-3.1-405b", "--chip", "H100-SXM", "--chips", "4", "--json").stdout)
    assert list(data)[2:5] == ["fits", "reason", "max_batch"] and data["fits"] is False and data["max_batch"] == 0
    assert not [key for key in data if ESTIMATES.search(key)]
    crowded = cli("serve", "--model", "llama-3-70b", "--chip", "H100-SXM", "--chips", "8", "--batch", "100000")
    largest = hw.max_batch(hw.model("llama-3-70b"), hw.chip("H100-SXM"), 4096, 8)
    assert crowded.returncode == 1
    assert row(crowded.stdout, "fits in HBM") == [
        f"NO: batch 100,000 > the {largest:,} sequences of 4,096 tokens that fit"
    ]
    train = cli("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--mesh", "dp=64", "--zero", "0")
    step = best_step(
        hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr"), hw.Mesh(dp=64), 2**20, hw.doc002.SEQ_LEN, zero=0
    )
    assert train.returncode == 1 and not step.fits
    assert labels(train.stdout) == ["fits"] and row(train.stdout, "fits") == [f"NO: {step.reason}"]
    assert "MFU" not in train.stdout and "per step" not in train.stdout


def test_memory_that_no_chips_hold_says_so_in_every_format():
    args = ("memory", "--model", "llama-3-8b", "--chip", "H100-SXM", "--seq-len", "8192", "--batch", "2")
    held = hw.training_memory(hw.model("llama-3-8b"), "zero_mixed_adam", hw.chip("H100-SXM"), 8192, 2)
    assert held.n_chips is None
    text = cli(*args)
    assert text.returncode == 1 and labels(text.stdout) == ["fits"]
    assert row(text.stdout, "fits") == [f"NO: {held.reason}"]
    data = json.loads(cli(*args, "--json").stdout)
    assert (data["fits"], data["reason"], data["n_chips"]) == (False, held.reason, None)
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(cli(*args, "--csv").stdout)))
    assert list(rows[0])[:3] == ["fits", "reason", "n_chips"]
    assert {(row["fits"], row["reason"], row["n_chips"]) for row in rows} == {("False", held.reason, "")}


def test_the_band_printed_is_the_runs_kind():
    def band(*args: str) -> str:
        return row(ok(*args), "error band")[0]

    gpu = band("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--mesh", "fsdp=8,pp=2")
    tpu = band("train", "--model", "llama-3-8b", "--cluster", "tpu-v5p", "--mesh", "fsdp=16,pp=2")
    assert gpu == hw.forecast_band("training", hw.model("llama-3-8b"), hw.chip("H100-SXM")).text
    assert tpu == hw.forecast_band("training", hw.model("llama-3-8b"), hw.chip("v5p")).text != gpu
    assert "GPU dense training runs" in gpu and "TPU dense training runs" in tpu
    moe = band("train", "--model", "mixtral-8x7b", "--cluster", "hgx-h100-ndr", "--mesh", "fsdp=8,pp=2")
    assert moe == hw.forecast_band("training", hw.model("mixtral-8x7b"), hw.chip("H100-SXM")).text
    assert "GPU MoE training runs" in moe
    served = band("serve", "--model", "llama-3-8b", "--chip", "H100-SXM", "--chips", "1")
    assert served.startswith("±") and "GPU dense serving runs" in served
    plan = ok("plan", "--model", "mixtral-8x7b", "--cluster", "hgx-h100-ndr", "--chips", "16", "--top", "1")
    assert moe in " ".join(plan.split())


def test_serve_in_target_mode_echoes_the_batch_it_found():
    out = ok("serve", "--model", "llama-3-70b", "--chip", "v5e", "--tpot-ms", "40", "--batch", "4")
    plan = hw.serving_chips(hw.model("llama-3-70b"), hw.chip("v5e"), 4096, 4, 0.04)
    assert plan.batch > 4
    assert f"decode: batch {plan.batch:,} (the largest within the targets; at least 4 asked)" in out


def test_simulate_max_rate_is_max_arrival_rate_and_runs_there():
    workload = ("--requests", "200", "--prompt", "512", "--output", "64", "--chunked-prefill", "--max-sequences", "64")
    args = ("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", *workload)
    targets = ("--ttft-ms", "100", "--tpot-ms", "20", "--max-rate", "--percentile", "90")
    out = ok(*args, *targets)
    options = dict(n_requests=200, prompt_len=512, output_len=64, chunked_prefill=True, max_sequences=64)
    model, chip = hw.model("llama-3-8b"), hw.chip("H100-SXM")
    found = hw.max_arrival_rate(model, chip, ttft_s=0.1, tpot_s=0.02, percentile=90, **options)
    highest = row(out, "highest arrival rate")[0]
    assert highest.startswith(f"{hw.format_number(found.arrival_rate_per_s, 3)} requests/s: p90 time to first")
    assert hw.format_seconds(found.ttft_percentile_s) in highest and "(target 100 ms)" in highest
    assert row(out, "search") == [f"{found.n_simulations} simulations of 200 requests (seed 0), to within 2 %"]
    assert "up to 64 sequences and 8,192 tokens a step; prompts prefilled in chunks" in out
    run = hw.simulate_serving(model, chip, arrival_rate_per_s=found.arrival_rate_per_s, **options)
    assert row(out, "time to first token")[1] == hw.format_seconds(run.percentile("ttft", 90))
    data = json.loads(ok(*args, *targets, "--json"))
    assert data["max_arrival_rate_per_s"] == pytest.approx(found.arrival_rate_per_s, rel=1e-12)
    assert data["tpot_at_max_rate_s"] == pytest.approx(found.tpot_percentile_s, rel=1e-12)
    assert data["n_simulations"] == found.n_simulations and data["rel_tol"] == found.rel_tol
    assert data["inputs"]["max_rate"] is True and data["inputs"]["percentile"] == 90
    assert data["inputs"]["tpot_target_s"] == 0.02 and data["inputs"]["max_sequences"] == 64
    assert data["goodput_per_s"] <= data["requests_per_s"]
    idle = json.loads(ok(*args, "--ttft-ms", "1", "--tpot-ms", "20", "--max-rate", "--json"))
    assert idle["max_arrival_rate_per_s"] == 0 and idle["percentiles"] == []


def test_a_rate_below_one_token_per_second_is_not_printed_as_zero():
    from hwlib.cli.report import rate

    assert rate(0.42) == "0.42 tokens/s" and rate(57.25) == "57.2 tokens/s" and rate(1234.5) == "1,234 tokens/s"
    out = ok("serve", "--model", "llama-3.1-405b", "--chip", "H100-SXM", "--chips", "16", "--context", "131072")
    per_chip = re.search(r"\(([\d.,]+) tokens/s per chip\)", row(out, "bound, the ceiling")[0]).group(1)
    assert per_chip != "0" and float(per_chip.replace(",", "")) > 0


def test_simulate_is_simulate_serving_in_percentiles():
    args = ("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", "--rate", "10", "--requests", "300")
    out = ok(*args, "--ttft-ms", "500", "--tpot-ms", "30")
    result = hw.simulate_serving(hw.model("llama-3-8b"), hw.chip("H100-SXM"), n_requests=300, arrival_rate_per_s=10)
    assert row(out, "time to first token") == [hw.format_seconds(result.percentile("ttft", q)) for q in (50, 90, 99)]
    assert row(out, "time per output token") == [hw.format_seconds(result.percentile("tpot", q)) for q in (50, 90, 99)]
    assert row(out, "output tokens/s") == [f"{result.output_tokens_per_s:,.0f} tokens/s"]
    good, share = result.goodput_per_s(0.5, 0.03), result.within(0.5, 0.03).mean()
    assert good == pytest.approx(result.requests_per_s * share, rel=1e-12) and good <= result.requests_per_s
    assert row(out, "goodput")[0].startswith(f"{hw.format_number(good, 3)} requests/s")
    words = "engine: hwlib's generic engine, up to 256 sequences and 8,192 tokens a step; prompts prefilled whole"
    assert words + "; no speculation" in out
    data = json.loads(ok(*args, "--ttft-ms", "500", "--tpot-ms", "30", "--json"))
    assert data["goodput_per_s"] == pytest.approx(good) and data["within_targets"] == pytest.approx(share)
    band = hw.forecast_band("serving", hw.model("llama-3-8b"), hw.chip("H100-SXM"))
    assert row(out, "step error band") == [band.text] and data["forecast_error_band"] == band.text
    load = hw.data.calibrated.LOAD_ERRORS
    assert (
        data["load_ttft_mean_error"] == load["ttft"]["mean"]
        and data["load_tpot_median_error"] == load["tpot"]["median"]
    )
    first, token = (f"±{100 * load[name]['mean']:.0f} %" for name in ("ttft", "tpot"))
    assert row(out, "load error band")[0].startswith(f"time to first token {first} (median ")
    assert (
        f"per output token {token} (median " in data["load_error_band"]
        and f"on {load['ttft']['runs']} published" in out
    )
    assert "error band" not in ok(*args, "--estimate", "bound")
    assert {"max_sequences": 256, "max_batch_tokens": 8192, "chunked_prefill": False, "draft_tokens": None} == {
        key: data["inputs"][key] for key in ("max_sequences", "max_batch_tokens", "chunked_prefill", "draft_tokens")
    }
    assert data["percentiles"][0]["metric"] == "ttft"
    assert data["percentiles"][0]["p99_s"] == pytest.approx(result.percentile("ttft", 99))
    csv_text = ok(*args, "--csv")
    assert csv_text.splitlines()[0].startswith("metric,p50_s")
    traced = json.loads(
        ok(
            "simulate",
            "--model",
            "llama-3-8b",
            "--chip",
            "H100-SXM",
            "--trace",
            "azure-code-2023",
            "--requests",
            "200",
            "--draft-tokens",
            "3",
            "--acceptance",
            "0.7",
            "--draft",
            "qwen2.5-1.5b",
            "--json",
        )
    )
    assert traced["inputs"]["trace"] == "azure-code-2023" and traced["steps"] > 0
    assert (traced["inputs"]["draft_tokens"], traced["inputs"]["acceptance"]) == (3, 0.7)
    assert traced["inputs"]["draft"] == "qwen2.5-1.5b"
    dataset = ("--model", "llama-2-70b", "--chip", "H200", "--precision", "fp8", "--rate", "12", "--requests", "200")
    out = ok(
        "simulate",
        *dataset,
        "--trace",
        "mlperf-llama2-openorca",
        "--draft-tokens",
        "2",
        "--acceptance",
        "0.6",
        "--draft",
        "one-layer",
    )
    trace = hw.request_trace("mlperf-llama2-openorca")
    direct = hw.simulate_serving(
        hw.model("llama-2-70b"),
        hw.chip("H200"),
        n_requests=200,
        arrival_rate_per_s=12,
        prompt_len=trace.prompt_tokens[:200],
        output_len=trace.output_tokens[:200],
        speculation=hw.Speculation(2, 0.6, "one layer"),
        **hw.PRECISIONS["fp8"],
    )
    assert row(out, "time to first token") == [hw.format_seconds(direct.percentile("ttft", q)) for q in (50, 90, 99)]


def test_train_without_a_mesh_runs_the_planners_best_and_takes_every_choice():
    args = ("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "64")
    batch = ("--global-batch-tokens", "1048576", "--seq-len", "2048")
    data = json.loads(ok(*args, *batch, "--json"))
    plan = hw.plan_training(hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr"), 2**20, 2048, 64)
    best = plan.feasible[0].step
    assert data["fits"] and data["inputs"]["mesh"] == {axis: getattr(best.mesh, axis) for axis in hw.Mesh().__dict__}
    assert data["forecast_time_s"] == pytest.approx(float(best.forecast_time_s))
    assert data["inputs"]["micro_batch_sequences"] == best.micro_batch_tokens / 2048
    fixed = json.loads(
        ok(*args, *batch, "--mesh", "fsdp=64", "--micro-batch", "2", "--recompute", "full", "--zero", "0", "--json")
    )
    step = hw.train_step(
        hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr"), hw.Mesh(fsdp=64), 2**20, 2048, 4096, "full", zero=0
    )
    assert fixed["bound_time_s"] == pytest.approx(step.time_s) and fixed["inputs"]["recompute"] == "full"
    assert (fixed["inputs"]["micro_batch_sequences"], fixed["inputs"]["zero"]) == (2, 0)
    fp8 = json.loads(ok(*args, *batch, "--mesh", "dp=64", "--precision", "fp8", "--micro-batch", "1", "--json"))
    assert fp8["bound_time_s"] < fixed["bound_time_s"] and fp8["inputs"]["precision"] == "fp8"


def test_plan_shows_each_meshs_choices():
    data = json.loads(
        ok(
            "plan",
            "--model",
            "llama-3-70b",
            "--cluster",
            "hgx-h100-ndr",
            "--chips",
            "256",
            "--seq-len",
            "8192",
            "--global-batch-tokens",
            "4194304",
            "--top",
            "3",
            "--json",
        )
    )
    row = data["meshes"][0]
    assert {"micro_batch_sequences", "recompute", "zero", "mesh", "fits", "reason"} <= set(row)
    assert row["recompute"] in ("none", "selective", "full") and row["zero"] in (0, 1, 2)


def test_train_fine_tunes_with_lora_or_qlora_and_offloads():
    args = ("train", "--model", "llama-3-70b", "--cluster", "hgx-h100-ndr", "--chips", "8")
    batch = ("--global-batch-tokens", "65536", "--seq-len", "8192")
    full = cli(*args, *batch)
    assert full.returncode == 1  # full fine-tuning of 70B does not fit one node
    lora = json.loads(ok(*args, *batch, "--lora", "16", "--json"))
    plan = hw.plan_training(
        hw.model("llama-3-70b"), hw.cluster("hgx-h100-ndr"), 65536, 8192, 8, adapter=hw.LoRA(rank=16)
    )
    assert lora["fits"] and lora["forecast_time_s"] == pytest.approx(float(plan.feasible[0].step.forecast_time_s))
    text = ok(*args, *batch, "--qlora", "64", "--offload", "optimizer")
    assert "LoRA adapters of rank 64 on a frozen NF4 (QLoRA) base, optimizer offloaded to the host" in text
    both = cli(*args, *batch, "--lora", "8", "--qlora", "8")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_train_takes_deepseeks_fp8_recipe_and_the_ep_overlap():
    """--fp8-recipe blockwise keeps the MLP's activations and the dispatch in fp8 (less memory per chip than without
    it); --ep-overlap hides the expert all-to-alls (none left exposed); both are said in the answer's words."""
    common = ("train", "--model", "deepseek-v3", "--cluster", "hgx-h800-ndr", "--mesh", "pp=16,dp=128,ep=64")
    common += ("--global-batch-tokens", "62914560", "--seq-len", "4096", "--precision", "fp8", "--zero", "1")
    common += ("--recompute", "up-projections", "--micro-batch", "1")
    plain, recipe, overlap = ok(*common), ok(*common, "--fp8-recipe", "blockwise"), ok(*common, "--ep-overlap")
    gib = [float(row(output, "fits")[0].split(": ")[1].split(" GiB")[0]) for output in (plain, recipe)]
    assert gib[1] < gib[0] and "FP8 recipe blockwise" in recipe and "expert all-to-alls overlapped" in overlap
    seconds = [float(row(output, "forecast")[0].split(", ")[1].split(" s")[0]) for output in (plain, overlap)]
    assert seconds[1] < seconds[0]
    result = cli(*[arg for arg in common if arg not in ("--precision", "fp8")], "--fp8-recipe", "blockwise")
    assert result.returncode == 2 and "--fp8-recipe blockwise needs --precision fp8" in result.stderr


def test_simulate_takes_closed_loop_clients():
    out = ok("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", "--concurrency", "8", "--requests", "64")
    assert "from 8 closed-loop clients, each sending its next request when its last one ends" in out
    args = ("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", "--concurrency", "8", "--requests", "64")
    data = json.loads(ok(*args, "--json"))
    assert data["inputs"]["concurrency"] == 8 and data["inputs"]["arrival_rate_per_s"] is None
    result = cli("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", "--concurrency", "8", "--rate", "2")
    assert result.returncode == 2 and "--concurrency sets the arrivals itself" in result.stderr


def test_simulate_runs_an_engines_defaults_and_names_them():
    base = ("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", "--requests", "40", "--concurrency", "8")
    vllm = json.loads(ok(*base, "--engine", "vllm", "--json"))
    assert vllm["inputs"]["engine"] == "vllm" and vllm["inputs"]["chunked_prefill"] is True
    assert (vllm["inputs"]["max_sequences"], vllm["inputs"]["max_batch_tokens"]) == (1024, 8192)
    text = ok(*base, "--engine", "sglang", "--max-batch-tokens", "4096", "--chunked-prefill")
    assert "engine: SGLang 0.5.3 defaults, up to 2,048 sequences and 4,096 tokens a step" in " ".join(text.split())
    assert "prefilled in chunks" in text  # the options given beat the profile's
    plain = json.loads(ok(*base, "--json"))
    assert plain["inputs"]["engine"] == "hwlib" and plain["inputs"]["max_sequences"] == 256
    bad = cli(*base, "--engine", "tgi")
    assert bad.returncode == 2 and "invalid choice: 'tgi'" in bad.stderr


def test_simulate_takes_in_requests_at_the_receive_interval_given():
    base = ("simulate", "--model", "llama-3-8b", "--cluster", "hgx-a100-hdr", "--engine", "vllm", "--rate", "4")
    base += ("--requests", "200", "--prompt", "224", "--output", "189", "--json")
    every, tenth = json.loads(ok(*base)), json.loads(ok(*base, "--recv-interval", "10"))
    assert every["inputs"]["recv_interval"] == 1 and tenth["inputs"]["recv_interval"] == 10
    # vLLM 0.6's multi-step scheduling: a prompt waits about 5 decode steps of about 13 ms for its intake
    first = [next(row["p50_s"] for row in run["percentiles"] if row["metric"] == "ttft") for run in (every, tenth)]
    assert 0.04 < first[1] - first[0] < 0.09
    text = ok(*base[:-1], "--recv-interval", "10")
    assert "taking in requests every 10 decode steps, and after prompts" in " ".join(text.split())
    bad = cli(*base, "--recv-interval", "0")
    assert bad.returncode == 2 and "--recv-interval" in bad.stderr


def test_simulate_finds_the_most_clients_within_the_targets():
    base = ("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", "--engine", "vllm", "--requests", "60")
    found = json.loads(ok(*base, "--ttft-ms", "300", "--tpot-ms", "50", "--max-concurrency", "--json"))
    most = found["max_concurrency"]
    assert most > 1 and found["inputs"]["concurrency"] == most and found["inputs"]["max_concurrency"] is True
    none = ok(*base, "--ttft-ms", "0.1", "--tpot-ms", "50", "--max-concurrency")
    assert "most clients  none: even one alone" in none and "not even one does" in " ".join(none.split())
    bad = cli(*base, "--max-concurrency", "--tpot-ms", "50")
    assert bad.returncode != 0 and "--max-concurrency needs --ttft-ms and --tpot-ms" in bad.stderr


def test_simulate_splits_an_moe_by_experts_and_its_attention_by_sequences():
    base = ("simulate", "--model", "deepseek-v3", "--cluster", "hgx-h200-ndr", "--chips", "8", "--precision", "fp8")
    load = ("--concurrency", "8", "--requests", "16", "--prompt", "512", "--output", "16")
    data = json.loads(ok(*base, *load, "--expert-parallel", "--attention-dp", "--json"))
    assert data["inputs"]["expert_parallel"] is True and data["inputs"]["attention_dp"] is True
    text = ok(*base, *load, "--expert-parallel", "--attention-dp")
    assert "experts whole on each chip, attention data-parallel" in " ".join(text.split())
    bad = cli(*base, *load, "--attention-dp")
    assert bad.returncode == 2 and "attention_dp needs expert_parallel=True" in bad.stderr


def test_serve_train_and_simulate_price_their_answers():
    serve = json.loads(ok("serve", "--model", "llama-3-8b", "--chip", "H100-SXM", "--chips", "1", "--batch", "32",
                          "--precision", "fp8", "--price-per-chip-hour", "3", "--pue", "1.2", "--json"))  # fmt: skip
    model, chip = hw.model("llama-3-8b"), hw.chip("H100-SXM")
    step = hw.inference_step(model, chip, 32, SERVE_CONTEXT, 1, 1, **hw.PRECISIONS["fp8"])
    cost = hw.costs.serving_cost(step.forecast_tokens_per_s, chip, bound_tokens_per_s_per_chip=step.tokens_per_s,
                                 price=3.0, pue=1.2)  # fmt: skip
    assert serve["usd_per_million_output_tokens"] == pytest.approx(cost.usd_per_million_tokens)
    assert serve["bound_usd_per_million_output_tokens"] == pytest.approx(cost.bound_usd_per_million_tokens)
    assert serve["joules_per_output_token"] == pytest.approx(cost.joules_per_token)
    assert serve["usd_per_chip_hour"] == 3.0 and serve["pue"] == 1.2 and serve["price_key"] is None
    assert serve["co2e_kg_per_million_output_tokens"] == pytest.approx(cost.co2e_kg_per_million_tokens)
    prefill = hw.inference_step(model, chip, 1, 0, SERVE_CONTEXT, 1, **hw.PRECISIONS["fp8"])
    assert serve["usd_per_million_input_tokens"] == pytest.approx(
        3.0 * prefill.forecast_time_s / 3600 / SERVE_CONTEXT * 1e6
    )
    train = json.loads(ok("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "8", "--tokens",
                          "1000000000", "--price-per-chip-hour", "nebius-h100", "--grid-gco2-per-kwh", "gcp-us-west1",
                          "--json"))  # fmt: skip
    assert train["usd"] == pytest.approx(train["forecast_chip_hours"] * 23.60 / 8)
    wall = hw.data.calibrated.SYSTEM_POWER_PER_TDP.value * 700
    assert train["energy_j"] == pytest.approx(train["forecast_chip_hours"] * 3600 * wall * 1.15)
    assert train["co2e_kg"] == pytest.approx(train["energy_j"] / 3.6e6 * 97.85 / 1e3)
    assert train["price_key"] == "nebius-h100" and train["bound_usd"] < train["usd"]
    assert train["chip_hours"] == pytest.approx(train["forecast_chip_hours"])
    simulated = json.loads(ok("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", "--rate", "2", "--requests",
                              "40", "--json"))  # fmt: skip
    assert simulated["usd_per_million_output_tokens"] > 0 and simulated["price_key"] == "aws-p5-h100"
    tpu = json.loads(ok("serve", "--model", "llama-3-8b", "--chip", "v5e", "--chips", "4", "--json"))
    assert tpu["usd_per_chip_hour"] == 1.2 and tpu["joules_per_output_token"] is None  # no TDP: dollars only


def test_a_key_given_twice_is_refused():
    for option, value in (("--mesh", "dp=2,dp=4"), ("--efficiency", "matmul=0.5,matmul=0.6")):
        result = cli("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", option, value)
        assert result.returncode == 2 and "twice" in result.stderr and "Traceback" not in result.stderr


def test_every_failure_is_one_line_and_long_ones_are_cut(tmp_path, monkeypatch, capsys):
    import hwlib.cli as calculator

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    result = cli("serve", "--config", deep, "--chip", "H100-SXM")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "too large" in result.stderr

    def broken(args):
        raise RuntimeError("x" * 10_000)

    monkeypatch.setattr(calculator, "run_serve", broken)
    parser = calculator.build_parser
    monkeypatch.setattr(
        calculator, "build_parser", lambda: _with_run(parser(), "serve", broken)
    )  # the subcommand's function, replaced
    status = calculator.main(["serve", "--model", "llama-3-8b", "--chip", "H100-SXM", "--chips", "1"])
    err = capsys.readouterr().err
    assert status == calculator.INTERNAL_ERROR and err.count("\n") == 1
    assert err.startswith("hwlib serve: internal error (RuntimeError): ")
    assert len(err) < calculator.LONGEST_MESSAGE + 100 and "(10,000 characters)" in err


def _with_run(parser, command, run):
    parser._subparsers._group_actions[0].choices[command].set_defaults(run=run)
    return parser


def test_serve_splits_experts_by_expert_parallelism_when_asked():
    out = json.loads(ok("serve", "--model", "deepseek-v3", "--chip", "H200", "--chips", "8", "--batch", "32",
                        "--precision", "fp8", "--expert-parallel", "--json"))  # fmt: skip
    step = hw.inference_step(
        hw.model("deepseek-v3"), hw.chip("H200"), 32, SERVE_CONTEXT, 1, 8, **hw.PRECISIONS["fp8"], expert_parallel=True
    )
    assert out["inputs"]["expert_parallel"] is True
    assert out["forecast_time_per_output_token_s"] == pytest.approx(step.forecast_time_s)
    text = ok("serve", "--model", "deepseek-v3", "--chip", "H200", "--chips", "8", "--precision", "fp8",
              "--expert-parallel")  # fmt: skip
    assert "experts by expert parallelism" in text.splitlines()[0]
    refused = cli("serve", "--model", "deepseek-v3", "--chip", "H200", "--expert-parallel")
    assert refused.returncode == 2 and "--expert-parallel needs --chips" in refused.stderr


def test_config_takes_a_folder_or_a_hugging_face_cache_entry(tmp_path):
    source = ROOT / "hwlib" / "data" / "configs" / "qwen3-8b.json"
    cache = tmp_path / "hub" / "models--Qwen--Qwen3-8B"
    for name in ("0a1b", "9f8e"):
        (cache / "snapshots" / name).mkdir(parents=True)
        (cache / "snapshots" / name / "config.json").write_text(source.read_text())
    (cache / "refs").mkdir()
    (cache / "refs" / "main").write_text("0a1b\n")
    from hwlib.cli.options import config_file

    assert config_file(cache) == (cache / "snapshots" / "0a1b" / "config.json", "qwen3-8b")
    assert config_file(cache / "snapshots" / "9f8e") == (cache / "snapshots" / "9f8e" / "config.json", "qwen3-8b")
    (cache / "refs" / "main").unlink()
    assert config_file(cache)[0].parent.name in ("0a1b", "9f8e")  # the newest snapshot
    expected = json.loads(ok("memory", "--config", source, "--chip", "H100-SXM", "--json"))
    for given in (cache, cache / "snapshots" / "0a1b"):
        out = json.loads(ok("memory", "--config", given, "--chip", "H100-SXM", "--json"))
        assert out["inputs"]["model"] == "qwen3-8b" and out["parts"] == expected["parts"]
    empty = tmp_path / "hub" / "models--org--none"
    (empty / "snapshots").mkdir(parents=True)
    result = cli("memory", "--config", empty, "--chip", "H100-SXM")
    assert result.returncode == 2 and "no snapshot with a config.json" in result.stderr
    result = cli("memory", "--config", tmp_path, "--chip", "H100-SXM")
    assert result.returncode == 2 and "a folder must hold a config.json" in result.stderr
