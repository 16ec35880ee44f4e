#!/usr/bin/env bash
# Installs the production service's official TypeScript SDK (`@rhino.fi/sdk`, pinned version and integrity) and
# what its HTTP clients need beside them (`openapi-fetch`, and `typescript` for production-fixtures.mjs) into
# scripts/sdk/node_modules. The SDK is fetched with `npm pack` (its blockchain dependencies are not needed by the
# HTTP clients and are not installed) and checked against the registry's integrity string recorded here.
# Nothing of the SDK is committed. Idempotent: does nothing when the pinned version is already installed.
set -euo pipefail
cd "$(dirname "$0")"
SDK_VERSION=1.14.0
SDK_INTEGRITY='sha512-+zCJTgBezcyqF4N54APJ53E/wqnLANG1I+2ht/Wra31SFLXjDjkFvqHe9Bj2yIkjllXcXhuflvYR5YGpu1fJNg=='
dest=node_modules/@rhino.fi/sdk
if [ -f "$dest/package.json" ] && grep -q "\"version\": \"$SDK_VERSION\"" "$dest/package.json" \
    && [ -d node_modules/openapi-fetch ] && [ -d node_modules/typescript ]; then
    exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm is required (Node.js 18 or newer)" >&2; exit 1; }
echo "installing openapi-fetch and typescript (package-lock.json)" >&2
npm ci --no-audit --no-fund --loglevel=error
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetching @rhino.fi/sdk@$SDK_VERSION with npm pack" >&2
(cd "$tmp" && npm pack "@rhino.fi/sdk@$SDK_VERSION" --loglevel=error >/dev/null)
tarball=$(ls "$tmp"/*.tgz)
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 | tr -d '\n')"
if [ "$actual" != "$SDK_INTEGRITY" ]; then
    echo "install.sh: integrity mismatch for @rhino.fi/sdk@$SDK_VERSION: $actual" >&2
    exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"
tar -xzf "$tarball" -C "$dest" --strip-components=1
echo "installed @rhino.fi/sdk@$SDK_VERSION into scripts/sdk/$dest" >&2
