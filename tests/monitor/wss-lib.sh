# Shared by the wss tests: record a shipped accessgen config with the refs backend
# and check the median working-set size. Sourced; needs top_srcdir/top_builddir.
#
# The check holds only if the accesses were there to be seen. Two things outside
# the monitor can hide them, and each is measured apart from the monitor:
# - a target that goes without a CPU for most of a sampling interval touches
#   nothing in it (accessgen -s reports its longest stall);
# - a kernel whose accessed bits do not show what the target touched: the test
#   reads the target's smaps itself every 200 ms while the monitor runs (reads
#   only; the monitor's clear_refs are the only clears), and the largest mapping's
#   Referenced is what any clear_refs reader could have seen. Each config's working
#   set at any moment is one area, so that figure should be at least LO MiB.
# A median out of range is recorded once more (said so in the log) only when one
# of these shows the accesses were hidden: a stall of half a sampling interval or
# more, or a quarter or more of the smaps reads below LO MiB; otherwise it fails
# at once, and a second miss fails too, but for one case: the test skips (77, the
# reason printed) when on the second try the median smaps read itself was under
# half of LO MiB, so that no clear_refs reader could have seen the working set:
# that try judged nothing, and the first had already shown the accesses hidden (a
# bound merely wrong, the kernel showing most of it, still fails). clear_refs does not
# flush the TLB, and an accessed bit is set only by a page walk: where the TLB
# keeps the area's translations (a VM on an AMD EPYC host, 2026-12-04: 194 of 194
# reads at 0 MiB while the target swept it 170 M times a second) the kernel shows
# none of it. docs/monitor.md, "Accuracy".
# wss_check CONFIG TIME_SCALE ATTRS MIN_ACCESSES LO_MIB HI_MIB
wss_check() {
	config=$1 scale=$2 attrs=$3 min=$4 lo=$5 hi=$6
	ctl=$top_builddir/tools/memregctl
	gen=$top_builddir/monitor/memreg-accessgen
	rec=$(mktemp /tmp/mr-wss-XXXXXX.rec)
	# record keeps a previous file as .old
	trap 'rm -f "$rec" "$rec.old" "$rec.err" "$rec.out" "$rec.smaps"' EXIT
	sample_us=${attrs%%,*}
	for try in 1 2; do
		wss_record && return 0
		[ "$try" = 1 ] || break
		if awk -v s="$stall_ms" -v us="$sample_us" 'BEGIN { exit !(s * 2000 >= us) }'; then
			echo "# the target stalled for $stall_ms ms, half a sampling interval or more:"
			echo "# it did not run the pattern throughout; recording once more"
		elif [ $((smaps_low * 4)) -ge "$smaps_reads" ]; then
			echo "# $smaps_low of $smaps_reads smaps reads apart from the monitor saw under $lo MiB"
			echo "# referenced: the kernel did not show the accesses; recording once more"
		else
			break
		fi
	done
	# the second try's median smaps read under half of LO MiB: the kernel hid it
	if [ "$try" = 2 ] && [ "$smaps_p50" -lt $((lo * 512)) ]; then
		echo "SKIP: $config: $why; on the second try the median smaps read, apart from the"
		echo "SKIP: monitor, was under half of $lo MiB: the kernel's accessed bits did not show the"
		echo "SKIP: working set (a TLB that holds it sets none after clear_refs)"
		exit 77
	fi
	echo "FAIL: $config: $why"
	exit 1
}

