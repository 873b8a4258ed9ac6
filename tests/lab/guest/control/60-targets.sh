#!/bin/sh
# memregctl control --cgroup: two workloads (mr-hotcold, 8 MiB hot and 48 MiB cold
# each, first touched on node 0) in one cgroup v2 are both controlled by one run with
# migrate_cold 3; a third one put in the cgroup mid-run is picked up (the log says it
# joined) and controlled too. At the end >= 90% of each one's cold pages are on node
# 3, >= 90% of its hot pages still on node 0, and every byte intact. The refs backend:
# the damon backend claims DAMON for one target per memreg run (control refuses it
# for several), and refs decides for whole mappings, which mr-hotcold's two areas
# are.
. /lab/tests/lib
cg=/sys/fs/cgroup
if [ ! -e $cg/cgroup.controllers ]; then
	mount -t cgroup2 none $cg 2>/dev/null || skip "no cgroup v2 in this kernel"
fi
mkdir -p $cg/mrtargets || fail "mkdir $cg/mrtargets"

# start_one N: mr-hotcold as workload N in the cgroup; its pid in $wpid
start_one() {
	start_workload_out /tmp/w$1.out 8M 48M
	echo $wpid >$cg/mrtargets/cgroup.procs || fail "could not put $wpid in the cgroup"
	echo "workload $1: $(head -1 /tmp/w$1.out)"
}
# check_one N PID: stop it, every byte intact, cold on node 3 and hot on node 0
check_one() {
	kill -TERM $2
	wait $2
	wrc=$?
	cat /tmp/w$1.out
	[ $wrc -eq 0 ] || fail "workload $1 exit $wrc: data not intact"
	workload_pages /tmp/w$1.out
	[ $((cold_on3 * 100)) -ge $((cold_pages * 90)) ] ||
		fail "workload $1: cold $cold_on3 of $cold_pages pages on node 3, want >= 90%"
	[ $((hot_on0 * 100)) -ge $((hot_pages * 90)) ] ||
		fail "workload $1: hot $hot_on0 of $hot_pages pages on node 0, want >= 90%"
	echo "workload $1: cold $cold_on3/$cold_pages pages on node 3, hot $hot_on0/$hot_pages on node 0, data intact"
}

start_one 1; w1=$wpid
start_one 2; w2=$wpid
memregctl control --apply --backend refs --attrs 200000,1000000,2000000,10,1000 \
	--cgroup $cg/mrtargets --duration 75s --status-file /tmp/st.json \
	--scheme '4K max 0 0 4s max migrate_cold 3' >/tmp/c.out 2>/tmp/c.err &
cpid=$!
moved() {  # PID: the log has a migrate_cold applied to it
	grep -Eq "^[0-9]+\.[0-9]{3} s: pid $1: scheme 0 \(line 1\) migrate_cold -> node 3( \(region [0-9]+\))?: applied to " /tmp/c.out
}
# wait until the first two were acted on, then put a third in the cgroup
i=0
until moved $w1 && moved $w2; do
	kill -0 $cpid 2>/dev/null || { cat /tmp/c.out /tmp/c.err; fail "control exited early"; }
	[ $i -lt 600 ] || { cat /tmp/c.out; fail "the first two were not acted on in 120 s"; }
	sleep 0.2
	i=$((i + 1))
done
echo "after $((i / 5)) s both were acted on"
start_one 3; w3=$wpid
wait $cpid
crc=$?
cat /tmp/c.out /tmp/c.err
[ $crc -eq 0 ] || fail "control exit $crc"
for p in $w1 $w2 $w3; do
	grep -Eqx "[0-9]+\.[0-9]{3} s: pid $p \(cgroup $cg/mrtargets\) joined" /tmp/c.out ||
		fail "no join line for pid $p"
	moved $p || fail "pid $p never acted on"
done
[ "$(json_field /tmp/st.json targets_joined)" -eq 3 ] || fail "targets_joined is not 3"
check_one 1 $w1
check_one 2 $w2
check_one 3 $w3
echo "control: nr_tried $(json_field /tmp/st.json nr_tried) sz_tried $(json_field /tmp/st.json sz_tried)" \
	"sz_applied $(json_field /tmp/st.json sz_applied)"
rmdir $cg/mrtargets 2>/dev/null
echo "PASS: three processes of one cgroup controlled, the third joined mid-run"
