#!/bin/sh
# memregctl plan and evacuate on a copy of cxl-cpuless (region 1 = node 1, Movable,
# 1 GiB to move; a boot id added): the plan file, the dry run, the refusals (another
# boot, another version, a running memregd's region, --apply under a fixture root)
# and --undo's dry run. Nothing here changes the kernel: the root is a fixture.
set -u
b=${top_builddir:-.}
ctl=$b/tools/memregctl
fix=$b/tests/fixtures/cxl-cpuless
[ -d "$fix/sys/devices/system/memory" ] || { echo "SKIP: fixture $fix not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset MEMREG_STATE_DIR
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
nl='
'
expect() {
	want=$1 want_out=$2 want_err=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	shift
	set -- memregctl "$@"
	if [ "$got" -ne "$want" ]; then
		fail "$*: exit $got, expected $want: $(cat "$tmp/out" "$tmp/err")"
	elif [ "$(cat "$tmp/out")" != "$want_out" ]; then
		fail "$*: stdout is:$nl$(cat "$tmp/out")${nl}expected:$nl$want_out"
	elif [ "$(cat "$tmp/err")" != "$want_err" ]; then
		fail "$*: stderr is:$nl$(cat "$tmp/err")${nl}expected:$nl$want_err"
	else
		echo "ok: $*: exit $got"
	fi
}
root=$tmp/cxl
cp -R "$fix" "$root"
mkdir -p "$root/proc/sys/kernel/random"
boot=11111111-2222-3333-4444-555555555555
echo $boot >"$root/proc/sys/kernel/random/boot_id"
snap() { find "$root/sys" -type f -exec cat {} + | cksum; }
before=$(snap)

"$ctl" plan --root "$root" --regions 1 --move-rate 256M -o "$tmp/p.plan" >"$tmp/out" 2>&1 ||
	fail "plan: $(cat "$tmp/out")"
id=$(sed -n 's/^  "id":"\([0-9a-f]*\)",$/\1/p' "$tmp/p.plan")
[ -n "$id" ] || fail "no id in the plan: $(head -5 "$tmp/p.plan")"
grep -q '"version":2,' "$tmp/p.plan" || fail "no version 2 in the plan"
grep -q "^selected regions, in evacuation order: 1$" "$tmp/out" || fail "plan output: $(cat "$tmp/out")"

dry="plan $id: 1 region, dry run (nothing changes without --apply)${nl}region 1 (node 1): would offline 32 blocks, moving 1 GiB, about 4.0 s"
expect 0 "$dry" "" "$ctl" evacuate "$tmp/p.plan" --root "$root"
expect 1 "" "memregctl: refusing to evacuate memory under fixture root $root" \
	"$ctl" evacuate "$tmp/p.plan" --root "$root" --apply
expect 0 "plan $id: would bring back 0 blocks:${nl}nothing changed: pass --apply to do it" "" \
	"$ctl" evacuate --undo "$tmp/p.plan" --root "$root"

# memregd acts on region 1: refused while its pid lives in this boot. The status file
# is written by the controller's own writer (control --status-file, a replayed run
# whose migrate_cold targets node 1, so region 1 is targeted); only its pid is then
# made a live one of the fixture (4242), the rest is as the writer wrote it.
mkdir -p "$root/run/memreg" "$root/proc/4242"
echo "4242 (memregd) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 100 0 0" >"$root/proc/4242/stat"
"$b/tests/controller/mk-ctl-record" "$tmp/ctl.rec" || fail "mk-ctl-record"
"$ctl" control --root "$root" --replay "$tmp/ctl.rec" --scheme '4K max 0 0 30s max migrate_cold 1' \
	--status-file "$tmp/st.json" >/dev/null || fail "control --status-file"
python3 - "$tmp/st.json" "$root/run/memreg/memregd.status" "$boot" <<'PY' || fail "the status file"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["boot_id"] == sys.argv[3] and 1 in j["targeted_regions"], j
j["pid"], j["running"] = 4242, True	# as it reads while memregd runs
json.dump(j, open(sys.argv[2], "w"))
PY
expect 1 "" "memregctl: region 1 is one memregd (pid 4242) acts on (/run/memreg/memregd.status): refusing to evacuate it; stop memregd or drop the region from its configuration" \
	"$ctl" evacuate "$tmp/p.plan" --root "$root"
# an earlier boot's file, a run that ended, garbage: not a running memregd (or said)
sed 's/"boot_id": *"[^"]*"/"boot_id":"0-earlier"/' "$root/run/memreg/memregd.status" >"$tmp/s2"
cp "$tmp/s2" "$root/run/memreg/memregd.status"
expect 0 "$dry" "" "$ctl" evacuate "$tmp/p.plan" --root "$root"
python3 -c "import json,sys; j=json.load(open('$tmp/st.json')); j['pid']=4242; json.dump(j, open('$root/run/memreg/memregd.status','w'))"
expect 0 "$dry" "" "$ctl" evacuate "$tmp/p.plan" --root "$root"
echo 'pid=4242' >"$root/run/memreg/memregd.status"
expect 1 "" "memregctl: /run/memreg/memregd.status: not memregd's status (JSON): remove it if no memregd runs" \
	"$ctl" evacuate "$tmp/p.plan" --root "$root"
rm -r "$root/run/memreg" "$root/proc/4242"

# Another boot; another version.
echo 99999999-2222-3333-4444-555555555555 >"$root/proc/sys/kernel/random/boot_id"
expect 1 "" "memregctl: plan $id was made for boot $boot, this machine runs boot 99999999-2222-3333-4444-555555555555: make a new plan" \
	"$ctl" evacuate "$tmp/p.plan" --root "$root"
echo $boot >"$root/proc/sys/kernel/random/boot_id"
sed 's/"version":2,/"version":3,/' "$tmp/p.plan" >"$tmp/v3.plan"
expect 1 "" "memregctl: $tmp/v3.plan: plan format version 3, this memregctl reads versions 1 to 2: make the plan again" \
	"$ctl" evacuate "$tmp/v3.plan" --root "$root"
# A block changed since the plan.
echo offline >"$root/sys/devices/system/memory/memory130/state"
expect 1 "" "memregctl: plan $id: memory130 of region 1 was online (Movable) when planned and is offline (Movable) now: make a new plan" \
	"$ctl" evacuate "$tmp/p.plan" --root "$root"
echo online >"$root/sys/devices/system/memory/memory130/state"

[ "$(snap)" = "$before" ] || fail "the fixture copy's /sys changed"
[ ! -e "$root/usr" ] && [ ! -e "$root/var" ] || fail "a state file was written under the root"
[ "$fails" -eq 0 ]
