#!/bin/sh
# Write the binary parts of the energy fixture machines into a copy of them:
# /dev/cpu/N/msr files (read with pread at the MSR number as offset) and SMBIOS
# type-17 memory devices. Text files are checked in under tests/fixtures/energy-*.
# usage: mkfixtures.sh FIXTURE_COPY_DIR
#        mkfixtures.sh --msr FILE MSR VALUE   (set one MSR in an msr file)
#        mkfixtures.sh --dimm FIXTURE_COPY_DIR N SIZE_MB TOTAL_WIDTH DATA_WIDTH TYPE
#                     (add SMBIOS memory device 17-N; TYPE 26 DDR4, 34 DDR5)
set -eu

# le64 VALUE: 8 little-endian bytes as printf escapes.
le64() {
	v=$1; out=
	for i in 0 1 2 3 4 5 6 7; do
		out="$out$(printf '\\%03o' $((v & 255)))"
		v=$((v >> 8))
	done
	printf "$out"
}

# msr_write FILE MSR VALUE: put VALUE at offset MSR (the file grows as needed).
msr_write() {
	le64 "$3" | dd of="$1" bs=1 seek=$(($2)) conv=notrunc status=none
}

if [ "$1" = --msr ]; then
	msr_write "$2" "$3" "$4"
	exit 0
fi

# msr_file CPU [UNIT DRAM]: a file covering 0x606 and, with DRAM, 0x619.
msr_file() {
	mkdir -p "$dir/dev/cpu/$1"
	f="$dir/dev/cpu/$1/msr"
	: > "$f"
	msr_write "$f" 0x606 "$2"
	[ $# -ge 3 ] && msr_write "$f" 0x619 "$3"
	return 0
}

# dimm N SIZE_MB TOTAL_WIDTH DATA_WIDTH TYPE: SMBIOS 3.x type 17, 0x28 bytes.
dimm() {
	d="$dir/sys/firmware/dmi/entries/17-$1"
	mkdir -p "$d"
	b=$(printf '\\021\\050\\%03o\\000' $((0x20 + $1)))	# type 17, length 0x28, handle
	b="$b\\000\\020\\376\\377"				# array handle, error handle
	b="$b$(printf '\\%03o\\%03o\\%03o\\%03o' $(($3 & 255)) $(($3 >> 8)) $(($4 & 255)) $(($4 >> 8)))"
	b="$b$(printf '\\%03o\\%03o' $(($2 & 255)) $((($2 >> 8) & 255)))"	# size, MB
	b="$b\\011\\000\\001\\002$(printf '\\%03o' "$5")"	# form, set, locator, bank, type
	i=$((0x13)); while [ $i -lt $((0x28)) ]; do b="$b\\000"; i=$((i + 1)); done
	printf "$b" > "$d/raw"
}

if [ "$1" = --dimm ]; then
	dir=$2
	shift 2
	dimm "$@"
	exit 0
fi
dir=$1
name=$(basename "$dir")

case $name in
energy-intel-2s*)
	# Broadwell-EP (family 6 model 0x4f): RAPL_POWER_UNIT 0xa0e03 (2^-14 J), but
	# the DRAM domain counts in the fixed 15.3 uJ unit.
	msr_file 0 0xa0e03 0xffffff00
	msr_file 1 0xa0e03 0xffffff00
	msr_file 2 0xa0e03 1000
	msr_file 3 0xa0e03 1000
	for n in 0 1 2 3; do dimm $n 16384 72 64 26; done	# 4 x 16 GiB DDR4 ECC
	;;
energy-client*)
	# Kaby Lake client: no DRAM domain, MSR 0x619 beyond the file (read fails).
	msr_file 0 0xa0e03
	msr_file 1 0xa0e03
	;;
energy-amd*)
	# AMD: /dev/cpu/N/msr exists, but there is no DRAM energy MSR to read.
	msr_file 0 0
	msr_file 1 0
	;;
*)
	echo "mkfixtures.sh: unknown fixture $name" >&2
	exit 99
	;;
esac
