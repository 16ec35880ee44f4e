#!/usr/bin/env bash
# Image test: builds deploy/Containerfile with buildah and runs the image's own filesystem, as the image's user,
# the way a container runtime would start it, without one (this machine's runtime is refused: no cgroups).
#
#   0. the deployment examples: compose.yaml against the compose specification's schema, the Kubernetes
#      manifests against Kubernetes' (strict), haproxy.cfg by haproxy -c, and the numbers they must agree on
#      (scripts/deploy_check.py);
#   1. the base: a Debian 12 minbase made by mmdebstrap, imported as a local image (no registry is needed);
#      cached in target/image-test/, so only the first run reaches deb.debian.org (an install step, like apt-get);
#   2. `buildah bud --isolation chroot --format docker` of deploy/Containerfile with BASE= that image and BINARY=
#      target/$PROFILE/bridge-sandbox: the Containerfile a docker or podman build elsewhere uses, unchanged;
#   3. the image's configuration: a numeric non-root user, port 8080, the data volume, SIGTERM, the health check;
#   4. the image's size: as buildah lists it, its filesystem uncompressed, and its layers gzip-compressed (what a
#      registry stores and a pull transfers);
#   5. `buildah mount` gives its filesystem. In new network, mount and PID namespaces (the network has only
#      loopback), with /proc and a minimal /dev mounted as a runtime would, its entrypoint and command run under
#      chroot as its user, with its environment and nothing else:
#      * its health check command (from the image's configuration) turns 0; GET /livez and /readyz answer 200;
#      * the process runs as the image's user with no capability; the store is made in the volume, owned by it;
#      * an operator command (`token`) works in the image; the log holds no colour code (not a terminal);
#      * SIGTERM (its stop signal) stops it with exit status 0;
#      then the Kubernetes Deployment's container as far as it can be without Kubernetes: its args and its
#      Secret's variables (a database URL without password, and PGPASSWORD) against a throw-away PostgreSQL
#      server on the namespace's loopback, the root filesystem read-only and /tmp a tmpfs (readOnlyRootFilesystem,
#      the emptyDir): healthy, then stopped by SIGTERM within terminationGracePeriodSeconds less the preStop sleep.
#
#   scripts/image-test.sh                  # PROFILE=release: the image as deployed (a release build: ~11 min on 2 cores)
#   PROFILE=debug scripts/image-test.sh    # the debug binary the tests built (CI): the same Containerfile
#
# Needs root; buildah, mmdebstrap, haproxy (Debian: apt-get install --no-install-recommends buildah mmdebstrap
# haproxy); check-jsonschema and kubernetes-validate (PyPI); unshare, chroot, runuser (util-linux, coreutils), ip
# (iproute2), python3 with PyYAML, and PostgreSQL's binaries. .ci/run installs them. Every connection the test
# makes is to the namespace's 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
if [ "$(id -u)" != 0 ]; then
    echo "image-test: needs root (buildah's storage, chroot, namespaces)" >&2
    exit 1
fi
for tool in buildah mmdebstrap haproxy check-jsonschema kubernetes-validate unshare chroot runuser ip python3; do
    command -v "$tool" >/dev/null || { echo "image-test: $tool is missing" >&2; exit 1; }
