#!/bin/sh
# memregctl alloc-stats: reads the live export of a running process (JSON fields
# checked) and of its forked child (its own), and rejects a missing, foreign or truncated stats file with exit 1.
. "$top_srcdir/tests/alloc/preload.sh"
CTL="$top_builddir/tools/memregctl"
tmp=$(mktemp -d) || exit 99
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT

# A process that allocates 40 MiB, one huge block, says so by the file "go.ready",
# then waits for the file "go".
cat >"$tmp/hold.sh" <<'SH'
i=0; x=""
while [ $i -lt 20 ]; do x="$x$(printf '%01000d' 0)"; i=$((i + 1)); done
touch "$1.ready"
while [ ! -f "$1" ]; do sleep 0.1; done
SH
# wait_ready GO: until the process told to wait for GO has made GO.ready (not a fixed
# sleep: a loaded machine is slow to start it), at most 20 s; false if it has not.
wait_ready() {
	n=0
	while [ ! -f "$1.ready" ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
	[ -f "$1.ready" ]
}
LD_PRELOAD="$MEMREG_LIB" MEMREG_EXPORT_STATS=1 sh "$tmp/hold.sh" "$tmp/go" &
pid=$!
wait_ready "$tmp/go" || fail "the holding process did not get ready in 20 s"
"$CTL" alloc-stats --json $pid >"$tmp/out.json" || fail "alloc-stats --json exited $?"
"$CTL" alloc-stats $pid >"$tmp/out.txt" || fail "alloc-stats exited $?"
for fd in /proc/$pid/fd/*; do
	case "$(readlink "$fd")" in "/memfd:memreg-alloc.$pid (deleted)") cp "$fd" "$tmp/good.bin" ;; esac
done
[ -s "$tmp/good.bin" ] || fail "no memfd memreg-alloc.$pid in /proc/$pid/fd"
grep -Eqx "pid $pid: 4096 regions of 64 MiB \(windows of its virtual address space\), 1 live, [0-9]+ empty, [0-9]+ touched" \
	"$tmp/out.txt" || fail "table header: $(head -1 "$tmp/out.txt")"
for field in '"version":2' "\"pid\":$pid" '"region_bytes":67108864' '"regions_live":1' '"state":"live"'; do
	tr -d ' \n' <"$tmp/out.json" | grep -q "$field" || fail "JSON lacks $field"
done
touch "$tmp/go"
wait $pid
out=$("$CTL" alloc-stats $pid 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'no libmemreg stats' || fail "exited process: $rc $out"

# A process with one thread that forks (a subshell): the child exports under its
# own pid from its first page-heap change on, through the fork handlers' child
# side, which such a process registers only because the export is on.
cat >"$tmp/fork.sh" <<'SH'
(
	sh -c 'echo $PPID' >"$1.pid"
	i=0; x=""
	while [ $i -lt 40 ]; do x="$x$(printf '%01000d' 0)"; i=$((i + 1)); done
	touch "$1.ready"
	while [ ! -f "$1" ]; do sleep 0.1; done
) &
wait
SH
LD_PRELOAD="$MEMREG_LIB" MEMREG_EXPORT_STATS=1 sh "$tmp/fork.sh" "$tmp/go3" &
pid=$!
wait_ready "$tmp/go3"
child=$(cat "$tmp/go3.pid" 2>/dev/null)
if [ -z "$child" ] || [ ! -f "$tmp/go3.ready" ]; then
	fail "forked child: did not start (pid '$child')"
else
	names=$(for fd in /proc/$child/fd/*; do readlink "$fd"; done | grep memreg-alloc)
	[ "$names" = "/memfd:memreg-alloc.$child (deleted)" ] ||
		fail "forked child $child of $pid: its memfds are '$names', want its own only"
	"$CTL" alloc-stats --json "$child" | tr -d ' \n' | grep -q "\"pid\":$child," ||
		fail "forked child $child: alloc-stats does not report its own pid"
fi
touch "$tmp/go3"
wait $pid

# Under an RLIMIT_AS too small for the arena: the export says so (disabled, glibc's
# allocations counted) and the notice comes once on stderr.
(ulimit -v 98304 && LD_PRELOAD="$MEMREG_LIB" MEMREG_EXPORT_STATS=1 exec sh "$tmp/hold.sh" "$tmp/go2") \
	2>"$tmp/limited.err" &
pid=$!
wait_ready "$tmp/go2" || fail "the holding process under RLIMIT_AS did not get ready in 20 s"
"$CTL" alloc-stats --json $pid >"$tmp/limited.json" || fail "alloc-stats --json of a disabled arena exited $?"
"$CTL" alloc-stats $pid >"$tmp/limited.txt" || fail "alloc-stats of a disabled arena exited $?"
touch "$tmp/go2"
wait $pid
tr -d ' \n' <"$tmp/limited.json" | grep -q '"disabled":1' || fail "disabled arena: JSON lacks \"disabled\":1"
tr -d ' \n' <"$tmp/limited.json" | grep -q '"glibc_fallbacks":[1-9]' || fail "disabled arena: no glibc_fallbacks"
grep -qx 'libmemreg could not set up its arena: glibc served everything' "$tmp/limited.txt" ||
	fail "disabled arena: table says $(cat "$tmp/limited.txt")"
want="libmemreg: cannot reserve address space for the arena (RLIMIT_AS?): glibc's malloc serves what libmemreg cannot"
# Once per process: sh's and each `sleep` it runs (safety.sh checks one process).
[ "$(sort -u "$tmp/limited.err")" = "$want" ] || fail "disabled arena: stderr $(cat "$tmp/limited.err")"

# Bad input under a fixture root (/proc/4242/fd/3 -> the memfd's name): foreign,
# truncated, and a process without the export.
mkdir -p "$tmp/root/proc/4242/fd" "$tmp/root/proc/4243/fd"
echo data >"$tmp/junk"
ln -s "$tmp/junk" "$tmp/root/proc/4243/fd/0"
out=$("$CTL" alloc-stats --root "$tmp/root" 4243 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'no libmemreg stats' || fail "no export: $rc $out"
# Saved copies: good, foreign, truncated, missing.
cp "$tmp/good.bin" "$tmp/copy.bin" 2>/dev/null
"$CTL" alloc-stats --json --file "$tmp/good.bin" | tr -d ' \n' | grep -q '"regions":4096' ||
	fail "--file of a saved copy"
head -c 300 /dev/urandom >"$tmp/bad.bin"
out=$("$CTL" alloc-stats --file "$tmp/bad.bin" 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'bad.bin: not a libmemreg stats file' || fail "foreign file: $rc $out"
head -c 200 "$tmp/good.bin" >"$tmp/short.bin"
out=$("$CTL" alloc-stats --file "$tmp/short.bin" 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'short.bin: truncated' || fail "truncated file: $rc $out"
out=$("$CTL" alloc-stats --file "$tmp/none.bin" 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'none.bin: no such file' || fail "missing file: $rc $out"
out=$("$CTL" alloc-stats x 2>&1); rc=$?
[ $rc -eq 2 ] || fail "bad pid: exit $rc"
[ $status -eq 0 ] && echo "ok: alloc-stats"
exit $status
