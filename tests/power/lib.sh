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

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed"
		exit 1
	fi
	exit 0
}
