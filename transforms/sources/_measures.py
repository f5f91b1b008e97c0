"""The range of a count, a latency and a duration in a source file.

A value past these is no measurement (a token count of 2^63, a latency of NaN, -5 or 1e308 ms): the
model that reads it refuses it, so its scenario is quarantined naming the field, and the rest of the
run is stored. The bounds keep every sum the warehouse makes finite (a million scenarios of 10^12
tokens each still fit Int64).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_COUNT = 10**12
MAX_MS = 10**10  # 115 days
MAX_SECONDS = 10**7  # 115 days

Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Millis = Annotated[float, Field(ge=0, le=MAX_MS, allow_inf_nan=False)]
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
