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
from types import SimpleNamespace

import pytest

import hwlib as hw

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("memory", "serve", "train", "plan", "list")
LISTS = ("models", "chips", "clusters", "precisions", "recipes")
TINY_CONFIG = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
               "num_key_value_heads": 2, "intermediate_size": 688, "vocab_size": 1000, "rms_norm_eps": 1e-5}
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
    ("serve", ["--model", "llama-3-70b", "--chip", "v5e", "--chips", "4", "--precision", "fp8"]),  # a KeyError
    ("train", ["--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--mesh", "dq=2"]),
    ("list", ["widgets"]),
]
HELP_RUNS = [("--help",), *((command, "--help") for command in COMMANDS)]
_RUNS: dict[tuple[str, ...], subprocess.CompletedProcess] = {}


def _run(args: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hwlib", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def cli(*args: object) -> subprocess.CompletedProcess:
    """``python -m hwlib *args`` in a fresh interpreter (or its run started up front, used once)."""
    key = tuple(map(str, args))
    return _RUNS.pop(key, None) or _run(key)


@pytest.fixture(scope="module", autouse=True)
def _run_the_short_commands_side_by_side():
    """Help, lists and bad input start in parallel up front, so the file stays fast."""
    keys = [*HELP_RUNS, *(("--list", what) if what != "chips" else ("list", what) for what in LISTS),
            *((command, *args) for command, args in BAD_INPUT)]
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
            return re.split(r"\s{2,}", line.strip()[len(label):].strip())
    raise AssertionError(f"no line {label!r} in:\n{output}")


def test_help_at_every_level_names_the_commands_options_defaults_and_an_example():
    top = ok("--help")
    assert all(command in top for command in COMMANDS) and "examples:" in top and "--list" in top
    for command, options in (("memory", ("--model", "--config", "--chip", "--recipe", "--seq-len", "--batch",
                                         "--usable", "(default: 2048)", "(default: 0.8)",
                                         "(default: zero_mixed_adam)")),
                             ("serve", ("--chips", "--precision", "--context", "--prompt", "--batch", "--tpot-ms",
                                        "--ttft-ms", "ms (default: none)", "(default: bf16)")),
                             ("train", ("--cluster", "--chips", "--global-batch-tokens", "--seq-len", "--mesh")),
                             ("plan", ("--cluster", "--chips", "--global-batch-tokens", "--seq-len")),
                             ("list", ("models", "chips", "clusters", "precisions", "recipes"))):
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
        f"{pooled:,}", f"{deployed:,} chips ({hw.deployment_name(deployed, chip)})"]
    assert (pooled, deployed, hw.deployment_name(deployed, chip)) == (17, 24, "3 x 8-GPU node")
    sharded = hw.deployment_chips(held.n_chips * hw.usable_bytes(chip, usable), chip, usable)
    assert row(out, "fewest chips, zero-3 + activations") == [
        f"{held.n_chips:,}", f"{sharded:,} chips ({hw.deployment_name(sharded, chip)})"]
    assert held.n_chips == 53 and sharded == 56
    assert "array(" not in out and "np." not in out


def test_memory_options_reach_the_library():
    out = ok("memory", "--model", "Llama 3 8B", "--chip", "H100", "--recipe", "fp32_adam", "--seq-len", "4,096",
             "--batch", "2", "--usable", "0.9", "--sharding", "zero-2", "--recompute", "full")
    model, chip = hw.model("llama-3-8b"), hw.chip("H100")
    held = hw.training_memory(model, "fp32_adam", chip, 4096, 2, sharding="zero-2", recompute="full",
                              usable_fraction=0.9)
    assert row(out, "total")[-1] == hw.format_bytes(held.per_chip_bytes)
    assert held.n_chips and row(out, "fewest chips, zero-2 + activations")[0] == f"{held.n_chips:,}"
    assert "90% usable" in out


def test_serve_on_given_chips_is_inference_step():
    out = ok("serve", "--model", "llama-3-70b", "--chip", "H100-SXM", "--chips", "8", "--batch", "16",
             "--context", "4096", "--prompt", "2048", "--tpot-ms", "5")
    model, chip = hw.model("llama-3-70b"), hw.chip("H100-SXM")
    step = hw.inference_step(model, chip, 16, 4096, 1, 8)
    assert row(out, "time per output token")[0].startswith(hw.format_seconds(step.time_s) + " ")
    assert row(out, "bound")[0].startswith(step.bound)
    assert row(out, "tokens/s, system") == [f"{step.tokens_per_s:,.0f} tokens/s"]
    assert row(out, "tokens/s per chip") == [f"{step.tokens_per_s_per_chip:,.0f} tokens/s"]
    assert row(out, "time to first token") == [hw.format_seconds(hw.time_to_first_token_s(model, chip, 2048, 1, 8))]
    largest = hw.max_batch(model, chip, 4096, 8)
    assert row(out, "largest batch that fits") == [f"{largest:,} sequences of 4,096 tokens"]
    assert row(out, "target time per output token") == ["5 ms: " + ("met" if step.time_s <= 5e-3 else "MISSED")]


def test_serve_precision_names_are_forgiving():
    out = ok("serve", "--model", "llama-3-8b", "--chip", "H100", "--chips", "2", "--precision", "int8-weights-and-kv")
    step = hw.inference_step(hw.model("llama-3-8b"), hw.chip("H100"), 1, 4096, 1, 2,
                             **hw.PRECISIONS["int8 weights and KV"])
    assert "'int8 weights and KV'" in out
    assert row(out, "tokens/s, system") == [f"{step.tokens_per_s:,.0f} tokens/s"]


