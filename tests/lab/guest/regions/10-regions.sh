#!/bin/sh
# memregctl regions in the lab: the MPST power nodes come out as regions joined with
# the NUMA nodes and their memory blocks (one boot-memory region and one DIMM region
# per node, as scripts/lab configures them), with occupancy per page from kpageflags.
fail() { echo "FAIL: $*"; exit 1; }

memregctl regions || fail "memregctl regions failed"
memregctl regions --json | tr -d ' \n\t' >/tmp/regions.json || fail "--json failed"
grep -q '"source":"mpst"' /tmp/regions.json || fail "source is not mpst"

N=$LAB_NODES
BLK=$((128 << 20))
per_node=$((LAB_NODE_SIZE_BYTES / BLK))
per_dimm=$((LAB_DIMM_SIZE_BYTES / BLK))
want=$N
[ "$per_dimm" -gt 0 ] && want=$((2 * N))
# One line per region: {"id":...
sed 's/{"id":/\n&/g' /tmp/regions.json | grep '^{"id":' >/tmp/regions.lines
got=$(wc -l </tmp/regions.lines)
[ "$got" -eq "$want" ] || fail "$got regions, expected $want"

blocks() { # first count -> "a,b,c"
	i=0 s=
	while [ "$i" -lt "$2" ]; do s="$s${s:+,}$(($1 + i))"; i=$((i + 1)); done
	echo "$s"
}
check() { # id node start size blocks
	line=$(grep "^{\"id\":$1," /tmp/regions.lines) || fail "no region $1"
	echo "$line" | grep -q "\"node\":$2," || fail "region $1: node is not $2"
	echo "$line" | grep -q "\"ranges\":\[{\"start\":$3,\"size\":$4}\]" ||
		fail "region $1: range is not $3+$4"
	echo "$line" | grep -q "\"blocks\":\[$5\]" || fail "region $1: blocks are not [$5]"
	echo "$line" | grep -q '"granularity":"page"' || fail "region $1: occupancy not per page"
	# free + movable + unmovable cover the region (to within what is absent).
	f=$(echo "$line" | sed 's/.*"free_bytes":\([0-9]*\).*/\1/')
	m=$(echo "$line" | sed 's/.*"movable_bytes":\([0-9]*\).*/\1/')
	u=$(echo "$line" | sed 's/.*"unmovable_bytes":\([0-9]*\).*/\1/')
	t=$((f + m + u))
	[ "$t" -le "$4" ] && [ "$t" -ge $(($4 - 16 * 1048576)) ] ||
		fail "region $1: occupancy $f + $m + $u does not cover its $4 bytes"
	echo "region $1: node $2, [$3, +$4), blocks [$5], free $f movable $m unmovable $u"
}
i=0
while [ "$i" -lt "$N" ]; do
	check "$i" "$i" $((i * LAB_NODE_SIZE_BYTES)) "$LAB_NODE_SIZE_BYTES" \
		"$(blocks $((i * per_node)) "$per_node")"
	if [ "$per_dimm" -gt 0 ]; then
		check $((N + i)) "$i" $(((1 << 32) + i * LAB_DIMM_SIZE_BYTES)) "$LAB_DIMM_SIZE_BYTES" \
			"$(blocks $(((1 << 32) / BLK + i * per_dimm)) "$per_dimm")"
	fi
	i=$((i + 1))
done
# The kernel lives in region 0: it holds unmovable memory.
u0=$(sed -n 1p /tmp/regions.lines | sed 's/.*"unmovable_bytes":\([0-9]*\).*/\1/')
[ "$u0" -gt 0 ] || fail "region 0 shows no unmovable memory"
