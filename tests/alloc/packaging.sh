#!/bin/sh
# libmemreg as its users install it: the SONAME libmemreg.so.1, bound at load (-z
# now), memreg.pc, a program linked with -lmemreg calling memreg_get_stats;
# MEMREG_SITE_MAP's file (%p, mode 0600, no symlink followed, never a forked child's);
# unknown MEMREG_* variables and bad values said once each, with the value.
. "$top_srcdir/tests/alloc/preload.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
LIBS="$top_builddir/.libs"

soname=$(readelf -d "$MEMREG_LIB" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libmemreg.so.1 ] || fail "SONAME '$soname', want libmemreg.so.1"
[ -f "$LIBS/libmemreg.so.1" ] || fail "no $LIBS/libmemreg.so.1"
# Bound at load (-z now): no lazy binding for a forked child to run (allocator/local.mk),
# and the GOT read-only after relocation, no .got.plt left writable beside it.
readelf -d "$MEMREG_LIB" | grep -q '(FLAGS) .*BIND_NOW' || fail "not linked with -z now: $(readelf -d "$MEMREG_LIB" | grep FLAGS)"
! readelf -SW "$MEMREG_LIB" | grep -q '\.got\.plt' || fail "a .got.plt outside RELRO: lazy binding"

# memreg.pc (as installed, with the configured prefix).
pc="$top_builddir/allocator/memreg.pc"
if command -v pkg-config >/dev/null; then
	libdir=$(PKG_CONFIG_PATH="$top_builddir/allocator" pkg-config --variable=libdir memreg)
	out=$(echo $(PKG_CONFIG_PATH="$top_builddir/allocator" pkg-config --libs memreg))
	[ -n "$libdir" ] && [ "$out" = "-L$libdir -lmemreg" ] || fail "pkg-config --libs memreg: '$out'"
	out=$(PKG_CONFIG_PATH="$top_builddir/allocator" pkg-config --modversion memreg)
	grep -q "^Version: $out\$" "$pc" || fail "pkg-config --modversion memreg: '$out'"
else
	grep -q '^Libs: -L${libdir} -lmemreg$' "$pc" || fail "$pc: no Libs line (pkg-config not installed)"
fi

# A program linked with -lmemreg: NEEDED libmemreg.so.1, the API and malloc_trim.
${CC:-cc} -O1 -I"$top_srcdir/include" -o "$tmp/api-prog" "$top_srcdir/tests/alloc/api-prog.c" \
	-L"$LIBS" -lmemreg || exit 99
readelf -d "$tmp/api-prog" | grep -q 'Shared library: \[libmemreg.so.1\]' ||
	fail "api-prog does not need libmemreg.so.1"
if out=$(LD_LIBRARY_PATH="$LIBS" "$tmp/api-prog" stats 2>&1); then
	echo "ok: $out"
else
	fail "$out"
fi

# MEMREG_SITE_MAP: one file per process with %p, mode 0600 (two ls run by sh, which
# leaves none itself; the last command a builtin, or sh would exec ls in its place).
LD_PRELOAD="$MEMREG_LIB" MEMREG_SITE_MAP="$tmp/map.%p" sh -c 'ls / >/dev/null; ls / >/dev/null; :'
n=$(ls "$tmp" | grep -c '^map\.[0-9]*$')
[ "$n" -ge 2 ] || fail "MEMREG_SITE_MAP=map.%p under sh running ls twice: $n files ($(ls "$tmp"))"
for f in "$tmp"/map.*; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f: mode $(stat -c %a "$f"), want 600"
	[ "$(sed -n 's/^pid //p' "$f")" = "${f##*.}" ] || fail "$f: says pid $(sed -n 's/^pid //p' "$f")"
done
# Without %p, a forked child that outlives its parent leaves the parent's file.
set -- $(LD_LIBRARY_PATH="$LIBS" MEMREG_SITE_MAP="$tmp/one" "$tmp/api-prog" fork)
parent=$1 child=$2
i=0
while kill -0 "$child" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.2
[ "$(sed -n 's/^pid //p' "$tmp/one")" = "$parent" ] ||
	fail "MEMREG_SITE_MAP without %p: written by pid $(sed -n 's/^pid //p' "$tmp/one"), parent $parent, child $child"
# A symbolic link is not followed.
ln -s "$tmp/target" "$tmp/link"
LD_LIBRARY_PATH="$LIBS" MEMREG_SITE_MAP="$tmp/link" "$tmp/api-prog" fork 2>"$tmp/link.err" >/dev/null
sleep 0.7	# the child's exit
[ ! -e "$tmp/target" ] || fail "MEMREG_SITE_MAP followed a symbolic link"
[ "$(cat "$tmp/link.err")" = "libmemreg: cannot write MEMREG_SITE_MAP $tmp/link: a symbolic link" ] ||
	fail "MEMREG_SITE_MAP=link: stderr '$(cat "$tmp/link.err")'"

# Options: a bad value's message shows it; unknown names once; the tools' own quiet.
LD_PRELOAD="$MEMREG_LIB" MEMREG_REGION_SIZE=3M MEMREG_DECAY=5 MEMREG_ROOT=/ MEMREG_DECAY_MS=x \
	ls / 2>"$tmp/opt.err" >/dev/null
sort "$tmp/opt.err" >"$tmp/opt.sorted"
cat >"$tmp/opt.want" <<'W'
libmemreg: ignoring bad MEMREG_DECAY_MS=x
libmemreg: ignoring bad MEMREG_REGION_SIZE=3M (a power of two, 1M..1G)
libmemreg: ignoring unknown MEMREG_DECAY=5
W
cmp -s "$tmp/opt.sorted" "$tmp/opt.want" || fail "option messages: $(cat "$tmp/opt.err")"
[ $status -eq 0 ] && echo "ok: SONAME, bound at load, memreg.pc, -lmemreg, MEMREG_SITE_MAP, option messages"
exit $status
