"""Typed errors: every refusal says what was wrong, where, and what to do.

A refusal without its reason cannot be argued with, appealed, or fixed; so every
error gaf raises carries the offending value, the place it was found (a file and
line, a record id, a field) and, where there is one, the way out.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TypeAlias

#: An error as a JSON object: its fields, and for a refused batch the errors of its items.
ErrorDict: TypeAlias = dict[str, "str | None | list[ErrorDict]"]


class ExitCode(IntEnum):
    """The one table of exit codes every command uses, so a script can tell outcomes apart
    without reading the message: each error family below names its code from here."""

    OK = 0
    REFUSED = 1
    BAD_INPUT = 2
    STORE = 3
    DIFFERS = 4
    DENIED = 5


#: What each exit code means, as ``gaf --help`` and docs/cli-reference.md print it.
EXIT_CODES: dict[ExitCode, str] = {
    ExitCode.OK: "success",
    ExitCode.REFUSED: "refused for another reason (no verdict for a closure, …)",
    ExitCode.BAD_INPUT: "bad input (a value, option, file, id, query): nothing written",
    ExitCode.STORE: "the store is unreachable, misconfigured or locked",
    ExitCode.DIFFERS: "verify found a discrepancy, or replay a layer that differs",
    ExitCode.DENIED: "refused on authority (an action's check): nothing executed",
}


class GafError(Exception):
    """The one base class of everything gaf refuses on purpose."""

    #: process exit code the CLI uses for this family of errors
    exit_code: ExitCode = ExitCode.REFUSED

    def __init__(self, what: str, *, where: str | None = None, hint: str | None = None):
        self.what = what
        self.where = where
        self.hint = hint
        super().__init__(self.message)

    @property
    def message(self) -> str:
        text = f"{self.where}: {self.what}" if self.where else self.what
        return f"{text} ({self.hint})" if self.hint else text

    def to_dict(self) -> ErrorDict:
        return {"error": type(self).__name__, "what": self.what, "where": self.where, "hint": self.hint}


class InvalidRecord(GafError):
    """Input that is not a well-formed record of its kind: refused before any write."""

    exit_code = ExitCode.BAD_INPUT


class InvalidEvent(InvalidRecord):
    """An OpenLineage event the spec (as openlineage-python checks it) refuses (gaf.lineage)."""


class UnknownEventType(InvalidEvent):
    """An event that is neither a RunEvent, a JobEvent nor a DatasetEvent, or a RunEvent whose
    eventType the spec does not name."""


class InvalidValue(InvalidRecord, ValueError):
    """A value that does not read (a time, a rule clause).

    It is a ValueError too, so that inside a record it is refused through the
    record's validation, which names the field it was found in.
    """


class UnknownKind(InvalidRecord):
    """A record or id whose kind gaf does not know."""


class IdMismatch(InvalidRecord):
    """A record whose stated id is not the hash of its content: tampered or mistyped."""


class PayloadTooLarge(InvalidRecord):
    """A record or input line larger than the configured limit."""


class OverLimit(InvalidRecord):
    """An input value past what a reader takes: lists and mappings nested too deep, a text too
    long, a number with too many digits. Refused at its file, line and column before it is
    read into a record, because parsers given such a value exhaust the stack or the CPU, or
    refuse in their own words with no place."""


class LeadingZero(InvalidRecord):
    """An unquoted number written with a leading zero (``0012``), refused until it is quoted.

    YAML 1.1 reads ``0012`` as octal 10, YAML 1.2 as 12, and a code or an account
    number loses its zeros in either; the file cannot say which was meant, so gaf
    records none of them.
    """


class DuplicateKey(InvalidRecord):
    """A YAML mapping that gives the same key twice: which one was meant cannot be told."""


class UnknownFormat(InvalidRecord):
    """An input whose format cannot be told: a stream with none named, a suffix that names none."""


class UnknownReference(InvalidRecord):
    """A record that points at an id that is neither in the batch nor in the store."""


class AmbiguousReference(InvalidRecord):
    """A key that names more than one stored record, so it cannot stand for an id."""


class BatchRejected(InvalidRecord):
    """An atomic batch refused as a whole because some of its items are bad.

    ``errors`` lists each bad item; nothing of the batch was written.
    """

    def __init__(self, errors: list[GafError], *, where: str | None = None):
        self.errors = errors
        first = errors[0].message if errors else "no detail"
        super().__init__(
            f"{len(errors)} bad item(s), nothing written; first: {first}",
            where=where,
            hint="fix the items listed, or keep the good ones with --best-effort (mode='best_effort' in Python)",
        )

    def to_dict(self) -> ErrorDict:
        out = super().to_dict()
        out["errors"] = [e.to_dict() for e in self.errors]
        return out


class InvalidQuery(InvalidRecord):
    """A query the store refuses as written (a typo, an unknown function or label): the
    query's fault, not the store's, so it is bad input (exit 2), with the store's own words."""


