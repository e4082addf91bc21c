"""Synchronous calls work inside a running event loop, as in a Jupyter cell.

Each ``async def`` test below runs inside pytest-asyncio's event loop and calls the public
*synchronous* functions directly, exactly as a notebook cell does (the kernel runs a loop);
the numbers must equal those of the same call made outside any loop. The mechanism
(:mod:`silicolab.core.sync`): an exception keeps its type, the caller's context variables
are visible inside, and no thread, loop or HTTP connection outlives the call.
"""

from __future__ import annotations

import abc
import asyncio
import contextvars
import gc
import inspect
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.discovery.mac_fakes import Oracle
from tests.llm.test_openai_transport import _open_sockets
from tests.support.openai_server import FakeLLMServer

from silicolab.core.errors import InputError
from silicolab.core.fresh import fresh_calls, wants_fresh
from silicolab.core.sync import run_sync, sync_twin
from silicolab.discovery.datasets import load
from silicolab.discovery.mac import asingle_agent, single_agent
from silicolab.envs import make
from silicolab.llm import load_model
from silicolab.runs import Run
from silicolab.scientists import make_scientist, run_episode
from silicolab.studies import load_example
from silicolab.studies.offline import offline_study_models
from silicolab.studies.pipeline import StudyOptions
from silicolab.studies.study import arun_study, run_study

KEY_ENV = "SILICOLAB_TEST_SYNC_KEY"


def _lawyer_study(root: Path) -> dict[str, Any]:
    """The lawyer study in the offline world (scripted subjects), 12 conditions."""
    lawyer = load_example("lawyer")
    options = StudyOptions(conditions=12, jobs=4)
    with Run.create(root, kind="study", slug="lawyer") as run:
        return run_study(lawyer, options, run=run, models=offline_study_models(lawyer, seed=0))


def _study_numbers(record: dict[str, Any]) -> dict[str, Any]:
    main = record["estimation"]["main"]
    return {"r2": main["r2"], "params": main["params"], "rows": record["data"]["rows"]}


async def test_a_study_in_a_running_loop_gives_the_numbers_of_a_script(tmp_path: Path) -> None:
    asyncio.get_running_loop()  # the premise: a loop runs here, as in a Jupyter cell
    inside = _study_numbers(_lawyer_study(tmp_path / "inside"))
    outside = await asyncio.to_thread(lambda: _study_numbers(_lawyer_study(tmp_path / "out")))
    assert inside == outside
    assert len(inside["rows"]) == 12 and 0.0 < inside["r2"]["hired"] < 1.0


def _causalab_scores() -> tuple[dict[str, float], int]:
    lab = make("causalab", suite="3nodes", index=0, seed=1)
    record = run_episode(lab, make_scientist(lab, "random", seed=3), seed=5)
    return record.scores, record.steps


async def test_a_causalab_episode_in_a_running_loop() -> None:
    inside = _causalab_scores()
    assert inside == await asyncio.to_thread(_causalab_scores)
    assert inside[1] > 0 and "shd" in inside[0]


def _single_agent_edges() -> tuple[list[tuple[str, str]], int]:
    auto = load("auto_mpg")
    model = load_model("scripted", fn=Oracle(auto.truth.edges).scripted)
    result = single_agent(auto.data, model=model, variables=auto.variables)
    return sorted(result.graph.edges), result.usage["total"]["calls"]


async def test_a_discovery_method_in_a_running_loop() -> None:
    inside = _single_agent_edges()
    assert inside == await asyncio.to_thread(_single_agent_edges)
    assert inside[0] == sorted(load("auto_mpg").truth.edges) and inside[1] == 5


async def test_generate_in_a_running_loop_answers_as_agenerate() -> None:
    model = load_model("scripted", rules=[("capital", "Paris")])
    sync_reply = model.generate("The capital of France?", temperature=0)
    async_reply = await model.agenerate("The capital of France?", temperature=0)
    assert sync_reply.text == async_reply.text == "Paris"


async def test_an_exception_inside_keeps_its_type_and_message() -> None:
    with pytest.raises(InputError, match="temperature=9"):
        load_model("scripted").generate("x", temperature=9)

    async def boom() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        run_sync(boom())


async def test_the_callers_context_variables_are_visible_inside() -> None:
    mark: contextvars.ContextVar[str] = contextvars.ContextVar("mark", default="unset")

    async def seen() -> tuple[str, bool, str]:
        return mark.get(), wants_fresh(), threading.current_thread().name

    mark.set("the caller's")
    with fresh_calls():
        value, fresh, thread = run_sync(seen(), twin="seen")
    assert (value, fresh) == ("the caller's", True)
    assert thread != threading.current_thread().name  # it ran on the worker thread
    assert mark.get() == "the caller's" and not wants_fresh()


async def test_no_thread_loop_or_connection_outlives_the_call(monkeypatch) -> None:
    """Garbage collection is off while counting, so the client's connections must be
    closed by the calls themselves (the loop-end hook), not found unreachable later; the
    count is taken once the server has stopped, so its side of the sockets is closed too."""
    monkeypatch.setenv(KEY_ENV, "sk-test-sync")
    threads, sockets = threading.active_count(), _open_sockets()
    gc.disable()
    try:
        with FakeLLMServer() as server:
            model = load_model("openai:fake-model", base_url=server.base_url, api_key_env=KEY_ENV)
            replies = [model.generate(f"call {i}").text for i in range(3)]
        assert threading.active_count() == threads
        assert _open_sockets() <= sockets
    finally:
        gc.enable()
    assert all(replies)


async def test_ctrl_c_cancels_the_coroutine_and_waits_for_its_cleanup() -> None:
    """A notebook's stop button raises KeyboardInterrupt in the waiting thread: the
    coroutine is cancelled, its ``finally`` runs, then the interrupt propagates."""
    started, cleaned = threading.Event(), threading.Event()

    async def long_job() -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        finally:
            cleaned.set()

    main = threading.current_thread()

    def press_stop() -> None:
        started.wait()
        import _thread

        assert threading.current_thread() is not main
        _thread.interrupt_main()

    # Ctrl-C as in a Jupyter kernel: the default handler raises KeyboardInterrupt (the
    # test's own loop runner may have installed one that only cancels its task).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    presser = threading.Thread(target=press_stop)
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_sync(long_job())
    finally:
        presser.join()
        signal.signal(signal.SIGINT, previous)
    assert cleaned.is_set()


def test_outside_a_loop_the_call_runs_in_this_thread() -> None:
    async def where() -> str:
        return threading.current_thread().name

    assert run_sync(where()) == threading.current_thread().name


def test_a_twin_carries_its_partners_signature_and_names_it() -> None:
    assert inspect.signature(run_study) == inspect.signature(arun_study)
    assert run_study.__wrapped__ is arun_study  # type: ignore[attr-defined]
    assert ":func:`arun_study`" in (run_study.__doc__ or "")
    assert "running event loop" in (run_study.__doc__ or "")
    assert single_agent.__name__ == "single_agent" and single_agent.__wrapped__ is asingle_agent  # type: ignore[attr-defined]

    class Base(abc.ABC):
        @abc.abstractmethod
        async def aname(self) -> str:
            """The name."""

        name = sync_twin(aname)  # concrete: only the partner is abstract

    class Child(Base):
        async def aname(self) -> str:
            return "child"

    assert Child().name() == "child"  # a method twin runs the subclass's override
    with pytest.raises(ValueError, match="no leading 'a'"):
        sync_twin(Base.aname, name="aname")
