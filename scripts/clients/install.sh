#!/usr/bin/env bash
# Installs the client generators that other teams run on the published document (GET /openapi.json), at pinned
# versions, from the package registries, into scripts/clients/ (nothing installed is committed):
#   * Python (python/requirements.txt, every package pinned, into python/.venv): openapi-python-client and
#     datamodel-code-generator (pydantic models), and what their generated code imports (httpx, attrs, pydantic);
#   * Node (package.json, package-lock.json: `npm ci`, into node_modules): openapi-typescript, openapi-fetch and
#     typescript.
# Idempotent: does nothing when what is installed was installed from the same pins (a stamp of the pin files).
# Used by .ci/run and by the tests in crates/bridge-sandbox/tests/it/clients.rs; by hand: scripts/clients/install.sh
set -euo pipefail
cd "$(dirname "$0")"
stamp() { cat python/requirements.txt package-lock.json | sha256sum | cut -d' ' -f1; }
want=$(stamp)
if [ -f .installed ] && [ "$(cat .installed)" = "$want" ] && [ -x python/.venv/bin/python ] && [ -d node_modules ]; then
    exit 0
fi
command -v python3 >/dev/null || { echo "install.sh: python3 (3.10 or newer) is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "install.sh: npm is required (Node.js 18 or newer)" >&2; exit 1; }
rm -f .installed
echo "installing the Python generators (python/requirements.txt) into scripts/clients/python/.venv" >&2
if ! python3 -m venv python/.venv >/dev/null 2>&1; then
    # Debian's python3 has no venv module until python3-venv is installed.
    apt-get install -y -qq python3-venv >/dev/null && python3 -m venv python/.venv
fi
python/.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -r python/requirements.txt
echo "installing openapi-typescript, openapi-fetch and typescript (package-lock.json)" >&2
npm ci --no-audit --no-fund --loglevel=error
echo "$want" > .installed
