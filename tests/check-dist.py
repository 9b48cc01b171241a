#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
#
# Checks dist/kubernetes/*.yaml (every document) and the hooks.d file
# dist/oci-hooks.d/sfilter.json, with no cluster and no runtime: the fields
# Kubernetes and oci-hooks(5) require, and what sfilterd and the hook need
# on a node (docs/kubernetes.md), and that the DaemonSet runs the image
# `make image` builds (the Makefile's IMAGE_NAME, IMAGE_BINS and
# IMAGE_APPLETS) and nothing the image lacks. One line per check, $SF_PREFIX in front
# (tests/run-all.sh counts them): "PASS name", "FAIL name: why" (further
# reasons on lines above it), or, for the checks that read YAML when
# Debian's python3-yaml is missing, "SKIP name: no python3-yaml".
import copy
import glob
import json
import os
import re
import shlex
import sys

import check_report

try:
    import yaml
except ImportError:
    yaml = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOKS_JSON = "dist/oci-hooks.d/sfilter.json"
# Where the init container puts the hook on the host: the BINDIR the
# hooks.d file it writes names.
NODE_BINDIR = "/usr/local/bin"
HOOKS_DIRS = ("/etc/containers/oci/hooks.d", "/usr/share/containers/oci/hooks.d")
PROFILES_DIR = "/etc/sfilter/profiles"
# The 1.0.0 schema's stages (containers/common pkg/hooks/1.0.0/hook.go).
OCI_STAGES = {"prestart", "createRuntime", "createContainer", "startContainer",
              "poststart", "poststop"}
# The image make image builds: its name and contents are the Makefile's.
MAKEFILE = "Makefile"
IMAGE_BINDIR = "/usr/local/bin"
IMAGE_APPLET_DIR = "/bin"
# What a shell runs itself (busybox ash), and the words of its syntax.
SHELL_WORDS = {"for", "in", "do", "done", "if", "then", "else", "elif", "fi", "while",
               "case", "esac", "[", "test", "continue", "break", "exit", "set", "echo",
               "export", "{", "}", "!"}
# What sfilterd opens on the host, each at the same path in its container.
SFILTERD_MOUNTS = {"/sys/fs/bpf": "Bidirectional", "/sys/kernel/security": None,
                   "/sys/kernel/btf": None, "/run/sfilter": None, "/sys/fs/cgroup": None}


def load():
    dist = {"docs": [], "errors": []}
    for path in sorted(glob.glob(os.path.join(ROOT, "dist/kubernetes/*.yaml"))):
        try:
            with open(path) as f:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
        except (OSError, yaml.YAMLError) as e:
            dist["errors"].append(f"{os.path.relpath(path, ROOT)}: {e}")
            continue
        dist["docs"] += [(os.path.relpath(path, ROOT), d) for d in docs]
    return dist


def of_kind(dist, kind):
    return [d for _, d in dist["docs"] if isinstance(d, dict) and d.get("kind") == kind]


def pod_spec(doc):
    if doc.get("kind") == "Pod":
        return doc.get("spec") or {}
    return ((doc.get("spec") or {}).get("template") or {}).get("spec") or {}


def containers(spec, init=True):
    return (spec.get("initContainers") or [] if init else []) + (spec.get("containers") or [])


def sfilterd(dist):
    """The DaemonSet whose container runs sfilterd, its pod spec and that container."""
    for ds in of_kind(dist, "DaemonSet"):
        for c in containers(pod_spec(ds), init=False):
            if os.path.basename(str((c.get("command") or [""])[0])) == "sfilterd":
                return ds, pod_spec(ds), c
    raise LookupError("no DaemonSet has a container whose command runs sfilterd")


def mount_of(container, path):
    """The volumeMount PATH is under in CONTAINER (the deepest), or {}."""
    under = [m for m in container.get("volumeMounts") or [] if m.get("mountPath")
             and (path + "/").startswith(m["mountPath"].rstrip("/") + "/")]
    return max(under, key=lambda m: len(m["mountPath"].rstrip("/")), default={})


def host_path(spec, container, path):
    """The host path that PATH in CONTAINER is, through a hostPath mount; or None."""
    m = mount_of(container, path)
    vol = [v for v in spec.get("volumes") or [] if m and v.get("name") == m.get("name")]
    if not (vol and vol[0].get("hostPath")):
        return None
    rest = path[len(m["mountPath"].rstrip("/")):]
    return os.path.normpath(os.path.join(vol[0]["hostPath"]["path"], m.get("subPath", "")) + rest)