# The largest Referenced of the target's mappings, in kB, one line per read of its
# smaps every 200 ms, until it ends. The target is record's (PID's) child. One
# perl process for the whole run: a command started for each read would touch the
# C library's shared pages, whose page flags the target's smaps counts as
# referenced (stairs then read 11.6 MiB).
wss_observe() {
	perl -e '
		my ($rec, $pid) = ($ARGV[0]);
		while (!$pid && kill(0, $rec)) {
			for my $stat (glob "/proc/[0-9]*/stat") {
				open(my $f, "<", $stat) or next;
				my @f = split / /, (<$f> // "") =~ s/.*\) //r;
				$pid = $stat =~ s/\D//gr if @f > 1 && $f[1] == $rec;
			}
			select(undef, undef, undef, 0.05) unless $pid;
		}
		exit 0 unless $pid;
		sleep 1;	# accessgen maps and fills its areas first
		while (open(my $f, "<", "/proc/$pid/smaps")) {
			my ($max, $lines) = (0, 0);
			while (<$f>) {
				$lines++;
				$max = $1 if /^Referenced:\s+(\d+)/ && $1 > $max;
			}
			close $f;
			last unless $lines;	# a zombie: its mappings are gone
			print "$max\n";
			select(undef, undef, undef, 0.2);
		}' "$1"
}

# One record and its check: 0 when the median is in range, 1 when it is not (why,
# stall_ms, smaps_reads, smaps_low and smaps_p50 say so); exits on any other failure.
wss_record() {
	"$ctl" record -b refs -a "$attrs" -o "$rec" -- \
		"$gen" -s -t "$scale" "$top_srcdir/monitor/configs/$config" >"$rec.out" 2>"$rec.err" &
	recpid=$!
	wss_observe "$recpid" >"$rec.smaps" &
	obspid=$!
	status=0
	wait "$recpid" || status=$?
	wait "$obspid"
	if [ "$status" != 0 ]; then
		if grep -q "self-test" "$rec.err"; then
			echo "SKIP: refs backend does not work here: $(cat "$rec.err")"
			exit 77
		fi
		cat "$rec.out" "$rec.err"
		exit 1
	fi
	cat "$rec.out" "$rec.err"
	stall_ms=$(sed -n 's/.*longest_stall_ms \([0-9.]*\).*/\1/p' "$rec.out")
	[ -n "$stall_ms" ] || { echo "FAIL: accessgen -s printed no longest_stall_ms"; exit 1; }
	# the last read may catch the target as it exits
	smaps_reads=$(($(wc -l <"$rec.smaps") - 1))
	[ "$smaps_reads" -ge 5 ] || { echo "FAIL: only $smaps_reads reads of the target's smaps"; exit 1; }
	# the reads under LO MiB, and their median, in one pass
	read -r smaps_low smaps_p50 <<-EOF
	$(head -n "$smaps_reads" "$rec.smaps" | sort -n |
		awk -v lo="$lo" '{ v[NR] = $1; if ($1 < lo * 1024) n++ } END { print n + 0, v[int((NR + 1) / 2)] + 0 }')
	EOF
	echo "# smaps apart from the monitor: largest mapping's Referenced under $lo MiB in $smaps_low of $smaps_reads reads"
	"$ctl" report wss --min-accesses "$min" "$rec"
	p50=$("$ctl" report wss --json --min-accesses "$min" "$rec" |
		sed -n 's/^ *"p50": *\([0-9]*\).*/\1/p')
	[ -n "$p50" ] || { echo "FAIL: no p50 in the JSON report"; exit 1; }
	mib=$((p50 / 1048576))
	if [ "$p50" -ge $((lo * 1048576)) ] && [ "$p50" -le $((hi * 1048576)) ]; then
		echo "PASS: $config median working set $p50 bytes (~$mib MiB) within $lo..$hi MiB"
		return 0
	fi
	why="median working set $p50 bytes (~$mib MiB), want $lo..$hi MiB"
	why="$why (the target's longest stall: $stall_ms ms; smaps under $lo MiB referenced"
	why="$why in $smaps_low of $smaps_reads reads)"
	echo "# $config: $why"
	# each snapshot's working set, and each smaps read, for whoever reads the log
	"$ctl" report raw "$rec" | awk -v min="$min" '
		/^snapshot/ { if (n++) l = l sprintf(" %.1f", w / 1048576); w = 0 }
		/nr_accesses/ { if ($4 >= min) w += $2 }
		END { if (n) printf "# each snapshot (MiB):%s %.1f\n", l, w / 1048576 }'
	awk '{ l = l sprintf(" %.1f", $1 / 1024) } END { print "# each smaps read, largest Referenced (MiB):" l }' "$rec.smaps"
	return 1
}
