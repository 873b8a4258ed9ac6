#!/bin/sh
# Sanitizer builds of the allocator's tests (`make check-alloc-sanitizers`, not part of
# `make check`): the unit tests under UBSan and ASan, and the stress programs with the
# allocator compiled in under mrz_* names (calling its entry points directly, not by
# preload) under UBSan, ASan and TSan, fork-init under UBSan and ASan. Prints one
# line per run; exit 1 on any failure.
# Usage: sanitize.sh SRCDIR BUILDDIR (MR_FUZZ_RENAME, MR_ALLOC_CORE_SRCS and CLANG in
# the environment, from allocator/local.mk)
src=${1:?srcdir}
build=${2:?builddir}
out="$build/tests/alloc/sanitize"
mkdir -p "$out"
CC=${CLANG:-clang}
# From allocator/local.mk (the make rule passes them), so the lists cannot drift.
RENAME=${MR_FUZZ_RENAME:?run by make check-alloc-sanitizers}
CORE=${MR_ALLOC_CORE_SRCS:?run by make check-alloc-sanitizers}
INC="-I$build -I$src -I$src/include -DHAVE_CONFIG_H"
CMOCKA=$(pkg-config --cflags --libs cmocka)
status=0

run() {
	name=$1
	shift
	if "$@" >"$out/$name.log" 2>&1; then
		echo "ok: $name"
	else
		echo "FAIL: $name (log: $out/$name.log)"
		tail -20 "$out/$name.log"
		status=1
	fi
}

for san in undefined address; do
	flags="-g -O1 -fsanitize=$san -fno-sanitize-recover=all -fno-omit-frame-pointer"
	for t in buddy sizeclass options os; do
		case $t in buddy) extra="$src/allocator/buddy.c $src/allocator/sizeclass.c" ;; sizeclass) extra=$src/allocator/sizeclass.c ;;
			options) extra="$src/allocator/options.c $src/allocator/fmt.c" ;;
			os) extra="$src/allocator/os.c $src/allocator/options.c $src/allocator/fmt.c" ;; esac
		# shellcheck disable=SC2086 # $extra: one to three paths
		$CC $flags $INC -o "$out/test-$t-$san" "$src/tests/alloc/test-$t.c" $extra $CMOCKA ||
			{ echo "FAIL: build test-$t-$san"; status=1; continue; }
		run "test-$t-$san" "$out/test-$t-$san"
	done
done
for san in undefined address thread; do
	flags="-g -O1 -fsanitize=$san -fno-omit-frame-pointer"
	[ $san = undefined ] && flags="$flags -fno-sanitize-recover=all"
	srcs=""
	for f in $CORE; do srcs="$srcs $src/$f"; done
	# shellcheck disable=SC2086
	$CC $flags $INC $RENAME -o "$out/stress-$san" "$src/tests/alloc/stress.c" $srcs -lpthread -ldl ||
		{ echo "FAIL: build stress-$san"; status=1; continue; }
	modes="xthread churn fork realloc align calloc huge"
	# TSan cannot fork with threads running, nor map the 1 TiB arena next to its shadow.
	[ $san = thread ] && modes="xthread churn realloc"
	for m in $modes; do
		run "stress-$m-$san" env TSAN_OPTIONS=halt_on_error=1 ASAN_OPTIONS=detect_leaks=0 \
			"$out/stress-$san" "$m"
	done
	# fork while the second thread sets the allocator up (mmap wrapped to stage it)
	[ $san = thread ] && continue
	# shellcheck disable=SC2086
	$CC $flags $INC $RENAME -Wl,--wrap=mmap -o "$out/fork-init-$san" "$src/tests/alloc/fork-init.c" \
		$srcs -lpthread -ldl || { echo "FAIL: build fork-init-$san"; status=1; continue; }
	run "fork-init-$san" env ASAN_OPTIONS=detect_leaks=0 "$out/fork-init-$san"
done
exit $status
