#!/usr/bin/env python3
"""Validate a CDI spec (Container Device Interface, the spec runtimes such as containerd, CRI-O,
podman and the NVIDIA container toolkit read from /etc/cdi) by the rules of the CDI
specification: the fields a runtime requires, the names it accepts, absolute paths, known hook
names. Prints what is wrong and exits 1, or prints the devices' qualified names.

    tests/cdi/validate_cdi.py SPEC.json
"""
import json, re, sys

VERSIONS = {"0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "1.0.0"}
HOOKS = {"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"}
VENDOR = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
CLASS = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
DEVICE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$")
ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def edits(where, e, errors):
    if not isinstance(e, dict) or not any(e.get(k) for k in ("env", "deviceNodes", "mounts", "hooks")):
        errors.append(f"{where}: containerEdits is empty")
        return
    for k in e:
        if k not in ("env", "deviceNodes", "mounts", "hooks", "intelRdt", "additionalGIDs", "netDevices"):
            errors.append(f"{where}: unknown field {k!r}")
    for v in e.get("env", []):
        if not isinstance(v, str) or not ENV.match(v):
            errors.append(f"{where}: env {v!r} is not NAME=VALUE")
    for m in e.get("mounts", []):
        for f in ("hostPath", "containerPath"):
            if not isinstance(m.get(f), str) or not m[f].startswith("/"):
                errors.append(f"{where}: mount {f} {m.get(f)!r} is not an absolute path")
        if not all(isinstance(o, str) for o in m.get("options", [])):
            errors.append(f"{where}: mount options must be strings")
    for h in e.get("hooks", []):
        if h.get("hookName") not in HOOKS:
            errors.append(f"{where}: hookName {h.get('hookName')!r} is not one of {sorted(HOOKS)}")
        if not isinstance(h.get("path"), str) or not h["path"].startswith("/"):
            errors.append(f"{where}: hook path {h.get('path')!r} is not an absolute path")
        if not all(isinstance(a, str) for a in h.get("args", [])):
            errors.append(f"{where}: hook args must be strings")


def main():
    spec = json.load(open(sys.argv[1]))
    errors = []
    if spec.get("cdiVersion") not in VERSIONS:
        errors.append(f"cdiVersion {spec.get('cdiVersion')!r} is not one of {sorted(VERSIONS)}")
    kind = spec.get("kind", "")
    vendor, _, cls = kind.partition("/")
    if not (VENDOR.match(vendor) and CLASS.match(cls)):
        errors.append(f"kind {kind!r} is not vendor/class")
    devices = spec.get("devices")
    if not isinstance(devices, list) or not devices:
        errors.append("no devices (a spec needs at least one)")
        devices = []
    names = set()
    for d in devices:
        n = d.get("name", "")
        if not DEVICE.match(n):
            errors.append(f"device name {n!r} is not valid")
        if n in names:
            errors.append(f"device {n!r} twice")
        names.add(n)
        edits(f"device {n!r}", d.get("containerEdits"), errors)
    if "containerEdits" in spec:
        edits("spec", spec["containerEdits"], errors)
    for e in errors:
        print("invalid:", e)
    if errors:
        sys.exit(1)
    for n in sorted(names):
        print(f"{kind}={n}")


main()
