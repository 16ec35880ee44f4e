#!/usr/bin/env python3
"""The numbers the deployment examples (deploy/) must agree on, checked (scripts/image-test.sh runs it after the
schema checks of compose.yaml and the Kubernetes manifests, and haproxy -c).

    python3 scripts/deploy_check.py BINARY     # BINARY: a bridge-sandbox build, for serve's defaults

* the Kubernetes Deployment runs the image's user (Containerfile USER), probes /livez and /readyz on the port the
  image listens on, takes the database URL and password from the Secret the PostgreSQL example uses, and its
  terminationGracePeriodSeconds covers the preStop sleep, --shutdown-grace and the last steps of a stop;
* compose's stop_grace_period covers --shutdown-grace and the last steps; --trusted-proxy names compose's network;
* HAProxy (compose's balancer) closes idle connections before the sandbox does (--idle-timeout) and waits for an
  answer longer than the sandbox's --request-timeout, so that the sandbox's own 503 reaches the client.

Prints what it compared; exits 1 on the first disagreement.
"""
import re
import subprocess
import sys
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
# What a stop takes after the grace period (a last lifecycle pass, leases handed back): measured about 0.5 s
# (docs/operations.md, "Stopping an instance"); kept whole seconds apart.
LAST_STEPS = 2


def seconds(text):
    """`20s`, `2m`, `500ms`, or a number of seconds."""
    match = re.fullmatch(r"(\d+)(ms|s|m)?", str(text).strip())
    if not match:
        sys.exit(f"deploy-check: {text!r} is not a duration this check reads")
    value, unit = int(match.group(1)), match.group(2) or "s"
    return value / 1000 if unit == "ms" else value * 60 if unit == "m" else value


def flag(args, name, default=None):
    for i, arg in enumerate(args):
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
        if arg == name:
            return args[i + 1]
    return default


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        sys.exit(1)


def serve_defaults(binary):
    help_text = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True, check=True).stdout
    defaults = {}
    for name in ["--shutdown-grace", "--idle-timeout", "--request-timeout"]:
        match = re.search(re.escape(name) + r" <[A-Z_]+>\n(?:.*\n)*?\s*\[default: ([^\]]+)\]", help_text)
        check(match is not None, f"serve --help gives the default of {name}")
        defaults[name] = match.group(1)
    return defaults


def main():
    defaults = serve_defaults(sys.argv[1])
    containerfile = (DEPLOY / "Containerfile").read_text()
    user = re.search(r"^USER (\d+):(\d+)$", containerfile, re.M)
    listen = re.search(r"BRIDGE_SANDBOX_LISTEN=\S+:(\d+)", containerfile)
    check(user is not None and listen is not None, "the Containerfile sets a numeric USER and the listening port")
    uid, gid, port = int(user.group(1)), int(user.group(2)), int(listen.group(1))
    check(re.search(rf"^EXPOSE {port}$", containerfile, re.M) is not None, f"the Containerfile exposes {port}")

    # Kubernetes.
    kubernetes = DEPLOY / "kubernetes"
    kustomization = yaml.safe_load((kubernetes / "kustomization.yaml").read_text())
    for resource in kustomization["resources"]:
        check((kubernetes / resource).is_file(), f"kustomization.yaml's resource {resource} exists")
    deployment = yaml.safe_load((kubernetes / "deployment.yaml").read_text())
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    security = pod["securityContext"]
    check(security.get("runAsNonRoot") is True and (security.get("runAsUser"), security.get("runAsGroup")) == (uid, gid),
          f"the Deployment runs as the image's user {uid}:{gid}, non-root")
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    check(ports.get("http") == port, f"the Deployment's port http is the image's {port}")
    for probe, path in [("startupProbe", "/livez"), ("livenessProbe", "/livez"), ("readinessProbe", "/readyz")]:
        get = container[probe]["httpGet"]
        check((get["path"], get["port"]) == (path, "http"), f"{probe} asks {path} on port http")
    args = container["args"]
    grace = seconds(flag(args, "--shutdown-grace", defaults["--shutdown-grace"]))
    pre_stop = container["lifecycle"]["preStop"]["sleep"]["seconds"]
    termination = pod["terminationGracePeriodSeconds"]
    check(pre_stop + grace + LAST_STEPS <= termination,
          f"preStop {pre_stop} s + --shutdown-grace {grace:g} s + {LAST_STEPS} s <= terminationGracePeriodSeconds {termination}")
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"] if "valueFrom" in e}
    database = env.get("BRIDGE_SANDBOX_DATABASE_URL"), env.get("PGPASSWORD")
    check(all(database), "the database URL and password come from a Secret")
    postgres = [d for d in yaml.safe_load_all((kubernetes / "postgres.yaml").read_text()) if d["kind"] == "StatefulSet"]
    postgres_env = {e["name"]: e for e in postgres[0]["spec"]["template"]["spec"]["containers"][0]["env"]}
    check(postgres_env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"] == database[1],
          "the PostgreSQL example's password is the sandbox's (one Secret key)")

    # Compose.
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    sandbox = compose["services"]["sandbox"]
    grace = seconds(flag(sandbox["command"], "--shutdown-grace", defaults["--shutdown-grace"]))
    stop = seconds(sandbox["stop_grace_period"])
    check(grace + LAST_STEPS <= stop, f"compose: --shutdown-grace {grace:g} s + {LAST_STEPS} s <= stop_grace_period {stop:g} s")
    subnet = compose["networks"]["default"]["ipam"]["config"][0]["subnet"]
    check(flag(sandbox["command"], "--trusted-proxy") == subnet, f"compose: --trusted-proxy is the network {subnet}")
    check(sandbox["build"]["dockerfile"] == "deploy/Containerfile", "compose builds deploy/Containerfile")

    # HAProxy.
    haproxy = (DEPLOY / "haproxy.cfg").read_text()
    keep_alive = seconds(re.search(r"timeout http-keep-alive (\S+)", haproxy).group(1))
    server = seconds(re.search(r"timeout server (\S+)", haproxy).group(1))
    idle = seconds(flag(sandbox["command"], "--idle-timeout", defaults["--idle-timeout"]))
    request = seconds(flag(sandbox["command"], "--request-timeout", defaults["--request-timeout"]))
    check(keep_alive < idle, f"haproxy: timeout http-keep-alive {keep_alive:g} s < the sandbox's --idle-timeout {idle:g} s")
    check(server > request, f"haproxy: timeout server {server:g} s > the sandbox's --request-timeout {request:g} s")
    check(re.search(rf"server-template \S+ \d+ sandbox:{port}\b", haproxy) is not None,
          f"haproxy: the servers are the compose service sandbox on {port}")
    check("uri /readyz" in haproxy, "haproxy checks /readyz")


if __name__ == "__main__":
    main()
