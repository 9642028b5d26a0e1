"""Backups of a running system: `python -m shared.db.backup dump` while a match-runner worker is in
the middle of a match, `restore` into a fresh database, and the restored database holds exactly the
dump's snapshot, sits at the Alembic head and serves a real gateway. Plus the command's refusals.

The dump's snapshot is checked against the source without stopping the worker: every row the
running match can still change (that match, its participants and replay, its two bots and their
ratings) is left out of the table checksums, and every other row must be identical.
"""

from __future__ import annotations

import contextlib
import io
import secrets
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg import sql

from shared.config import get_settings
from shared.db.backup import Target, main
from shared.db.embedded import libpq_url
from shared.db.migrations import ALEMBIC_INI, migrate
from shared.db.models import User
from shared.db.session import get_engine, session_scope
from shared.matches import create_match, enqueue_match
from shared.ports import free_port
from shared.states import MatchStatus, UserRole
from tests.support.bot_processes import RunningBot, start_bot
from tests.support.databases import create_database, drop_database, pg_available
from tests.support.match_runner import SMALL_RACE, start_worker
from tests.support.processes import PYTHON, ManagedProcess

pytestmark = pytest.mark.slow

LONG_RACE = {"laps": 3, "max_turns": 120}
"""The match that runs through the dump: ~120 turns against bots that take 50 ms a turn."""


@dataclass
class Seeded:
    source_url: str
    restored_url: str
    archive: Path
    worker: ManagedProcess
    api_key: str
    user_name: str
    finished_bots: list[uuid.UUID]
    running_bots: list[uuid.UUID]
    finished_match: uuid.UUID
    running_match: uuid.UUID
    queued_match: uuid.UUID
    restore_output: str

    def excluded(self) -> dict[str, tuple[str, list[Any]]]:
        """Rows the running match may still change after the snapshot: left out of the checksums."""
        match, bots = self.running_match, self.running_bots
        return {
            "matches": ("id <> %s", [match]),
            "match_participants": ("match_id <> %s", [match]),
            "replays": ("match_id <> %s", [match]),
            "bots": ("id <> ALL(%s)", [bots]),
            "ratings": ("bot_id <> ALL(%s)", [bots]),
        }


