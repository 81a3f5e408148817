"""The store is found as git finds a repository, made on purpose, and never mistyped into a path.

Without --store or $GAF_STORE, gaf uses the ``.gaf/store.lbug`` of the working directory or
its nearest parent, looking no higher than the home directory; with none, it refuses to
read or write and says `gaf init`. A write names the store it writes to. A store name that
looks like a mistyped URI is refused with the URI it probably meant.
"""

from __future__ import annotations

import ast
import json
import os
import string
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gaf.errors import StoreNotFound, StoreUnavailable
from gaf.settings import Settings, store_name
from gaf.store import find_store, init_store, shown, store_target
from tests.conftest import NOW, RENT, ROOT

STORE = Path(".gaf") / "store.lbug"


# ---------------------------------------------------------------------- found upward


@st.composite
def trees(draw: st.DrawFn) -> tuple[int, set[int], set[int], int | str | None, bool]:
    """A chain of directories (level 0 the top, level ``depth`` the working directory), the
    levels holding a store, the levels holding a ``.gaf/`` with something else in it, and
    where home is: a level, a directory beside the chain ("aside"), or None (no home)."""
    depth = draw(st.integers(0, 6))
    stores = draw(st.sets(st.integers(0, depth), max_size=depth + 1))
    decoys = draw(st.sets(st.integers(0, depth), max_size=depth + 1))
    home = draw(st.none() | st.just("aside") | st.integers(0, depth))
    return depth, stores, decoys, home, draw(st.booleans())


def _expected(top: Path, levels: list[Path], stores: set[int], home: int | str | None) -> Path | None:
    """The oracle: the deepest level with a store among those at or below home (all of them when
    home is not above the working directory); else, home not in the chain, the nearest
    directory above the top that has one (the machine's own, if any)."""
    inside = [i for i in stores if not isinstance(home, int) or i >= home]
    if inside:
        return levels[max(inside)] / STORE
    if isinstance(home, int):
        return None
    above = [p for p in top.parents if (p / STORE).exists()]
    return above[0] / STORE if above else None


@given(trees())
@example((3, {0, 2}, {3}, 1, False))  # the nearest store wins over one higher up
@example((3, {0}, set(), 1, True))  # a store above home is not found, home given through a symlink
@example((2, {0}, {1, 2}, None, False))  # a .gaf/ without store.lbug is passed by
def test_the_store_found_is_the_nearest_one_at_or_below_home(tree) -> None:
    depth, stores, decoys, home, through_link = tree
    with tempfile.TemporaryDirectory() as scratch:
        top = Path(scratch).resolve() / "top"
        levels = [top]
        for level in range(depth):
            levels.append(levels[-1] / f"d{level}")
        levels[-1].mkdir(parents=True)
        (Path(scratch) / "aside").mkdir()
        for level in decoys:
            (levels[level] / ".gaf").mkdir(exist_ok=True)
            (levels[level] / ".gaf" / "rent.lbug").touch()
        for level in stores:
            (levels[level] / ".gaf").mkdir(exist_ok=True)
            (levels[level] / STORE).touch()
        home_dir = None if home is None else Path(scratch) / "aside" if home == "aside" else levels[home]
        if home_dir is not None and through_link:
            (Path(scratch) / "home-link").symlink_to(home_dir)
            home_dir = Path(scratch) / "home-link"
        expected = _expected(top, levels, stores, home)
        assert find_store(levels[-1], home_dir) == expected
        unnamed = Settings(store=None, home=None if home_dir is None else str(home_dir))
        if expected is None:
            with pytest.raises(StoreNotFound, match="no gaf store here or in any parent directory"):
                store_target(settings=unnamed, cwd=levels[-1])
        else:
            assert store_target(settings=unnamed, cwd=levels[-1]) == str(expected)


def test_a_named_store_is_used_as_named_and_never_searched_for(tmp_path: Path) -> None:
    (tmp_path / ".gaf").mkdir()
    (tmp_path / STORE).touch()
    assert store_target("elsewhere.lbug", Settings(store=None), cwd=tmp_path) == "elsewhere.lbug"
    assert store_target(settings=Settings(store="bolt://db:7687"), cwd=tmp_path) == "bolt://db:7687"
    assert store_target(settings=Settings(store=None), cwd=tmp_path) == str((tmp_path / STORE).resolve())


