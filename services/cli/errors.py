"""The one error the command line shows: a single line on stderr and a non-zero exit status."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pydantic is imported only by the commands that validate
    from pydantic import ValidationError


class CliError(Exception):
    """Something the user can fix; `main` prints `arena: <message>` and exits with `status`."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())  # always one line, whatever the source said
        self.status = status


def first_problem(exc: ValidationError) -> tuple[str, str]:
    """A validation error's first problem as (dotted field path, message): what a one-line CLI
    error names."""
    problem = exc.errors()[0]
    return ".".join(str(part) for part in problem["loc"]), str(problem["msg"])