def hooks_file():
    with open(os.path.join(ROOT, HOOKS_JSON)) as f:
        return json.loads(f.read().replace("@BINDIR@", NODE_BINDIR)
                          .replace("@PROFILEDIR@", PROFILES_DIR))


def when_matches(when, annotations):
    """oci-hooks(5) 1.0.0 on annotations alone: every key/value pattern pair
    matches some annotation (unanchored, as Go's regexp.MatchString). A
    pattern Python's re refuses raises re.error: the check's FAIL."""
    pairs = (when.get("annotations") or {}).items()
    return bool(pairs) and all(
        any(re.search(k, ak) and re.search(v, av) for ak, av in annotations.items())
        for k, v in pairs)


def check_hooks_json(_):
    bad = []
    h = hooks_file()
    if h.get("version") != "1.0.0":
        bad.append(f"version is {h.get('version')!r}, not \"1.0.0\"")
    hook, when, stages = h.get("hook") or {}, h.get("when") or {}, h.get("stages") or []
    if not str(hook.get("path", "")).startswith("/") or \
            os.path.basename(str(hook.get("path"))) != "sfilter-oci-hook":
        bad.append(f"hook.path {hook.get('path')!r} is no absolute path to sfilter-oci-hook")
    args = hook.get("args") or [None]
    if args[0] != "sfilter-oci-hook":
        bad.append("hook.args does not start with argv[0] sfilter-oci-hook")
    if "--profile-dir" not in args or args[args.index("--profile-dir") + 1:][:1] != \
            [PROFILES_DIR]:
        bad.append(f"hook.args do not name the profile directory: --profile-dir {PROFILES_DIR}")
    if "timeout" in hook and not (isinstance(hook["timeout"], int) and hook["timeout"] > 0):
        bad.append("hook.timeout is not a positive integer")
    if not set(when) & {"always", "annotations", "commands", "hasBindMounts"}:
        bad.append("when sets no condition")
    for ann, want in (({"io.sfilter.profile": "/etc/sfilter/profiles/a.json"}, True),
                      ({"io.sfilter.take-seccomp": "true"}, True),
                      ({"io.sfilter.mode": "shadow"}, False), ({}, False)):
        if not bad and when_matches(when, ann) != want:
            bad.append(f"when {'misses' if want else 'matches'} annotations {ann}")
    if "createRuntime" not in stages:
        bad.append(f"stages {stages} lack createRuntime")
    bad += [f"unknown stage {s!r}" for s in stages if s not in OCI_STAGES]
    return bad


