# GPU Radar: one small image for every role. Settings decide what a container does: SQLite and long polling in a
# single container by default; PostgreSQL + webhook mode for several replicas (see README, "Scaling out").
#
#   docker build -t gpuradar .
#   docker run --env-file .env -p 8080:8080 -v gpuradar-data:/home/radar/data gpuradar

# ---- build: resolve and install into a virtualenv that the runtime stage copies whole ----------------------------
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
RUN python -m venv /opt/venv
WORKDIR /src
# Dependencies first, from pyproject.toml alone: this layer is rebuilt only when the dependency list changes,
# not on every source edit.
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + p['optional-dependencies']['postgres']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt
COPY README.md ./
COPY core core
COPY scrapers scrapers
COPY storage storage
COPY bot bot
COPY gpuradar gpuradar
# A regular (not editable) install: the runtime stage has no /src. Dependencies are already in place.
RUN pip install --no-deps . && python -c "import gpuradar.cli, storage.migrate, bot"

# ---- runtime: the virtualenv, a non-root user, nothing else --------------------------------------------------
FROM python:3.11-slim
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
