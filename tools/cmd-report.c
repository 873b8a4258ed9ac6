/* memregctl report: read a record file and show its heatmap, working-set sizes,
 * per-power-region access rates or raw snapshots. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/proc.h"
#include "common/root.h"
#include "monitor/record.h"
#include "monitor/report.h"
#include "regions/placement.h"
#include "regions/region.h"
#include "tools/cli.h"

static void usage(FILE *f)
{
	fputs("Usage: memregctl report heatmap [-o OUT.svg|OUT.png] [-f svg|png|term] [--width N]\n"
	      "                                [--height N] [--root DIR] FILE\n"
	      "       memregctl report wss [--json] [--min-accesses N] FILE\n"
	      "       memregctl report regions [--json] [--root DIR] FILE\n"
	      "       memregctl report raw FILE\n\n"
	      "heatmap  access frequency with time across and address down, the gaps between\n"
	      "         mapped ranges collapsed: an SVG or PNG image (the format from -o's\n"
	      "         name: .svg or .png) with a title, time (s since the record's start)\n"
	      "         and hex address axes, a colour scale, and for a physical record the\n"
	      "         power-region edges (region map under --root); without -o,\n"
	      "         characters for a terminal\n"
	      "wss      working-set size percentiles over the snapshots: bytes of regions\n"
	      "         accessed at least --min-accesses times (default 1) per aggregation\n"
	      "regions  access rate per memory power region (the region map joined with\n"
	      "         physical addresses: a --phys record, or for a process record, the\n"
	      "         recorded process itself still running - not a later one with its\n"
	      "         pid - and its pagemap PFNs, which only root reads)\n"
	      "raw      every snapshot, one region a line\n\n"
	      "Options:\n"
	      "  -f, --format F       heatmap format: svg, png or term (where -o's name\n"
	      "                       says neither, or to stdout)\n"
	      "  -o, --output FILE    heatmap output file, FILE.svg or FILE.png\n"
	      "      --width N        heatmap columns (time; default 200, term 72)\n"
	      "      --height N       heatmap rows (address; default 100, term 20)\n"
	      "      --min-accesses N wss: accesses per aggregation to count a region (1)\n"
	      "      --json           JSON output (wss, regions)\n"
	      "      --root DIR       read /sys and /proc under DIR (region map: regions,\n"
	      "                       a physical heatmap's edges)\n"
	      "  -h, --help           this text\n", f);
}

static const char *scope(const struct mr_rec *rec, char *buf, size_t len)
{
	if (rec->hdr.kind == MR_MON_TARGET_PHYS)
		snprintf(buf, len, "physical memory");
	else
		snprintf(buf, len, "process-scoped (pid %d): virtual addresses of one process, "
			 "not whether a power region is idle", rec->hdr.pid);
	return buf;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const unsigned pcts[] = { 0, 1, 10, 25, 50, 75, 90, 99, 100 };

static int report_wss(const struct mr_rec *rec, uint32_t min_acc, bool json)
{
	uint64_t *w;
	char buf[256], sz[32];
	size_t i;
	int err = mr_report_wss(rec, min_acc, &w);

	if (err)
		return mr_cli_fail("%s", mr_last_error());
	if (!rec->nr_snaps) {
		free(w);
		return mr_cli_fail("record holds no snapshot");
	}
	qsort(w, rec->nr_snaps, sizeof(*w), cmp_u64);
	if (json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "scope", json_object_new_string(
			rec->hdr.kind == MR_MON_TARGET_PHYS ? "physical" : "process"));
		if (rec->hdr.kind == MR_MON_TARGET_PROCESS)
			json_object_object_add(o, "pid", json_object_new_int(rec->hdr.pid));
		json_object_object_add(o, "backend", json_object_new_string(rec->hdr.backend));
		json_object_object_add(o, "snapshots", json_object_new_int64((int64_t)rec->nr_snaps));
		json_object_object_add(o, "min_accesses", json_object_new_int64(min_acc));
		json_object_object_add(o, "unit", json_object_new_string("bytes"));
		for (i = 0; i < MR_ARRAY_SIZE(pcts); i++) {
			char key[8];

			snprintf(key, sizeof(key), "p%u", pcts[i]);
			json_object_object_add(o, key, json_object_new_int64(
				(int64_t)mr_report_percentile(w, rec->nr_snaps, pcts[i])));
		}
		mr_cli_print_json(o);
		json_object_put(o);
	} else {
		printf("# %s; backend %s; %zu snapshots; min %u accesses%s\n",
		       scope(rec, buf, sizeof(buf)), rec->hdr.backend, rec->nr_snaps, min_acc,
		       rec->truncated ? "; torn last chunk dropped" : "");
		printf("%-10s %s\n", "percentile", "wss");
		for (i = 0; i < MR_ARRAY_SIZE(pcts); i++)
			printf("%-10u %s\n", pcts[i],
			       mr_format_size(mr_report_percentile(w, rec->nr_snaps, pcts[i]), sz, sizeof(sz)));
	}
	free(w);
	return mr_cli_finish(MR_EXIT_OK);
}

/* The image format a heatmap file's name asks for ("svg", "png"), or NULL. */
static const char *format_of_name(const char *path)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

	if (!dot || (slash && dot < slash))
		return NULL;
	if (!strcasecmp(dot, ".svg"))
		return "svg";
	if (!strcasecmp(dot, ".png"))
		return "png";
	return NULL;
}

