"""The PDF book's form of every table: a pandas Styler or DataFrame as a booktabs LaTeX table.

A chapter shows a table as ``frame.style.format(...)`` (or a bare DataFrame); the HTML book prints
its ``text/html`` form, unchanged. Under IPython, ``hw.viz.use_book_style()`` (each chapter's first cell)
also gives both types a ``text/latex`` form (``register_latex_forms``), which the book's LaTeX builder prints instead of
``<pandas.io.formats.style.Styler at 0x...>``: the same formatted cells, escaped for LaTeX, in a
``tabular`` (a ``longtable`` beyond ``LONG_TABLE_LINES`` lines) whose columns wrap and whose font
shrinks so that it fits the page width. The macros it uses (``hwtable``, ``\\hwcjk``) are defined in
``book/_latex/hwbook.sty``. pandas is imported only when a table is first printed.
"""

from __future__ import annotations

import html
import re
import sys

LATEX_MARK = "% hwlib table"
"""First line of every table's LaTeX: the book's Sphinx extension prints such outputs as raw LaTeX."""

LONG_TABLE_LINES = 45
"""Tables whose body would take more lines than this break across pages (``longtable``)."""

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_SPECIAL_RE = re.compile("|".join(re.escape(char) for char in _SPECIAL))
_LIGATURE_RE = re.compile(r"([-'`<>,!?])(?=[-'`<>,])")
_CJK_RE = re.compile("[\u2e80-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+")
_LINK_RE = re.compile(r'<a\s[^>]*?href="([^"]*)"[^>]*>(.*?)</a>|(https?://[^\s<>"]+)', re.S)
_TAG_RE = re.compile(r"<[^>]+>")
# (font command, line width in characters of that font, at 17.5 cm; FreeSerif's mean character is ~0.47 em)
_SIZES = (("small", 112), ("footnotesize", 126), ("scriptsize", 146))
_ROW_LABEL = 28  # row labels up to this many characters stay on one line where they can
_PAD = 2.4  # characters of \tabcolsep (4pt) on both sides of a column, and some slack


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped and CJK runs in ``\\hwcjk`` (a font that has them)."""
    escaped = _SPECIAL_RE.sub(lambda match: _SPECIAL[match.group(0)], text)
    escaped = _LIGATURE_RE.sub(r"\1{}", escaped)  # "--input" prints as typed, not as an en dash
    return _CJK_RE.sub(lambda match: r"\hwcjk{" + match.group(0) + "}", escaped)


def _url_latex(url: str, label: str | None = None) -> tuple[str, str]:
    """A hyperlink and its visible text; a URL shown as itself may break after / . - ? & = _."""
    target = url.replace("\\", "/").replace("%", r"\%").replace("#", r"\#").replace("&", "%26").replace("~", r"\~")
    target = re.sub(r"[{}^ ]", lambda m: f"%{ord(m.group(0)):02X}", target)
    if label is not None:
        return rf"\href{{{target}}}{{{_plain_latex(label)}}}", label
    shown = "".join(latex_escape(char) + (r"\allowbreak{}" if char in "/.-?&=_" else "") for char in url)
    return rf"\href{{{target}}}{{{shown}}}", url


def latex_cell(value: object) -> tuple[str, str]:
    """One cell's LaTeX and its visible text: HTML links become hyperlinks, other tags are dropped."""
    text = "" if value is None else str(value)
    parts, shown, last = [], [], 0
    for match in _LINK_RE.finditer(text):
        plain = html.unescape(_TAG_RE.sub("", text[last : match.start()]))
        parts.append(_plain_latex(plain))
        shown.append(plain)
        if match.group(3):
            latex, visible = _url_latex(match.group(3))
        else:
            latex, visible = _url_latex(html.unescape(match.group(1)), html.unescape(_TAG_RE.sub("", match.group(2))))
        parts.append(latex)
        shown.append(visible)
        last = match.end()
    plain = html.unescape(_TAG_RE.sub("", text[last:])).replace("\xa0", " ")
    parts.append(_plain_latex(plain))
    shown.append(plain)
    return "".join(parts).replace("\n", " "), "".join(shown)


_LONG_WORD = 16
"""Words longer than this (URLs, paths, identifiers) may break after / _ - . = & ? , | in a table cell."""


def _breakable(escaped_word: str) -> str:
    return re.sub(r"(/|\\_|-|\.|=|\\&|\?|,|\|)(?=.)", r"\1\\allowbreak{}", escaped_word)


def _plain_latex(text: str) -> str:
    """Escaped text whose long words may break."""
    return re.sub(
        r"\S+", lambda m: _breakable(m.group(0)) if len(m.group(0)) > _LONG_WORD else m.group(0), latex_escape(text)
    )


def _widest_word(text: str) -> int:
    return max((min(len(word), _LONG_WORD) for word in text.split()), default=0)


