#!/bin/sh
# Allocator benchmarks (not tests): libmemreg against glibc, jemalloc, tcmalloc and
# mimalloc (Debian packages, all by LD_PRELOAD), side by side. Prints the tables of
# docs/allocator.md: median time and peak RSS of RUNS runs, as ratios to glibc and to
# each peer; fragmentation; packing by site; hot-set inflation (memreg with and without
# a site profile made from its own site map).
# Usage: bench/alloc-bench.sh [-n RUNS] [-w "WORKLOADS"] [-c CPU] [-a "ALLOCATORS"] [BUILDDIR]
#   (default 5 runs, BUILDDIR build, CPU "fastest": below; ALLOCATORS glibc, memreg
#   and the peers installed: -a "glibc memreg" runs those two alone, for more
#   rounds in the same time; glibc is always run, every ratio being to it)
# Then the goals of docs/allocator.md on these runs (BUILDDIR/bench/alloc-goals:
# ratios of medians and paired by round, with 95% intervals).
# WORKLOADS may name the lists "default" and "more" (below).
# Needs: gcc, /usr/bin/time, python3.11; the peers' packages (libjemalloc2,
# libgoogle-perftools4, libmimalloc2.0); missing peers are left out and named, as
# are the real programs sqlite3, git (run in memreg's clone), jq and tclsh.
set -u
RUNS=5
DEFAULT="server prodcons falseshare churn realloc frag packing hotset lifetimes gcc python sqlite git jq tcl"
# More programs that make many small objects, not in the default list (the goals of
# docs/allocator.md are over that one): perl and mawk count the words of a generated
# 20 MB text (50 000 distinct), objdump disassembles git, bc computes pi to 2000 digits;
# and alloc-bench's threads, a thousand threads at a time passing objects between them,
# and bufchurn, 5000 buffers of 32-128 KiB replaced at random.
MORE="perl mawk objdump bc threads bufchurn"
# The workloads that run threads; the rest run one thread at a time, and run on one
# CPU (-c): the same for every allocator. The two CPUs of the VM of 2026-12-06 ran
# at different speeds at times: for minutes, alloc-bench spin took 9.0 ms on one and
# 16.9-17.7 on the other, and tclsh's script 1.69-1.73 s pinned to the first,
# 2.77-2.93 pinned to the second, under glibc and libmemreg alike. Left to the scheduler, each run landed on either,
# and a workload's median moved by which allocator drew more slow runs (tcl: 3 of 5
# runs slow for libmemreg, 0 for glibc, in one run of the script; 3 and 3 in the
# one before). Which CPU is slow changes: CPU 1 for minutes, later CPU 0. So by
# default (-c fastest) each such run goes to the CPU on which "alloc-bench spin" is
# fastest just before it (0.1-0.3 s a run); -c N pins them all to CPU N, -c none
# leaves them to the scheduler.
THREADED="server prodcons falseshare threads"
CPU=fastest
WORKLOADS=$DEFAULT
ONLY=
usage() { echo "usage: $0 [-n RUNS] [-w WORKLOADS] [-c CPU|fastest|none] [-a ALLOCATORS] [BUILDDIR]" >&2; exit 2; }
while getopts n:w:c:a:h o; do
	case $o in
	n) RUNS=$OPTARG ;;
	w) WORKLOADS=$OPTARG ;;
	c) CPU=$OPTARG ;;
	a) ONLY=$OPTARG ;;
	h) sed -n '2,/^set /p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) usage ;;
	esac
done
for a in $ONLY; do
	case $a in
	glibc | memreg | jemalloc | tcmalloc | mimalloc) ;;
	*) echo "alloc-bench: -a takes glibc, memreg, jemalloc, tcmalloc and mimalloc, not '$a'" >&2; exit 2 ;;
	esac
done
case $CPU in
fastest | none | [0-9] | [0-9][0-9] | [0-9][0-9][0-9]) ;;
*) echo "alloc-bench: -c takes a CPU number, fastest or none, not '$CPU'" >&2; exit 2 ;;
esac
shift $((OPTIND - 1))
WORKLOADS=$(for w in $WORKLOADS; do
	case $w in default) echo "$DEFAULT" ;; more) echo "$MORE" ;; *) echo "$w" ;; esac
