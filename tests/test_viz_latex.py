"""The PDF book's form of tables (hwlib.viz.latex): a Styler or DataFrame prints as a LaTeX table under IPython,
its HTML form untouched."""

import re

import numpy as np
import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

import hwlib as hw
from hwlib.viz.latex import LATEX_MARK, latex_cell, latex_escape, latex_form, register_latex_forms, share_width


@pytest.fixture(scope="module")
def shell():
    shell = InteractiveShell.instance()
    assert register_latex_forms(shell)
    return shell


def test_a_styler_gets_a_latex_form_and_keeps_its_html(shell):
    styler = hw.viz.chip_table(hw.chips()[:3]).style.format("{:,.1f}", subset=["ridge point (FLOP/byte)"])
    bundle, _ = shell.display_formatter.format(styler)
    assert bundle["text/html"] == styler.to_html()
    latex = bundle["text/latex"]
    assert latex.startswith(LATEX_MARK) and r"\toprule" in latex and r"\bottomrule" in latex
    ridge = f"{hw.ridge_point(hw.chips()[0]):,.1f}"
    assert ridge in latex  # the chapter's formatting, not pandas' default
    assert "Styler at 0x" not in latex


def test_a_dataframe_gets_a_latex_form_as_pandas_prints_it(shell):
    frame = pd.DataFrame({"x": [1.5, 2.25], "name": ["a_b", "50%"]}, index=pd.Index(["r1", "r2"], name="row"))
    bundle, _ = shell.display_formatter.format(frame)
    assert bundle["text/html"] == frame._repr_html_()
    assert r"a\_b" in bundle["text/latex"] and r"50\%" in bundle["text/latex"] and "2.25" in bundle["text/latex"]


def test_other_objects_get_no_latex_form(shell):
    assert "text/latex" not in shell.display_formatter.format([1, 2])[0]
    assert latex_form(object()) is None


def test_import_hwlib_registers_nothing_and_the_books_style_does():
    """``import hwlib`` has no side effect on IPython's display; a chapter's ``hw.viz.use_book_style()`` adds the
    tables' LaTeX form."""
    import subprocess
    import sys

    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "latex = shell.display_formatter.formatters['text/latex']\n"
        "import pandas as pd, hwlib as hw\n"
        "frame = pd.DataFrame({'x': [1]})\n"
        "print(latex(frame) is None)\n"
        "hw.viz.use_book_style()\n"
        "print(latex(frame).startswith('% hwlib table'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["True", "True"], result.stderr


def test_register_without_ipython_is_a_no_op():
    assert register_latex_forms(object()) is False


def test_special_characters_are_escaped():
    assert latex_escape("50% of a_b & c #1 {x} ~ ^ \\ $") == (
        r"50\% of a\_b \& c \#1 \{x\} \textasciitilde{} \textasciicircum{} \textbackslash{} \$"
    )
    assert latex_escape("--input") == "-{}-input"
    assert latex_escape("96 GiB 的實體") == r"96 GiB \hwcjk{的實體}"


def test_html_links_become_hyperlinks_and_tags_go():
    latex, shown = latex_cell('see <a href="https://example.com/a_b#c">example.com</a> <b>now</b>')
    assert latex == r"see \href{https://example.com/a_b\#c}{example.com} now" and shown == "see example.com now"
    latex, shown = latex_cell("https://example.com/a/b")
    assert latex.startswith(r"\href{https://example.com/a/b}{") and r"\allowbreak{}" in latex


def test_column_groups_are_centred_and_ruled():
    latex = latex_form(hw.viz.elementwise_tax_table().style.format("{:.2f}"))
    assert re.search(r"\\multicolumn\{\d\}\{c\}\{A100-80GB", latex) and r"\cmidrule(lr)" in latex


def test_a_long_table_breaks_across_pages_and_a_short_one_does_not():
    long = pd.DataFrame({"x": np.arange(80)})
    assert r"\begin{longtable}" in latex_form(long) and r"\endhead" in latex_form(long)
    assert r"\begin{tabular}" in latex_form(long.head(5)) and "longtable" not in latex_form(long.head(5))


def test_a_wide_table_wraps_its_text_columns_within_the_line():
    latex = latex_form(hw.viz.serving_sources_table())
    fractions = [float(f) for f in re.findall(r"p\{([0-9.]+)\\linewidth\}", latex)]
    assert fractions and sum(fractions) < 1
    assert r"\begin{hwtable}{" in latex


def test_share_width_gives_the_modest_columns_all_they_want_first():
    width = share_width({0: 5, 1: 5, 2: 5}, {0: 6, 1: 50, 2: 100}, 30)
    assert width[0] == 6 and width[1] < width[2] and sum(width.values()) == pytest.approx(45)


def test_hidden_index_levels_and_columns_leave_header_and_body_aligned():
    squeeze = hw.viz.squeeze_table([hw.cluster("hgx-a100-hdr")], 7e9).style.format(precision=2)
    latex = latex_form(squeeze.hide(axis="index", level=0).hide(subset=["optimizer (ms)"], axis="columns"))
    rows = [line for line in latex.splitlines() if line.endswith(r"\\")]
    assert rows[0].startswith("N & ") and "optimizer" not in latex
    assert len({line.count(" & ") for line in rows}) == 1  # every row has as many cells
