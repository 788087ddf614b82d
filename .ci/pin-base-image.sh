#!/usr/bin/env bash
# Pin the Dockerfile's base image by digest: resolves the tag's current multi-platform digest from the registry and
# rewrites `ARG PYTHON_IMAGE=` to `<tag>@sha256:<digest>`. Needs docker (buildx) and a reachable registry; run it
# when you bump the base image, and commit the Dockerfile it changes.
set -euo pipefail
cd "$(dirname "$0")/.."
line=$(grep -m1 '^ARG PYTHON_IMAGE=' Dockerfile)
tag=${line#ARG PYTHON_IMAGE=}
tag=${tag%@*}
digest=$(docker buildx imagetools inspect "$tag" --format '{{json .Manifest.Digest}}' | tr -d '"')
case "$digest" in sha256:*) ;; *) echo "could not resolve a digest for $tag" >&2; exit 1 ;; esac
sed -i "s|^ARG PYTHON_IMAGE=.*|ARG PYTHON_IMAGE=${tag}@${digest}|" Dockerfile
echo "Dockerfile: PYTHON_IMAGE=${tag}@${digest}"
