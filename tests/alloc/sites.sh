#!/bin/sh
# Allocation sites end to end: MEMREG_SITE_MAP's format (version, sites as build-id +
# offset, per-page bytes), a MEMREG_PROFILE made from it (site_a cold) honoured, a
# bad profile reported, and the memreg.h API and operator new hints (sites-prog.c).
. "$top_srcdir/tests/alloc/preload.sh"
PROG="$top_builddir/tests/alloc/sites-prog"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

LD_PRELOAD="$MEMREG_LIB" MEMREG_SITE_MAP="$tmp/map" "$PROG" map || fail "sites-prog map"
head -1 "$tmp/map" | grep -qx 'memreg-site-map 1' || fail "site map header: $(head -1 "$tmp/map")"
grep -q '^page_size 4096$' "$tmp/map" || fail "no page_size line"
# The two sites of the program, and their live bytes: 1000 x 100 (site_a), 1000 x 3072.
nm -n "$PROG" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' >"$tmp/syms"
awk -v syms="$tmp/syms" '
	function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	BEGIN { while ((getline l < syms) > 0) { split(l, f, " "); n++; a[n] = hex(f[1]); nm[n] = f[2] } }
	$1 == "site" && $5 == "(main" { off = hex($4); fn = ""
		for (i = 1; i <= n; i++) if (a[i] <= off) fn = nm[i]
		if (fn == "site_a" || fn == "site_b") { id[$2] = fn; bid[fn] = $3; o[fn] = $4 } }
	$1 == "page" { for (i = 3; i <= NF; i++) { split($i, kv, ":"); if (kv[1] in id) bytes[id[kv[1]]] += kv[2] } }
	END { printf "%s %s %d %s %s %d\n", bid["site_a"], o["site_a"], bytes["site_a"], bid["site_b"], o["site_b"], bytes["site_b"] }
' "$tmp/map" >"$tmp/sites"
read -r bid_a off_a bytes_a bid_b off_b bytes_b <"$tmp/sites"
[ -n "$bid_a" ] && [ -n "$bid_b" ] || fail "site map lacks site_a or site_b: $(cat "$tmp/sites")"
[ "$bytes_a" = 112000 ] || fail "site_a live bytes $bytes_a, want 112000 (1000 objects of class 112)"
[ "$bytes_b" = 3072000 ] || fail "site_b live bytes $bytes_b, want 3072000 (1000 of class 3072)"

printf 'memreg-profile 1\n# site_a is cold\n%s %s cold site_a\n' "$bid_a" "$off_a" >"$tmp/profile"
LD_PRELOAD="$MEMREG_LIB" MEMREG_PROFILE="$tmp/profile" "$PROG" check || fail "profile not honoured"
printf 'memreg-profile 1\n%s zz cold\n' "$bid_a" >"$tmp/bad"
out=$(LD_PRELOAD="$MEMREG_LIB" MEMREG_PROFILE="$tmp/bad" "$PROG" api 2>&1) || fail "api with a bad profile"
echo "$out" | grep -q "bad:2: bad offset" || fail "bad profile not reported: $out"
LD_PRELOAD="$MEMREG_LIB" "$PROG" api || fail "memreg.h API"
[ $status -eq 0 ] && echo "ok: site map, profile, API"
exit $status
