"""The owned-run functions written once (shared.jobs.runs), for a kind that brings nothing but its
model, its name and its errors: who sees a run, how runs are listed, and what stop and resume do
and say in each state. The training and evolution suites run the same functions end to end."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from unittest import mock

import pytest
from sqlalchemy import delete, update
from sqlalchemy.orm import Session

from shared.db.models import EvolutionRun, Job, User
from shared.jobs import JobRoute, OwnedRunKind, create_job
from shared.queue import QUEUE_TRAINING
from shared.states import JobStatus, UserRole

ROUTE = JobRoute(kind="test-owned-run", task_name="arena.tests.owned_run_chunk", queue=QUEUE_TRAINING)


class SampleNotFound(Exception):
    def __init__(self, run_id: uuid.UUID) -> None:
        super().__init__(f"sample run {run_id} not found")


class SampleStateError(Exception):
    pass


@pytest.fixture
def announced() -> list[tuple[uuid.UUID, JobStatus]]:
    return []


@pytest.fixture
def kind(announced: list[tuple[uuid.UUID, JobStatus]]) -> OwnedRunKind[EvolutionRun]:
    """A third kind over an existing table: only its name, errors and announcements are its own."""
    return OwnedRunKind(
        EvolutionRun,
        noun="sample run",
        not_found=SampleNotFound,
        state_error=SampleStateError,
        finished=lambda run: f"sample run {run.id} is finished: start another",
        log=logging.getLogger("tests.owned_runs"),
        announce=lambda run, status: announced.append((run.id, status)),
    )


@pytest.fixture
def send_task(monkeypatch: pytest.MonkeyPatch) -> mock.Mock:
    """Chunk messages, recorded instead of sent: no worker takes this kind's chunks."""
    send = mock.Mock()
    monkeypatch.setattr("shared.jobs.store.send_task", send)
    return send


@pytest.fixture
def make_user(db_session: Session) -> Callable[[UserRole], User]:
    def make(role: UserRole = UserRole.USER) -> User:
        user = User(name=f"owned-{uuid.uuid4().hex[:10]}", role=role)
        db_session.add(user)
        db_session.commit()
        return user

    return make


@pytest.fixture
def make_run(db_session: Session) -> Iterator[Callable[..., EvolutionRun]]:
    """Committed runs (stop and resume work in their own transactions), deleted with their jobs
    afterwards so that no queued job of this kind outlives the test."""
    job_ids: list[uuid.UUID] = []

    def make(owner: User, status: JobStatus = JobStatus.QUEUED) -> EvolutionRun:
        job = create_job(db_session, ROUTE)
        job.status = status
        run = EvolutionRun(job_id=job.id, owner_id=owner.id, game="battle", name="sample")
        db_session.add(run)
        db_session.commit()
        job_ids.append(job.id)
        return run

    yield make
    db_session.rollback()
    db_session.execute(delete(Job).where(Job.id.in_(job_ids)))
    db_session.commit()


def test_a_run_is_seen_by_its_owner_and_admins_only(
    db_session: Session,
    kind: OwnedRunKind[EvolutionRun],
    make_user: Callable[[UserRole], User],
    make_run: Callable[..., EvolutionRun],
) -> None:
    owner, stranger, admin = make_user(UserRole.USER), make_user(UserRole.USER), make_user(UserRole.ADMIN)
    run = make_run(owner)
    assert kind.get_run(db_session, owner, run.id).id == run.id
    assert kind.get_run(db_session, admin, run.id).id == run.id
    assert kind.get_run(db_session, owner, run.id, lock=True).job.status == JobStatus.QUEUED
    db_session.rollback()
    with pytest.raises(SampleNotFound, match=f"sample run {run.id} not found"):
        kind.get_run(db_session, stranger, run.id)
    missing = uuid.uuid4()
    with pytest.raises(SampleNotFound, match=f"sample run {missing} not found"):
        kind.get_run(db_session, admin, missing)


