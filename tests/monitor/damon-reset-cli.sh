#!/bin/sh
# memregctl damon-reset against a captured machine (--root): the plan for a marker
# whose memreg is gone, a refusal while it runs, writes refused under the fixture
# even with --apply, bad usage. The cleanup itself: tests/monitor/test-damon.c and,
# on a real kernel, tests/lab/guest/monitor/60-damon-reset.sh.
set -u
ctl=$top_builddir/tools/memregctl
tmp=$(mktemp -d /tmp/mr-damon-reset-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
fix=$tmp/root
kd=$fix/sys/kernel/mm/damon/admin/kdamonds
mkdir -p $kd/0/contexts/0 $fix/proc/4300 $fix/proc/3333 $fix/run/memreg \
	$fix/sys/kernel/tracing/instances/memreg-3333-777
echo 1 >$kd/nr_kdamonds
echo on >$kd/0/state
echo 4300 >$kd/0/pid
echo kdamond.0 >$fix/proc/4300/comm
printf 'memreg 3333 777\ntracefs /sys/kernel/tracing/instances/memreg-3333-777\nkdamond 0 4300 vaddr 4242\n' \
	>$fix/run/memreg/damon.owner
# /proc/3333/stat: field 22 (start time) is 777 while "memreg" runs
stat() { echo "3333 (memregctl) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 $1 0 0" >$fix/proc/3333/stat; }

# 1. the recorded memreg runs: refused, exit 1
stat 777
"$ctl" damon-reset --root "$fix" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "exit $rc while the recorded memreg runs, want 1"
want="memregctl: damon-reset: memreg pid 3333 still runs and owns DAMON (/run/memreg/damon.owner); it resets DAMON itself when it ends: stop it (kill 3333) rather than resetting under it"
[ "$(cat "$tmp/err")" = "$want" ] || fail "refusal: $(cat "$tmp/err")"

# 2. gone (pid reused by another process): the plan, exit 0, nothing changed
stat 999
"$ctl" damon-reset --root "$fix" >"$tmp/out" 2>"$tmp/err" || fail "plan exited $?: $(cat "$tmp/err")"
cat >"$tmp/want" <<'END'
/run/memreg/damon.owner: memreg pid 3333 is gone
kdamond 0 (thread 4300, vaddr of pid 4242): memreg's, running: would stop it
would set nr_kdamonds to 0
would remove tracefs instance /sys/kernel/tracing/instances/memreg-3333-777
would remove /run/memreg/damon.owner
nothing changed: pass --apply to do it
END
diff "$tmp/want" "$tmp/out" || fail "plan differs"
[ "$(cat $kd/0/state)" = on ] && [ -e $fix/run/memreg/damon.owner ] || fail "the plan changed the fixture"

# 3. --apply under a fixture root: the first write is refused, exit 1
"$ctl" damon-reset --apply --root "$fix" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "--apply on a fixture exited $rc, want 1"
want="memregctl: damon-reset: refusing to write /sys/kernel/mm/damon/admin/kdamonds/0/state under fixture root $fix"
[ "$(cat "$tmp/err")" = "$want" ] || fail "fixture refusal: $(cat "$tmp/err")"
[ "$(cat $kd/0/state)" = on ] && [ -e $fix/run/memreg/damon.owner ] || fail "--apply changed the fixture"

# 4. bad usage: exit 2
"$ctl" damon-reset extra >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "an argument: exit $rc, want 2"
echo PASS
