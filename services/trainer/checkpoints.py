"""Checkpoint files of training runs: one folder per run under ARENA_TRAINING_CHECKPOINT_DIR,
`<run id>/ckpt-<iteration>.pt`, paths stored relative to that directory.

Which files stay is the database's decision (a committed checkpoint row that is not pruned keeps
its file); this module deletes the rest, and only files at or before the last committed iteration:
a newer file is the work of a chunk that has not committed (yet, or ever), and the next cleanup
after a later commit removes it if nothing refers to it.
"""

from __future__ import annotations

import logging
import re
import uuid
from pathlib import Path

log = logging.getLogger(__name__)

CHECKPOINT_FILE = re.compile(r"^ckpt-(\d{6,})\.pt$")


def relative_path(run_id: uuid.UUID, iteration: int) -> str:
    return f"{run_id}/ckpt-{iteration:06d}.pt"


def run_folder(root: Path, run_id: uuid.UUID) -> Path:
    return root / str(run_id)


def delete_unreferenced(
    root: Path, run_id: uuid.UUID, referenced: set[str], committed_iteration: int, *, partials: bool
) -> list[Path]:
    """Delete the run's checkpoint files that no kept row refers to, up to `committed_iteration`;
    with `partials`, also half-written files (only while holding the run's lease). The deleted."""
    folder = run_folder(root, run_id)
    if not folder.is_dir():
        return []
    deleted: list[Path] = []
    for path in sorted(folder.iterdir()):
        match = CHECKPOINT_FILE.match(path.name)
        stale = (
            match is not None
            and int(match.group(1)) <= committed_iteration
            and f"{run_id}/{path.name}" not in referenced
        )
        if stale or (partials and path.name.endswith(".partial")):
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            deleted.append(path)
    if deleted:
        log.info("training run %s: deleted %d old checkpoint files", run_id, len(deleted))
    return deleted
