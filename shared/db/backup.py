"""Backups of Arena's database: `pg_dump --format=custom` of a running system, and `pg_restore` into
an empty database.

    python -m shared.db.backup dump arena.dump
    python -m shared.db.backup restore arena.dump --url postgresql+psycopg://postgres@host/arena2 --create

pg_dump reads one consistent snapshot while the services keep writing, so a dump needs no downtime.
A restore goes only into an empty database and runs in one transaction: it brings back the whole
backup or nothing, and never mixes a backup with existing rows. The URL is ARENA_DATABASE_URL (the
SQLAlchemy URL every service reads) unless `--url` names another. See docs/deploy.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from shared.db.migrations import ALEMBIC_INI
from shared.durable import fsync_path

LOCK_WAIT_TIMEOUT = "60s"
"""How long a dump waits for a table lock (e.g. behind a running migration) before giving up."""
CONNECT_TIMEOUT_S = 10

_TABLE_ENTRY = re.compile(r"^\d+; \d+ \d+ TABLE (\S+) (\S+) ")
"""A table's line in `pg_restore --list`: `214; 1259 18714 TABLE public users arena`."""


class BackupError(Exception):
    """A dump or restore that cannot go ahead; the message says why and what to do about it."""


class RevisionState(StrEnum):
    """Where a database's Alembic revision stands against this checkout's migrations."""

    AT_HEAD = "at head"
    BEHIND = "behind"
    """An older schema: `alembic upgrade head` brings it up to date."""
    UNKNOWN = "unknown"
    """A revision this checkout has no migration for: the database is newer than the code."""
    NONE = "none"
    """No alembic_version row: not a migrated Arena database."""


@dataclass(frozen=True)
class DumpResult:
    path: Path
    size_bytes: int
    tables: list[str]
    revision: str | None


@dataclass(frozen=True)
class RestoreResult:
    tables: list[str]
    revision: str | None
    revision_state: RevisionState
    queued_matches: int
    running_matches: int


@dataclass(frozen=True)
class Target:
    """A database as the PostgreSQL client tools take it: a libpq URL without the password (which
    would show in `ps`), and the password in the environment."""

    conninfo: str
    env: dict[str, str] = field(repr=False)
    display: str
    database: str

    @classmethod
    def from_url(cls, url: str) -> Target:
        try:
            parsed = make_url(url)
        except ArgumentError:
            raise BackupError(f"not a database URL: {url!r}") from None
        if parsed.get_backend_name() != "postgresql":
            raise BackupError(f"not a PostgreSQL URL: {parsed.render_as_string(hide_password=True)}")
        if not parsed.database:
            raise BackupError(f"the URL names no database: {parsed.render_as_string(hide_password=True)}")
        libpq = URL.create(
            "postgresql",
            username=parsed.username,
            host=parsed.host,
            port=parsed.port,
            database=parsed.database,
            query=parsed.query,
        )
        env = {**os.environ, "PGCONNECT_TIMEOUT": str(CONNECT_TIMEOUT_S)}
        if parsed.password is not None:
            env["PGPASSWORD"] = str(parsed.password)
        return cls(
            conninfo=libpq.render_as_string(hide_password=False),
            env=env,
            display=parsed.render_as_string(hide_password=True),
            database=parsed.database,
        )

    def connect(self, database: str | None = None) -> psycopg.Connection[TupleRow]:
        """An autocommit connection to this database (or to another on the same server)."""
        conninfo = self.conninfo
        if database is not None:
            conninfo = make_url(conninfo).set(database=database).render_as_string(hide_password=False)
        return psycopg.connect(
            conninfo,
            password=self.env.get("PGPASSWORD"),
            connect_timeout=CONNECT_TIMEOUT_S,
            autocommit=True,
        )


def find_tool(name: str, pg_bin: Path | None = None) -> str:
    """The path of a PostgreSQL client program, from `pg_bin` or PATH."""
    found = shutil.which(name, path=str(pg_bin)) if pg_bin is not None else shutil.which(name)
    if found is None:
        where = f"in {pg_bin}" if pg_bin is not None else "on PATH"
        raise BackupError(
            f"{name} not found {where}: install the PostgreSQL client programs of the server's major "
            "version or newer (Debian/Ubuntu: apt-get install postgresql-client), point --pg-bin at "
            "them, or run them inside the postgres container (docs/deploy.md)"
        )
    return found


def _run(args: Sequence[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), env=env, capture_output=True, text=True, check=False)


def _tail(stderr: str, lines: int = 6) -> str:
    kept = [line for line in stderr.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept) or "no error output"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def archive_tables(pg_restore: str, archive: Path) -> list[str]:
    """The tables a custom-format archive holds (`schema.name`); checks that it is one."""
    listing = _run([pg_restore, "--list", str(archive)], dict(os.environ))
    if listing.returncode != 0:
        raise BackupError(
            f"{archive} is not a readable pg_dump archive in custom format: {_tail(listing.stderr)}"
        )
    tables = []
    for line in listing.stdout.splitlines():
        found = _TABLE_ENTRY.match(line)
        if found:
            tables.append(f"{found.group(1)}.{found.group(2)}")
    return tables


