#!/bin/bash
# Hansen's three scenarios (his review of the sorted-buddy series asked whether memory
# power management beats simply booting with less memory), in the VM lab:
#  (1) guests booted with fewer DIMMs, in steps;
#  (2) memreg on in a guest with one node, no DIMMs, no MPST (one region covering all
#      memory, the fixed source; the allocator at its largest region size; the
#      controller watching the workload): the cost of the code with nothing to manage;
#  (3) a guest with every DIMM, memreg evacuating the same amounts in steps.
# The workload is tests/lab/progs/mr-readbench: random 64 KiB reads of a data set on a
# virtio disk the host does not cache (scripts/lab --data), so its speed follows the
# memory the guest's page cache can use. One boot per (1) step, one for (2), one for (3).
# Writes DIR/hansen.txt (the table), DIR/hansen.json, DIR/hansen.svg (the plot).
set -euo pipefail
prog=hansen.sh
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MEMREG_BUILD:-$top/build} out=hansen-out secs=20 data=768M rounds=2 from_log=
scenarios=1,2,3 icount=3 boot_timeout=1500

usage() {
	cat <<EOF
usage: bench/hansen.sh [--build DIR] [--out DIR] [--seconds S] [--data SIZE] [--rounds N]
                      [--scenarios LIST] [--icount SHIFT|none] [--boot-timeout S]
Hansen's three scenarios in the VM lab (scripts/lab): five guest boots, each
serialised with the other lab users by the machine-wide lab lock.
  --build DIR    the memreg build tree (default: MEMREG_BUILD or ./build)
  --out DIR      where hansen.txt, hansen.json and hansen.svg go (default hansen-out)
  --seconds S    random reads per measurement, seconds (default 20)
  --data SIZE    the data set (default 768M; the guests have 512M of boot memory and
                 four 128M DIMMs)
  --rounds N     scenario 2's off/on rounds (default 2)
  --scenarios LIST  which scenarios to boot, comma-separated (default 1,2,3; e.g.
                 2 with more --rounds to rerun the overhead alone on a quiet machine)
  --icount SHIFT guest time counted in instructions (scripts/lab --icount; default
                 3): MB/s then follows the guest's work, not the host's load; none:
                 guest time is host time (TCG's default)
  --boot-timeout S  bound on each boot, seconds (default 1500; with --icount the
                 guest's vCPUs share one host thread: on a loaded host give more)
  --from-log LOG no boots: the table, JSON and plot from an earlier run's hansen.log
The lab is TCG emulation on a shared machine: compare the scenarios with each other,
never the MB/s with a real server's.
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) build=${2:?}; shift ;;
	--out) out=${2:?}; shift ;;
	--seconds) secs=${2:?}; shift ;;
	--data) data=${2:?}; shift ;;
	--rounds) rounds=${2:?}; shift ;;
	--scenarios) scenarios=${2:?}; shift ;;
	--icount) icount=${2:?}; shift ;;
	--boot-timeout) boot_timeout=${2:?}; shift ;;
	--from-log) from_log=${2:?}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "$prog: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "$prog: bad --seconds '$secs'" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$prog: bad --rounds '$rounds'" >&2; exit 2; }
[[ $scenarios =~ ^[123](,[123])*$ ]] || { echo "$prog: bad --scenarios '$scenarios' (a list of 1, 2, 3)" >&2; exit 2; }
want() { [[ ,$scenarios, == *,$1,* ]]; }
[[ $boot_timeout =~ ^[1-9][0-9]*$ ]] || { echo "$prog: bad --boot-timeout '$boot_timeout'" >&2; exit 2; }
[[ $icount =~ ^([0-9]|10|none)$ ]] || { echo "$prog: bad --icount '$icount' (0..10 or none)" >&2; exit 2; }
icount_args=()
[ "$icount" = none ] || icount_args=(--icount "$icount")
mkdir -p "$out"
log=$out/hansen.log
if [ -n "$from_log" ]; then
	[ -r "$from_log" ] || { echo "$prog: --from-log $from_log: not readable" >&2; exit 1; }
	[ "$from_log" -ef "$log" ] || cp "$from_log" "$log"
