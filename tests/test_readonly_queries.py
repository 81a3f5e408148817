"""The auditor's read-only path holds against someone trying, one layer at a time.

Three layers stand between an auditor's query and a write (queries/runner.py): gaf's
own parse of the reading subset of Cypher, the server's plan on Neo4j, and the store's
read-only mode (a READ transaction; on the embedded store a database opened read-only).
Each test here switches the others off and throws an attack corpus of our own at the
one left. The oracle is never the parser: it is the store's node and relationship
counts, the listing of a scratch directory, and a marker string in a file the attacks
try to read — before and after.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import queries
from gaf.errors import GafError, InvalidQuery, ReadOnlyViolation
from gaf.store import GafStore
from gaf.store.ladybug import LadybugStore
from gaf.store.neo4j import Neo4jStore
from queries.cypher import READ_FUNCTIONS, parse_read
from tests.conftest import NOW, small_graph
from tests.figures import record

MARKER = "gaf-marker-4f1e"

#: The attack corpus, by family. {data} is a file holding MARKER, {out} a file that must not
#: appear, {dir} a directory that must stay as it is.
ATTACKS: dict[str, list[str]] = {
    "comment and string tricks": [
        "MATCH (n:Claim) WHERE n.id = '//' CREATE (:Claim {id: 'x'}) RETURN n",
        "MATCH (n:Claim) WHERE n.id = '/*' SET n.scope = 'x' RETURN n // */",
        "RETURN '\\'' AS q CREATE (:Claim {id: 'x'}) // '",
        'RETURN "\\"" AS q MERGE (:Agent {id: \'x\'}) // "',
        "/* RETURN 1 */ CREATE (:Claim {id: 'x'})",
        "RETURN 1 AS one // harmless\rCREATE (:Claim {id: 'x'})",
        "MATCH (n) WHERE n.id = '*/' DETACH DELETE n",
    ],
    "unicode escapes": [
        "RETURN 'a\\u0027 CREATE (:Claim {id: \\u0027x\\u0027}) RETURN \\u0027' AS s",
        "RETURN 1 AS one // \\u000a CREATE (:Claim {id: 'x'})",
        "MATCH (n) RETURN n.`id\\u0060` AS x",
        "RETURN 1 AS one\u2028CREATE (:Claim {id: 'x'})",
        "MATCH (n)\u00a0SET n.scope = 'x'",
        "MATCH (n) ＳＥＴ n.scope = 'x'",
        "MATCH (n) ſet n.scope = 'x'",
    ],
    "backticks": [
        "CALL `dbms`.`listConfig`()",
        "CALL `db`.`clearQueryCaches`()",
        "CALL `db.createLabel`('X')",
        "CALL db.`createLabel`('X')",
        "RETURN `apoc`.`cypher`.`runFirstColumnSingle`('CREATE (:Claim) RETURN 1', {}) AS x",
        "MATCH (n) `SET` n.scope = 'x'",
    ],
    "case": [
        "cReAtE (:Claim {id: 'x'})",
        "MATCH (n:Claim) sEt n.scope = 'x'",
        "match (n) detach DELETE n",
        "Call Db.CreateLabel('X')",
        "LoAd CsV FROM 'file://{data}' AS r RETURN r",
    ],
    "subqueries": [
        "MATCH (n) CALL { CREATE (:Claim {id: 'x'}) } RETURN n",
        "MATCH (n) CALL (n) { SET n.scope = 'x' } RETURN n",
        "MATCH (n) WHERE EXISTS { MATCH (m) SET m.scope = 'x' } RETURN n",
        "MATCH (n) RETURN COUNT { CREATE (:Claim {id: 'x'}) } AS c",
        "MATCH (n) CALL { WITH n RETURN n AS m } IN TRANSACTIONS RETURN n",
        "RETURN [x IN [1] | CREATE (:Claim {id: 'x'})] AS l",
    ],
    "FOREACH": [
        "FOREACH (i IN [1] | CREATE (:Claim {id: 'x'}))",
        "MATCH (n) FOREACH (x IN [n] | SET x.scope = 'y')",
    ],
    "LOAD CSV": [
        "LOAD CSV FROM 'file://{data}' AS row RETURN row",
        "LOAD CSV WITH HEADERS FROM 'http://127.0.0.1:9/x.csv' AS row RETURN row",
        "MATCH (n) WITH n LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    ],
    "COPY, LOAD FROM, INSTALL, ATTACH, EXPORT": [
        "COPY (MATCH (n:Claim) RETURN n.id) TO '{out}'",
        "LOAD FROM '{data}' RETURN *",
        "LOAD WITH HEADERS (a STRING) FROM '{data}' RETURN *",
        "INSTALL json",
        "LOAD EXTENSION json",
        "ATTACH '{dir}/other.lbug' AS o (dbtype lbug)",
        "EXPORT DATABASE '{dir}/export'",
        "IMPORT DATABASE '{dir}'",
        "COPY Claim FROM '{data}'",
        "CALL threads = 1",
    ],
    "SHOW and TERMINATE": [
        "SHOW USERS",
        "SHOW SETTINGS",
        "SHOW TRANSACTIONS",
        "TERMINATE TRANSACTIONS 'neo4j-transaction-1'",
        "CALL dbms.listConfig()",
        "CALL db.clearQueryCaches()",
        "CALL dbms.security.createUser('x', 'y', false)",
    ],
    "USE system": [
        "USE system SHOW USERS",
        "USE system CREATE USER x SET PASSWORD 'y'",
        "USE neo4j MATCH (n) RETURN count(n) AS c",
    ],
    "multiple statements": [
        "MATCH (n) RETURN count(n) AS c; CREATE (:Claim {id: 'x'})",
        "RETURN ';' AS s; CREATE (:Claim {id: 'x'})",
        "RETURN 1 AS one;",
    ],
    "writes and schema": [
        "CREATE (:Claim {id: 'x'})",
        "MERGE (a:Agent {id: 'x'}) RETURN a",
        "MATCH (c:Claim) SET c.scope = 'x'",
        "MATCH (c) REMOVE c.scope",
        "MATCH (c:Claim) DETACH DELETE c",
        "CREATE INDEX x FOR (n:Claim) ON (n.scope)",
        "DROP INDEX gaf_Claim_scope IF EXISTS",
        "CALL db.createLabel('X')",
        "CALL apoc.create.node(['X'], {})",
        "MATCH (n) RETURN apoc.create.uuid() AS u",
    ],
}

#: Families whose every member is a write or administration word the parse must name as such.
NAMED_AS_NOT_READS = {"case", "subqueries", "FOREACH", "LOAD CSV", "SHOW and TERMINATE", "USE system",
                      "multiple statements", "writes and schema"}  # fmt: skip

#: What each test tried and refused, per layer and family, for docs/reliability.md.
TALLY: dict[str, Counter[str]] = {}


def _count(layer: str, family: str, refused: bool) -> None:
    seen = TALLY.setdefault(layer, Counter())
    seen[f"{family}: tried"] += 1
    seen[f"{family}: refused"] += refused


@pytest.fixture
def scratch(tmp_path: Path) -> dict[str, str]:
    """A directory the attacks aim at: a file holding the marker, and a file that must not appear."""
    where = tmp_path / "scratch"
    where.mkdir()
    (where / "data.csv").write_text(f"{MARKER},1\n")
    return {"data": str(where / "data.csv"), "out": str(where / "out.csv"), "dir": str(where)}


def _aimed(text: str, scratch: dict[str, str]) -> str:
    """The attack with its {data}, {out} and {dir} filled in (not str.format: Cypher maps use braces)."""
    for key, value in scratch.items():
        text = text.replace("{" + key + "}", value)
    return text


def _listing(directory: str) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in Path(directory).rglob("*"))


def _seeded(store: GafStore) -> GafStore:
    store.put(small_graph("ro"), at=NOW)
    return store


def _attempt(store: GafStore, layer: str, family: str, text: str, scratch: dict[str, str]) -> GafError | None:
    """Run one attack; assert by the oracle that it wrote nothing and read no file; tally it."""
    query = _aimed(text, scratch)
    before, listing = store.counts(), _listing(scratch["dir"])
    refusal: GafError | None = None
    rows: list[dict[str, Any]] = []
    try:
        rows = queries.run(store, query)
    except GafError as exc:
        refusal = exc
    assert store.counts() == before, f"{layer}: {query!r} wrote to the store"
    assert _listing(scratch["dir"]) == listing, f"{layer}: {query!r} created or removed a file"
    assert MARKER not in repr(rows), f"{layer}: {query!r} read the marker file"
    _count(layer, family, refusal is not None)
    return refusal


@pytest.fixture
def without_store_guards(monkeypatch):
    """The store's own read-only mode switched off: reads run in write transactions."""
    monkeypatch.setattr(LadybugStore, "_read", LadybugStore._write)
    monkeypatch.setattr(Neo4jStore, "_session", lambda self, access=None: self._driver.session(database=self.database))
    monkeypatch.setattr(neo4j.Session, "execute_read", neo4j.Session.execute_write)


