"""tools/check_pdf.py, the PDF book's check in `make test`: it names each page that prints a Python repr, and
what keeps the index from sending a reader to where the chapters teach a concept."""

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


# The index: LaTeX's .idx lines as Sphinx writes them (a glossary term's hyphen with a space, a chapter's without).
IDX = r"""
\indexentry{roofline@\spxentry{roofline}|spxpagem}{7}
\indexentry{roofline@\spxentry{roofline}|spxpagem}{265}
\indexentry{add\sphinxhyphen {}equivalent@\spxentry{add\sphinxhyphen {}equivalent}|spxpagem}{265}
\indexentry{add\sphinxhyphen{}equivalent@\spxentry{add\sphinxhyphen{}equivalent}|spxpagem}{127}
\indexentry{all\sphinxhyphen{}reduce@\spxentry{all\sphinxhyphen{}reduce}!ring@\spxentry{ring}|spxpagem}{181}
\indexentry{GQA@\spxentry{GQA}|see{grouped\sphinxhyphen{}query attention}}{53}
\indexentry{ZeRO@\spxentry{ZeRO}|spxpagem}{268}
\indexentry{ring\_time\_s() (in module hwlib.collectives)@\spxentry{ring\_time\_s()}\spxextra{in module hwlib}}{7}
"""
TOC = r"""
\contentsline {chapter}{Introduction}{1}{chapter*.2}%
\contentsline {part}{I\hspace {1em}Foundations}{5}{part.1}%
\contentsline {chapter}{\numberline {1}Rooflines and ridge points}{7}{chapter.1}%
\contentsline {part}{V\hspace {1em}Appendices}{233}{part.5}%
\contentsline {chapter}{\numberline {18}Glossary of terms and symbols}{265}{chapter.18}%
"""


def test_the_index_files_read_as_terms_pages_and_chapters():
    entries = check_pdf.index_entries(IDX)
    assert entries[0] == ("roofline", "", "7", "")
    assert {entry[0] for entry in entries[2:4]} == {"add-equivalent"}  # either hyphen, one term
    assert entries[4] == ("all-reduce", "ring", "181", "")
    assert entries[5] == ("GQA", "", "53", "grouped-query attention")
    assert check_pdf.chapter_pages(TOC) == (
        {"Introduction": 1, "Rooflines and ridge points": 7, "Glossary of terms and symbols": 265},
        233,
    )


def test_an_index_of_concepts_in_the_chapters_passes():
    entries = check_pdf.index_entries(IDX) + [("grouped-query attention", "", "53", "")]
    entries += [(f"concept {n}", "", str(10 + n), "") for n in range(80)]
    found, concepts = check_pdf.index_problems(entries, *check_pdf.chapter_pages(TOC), core=("roofline", "all-reduce"))
    assert found == []
    assert concepts == 84  # roofline, add-equivalent, all-reduce, grouped-query attention and the 80; not the API name


def test_an_index_of_api_names_and_glossary_pages_fails_naming_what_it_misses():
    found, concepts = check_pdf.index_problems(
        check_pdf.index_entries(IDX), *check_pdf.chapter_pages(TOC), core=("roofline", "ZeRO")
    )
    assert concepts == 3
    assert "3 concept terms" in found[0] and "fewer than 80" in found[0]
    assert found[1].startswith("the index sends 'ZeRO' to no chapter")  # only the glossary's page 268
    assert found[2] == "the index's 'see grouped-query attention' at 'GQA' names no term of the index"
    assert len(found) == 3
