#!/usr/bin/env bash
# Audit the pinned dependencies (requirements.lock, with hashes) for published vulnerabilities with pip-audit
# (https://github.com/pypa/pip-audit), against the PyPI advisory service (the Python Packaging Advisory Database
# through PyPI's JSON API; the default) or OSV (AUDIT_SERVICE=osv). Needs pip-audit (`pip install pip-audit`, or
# `pipx run pip-audit`) and a reachable advisory service: run it in CI with network access or on a workstation, and
# whenever requirements.lock changes. It reads the lock file only (--disable-pip: nothing is resolved or installed).
#
# Exit status: 0 no known vulnerability; 1 vulnerabilities found (pip-audit's report says which and the fixed
# versions); 2 pip-audit is not installed; 3 the advisory service cannot be reached, so nothing was audited (this
# is a failure, never a pass). AUDIT_PROBE_URL overrides the address checked first (a mirror, or a test).
set -euo pipefail
cd "$(dirname "$0")/.."
service=${AUDIT_SERVICE:-pypi}
python=${PYTHON:-python3}
# The first pinned package of the lock file: its advisories are what the probe asks for.
first=$(grep -m1 -E '^[A-Za-z0-9_.-]+==' requirements.lock | cut -d' ' -f1)
case "$service" in
    pypi) probe=${AUDIT_PROBE_URL:-https://pypi.org/pypi/${first%%==*}/${first#*==}/json} key=vulnerabilities ;;
    osv) probe=${AUDIT_PROBE_URL:-https://api.osv.dev/v1/vulns/PYSEC-2021-1} key=id ;;
    *) echo "AUDIT_SERVICE must be pypi or osv, not '$service'" >&2; exit 2 ;;
esac

# The service must answer with advisory data (a JSON object carrying `key`), not merely be there: a mirror or a
# proxy that serves package pages but no advisories would let every package pass unaudited.
if ! "$python" - "$probe" "$key" <<'PY'
import json, sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=10) as answer:
        data = json.load(answer)
    if not isinstance(data, dict) or sys.argv[2] not in data:
        raise ValueError(f"the answer has no {sys.argv[2]!r}: not advisory data")
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(1)
PY
then
    echo "the advisory service ($probe) cannot be reached from here or serves no advisories: nothing was audited." >&2
    echo "Run .ci/audit-deps.sh where it can be reached (CI with network access, a workstation)." >&2
    exit 3
fi

if command -v pip-audit >/dev/null 2>&1; then
    audit=(pip-audit)
elif "$python" -c "import pip_audit" >/dev/null 2>&1; then
    audit=("$python" -m pip_audit)
else
    echo "pip-audit is not installed: pip install pip-audit (or pipx run pip-audit -r requirements.lock)" >&2
    exit 2
fi

"${audit[@]}" --requirement requirements.lock --disable-pip --require-hashes --strict \
    --vulnerability-service "$service" --progress-spinner off
