#!/bin/sh
# Real programs under LD_PRELOAD=libmemreg.so, each compared with a run without it:
# gcc compiling memreg sources (identical objects), a perl script (identical output),
# a multithreaded `sort --parallel=2` of a generated 40 MB file (identical output).
. "$top_srcdir/tests/alloc/preload.sh"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0

fail() {
	echo "FAIL: $*" >&2
	status=1
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
perl "$tmp/t.pl" >"$tmp/perl.plain" || fail "perl without libmemreg"
run_preloaded "$tmp/perl.err" perl "$tmp/t.pl" >"$tmp/perl.memreg" || fail "perl"
cmp -s "$tmp/perl.plain" "$tmp/perl.memreg" && echo "ok: perl" || fail "perl: output differs"

# sort: threads allocating and freeing each other's buffers.
awk 'BEGIN { srand(7); for (i = 0; i < 800000; i++) printf "%08x %d %s\n", int(rand() * 4294967295), i, substr("abcdefghijklmnopqrstuvwxyz", 1 + i % 26) }' >"$tmp/in.txt"
LC_ALL=C sort --parallel=2 -S 16M -T "$tmp" "$tmp/in.txt" >"$tmp/sort.plain" || fail "sort without libmemreg"
LC_ALL=C run_preloaded "$tmp/sort.err" sort --parallel=2 -S 16M -T "$tmp" "$tmp/in.txt" >"$tmp/sort.memreg" || fail "sort"
cmp -s "$tmp/sort.plain" "$tmp/sort.memreg" && echo "ok: sort --parallel=2 ($(wc -c <"$tmp/in.txt") bytes)" || fail "sort: output differs"
exit $status
