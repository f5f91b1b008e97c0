"""The sample scorelake ships (``runs/``, installed as ``scorelake.sample``): two voice-agent
sessions of the runner, 46 scenarios, what ``scorelake demo`` ingests and every README example
reads (``scorelake.sample_runs()``)."""