# ---------------------------------------------------------------------- mistyped URIs

#: (mistyped, the URI the refusal proposes, or None when it proposes none)
TYPOS = [
    ("neo4j//localhost:7687", "neo4j://localhost:7687"),
    ("neo4j:/localhost:7687", "neo4j://localhost:7687"),
    ("neo4j:localhost:7687", "neo4j://localhost:7687"),
    ("neo4j:localhost", "neo4j://localhost"),
    ("bolt:/x", "bolt://x"),
    ("bolt//db.internal:7687", "bolt://db.internal:7687"),
    ("neo4j+s//abc.databases.neo4j.io", "neo4j+s://abc.databases.neo4j.io"),
    ("NEO4J://localhost:7687", "neo4j://localhost:7687"),
    ("http://localhost:7474", "neo4j://localhost:7687"),
    ("https://browser.example.org/", "neo4j://browser.example.org:7687"),
    ("localhost:7687", "neo4j://localhost:7687"),
    ("neo4j:", "neo4j://localhost:7687"),
    ("ftp://files/store.lbug", None),
    ("file:///tmp/store.lbug", None),
    ("foo:bar", None),
    ("./store://x", None),
]


@pytest.mark.parametrize(("typo", "meant"), TYPOS)
def test_a_store_name_that_looks_like_a_mistyped_uri_is_refused_with_the_fix(typo: str, meant: str | None) -> None:
    with pytest.raises(StoreUnavailable) as refused:
        store_name(typo, "GAF_STORE")
    assert refused.value.where == "GAF_STORE" and repr(typo) in refused.value.what
    assert refused.value.hint is not None
    if meant is not None:
        assert f"did you mean {meant}?" in refused.value.hint
    else:
        assert "neo4j://" in refused.value.hint and "did you mean" not in refused.value.hint
    if "://" not in typo:  # a path that really starts so has a way in
        assert f"./{typo}" in refused.value.hint
        assert store_name(f"./{typo}", "GAF_STORE") == f"./{typo}"


SEGMENT = st.text(string.ascii_letters + string.digits + "._-:+ é", min_size=1, max_size=12).filter(lambda s: s not in (".", ".."))
PLAIN = st.text(string.ascii_letters + string.digits + "._-+ é", min_size=1, max_size=12)
PATHS = st.one_of(
    st.lists(SEGMENT, min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts)),
    st.tuples(PLAIN, st.lists(SEGMENT, max_size=4)).map(lambda t: "/".join([t[0], *t[1]])),
    st.lists(SEGMENT, min_size=1, max_size=4).map(lambda parts: "./" + "/".join(parts)),
    st.lists(SEGMENT, min_size=1, max_size=4).map(lambda parts: "../" + "/".join(parts)),
)


@given(PATHS)
@example("/tmp/gaf-cli/store.lbug")
@example("../../.gaf/rent.lbug")
@example(".gaf/store.lbug")
@example("C:/gaf/store.lbug")  # a drive letter is one letter, not a scheme
@example("data/neo4j:7687")
def test_a_plain_path_stays_a_path(path: str) -> None:
    assert store_name(path, "--store") == path


@pytest.mark.parametrize("uri", ["neo4j://localhost:7687", "neo4j+s://abc.databases.neo4j.io", "bolt://127.0.0.1:7727", "bolt+ssc://h:1"])
def test_a_supported_uri_stays_a_uri(uri: str) -> None:
    assert store_name(uri, "GAF_STORE") == uri


def test_settings_from_the_environment_refuse_a_mistyped_gaf_store_and_find_one_without_it() -> None:
    with pytest.raises(StoreUnavailable, match="neo4j//localhost:7687"):
        Settings.from_env({"GAF_STORE": "neo4j//localhost:7687"})
    assert Settings.from_env({"HOME": "/home/ada"}) == Settings(store=None, home="/home/ada")
    assert Settings().store == ".gaf/store.lbug"  # a library caller's default names the store, as before