def _grid(styler: object) -> tuple[list[list[dict]], list[list[dict]], object]:
    """Header and body rows of ``styler`` as pandas renders them, and its caption."""
    styler._compute()
    rendered = styler._translate(True, True, blank="")
    head, body = rendered["head"], rendered["body"]
    width = max((len(row) for row in body), default=0)  # a header row has no cells for hidden index levels
    head = [[{"display_value": "", "is_visible": False}] * (width - len(row)) + list(row) for row in head]
    return head, body, rendered.get("caption")


def _span(cell: dict, name: str) -> int:
    found = re.search(rf'{name}="(\d+)"', cell.get("attributes") or "")
    return int(found.group(1)) if found else 1


def _columns_shown(rows: list[list[dict]]) -> list[int]:
    """Positions with a visible cell in some row (hidden index levels and columns have none)."""
    width = max((len(row) for row in rows), default=0)
    shown = set()
    for row in rows:
        for j, cell in enumerate(row):
            if cell.get("is_visible", True):
                shown.update(range(j, j + _span(cell, "colspan")))
    return [j for j in range(width) if j in shown]


def _numeric_columns(data: object, n_index: int, positions: list[int]) -> set[int]:
    """Positions of the index levels and columns of ``data`` that hold numbers (set right-aligned)."""
    import pandas as pd

    numeric = set()
    for j in positions:
        if j < n_index:
            level = data.index.get_level_values(j) if j < data.index.nlevels else None
            if level is not None and pd.api.types.is_numeric_dtype(level):
                numeric.add(j)
        elif j - n_index < data.shape[1] and pd.api.types.is_numeric_dtype(data.iloc[:, j - n_index]):
            numeric.add(j)
    return numeric


