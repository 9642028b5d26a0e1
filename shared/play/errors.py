"""What playing a match raises."""

from __future__ import annotations


class PlayError(Exception):
    """A local match that cannot be played as asked: an unusable BOT argument, option or setting,
    or a bot that cannot be started or reached. The message is one line the user can act on; a
    front end shows it as it shows its own errors (the command line: `arena: <message>`)."""


class MatchLost(Exception):
    """This worker no longer owns the match (the reaper gave it to another worker); stop playing."""