def test_runs_are_listed_newest_first_by_owner_and_status(
    db_session: Session,
    kind: OwnedRunKind[EvolutionRun],
    make_user: Callable[[UserRole], User],
    make_run: Callable[..., EvolutionRun],
) -> None:
    owner, other, admin = make_user(UserRole.USER), make_user(UserRole.USER), make_user(UserRole.ADMIN)
    mine = [make_run(owner), make_run(owner, JobStatus.STOPPED), make_run(owner)]
    theirs = make_run(other)

    rows, total = kind.list_runs(db_session, owner, None, 2, 0)
    assert total == 3
    assert [r.id for r in rows] == [mine[2].id, mine[1].id]
    rows, total = kind.list_runs(db_session, owner, None, 2, 2)
    assert [r.id for r in rows] == [mine[0].id]
    rows, total = kind.list_runs(db_session, owner, JobStatus.STOPPED, 10, 0)
    assert ([r.id for r in rows], total) == ([mine[1].id], 1)

    rows, total = kind.list_runs(db_session, admin, JobStatus.QUEUED, 1000, 0)
    assert {mine[0].id, mine[2].id, theirs.id} <= {r.id for r in rows}
    assert mine[1].id not in {r.id for r in rows}
    assert total == len(rows)


def _job_status(run: EvolutionRun) -> JobStatus:
    """The status of the run's job now. Read through a call: an assert on `run.job.status` would
    narrow it for mypy past the calls that change it."""
    return run.job.status


def test_stop_and_resume_say_why_they_refuse(
    db_session: Session,
    kind: OwnedRunKind[EvolutionRun],
    make_user: Callable[[UserRole], User],
    make_run: Callable[..., EvolutionRun],
    announced: list[tuple[uuid.UUID, JobStatus]],
    send_task: mock.Mock,
) -> None:
    owner = make_user(UserRole.USER)
    run = make_run(owner)
    with pytest.raises(SampleStateError, match=f"^sample run {run.id} is queued already: nothing to resume$"):
        kind.resume_run(db_session, run)

    assert kind.stop_run(db_session, run) == JobStatus.STOPPED
    assert _job_status(run) == JobStatus.STOPPED
    assert kind.stop_run(db_session, run) == JobStatus.STOPPED  # stopping a stopped run changes nothing
    assert kind.resume_run(db_session, run) == JobStatus.QUEUED
    assert _job_status(run) == JobStatus.QUEUED
    assert announced == [(run.id, JobStatus.STOPPED), (run.id, JobStatus.STOPPED), (run.id, JobStatus.QUEUED)]
    send_task.assert_called_once_with(ROUTE.task_name, ROUTE.queue, args=[str(run.job_id), 0])

    db_session.execute(update(Job).where(Job.id == run.job_id).values(status=JobStatus.FINISHED))
    db_session.commit()
    with pytest.raises(SampleStateError, match=f"^sample run {run.id} is finished: start another$"):
        kind.resume_run(db_session, run)
    with pytest.raises(
        SampleStateError,
        match=f"^sample run {run.id} is finished: only a queued or running run can be stopped$",
    ):
        kind.stop_run(db_session, run)
    assert len(announced) == 3, "a refused stop or resume announces nothing"


def test_a_new_runs_chunk_that_cannot_be_sent_is_left_to_the_reaper(
    kind: OwnedRunKind[EvolutionRun],
    make_user: Callable[[UserRole], User],
    make_run: Callable[..., EvolutionRun],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    run = make_run(make_user(UserRole.USER))

    monkeypatch.setattr("shared.jobs.store.send_task", mock.Mock(side_effect=ConnectionError("broker down")))
    with caplog.at_level(logging.ERROR, logger="tests.owned_runs"):
        kind.enqueue_quietly(run, run.job)
    logged = f"sample run {run.id}: could not send its chunk (the reaper will resend it): broker down"
    assert logged in caplog.text
