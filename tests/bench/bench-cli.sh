#!/bin/sh
# memregctl bench end to end: a small workload under orig and alloc, 3 runs each.
# The JSON holds the 6 runs in ABBAAB order with increasing start times; each mean
# and deviation, recomputed from the raw runs, is in the tables at their precision;
# the report files exist and the SVG names the configurations. No timing assertions.
set -u
b=${top_builddir:-.}
ctl=$(cd "$b" && pwd)/tools/memregctl
top_srcdir_abs=$(cd "${top_srcdir:-$b/..}" && pwd)
[ -x "$ctl" ] || { echo "SKIP: $ctl not built"; exit 77; }
[ -f "$b/.libs/libmemreg.so" ] || { echo "SKIP: $b/.libs/libmemreg.so not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3 to recompute the statistics"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Working directories made without -o go under $TMPDIR: here, counted below.
mkdir "$tmp/t"
TMPDIR=$tmp/t
export TMPDIR
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# A few thousand shell steps and a few allocations: short, with some CPU time.
work='i=0; s=; while [ $i -lt 3000 ]; do i=$((i + 1)); s="$s."; done; echo ${#s}'
"$ctl" bench -c orig,alloc -r 3 -w 1 -n loop --json -o "$tmp/out" -- "$work" \
	>"$tmp/json" 2>"$tmp/err" || { fail "bench: exit $?"; cat "$tmp/err"; }
for f in bench.txt bench.json runs.csv report.svg report.html workloads.log; do
	[ -s "$tmp/out/$f" ] || fail "-o DIR: $f missing or empty"
done
cmp -s "$tmp/json" "$tmp/out/bench.json" || fail "--json and DIR/bench.json differ"
for c in orig alloc; do
	grep -q "<text class=\"legend\"[^>]*>$c</text>" "$tmp/out/report.svg" ||
		fail "report.svg: no legend label '$c'"
	grep -q "<text class=\"config\"[^>]*>$c</text>" "$tmp/out/report.svg" ||
		fail "report.svg: no bar label '$c'"
done
grep -q '<img src="report.svg"' "$tmp/out/report.html" || fail "report.html does not embed report.svg"
# 6 runs and 2 warm-ups, a header line.
[ "$(wc -l <"$tmp/out/runs.csv")" -eq 9 ] || fail "runs.csv: $(wc -l <"$tmp/out/runs.csv") lines, want 9"

python3 - "$tmp/json" "$tmp/out/bench.txt" >"$tmp/py" 2>&1 <<'EOF' || { fail "recomputed statistics"; cat "$tmp/py"; }
import json, math, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
lines = text.split("\n")
bad = []
runs = doc["runs"]
if [r["config"] for r in runs] != ["orig", "alloc", "alloc", "orig", "orig", "alloc"]:
    bad.append("run order %s, want ABBAAB" % [r["config"] for r in runs])
starts = [r["start_unix_s"] for r in runs]
if any(b <= a for a, b in zip(starts, starts[1:])):
    bad.append("start times not increasing: %s" % starts)
orders = [r["order"] for r in runs]
if orders != sorted(orders) or len(set(orders)) != 6:
    bad.append("orders %s" % orders)
warm = doc["warmups"]
if [w["config"] for w in warm] != ["orig", "alloc"] or max(w["order"] for w in warm) >= min(orders):
    bad.append("warm-ups %s not two, before the runs" % [(w["config"], w["order"]) for w in warm])
for r in runs:
    if r["exit_status"] != 0:
        bad.append("run %d exit %d" % (r["order"], r["exit_status"]))
    if abs(r["user_s"] + r["system_s"] - r["cpu_s"]) > 1e-9:
        bad.append("run %d: user + system != cpu_s" % r["order"])

def summary(cfg, key):
    # as bench/stats.c: the mean, then the deviations about it, n - 1
    x = [r[key] for r in runs if r["config"] == cfg]
    m = sum(x) / len(x)
    return m, math.sqrt(sum((v - m) * (v - m) for v in x) / (len(x) - 1))

kernbench = [("Elapsed Time", "elapsed_s"), ("User Time", "user_s"), ("System Time", "system_s"),
             ("Percent CPU", "cpu_pct"), ("Context Switches", "involuntary_csw"),
             ("Sleeps", "voluntary_csw")]
# kernbench's block of each configuration, in order.
blocks = {}
cur = None
for l in lines:
    if l.startswith("orig (") or l.startswith("alloc ("):
        cur = l.split()[0]
        blocks[cur] = []
    elif cur is not None:
        if l.startswith("memregctl bench:"):
            cur = None
        else:
            blocks[cur].append(l)
for cfg in ("orig", "alloc"):
    if "Average loop Run (std deviation):" not in blocks.get(cfg, []):
        bad.append("%s: no kernbench header line" % cfg)
    for name, key in kernbench:
        want = "%s %.6g (%.6g)" % ((name,) + summary(cfg, key))
        if want not in blocks.get(cfg, []):
            bad.append("%s block: no line %r" % (cfg, want))
# The DAMOS tables: the header, then the workload's row, then total.
for key in ("elapsed_s", "user_s", "system_s", "cpu_s", "involuntary_csw", "voluntary_csw",
            "max_rss_kib", "memused_avg_kib"):
    head = "%s orig alloc (overhead)" % key
    if head not in lines:
        bad.append("no table %r" % head)
        continue
    i = lines.index(head)
    mo, _ = summary("orig", key)
    ma, _ = summary("alloc", key)
    # a baseline of 0 has no overhead: "(-)", and no interval line
    row = "loop %.3f %.3f (%s)" % (mo, ma, "%.2f" % (100 * (ma - mo) / mo) if mo else "-")
    if lines[i + 1] != row:
        bad.append("table %s: row %r, want %r" % (key, lines[i + 1], row))
    if not lines[i + 2].startswith("total "):
        bad.append("table %s: no total row" % key)
    ci = [l for l in lines[i + 3:i + 5] if l.startswith("  alloc loop: ")]
    if mo and (not ci or "95% interval [" not in ci[0]):
        bad.append("table %s: no interval line for alloc" % key)
energy = [l for l in lines if l.startswith("dram_energy_j (")]
if doc["energy_source"] != "none" and not energy:
    bad.append("no energy table")
if doc["energy_measured"] is False and energy and not energy[0].startswith("dram_energy_j (model)"):
    bad.append("modelled energy not labelled model: %r" % energy[0])
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF

# A bench file: a configuration with env, setup and teardown, and a second workload.
cat >"$tmp/b.bench" <<'EOF'
# a comment
config marked
	env BENCH_MARK=yes
	setup touch setup-ran
	teardown touch teardown-ran
	note env and hooks
workload mark
	run test "$BENCH_MARK" = yes || test ! -f setup-ran
EOF
(cd "$tmp" && "$ctl" bench -f "$tmp/b.bench" -c marked -r 1 -w 0 --csv) >"$tmp/csv" 2>"$tmp/err" ||
	{ fail "bench file: exit $?"; cat "$tmp/err"; }
[ -f "$tmp/setup-ran" ] && [ -f "$tmp/teardown-ran" ] || fail "bench file: setup/teardown did not run"
awk -F, 'NR == 2 { exit !($5 == "marked" && $7 == 0 && $8 != "" && $9 != "") }' "$tmp/csv" ||
	fail "bench file: CSV row $(sed -n 2p "$tmp/csv")"

# Bad input: one line, exit 2 (usage) or 1.
check() { # WHAT STATUS MESSAGE -- ARGS...
	what=$1 st=$2 msg=$3
	shift 4
	"$ctl" bench "$@" >"$tmp/out.txt" 2>&1
	got=$?
	[ "$got" -eq "$st" ] || fail "$what: exit $got, want $st"
	grep -qxF "$msg" "$tmp/out.txt" || { fail "$what: want '$msg', got:"; cat "$tmp/out.txt"; }
}
check "no workload" 2 "memregctl bench: no WORKLOAD (give it after --), --suite or --bench-file" --
check "unknown config" 2 "memregctl bench: unknown configuration 'bogus' (built in: orig, alloc, alloc+profile, rec, control, evac; others from --bench-file)" -- -c orig,bogus -- true
check "zero runs" 2 "memregctl bench: --runs: '0' is not a count of at least 1" -- -r 0 -- true
check "json and csv" 2 "memregctl bench: --json and --csv both print on standard output: give one (-o DIR writes both)" -- --json --csv -- true
check "unknown suite" 1 "memregctl: unknown suite 'bogus' (kernbench, alloc, access)" -- --suite bogus
printf 'config x\n\tbogus 1\n' >"$tmp/bad.bench"
check "bad bench file" 1 "memregctl: $tmp/bad.bench:2: unknown directive 'bogus' in config x (env, preload, setup, teardown, note, base, schemes, backend, plan)" -- -f "$tmp/bad.bench" -- true
check "failing workload" 1 "memregctl: false under orig exited with status 1; its output is in $tmp/fo/workloads.log" -- -c orig -r 1 -w 0 -o "$tmp/fo" -- false
check "control without schemes" 1 "memregctl: control needs schemes: --schemes FILE, or a 'schemes FILE' line in its bench file section" -- -c orig,control -r 1 -w 0 -- true
echo '{}' >"$tmp/plan.json"
check "evac without --apply" 1 "memregctl: evac takes memory blocks offline (memregctl evacuate --apply $tmp/plan.json before each run, --undo after): it runs only with --apply, on a machine whose memory may go offline (the VM lab: scripts/lab), never on a shared host" -- -c orig,evac --plan "$tmp/plan.json" -r 1 -w 0 -- true
check "evac without a plan" 1 "memregctl: evac needs a plan: --plan FILE (memregctl plan -o), or a 'plan FILE' line in its bench file section" -- -c orig,evac --apply -r 1 -w 0 -- true
check "phys without --apply" 1 "memregctl: --phys records physical memory with the kernel's DAMON (memregctl record --phys --apply), which changes kernel state: give --apply, where DAMON may be used (the VM lab: scripts/lab)" -- --phys -c orig -r 1 -w 0 -- true
# Refused before any workload ran: no working directory left behind (each such
# refusal left an empty one in /tmp, and named a log it never wrote). A workload
# that fails without -o: its log kept in a directory under $TMPDIR, named.
left=$(ls -A "$tmp/t")
[ -z "$left" ] || fail "refusals left working directories: $left"
"$ctl" bench -c orig -r 1 -w 0 -- 'echo to the log; exit 4' >"$tmp/out.txt" 2>&1 &&
	fail "a failing workload: bench exited 0"
log=$(sed -n "s/^memregctl: the workloads' log is kept in //p" "$tmp/out.txt")
case $log in
"$tmp"/t/memreg-bench.??????/workloads.log) ;;
*) fail "a failing workload without -o: log '$log' not under \$TMPDIR:"; cat "$tmp/out.txt" ;;
esac
[ -n "$log" ] && grep -qx 'to the log' "$log" || fail "a failing workload: its log '$log' lacks its output"
grep -qxF "memregctl: echo under orig exited with status 4; its output is in $log" "$tmp/out.txt" ||
	{ fail "a failing workload: its message"; cat "$tmp/out.txt"; }