def _layout(
    head: list, body: list, positions: list[int], numeric: set[int], n_index: int
) -> tuple[str, dict[int, str], int]:
    """The font size, each column's LaTeX column type (wide enough for its cells, all within the line) and
    the estimated number of lines of the body."""
    long, word, head_long, head_word = ({j: 0 for j in positions} for _ in range(4))
    texts = [
        {
            j: latex_cell(row[j].get("display_value", ""))[1]
            for j in positions
            if j < len(row) and row[j].get("is_visible", True)
        }
        for row in body
    ]
    for row in texts:
        for j, text in row.items():
            long[j], word[j] = max(long[j], len(text)), max(word[j], _widest_word(text))
    for row in head:
        for j, cell in enumerate(row):
            if j in head_long and cell.get("is_visible", True) and _span(cell, "colspan") == 1:
                text = latex_cell(cell.get("display_value", ""))[1]
                head_long[j], head_word[j] = max(head_long[j], len(text)), max(head_word[j], _widest_word(text))
    natural = {j: max(long[j], head_long[j], 1) for j in positions}
    pad = _PAD * len(positions)
    align = {j: "r" if j in numeric else "l" for j in positions}
    for size, line in _SIZES[:2]:
        if sum(natural.values()) + pad <= line:
            return size, align, len(body)
    size, line = _SIZES[1] if len(positions) <= 8 else _SIZES[2]
    one_line = {j for j in positions if j in numeric or (j < n_index and long[j] <= _ROW_LABEL)}
    least = {
        j: max(long[j] if j in one_line else min(word[j], long[j]), head_word[j], 3) for j in positions
    }  # numbers and short row labels on one line, if they can be
    if sum(least.values()) + pad > line:
        least.update({j: max(min(word[j], long[j]), head_word[j], 3) for j in positions if j < n_index})
    room = line - pad - sum(least.values())
    if room < 0:
        size, line = _SIZES[2]
        least = {j: min(width, line / 3) for j, width in least.items()}
        room = line - pad - sum(least.values())
    width = share_width(least, natural, room)
    columns = {}
    for j in positions:
        if width[j] >= natural[j]:
            columns[j] = align[j]
        else:
            ragged = r"\raggedleft" if j in numeric else r"\raggedright"
            columns[j] = rf">{{{ragged}\arraybackslash}}p{{{width[j] / line:.3f}\linewidth}}"
    lines = sum(max((-(-len(text) // max(int(width[j]), 1)) for j, text in row.items()), default=1) for row in texts)
    return size, columns, lines


def share_width(least: dict, natural: dict, room: float) -> dict:
    """Column widths: each its ``least``, then ``room`` more shared out, the columns that want least to reach
    their ``natural`` width first getting all of it, the others what is left in proportion to what they want."""
    width, room = dict(least), max(room, 0)
    wanting = sorted((natural[j] - least[j], j) for j in least if natural[j] > least[j])
    while wanting:
        want, j = wanting[0]
        if want > room / len(wanting):
            total = sum(w for w, _ in wanting)
            width.update({k: least[k] + room * w / total for w, k in wanting})
            break
        width[j], room = natural[j], room - want
        wanting.pop(0)
    return width


def _header_rows(head: list, positions: list[int], n_index: int) -> list[str]:
    """Header lines: the column levels (groups centred over their columns, ruled below), index names last."""
    lines = []
    if len(head) > 1 and not any(cell.get("display_value") for cell in head[-1][n_index:]):
        names, head = head[-1], [list(row) for row in head[:-1]]
        for j in range(min(n_index, len(names))):
            if not head[-1][j].get("display_value"):
                head[-1][j] = names[j]
    for row in head:
        cells, rules, j = [], [], 0
        while j < len(row):
            cell, span = row[j], _span(row[j], "colspan")
            covered = [p for p in range(j, j + span) if p in positions]
            if covered and cell.get("is_visible", True):
                text = latex_cell(cell.get("display_value", ""))[0]
                if len(covered) > 1:
                    first = positions.index(covered[0]) + 1
                    cells.append(rf"\multicolumn{{{len(covered)}}}{{c}}{{{text}}}")
                    rules.append(rf"\cmidrule(lr){{{first}-{first + len(covered) - 1}}}")
                else:
                    cells.append(text)
            elif covered:
                cells.append("")
            j += span
        lines.append(" & ".join(cells) + r" \\" + (" " + " ".join(rules) if rules else ""))
    return lines


def _body_rows(body: list, positions: list[int]) -> list[str]:
    lines = []
    for i, row in enumerate(body):
        cells = []
        for j in positions:
            cell = row[j] if j < len(row) else {}
            cells.append(latex_cell(cell.get("display_value", ""))[0] if cell.get("is_visible", True) else "")
        group_starts = i > 0 and row and row[0].get("type") == "th" and _span(row[0], "rowspan") > 1
        lines.append((r"\addlinespace[3pt]" + "\n" if group_starts else "") + " & ".join(cells) + r" \\")
    return lines


def styler_latex(styler: object, data: object = None) -> str:
    """A Styler's table as LaTeX: its formatted cells, header levels, index and caption (CSS is not carried).

    ``data`` (default: the Styler's own) decides which columns hold numbers and are set right-aligned.
    """
    head, body, caption = _grid(styler)
    positions = _columns_shown(head + body)
    n_index = sum(1 for cell in (body[0] if body else []) if cell.get("type") == "th")
    numeric = _numeric_columns(styler.data if data is None else data, n_index, positions)
    size, columns, body_lines = _layout(head, body, positions, numeric, n_index)
    spec = "@{}" + "".join(columns[j] for j in positions) + "@{}"
    header = _header_rows(head, positions, n_index)
    long = body_lines > LONG_TABLE_LINES
    lines = [LATEX_MARK, rf"\begin{{hwtable}}{{{size}}}"]
    if caption:
        lines.append(rf"\hwtablecaption{{{latex_cell(caption)[0]}}}")
    if long:
        lines += [
            rf"\begin{{longtable}}{{{spec}}}",
            r"\toprule",
            *header,
            r"\midrule",
            r"\endfirsthead",
            r"\toprule",
            *header,
            r"\midrule",
            r"\endhead",
            r"\bottomrule",
            r"\endfoot",
        ]
        lines += [*_body_rows(body, positions), r"\end{longtable}"]
    else:
        lines += [r"\begin{hwfit}", rf"\begin{{tabular}}{{{spec}}}", r"\toprule", *header, r"\midrule"]
        lines += [*_body_rows(body, positions), r"\bottomrule", r"\end{tabular}", r"\end{hwfit}"]
    lines.append(r"\end{hwtable}")
    return "\n".join(lines) + "\n"


def frame_latex(frame: object) -> str:
    """A DataFrame's table as LaTeX, each column formatted as pandas prints it."""
    from pandas.io.formats.format import format_array

    shown = frame.copy()
    for j in range(frame.shape[1]):
        column = frame.iloc[:, j]
        try:
            strings = [text.strip() for text in format_array(column._values, None)]
        except (TypeError, ValueError):
            strings = [str(value) for value in column]
        shown.isetitem(j, strings)
    return styler_latex(shown.style, data=frame)


def latex_form(table: object) -> str | None:
    """The ``text/latex`` form of a Styler or DataFrame; None for anything else, or where it cannot be made
    (IPython then prints no LaTeX, and the table's other forms as before)."""
    try:
        from pandas import DataFrame
        from pandas.io.formats.style import Styler
    except ImportError:
        return None
    try:
        if isinstance(table, Styler):
            return styler_latex(table)
        if isinstance(table, DataFrame):
            return frame_latex(table)
    except Exception:  # noqa: BLE001 (a table LaTeX cannot print keeps its other forms; the PDF check names it)
        return None
    return None


def register_latex_forms(shell: object | None = None) -> bool:
    """Give pandas Stylers and DataFrames a ``text/latex`` form in ``shell`` (the running IPython, if any).

    Registered by type name (the module pandas names each class with: ``pandas`` for DataFrame since
    pandas 3), so pandas is not imported until a table is printed; the ``text/html`` form is pandas' own.
    True when registered.
    """
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", None)
    if not formatters or "text/latex" not in formatters:
        return False
    names = (("pandas.io.formats.style", "Styler"), ("pandas", "DataFrame"), ("pandas.core.frame", "DataFrame"))
    for module, name in names:
        formatters["text/latex"].for_type_by_name(module, name, latex_form)
    return True
