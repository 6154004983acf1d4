"""Patrol steps asked for by calls: made in one background thread, never by the caller, and asks
that come while a step runs add up to one more step, not one per ask."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from live.asks import Asks


def wait_for(probe: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


@dataclass
class Root:
    """A root that takes patrol steps: each step is `step(label)`."""

    label: str
    step: Callable[[str], None]

    def patrol(self) -> None:
        self.step(self.label)


def test_an_ask_returns_at_once_and_the_step_runs_in_another_thread() -> None:
    release, steps = threading.Event(), []

    def step(label: str) -> None:
        steps.append((threading.current_thread().name, label))
        release.wait(10)

    asks = Asks(threading.Event())
    asks.ask([Root("docs", step)])  # returns although the step blocks
    wait_for(lambda: steps)
    assert steps == [("patrol", "docs")]
    release.set()
    asks.join(10)


def test_asks_made_during_a_step_add_up_to_one_more_step_per_root() -> None:
    started, release, steps = threading.Event(), threading.Event(), []

    def step(label: str) -> None:
        steps.append(label)
        started.set()
        release.wait(10)

    asks = Asks(threading.Event())
    asks.ask([Root("a", step)])
    started.wait(10)
    for _ in range(50):
        asks.ask([Root("a", step), Root("b", step)])
    release.set()
    wait_for(lambda: len(steps) == 3)
    asks.join(10)
    assert steps == ["a", "a", "b"]


def test_once_stopping_no_step_is_started_and_join_waits_for_the_one_under_way() -> None:
    stopping, started, steps = threading.Event(), threading.Event(), []

    def step(label: str) -> None:
        steps.append(label)
        started.set()
        time.sleep(0.1)

    asks = Asks(stopping)
    asks.ask([Root("a", step)])
    started.wait(10)
    stopping.set()
    asks.ask([Root("b", step)])
    asks.join(10)
    time.sleep(0.05)
    assert steps == ["a"]
