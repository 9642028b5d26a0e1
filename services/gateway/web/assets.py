"""Static files with cache headers that let browsers keep them as long as they are unchanged.

Pages link to an asset as `/static/arena.css?v=<fingerprint>`, the fingerprint being a hash of the
file's bytes. A request that names the current fingerprint gets `Cache-Control: immutable` for a
year: when the file changes so does its URL, so a cached copy is never stale. Any other request
(no `v`, or an old one from a page rendered before a deploy) gets `no-cache`: the browser keeps the
file but revalidates it with its ETag, which costs a 304 and no body.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from typing import Any

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@lru_cache(maxsize=256)
def _digest(full_path: str, mtime_ns: int, size: int) -> str:
    """Keyed on mtime and size too, so an edited file (development) gets a new fingerprint."""
    sha = hashlib.sha256()
    with open(full_path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            sha.update(chunk)
    return sha.hexdigest()[:16]


def fingerprint(full_path: str, stat_result: os.stat_result) -> str:
    return _digest(full_path, stat_result.st_mtime_ns, stat_result.st_size)


class FingerprintedStaticFiles(StaticFiles):
    """StaticFiles (ETag, Last-Modified, 304s) plus the Cache-Control policy described above."""

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        wanted = QueryParams(scope.get("query_string", b"")).get("v")
        current = fingerprint(os.fspath(full_path), stat_result)
        response.headers["Cache-Control"] = IMMUTABLE if wanted == current else REVALIDATE
        return response


class AssetDir:
    """One mounted folder of static files: the ASGI app to mount and the URLs pages link to."""

    def __init__(self, name: str, prefix: str, files: FingerprintedStaticFiles) -> None:
        self.name = name
        self.prefix = prefix
        self.files = files

    def has(self, path: str) -> bool:
        return self.files.lookup_path(path)[1] is not None

    def url(self, request: Request, path: str) -> str:
        """The cache-busting URL of `path` (relative to the folder); fails loudly for a missing file,
        so a page never links to a 404."""
        full_path, stat_result = self.files.lookup_path(path)
        if stat_result is None:
            raise FileNotFoundError(f"no static file {path!r} under {self.prefix}")
        root = request.scope.get("root_path", "")
        return f"{root}{self.prefix}/{path}?v={fingerprint(full_path, stat_result)}"


def asset_dir(name: str, prefix: str, **static_files: Any) -> AssetDir:
    return AssetDir(name, prefix, FingerprintedStaticFiles(**static_files))


STATIC_DIR = os.path.join(os.path.dirname(__file__), "static")
SITE_ASSETS = asset_dir("static", "/static", directory=STATIC_DIR)
"""The pages' own CSS, scripts and images (`services/gateway/web/static`)."""

DOCS_ASSETS = asset_dir("docs-static", "/static/docs", packages=[("fastapi_offline", "static")])
"""Swagger UI and ReDoc as shipped in the `fastapi-offline` package's `static` folder."""
DOCS_ASSET_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js")