done
# PostgreSQL's binaries where they are installed (PATH may hold links to only some of them).
PG_BIN=$(dirname "$(readlink -f "$(command -v initdb 2>/dev/null || ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1)")")
if [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/psql" ] || ! id postgres >/dev/null 2>&1; then
    echo "image-test: PostgreSQL's binaries (initdb, pg_ctl, psql) and its user postgres are missing" >&2
    exit 1
fi
started=$(date +%s)
step() { echo "== image-test: $* ($(($(date +%s) - started)) s)"; }
if [ "$PROFILE" = release ]; then
    cargo build --release -q --locked -p bridge-sandbox --bin bridge-sandbox
else
    cargo build -q --locked -p bridge-sandbox --bin bridge-sandbox
fi
BINARY=target/$PROFILE/bridge-sandbox
if [ ! -x "$BINARY" ]; then
    echo "image-test: $BINARY is missing: the build context is the repository (.dockerignore), so target/ must be" \
        "the repository's (CARGO_TARGET_DIR unset)" >&2
    exit 1
fi
WORK=$PWD/target/image-test
mkdir -p "$WORK"

step "0. the deployment examples (deploy/)"
check-jsonschema --builtin-schema vendor.compose-spec deploy/compose.yaml
kubernetes-validate --strict --quiet deploy/kubernetes/deployment.yaml deploy/kubernetes/service.yaml \
    deploy/kubernetes/pod-disruption-budget.yaml deploy/kubernetes/postgres.yaml
haproxy -c -q -f deploy/haproxy.cfg
python3 scripts/deploy_check.py "$BINARY"

# buildah's own storage under target/, so the test touches nothing of the host's (/var/lib/containers) and a rerun
# finds the base and the cached build steps.
BUILDAH=(buildah --root "$WORK/storage" --runroot "$WORK/run" --storage-driver overlay)
BASE_IMAGE=localhost/bridge-sandbox-base:bookworm
IMAGE=localhost/bridge-sandbox:$PROFILE

step "1. the base: Debian 12 minbase (mmdebstrap, cached in $WORK)"
if [ ! -f "$WORK/base-bookworm.tar" ]; then
    mmdebstrap --quiet --variant=minbase --format=tar bookworm "$WORK/base-bookworm.tar.part"
    mv "$WORK/base-bookworm.tar.part" "$WORK/base-bookworm.tar"
fi
if [ -z "$("${BUILDAH[@]}" images --quiet "$BASE_IMAGE" 2>/dev/null)" ]; then
    base=$("${BUILDAH[@]}" from scratch)
    "${BUILDAH[@]}" add --quiet "$base" "$WORK/base-bookworm.tar" /
    "${BUILDAH[@]}" commit --quiet --rm "$base" "$BASE_IMAGE" >/dev/null
fi

step "2. build deploy/Containerfile (BASE=$BASE_IMAGE, BINARY=$BINARY)"
"${BUILDAH[@]}" bud --quiet --layers --isolation chroot --format docker -f deploy/Containerfile \
    --build-arg "BASE=$BASE_IMAGE" --build-arg "BINARY=$BINARY" -t "$IMAGE" . >/dev/null
# Images of earlier runs that this one replaced.
"${BUILDAH[@]}" rmi --prune >/dev/null 2>&1 || true

step "3. the image's configuration"
"${BUILDAH[@]}" inspect --type image "$IMAGE" >"$WORK/config.json"
# Checks the configuration and prints shell assignments of what step 5 needs, with the Kubernetes container's
# (assigned first, so that a failed check stops the test: `eval "$(...)"` would go on).
assignments=$(python3 - "$WORK/config.json" deploy/kubernetes/deployment.yaml <<'EOF'
import json, shlex, sys
import yaml
config = json.load(open(sys.argv[1]))["Docker"]["config"]
def fail(why):
    sys.exit(f"image-test: the image's configuration: {why}: {json.dumps(config, indent=1)}")
user = config.get("User", "")
uid, _, gid = user.partition(":")
if not (uid.isdigit() and gid.isdigit() and int(uid) != 0 and int(gid) != 0):
    fail(f"the user {user!r} is not a numeric non-root user and group")
if "8080/tcp" not in config.get("ExposedPorts", {}):
    fail("port 8080 is not exposed")
if "/var/lib/bridge-sandbox" not in config.get("Volumes", {}):
    fail("no volume /var/lib/bridge-sandbox")
if config.get("StopSignal") != "SIGTERM":
    fail("the stop signal is not SIGTERM")
health = (config.get("Healthcheck") or {}).get("Test") or []
if not health or health[0] != "CMD":
    fail("no health check in exec form (CMD): the image has no shell")
entrypoint = config.get("Entrypoint") or []
pod = yaml.safe_load(open(sys.argv[2]))["spec"]["template"]["spec"]
container = pod["containers"][0]
def array(name, values):
    print(f"{name}=({' '.join(map(shlex.quote, values))})")
print(f"IMAGE_USER={shlex.quote(user)}")
array("IMAGE_COMMAND", entrypoint + (config.get("Cmd") or []))
array("IMAGE_HEALTH", health[1:])
array("IMAGE_ENV", config.get("Env") or [])
# Kubernetes: `args` replace the image's Cmd and keep its Entrypoint.
array("K8S_COMMAND", entrypoint + container["args"])
print(f"K8S_STOP_BOUND={pod['terminationGracePeriodSeconds'] - container['lifecycle']['preStop']['sleep']['seconds']}")
EOF
)
eval "$assignments"
echo "user $IMAGE_USER; command ${IMAGE_COMMAND[*]}; health check ${IMAGE_HEALTH[*]}"

container=$("${BUILDAH[@]}" from --quiet "$IMAGE")
cleanup() {
    "${BUILDAH[@]}" umount "$container" >/dev/null 2>&1 || true
    "${BUILDAH[@]}" rm "$container" >/dev/null 2>&1 || true
}
trap cleanup EXIT
ROOT=$("${BUILDAH[@]}" mount "$container")

step "4. the image's size"
stored=$("${BUILDAH[@]}" images --format '{{.Size}}' "$IMAGE")
filesystem=$(du -s --block-size=1 --apparent-size "$ROOT" | cut -f1)
binary=$(stat -c %s "$ROOT/usr/local/bin/bridge-sandbox")
rm -rf "$WORK/oci-$PROFILE"
"${BUILDAH[@]}" push --quiet --compression-format gzip "$IMAGE" "oci:$WORK/oci-$PROFILE" >/dev/null
compressed=$(python3 - "$WORK/oci-$PROFILE" <<'EOF'
import json, os, sys
root = sys.argv[1]
def blob(digest):
    return os.path.join(root, "blobs", *digest.split(":"))
index = json.load(open(os.path.join(root, "index.json")))
manifest = json.load(open(blob(index["manifests"][0]["digest"])))
print(sum(layer["size"] for layer in manifest["layers"]))
EOF
)
rm -rf "$WORK/oci-$PROFILE"
mb() { python3 -c "print(f'{$1 / 1e6:.1f} MB')"; }
echo "image $IMAGE: $stored as buildah lists it; filesystem $(mb "$filesystem") uncompressed, of which the binary" \
    "$(mb "$binary") and the rest (glibc, libgcc_s, users, directories) $(mb $((filesystem - binary)));" \
    "layers gzip-compressed $(mb "$compressed")"

step "5. run the image's filesystem as its user, in new network, mount and PID namespaces (loopback only)"
# Runs inside the namespaces: $1 the image's root. Everything it reaches is 127.0.0.1 of the new network.
inside() {
    set -euo pipefail
    local root=$1 log=$WORK/serve-$PROFILE.log pid answer
    ip link set lo up
    # What a runtime gives a container: /proc of its PID namespace, a /dev with the usual devices.
    mkdir -p "$root/proc" "$root/dev"
    mount -t proc proc "$root/proc"
    mount -t tmpfs -o mode=0755,size=64k tmpfs "$root/dev"
    for device in null zero full random urandom tty; do
        touch "$root/dev/$device"
        mount --bind "/dev/$device" "$root/dev/$device"
    done
    # As the image's user, with the image's environment (and $EXTRA_ENV) and nothing else. `start_image ... &`
    # execs, so that the process $! names is the sandbox itself (SIGTERM reaches it, /proc/$!/status is its).
    local extra_env=()
    as_image() { env -i "${IMAGE_ENV[@]}" "${extra_env[@]}" chroot --userspec="$IMAGE_USER" "$root" "$@"; }
    start_image() { exec env -i "${IMAGE_ENV[@]}" "${extra_env[@]}" chroot --userspec="$IMAGE_USER" "$root" "$@"; }
    get() {
        python3 -c 'import sys, urllib.request
answer = urllib.request.urlopen(sys.argv[1], timeout=5)
print(answer.status, answer.read().decode())' "$1"
    }
    wait_healthy() {
        local since=$SECONDS
        until as_image "${IMAGE_HEALTH[@]}" >/dev/null 2>&1; do
            kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "image-test: the sandbox exited" >&2; return 1; }
            if ((SECONDS - since > 90)); then
                cat "$log"; echo "image-test: not healthy within 90 s" >&2; return 1
            fi
            sleep 0.5
        done
        echo "health check: $(as_image "${IMAGE_HEALTH[@]}") ($((SECONDS - since)) s after the start)"
    }
    # SIGTERM; exit status 0 within $1 seconds.
    stop() {
        local bound=$1 status=0 since=$SECONDS
        kill -TERM "$pid"
        while kill -0 "$pid" 2>/dev/null && ((SECONDS - since <= bound)); do sleep 0.2; done
        kill -0 "$pid" 2>/dev/null && { cat "$log"; echo "image-test: still running $bound s after SIGTERM" >&2; return 1; }
        wait "$pid" || status=$?
        [ "$status" = 0 ] || { cat "$log"; echo "image-test: exit status $status after SIGTERM" >&2; return 1; }
        echo "SIGTERM: exit status 0 within $((SECONDS - since)) s (bound $bound s)"
    }

    echo "-- the image as it is (SQLite in its volume)"
    start_image "${IMAGE_COMMAND[@]}" >"$log" 2>&1 &
    pid=$!
    wait_healthy
    for probe in livez readyz; do
        answer=$(get "http://127.0.0.1:8080/$probe")
        [ "$answer" = '200 {"status":"ok"}' ] || { echo "image-test: /$probe answered $answer" >&2; return 1; }
        echo "/$probe: $answer"
    done
    local ids uid=${IMAGE_USER%%:*} gid=${IMAGE_USER##*:}
    ids=$(grep -E '^(Uid|Gid|Groups|CapEff):' "/proc/$pid/status" | tr -s '\t ' ' ')
    echo "the process: $(echo "$ids" | tr '\n' ';')"
    echo "$ids" | grep -qx "Uid: $uid $uid $uid $uid" || { echo "image-test: not the image's user" >&2; return 1; }
    echo "$ids" | grep -qx "Gid: $gid $gid $gid $gid" || { echo "image-test: not the image's group" >&2; return 1; }
    echo "$ids" | grep -qx "CapEff: 0000000000000000" || { echo "image-test: capabilities left" >&2; return 1; }
    local owner
    owner=$(stat -c %u:%g "$root/var/lib/bridge-sandbox/sandbox.db")
    [ "$owner" = "$uid:$gid" ] || { echo "image-test: the store is owned by $owner" >&2; return 1; }
    echo "the store: /var/lib/bridge-sandbox/sandbox.db, owned by $owner"
    local token
    token=$(as_image /usr/local/bin/bridge-sandbox token --project image-test)
    python3 - "$token" <<'EOF'
import sys, urllib.request
request = urllib.request.Request("http://127.0.0.1:8080/sandbox/clock", headers={"Authorization": "Bearer " + sys.argv[1]})
assert urllib.request.urlopen(request, timeout=5).status == 200
print("an operator command in the image: `bridge-sandbox token` minted a token that the sandbox accepts")
EOF
    stop 30
    if grep -q $'\x1b' "$log"; then
        echo "image-test: colour codes in the log written to a file" >&2
        return 1
    fi
    echo "the log: $(wc -l <"$log") lines, no colour code"

    echo "-- the Kubernetes Deployment's container: ${K8S_COMMAND[*]}"
    # PostgreSQL as its own user, on the namespace's loopback only.
    local pgdata=$WORK/pg-$PROFILE
    rm -rf "$pgdata" && mkdir -p "$pgdata" && chown postgres: "$pgdata"
    runuser -u postgres -- "$PG_BIN/initdb" -D "$pgdata/data" -U postgres --auth=trust >/dev/null
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pgdata/data" -l "$pgdata/log" -w \
        -o "-c listen_addresses=127.0.0.1 -c port=5432 -c unix_socket_directories=$pgdata" start >/dev/null
    runuser -u postgres -- "$PG_BIN/psql" -h 127.0.0.1 -U postgres -q -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE sandbox LOGIN PASSWORD 'image-test'" -c "CREATE DATABASE sandbox OWNER sandbox"
    # password authentication from here on, so that a password that did not arrive is refused.
    echo "host all all 127.0.0.1/32 scram-sha-256" >"$pgdata/data/pg_hba.conf"
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pgdata/data" reload >/dev/null
    # The Secret's two keys, as the Deployment passes them.
    extra_env=("BRIDGE_SANDBOX_DATABASE_URL=postgres://sandbox@127.0.0.1:5432/sandbox" "PGPASSWORD=image-test")
    # readOnlyRootFilesystem, and the emptyDir on /tmp.
    mount -o remount,bind,ro "$root"
    mount -t tmpfs -o mode=1777,size=64m tmpfs "$root/tmp"
    if touch "$root/var/lib/bridge-sandbox/written" 2>/dev/null; then
        echo "image-test: the root filesystem is not read-only" >&2
        return 1
    fi
    log=$WORK/serve-$PROFILE-kubernetes.log
    start_image "${K8S_COMMAND[@]}" >"$log" 2>&1 &
    pid=$!
    wait_healthy
    answer=$(get "http://127.0.0.1:8080/readyz")
    echo "on PostgreSQL (URL and PGPASSWORD as the Secret gives them), read-only root: /readyz $answer"
    grep -q '"level":"INFO"' "$log" || { echo "image-test: the Deployment's --log-format=json is not in force" >&2; return 1; }
    stop "$K8S_STOP_BOUND"
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pgdata/data" -m fast -w stop >/dev/null
    rm -rf "$pgdata"
}
export -f inside
export WORK PROFILE IMAGE_USER PG_BIN K8S_STOP_BOUND
# Arrays cannot be exported: passed as declarations.
timeout 600 unshare --net --mount --pid --fork --kill-child --mount-proc \
    bash -c "$(declare -p IMAGE_COMMAND IMAGE_HEALTH IMAGE_ENV K8S_COMMAND); inside \"\$1\"" _ "$ROOT"

step "done: the examples validate; the image builds and runs as its configuration and the Deployment say"