def _without_parse(monkeypatch) -> None:
    monkeypatch.setattr(queries.runner, "check_read_only", lambda cypher: None)


def _without_plan(monkeypatch) -> None:
    monkeypatch.setattr(queries.runner, "check_plan", lambda plan: None)


# ---------------------------------------------------------------------- the library


@pytest.mark.parametrize("name", sorted(queries.load()))
def test_every_library_query_parses_as_a_read_calling_only_listed_functions(name):
    query = queries.load()[name]
    for text in (query.cypher, *query.variants.values()):
        found = parse_read(text)
        assert found.clauses and found.functions <= READ_FUNCTIONS and not found.procedures


# ---------------------------------------------------------------------- layer 1: the parse alone


@pytest.mark.parametrize("family", sorted(ATTACKS))
def test_the_parse_alone_refuses_every_attack_and_nothing_is_written_or_read(store, family, scratch, without_store_guards,
                                                                             monkeypatch):  # fmt: skip
    _seeded(store)
    _without_plan(monkeypatch)
    for text in ATTACKS[family]:
        refusal = _attempt(store, f"parse ({store.dialect})", family, text, scratch)
        assert isinstance(refusal, (ReadOnlyViolation, InvalidQuery)), f"{text!r} was not refused by the parse"
        assert refusal.where and refusal.where.startswith("line "), refusal.message
        if family in NAMED_AS_NOT_READS:
            assert isinstance(refusal, ReadOnlyViolation), f"{text!r}: {refusal.message}"


