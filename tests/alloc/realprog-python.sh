#!/bin/sh
# Python's own regression tests under LD_PRELOAD=libmemreg.so, compared with a run
# without it: the same tests must pass. The set (docs/allocator.md): threading,
# subprocess, json, re, unicode, dict, set, list, mmap, gc. Debian's python3.11
# with libpython3.11-testsuite (not a python found on PATH).
. "$top_srcdir/tests/alloc/preload.sh"
PY=/usr/bin/python3.11
if [ ! -x "$PY" ] || [ ! -d /usr/lib/python3.11/test/libregrtest ]; then
	echo "SKIP: $PY or its test suite is missing (apt-get install python3.11 libpython3.11-testsuite)"
	exit 77
fi
TESTS="test_threading test_subprocess test_json test_re test_unicode test_dict test_set test_list test_mmap test_gc"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99

# The verdict of each test, one "name result" line a test, from regrtest's output.
verdicts() {
	sed -n 's/^\(test_[a-z_]*\) \(passed\|failed\|skipped\|crashed\).*/\1 \2/p;
		s/^0:[0-9:]* load avg: [0-9.]* \[ *[0-9]*\/[0-9]*\(\/[0-9]*\)*\] \(test_[a-z_]*\)\( failed\| crashed\| skipped\| passed\)\{0,1\}.*/\2\3/p' "$1" |
		awk '{ print $1, ($2 == "" ? "passed" : $2) }' | sort -u
}

# The suite checks its children's stderr, so the stats line (proof that libmemreg
# served the process) is asked of a separate probe only.
run_preloaded probe.err $PY -c 'import json; json.dumps(list(range(10000)))' || {
	echo "FAIL: python3.11 under libmemreg" >&2
	cat probe.err >&2
	exit 1
}
$PY -m test -j2 -v $TESTS >plain.out 2>&1
plain_rc=$?
LD_PRELOAD="$MEMREG_LIB" $PY -m test -j2 -v $TESTS >memreg.out 2>&1
memreg_rc=$?
echo "without libmemreg: exit $plain_rc; with: exit $memreg_rc"
grep -E '^(Tests result|[0-9]+ tests? (OK|failed))' memreg.out
# Every test case's outcome line ("test_x (mod.Class.test_x) ... ok") must agree.
grep -E ' \.\.\. (ok|FAIL|ERROR|skipped.*|expected failure)$' plain.out | sed 's/skipped.*/skipped/' | sort >plain.cases
grep -E ' \.\.\. (ok|FAIL|ERROR|skipped.*|expected failure)$' memreg.out | sed 's/skipped.*/skipped/' | sort >memreg.cases
echo "test cases: $(wc -l <plain.cases) without, $(wc -l <memreg.cases) with libmemreg"
if [ "$memreg_rc" -ne "$plain_rc" ]; then
	echo "FAIL: exit status differs" >&2
	tail -30 memreg.out >&2
	exit 1
fi
if ! diff plain.cases memreg.cases >diff.out; then
	# Timing-dependent cases may differ in both directions; failures may not.
	if grep -q '^> .*\.\.\. \(FAIL\|ERROR\)$' diff.out; then
		echo "FAIL: test cases fail only with libmemreg:" >&2
		grep '^> ' diff.out >&2
		exit 1
	fi
	echo "note: case lists differ without new failures:"
	head -20 diff.out
fi
[ "$(wc -l <memreg.cases)" -gt 1000 ] || { echo "FAIL: too few test cases ran" >&2; exit 1; }
exit 0
