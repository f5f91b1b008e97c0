"""Writes the Inspect AI logs the tests read (tests/test_inspect_source.py), with ``inspect eval``'s
own Python entry point and its ``mockllm`` model, so that what the tests compare with is what Inspect
computed and wrote: in an environment with inspect_ai (0.3.285 here), from this folder::

    python make_logs.py

Two tasks, each over three epochs, written as ``.eval`` and as ``.json``: ``arith``, a tool-using
task (the model calls ``add``, then answers) scored by ``match`` and by ``model_graded_qa`` (a
scripted grader); its sample ``s4`` runs into the message limit, and ``s5`` errors (the eval goes on,
``fail_on_error=False``); ``trivia``, scored by ``includes``. Token counts are Inspect's for mockllm,
with tiktoken's count replaced by a length (tiktoken downloads its encodings, and this machine has no
network).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import inspect_ai.model._model as _model
from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import includes, match, model_graded_qa
from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
from inspect_ai.tool import tool

_model.count_text_tokens = lambda text: max(1, len(text) // 4)

ANSWERS = {"s1": "2", "s2": "5", "s3": "6", "s4": "8"}  # s2's answer is wrong; s4 never gets to answer


@tool
def add():
    async def execute(x: int, y: int):
        """Add two numbers.

        Args:
            x: First number.
            y: Second number.
        """
        return x + y
    return execute


@solver
def fails_on(sample_id: str):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == sample_id:
            raise RuntimeError(f"the scripted failure of sample {sample_id}")
        return state
    return solve


def arith_model():
    """Per epoch and sample, in the order Inspect asks: a call of add, then the answer (s4 calls
    add until the message limit stops it)."""
    outputs = []
    for _ in range(3):
        for sid in ("s1", "s2", "s3", "s4"):
            outputs.append(ModelOutput.for_tool_call("mockllm/model", "add", {"x": 1, "y": 1}))
            outputs += [ModelOutput.for_tool_call("mockllm/model", "add", {"x": 2, "y": 2})] * 5 if sid == "s4" else [
                ModelOutput.from_content("mockllm/model", ANSWERS[sid])]
    return get_model("mockllm/model", custom_outputs=outputs)


@task
def arith():
    grades = [ModelOutput.from_content("mockllm/grader", "GRADE: C" if n % 3 else "GRADE: I") for n in range(60)]
    return Task(dataset=[Sample(id=sid, input=f"What is {n} + {n}?", target=str(2 * n))
                         for n, sid in enumerate(("s1", "s2", "s3", "s4", "s5"), start=1)],
                solver=[fails_on("s5"), use_tools(add()), generate()],
                scorer=[match(), model_graded_qa(model=get_model("mockllm/grader", custom_outputs=grades))],
                epochs=3, message_limit=8)


@task
def trivia():
    return Task(dataset=[Sample(id=f"q{n}", input=f"Name colour {n}.", target=colour)
                         for n, colour in enumerate(("red", "green", "blue"), start=1)],
                solver=[generate()], scorer=includes(), epochs=3)


def trivia_model():
    said = ["red", "green", "purple", "the colour red", "grey", "blue", "red", "green", "blue"]
    return get_model("mockllm/model", custom_outputs=[ModelOutput.from_content("mockllm/model", s) for s in said])


if __name__ == "__main__":
    out = Path(__file__).parent / "logs"
    shutil.rmtree(out, ignore_errors=True)
    for log_format in ("eval", "json"):
        eval(arith(), model=arith_model(), log_dir=str(out), log_format=log_format, fail_on_error=False,
             max_samples=1, display="none")
        eval(trivia(), model=trivia_model(), log_dir=str(out), log_format=log_format, max_samples=1, display="none")
    for path in sorted(out.iterdir()):
        print(path.name, path.stat().st_size)
