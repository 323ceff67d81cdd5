"""Let `pytest --nbval` execute the book's MyST Markdown chapters as notebooks.

nbval collects only .ipynb files. Here every .md file whose jupytext header declares a
kernelspec is read with jupytext and run cell by cell in a fresh kernel, so an exception
in any cell (a failed exercise assert included) fails the test named after the chapter
and the cell. The chapters store no outputs, so there is nothing to compare: cells are
executed, not diffed, and the checking is done by the chapters' own asserts.
"""

from collections import defaultdict

import jupytext
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags


def _declares_kernel(path):
    with open(path, encoding="utf-8") as handle:
        head = handle.read(2000)
    return head.startswith("---") and "kernelspec:" in head.split("\n---", 1)[0]


class MystNotebook(IPyNbFile):
    """A MyST Markdown notebook executed cell by cell by nbval."""

    def collect(self):
        self.nb = jupytext.read(self.path)
        code_cells = (cell for cell in self.nb.cells if cell.cell_type == "code")
        for number, cell in enumerate(code_cells):
            options = defaultdict(bool, find_metadata_tags(cell.metadata))
            options.update(find_comment_markers(cell.source))
            options["check"] = False
            yield IPyNbCell.from_parent(self, name=f"Cell {number}", cell_num=number, cell=cell, options=options)


def pytest_collect_file(file_path, parent):
    option = parent.config.option
    if (option.nbval or option.nbval_lax) and file_path.suffix == ".md" and _declares_kernel(file_path):
        return MystNotebook.from_parent(parent, path=file_path)
    return None
