#!/bin/sh
# With a kdamond that someone else started running, memregctl's damon backend says
# DAMON is in use and writes nothing: the other kdamond keeps running, untouched;
# auto passes over damon. Then physical monitoring (paddr) works once it is free,
# and report regions gives per-power-region rates from it.
. /lab/tests/lib
k=/sys/kernel/mm/damon/admin/kdamonds
[ -e $k/nr_kdamonds ] || skip "no DAMON sysfs in this kernel"
[ "$(cat $k/nr_kdamonds)" = 0 ] || fail "DAMON already in use at start"

# someone else's kdamond, monitoring a sleeping process
sleep 600 &
victim=$!
echo 1 >$k/nr_kdamonds
echo 1 >$k/0/contexts/nr_contexts
echo vaddr >$k/0/contexts/0/operations
echo 1 >$k/0/contexts/0/targets/nr_targets
echo $victim >$k/0/contexts/0/targets/0/pid_target
echo on >$k/0/state || fail "could not start the other kdamond"
their=$(cat $k/0/pid)

memregctl record -b damon --apply -d 2 -o /tmp/busy.rec -- sleep 1 2>/tmp/busy.err
rc=$?
cat /tmp/busy.err
[ $rc -eq 1 ] || fail "record with damon in use exited $rc"
grep -q "DAMON is in use" /tmp/busy.err || fail "no 'in use' message"
[ "$(cat $k/nr_kdamonds)" = 1 ] || fail "nr_kdamonds changed"
[ "$(cat $k/0/state)" = on ] || fail "the other kdamond was stopped"
[ "$(cat $k/0/pid)" = "$their" ] || fail "the other kdamond was replaced"
[ "$(cat $k/0/contexts/0/targets/0/pid_target)" = $victim ] || fail "its target changed"
! ls /sys/kernel/tracing/instances 2>/dev/null | grep -q memreg ||
	fail "a tracefs instance was made while DAMON was in use"
memregctl record --apply -d 2 -o /tmp/auto.rec -- sleep 1 2>/tmp/auto.err || true
cat /tmp/auto.err
grep -q "using damon" /tmp/auto.err && fail "auto took damon while in use"
[ "$(cat $k/0/state)" = on ] || fail "auto stopped the other kdamond"
echo off >$k/0/state
echo 0 >$k/nr_kdamonds
kill $victim

# free again: physical memory while zigzag runs (200 MiB written over and over),
# 100..1000 regions over the guest's 3 GiB; then per-region rates: some power
# region must show accesses
start_tickers
memreg-accessgen -t 0.3 /usr/share/memreg/configs/zigzag &
gen=$!
sleep 2
memregctl record -b damon --apply --phys -a 20000,400000,2000000,100,1000 -d 6 \
	-o /tmp/phys.rec || fail "paddr record"
wait $gen
[ "$(cat $k/nr_kdamonds)" = 0 ] || fail "nr_kdamonds left non-zero after paddr"
memregctl report regions /tmp/phys.rec || fail "report regions"
memregctl report heatmap --width 60 --height 16 /tmp/phys.rec
memregctl report regions /tmp/phys.rec | grep -q '^# physical memory' || fail "not physical"
memregctl report regions --json /tmp/phys.rec | grep -q '"access_rate":0\.[0-9]*[1-9]' ||
	fail "no power region shows any access while 200 MiB were being written"
echo PASS
