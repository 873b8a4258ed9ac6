#!/bin/sh
# Pages made resident, by program: the page faults of each program of a command list
# plus the pages it made resident with MADV_POPULATE_WRITE (the kernel counts no fault
# for those; libmemreg populates fresh slab pages that way), under glibc and under each
# preloaded library, medians of RUNS interleaved rounds. Counts, not times: they do not
# swing with the CPUs' speed, so a few runs compare libraries on a busy machine
# (docs/bench.md, "Pages made resident, by program").
#   bench/resident-pages.sh [-r RUNS] [-l NAME=LIB]... CMDFILE
#   bench/resident-pages.sh -s FILE
# Each line of CMDFILE is a shell command, run from the current directory with
# LD_PRELOAD=LIB (none for glibc; NAME and LIB without blanks); only the commands are
# preloaded, not perf or the loop around them. A program is known by its name (comm).
# -s counts one saved run instead: the output of `perf script -F comm,event,trace` of
# a `perf record -e page-faults -e syscalls:sys_enter_madvise -c 1`. Needs perf
# (Debian: linux-perf) and the tracepoints (root). Nothing here changes the system's
# state.
set -u
runs=3 libs= saved=
usage() { echo "usage: $0 [-r RUNS] [-l NAME=LIB]... CMDFILE | -s PERF_SCRIPT_FILE" >&2; exit 2; }
while getopts r:l:s:h o; do
	case $o in
	r) runs=$OPTARG ;;
	l) case $OPTARG in *=?*) libs="$libs $OPTARG" ;; *) usage ;; esac ;;
	s) saved=$OPTARG ;;
	h) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))

# perf script lines -> "comm pages" per program: a page-faults sample is a page, a
# MADV_POPULATE_WRITE (behavior 23) its length in pages.
count() {
	awk '
	function hex(s,   v, i) {
		s = tolower(s); sub(/^0x/, "", s); sub(/,$/, "", s); v = 0
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	$2 == "page-faults:" { n[$1]++; next }
	$2 == "syscalls:sys_enter_madvise:" {
		len = 0; adv = -1
		for (i = 3; i < NF; i++) {
			if ($i == "len_in:") len = hex($(i + 1))
			if ($i == "behavior:") adv = hex($(i + 1))
		}
		if (adv == 23) n[$1] += int((len + 4095) / 4096)
		next
	}
	END { for (c in n) print c, n[c] }'
}

if [ -n "$saved" ]; then
	[ -r "$saved" ] || { echo "$0: cannot read $saved" >&2; exit 1; }
	count <"$saved" | sort
	exit 0
fi
[ $# -eq 1 ] || usage
cmds=$1
[ -r "$cmds" ] || { echo "$0: cannot read $cmds" >&2; exit 1; }
case $runs in '' | *[!0-9]* | 0) echo "$0: -r wants a positive count" >&2; exit 2 ;; esac
command -v perf >/dev/null || { echo "$0: perf not found (Debian: apt-get install linux-perf)" >&2; exit 1; }
for nl in $libs; do
	[ -r "${nl#*=}" ] || { echo "$0: cannot read ${nl#*=}" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/mr-resident-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cmds=$(cd "$(dirname "$cmds")" && pwd)/$(basename "$cmds")
configs="glibc= $libs"
echo "# $(wc -l <"$cmds") commands from $cmds, $runs rounds; $(uname -r)" >&2
r=1
while [ "$r" -le "$runs" ]; do
	for nl in $configs; do
		name=${nl%%=*} lib=${nl#*=}
		printf 'round %s: %s\n' "$r" "$name" >&2
		MR_RP_PRELOAD=$lib perf record -q -o "$tmp/rec.data" -e page-faults \
			-e syscalls:sys_enter_madvise -c 1 -- sh -c '
			while IFS= read -r c; do
				LD_PRELOAD=$MR_RP_PRELOAD sh -c "$c" || exit 1
			done <"$1"' sh "$cmds" >"$tmp/out" 2>&1 ||
			{ echo "$0: a command failed under $name:" >&2; tail -5 "$tmp/out" >&2; exit 1; }
		perf script -i "$tmp/rec.data" -F comm,event,trace 2>/dev/null | count |
			sed "s/^/$name $r /" >>"$tmp/counts"
	done
	r=$((r + 1))
done

# Medians by configuration and program (a program missing from a run counts 0 there),
# programs by glibc's count, each library's difference against glibc.
names=$(for nl in $configs; do printf '%s ' "${nl%%=*}"; done)
awk -v names="$names" -v runs="$runs" '
function median(cfg, prog,   v, k, i, j, t) {
	k = 0
	for (i = 1; i <= runs; i++) v[++k] = ((cfg, prog, i) in c) ? c[cfg, prog, i] : 0
	for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
{ c[$1, $3, $2] = $4; prog[$3] = 1; tot[$1, $2] += $4 }
END {
	nn = split(names, nm, " ")
	printf "%-16s", "program"
	for (i = 1; i <= nn; i++) printf " %12s", nm[i]
	for (i = 2; i <= nn; i++) printf " %14s", nm[i] "-glibc"
	printf "\n"
	np = 0
	for (p in prog) { np++; pl[np] = p; g[p] = median("glibc", p) }
	for (i = 2; i <= np; i++) for (j = i; j > 1 && g[pl[j - 1]] < g[pl[j]]; j--) { t = pl[j]; pl[j] = pl[j - 1]; pl[j - 1] = t }
	for (k = 1; k <= np; k++) {
		p = pl[k]
		printf "%-16s", p
		for (i = 1; i <= nn; i++) printf " %12.0f", median(nm[i], p)
		for (i = 2; i <= nn; i++) printf " %+14.0f", median(nm[i], p) - g[p]
		printf "\n"
	}
	printf "%-16s", "all (median)"
	for (i = 1; i <= nn; i++) {
		for (r = 1; r <= runs; r++) c["all", "all", r] = tot[nm[i], r]
		m[i] = median("all", "all"); printf " %12.0f", m[i]
	}
	for (i = 2; i <= nn; i++) printf " %+13.2f%%", 100 * (m[i] - m[1]) / m[1]
	printf "\n"
}' "$tmp/counts"