def test_a_refusal_names_the_word_and_its_line_and_column():
    with pytest.raises(ReadOnlyViolation) as refused:
        parse_read("MATCH (n:Claim)\nWHERE n.id = '//'\n  DETACH DELETE n")
    assert refused.value.what.startswith("DETACH") and refused.value.where == "line 3, column 3"
    with pytest.raises(ReadOnlyViolation, match="procedure dbms.listConfig"):
        parse_read("CALL `dbms`.`listConfig`()")
    with pytest.raises(ReadOnlyViolation, match="function apoc.cypher.run"):
        parse_read("RETURN `apoc`.cypher.`run`('x', {}) AS r")


@pytest.mark.parametrize(
    "text",
    [
        "RETURN 'CREATE (:X)' AS s, \"SET\" AS t, '//' AS u, '/*' AS v, ';' AS w, 'it\\'s' AS x",
        "MATCH (n:Claim) // SET n.x = 1\nRETURN n.id AS id /* DELETE n */ ORDER BY id",
        "MATCH (n:`Claim`) WHERE n.`id` <> 'a``b' RETURN n.id AS `the ``id```",
        "CALL `db`.`labels`() YIELD label RETURN label",
        "CALL table_info('Claim') RETURN *",
        "MATCH p = (a)-[r:FROM_SOURCE|OBSERVED_BY*1..2]->(b) WHERE a:Claim AND NOT b:Agent RETURN length(p) AS n",
        "MATCH (n) RETURN [x IN range(1, 3) WHERE x > 1 | x * 2] AS l, [(n)-->(m) | m.id] AS ids, "
        "CASE WHEN n.id IS NULL THEN 0 ELSE 1 END AS c, {a: 1, b: [1, 2.5e3, $p]} AS m, n {.id, .kind} AS p",
        "MATCH (n) WHERE COUNT { (n)-->() } > 0 AND EXISTS { MATCH (n)<--() } RETURN collect(DISTINCT n.kind)[0..2] AS k",
        "UNWIND $ids AS id OPTIONAL MATCH (n {id: id}) WITH id, n ORDER BY id SKIP 1 LIMIT 5 WHERE n IS NOT NULL "
        "RETURN id UNION ALL RETURN 'x' AS id",
        "MATCH (n) CALL { WITH n RETURN count(*) AS c } RETURN all(x IN [1] WHERE x = 1) AS a, reduce(s = 0, x IN [1, 2] | s + x) AS r",
        "RETURN 'caf\\u00e9 \\U0001F600 ☕' AS s, 0x1F AS h, -1.5 AS f",
    ],
)
def test_reads_are_admitted_whatever_their_strings_comments_and_quoting(text):
    assert parse_read(text).clauses