done | tr '\n' ' ')
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
MEMREG=$build/.libs/libmemreg.so
[ -f "$MEMREG" ] || { echo "alloc-bench: $MEMREG not built" >&2; exit 1; }
LIBDIR=/usr/lib/x86_64-linux-gnu
out=$(mktemp -d /tmp/alloc-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT

# Whether allocator @1 is to run (-a; glibc always).
wanted() { [ -z "$ONLY" ] || [ "$1" = glibc ] || case " $ONLY " in *" $1 "*) true ;; *) false ;; esac; }
ALLOCS=glibc
wanted memreg && ALLOCS="$ALLOCS memreg"
for peer in jemalloc:libjemalloc.so.2 tcmalloc:libtcmalloc.so.4 mimalloc:libmimalloc.so.2; do
	wanted "${peer%%:*}" || continue
	if [ -f "$LIBDIR/${peer#*:}" ]; then
		ALLOCS="$ALLOCS ${peer%%:*}"
	else
		echo "note: ${peer%%:*} missing ($LIBDIR/${peer#*:}): left out"
	fi
done
lib_of() {
	case $1 in
	memreg) echo "$MEMREG" ;;
	jemalloc) echo "$LIBDIR/libjemalloc.so.2" ;;
	tcmalloc) echo "$LIBDIR/libtcmalloc.so.4" ;;
	mimalloc) echo "$LIBDIR/libmimalloc.so.2" ;;
	esac
}
# Every run gets the same environment but for what it preloads, and that is as long
# for each allocator: the environment's size moves the stack, and a program's timing
# can move with it (Mytkowicz et al., ASPLOS 2009). So each allocator is preloaded by
# a link of the same length, $out/l/NAME.so with NAME padded to 8 characters, and
# glibc's runs carry NO_PRELOAD (a name as long as LD_PRELOAD) set to such a path.
link_of() {
	echo "$out/l/$(printf '%-8.8s' "$1" | tr ' ' _).so"
}
mkdir "$out/l"
for a in $ALLOCS; do
	[ "$a" = glibc ] || ln -s "$(lib_of "$a")" "$(link_of "$a")"
done

gcc -O2 -o "$out/alloc-bench" "$src/bench/alloc-bench.c" -lpthread -lm || exit 1

# The CPUs this script may run on ("0-3,6" from taskset: one number a line).
cpus_allowed() {
	taskset -pc $$ | sed 's/.*: *//' | tr ',' '\n' |
		awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }'
}
# "cpuN MS ..." for each allowed CPU: alloc-bench spin's best loop there.
cpu_speeds() {
	for c in $(cpus_allowed); do
		printf 'cpu%s %s ' "$c" "$(taskset -c "$c" "$out/alloc-bench" spin | sed 's/spin_ms=//')"
	done
}
# Without taskset the one-thread workloads are left to the scheduler (CPU=none).
if [ "$CPU" != none ]; then
	if ! command -v taskset >/dev/null; then
		echo "note: no taskset (util-linux): one-thread workloads not pinned"
		CPU=none
	else
		echo "CPU speeds (alloc-bench spin, best of 9 loops, ms): $(cpu_speeds)"
		if [ "$CPU" = fastest ]; then
			echo "one-thread workloads run on the CPU fastest just before each run (taskset; each run's line has cpu= and spin_ms=); $THREADED on all"
		else
			cpus_allowed | grep -qx "$CPU" ||
				{ echo "alloc-bench: CPU $CPU is not one this script may run on ($(cpus_allowed | tr '\n' ' '))" >&2; exit 2; }
			echo "one-thread workloads run on CPU $CPU (taskset), for every allocator; $THREADED on all"
		fi
	fi
