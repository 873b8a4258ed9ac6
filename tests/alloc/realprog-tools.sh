#!/bin/sh
# Real programs under LD_PRELOAD=libmemreg.so, each compared with a run without it:
# gcc compiling memreg sources (identical objects), a perl script (identical output),
# a multithreaded `sort --parallel=2` of a generated 24 MB file, `xz -T2` compressing
# and decompressing it and `objdump -d` of git (identical output),
# and the real programs of bench/alloc-bench.sh: sqlite3, git log -p, jq, tclsh
# (identical output; each named and skipped where it is not installed, as git is
# where the source is not a git clone).
. "$top_srcdir/tests/alloc/preload.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT


# Run "$@" with and without libmemreg, output compared; $name says what it is.
# Returns 0 if both ran and agree, the output then in $tmp/out.plain.
same_output() {
	name=$1
	shift
	"$@" >"$tmp/out.plain" 2>"$tmp/err.plain" || { fail "$name without libmemreg: $(tail -1 "$tmp/err.plain")"; return 1; }
	run_preloaded "$tmp/out.err" "$@" >"$tmp/out.memreg" || { fail "$name: $(tail -1 "$tmp/out.err")"; return 1; }
	cmp -s "$tmp/out.plain" "$tmp/out.memreg" || { fail "$name: output differs"; return 1; }
	echo "ok: $name ($(wc -c <"$tmp/out.plain") bytes of output)"
}
have() {
	command -v "$1" >/dev/null && return 0
	echo "skip: $1 is not installed (scripts/packages.txt lists it)"
	return 1
}

# gcc: cc1 is a large single-threaded allocator user.
for src in allocator/buddy.c allocator/tcache.c common/util.c tools/memregctl.c; do
	o=$(basename "$src" .c)
	set -- -O2 -g0 -c -I"$top_builddir" -I"$top_srcdir" -I"$top_srcdir/include" \
		-ffile-prefix-map="$top_srcdir"=. -frandom-seed=memreg "$top_srcdir/$src"
	gcc "$@" -o "$tmp/$o.plain.o" || { fail "gcc without libmemreg: $src"; continue; }
	run_preloaded "$tmp/gcc.err" gcc "$@" -o "$tmp/$o.memreg.o" || { fail "gcc: $src"; continue; }
	cmp -s "$tmp/$o.plain.o" "$tmp/$o.memreg.o" && echo "ok: gcc $src" || fail "gcc $src: objects differ"
done

# perl: hashes, regexes, sorting, string growth.
cat >"$tmp/t.pl" <<'PERL'
my %h; my @a;
for my $i (1..200000) { my $k = join("-", $i % 977, $i * 31 % 1013); $h{$k} .= "x" x ($i % 13); push @a, $k if $i % 3 == 0; }
my $n = 0; for my $k (sort keys %h) { $n += length($h{$k}); $n++ if $k =~ /^(\d+)-\1/; }
my @s = sort { $a cmp $b } @a; my $t = join(",", @s[0..50]);
$t =~ s/(\d+)/<$1>/g; print "$n ", scalar(@s), " ", length($t), " ", substr($t, 0, 200), "\n";
PERL
same_output "perl" perl "$tmp/t.pl"

# sort: threads allocating and freeing each other's buffers.
awk 'BEGIN { srand(7); for (i = 0; i < 800000; i++) printf "%08x %d %s\n", int(rand() * 4294967295), i, substr("abcdefghijklmnopqrstuvwxyz", 1 + i % 26) }' >"$tmp/in.txt"
same_output "sort --parallel=2" env LC_ALL=C sort --parallel=2 -S 16M -T "$tmp" "$tmp/in.txt"

# xz: two threads compressing blocks of 3 MiB (their match finders' buffers are
# large spans, made and freed on each thread), then two decompressing them.
if have xz && same_output "xz -T2" xz -1 -T2 -c "$tmp/in.txt"; then
	mv "$tmp/out.plain" "$tmp/in.txt.xz"
	same_output "xz -d -T2" xz -d -T2 -c "$tmp/in.txt.xz"
fi

# objdump: a disassembly of git (symbols, relocations, many small strings).
have objdump && have git && same_output "objdump -d" objdump -d "$(command -v git)"

# sqlite3: its page cache, a sort and an index over 200 000 rows.
cat >"$tmp/t.sql" <<'SQL'
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 200000)
INSERT INTO t SELECT i, printf('%x-%d', i * 2654435761 % 4294967296, i % 977) FROM s;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(b)), min(b), max(b) FROM t;
SELECT a % 97, count(*), group_concat(substr(b, 1, 3), '') FROM t GROUP BY a % 97 ORDER BY 2 DESC, 1 LIMIT 5;
SELECT b FROM t ORDER BY b DESC LIMIT 3 OFFSET 1000;
SQL
have sqlite3 && same_output "sqlite3" sh -c "exec sqlite3 :memory: <'$tmp/t.sql'"

# git: inflated objects and diff buffers, in the source's own history.
if have git; then
	if git -C "$top_srcdir" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		same_output "git log -p" git -C "$top_srcdir" log -p -n 200 --no-color HEAD
	else
		echo "skip: git log -p: $top_srcdir is not a git clone"
	fi
fi

# jq: 100 000 JSON objects parsed, filtered and rebuilt.
awk 'BEGIN { printf "["; for (i = 0; i < 100000; i++) printf "%s{\"a\":%d,\"b\":\"%s\",\"c\":[%d,%d]}", i ? "," : "", i % 11, substr("abcdefghijklmnopqrstuvwxyz", 1 + i % 26), i, i * 7; print "]" }' >"$tmp/in.json"
have jq && same_output "jq" jq -c '[.[] | select(.a > 5) | {b, s: (.c | add)}] | group_by(.b) | map([.[0].b, length, (map(.s) | add)])' "$tmp/in.json"

# tclsh: a dict of 200 000 strings, listed and sorted.
cat >"$tmp/t.tcl" <<'TCL'
set d [dict create]
for {set i 0} {$i < 200000} {incr i} { dict set d k$i [string repeat x [expr {$i % 50}]] }
set l {}
dict for {k v} $d { lappend l "$k:[string length $v]" }
set s [lsort $l]
puts "[llength $s] [lindex $s 0] [lindex $s end] [string length [join $s]]"
TCL
have tclsh && same_output "tclsh" tclsh "$tmp/t.tcl"
exit $status
