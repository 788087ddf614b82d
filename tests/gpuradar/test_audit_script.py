"""`.ci/audit-deps.sh`: pip-audit on requirements.lock where an advisory service answers, a clear failure (never a
pass) where none does. The service is a stand-in on 127.0.0.1 (AUDIT_PROBE_URL); pip-audit itself, where it is
needed, is a stand-in script on PATH that records its arguments: nothing reaches the internet."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testkit.provider_server import ProviderServer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "audit-deps.sh"


async def audit(probe: str, path: str, **extra: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDIT_")}
    env.update(AUDIT_PROBE_URL=probe, PATH=path, PYTHON=sys.executable, **extra)
    proc = await asyncio.create_subprocess_exec("bash", str(SCRIPT), env=env, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


@pytest.fixture
async def service() -> AsyncIterator[ProviderServer]:
    async with ProviderServer() as server:
        server.serve("/pypi/aiofiles/25.1.0/json", {"info": {}, "vulnerabilities": []})
        server.serve("/mirror/aiofiles/25.1.0/json", {"info": {}})  # package pages, but no advisories
        yield server


async def test_no_advisory_service_is_a_failure_that_says_so(service: ProviderServer) -> None:
    for probe in (service.base_url + "/missing", service.base_url + "/mirror/aiofiles/25.1.0/json",
                  "http://127.0.0.1:1/pypi"):
        rc, out = await audit(probe, "/usr/bin:/bin")
        assert rc == 3, out
        assert "nothing was audited" in out and probe in out


async def test_pip_audit_missing_is_said(service: ProviderServer) -> None:
    rc, out = await audit(service.base_url + "/pypi/aiofiles/25.1.0/json", "/usr/bin:/bin")
    assert rc == 2 and "pip install pip-audit" in out


async def test_the_lock_file_is_audited_as_pinned(service: ProviderServer, tmp_path: Path) -> None:
    stub = tmp_path / "pip-audit"
    stub.write_text('#!/bin/sh\necho "pip-audit $*"\nexit 1\n')  # as pip-audit does when it finds something
    stub.chmod(0o755)
    rc, out = await audit(service.base_url + "/pypi/aiofiles/25.1.0/json", f"{tmp_path}:/usr/bin:/bin")
    assert rc == 1  # its finding is the script's failure
    assert ("pip-audit --requirement requirements.lock --disable-pip --require-hashes --strict "
            "--vulnerability-service pypi") in out
    rc, out = await audit(service.base_url + "/pypi/aiofiles/25.1.0/json", f"{tmp_path}:/usr/bin:/bin",
                          AUDIT_SERVICE="nvd")
    assert rc == 2 and "pypi or osv" in out
