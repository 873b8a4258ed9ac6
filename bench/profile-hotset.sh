#!/bin/sh
# The allocator's hot-set inflation benchmark (alloc-bench hotset: 256 MiB, hot site
# 10% of the bytes interleaved with a cold site) without a profile, then with a
# profile learned by the monitor: a learning run (16 MiB, hot objects touched for
# TOUCH_S seconds, heap split one mapping per page for refs) recorded with
# `memregctl record -b refs`, turned into MEMREG_PROFILE by `memregctl profile`.
# Not a test. Usage: bench/profile-hotset.sh [-n RUNS] [BUILDDIR]   (default 3, build)
set -u
RUNS=3
while getopts n: o; do
	case $o in
	n) RUNS=$OPTARG ;;
	*) echo "usage: $0 [-n RUNS] [BUILDDIR]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
MEMREG=$build/.libs/libmemreg.so
CTL=$build/tools/memregctl
[ -f "$MEMREG" ] && [ -x "$CTL" ] || { echo "profile-hotset: build first" >&2; exit 1; }
out=$(mktemp -d /tmp/profile-hotset.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$out"' EXIT
gcc -O2 -o "$out/alloc-bench" "$src/bench/alloc-bench.c" -lpthread || exit 1
infl() { sed -n 's/.*inflation=\([0-9.]*\).*/\1/p' "$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "learning run: ALLOC_BENCH_HOTSET_MIB=16 ALLOC_BENCH_TOUCH_MS=14000 ALLOC_BENCH_SPLIT=1" \
	"MEMREG_REGION_SIZE=1M MEMREG_SITE_MAP=map alloc-bench hotset"
ALLOC_BENCH_HOTSET_MIB=16 ALLOC_BENCH_TOUCH_MS=14000 ALLOC_BENCH_SPLIT=1 MEMREG_REGION_SIZE=1M \
	LD_PRELOAD=$MEMREG MEMREG_SITE_MAP=$out/map "$out/alloc-bench" hotset >"$out/learn" &
pid=$!
i=0
while ! grep -q '^ready' "$out/learn"; do
	i=$((i + 1))
	[ $i -lt 600 ] || { echo "profile-hotset: learning run never got ready" >&2; exit 1; }
	sleep 0.1
done
echo "memregctl record -b refs --apply -a 200000,2000000,2000000,150000,300000 -d 12 -o rec --pid PID"
"$CTL" record -b refs --apply -a 200000,2000000,2000000,150000,300000 -d 12 -o "$out/rec" --pid "$pid" || exit 1
wait "$pid"
pid=
echo "memregctl profile rec --site-map map -o profile"
"$CTL" profile "$out/rec" --site-map "$out/map" -o "$out/profile" || exit 1
nm -n "$out/alloc-bench" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' >"$out/syms"
echo "learned profile (site_a is the hot site, site_b the cold one):"
awk -v syms="$out/syms" '
	function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	BEGIN { while ((getline l < syms) > 0) { split(l, f, " "); n++; a[n] = hex(f[1]); nm[n] = f[2] } }
	/^[0-9a-f]+ 0x/ { off = hex($2); fn = ""
		for (i = 1; i <= n; i++) if (a[i] <= off) fn = nm[i]
		if (fn == "site_a" || fn == "site_b") print "  " fn, $3, $4 }' "$out/profile"

for r in $(seq "$RUNS"); do
	LD_PRELOAD=$MEMREG "$out/alloc-bench" hotset >"$out/o" && infl "$out/o" >>"$out/before"
	LD_PRELOAD=$MEMREG MEMREG_PROFILE=$out/profile "$out/alloc-bench" hotset >"$out/o" &&
		infl "$out/o" >>"$out/after"
done
echo "hot-set inflation (alloc-bench hotset, 256 MiB, median of $RUNS runs):"
echo "  memreg, no profile:        $(median <"$out/before")   (runs: $(tr '\n' ' ' <"$out/before"))"
echo "  memreg, learned profile:   $(median <"$out/after")   (runs: $(tr '\n' ' ' <"$out/after"))"
