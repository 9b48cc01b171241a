#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
#
# Checks that the documentation says what the code does, with no build:
#  - every binary's long options, read from its code, are the ones its man
#    page documents, and the reverse (sfctl's commands too);
#  - DEVELOPERS.md's Layout table names every file git tracks under
#    classic2ebpf/, bpf/, loader/ and tests/lib/, and nothing that is gone;
#  - a number the docs state in more than one place (the README's table of
#    figures, the man pages, docs/) is the same everywhere, and the code's
#    where the code has it.
# One line per check, $SF_PREFIX in front (tests/run-all.sh counts them), as
# tests/check-dist.py prints them: "PASS name", "FAIL name: why" (further
# reasons on lines above it), "SKIP name: why".
import glob
import os
import re
import subprocess
import sys

import check_report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each binary: its man page and the files its options are parsed in. Options
# come from the `struct option` tables (getopt_long) of those files, or,
# for sfilter-runc, which reads its --sfilter-* words by hand, from its
# option() function's IS("name") tests and its valued[] list.
BINARIES = [
    ("sfilterd", "man/sfilterd.8", ["loader/daemon/main.c"]),
    ("sfctl", "man/sfctl.8", ["loader/cli/sfctl*.c"]),
    ("sfrun", "man/sfrun.1", ["loader/cli/sfrun.c"]),
    ("sfilter-oci-hook", "man/sfilter-oci-hook.8", ["loader/cli/oci_hook*.c"]),
    ("sfilter-runc", "man/sfilter-runc.8", ["loader/cli/runc_wrap*.c"]),
    ("classic2ebpf", "man/classic2ebpf.1", ["classic2ebpf/main.c"]),
]
# sfilter-runc's options are these words after its prefix.
RUNC_PREFIX = "sfilter-"
# Options every binary has and a man page may document once, in its
# CONVENTIONS section: until a page has that section they are not asked of it.
COMMON_OPTIONS = {"help", "version"}
# Where DEVELOPERS.md's Layout table must name every file.
LAYOUT_DIRS = ("classic2ebpf/", "bpf/", "loader/", "tests/lib/")
# Where stated figures are looked for.
DOC_FILES = ["README.md", "DEVELOPERS.md", "docs/*.md", "man/*"]


def read(path, root=ROOT):
    with open(os.path.join(root, path), errors="replace") as f:
        return f.read()


def files(patterns, root=ROOT):
    out = []
    for p in patterns:
        out += sorted(os.path.relpath(f, root) for f in glob.glob(os.path.join(root, p)))
    return out


def strip_comments(c):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", c, flags=re.S)


def code_options(srcs, root=ROOT):
    """The long options of a getopt_long program: every { "name", ..._argument
    entry of a `struct option` table in srcs."""
    opts = set()
    for path in files(srcs, root):
        c = strip_comments(read(path, root))
        for table in re.finditer(r"struct\s+option\s+\w+\s*\[\s*\]\s*=\s*\{(.*?)\n\s*\};",
                                 c, re.S):
            opts |= set(re.findall(r'\{\s*"([^"]+)"\s*,\s*\w+_argument', table.group(1)))
    return opts


def runc_options(srcs, root=ROOT):
    """sfilter-runc's --sfilter-NAME words: the IS("NAME") tests and the
    valued[] list of its hand-written parser."""
    opts = set()
    for path in files(srcs, root):
        c = strip_comments(read(path, root))
        opts |= set(re.findall(r'\bIS\("([^"]+)"\)', c))
        for table in re.finditer(r"\bvalued\s*\[\s*\]\s*=\s*\{(.*?)\};", c, re.S):
            opts |= set(re.findall(r'"([^"]+)"', table.group(1)))
    return {RUNC_PREFIX + o for o in opts}


MAN_OPT = re.compile(r"\\-\\-([a-z0-9](?:[a-z0-9]|\\-)*[a-z0-9])")


def man_sections(text):
    """(section name, [lines]) in order."""
    out, name = [], None
    for line in text.split("\n"):
        if line.startswith(".SH"):
            name = line[3:].strip().strip('"')
            out.append((name, []))
        elif out:
            out[-1][1].append(line)
    return out