# ---------------------------------------------------------------------- init


def test_init_creates_an_embedded_store_here_and_again_says_it_was_there(tmp_path: Path) -> None:
    made = init_store(settings=Settings(store=None), cwd=tmp_path)
    assert (made.location, made.dialect, made.created) == (str(tmp_path / STORE), "ladybug", True)
    again = init_store(settings=Settings(store=None), cwd=tmp_path)
    assert (again.location, again.created) == (made.location, False)


def test_init_of_a_store_that_holds_records_writes_nothing_and_says_so(store) -> None:
    from gaf.ledger import ingest

    ingest(store, RENT / "claims.yaml", recorded_at=NOW)
    before = store.counts()
    target = store.location
    if store.dialect == "ladybug":
        store.close()  # one process holds the embedded store at a time
    done = init_store(target, settings=Settings.from_env({k: v for k, v in os.environ.items() if k != "GAF_STORE"}))
    assert (done.created, done.dialect) == (False, store.dialect)
    assert done.location == (os.path.abspath(target) if store.dialect == "ladybug" else target)
    from gaf.store import open_store

    with open_store(target, read_only=True, settings=Settings.from_env({k: v for k, v in os.environ.items() if k != "GAF_STORE"})) as again:
        assert again.counts() == before


def test_a_password_written_into_a_neo4j_uri_is_never_told() -> None:
    """Nothing listens on port 9 of this machine: the refusal names the URI, with the password masked."""
    from gaf.store import open_store
    from gaf.store.neo4j import without_password

    assert without_password("neo4j://ada:s3cret@db.example.org:7687") == "neo4j://ada:***@db.example.org:7687"
    assert without_password("bolt://db.example.org") == "bolt://db.example.org"
    with pytest.raises(StoreUnavailable) as refused:
        open_store("bolt://ada:s3cret-pw@127.0.0.1:9", settings=Settings())
    told = json.dumps(refused.value.to_dict())
    assert "s3cret-pw" not in told and "bolt://ada:***@127.0.0.1:9" in told
    env = {k: v for k, v in os.environ.items() if k != "GAF_STORE"}
    result = subprocess.run([sys.executable, "-m", "gaf", "stats", "--json", "--store", "bolt://ada:s3cret-pw@127.0.0.1:9"],
                            capture_output=True, text=True, env=env, cwd=ROOT)  # fmt: skip
    assert result.returncode == 3 and "s3cret-pw" not in result.stdout + result.stderr and "***" in result.stdout + result.stderr


def test_a_store_gaf_creates_is_its_owners_alone_whatever_the_umask(tmp_path) -> None:
    from gaf.store.ladybug import LadybugStore

    old = os.umask(0o022)
    try:
        with LadybugStore(tmp_path / "made" / "store.lbug"):
            pass
    finally:
        os.umask(old)
    assert (tmp_path / "made").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "made" / "store.lbug").stat().st_mode & 0o777 == 0o600


# ---------------------------------------------------------------------- the command line


