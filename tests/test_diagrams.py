"""The book's schematics (book/images/*.svg, hand-written SVG): each parses, says what it shows in a <title> and a
<desc> (for screen readers and the PDF), fits the page (viewBox at most 760 px wide), keeps its text readable (no
font size under 11 px), is used by a chapter (as `images/NAME.*`) and has its PDF copy for the PDF book, the
same shape (tools/svg_to_pdf.py makes it)."""

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
SVG_NS = "{http://www.w3.org/2000/svg}"
DIAGRAMS = sorted(path for path in (BOOK / "images").glob("*.svg") if path.name != "favicon.svg")
MAX_WIDTH = 760
MIN_FONT_PX = 11.0


def _chapters_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in BOOK.rglob("*.md") if "_build" not in path.parts)


CHAPTERS = _chapters_text()


def test_there_are_diagrams():
    assert DIAGRAMS, "no schematics in book/images"


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda path: path.name)
def test_a_diagram_parses_and_says_what_it_shows(path):
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG_NS}svg"
    for name in ("title", "desc"):
        element = root.find(f"{SVG_NS}{name}")
        assert element is not None and (element.text or "").strip(), f"{path.name}: empty or missing <{name}>"


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda path: path.name)
def test_a_diagram_fits_the_page(path):
    view_box = ET.parse(path).getroot().get("viewBox")
    assert view_box, f"{path.name}: no viewBox"
    width = float(view_box.replace(",", " ").split()[2])
    assert 0 < width <= MAX_WIDTH, f"{path.name}: viewBox {width:g} px wide"


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda path: path.name)
def test_a_diagram_keeps_its_text_readable(path):
    source = path.read_text(encoding="utf-8")
    sizes = [float(size) for size in re.findall(r"font-size\s*[:=]\s*[\"']?\s*([0-9.]+)", source)]
    assert sizes, f"{path.name}: no font size set"
    assert min(sizes) >= MIN_FONT_PX, f"{path.name}: a font size of {min(sizes):g} px"
    assert not re.search(r"font-size\s*[:=]\s*[\"']?\s*[0-9.]+\s*(em|%|pt)", source), f"{path.name}: relative size"


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda path: path.name)
def test_a_diagram_is_used_by_a_chapter(path):
    used = f"images/{path.stem}.*" in CHAPTERS
    assert used, f"{path.name}: no chapter under book/ shows it (images/{path.stem}.*)"


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda path: path.name)
def test_a_diagram_has_its_pdf_copy(path):
    pdf = path.with_suffix(".pdf")
    assert pdf.exists(), f"{pdf.name} is missing: run tools/svg_to_pdf.py {path.name}"
    box = re.search(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf.read_bytes())
    width, height = (float(v) for v in ET.parse(path).getroot().get("viewBox").split()[2:])
    page_width, page_height = (float(v) for v in box.groups())
    assert page_width / page_height == pytest.approx(width / height, rel=0.02), (
        f"{pdf.name} is not the shape of {path.name}: run tools/svg_to_pdf.py {path.name}"
    )
