"""Let `pytest --nbval` execute the book's chapters, each once, and hand the executed chapters to the build.

nbval collects only .ipynb files. Here every MyST Markdown chapter whose header declares a kernelspec
is read as MyST-NB reads it and run cell by cell in a fresh kernel in the chapter's folder, by nbclient,
the executor MyST-NB itself uses, so an exception in any cell (a failed exercise assert included) fails
the test named after the chapter and the cell. The chapters store no outputs, so nothing is compared:
the chapters' own asserts do the checking.

A chapter whose every cell passed is executed exactly as the book build would execute it, so it goes
into the build's execution cache (``_build/.jupyter_cache``) when the session ends, with the same key
MyST-NB looks it up by: the `jupyter-book build` that follows in `make test` executes nothing again.
Under pytest-xdist each worker writes its chapters to a folder that the controller caches at the end.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import IPyNbCell, IPyNbFile

ROOT = Path(__file__).resolve().parent
EXECUTION_CACHE = ROOT / "_build" / ".jupyter_cache"
CELL_TIMEOUT_S = 180
"""As _config.yml's ``execute: timeout``."""
EXECUTED = "BOOK_EXECUTED_CHAPTERS"
"""Environment variable naming the folder where this session's executed chapters wait to be cached."""


def _declares_kernel(path: Path) -> bool:
    with path.open(encoding="utf-8") as handle:
        head = handle.read(2000)
    return head.startswith("---") and "kernelspec:" in head.split("\n---", 1)[0]


def _read_as_the_build_does(path: Path) -> nbformat.NotebookNode:
    """The chapter as MyST-NB reads it (its cells and their metadata are the execution cache's key)."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    return read_myst_markdown_notebook(
        path.read_text(encoding="utf-8"), MdParserConfig(), add_source_map=True, path=str(path)
    )


class MystNotebook(IPyNbFile):
    """A MyST Markdown chapter, executed cell by cell by nbclient in one kernel."""

    def collect(self):
        self.nb = _read_as_the_build_does(Path(self.path))
        self.failed = False
        code_cells = [(index, cell) for index, cell in enumerate(self.nb.cells) if cell.cell_type == "code"]
        for number, (index, cell) in enumerate(code_cells):
            yield ChapterCell.from_parent(
                self,
                name=f"Cell {number}",
                cell_num=number,
                cell=cell,
                options={"check": False},
                index=index,
                last=number == len(code_cells) - 1,
            )

    def setup(self):
        from nbclient import NotebookClient

        self.client = NotebookClient(
            self.nb,
            timeout=CELL_TIMEOUT_S,
            allow_errors=False,
            record_timing=False,
            resources={"metadata": {"path": str(Path(self.path).parent)}},
        )
        self.client.reset_execution_trackers()
        self._kernel = self.client.setup_kernel()
        self._kernel.__enter__()
        info = self.client.wait_for_reply(self.client.kc.kernel_info())
        self.nb.metadata["language_info"] = info["content"]["language_info"]
        self.started = time.perf_counter()

    def teardown(self):
        kernel = getattr(self, "_kernel", None)
        if kernel is not None:
            kernel.__exit__(None, None, None)

    def executed(self) -> None:
        """Every cell passed: keep the executed chapter for the execution cache."""
        self.client.set_widgets_metadata()
        folder = os.environ.get(EXECUTED)
        if folder:
            seconds = time.perf_counter() - self.started
            target = Path(folder) / f"{Path(self.path).relative_to(ROOT).as_posix().replace('/', '__')}.ipynb"
            self.nb.metadata["book_execution"] = {"path": str(self.path), "seconds": seconds}
            nbformat.write(self.nb, target)


class ChapterCell(IPyNbCell):
    """One code cell of a chapter: it passes when it runs without an exception."""

    def __init__(self, *args, index: int, last: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.index, self.last = index, last

    def runtest(self):
        from nbclient.exceptions import CellExecutionError, CellTimeoutError

        chapter = self.parent
        if chapter.failed:
            pytest.skip("an earlier cell of this chapter failed")
        try:
            chapter.client.execute_cell(self.cell, self.index, execution_count=chapter.client.code_cells_executed + 1)
        except (CellExecutionError, CellTimeoutError) as error:
            chapter.failed = True
            self.raise_cell_error("Cell execution caused an exception", str(error))
        if self.last:
            chapter.executed()


def pytest_collect_file(file_path, parent):
    option = parent.config.option
    if (option.nbval or option.nbval_lax) and file_path.suffix == ".md" and _declares_kernel(file_path):
        return MystNotebook.from_parent(parent, path=file_path)
    return None


def pytest_configure(config):
    if not hasattr(config, "workerinput") and (config.option.nbval or config.option.nbval_lax):
        os.environ[EXECUTED] = tempfile.mkdtemp(prefix="book-executed-")  # xdist's workers inherit it


def pytest_sessionfinish(session):
    """In the controller (or a run without xdist): every chapter that passed goes into the execution cache."""
    folder = os.environ.get(EXECUTED)
    if hasattr(session.config, "workerinput") or not folder:
        return
    paths = sorted(Path(folder).glob("*.ipynb"))
    if paths:
        from jupyter_cache import get_cache
        from jupyter_cache.base import CacheBundleIn

        cache = get_cache(str(EXECUTION_CACHE))
        for path in paths:
            notebook = nbformat.read(path, as_version=4)
            run = notebook.metadata.pop("book_execution")
            cache.cache_notebook_bundle(
                CacheBundleIn(notebook, run["path"], data={"execution_seconds": run["seconds"]}),
                check_validity=False,
                overwrite=True,
            )
            path.unlink()
    Path(folder).rmdir()
