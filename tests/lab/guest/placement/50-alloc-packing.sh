#!/bin/sh
# The allocator's packing, physically: alloc-bench's packing, lifetimes (churn) and
# hotset workloads (tests/lab/progs/mr-alloc-pack, scaled to the lab) under
# libmemreg.so with regions = nodes, then memregctl where --json on the live process.
#
# Regions = nodes: libmemreg has no option for it (its node mode gives each node a
# group of regions and serves a thread from its own node's group), so with
# MEMREG_NUMA=0 (one zone set: the hot reserve at the bottom, normal data above it,
# cold data from the top) mr-alloc-pack binds the arena itself (MPOL_PREFERRED, as
# the node mode binds a region): node 0 takes the hot reserve and the normal zone's
# first 32 MiB (4 regions of 8 MiB: the node's "share"), nodes 1 and 2 the next
# shares, node 3 the rest up to the top (the cold zone). So "lowest region first" is
# "lowest node first", hot data is on node 0 and cold data on node 3. The limit, as
# alloc-bench counts it in regions, is here in shares: ceil(live bytes at the end /
# 32 MiB), 1 for every workload here.
#   packing   128 MiB allocated in mixed sizes, 10% long-lived (site_a, profiled cold),
#             the rest freed: at most limit + 1 nodes hold the workload (with the
#             profile, the benchmark's goal; without it, shown, the long-lived data
#             stays where the run left it: on every node).
#   lifetimes alloc-bench's churn of random lifetimes scaled by 128/320, no profile
#             (packing from the allocation order alone): at most limit + 1 nodes hold
#             what lives at the end.
#   hotset    128 MiB of 64-256 B objects, 10% hot (site_a, profiled hot), the cold
#             ones (site_b) freed at the end: the hot site's pages on node 0 only.
# Each program gives back what it freed (malloc_trim) before memregctl where looks.
# Profiles are learned in a separate training run (MEMREG_SITE_MAP), as
# bench/alloc-bench.sh's memreg+profile does. glibc's placement (first touch; the
# process runs on CPU 0, node 0) is printed beside, not asserted. A node counts as
# holding the workload when the workload added at least 1 MiB there: the bytes per
# node are the program's at the end less those it had before the workload (its
# libraries and stack, counted when it prints "bound"), and transparent huge pages
# are off for it (else a commit chunk touched once is 2 MiB on its node).
. /lab/tests/lib
lib=/usr/lib/libmemreg.so
MIB=128
SHARE_MIB=32
MIN_BYTES=$((1 << 20))
[ -f "$lib" ] || fail "$lib is not installed in the guest"
[ "${LAB_NODES:-0}" -eq 4 ] || fail "the test needs 4 nodes, the lab has ${LAB_NODES:-?}"
[ "$(cat /proc/sys/kernel/numa_balancing 2>/dev/null)" = 0 ] ||
	fail "numa_balancing is on: pages would move under the test"

# go OUT WORKLOAD [ENV...]: run mr-alloc-pack (under libmemreg.so when ENV names it)
# in the background with its output in OUT; $pid is the program.
go() {
	out=$1 w=$2
	shift 2
	if [ $# -gt 0 ]; then
		env MEMREG_NUMA=0 MEMREG_REGION_SIZE=8M "$@" \
			mr-alloc-pack "$w" $MIB 4 $SHARE_MIB >"$out" 2>&1 &
	else
		mr-alloc-pack "$w" $MIB 4 $SHARE_MIB >"$out" 2>&1 &
	fi
	pid=$!
}

# train WORKLOAD CLASS_A CLASS_B: a profile in /tmp/profile.WORKLOAD from a training
# run's site map: the sites inside site_a and site_b (their offsets from "sites A B").
train() {
	rm -f "/tmp/map.$1"
	env LD_PRELOAD=$lib MEMREG_NUMA=0 MEMREG_REGION_SIZE=8M MEMREG_SITE_MAP="/tmp/map.$1" \
		mr-alloc-pack "$1" $MIB 4 $SHARE_MIB --exit >/tmp/train.out 2>&1 ||
		fail "training run of $1: $(cat /tmp/train.out)"
	set -- "$1" "$2" "$3" $(sed -n 's/^sites //p' /tmp/train.out)
	{
		echo "memreg-profile 1"
		awk -v a="$4" -v b="$5" -v ca="$2" -v cb="$3" '
			function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
				for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
				return v }
			$1 == "site" && $5 == "(main" { o = hex($4); fa = hex(a); fb = hex(b)
				best = ""; if (o >= fa && o < fa + 64) best = "a"
				if (o >= fb && o < fb + 64 && (best == "" || fb > fa)) best = "b"
				if (best == "a") print $3, $4, ca, "site_a"
				if (best == "b") print $3, $4, cb, "site_b" }' "/tmp/map.$1"
	} >"/tmp/profile.$1"
	grep -q site_a "/tmp/profile.$1" || fail "no site_a in $1's site map: $(cat "/tmp/map.$1" | head -20)"
}

