"""`python -m services.evolver [worker] [celery options]`: the evolver worker, as the celery CLI
starts it (queue `evolution`)."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    from services.evolver.worker import app

    rest = argv[1:] if argv and argv[0] == "worker" else argv
    app.start(["worker", "-Q", "evolution", "-c", "1", "--loglevel", "INFO", *rest])


if __name__ == "__main__":
    main(sys.argv[1:])
