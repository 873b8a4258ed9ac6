#!/bin/sh
# scripts/test-summary, which ends scripts/check (and so CI), over made-up .trs and
# .log files: every result counted, a skip's reason shown whether the test said it
# as TAP ("# SKIP why") or as its own "SKIP: why" lines (several joined), a failed
# test's log tail, a make failure outside any test counted as one, and the exit
# status. Until 2026-12-06 the summary was inline in scripts/check, under pipefail:
# a skipped test whose log had no "# SKIP" line ended the script with status 1
# before the count (CI saw no failure and failed).
set -u
s=$(cd "${top_srcdir:-.}" && pwd)
command -v bash >/dev/null || { echo "SKIP: no bash (scripts/test-summary is a bash script)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect NAME FILE LINE: FILE has LINE, whole.
expect() {
	grep -qxF -- "$3" "$2" || { fail "$1: no line '$3' in:"; sed 's/^/    /' "$2"; }
}

mkdir -p "$tmp/b/tests/a" "$tmp/b/tests/lab"
cd "$tmp/b" || exit 99
printf ':test-result: PASS\n' >tests/a/pass.trs
echo 'all good' >tests/a/pass.log
# a plain test that skipped, saying why over two lines, with other "#" lines
printf ':test-result: SKIP\n' >tests/a/own.trs
printf '# a note\nSKIP: the kernel did not show\nSKIP: the accessed bits\n' >tests/a/own.log
# a TAP group: one passed, one skipped
printf ':test-result: PASS\n:test-result: SKIP\n' >tests/lab/group.trs
printf 'ok 1 - first\nok 2 - second # SKIP no QEMU here\n' >tests/lab/group.log
# a skip that says nothing of why: its last line
printf ':test-result: SKIP\n' >tests/a/mute.trs
printf 'starting\nbye\n' >tests/a/mute.log
: >make-check.out

bash "$s/scripts/test-summary" 0 make-check.out >"$tmp/out1" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "no failure: exit status $rc, want 0"
expect skips "$tmp/out1" 'tests: 2 passed, 0 failed, 3 skipped'
expect own "$tmp/out1" 'skipped: tests/a/own: the kernel did not show the accessed bits'
expect tap "$tmp/out1" 'skipped: tests/lab/group:     ok 2 - second # SKIP no QEMU here'
expect mute "$tmp/out1" 'skipped: tests/a/mute: bye'

# a failed test: its log's tail, exit 1
printf ':test-result: FAIL\n' >tests/a/bad.trs
printf 'step 1\nassertion failed here\n' >tests/a/bad.log
bash "$s/scripts/test-summary" 2 make-check.out >"$tmp/out2" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "a failed test: exit status $rc, want 1"
expect failed "$tmp/out2" '---- tests/a/bad.log (tail) ----'
expect failed-tail "$tmp/out2" 'assertion failed here'
expect failed-count "$tmp/out2" 'tests: 2 passed, 1 failed, 3 skipped'

# make failed with no test failing (a test program that did not build): one failure
rm tests/a/bad.trs
echo 'cc: error: nosuch.c: No such file' >make-check.out
MR_CHECK_START=$(date +%s) bash "$s/scripts/test-summary" 2 make-check.out >"$tmp/out3" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "make failed outside a test: exit status $rc, want 1"
expect build "$tmp/out3" 'cc: error: nosuch.c: No such file'
expect build-count "$tmp/out3" 'tests: 2 passed, 1 failed, 3 skipped'
grep -qE '^elapsed: [0-9]+ s$' "$tmp/out3" || fail "no elapsed line with MR_CHECK_START"

[ "$fails" -eq 0 ] || exit 1
echo "ok: scripts/test-summary"
