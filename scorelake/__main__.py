"""``python -m scorelake``: the command line, as the ``scorelake`` script runs it."""

from scorelake.flows.cli import app

app(prog_name="scorelake")
