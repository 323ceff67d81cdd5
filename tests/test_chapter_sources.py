"""The chapters' sources, read as text (fast: nothing is executed or built).

- A code line the reader sees is at most 80 characters: the PDF wraps a longer one (FreeMono \\small on letter
  paper holds 86 characters, 83 inside an exercise's solution; book/_latex/hwbook.sty), and the HTML page
  scrolls it. Seen: every code cell without a remove-cell or remove-input tag (solutions included) and every
  fenced code block in the prose.
- No code cell the reader sees calls glue: it goes in a removed cell, which the PDF leaves out too.
- No prose line starts with `%`: MyST takes it for a comment and the line vanishes from the page.
- The source documents are asides: no `doc000`, `doc002` or `hw.doc` in a code cell the reader sees or in prose
  outside the admonition of class source-aside (the appendices, which reproduce the documents, may name them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = sorted([*BOOK.glob("*.md"), *(BOOK / "appendix").glob("*.md")])
CODE_LINE_LIMIT = 80
"""Characters in a code line the reader sees (the PDF's code box holds 83 inside a solution, 86 outside it)."""

HIDDEN_TAGS = {"remove-cell", "remove-input"}
SOURCE_NAMES = re.compile(r"doc00[02]|hw\.doc")
# Directives whose body MyST reads as Markdown (prose); any other fenced block is code, math or raw text.
PROSE_DIRECTIVES = re.compile(
    r"admonition|note|tip|hint|important|warning|caution|attention|danger|error|seealso|margin|sidebar|topic"
    r"|dropdown|epigraph|exercise|solution|figure|table|list-table|glossary|card|grid|tab-set|tab-item|div"
    r"|prf:.*|proof:.*|only|container|rubric"
)
MATH_DIRECTIVES = {"math"}
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})\s*(?:\{(?P<name>[^}]+)\})?(?P<rest>.*)$")
AMSMATH = re.compile(r"^\s*\\begin\{(?P<env>[a-zA-Z]+\*?)\}")


@dataclass
class Line:
    number: int  # 1-based, in the file
    text: str
    kind: str  # "prose", "code", "math" or "other"
    visible: bool  # a code line the reader sees (for prose: always True)
    aside: bool  # inside an admonition of class source-aside


def _options(body: list[str]) -> tuple[dict[str, str], int]:
    """A directive's options at the top of its body (`:key: value` lines or a `---` YAML block) and how many
    lines they take."""
    options: dict[str, str] = {}
    if body and body[0].strip() == "---":
        end = next((i for i in range(1, len(body)) if body[i].strip() == "---"), None)
        if end is not None:
            text = "\n".join(body[1:end])
            tags = re.search(r"tags:\s*\[([^\]]*)\]", text) or re.search(r"tags:\s*\n((?:\s*-\s*.+\n?)+)", text)
            if tags:
                options["tags"] = tags.group(1)
            klass = re.search(r"^\s*class:\s*(.+)$", text, re.MULTILINE)
            if klass:
                options["class"] = klass.group(1)
            return options, end + 1
    count = 0
    for line in body:
        match = re.match(r"^\s*:([\w-]+):\s*(.*)$", line)
        if not match:
            break
        options[match.group(1)] = match.group(2)
        count += 1
    return options, count


def _tags(options: dict[str, str]) -> set[str]:
    return set(re.findall(r"[\w-]+", options.get("tags", "")))