def _gaf(*args: str, cwd: Path, home: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """``python -m gaf`` as a user runs it: in ``cwd``, with ``home`` as HOME and no store named."""
    env = {k: v for k, v in os.environ.items() if k not in ("GAF_STORE", "NEO4J_URI")}
    env |= {"HOME": str(home), "PYTHONPATH": str(ROOT), "COLUMNS": "200", **extra}
    return subprocess.run([sys.executable, "-m", "gaf", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home directory with a project in it, and a store above it that must never be found."""
    (tmp_path / ".gaf").mkdir()
    (tmp_path / STORE).touch()
    (tmp_path / "home" / "project" / "sub").mkdir(parents=True)
    return tmp_path / "home"


def test_with_no_store_found_a_write_and_a_read_refuse_and_say_gaf_init(home: Path) -> None:
    before = _files(home)
    cwd = home / "project" / "sub"
    for args in (["ingest", str(RENT / "claims.yaml")], ["policy", "add", str(RENT / "policy.yaml")], ["stats"], ["list", "claim"]):
        refused = _gaf(*args, cwd=cwd, home=home)
        assert refused.returncode == StoreNotFound.exit_code == 3, refused.stderr
        assert "no gaf store here or in any parent directory" in refused.stderr and "run `gaf init`" in refused.stderr
        assert "Traceback" not in refused.stderr and refused.stdout == ""
        as_json = json.loads(_gaf(*args, "--json", cwd=cwd, home=home).stdout)
        assert as_json["error"] == "StoreNotFound" and "gaf init" in as_json["hint"]
    assert _files(home) == before  # nothing made, anywhere


def test_init_makes_the_store_here_and_a_subdirectory_finds_it(home: Path) -> None:
    project = home / "project"
    made = _gaf("init", cwd=project, home=home)
    assert made.returncode == 0 and made.stdout.strip() == f"initialised ladybug store at {project / STORE}"
    again = _gaf("init", "--json", cwd=project, home=home)
    assert json.loads(again.stdout) == {"store": str(project / STORE), "dialect": "ladybug", "initialised": True, "created": False}
    assert _gaf("init", cwd=project, home=home).stdout.strip() == f"already a ladybug store at {project / STORE}: nothing to do"
    wrote = _gaf("ingest", str(RENT / "claims.yaml"), cwd=project / "sub", home=home)
    assert wrote.returncode == 0 and f"→ {project / STORE}" in wrote.stdout
    stats = json.loads(_gaf("stats", "--json", cwd=project / "sub", home=home).stdout)
    assert stats["counts"]["claim"] == 4
    assert not (project / "sub" / ".gaf").exists()  # no second store


def test_a_write_names_its_store_on_stderr_and_json_stays_clean(home: Path) -> None:
    project = home / "project"
    _gaf("init", cwd=project, home=home)
    absolute = f"store: {project / STORE}"
    for args in (["ingest", str(RENT / "claims.yaml")], ["policy", "add", str(RENT / "policy.yaml")], ["rules", "add", str(RENT / "verdict-rules.yaml")]):
        human = _gaf(*args, cwd=project / "sub", home=home)
        assert human.returncode == 0 and human.stderr.splitlines()[0] == absolute, human.stderr
        machine = _gaf(*args, "--json", cwd=project / "sub", home=home)
        assert machine.returncode == 0 and "store:" not in machine.stderr
        json.loads(machine.stdout)
    relative = _gaf("ingest", str(RENT / "claims.yaml"), cwd=project / "sub", home=home, GAF_STORE="../.gaf/store.lbug")
    assert relative.stderr.splitlines()[0] == absolute  # the path as given, made absolute
    read = _gaf("stats", cwd=project / "sub", home=home)
    assert read.returncode == 0 and "store:" not in read.stderr


@pytest.mark.parametrize(("typo", "meant"), [("neo4j//localhost:7687", "neo4j://localhost:7687"), ("bolt:/x", "bolt://x")])
def test_the_cli_refuses_a_mistyped_store_and_writes_nothing(home: Path, typo: str, meant: str) -> None:
    cwd = home / "project"
    before = _files(home)
    for where, run in (("GAF_STORE", _gaf("ingest", str(RENT / "claims.yaml"), cwd=cwd, home=home, GAF_STORE=typo)),
                       ("--store", _gaf("ingest", str(RENT / "claims.yaml"), "--store", typo, cwd=cwd, home=home))):  # fmt: skip
        assert run.returncode == 3 and "Traceback" not in run.stderr, run.stderr
        assert f"{where}: {typo!r}" in run.stderr and f"did you mean {meant}?" in run.stderr
    assert _files(home) == before


def test_every_command_opens_its_store_through_the_one_helper_that_names_it() -> None:
    """The store line is printed in one place (gaf.cli.common.open_store); a command that
    opened a store another way would write without naming it."""
    openers = {"open_store", "open", "LadybugStore", "Neo4jStore", "open_named_store"}
    for module in sorted((ROOT / "gaf" / "cli").glob("*.py")):
        if module.name == "common.py":
            continue
        tree = ast.parse(module.read_text(encoding="utf-8"))
        imported = {(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        others = {(m, name) for m, name in imported if name in openers and m != "gaf.cli.common"}
        assert not others, f"{module.name} opens a store without gaf.cli.common.open_store: {others}"
