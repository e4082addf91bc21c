"""A discrete-event simulation of a large study on a Ray cluster against a provider's limits.

One condition is a conversation: ``calls_per_condition`` LLM calls one after another
(the next statement needs the last). ``nodes * jobs_per_node`` conditions are in flight
(``--jobs``). Every call asks the driver's LLM service for a slot (a round trip that
queues for the service's single event loop), waits for the global limits (calls in
flight, requests and tokens per minute: token buckets refilled continuously), spends the
provider's latency (lognormal), then tells the service it is done (a second round trip).
The service's per-message CPU and the round trip are measured by ``bench_ray.py``.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import asdict, dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Plan:
    """The study, the cluster and the provider of the plan in docs/scale.md."""

    conditions: int = 10_000
    calls_per_condition: int = 25
    input_tokens: int = 1_500
    output_tokens: int = 100
    latency_median_s: float = 1.5
    latency_sigma: float = 0.5
    nodes: int = 100
    jobs_per_node: int = 8
    max_concurrency: int = 512
    requests_per_minute: float = 10_000
    tokens_per_minute: float = 10_000_000
    round_trip_s: float = 0.002
    service_cpu_s: float = 0.0001
    seed: int = 0


class _Bucket:
    """A token bucket of ``per_minute`` units refilled continuously, on simulated time."""

    def __init__(self, per_minute: float):
        self.capacity, self.rate, self.level, self.at = per_minute, per_minute / 60, per_minute, 0.0

    def ready_at(self, now: float, amount: float) -> float:
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now
        return now if self.level >= amount else now + (amount - self.level) / self.rate


def simulate(plan: Plan) -> dict[str, Any]:
    """Run ``plan``; the wall time, the throughput reached and what held it back."""
    rng = random.Random(plan.seed)
    events: list[tuple[float, int, str, int]] = []
    counter = iter(range(10**12))
    left = {c: plan.calls_per_condition for c in range(plan.conditions)}
    pending = deque(range(plan.conditions))
    waiting: deque[tuple[int, float]] = deque()  # (condition, time it asked)
    rpm, tpm = _Bucket(plan.requests_per_minute), _Bucket(plan.tokens_per_minute)
    tokens = plan.input_tokens + plan.output_tokens
    in_flight, service_free, service_busy, waited, wake = 0, 0.0, 0.0, 0.0, math.inf
    mu = math.log(plan.latency_median_s)
    mean_latency = plan.latency_median_s * math.exp(plan.latency_sigma**2 / 2)
    slots = min(plan.nodes * plan.jobs_per_node, plan.max_concurrency)

    def push(at: float, kind: str, cond: int) -> None:
        heapq.heappush(events, (at, next(counter), kind, cond))

    def service(at: float) -> float:  # the service's one loop: messages queue FIFO
        nonlocal service_free, service_busy
        start = max(at, service_free)
        service_free = start + plan.service_cpu_s
        service_busy += plan.service_cpu_s
        return service_free

    def admit(now: float) -> None:
        nonlocal in_flight, waited, wake
        while waiting and in_flight < plan.max_concurrency:
            ready = max(rpm.ready_at(now, 1), tpm.ready_at(now, tokens))
            if ready > now:
                if ready < wake:
                    wake = ready
                    push(ready, "wake", -1)
                return
            cond, asked = waiting.popleft()
            rpm.level -= 1
            tpm.level -= tokens
            in_flight += 1
            waited += now - asked
            latency = rng.lognormvariate(mu, plan.latency_sigma)
            push(now + plan.round_trip_s / 2 + latency, "done", cond)

    for _ in range(min(plan.nodes * plan.jobs_per_node, plan.conditions)):
        push(0.0, "ask", pending.popleft())
    now = 0.0
    while events:
        now, _, kind, cond = heapq.heappop(events)
        if kind == "ask":  # the begin message travels to the service and queues there
            push(service(now + plan.round_trip_s / 2), "queue", cond)
        elif kind == "queue":  # the service handles it: wait for the limits
            waiting.append((cond, now))
        elif kind == "done":  # the call is answered: the end message frees the slot
            push(service(now + plan.round_trip_s / 2), "free", cond)
        elif kind == "free":
            in_flight -= 1
            left[cond] -= 1
            nxt = cond if left[cond] else (pending.popleft() if pending else None)
            if nxt is not None:
                push(now + plan.round_trip_s / 2, "ask", nxt)
        else:
            wake = math.inf
        admit(now)
    calls = plan.conditions * plan.calls_per_condition
    return {
        "wall_min": round(now / 60, 1),
        "calls_per_min": round(calls / now * 60),
        "tokens_per_min": round(calls * tokens / now * 60),
        "mean_wait_for_limits_s": round(waited / calls, 3),
        "service_utilization": round(service_busy / now, 4),
        "bound_min": {
            "requests_per_minute": round(calls / plan.requests_per_minute, 1),
            "tokens_per_minute": round(calls * tokens / plan.tokens_per_minute, 1),
            "calls_in_flight": round(calls * mean_latency / slots / 60, 1),
        },
    }


def simulate_plan(plan: Plan) -> dict[str, Any]:
    """The plan of docs/scale.md on 100 nodes, and the same study on 10 and 1 nodes."""
    out: dict[str, Any] = {"plan": asdict(plan)}
    for nodes in (100, 10, 1):
        out[f"{nodes}_nodes"] = simulate(replace(plan, nodes=nodes))
    return out


__all__ = ["Plan", "simulate", "simulate_plan"]
