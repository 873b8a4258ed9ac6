#!/bin/sh
# Sanitizer builds of the allocator's tests (`make check-alloc-sanitizers`, not part of
# `make check`): the unit tests under UBSan and ASan, and the stress programs with the
# allocator compiled in under mrz_* names (calling its entry points directly, not by
# preload) under UBSan, ASan and TSan. Prints one line per run; exit 1 on any failure.
# Usage: sanitize.sh SRCDIR BUILDDIR
src=${1:?srcdir}
build=${2:?builddir}
out="$build/tests/alloc/sanitize"
mkdir -p "$out"
CC=${CLANG:-clang}
RENAME="-DMR_NO_ALIASES -Dmalloc=mrz_malloc -Dfree=mrz_free -Dcalloc=mrz_calloc -Drealloc=mrz_realloc
	-Dreallocarray=mrz_reallocarray -Dposix_memalign=mrz_posix_memalign
	-Daligned_alloc=mrz_aligned_alloc -Dmemalign=mrz_memalign -Dvalloc=mrz_valloc
	-Dpvalloc=mrz_pvalloc -Dmalloc_usable_size=mrz_malloc_usable_size
	-Dmalloc_trim=mrz_malloc_trim -Dcfree=mrz_cfree -Dfree_sized=mrz_free_sized
	-Dfree_aligned_sized=mrz_free_aligned_sized"
CORE="buddy sizeclass options fmt alloc sites stats interpose"
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
	for t in buddy sizeclass options; do
		case $t in buddy) extra=$src/allocator/buddy.c ;; sizeclass) extra=$src/allocator/sizeclass.c ;;
			options) extra=$src/allocator/options.c ;; esac
		$CC $flags $INC -o "$out/test-$t-$san" "$src/tests/alloc/test-$t.c" "$extra" $CMOCKA ||
			{ echo "FAIL: build test-$t-$san"; status=1; continue; }
		run "test-$t-$san" "$out/test-$t-$san"
	done
done
for san in undefined address thread; do
	flags="-g -O1 -fsanitize=$san -fno-omit-frame-pointer"
	[ $san = undefined ] && flags="$flags -fno-sanitize-recover=all"
	srcs=""
	for f in $CORE; do srcs="$srcs $src/allocator/$f.c"; done
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
done
exit $status
