# bash completion for memregctl. The commands come from `memregctl help` and each
# command's options, their arguments and its subcommands from `memregctl help CMD`,
# read at completion time from the memregctl being completed, so they cannot drift
# from the code. Needs bash only (compgen), not the bash-completion package.

# _memregctl_options CTL CMD: one line per option of CMD's --help, "OPTION GROUP ARG":
# GROUP numbers the help line (-o and --output share one), ARG is empty for a flag;
# a short option takes the argument of its long form.
_memregctl_options()
{
	"$1" help "$2" 2>/dev/null | awk '
		/^[ \t]+-/ {
			sub(/^[ \t]+/, ""); sub(/  .*/, "")
			n = split($0, item, /, */)
			last = ""
			for (i = n; i >= 1; i--) {
				split(item[i], w, / +/)
				if (w[1] !~ /^-/)
					continue
				arg = (w[2] ~ /^[A-Z][A-Z0-9_-]*$/) ? w[2] : ""
				if (arg != "")
					last = arg
				else if (w[1] ~ /^-[^-]$/)
					arg = last
				print w[1], NR, arg
			}
		}'
}

# _memregctl_usage CTL CMD: from the usage lines of CMD's --help, "sub WORD" for each
# subcommand (memregctl report heatmap ...), "pos WORD" for each positional argument
# (PID, REGION, FILE, ...; not the argument of an option nor what follows --), and
# "val OPTION a|b|c" for an option whose usage spells out its values.
_memregctl_usage()
{
	"$1" help "$2" 2>/dev/null | awk '
		NR > 1 && !/^[ \t]/ { exit }
		{
			line = $0
			sub(/^Usage:/, "", line)
			# Brackets, parentheses and a lone | end an option with its argument:
			# "[--json] PID" is a flag, then a positional PID.
			gsub(/[][()]/, " ] ", line)
			gsub(/ \| /, " ] ", line)
			n = split(line, t, / +/)
			split("", w)
			k = 0
			for (i = 1; i <= n; i++)
				if (t[i] != "")
					w[++k] = t[i]
			i = 1
			if (w[1] == "memregctl") {
				i = 3
				if (w[3] ~ /^[a-z][a-z0-9-]*$/) {
					print "sub", w[3]
					i = 4
				}
			}
			for (; i <= k; i++) {
				if (w[i] == "--")
					break
				if (w[i] ~ /^-/) {
					if (w[i + 1] ~ /^[a-z0-9]+(\|[a-z0-9]+)+$/)
						print "val", w[i], w[i + 1]
					if (w[i + 1] ~ /^[A-Z]/ || w[i + 1] ~ /\|/)
						i++
				} else if (w[i] ~ /^[A-Z][A-Z0-9_-]*$/ && w[i] != "OPTIONS") {
					print "pos", w[i]
				}
			}
		}'
}

# Region ids of the region map (under --root DIR / --mpst FILE when given).
_memregctl_regions()
{
	local ctl=$1 root=$2 mpst=$3
	"$ctl" regions ${root:+--root "$root"} ${mpst:+--mpst "$mpst"} --no-occupancy \
		2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }'
}

# Process ids, of the captured machine under --root DIR when given.
_memregctl_pids()
{
	local d
	for d in "${1%/}"/proc/[0-9]*; do
		[[ -d $d ]] && printf '%s\n' "${d##*/}"
	done
}

# Process names (for a name PATTERN), of the captured machine under --root DIR.
# Only names of plain characters: any process may set its name, and compgen -W
# expands $(...) in its word list.
_memregctl_comms()
{
	local f c
	for f in "${1%/}"/proc/[0-9]*/comm; do
		read -r c <"$f" 2>/dev/null && [[ $c =~ ^[A-Za-z0-9._+:@/-]+$ ]] &&
			printf '%s\n' "$c"
	done
}

# Complete the value of option OPT whose argument is named ARG.
_memregctl_value()
{
	local ctl=$1 cmd=$2 opt=$3 arg=$4 cur=$5 root=$6 mpst=$7 values=
	if [[ $opt == --backend || ( $cmd == record && $opt == -b ) ]]; then
		values="auto $("$ctl" help "$cmd" 2>/dev/null |
			awk '/^Backends/ { b = 1; next } b && /^  [a-z][a-z0-9]* \(/ { print $1 }')"
		COMPREPLY=($(compgen -W "$values" -- "$cur"))
		return
	fi
	# Values the usage spells out (-f svg|png|term), for any name of the option.
	local names
	names=$(_memregctl_options "$ctl" "$cmd" |
		awk -v o="$opt" '{ g[$1] = $2; n[$2] = n[$2] " " $1 } END { if (o in g) print n[g[o]] }')
	values=$(_memregctl_usage "$ctl" "$cmd" | awk -v names=" $names " '
		$1 == "val" && index(names, " " $2 " ") { gsub(/\|/, " ", $3); print $3 }')
	if [[ -n $values ]]; then
		COMPREPLY=($(compgen -W "$values" -- "$cur"))
		return
	fi
	case $arg in
	DIR)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$cur")) ;;
	PID)
		COMPREPLY=($(compgen -W "$(_memregctl_pids "$root")" -- "$cur")) ;;
	REGION)
		COMPREPLY=($(compgen -W "$(_memregctl_regions "$ctl" "$root" "$mpst")" -- "$cur")) ;;
	FILE | OUT | *FILE | SITEMAP | PROFILE | RECORD)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
}