/* "pid 1234, refs backend: COMMAND" or "physical memory, damon backend". */
static void heatmap_title(const struct mr_rec *rec, char *buf, size_t len)
{
	const char *cmd = rec->note ? strstr(rec->note, "command=") : NULL;
	int n;

	if (rec->hdr.kind == MR_MON_TARGET_PHYS)
		n = snprintf(buf, len, "physical memory, %s backend", rec->hdr.backend);
	else
		n = snprintf(buf, len, "pid %d, %s backend", rec->hdr.pid, rec->hdr.backend);
	if (cmd && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ": %s", cmd + strlen("command="));
}

static int report_heatmap(const struct mr_rec *rec, const char *path, const char *fmt,
			  unsigned width, unsigned height)
{
	const char *named = path ? format_of_name(path) : NULL;
	struct mr_heatmap hm;
	char title[512];
	FILE *f = stdout;
	int err;

	if (path && !fmt && !named)
		return mr_cli_usage("report", "heatmap file '%s': unknown type (name it .svg or .png, "
				    "or give -f svg|png|term)", path);
	if (named && fmt && strcmp(named, fmt))
		return mr_cli_usage("report", "-f %s, but the file name '%s' says %s", fmt, path, named);
	if (!fmt)
		fmt = named ? named : "term";
	if (strcmp(fmt, "svg") && strcmp(fmt, "png") && strcmp(fmt, "term"))
		return mr_cli_usage("report", "unknown heatmap format '%s' (svg, png, term)", fmt);
	if (!strcmp(fmt, "png") && !path && isatty(STDOUT_FILENO))
		return mr_cli_usage("report", "PNG to a terminal: give -o FILE");
	if (!width)
		width = strcmp(fmt, "term") ? 200 : 72;
	if (!height)
		height = strcmp(fmt, "term") ? 100 : 20;
	err = mr_heatmap_build(rec, width, height, &hm);
	if (err)
		return mr_cli_fail("%s", mr_last_error());
	if (hm.phys && strcmp(fmt, "term")) {
		/* power-region edges: the region map `report regions` uses (under --root) */
		struct mr_discover_opts dopts = { 0 };
		struct mr_region_map map;

		if (mr_region_map_discover(&map, &dopts)) {
			mr_cli_warn("no power-region edges on the heatmap: %s", mr_last_error());
		} else {
			err = mr_heatmap_set_regions(&hm, &map);
			mr_region_map_destroy(&map);
			if (err) {
				mr_heatmap_free(&hm);
				return mr_cli_fail("%s", mr_last_error());
			}
		}
	}
	if (path) {
		f = fopen(path, "wb");
		if (!f) {
			mr_heatmap_free(&hm);
			return mr_cli_fail("%s: %s", path, strerror(errno));
		}
	}
	heatmap_title(rec, title, sizeof(title));
	if (!strcmp(fmt, "svg"))
		err = mr_heatmap_write_svg(&hm, title, f);
	else if (!strcmp(fmt, "png"))
		err = mr_heatmap_write_png(&hm, title, f);
	else {
		char sz[32];

		fprintf(f, "# %s, %.1f s across, %s mapped down (0x%" PRIx64 "..0x%" PRIx64
			", %u gaps collapsed)\n", rec->hdr.kind == MR_MON_TARGET_PHYS ? "physical" :
			"process-scoped", hm.duration_us / 1e6, mr_format_size(hm.mapped_bytes, sz, sizeof(sz)),
			hm.lo_addr, hm.hi_addr, hm.nr_gaps);
		err = mr_heatmap_write_term(&hm, f);
	}
	mr_heatmap_free(&hm);
	if (path && fclose(f) && !err)
		err = mr_error(-errno, "%s: %s", path, strerror(errno));
	if (err)
		return mr_cli_fail("%s", mr_last_error());
	return mr_cli_finish(MR_EXIT_OK);
}

