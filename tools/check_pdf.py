"""Check the PDF book: a sane page count, bookmarks, every glyph in its fonts, and no Python repr in its text.

    python tools/check_pdf.py _build/latex/book.pdf [--min-pages N] [--max-pages N]

Reads the PDF with poppler's pdfinfo, pdftotext and pdftohtml (for the outline). A Python repr on a page
(``<pandas.io.formats.style.Styler at 0x...>``, ``VBox(children=...``) means an output had no form
LaTeX can print (give it ``text/latex`` or ``image/png``); a "Missing character" line in the LaTeX
log beside the PDF means a glyph printed as nothing. Prints the page count; exits 1 naming every
bad page, 0 when all is well.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPRS = (
    "<pandas.io.formats.style.Styler",
    "VBox(children",
    "HBox(",
    "object at 0x",
    "<Figure size",
    "<IPython.core",
    "<matplotlib.",
    "interactive(children",
    "Output()",
)
"""Text that only a Python repr prints."""

CONTINUATION = "\u21aa"  # the mark Sphinx sets where it breaks a long line of code or output


def pages_text(pdf: Path) -> list[str]:
    """The text of each page, its lines joined, Sphinx's line-break marks removed."""
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    return [joined(page) + "\n" + page for page in text.split("\f")]


def joined(page: str) -> str:
    """A page's text with its lines joined and Sphinx's line-break marks removed (a repr broken across lines)."""
    return re.sub(r"\s*\n\s*", "", page.replace(CONTINUATION, ""))


def repr_problems(pages: list[str]) -> list[str]:
    """One line for each page whose text has a Python repr, naming the page (from 1) and what it shows."""
    found = []
    for number, text in enumerate(pages, start=1):
        for pattern in REPRS:
            at = text.find(pattern)
            if at >= 0:
                snippet = " ".join(text[max(at - 40, 0) : at + 60].split())
                found.append(f"page {number}: a Python repr ({pattern!r}): ...{snippet}...")
                break
    return found


def page_count(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def bookmarks(pdf: Path) -> int:
    """How many entries the PDF's outline has (hyperref writes one from the table of contents)."""
    xml = subprocess.run(
        ["pdftohtml", "-xml", "-stdout", "-i", "-q", "-f", "1", "-l", "1", str(pdf)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return xml.count("<item")


def problems(pdf: Path, min_pages: int, max_pages: int) -> list[str]:
    found = []
    count = page_count(pdf)
    print(f"{pdf}: {count} pages")
    if not min_pages <= count <= max_pages:
        found.append(f"{count} pages, outside {min_pages}-{max_pages}")
    marks = bookmarks(pdf)
    print(f"{pdf}: {marks} bookmarks")
    if marks < 10:
        found.append(f"{marks} bookmarks: the PDF outline is missing")
    found += repr_problems(pages_text(pdf))
    log = pdf.with_suffix(".log")
    if log.exists():
        missing = sorted(
            set(
                re.findall(
                    r"Missing character: There is no (.+?) in font ([^!\n]+)",
                    log.read_text(encoding="utf-8", errors="replace"),
                )
            )
        )
        found += [f"missing glyph {char} in font {font} (see {log})" for char, font in missing]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdf", type=Path)
    parser.add_argument("--min-pages", type=int, default=100)
    parser.add_argument("--max-pages", type=int, default=800)
    args = parser.parse_args(argv)
    if not args.pdf.exists():
        print(f"{args.pdf} does not exist: build it with `make pdf`", file=sys.stderr)
        return 1
    found = problems(args.pdf, args.min_pages, args.max_pages)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"{args.pdf}: {len(found)} problems", file=sys.stderr)
        return 1
    print(f"{args.pdf}: no Python repr, no missing glyph")
    return 0


if __name__ == "__main__":
    sys.exit(main())