fi
# Where workload @1 runs this time: sets RUN_CPU (a CPU number, or empty: anywhere)
# and RUN_SPIN (that CPU's spin just before, or empty).
choose_cpu() {
	RUN_CPU= RUN_SPIN=
	case " $THREADED " in *" $1 "*) return ;; esac
	case $CPU in
	none) ;;
	fastest)
		set -- $(cpu_speeds | awk '{ for (i = 1; i < NF; i += 2) if (b == "" || $(i + 1) < b) { b = $(i + 1); c = $i } } END { sub(/^cpu/, "", c); print c, b }')
		RUN_CPU=$1 RUN_SPIN=$2 ;;
	*) RUN_CPU=$CPU ;;
	esac
}
# The real-program workloads.
GCC_SRCS="allocator/buddy.c allocator/tcache.c allocator/heap.c allocator/os.c allocator/init.c allocator/interpose.c common/util.c common/root.c tools/memregctl.c"
cat >"$out/gcc.sh" <<EOF
for f in $GCC_SRCS; do
	gcc -O2 -c -I"$build" -I"$src" -I"$src/include" "$src/\$f" -o "$out/gcc-\$(basename \$f).o" || exit 1
done
EOF
cat >"$out/py.py" <<'EOF'
import json, random
random.seed(1)
docs = [{"id": i, "name": "n%d" % i, "tags": [random.random() for _ in range(20)],
         "sub": {str(j): "x" * (j % 50) for j in range(30)}} for i in range(20000)]
s = json.dumps(docs)
back = json.loads(s)
idx = {}
for d in back:
    for t in d["tags"]:
        idx.setdefault(round(t, 2), []).append(d["id"])
words = sorted(set("".join(random.choice("abcdef") for _ in range(8)) for _ in range(200000)))
print(len(s), len(idx), len(words))
EOF
# sqlite3: an in-memory table of 300 000 rows, an index, a sort and a GROUP BY (its
# page cache takes blocks of 4368 bytes). git: the patches of the clone's first 600
# commits, a history no later commit changes (inflated objects and diff buffers of
# 4-256 KiB). jq: a filter over 150 000 generated objects. tclsh: a dict of 300 000
# strings, listed and sorted.
cat >"$out/sq.sql" <<'EOF'
CREATE TABLE t(a INTEGER, b TEXT, c REAL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 300000)
INSERT INTO t SELECT i, hex(randomblob(16)), random() % 1000 FROM s;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(b)) FROM (SELECT b FROM t ORDER BY c LIMIT 200000);
SELECT a % 100, count(*), group_concat(substr(b, 1, 4)) FROM t GROUP BY a % 100 ORDER BY 2 DESC LIMIT 3;
EOF
cat >"$out/t.tcl" <<'EOF'
set d [dict create]
for {set i 0} {$i < 300000} {incr i} { dict set d k$i [string repeat x [expr {$i % 50}]] }
set l {}
dict for {k v} $d { lappend l "$k:[string length $v]" }
puts [llength [lsort $l]]
EOF
echo "exec sqlite3 :memory: <'$out/sq.sql'" >"$out/sqlite.sh"
echo "exec jq '[.[] | select(.a > 5) | .b] | length' '$out/big.json'" >"$out/jq.sh"
cat >"$out/t.pl" <<'EOF'
my %h;
while (<>) { $h{$_}++ for split; }
my @k = sort { $h{$b} <=> $h{$a} || $a cmp $b } keys %h;
print scalar(@k), " $k[0]\n";
EOF
echo "exec perl '$out/t.pl' '$out/words.txt'" >"$out/perl.sh"
echo "exec mawk '{ for (i = 1; i <= NF; i++) c[\$i]++ } END { n = 0; for (k in c) n++; print n }' '$out/words.txt'" >"$out/mawk.sh"
echo 'objdump -d "$(command -v git)" | wc -c' >"$out/objdump.sh"
echo "echo 'scale = 2000; 4 * a(1)' | bc -l | tail -1" >"$out/bc.sh"
git_first=$(git -C "$src" rev-list --reverse HEAD 2>/dev/null | sed -n 600p)
# Whether workload @1 can run here (a real program may be missing); says why not.
can_run() {
	case $1 in
	python) [ -x /usr/bin/python3.11 ] || { echo "note: no python3.11: python left out"; return 1; } ;;
	sqlite) command -v sqlite3 >/dev/null || { echo "note: no sqlite3: sqlite left out"; return 1; } ;;
	tcl) command -v tclsh >/dev/null || { echo "note: no tclsh: tcl left out"; return 1; } ;;
	git)
		[ -n "$git_first" ] ||
			{ echo "note: $src is not a git clone of 600 commits or more: git left out"; return 1; } ;;
	jq)
		command -v jq >/dev/null && command -v python3 >/dev/null ||
			{ echo "note: no jq, or no python3 to make its input: jq left out"; return 1; }
		[ -f "$out/big.json" ] || python3 -c '