def check_fields(dist):
    """apiVersion, kind, metadata.name; a DaemonSet's selector matches its
    template's labels; each container has an image and a command."""
    bad = list(dist["errors"])
    for path, d in dist["docs"]:
        d = d if isinstance(d, dict) else {}
        name = f"{path}: {d.get('kind')} {(d.get('metadata') or {}).get('name')}"
        bad += [f"{name}: no {f}" for f in ("apiVersion", "kind") if not d.get(f)]
        bad += [] if (d.get("metadata") or {}).get("name") else [f"{name}: no metadata.name"]
        if d.get("kind") == "DaemonSet":
            want = ((d.get("spec") or {}).get("selector") or {}).get("matchLabels")
            have = ((d["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
            bad += [f"{name}: template lacks label {k}={v}"
                    for k, v in (want or {}).items() if have.get(k) != v]
            bad += [] if want else [f"{name}: no spec.selector.matchLabels"]
        for c in containers(pod_spec(d)) if d.get("kind") in ("DaemonSet", "Pod") else []:
            cmd = c.get("command")
            bad += [] if c.get("image") else [f"{name}, container {c.get('name')}: no image"]
            if not (isinstance(cmd, list) and cmd and all(isinstance(a, str) for a in cmd)):
                bad.append(f"{name}, container {c.get('name')}: command is no list of strings")
    return bad


def check_privileged(dist):
    _, spec, c = sfilterd(dist)
    bad = [] if spec.get("hostPID") is True else ["the pod spec lacks hostPID: true"]
    if ((c.get("securityContext") or {}).get("privileged")) is not True:
        bad.append("the sfilterd container is not privileged")
    return bad


def check_mounts(dist):
    _, spec, c = sfilterd(dist)
    bad = []
    for path, propagation in SFILTERD_MOUNTS.items():
        have = mount_of(c, path).get("mountPropagation")
        if host_path(spec, c, path) != path:
            bad.append(f"no hostPath {path} mounted at {path} in the sfilterd container")
        elif propagation and have != propagation:
            bad.append(f"{path}: mountPropagation is {have}, not {propagation}")
    return bad


def check_foreground(dist):
    cmd = sfilterd(dist)[2]["command"]
    bad = [] if "--foreground" in cmd else ["sfilterd runs without --foreground"]
    if "--log" not in cmd or cmd[cmd.index("--log") + 1:][:1] != ["-"]:
        bad.append("sfilterd runs without --log - (events on stdout)")
    return bad


def check_probes(dist):
    c = sfilterd(dist)[2]
    bad = []
    for probe in ("readinessProbe", "livenessProbe"):
        cmd = ((c.get(probe) or {}).get("exec") or {}).get("command") or []
        if not (cmd and os.path.basename(cmd[0]) == "sfctl" and cmd[1:] == ["status"]):
            bad.append(f"{probe} does not exec sfctl status")
    return bad


def init_script(spec):
    """Each init container with the script its command runs (sh -c ARG: ARG)."""
    for c in spec.get("initContainers") or []:
        cmd = c.get("command") or []
        yield c, cmd[-1] if len(cmd) > 2 and re.fullmatch(r"-\w*c", cmd[-2]) else ""


def moves(spec, c, script):
    """(line, host destination) of each mv and cp in SCRIPT, heredocs left out."""
    out = []
    body = re.sub(r"<<'EOF'\n.*?\nEOF\n", "\n", script, flags=re.S)
    for n, line in enumerate(body.splitlines()):
        words = shlex.split(line) if line.strip() else []
        if words[:1] in (["mv"], ["cp"]):
            dst = [w for w in words[1:] if not w.startswith("-")][-1]
            out.append((n, host_path(spec, c, dst)))
    return out


def check_init_hooks(dist):
    _, spec, _ = sfilterd(dist)
    want = hooks_file()
    for c, script in init_script(spec):
        doc = re.search(r"cat > (\S+) <<'EOF'\n(.*?)\nEOF\n", script, re.S)
        if not doc:
            continue
        bad = []
        try:
            if json.loads(doc.group(2)) != want:
                bad.append(f"the hooks.d file it writes is not {HOOKS_JSON} with "
                           f"@BINDIR@ = {NODE_BINDIR}, @PROFILEDIR@ = {PROFILES_DIR}")
        except ValueError as e:
            bad.append(f"the hooks.d file it writes is no JSON: {e}")
        mv = moves(spec, c, script)
        dst = [(n, p) for n, p in mv if p and os.path.dirname(p) in HOOKS_DIRS
               and p.endswith(".json")]
        binary = [n for n, p in mv if p == want["hook"]["path"]]
        if not dst:
            bad.append(f"nothing ends up in {' or '.join(HOOKS_DIRS)} on the host")
        if not binary:
            bad.append(f"it does not put the hook at {want['hook']['path']} on the host")
        elif dst and binary[0] > dst[-1][0]:
            bad.append("it puts the hook binary in place after the hooks.d file")
        return bad
    return ["no init container writes a hooks.d file (cat > FILE <<'EOF')"]


def make_vars():
    """The Makefile's simple assignments (:=, ?=, =), $(VAR) expanded."""
    raw = {}
    with open(os.path.join(ROOT, MAKEFILE)) as f:
        for line in f:
            m = re.match(r"^([A-Z0-9_]+)\s*(?::=|\?=|=)\s*(.*?)\s*$", line)
            if not m:
                continue
            val = m.group(2)
            # The one $(shell) the version needs: the file that owns it.
            f_ = re.fullmatch(r"\$\(shell cat ([\w./-]+)\)", val)
            if f_:
                with open(os.path.join(ROOT, f_.group(1))) as vf:
                    val = vf.read().strip()
            if "$(shell" not in val:
                raw.setdefault(m.group(1), val)

    def expand(v, depth=0):
        return re.sub(r"\$\(([A-Z0-9_]+)\)",
                      lambda m: expand(raw.get(m.group(1), ""), depth + 1) if depth < 8 else "",
                      v)
    return {k: expand(v) for k, v in raw.items()}


def script_commands(script):
    """The programs a script runs: the first word of each command, heredocs,
    comments and the shell's own words left out."""
    body = re.sub(r"<<'EOF'\n.*?\nEOF\n", "\n", script, flags=re.S)
    out = set()
    for line in body.splitlines():
        for part in re.split(r"\|\||&&|;|\|", line):
            words = shlex.split(part, comments=True) if part.strip() else []
            while words and words[0] in SHELL_WORDS - {"[", "test", "echo", "exit"}:
                words = words[1:] if words[0] not in ("for", "case") else []
            if words and words[0] not in SHELL_WORDS:
                out.add(words[0])
    return out


def check_image(dist):
    """Every container of the DaemonSet runs make image's image, by its name
    and version, and each program its commands, probes and the init
    container's script run is in it."""
    v = make_vars()
    name = v.get("IMAGE_NAME")
    if not name or not v.get("IMAGE_VERSION"):
        return [f"{MAKEFILE} has no IMAGE_NAME and IMAGE_VERSION"]
    have = {f"{IMAGE_BINDIR}/{os.path.basename(b)}" for b in v.get("IMAGE_BINS", "").split()}
    applets = v.get("IMAGE_APPLETS", "").split()
    have |= {f"{IMAGE_APPLET_DIR}/{a}" for a in applets}
    _, spec, _ = sfilterd(dist)
    bad = []
    for c in containers(spec):
        who = f"container {c.get('name')}"
        if c.get("image") != name:
            bad.append(f"{who} runs {c.get('image')}, not {name} (make image)")
        cmds = [c.get("command") or []]
        cmds += [((c.get(p) or {}).get("exec") or {}).get("command") or []
                 for p in ("readinessProbe", "livenessProbe", "startupProbe")]
        for cmd in [x for x in cmds if x]:
            if cmd[0] not in have:
                bad.append(f"{who} runs {cmd[0]}, which the image lacks")
    for c, script in init_script(spec):
        for prog in sorted(script_commands(script)):
            if prog not in applets and f"{IMAGE_APPLET_DIR}/{prog}" not in have:
                bad.append(f"init container {c.get('name')}'s script runs {prog}, "
                           f"not in IMAGE_APPLETS")
    return bad


def profiles(dist, data=True):
    for m in of_kind(dist, "ConfigMap"):
        if m["metadata"]["name"] == "sfilter-profiles":
            return (m.get("data") or {}) if data else m
    raise LookupError("no ConfigMap sfilter-profiles")


def check_init_profiles(dist):
    ds, spec, _ = sfilterd(dist)
    vols = {v.get("name"): v for v in spec.get("volumes") or []}
    for c, script in init_script(spec):
        cm = [m["mountPath"] for m in c.get("volumeMounts") or []
              if (vols.get(m.get("name")) or {}).get("configMap", {}).get("name")
              == "sfilter-profiles"]
        if cm and any(p and p.startswith(PROFILES_DIR + "/") for _, p in moves(spec, c, script)) \
                and cm[0].rstrip("/") + "/" in script:
            ns = profiles(dist, data=False)["metadata"].get("namespace")
            return [] if ns == ds["metadata"].get("namespace") else [
                f"ConfigMap sfilter-profiles is in namespace {ns}, the DaemonSet is not"]
    return [f"no init container copies ConfigMap sfilter-profiles to {PROFILES_DIR} on the host"]


def check_profiles(dist):
    data = profiles(dist)
    bad = [] if data else ["ConfigMap sfilter-profiles has no data"]
    for key, value in data.items():
        if not key.endswith(".json"):
            bad.append(f"{key}: not a .json name")
        try:
            action = str(dict(json.loads(value)).get("defaultAction", ""))
        except (ValueError, TypeError) as e:
            bad.append(f"{key}: not a JSON object: {e}")
            continue
        bad += [] if action.startswith("SCMP_ACT_") else [f"{key}: no defaultAction SCMP_ACT_*"]
    return bad


def check_example(dist):
    data, bad, seen = profiles(dist), [], 0
    for pod in of_kind(dist, "Pod"):
        ann = (pod.get("metadata") or {}).get("annotations") or {}
        name = pod["metadata"]["name"]
        if "io.sfilter.profile" in ann:
            seen += 1
            path = ann["io.sfilter.profile"]
            if os.path.dirname(path) not in ("", PROFILES_DIR) or \
                    os.path.basename(path) not in data:
                bad.append(f"Pod {name}: {path} is not a key of ConfigMap sfilter-profiles "
                           f"(a name in {PROFILES_DIR})")
        for key, allowed in (("io.sfilter.mode", ("enforce", "shadow", "complain")),
                             ("io.sfilter.arm", ("exec", "now"))):
            if key in ann and ann[key] not in allowed:
                bad.append(f"Pod {name}: {key}={ann[key]} is none of {', '.join(allowed)}")
    return bad if seen else ["no Pod has an io.sfilter.profile annotation"]


def check_self_test(_):
    """check_mounts passes a whole in-memory DaemonSet and fails it without
    its /sys/fs/bpf mount (the volume itself left in place)."""
    vols = [{"name": p, "hostPath": {"path": p}} for p in SFILTERD_MOUNTS]
    mounts = [{"name": p, "mountPath": p, **({"mountPropagation": how} if how else {})}
              for p, how in SFILTERD_MOUNTS.items()]
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "t"},
          "spec": {"template": {"spec": {"hostPID": True, "volumes": vols, "containers": [
              {"name": "d", "image": "i", "command": ["sfilterd"], "volumeMounts": mounts}]}}}}
    whole = {"docs": [("memory", ds)], "errors": []}
    broken = copy.deepcopy(whole)
    c = broken["docs"][0][1]["spec"]["template"]["spec"]["containers"][0]
    c["volumeMounts"] = [m for m in c["volumeMounts"] if m["mountPath"] != "/sys/fs/bpf"]
    if check_mounts(whole):
        return [f"the whole manifest fails: {check_mounts(whole)}"]
    if not any("/sys/fs/bpf" in why for why in check_mounts(broken)):
        return ["a DaemonSet without its /sys/fs/bpf mount passes"]
    return []


def check_image_self_test(dist):
    """check_image fails the manifests with the old placeholder image, a
    probe the image cannot run, and a script calling an applet it lacks."""
    broken = copy.deepcopy(dist)
    _, spec, c = sfilterd(broken)
    c["image"] = "ghcr.io/example/sfilter:0.1.0"
    c["readinessProbe"]["exec"]["command"][0] = "/usr/bin/sfctl"
    init = spec["initContainers"][0]
    init["command"][-1] = init["command"][-1].replace("chmod 755", "install -m 755", 1)
    why = " ".join(check_image(broken))
    return [f"check_image misses {what}" for what in
            ("ghcr.io/example/sfilter", "/usr/bin/sfctl", "runs install") if what not in why]


CHECKS = [  # name, function, needs YAML
    ("oci_hooks_d_file_injects_the_hook_at_create_runtime", check_hooks_json, False),
    ("kubernetes_manifests_have_the_fields_kubernetes_requires", check_fields, True),
    ("kubernetes_daemonset_is_privileged_with_host_pid", check_privileged, True),
    ("kubernetes_daemonset_mounts_what_sfilterd_needs", check_mounts, True),
    ("kubernetes_sfilterd_runs_in_the_foreground_logging_to_stdout", check_foreground, True),
    ("kubernetes_probes_run_sfctl_status", check_probes, True),
    ("kubernetes_init_container_writes_the_hooks_d_file", check_init_hooks, True),
    ("kubernetes_daemonset_runs_the_image_make_image_builds", check_image, True),
    ("kubernetes_init_container_copies_the_profiles_to_the_host", check_init_profiles, True),
    ("kubernetes_profiles_are_json_with_a_default_action", check_profiles, True),
    ("kubernetes_example_pod_names_a_profile_the_configmap_provides", check_example, True),
    ("check_dist_catches_a_missing_bpffs_mount", check_self_test, False),
    ("check_dist_catches_an_image_that_is_not_make_images", check_image_self_test, True),
]


def print_init_script():
    """--init-script: the script the DaemonSet's init container runs, for
    tests/test_engine_podman.c to run in the image as the kubelet would."""
    if not yaml:
        print("check-dist: --init-script: no python3-yaml", file=sys.stderr)
        return 1
    for _, script in init_script(sfilterd(load())[1]):
        if script:
            sys.stdout.write(script)
            return 0
    print("check-dist: --init-script: no init container runs sh -c", file=sys.stderr)
    return 1


def main():
    if sys.argv[1:] == ["--init-script"]:
        return print_init_script()
    dist = load() if yaml else None
    failed = False
    for name, check, needs_yaml in CHECKS:
        if needs_yaml and not yaml:
            check_report.skip(name, "no python3-yaml")
            continue
        failed |= check_report.run(name, check, dist, "dist")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
