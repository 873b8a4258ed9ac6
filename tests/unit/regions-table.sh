#!/bin/sh
# memregctl regions' table against its own JSON, on the fixture machines: one unit per
# size column (named in its header), every cell the JSON's bytes in it to two decimals
# ("<0.01" for a small non-zero), a total row that adds the rows up, -z leaving
# out exactly the regions that hold nothing, power as "600 mW" and latency as "750 ns".
set -u
b=${top_builddir:-.}
ctl=$b/tools/memregctl
fix=$b/tests/fixtures
[ -d "$fix/vm-1node/sys" ] || { echo "SKIP: fixtures not built under $fix"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 needed to read the JSON"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

for m in vm-1node server-2s-mpst cxl-cpuless; do
	for z in "" -z; do
		"$ctl" regions --root "$fix/$m" $z >"$tmp/table" 2>"$tmp/err" ||
			{ echo "FAIL: $m regions $z: $(cat "$tmp/err")"; fails=$((fails + 1)); continue; }
		"$ctl" regions --root "$fix/$m" --json >"$tmp/json" 2>"$tmp/err" ||
			{ echo "FAIL: $m regions --json: $(cat "$tmp/err")"; fails=$((fails + 1)); continue; }
		python3 - "$tmp/table" "$tmp/json" "$m" "$z" <<'PY' || fails=$((fails + 1))
import json, re, sys
table, doc, machine, z = open(sys.argv[1]).read().splitlines(), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
bad = []
head = next(l for l in table if l.lstrip().startswith("ID "))
cols = re.findall(r"(SIZE|FREE|MOVABLE|UNMOVABLE) \((\w+)\)", head)
if [c for c, _ in cols] != ["SIZE", "FREE", "MOVABLE", "UNMOVABLE"]:
    bad.append("header names no unit per size column: " + head)
unit = {c: units[u] for c, u in cols}
regions = doc["regions"]
keys = {"SIZE": lambda r: r["size"], "FREE": lambda r: r["occupancy"]["free_bytes"],
        "MOVABLE": lambda r: r["occupancy"]["movable_bytes"],
        "UNMOVABLE": lambda r: r["occupancy"]["unmovable_bytes"]}
# the unit is the largest one in which the column's largest row is at least 1
for c, f in keys.items():
    m = max(f(r) for r in regions)
    want = max([u for u in units.values() if m >= u] or [1])
    if unit[c] != want:
        bad.append(f"{c}: unit {unit[c]}, the largest row ({m} B) wants {want}")
def row(l):
    return re.match(r"^ *(\d+)  ", l)
rows = {int(row(l).group(1)): l for l in table if row(l)}
empty = {r["id"] for r in regions if r["occupancy"]["granularity"] != "none"
         and r["occupancy"]["movable_bytes"] == 0 and r["occupancy"]["unmovable_bytes"] == 0}
shown = {r["id"] for r in regions} - (empty if z else set())
if set(rows) != shown:
    bad.append(f"rows {sorted(rows)}, want {sorted(shown)}")
hidden = [l for l in table if "holding nothing not shown (-z)" in l]
if z and empty and not hidden or (not z or not empty) and hidden:
    bad.append(f"-z line {hidden} with {len(empty)} empty regions")
total = next((l for l in table if l.startswith("total ")), None)
if total is None:
    bad.append("no total row")
else:
    nums = [float(x) for x in total.split()[1:]]
    for (c, f), got in zip(keys.items(), nums):
        want = round(sum(f(r) for r in regions) / unit[c], 2)
        if abs(got - want) > 0.005 + 1e-9:
            bad.append(f"total {c}: {got}, rows of the JSON add up to {want}")
def cell(v, u):
    return str(v) if u == 1 else ("<0.01" if v and v / u < 0.005 else f"{v / u:.2f}")
for r in regions:
    if r["id"] not in rows:
        continue
    cells = rows[r["id"]].split()
    # ID RANGE SIZE NODE ...; FREE MOVABLE UNMOVABLE are the last three
    want = [cell(keys["SIZE"](r), unit["SIZE"])] + [cell(keys[c](r), unit[c]) for c in
                                                   ("FREE", "MOVABLE", "UNMOVABLE")]
    got = [cells[2]] + cells[-3:]
    if r["occupancy"]["granularity"] != "none" and got != want:
        bad.append(f"region {r['id']}: cells {got}, JSON gives {want}")
    for s in r["power_states"]:
        if s["has_characteristics"]:
            want = f'{s["state"]} {s["average_power_mw"]} mW {s["exit_latency_ns"]} ns'
            if want not in "\n".join(table):
                bad.append(f"region {r['id']}: no '{want}'")
for b in bad:
    print(f"FAIL: {machine} regions {z}: {b}")
if not bad:
    print(f"ok: {machine} regions {z}")
sys.exit(1 if bad else 0)
PY
	done
done
[ "$fails" -eq 0 ]
