"""Projection policies and verdict rule sets: add, revise, show, list."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from gaf import policies, projection
# boilerplate: the names this command group takes from gaf/cli/common.py and output.py, one per line
from gaf.cli.common import (
    AtOpt,
    FormatOpt,
    JsonOpt,
    StoreOpt,
    app,
    command,
    group,
    open_store,
    or_now,
)
from gaf.cli.output import (
    chosen_format,
    emit,
    emit_rows,
    out,
    print_rows,
    warn_ignored,
)
from gaf.records import Projection, VerdictRules
from gaf.store import GafStore

# boilerplate: each command declares its own options in its signature (typer reads them from there), so the
# --store/--json/--by option lines and the open-call-emit shape of a body repeat from command to command.

policy_app = group("Projection policies and their lifecycle: add, revise, show, list, decide, propose, ratify, waive, sway, queue.")
app.add_typer(policy_app, name="policy")


@command(policy_app, "add")
def policy_add(
    path: Annotated[Path, typer.Argument(help="A policy YAML file (sources and agents by key).")],
    at: AtOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Publish a policy version; the same content again is a no-op, other content is refused.

    [b]Examples[/b]

      gaf policy add examples/rent/policy.yaml
    """
    with open_store(store) as s:
        policy = policies.publish(s, policies.read_policy(s, path), at=or_now(at))
    warn_ignored(projection.declaration_problems(policy))
    emit(as_json, policy.to_json(), lambda: out.print(f"published {policy.ref} as {policy.id}", highlight=False))


@command(policy_app, "revise")
def policy_revise(
    path: Annotated[Path, typer.Argument(help="The new content of an existing policy (its version is assigned).")],
    at: AtOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Publish a file as the next version of its policy; the old version stays readable.

    [b]Examples[/b]

      gaf policy revise examples/rent/policy.yaml
    """
    with open_store(store) as s:
        policy = policies.revise(s, policies.read_policy(s, path), at=or_now(at))
    emit(as_json, policy.to_json(), lambda: out.print(f"published {policy.ref} (revises {policy.revises})", highlight=False))


@command(policy_app, "show")
def policy_show(
    name: Annotated[str, typer.Argument(help="NAME or NAME@VERSION; the latest version when none is given.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print a published policy and its derivation rules.

    [b]Examples[/b]

      gaf policy show rent-delinquency
      gaf policy show rent-delinquency@1 --json
    """
    with open_store(store, read_only=True) as s:
        policy = policies.resolve(s, name, Projection, where="NAME")

    def text() -> None:
        out.print(f"[b]{policy.ref}[/b]  {policy.id}\n{policy.question}", highlight=False)
        for r in policy.derivation_rules:
            out.print(f"  {r}", highlight=False)

    emit(as_json, policy.to_json(), text)


@command(policy_app, "list")
def policy_list(store: StoreOpt = None, as_json: JsonOpt = False, fmt: FormatOpt = None) -> None:
    """List published policies and their versions.

    [b]Examples[/b]

      gaf policy list
    """
    shape = chosen_format(as_json, fmt)
    with open_store(store, read_only=True) as s:
        rows: list[dict[str, Any]] = [{"name": p.name, "version": p.version, "id": p.id, "question": p.question}
                                      for p in policies.versions(s, Projection)]  # fmt: skip
    emit_rows(shape, rows, lambda rows: print_rows(rows, ("name", "version", "id", "question")))


rules_app = group("Verdict rule sets: add, revise, list.")
app.add_typer(rules_app, name="rules")


@command(rules_app, "add")
def rules_add(
    path: Annotated[Path, typer.Argument(help="A verdict rules YAML file.")],
    at: AtOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Publish a verdict rule set version; other content under the same version is refused.

    [b]Examples[/b]

      gaf rules add examples/rent/verdict-rules.yaml
    """
    with open_store(store) as s:
        rules = policies.publish(s, policies.read_rules(path), at=or_now(at))
        _warn_unestablished(s, rules)
    emit(as_json, rules.to_json(), lambda: out.print(f"published {rules.ref} as {rules.id}", highlight=False))


def _warn_unestablished(s: GafStore, rules: VerdictRules) -> None:
    """Warn on stderr of condition predicates no published policy establishes or derives.

    A rule set is published before any closure picks its policy, so it cannot be
    refused here; the closure refuses it. The warning says so now, while the typo is
    one revision away, and the command still succeeds.
    """
    published = sorted(s.find(Projection), key=lambda p: p.ref)
    found = policies.unestablished_predicates(rules, *published)
    if not published or not found:
        return
    refs = [p.ref for p in published]
    under = f"any published policy ({', '.join(refs[:3])}{', …' if len(refs) > 3 else ''})"
    for f in found:  # one line each, never wrapped at the terminal's width: grep finds it
        sys.stderr.write(f"warning: {f.describe(under)} (a closure under a policy that does not establish it is refused)\n")


@command(rules_app, "revise")
def rules_revise(
    path: Annotated[Path, typer.Argument(help="The new content of an existing rule set (its version is assigned).")],
    at: AtOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Publish a file as the next version of its rule set; the old version stays readable.

    Closures keep the version they were decided under; the same content again is a no-op.

    [b]Examples[/b]

      gaf rules revise examples/rent/verdict-rules.yaml
    """
    with open_store(store) as s:
        rules = policies.revise(s, policies.read_rules(path), at=or_now(at))
        _warn_unestablished(s, rules)
    emit(as_json, rules.to_json(), lambda: out.print(f"published {rules.ref} as {rules.id}", highlight=False))


@command(rules_app, "list")
def rules_list(store: StoreOpt = None, as_json: JsonOpt = False, fmt: FormatOpt = None) -> None:
    """List published verdict rule sets and their versions.

    [b]Examples[/b]

      gaf rules list --json
    """
    shape = chosen_format(as_json, fmt)
    with open_store(store, read_only=True) as s:
        rows: list[dict[str, Any]] = [{"name": r.name, "version": r.version, "id": r.id, "conclusion": r.conclusion}
                                      for r in policies.versions(s, VerdictRules)]  # fmt: skip
    emit_rows(shape, rows, lambda rows: print_rows(rows, ("name", "version", "id", "conclusion")))
