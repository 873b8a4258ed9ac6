#!/bin/sh
# Where memregctl energy's report goes: standard error by default, -o FILE on request,
# never standard output, which is COMMAND's alone; the JSON report parses from either
# place, and its regions add up to its one total.
. "$top_srcdir/tests/power/lib.sh"
command -v python3 > /dev/null || { echo "SKIP: no python3 to parse the JSON report"; exit 77; }
M=$(fixture energy-intel-2s)
echo hello > "$tmp/expected"

# parses WHAT FILE: FILE is one JSON document.
parses() {
	if python3 -m json.tool "$2" > /dev/null 2> "$tmp/parse.err"; then
		pass "$1: parses as JSON"
	else
		fail "$1: not JSON: $(cat "$tmp/parse.err")"
		cat "$2"
	fi
}
# same WHAT EXPECTED ACTUAL: files with the same bytes.
same() {
	if cmp -s "$2" "$3"; then pass "$1"; else fail "$1: differs from $2:"; cat "$3"; fi
}

# Text report on stderr: stdout is exactly what `echo hello` writes.
"$MEMREGCTL" energy --root "$M" -- echo hello > "$tmp/stdout" 2> "$tmp/stderr"
expect_eq "text: exit" 0 $?
same "text: stdout is the command's alone" "$tmp/expected" "$tmp/stdout"
expect_grep "text: report on stderr" "^command   echo ... exit 0$" "$tmp/stderr"

# JSON on stderr: stdout untouched, stderr one JSON document.
"$MEMREGCTL" energy --root "$M" --json -- echo hello > "$tmp/stdout" 2> "$tmp/stderr"
expect_eq "json: exit" 0 $?
same "json: stdout is the command's alone" "$tmp/expected" "$tmp/stdout"
parses "json on stderr" "$tmp/stderr"

# -o FILE: the report there, nothing of it on stdout or stderr.
"$MEMREGCTL" energy --root "$M" --json -o "$tmp/report.json" -- echo hello > "$tmp/stdout" 2> "$tmp/stderr"
expect_eq "json -o: exit" 0 $?
same "json -o: stdout is the command's alone" "$tmp/expected" "$tmp/stdout"
expect_eq "json -o: stderr empty" "" "$(cat "$tmp/stderr")"
parses "json -o FILE" "$tmp/report.json"
"$MEMREGCTL" energy --root "$M" --output "$tmp/report.txt" -- echo hello > "$tmp/stdout" 2> "$tmp/stderr"
same "text --output: stdout is the command's alone" "$tmp/expected" "$tmp/stdout"
expect_eq "text --output: stderr empty" "" "$(cat "$tmp/stderr")"
expect_grep "text --output: the report in FILE" "^command   echo ... exit 0$" "$tmp/report.txt"
# A shorter report replaces a longer one whole (the file is emptied first).
"$MEMREGCTL" energy --root "$M" --json -o "$tmp/report.txt" -- true
parses "-o over a longer file" "$tmp/report.txt"
# A run that fails before its report leaves the previous report as it was.
cp "$tmp/report.txt" "$tmp/before"
"$MEMREGCTL" energy --root "$M" --source bogus -o "$tmp/report.txt" -- true 2> /dev/null
expect_eq "-o, failed run: exit" 1 $?
same "-o, failed run: previous report kept" "$tmp/before" "$tmp/report.txt"
"$MEMREGCTL" energy --root "$M" -o "$tmp/no/such/dir/r" -- touch "$tmp/ran" 2> "$tmp/stderr"
expect_eq "-o in a missing directory: exit" 1 $?
expect_eq "-o in a missing directory: message" \
	"memregctl: $tmp/no/such/dir/r: No such file or directory" "$(cat "$tmp/stderr")"
if [ -e "$tmp/ran" ]; then fail "-o in a missing directory: the command ran"; else pass "-o in a missing directory: the command did not run"; fi

# --sample has no command: its lines go to stdout, or to -o FILE.
"$MEMREGCTL" energy --root "$M" --sample --interval 10 --count 2 > "$tmp/stdout" 2> "$tmp/stderr"
expect_eq "sample: lines on stdout" 3 "$(wc -l < "$tmp/stdout" | tr -d ' ')"
"$MEMREGCTL" energy --root "$M" --sample --interval 10 --count 2 -o "$tmp/sample" > "$tmp/stdout"
expect_eq "sample -o: lines in FILE" 3 "$(wc -l < "$tmp/sample" | tr -d ' ')"
expect_eq "sample -o: stdout empty" "" "$(cat "$tmp/stdout")"

# One total: the regions (plus what is not attributed, 0 here) add up to it in JSON
# as in text, calibrated to RAPL (powercap, socket 0 measures 1 J) ...
PC=$M/sys/class/powercap
cat > "$tmp/res.json" <<'JSON'
{ "scope": "physical", "interval_us": 100000, "source": "fixture",
  "regions": [ { "id": 0, "intervals": 10, "idle_intervals": 5 },
               { "id": 1, "intervals": 10, "idle_intervals": 0 } ] }
JSON
"$MEMREGCTL" energy --root "$M" --residency "$tmp/res.json" --json -- sh -c "
	echo 4600000 > '$PC/intel-rapl:0:0/energy_uj'" 2> "$tmp/measured.json"
expect_json_adds_up "measured, calibrated" "$tmp/measured.json"
# ... and modelled, from a physical record on the MPST fixture: the model source's
# total is the regions' energy with their residency, not every region active.
MK=$top_builddir/tests/monitor/mk-phys-record
MP=$top_builddir/tests/fixtures/server-2s-mpst
if [ -x "$MK" ] && [ -f "$MP/sys/firmware/acpi/tables/MPST" ]; then
	"$MK" "$tmp/phys.rec" || fail "mk-phys-record"
	"$MEMREGCTL" energy --root "$MP" --record "$tmp/phys.rec" --json -o "$tmp/model.json" -- sleep 0.1
	expect_json_adds_up "modelled, physical record" "$tmp/model.json"
	"$MEMREGCTL" energy --root "$MP" --record "$tmp/phys.rec" -- sleep 0.1 2> "$tmp/model.txt"
	expect_rows_add_up "modelled, physical record, text" "$tmp/model.txt"
else
	fail "no $MK or compiled $MP: build the test helpers and fixtures (make check builds them)"
fi
finish
