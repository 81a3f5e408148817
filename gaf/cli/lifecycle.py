"""A policy's lifecycle: decide cases, propose, ratify, waive, sway, and the review queue."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Optional

import typer

from gaf import lifecycle, policies
from gaf.canonical import short_ids
# boilerplate: the names this command group takes from gaf/cli/common.py and output.py, one per line
from gaf.cli.common import (
    AtOpt,
    FormatOpt,
    JsonOpt,
    StoreOpt,
    command,
    open_store,
    QuietOpt,
    number_option,
    or_now,
    time_option,
)
from gaf.cli.output import (
    chosen_format,
    emit,
    emit_rows,
    out,
    Ticker,
    print_rows,
)
from gaf.cli.policy import policy_app
from gaf.errors import GafError
from gaf.records import Projection
from gaf.types import Span

# boilerplate: each command declares its own options in its signature (typer reads them from there), so the
# --store/--json/--by option lines and the open-call-emit shape of a body repeat from command to command.


@command(policy_app, "decide")
def policy_decide(
    closure_id: Annotated[str, typer.Argument(help="The closure the case was decided in.")],
    by: Annotated[str, typer.Option("--by", help="Key, id or id prefix of the person (agent) deciding.")],
    decision: Annotated[str, typer.Option(help="What was decided.")],
    reason: Annotated[str, typer.Option(help="Why.")],
    settles: Annotated[Optional[str], typer.Option(help="The policy exception this decision settles (takes it off the queue).")] = None,
    at: Annotated[Optional[datetime], time_option("--at", help="When it was decided (ISO 8601); default now.")] = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Record a person's decision on one case: not a precedent; with --settles, it settles a policy exception.

    Exit code 2 when the exception was raised for another closure (nothing is written).

    [b]Examples[/b]

      gaf policy queue --json
      gaf policy decide closure:760b… --by letting-agent \\
          --decision "partial payment" \\
          --reason "900 of 1000 received; ask for the rest" \\
          --settles policy_exception:…
    """
    with open_store(store) as s:
        case = lifecycle.decide_case(s, s.resolve_id(closure_id, ("closure",)), decided_by=s.resolve_id(by, ("agent",)), decision=decision,
                                     reason=reason, at=or_now(at), settles=settles)  # fmt: skip
    emit(as_json, case.to_json(), lambda: out.print(
        f"case decision {case.id}" + (f" (settles {case.settles})" if case.settles else ""), highlight=False))  # fmt: skip


