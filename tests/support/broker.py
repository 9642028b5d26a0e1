"""The broker's Redis read and changed directly, under the real types of the answers.

redis-py gives its synchronous client the signatures it shares with the asyncio one (an answer is
`Awaitable[T] | T`), and types some keys and values as str where Redis takes bytes too. The tests use
a client that does not decode answers: lists and hashes hold bytes.
"""

from __future__ import annotations

from redis import Redis


def list_items(client: Redis, key: str) -> list[bytes]:
    """Every item of the list at `key`, first to last."""
    items = client.lrange(key, 0, -1)
    assert isinstance(items, list), items
    return items


def hash_values(client: Redis, key: str) -> list[bytes]:
    """The values of the hash at `key`."""
    values = client.hvals(key)
    assert isinstance(values, list), values
    return values


def hash_items(client: Redis, key: str) -> dict[bytes, bytes]:
    """The hash at `key`, field to value."""
    items = client.hgetall(key)
    assert isinstance(items, dict), items
    return items


def remove_from_list(client: Redis, key: str, item: bytes) -> int:
    """Remove every copy of `item` from the list at `key`; how many there were."""
    # redis-py annotates the value as str; Redis compares bytes, and the items read back are bytes.
    removed = client.lrem(key, 0, item)  # type: ignore[arg-type]
    assert isinstance(removed, int), removed
    return removed