static int report_raw(const struct mr_rec *rec)
{
	char buf[256];
	size_t i, k;

	printf("# %s; backend %s; format version %u; attrs %" PRIu64 ",%" PRIu64 ",%" PRIu64
	       ",%u,%u%s\n", scope(rec, buf, sizeof(buf)), rec->hdr.backend, rec->hdr.version,
	       rec->hdr.attrs.sample_us,
	       rec->hdr.attrs.aggr_us, rec->hdr.attrs.update_us, rec->hdr.attrs.min_nr_regions,
	       rec->hdr.attrs.max_nr_regions, rec->truncated ? "; torn last chunk dropped" : "");
	if (rec->note)
		printf("# note: %s\n", rec->note);
	for (i = 0; i < rec->nr_snaps; i++) {
		printf("snapshot %zu time_us %" PRIu64 " regions %zu samples %" PRIu32 "\n", i,
		       rec->snaps[i].time_us, rec->snaps[i].nr_regions, rec->snaps[i].nr_samples);
		for (k = 0; k < rec->snaps[i].nr_regions; k++) {
			const struct mr_rec_region *r = &rec->snaps[i].regions[k];

			printf("  0x%" PRIx64 "-0x%" PRIx64 " %" PRIu64 " nr_accesses %u age %u\n",
			       r->start, r->end, r->end - r->start, r->nr_accesses, r->age);
		}
	}
	return mr_cli_finish(MR_EXIT_OK);
}

/* Whether the running process @rec->hdr.pid is the one recorded, not a later one
 * that reuses its pid. Version 2 records carry the process's start time; for the
 * others, a process that started after the record did cannot be the recorded one
 * (whole seconds on both sides: two seconds of slack). 0 or -ESRCH, mr_error set. */
static int same_recorded_process(const struct mr_rec *rec)
{
	pid_t pid = rec->hdr.pid;
	uint64_t ticks, btime_s = 0;
	long hz = sysconf(_SC_CLK_TCK);
	char *stat = NULL, *b;
	int err;

	if (rec->hdr.target_starttime_ticks)
		return mr_proc_same(pid, rec->hdr.target_starttime_ticks);
	err = mr_proc_starttime(pid, &ticks);
	if (err || !rec->hdr.start_unix_ns)
		return err;
	err = mr_root_read_file("/proc/stat", 1 << 20, &stat, NULL);
	if (err)
		return err;
	b = strstr(stat, "\nbtime ");
	if (!b || sscanf(b, "\nbtime %" SCNu64, &btime_s) != 1) {
		free(stat);
		return mr_error(-EINVAL, "/proc/stat: no btime line");
	}
	free(stat);
	if (btime_s + ticks / (uint64_t)(hz > 0 ? hz : 100) > rec->hdr.start_unix_ns / 1000000000u + 2)
		return mr_error(-ESRCH, "pid %d started after the record did: it is another "
				"process now", (int)pid);
	return 0;
}

/* A run of virtual pages [start, end) of the live process whose frames all lie in
 * power region @id (or in none: @id is the map's region count). */
struct place_run {
	uint64_t start, end;
	unsigned id;
};

struct placement {
	const struct mr_region_map *map;
	uint64_t page_bytes;
	struct place_run *runs;
	size_t nr, cap;
	bool hidden;		/* a present page read PFN 0 */
};