@command(policy_app, "propose")
def policy_propose(
    rule_file: Annotated[Path, typer.Argument(help="A YAML file with one derivation rule.")],
    name: Annotated[str, typer.Option(help="The policy's name.")],
    text: Annotated[str, typer.Option(help="The policy in words.")],
    by: Annotated[str, typer.Option("--by", help="Key, id or id prefix of the proposer.")],
    case: Annotated[Optional[list[str]], typer.Option("--case", help="A case decision it generalises (repeatable).")] = None,
    at: AtOpt = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Propose a policy candidate from case decisions: a rule, not yet binding.

    [b]Examples[/b]

      gaf policy propose examples/rent/allocation-rule.yaml \\
          --name rent-allocation --text "…" --by letting-agent
    """
    from gaf import lifecycle

    rule = policies.read_derivation_rule(rule_file)
    with open_store(store) as s:
        candidate = lifecycle.propose(s, name=name, text=text, rule=rule, cases=case or [],
                                      proposed_by=s.resolve_id(by, ("agent",)), at=or_now(at))  # fmt: skip
    emit(as_json, candidate.to_json(), lambda: out.print(f"proposed {candidate.id}", highlight=False))


@command(policy_app, "ratify")
def policy_ratify(
    candidate_id: Annotated[str, typer.Argument(help="The policy candidate to ratify.")],
    by: Annotated[str, typer.Option("--by", help="Key, id or id prefix of the authority (an agent with the 'authority' role).")],
    version: Annotated[int, number_option("--version", Span(1, whole=True, example="--version 1"), help="The ratified policy's version.")],
    effective: Annotated[datetime, time_option("--effective", help="When it takes effect (ISO 8601).")],
    retroactive: Annotated[bool, typer.Option("--retroactive", help="It also governs closures decided before it took effect.")] = False,
    at: AtOpt = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Ratify a candidate on an authority's word; cite it from a projection with ``ratified: [NAME@VERSION]``.

    Exit code 5 when the agent is not an authority.

    [b]Examples[/b]

      gaf policy ratify policy_candidate:… --by letting-agent --version 1 \\
          --effective 2026-08-01
    """
    from gaf import lifecycle
    from gaf.records import PolicyCandidate

    with open_store(store) as s:
        candidate = s.get(candidate_id := s.resolve_id(candidate_id, ("policy_candidate",)))
        if not isinstance(candidate, PolicyCandidate):
            raise GafError(f"no policy candidate {candidate_id}")
        ratified = lifecycle.ratify(s, candidate, authority=s.resolve_id(by, ("agent",)), version=version,
                                    effective=effective, retroactive=retroactive, at=or_now(at))  # fmt: skip
    emit(as_json, ratified.to_json(), lambda: out.print(f"ratified {ratified.name}@{ratified.version} as {ratified.id}", highlight=False))


@command(policy_app, "waive")
def policy_waive(
    policy_id: Annotated[str, typer.Argument(help="The policy (action policy, projection, rules or ratified policy) id.")],
    closure_id: Annotated[str, typer.Option("--closure", help="The one decision let past it.")],
    by: Annotated[str, typer.Option("--by", help="Key, id or id prefix of the authority.")],
    reason: Annotated[str, typer.Option(help="Why.")],
    at: AtOpt = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Let one decision past one policy, on a named authority, with the reason.

    [b]Examples[/b]

      gaf policy waive action_policy:… --closure closure:… --by letting-agent \\
          --reason "tenant asked"
    """
    from gaf import lifecycle

    with open_store(store) as s:
        waiver = lifecycle.waive(s, policy=s.resolve_id(policy_id, ("action_policy", "projection", "rules", "policy")),
                                 closure=s.resolve_id(closure_id, ("closure",)), authority=s.resolve_id(by, ("agent",)),
                                 reason=reason, at=or_now(at))  # fmt: skip
    emit(as_json, waiver.to_json(), lambda: out.print(f"waiver {waiver.id}", highlight=False))


@command(policy_app, "sway")
def policy_sway(
    current: Annotated[str, typer.Argument(help="The current projection policy: NAME@VERSION.")],
    proposed: Annotated[Path, typer.Argument(help="The proposed policy file (not published).")],
    store: StoreOpt = None, quiet: QuietOpt = False, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Before ratifying a change: how many standing verdicts under the current version would flip, and which.

    [b]Examples[/b]

      gaf policy sway rent-delinquency@1 examples/rent/policy-v2.yaml
    """
    from gaf import lifecycle

    with open_store(store, read_only=True) as s, Ticker(f"sway {current}", quiet=quiet) as tick:
        result = lifecycle.sway(s, policies.resolve(s, current, Projection, where="CURRENT"), policies.read_policy(s, proposed),
                                progress=tick)  # fmt: skip

    def text() -> None:
        out.print(f"{result.judged} closure(s) judged, {len(result.flips)} would flip, {len(result.unchanged)} unchanged")
        shown = short_ids(f["closure"] for f in result.flips)
        for f in result.flips:
            out.print(f"  {shown[f['closure']]} {f['subject']}: {f['from']} → {f['to']}", highlight=False)

    emit(as_json, result.to_dict(), text)


@command(policy_app, "queue")
def policy_queue(store: StoreOpt = None, as_json: JsonOpt = False, fmt: FormatOpt = None) -> None:
    """Policy exceptions waiting for a person, oldest first.

    [b]Examples[/b]

      gaf policy queue --json
    """
    from gaf import lifecycle

    shape = chosen_format(as_json, fmt)
    with open_store(store, read_only=True) as s:
        queue = lifecycle.review_queue(s)
    emit_rows(shape, (e.to_json() for e in queue), lambda rows: print_rows(rows, ("id", "subject", "reason")))
