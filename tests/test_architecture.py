"""The layers as docs/architecture.md draws them, checked on the source text.

Records at the bottom, then stores, engines, the chain, then impact / prov_export /
queries, with the CLI (and the web app) on top. These tests read the modules' syntax
trees, so a change that puts a concept in the wrong layer fails here by name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("gaf", "impact", "prov_export", "queries")
#: The auditor query library and its runner: Cypher written by and for auditors.
CYPHER_EXEMPT = ("queries/",)
#: Where the stores live: the only place Cypher and store types belong.
STORE = "gaf/store/"
#: The layers that speak to people and may use the top packages.
TOP = ("gaf/cli", "gaf/web", "gaf/__main__.py")  # the command line and the HTTP API

# A string that is a Cypher statement: it starts with a reading or writing clause and
# returns or writes something. Help texts that quote a query in a sentence do not match.
CYPHER = re.compile(r"^\s*(OPTIONAL\s+MATCH|MATCH|UNWIND|CALL|WITH|CREATE|MERGE)\b.*\b(RETURN|CREATE|MERGE|SET|DELETE)\b", re.S)


def modules() -> list[tuple[str, ast.Module]]:
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            out.append((rel, ast.parse(path.read_text(encoding="utf-8"), rel)))
    return out


MODULES = modules()


def strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string literal, f-strings with their constant parts joined."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            out.append((node.lineno, text))
    return out


def imported(tree: ast.AST) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names]
    return out


def test_the_cypher_detector_recognises_the_stores_statements():
    # The detector must see the statements the stores run, or the tests below prove nothing.
    from gaf.store import questions

    found = [text for _, text in strings(ast.parse(Path(questions.__file__).read_text()))]
    assert sum(bool(CYPHER.match(t)) for t in found) >= 15
    assert not CYPHER.match("gaf query --cypher 'MATCH (c:Claim) RETURN count(c)' runs one query")


@pytest.mark.parametrize("rel", [rel for rel, _ in MODULES if not rel.startswith((STORE, *CYPHER_EXEMPT))])
def test_no_module_outside_the_store_holds_cypher(rel):
    tree = dict(MODULES)[rel]
    found = [f"{rel}:{line}: {text[:70]!r}" for line, text in strings(tree) if CYPHER.match(text)]
    assert not found, "Cypher belongs in gaf/store/questions.py, behind a named method:\n" + "\n".join(found)


@pytest.mark.parametrize("rel", [rel for rel, _ in MODULES if not rel.startswith(STORE)])
def test_no_module_outside_the_store_imports_a_store_private_or_a_store_type(rel):
    bad = []
    for line, module, names in imported(dict(MODULES)[rel]):
        if module.startswith("gaf.store"):
            bad += [f"{rel}:{line}: {module}.{n}" for n in names if n.startswith("_") or n in ("Tx", "LadybugStore", "Neo4jStore")]
            if module in ("gaf.store.ladybug", "gaf.store.neo4j"):
                bad.append(f"{rel}:{line}: {module} (a backend; open stores through gaf.store)")
    assert not bad, "\n".join(bad)


#: Private members of the store classes: a module above gaf/store that uses one reaches past the interface.
def _store_privates() -> set[str]:
    from gaf.store.base import GafStore
    from gaf.store.ladybug import LadybugStore
    from gaf.store.neo4j import Neo4jStore

    names = set()
    for cls in (GafStore, LadybugStore, Neo4jStore):
        names |= {n for n in vars(cls) if n.startswith("_") and not n.startswith("__")}
    return names | {"_driver", "_conn", "_db"}


STORE_PRIVATES = _store_privates()


@pytest.mark.parametrize("rel", [rel for rel, _ in MODULES if not rel.startswith(STORE)])
def test_no_module_outside_the_store_reaches_past_its_interface(rel):
    tree = dict(MODULES)[rel]
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in STORE_PRIVATES:
            bad.append(f"{rel}:{node.lineno}: .{node.attr}")
        # Branching on the store type: `store.dialect == ...`, `isinstance(x, LadybugStore)`.
        if isinstance(node, ast.Compare) and any(
            isinstance(side, ast.Attribute) and side.attr == "dialect" for side in (node.left, *node.comparators)
        ):
            bad.append(f"{rel}:{node.lineno}: compares .dialect")
    assert not bad, "use a named question of gaf.store.questions instead:\n" + "\n".join(bad)


@pytest.mark.parametrize("rel", [rel for rel, _ in MODULES if not rel.startswith(("queries/",))])
def test_only_the_auditor_runner_runs_raw_cypher(rel):
    # store.read(cypher) is kept for the auditor query runner alone.
    tree = dict(MODULES)[rel]
    bad = [
        f"{rel}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "read"
        and isinstance(node.func.value, ast.Name) and node.func.value.id in ("store", "s", "self")
        and not rel.startswith(STORE)
    ]  # fmt: skip
    assert not bad, "store.read is for auditor queries; ask a named question:\n" + "\n".join(bad)


@pytest.mark.parametrize("rel", [rel for rel, _ in MODULES if not rel.startswith(TOP)])
def test_only_the_top_layer_imports_impact_prov_export_and_queries(rel):
    own = rel.split("/")[0]
    bad = [
        f"{rel}:{line}: {module}"
        for line, module, _ in imported(dict(MODULES)[rel])
        if module.split(".")[0] in ("impact", "prov_export", "queries") and module.split(".")[0] != own
    ]
    assert not bad, "impact, prov_export and queries are used by the CLI and the web app only:\n" + "\n".join(bad)


@pytest.mark.parametrize("rel", [rel for rel, _ in MODULES if rel.startswith("gaf/") and not rel.startswith(("gaf/cli", "gaf/__main__.py"))])
def test_the_library_and_the_web_layer_do_not_import_the_cli(rel):
    bad = [f"{rel}:{line}: {m}" for line, m, _ in imported(dict(MODULES)[rel]) if m == "gaf.cli" or m.startswith("gaf.cli.")]
    assert not bad, "\n".join(bad)


#: The longest a command-line module may grow (issue 17): past it, a command group is two.
CLI_MODULE_LINES = 400


@pytest.mark.parametrize("rel", [rel for rel, _ in MODULES if rel.startswith("gaf/cli/")])
def test_no_command_line_module_is_longer_than_400_lines(rel):
    lines = (ROOT / rel).read_text(encoding="utf-8").count("\n")
    assert lines <= CLI_MODULE_LINES, f"{rel} is {lines} lines: split it by command group or concern (gaf/cli/output.py holds how commands print)"


# ---------------------------------------------------------------------- the layers, as docs/architecture.md tables them

ROW = re.compile(r"^\| (\d)( [a-z]+)? \| `([^`]+\.py)` \|")


def layers() -> dict[str, tuple[int, str]]:
    """module path → (layer, group) from the module table of docs/architecture.md."""
    out = {}
    for line in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines():
        if m := ROW.match(line):
            rank, label, path = int(m.group(1)), (m.group(2) or "").strip(), m.group(3)
            out[path] = (rank, label or path.split("/")[0])  # layer 4's groups are its packages
    return out


LAYERS = layers()


def test_the_architecture_page_tables_every_module_and_nothing_else():
    assert sorted(LAYERS) == sorted(rel for rel, _ in MODULES)


def _module_path(module: str) -> str | None:
    """The source path of an internal module name (a package resolves to its __init__)."""
    base = ROOT / module.replace(".", "/")
    if base.with_suffix(".py").exists():
        return base.with_suffix(".py").relative_to(ROOT).as_posix()
    if (base / "__init__.py").exists():
        return (base / "__init__.py").relative_to(ROOT).as_posix()
    return None


@pytest.mark.parametrize("rel", sorted(LAYERS))
def test_imports_point_down_the_layers_and_never_sideways(rel):
    rank, group = LAYERS[rel]
    bad = []
    for line, module, names in imported(dict(MODULES)[rel]):
        if module.split(".")[0] not in PACKAGES:
            continue
        # `from gaf import closure` imports the module gaf/closure.py, not gaf/__init__.py
        targets = [_module_path(f"{module}.{n}") for n in names] if names else []
        targets = [t for t in targets if t] or [_module_path(module)]
        for target in targets:
            if target is None or target == rel or target not in LAYERS:
                continue
            t_rank, t_group = LAYERS[target]
            package_init = target.endswith("__init__.py") and rel.startswith(target.rsplit("/", 1)[0] + "/")
            if t_rank > rank and not package_init:
                bad.append(f"{rel}:{line}: imports {target} (layer {t_rank}) from layer {rank}")
            elif t_rank == rank and t_group != group and not package_init:
                bad.append(f"{rel}:{line}: imports {target} ({t_group}) sideways from {group}")
    assert not bad, "see docs/architecture.md:\n" + "\n".join(bad)


def test_the_packages_type_check_under_mypy_strict(tmp_path):
    # pyproject.toml's [tool.mypy] names the packages and strict mode; a failure prints mypy's own lines.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_public_api_is_listed_importable_and_shadows_no_module():
    import importlib
    import pkgutil

    import gaf

    assert all(hasattr(gaf, name) for name in gaf.__all__)
    modules = {m.name for m in pkgutil.iter_modules(gaf.__path__)} - {"__main__"}
    shadowed = sorted(m for m in modules if not isinstance(getattr(gaf, m, importlib.import_module(f"gaf.{m}")), type(gaf)))
    assert not shadowed, f"gaf.__init__ re-exports a name that hides the module gaf.{shadowed[0]}"
    errors = [n for n in gaf.__all__ if isinstance(getattr(gaf, n), type) and issubclass(getattr(gaf, n), Exception)]
    assert all(getattr(gaf, n).__module__ == "gaf.errors" for n in errors), "every typed error lives in gaf/errors.py"


def test_only_the_settings_module_reads_the_environment():
    # Explicit configuration: Settings.from_env() is the one reader; the CLI calls it, the library is passed values.
    bad = []
    for rel, tree in MODULES:
        if rel == "gaf/settings.py":
            continue
        for node in ast.walk(tree):
            attribute = isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv", "getenvb")
            name = isinstance(node, ast.Name) and node.id in ("environ", "getenv")
            named = isinstance(node, ast.ImportFrom) and node.module == "os" and {a.name for a in node.names} & {"environ", "getenv"}
            if attribute or name or named:
                bad.append(f"{rel}:{node.lineno}")
    assert not bad, "read the environment in gaf/settings.py (Settings.from_env) and pass the values in:\n" + "\n".join(bad)


def test_a_gaf_command_starts_without_the_packages_only_some_commands_need():
    """``import gaf.cli`` (what every command pays before it runs) loads neither numpy, nor
    openlineage-python, nor grandalf: ingest's lookup of a large file, OpenLineage events and
    the impact picture import them where they are used. Together they were 24 MB of every
    command's memory and about a third of a second of its start (71 MB -> 47 MB measured)."""
    import subprocess
    import sys

    probe = "import sys, gaf.cli; print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'openlineage', 'grandalf'}))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
