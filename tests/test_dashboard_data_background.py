"""dashboard.data.background: one registry of background jobs, one start, one stop."""

from __future__ import annotations

import doctest
import threading

import pytest

import dashboard.data.background as background_module
from dashboard.data import background, comparison


@pytest.fixture
def running(monkeypatch):
    """A registry of this test's own (the process's jobs are left alone)."""
    monkeypatch.setattr(background_module, "_JOBS", {})
    monkeypatch.setattr(background_module, "_EXITING", threading.Event())


def test_the_module_doctests_pass(running):
    assert doctest.testmod(background_module).failed == 0


def test_a_job_runs_once_per_key_and_a_complete_one_is_not_started_again(running):
    runs: list[int] = []

    def work(stopped) -> bool:
        runs.append(1)
        return True

    first = background.start(("k", 1), work, group="g")
    first.join(10)
    assert background.start(("k", 1), work, group="g") is first and runs == [1]
    other = background.start(("k", 2), work, group="g")
    other.join(10)
    assert other is not first and runs == [1, 1] and first.name == "g"


def test_a_newer_job_of_a_group_stops_the_older_and_a_stopped_one_starts_again(running):
    started, release = threading.Event(), threading.Event()

    def slow(stopped) -> bool:
        started.set()
        release.wait(10)
        return not stopped()

    old = background.start("old", slow, group="g", supersede=True)
    assert started.wait(10)
    new = background.start("new", lambda stopped: True, group="g", supersede=True)
    release.set()
    old.join(10)
    new.join(10)
    [old_job] = [j for j in background.jobs("g") if j.key == "old"]
    assert old_job.cancelled.is_set() and not old_job.complete.is_set()
    again = background.start("old", lambda stopped: True, group="g", supersede=True)
    assert again is not old  # stopped before it was complete: started anew
    again.join(10)


def test_exit_waits_for_the_alpha_warming_threads(running, two_runs_view, monkeypatch):
    """Regression: the alpha-warming threads were not waited for at exit; one killed inside a
    DuckDB query aborted the interpreter ("terminate called after throwing an instance of",
    seen at 100,000 answers). The exit handler waits for every background job."""
    inside, release = threading.Event(), threading.Event()

    def in_a_query(*args):
        inside.set()
        release.wait(30)

    monkeypatch.setattr(comparison, "pair_deltas", in_a_query)
    monkeypatch.setattr(comparison, "pair_check", lambda *args: None)
    thread = comparison.warm_pair(two_runs_view, 1, 2, 0.5)
    assert inside.wait(30)
    stopper = threading.Thread(target=background.stop_all)
    try:
        stopper.start()
        stopper.join(0.5)
        assert stopper.is_alive() and thread.is_alive()  # exit waits for the query's end
        release.set()
        stopper.join(30)
        assert not stopper.is_alive() and not thread.is_alive()
    finally:
        release.set()
        stopper.join(30)


def test_stop_stops_the_running_jobs_of_a_group_and_they_start_again_when_asked(running):
    release = threading.Event()

    def slow(stopped) -> bool:
        release.wait(30)
        return not stopped()

    warm = background.start("warm", slow, group="warm")
    other = background.start("other", slow, group="other")
    stopper = threading.Thread(target=background.stop, args=("warm",))
    stopper.start()
    stopper.join(0.3)
    assert stopper.is_alive()  # it waits for the job's next check
    release.set()
    stopper.join(30)
    other.join(30)
    by_key = {j.key: j for j in background.jobs()}
    assert by_key["warm"].cancelled.is_set() and not by_key["warm"].complete.is_set()
    assert by_key["other"].complete.is_set()  # another group is left alone
    assert background.stop() == 0  # nothing runs now
    again = background.start("warm", lambda stopped: True, group="warm")
    assert again is not warm
    again.join(30)
    assert not background_module._EXITING.is_set()  # unlike stop_all, later jobs still start