_memregctl()
{
	local ctl=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev= opt
	local i w cmd= cmdi=0 dashdash=0 root=${MEMREG_ROOT:-} mpst= npos=0
	COMPREPLY=()
	[[ $ctl == "~/"* ]] && ctl=$HOME/${ctl#\~/}
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	# --opt=VALUE: bash splits it at '=' (COMP_WORDBREAKS).
	if [[ $cur == = ]]; then
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi

	# Global options, the command, then its words before the one being completed.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		[[ $w == = ]] && continue
		if [[ ${COMP_WORDS[i + 1]-} == = ]]; then
			# --opt = VALUE
			case $w in
			--root) root=${COMP_WORDS[i + 2]-} ;;
			--mpst) mpst=${COMP_WORDS[i + 2]-} ;;
			esac
			((i += 2))
			continue
		fi
		if [[ -z $cmd ]]; then
			case $w in
			--root) ((i++)); root=${COMP_WORDS[i]-} ;;
			-*) ;;
			*) cmd=$w; cmdi=$i ;;
			esac
			continue
		fi
		if [[ $w == -- ]]; then
			dashdash=$i
			break
		fi
		if [[ $w == -* ]]; then
			opt=$(_memregctl_options "$ctl" "$cmd" | awk -v o="$w" '$1 == o { print $3; exit }')
			if [[ -n $opt ]]; then
				((i++))
				case $w in
				--root) root=${COMP_WORDS[i]-} ;;
				--mpst) mpst=${COMP_WORDS[i]-} ;;
				esac
			fi
			continue
		fi
		((npos++))
	done

	if [[ -z $cmd ]]; then
		if [[ $prev == --root ]]; then
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -d -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$("$ctl" help 2>/dev/null |
				sed -n '1s/^Usage://p' | grep -o -e '--*[a-z][a-z-]*')" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$("$ctl" help 2>/dev/null |
				awk '/^Commands:/ { c = 1; next } c && /^$/ { exit } c && /^  [a-z]/ { print $1 }') help" -- "$cur"))
		fi
		return 0
	fi

	if [[ $cmd == help ]]; then
		((npos == 0)) && COMPREPLY=($(compgen -W "$("$ctl" help 2>/dev/null |
			awk '/^Commands:/ { c = 1; next } c && /^$/ { exit } c && /^  [a-z]/ { print $1 }')" -- "$cur"))
		return 0
	fi

	# After --: the command to run, then its arguments as files.
	if ((dashdash)); then
		if ((COMP_CWORD == dashdash + 1)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return 0
	fi

	# The value of an option that takes one.
	if [[ $prev == -* ]] && ((COMP_CWORD - 1 > cmdi)); then
		opt=$(_memregctl_options "$ctl" "$cmd" | awk -v o="$prev" '$1 == o { print $3; exit }')
		if [[ -n $opt ]]; then
			_memregctl_value "$ctl" "$cmd" "$prev" "$opt" "$cur" "$root" "$mpst"
			return 0
		fi
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_memregctl_options "$ctl" "$cmd" | awk '{ print $1 }')" -- "$cur"))
		return 0
	fi

	# Positional words: a subcommand first where the command has them, else by the
	# name the usage gives them.
	local usage subs kinds
	usage=$(_memregctl_usage "$ctl" "$cmd")
	subs=$(awk '$1 == "sub" { print $2 }' <<<"$usage")
	if [[ -n $subs ]] && ((npos == 0)); then
		COMPREPLY=($(compgen -W "$subs" -- "$cur"))
		return 0
	fi
	kinds=" $(awk '$1 == "pos" { print $2 }' <<<"$usage" | sort -u | tr '\n' ' ')"
	case $kinds in
	*" PID "*) _memregctl_value "$ctl" "$cmd" "" PID "$cur" "$root" "$mpst" ;;
	*" REGION "*) _memregctl_value "$ctl" "$cmd" "" REGION "$cur" "$root" "$mpst" ;;
	" ") ;;
	*) _memregctl_value "$ctl" "$cmd" "" FILE "$cur" "$root" "$mpst" ;;
	esac
	# where (PID | PATTERN): process names too
	[[ $kinds == *" PATTERN "* ]] &&
		COMPREPLY+=($(compgen -W "$(_memregctl_comms "$root" | sort -u)" -- "$cur"))
	return 0
}
complete -F _memregctl memregctl