def man_tags(lines):
    """The tag lines of .TP items and .B/.BI/.BR/.IP lines: where a page
    names what it documents (a paragraph naming another program's option
    is not one)."""
    tags, after_tp = [], False
    for line in lines:
        if after_tp or re.match(r"\.(B|BI|BR|IB|RB|IP)\b", line):
            tags.append(line)
        after_tp = line.startswith(".TP")
    return tags


def man_options(text):
    """Long options a man page documents: those in its SYNOPSIS and in the
    tags of every section."""
    opts = set()
    for name, lines in man_sections(text):
        for line in (lines if name == "SYNOPSIS" else man_tags(lines)):
            opts |= {m.replace("\\-", "-") for m in MAN_OPT.findall(line)}
    return opts


def compare_options(binary, page, code, root=ROOT):
    """Why the options of binary's code and of its man page differ."""
    if not os.path.exists(os.path.join(root, page)):
        return [f"{binary} has no man page ({page})"]
    text = read(page, root)
    man = man_options(text)
    if binary == "sfilter-runc":
        man = {o for o in man if o.startswith(RUNC_PREFIX)}
        common = {RUNC_PREFIX + o for o in COMMON_OPTIONS}
    else:
        common = COMMON_OPTIONS
    if any(name == "CONVENTIONS" for name, _ in man_sections(text)):
        common = set()
    bad = [f"{binary}: --{o} is in the code, not in {page}" for o in sorted(code - man - common)]
    bad += [f"{binary}: --{o} is in {page}, not in the code" for o in sorted(man - code)]
    return bad


def check_options(binary):
    page, srcs = next((p, s) for b, p, s in BINARIES if b == binary)
    code = runc_options(srcs) if binary == "sfilter-runc" else code_options(srcs)
    if not code:
        return [f"no options found in {', '.join(srcs)}: has the parsing moved?"]
    return compare_options(binary, page, code)


def sfctl_code_commands(root=ROOT):
    c = strip_comments(read("loader/cli/sfctl.c", root))
    body = c[c.index("int main("):]
    return set(re.findall(r'strcmp\(cmd,\s*"([a-z-]+)"\)', body))


def sfctl_man_commands(root=ROOT):
    """The first word of each COMMANDS item's tag, and any after ", "
    (".BI detach " ID" "\\fR, \\fBreplace " ID")."""
    cmds = set()
    for name, lines in man_sections(read("man/sfctl.8", root)):
        if name != "COMMANDS":
            continue
        tags, after_tp = [], False
        for line in lines:
            if after_tp:
                tags.append(line)
            after_tp = line.startswith(".TP")
        for tag in tags:
            t = re.sub(r"^\.\w+\s+", "", tag).replace("\\-", "-")
            t = re.sub(r"\\f[BIRP]", "", t).replace('"', " ")
            words = t.split()
            if words:
                cmds.add(words[0])
            cmds |= set(re.findall(r",\s+([a-z][a-z-]*)\b", t))
    return cmds


def check_sfctl_commands(root=ROOT):
    code, man = sfctl_code_commands(root), sfctl_man_commands(root)
    return [f"sfctl {c} is in the code, not in sfctl(8)'s COMMANDS" for c in sorted(code - man)] + \
           [f"sfctl {c} is in sfctl(8)'s COMMANDS, not in the code" for c in sorted(man - code)]


# DEVELOPERS.md's Layout table.

def layout_rows(text):
    """The first cells of the table under "## Layout"."""
    sec = text.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    return [line.split("|")[1] for line in sec.split("\n")
            if line.startswith("|") and not re.match(r"\|\s*-|\|\s*path\s*\|", line)]


def layout_names(cell):
    """The paths a cell names: `a/b.c`, `c.c` (in a/'s directory), `x.[ch]`
    (x.c and x.h), `dir/`, `tests/test_*.c` (a glob)."""
    out, d = [], ""
    for name in re.findall(r"`([^`]+)`", cell):
        if "/" in name:
            d = name if name.endswith("/") else os.path.dirname(name) + "/"
        else:
            name = d + name
        m = re.match(r"(.*)\.\[(\w+)\]$", name)
        out += [f"{m.group(1)}.{e}" for e in m.group(2)] if m else [name]
    return out


