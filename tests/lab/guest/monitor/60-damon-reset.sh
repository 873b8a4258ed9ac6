#!/bin/sh
# A memregctl record with damon killed by SIGKILL leaves its kdamond running, its
# ownership marker (/run/memreg/damon.owner) and its tracefs instance. damon-reset
# refuses while that memreg runs; once it is gone, without --apply it changes
# nothing; with --apply nr_kdamonds is back to 0, no kdamond thread and no memreg
# tracefs instance remain, and damon works again.
. /lab/tests/lib
k=/sys/kernel/mm/damon/admin/kdamonds
t=/sys/kernel/tracing
owner=/run/memreg/damon.owner
[ -e $k/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
[ "$(cat $k/nr_kdamonds)" = 0 ] || fail "DAMON already in use at start"

sleep 600 &
victim=$!
memregctl record -b damon --apply -d 600 -o /tmp/killed.rec --pid $victim 2>/tmp/killed.err &
rec=$!
# until its kdamond runs and the marker names it (the self-test's own kdamond,
# on memregctl itself, comes and goes first): up to 120 s under TCG
i=0
until [ "$(cat $k/0/state 2>/dev/null)" = on ] &&
	grep -q "^kdamond 0 [1-9][0-9]* vaddr $victim\$" $owner 2>/dev/null; do
	i=$((i + 1))
	[ $i -le 1200 ] || { cat /tmp/killed.err; fail "the record's kdamond never ran"; }
	kill -0 $rec 2>/dev/null || { cat /tmp/killed.err; fail "record ended early"; }
	usleep 100000
done
kpid=$(cat $k/0/pid)
echo "record pid $rec, kdamond pid $kpid; $owner:"
cat $owner

# while the recorded memreg runs: refused, nothing changed
memregctl damon-reset --apply >/tmp/busy.out 2>/tmp/busy.err
rc=$?
cat /tmp/busy.out /tmp/busy.err
[ $rc -eq 1 ] || fail "damon-reset under a running memreg exited $rc"
grep -q "memreg pid $rec still runs and owns DAMON" /tmp/busy.err || fail "no 'still runs' message"
[ "$(cat $k/0/state)" = on ] && [ "$(cat $k/0/pid)" = "$kpid" ] ||
	fail "damon-reset touched a running memreg's kdamond"

kill -KILL $rec
wait $rec 2>/dev/null
cat /tmp/killed.err
# the instance lets in only the kdamond's events (the reader filters them too)
grep -q "no event filter" /tmp/killed.err && fail "the kernel refused the common_pid filter"
[ "$(cat $t/instances/memreg-$rec-*/events/damon/damon_aggregated/filter)" = "common_pid == $kpid" ] ||
	fail "filter: $(cat $t/instances/memreg-$rec-*/events/damon/damon_aggregated/filter)"
# what SIGKILL leaves: the kdamond, the marker, the instance
[ "$(cat $k/nr_kdamonds)" = 1 ] || fail "nr_kdamonds is $(cat $k/nr_kdamonds) after SIGKILL"
[ "$(cat $k/0/state)" = on ] && [ "$(cat $k/0/pid)" = "$kpid" ] || fail "the kdamond did not survive"
grep -q "^memreg $rec " $owner || fail "no marker naming memreg pid $rec"
inst=$(ls $t/instances | grep "^memreg-$rec-") || fail "no tracefs instance memreg-$rec-*"
echo "left behind: kdamond $kpid, $owner, $t/instances/$inst"

# without --apply: the plan, nothing changed
before=$(cat $k/nr_kdamonds $k/0/state $k/0/pid $owner; ls $t/instances)
memregctl damon-reset >/tmp/plan.out 2>&1 || { cat /tmp/plan.out; fail "damon-reset (plan) exited $?"; }
cat /tmp/plan.out
grep -q "memreg's, running: would stop it" /tmp/plan.out || fail "the plan does not stop the kdamond"
grep -q "^would set nr_kdamonds to 0\$" /tmp/plan.out || fail "the plan keeps nr_kdamonds"
grep -q "^nothing changed: pass --apply to do it\$" /tmp/plan.out || fail "no 'nothing changed'"
after=$(cat $k/nr_kdamonds $k/0/state $k/0/pid $owner; ls $t/instances)
[ "$before" = "$after" ] || fail "damon-reset without --apply changed something"

# --apply: nr_kdamonds 0, no kdamond, no memreg instance, no marker
memregctl damon-reset --apply >/tmp/reset.out 2>&1 || { cat /tmp/reset.out; fail "damon-reset --apply exited $?"; }
cat /tmp/reset.out
[ "$(cat $k/nr_kdamonds)" = 0 ] || fail "nr_kdamonds is $(cat $k/nr_kdamonds) after damon-reset --apply"
! ls $t/instances | grep -q '^memreg-' || fail "memreg tracefs instance left: $(ls $t/instances)"
[ ! -e $owner ] || fail "$owner left"
for c in /proc/[0-9]*/comm; do
	case "$(cat $c 2>/dev/null)" in kdamond*) fail "a kdamond thread still runs: $c";; esac
done

# free again: damon records
memregctl record -b damon --apply -d 2 -o /tmp/after.rec --pid $victim 2>/tmp/after.err ||
	{ cat /tmp/after.err; fail "record after damon-reset"; }
[ "$(cat $k/nr_kdamonds)" = 0 ] || fail "nr_kdamonds left non-zero by the record after"
[ ! -e $owner ] || fail "$owner left by the record after"
kill $victim
echo PASS
