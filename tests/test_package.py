"""hwlib as a user installs it: the wheel the book offers holds every file the package reads, and, installed
outside the checkout, runs every command of the calculator and every chapter, as a reader who downloads one runs it."""

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("book_html", ROOT / "book" / "_ext" / "book_html.py")
book_html = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(book_html)
CHAPTERS = sorted(
    path
    for path in (*(ROOT / "book").glob("*.md"), *(ROOT / "book" / "appendix").glob("*.md"))
    if "kernelspec:" in path.read_text(encoding="utf-8").split("\n---", 1)[0]
)
"""The book's notebooks (MyST Markdown with a kernel), each run from the installed wheel."""
COMMANDS = [
    ("--version",),
    ("list", "chips"),
    ("memory", "--model", "llama-3-8b", "--chip", "H100-SXM"),
    ("serve", "--model", "llama-3-8b", "--chip", "H100-SXM", "--chips", "1", "--json"),
    ("train", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "8", "--tokens", "1000000000000"),
    ("plan", "--model", "llama-3-8b", "--cluster", "hgx-h100-ndr", "--chips", "8", "--top", "2"),
    ("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", "--trace", "azure-code-2023", "--requests", "50"),
    ("simulate", "--model", "llama-3-8b", "--chip", "H100-SXM", "--engine", "vllm", "--concurrency", "4"),
    ("serve", "--config", str(ROOT / "hwlib" / "data" / "configs" / "qwen3-8b.json"), "--chip", "H100-SXM"),
]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel, built from a clean copy of the package and unpacked into a folder of its own (what pip installs
    of a pure-Python wheel), with an environment that finds hwlib there and not in the checkout."""
    folder = tmp_path_factory.mktemp("wheel")
    name = book_html.build_hwlib_wheel(folder)
    assert name, "the wheel did not build"
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(folder / name) as wheel:
        wheel.extractall(site)
        names = set(wheel.namelist())
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env["PYTHONPATH"] = str(site)
    return names, site, env, tmp_path_factory.mktemp("elsewhere")


def test_the_wheel_holds_every_file_of_the_package(installed):
    names = installed[0]
    files = [path for path in (ROOT / "hwlib").rglob("*") if path.is_file() and "__pycache__" not in path.parts]
    missing = [str(path.relative_to(ROOT)) for path in files if str(path.relative_to(ROOT)) not in names]
    assert not missing, f"not in the wheel: {missing}"
    assert "hwlib/py.typed" in names and any(name.endswith("entry_points.txt") for name in names)


def test_the_installed_wheel_is_the_hwlib_a_user_imports(installed):
    _, site, env, elsewhere = installed
    found = subprocess.run(
        [sys.executable, "-c", "import hwlib; print(hwlib.__file__, hwlib.__version__)"],
        cwd=elsewhere, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    where, version = found.stdout.split()
    assert Path(where).is_relative_to(site) and version == __import__("hwlib").__version__


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: " ".join(command[:2]))
def test_every_command_runs_from_the_installed_wheel(installed, command):
    _, _, env, elsewhere = installed
    result = subprocess.run(
        [sys.executable, "-m", "hwlib", *command], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and result.stdout.strip()
    if "--json" in command:
        assert json.loads(result.stdout)["inputs"]["model"] == "llama-3-8b"


def test_the_chapters_include_those_that_read_the_data_files():
    names = {path.stem for path in CHAPTERS}
    assert {"serving_many", "forecast", "hardware", "intro"} <= names and len(names) == len(CHAPTERS) >= 19


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_every_chapter_runs_from_the_installed_wheel(installed, chapter):
    _, _, env, elsewhere = installed
    notebook = elsewhere / f"{chapter.stem}.ipynb"
    subprocess.run(
        [sys.executable, "-m", "jupytext", "--to", "notebook", "--output", str(notebook), str(chapter)],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
         "--ExecutePreprocessor.timeout=600", str(notebook)],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    cells = json.loads(notebook.read_text())["cells"]
    assert any(cell.get("outputs") for cell in cells if cell["cell_type"] == "code")


def test_one_version_names_the_package_the_citation_and_the_changelog():
    import hwlib

    version = hwlib.__version__
    assert 'version = { attr = "hwlib.__version__" }' in (ROOT / "pyproject.toml").read_text()
    assert f'version: "{version}"' in (ROOT / "CITATION.cff").read_text()
    assert f"## {version}:" in (ROOT / "CHANGELOG.md").read_text()
    shown = subprocess.run([sys.executable, "-m", "hwlib", "--version"], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == f"hwlib {version}"
