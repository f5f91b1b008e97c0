"""The SQL of the views (``staging/``, ``intermediate/``, ``marts/``), macros and the parameterised
queries of the commands (``queries/``): package data, read through ``importlib.resources``."""
