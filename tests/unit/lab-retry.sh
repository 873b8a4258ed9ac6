#!/bin/sh
# scripts/lab boots a guest once more only when its kernel died: before /init ran
# (nothing of the test ran), or by a panic after it, for the tests that had not ended.
# A guest that stopped without a panic, and a test that failed, are never retried.
# QEMU is replaced by a stand-in (MEMREG_LAB_QEMU) that plays one scripted boot per
# call, so no guest boots.
set -u
s=$(cd "${top_srcdir:-.}" && pwd)
command -v bash >/dev/null || { echo "SKIP: no bash (scripts/lab is a bash script)"; exit 77; }
command -v busybox >/dev/null || { echo "SKIP: busybox not installed (scripts/lab checks for busybox-static before it boots)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/qemu" <<'QEMU'
#!/bin/bash
# One boot per call, as the next line of $FAKE_QEMU_PLAN says. Command mode: panic
# (the kernel dies before /init), died (/init started, then nothing came back),
# cmdpanic (/init started, then the kernel panicked), ok (the command ran). Group
# mode, over the tests the initramfs holds, in order: gok (every test passes),
# gpanic (the first passes, the kernel panics in the second), gdied (the same, no
# panic), gfailpanic (the first fails, the kernel panics in the second). Each boot's
# tests are appended to $FAKE_QEMU_COUNT.tests, one line per boot.
[ "$1" = -accel ] && { echo tcg; exit 0; }
con= res= initrd=
while [ $# -gt 0 ]; do
	if [ "$1" = -serial ] && [[ $2 == file:* ]]; then
		if [ -z "$con" ]; then con=${2#file:}; else res=${2#file:}; fi
	fi
	[ "$1" = -initrd ] && initrd=$2
	shift
done
n=$(($(cat "$FAKE_QEMU_COUNT" 2>/dev/null || echo 0) + 1))
echo "$n" >"$FAKE_QEMU_COUNT"
tests=($(gzip -dc "$initrd" | cpio -t --quiet 2>/dev/null | sed -n 's|^\(\./\)*lab/tests/\([^/]*\)\.sh$|\2|p' | sort))
echo "${tests[*]}" >>"$FAKE_QEMU_COUNT.tests"
panic='Kernel panic - not syncing: Fatal exception in interrupt'
group_boot() { # STATUS-OF-FIRST PANIC?
	printf 'lab: numa_balancing=0\r\n' >"$con"
	printf '@@LAB begin %s\r\nran %s in boot %s\r\n@@LAB end %s %s\r\n' \
		"${tests[0]}" "${tests[0]}" "$n" "${tests[0]}" "$1" >"$res"
	printf '@@LAB begin %s\r\nhalf of %s\r\n' "${tests[1]}" "${tests[1]}" >>"$res"
	[ "$2" = 0 ] || printf '[   46.0] %s\r\n' "$panic" >>"$con"
}
case $(sed -n "${n}p" "$FAKE_QEMU_PLAN") in
panic) printf 'Linux version 6.12\r\n%s\r\n' "$panic" >"$con" ;;
died) printf 'lab: running cmd (tickers: 1)\r\n' >"$con" ;;
cmdpanic) printf 'lab: running cmd (tickers: 1)\r\n[   46.0] %s\r\n' "$panic" >"$con"
    printf '@@LAB begin cmd\r\nhalf of the output\r\n' >"$res" ;;
ok) printf 'lab: running cmd (tickers: 1)\r\n' >"$con"
    printf '@@LAB begin cmd\r\nhello from the guest\r\n@@LAB end cmd 0\r\n@@LAB done\r\n' >"$res" ;;
gok) printf 'lab: numa_balancing=0\r\n' >"$con"; : >"$res"
    for t in "${tests[@]}"; do
	printf '@@LAB begin %s\r\nran %s in boot %s\r\n@@LAB end %s 0\r\n' "$t" "$t" "$n" "$t" >>"$res"
    done
    printf '@@LAB done\r\n' >>"$res" ;;
gpanic) group_boot 0 1 ;;
gdied) group_boot 0 0 ;;
gfailpanic) group_boot 1 1 ;;
esac
QEMU
chmod +x "$tmp/qemu"
: >"$tmp/vmlinuz"
mkdir "$tmp/stage"

# Group mode's exit status is not its result: TAP is.
# A source tree whose lab has one group, g, of three tests (scripts/lab reads the
# groups beside itself).
mkdir -p "$tmp/top/scripts" "$tmp/top/tests/lab/guest/g"
cp "$s/scripts/lab" "$tmp/top/scripts/lab"
cp "$s/tests/lab/init" "$s/tests/lab/lab-export" "$tmp/top/tests/lab/"
for t in 10-a 20-b 30-c; do echo true >"$tmp/top/tests/lab/guest/g/$t.sh"; done