else
[ -x "$build/tools/memregctl" ] || { echo "$prog: no memreg build at $build (--build)" >&2; exit 1; }
echo "hansen-config icount=$icount" >"$log"
guest=$(cat "$top/bench/hansen-guest.sh")

# boot ARGS... -- GUEST-ARGS...: one lab boot running the guest script; its lines
# appended to the log.
boot() {
	local largs=() t0
	while [ "$1" != -- ]; do largs+=("$1"); shift; done
	shift
	t0=$SECONDS
	echo "$prog: boot ${largs[*]}: $*" >&2
	flock "${TMPDIR:-/tmp}/memreg-lab-boot.lock" "$top/scripts/lab" --build "$build" \
		--timeout "$boot_timeout" --data "$data" --dimm-size 128M --node-size 256M "${icount_args[@]}" "${largs[@]}" \
		-- sh -c "$guest" hansen-guest "$secs" "$@" | tee -a "$log" >&2
	echo "$prog: boot done in $((SECONDS - t0)) s" >&2
}

# (1) fewer DIMMs: 2, 1, 0 per node on two nodes (4, 2, 0 DIMMs).
if want 1; then
	for d in 2 1 0; do
		boot --nodes 2 --dimms "$d" -- boot "dimms=$((2 * d))"
	done
fi
# (3) every DIMM, evacuating 256M (two DIMMs) twice.
want 3 && boot --nodes 2 --dimms 2 -- evacuate 256M
# (2) one node holding the same memory as (3) before it evacuates, no DIMM, no MPST.
want 2 && boot --nodes 1 --node-size 1024M --dimms 0 --no-mpst -- overhead "$rounds"
fi