def tracked(root=ROOT):
    r = subprocess.run(["git", "-C", root, "ls-files", "--", *LAYOUT_DIRS],
                       capture_output=True, text=True, check=True)
    return set(r.stdout.split())


def check_layout(root=ROOT, tracked_files=None):
    named = [n for cell in layout_rows(read("DEVELOPERS.md", root)) for n in layout_names(cell)]
    tracked_files = tracked(root) if tracked_files is None else tracked_files
    bad = [f"{f} is not in DEVELOPERS.md's Layout table" for f in sorted(tracked_files - set(named))]
    for n in named:
        if not glob.glob(os.path.join(root, n)):
            bad.append(f"DEVELOPERS.md's Layout table names {n}, which does not exist")
    return bad


# Figures stated in more than one place.

def c_define(path, name, root=ROOT):
    m = re.search(rf"#define\s+{name}\s+\(?(\d+)", read(path, root))
    return int(m.group(1)) if m else None


def lsm_hooks(root=ROOT):
    """BPF LSM programs: SEC("lsm/...") sections, each SF_LSM(hook) one."""
    n = 0
    for path in files(["bpf/*.c"], root):
        c = strip_comments(read(path, root))
        # SEC("lsm/...") lines but the one in SF_LSM()'s #define (a line
        # ending in a backslash), and each SF_LSM(hook) use.
        n += len(re.findall(r'^\s*SEC\("lsm(?:\.s)?/[^\n]*[^\\\n]$', c, re.M))
        n += len(re.findall(r"^SF_LSM\(\w+\)", c, re.M))
    return n


C_SIZES = {"__u8": 1, "__s8": 1, "__u16": 2, "__s16": 2, "__u32": 4, "__s32": 4,
           "__u64": 8, "__s64": 8}


def struct_size(path, name, root=ROOT):
    """sizeof a struct of plain __uN/__sN members (natural alignment), or
    None for anything else (arrays, nested structs)."""
    m = re.search(rf"struct\s+{name}\s*\{{(.*?)\n\}};", strip_comments(read(path, root)), re.S)
    if not m:
        return None
    size = align = 0
    for decl in filter(None, (d.strip() for d in m.group(1).split(";"))):
        f = re.fullmatch(r"(__[us]\d+)\s+\w+", decl)
        if not f or f.group(1) not in C_SIZES:
            return None
        n = C_SIZES[f.group(1)]
        size = (size + n - 1) // n * n + n
        align = max(align, n)
    return (size + align - 1) // align * align if align else None


def map_entries(name, root=ROOT):
    """max_entries of the BPF map name in bpf/sfilter.bpf.c (a number or a
    #define of bpf/sfilter.h)."""
    c = strip_comments(read("bpf/sfilter.bpf.c", root))
    m = re.search(r"max_entries,\s*(\w+)\)[^}]*\}\s*" + name + r"\s+SEC", c)
    if not m:
        return None
    v = m.group(1)
    return int(v) if v.isdigit() else c_define("bpf/sfilter.h", v, root)


def daemon_default(field, root=ROOT):
    m = re.search(rf"\.{field}\s*=\s*(\d+)", read("loader/daemon/main.c", root))
    return int(m.group(1)) if m else None


def conn_default(field, root=ROOT):
    m = re.search(rf"\.{field}\s*=\s*(\d+)", read("loader/daemon/conn.c", root))
    return int(m.group(1)) if m else None


# An option's name, then the first "default N" after it within a few lines
# (through a "(see ...)" aside, never through another parenthesis).
UNTIL_DEFAULT = r"(?:[^(]|\(see [^)]*\)){0,160}?\(?default ([\d,]+)"

