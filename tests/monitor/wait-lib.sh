# The record tests' waits (record-cli.sh, record-cgroup.sh): for what they check,
# never for a fixed time, each bounded at 120 s so that a slow machine only waits
# longer. The sourcing test defines fail().

# wait_until WHAT PID LOG CMD...: until CMD succeeds; fails (LOG shown) if PID, the
# record, ends first or after 120 s.
wait_until() {
	wu_what=$1 wu_pid=$2 wu_log=$3 wu_i=0
	shift 3
	until "$@"; do
		kill -0 "$wu_pid" 2>/dev/null || { cat "$wu_log"; fail "record ended before $wu_what"; }
		wu_i=$((wu_i + 1))
		[ $wu_i -lt 1200 ] || { cat "$wu_log"; fail "no $wu_what in 120 s"; }
		sleep 0.1
	done
}

# wait_gone PID LOG WHAT: until PID has exited; fails (LOG shown) after 120 s.
wait_gone() {
	wg_i=0
	while kill -0 "$1" 2>/dev/null; do
		wg_i=$((wg_i + 1))
		[ $wg_i -lt 1200 ] || { cat "$2"; fail "$3 still running 120 s after SIGINT"; }
		sleep 0.1
	done
}
