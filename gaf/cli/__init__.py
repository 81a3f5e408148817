"""The gaf command line: one command per library function, nothing more.

Each command opens the store named by ``--store`` (or $GAF_STORE, or the
``.gaf/store.lbug`` found in the working directory or a parent), calls one library
function with the same options, and prints a table for people or, with ``--json``,
JSON for machines. Errors are the library's typed errors, printed as one line with
their place and exit codes by family: 2 bad input, 3 store unreachable or locked, 1
anything else refused.

One module per command group; ``common`` holds what they share (the app, the
options and the ``@command`` helper). Importing the modules registers their
commands, in the order ``gaf --help`` lists them.
"""

# isort: off
# The order commands and groups are registered in is the order --help and docs/cli-reference.md list them.
from gaf.cli import records, chain, actions, audit, policy, lifecycle, impact, reopen, serve  # noqa: F401
# isort: on
from gaf.cli.audit import cli_reference
from gaf.cli.common import app, main

__all__ = ["app", "cli_reference", "main"]
