#!/bin/sh
# One-shot set-up of MinIO for the replay store (docker-compose.yml's `minio-init`, on the minio/mc
# image): the bucket, private, and an access key that may only read, write and delete objects in it.
# The platform gets that key, never MinIO's root credentials. Safe to run again: every step is. Only
# shell built-ins and mc, since the mc image has little else.
set -eu

: "${MINIO_ROOT_USER:?}" "${MINIO_ROOT_PASSWORD:?}" "${ARENA_REPLAY_S3_BUCKET:?}"
: "${ARENA_REPLAY_S3_ACCESS_KEY:?}" "${ARENA_REPLAY_S3_SECRET_KEY:?}"
bucket=$ARENA_REPLAY_S3_BUCKET
key=$ARENA_REPLAY_S3_ACCESS_KEY
policy=arena-replays
policy_file=/tmp/arena-replays-policy.json  # the bucket name only: no secret

mc alias set arena "${MINIO_ENDPOINT:-http://minio:9000}" "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD" >/dev/null
mc mb --ignore-existing "arena/$bucket"
mc anonymous set none "arena/$bucket"

# Listing the bucket lets a missing replay answer 404 rather than 403; nothing else on the bucket.
printf '%s\n' "{\"Version\": \"2012-10-17\", \"Statement\": [
  {\"Effect\": \"Allow\", \"Action\": [\"s3:GetBucketLocation\", \"s3:ListBucket\"],
   \"Resource\": [\"arn:aws:s3:::$bucket\"]},
  {\"Effect\": \"Allow\", \"Action\": [\"s3:GetObject\", \"s3:PutObject\", \"s3:DeleteObject\"],
   \"Resource\": [\"arn:aws:s3:::$bucket/*\"]}
]}" >"$policy_file"
mc admin policy create arena "$policy" "$policy_file"
mc admin user add arena "$key" "$ARENA_REPLAY_S3_SECRET_KEY"
# Attaching a policy that is already attached is an error: detach first (an error when it is not).
mc admin policy detach arena "$policy" --user "$key" >/dev/null 2>&1 || true
mc admin policy attach arena "$policy" --user "$key"
echo "bucket $bucket ready; access key $key may use it"
