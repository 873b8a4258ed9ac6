#!/bin/sh
# memregd on this machine, against a process this test starts (consent: ours) and
# with count-only schemes, so nothing changes but our own child's accessed bits:
# configuration errors name FILE:LINE (and the column for schemes); no "apply yes",
# no start; --check refuses a migrate scheme on a one-node machine; the lifecycle:
# status while running, SIGHUP reloads the schemes without a restart, SIGTERM stops
# with the status saying so, the metrics file kept beside it.
set -u
d=$top_builddir/tools/memregd
ctl=$top_builddir/tools/memregctl
gen=$top_builddir/monitor/memreg-accessgen
tmp=$(mktemp -d /tmp/mr-memregd-XXXXXX)
gpid= mpid=
cleanup() {
	[ -n "$mpid" ] && kill "$mpid" 2>/dev/null && wait "$mpid" 2>/dev/null
	[ -n "$gpid" ] && kill "$gpid" 2>/dev/null && wait "$gpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

refuse() {  # NAME WANT (the config is $tmp/c.conf)
	"$d" --config "$tmp/c.conf" --check >"$tmp/o" 2>"$tmp/e"
	rc=$?
	[ $rc -eq 1 ] || { cat "$tmp/e"; fail "$1: exit $rc, want 1"; }
	printf '%s\n' "$2" | diff -u - "$tmp/e" || fail "$1: message differs"
}
printf 'pid 1\nschemes\nmin max min max min max stat\n' >"$tmp/c.conf"
refuse no-apply "memregd: $tmp/c.conf: no \"apply yes\": memregd changes where the target's pages live and needs it said in its configuration"
printf 'apply no\npid 1\nschemes\nmin max min max min max stat\n' >"$tmp/c.conf"
refuse apply-no "memregd: $tmp/c.conf: \"apply no\": memregd refuses to start without \"apply yes\" (use memregctl control for a dry run)"
printf 'apply yes\npid 1\nbakend damon\nschemes\nmin max min max min max stat\n' >"$tmp/c.conf"
refuse unknown-key "memregd: $tmp/c.conf:3: unknown key 'bakend'"
printf 'apply yes\npid 1\nengine dmaos\nschemes\nmin max min max min max stat\n' >"$tmp/c.conf"
refuse bad-engine "memregd: $tmp/c.conf:3: engine: want user or kernel, not 'dmaos'"
printf 'apply yes\npid 1\nengine kernel\nbackend refs\nschemes\nmin max min max min max stat\n' >"$tmp/c.conf"
refuse kernel-backend "memregd: $tmp/c.conf: engine kernel monitors with the kernel's DAMON itself: backend refs does not apply (drop the backend line)"
printf 'apply yes\n# a comment\npid 1\nschemes\n\n4K max 0 0 30 max pageout\n' >"$tmp/c.conf"
"$d" --config "$tmp/c.conf" --check 2>"$tmp/e"
grep -q "^memregd: $tmp/c.conf:6:" "$tmp/e" || { cat "$tmp/e"; fail "bad scheme not at line 6"; }
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if [ "$nodes" -le 1 ]; then
	printf 'apply yes\npid 1\nschemes\n4K max 0 0 30s max migrate_cold 3\n' >"$tmp/c.conf"
	refuse one-node "memregd: $tmp/c.conf: scheme of line 4: migrate_cold moves pages between NUMA nodes, and this machine has 1 node with memory: nothing to move to"
fi

# the lifecycle, on our own child
"$gen" -t 60 "$top_srcdir/monitor/configs/zigzag" >/dev/null 2>&1 &
gpid=$!
mkdir "$tmp/metrics"
cat >"$tmp/d.conf" <<CONF
# memregd.conf of the test
apply yes
pid $gpid
backend refs
intervals 20ms 100ms 1s
regions 10 100
status $tmp/run/memregd.status
metrics $tmp/metrics
schemes
min max min max min max stat
CONF
"$d" --config "$tmp/d.conf" --check >"$tmp/check.out" 2>&1 || { cat "$tmp/check.out"; fail "--check"; }
"$d" --config "$tmp/d.conf" >"$tmp/d.out" 2>"$tmp/d.log" &
mpid=$!
wait_for() {  # PYTHON-CONDITION on the status j
	i=0
	while [ $i -lt 150 ]; do
		python3 -c "import json,sys; j=json.load(open('$tmp/run/memregd.status')); sys.exit(0 if ($1) else 1)" \
			2>/dev/null && return 0
		kill -0 "$mpid" 2>/dev/null || { cat "$tmp/d.log"; fail "memregd exited"; }
		sleep 0.1
		i=$((i + 1))
	done
	cat "$tmp/d.log"
	fail "status never had: $1"
}
wait_for 'j["aggregations"] >= 2 and j["running"] and len(j["schemes"]) == 1'
"$ctl" control status --file "$tmp/run/memregd.status" >"$tmp/st.txt" || fail "control status"
grep -qx "controller pid $mpid, user engine, refs backend, [0-9]* aggregations" "$tmp/st.txt" ||
	{ cat "$tmp/st.txt"; fail "control status text"; }
[ -f "$tmp/metrics/memreg.prom" ] || fail "no metrics file"
# SIGHUP: two schemes now, same monitor (the same process keeps running)
printf 'min max min max min max stat\nmin max 0 0 min max stat\n' >>"$tmp/d.conf"
kill -HUP "$mpid"
wait_for 'len(j["schemes"]) == 3'
grep -qx "memregd: reloaded $tmp/d.conf: 3 schemes" "$tmp/d.log" || { cat "$tmp/d.log"; fail "no reload line"; }
kill -0 "$mpid" || fail "memregd died on SIGHUP"
# a broken reload keeps the running schemes
printf '4K max 0 0 30 max stat\n' >>"$tmp/d.conf"
kill -HUP "$mpid"
i=0
while [ $i -lt 100 ] && ! grep -q "reload failed" "$tmp/d.log"; do sleep 0.1; i=$((i + 1)); done
grep -q "^memregd: reload failed, keeping the running schemes: $tmp/d.conf:13:" "$tmp/d.log" ||
	{ cat "$tmp/d.log"; fail "no reload failure line"; }
kill -TERM "$mpid"
wait "$mpid"
rc=$?
mpid=
[ $rc -eq 0 ] || { cat "$tmp/d.log"; fail "memregd exit $rc after SIGTERM"; }
grep -qx "memregd: stopped by a signal" "$tmp/d.log" || { cat "$tmp/d.log"; fail "no stop line"; }
python3 -c "import json; j=json.load(open('$tmp/run/memregd.status')); assert not j['running'] and len(j['schemes']) == 3, j" ||
	fail "final status"
kill -0 "$gpid" || fail "memregd's SIGTERM ended the target"

# several targets: two pid lines (our own children), one run over both; the log
# says when each joins, SIGHUP reloads the schemes of both, SIGTERM ends the run
printf 'apply yes\nschemes\nmin max min max min max stat\n' >"$tmp/c.conf"
refuse no-target "memregd: $tmp/c.conf: no target: give \"pid N\" or \"cgroup PATH\" (each repeatable)"
printf 'apply yes\ncgroup work\nschemes\nmin max min max min max stat\n' >"$tmp/c.conf"
refuse cgroup-relative "memregd: $tmp/c.conf:2: cgroup: want the cgroup's absolute path (/sys/fs/cgroup/...), not 'work'"
printf 'apply yes\ncgroup %s\nschemes\nmin max min max min max stat\n' "$tmp/nocg" >"$tmp/c.conf"
"$d" --config "$tmp/c.conf" >"$tmp/o" 2>"$tmp/e"
[ $? -eq 1 ] || { cat "$tmp/e"; fail "missing cgroup: not exit 1"; }
printf 'memregd: %s: %s: no such cgroup\n' "$tmp/c.conf" "$tmp/nocg" | diff -u - "$tmp/e" ||
	fail "missing cgroup: message differs"
"$gen" -t 60 "$top_srcdir/monitor/configs/zigzag" >/dev/null 2>&1 &
g2=$!
cat >"$tmp/m.conf" <<CONF
apply yes
pid $gpid
pid $g2
backend refs
intervals 20ms 100ms 1s
status $tmp/run/m.status
schemes
min max min max min max stat
CONF
"$d" --config "$tmp/m.conf" --check >"$tmp/check.out" 2>&1 || { cat "$tmp/check.out"; fail "--check (two pids)"; }
grep -qx "$tmp/m.conf: 1 scheme for 2 pids and 0 cgroups with the refs backend: memregd would start" \
	"$tmp/check.out" || { cat "$tmp/check.out"; fail "--check line (two pids)"; }
"$d" --config "$tmp/m.conf" >"$tmp/d.out" 2>"$tmp/m.log" &
mpid=$!
i=0
until python3 -c "import json,sys; j=json.load(open('$tmp/run/m.status')); sys.exit(0 if sorted(j['target_pids']) == sorted([$gpid, $g2]) and j['aggregations'] >= 4 else 1)" 2>/dev/null; do
	kill -0 "$mpid" 2>/dev/null || { cat "$tmp/m.log"; fail "memregd (two pids) exited"; }
	[ $i -lt 150 ] || { cat "$tmp/m.log"; fail "status never had both pids"; }
	sleep 0.1
	i=$((i + 1))
done
for p in $gpid $g2; do
	grep -Eqx "memregd: [0-9]+\.[0-9]{3} s: pid $p joined" "$tmp/m.log" ||
		{ cat "$tmp/m.log"; fail "no join line for $p"; }
done
printf 'min max 0 0 min max stat\n' >>"$tmp/m.conf"
kill -HUP "$mpid"
i=0
until grep -qx "memregd: reloaded $tmp/m.conf: 2 schemes" "$tmp/m.log"; do
	[ $i -lt 100 ] || { cat "$tmp/m.log"; fail "no reload line (two pids)"; }
	sleep 0.1
	i=$((i + 1))
done
kill -TERM "$mpid"
wait "$mpid"
rc=$?
mpid=
[ $rc -eq 0 ] || { cat "$tmp/m.log"; fail "memregd (two pids) exit $rc after SIGTERM"; }
grep -qx "memregd: started: 2 pids and 0 cgroups, 1 scheme, user engine, refs backend, status $tmp/run/m.status" \
	"$tmp/m.log" || { cat "$tmp/m.log"; fail "no start line (two pids)"; }
python3 -c "import json; j=json.load(open('$tmp/run/m.status')); assert not j['running'] and len(j['schemes']) == 2 and j['targets_joined'] == 2, j" ||
	fail "final status (two pids)"
kill "$g2"
wait "$g2" 2>/dev/null
echo "PASS: memregd"
