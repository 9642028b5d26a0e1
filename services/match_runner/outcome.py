"""How one attempt at a match ended (what run_match returns, and the `outcome` label of
arena_runner_matches_total)."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    FINISHED = "finished"
    FAILED = "failed"
    SKIPPED = "skipped"
    """Not ours to play: finished already, running elsewhere, cancelled or unknown."""
    LOST = "lost"
    """We played, but the match was taken away meanwhile; our result was dropped."""
    UNSTORED = "unstored"
    """We played, but the replay store refused the replay, so nothing was committed: the match stays
    running without a heartbeat, and the reaper hands it out again (or fails it after its attempts)."""