# boot PLAN...: run scripts/lab -- true (or, with $group set, --group g) with the
# stand-in; sets rc, boots, out, err, retried, booted (each boot's tests, one line each).
group=
boot() {
	printf '%s\n' "$@" >"$tmp/plan"
	rm -f "$tmp/count" "$tmp/count.tests"
	rc=0
	if [ -n "$group" ]; then set -- --group g; else set -- -- true; fi
	FAKE_QEMU_PLAN=$tmp/plan FAKE_QEMU_COUNT=$tmp/count MEMREG_LAB_QEMU=$tmp/qemu \
	MEMREG_LAB_CACHE=$tmp/cache \
		bash "$tmp/top/scripts/lab" --kernel "$tmp/vmlinuz" --stage "$tmp/stage" \
		--out "$tmp/out.d" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	boots=$(cat "$tmp/count" 2>/dev/null || echo 0)
	booted=$(cat "$tmp/count.tests" 2>/dev/null)
	out=$(cat "$tmp/out")
	retried=$(grep -c '^lab: booting .*once more' "$tmp/err")
}

boot panic ok
[ "$rc" = 0 ] && [ "$boots" = 2 ] && [ "$out" = "hello from the guest" ] && [ "$retried" = 1 ] ||
	fail "a kernel that died before /init: want a second boot that runs the command (rc 0, 2 boots, 1 retry note), got rc $rc, $boots boots, $retried notes, output '$out'"
grep -q '^Kernel panic - not syncing: Fatal exception in interrupt$' "$tmp/err" ||
	fail "the first boot's console is not shown: $(cat "$tmp/err")"

boot died ok
[ "$rc" = 1 ] && [ "$boots" = 1 ] && [ "$retried" = 0 ] ||
	fail "a guest that reached /init and stopped without a panic: want no retry (rc 1, 1 boot), got rc $rc, $boots boots, $retried notes"

boot panic panic
[ "$rc" = 1 ] && [ "$boots" = 2 ] && [ "$retried" = 1 ] ||
	fail "two dead boots: want failure after exactly 2 boots, got rc $rc, $boots boots, $retried notes"

boot cmdpanic ok
[ "$rc" = 0 ] && [ "$boots" = 2 ] && [ "$out" = "hello from the guest" ] && [ "$retried" = 1 ] ||
	fail "a command whose guest kernel panicked: want it run in a second boot (rc 0, 2 boots), got rc $rc, $boots boots, $retried notes, output '$out'"
grep -q 'Kernel panic - not syncing' "$tmp/err" || fail "the panicked boot's console is not shown: $(cat "$tmp/err")"

group=1
boot gpanic gok
want="10-a 20-b 30-c
20-b 30-c"
[ "$boots" = 2 ] && [ "$booted" = "$want" ] ||
	fail "a group whose kernel panicked in its second test: want 2 boots, the second with 20-b and 30-c only; got boots: $booted"
# Each test's result from the boot in which it ended; the rerun ones say so.
printf '%s\n' "$out" | grep -qx 'ok 1 - g/10-a' && printf '%s\n' "$out" | grep -qx '# ran 10-a in boot 1' &&
	printf '%s\n' "$out" | grep -qx 'ok 2 - g/20-b' && printf '%s\n' "$out" | grep -qx '# ran 20-b in boot 2' &&
	printf '%s\n' "$out" | grep -qx 'ok 3 - g/30-c' && printf '%s\n' "$out" | grep -qx '# ran 30-c in boot 2' ||
	fail "the TAP after a panic does not take each test from the boot it ended in: $out"
[ "$(printf '%s\n' "$out" | grep -c "^# lab: ran in a second boot: the first boot's guest kernel panicked during 20-b")" = 2 ] ||
	fail "the rerun tests do not both say they ran after a panic: $out"
printf '%s\n' "$out" | grep -q '^# lab: group g: 3 tests in two boots (the first.s guest kernel panicked during 20-b; 2 ran again)' ||
	fail "the summary does not count the second boot: $out"
printf '%s\n' "$out" | grep -q 'half of 20-b' && fail "the panicked boot's partial output of 20-b was taken as its result: $out"
grep -q 'Kernel panic - not syncing' "$tmp/err" || fail "the group's panic console is not shown: $(cat "$tmp/err")"

boot gdied gok
[ "$boots" = 1 ] && printf '%s\n' "$out" | grep -qx 'ok 1 - g/10-a' &&
	printf '%s\n' "$out" | grep -q '^not ok 2 - g/20-b (no result' ||
	fail "a group whose guest stopped without a panic: want no retry and 20-b without a result, got $boots boots: $out"

boot gpanic gpanic
# The second boot runs 20-b and 30-c; its kernel panics in 30-c: no third boot.
[ "$boots" = 2 ] && printf '%s\n' "$out" | grep -qx 'ok 1 - g/10-a' &&
	printf '%s\n' "$out" | grep -qx 'ok 2 - g/20-b' &&
	printf '%s\n' "$out" | grep -q '^not ok 3 - g/30-c (no result' ||
	fail "a group whose kernel panicked in both boots: want 2 boots, 10-a and 20-b passed, 30-c without a result; got $boots boots: $out"

boot gfailpanic gok
want="10-a 20-b 30-c
20-b 30-c"
[ "$boots" = 2 ] && [ "$booted" = "$want" ] &&
	printf '%s\n' "$out" | grep -qx 'not ok 1 - g/10-a (exit status 1)' ||
	fail "a test that failed before a panic: want it kept as failed and not run again, got boots: $booted: $out"

[ "$fails" = 0 ] || exit 1
echo "ok: retried once when the guest kernel died (before /init: the whole boot; after: what had not ended), never otherwise"
