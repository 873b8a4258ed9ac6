#!/bin/sh
# memregd with the damon backend: while it runs, nr_kdamonds is 1 and kdamond 0's pid
# is the one its ownership marker (/run/memreg/damon.owner) recorded, its status has
# nr_tried > 0; SIGHUP reloads the schemes and the kdamond keeps its pid (not torn
# down); after SIGTERM nr_kdamonds is 0 and no memreg tracefs instance is left; the
# workload's data is intact. Then, where util-linux's setpriv is in the guest, the
# same under exactly the unit's capability bounding set.
. /lab/tests/lib
[ -e $admin/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
[ "$(cat $admin/nr_kdamonds)" = 0 ] || skip "DAMON in use before the test"
# a failure stops memregd and the workload: the group's later tests need DAMON free
mpid=
wpid=
cleanup() {
	_rc=$?
	[ -n "$mpid" ] && kill -TERM $mpid 2>/dev/null && wait $mpid
	[ -n "$wpid" ] && kill -TERM $wpid 2>/dev/null
	exit $_rc
}
trap cleanup EXIT
caps=cap_sys_ptrace,cap_sys_nice,cap_sys_admin,cap_perfmon
inst=/sys/kernel/tracing/instances

# run_memregd NAME [PREFIX...]: one lifecycle, memregd started as PREFIX memregd ...
run_memregd() {
	name=$1
	shift
	start_workload 16M 64M
	st=/tmp/run-$name/memregd.status
	cat >/tmp/m.conf <<CONF
apply yes
pid $wpid
backend damon
intervals 50ms 1s 2s
regions 10 1000
status $st
schemes
4K max 0 0 5s max migrate_cold 3
min max min max min max stat
CONF
	memregd --config /tmp/m.conf --check || fail "$name: memregd --check"
	"$@" memregd --config /tmp/m.conf 2>/tmp/m.log &
	mpid=$!
	i=0
	while [ $i -lt 600 ]; do
		[ -f $st ] && [ "$(json_field $st aggregations)" -ge 3 ] 2>/dev/null &&
			[ "$(json_field $st nr_tried)" -gt 0 ] 2>/dev/null && break
		kill -0 $mpid 2>/dev/null || { cat /tmp/m.log; fail "$name: memregd exited"; }
		usleep 100000
		i=$((i + 1))
	done
	[ $i -lt 600 ] || { cat /tmp/m.log; fail "$name: no aggregation with nr_tried > 0"; }
	n=$(cat $admin/nr_kdamonds)
	[ "$n" = 1 ] || fail "$name: nr_kdamonds $n while memregd runs, want 1"
	kpid=$(damon_cat $admin/0/pid)
	rec=$(sed -n 's/^kdamond 0 \([0-9]*\) .*/\1/p' /run/memreg/damon.owner)
	echo "$name: nr_kdamonds 1, kdamond 0 pid $kpid, recorded $rec, nr_tried $(json_field $st nr_tried)"
	[ -n "$kpid" ] && [ "$kpid" = "$rec" ] || { cat /run/memreg/damon.owner; fail "$name: kdamond pid $kpid, marker says '$rec'"; }
	printf '4K max 0 0 5s max migrate_cold 3\n' >>/tmp/m.conf
	kill -HUP $mpid
	i=0
	while [ $i -lt 300 ] && ! grep -q 'reloaded /tmp/m.conf: 3 schemes' /tmp/m.log; do
		usleep 100000
		i=$((i + 1))
	done
	grep -q 'reloaded /tmp/m.conf: 3 schemes' /tmp/m.log || { cat /tmp/m.log; fail "$name: no reload"; }
	now=$(damon_cat $admin/0/pid)
	[ "$now" = "$kpid" ] || {
		cat /tmp/m.log
		fail "$name: SIGHUP tore the kdamond down: pid '$now' (was $kpid), state $(damon_cat $admin/0/state)"
	}
	kill -TERM $mpid
	wait $mpid
	rc=$?
	mpid=
	grep -v ' stat: ' /tmp/m.log | tail -12
	[ $rc -eq 0 ] || fail "$name: memregd exit $rc after SIGTERM"
	[ "$(cat $admin/nr_kdamonds)" = 0 ] || fail "$name: nr_kdamonds left $(cat $admin/nr_kdamonds)"
	! ls $inst 2>/dev/null | grep -q memreg || fail "$name: tracefs instance left: $(ls $inst)"
	[ ! -e /run/memreg/damon.owner ] || fail "$name: ownership marker left"
	stop_workload
	wpid=
	echo "$name: lifecycle ok"
}

run_memregd plain
# util-linux's, which scripts/lab copies in (busybox's sh prefers its own applet,
# which has no --bounding-set, to anything in PATH)
sp=/usr/libexec/memreg-tests/setpriv
if [ -x $sp ] && $sp --help 2>&1 | grep -q -- --bounding-set; then
	run_memregd setpriv $sp --bounding-set=-all,+sys_ptrace,+sys_nice,+sys_admin,+perfmon --
	echo "PASS: memregd lifecycle, and under the unit's bounding set ($caps)"
else
	$sp --help 2>&1 | head -3
	echo "PASS: memregd lifecycle (no util-linux setpriv in the guest: the unit's bounding set was not tried)"
fi
