#!/bin/sh
# report heatmap from the command line: the format follows the output file's name
# (an unknown one is a usage error naming .svg and .png), the title names the target
# and backend, and a physical heatmap over a fixture's MPST marks a line at every
# power-region edge inside the record's mapped ranges (with --root).
set -u
ctl=$top_builddir/tools/memregctl
mk=$top_builddir/tests/monitor/mk-phys-record
fx=$top_builddir/tests/fixtures/server-2s-mpst
tmp=$(mktemp -d /tmp/mr-report-heatmap-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$fx/sys/firmware/acpi/tables/MPST" ] || { echo "SKIP: fixture $fx has no built MPST"; exit 77; }

# physical [512 MiB, 2 GiB) and [4 GiB, 5.5 GiB), snapshots 0.25 s .. 1.5 s
"$mk" "$tmp/p.rec" spans || fail "mk-phys-record spans"

# 1. the format from the name
"$ctl" report heatmap --root "$fx" -o "$tmp/h.png" "$tmp/p.rec" || fail "png"
[ "$(head -c 8 "$tmp/h.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "h.png: not a PNG signature"
"$ctl" report heatmap --root "$fx" -o "$tmp/h.SVG" "$tmp/p.rec" || fail "svg"
head -2 "$tmp/h.SVG" | grep -q '^<svg ' || fail "h.SVG: not an SVG"
"$ctl" report heatmap -o "$tmp/h.pdf" "$tmp/p.rec" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "unknown extension: exit $rc, want 2"
want="memregctl report: heatmap file '$tmp/h.pdf': unknown type (name it .svg or .png, or give -f svg|png|term)"
[ "$(head -1 "$tmp/err")" = "$want" ] || { cat "$tmp/err"; fail "unknown extension message"; }
[ ! -e "$tmp/h.pdf" ] || fail "h.pdf written anyway"
"$ctl" report heatmap -f svg -o "$tmp/x.png" "$tmp/p.rec" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "-f svg -o x.png: exit $rc, want 2"
want="memregctl report: -f svg, but the file name '$tmp/x.png' says png"
[ "$(head -1 "$tmp/err")" = "$want" ] || { cat "$tmp/err"; fail "-f against the name: message"; }
# -f decides where the name says nothing (a device, a pipe)
"$ctl" report heatmap -f svg -o "$tmp/plain" "$tmp/p.rec" || fail "-f svg -o plain"
head -2 "$tmp/plain" | grep -q '^<svg ' || fail "-f svg -o plain: not an SVG"
# no -o: the terminal heatmap
"$ctl" report heatmap --width 6 --height 4 "$tmp/p.rec" >"$tmp/h.txt" || fail "term"
[ "$(grep -c '^|' "$tmp/h.txt")" -eq 4 ] || fail "terminal heatmap is not 4 rows"

# 2. the title: target and backend
t=$(sed -n 's|^<text [^>]*class="title">\(.*\)</text>$|\1|p' "$tmp/h.SVG")
[ "$t" = "physical memory, damon backend" ] || fail "title '$t'"

# 3. a line at each power-region edge inside the mapped ranges: server-2s-mpst's
# regions 0 [0, 1G), 1 [1G, 2G) + [4G, 5G), 2 [5G, 6G): edges 1G, 2G, 4G, 5G
# (0 and 6G are outside); ids 0, 1 and 2 beside their bands
edges=$(sed -n 's/.*class="region-edge" data-addr="\(0x[0-9a-f]*\)".*/\1/p' "$tmp/h.SVG" | sort -u | tr '\n' ' ')
[ "$edges" = "0x100000000 0x140000000 0x40000000 0x80000000 " ] || fail "region edges '$edges'"
ids=$(sed -n 's/.*class="region-id">\([0-9]*\)<.*/\1/p' "$tmp/h.SVG" | sort -u | tr '\n' ' ')
[ "$ids" = "0 1 2 " ] || fail "region ids '$ids'"
# the PNG has them too: the same canvas as the SVG
svgsize=$(sed -n 's/^<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1x\2/p' "$tmp/h.SVG")
pngsize=$(od -An -tu1 -j16 -N8 "$tmp/h.png" | awk '{ print $3 * 256 + $4 "x" $7 * 256 + $8 }')
[ "$svgsize" = "$pngsize" ] || fail "SVG $svgsize, PNG $pngsize"
# a process record has no region edges
"$mk" "$tmp/proc.rec" process || fail "mk-phys-record process"
"$ctl" report heatmap --root "$fx" -o "$tmp/proc.svg" "$tmp/proc.rec" || fail "process svg"
! grep -q 'region-edge' "$tmp/proc.svg" || fail "process heatmap has region edges"
t=$(sed -n 's|^<text [^>]*class="title">\(.*\)</text>$|\1|p' "$tmp/proc.svg")
[ "$t" = "pid 999999999, damon backend" ] || fail "process title '$t'"
echo PASS