def test_serve_without_chips_is_serving_chips():
    out = ok("serve", "--model", "llama-3-70b", "--chip", "H100-SXM", "--batch", "16", "--tpot-ms", "50",
             "--ttft-ms", "500", "--precision", "fp8")
    plan = hw.serving_chips(hw.model("llama-3-70b"), hw.chip("H100-SXM"), 4096, 16, 0.05, ttft_target_s=0.5,
                            **hw.PRECISIONS["fp8"])
    assert plan.n_chips >= 1
    assert row(out, "fewest chips") == [f"{plan.n_chips:,} ({plan.deployment})"]
    assert row(out, "batch within the target") == [f"{plan.batch:,} sequences ({plan.max_batch:,} fit in HBM)"]
    assert row(out, "time per output token")[0].startswith(hw.format_seconds(plan.time_per_token_s))
    assert row(out, "time to first token") == [hw.format_seconds(plan.time_to_first_token_s)]
    assert row(out, "tokens/s, system") == [f"{plan.tokens_per_s:,.0f} tokens/s"]


def test_serve_says_when_no_size_meets_the_targets():
    out = ok("serve", "--model", "llama-3.1-405b", "--chip", "v5e", "--tpot-ms", "0.001")
    assert "no tensor-parallel size" in out


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
    assert result.returncode == 0 and row(result.stdout, "tokens/s, system") == [f"{step.tokens_per_s:,.0f} tokens/s"]
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


@pytest.mark.parametrize("command, function", [("train", "train_step"), ("plan", "plan_training")])
def test_train_and_plan_say_when_this_version_lacks_them(command, function):
    if hasattr(hw, function):
        pytest.skip(f"hw.{function} exists")
    result = cli(command, "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "8")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr == f"hwlib {command}: not available in this version\n"


@pytest.mark.parametrize("what, names", [
    ("models", [m.key for m in hw.models()]), ("chips", [c.key for c in hw.chips("vendor")]),
    ("clusters", [c.key for c in hw.clusters()]), ("precisions", [repr(p) for p in hw.PRECISIONS]),
    ("recipes", [r.key for r in hw.recipes()]),
])
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


def test_train_and_plan_print_what_the_library_returns(monkeypatch, capsys):
    """The output code of ``train`` and ``plan`` against the interface they are written to (stand-ins here)."""
    from hwlib.cli import main

    calls = []

    def train_step(model, cluster, mesh, global_batch_tokens, seq_len):
        calls.append((model.key, cluster.key, mesh, global_batch_tokens, seq_len))
        return SimpleNamespace(time_s=1.5, mfu=0.42, memory_per_chip_bytes=40 * hw.GiB, fits=True,
                               comm_time_s={"all-reduce": 0.25, "all-gather": 0.125}, tokens_per_s=123456.0)

    class Frame:
        def to_string(self, **options: object) -> str:
            return "mesh  time\ndp=8  1.5 s"

    monkeypatch.setattr(hw, "train_step", train_step, raising=False)
    monkeypatch.setattr(hw, "Mesh", lambda **sizes: dict(sizes), raising=False)
    monkeypatch.setattr(hw, "plan_training", lambda *args, **options: calls.append((args, options)) or Frame(),
                        raising=False)
    assert main(["train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--mesh", "dp=4,tp=2",
                 "--global-batch-tokens", "2e6", "--seq-len", "4096"]) == 0
    out = capsys.readouterr().out
    assert calls.pop() == ("llama-3-8b", "hgx-h100-ndr", {"dp": 4, "tp": 2}, 2_000_000, 4096)
    assert row(out, "step time") == ["1.5 s"] and row(out, "MFU") == ["42.0 %"]
    assert row(out, "tokens/s") == ["123,456 tokens/s"] and row(out, "memory per chip") == ["40 GiB"]
    assert row(out, "communication: all-reduce") == ["250 ms"] and row(out, "fits") == ["yes"]
    assert main(["train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "16"]) == 0
    assert calls.pop()[2] == {"dp": 16}
    capsys.readouterr()
    assert main(["train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "16", "--mesh", "dp=4"]) == 2
    assert capsys.readouterr().err.startswith("hwlib train: error: --mesh")
    assert main(["plan", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "8"]) == 0
    assert "dp=8  1.5 s" in capsys.readouterr().out
    args, options = calls.pop()
    assert args[0].key == "llama-3-8b" and args[2:] == (2**20, hw.doc002.SEQ_LEN)
    assert options == {"n_chips": 8}


def test_train_and_plan_agree_with_the_library_where_it_has_them():
    if not (hasattr(hw, "train_step") and hasattr(hw, "plan_training")):
        pytest.skip("hw.train_step or hw.plan_training is not in this version")
    out = ok("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--mesh", "fsdp=8,tp=8")
    step = hw.train_step(hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr"), hw.Mesh(fsdp=8, tp=8), 2**20,
                         hw.doc002.SEQ_LEN)
    assert row(out, "step time") == [hw.format_seconds(step.time_s)] and row(out, "MFU") == [f"{100 * step.mfu:.1f} %"]
    assert row(out, "memory per chip") == [hw.format_bytes(step.memory_per_chip_bytes)]
    out = ok("plan", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "16")
    assert "fsdp" in out and "e+0" not in out