# node_bytes_of FILE N: bytes on node N in FILE, from the "nodes" array of where --json
# (entries {"node":N,"bytes":B}; a node not listed holds nothing).
node_bytes_of() {
	b=$(tr -d ' \n\t' <"$1" | sed 's/.*"nodes":\[//; s/},{/}\n{/g' |
		sed -n "s/^{\"node\":$2,\"bytes\":\([0-9]*\)}.*/\1/p")
	echo "${b:-0}"
}

# look LABEL WORKLOAD [ENV...]: run it, wait for "ready", print its MiB per node;
# $nodes = how many nodes hold at least MIN_BYTES, $live = its live bytes, $nb_N the
# bytes on node N.
look() {
	label=$1
	shift
	go /tmp/pack.out "$@"
	i=0
	until grep -q '^bound' /tmp/pack.out; do
		i=$((i + 1)); [ "$i" -lt 600 ] || fail "$label: mr-alloc-pack did not start: $(cat /tmp/pack.out)"
		sleep 0.1
	done
	memregctl where "$pid" --json >/tmp/base.json || fail "$label: memregctl where failed"
	kill -USR1 "$pid"
	wait_ready /tmp/pack.out "$label: mr-alloc-pack did not finish" 1800
	live=$(sed -n 's/^live_bytes=//p' /tmp/pack.out)
	memregctl where "$pid" --json >/tmp/where.json || fail "$label: memregctl where failed"
	nodes=0 line=
	for n in 0 1 2 3; do
		b=$(($(node_bytes_of /tmp/where.json $n) - $(node_bytes_of /tmp/base.json $n)))
		[ "$b" -ge 0 ] || b=0
		eval "nb_$n=$b"
		line="$line $(awk -v b="$b" 'BEGIN { printf "%7.1f", b / 1048576 }')"
		[ "$b" -ge $MIN_BYTES ] && nodes=$((nodes + 1))
	done
	limit=$(( (live + (SHARE_MIB << 20) - 1) / (SHARE_MIB << 20) ))
	printf '%-26s MiB on nodes 0-3:%s  nodes %d  live %5.1f MiB  limit %d\n' "$label" "$line" \
		"$nodes" "$(awk -v b="$live" 'BEGIN { printf "%.1f", b / 1048576 }')" "$limit"
	kill "$pid"
	wait "$pid"
	pid=
}

train packing cold normal
train hotset hot cold
bad=

look "packing glibc" packing
look "packing libmemreg" packing LD_PRELOAD=$lib
look "packing libmemreg+profile" packing LD_PRELOAD=$lib MEMREG_PROFILE=/tmp/profile.packing
[ "$nodes" -le $((limit + 1)) ] ||
	bad="$bad; packing with a profile: $nodes nodes hold its pages, limit $limit + 1"

look "lifetimes glibc" lifetimes
look "lifetimes libmemreg" lifetimes LD_PRELOAD=$lib
[ "$nodes" -le $((limit + 1)) ] ||
	bad="$bad; lifetimes: $nodes nodes hold its pages, limit $limit + 1"

look "hotset glibc" hotset
look "hotset libmemreg+profile" hotset LD_PRELOAD=$lib MEMREG_PROFILE=/tmp/profile.hotset
[ "$nodes" -eq 1 ] && [ "$nb_0" -ge "$live" ] ||
	bad="$bad; hotset: the hot site's $live bytes are not all on node 0"

[ -z "$bad" ] || fail "${bad#; }"
echo "PASS: libmemreg's packing holds physically (regions = nodes)"
