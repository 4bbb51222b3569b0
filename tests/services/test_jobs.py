"""services.jobs: a task in a worker thread, its events kept, followed and replayed."""

from __future__ import annotations

import threading

import pytest

from keiri_agent.errors import UserInputError
from keiri_agent.events import EventCallback, EventEmitter
from keiri_agent.services.jobs import Job, JobNotDone


def test_events_are_followed_in_order_and_the_result_is_kept() -> None:
    def task(emit: EventCallback) -> str:
        emitter = EventEmitter("plan", "run_1", emit)
        for index in range(5):
            emitter.emit("tick", {"i": index})
        return "done"

    job = Job(task, name="test").start()
    seen = [event.payload["i"] for event in job.follow()]
    assert seen == [0, 1, 2, 3, 4]
    assert job.done and job.error is None and job.result() == "done"
    assert [e.seq for e in job.events()] == [1, 2, 3, 4, 5]
    assert [e.seq for e in job.events_after(3)] == [4, 5]
    assert list(job.follow(start=5)) == []  # a late consumer that saw everything


def test_a_late_consumer_replays_and_continues_while_the_task_runs() -> None:
    release = threading.Event()

    def task(emit: EventCallback) -> int:
        emitter = EventEmitter("helpdesk", "q", emit)
        emitter.emit("first")
        release.wait(10)
        emitter.emit("second")
        return 2

    job = Job(task).start()
    assert [e.kind for e in job.next_events(0, timeout=10)] == ["first"]
    with pytest.raises(JobNotDone):
        job.result()
    assert job.next_events(1, timeout=0.01) == []  # timed out: nothing new yet
    assert list(job.follow(start=1, timeout=0.01)) == []
    # a Streamlit rerun: replay what was received, then keep following
    replayed = [e.kind for e in job.events()]
    release.set()
    followed = [e.kind for e in job.follow(start=len(replayed))]
    assert replayed + followed == ["first", "second"]
    assert job.result() == 2


def test_an_error_is_kept_and_re_raised_by_result() -> None:
    def task(emit: EventCallback) -> None:
        EventEmitter("analysis", "t", emit).emit("start")
        raise UserInputError("だめです")

    job = Job(task).start()
    assert job.wait(10)
    assert isinstance(job.error, UserInputError)
    with pytest.raises(UserInputError, match="だめです"):
        job.result()
    assert [e.kind for e in job.follow()] == ["start"]


def test_cancel_is_cooperative_through_cancel_event() -> None:
    def task(emit: EventCallback) -> str:
        job.cancel_event.wait(10)
        return "stopped" if job.cancel_event.is_set() else "timeout"

    job = Job(task)  # the task refers to its job: started once ``job`` exists
    job.start()
    assert not job.cancel_requested
    job.cancel()
    assert job.cancel_requested
    assert job.wait(10) and job.result() == "stopped"


def test_many_producer_threads_and_consumers_see_every_event_once() -> None:
    producers, per_thread = 8, 250

    def task(emit: EventCallback) -> int:
        emitter = EventEmitter("helpdesk", "parallel", emit)

        def work() -> None:
            for _ in range(per_thread):
                emitter.emit("tick")

        threads = [threading.Thread(target=work) for _ in range(producers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return emitter.last_seq

    job = Job(task).start()
    results: list[list[int]] = []

    def consume() -> None:
        results.append([event.seq for event in job.follow()])

    consumers = [threading.Thread(target=consume) for _ in range(4)]
    for consumer in consumers:
        consumer.start()
    for consumer in consumers:
        consumer.join(30)
    total = producers * per_thread
    assert job.result() == total
    assert len(results) == 4
    assert all(seqs == list(range(1, total + 1)) for seqs in results)
    assert len(job.events_after(total - 10)) == 10