# ---------------------------------------------------------------------- layer 2: Neo4j's plan alone


@pytest.mark.parametrize("family", sorted(ATTACKS))
def test_the_neo4j_plan_alone_lets_no_attack_write_read_files_or_administer(neo4j_store, family, scratch, without_store_guards,
                                                                            monkeypatch):  # fmt: skip
    """Parse off, READ transaction off: only the EXPLAIN plan stands. What the plan does not
    refuse must be a read that the server reads the same way (a string, say)."""
    _seeded(neo4j_store)
    _without_parse(monkeypatch)
    for text in ATTACKS[family]:
        _attempt(neo4j_store, "neo4j plan", family, text, scratch)


def test_the_plan_check_refuses_writes_files_procedures_and_administration():
    from gaf.store.base import PlanStep

    def plan(*operators: str, details: str = "", runtime: str = "PIPELINED") -> PlanStep:
        steps = [PlanStep(op, details) for op in operators]
        return PlanStep("ProduceResults", runtime=runtime, children=tuple(steps))

    queries.runner.check_plan(plan("NodeByLabelScan", "Expand(All)", "EagerAggregation", "Sort"))
    queries.runner.check_plan(plan("ProcedureCall", details="db.labels() :: (label :: STRING)"))
    for refused in (plan("Create"), plan("SetProperty"), plan("DetachDelete"), plan("Foreach"), plan("LoadCSV"),
                    plan("MergeInto"), plan("TransactionForeach"), plan("ShowUsers"), plan("TerminateTransactions"),
                    plan("ProcedureCall", details="dbms.listConfig() :: (name :: STRING)"),
                    plan("ProcedureCall", details="`db`.`clearQueryCaches`() :: (value :: STRING)"),
                    plan("ProcedureCall"), plan("Projection", runtime="SYSTEM"), PlanStep("NoPlanFromTheServer")):  # fmt: skip
        with pytest.raises(ReadOnlyViolation):
            queries.runner.check_plan(refused)


# ---------------------------------------------------------------------- layer 3: the store's read-only mode alone


@pytest.fixture
def read_only_store(request, tmp_path) -> GafStore:
    """The store as the auditor's commands open it: Neo4j read in READ transactions, the
    embedded database opened read-only."""
    if request.param == "neo4j":
        return _seeded(request.getfixturevalue("neo4j_store"))
    path = tmp_path / "ro.lbug"
    with LadybugStore(path) as writer:
        _seeded(writer)
    store = LadybugStore(path, read_only=True)
    request.addfinalizer(store.close)
    return store


#: What a store's read-only mode does not stop by itself, because it reads or writes files outside
#: the graph: on the embedded store COPY … TO, LOAD FROM and EXPORT DATABASE; on Neo4j LOAD CSV
#: (which a READ transaction runs). These rest on the layers above, and the figures say so.
FILE_ACCESS = {"ladybug": ("COPY (", "LOAD FROM", "LOAD WITH HEADERS", "EXPORT DATABASE"),
               "neo4j": ("LOAD CSV", "LoAd CsV", "MATCH (n) WITH n LOAD CSV")}  # fmt: skip


@pytest.mark.parametrize("read_only_store", ["ladybug", "neo4j"], indirect=True)
@pytest.mark.parametrize("family", sorted(ATTACKS))
def test_the_store_read_only_mode_alone_stops_every_graph_write(read_only_store, family, scratch, monkeypatch):
    _without_parse(monkeypatch)
    _without_plan(monkeypatch)
    for text in ATTACKS[family]:
        if text.startswith(FILE_ACCESS[read_only_store.dialect]):
            _count(f"store read-only mode ({read_only_store.dialect})", f"{family} (file access: not run)", False)
            continue
        _attempt(read_only_store, f"store read-only mode ({read_only_store.dialect})", family, text, scratch)


def test_the_embedded_read_only_open_does_not_stop_file_access_so_the_parse_must(tmp_path, scratch, monkeypatch):
    """Pins the gap the parse closes: with the parse off, LadybugDB opened read-only still
    writes a file for COPY … TO. With the parse on, the same query is refused and no file appears."""
    path = tmp_path / "gap.lbug"
    with LadybugStore(path) as writer:
        _seeded(writer)
    with LadybugStore(path, read_only=True) as store:
        copy = _aimed("COPY (MATCH (n:Claim) RETURN n.id) TO '{out}'", scratch)
        with pytest.raises(ReadOnlyViolation):
            queries.run(store, copy)
        assert not Path(scratch["out"]).exists()
        _without_parse(monkeypatch)
        queries.run(store, copy)
        assert Path(scratch["out"]).exists()