static int place_chunk(uint64_t vaddr, const uint64_t *e, size_t nr, void *arg)
{
	struct placement *pl = arg;
	size_t i;

	for (i = 0; i < nr; i++, vaddr += pl->page_bytes) {
		const struct mr_region *reg;
		struct place_run *last = pl->nr ? &pl->runs[pl->nr - 1] : NULL;
		uint64_t pfn;
		unsigned id;

		if (!mr_pagemap_entry_present(e[i], &pfn))
			continue;	/* never touched, or swapped out */
		if (!pfn) {
			pl->hidden = true;
			return 1;	/* no use reading on: nothing can be placed */
		}
		reg = mr_region_of_phys(pl->map, pfn * pl->page_bytes);
		id = reg ? (unsigned)(reg - pl->map->regions) : pl->map->nr_regions;
		if (last && last->end == vaddr && last->id == id) {
			last->end += pl->page_bytes;
			continue;
		}
		if (pl->nr == pl->cap) {
			size_t cap = pl->cap ? 2 * pl->cap : 256;
			struct place_run *r = realloc(pl->runs, cap * sizeof(*r));

			if (!r)
				return mr_error(-ENOMEM, "out of memory");
			pl->runs = r;
			pl->cap = cap;
		}
		pl->runs[pl->nr++] = (struct place_run){ vaddr, vaddr + pl->page_bytes, id };
	}
	return 0;
}

/*
 * Where the pages of the running process @pid between the lowest and the highest
 * address of @rec lie now: one walk of its pagemap over its mappings (chunked,
 * PROT_NONE and unmapped holes skipped), so a record whose regions span a huge
 * reservation costs what the process has mapped, once, not a read per page per
 * snapshot. -EPERM when PFNs are hidden: every region would look idle.
 */
static int place_process(const struct mr_rec *rec, const struct mr_region_map *map,
			 struct placement *pl)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i;
	int err;

	for (i = 0; i < rec->nr_snaps; i++)
		if (rec->snaps[i].nr_regions) {
			const struct mr_rec_snapshot *s = &rec->snaps[i];

			if (s->regions[0].start < lo)
				lo = s->regions[0].start;
			if (s->regions[s->nr_regions - 1].end > hi)
				hi = s->regions[s->nr_regions - 1].end;
		}
	memset(pl, 0, sizeof(*pl));
	pl->map = map;
	pl->page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);
	if (lo >= hi)
		return 0;
	err = mr_pagemap_walk(rec->hdr.pid, lo, hi, MR_PAGEMAP_SKIP_PROT_NONE, place_chunk, pl);
	if (pl->hidden)
		return mr_error(-EPERM, "pid %d's pagemap shows its pages without frame numbers "
				"(the kernel shows PFNs only to CAP_SYS_ADMIN): every power region "
				"would look idle", (int)rec->hdr.pid);
	return err < 0 ? err : 0;
}

/* Add @bytes accessed at @freq to power region @r's totals and this snapshot's. */
static void account(const struct mr_region *r, uint64_t bytes, double freq,
		    double *acc, double *seen, double *snap_acc)
{
	acc[r->id] += freq * (double)bytes;
	seen[r->id] += (double)bytes;
	snap_acc[r->id] += freq * (double)bytes;
}

/* Account the part of [start, end) that the live process has in memory, by the
 * power region its frames lie in. */
