"""Replays as files under one folder: the default, for `make demo` and single-machine setups.

Every gateway and match runner must see the same folder (one machine, or a shared volume). A write
goes to a temporary file in the target's folder, is flushed to disk, and is renamed into place, so a
reader never sees half a replay and a crash leaves at worst a stray `.tmp` file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from shared.durable import fsync_path
from shared.replay_store.base import ReplayStoreError, StoredObject, check_key
from shared.states import ReplayStorage

FILE_MODE = 0o644
"""Replays are public (read endpoints need no key); a gateway running as another user may read them."""


class FilesystemReplayStore:
    kind = ReplayStorage.FILESYSTEM

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / check_key(key)

    def describe(self) -> str:
        return f"files under {self.root.resolve()}"

    def put(self, key: str, data: bytes) -> None:
        target = self.path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        except OSError as exc:
            raise ReplayStoreError(f"cannot write replay {key} ({self.describe()}): {exc}") from exc
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fchmod(file.fileno(), FILE_MODE)
                os.fsync(file.fileno())
            os.replace(temporary, target)
            fsync_path(target.parent)  # the rename itself: the result pointing here is committed next
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise ReplayStoreError(f"cannot write replay {key} ({self.describe()}): {exc}") from exc

    def get(self, key: str) -> bytes | None:
        try:
            return self.path(key).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ReplayStoreError(f"cannot read replay {key} ({self.describe()}): {exc}") from exc

    def delete(self, key: str) -> None:
        try:
            self.path(key).unlink(missing_ok=True)
        except OSError as exc:
            raise ReplayStoreError(f"cannot delete replay {key} ({self.describe()}): {exc}") from exc

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def objects(self) -> Iterator[StoredObject]:
        """Every file under the root whose path is a valid key (no `.tmp` file of a write under way)."""
        try:
            for folder, _, names in os.walk(self.root):
                for name in names:
                    path = Path(folder) / name
                    key = path.relative_to(self.root).as_posix()
                    try:
                        check_key(key)
                        modified = path.stat().st_mtime
                    except (ValueError, FileNotFoundError):
                        continue  # not a replay, or removed since the folder was read
                    yield StoredObject(key, datetime.fromtimestamp(modified, UTC))
        except OSError as exc:
            raise ReplayStoreError(f"cannot list replays ({self.describe()}): {exc}") from exc
