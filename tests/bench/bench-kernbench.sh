#!/bin/sh
# The kernbench suite on a stand-in tree (a Makefile with kernbench's targets): its
# loads as kernbench 0.42 computes them from the CPU count, --jobs naming the optimal
# load, the .config target, make clean before every run, the one warm-up round at the
# optimal load, and the tree's version in the output. No kernel is built.
set -u
b=${top_builddir:-.}
ctl=$(cd "$b" && pwd)/tools/memregctl
[ -x "$ctl" ] || { echo "SKIP: $ctl not built"; exit 77; }
command -v flex >/dev/null && command -v bison >/dev/null ||
	{ echo "SKIP: no flex and bison (the suite refuses to start without them)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3 to read the JSON"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

t=$tmp/tree
mkdir -p "$t/include/linux"
: >"$t/include/linux/kernel.h"
cat >"$t/Makefile" <<'EOF'
all:
	@test ! -f built || { echo "built before make clean" >&2; exit 1; }
	@touch built; echo "make $(MAKEFLAGS)" >>calls
tinyconfig:
	@echo CONFIG_STANDIN=y >.config; echo tinyconfig >>calls
clean:
	@rm -f built; echo clean >>calls
kernelversion:
	@echo 6.1.999
EOF
cpus=$(getconf _NPROCESSORS_ONLN)
half=$((cpus / 2))
[ "$half" -eq 2 ] && half=3

"$ctl" bench --suite kernbench --tree "$t" --loads half,optimal,maximal --jobs 3 --pause 0 \
	-r 2 -c orig,rec --json -o "$tmp/out" >"$tmp/json" 2>"$tmp/err" ||
	{ fail "kernbench: exit $?"; cat "$tmp/err"; }
[ -f "$t/.config" ] || fail "no .config: make tinyconfig did not run"
if [ "$half" -lt 2 ]; then
	grep -qxF "bench: kernbench: half load is no greater than single; disabling ($cpus CPUs)" \
		"$tmp/err" || fail "no 'half load disabled' message for $cpus CPUs"
	want="optimal-j3 maximal"
else
	want="optimal-j3 half-j$half maximal"
fi
python3 - "$tmp/json" "$tmp/out/bench.txt" "$want" <<'EOF' >"$tmp/py" 2>&1 || { fail "JSON and tables"; cat "$tmp/py"; }
import json, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().split("\n")
want = sys.argv[3].split()
bad = []
names = [w["name"] for w in doc["workloads"]]
if names != want:
    bad.append("workloads %s, want %s" % (names, want))
labels = {"optimal-j3": "Optimal load -j 3", "maximal": "Maximal load -j"}
for w in doc["workloads"]:
    lab = labels[w["name"]] if w["name"] in labels else "Half load -j " + w["name"][len("half-j"):]
    if w["label"] != lab:
        bad.append("%s: label %r, want %r" % (w["name"], w["label"], lab))
    if w["prepare"] != "make clean >/dev/null 2>&1; sync; sleep 0":
        bad.append("%s: prepare %r" % (w["name"], w["prepare"]))
    cmd = "make -j" if w["name"] == "maximal" else "make -j " + w["name"].split("-j")[1]
    if w["command"] != cmd:
        bad.append("%s: command %r, want %r" % (w["name"], w["command"], cmd))
    if text.count("Average %s Run (std deviation):" % lab) != 2:
        bad.append("%r not once per configuration" % lab)
# one warm-up round, at the optimal load, each configuration once
warm = [(r["workload"], r["config"]) for r in doc["warmups"]]
if warm != [("optimal-j3", "orig"), ("optimal-j3", "rec")]:
    bad.append("warm-ups %s" % warm)
if len(doc["runs"]) != 2 * 2 * len(want):
    bad.append("%d runs" % len(doc["runs"]))
if "Linux 6.1.999" not in (doc["context"] or "") or "make tinyconfig" not in doc["context"]:
    bad.append("context %r" % doc["context"])
if text.count(doc["context"]) < 3:
    bad.append("the tree's version is not in every table's heading")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
# make clean before every build: the stand-in fails a build without one.
[ "$(grep -c '^clean$' "$t/calls")" -eq "$(grep -c '^make' "$t/calls")" ] ||
	fail "not one make clean per build: $(tr '\n' ' ' <"$t/calls")"

# Without --jobs the optimal load is 4 x CPUs; the tree's .config is kept.
echo CONFIG_KEPT=y >"$t/.config"
"$ctl" bench --suite kernbench --tree "$t" --loads optimal --pause 0 -r 1 -w 0 -c orig \
	>"$tmp/txt" 2>"$tmp/err" || { fail "optimal: exit $?"; cat "$tmp/err"; }
grep -qxF "Average Optimal load -j $((4 * cpus)) Run (std deviation):" "$tmp/txt" ||
	fail "no 'Optimal load -j $((4 * cpus))' block"
grep -qxF "CONFIG_KEPT=y" "$t/.config" || fail "the tree's own .config was replaced"
grep -q "with the tree's .config" "$tmp/txt" || fail "the output does not say the tree's .config was used"

[ "$fails" -eq 0 ] || exit 1
echo "PASS: bench-kernbench"
