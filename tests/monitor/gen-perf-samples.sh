#!/bin/sh
# Writes tests/monitor/perf-samples.hex: a perf ring-buffer excerpt as the kernel
# lays it out (struct perf_event_header, then the fields the sample type selects,
# little-endian), one record a line in hex with a comment. Regenerate with
#   sh tests/monitor/gen-perf-samples.sh >tests/monitor/perf-samples.hex
# sample_type = IP|TID|TIME|ADDR|WEIGHT|DATA_SRC (0xc00f), what the perf backend asks.
le() {	# le BYTES VALUE: VALUE as BYTES little-endian bytes, in hex
	n=$1 v=$2 i=0
	while [ $i -lt "$n" ]; do
		printf '%02x' $(( (v >> (8 * i)) & 255 ))
		i=$((i + 1))
	done
}
hdr() { le 4 "$1"; le 2 "$2"; le 2 "$3"; }	# type misc size
sample() {	# ip pid tid time addr weight data_src
	hdr 9 2 56; le 8 "$1"; le 4 "$2"; le 4 "$3"; le 8 "$4"; le 8 "$5"; le 8 "$6"; le 8 "$7"
}
echo "# perf records, sample_type 0xc00f; one record a line (hex), '#' comments"
echo "# SAMPLE ip 0x401000 pid 100 tid 101 time 1000 addr 0x7f0000001040 weight 250 data_src 0x68100142"
sample 0x401000 100 101 1000 0x7f0000001040 250 0x68100142; echo
echo "# MMAP2-like record of another type (10), 24 bytes of payload: skipped"
hdr 10 0 32; le 8 1; le 8 2; le 8 3; echo
echo "# LOST: id 7, 3 samples lost"
hdr 2 0 24; le 8 7; le 8 3; echo
echo "# SAMPLE ip 0x401004 pid 100 tid 102 time 2000 addr 0x7f0000203000 weight 31 data_src 0x1"
sample 0x401004 100 102 2000 0x7f0000203000 31 0x1; echo
echo "# SAMPLE ip 0x401008 pid 100 tid 101 time 3000 addr 0x5500000010 weight 900 data_src 0x2"
sample 0x401008 100 101 3000 0x5500000010 900 0x2; echo
