"""Static files with cache headers that let browsers keep them as long as they are unchanged.

Pages link to an asset as `/static/arena.css?v=<fingerprint>`, the fingerprint being a hash of the
file's bytes. A request that names the current fingerprint gets `Cache-Control: immutable` for a
year: when the file changes so does its URL, so a cached copy is never stale. Any other request
(no `v`, or an old one from a page rendered before a deploy) gets `no-cache`: the browser keeps the
file but revalidates it with its ETag, which costs a 304 and no body.

A vendored file may be served rewritten (`PatchedStaticFiles`): a few exact byte strings replaced
on the way out, its fingerprint then that of the bytes sent.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from typing import Any

from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@lru_cache(maxsize=256)
def _digest(full_path: str, mtime_ns: int, size: int) -> str:  # noqa: ARG001 (cache key)
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
        response.headers["Cache-Control"] = self.cache_control(os.fspath(full_path), stat_result, scope)
        return response

    def fingerprint(self, full_path: str, stat_result: os.stat_result) -> str:
        return fingerprint(full_path, stat_result)

    def cache_control(self, full_path: str, stat_result: os.stat_result, scope: Scope) -> str:
        wanted = QueryParams(scope.get("query_string", b"")).get("v")
        return IMMUTABLE if wanted == self.fingerprint(full_path, stat_result) else REVALIDATE


Patches = tuple[tuple[bytes, bytes], ...]


@lru_cache(maxsize=16)
def _patched(full_path: str, mtime_ns: int, size: int, patches: Patches) -> tuple[bytes, str]:  # noqa: ARG001 (cache key)
    """The file's bytes with each (old, new) of `patches` replaced, and their fingerprint."""
    with open(full_path, "rb") as handle:
        data = handle.read()
    for old, new in patches:
        data = data.replace(old, new)
    return data, hashlib.sha256(data).hexdigest()[:16]


class PatchedStaticFiles(FingerprintedStaticFiles):
    """FingerprintedStaticFiles that sends some files rewritten: `patches` maps a file name to the
    (old, new) byte strings to replace in it."""

    def __init__(self, *, patches: dict[str, Patches], **static_files: Any) -> None:
        super().__init__(**static_files)
        self.patches = patches

    def _body(self, full_path: str, stat_result: os.stat_result) -> tuple[bytes, str] | None:
        patches = self.patches.get(os.path.basename(full_path))
        if patches is None:
            return None
        return _patched(full_path, stat_result.st_mtime_ns, stat_result.st_size, patches)

    def fingerprint(self, full_path: str, stat_result: os.stat_result) -> str:
        body = self._body(full_path, stat_result)
        return fingerprint(full_path, stat_result) if body is None else body[1]

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        path = os.fspath(full_path)
        body = self._body(path, stat_result)
        if body is None:
            return super().file_response(full_path, stat_result, scope, status_code)
        data, digest = body
        headers = {"ETag": f'"{digest}"', "Cache-Control": self.cache_control(path, stat_result, scope)}
        if Headers(scope=scope).get("if-none-match") == headers["ETag"]:
            return Response(status_code=304, headers=headers)
        media_type = "text/javascript" if path.endswith(".js") else None
        return Response(data, status_code=status_code, media_type=media_type, headers=headers)


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
        return f"{root}{self.prefix}/{path}?v={self.files.fingerprint(full_path, stat_result)}"


def asset_dir(name: str, prefix: str, **static_files: Any) -> AssetDir:
    return AssetDir(name, prefix, FingerprintedStaticFiles(**static_files))


STATIC_DIR = os.path.join(os.path.dirname(__file__), "static")
SITE_ASSETS = asset_dir("static", "/static", directory=STATIC_DIR)
"""The pages' own CSS, scripts and images (`services/gateway/web/static`)."""

REDOC_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
NO_LOGO = b"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E"
DOCS_PATCHES: dict[str, Patches] = {"redoc.standalone.js": ((REDOC_LOGO, NO_LOGO),)}
"""ReDoc draws its vendor's logo from cdn.redoc.ly in its side menu, and no option turns that off:
the bundle is sent with that one address replaced by an empty image, so the page asks nothing of
any other host (and the browser reports no refused request)."""
DOCS_ASSETS = AssetDir(
    "docs-static",
    "/static/docs",
    PatchedStaticFiles(patches=DOCS_PATCHES, packages=[("fastapi_offline", "static")]),
)
"""Swagger UI and ReDoc as shipped in the `fastapi-offline` package's `static` folder."""
DOCS_ASSET_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js")