def _closing(fence: str, line: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _walk(lines: list[str], start: int, aside: bool) -> list[Line]:
    """Each line of ``lines`` (file line ``start`` + index) with its kind, its visibility and whether it sits in a
    source-aside admonition, following fenced directives into their bodies."""
    out: list[Line] = []
    index = 0
    while index < len(lines):
        text = lines[index]
        number = start + index
        fence = FENCE.match(text)
        if fence:
            marker, name = fence.group("fence"), (fence.group("name") or "").strip()
            end = next((j for j in range(index + 1, len(lines)) if _closing(marker, lines[j])), len(lines))
            body = lines[index + 1 : end]
            options, skip = _options(body) if name else ({}, 0)
            out.append(Line(number, text, "other", False, aside))
            for k in range(skip):
                out.append(Line(number + 1 + k, body[k], "other", False, aside))
            first = number + 1 + skip
            if name == "code-cell":
                visible = not (_tags(options) & HIDDEN_TAGS)
                out += [Line(first + k, line, "code", visible, aside) for k, line in enumerate(body[skip:])]
            elif name in MATH_DIRECTIVES:
                out += [Line(first + k, line, "math", False, aside) for k, line in enumerate(body[skip:])]
            elif marker[0] == ":" or PROSE_DIRECTIVES.fullmatch(name):
                inner = aside or "source-aside" in options.get("class", "").split()
                out += _walk(body[skip:], first, inner)
            elif not name:  # a fenced code block in the prose
                out += [Line(first + k, line, "code", True, aside) for k, line in enumerate(body)]
            else:  # code, raw, bibliography, ...: shown as it is, or not at all
                kind = "code" if name in {"code", "code-block", "sourcecode"} else "other"
                out += [Line(first + k, line, kind, kind == "code", aside) for k, line in enumerate(body[skip:])]
            if end < len(lines):
                out.append(Line(start + end, lines[end], "other", False, aside))
            index = end + 1
            continue
        stripped = text.strip()
        if stripped.startswith("$$"):  # display math, to the line that closes it
            closes = stripped != "$$" and stripped.rstrip().endswith("$$") and len(stripped) > 2
            end = index
            if not closes:
                end = next(
                    (j for j in range(index + 1, len(lines)) if lines[j].strip().startswith("$$")), len(lines) - 1
                )
            out += [Line(start + j, lines[j], "math", False, aside) for j in range(index, end + 1)]
            index = end + 1
            continue
        amsmath = AMSMATH.match(text)
        if amsmath:
            closing = f"\\end{{{amsmath.group('env')}}}"
            end = next((j for j in range(index, len(lines)) if closing in lines[j]), len(lines) - 1)
            out += [Line(start + j, lines[j], "math", False, aside) for j in range(index, end + 1)]
            index = end + 1
            continue
        out.append(Line(number, text, "prose", True, aside))
        index += 1
    return out


def read_chapter(path: Path) -> list[Line]:
    """The lines of a chapter after its jupytext header, each with what it is."""
    lines = path.read_text(encoding="utf-8").split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next(i for i in range(1, len(lines)) if lines[i].strip() == "---") + 1
    return _walk(lines[start:], start + 1, aside=False)


def _name(path: Path) -> str:
    return path.relative_to(BOOK.parent).as_posix()


PAGES = pytest.mark.parametrize("path", CHAPTERS, ids=_name)


@PAGES
def test_code_lines_the_reader_sees_fit_the_page(path):
    long = [
        f"{_name(path)}:{line.number}: {len(line.text)} characters"
        for line in read_chapter(path)
        if line.kind == "code" and line.visible and len(line.text.rstrip()) > CODE_LINE_LIMIT
    ]
    assert long == [], f"code lines over {CODE_LINE_LIMIT} characters (wrap them):\n" + "\n".join(long)


@PAGES
def test_no_prose_line_starts_with_a_percent_sign(path):
    """MyST reads a line starting with % as a comment: "% of the peak" at the start of a line disappears."""
    swallowed = [
        f"{_name(path)}:{line.number}: {line.text.strip()[:70]}"
        for line in read_chapter(path)
        if line.kind == "prose" and line.text.lstrip().startswith("%") and not line.text.lstrip().startswith("%%")
    ]
    assert swallowed == [], "prose lines MyST drops as comments (move the % off the line start):\n" + "\n".join(
        swallowed
    )


GLUE_CALL = re.compile(r"\bglue\(")


@PAGES
def test_glue_stays_out_of_the_code_the_reader_sees(path):
    """Glue is bookkeeping: it goes in a removed cell (which the PDF leaves out too), solutions included."""
    seen = [
        f"{_name(path)}:{line.number}: {line.text.strip()[:70]}"
        for line in read_chapter(path)
        if line.kind == "code" and line.visible and GLUE_CALL.search(line.text)
    ]
    assert seen == [], "glue in a cell the reader sees (move it to a remove-cell cell):\n" + "\n".join(seen)


ROLE_TARGETS = re.compile(r"\{(?:glue(?::\w+)?|ref|numref|eq|doc|download|term)\}`[^`]*`")
LABELS = re.compile(r"^\s*\([\w.:-]+\)=\s*$")


def _shown(text: str) -> str:
    """Prose as far as the page shows it: glue keys, cross-reference targets and labels are not."""
    return "" if LABELS.match(text) else ROLE_TARGETS.sub("", text)


@PAGES
def test_the_source_documents_stay_in_their_aside(path):
    if path.parent.name == "appendix":
        pytest.skip("the appendices reproduce the source documents and may name them")
    named = [
        f"{_name(path)}:{line.number} ({'code' if line.kind == 'code' else 'prose'}): {line.text.strip()[:70]}"
        for line in read_chapter(path)
        if (line.kind == "code" and line.visible and SOURCE_NAMES.search(line.text))
        or (line.kind == "prose" and not line.aside and SOURCE_NAMES.search(_shown(line.text)))
    ]
    assert named == [], "the source documents named outside the source-aside dropdown:\n" + "\n".join(named)


# --- the reader itself, on small examples ---


VISIBLE_CODE_BUDGET = 1150
"""Non-blank code lines the reader sees in all chapters together, collapsed solutions included: the third edition
showed 2,087 (a reader's review counted "about 2,100"); the teaching pass (issue 36) aimed at half."""


def test_the_chapters_show_about_half_the_code_the_third_edition_did():
    shown = {
        _name(path): sum(
            line.kind == "code" and line.visible and bool(line.text.strip()) for line in read_chapter(path)
        )
        for path in CHAPTERS
    }
    largest = sorted(shown.items(), key=lambda item: -item[1])[:5]
    assert sum(shown.values()) <= VISIBLE_CODE_BUDGET, f"{sum(shown.values())} visible code lines; largest: {largest}"


def test_the_reader_tells_code_math_prose_and_asides_apart(tmp_path):
    chapter = tmp_path / "chapter.md"
    chapter.write_text(
        "---\njupytext:\n  text_representation: {}\n---\n\n"
        "% a comment\n"
        "Prose with {glue:text}`doc000_key` and $x$.\n\n"
        "$$\n% a LaTeX comment\nE = mc^2\n$$ (eq-e)\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\nhw.doc000.RECORD\n```\n\n"
        "```{code-cell} ipython3\n---\ntags: [hide-input]\n---\nx = 1" + " " * 10 + "# " + "y" * 80 + "\n```\n\n"
        "```{code-cell} ipython3\nz = hw.doc002.TABLE\n```\n\n"
        ":::{admonition} In the source documents\n:class: source-aside dropdown\n"
        "Document doc000 says otherwise.\n:::\n\n"
        "````{solution-start} ex\n:class: dropdown\n````\n"
        "```{code-cell} ipython3\nassert True\n```\n"
        "````{solution-end}\n````\n",
        encoding="utf-8",
    )
    lines = read_chapter(chapter)
    kinds = {line.text: line for line in lines}
    assert kinds["% a comment"].kind == "prose"
    assert kinds["% a LaTeX comment"].kind == "math"
    assert kinds["hw.doc000.RECORD"].kind == "code" and not kinds["hw.doc000.RECORD"].visible
    long = next(line for line in lines if line.text.startswith("x = 1"))
    assert long.visible and len(long.text) > CODE_LINE_LIMIT  # hide-input: folded, still there to open
    assert kinds["z = hw.doc002.TABLE"].visible
    assert kinds["Document doc000 says otherwise."].aside
    assert kinds["assert True"].kind == "code" and kinds["assert True"].visible
    assert not SOURCE_NAMES.search(_shown("Prose with {glue:text}`doc000_key` and $x$."))
