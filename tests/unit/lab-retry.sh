#!/bin/sh
# scripts/lab boots a guest once more only when its kernel died before /init ran
# (nothing of the test ran), never when the guest reached /init. QEMU is replaced by a
# stand-in (MEMREG_LAB_QEMU) that plays one scripted boot per call, so no guest boots.
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
# One boot per call, as the next line of $FAKE_QEMU_PLAN says: panic (the kernel dies
# before /init), died (/init started, then nothing came back), ok (the command ran).
[ "$1" = -accel ] && { echo tcg; exit 0; }
con= res=
while [ $# -gt 0 ]; do
	if [ "$1" = -serial ] && [[ $2 == file:* ]]; then
		if [ -z "$con" ]; then con=${2#file:}; else res=${2#file:}; fi
	fi
	shift
done
n=$(($(cat "$FAKE_QEMU_COUNT" 2>/dev/null || echo 0) + 1))
echo "$n" >"$FAKE_QEMU_COUNT"
case $(sed -n "${n}p" "$FAKE_QEMU_PLAN") in
panic) printf 'Linux version 6.12\r\nKernel panic - not syncing: Fatal exception in interrupt\r\n' >"$con" ;;
died) printf 'lab: running cmd (tickers: 1)\r\n' >"$con" ;;
ok) printf 'lab: running cmd (tickers: 1)\r\n' >"$con"
    printf '@@LAB begin cmd\r\nhello from the guest\r\n@@LAB end cmd 0\r\n@@LAB done\r\n' >"$res" ;;
esac
QEMU
chmod +x "$tmp/qemu"
: >"$tmp/vmlinuz"
mkdir "$tmp/stage"

# boot PLAN...: run scripts/lab -- true with the stand-in; sets rc, boots, out, err.
boot() {
	printf '%s\n' "$@" >"$tmp/plan"
	rm -f "$tmp/count"
	rc=0
	FAKE_QEMU_PLAN=$tmp/plan FAKE_QEMU_COUNT=$tmp/count MEMREG_LAB_QEMU=$tmp/qemu \
	MEMREG_LAB_CACHE=$tmp/cache \
		bash "$s/scripts/lab" --kernel "$tmp/vmlinuz" --stage "$tmp/stage" -- true \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
	boots=$(cat "$tmp/count" 2>/dev/null || echo 0)
	out=$(cat "$tmp/out")
	retried=$(grep -c '^lab: booting it once more' "$tmp/err")
}

boot panic ok
[ "$rc" = 0 ] && [ "$boots" = 2 ] && [ "$out" = "hello from the guest" ] && [ "$retried" = 1 ] ||
	fail "a kernel that died before /init: want a second boot that runs the command (rc 0, 2 boots, 1 retry note), got rc $rc, $boots boots, $retried notes, output '$out'"
grep -q '^Kernel panic - not syncing: Fatal exception in interrupt$' "$tmp/err" ||
	fail "the first boot's console is not shown: $(cat "$tmp/err")"

boot died ok
[ "$rc" = 1 ] && [ "$boots" = 1 ] && [ "$retried" = 0 ] ||
	fail "a guest that reached /init: want no retry (rc 1, 1 boot), got rc $rc, $boots boots, $retried notes"

boot panic panic
[ "$rc" = 1 ] && [ "$boots" = 2 ] && [ "$retried" = 1 ] ||
	fail "two dead boots: want failure after exactly 2 boots, got rc $rc, $boots boots, $retried notes"

[ "$fails" = 0 ] || exit 1
echo "ok: retried once before /init, never after"