import json, random, sys
random.seed(1)
json.dump([{"a": random.randint(0, 10), "b": "x" * random.randint(1, 40),
            "c": [random.random() for _ in range(random.randint(0, 8))],
            "d": {"k%d" % i: i for i in range(random.randint(0, 5))}} for _ in range(150000)],
          open(sys.argv[1], "w"))' "$out/big.json" ;;
	perl | mawk)
		command -v "$1" >/dev/null && command -v python3 >/dev/null ||
			{ echo "note: no $1, or no python3 to make its input: $1 left out"; return 1; }
		[ -f "$out/words.txt" ] || python3 -c '
import random, sys
random.seed(1)
w = ["".join(random.choice("abcdefghijklmnop") for _ in range(random.randint(3, 10))) for _ in range(50000)]
with open(sys.argv[1], "w") as f:
    for _ in range(330000):
        f.write(" ".join(random.choice(w) for _ in range(8)) + "\n")' "$out/words.txt" ;;
	objdump) command -v objdump >/dev/null && command -v git >/dev/null ||
		{ echo "note: no objdump or no git to disassemble: objdump left out"; return 1; } ;;
	bc) command -v bc >/dev/null || { echo "note: no bc: bc left out"; return 1; } ;;
	esac
}
cmd_of() {
	case $1 in
	gcc) echo "sh $out/gcc.sh" ;;
	python) echo "/usr/bin/python3.11 $out/py.py" ;;
	sqlite) echo "sh $out/sqlite.sh" ;;
	git) echo "git -C $src log -p $git_first" ;;
	jq) echo "sh $out/jq.sh" ;;
	tcl) echo "tclsh $out/t.tcl" ;;
	perl | mawk | objdump | bc) echo "sh $out/$1.sh" ;;
	*) echo "$out/alloc-bench $1" ;;
	esac
}

# One run of round $r: "LABEL workload seconds peak_kib round=R [key=value...]" into
# $out/runs, LABEL being the configuration (an allocator, or memreg+profile), the
# key=value pairs alloc-bench's lines of them alone (a real program's output may hold
# such text: git log -p of this script put 85 KB of it on each line). A failed run writes
# no line there (it used to leave the last line to be relabelled as the next
# configuration's): it is counted in $out/failed, named at the end, and returns 1.
run_one() {
	label=$1 a=$2 w=$3
	shift 3
	if [ "$a" = glibc ]; then pre=NO_PRELOAD; else pre=LD_PRELOAD; fi
	# lifetimes: 16 MiB windows (the workload's), so memreg's regions are those.
	case $w in lifetimes) set -- MEMREG_REGION_SIZE=16M "$@" ;; esac
	choose_cpu "$w"
	# shellcheck disable=SC2046
	if ! ${RUN_CPU:+taskset -c "$RUN_CPU"} env "$pre=$(link_of "$a")" "$@" /usr/bin/time -f "TIME %e %M" $(cmd_of "$w") >"$out/o" 2>"$out/e"; then
		echo "alloc-bench: $label $w failed:" >&2
		tail -3 "$out/e" >&2
		echo "$label $w" >>"$out/failed"
		return 1
	fi
	set -- $(grep '^TIME ' "$out/e")
	echo "$label $w $2 $3 round=$r${RUN_CPU:+ cpu=$RUN_CPU}${RUN_SPIN:+ spin_ms=$RUN_SPIN} $(grep -E '^[a-z_]+=[0-9.]+( [a-z_]+=[0-9.]+)*$' "$out/o" |
		tr '\n' ' ')" >>"$out/runs"
}

