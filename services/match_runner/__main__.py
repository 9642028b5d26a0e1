"""`python -m services.match_runner [worker|beat] [celery options]`: the same as the celery CLI."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    from services.match_runner.worker import app

    role = argv[0] if argv and argv[0] in ("worker", "beat") else "worker"
    rest = argv[1:] if argv and argv[0] in ("worker", "beat") else argv
    if role == "worker":
        args = ["worker", "-Q", "matches", "-c", "1", "--loglevel", "INFO", *rest]
    else:
        args = ["beat", "--loglevel", "INFO", *rest]
    app.start(args)


if __name__ == "__main__":
    main(sys.argv[1:])
