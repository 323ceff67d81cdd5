"""hwlib's shape: layers whose imports point down only, small modules, a light ``import hwlib``, one
public API (``__all__``), one naming table, and one home for every number.

See ../shared/DESIGN.md and CONTRIBUTING.md. Every check reads hwlib's source with ``ast`` or runs
``import hwlib`` in a fresh interpreter; none imports anything a chapter would not.
"""

import ast
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hwlib as hw
from hwlib.data import doc000, doc002
from hwlib.naming import SYMBOLS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hwlib"
MAX_LINES = 400

BOTTOM = {"hwlib._checks", "hwlib.units", "hwlib.naming", "hwlib.bands", "hwlib.lazy_names", "hwlib.precision"}
TOPICS = (
    "serving",  # the two packages' __init__ modules import nothing
    "training",
    "roofline",
    "memory",
    "training.zero",
    "energy",
    "layer_model",
    "collectives",
    "placement",
    "efficiency",
    "pricing",
    "serving.pricing",
    "serving.speculative",
    "serving.step",
    "serving.plan",
    "serving.throughput",
    "serving.served",
    "serving.priced",
    "serving.engine",
    "serving.simulate",
    "serving.max_rate",
    "serving.load_check",
    "serving.closed_loop",
    "training.regimes",
    "training.forecast",
    "training.schedules",
    "training.mesh",
    "training.batch",
    "training.fp8",
    "training.experts",
    "training.finetune",
    "training.savers",
    "training.collectives",
    "training.step",
    "training.plan",
    "training.closed_forms",
    "training.squeeze",
    "training.run",
    "calibration_fit",
    "costs",
    "cost_check",
)
LAYERS = ("bottom", "data", "topic", "measure", "viz", "top")
HEAVY = ("matplotlib", "pandas", "ipywidgets", "jax")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def layer(name: str) -> tuple[int, int]:
    """(layer index, rank inside the topic layer) of an hwlib module."""
    if name in BOTTOM:
        return LAYERS.index("bottom"), 0
    if name == "hwlib.data" or name.startswith("hwlib.data."):
        return LAYERS.index("data"), 0
    if name.removeprefix("hwlib.") in TOPICS:
        return LAYERS.index("topic"), TOPICS.index(name.removeprefix("hwlib."))
    if name == "hwlib.measure" or name.startswith("hwlib.measure."):
        return LAYERS.index("measure"), 0
    if name == "hwlib.viz" or name.startswith("hwlib.viz."):
        return LAYERS.index("viz"), 0
    if name in ("hwlib", "hwlib.cli", "hwlib.__main__") or name.startswith("hwlib.cli."):  # on the public API
        return LAYERS.index("top"), 0
    raise AssertionError(f"module {name} belongs to no layer: add it to tests/test_layers.py and DESIGN.md")


