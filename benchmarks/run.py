"""The book's benchmark suite: one command, one table.

    .venv/bin/python benchmarks/run.py                # widgets, chapters, layer model
    .venv/bin/python benchmarks/run.py --only widgets # one group: widgets, chapters, layer
    .venv/bin/python benchmarks/run.py --only chapters --chapter own_roofline
    .venv/bin/python benchmarks/run.py --make-test    # ALSO time `make test` (minutes; it
                                                      # rebuilds _build/, so never run it while
                                                      # someone else uses _build/)
    .venv/bin/python benchmarks/run.py --rebuild      # ALSO time a warm rebuild after a
                                                      # prose-only edit, in a temporary copy

Goals (issues 6 and 10): an explorer update (compute + redraw) for a typical slider move, median
under 100 ms; each chapter's execution, kernel start included, under 5 s (the measuring
chapter "Your own roofline" about 20 s); hwlib's layer model over a 10^6-point (d, T)
grid in one call, every field computed, under 0.2 s and at least 100x faster per point than
document 002's own scalar ``layer_step`` (loaded from the shared seed at run time) in the same
process; a warm rebuild after a prose-only edit under 10 s; `make test` from a clean _build/ with a warm
.venv within 6 minutes on the 2-core machine (issue 19), each of its steps shown.

Not part of the default test run: pyproject's ``norecursedirs`` excludes ``benchmarks``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
GOAL_WIDGET_S = 0.100
GOAL_CHAPTER_S = 5.0
GOAL_MEASURE_CHAPTER_S = 20.0
GOAL_GRID_S = 0.2
GOAL_SIMULATE_S = 2.0
GOAL_SPEEDUP = 100.0
GOAL_BUILD_S = 10.0
GOAL_MAKE_TEST_S = 360.0
MEASURING_CHAPTERS = {"own_roofline"}

rows: list[dict] = []


def record(
    group: str, item: str, value_s: float, goal_s: float | None, note: str = "", unit: str = "s", ok: bool | None = None
) -> None:
    if ok is None:
        ok = None if goal_s is None else value_s <= goal_s
    if goal_s is not None:
        goal = f"<= {goal_s * 1e3:.0f} ms" if goal_s < 1 else f"<= {goal_s:g} s"
    else:
        goal = note if ok is not None else ""
    rows.append(
        {
            "group": group,
            "item": item,
            "value": value_s,
            "unit": unit,
            "goal": goal,
            "met": {True: "yes", False: "NO", None: ""}[ok],
            "ok": ok,
            "note": note,
        }
    )
    shown = f"{value_s * 1e3:.1f} ms" if unit == "s" and value_s < 1 else f"{value_s:.3g} {unit}"
    print(f"  {group:8s} {item:52s} {shown}", flush=True)


# --- widgets ------------------------------------------------------------------------------


def _moves(control) -> list:
    """Typical slider moves: one notch down and back up (or up and back), repeated."""
    import ipywidgets as widgets

    if isinstance(control, (widgets.SelectionSlider, widgets.Dropdown)):
        values = list(control._options_values)
        index = next(i for i, value in enumerate(values) if value is control.value or value == control.value)
        if len(values) < 2:
            return []
        other = values[index - 1] if index > 0 else values[index + 1]
        return [other, control.value]
    if isinstance(control, (widgets.FloatSlider, widgets.IntSlider)):
        step = control.step or (control.max - control.min) / 20
        other = control.value - step if control.value - step >= control.min else control.value + step
        return [other, control.value]
    return []


def bench_widgets(repeats: int = 5) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import ipywidgets as widgets

    from hwlib.viz import explorers

    classes = [
        getattr(explorers, name)
        for name in sorted(explorers.__all__)
        if name.endswith("Explorer") and name != "Explorer"
    ]
    for cls in classes:
        start = time.perf_counter()
        explorer = cls()
        build_s = time.perf_counter() - start
        sliders = {
            name: value
            for name, value in vars(explorer).items()
            if isinstance(value, (widgets.SelectionSlider, widgets.FloatSlider, widgets.IntSlider))
        }
        dropdowns = {name: value for name, value in vars(explorer).items() if isinstance(value, widgets.Dropdown)}
        times = []
        for _ in range(repeats):
            for control in sliders.values():
                for value in _moves(control):
                    tick = time.perf_counter()
                    control.value = value
                    times.append(time.perf_counter() - tick)
        if times:
            record(
                "widget",
                f"{cls.__name__}: slider move (median of {len(times)})",
                statistics.median(times),
                GOAL_WIDGET_S,
                note=f"sliders {sorted(sliders)}",
            )
        dropdown_times = []
        for control in dropdowns.values():
            for value in _moves(control):
                tick = time.perf_counter()
                control.value = value
                dropdown_times.append(time.perf_counter() - tick)
        if dropdown_times:
            record(
                "widget",
                f"{cls.__name__}: dropdown change (median of {len(dropdown_times)})",
                statistics.median(dropdown_times),
                None,
                note="redraws the background; no goal",
            )
        record("widget", f"{cls.__name__}: construction", build_s, None, note="once per page; no goal")


# --- chapters ------------------------------------------------------------------------------


def _chapters() -> list[Path]:
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [chapter["file"] for chapter in part.get("chapters", [])]
    paths = [ROOT / f"{name}.md" for name in files]
    return [path for path in paths if path.exists() and "kernelspec:" in path.read_text()[:2000]]


def _execute(notebook, folder: Path) -> float:
    """Run ``notebook`` in a fresh kernel (started, run, shut down) and return the wall time."""
    from nbclient import NotebookClient

    client = NotebookClient(notebook, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(folder)}})
    start = time.perf_counter()
    client.execute(stderr=subprocess.DEVNULL)  # the kernel's own log lines; cell errors still raise
    return time.perf_counter() - start


def _slowest_cell(notebook) -> str:
    from datetime import datetime

    slowest, index = 0.0, None
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for number, cell in enumerate(code_cells):
        timing = cell.metadata.get("execution", {})
        if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
            begin = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
            end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
            if (end - begin).total_seconds() > slowest:
                slowest, index = (end - begin).total_seconds(), number
    return "" if index is None else f"slowest: code cell {index}, {slowest:.2g} s"


def bench_chapters(names: list[str] | None = None) -> None:
    import jupytext
    import nbformat

    baseline = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import hwlib as hw")])
    record("chapter", "baseline: kernel start + import hwlib", _execute(baseline, ROOT), None)
    for path in _chapters():
        if names and path.stem not in names:
            continue
        notebook = jupytext.read(path)
        elapsed = _execute(notebook, path.parent)
        goal = GOAL_MEASURE_CHAPTER_S if path.stem in MEASURING_CHAPTERS else GOAL_CHAPTER_S
        record("chapter", f"{path.stem} (kernel start included)", elapsed, goal, note=_slowest_cell(notebook))


# --- the layer model ----------------------------------------------------------------------------


def _every_field(step) -> list:
    """Read every field of a LayerStep, so lazily computed energy fields are timed too."""
    names = (
        "flops",
        "weight_hbm_bytes",
        "activation_hbm_bytes",
        "intensity",
        "time_s",
        "gemm_time_s",
        "elementwise_time_s",
        "arithmetic_j",
        "hbm_weights_j",
        "hbm_activations_j",
        "static_j",
        "energy_j",
    )
    return [getattr(step, name) for name in names]


def bench_layer_model(points: int = 1000, sample: int = 20000, repeats: int = 7) -> None:
    """hw.layer_step over a points x points (d, T) grid, every field, against document 002's own scalar layer_step.

    The reference is the document's function loaded from the shared seed at run time
    (benchmarks/doc002_reference.py), called in a Python loop over sampled grid points in this
    same process; both compute the same twelve quantities, checked equal at the sampled points.
    """
    import numpy as np
    from doc002_reference import SEED, load

    import hwlib as hw

    chip = hw.chip("A100-80GB", source="doc002")
    d = np.geomspace(256, 32768, points)[:, None]
    T = np.geomspace(1, 1e5, points)[None, :]
    _every_field(hw.layer_step(d[:2], T[:, :2], chip))  # warm-up (imports, caches)
    grid_times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step = hw.layer_step(d, T, chip)
        fields = _every_field(step)
        grid_times.append(time.perf_counter() - start)
        del step, fields
    grid_s = statistics.median(grid_times)
    grid_per_point = grid_s / (points * points)
    record(
        "layer",
        f"layer_step over a {points}x{points} (d, T) grid, one call, every field",
        grid_s,
        GOAL_GRID_S,
        note=f"median of {repeats}",
    )
    record("layer", "  per point, vectorised", grid_per_point, None)
    if not SEED.exists():
        record("layer", f"  document 002's scalar layer_step: {SEED} not found, skipped", 0.0, None)
        return
    reference, a100 = load()
    rng = np.random.default_rng(0)
    rows_, cols_ = rng.integers(0, points, sample), rng.integers(0, points, sample)
    pairs = [(float(d[i, 0]), float(T[0, j])) for i, j in zip(rows_, cols_)]
    start = time.perf_counter()
    for width, tokens in pairs:  # the document's own scalar function, one call per point
        reference(width, tokens, a100)
    reference_per_point = (time.perf_counter() - start) / sample
    step = hw.layer_step(d, T, chip)
    for (width, tokens), i, j in list(zip(pairs, rows_, cols_))[:50]:
        expected = reference(width, tokens, a100)
        assert np.isclose(step.time_s[i, j], expected["t"], rtol=1e-12)
        assert np.isclose(step.energy_j[i, j], expected["E"], rtol=1e-12)
    record(
        "layer", f"  per point, document 002's scalar layer_step ({sample} sampled points)", reference_per_point, None
    )
    speedup = reference_per_point / grid_per_point
    record(
        "layer",
        "  speed-up per point (document 002's scalar / vectorised)",
        speedup,
        None,
        unit="x",
        ok=speedup >= GOAL_SPEEDUP,
        note=f"goal >= {GOAL_SPEEDUP:.0f}x",
    )


def bench_serving(points: int = 1000, repeats: int = 7) -> None:
    """hw.inference_step over a points x points (batch, context) grid, and the derived searches at 100 contexts."""
    import numpy as np

    import hwlib as hw

    model, chip = hw.model("llama-3-70b"), hw.chip("H100-SXM")
    batch = np.arange(1, points + 1)[:, None]
    context = np.geomspace(1, 131072, points).round()[None, :]

    def timed(call) -> float:
        call()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    grid_s = timed(lambda: hw.inference_step(model, chip, batch, context, n_chips=8))
    record(
        "serving",
        f"inference_step over a {points}x{points} (batch, context) grid, TP 8",
        grid_s,
        GOAL_GRID_S,
        note=f"median of {repeats}",
    )
    contexts = context[0, :: points // 100]
    record(
        "serving",
        f"compute_bound_batch at {contexts.size} contexts",
        timed(lambda: hw.compute_bound_batch(model, chip, contexts, 8)),
        None,
    )
    record(
        "serving",
        f"largest_batch_within at {contexts.size} contexts",
        timed(lambda: hw.largest_batch_within(model, chip, contexts, 0.05, 8)),
        None,
    )
    record(
        "serving",
        "serving_check_table (every measured run and its bound)",
        timed(lambda: hw.viz.serving_check_table()),
        None,
    )
    for rate in (float("inf"), 40.0, 20.0, 2.0):
        record(
            "serving",
            f"simulate_serving, 10,000 requests at {rate:g}/s (Llama 3 8B, 1 H100, 512/256)",
            timed(
                lambda rate=rate: hw.simulate_serving(
                    hw.model("llama-3-8b"),
                    chip,
                    n_requests=10_000,
                    arrival_rate_per_s=rate,
                    prompt_len=512,
                    output_len=256,
                )
            ),
            GOAL_SIMULATE_S,
            note=f"median of {repeats}",
        )
    cluster = hw.cluster("hgx-h100-ndr")
    record(
        "training",
        "train_step, Llama 3 70B on 256 H100s, one mesh",
        timed(lambda: hw.train_step(model, cluster, hw.Mesh(fsdp=32, tp=8), 512 * 8192, 8192)),
        None,
    )
    record(
        "training",
        "plan_training, every mesh of 256 H100s",
        timed(lambda: hw.plan_training(model, cluster, 512 * 8192, 8192, 256)),
        None,
    )
    record(
        "training",
        "training_check_table (every measured run and its bound)",
        timed(lambda: hw.viz.training_check_table()),
        None,
    )


# --- optional: make test and a warm rebuild ---------------------------------------------------------


def bench_make_test() -> None:
    """OPTIONAL (--make-test): the README's test command and each of its steps (as `make test` times them in
    _build/make-test-times.tsv). It rebuilds _build/. Goal: the whole run within GOAL_MAKE_TEST_S (issue 19)."""
    start = time.perf_counter()
    result = subprocess.run(["make", "test"], cwd=ROOT, capture_output=True, text=True)
    total = time.perf_counter() - start
    times = ROOT / "_build" / "make-test-times.tsv"
    for line in times.read_text(encoding="utf-8").splitlines() if times.exists() else []:
        step, seconds = line.split("\t")
        record("make test", step, float(seconds), None)
    passed = "passed" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
    record(
        "make test",
        f"make test (wall time, warm .venv): {passed}",
        total,
        GOAL_MAKE_TEST_S,
        ok=result.returncode == 0 and total <= GOAL_MAKE_TEST_S,
    )


def bench_rebuild() -> None:
    """OPTIONAL (--rebuild): a cold build, a prose-only edit, and the timed warm rebuild, in a temp copy."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "book"
        shutil.copytree(
            ROOT,
            copy,
            symlinks=True,
            ignore=shutil.ignore_patterns(
                ".venv",
                "_build",
                ".git",
                "node_modules",
                ".pytest_cache",
                ".hypothesis",
                "kernel-*",
                ".ipynb_checkpoints",
            ),
        )
        command = [str(ROOT / ".venv" / "bin" / "jupyter-book"), "build", ".", "--builder", "html"]
        cold = time.perf_counter()
        subprocess.run(command, cwd=copy, capture_output=True, check=True)
        record("build", "cold build of a copy (context only)", time.perf_counter() - cold, None)
        intro = copy / "book" / "intro.md"
        intro.write_text(intro.read_text() + "\nA sentence added by the benchmark.\n")
        warm = time.perf_counter()
        subprocess.run(command, cwd=copy, capture_output=True, check=True)
        record("build", "warm rebuild after a prose-only edit", time.perf_counter() - warm, GOAL_BUILD_S)


