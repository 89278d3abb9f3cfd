#!/usr/bin/env python3
"""Apply a CDI device to an OCI bundle the way a container runtime does, and run a program in it.

    apply_cdi.py apply SPEC KIND=DEVICE BUNDLE   merge the device's and the spec's containerEdits into
                                                 BUNDLE/config.json (env by name, mounts and hooks
                                                 appended), then run the createRuntime and
                                                 createContainer hooks with the container's state on
                                                 stdin, as runc does; a failing hook fails it
    apply_cdi.py run BUNDLE CMD...               CMD in the bundle's root as its process would be:
                                                 its environment only, its bind mounts made in a
                                                 private mount namespace, /proc and /dev's basic nodes

Needs root, unshare and chroot (run)."""
import json, os, subprocess, sys


def merge(config, e):
    proc = config.setdefault("process", {})
    env = proc.setdefault("env", [])
    for v in e.get("env", []):
        name = v.split("=", 1)[0]
        env[:] = [x for x in env if x.split("=", 1)[0] != name] + [v]
    for m in e.get("mounts", []):
        config.setdefault("mounts", []).append({"destination": m["containerPath"], "source": m["hostPath"],
                                                "type": m.get("type", "bind"), "options": m.get("options", [])})
    for h in e.get("hooks", []):
        hook = {"path": h["path"]}
        if h.get("args"): hook["args"] = h["args"]
        if h.get("env"): hook["env"] = h["env"]
        config.setdefault("hooks", {}).setdefault(h["hookName"], []).append(hook)


def apply(spec_path, qualified, bundle):
    spec = json.load(open(spec_path))
    kind, _, name = qualified.partition("=")
    if spec["kind"] != kind:
        sys.exit(f"apply_cdi: {spec_path} is {spec['kind']}, not {kind}")
    dev = [d for d in spec["devices"] if d["name"] == name]
    if not dev:
        sys.exit(f"apply_cdi: no device {name} in {spec_path}")
    cfg_path = os.path.join(bundle, "config.json")
    config = json.load(open(cfg_path))
    if "containerEdits" in spec: merge(config, spec["containerEdits"])
    merge(config, dev[0]["containerEdits"])
    json.dump(config, open(cfg_path, "w"), indent=1)
    state = json.dumps({"ociVersion": "1.0.2", "id": "cdi-test", "status": "creating", "pid": os.getpid(),
                        "bundle": os.path.abspath(bundle)})
    for phase in ("createRuntime", "createContainer"):
        for h in config.get("hooks", {}).get(phase, []):
            args = h.get("args") or [h["path"]]
            r = subprocess.run(args, executable=h["path"], input=state.encode(), env=dict(
                v.split("=", 1) for v in h.get("env", [])), capture_output=True)
            sys.stderr.write(r.stderr.decode())
            if r.returncode:
                sys.exit(f"apply_cdi: the {phase} hook {h['path']} failed with status {r.returncode}")


def run(bundle, cmd):
    config = json.load(open(os.path.join(bundle, "config.json")))
    root = config["root"]["path"]
    root = root if root.startswith("/") else os.path.join(bundle, root)
    steps = ['set -e', f'r={root!r}', 'mount -t proc proc "$r/proc"', 'mount -t tmpfs tmpfs "$r/tmp"']
    steps += [f'mount --bind /dev/{d} "$r/dev/{d}"' for d in ("null", "zero", "random", "urandom")]
    for m in config.get("mounts", []):
        src, dst = m["source"], root + m["destination"]
        steps.append(f'[ -d {src!r} ] && mkdir -p {dst!r} || {{ mkdir -p "$(dirname {dst!r})"; [ -e {dst!r} ] || : > {dst!r}; }}')
        steps.append(f'mount --bind {src!r} {dst!r}')
        if "ro" in m.get("options", []):
            steps.append(f'mount -o remount,bind,ro {dst!r}')
    env = config.get("process", {}).get("env", [])
    steps.append('exec chroot "$r" /usr/bin/env -i "$@"')
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "--", "/bin/sh", "-c", "\n".join(steps), "_"]
                       + env + cmd)
    sys.exit(r.returncode)


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "apply":
        apply(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) >= 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
