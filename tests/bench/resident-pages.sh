#!/bin/sh
# bench/resident-pages.sh's count of one saved run (-s), from lines in the format of
# `perf script -F comm,event,trace` written out here, the pages counted by hand: a
# page-faults sample is one page; a madvise with behavior 0x17 (MADV_POPULATE_WRITE)
# is its length in pages, rounded up; any other advice (0x4, MADV_DONTNEED) none.
#   as:  fault 1 + populate 0x1000 (1) + populate 0x4000 (4), DONTNEED 0x10000 (0) = 6
#   cc1: faults 2 + populate 0x1800 (1.5, so 2)                                    = 4
#   sh:  fault 1, a madvise line without its length (0)                              = 1
# And its refusals (a bad round count, an unreadable command list, no command list)
# and its help.
set -u
s=$(cd "${top_srcdir:-.}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/run.txt" <<'RUN'
             cc1                page-faults: 
             cc1                page-faults: 
              as syscalls:sys_enter_madvise: start: 0x7f5288010000, len_in: 0x00001000, behavior: 0x00000017
              as syscalls:sys_enter_madvise: start: 0x7f5288020000, len_in: 0x00004000, behavior: 0x00000017
              as syscalls:sys_enter_madvise: start: 0x7f5288020000, len_in: 0x00010000, behavior: 0x00000004
              as                page-faults: 
              sh                page-faults: 
              sh syscalls:sys_enter_madvise: start: 0x7f5288011000, behavior: 0x00000017
             cc1 syscalls:sys_enter_madvise: start: 0x7f5288011000, len_in: 0x00001800, behavior: 0x00000017
RUN
printf 'as 6\ncc1 4\nsh 1\n' >"$tmp/want"
sh "$s/bench/resident-pages.sh" -s "$tmp/run.txt" >"$tmp/got" 2>"$tmp/err" ||
	fail "-s failed: $(cat "$tmp/err")"
cmp -s "$tmp/want" "$tmp/got" || fail "counts: want $(tr '\n' ' ' <"$tmp/want"), got $(tr '\n' ' ' <"$tmp/got")"

printf 'true\n' >"$tmp/cmds"
sh "$s/bench/resident-pages.sh" -r 0 "$tmp/cmds" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "positive count" "$tmp/err" || fail "-r 0 not refused: $(cat "$tmp/err")"
sh "$s/bench/resident-pages.sh" "$tmp/none" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "cannot read $tmp/none" "$tmp/err" || fail "a missing list not refused: $(cat "$tmp/err")"
sh "$s/bench/resident-pages.sh" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "^usage:" "$tmp/err" || fail "no list not refused: $(cat "$tmp/err")"

sh "$s/bench/resident-pages.sh" -h >"$tmp/help" 2>&1 || fail "-h failed"
grep -q "^Pages made resident, by program" "$tmp/help" && grep -q -- "-s FILE" "$tmp/help" ||
	fail "-h does not print the help: $(head -2 "$tmp/help")"

[ "$fails" -eq 0 ] && echo "PASS: resident-pages counts and refusals" && exit 0
exit 1
