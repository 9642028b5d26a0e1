"""A thin client for the Arena REST API (/api/v1): one request per call, every failure one CliError.

The base URL and API key come from --url / --api-key or ARENA_URL / ARENA_API_KEY. The key travels
as `Authorization: Bearer <key>`.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from services.cli.errors import CliError

DEFAULT_URL = "http://127.0.0.1:8000"
API_PREFIX = "/api/v1"
MAX_ERRORS_SHOWN = 5


def _detail(response: httpx.Response) -> str:
    """The gateway's error body, `{"detail": ..., "errors": [...]}`, as one line."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    if not isinstance(body, dict):
        return str(body)[:300]
    detail = body.get("detail")
    text = detail if isinstance(detail, str) else str(detail)
    errors = body.get("errors")
    if isinstance(errors, list) and errors and not isinstance(detail, str):
        text += "; " + "; ".join(str(e) for e in errors[:MAX_ERRORS_SHOWN])
    return text


class ApiClient:
    def __init__(self, url: str | None, api_key: str | None, *, timeout_s: float = 30.0) -> None:
        self.base_url = (url or os.environ.get("ARENA_URL") or DEFAULT_URL).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise CliError(f"the server URL must start with http:// or https://, got {self.base_url!r}")
        self.api_key = api_key or os.environ.get("ARENA_API_KEY")
        headers = {"user-agent": "arena-cli/1", "accept": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        self._client = httpx.Client(base_url=self.base_url + API_PREFIX, headers=headers, timeout=timeout_s)

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._client.close()

    def _need_key(self) -> None:
        if not self.api_key:
            raise CliError("this command needs an API key: give --api-key or set ARENA_API_KEY")

    def request(self, method: str, path: str, *, auth: bool = True, **kwargs: Any) -> Any:
        """The decoded JSON answer of a 2xx; a CliError naming the status and detail otherwise."""
        if auth:
            self._need_key()
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise CliError(f"the Arena server at {self.base_url} did not answer in time") from None
        except httpx.HTTPError as exc:
            raise CliError(f"cannot reach the Arena server at {self.base_url}: {exc}") from None
        if response.status_code >= 400:
            raise CliError(f"{method} {API_PREFIX}{path}: HTTP {response.status_code}: {_detail(response)}")
        try:
            return response.json()
        except ValueError:
            raise CliError(f"{method} {API_PREFIX}{path}: the server's answer is not JSON") from None

    # -- bots ------------------------------------------------------------------------------

    def register_http_bot(self, name: str, game: str, endpoint: str, secret: str | None) -> Any:
        body: dict[str, Any] = {"name": name, "game": game, "endpoint": endpoint}
        if secret:
            body["secret"] = secret
        return self.request("POST", "/bots", json=body)

    def create_hosted_bot(self, name: str, game: str, source: str, contract: str) -> Any:
        body = {"name": name, "game": game, "source": source, "contract": contract}
        return self.request("POST", "/bots/hosted", json=body)

    def upload_version(self, bot_id: str, source: str, contract: str | None, notes: dict[str, Any]) -> Any:
        body: dict[str, Any] = {"source": source, "notes": notes}
        if contract:
            body["contract"] = contract
        return self.request("POST", f"/bots/{bot_id}/versions", json=body)

    def list_bots(self, game: str | None, limit: int, name: str | None = None) -> Any:
        """Your bots (every bot for an admin)."""
        params: dict[str, Any] = {"limit": limit}
        if game:
            params["game"] = game
        if name:
            params["name"] = name
        return self.request("GET", "/bots", params=params)

    def public_bots(self, game: str, name: str) -> Any:
        """Everyone's bots of this name in this game (one at most: names are unique per game)."""
        return self.request("GET", "/bots/public", auth=False, params={"game": game, "name": name})

    def deactivate(self, bot_id: str) -> Any:
        return self.request("POST", f"/bots/{bot_id}/deactivate")

    def reactivate(self, bot_id: str) -> Any:
        return self.request("POST", f"/bots/{bot_id}/reactivate")

    # -- users -----------------------------------------------------------------------------

    def create_user(self, name: str, role: str) -> Any:
        return self.request("POST", "/users", json={"name": name, "role": role})

    def create_api_key(self, name: str) -> Any:
        return self.request("POST", "/me/api-keys", json={"name": name})

    # -- matches and leaderboards ----------------------------------------------------------

    def challenge(
        self, game: str, bot_ids: list[str], seed: int | None, config: dict[str, Any] | None, rated: bool
    ) -> Any:
        body: dict[str, Any] = {"game": game, "bot_ids": bot_ids, "rated": rated}
        if seed is not None:
            body["seed"] = seed
        if config is not None:
            body["config"] = config
        return self.request("POST", "/matches", json=body)

    def get_match(self, match_id: str) -> Any:
        return self.request("GET", f"/matches/{match_id}", auth=False)

    def leaderboard(self, game: str, limit: int) -> Any:
        return self.request("GET", f"/leaderboard/{game}", auth=False, params={"limit": limit})
