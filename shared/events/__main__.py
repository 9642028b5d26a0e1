"""`python -m shared.events [TOPIC ...]`: print the events of some topics (default: matches) as JSON
lines until interrupted; a quick way to watch the platform live."""

from __future__ import annotations

import asyncio
import contextlib
import sys

from shared.events.models import TOPIC_MATCHES
from shared.events.subscribe import EventStream


async def tail(topics: list[str]) -> None:
    async with EventStream(topics) as stream:
        async for event in stream:
            print(event.model_dump_json(), flush=True)


def main(argv: list[str]) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(tail(argv or [TOPIC_MATCHES]))


if __name__ == "__main__":
    main(sys.argv[1:])