# A site profile for packing/hotset from memreg's own site map: site_a (long-lived
# in packing, hot in hotset) and site_b, found by the functions holding their offsets.
make_profile() {
	w=$1 class_a=$2 class_b=$3
	LD_PRELOAD=$MEMREG MEMREG_SITE_MAP=$out/map.$w "$out/alloc-bench" "$w" >/dev/null || return
	nm -n "$out/alloc-bench" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' >"$out/syms"
	echo "memreg-profile 1" >"$out/profile.$w"
	awk -v a="$class_a" -v b="$class_b" -v syms="$out/syms" '
		function hex(s,  i, v, c) { s = tolower(s); sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
			return v }
		BEGIN { while ((getline l < syms) > 0) { split(l, f, " "); n++; addr[n] = hex(f[1]); name[n] = f[2] } }
		$1 == "site" && $5 == "(main" {
			off = hex($4); fn = ""
			for (i = 1; i <= n; i++) if (addr[i] <= off) fn = name[i]
			if (fn == "site_a") print $3, $4, a, "site_a"
			if (fn == "site_b") print $3, $4, b, "site_b"
		}' "$out/map.$w" >>"$out/profile.$w"
}

# The allocators in round @1's order. A run's time depends on which one ran before
# it: on the VM of 2026-12-02, frag under memreg took 2.02 s after glibc and 1.50 s
# after memreg, glibc 1.66-1.75 s after glibc and 1.50 after memreg (medians of 7-9
# interleaved rounds; what the run before freed is still backed by the host for a
# while). In one fixed order memreg always followed glibc, and a rotation keeps who
# follows whom. So round r takes every s-th allocator from the r-th: s runs through
# the steps prime to their count, and each allocator follows each of the others in
# turn (with 5: memreg after glibc, tcmalloc, mimalloc, jemalloc, ...).
ordered() {
	r=$1
	shift
	echo "$@" | awk -v r="$r" '
		function gcd(a, b) { return b ? gcd(b, a % b) : a }
		{ n = NF; ns = 0
		  for (s = 1; s < n || s == 1; s++) if (gcd(s, n) == 1) step[ns++] = s
		  s = step[(r - 1) % ns]; line = ""
		  for (i = 0; i < n; i++) line = line (i ? " " : "") $((r - 1 + i * s) % n + 1)
		  print line }'
}

for w in $WORKLOADS; do
	can_run "$w" || continue
	echo "running $w ($RUNS rounds x $(echo $ALLOCS | wc -w) allocators)..." >&2
	for r in $(seq "$RUNS"); do
		for a in $(ordered "$r" $ALLOCS); do
			run_one "$a" "$a" "$w"
		done
	done
	case $w in
	packing | hotset)
		if [ $w = packing ]; then make_profile packing cold normal; else make_profile hotset hot cold; fi
		for r in $(seq "$RUNS"); do
			run_one memreg+profile memreg "$w" MEMREG_PROFILE="$out/profile.$w"
		done
		;;
	esac
done
cp "$out/runs" "${ALLOC_BENCH_SAVE:-/dev/null}" 2>/dev/null
[ -f "$out/runs" ] || { echo "alloc-bench: no run succeeded" >&2; exit 1; }

