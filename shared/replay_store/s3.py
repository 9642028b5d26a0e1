"""Replays as objects in a bucket on any S3-compatible store (MinIO in Compose, AWS S3, ...).

boto3 is imported and the client built on first use, never at import time, so a process that never
touches S3 neither needs boto3 nor pays for it. A PUT is atomic and durable when it returns: readers
see the whole object or none. With an endpoint set (MinIO and the like) requests use path-style
URLs (`http://minio:9000/<bucket>/<key>`), so no per-bucket DNS name is needed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from shared.replay_store.base import ReplayStoreError, StoredObject, check_key
from shared.states import ReplayStorage

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.literals import BucketLocationConstraintType

CONTENT_TYPE = "application/gzip"
_MISSING_KEY = frozenset({"NoSuchKey", "404", "NotFound"})
_MISSING_BUCKET = "NoSuchBucket"
_BUCKET_IS_OURS = frozenset({"BucketAlreadyOwnedByYou", "BucketAlreadyExists"})


class S3ReplayStore:
    kind = ReplayStorage.S3

    def __init__(
        self,
        bucket: str,
        *,
        endpoint_url: str | None = None,
        region: str = "us-east-1",
        access_key: str | None = None,
        secret_key: str | None = None,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 30.0,
        max_attempts: int = 4,
    ) -> None:
        self.bucket = bucket
        self.endpoint_url = endpoint_url
        self.region = region
        self._credentials = (access_key, secret_key)
        self._timeouts = (connect_timeout_s, read_timeout_s)
        self._max_attempts = max_attempts
        self._client: S3Client | None = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        where = f"at {self.endpoint_url}" if self.endpoint_url else f"on AWS S3 ({self.region})"
        return f"bucket {self.bucket} {where}"

    def _s3(self) -> S3Client:
        """The client, built once (it is thread-safe); boto3 retries transient errors itself."""
        with self._lock:
            if self._client is None:
                self._client = self._build_client()
            return self._client

    def _build_client(self) -> S3Client:
        try:
            import boto3
            from botocore.config import Config
        except ImportError as exc:
            raise ReplayStoreError(
                "ARENA_REPLAY_STORE=s3 needs boto3, which the gateway and match-runner extras install "
                "(pip install 'arena[gateway]' or 'arena[match-runner]')"
            ) from exc
        access_key, secret_key = self._credentials
        connect_timeout, read_timeout = self._timeouts
        config = Config(
            region_name=self.region,
            signature_version="s3v4",
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            retries={"mode": "standard", "max_attempts": self._max_attempts},
            s3={"addressing_style": "path" if self.endpoint_url else "auto"},
            # Checksums only where S3 requires them: many S3-compatible servers refuse the newer ones.
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        return boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            config=config,
        )

    def _error(self, action: str, key: str, exc: Exception) -> ReplayStoreError:
        return ReplayStoreError(f"cannot {action} replay {key} ({self.describe()}): {exc}")

    def put(self, key: str, data: bytes) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        check_key(key)
        try:
            try:
                self._put(key, data)
            except ClientError as exc:
                if _code(exc) != _MISSING_BUCKET:
                    raise
                self._create_bucket()
                self._put(key, data)
        except (BotoCoreError, ClientError) as exc:
            raise self._error("write", key, exc) from exc

    def _put(self, key: str, data: bytes) -> None:
        self._s3().put_object(Bucket=self.bucket, Key=key, Body=data, ContentType=CONTENT_TYPE)

    def _create_bucket(self) -> None:
        """The first write into a fresh MinIO: make the bucket (a refusal names the real problem)."""
        from botocore.exceptions import ClientError

        try:
            if self.region == "us-east-1":
                self._s3().create_bucket(Bucket=self.bucket)
            else:
                self._s3().create_bucket(
                    Bucket=self.bucket,
                    CreateBucketConfiguration={
                        "LocationConstraint": cast("BucketLocationConstraintType", self.region)
                    },
                )
        except ClientError as exc:
            if _code(exc) not in _BUCKET_IS_OURS:
                raise

    def get(self, key: str) -> bytes | None:
        from botocore.exceptions import BotoCoreError, ClientError

        check_key(key)
        try:
            answer = self._s3().get_object(Bucket=self.bucket, Key=key)
            return answer["Body"].read()
        except ClientError as exc:
            if _code(exc) in _MISSING_KEY:
                return None
            raise self._error("read", key, exc) from exc
        except BotoCoreError as exc:
            raise self._error("read", key, exc) from exc

    def delete(self, key: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        check_key(key)
        try:
            self._s3().delete_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if _code(exc) in _MISSING_KEY or _code(exc) == _MISSING_BUCKET:
                return
            raise self._error("delete", key, exc) from exc
        except BotoCoreError as exc:
            raise self._error("delete", key, exc) from exc

    def exists(self, key: str) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        check_key(key)
        try:
            self._s3().head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if _code(exc) in _MISSING_KEY:
                return False
            raise self._error("look up", key, exc) from exc
        except BotoCoreError as exc:
            raise self._error("look up", key, exc) from exc
        return True

    def objects(self) -> Iterator[StoredObject]:
        """Every object in the bucket whose name is a valid key, a listing page (1,000) at a time."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            for page in self._s3().get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
                for item in page.get("Contents", []):
                    try:
                        key = check_key(item["Key"])
                    except ValueError:
                        continue
                    yield StoredObject(key, item["LastModified"])
        except ClientError as exc:
            if _code(exc) == _MISSING_BUCKET:
                return
            raise ReplayStoreError(f"cannot list replays ({self.describe()}): {exc}") from exc
        except BotoCoreError as exc:
            raise ReplayStoreError(f"cannot list replays ({self.describe()}): {exc}") from exc


def _code(exc: Exception) -> str:
    """The S3 error code of a botocore ClientError (`NoSuchKey`, `404`, `AccessDenied`, ...)."""
    response = getattr(exc, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))
