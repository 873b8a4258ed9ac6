#!/bin/sh
# memregctl where on this machine, read-only: a PID or a name pattern (every match
# added up, as numastat -p), the totals rows, -z hiding regions that hold nothing.
# The checks recompute every total from the rows printed beside it.
set -u
b=${top_builddir:-.}
ctl=$b/tools/memregctl
tmp=$(mktemp -d)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# Two processes of a name no other process has: a copy of sleep.
cp "$(command -v sleep)" "$tmp/mrwhere$$"
"$tmp/mrwhere$$" 300 & p1=$!
"$tmp/mrwhere$$" 300 & p2=$!
trap 'kill $p1 $p2 2>/dev/null; rm -rf "$tmp"' EXIT
name=mrwhere$$
name=$(printf %.15s "$name")	# comm holds 15 characters
# Until both have exec'd (their comm is the shell's before), at most 10 s: a fixed
# sleep is too short on a loaded machine.
n=0
until [ "$(cat /proc/$p1/comm 2>/dev/null)" = "$name" ] &&
      [ "$(cat /proc/$p2/comm 2>/dev/null)" = "$name" ] || [ $n -ge 100 ]; do
	sleep 0.1
	n=$((n + 1))
done

# sum of the byte rows of one JSON document equals its total
check_json() {
	python3 - "$1" "$2" <<'PY' || fail "$3"
import json, sys
d = json.load(open(sys.argv[1]))
want = [int(p) for p in sys.argv[2].split()]
assert d["version"] == 2, d["version"]
assert d["pids"] == want, (d["pids"], want)
assert d["pid"] == want[0]
rows = sum(r["bytes"] for r in d["regions"]) + d["unplaced_bytes"]
assert rows == d["total_bytes"], (rows, d["total_bytes"])
assert sum(n["bytes"] for n in d["nodes"]) == d["total_bytes"]
assert d["total_bytes"] > 0
PY
}

"$ctl" where --json "$p1" >"$tmp/one.json" 2>"$tmp/err" || fail "where PID: $(cat "$tmp/err")"
check_json "$tmp/one.json" "$p1" "where --json PID: rows do not add up"
"$ctl" where --json "^$name\$" >"$tmp/two.json" 2>"$tmp/err" || fail "where PATTERN: $(cat "$tmp/err")"
check_json "$tmp/two.json" "$p1 $p2" "where --json PATTERN: not both processes, or rows do not add up"
python3 - "$tmp/one.json" "$tmp/two.json" <<'PY' || fail "two copies of one program should hold more than one"
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:])
assert two["total_bytes"] > one["total_bytes"], (one["total_bytes"], two["total_bytes"])
PY

# The table: a total row per section; -z leaves out exactly the zero rows.
"$ctl" where "$p1" >"$tmp/all.txt" || fail "where PID (table)"
"$ctl" where -z "$p1" >"$tmp/z.txt" || fail "where -z PID (table)"
grep -q '^  total ' "$tmp/all.txt" || fail "no total row: $(cat "$tmp/all.txt")"
all_rows=$(awk '/^ REGION/{s=1;next} s&&/^  total/{exit} s{n++} END{print n+0}' "$tmp/all.txt")
z_rows=$(awk '/^ REGION/{s=1;next} s&&/^  total/{exit} s{n++} END{print n+0}' "$tmp/z.txt")
zero_rows=$(python3 -c 'import json,sys; print(sum(1 for r in json.load(open(sys.argv[1]))["regions"] if r["bytes"] == 0))' "$tmp/one.json")
hidden=$(sed -n 's/^\([0-9]*\) regions\{0,1\} holding nothing not shown (-z)$/\1/p' "$tmp/z.txt")
[ "$zero_rows" -eq 0 ] || [ "${hidden:-0}" -eq "$zero_rows" ] ||
	fail "-z says ${hidden:-0} hidden, JSON has $zero_rows empty regions"
[ $((all_rows - z_rows)) -eq "$zero_rows" ] ||
	fail "-z hid $((all_rows - z_rows)) rows, JSON has $zero_rows empty regions"
grep -E '^ +[0-9]+ +[0-9-]+ +0 B$' "$tmp/z.txt" && fail "-z printed an empty region"

# Errors: one line each, usage 2, failure 1.
"$ctl" where 'no-such-process-xyz' >"$tmp/out" 2>&1; st=$?
[ $st -eq 1 ] && [ "$(cat "$tmp/out")" = "memregctl: no process matches 'no-such-process-xyz'" ] ||
	fail "no match: exit $st: $(cat "$tmp/out")"
"$ctl" where '(' >"$tmp/out" 2>&1; st=$?
[ $st -eq 2 ] && [ "$(head -n 1 "$tmp/out")" = "memregctl where: bad PATTERN '(': Unmatched ( or \\(" ] ||
	fail "bad pattern: exit $st: $(cat "$tmp/out")"
"$ctl" where 0 >"$tmp/out" 2>&1; st=$?
[ $st -eq 2 ] || fail "pid 0: exit $st: $(cat "$tmp/out")"

[ "$fails" -eq 0 ] && echo "PASS: where by PID and by pattern, totals and -z"
[ "$fails" -eq 0 ]
