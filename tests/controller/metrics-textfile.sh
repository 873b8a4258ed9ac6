#!/bin/sh
# The metrics against the real thing: a dry run of memregctl control keeps
# DIR/memreg.prom; `promtool check metrics` (Debian's prometheus) accepts it with no
# output; Debian's prometheus-node-exporter with --collector.textfile.directory DIR,
# scraped over HTTP on 127.0.0.1, reports node_textfile_scrape_error 0 and every
# memreg sample with the value `memregctl control status --json` gives. Also: the
# file is written through a temporary name not ending in .prom, then renamed.
set -u
ctl=$top_builddir/tools/memregctl
mk=$top_builddir/tests/controller/mk-ctl-record
fx=$top_builddir/tests/fixtures
tmp=$(mktemp -d /tmp/mr-metrics-XXXXXX)
nepid=
cleanup() {
	[ -n "$nepid" ] && kill "$nepid" 2>/dev/null && wait "$nepid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ne=$(command -v prometheus-node-exporter || command -v node_exporter)
[ -n "$ne" ] || { echo "SKIP: prometheus-node-exporter is not installed (scripts/packages.txt lists it)"; exit 77; }
command -v promtool >/dev/null || { echo "SKIP: promtool (Debian's prometheus) is not installed"; exit 77; }
[ -d "$fx/server-2s-mpst/sys" ] || { echo "SKIP: fixture roots not built"; exit 77; }

"$mk" "$tmp/ctl.rec" || fail "mk-ctl-record"
mkdir "$tmp/textfile"
"$ctl" control --root "$fx/server-2s-mpst" --replay "$tmp/ctl.rec" \
	--scheme '4K max 0 0 500ms max migrate_cold 1' \
	--scheme '4K max 50% max 1s max migrate_hot region:0' \
	--scheme 'min max min max min max stat' \
	--metrics "$tmp/textfile" --status-file "$tmp/status.json" >"$tmp/run.out" 2>"$tmp/run.err" ||
	{ cat "$tmp/run.err"; fail "control exit $?"; }
[ "$(ls -A "$tmp/textfile")" = memreg.prom ] || fail "textfile dir holds: $(ls -A "$tmp/textfile")"

# promtool: exit 0 and not a word
promtool check metrics <"$tmp/textfile/memreg.prom" >"$tmp/promtool.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/promtool.out"; fail "promtool check metrics exit $rc"; }
[ -s "$tmp/promtool.out" ] && { cat "$tmp/promtool.out"; fail "promtool check metrics said something"; }

"$ctl" control status --file "$tmp/status.json" --json >"$tmp/status.out" ||
	fail "control status exit $?"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$ne" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$tmp/textfile" \
	>"$tmp/ne.log" 2>&1 &
nepid=$!
i=0
while [ $i -lt 100 ]; do
	python3 -c "import urllib.request, sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=2).read().decode())" \
		>"$tmp/scrape.txt" 2>/dev/null && break
	kill -0 "$nepid" 2>/dev/null || { cat "$tmp/ne.log"; fail "node exporter exited"; }
	sleep 0.1
	i=$((i + 1))
done
[ $i -lt 100 ] || { cat "$tmp/ne.log"; fail "node exporter did not answer on 127.0.0.1:$port"; }

python3 - "$tmp/scrape.txt" "$tmp/status.out" "$tmp/textfile/memreg.prom" <<'PY' || fail "scrape and status differ"
import json, re, sys
scrape, status, prom = (open(p).read() for p in sys.argv[1:4])
def samples(text):
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$', line)
        assert m, line
        labels = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', m.group(2) or "")))
        out[(m.group(1), labels)] = float(m.group(3))
    return out
got = samples(scrape)
assert got.get(("node_textfile_scrape_error", ())) == 0.0, "node_textfile_scrape_error not 0"
mine = {k: v for k, v in got.items() if k[0].startswith("memreg_")}
assert mine == samples(prom), "scrape differs from memreg.prom"
st = json.loads(status)
want = {}
def put(name, labels, value):
    want[(name, tuple(sorted(labels.items())))] = float(value)
put("memreg_controller_cpu_seconds_total", {}, round(st["cpu_seconds"], 6))
put("memreg_controller_aggregations_total", {}, st["aggregations"])
fields = {"tried_regions": "nr_tried", "tried_bytes": "sz_tried", "tried_pages": "pages_tried",
          "applied_regions": "nr_applied", "applied_bytes": "sz_applied",
          "applied_pages": "pages_applied", "quota_exceeded": "qt_exceeds"}
for i, s in enumerate(st["schemes"]):
    lab = {"scheme": str(i), "action": s["action"]}
    for name, key in fields.items():
        put("memreg_scheme_%s_total" % name, lab, s[key])
    for reason, v in s["failed_bytes"].items():
        put("memreg_scheme_failed_bytes_total", dict(lab, reason=reason), v)
    put("memreg_scheme_active", lab, 1 if s["active"] else 0)
for r in st["regions"]:
    for kind in ("size", "free", "movable", "unmovable"):
        if kind + "_bytes" in r:
            put("memreg_region_bytes", {"region": str(r["id"]), "node": str(r["node"]),
                                        "kind": kind}, r[kind + "_bytes"])
    put("memreg_region_targeted", {"region": str(r["id"])},
        1 if r["id"] in st["targeted_regions"] else 0)
for e in st.get("energy", []):
    put("memreg_dram_energy_joules_total", {"socket": str(e["socket"]), "source": e["source"]},
        round(e["joules"], 6))
missing = set(want) - set(mine)
extra = set(mine) - set(want)
assert not missing and not extra, (sorted(missing), sorted(extra))
bad = [(k, want[k], mine[k]) for k in want if want[k] != mine[k]]
assert not bad, bad
families = {k[0] for k in mine}
need = {"memreg_controller_cpu_seconds_total", "memreg_scheme_tried_bytes_total",
        "memreg_scheme_applied_pages_total", "memreg_scheme_failed_bytes_total",
        "memreg_region_bytes", "memreg_dram_energy_joules_total"}
assert need <= families, need - families
# this replay's own numbers: migrate_cold tried 4 x 192 MiB, migrate_hot 2 x 32 MiB
assert mine[("memreg_scheme_tried_bytes_total", (("action", "migrate_cold"), ("scheme", "0")))] == 4 * 192 * 2**20
assert mine[("memreg_scheme_applied_pages_total", (("action", "migrate_hot"), ("scheme", "1")))] == 2 * 8192
PY
echo "PASS: metrics-textfile ($(grep -c '^memreg_' "$tmp/textfile/memreg.prom") memreg samples scraped by $(basename "$ne"))"
