"""Running Alembic from code (tests, the demo, benchmarks), with the repository's alembic.ini."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

ALEMBIC_INI = Path(__file__).resolve().parents[2] / "alembic.ini"


def migrate(url: str, revision: str = "head", direction: Literal["upgrade", "downgrade"] = "upgrade") -> None:
    """Bring the database at `url` to `revision` in-process; the caller's logging is left alone."""
    from alembic import command
    from alembic.config import Config

    config = Config(str(ALEMBIC_INI))
    config.attributes["url"] = url
    config.attributes["configure_logger"] = False
    getattr(command, direction)(config, revision)
