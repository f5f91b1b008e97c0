"""``python -m scorelake``: the command line, as the ``scorelake`` script runs it."""

from scorelake.cli import app

app(prog_name="scorelake")