def imports(name: str) -> list[tuple[int, str, tuple[str, ...]]]:
    """Every hwlib import of module ``name`` (top level and inside functions): (line, target module, names)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    package = name if is_package(name) else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, ()) for alias in node.names if alias.name.split(".")[0] == "hwlib"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            if base.split(".")[0] != "hwlib":
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in MODULES:  # `from hwlib.data import doc002` imports a module
                    found.append((node.lineno, submodule, ()))
                else:
                    found.append((node.lineno, base, (alias.name,)))
    return found


def test_every_module_is_in_a_layer():
    assert "hwlib" in MODULES and "hwlib.data.doc002" in MODULES and "hwlib.viz.tables" in MODULES
    for name in MODULES:
        layer(name)
    assert {f"hwlib.{topic}" for topic in TOPICS} <= set(MODULES)


def test_imports_point_down_only():
    wrong = []
    for source in MODULES:
        if source == "hwlib":
            continue  # the top may import anything
        here, rank = layer(source)
        for line, target, _ in imports(source):
            if target not in MODULES:
                wrong.append(f"{source}:{line} imports {target}, which is not an hwlib module")
                continue
            there, target_rank = layer(target)
            if there > here:
                wrong.append(f"{source}:{line} ({LAYERS[here]}) imports {target} ({LAYERS[there]}), a layer above")
            elif there == here == LAYERS.index("topic") and target_rank > rank:
                wrong.append(f"{source}:{line} imports {target}, a later topic module (order: {', '.join(TOPICS)})")
    assert not wrong, "\n".join(wrong)


def test_no_module_imports_a_private_name_of_another():
    wrong = []
    for source in MODULES:
        for line, target, names in imports(source):
            private_module = any(part.startswith("_") for part in target.split(".")[1:])
            if target != "hwlib._checks" and private_module:
                wrong.append(f"{source}:{line} imports the private module {target}")
            for imported in names:
                if imported.startswith("_") and target != "hwlib._checks" and target != source:
                    wrong.append(f"{source}:{line} imports the private name {imported} from {target}")
    assert not wrong, "\n".join(wrong)


def test_the_layer_checks_catch_a_wrong_arrow(tmp_path, monkeypatch):
    """The checks above would fail on an upward import, a private name and an import inside a function."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f():\n    from hwlib.viz.tables import chip_table\n"
        "from hwlib.measure.kernels import _x\nfrom . import doc000\n"
    )
    monkeypatch.setitem(MODULES, "hwlib.data.bad", bad)
    found = imports("hwlib.data.bad")
    assert (2, "hwlib.viz.tables", ("chip_table",)) in found
    assert (3, "hwlib.measure.kernels", ("_x",)) in found
    assert (4, "hwlib.data.doc000", ()) in found
    with pytest.raises(AssertionError, match="a layer above"):
        test_imports_point_down_only()
    with pytest.raises(AssertionError, match="private name _x"):
        test_no_module_imports_a_private_name_of_another()


def test_topic_modules_import_down_the_topic_order():
    assert layer("hwlib.roofline") < layer("hwlib.layer_model") < layer("hwlib.training.squeeze")
    assert layer("hwlib.data.doc002") < layer("hwlib.roofline") < layer("hwlib.measure.xla") < layer("hwlib.viz.tables")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_over_400_lines(name):
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(ROOT)} has {lines} lines (at most {MAX_LINES})"


