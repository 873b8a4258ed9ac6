#!/bin/sh
# memregctl energy passes SIGTERM, SIGHUP and SIGINT on to its command, waits for it,
# reports, and exits with the command's status; its exit status otherwise (126,
# 127, 128+N, the command's own). No timing assertion: every wait is bounded by
# WAIT_S seconds only so that a broken build fails instead of hanging.
. "$top_srcdir/tests/power/lib.sh"
M=$(fixture energy-intel-2s)
WAIT_S=30

# wait_file FILE: 0 once FILE is not empty, 1 after WAIT_S seconds.
wait_file() {
	i=0
	while [ ! -s "$1" ]; do
		i=$((i + 1))
		[ "$i" -gt $((WAIT_S * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

# forwarded SIG STATUS [LAUNCHER...]: energy runs a command that records its pid and
# sleeps; SIG to energy alone must end the command, and energy must then exit STATUS
# with a report. LAUNCHER (e.g. env --default-signal=INT) runs energy.
forwarded() {
	sig=$1 want=$2
	shift 2
	d=$tmp/$sig
	mkdir "$d"
	# The subshell reports energy's pid and, once it ends, its exit status.
	( "$@" "$MEMREGCTL" energy --root "$M" -o "$d/report" -- \
		sh -c 'echo $$ > "$0"; exec sleep 1000' "$d/cmd" &
	  echo $! > "$d/energy"; wait $!; echo $? > "$d/status" ) &
	# energy's pid is written by the subshell after it started energy, which may be
	# after the command wrote its own (a loaded CI run read an empty file and sent
	# the signal nowhere): wait for both.
	if ! wait_file "$d/cmd" || ! wait_file "$d/energy"; then
		fail "$sig: the command did not start within $WAIT_S s"
		return
	fi
	cmd=$(cat "$d/cmd")
	kill "-$sig" "$(cat "$d/energy")"
	if ! wait_file "$d/status"; then
		fail "$sig: energy still running $WAIT_S s after SIG$sig: the command was not told"
		kill "$cmd" 2> /dev/null
		wait_file "$d/status"
		return
	fi
	if kill -0 "$cmd" 2> /dev/null; then
		fail "$sig: the command (pid $cmd) still runs after energy ended: orphaned"
		kill "$cmd"
	else
		pass "$sig: the command is gone"
	fi
	expect_eq "$sig: energy's exit status" "$want" "$(cat "$d/status")"
	expect_grep "$sig: report with the command's status" "^command   sh ... exit $want$" "$d/report"
	expect_grep "$sig: report says the signal was passed on" \
		"^note: SIG$sig sent to memregctl was passed on to the command$" "$d/report"
}
forwarded TERM 143
# Under nohup (a CI started that way) SIGHUP arrives ignored, and energy leaves it so,
# as nohup wants: give energy the default disposition for the HUP case.
if env --default-signal=HUP true 2> /dev/null; then
	forwarded HUP 129 env --default-signal=HUP
else
	forwarded HUP 129
fi
# A shell starts background jobs with SIGINT ignored (then energy leaves it so, as
# nohup wants): give energy the default disposition.
if env --default-signal=INT true 2> /dev/null; then
	forwarded INT 130 env --default-signal=INT
else
	echo "note: env has no --default-signal (coreutils < 8.31): SIGINT not tested"
fi

# Exit statuses: the command's own, 128+N for signal N, 127 not found, 126 not
# runnable; 1 when memregctl fails before the command starts, 2 usage.
status() { # WHAT EXPECTED ARGS...
	what=$1 want=$2
	shift 2
	"$MEMREGCTL" energy --root "$M" "$@" > /dev/null 2>&1
	expect_eq "exit status, $what" "$want" $?
}
printf '#!/bin/sh\n' > "$tmp/not-executable"
chmod a-x "$tmp/not-executable"
status "command's own" 7 -- sh -c 'exit 7'
status "killed by SIGKILL" 137 -- sh -c 'kill -KILL $$'
status "not found" 127 -- no-such-command-xyz
status "not executable" 126 -- "$tmp/not-executable"
status "source not usable" 1 --source bogus -- true
status "usage" 2
finish
