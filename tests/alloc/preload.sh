# Shared by the tests/alloc/*.sh tests: where libmemreg.so is, and a check that a
# program really ran with it (its stats line), so a test cannot pass without it.
: "${top_builddir:=.}"
MEMREG_LIB="$(cd "$top_builddir" && pwd)/.libs/libmemreg.so"
if [ ! -f "$MEMREG_LIB" ]; then
	echo "libmemreg.so not built at $MEMREG_LIB" >&2
	exit 99
fi

# fail MESSAGE...: say it on stderr; the test then ends with status 1 (exit $status).
status=0
fail() {
	echo "FAIL: $*" >&2
	status=1
}

# run_preloaded LOG CMD...: run CMD with libmemreg preloaded; its stderr goes to LOG.
# Returns CMD's status; fails if the allocator did not serve the program.
run_preloaded() {
	log=$1
	shift
	LD_PRELOAD="$MEMREG_LIB" MEMREG_SHOW_STATS=1 "$@" 2>"$log"
	rc=$?
	if ! grep -q '^libmemreg: stats of pid' "$log"; then
		echo "FAIL: libmemreg did not run in: $*" >&2
		return 98
	fi
	return $rc
}