class StoreError(GafError):
    """The store could not do what was asked (unreachable, misconfigured, locked)."""

    exit_code = ExitCode.STORE


class StoreUnavailable(StoreError):
    """The store cannot be reached or opened with the configuration given."""


class StoreLocked(StoreError):
    """The embedded store is held by another writing process (one writer at a time)."""


class StoreNotFound(StoreUnavailable):
    """No store named (no --store, no $GAF_STORE) and no ``.gaf/store.lbug`` in the working
    directory or any parent up to the home directory: nothing to read, and a write would
    make a second store where nobody looks for it."""


class ReadOnlyViolation(GafError):
    """A query that would write, sent where only reading is allowed."""

    exit_code = ExitCode.BAD_INPUT


# ---------------------------------------------------------------------- rules
# boilerplate: below, each error is a class with a docstring and an exit code; they share that shape.


class RuleError(InvalidRecord):
    """A rule or rule set that cannot be evaluated soundly: says which rule and why."""


class UnestablishedPredicate(RuleError):
    """A rule that reads a predicate nothing makes true: no rule derives it, no trusted source states it.

    Such a clause can never hold, so a misspelt ``payd`` would not fail: it would
    quietly close every decision to "undetermined" for ever. It is refused instead,
    with the nearest predicate that is known.
    """


class InvalidArithmetic(RuleError):
    """Arithmetic a rule asks for that has no exact answer: a division by zero, a sum of
    text, a result longer than gaf computes exactly. Refused, never rounded or skipped."""


# ---------------------------------------------------------------------- policies


class PolicyConflict(GafError):
    """A published policy name@version given again with other content."""

    exit_code = ExitCode.BAD_INPUT


class UnknownPolicy(GafError):
    """A policy name or version that is not published."""

    exit_code = ExitCode.BAD_INPUT


# ---------------------------------------------------------------------- the policy lifecycle


class NotAnAuthority(GafError):
    """An agent acting where only an authority may: ratifying, waiving."""

    exit_code = ExitCode.DENIED


# ---------------------------------------------------------------------- access to the API (gaf serve)


class AccessDenied(GafError):
    """A request the API's tokens do not allow: a role too low, or a body naming an agent other
    than the token's (records written through a token carry its agent, and no other)."""

    exit_code = ExitCode.DENIED


class NotAuthenticated(AccessDenied):
    """A request without a token the API knows: none given, unknown, expired or revoked."""


# ---------------------------------------------------------------------- actions


class ActionRefused(GafError):
    """An action that failed one of its checks; nothing was executed or written."""

    exit_code = ExitCode.DENIED


# ---------------------------------------------------------------------- signatures


class SigningKeyError(GafError):
    """A signing or verify key that cannot be used (its text, or the cryptography package, is missing)."""

    exit_code = ExitCode.BAD_INPUT


# ---------------------------------------------------------------------- exports


class ExportError(GafError):
    """An export that cannot be made: unknown scope or format, or an unwritable path."""

    exit_code = ExitCode.BAD_INPUT