# ---- tables ----
awk -v allocs="$ALLOCS" -v workloads="$WORKLOADS" '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	key = $1 SUBSEP $2
	t[key] = t[key] " " $3; m[key] = m[key] " " $4
	for (i = 5; i <= NF; i++) { split($i, kv, "="); x[key, kv[1]] = x[key, kv[1]] " " kv[2] }
	seen[$1] = 1
}
END {
	na = split(allocs, A, " "); nw = split(workloads, W, " ")
	for (pass = 1; pass <= 2; pass++) {
		if (pass == 1) printf "\nTime (median of runs, seconds) and the ratio memreg / each allocator\n"
		else printf "\nPeak RSS (median of runs, MiB) and the ratio memreg / each allocator\n"
		printf "%-11s", "workload"
		for (i = 1; i <= na; i++) printf " %9s", A[i]
		for (i = 1; i <= na; i++) if (A[i] != "memreg") printf " %10s", "/" A[i]
		printf "\n"
		for (k = 1; k <= nw; k++) {
			w = W[k]; if (!((("memreg") SUBSEP w) in t)) continue
			printf "%-11s", w
			for (i = 1; i <= na; i++) {
				key = A[i] SUBSEP w
				v[i] = (key in t) ? (pass == 1 ? median(t[key]) : median(m[key]) / 1024) : 0
				printf(pass == 1 ? " %9.2f" : " %9.1f", v[i])
				if (A[i] == "memreg") me = v[i]
			}
			for (i = 1; i <= na; i++) if (A[i] != "memreg") {
				r = v[i] > 0 && me > 0 ? me / v[i] : 0
				printf " %10.2f", r
				if (r > 0) { lg[pass, A[i]] += log(r); cnt[pass, A[i]]++ }
			}
			printf "\n"
		}
		printf "%-11s", "geomean"
		for (i = 1; i <= na; i++) printf " %9s", ""
		for (i = 1; i <= na; i++) if (A[i] != "memreg")
			printf " %10.2f", cnt[pass, A[i]] ? exp(lg[pass, A[i]] / cnt[pass, A[i]]) : 0
		printf "\n"
	}
	printf "\nFragmentation: 2 GiB in mixed sizes, 90%% freed at random: resident after (MiB)\n"
	for (i = 1; i <= na; i++) { key = A[i] SUBSEP "frag"; if ((key, "rss_after_bytes") in x) printf "  %-16s %8.0f\n", A[i], median(x[key, "rss_after_bytes"]) / 1048576 }
	printf "\nPacking by site: 64 MiB windows of virtual address space holding live long-lived data (limit = ceil(live / 64 MiB)), resident after\n"
	n2 = na; A[++n2] = "memreg+profile"
	for (i = 1; i <= n2; i++) { key = A[i] SUBSEP "packing"; if ((key, "regions_with_live") in x)
		printf "  %-16s regions %4d  limit %d  rss %6.0f MiB\n", A[i], median(x[key, "regions_with_live"]), median(x[key, "region_limit"]), median(x[key, "rss_after_bytes"]) / 1048576 }
	printf "\nFree regions after churn (lifetimes: random lifetimes, no profile; 16 MiB windows of virtual address space, memreg with 16 MiB regions):\n"
	printf "  windows touched during the run, those holding live bytes at the end, free = (touched - live) / touched; goal >= 60%%\n"
	for (i = 1; i <= na; i++) { key = A[i] SUBSEP "lifetimes"; if ((key, "lt_free_pct") in x)
		printf "  %-16s touched %4d  live %4d  free %5.1f%%  (peak live %4.0f MiB, live at end %3.0f MiB)\n", A[i], median(x[key, "lt_touched"]), median(x[key, "lt_live_regions"]), median(x[key, "lt_free_pct"]), median(x[key, "lt_peak_bytes"]) / 1048576, median(x[key, "lt_live_bytes"]) / 1048576 }
	printf "\nHot-set inflation: pages holding hot objects / (hot bytes / 4 KiB); goal about 1\n"
	for (i = 1; i <= n2; i++) { key = A[i] SUBSEP "hotset"; if ((key, "inflation") in x)
		printf "  %-16s %6.2f\n", A[i], median(x[key, "inflation"]) }
}' "$out/runs"
echo
echo "runs per cell: $RUNS; machine: $(nproc) CPUs, shared with other jobs (numbers are noisy)"
if [ "$CPU" != none ]; then
	echo "CPU speeds at the end (alloc-bench spin, ms): $(cpu_speeds)"
	[ "$CPU" = fastest ] && awk '$6 ~ /^cpu=/ { n[$6]++ } END { printf "one-thread runs by CPU:"; for (c in n) printf " %s %d", c, n[c]; printf "\n" }' "$out/runs"
fi
# The goals of docs/allocator.md, over the default list's workloads that ran
# (bench/alloc-goals; by hand on a saved run: BUILDDIR/bench/alloc-goals --workloads
# "LIST" FILE).
ran_default=$(for w in $DEFAULT; do case " $WORKLOADS " in *" $w "*) echo "$w" ;; esac; done)
if [ -z "$ran_default" ]; then
	:
elif [ -x "$build/bench/alloc-goals" ]; then
	echo
	"$build/bench/alloc-goals" --workloads "$DEFAULT" "$out/runs"
else
	echo "note: $build/bench/alloc-goals not built: the goals are not printed"
fi
[ -f "$out/failed" ] && { echo "FAILED runs (left out of the medians):"; sort "$out/failed" | uniq -c | sed 's/^/  /'; }
[ -f "$out/profile.packing" ] && { echo "profile used for packing:"; sed 's/^/  /' "$out/profile.packing"; }
[ -f "$out/profile.hotset" ] && { echo "profile used for hotset:"; sed 's/^/  /' "$out/profile.hotset"; }
exit 0
