"""tau2-bench's own interaction-metrics module, the outside reference the voice panel's tau2 metrics
are tested against, and the ticks it reads.

``voice_interaction_metrics.py`` is ``src/tau2/metrics/voice_interaction_metrics.py`` of
sierra-research/tau2-bench at commit a2c024725189473d2d7cea3a5cfdbcc67478e41f, byte for byte (MIT,
``LICENSE`` beside it). It imports ``tau2.data_model.message.Tick`` only as a type and logs through
loguru; both are given stand-ins while it loads (loguru's only where it is not installed), so the
module runs on ticks made of plain namespaces, as its own tests make them.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).parent
GOLDEN = HERE.parent / "data" / "tau2_voice_golden.tar.xz"  # its tests/test_voice/test_interaction_metrics/testdata


def _load() -> types.ModuleType:
    stand_ins = {"tau2": types.ModuleType("tau2"), "tau2.data_model": types.ModuleType("tau2.data_model"),
                 "tau2.data_model.message": types.ModuleType("tau2.data_model.message")}
    stand_ins["tau2.data_model.message"].Tick = object
    if importlib.util.find_spec("loguru") is None:
        stand_ins["loguru"] = types.ModuleType("loguru")
        stand_ins["loguru"].logger = SimpleNamespace(debug=lambda *a, **k: None, warning=lambda *a, **k: None)
    added = [name for name in stand_ins if name not in sys.modules]
    sys.modules.update({name: stand_ins[name] for name in added})
    try:
        spec = importlib.util.spec_from_file_location("tau2_voice_interaction_metrics",
                                                      HERE / "voice_interaction_metrics.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for name in added:
            del sys.modules[name]
    return module


tau2 = _load()


class Chunk(SimpleNamespace):
    """A tick's chunk as tau2's pydantic message reads: a field it does not hold is None."""

    def __getattr__(self, name: str) -> Any:
        return None


def chunk(doc: Any) -> Chunk | None:
    """A chunk of a tick from its JSON (nested objects as chunks too)."""
    if not isinstance(doc, dict):
        return doc
    return Chunk(**{key: chunk(value) for key, value in doc.items()})


def tick(doc: dict) -> SimpleNamespace:
    return SimpleNamespace(user_chunk=chunk(doc.get("user_chunk")), agent_chunk=chunk(doc.get("agent_chunk")))


def speaking_ticks(user: list[bool], agent: list[bool]) -> list[SimpleNamespace]:
    """Ticks in which each side speaks or not, nothing else marked."""
    return [SimpleNamespace(user_chunk=Chunk(contains_speech=u), agent_chunk=Chunk(contains_speech=a))
            for u, a in zip(user, agent, strict=True)]


def panel(simulations: list[list[SimpleNamespace]], tick_s: float = 0.2) -> dict:
    """tau2's ``compute_interaction_metrics_for_experiment`` over simulations given as their ticks."""
    results = SimpleNamespace(simulations=[SimpleNamespace(id=str(i), task_id=str(i), ticks=ticks)
                                           for i, ticks in enumerate(simulations)])
    return tau2.compute_interaction_metrics_for_experiment(
        results, tau2.InteractionMetricsConfig(tick_duration_sec=tick_s))


def events(ticks: list[SimpleNamespace], tick_s: float = 0.2) -> dict:
    """One simulation's event counts and mean latencies as tau2's module finds them, under the voice
    panel's column names (a mean over no event: None)."""
    found = tau2.extract_voice_quality_events_from_simulation(ticks, tick_duration_sec=tick_s)
    of = lambda kind: [e for e in found if e.event_type == kind]  # noqa: E731
    mean = lambda values: sum(values) / len(values) if values else None  # noqa: E731
    facts = {"responses": len(of("response")), "missed_user_turns": len(of("no_response")),
             "response_latency_s": mean([e.latency_sec for e in of("response")]),
             "yields": len(of("yield")), "interruptions": len(of("yield")) + len(of("no_yield")),
             "yield_latency_s": mean([e.latency_sec for e in of("yield")])}
    facts["user_turns"] = facts["responses"] + facts["missed_user_turns"]
    for category in ("backchannel", "vocal_tic", "non_directed"):
        kind = [e for e in found if e.event_category == category]
        facts[f"{category}_total"] = len(kind)
        facts[f"{category}_errors"] = sum(e.is_error for e in kind)
    results = SimpleNamespace(simulations=[SimpleNamespace(ticks=ticks)])
    facts["agent_barge_ins"] = tau2._count_agent_interruptions(
        results, tau2.InteractionMetricsConfig(tick_duration_sec=tick_s))
    return facts


def segment_ticks(segments: list[tuple[str, float, float]], call_s: float, tick_s: float) -> list[SimpleNamespace]:
    """Speech segments (speaker, start, end) as ticks of ``tick_s`` from 0 to the call's end: a
    speaker speaks in a tick when one of its segments covers the tick's midpoint
    (``start <= (k + 0.5) * tick_s < end``); the ticks are those whose midpoint is before the end."""
    end = max([call_s, *(e for _, _, e in segments)])
    count = 0
    while (count + 0.5) * tick_s < end:
        count += 1
    speaks = {side: [False] * count for side in ("user", "agent")}
    for speaker, start, stop in segments:
        for k in range(max(int(start / tick_s) - 2, 0), min(int(stop / tick_s) + 2, count)):  # the ticks near it
            if start <= (k + 0.5) * tick_s < stop:
                speaks[speaker][k] = True
    return speaking_ticks(speaks["user"], speaks["agent"])
