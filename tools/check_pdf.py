"""Check the PDF book: a sane page count, bookmarks, every glyph in its fonts, no Python repr in its text, and
an index of concepts that sends the reader into the chapters.

    python tools/check_pdf.py _build/latex/book.pdf [--min-pages N] [--max-pages N] [--min-concepts N]

Reads the PDF with poppler's pdfinfo, pdftotext and pdftohtml (for the outline). A Python repr on a page
(``<pandas.io.formats.style.Styler at 0x...>``, ``VBox(children=...``) means an output had no form
LaTeX can print (give it ``text/latex`` or ``image/png``); a "Missing character" line in the LaTeX
log beside the PDF means a glyph printed as nothing. The index is read from the files LaTeX writes beside
the PDF: the entries of ``book.idx`` (term, subentry, page) and the chapters' first pages in ``book.toc``.
It must hold at least ``--min-concepts`` terms that are not hwlib's API names with a page in the chapters
(before the appendices), each of ``CORE_CONCEPTS`` among them, and every "see" must name a term the index
holds (xindy only warns on the terminal about one that does not). Prints the page count; exits 1 naming
every problem, 0 when all is well.
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

CORE_CONCEPTS = ("roofline", "arithmetic intensity", "KV cache", "all-reduce", "pipeline parallelism", "ZeRO")
"""Terms the index must send to a chapter (not only to the glossary)."""
MIN_CONCEPTS = 80
"""The fewest index terms, hwlib's API names aside, with a page in the chapters."""


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


def _plain(tex: str) -> str:
    """An index term as it prints: Sphinx's mark-up for a hyphen, an entry and escaped characters undone."""
    tex = re.sub(r"\\sphinxhyphen\s*\{\}", "-", tex)
    tex = re.sub(r"\\spx(entry|extra)\s*\{(.*?)\}", r"\2", tex)
    return re.sub(r'\\([_&%$#{}])|"([!@|"])', r"\1\2", tex).strip()


def index_entries(idx: str) -> list[tuple[str, str, str, str]]:
    """Each line of a LaTeX ``.idx`` file as (term, subentry, page, see): the subentry "" for a term's own page,
    ``see`` the term a "see" entry names ("" for an entry with a page)."""
    entries = []
    for line in idx.splitlines():
        match = re.fullmatch(r"\\indexentry\{(.*)\}\{([^{}]*)\}", line.strip())
        if not match:
            continue
        body, page = match.groups()
        # a quote escapes the index's own marks: "! "@ "|
        body, encap = (re.split(r'(?<!")\|', body, maxsplit=1) + [""])[:2]
        levels = [re.split(r'(?<!")@', level, maxsplit=1)[0] for level in re.split(r'(?<!")!', body)]
        see = re.fullmatch(r"see(?:also)?\{(.*)\}", encap)
        entries.append(
            (_plain(levels[0]), _plain(levels[1]) if len(levels) > 1 else "", page, _plain(see.group(1)) if see else "")
        )
    return entries


def chapter_pages(toc: str) -> tuple[dict[str, int], int | None]:
    """From a LaTeX ``.toc`` file: each chapter's title and first page, and the first page of the part named
    Appendices (None without one)."""
    chapters, appendices = {}, None
    for kind, title, page in re.findall(r"\\contentsline \{(chapter|part)\}\{(.*)\}\{(\d+)\}\{[^{}]*\}%?$", toc, re.M):
        title = _plain(re.sub(r"\\numberline \{[^{}]*\}|.*\\hspace \{[^{}]*\}", "", title))
        if kind == "part" and title == "Appendices":
            appendices = int(page)
        elif kind == "chapter":
            chapters[title] = int(page)
    return chapters, appendices


def index_problems(
    entries: list[tuple[str, str, str, str]],
    chapters: dict[str, int],
    appendices: int | None,
    min_concepts: int = MIN_CONCEPTS,
    core: tuple[str, ...] = CORE_CONCEPTS,
) -> tuple[list[str], int]:
    """What is wrong with a book's index, and how many concept terms it sends into the chapters: terms that
    are not hwlib's API names (none of their entries names hwlib) with a page before the appendices, or before
    the glossary where the book has no Appendices part."""
    end = appendices or next((page for title, page in chapters.items() if title.startswith("Glossary")), None)
    api = {term for term, sub, _, _ in entries if "hwlib" in term or "hwlib" in sub}
    in_chapters = {
        term
        for term, _, page, see in entries
        if not see and term not in api and page.isdigit() and (end is None or int(page) < end)
    }
    found = []
    if len(in_chapters) < min_concepts:
        found.append(
            f"the index sends {len(in_chapters)} concept terms into the chapters, fewer than {min_concepts}: "
            "index where the chapters teach them (MyST's {index} directive)"
        )
    found += [
        f"the index sends {term!r} to no chapter (only to the appendices, or nowhere)"
        for term in core
        if term not in in_chapters
    ]
    terms = {term for term, _, _, see in entries if not see}
    found += sorted(
        {
            f"the index's 'see {see}' at {term!r} names no term of the index"
            for term, _, _, see in entries
            if see and see not in terms
        }
    )
    return found, len(in_chapters)


def problems(pdf: Path, min_pages: int, max_pages: int, min_concepts: int = MIN_CONCEPTS) -> list[str]:
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
    idx, toc = pdf.with_suffix(".idx"), pdf.with_suffix(".toc")
    if idx.exists() and toc.exists():
        entries = index_entries(idx.read_text(encoding="utf-8", errors="replace"))
        index_found, concepts = index_problems(
            entries, *chapter_pages(toc.read_text(encoding="utf-8", errors="replace")), min_concepts
        )
        print(f"{pdf}: an index of {concepts} concept terms with pages in the chapters")
        found += index_found
    else:
        print(f"{pdf}: no {idx.name} and {toc.name} beside it: the index is not checked")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdf", type=Path)
    parser.add_argument("--min-pages", type=int, default=100)
    parser.add_argument("--max-pages", type=int, default=800)
    parser.add_argument("--min-concepts", type=int, default=MIN_CONCEPTS, help="index terms with a chapter page")
    args = parser.parse_args(argv)
    if not args.pdf.exists():
        print(f"{args.pdf} does not exist: build it with `make pdf`", file=sys.stderr)
        return 1
    found = problems(args.pdf, args.min_pages, args.max_pages, args.min_concepts)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"{args.pdf}: {len(found)} problems", file=sys.stderr)
        return 1
    print(f"{args.pdf}: no Python repr, no missing glyph, an index of concepts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
