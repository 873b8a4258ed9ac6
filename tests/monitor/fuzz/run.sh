#!/bin/sh
# Build the record-reader fuzz target with clang's libFuzzer (+ASan/UBSan) and run
# it: tests/monitor/fuzz/run.sh [SECONDS] (default 600). Needs a configured build/.
set -eu
top=$(cd "$(dirname "$0")/../../.." && pwd)
secs=${1:-600}
out=${FUZZ_OUT:-$top/build/fuzz-record}
mkdir -p "$out/corpus"
srcs="$top/monitor/record.c $top/common/util.c $top/common/sys.c $top/common/root.c $top/common/proc.c"
flags="-g -O1 -I$top -I$top/build -include $top/build/config.h"
fz="-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
clang $flags $fz -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-o "$out/fuzz-record" "$top/tests/monitor/fuzz/fuzz-record.c" $srcs -lz
clang $flags -o "$out/gen-seeds" "$top/tests/monitor/fuzz/gen-seeds.c" $srcs -lz
"$out/gen-seeds" "$out/corpus"
cp "$top/tests/monitor/record-v1.rec" "$out/corpus/v1"
cd "$out"
exec ./fuzz-record -max_total_time="$secs" -max_len=4096 -print_final_stats=1 corpus
