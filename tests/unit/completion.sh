#!/bin/sh
# The bash completion of memregctl (completion/memregctl.bash), sourced in a bash
# without the bash-completion package: commands, options, subcommands, option values,
# region ids of a fixture machine, pids, files, and the command after --.
set -u
b=${top_builddir:-.}
s=$(cd "${top_srcdir:-.}" && pwd)
ctl=$(cd "$b/tools" && pwd)/memregctl
script=$s/completion/memregctl.bash
fix=$b/tests/fixtures/cxl-cpuless
command -v bash >/dev/null || { echo "SKIP: no bash"; exit 77; }
[ -x "$ctl" ] || { echo "SKIP: $ctl not built"; exit 77; }
[ -d "$fix/sys/devices/system/memory" ] || { echo "SKIP: fixture $fix not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# complete WORD...: what the completion offers for the last word (the words as bash
# splits them: --opt=VALUE is "--opt" "=" "VALUE"), sorted, one line, blank-separated.
complete() {
	bash --norc --noprofile -c '
		. "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_memregctl memregctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort -u | tr "\n" " "
	' complete "$script" "$ctl" "$@" 2>"$tmp/err"
	[ ! -s "$tmp/err" ] || echo "stderr: $(cat "$tmp/err")"
}
# expect "WANT" WORD...: exactly these completions.
expect() {
	want=$1
	shift
	got=$(complete "$@")
	[ "$got" = "$want" ] || fail "memregctl $*<TAB>: got '$got', expected '$want'"
}
# has WORD-EXPECTED WORD...: this completion among others.
has() {
	want=$1
	shift
	got=" $(complete "$@")"
	case $got in *" $want "*) ;; *) fail "memregctl $*<TAB>: no '$want' in '$got'" ;; esac
}

expect "record regions report " re
expect "--json " regions --j
expect "--replay " record --re
expect "help " hel
expect "--help --root --version " --
expect "record regions report " help re
expect "heatmap raw regions wss " report ""
expect "png svg term " report heatmap -f ""
expect "svg " report heatmap --format s
expect "--min-accesses " report wss --min
expect "--restore --root " online --r
# Backends: auto and each one record --help lists.
backends=$("$ctl" record --help | awk '/^Backends/ { b = 1; next } b && /^  [a-z][a-z0-9]* \(/ { print $1 }' |
	LC_ALL=C sort | tr '\n' ' ')
expect "$(printf 'auto %s' "$backends" | tr ' ' '\n' | grep . | LC_ALL=C sort | tr '\n' ' ')" record -b ""
expect "softdirty " record --backend = so
# Region ids of the fixture: through --root after the command, before it, and as --root=DIR.
expect "0 1 " offline --root "$fix" ""
expect "0 1 " --root "$fix" online ""
expect "0 1 " --root = "$fix" move 1 --to ""
# Files, directories, pids, the command after --.
mkdir "$tmp/dir"
: >"$tmp/a.rec"
: >"$tmp/a.txt"
expect "$tmp/a.rec $tmp/a.txt " record -o "$tmp/a"
expect "$tmp/a.rec $tmp/a.txt " report raw "$tmp/a"
expect "$tmp/dir " --root "$tmp/"
has "$$" where ""
has "$$" alloc-stats ""
# where takes a name pattern too: this shell's name.
has "$(cat /proc/$$/comm)" where ""
has true energy -- tru
expect "$tmp/a.rec $tmp/a.txt " energy -- true "$tmp/a"
expect "" record --duration ""

# Any process may name itself anything: a name that is shell code must not be run by
# compgen -W, which expands its word list (a child of ours, named through its own
# /proc/PID/comm).
bash -c 'printf "%s" "\$(>pwned)" >/proc/$$/comm; sleep 60; :' &
evil=$!
i=0
while [ "$(cat "/proc/$evil/comm" 2>/dev/null)" != '$(>pwned)' ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ "$(cat "/proc/$evil/comm")" = '$(>pwned)' ]; then
	(cd "$tmp" && complete where "") >/dev/null
	[ ! -e "$tmp/pwned" ] || fail "memregctl where <TAB> ran a process name as shell code"
else
	fail "could not name a child process '\$(>pwned)'"
fi
kill "$evil"

[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
exit 0
