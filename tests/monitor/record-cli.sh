#!/bin/sh
# memregctl record/report from the command line: a recording stopped by SIGINT
# leaves a valid file; a file cut mid-chunk still reads (torn tail dropped); bad
# files give one line naming the file and exit 1; heatmaps come out as PNG, SVG
# and text; report regions joins a physical record with a fixture's region map.
set -u
ctl=$top_builddir/tools/memregctl
gen=$top_builddir/monitor/memreg-accessgen
tmp=$(mktemp -d /tmp/mr-record-cli-XXXXXX)
rpid=
trap '[ -z "$rpid" ] || kill $rpid 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$top_srcdir/tests/monitor/wait-lib.sh"

# 1. SIGINT ends the recording; the file is valid and says process-scoped. The
# interrupt comes once the record being written (FILE.part-*, valid at every moment)
# holds 5 snapshots, however long they took: at most 120 s, and as long for the record
# to end after it. The generator loops until the record ends it, so only the signal
# can end the record.
"$ctl" record -b refs -a 20000,100000,1000000 -o "$tmp/int.rec" -- \
	"$gen" -t 0.1 -l 1000 "$top_srcdir/monitor/configs/zigzag" 2>"$tmp/int.err" &
rpid=$!
snaps() { "$ctl" report raw "$1" 2>/dev/null | grep -c '^snapshot '; }
five_snaps() { [ "$(snaps "$tmp"/int.rec.part-*)" -ge 5 ]; }
wait_until "5 snapshots in the record" $rpid "$tmp/int.err" five_snaps
kill -INT $rpid
wait_gone $rpid "$tmp/int.err" record
wait $rpid || { rc=$?; rpid=; cat "$tmp/int.err"; fail "record exited $rc after SIGINT"; }
rpid=
grep -q "stopped by a signal" "$tmp/int.err" || { cat "$tmp/int.err"; fail "no stop message"; }
"$ctl" report wss "$tmp/int.rec" >"$tmp/wss.txt" || fail "interrupted record unreadable"
grep -q "process-scoped (pid" "$tmp/wss.txt" || fail "report does not say process-scoped"
n=$(snaps "$tmp/int.rec")
[ "$n" -ge 5 ] || fail "only $n snapshots in the record after SIGINT, 5 before it"

# 2. cut inside the last chunk: still readable, with a warning, one snapshot fewer
size=$(wc -c <"$tmp/int.rec")
head -c $((size - 10)) "$tmp/int.rec" >"$tmp/cut.rec"
"$ctl" report raw "$tmp/cut.rec" >"$tmp/cut.txt" 2>"$tmp/cut.err" || fail "cut file rejected"
grep -q "ends inside a chunk" "$tmp/cut.err" || fail "no torn-chunk warning"
m=$(grep -c '^snapshot ' "$tmp/cut.txt")
[ "$m" -eq $((n - 1)) ] || fail "cut file has $m snapshots, want $((n - 1))"

# 3. bad files: one line naming the file, exit 1
printf 'not a record at all, just some text\n' >"$tmp/text.rec"
head -c 40 "$tmp/int.rec" >"$tmp/short.rec"
for f in text short missing; do
	"$ctl" report wss "$tmp/$f.rec" >/dev/null 2>"$tmp/bad.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$f: exit $rc, want 1"
	[ "$(wc -l <"$tmp/bad.err")" -eq 1 ] || { cat "$tmp/bad.err"; fail "$f: not one line"; }
	grep -q "$tmp/$f.rec" "$tmp/bad.err" || fail "$f: message does not name the file"
done

# 4. heatmaps
"$ctl" report heatmap -o "$tmp/h.png" "$tmp/int.rec" || fail "png"
[ "$(head -c 8 "$tmp/h.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "not a PNG signature"
"$ctl" report heatmap -f svg -o "$tmp/h.svg" "$tmp/int.rec" || fail "svg"
grep -q '^<svg ' "$tmp/h.svg" && grep -q '</svg>' "$tmp/h.svg" || fail "not an SVG"
"$ctl" report heatmap --width 30 --height 8 "$tmp/int.rec" >"$tmp/h.txt" || fail "term"
[ "$(grep -c '^|' "$tmp/h.txt")" -eq 8 ] || fail "terminal heatmap is not 8 rows"
grep -q '[@%#*+=]' "$tmp/h.txt" || fail "terminal heatmap shows no hot cell"

# 5. usage errors exit 2
"$ctl" record -b nosuch --pid 1 2>/dev/null; [ $? -eq 2 ] || fail "unknown backend not exit 2"
"$ctl" report nosuch "$tmp/int.rec" 2>/dev/null; [ $? -eq 2 ] || fail "unknown report not exit 2"
"$ctl" record --pid 1 -- true 2>/dev/null; [ $? -eq 2 ] || fail "--pid with a command not exit 2"

# 6. damon is never taken without --apply, and never writes on a fixture root
"$ctl" record -b damon --pid $$ -o "$tmp/d.rec" -d 1 2>"$tmp/d.err"
[ $? -eq 1 ] && grep -q -- "--apply" "$tmp/d.err" || { cat "$tmp/d.err"; fail "damon without --apply"; }
echo "PASS"