def _fresh(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_hwlib_is_light_and_viz_names_load_on_first_use():
    out = _fresh(
        "import sys, hwlib\n"
        f"heavy = {HEAVY!r}\n"
        "print(','.join(m for m in heavy if m in sys.modules) or '-')\n"
        "table = hwlib.viz.chip_table\n"
        "print('pandas' in sys.modules, callable(table), table is hwlib.viz.chip_table)\n"
        "print(','.join(m for m in ('jax',) if m in sys.modules) or '-')\n"
    )
    before, after, jax_after = out.splitlines()
    assert before == "-", f"import hwlib loaded {before}"
    assert after == "True True True"
    assert jax_after == "-", "a table loaded jax before anything was measured"


def test_all_has_no_duplicates_and_the_names_outside_checks_call():
    assert len(hw.__all__) == len(set(hw.__all__))
    needed = {
        "chip",
        "chips",
        "ridge_point",
        "attainable_flops_per_s",
        "matmul_flops",
        "matmul_bytes",
        "matmul_intensity",
        "training_state_bytes",
        "activation_bytes",
        "kv_cache_bytes",
        "chips_needed",
        "machine_balance",
        "layer_step",
        "t_min",
        "d_min",
        "model",
    }
    assert needed <= set(hw.__all__), needed - set(hw.__all__)
    assert set(dir(hw)) == set(hw.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'TRAINING_RECIPES'"):
        hw.TRAINING_RECIPES  # noqa: B018 (0.1 names are gone, not aliased)


def test_stable_signatures_outside_checks_call():
    parameters = inspect.signature(hw.chip).parameters
    assert list(parameters)[:2] == ["name", "source"]
    assert hw.chip("A100-80GB", source="doc002").source == "doc002"
    for function, first in (
        (hw.layer_step, ["d", "T", "chip"]),
        (hw.t_min, ["d", "chip"]),
        (hw.kv_cache_bytes, ["seq_len", "n_layers", "n_kv_heads", "head_dim", "dtype", "batch"]),
        (hw.activation_bytes, ["seq_len", "batch", "d", "n_heads"]),
        (hw.ridge_point, ["chip"]),
        (hw.model, ["name"]),
    ):
        assert list(inspect.signature(function).parameters)[: len(first)] == first, function.__name__
    step = hw.layer_step(4096, 2048, hw.chip("TPU v6e"))
    assert step.time_s > 0 and step.flops == 72 * 4096**2 * 2048
    assert hw.t_min(4096, hw.chip("H100-SXM")) > 0
    assert hw.kv_cache_bytes(1, 32, 8, 128, "bf16", 2) == 2 * 2 * 32 * 8 * 128 * 2


# --- one naming table ------------------------------------------------------------------------


def contributing_rows() -> list[tuple[str, str, str, str]]:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## One quantity, one name, one symbol", 1)[1]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    assert [c.strip() for c in lines[0].strip("|").split("|")] == [
        "quantity",
        "name in hwlib",
        "symbol in the book",
        "unit",
    ]
    assert set(lines[1].replace("|", "").strip()) == {"-"}
    rows = []
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == 4, line
        quantity, name, symbol, unit = cells
        assert name.startswith("`") and name.endswith("`"), line
        assert symbol.startswith("$") and symbol.endswith("$"), line
        rows.append((quantity, name.strip("`"), symbol.strip("$"), unit))
    return rows


def test_contributing_symbol_table_is_hwlib_naming():
    assert contributing_rows() == list(SYMBOLS)


def test_each_symbol_means_one_thing():
    symbols = [symbol for _, _, symbol, _ in SYMBOLS]
    assert len(symbols) == len(set(symbols))
    # a row may give several symbols ("S, E") or a definition ("I = F/Q"): each symbol once in the book
    single = [part.split(" = ")[0].strip() for symbol in symbols for part in symbol.split(", ")]
    assert len(single) == len(set(single)), sorted({s for s in single if single.count(s) > 1})
    quantities = [quantity for quantity, _, _, _ in SYMBOLS]
    assert len(quantities) == len(set(quantities))


def test_glossary_renders_the_same_list():
    table = hw.viz.symbol_table()
    assert list(table.index) == [row[0] for row in SYMBOLS]
    assert list(table["symbol"]) == [row[2] for row in SYMBOLS]


# --- one home for every number ------------------------------------------------------------------

DOCUMENT_FILES = ("000_dfa9af1fd73ea27d", "002_501c62d3c87c2a8c")
DOCUMENT_NUMBERS = {4096, 50000, 2048, 1e6, 12.0, 200.0}
"""Numbers of the source documents (D_MODEL, VOCAB, SEQ_LEN, CRITICAL_BATCH, B_W, A) that only data/ may spell."""


def test_the_document_file_names_are_spelled_only_in_data():
    assert doc000.FILE.startswith(DOCUMENT_FILES[0]) and doc002.FILE.startswith(DOCUMENT_FILES[1])
    wrong = [
        f"{path.relative_to(ROOT)} spells {stem}"
        for path in PACKAGE.rglob("*.py")
        if "data" not in path.relative_to(PACKAGE).parts[:1]
        for stem in DOCUMENT_FILES
        if stem in path.read_text(encoding="utf-8")
    ]
    assert not wrong, "\n".join(wrong)


def _literal_numbers(node: ast.expr) -> list[float]:
    """Numeric literals a default spells: a number, a signed number, or the items of a tuple or list of them."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _literal_numbers(node.operand)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [value for item in node.elts for value in _literal_numbers(item)]
    return []


def _where(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def literal_defaults(path: Path) -> list[str]:
    """Every parameter default in ``path`` that retypes a document number instead of naming its constant."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for arg, default in _defaults(node):
            for value in _literal_numbers(default):
                if value in DOCUMENT_NUMBERS:
                    found.append(f"{_where(path)}:{node.lineno} {node.name}({arg}={value!r})")
    return found


def _defaults(node: ast.FunctionDef) -> list[tuple[str, ast.expr]]:
    positional = node.args.posonlyargs + node.args.args
    pairs = list(zip(positional[len(positional) - len(node.args.defaults) :], node.args.defaults))
    pairs += [(arg, default) for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults) if default]
    return [(arg.arg, default) for arg, default in pairs]


