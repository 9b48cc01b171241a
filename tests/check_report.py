# SPDX-License-Identifier: GPL-2.0-only
#
# The output of tests/check-*.py, one line per check with $SF_PREFIX in front
# (tests/run-all.sh counts them): "PASS name", "FAIL name: why" with further
# reasons on lines above it, "SKIP name: why".
import os

PREFIX = os.environ.get("SF_PREFIX", "")


def run(name, check, arg, tag):
    """Runs check(arg) (a list of reasons it fails) and prints its line;
    whether it failed. An exception (a missing file or field) is its FAIL."""
    try:
        bad = check(arg)
    except Exception as e:
        bad = [f"{type(e).__name__}: {e}"]
    bad = [" ".join(str(why).split()) for why in bad]
    for why in bad[1:]:
        print(f"    {tag}: {why}")
    if bad:
        more = f" (and {len(bad) - 1} more, above)" if len(bad) > 1 else ""
        print(f"{PREFIX}FAIL {name}: {bad[0]}{more}", flush=True)
    else:
        print(f"{PREFIX}PASS {name}", flush=True)
    return bool(bad)


def skip(name, why):
    print(f"{PREFIX}SKIP {name}: {why}", flush=True)
