#!/bin/sh
# The manual pages against the code: every command `memregctl help` lists has a page
# man/memregctl-CMD.1.in whose OPTIONS section names exactly the options of its --help,
# memregctl(1) lists every command and the global options, and every page is a
# template whose one .TH style carries the version configure substitutes.
set -u
b=${top_builddir:-.}
s=${top_srcdir:-.}
ctl=$b/tools/memregctl
man=$s/man
[ -x "$ctl" ] || { echo "SKIP: $ctl not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Option tokens (-x, --long-name) of a text: one a line.
tokens() {
	awk '{
		n = split($0, w, /[^A-Za-z0-9_-]+/)
		for (i = 1; i <= n; i++)
			if (w[i] ~ /^--?[A-Za-z0-9][A-Za-z0-9-]*$/)
				print w[i]
	}'
}

# The options of a --help text: the first column (up to two spaces) of the lines
# that start with blanks and a dash.
help_options() {
	awk '/^[ \t]+-/ { sub(/^[ \t]+/, ""); sub(/  .*/, ""); print }' | tokens | sort -u
}

# The tag lines (after .TP, .TQ, or an .IP's arguments) of section SECTION of a page,
# roff escapes and fonts taken out.
man_tags() {
	awk -v want="$2" '
		/^\.SH/ { sec = $0; sub(/^\.SH[ \t]+/, "", sec); gsub(/"/, "", sec); tag = 0; next }
		sec != want { next }
		/^\.(TP|TQ)/ { tag = 1; next }
		/^\.IP/ { sub(/^\.IP[ \t]*/, ""); print; next }
		tag { print; tag = 0 }
	' "$1" | sed -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\-/-/g' -e 's/"/ /g'
}

man_options() { man_tags "$1" OPTIONS | tokens | sort -u; }

# compare WHAT_HELP HELP_FILE WHAT_MAN MAN_FILE: name each option one lists and the
# other does not.
compare() {
	comm -23 "$2" "$4" | while read -r o; do
		echo "FAIL: $3 OPTIONS lacks $o, which $1 lists"
	done >>"$tmp/fails"
	comm -13 "$2" "$4" | while read -r o; do
		echo "FAIL: $3 OPTIONS has $o, which $1 does not list"
	done >>"$tmp/fails"
}
: >"$tmp/fails"

"$ctl" help >"$tmp/help" 2>&1 || fail "memregctl help: exit $?"
awk '/^Commands:/ { c = 1; next } c && /^$/ { exit } c && /^  [a-z]/ { print $1 }' \
	"$tmp/help" >"$tmp/cmds"
[ -s "$tmp/cmds" ] || fail "memregctl help lists no commands: $(cat "$tmp/help")"

# memregctl(1): every command (plus `help`, which the list leaves out) and the
# global options of the usage line; long options only, as the usage line has no
# short ones.
top=$man/memregctl.1.in
if [ -f "$top" ]; then
	man_tags "$top" COMMANDS | awk '{ print $2 }' | sort -u >"$tmp/man-cmds"
	sort -u "$tmp/cmds" >"$tmp/cmds-sorted"
	comm -23 "$tmp/cmds-sorted" "$tmp/man-cmds" | while read -r c; do
		echo "FAIL: memregctl(1) COMMANDS lacks $c, which memregctl help lists"
	done >>"$tmp/fails"
	comm -13 "$tmp/cmds-sorted" "$tmp/man-cmds" | grep -vx help | while read -r c; do
		echo "FAIL: memregctl(1) COMMANDS has $c, which memregctl help does not list"
	done >>"$tmp/fails"
	sed -n '1s/^Usage://p' "$tmp/help" | tokens | grep -e '^--' | sort -u >"$tmp/h"
	man_options "$top" | grep -e '^--' | sort -u >"$tmp/m"
	compare "the usage line of memregctl help" "$tmp/h" "memregctl(1)" "$tmp/m"
else
	fail "no man page for memregctl (man/memregctl.1.in)"
fi

# Each command: `help CMD` and `CMD --help` agree, and the page matches them.
while read -r c; do
	"$ctl" help "$c" >"$tmp/help-$c" 2>&1 || fail "memregctl help $c: exit $?"
	"$ctl" "$c" --help >"$tmp/dash-$c" 2>&1 || fail "memregctl $c --help: exit $?"
	cmp -s "$tmp/help-$c" "$tmp/dash-$c" ||
		fail "memregctl help $c and memregctl $c --help differ"
	page=$man/memregctl-$c.1.in
	if [ ! -f "$page" ]; then
		fail "no man page for memregctl $c (man/memregctl-$c.1.in)"
		continue
	fi
	help_options <"$tmp/help-$c" >"$tmp/h"
	man_options "$page" >"$tmp/m"
	compare "memregctl $c --help" "$tmp/h" "memregctl-$c(1)" "$tmp/m"
done <"$tmp/cmds"

# record's backends (values of --backend): the Backends list of its --help against
# the one-word tags under --backend in memregctl-record(1).
if [ -f "$man/memregctl-record.1.in" ] && [ -f "$tmp/help-record" ]; then
	awk '/^Backends/ { b = 1; next } b && /^  [a-z][a-z0-9]* \(/ { print $1 }' \
		"$tmp/help-record" | sort -u >"$tmp/h"
	man_tags "$man/memregctl-record.1.in" OPTIONS |
		awk 'NF == 2 && $1 ~ /^\.B$/ && $2 ~ /^[a-z][a-z0-9]*$/ { print $2 }' | sort -u >"$tmp/m"
	comm -23 "$tmp/h" "$tmp/m" | while read -r o; do
		echo "FAIL: memregctl-record(1) lacks the backend $o, which memregctl record --help lists"
	done >>"$tmp/fails"
	comm -13 "$tmp/h" "$tmp/m" | while read -r o; do
		echo "FAIL: memregctl-record(1) has the backend $o, which memregctl record --help does not list"
	done >>"$tmp/fails"
fi

# The other program with options and a page.
gen=$b/monitor/memreg-accessgen
if [ -x "$gen" ] && [ -f "$man/memreg-accessgen.1.in" ]; then
	"$gen" --help 2>&1 | help_options >"$tmp/h"
	man_options "$man/memreg-accessgen.1.in" >"$tmp/m"
	compare "memreg-accessgen --help" "$tmp/h" "memreg-accessgen(1)" "$tmp/m"
fi

# One .TH style: every page is a template NAME.SECTION.in whose .TH make fills in
# with configure's version, and the built page carries the version memregctl prints.
version=$("$ctl" version | sed -n 's/^memregctl //p')
for f in "$man"/*; do
	name=${f##*/}
	case $name in
	*.[1-8].in) ;;
	*.[1-8]) fail "man/$name is not a template (man/$name.in): its .TH cannot carry the version"; continue ;;
	*) continue ;;
	esac
	page=${name%.in}
	sect=${page##*.}
	title=$(printf '%s\n' "${page%.*}" | tr a-z A-Z)
	want=".TH $title $sect \"@DATE@\" \"memreg @VERSION@\" \"memreg Manual\""
	got=$(grep -e '^\.TH' "$f")
	[ "$got" = "$want" ] || fail "man/$name: .TH is '$got', expected '$want'"
	if [ -f "$b/man/$page" ]; then
		got=$(grep -e '^\.TH' "$b/man/$page")
		case $got in
		".TH $title $sect \""[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"\" \"memreg $version\" \"memreg Manual\"") ;;
		*) fail "built man/$page: .TH is '$got', expected a date and version $version" ;;
		esac
		! grep -q -e '@[A-Z_]*@' "$b/man/$page" ||
			fail "built man/$page keeps a placeholder: $(grep -e '@[A-Z_]*@' "$b/man/$page")"
	else
		fail "man/$page is not built (is it in MR_MAN_PAGES, man/local.mk?)"
	fi
done

cat "$tmp/fails"
fails=$((fails + $(wc -l <"$tmp/fails")))
[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
exit 0