rm -rf "$tmp"/t/*

# evac's setup and teardown, with a stand-in for `memregctl evacuate` that logs its
# arguments and answers as evacuate --json does: each run is preceded by
# "--apply --json PLAN" and followed by "--undo --apply --json PLAN", both timed
# apart, and the setup's bytes moved and seconds are in the raw runs.
cat >"$tmp/fake-evacuate" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/evac.log"
case "\$1" in
--apply) echo '{ "plan": "p1", "applied": true, "bytes_moved": 268435456, "seconds": 2.5, "regions": [ { "id": 7, "bytes_moved": 1, "seconds": 9 } ] }' ;;
*) echo '{ "plan": "p1", "applied": true, "blocks_online": 2, "blocks": 2, "seconds": 0.5 }' ;;
esac
EOF
chmod +x "$tmp/fake-evacuate"
MEMREG_BENCH_EVACUATE="$tmp/fake-evacuate" "$ctl" bench -c orig,evac --plan "$tmp/plan.json" --apply \
	-r 2 -w 0 -n t --json -- true >"$tmp/evac.json" 2>"$tmp/err" || { fail "evac: exit $?"; cat "$tmp/err"; }
printf -- '--apply --json %s\n--undo --apply --json %s\n' "$tmp/plan.json" "$tmp/plan.json" >"$tmp/evac.want"
cat "$tmp/evac.want" "$tmp/evac.want" >"$tmp/evac.want2"
cmp -s "$tmp/evac.log" "$tmp/evac.want2" || { fail "evac: the evacuate calls:"; cat "$tmp/evac.log"; }
python3 - "$tmp/evac.json" >"$tmp/py" 2>&1 <<'EOF' || { fail "evac runs"; cat "$tmp/py"; }
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
for r in d["runs"]:
    if r["config"] == "evac":
        if r["evac_bytes_moved"] != 268435456 or r["evac_s"] != 2.5:
            bad.append("run %d: evac_bytes_moved %s evac_s %s" % (r["order"], r["evac_bytes_moved"], r["evac_s"]))
        if r["setup_s"] is None or r["teardown_s"] is None:
            bad.append("run %d: setup_s/teardown_s not timed" % r["order"])
    elif r["evac_bytes_moved"] is not None or r["setup_s"] is not None:
        bad.append("orig run %d has evac fields" % r["order"])
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF

# control: memregctl control with the schemes given, on the backend record would
# pick (no --apply: a dry run); the configuration names both.
printf '4K max min max min max stat\n' >"$tmp/stat.schemes"
"$ctl" bench -c orig,control --schemes "$tmp/stat.schemes" -r 1 -w 0 -n t --json -- \
	'i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done' >"$tmp/ctl.json" 2>"$tmp/err" ||
	{ fail "control: exit $?"; cat "$tmp/err"; }
python3 - "$tmp/ctl.json" "$tmp/stat.schemes" >"$tmp/py" 2>&1 <<'EOF' || { fail "control config"; cat "$tmp/py"; }
import json, sys
d = json.load(open(sys.argv[1]))
c = d["configs"][1]
want = "the controller: memregctl control --schemes %s --backend %s (a dry run: the schemes count what they would do; --apply to act)" % (sys.argv[2], c["backend"])
if c["name"] != "control" or c["schemes"] != sys.argv[2] or not c["backend"] or c["note"] != want:
    print("control config %s" % c)
    sys.exit(1)
# without --apply: the top process, said per run and in one note naming --apply
seen = {r["config"]: r["observed"] for r in d["runs"]}
if seen != {"orig": None, "control": "process"}:
    print("observed per run: %s" % seen)
    sys.exit(1)
note = ("rec and control observe the workload's top process only: give --apply to run "
        "each in a fresh cgroup v2 and observe every process of the workload")
if d["notes"].count(note) != 1:
    print("no top-process note: %s" % d["notes"])
    sys.exit(1)
EOF

# The report's heatmaps: a rec run leaves its record in -o DIR, and report.html shows
# its heatmap (an SVG of memregctl report's, titled with the configuration, workload
# and run); orig leaves none.
"$ctl" bench -c orig,rec -r 1 -w 0 -n stairs -o "$tmp/hm" -- \
	"$b/monitor/memreg-accessgen" -t 0.03 "$top_srcdir_abs/monitor/configs/stairs" \
	>"$tmp/hm.out" 2>"$tmp/err" || { fail "heatmaps: exit $?"; cat "$tmp/err"; }
[ -s "$tmp/hm/rec-0-1.rec" ] || fail "heatmaps: rec's record is not kept in -o DIR"
[ "$(cd "$tmp/hm" && ls heatmap-*.svg 2>/dev/null)" = "heatmap-rec-0-1.svg" ] ||
	fail "heatmaps: want heatmap-rec-0-1.svg alone, have: $(cd "$tmp/hm" && ls)"
grep -q 'class="title">rec, stairs, run 1: the top process</text>' "$tmp/hm/heatmap-rec-0-1.svg" ||
	fail "heatmaps: the SVG's title does not name the run"
grep -qx '<figure><img src="heatmap-rec-0-1.svg" alt="heatmap"><figcaption>rec, stairs, run 1: the top process</figcaption></figure>' \
	"$tmp/hm/report.html" || fail "heatmaps: report.html does not show heatmap-rec-0-1.svg"
grep -q 'no heatmap' "$tmp/hm/report.html" && fail "heatmaps: report.html says a heatmap failed"

# The regions holding the data: as root (frames visible), a workload holding 100 MiB
# for a second or two is found in at least one region, and data_regions counts the
# ids of regions_held.
if [ "$(id -u)" -eq 0 ]; then
	"$ctl" bench -c orig -r 1 -w 0 -n stairs --json -- \
		"$b/monitor/memreg-accessgen" -t 0.03 "$top_srcdir_abs/monitor/configs/stairs" \
		>"$tmp/where.json" 2>"$tmp/err" || { fail "where: exit $?"; cat "$tmp/err"; }
	python3 - "$tmp/where.json" >"$tmp/py" 2>&1 <<'EOF' || { fail "data_regions"; cat "$tmp/py"; }
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
n = 0
for part in (r["regions_held"] or "").split(","):
    if part:
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
if not n or r["data_regions"] != n:
    print("data_regions %s, regions_held %r" % (r["data_regions"], r["regions_held"]))
    sys.exit(1)
if not any(x.startswith("region map: ") for x in d["notes"]):
    print("no region map note: %s" % d["notes"])
    sys.exit(1)
EOF
else
	echo "not root: the regions holding the data are not checked (frames hidden)"
fi

# The CPUs: started on one CPU of several (taskset), the notes say which, whole; started
# on every online CPU, they say nothing of it.
online=$(getconf _NPROCESSORS_ONLN)
mine=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
if [ "$online" -ge 2 ] && [ "$(echo $mine | wc -w)" -eq "$online" ] && command -v taskset >/dev/null; then
	cpu=${mine##* }
	taskset -c "$cpu" "$ctl" bench -c orig -r 1 -w 0 -n loop --json -- "echo x" \
		>"$tmp/cpu1.json" 2>"$tmp/err" || { fail "affinity: exit $?"; cat "$tmp/err"; }
	"$ctl" bench -c orig -r 1 -w 0 -n loop --json -- "echo x" \
		>"$tmp/cpuall.json" 2>"$tmp/err" || { fail "affinity: exit $?"; cat "$tmp/err"; }
	python3 - "$tmp/cpu1.json" "$tmp/cpuall.json" "$cpu" "$online" >"$tmp/py" 2>&1 <<'EOF' || { fail "affinity note"; cat "$tmp/py"; }
import json, sys
one, every = (json.load(open(f))["notes"] for f in sys.argv[1:3])
want = ("runs on CPU %s of %s online (the affinity memregctl bench was started with), "
        "every configuration alike" % (sys.argv[3], sys.argv[4]))
if one.count(want) != 1:
    print("pinned to CPU %s: no note %r in %s" % (sys.argv[3], want, one))
    sys.exit(1)
if any(x.startswith("runs on CPU") for x in every):
    print("on every CPU, yet a note: %s" % every)
    sys.exit(1)
EOF
else
	echo "$online CPUs online, $mine allowed: the affinity note is not checked"
fi

# --together: a round's configurations run at the same time. The workload of each
# waits for the other's mark of the same round: run one after another, the first
# would wait for the second, which starts only after it, and give up (exit 3).
meet() {
	mkdir -p "$tmp/marks"
	cat >"$tmp/meet.bench" <<EOF
config a
	base orig
	env WHO=a
config b
	base alloc
	env WHO=b
workload meet
	run M='$tmp/marks'; mine=\$(ls \$M | grep -c "^\$WHO\\."); touch \$M/\$WHO.\$\$; other=\$([ \$WHO = a ] && echo b || echo a); i=0; while [ \$(ls \$M | grep -c "^\$other\\.") -le \$mine ]; do i=\$((i + 1)); [ \$i -lt $1 ] || exit 3; sleep 0.05; done
EOF
}
meet 600
"$ctl" bench -f "$tmp/meet.bench" -c a,b -r 3 -w 1 --together --json >"$tmp/tog.json" 2>"$tmp/err" ||
	{ fail "--together: exit $?"; cat "$tmp/err"; }
python3 - "$tmp/tog.json" >"$tmp/py" 2>&1 <<'EOF' || { fail "--together: the JSON"; cat "$tmp/py"; }
import json, sys
d = json.load(open(sys.argv[1]))
want = ["--together: each round's configurations ran at the same time (kernbench: each in "
        "a copy of the tree), all on the same CPUs at the same speeds: user and system "
        "seconds compare within a round",
        "--together: elapsed time and percent CPU are each run's beside the others', not "
        "what it takes alone; no DRAM energy nor regions holding data (they measure the "
        "machine, not one run)"]
bad = []
if d["together"] is not True:
    bad.append("together is %r" % d["together"])
for w in want:
    if d["notes"].count(w) != 1:
        bad.append("no note %r in %s" % (w, d["notes"]))
runs = [(r["round"], r["config"], r["exit_status"]) for r in d["runs"]]
if sorted(runs) != [(i, c, 0) for i in range(3) for c in "ab"]:
    bad.append("runs %s" % runs)
if (d["energy_source"], d["energy_detail"]) != ("none", "not measured with --together"):
    bad.append("energy %r: %r" % (d["energy_source"], d["energy_detail"]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
rm -rf "$tmp/marks"
meet 20
"$ctl" bench -f "$tmp/meet.bench" -c a,b -r 1 -w 0 --json >/dev/null 2>"$tmp/err" &&
	fail "one after another, the meeting workload did not fail: the test cannot tell"
grep -q "^memregctl: meet under a exited with status 3;" "$tmp/err" ||
	{ fail "one after another: not the first run's exit 3"; cat "$tmp/err"; }
rm -rf "$tmp/marks"
check "--together rec" 1 "memregctl: --together: rec cannot run beside another configuration (its monitor or evacuation acts on what the others run too): give orig, alloc, alloc+profile or a bench file's" -- -c orig,rec -r 1 -w 0 --together -- true
check "--together --phys" 1 "memregctl: --together and --phys: a physical record covers the whole machine, every configuration at once" -- -c orig,alloc -r 1 -w 0 --together --phys -- true

[ "$fails" -eq 0 ] || exit 1
echo "PASS: bench-cli"
