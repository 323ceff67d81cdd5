"""tools/check_pdf.py, the PDF book's check in `make test`: it names each page that prints a Python repr."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("check_pdf", ROOT / "tools" / "check_pdf.py")
check_pdf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_pdf)


def test_clean_pages_pass():
    assert check_pdf.repr_problems(["A roofline.\nTable 1: chips", "819 GB/s, 2.2 µs"]) == []


def test_each_bad_page_is_named_with_what_it_prints():
    pages = ["fine", "<pandas.io.formats.style.Styler at 0x7f7f518521d0>", "ok", "VBox(children=(HBox(children=("]
    found = check_pdf.repr_problems(pages)
    assert [line.split(":")[0] for line in found] == ["page 2", "page 4"]
    assert "Styler" in found[0] and "VBox(children" in found[1]


def test_a_repr_broken_across_lines_is_found():
    text = "<matplotlib.figure.Figure at 0x7f\n\u21aa 12>\n<IPython.core.display\n.Markdown object>"
    assert check_pdf.repr_problems([check_pdf.joined(text)])
    assert check_pdf.repr_problems(["a Python object at 0x\n7f00"])
