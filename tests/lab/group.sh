#!/bin/sh
# make check's driver for one lab group: tests/lab/GROUP.lab -> scripts/lab --group
# GROUP against the installed tree staged in the build directory. TAP on stdout; when
# QEMU cannot run at all, a TAP skip with the reason (the runner exits 77). The files
# the guest tests export land in tests/lab/GROUP.files of the build directory (emptied
# first, so it holds this run's only), where CI keeps them.
stub=$1
group=$(basename "$stub" .lab)
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$PWD}
out=$(mktemp)
files=$builddir/tests/lab/$group.files
rm -rf "$files"
# One boot at a time: under make check -j2 two TCG guests (2 vCPUs each) would
# share this machine's cores, and a starved guest's kdamond sampled a third as
# often as it should (a CI run's damon zigzag read 8 snapshots in 30 s).
# The lock is machine-wide, not per build tree: two trees checked at once would boot
# two guests just the same.
serial=
command -v flock >/dev/null 2>&1 && serial="flock ${TMPDIR:-/tmp}/memreg-lab-boot.lock"
status=0
$serial "$srcdir/scripts/lab" --build "$builddir" --stage "$builddir/tests/lab/stage" \
	--group "$group" --out "$files" 2>"$out" || status=$?
cat "$out" >&2
if [ "$status" -eq 77 ]; then
	why=$(sed -n 's/^lab: SKIP: //p' "$out" | tail -n 1)
	rm -f "$out"
	echo "SKIP: $why"
	echo "1..0 # SKIP $why"
	exit 0
fi
rm -f "$out"
exit "$status"