def _connect(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(libpq_url(url), autocommit=True)


def table_digests(url: str, excluded: dict[str, tuple[str, list[Any]]]) -> dict[str, tuple[int, str]]:
    """Per table of the public schema: (rows, md5 of the rows' text in order), less `excluded`."""
    digests = {}
    with _connect(url) as conn:
        tables = [
            row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        ]
        for table in tables:
            where, params = excluded.get(table, ("true", []))
            query = sql.SQL(
                "SELECT count(*), coalesce(md5(string_agg(t::text, E'\\n' ORDER BY t::text)), '') "
                "FROM public.{} AS t WHERE " + where
            ).format(sql.Identifier(table))
            row = conn.execute(query, params).fetchone()
            assert row is not None
            digests[table] = (int(row[0]), str(row[1]))
    return digests


def sequences(url: str) -> dict[str, int | None]:
    with _connect(url) as conn:
        return dict(
            conn.execute(
                "SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'public'"
            ).fetchall()
        )


def match_row(url: str, match_id: uuid.UUID) -> dict[str, Any]:
    with _connect(url) as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cursor:
        row = cursor.execute(
            "SELECT m.status, m.heartbeat_at, m.seed, r.match_id IS NOT NULL AS has_replay "
            "FROM matches m LEFT JOIN replays r ON r.match_id = m.id WHERE m.id = %s",
            (match_id,),
        ).fetchone()
    assert row is not None, f"match {match_id} is not in {url}"
    return row


def wait_status(
    url: str, match_id: uuid.UUID, wanted: set[str], worker: ManagedProcess, timeout: float = 60
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    row: dict[str, Any] = {}
    while time.monotonic() < deadline:
        row = match_row(url, match_id)
        if row["status"] in wanted and (row["status"] != MatchStatus.RUNNING or row["heartbeat_at"]):
            return row
        assert worker.alive(), f"worker died:\n{worker.log()[-3000:]}"
        time.sleep(0.05)
    raise AssertionError(f"match {match_id} not {wanted} within {timeout}s: {row}\n{worker.log()[-3000:]}")


def head_revisions() -> set[str]:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    return set(ScriptDirectory.from_config(Config(str(ALEMBIC_INI))).get_heads())


def seed(url: str, fast: RunningBot, slow: RunningBot) -> tuple[str, str, list[uuid.UUID], list[uuid.UUID]]:
    """A user with an API key and four health-checked HTTP bots, through the domain functions the
    gateway uses; two bots answer at once, two take 50 ms a turn."""
    from services.gateway.users.service import create_user
    from shared.bots.service import register_http_bot

    settings = get_settings()
    name = f"backup-{uuid.uuid4().hex[:8]}"
    with session_scope(url) as session:
        _, _, api_key = create_user(session, settings, name, UserRole.USER)
        owner = session.query(User).filter_by(name=name).one()
        ids = []
        for index, bot in enumerate([fast, fast, slow, slow]):
            registered = register_http_bot(
                session,
                settings,
                owner,
                name=f"{bot.mode}-{index}-{uuid.uuid4().hex[:6]}",
                game="podracing",
                endpoint=bot.endpoint,
                secret=bot.secret,
            )
            session.flush()
            ids.append(registered.bot.id)
    return api_key, name, ids[:2], ids[2:]


def queue(url: str, bots: list[uuid.UUID], config: dict[str, Any], send: bool = True) -> uuid.UUID:
    with session_scope(url) as session:
        match_id = create_match(session, game="podracing", bot_ids=bots, seed=7, config=dict(config)).id
    if send:
        enqueue_match(match_id)
    return match_id


def quiet_main(*argv: str) -> tuple[int, str]:
    """Run the command in this process; its exit status and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def seeded(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:  # noqa: ARG001 (requested for its side effect)
    """A running system on its own database, dumped mid-match and restored into another one."""
    if not pg_available():
        pytest.fail("PostgreSQL is not reachable; start it (see README) and retry")
    for tool in ("pg_dump", "pg_restore"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed (Debian/Ubuntu: apt-get install postgresql-client)")
    token = secrets.token_hex(4)
    source_name, restored_name = f"arena_backup_{token}", f"arena_restored_{token}"
    source_url = create_database(source_name)
    restored_url = source_url.rsplit("/", 1)[0] + f"/{restored_name}"
    migrate(source_url)
    started: list[ManagedProcess] = []
    try:
        fast, slow = start_bot("ok"), start_bot("ok", "--latency", "0.05")
        started += [fast.process, slow.process]
        api_key, user_name, finished_bots, running_bots = seed(source_url, fast, slow)
        worker = start_worker("backup-worker", {"ARENA_DATABASE_URL": source_url})
        started.append(worker)

        finished = queue(source_url, finished_bots, SMALL_RACE)
        assert wait_status(source_url, finished, {MatchStatus.FINISHED}, worker)["has_replay"]
        queued = queue(source_url, finished_bots, SMALL_RACE, send=False)
        running = queue(source_url, running_bots, LONG_RACE)
        wait_status(source_url, running, {MatchStatus.RUNNING}, worker)

        archive = tmp_path_factory.mktemp("backup") / "arena.dump"
        code, dumped = quiet_main("dump", str(archive), "--url", source_url)
        assert code == 0, dumped
        assert f"to {archive}" in dumped, dumped
        # The worker was still in the middle of that match when the dump ended.
        assert match_row(source_url, running)["status"] == MatchStatus.RUNNING, worker.log()[-3000:]

        code, restored = quiet_main("restore", str(archive), "--url", restored_url, "--create")
        assert code == 0, restored
        yield Seeded(
            source_url=source_url,
            restored_url=restored_url,
            archive=archive,
            worker=worker,
            api_key=api_key,
            user_name=user_name,
            finished_bots=finished_bots,
            running_bots=running_bots,
            finished_match=finished,
            running_match=running,
            queued_match=queued,
            restore_output=restored,
        )
    finally:
        for process in reversed(started):
            process.stop()
        get_engine(source_url).dispose()
        drop_database(source_name)
        drop_database(restored_name)


def test_restored_database_is_the_snapshot_at_head(seeded: Seeded) -> None:
    """Every row outside the running match is identical (counts and checksums), the sequences carry
    on where they were, and the schema is at this checkout's head."""
    source = table_digests(seeded.source_url, seeded.excluded())
    restored = table_digests(seeded.restored_url, seeded.excluded())
    assert restored == source
    for table, least in {
        "users": 1,
        "api_keys": 1,
        "bots": 2,
        "bot_versions": 4,
        "matches": 2,
        "match_participants": 4,
        "replays": 1,
        "ratings": 2,
    }.items():
        assert source[table][0] >= least, (table, source[table])
    assert sequences(seeded.restored_url) == sequences(seeded.source_url)
    assert match_row(seeded.restored_url, seeded.queued_match)["status"] == MatchStatus.QUEUED
    with _connect(seeded.restored_url) as conn:
        revisions = {row[0] for row in conn.execute("SELECT version_num FROM alembic_version")}
    assert revisions == head_revisions()
    assert "at head" in seeded.restore_output, seeded.restore_output
    assert "1 queued and 1 running matches" in seeded.restore_output, seeded.restore_output


def test_restored_database_serves_the_gateway(seeded: Seeded) -> None:
    """A real gateway on the restored database: the leaderboard, the finished match's replay, the
    running match as the snapshot saw it, and the user's API key (hashed with ARENA_SECRET_KEY)."""
    port = free_port()
    gateway = ManagedProcess(
        [PYTHON, "-m", "uvicorn", "services.gateway.app:app", "--host", "127.0.0.1", "--port", str(port)],
        "gateway-restored",
        env={"ARENA_DATABASE_URL": seeded.restored_url},
    )
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        gateway.wait_http(f"http://127.0.0.1:{port}/health", timeout=60)

        board = httpx.get(f"{base}/leaderboard/podracing", timeout=10)
        assert board.status_code == 200, board.text
        entries = {uuid.UUID(e["bot_id"]): e for e in board.json()["entries"]}
        with _connect(seeded.source_url) as conn:
            for bot_id in seeded.finished_bots:
                mu, sigma, played = conn.execute(
                    "SELECT mu, sigma, matches_played FROM ratings WHERE bot_id = %s", (bot_id,)
                ).fetchone() or (None, None, None)
                assert (entries[bot_id]["mu"], entries[bot_id]["sigma"], entries[bot_id]["matches"]) == (
                    mu,
                    sigma,
                    played,
                )
                assert played == 1
            ranks = dict(
                conn.execute(
                    "SELECT slot, rank FROM match_participants WHERE match_id = %s", (seeded.finished_match,)
                ).fetchall()
            )

        replay = httpx.get(f"{base}/matches/{seeded.finished_match}/replay", timeout=10)
        assert replay.status_code == 200, replay.text
        body = replay.json()
        assert body["seed"] == 7
        assert body["config"]["max_turns"] == SMALL_RACE["max_turns"]
        assert {p["player"]: p["rank"] for p in body["result"]["players"]} == ranks

        running = httpx.get(f"{base}/matches/{seeded.running_match}", timeout=10)
        assert running.status_code == 200, running.text
        assert running.json()["status"] == MatchStatus.RUNNING

        me = httpx.get(f"{base}/me", headers={"Authorization": f"Bearer {seeded.api_key}"}, timeout=10)
        assert me.status_code == 200, me.text
        assert me.json()["name"] == seeded.user_name
    finally:
        gateway.stop()


def test_dump_is_a_snapshot_taken_mid_match(seeded: Seeded) -> None:
    """The worker went on writing after the dump: in the source the match finishes with a replay and
    new ratings, while the restored database keeps it running, without a replay, its bots unrated."""
    after = wait_status(seeded.source_url, seeded.running_match, {MatchStatus.FINISHED}, seeded.worker, 90)
    assert after["has_replay"]
    snapshot = match_row(seeded.restored_url, seeded.running_match)
    assert snapshot["status"] == MatchStatus.RUNNING
    assert not snapshot["has_replay"]
    query = "SELECT matches_played FROM ratings WHERE bot_id = ANY(%s)"
    with _connect(seeded.source_url) as conn:
        assert {row[0] for row in conn.execute(query, [seeded.running_bots])} == {1}
    with _connect(seeded.restored_url) as conn:
        assert {row[0] for row in conn.execute(query, [seeded.running_bots])} == {0}


def test_restore_refuses_a_database_that_is_not_empty(seeded: Seeded) -> None:
    before = table_digests(seeded.restored_url, {})
    code, out = quiet_main("restore", str(seeded.archive), "--url", seeded.restored_url)
    assert code == 1
    assert "is not empty" in out, out
    assert "public.alembic_version" in out, out
    assert "Traceback" not in out, out
    assert table_digests(seeded.restored_url, {}) == before


def test_failed_restore_restores_nothing(seeded: Seeded, tmp_path: Path) -> None:
    """An archive cut short (its table of contents whole, its last data gone) fails in pg_restore,
    and the restore's one transaction leaves the new database empty."""
    cut = tmp_path / "cut.dump"
    cut.write_bytes(seeded.archive.read_bytes()[:-200])
    name = f"arena_cut_{secrets.token_hex(4)}"
    url = seeded.restored_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        code, out = quiet_main("restore", str(cut), "--url", url, "--create")
        assert code == 1, out
        assert "failed and restored nothing" in out, out
        assert "end of file" in out, out
        with _connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (
                0,
            )
    finally:
        drop_database(name)


def test_dump_never_overwrites_and_leaves_no_partial_file(seeded: Seeded, tmp_path: Path) -> None:
    target = tmp_path / "arena.dump"
    target.write_bytes(b"an older backup")
    code, out = quiet_main("dump", str(target), "--url", seeded.restored_url)
    assert code == 1, out
    assert "already exists" in out, out
    assert "--force" in out, out
    assert target.read_bytes() == b"an older backup"

    code, out = quiet_main(
        "dump", str(tmp_path / "nothing.dump"), "--url", "postgresql+psycopg://postgres@127.0.0.1:1/arena"
    )
    assert code == 1, out
    assert "cannot connect to" in out, out

    code, out = quiet_main("dump", str(target), "--url", seeded.restored_url, "--force")
    assert code == 0, out
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena.dump"]


def test_missing_tools_and_bad_input_are_clear_errors(
    seeded: Seeded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = quiet_main("restore", "/etc/hostname", "--url", seeded.restored_url)
    assert code == 1, out
    assert "not a readable pg_dump archive" in out, out
    code, out = quiet_main("dump", str(tmp_path / "a.dump"), "--url", "sqlite:///arena.db")
    assert code == 1, out
    assert "not a PostgreSQL URL" in out, out
    code, out = quiet_main(
        "dump", str(tmp_path / "a.dump"), "--url", "postgresql+psycopg://postgres:hunter2@127.0.0.1:1/arena"
    )
    assert code == 1, out
    assert "hunter2" not in out, out

    monkeypatch.setenv("PATH", str(tmp_path))
    code, out = quiet_main("dump", str(tmp_path / "a.dump"), "--url", seeded.restored_url)
    assert code == 1, out
    assert "pg_dump not found on PATH" in out, out
    assert "postgresql-client" in out, out
    code, out = quiet_main(
        "restore", str(seeded.archive), "--url", seeded.restored_url, "--pg-bin", str(tmp_path)
    )
    assert code == 1, out
    assert f"pg_restore not found in {tmp_path}" in out, out
    assert list(tmp_path.iterdir()) == []


def test_the_password_never_reaches_the_command_line() -> None:
    """pg_dump and pg_restore get a libpq URL without the password (argv shows in `ps`); the
    password travels in their environment, and messages show it masked."""
    target = Target.from_url("postgresql+psycopg://arena:s3cr%40t@10.0.0.7:5433/arena?sslmode=require")
    assert target.conninfo == "postgresql://arena@10.0.0.7:5433/arena?sslmode=require"
    assert target.env["PGPASSWORD"] == "s3cr@t"
    assert "s3cr" not in target.display
    assert "s3cr" not in repr(target)
