#!/bin/sh
# The systemd unit: `systemd-analyze verify` passes (its Documentation= pages found in
# the build's man pages, ExecStart pointed at the built memregd), and `systemd-analyze
# security --offline` is reported. systemd need not be PID 1: both read the file only.
set -u
unit=$top_builddir/systemd/memregd.service
tmp=$(mktemp -d /tmp/mr-unit-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is not installed"; exit 77; }
[ -f "$unit" ] || fail "$unit not built"
grep -q '^ExecStart=.*/memregd --config ' "$unit" || fail "no ExecStart"
for p in ReadWritePaths=/sys/kernel/mm/damon ReadWritePaths=.*/sys/kernel/tracing \
	 ReadWritePaths=.*/sys/devices/system/memory \
	 'CapabilityBoundingSet=CAP_SYS_PTRACE CAP_SYS_NICE CAP_SYS_ADMIN CAP_PERFMON'; do
	grep -q "^$p" "$unit" || fail "unit lacks $p"
done
grep -q '^ProtectKernelTunables' "$unit" && fail "ProtectKernelTunables would block DAMON's sysfs"
sed "s|^ExecStart=[^ ]*/memregd |ExecStart=$top_builddir/tools/memregd |" "$unit" >"$tmp/memregd.service"
mkdir -p "$tmp/man/man8" "$tmp/man/man5"
cp "$top_builddir/man/memregd.8" "$tmp/man/man8/" || fail "man/memregd.8 not built"
cp "$top_builddir/man/memregd.conf.5" "$tmp/man/man5/" || fail "man/memregd.conf.5 not built"
MANPATH=$tmp/man systemd-analyze verify "$tmp/memregd.service" >"$tmp/verify.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/verify.out"; fail "systemd-analyze verify exit $rc"; }
[ -s "$tmp/verify.out" ] && { cat "$tmp/verify.out"; fail "systemd-analyze verify said something"; }
systemd-analyze security --offline=true "$tmp/memregd.service" >"$tmp/security.out" 2>&1 ||
	{ cat "$tmp/security.out"; fail "systemd-analyze security --offline exit $?"; }
echo "systemd-analyze security --offline (systemd $(systemd-analyze --version | head -1 | awk '{print $2}')):"
grep -a 'Overall exposure level' "$tmp/security.out"
echo "PASS: unit-verify"
