"""tools/svg_to_pdf.py [NAME.svg ...]: a PDF copy beside each schematic in book/images, for the PDF book.

Sphinx's LaTeX builder cannot embed SVG; chapters write `images/NAME.*`, so the HTML takes NAME.svg and the PDF
NAME.pdf. Run it after editing a schematic (headless Chromium prints the SVG on a page of its own size).
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

IMAGES = Path(__file__).resolve().parents[1] / "book" / "images"


def svg_to_pdf(svg: Path) -> Path:
    width, height = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text()).groups()
    page = (
        f"<style>@page {{ size: {width}px {height}px; margin: 0 }} body {{ margin: 0 }}</style>"
        f'<img src="{svg.as_uri()}" width="{width}" height="{height}">'
    )
    pdf = svg.with_suffix(".pdf")
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "page.html"
        html.write_text(page)
        subprocess.run(
            [
                "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-pdf-header-footer",
                f"--print-to-pdf={pdf}",
                html.as_uri(),
            ],
            check=True,
            capture_output=True,
        )
    return pdf


if __name__ == "__main__":
    names = sys.argv[1:] or sorted(p.name for p in IMAGES.glob("*.svg") if p.name != "favicon.svg")
    for name in names:
        print(svg_to_pdf(IMAGES / name))