def print_table() -> None:
    import pandas as pd

    table = pd.DataFrame(rows)

    def shown(row) -> str:
        if row["unit"] == "x":
            return f"{row['value']:,.0f} x"
        value = row["value"]
        return f"{value * 1e9:.3g} ns" if value < 1e-6 else f"{value * 1e3:.3g} ms" if value < 1 else f"{value:.3g} s"

    table["result"] = table.apply(shown, axis=1)
    print()
    table["profile"] = [note if group == "chapter" else "" for group, note in zip(table["group"], table["note"])]
    shown_table = table[["group", "item", "result", "goal", "met", "profile"]]
    try:
        print(shown_table.to_markdown(index=False))
    except ImportError:  # pandas needs `tabulate` for Markdown
        print(shown_table.to_string(index=False))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("widgets", "chapters", "layer", "serving"), action="append")
    parser.add_argument("--chapter", action="append", help="time only this chapter (file stem); repeatable")
    parser.add_argument("--make-test", action="store_true", help="also time `make test` (rebuilds _build/)")
    parser.add_argument("--rebuild", action="store_true", help="also time a warm rebuild in a temporary copy")
    options = parser.parse_args()
    groups = options.only or ["widgets", "chapters", "layer", "serving"]
    os.chdir(ROOT)
    print(f"hwlib benchmarks on {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    if "layer" in groups:
        bench_layer_model()
    if "serving" in groups:
        bench_serving()
    if "widgets" in groups:
        bench_widgets()
    if "chapters" in groups:
        bench_chapters(options.chapter)
    if options.rebuild:
        bench_rebuild()
    if options.make_test:
        bench_make_test()
    print_table()
    return 0 if all(ok is not False for ok in (row["ok"] for row in rows)) else 1


if __name__ == "__main__":
    sys.exit(main())
