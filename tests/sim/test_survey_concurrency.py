"""A respondent's survey questions asked at once (``concurrent=True``, issue 28).

Against the real :class:`FakeLLMServer` on 127.0.0.1: the concurrent answers equal the
sequential ones for respondents whose prompts do not read their earlier acts, whatever
order the replies come back in; the server sees one respondent's questions overlap.
Counts only, no timing asserts."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from silicolab.llm import load_model
from silicolab.sim import GenerativeAgent, Identity
from silicolab.sim.survey import SurveyQuestion, aask_survey

CONTEXT = "Alice sold Bob a mug. Transcript:\n1. Alice: Ten dollars?\n2. Bob: Deal."
PRICES = {"Alice": "15", "Bob": "12", "Carol": "9"}
QUESTIONS = ("price", "satisfied", "deal")


def survey(names: list[str], *, parse: bool) -> list[SurveyQuestion]:
    out = []
    for name in names:
        if parse:  # its free answer is ambiguous: a parse act follows
            levels = ("not", "somewhat", "very")
            out.append(SurveyQuestion("sat", "How satisfied are you?", "ordinal", levels, name))
        out += [
            SurveyQuestion("price", "What price was paid?", "continuous", addressee=name),
            SurveyQuestion("deal", "Was a deal reached?", "binary", addressee=name),
        ]
    return out


def text_of(body: dict[str, Any]) -> tuple[str, str]:
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    return system, body["messages"][-1]["content"]


def replies(slowest_first: bool) -> Any:
    """Answers by agent and question; the delay orders the completions (reversed or not)."""

    async def reply(body: dict[str, Any]) -> str:
        system, user = text_of(body)
        name = re.search(r"You are (\w+)\.", system).group(1)  # type: ignore[union-attr]
        if "Which option matches" in user:
            return '{"choice": 3}'
        rank = next(i for i, word in enumerate(("price", "deal", "satisfied")) if word in user)
        await asyncio.sleep(0.01 * (3 - rank if slowest_first else rank))
        if rank == 0:
            return f"{PRICES[name]} dollars, the agreed price."
        return "Yes, we agreed." if rank == 1 else "Quite content overall."

    return reply


def agents(model: Any, names: list[str], *, memory: bool = False) -> dict[str, GenerativeAgent]:
    people = {
        n: GenerativeAgent(n, model, [Identity(f"{n} took part in a mug sale.")], sample_key="u1")
        for n in names
    }
    for person in people.values():
        if memory:  # remembers its acts and recalls them in later prompts
            person.attach_memory(k=5)
    return people


async def run(server: Any, names: list[str], *, concurrent: bool, parse: bool, **kw: Any):
    server.reset_stats()
    model = load_model("openai:fake-model", base_url=server.base_url, max_concurrency=16)
    people = agents(model, names, **kw)
    answers = await aask_survey(
        people, survey(names, parse=parse), context=CONTEXT, concurrent=concurrent
    )
    stats = server.stats
    return answers, stats.requests_log, stats.max_in_flight, people


def canon(bodies: list[dict[str, Any]], *, drop: tuple[str, ...] = ()) -> list[str]:
    return sorted(
        json.dumps({k: v for k, v in b.items() if k not in drop}, sort_keys=True) for b in bodies
    )


async def test_concurrent_answers_equal_sequential_ones(llm_server_factory) -> None:
    server = llm_server_factory(latency_s=0.1, reply=replies(slowest_first=True))
    seq, seq_bodies, seq_peak, _ = await run(server, ["Bob"], concurrent=False, parse=False)
    con, con_bodies, con_peak, people = await run(server, ["Bob"], concurrent=True, parse=False)
    assert [a.value for a in seq] == [12.0, 1] == [a.value for a in con]
    assert seq == con
    assert canon(seq_bodies) == canon(con_bodies)  # same requests, seeds included
    assert (seq_peak, con_peak) == (1, 2)  # one respondent's questions overlapped
    bob = people["Bob"]
    assert bob.step == 2 and [s.step for s in bob.log.steps] == [0, 1]


async def test_parse_acts_follow_and_order_of_completion_does_not_matter(
    llm_server_factory,
) -> None:
    names = ["Alice", "Bob", "Carol"]
    server = llm_server_factory(latency_s=0.1, reply=replies(slowest_first=True))
    seq, seq_bodies, seq_peak, _ = await run(server, names, concurrent=False, parse=True)
    con, con_bodies, con_peak, _ = await run(server, names, concurrent=True, parse=True)
    server.reply = replies(slowest_first=False)  # the completions now come back reversed
    again, again_bodies, _, people = await run(server, names, concurrent=True, parse=True)

    expected = [v for n in names for v in (2, float(PRICES[n]), 1)]
    assert [a.value for a in seq] == expected
    assert con == seq and again == seq
    assert len(con_bodies) == len(seq_bodies) == 12  # 9 answers + 3 parse acts
    # the same prompts; only the act numbers (seeds) differ by the rule "answers first,
    # then parses" (in turn: satisfied, its parse, price, deal), whatever finishes first
    assert canon(seq_bodies, drop=("seed",)) == canon(con_bodies, drop=("seed",))
    assert canon(con_bodies) == canon(again_bodies)
    assert canon(seq_bodies) != canon(con_bodies)
    assert seq_peak <= 3 and con_peak >= 6  # three respondents, each with overlapping calls
    alice = people["Alice"]
    assert [(s.step, s.kind) for s in alice.log.steps] == [
        (0, "free"),
        (1, "free"),
        (2, "free"),
        (3, "choice"),
    ]


async def test_a_remembering_agent_answers_each_question_as_if_first(llm_server_factory) -> None:
    server = llm_server_factory(reply=replies(slowest_first=True))
    _, seq_bodies, _, _ = await run(server, ["Bob"], concurrent=False, parse=False, memory=True)
    _, con_bodies, _, people = await run(server, ["Bob"], concurrent=True, parse=False, memory=True)
    seq_systems = [text_of(b)[0] for b in seq_bodies]
    con_systems = [text_of(b)[0] for b in con_bodies]
    assert "Bob: 12 dollars" in seq_systems[1]  # in turn: the second prompt recalls the first
    assert not any("Bob: 12 dollars" in s for s in con_systems)  # at once: neither does
    assert [m.text for m in people["Bob"].memory.items()] == [
        "Bob: 12 dollars, the agreed price.",
        "Bob: Yes, we agreed.",
    ]
