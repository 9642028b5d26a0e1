"""The demo's REST client: everything the demo sets up goes through the public API, like a user would."""

from __future__ import annotations

from typing import Any

import httpx


class ApiError(RuntimeError):
    pass


class Api:
    def __init__(self, base_url: str, key: str) -> None:
        self.base_url = base_url
        self.client = httpx.Client(base_url=base_url + "/api/v1", headers={"X-API-Key": key}, timeout=30)

    def with_key(self, key: str) -> Api:
        return Api(self.base_url, key)

    def call(self, method: str, path: str, ok: tuple[int, ...] = (200, 201), **kwargs: Any) -> httpx.Response:
        answer = self.client.request(method, path, **kwargs)
        if answer.status_code not in ok:
            try:
                detail = answer.json().get("detail", answer.text)
            except ValueError:
                detail = answer.text
            raise ApiError(f"{method} {path} -> {answer.status_code}: {detail}")
        return answer

    def get(self, path: str, **params: Any) -> Any:
        return self.call("GET", path, params=params).json()

    def post(self, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201)) -> httpx.Response:
        return self.call("POST", path, ok=ok, json=body)

    def patch(self, path: str, body: Any) -> Any:
        return self.call("PATCH", path, json=body).json()

    def close(self) -> None:
        self.client.close()
