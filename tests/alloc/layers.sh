#!/bin/sh
# libmemreg's layers call only down (docs/allocator.md, "Layers"). Each file of
# allocator/ belongs to one layer of the table below, top first; a file may include
# the headers of its own layer and of the layers below it, never one above; and every
# symbol one of libmemreg's objects takes from another is defined in its own layer or
# a lower one (nm on the built objects: a call through a header-less declaration is
# caught too). A file of allocator/ missing from the table fails: the table stays in
# step with the sources.
src=${top_srcdir:?run by make check}
build=${top_builddir:?run by make check}
status=0
fail() {
	echo "FAIL: $*" >&2
	status=1
}

# layer: files (a source and the header the layers above include)
LAYERS='
1 front interpose.c hotcold.c
2 init init.c init.h
3 start start.c start.h
4 tcache tcache.c tcache.h
5 large large.c large.h
6 fit fit.c fit.h
7 sites sites.c sites.h
8 heap heap.c heap.h
9 stats stats.c stats.h
10 buddy buddy.c buddy.h
11 os os.c os.h
12 base internal.h bitmap.h sizeclass.c options.c fmt.c stats-format.h classes-format.h
'
# rank_of FILE: the layer's number, empty if the file is in no layer.
rank_of() {
	echo "$LAYERS" | awk -v f="$1" '{ for (i = 3; i <= NF; i++) if ($i == f) print $1 }'
}
name_of() {
	echo "$LAYERS" | awk -v r="$1" '$1 == r { print $2 }'
}

for path in "$src"/allocator/*.c "$src"/allocator/*.h; do
	f=${path##*/}
	r=$(rank_of "$f")
	if [ -z "$r" ]; then
		fail "allocator/$f is in no layer (add it to tests/alloc/layers.sh and docs/allocator.md)"
		continue
	fi
	for inc in $(sed -n 's|^#include "allocator/\([^"]*\)".*|\1|p' "$path"); do
		ir=$(rank_of "$inc")
		if [ -z "$ir" ]; then
			fail "allocator/$f includes allocator/$inc, which is in no layer"
		elif [ "$ir" -lt "$r" ]; then
			fail "allocator/$f ($(name_of "$r")) includes allocator/$inc ($(name_of "$ir")): a layer above"
		fi
	done
done
[ $status = 0 ] && echo "ok: every #include of allocator/ goes to the same layer or one below"

# The objects: each symbol defined in one, and each one's undefined symbols.
objs="$build/allocator/.libs"
if ! ls "$objs"/libmemreg_la-*.o >/dev/null 2>&1; then
	echo "SKIP: no objects in $objs (libmemreg not built with libtool?): symbols not checked"
	exit $status
fi
defs=$(mktemp) || exit 99
trap 'rm -f "$defs"' EXIT
for o in "$objs"/libmemreg_la-*.o; do
	f=${o##*/libmemreg_la-}
	f=${f%.o}.c
	r=$(rank_of "$f")
	[ -n "$r" ] || { [ -f "$src/allocator/$f" ] && fail "object of allocator/$f is in no layer"; continue; }
	nm --defined-only "$o" | awk -v r="$r" -v f="$f" '$2 ~ /^[TDBRV]$/ { print $3, r, f }' >>"$defs"
done
symbols_ok=1
for o in "$objs"/libmemreg_la-*.o; do
	f=${o##*/libmemreg_la-}
	f=${f%.o}.c
	r=$(rank_of "$f")
	[ -n "$r" ] || continue
	for bad in $(nm -u "$o" | awk '{ print $2 }' | sort -u |
		     awk -v r="$r" 'NR == FNR { rank[$1] = $2; file[$1] = $3; next }
				   ($1 in rank) && rank[$1] < r { print $1 ":" file[$1] }' "$defs" -); do
		fail "allocator/$f ($(name_of "$r")) uses ${bad%%:*} of allocator/${bad#*:}: a layer above"
		symbols_ok=0
	done
done
[ $symbols_ok = 1 ] && echo "ok: every symbol an object takes from another is of the same layer or one below"
exit $status