# name, the code's value (a function of root, or None: the docs only agree
# with each other), and regexes whose group 1 is the figure in the docs.
FACTS = [
    ("per_task_state_bytes", lambda r: struct_size("bpf/sfilter.h", "sf_task", r),
     # Not "grows to N bytes": docs/runtime-benchmarks.md's dated entries
     # say what it was then.
     [r"per-task state \| (\d+) bytes", r"`struct sf_task` is (\d+) bytes"]),
    ("lsm_hooks", lsm_hooks, [r"up to (\d+) LSM hooks", r"(\d+) BPF LSM programs in all"]),
    ("lsm_hooks_on_debian_6_1", None,
     [r"(\d+) on Debian's 6\.1", r"(\d+) LSM trampolines", r"\((\d+) BPF LSM links",
      r"BPF LSM programs, (\d+) in this", r"the (\d+) LSM\s+programs"]),
    ("translation_m_insns_per_s", None,
     [r"(\d+-\d+) M classic insns/s", r"every realistic filter \((\d+-\d+) M/s\)"]),
    ("event_rate_default", lambda r: c_define("loader/runtime/runtime.h", "SF_EVENT_RATE_DEFAULT", r),
     [r"may have ([\d,]+) events a second", r"event\\?-rate[^(]{0,60}\(default ([\d,]+)",
      r"budget \(([\d,]+) events a second"]),
    ("event_burst_default", lambda r: c_define("loader/runtime/runtime.h", "SF_EVENT_BURST_DEFAULT", r),
     [r"in bursts of ([\d,]+)\b", r"event\\?-burst\S*\s+\(default ([\d,]+)",
      r"`--event-burst`, ([\d,]+) by default"]),
    ("sf_agg_keys", lambda r: map_entries("sf_agg", r),
     [r"LRU map \(([\d,]+) keys\)", r"LRU map of ([\d,]+) keys"]),
    ("sf_hits_counters", lambda r: map_entries("sf_hits", r),
     [r"`sf_hits`, ([\d,]+) counters"]),
    ("sf_accounts_entries", lambda r: map_entries("sf_accounts", r),
     [r"`sf_accounts`, an LRU hash of ([\d,]+) accounts", r"more than ([\d,]+) accounts"]),
    ("sf_orphans_entries", lambda r: map_entries("sf_orphans", r),
     [r"`sf_orphans` \(([\d,]+) entries\)"]),
    ("max_programs_per_uid_default", lambda r: daemon_default("max_programs", r),
     [r"max\\?-programs\\?-per\\?-uid" + UNTIL_DEFAULT]),
    ("max_insns_per_uid_default", lambda r: daemon_default("max_insns", r),
     [r"max\\?-insns\\?-per\\?-uid" + UNTIL_DEFAULT]),
    ("max_attach_rate_default", lambda r: daemon_default("max_rate", r),
     [r"max\\?-attach\\?-rate" + UNTIL_DEFAULT]),
    ("max_conns_per_uid_default", lambda r: conn_default("per_uid", r),
     [r"max\\?-conns\\?-per\\?-uid[^\n]{0,20}\n?[^\n]{0,60}?\(default ([\d,]+)"]),
    ("max_conns_default", lambda r: conn_default("total", r),
     [r'max\\?-conns "[^"\n]*"\nConnections in all \(default ([\d,]+)']),
]


def stated(regexes, root=ROOT):
    """[(figure, where)] of every match of the regexes in the docs."""
    out = []
    for path in files(DOC_FILES, root):
        text = read(path, root)
        for rx in regexes:
            for m in re.finditer(rx, text):
                line = text.count("\n", 0, m.start()) + 1
                out.append((m.group(1).replace(",", ""), f"{path}:{line}"))
    return out


def check_fact(name, root=ROOT):
    _, code, regexes = next(f for f in FACTS if f[0] == name)
    seen = stated(regexes, root)
    want = code(root) if code else None
    if code and want is None:
        return [f"the code's value was not found: has it moved?"]
    figures = {v for v, _ in seen} | ({str(want)} if want is not None else set())
    if len(figures) <= 1:
        return []
    where = "; ".join(f"{w} says {v}" for v, w in seen)
    return [f"{'the code says ' + str(want) + '; ' if want is not None else ''}{where}"]


def check_facts_found(_=None):
    """Each fact is stated somewhere: a regex that matches nothing any more
    would let a figure drift unseen."""
    return [f"{name}: no regex matches the docs (reworded?)"
            for name, _, regexes in FACTS if not stated(regexes)]


# Self-tests: doctored copies the checks must catch.

