#!/bin/sh
# The host side of lab-export, without a boot: scripts/lab --decode on results-channel
# transcripts written here. A file that arrives whole is written to --out; a bad
# name, a short, garbled or corrupt transfer is a one-line error and writes nothing;
# frames inside a test's output are output, not files; the exit status says whether
# every file was whole. (The guest side and a real boot: regions/20-export.)
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
lab=$top/scripts/lab
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; [ ! -f "$t/err" ] || sed 's/^/  stderr: /' "$t/err"; exit 1; }
command -v base64 >/dev/null && command -v sha256sum >/dev/null ||
	{ echo "SKIP: base64 or sha256sum missing (coreutils)"; exit 77; }

sha() { sha256sum "$1" | cut -d ' ' -f 1; }
frame() { # NAME FILE: the frame /init sends for FILE
	echo "@@LAB file $1 $(stat -c %s "$2")"
	base64 "$2"
	echo "@@LAB endfile $1 $(sha "$2")"
}
decode() { # TRANSCRIPT: decode into $t/out; status in $rc, messages in $t/err
	rm -rf "$t/out"
	rc=0
	"$lab" --decode "$1" --out "$t/out" 2>"$t/err" || rc=$?
}
i=0
while [ $i -lt 256 ]; do f="$f\\$(printf %o $i)"; i=$((i + 1)); done
printf "$f$f$f@@LAB end x 1\n" >"$t/bytes"	# 782 bytes: base64 pads it
printf 'abc' >"$t/abc"
: >"$t/empty"

# Whole files, in order, between and after test blocks; a frame inside a block is
# output; CR LF line ends (a serial line) are taken.
{
	echo "@@LAB begin 10-a"
	echo "@@LAB file inside.bin 3"; echo "YWJj"; echo "@@LAB endfile inside.bin $(sha "$t/abc")"
	echo "@@LAB end 10-a 0"
	frame bytes.bin "$t/bytes"
	frame empty "$t/empty"
	echo "@@LAB begin 20-b"; echo "@@LAB end 20-b 0"
	frame a-b_c+1.txt "$t/abc" | sed 's/$/\r/'
	echo "@@LAB done"
} >"$t/good"
decode "$t/good"
[ "$rc" = 0 ] || fail "whole files: exit status $rc"
cmp -s "$t/bytes" "$t/out/bytes.bin" || fail "bytes.bin differs"
[ -f "$t/out/empty" ] && [ ! -s "$t/out/empty" ] || fail "empty did not arrive empty"
cmp -s "$t/abc" "$t/out/a-b_c+1.txt" || fail "a-b_c+1.txt differs"
[ ! -e "$t/out/inside.bin" ] || fail "a frame inside a test's output was taken as a file"
grep -qx "lab: exported $t/out/bytes.bin (782 bytes)" "$t/err" || fail "no 'exported' line for bytes.bin"
[ "$(grep -c '^lab: exported ' "$t/err")" -eq 3 ] || fail "not three 'exported' lines"
echo "ok: whole files decoded, a frame inside test output ignored"

# bad TRANSCRIPT-LINES MESSAGE-PATTERN WHAT: one bad file beside a good one: the good
# one arrives, the bad one is an error naming it, nothing else is written, exit 1.
bad() {
	{ frame good "$t/abc"; printf '%s\n' "$1"; } >"$t/bad"
	decode "$t/bad"
	[ "$rc" = 1 ] || fail "$3: exit status $rc, want 1"
	cmp -s "$t/abc" "$t/out/good" || fail "$3: the good file did not arrive"
	[ "$(ls -A "$t/out")" = good ] || fail "$3: wrote $(ls -A "$t/out" | tr '\n' ' ')"
	grep -q "^lab: error: exported file .*$2" "$t/err" || fail "$3: no error matching '$2'"
	[ "$(wc -l <"$t/err")" -eq 2 ] || fail "$3: not one line of error"
	echo "ok: $3: $(grep error "$t/err")"
}
A=$(sha "$t/abc")
bad "@@LAB file ../x 3
YWJj
@@LAB endfile ../x $A" "refused, not a plain file name" "a name with ../"
bad "@@LAB file .. 3
YWJj
@@LAB endfile .. $A" "refused" "the name .."
bad "@@LAB file .hidden 3
YWJj
@@LAB endfile .hidden $A" "refused" "a hidden name"
bad "@@LAB file a/b 3
YWJj
@@LAB endfile a/b $A" "refused" "a name with /"
bad "@@LAB file 3
YWJj
@@LAB endfile 3 $A" "garbled frame" "a frame without a name"
bad "@@LAB file x 3
YWJk
@@LAB endfile x $A" "SHA-256 " "a corrupt byte"
bad "@@LAB file x 4
YWJj
@@LAB endfile x $A" "3 bytes arrived, the guest sent 4" "a short file of the right checksum"
bad "@@LAB file x 3
YW*j
@@LAB endfile x $A" "non-base64 line" "a line that is not base64"
bad "@@LAB file x 3
YWJj
@@LAB endfile y $A" "garbled frame" "an end frame of another name"
bad "@@LAB file x 3
YWJj
@@LAB endfile x 12345" "bad size '3' or SHA-256 '12345'" "a malformed checksum"
bad "@@LAB file x 3
Y=Jj
@@LAB endfile x $A" "does not decode" "base64 that does not decode"
bad "@@LAB file x 3
YWJj" "cut short" "a transcript that ends inside a file"
bad "@@LAB file x 3
YWJj
@@LAB begin 30-c
@@LAB end 30-c 0" "cut short" "a test block inside a file"

# OUT/NAME a symbolic link: replaced, not followed.
mkdir -p "$t/out2"
ln -s "$t/victim" "$t/out2/abc"
frame abc "$t/abc" >"$t/link"
"$lab" --decode "$t/link" --out "$t/out2" 2>"$t/err" || fail "over a link: exit status $?"
[ ! -e "$t/victim" ] && [ ! -L "$t/out2/abc" ] && cmp -s "$t/abc" "$t/out2/abc" ||
	fail "a link at OUT/NAME was followed or kept"
echo "ok: a link at OUT/NAME is replaced, not followed"

# No frames: nothing written, said so, exit 0.
printf '@@LAB begin cmd\nhello\n@@LAB end cmd 0\n@@LAB done\n' >"$t/none"
decode "$t/none"
[ "$rc" = 0 ] && [ ! -e "$t/out" ] && grep -q 'no files exported' "$t/err" ||
	fail "no frames: status $rc, out $(ls "$t/out" 2>&1)"
echo "ok: a transcript without files"
