# Shared by the energy fixture tests: a private copy of a fixture machine with its
# binary files generated, the memregctl under test, and checks.
set -u
: "${top_srcdir:?run from make check}" "${top_builddir:?run from make check}"
MEMREGCTL=$top_builddir/tools/memregctl
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mr-energy.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# fixture NAME: copy tests/fixtures/NAME to $tmp/NAME, generate its binaries, print the path.
fixture() {
	cp -R "$top_srcdir/tests/fixtures/$1" "$tmp/$1" || exit 99
	chmod -R u+w "$tmp/$1"
	sh "$top_srcdir/tests/power/mkfixtures.sh" "$tmp/$1" || exit 99
	echo "$tmp/$1"
}

pass() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1: expected '$2', got '$3'"; fi
}

# expect_grep WHAT PATTERN FILE
expect_grep() {
	if grep -q -- "$2" "$3"; then pass "$1"; else fail "$1: no '$2' in:"; cat "$3"; fi
}

# socket_j FILE SOCKET: the energy_J column of a socket line of the human output.
socket_j() { awk -v s="$2" '$1 == s && NF == 4 { print $3 }' "$1"; }
total_j() { awk '$1 == "total" { print $2 }' "$1"; }
# region_col FILE REGION COLUMN (1-based, in the region table)
region_col() { awk -v r="$2" -v c="$3" 'f && $1 == r { print $c } /^region / { f = 1 }' "$1"; }

# region_rows FILE: the rows of the region table (lines after its header that start
# with a region id), and the "not attributed to regions" line if there is one.
region_rows() {
	awk '/^per-region energy:/ { f = 0 }
		f && (/^[0-9]/ || /^not attributed to regions /) { print }
		/^region / { f = 1 }' "$1"
}

# expect_rows_add_up WHAT FILE [UNATTRIBUTED_J]: the text report's region rows
# (energy_J, column 10) and the energy not attributed to regions (its row's last
# column) add up to its one total, and that row says UNATTRIBUTED_J (default: no
# such row). Each figure is rounded to 1 uJ, so n rows may differ by n uJ.
expect_rows_add_up() {
	n=$(region_rows "$2" | grep -c '^[0-9]')
	sum=$(region_rows "$2" | awk '/^[0-9]/ { s += $10 } /^not attributed/ { s += $NF }
		END { printf "%.6f", s }')
	left=$(region_rows "$2" | awk '/^not attributed/ { print $NF }')
	tot=$(total_j "$2")
	if [ "$n" -gt 0 ] && [ -n "$tot" ] && [ "$left" = "${3:-}" ] &&
	   awk -v a="$sum" -v b="$tot" -v n="$n" \
		'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= n * 0.000001) }'; then
		pass "$1: $n region rows${left:+ and $left J not attributed} add up to the total $tot J"
	else
		fail "$1: $n region rows add up to $sum J (not attributed: '$left' J, want '${3:-}'), the total is '$tot' J:"
		cat "$2"
	fi
}

# expect_json_adds_up WHAT FILE [UNATTRIBUTED_UJ]: in a JSON report, the sockets and
# the regions plus model.unattributed_uj each add up to total.energy_uj, and
# unattributed_uj is UNATTRIBUTED_UJ (default 0). Needs python3.
expect_json_adds_up() {
	if msg=$(python3 - "$2" "${3:-0}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
total = r["total"]["energy_uj"]
sockets = sum(s["energy_uj"] for s in r["sockets"])
rows = sum(x["energy_uj"] for x in r["model"]["regions"])
left = r["model"]["unattributed_uj"]
tol = 1e-9 * abs(total) + 1e-3
print("%d regions %.3f uJ + not attributed %.3f uJ, sockets %.3f uJ, total %.3f uJ"
      % (len(r["model"]["regions"]), rows, left, sockets, total))
ok = (abs(rows + left - total) <= tol and abs(sockets - total) <= tol
      and abs(left - float(sys.argv[2])) <= tol and len(r["model"]["regions"]) > 0)
sys.exit(0 if ok else 1)
PY
	); then
		pass "$1: $msg"
	else
		fail "$1: $msg"
		cat "$2"
	fi
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed"
		exit 1
	fi
	exit 0
}
