"""The container files, checked against the code they start (no Docker daemon here): the image's HEALTHCHECK
command is run for real against a live /healthz, and docker-compose.yml's wiring is checked for consistency."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from sqlalchemy.engine import make_url

from gpuradar.metrics import Metrics
from gpuradar.web import create_app, start_server
from storage.db import make_engine

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped, as Docker reads them."""
    logical = re.sub(r"\\\n", "", DOCKERFILE)
    out = []
    for line in logical.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def runtime_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def healthcheck_command() -> list[str]:
    args = next(rest for word, rest in runtime_stage() if word == "HEALTHCHECK")
    cmd = args[args.index("CMD ") + 4 :]
    return shlex.split(cmd)  # shell form: /bin/sh -c would split it the same way


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in runtime_stage():
        if word == "ENV":
            env.update(dict(pair.split("=", 1) for pair in shlex.split(rest)))
    return env


async def _run_healthcheck(port: int) -> int:
    argv = healthcheck_command()
    assert argv[0] == "python"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *argv[1:], env={**os.environ, "WEB__PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    return await proc.wait()


async def test_image_healthcheck_passes_on_a_healthy_replica_and_fails_without_its_database(
    migrated_database_url: str,
) -> None:
    engine = make_engine(migrated_database_url)  # /healthz writes its probe row: the schema must be there
    dead = make_engine("postgresql+asyncpg://x:y@127.0.0.1:9/none")  # port 9 (discard): nothing listens
    healthy = await start_server(create_app(engine=engine, metrics=Metrics(process=False)), "127.0.0.1", 0)
    broken = await start_server(create_app(engine=dead, metrics=Metrics(process=False)), "127.0.0.1", 0)
    try:
        assert await _run_healthcheck(healthy.port) == 0
        assert await _run_healthcheck(broken.port) != 0
    finally:
        await healthy.close()
        await broken.close()
        await engine.dispose()
        await dead.dispose()


def test_image_is_multi_stage_non_root_and_copies_every_package() -> None:
    steps = instructions()
    assert sum(word == "FROM" for word, _ in steps) >= 2
    runtime = runtime_stage()
    users = [rest for word, rest in runtime if word == "USER"]
    assert users and users[-1] not in ("root", "0")
    # every package setuptools installs is copied into the build context
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    copied = {rest.split()[0] for word, rest in steps if word == "COPY" and "--from" not in rest}
    for pattern in include:
        package = pattern.rstrip("*")
        assert package in copied, f"{package}/ is installed by pyproject but not copied into the image"
        assert (ROOT / package / "__init__.py").is_file() or package == "bot"
    # the SQLite default lives on the declared volume, and the health check probes the port the image exposes
    env = image_env()
    volume = next(rest for word, rest in runtime if word == "VOLUME")
    assert make_url(env["DATABASE_URL"]).database.startswith(volume.strip('[]"'))
    assert next(rest for word, rest in runtime if word == "EXPOSE") == env["WEB__PORT"]


def _lock() -> dict[str, tuple[str, list[str]]]:
    """requirements.lock: name -> (pinned version, hashes)."""
    locked: dict[str, tuple[str, list[str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z])", (ROOT / "requirements.lock").read_text()):
        m = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", block)
        if m:
            locked[_norm(m[1])] = (m[2], re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return locked


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_image_installs_the_hashed_lock_and_the_lock_satisfies_pyproject() -> None:
    from packaging.requirements import Requirement
    from packaging.version import Version

    runs = [rest for word, rest in instructions() if word == "RUN" and "pip install" in rest]
    assert any("--require-hashes" in r and "requirements.lock" in r for r in runs)
    locked = _lock()
    assert locked and all(hashes for _, hashes in locked.values())  # every package pinned and hashed
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for spec in project["dependencies"] + project["optional-dependencies"]["postgres"]:
        req = Requirement(spec)
        assert _norm(req.name) in locked, f"{req.name} is a dependency but not in requirements.lock: regenerate it"
        version = locked[_norm(req.name)][0]
        assert req.specifier.contains(Version(version), prereleases=True), f"lock has {req.name}=={version}: {spec}"


def test_lower_bounds_are_above_versions_with_published_advisories() -> None:
    from packaging.requirements import Requirement
    from packaging.version import Version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = {_norm(Requirement(s).name): Requirement(s).specifier for s in project["dependencies"]}
    fixed_in = {"aiohttp": "3.12.14", "h11": "0.16", "idna": "3.7", "certifi": "2024.7.4", "mako": "1.2.2",
                "pillow": "10.3"}
    for name, first_fixed in fixed_in.items():
        assert specs[name].contains(Version(first_fixed) , prereleases=True) is not False
        assert all(not specs[name].contains(v) for v in _older_than(first_fixed)), name


def _older_than(version: str) -> list[str]:
    """A few versions just below `version` (the vulnerable side of the bound)."""
    parts = [int(p) for p in version.split(".")]
    below = []
    for i in range(len(parts)):
        if parts[i] > 0:
            lower = parts[:i] + [parts[i] - 1] + [99] * (len(parts) - i - 1)
            below.append(".".join(map(str, lower)))
    return below or ["0"]


def _interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ${VAR:-default} and ${VAR:?error} (a required variable: compose refuses to start without it)."""

    def required(m: re.Match[str]) -> str:
        if not env.get(m[1]):
            raise LookupError(m[2])
        return env[m[1]]

    value = re.sub(r"\$\{(\w+):\?([^}]*)\}", required, value)
    return re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: env.get(m[1], m[2]), value)


def test_compose_bot_reaches_the_database_it_starts() -> None:
    db, bot = COMPOSE["services"]["db"], COMPOSE["services"]["bot"]
    assert db["image"].split(":")[1].startswith("15")
    assert any(v.startswith("pgdata:") for v in db["volumes"]) and "pgdata" in COMPOSE["volumes"]
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert bot["depends_on"]["db"]["condition"] == "service_healthy"
    assert bot["build"] == "."
    assert any((e["path"] if isinstance(e, dict) else e) == ".env" for e in bot["env_file"])

    # No default database password: without POSTGRES_PASSWORD neither service can be configured.
    for value in (db["environment"]["POSTGRES_PASSWORD"], bot["environment"]["DATABASE_URL"]):
        with pytest.raises(LookupError, match="POSTGRES_PASSWORD"):
            _interpolate(value, {})
    given = {"POSTGRES_PASSWORD": "from-dot-env"}
    db_env = {k: _interpolate(v, given) for k, v in db["environment"].items()}
    url = make_url(_interpolate(bot["environment"]["DATABASE_URL"], given))
    assert url.get_backend_name() == "postgresql" and url.get_driver_name() == "asyncpg"
    assert (url.host, url.port) == ("db", 5432)
    assert (url.username, url.password, url.database) == (
        db_env["POSTGRES_USER"], db_env["POSTGRES_PASSWORD"], db_env["POSTGRES_DB"],
    )  # fmt: skip
    # the same .env values override both sides alike
    custom = {"POSTGRES_USER": "u", "POSTGRES_PASSWORD": "p", "POSTGRES_DB": "d"}
    url = make_url(_interpolate(bot["environment"]["DATABASE_URL"], custom))
    assert (url.username, url.password, url.database) == ("u", "p", "d")


def test_compose_publishes_the_port_the_bot_listens_on() -> None:
    bot = COMPOSE["services"]["bot"]
    port = bot["environment"]["WEB__PORT"]
    assert port == image_env()["WEB__PORT"]
    assert all(_interpolate(p, {}).rsplit(":", 1)[1] == port for p in bot["ports"])


@pytest.mark.parametrize("path", ["Dockerfile", "docker-compose.yml", ".dockerignore"])
def test_container_files_do_not_carry_secrets(path: str) -> None:
    text = (ROOT / path).read_text()
    assert not re.search(r"\d{6,}:[A-Za-z0-9_-]{30,}", text)
    assert "BOT_TOKEN=" not in text
