"""``python -m gaf``: the same command line as the ``gaf`` script, for when it is not on PATH."""

from gaf.cli import main

main()