def archive_revision(pg_restore: str, archive: Path) -> str | None:
    """The Alembic revision stored in an archive (its alembic_version row), None if it has none."""
    data = _run(
        [pg_restore, "--data-only", "--table=alembic_version", "--file=-", str(archive)], dict(os.environ)
    )
    if data.returncode != 0:
        raise BackupError(f"cannot read {archive}: {_tail(data.stderr)}")
    lines = iter(data.stdout.splitlines())
    for line in lines:
        if line.startswith("COPY ") and "alembic_version" in line:
            first = next(lines, "\\.")
            return None if first == "\\." else first.strip()
    return None


def _revision(conn: psycopg.Connection[TupleRow]) -> str | None:
    exists = conn.execute("SELECT to_regclass('alembic_version') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return None
    row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return str(row[0]) if row else None


def revision_state(revision: str | None) -> RevisionState:
    """Compare a database's revision with the head of this checkout's migrations."""
    if revision is None:
        return RevisionState.NONE
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    scripts = ScriptDirectory.from_config(Config(str(ALEMBIC_INI)))
    if revision in scripts.get_heads():
        return RevisionState.AT_HEAD
    try:
        known = scripts.get_revision(revision)
    except CommandError:
        known = None
    return RevisionState.BEHIND if known is not None else RevisionState.UNKNOWN


def _connect(target: Target) -> psycopg.Connection[TupleRow]:
    try:
        return target.connect()
    except psycopg.Error as exc:
        raise BackupError(f"cannot connect to {target.display}: {_first_line(exc)}") from None


def dump(url: str, output: Path, *, overwrite: bool = False, pg_bin: Path | None = None) -> DumpResult:
    """Write a custom-format dump of the database at `url` to `output`.

    The file appears only once pg_dump succeeded and pg_restore can read it back, so a file at
    `output` is always a whole backup; it is readable by its owner only (it holds bot secrets,
    encrypted, and API key hashes)."""
    pg_dump = find_tool("pg_dump", pg_bin)
    pg_restore = find_tool("pg_restore", pg_bin)
    target = Target.from_url(url)
    output = output.expanduser()
    if output.exists() and not overwrite:
        raise BackupError(f"{output} already exists: pick another file name, or pass --force to replace it")
    if not output.parent.is_dir():
        raise BackupError(f"folder {output.parent} does not exist")
    if output.is_dir():
        raise BackupError(f"{output} is a folder: name the backup file")
    with _connect(target):
        pass  # a clear error for a database that does not answer, before pg_dump runs
    partial = output.with_name(f".{output.name}.partial-{os.getpid()}")
    try:
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        done = _run(
            [
                pg_dump,
                "--format=custom",
                "--no-password",
                f"--lock-wait-timeout={LOCK_WAIT_TIMEOUT}",
                f"--file={partial}",
                f"--dbname={target.conninfo}",
            ],
            target.env,
        )
        if done.returncode != 0:
            hint = ""
            if "version mismatch" in done.stderr:
                hint = " (pg_dump must be of the server's major version or newer: see --pg-bin)"
            raise BackupError(f"pg_dump of {target.display} failed{hint}: {_tail(done.stderr)}")
        tables = archive_tables(pg_restore, partial)
        revision = archive_revision(pg_restore, partial)
        fsync_path(partial)
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)
    return DumpResult(output, output.stat().st_size, tables, revision)


def _create_database(target: Target) -> bool:
    """Create the target database when it does not exist; True if it was created."""
    try:
        with target.connect("postgres") as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (target.database,)).fetchone():
                return False
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(target.database)))
            return True
    except psycopg.Error as exc:
        raise BackupError(f"cannot create database {target.database!r}: {_first_line(exc)}") from None


def _existing_relations(conn: psycopg.Connection[TupleRow]) -> list[str]:
    rows = conn.execute(
        """
        SELECT n.nspname || '.' || c.relname
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
           AND n.nspname NOT IN ('pg_catalog', 'information_schema')
           AND n.nspname !~ '^pg_(toast|temp)'
         ORDER BY 1
        """
    ).fetchall()
    return [str(row[0]) for row in rows]


