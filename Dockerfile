# GPU Radar: one small image for every role. Settings decide what a container does: SQLite and long polling in a
# single container by default; PostgreSQL + webhook mode for several replicas (see README, "Scaling out").
#
#   docker build -t gpuradar .
#   docker run --env-file .env -p 8080:8080 -v gpuradar-data:/home/radar/data gpuradar

# The base image, pinned by digest for a reproducible build. No registry was reachable where this was written, so the
# digest is the official `python:3.11-slim` manifest-list digest as two unrelated public repositories pin it (one
# from Docker Hub, one from the same library image mirrored on public.ecr.aws/docker/library): the same 9c900dea…
# in both. To move to the tag's current digest, run `.ci/pin-base-image.sh` where a registry is reachable (docker
# buildx imagetools inspect) and commit the Dockerfile it rewrites.
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

# ---- build: install into a virtualenv that the runtime stage copies whole ----------------------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
RUN python -m venv /opt/venv
WORKDIR /src
# Dependencies first, from the lock file alone (every package pinned, every file's hash checked): this layer is
# rebuilt only when the lock changes, not on every source edit. Regenerate the lock as its header says.
COPY requirements.lock ./
RUN pip install --require-hashes --no-deps -r requirements.lock
COPY README.md ./
COPY core core
COPY scrapers scrapers
COPY modelhub modelhub
COPY storage storage
COPY bot bot
COPY texts texts
COPY gpuradar gpuradar
# A regular (not editable) install: the runtime stage has no /src. Dependencies are already in place.
RUN pip install --no-deps . && python -c "import gpuradar.cli, storage.migrate, bot, texts"

# ---- runtime: the virtualenv, a non-root user, nothing else --------------------------------------------------
FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/venv/bin:$PATH \
    MPLBACKEND=Agg MPLCONFIGDIR=/tmp/matplotlib
RUN useradd --create-home --uid 10001 --user-group radar \
    && mkdir -p /home/radar/data && chown radar:radar /home/radar/data
COPY --from=build /opt/venv /opt/venv
USER radar
WORKDIR /home/radar
# SQLite lives on the volume unless DATABASE_URL points at PostgreSQL (docker-compose.yml does).
VOLUME ["/home/radar/data"]
ENV DATABASE_URL=sqlite+aiosqlite:////home/radar/data/gpuradar.sqlite3 \
    WEB__HOST=0.0.0.0 WEB__PORT=8080 LOG__JSON_LINES=true
EXPOSE 8080
# /healthz answers 200 only while the database does (gpuradar/web.py). The slim image has no curl: use Python.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import os, sys, urllib.request; \
url = 'http://127.0.0.1:%s/healthz' % os.environ.get('WEB__PORT', '8080'); \
sys.exit(0 if urllib.request.urlopen(url, timeout=4).status == 200 else 1)"
CMD ["gpuradar", "run"]
