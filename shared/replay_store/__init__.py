"""Where replays' bytes live: a small store interface (`ReplayStore`) with a filesystem backend (the
default) and an S3 one, chosen by `ARENA_REPLAY_STORE`, and the `replays` table as their index.

The match runner writes a replay's object BEFORE the transaction that commits the match's result,
under a key derived from the match id and its attempt: a crash leaves at worst an orphan object,
never a result whose replay is missing. Readers go through `load_replay`, which also reads replays
stored in the database before object storage; `python -m shared.replay_store.migrate` moves those.
See docs/deploy.md, "Replays in object storage".
"""

from shared.replay_store.base import ReplayMissing, ReplayStore, ReplayStoreError, check_key, replay_key
from shared.replay_store.filesystem import FilesystemReplayStore
from shared.replay_store.index import discard, load_replay, open_store, replay_store
from shared.replay_store.s3 import S3ReplayStore

__all__ = [
    "FilesystemReplayStore",
    "ReplayMissing",
    "ReplayStore",
    "ReplayStoreError",
    "S3ReplayStore",
    "check_key",
    "discard",
    "load_replay",
    "open_store",
    "replay_key",
    "replay_store",
]