# ---------------------------------------------------------------------- grown with hypothesis

_BENIGN = ["MATCH (n:Claim) RETURN n.id AS id", "MATCH (n) WITH n RETURN count(n) AS c", "RETURN 1 AS one",
           "UNWIND [1, 2] AS x RETURN x", "MATCH (n:Claim) WHERE n.id = '//' RETURN n.id AS id"]  # fmt: skip
_INJECTED = ["CREATE (:Claim {id: 'hx'})", "SET n.scope = 'hx'", "MERGE (:Agent {id: 'hx'})", "DETACH DELETE n",
             "FOREACH (i IN [1] | CREATE (:Claim {id: 'hx'}))", "COPY (MATCH (c:Claim) RETURN c.id) TO '{out}'",
             "LOAD FROM '{data}' RETURN *", "LOAD CSV FROM 'file://{data}' AS r RETURN r",
             "CALL { CREATE (:Claim {id: 'hx'}) }", "CALL `db`.`createLabel`('Hx')", "REMOVE n.scope",
             "RETURN 1 AS one; CREATE (:Claim {id: 'hx'})", "EXPORT DATABASE '{dir}/e'"]  # fmt: skip
_NOISE = ["", " ", "\n", "/* c */", "// c\n", "/* ' */", "// '\n", "/* // */", "\r", "\t"]
_LITERALS = ["'//'", "'/*'", "';'", "\"'\"", "'\\''", "'*/'", "'\\\\'", "\"//\"", "'`'"]
FAMILY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def _hidden_writes(draw) -> tuple[str, str]:
    """A benign read with a write fragment spliced in after it, before it, or inside it, among
    comments and string literals holding //, /*, ; and quotes, in any case."""
    benign, injected = draw(st.sampled_from(_BENIGN)), draw(st.sampled_from(_INJECTED))
    flips = draw(st.lists(st.booleans(), max_size=len(injected)))
    injected = "".join(c.swapcase() if f else c for c, f in zip(injected, flips + [False] * len(injected)))
    noise = [draw(st.sampled_from(_NOISE)) for _ in range(3)]
    literal = draw(st.sampled_from(_LITERALS))
    where = draw(st.sampled_from(["after", "before", "with a literal", "inside a literal"]))
    if where == "after":
        text = f"{benign}{noise[0]} {injected}{noise[1]}"
    elif where == "before":
        text = f"{noise[0]}{injected}{noise[1]} {benign}{noise[2]}"
    elif where == "with a literal":
        text = f"MATCH (n) WHERE n.id = {literal}{noise[0]} {injected}{noise[1]} RETURN n"
    else:
        text = f"{benign}, {literal} + '{injected.replace(chr(39), chr(92) + chr(39))}' AS s{noise[2]}"
    return where, text


@FAMILY
@given(attack=_hidden_writes())
def test_hidden_writes_never_write_or_read_files_through_the_parse_alone(store, attack, scratch, without_store_guards,
                                                                         monkeypatch):  # fmt: skip
    """Every layer but the parse off; whatever the text, the oracle sees no write and no file."""
    where, text = attack
    _seeded(store)
    _without_plan(monkeypatch)
    refusal = _attempt(store, f"parse, hypothesis ({store.dialect})", f"write {where}", text, scratch)
    if where != "inside a literal":  # there the write is only text, and the query reads
        assert refusal is not None, f"{text!r} was admitted"


@FAMILY
@given(attack=_hidden_writes())
def test_hidden_writes_never_write_or_read_files_through_the_full_path(store, attack, scratch):
    where, text = attack
    _seeded(store)
    refusal = _attempt(store, f"all layers, hypothesis ({store.dialect})", f"write {where}", text, scratch)
    if where != "inside a literal":
        assert refusal is not None, f"{text!r} was admitted"


def test_readonly_figures():
    """Runs last in this file: attempts tried and refused per layer and family, for docs/reliability.md."""
    if not TALLY:
        pytest.skip(reason="no attack test ran in this session")
    for layer, seen in sorted(TALLY.items()):
        record(f"read-only queries: {layer}", **dict(sorted(seen.items())))