static void account_placed(const struct placement *pl, uint64_t start, uint64_t end, double freq,
			   double *acc, double *seen, double *snap_acc)
{
	size_t lo = 0, hi = pl->nr;

	while (lo < hi) {	/* the first run that ends after @start */
		size_t mid = (lo + hi) / 2;

		if (pl->runs[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < pl->nr && pl->runs[lo].start < end; lo++) {
		const struct place_run *r = &pl->runs[lo];
		uint64_t a = r->start > start ? r->start : start, b = r->end < end ? r->end : end;

		if (a < b && r->id < pl->map->nr_regions)
			account(&pl->map->regions[r->id], b - a, freq, acc, seen, snap_acc);
	}
}

static int report_regions(const struct mr_rec *rec, bool json)
{
	struct mr_discover_opts dopts = { 0 };
	struct mr_region_map map;
	struct placement pl = { 0 };
	bool process = rec->hdr.kind == MR_MON_TARGET_PROCESS;
	double *acc, *seen, *snap_acc;
	unsigned *idle_snaps;
	size_t i, k;
	char buf[256];
	const struct mr_region *reg;
	int err = 0;

	if (process && rec->hdr.pid <= 0)
		return mr_cli_fail("process-scoped record without a pid: per-region rates need "
				   "physical addresses (record with --phys)");
	if (process)
		err = same_recorded_process(rec);
	if (err)
		goto process_fail;
	if (mr_region_map_discover(&map, &dopts))
		return mr_cli_fail("%s", mr_last_error());
	if (process) {
		err = place_process(rec, &map, &pl);
		if (err) {
			free(pl.runs);
			mr_region_map_destroy(&map);
			goto process_fail;
		}
	}
	acc = calloc(map.nr_regions + 1, sizeof(double));
	seen = calloc(map.nr_regions + 1, sizeof(double));
	snap_acc = calloc(map.nr_regions + 1, sizeof(double));
	idle_snaps = calloc(map.nr_regions + 1, sizeof(unsigned));
	for (i = 0; acc && seen && snap_acc && idle_snaps && i < rec->nr_snaps; i++) {
		memset(snap_acc, 0, (map.nr_regions + 1) * sizeof(double));
		for (k = 0; k < rec->snaps[i].nr_regions; k++) {
			const struct mr_rec_region *r = &rec->snaps[i].regions[k];
			/* over the snapshot's own samples: the last one may be partial */
			double freq = mr_rec_access_share(&rec->snaps[i], r);

			if (!process) {
				/* physical: split the region at power-region boundaries page by page
				 * would be slow for big regions; step through the map's ranges */
				mr_for_each_region(&map, reg) {
					unsigned q;

					for (q = 0; q < reg->nr_ranges; q++) {
						uint64_t s = reg->ranges[q].start, e = s + reg->ranges[q].size;
						uint64_t lo = r->start > s ? r->start : s;
						uint64_t hi = r->end < e ? r->end : e;

						if (lo < hi)
							account(reg, hi - lo, freq, acc, seen, snap_acc);
					}
				}
				continue;
			}
			account_placed(&pl, r->start, r->end, freq, acc, seen, snap_acc);
		}
		mr_for_each_region(&map, reg)
			if (snap_acc[reg->id] == 0)
				idle_snaps[reg->id]++;
	}
	free(pl.runs);
	if (!acc || !seen || !snap_acc || !idle_snaps) {
		free(acc), free(seen), free(snap_acc), free(idle_snaps);
		mr_region_map_destroy(&map);
		return mr_cli_fail("out of memory");
	}
	if (json) {
		struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

		json_object_object_add(o, "scope", json_object_new_string(
			rec->hdr.kind == MR_MON_TARGET_PHYS ? "physical" : "process"));
		json_object_object_add(o, "snapshots", json_object_new_int64((int64_t)rec->nr_snaps));
		mr_for_each_region(&map, reg) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "id", json_object_new_int((int)reg->id));
			json_object_object_add(e, "node", json_object_new_int(reg->node));
			json_object_object_add(e, "size_bytes", json_object_new_int64((int64_t)reg->size_bytes));
			json_object_object_add(e, "monitored_bytes_per_snapshot", json_object_new_double(
				rec->nr_snaps ? seen[reg->id] / (double)rec->nr_snaps : 0));
			/* No address maps to a region without a span: unknown, not idle. */
			json_object_object_add(e, "access_rate", !mr_region_span_known(reg) ? NULL :
				json_object_new_double(seen[reg->id] > 0 ? acc[reg->id] / seen[reg->id] : 0));
			json_object_object_add(e, "idle_share", !mr_region_span_known(reg) ? NULL :
				json_object_new_double(rec->nr_snaps ?
					(double)idle_snaps[reg->id] / (double)rec->nr_snaps : 0));
			json_object_array_add(arr, e);
		}
		json_object_object_add(o, "regions", arr);
		mr_cli_print_json(o);
		json_object_put(o);
	} else {
		printf("# %s; %zu snapshots; access rate = size-weighted share of samples that\n"
		       "# found an access; idle = share of snapshots with no access seen\n",
		       scope(rec, buf, sizeof(buf)), rec->nr_snaps);
		if (rec->hdr.kind == MR_MON_TARGET_PROCESS)
			printf("# PFNs read now from the running process's pagemap: pages that moved "
			       "since are misattributed\n");
		printf("%-6s %-5s %-12s %-16s %-11s %s\n", "region", "node", "size", "monitored/snap",
		       "access_rate", "idle");
		mr_for_each_region(&map, reg) {
			char sz[32], mon[32];

			if (!mr_region_span_known(reg)) {
				printf("%-6u %-5d %-12s %-16s %-11s %s\n", reg->id, reg->node,
				       mr_format_size(reg->size_bytes, sz, sizeof(sz)), "-", "-",
				       "- (physical span unknown)");
				continue;
			}
			printf("%-6u %-5d %-12s %-16s %-11.4f %.3f\n", reg->id, reg->node,
			       mr_format_size(reg->size_bytes, sz, sizeof(sz)),
			       mr_format_size(rec->nr_snaps ? (uint64_t)(seen[reg->id] / (double)rec->nr_snaps) : 0,
					      mon, sizeof(mon)),
			       seen[reg->id] > 0 ? acc[reg->id] / seen[reg->id] : 0,
			       rec->nr_snaps ? (double)idle_snaps[reg->id] / (double)rec->nr_snaps : 0);
		}
	}
	free(acc), free(seen), free(snap_acc), free(idle_snaps);
	mr_region_map_destroy(&map);
	return mr_cli_finish(MR_EXIT_OK);
process_fail:
	mr_error_wrap(err, "process-scoped record of pid %d: per-region rates need its "
		      "physical pages, read from its pagemap while it runs, as root (or a "
		      "--phys record)", rec->hdr.pid);
	return mr_cli_fail("%s", mr_last_error());
}