KNOWN_RETYPED: dict[str, str] = {}
OUTSIDE_DATA = [
    pytest.param(
        path,
        id=str(path.relative_to(PACKAGE)),
        marks=[pytest.mark.xfail(strict=True, reason=KNOWN_RETYPED[str(path.relative_to(PACKAGE))])]
        if str(path.relative_to(PACKAGE)) in KNOWN_RETYPED
        else [],
    )
    for name, path in sorted(MODULES.items())
    if LAYERS[layer(name)[0]] != "data"
]


@pytest.mark.parametrize("path", OUTSIDE_DATA)
def test_defaults_name_their_data_instead_of_retyping_it(path):
    found = literal_defaults(path)
    assert not found, "defaults retype a document's number; name its constant (e.g. b_w=doc002.B_W):\n" + "\n".join(
        found
    )


def test_the_literal_default_check_catches_a_retyped_number(tmp_path):
    bad = tmp_path / "topic.py"
    bad.write_text("def f(d=4096, *, a=-200.0, ds=(768, 2048), b_w=B_W, n=1, crit=1e6):\n    pass\n")
    assert [entry.split(" ", 1)[1] for entry in literal_defaults(bad)] == [
        "f(d=4096)",
        "f(a=200.0)",
        "f(ds=2048)",
        "f(crit=1000000.0)",
    ]


def test_public_defaults_that_equal_a_document_number_name_its_constant():
    """Through ``inspect``: a default of a public function equal to a document number is spelled as its constant."""
    constants = {
        name: value
        for module in (doc000, doc002)
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, (int, float)) and not isinstance(value, bool)
    }
    constants["CRITICAL_BATCH"] = doc002.CRITICAL_BATCH.value
    checked, wrong = 0, []
    for name in hw.__all__:
        function = getattr(hw, name)
        if not inspect.isfunction(function) or not function.__module__.startswith("hwlib"):
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
        spelled = dict(_defaults(next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))))
        for parameter in inspect.signature(function).parameters.values():
            default = parameter.default
            if isinstance(default, bool) or not isinstance(default, (int, float)) or default not in DOCUMENT_NUMBERS:
                continue
            checked += 1
            expression = spelled[parameter.name]
            constant = expression.attr if isinstance(expression, ast.Attribute) else getattr(expression, "id", None)
            if constants.get(constant) != default:
                wrong.append(
                    f"{name}({parameter.name}={ast.unparse(expression)}) does not name a doc000/doc002 "
                    f"constant of value {default!r}"
                )
    assert checked >= 5  # layer_step's b_w and a, t_min's, regime_steps' d, seq_len and vocab, ...
    assert not wrong, "\n".join(wrong)


def test_docstrings_name_chapters_by_cross_references_that_exist():
    """A docstring names its chapter as :ref:`ch-...` (the strict build resolves the rendered ones); every label it
    names exists in the book, and no chapter title is typed in quotes instead."""
    labels = set()
    for path in (ROOT / "book").rglob("*.md"):
        labels |= set(re.findall(r"^\((ch-[a-z0-9-]+|app-[a-z0-9-]+)\)=", path.read_text(encoding="utf-8"), re.M))
    titles = {
        line[2:].strip()
        for path in (ROOT / "book").glob("*.md")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("# ")
    }
    missing, typed = [], []
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        missing += [f"{name}: {label}" for label in re.findall(r":ref:`([a-z0-9-]+)`", text) if label not in labels]
        typed += [f"{name}: {title!r}" for title in titles if re.search(r'hapters? "' + re.escape(title), text)]
    assert not missing, missing
    assert not typed, typed


def test_the_top_level_stays_small_and_the_design_lives_in_the_repository():
    assert len(hw.__all__) <= 130, len(hw.__all__)
    assert {"viz", "measure"} <= set(hw.__all__) and "plot_roofline" not in hw.__all__
    design = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    assert "transformer_table" in design and "group_topology" in design
    assert "../shared" not in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
