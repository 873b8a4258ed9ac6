#!/bin/sh
# record --cgroup: a forking workload in a cgroup v2 group gets one record per
# process, each child's with its accesses, a child that joins later included, and
# recorded across its exec (a subshell for 0.5 s, seen in the cgroup and followed
# before it execs the workload: its record must go on, not end there); then
# `memregctl bench -c orig,rec,control --apply` runs rec and control in a fresh
# cgroup per run (observed "cgroup" in its JSON), rec's run has a record for each
# child, and no group is left behind.
. /lab/tests/lib
# the lab's /init mounts no cgroup file system: set up what a systemd host has
if ! grep -q '^[^ ]* [^ ]* cgroup2 ' /proc/self/mounts; then
	mount -t cgroup2 none /sys/fs/cgroup || skip "cannot mount cgroup2"
fi
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
cg=$mnt/rec70
mkdir "$cg" || fail "mkdir $cg"

# the 90th percentile of a record's working set (report wss), in bytes
wss_p90() {
	memregctl report wss --json "$1" | sed -n 's/^ *"p90": *\([0-9]*\).*/\1/p'
}

# each child writes 16 MiB page by page for 6 s (emulated: slow enough to be seen)
cat >/tmp/c70 <<EOF2
stride 4K
area a 16M
phase 6s a seq rw
EOF2

# the workload: a shell that moves itself into the group, then starts two children
# at once and a third after 2 s, which execs the workload 0.5 s after its fork
# (record re-reads the group every 100 ms); record follows the group from before
# it starts
start_tickers
memregctl record --cgroup "$cg" --apply -a 20ms,200ms,1s -o /tmp/r70 2>/tmp/r70.err &
rec=$!
i=0
while [ ! -d /tmp/r70 ] && [ $i -lt 600 ]; do usleep 100000; i=$((i + 1)); done
[ -d /tmp/r70 ] || { cat /tmp/r70.err; fail "record --cgroup did not start"; }
sh -c "echo \$\$ >$cg/cgroup.procs
	memreg-accessgen /tmp/c70 & a=\$!
	memreg-accessgen /tmp/c70 & b=\$!
	sleep 2
	(usleep 500000; exec memreg-accessgen /tmp/c70) & c=\$!
	echo \$a \$b \$c >/tmp/c70.pids
	wait" || fail "the workload failed"
kill -INT $rec
wait $rec || { cat /tmp/r70.err; fail "record --cgroup exited $?"; }
cat /tmp/r70.err
stop_tickers
rmdir "$cg" || fail "rmdir $cg"
ls -l /tmp/r70
for pid in $(cat /tmp/c70.pids); do
	f=/tmp/r70/$pid.rec
	[ -f "$f" ] || fail "no record $f for child $pid"
	memregctl report raw "$f" >/tmp/r70.raw || fail "report raw $f"
	head -2 /tmp/r70.raw
	grep -q "^# process-scoped (pid $pid)" /tmp/r70.raw || fail "$f is not pid $pid's"
	ws=$(wss_p90 "$f")
	[ "$ws" -ge $((8 << 20)) ] || fail "$f: working set p90 $ws bytes, want 8 MiB or more"
	echo "PASS: child $pid: $f, working set p90 $ws bytes"
done
grep -q "joined: recording to /tmp/r70/$(cut -d' ' -f3 /tmp/c70.pids).rec" /tmp/r70.err ||
	fail "the child that started later was not seen joining"

# bench: rec and control, each in a fresh cgroup per run
printf '4K max min max min max stat\n' >/tmp/stat.schemes
start_tickers
# the workload names its children in a file named after its cgroup ("" for orig's)
memregctl bench -c orig,rec,control --schemes /tmp/stat.schemes --apply -r 1 -w 0 \
	-n fork --json -o /tmp/b70 -- \
	'memreg-accessgen /tmp/c70 & a=$!; memreg-accessgen /tmp/c70 & b=$!
	echo $a $b >/tmp/b70-$(sed -n "s|^0::/||p" /proc/self/cgroup).pids; wait' \
	>/tmp/b70.json 2>/tmp/b70.err || { cat /tmp/b70.err; tail -30 /tmp/b70/workloads.log; fail "bench exited $?"; }
stop_tickers
cat /tmp/b70.err
lab-export /tmp/b70.json || fail "lab-export"
# the guest has no python: the pretty-printed JSON, one key a line
[ "$(grep -c '"observed":"cgroup"' /tmp/b70.json)" = 2 ] &&
	[ "$(grep -c '"observed":null' /tmp/b70.json)" = 1 ] ||
	{ grep '"config"\|"observed"' /tmp/b70.json; fail "observed is not cgroup for rec and control"; }
grep -qF "\"rec and control: each run in a fresh cgroup v2 under $mnt (memregctl record/control --cgroup): every process of the workload observed\"" /tmp/b70.json ||
	fail "no cgroup note in bench's JSON"
d=$(ls -d /tmp/b70/rec-0-*.d) || fail "no directory of records for rec's run"
order=${d##*/rec-0-}
order=${order%.d}
pids=$(cat /tmp/b70-memreg-bench-*-"$order".pids) || fail "rec's workload did not run in its cgroup"
ls -l "$d"
# bench's record runs with the backend's default intervals (softdirty: a 10 s
# aggregation), too long here to read a working set: one record per child, holding
# snapshots, is what this part checks
for pid in $pids; do
	memregctl report raw "$d/$pid.rec" >/tmp/b70.raw || fail "rec's run has no record for child $pid"
	grep -q "^snapshot 0 " /tmp/b70.raw || fail "$d/$pid.rec: no snapshot"
	echo "PASS: rec's run: $d/$pid.rec for child $pid"
done
left=$(find "$mnt" -maxdepth 1 -name 'memreg-bench-*')
[ -z "$left" ] || fail "bench left cgroups: $left"
echo "PASS: record --cgroup and bench rec/control in a cgroup"