# The table, the JSON and the plot, from the guests' lines.
awk -v data="" -v secs="$secs" -v json="$out/hansen.json" -v svg="$out/hansen.svg" '
function kv(s, k,   m) { if (match(s, k "=[^ ]*")) return substr(s, RSTART + length(k) + 1, RLENGTH - length(k) - 1); return "" }
function median(v, n,   a, i, j, t) {
	for (i = 1; i <= n; i++) a[i] = v[i]	# a sorted copy: the runs keep their order
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^hansen scenario=/ {
	if (data == "") data = sprintf("%.0f MiB", kv($0, "dataset_bytes") / 1048576)
	s = kv($0, "scenario"); l = kv($0, "label"); mib = kv($0, "memtotal_kib") / 1024; mb = kv($0, "MBps") + 0
	if (s == 2) { if (l == "off") off[++noff] = mb; else on[++non] = mb; next }
	n[s]++; lab[s, n[s]] = l; mem[s, n[s]] = mib; rate[s, n[s]] = mb; hit[s, n[s]] = kv($0, "hit_pct") + 0
}
/^hansen-evacuate / { ev[kv($0, "step")] = $0 }
/^hansen-config / { icount = kv($0, "icount") }
END {
	printf "Hansen'"'"'s scenarios: random 64 KiB reads of a %s data set on a disk the host does\n", data
	printf "not cache, %s s per measurement, MB/s (higher is better) and the reads the page\n", secs
	printf "cache served (mincore before each read), VM lab under TCG%s\n\n", icount != "" && icount != "none" ? ", guest time counted in instructions (icount shift " icount ")" : ""
	printf "%-44s %12s %10s %8s\n", "scenario", "MemTotal MiB", "MB/s", "hits %"
	for (i = 1; i <= n[1]; i++)
		printf "%-44s %12.0f %10.2f %8.1f\n", "(1) booted with " substr(lab[1, i], 7) " DIMMs", mem[1, i], rate[1, i], hit[1, i]
	for (i = 1; i <= n[3]; i++)
		printf "%-44s %12.0f %10.2f %8.1f\n", "(3) all DIMMs, evacuation steps done: " substr(lab[3, i], 11), mem[3, i], rate[3, i], hit[3, i]
	if (noff && non) {
		moff = median(off, noff); mon = median(on, non)
		printf "%-44s %12s %10.2f\n", "(2) one node, memreg off (median of " noff ")", "", moff
		printf "%-44s %12s %10.2f\n", "(2) one node, memreg on (median of " non ")", "", mon
		printf "\n(2) overhead of memreg with nothing to manage: %+.1f%% MB/s\n", (mon / moff - 1) * 100
		# Round by round (off then on, back to back): the load of a shared machine
		# drifts over minutes, so the pair of one round saw nearly the same load; the
		# spread of the pairs says how far the medians above can be trusted.
		np = noff < non ? noff : non
		line = ""
		for (i = 1; i <= np; i++) { pr[i] = (on[i] / off[i] - 1) * 100; line = line sprintf("%s%+.1f%%", i > 1 ? ", " : "", pr[i]) }
		printf "(2) each round, on against its own off: %s (median %+.1f%%)\n", line, median(pr, np)
	}
	printf "{\"data\":\"%s\",\"seconds\":%s,\"runs\":[", data, secs > json
	sep = ""
	for (s = 1; s <= 3; s += 2) for (i = 1; i <= n[s]; i++) {
		printf "%s{\"scenario\":%d,\"label\":\"%s\",\"memtotal_mib\":%.0f,\"MBps\":%s,\"hit_pct\":%s}", sep, s, lab[s, i], mem[s, i], rate[s, i], hit[s, i] > json; sep = ","
	}
	for (i = 1; i <= noff; i++) { printf "%s{\"scenario\":2,\"label\":\"off\",\"MBps\":%s}", sep, off[i] > json; sep = "," }
	for (i = 1; i <= non; i++) { printf "%s{\"scenario\":2,\"label\":\"on\",\"MBps\":%s}", sep, on[i] > json; sep = "," }
	printf "]}\n" > json
	# The plot: the reads the page cache served against MemTotal, (1) and (3) as two
	# lines: what memory buys, which the load of a shared machine does not move the way
	# it moves MB/s (the table has both).
	xmin = 1e9; xmax = 0
	for (s = 1; s <= 3; s += 2) for (i = 1; i <= n[s]; i++) {
		if (mem[s, i] < xmin) xmin = mem[s, i]; if (mem[s, i] > xmax) xmax = mem[s, i]
	}
	if (xmax <= xmin) xmax = xmin + 1
	W = 560; H = 320; L = 60; B = 260; R = 520; T = 30
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H > svg
	printf "<text x=\"%d\" y=\"18\">Hansen scenarios: page-cache hits against guest memory (VM lab)</text>\n", L > svg
	printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, B, R, B, L, B, L, T > svg
	printf "<text x=\"%d\" y=\"%d\">%.0f MiB</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.0f MiB</text>\n", L, B + 16, xmin, R, B + 16, xmax > svg
	printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">100</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", L - 4, T + 4, L - 4, B > svg
	printf "<text x=\"%d\" y=\"%d\">MemTotal</text><text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\">reads served by the page cache, %%</text>\n", (L + R) / 2, B + 32, B - 10, B - 10 > svg
	col[1] = "#1f77b4"; col[3] = "#d62728"
	name[1] = "(1) booted with fewer DIMMs"; name[3] = "(3) memreg evacuating"
	for (s = 1; s <= 3; s += 2) {
		pts = ""
		for (i = 1; i <= n[s]; i++) {
			x = L + (mem[s, i] - xmin) / (xmax - xmin) * (R - L); y = B - hit[s, i] / 100 * (B - T)
			pts = pts sprintf("%.1f,%.1f ", x, y)
			printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", x, y, col[s] > svg
		}
		printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", col[s], pts > svg
		printf "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", L + 10, B - 40 + (s == 3) * 16, col[s], name[s] > svg
	}
	if (noff && non)
		printf "<text x=\"%d\" y=\"%d\">(2) one node, memreg on vs off: %+.1f%% MB/s</text>\n", L + 10, B - 8, (mon / moff - 1) * 100 > svg
	printf "</svg>\n" > svg
}' "$log" | tee "$out/hansen.txt"
echo "$prog: $out/hansen.txt, $out/hansen.json, $out/hansen.svg" >&2
