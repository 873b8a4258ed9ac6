#!/bin/sh
# scripts/lab's staging without a boot (--stage-only DIR): an installed tree (--stage)
# holding a static binary is staged with that binary copied as it is (ldd fails on a
# static binary; the runner used to exit 1 there without a word), a dynamic one with
# its libraries; and a runner step that fails says which command, on which line.
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
lab=$top/scripts/lab
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
fail() { echo "FAIL: $*"; [ ! -f "$t/err" ] || sed 's/^/  stderr: /' "$t/err"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
bb=$(command -v busybox) || { echo "SKIP: no busybox (the lab needs busybox-static)"; exit 77; }
ldd "$bb" 2>&1 | grep -q 'not a dynamic' ||
	{ echo "SKIP: $bb is dynamically linked (the lab needs busybox-static)"; exit 77; }
dyn=/usr/bin/true
[ -x "$dyn" ] || dyn=/bin/true
ldd "$dyn" 2>/dev/null | grep -q '=> /' || { echo "SKIP: $dyn is not dynamically linked"; exit 77; }

# The installed tree: static binaries only, and (second run) a dynamic one too. No
# --build: nothing else is copied in but busybox and numactl/migratepages if present.
mkdir -p "$t/stage/usr/bin" "$t/stage/usr/sbin"
cp "$bb" "$t/stage/usr/bin/static-tool"
cp "$bb" "$t/stage/usr/sbin/static-tool2"
"$lab" --build "$t/no-build" --stage "$t/stage" --stage-only "$t/root" >"$t/out" 2>"$t/err"
rc=$?
if [ "$rc" -eq 0 ]; then ok "static binaries staged: exit 0"; else fail "static binaries: exit $rc"; fi
for f in usr/bin/static-tool usr/sbin/static-tool2 bin/busybox; do
	if cmp -s "$bb" "$t/root/$f"; then ok "$f copied as it is"; else fail "$f not copied as it is"; fi
done
[ -x "$t/root/init" ] && ok "the root has its /init" || fail "no /init in the staged root"
echo "lab: guest root file system in $t/root (not booted: --stage-only)" >"$t/want"
if cmp -s "$t/want" "$t/err"; then ok "one line says where the root is"; else
	fail "stderr is not just the staged-root line"; fi

cp "$dyn" "$t/stage/usr/bin/dyn-tool"
"$lab" --build "$t/no-build" --stage "$t/stage" --stage-only "$t/root2" >"$t/out" 2>"$t/err"
rc=$?
[ "$rc" -eq 0 ] && ok "static and dynamic binaries staged: exit 0" || fail "static + dynamic: exit $rc"
missing=
for lib in $(ldd "$dyn" | awk '/=> \//{print $3} /^\t\/[^ ]*ld-linux/{print $1}'); do
	[ -e "$t/root2$lib" ] || missing="$missing $lib"
done
[ -z "$missing" ] && ok "the dynamic binary's libraries are in the root" ||
	fail "libraries of $dyn missing in the staged root:$missing"

# A step that fails names itself: the staged root's parent is a file, so the runner's
# mkdir fails; the ERR trap says which command on which line, and the exit status is 1.
: >"$t/file"
"$lab" --build "$t/no-build" --stage "$t/stage" --stage-only "$t/file/root" >"$t/out" 2>"$t/err"
rc=$?
[ "$rc" -eq 1 ] && ok "a failing step: exit 1" || fail "a failing step: exit $rc, expected 1"
if grep -Eqx 'lab: error: line [0-9]+: `mkdir -p "\$root"/\{bin,[^`]*\}` failed \(exit status 1\)' "$t/err"; then
	ok "a failing step says which command on which line"
else
	fail "no 'lab: error: line N: \`mkdir -p ...\` failed (exit status 1)' line"
fi

# An existing, non-empty directory is refused, not mixed into.
"$lab" --build "$t/no-build" --stage "$t/stage" --stage-only "$t/stage" >"$t/out" 2>"$t/err"
rc=$?
echo "lab: --stage-only $t/stage: not a new or empty directory" >"$t/want"
[ "$rc" -eq 1 ] && cmp -s "$t/want" "$t/err" && ok "a non-empty --stage-only directory is refused" ||
	fail "non-empty --stage-only directory: exit $rc"

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
