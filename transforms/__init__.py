"""scorelake's logic, free of Prefect and of the command line, by concern:

- ``sources``: input formats to table rows (voice-agent runs, tau2 / tau-bench, the former tables)
- ``scoring``: the signals, ACTION_MATCH, policies, rate counts
- ``warehouse``: the Delta tables, commit log, compaction, DuckDB views, writer lock
- ``pipeline``: the steps the flows orchestrate (ingest, re-score, check, conversion)
- ``analysis``: run comparison and its statistics
- ``render``: ``all_summary.txt`` and the HTML report
- ``columns``: every table's columns, declared as data
"""
