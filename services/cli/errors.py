"""The one error the command line shows: a single line on stderr and a non-zero exit status."""

from __future__ import annotations


class CliError(Exception):
    """Something the user can fix; `main` prints `arena: <message>` and exits with `status`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())  # always one line, whatever the source said
        self.status = status
