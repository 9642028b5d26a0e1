"""`python -m services.trainer [worker] [celery options]`: the trainer worker, as the celery CLI
starts it (queue `training`, one chunk at a time)."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    from services.trainer.worker import app

    rest = argv[1:] if argv and argv[0] == "worker" else argv
    app.start(["worker", "-Q", "training", "-c", "1", "--loglevel", "INFO", *rest])


if __name__ == "__main__":
    main(sys.argv[1:])