def doctored(edits):
    """A temporary tree: the files check-docs reads, with edits
    ({path: (old, new)}) made; its path."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="check-docs.")
    for path in (["DEVELOPERS.md", "README.md"] + files(DOC_FILES) + files(["bpf/*"]) +
                 files(["loader/cli/*.c", "loader/daemon/*.c", "loader/runtime/runtime.h"])):
        os.makedirs(os.path.join(tmp, os.path.dirname(path)), exist_ok=True)
        shutil.copy(os.path.join(ROOT, path), os.path.join(tmp, path))
    for path, (old, new) in edits.items():
        text = read(path, tmp)
        if old not in text:
            raise ValueError(f"self-test: {old!r} is not in {path}")
        with open(os.path.join(tmp, path), "w") as f:
            f.write(text.replace(old, new, 1))
    return tmp


def check_self_test_options(_=None):
    import shutil
    tmp = doctored({"loader/cli/sfrun.c": ('{ "tsync",', '{ "tsync-x",'),
                    "man/sfilterd.8": (".B \\-\\-no\\-pin", ".B \\-\\-no\\-pins")})
    try:
        sfrun = " ".join(compare_options("sfrun", "man/sfrun.1",
                                         code_options(["loader/cli/sfrun.c"], tmp), tmp))
        sfd = " ".join(compare_options("sfilterd", "man/sfilterd.8",
                                       code_options(["loader/daemon/main.c"], tmp), tmp))
        runc = runc_options(["loader/cli/runc_wrap*.c"], tmp)
    finally:
        shutil.rmtree(tmp)
    bad = []
    if "--tsync-x is in the code" not in sfrun or "--tsync is in man/sfrun.1" not in sfrun:
        bad.append(f"a renamed sfrun option passes: {sfrun!r}")
    if "--no-pins is in man" not in sfd:
        bad.append(f"a misspelt sfilterd.8 option passes: {sfd!r}")
    if not {"sfilter-help", "sfilter-take-seccomp", "sfilter-profile-dir"} <= runc:
        bad.append(f"sfilter-runc's hand-parsed options are not found: {sorted(runc)}")
    if "classic2ebpf has no man page" not in " ".join(
            compare_options("classic2ebpf", "man/no-such-page.1", {"x"})):
        bad.append("a binary without a man page passes")
    return bad


def check_self_test_layout(_=None):
    import shutil
    tmp = doctored({"DEVELOPERS.md": ("| `bpf/sfilter.bpf.c`, `bpf/sfilter.h` |",
                                      "| `bpf/sfilter.bpf.c`, `bpf/gone.h` |")})
    try:
        why = " ".join(check_layout(tmp, tracked()))
    finally:
        shutil.rmtree(tmp)
    return [f"check_layout misses {w}" for w in ("bpf/sfilter.h is not in", "names bpf/gone.h")
            if w not in why]


def check_self_test_facts(_=None):
    import shutil
    tmp = doctored({"README.md": ("in bursts of 5,000", "in bursts of 4,000"),
                    "bpf/sfilter.bpf.c": ("SF_LSM(file_open)\n", "SF_LSM(file_open)\nSF_LSM(x)\n")})
    try:
        burst, lsm = check_fact("event_burst_default", tmp), check_fact("lsm_hooks", tmp)
        tmp_count = lsm_hooks(tmp)
    finally:
        shutil.rmtree(tmp)
    bad = []
    if not burst or "README.md" not in burst[0] or "4000" not in burst[0]:
        bad.append(f"a README burst of 4,000 passes: {burst}")
    if tmp_count != lsm_hooks() + 1 or not lsm or "the code says" not in lsm[0]:
        bad.append(f"an added LSM hook passes: {lsm}")
    return bad


CHECKS = (
    [(f"man_page_options_match_the_code_{b.replace('-', '_')}", lambda _, b=b: check_options(b))
     for b, _, _ in BINARIES] +
    [("sfctl_commands_match_its_man_page", lambda _: check_sfctl_commands()),
     ("developers_layout_names_every_file", lambda _: check_layout())] +
    [(f"docs_agree_on_{name}", lambda _, n=name: check_fact(n)) for name, _, _ in FACTS] +
    [("docs_figures_are_all_found", check_facts_found),
     ("check_docs_catches_an_option_the_man_page_lacks", check_self_test_options),
     ("check_docs_catches_a_layout_table_out_of_date", check_self_test_layout),
     ("check_docs_catches_figures_that_disagree", check_self_test_facts)])


def main():
    failed = False
    for name, check in CHECKS:
        failed |= check_report.run(name, check, None, "docs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
