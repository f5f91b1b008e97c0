"""The services the ``Warehouse`` facade hands each call to, one concern each: reading the views
(``Reading``), analysis, ingest, scoring, judging, review, export and maintenance. Every one reads through one
``Reads`` (the store, the version read, one shared connection) and writes through the flows."""

from scorelake._services._analysis import Analysis
from scorelake._services._exporting import Exporting
from scorelake._services._ingesting import Ingesting
from scorelake._services._judging import Judging
from scorelake._services._maintenance import Maintenance
from scorelake._services._reading import Reading
from scorelake._services._reads import Reads
from scorelake._services._reviewing import Reviewing
from scorelake._services._scoring import Scoring

__all__ = ["Analysis", "Exporting", "Ingesting", "Judging", "Maintenance", "Reading", "Reads", "Reviewing", "Scoring"]