def _pending_matches(conn: psycopg.Connection[TupleRow]) -> tuple[int, int]:
    from shared.states import MatchStatus

    exists = conn.execute("SELECT to_regclass('matches') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0, 0
    row = conn.execute(
        "SELECT count(*) FILTER (WHERE status = %s), count(*) FILTER (WHERE status = %s) FROM matches",
        (MatchStatus.QUEUED.value, MatchStatus.RUNNING.value),
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def restore(url: str, archive: Path, *, create: bool = False, pg_bin: Path | None = None) -> RestoreResult:
    """Restore a custom-format dump into the empty database at `url`, in one transaction.

    Owners and privileges are not restored: the objects belong to the user of `url`, so a backup of
    one deployment restores under another database user."""
    pg_restore = find_tool("pg_restore", pg_bin)
    target = Target.from_url(url)
    archive = archive.expanduser()
    if not archive.is_file():
        raise BackupError(f"{archive} does not exist or is not a file")
    tables = archive_tables(pg_restore, archive)
    if create:
        _create_database(target)
    try:
        conn = target.connect()
    except psycopg.Error as exc:
        hint = "" if create else " (to restore into a new database, pass --create)"
        raise BackupError(f"cannot connect to {target.display}: {_first_line(exc)}{hint}") from None
    with conn:
        existing = _existing_relations(conn)
    if existing:
        shown = ", ".join(existing[:5]) + (", ..." if len(existing) > 5 else "")
        raise BackupError(
            f"database {target.database!r} is not empty ({len(existing)} tables, sequences or views: "
            f"{shown}); a restore goes only into an empty database, so that no rows of the backup mix "
            "with rows already there: drop and re-create it, or restore into a new database with --create"
        )
    done = _run(
        [
            pg_restore,
            "--no-password",
            "--exit-on-error",
            "--single-transaction",
            "--no-owner",
            "--no-privileges",
            f"--dbname={target.conninfo}",
            str(archive),
        ],
        target.env,
    )
    if done.returncode != 0:
        raise BackupError(
            f"pg_restore into {target.display} failed and restored nothing (one transaction): "
            f"{_tail(done.stderr)}"
        )
    with _connect(target) as conn:
        revision = _revision(conn)
        queued, running = _pending_matches(conn)
    return RestoreResult(tables, revision, revision_state(revision), queued, running)


def configured_url() -> str:
    """ARENA_DATABASE_URL from the environment, else from Settings (which read .env too)."""
    url = os.environ.get("ARENA_DATABASE_URL")
    if url:
        return url
    from pydantic import ValidationError

    from shared.config import get_settings

    try:
        return get_settings().database_url
    except ValidationError as exc:
        raise BackupError(f"cannot read the settings ({_first_line(exc)}): pass --url") from None


def _size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m shared.db.backup",
        description="Back up and restore Arena's PostgreSQL database (see docs/deploy.md).",
    )
    url = argparse.ArgumentParser(add_help=False)
    url.add_argument("--url", help="SQLAlchemy database URL (default: ARENA_DATABASE_URL)")
    tools = argparse.ArgumentParser(add_help=False)
    tools.add_argument("--pg-bin", type=Path, help="folder of pg_dump and pg_restore (default: PATH)")
    commands = parser.add_subparsers(dest="command", required=True)

    dump_cmd = commands.add_parser(
        "dump",
        parents=[url, tools],
        help="pg_dump the database (custom format) to a file, while the services run",
        epilog="example: python -m shared.db.backup dump backups/arena-$(date +%%F).dump",
    )
    dump_cmd.add_argument("output", type=Path, help="the backup file to write")
    dump_cmd.add_argument("--force", action="store_true", help="replace the file if it exists")

    restore_cmd = commands.add_parser(
        "restore",
        parents=[url, tools],
        help="pg_restore a backup into an empty database, in one transaction",
        epilog="example: python -m shared.db.backup restore arena.dump "
        "--url postgresql+psycopg://postgres@127.0.0.1/arena_restored --create",
    )
    restore_cmd.add_argument("archive", type=Path, help="a file written by `dump` (or pg_dump -Fc)")
    restore_cmd.add_argument("--create", action="store_true", help="create the database if it is missing")

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        url = args.url or configured_url()
        if args.command == "dump":
            dumped = dump(url, args.output, overwrite=args.force, pg_bin=args.pg_bin)
            print(
                f"dumped {Target.from_url(url).display} to {dumped.path} ({_size(dumped.size_bytes)}, "
                f"{len(dumped.tables)} tables, alembic revision {dumped.revision or 'none'})"
            )
        elif args.command == "restore":
            restored = restore(url, args.archive, create=args.create, pg_bin=args.pg_bin)
            print(
                f"restored {args.archive} into {Target.from_url(url).display} "
                f"({len(restored.tables)} tables, alembic revision {restored.revision or 'none'}: "
                f"{restored.revision_state})"
            )
            if restored.revision_state == RevisionState.BEHIND:
                print("the schema is older than this code: run `alembic upgrade head` before the services")
            elif restored.revision_state == RevisionState.UNKNOWN:
                print("the schema is newer than this code: run the release that wrote the backup")
            pending = restored.queued_matches + restored.running_matches
            if pending:
                print(
                    f"{restored.queued_matches} queued and {restored.running_matches} running matches "
                    "at dump time: the reaper hands them to the workers again once the services run"
                )
    except BackupError as exc:
        print(f"backup: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