int mr_cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "width", required_argument, NULL, 'W' },
		{ "height", required_argument, NULL, 'H' },
		{ "min-accesses", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *fmt = NULL, *out = NULL, *root = NULL, *what, *file;
	uint64_t width = 0, height = 0, min_acc = 1;
	bool json = false;
	struct mr_rec rec;
	int c, ret;

	while ((c = mr_cli_getopt(argc, argv, "f:o:h", opts)) != -1) {
		switch (c) {
		case 'f': fmt = optarg; break;
		case 'o': out = optarg; break;
		case 'W':
			if (mr_parse_u64(optarg, &width) || !width || width > 4000)
				return mr_cli_usage(argv[0], "bad --width '%s' (1..4000)", optarg);
			break;
		case 'H':
			if (mr_parse_u64(optarg, &height) || !height || height > 4000)
				return mr_cli_usage(argv[0], "bad --height '%s' (1..4000)", optarg);
			break;
		case 'm':
			if (mr_parse_u64(optarg, &min_acc) || min_acc > UINT32_MAX)
				return mr_cli_usage(argv[0], "bad --min-accesses '%s'", optarg);
			break;
		case 'j': json = true; break;
		case 'r': root = optarg; break;
		case 'h': usage(stdout); return mr_cli_finish(MR_EXIT_OK);
		default: return MR_EXIT_USAGE;
		}
	}
	if (argc - optind != 2)
		return mr_cli_usage(argv[0], "need a report kind (heatmap, wss, regions, raw) and a FILE");
	what = argv[optind];
	file = argv[optind + 1];
	if (strcmp(what, "heatmap") && strcmp(what, "wss") && strcmp(what, "regions") &&
	    strcmp(what, "raw"))
		return mr_cli_usage(argv[0], "unknown report '%s' (heatmap, wss, regions, raw)", what);
	if (mr_root_set(root))
		return mr_cli_fail("%s", mr_last_error());
	if (mr_rec_load(file, &rec))
		return mr_cli_fail("%s", mr_last_error());
	if (rec.truncated)
		mr_cli_warn("%s: ends inside a chunk (recording interrupted); the torn chunk is "
			    "ignored", file);
	if (!strcmp(what, "wss"))
		ret = report_wss(&rec, (uint32_t)min_acc, json);
	else if (!strcmp(what, "heatmap"))
		ret = report_heatmap(&rec, out, fmt, (unsigned)width, (unsigned)height);
	else if (!strcmp(what, "regions"))
		ret = report_regions(&rec, json);
	else
		ret = report_raw(&rec);
	mr_rec_free(&rec);
	return ret;
}
