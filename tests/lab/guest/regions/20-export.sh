#!/bin/sh
# lab-export carries files to the host whole: a file of every byte value (four times)
# followed by lines that read like the results channel's own frames, an empty file
# and memregctl regions --json; 20-export.host checks what arrived. lab-export
# refuses names that are not plain file names, and files it cannot read.
fail() { echo "FAIL: $*"; exit 1; }

command -v lab-export >/dev/null || fail "lab-export is not on PATH"
i=0 f=
while [ $i -lt 256 ]; do f="$f\\$(printf %o $i)"; i=$((i + 1)); done
for k in 1 2 3 4; do printf "$f"; done >/tmp/bytes.bin
printf '@@LAB end 20-export 1\n@@LAB done\n' >>/tmp/bytes.bin
[ "$(wc -c </tmp/bytes.bin)" -eq 1057 ] || fail "made $(wc -c </tmp/bytes.bin) bytes, not 1057"
: >/tmp/empty
memregctl regions --json >/tmp/regions.json || fail "memregctl regions --json"

lab-export /tmp/bytes.bin lab-export-bytes.bin || fail "lab-export bytes.bin"
lab-export /tmp/empty lab-export-empty || fail "lab-export an empty file"
lab-export /tmp/regions.json || fail "lab-export regions.json (named after the file)"

refused() { # what ARGS...: lab-export must exit 1 and export nothing
	what=$1; shift
	lab-export "$@" 2>/tmp/refused.err && fail "lab-export accepted $what"
	echo "refused $what: $(cat /tmp/refused.err)"
}
refused "a name with /" /tmp/empty a/b
refused "the name .." /tmp/empty ..
refused "a name ../x" /tmp/empty ../x
refused "a hidden name" /tmp/empty .x
refused "an empty name" /tmp/empty ''
refused "a name with a space" /tmp/empty 'a b'
refused "a missing file" /tmp/no-such-file
refused "a directory" /tmp no-dir
refused "a name already queued" /tmp/empty lab-export-empty
