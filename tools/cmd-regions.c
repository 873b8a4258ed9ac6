/* memregctl regions: the machine's memory power regions, their power states, the
 * memory blocks behind them and what they hold; a table, or JSON for scripts. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/root.h"
#include "regions/region.h"
#include "tools/cli.h"

/* Bumped when a JSON field changes meaning or goes away (adding one does not). */
#define MR_REGIONS_JSON_VERSION 1

static const char *const granularity_names[NR_MR_OCC] = {
	[MR_OCC_NONE] = "none", [MR_OCC_PAGE] = "page", [MR_OCC_NODE] = "node",
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: memregctl regions [--root DIR] [--mpst FILE] [--source SOURCE]\n"
		"                         [--region-size SIZE] [--no-occupancy] [-z] [--json]\n\n"
		"Show the machine's memory power regions: their physical ranges, NUMA node,\n"
		"power states (from the firmware's MPST), memory blocks and occupancy.\n\n"
		"  --root DIR          read a captured machine under DIR (default: MEMREG_ROOT, or /)\n"
		"  --mpst FILE         read the MPST from FILE (binary, as acpidump -b or iasl write it)\n"
		"  --source SOURCE     auto (default: mpst, numa, blocks, fixed: the first that\n"
		"                      finds regions), mpst, numa, blocks or fixed\n"
		"  --region-size SIZE  slice size of the fixed source (default 512M; a multiple\n"
		"                      of the page size, at least 64K)\n"
		"  --no-occupancy      do not measure what the regions hold\n"
		"  -z, --zero          hide regions that hold nothing (numastat -z)\n"
		"  --json              one JSON object (fields: man memregctl-regions)\n"
		"  -h, --help          this help\n");
}

/* "0-3,8,10-11": a sorted id list as ranges. */
static void format_ids(const uint64_t *ids, unsigned nr, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i, j;
	int n;

	buf[0] = '\0';
	for (i = 0; i < nr; i = j + 1) {
		for (j = i; j + 1 < nr && ids[j + 1] == ids[j] + 1; j++)
			;
		if (j == i)
			n = snprintf(buf + off, len - off, "%s%" PRIu64, i ? "," : "", ids[i]);
		else
			n = snprintf(buf + off, len - off, "%s%" PRIu64 "-%" PRIu64, i ? "," : "",
				     ids[i], ids[j]);
		if (n < 0 || (size_t)n >= len - off) {
			if (len > 4)
				strcpy(buf + len - 4, "...");
			return;
		}
		off += (size_t)n;
	}
	if (!nr)
		snprintf(buf, len, "-");
}

/* "1 400 mW 750 ns PAX": state, power, exit latency, P(reserved) A(uto entry) X (auto exit). */
static void format_state(const struct mr_power_state *s, char *buf, size_t len)
{
	if (!s->has_characteristics) {
		snprintf(buf, len, "%u ?", s->state);
		return;
	}
	snprintf(buf, len, "%u %" PRIu32 " mW %" PRIu64 " ns%s%s%s%s", s->state, s->average_power_mw,
		 s->exit_latency_ns, s->flags ? " " : "",
		 s->flags & MR_PSTATE_MEMORY_PRESERVED ? "P" : "",
		 s->flags & MR_PSTATE_AUTO_ENTRY ? "A" : "",
		 s->flags & MR_PSTATE_AUTO_EXIT ? "X" : "");
}

/* -z hides regions that hold nothing (no used page); without occupancy, none. */
static bool holds_nothing(const struct mr_region *r)
{
	return r->occ.granularity != MR_OCC_NONE && !r->occ.movable_bytes &&
	       !r->occ.unmovable_bytes;
}

static void print_table(const struct mr_region_map *map, bool hide_empty)
{
	char range[48], size[24], node[16], state[64], blocks[48], occ[3][24];
	uint64_t max[4] = { 0 }, total[4] = { 0 };
	struct mr_cli_size_col col[4];
	bool have_occ = false;
	const struct mr_region *r;
	unsigned i, lines, hidden = 0;

	mr_for_each_region(map, r) {
		const uint64_t v[4] = { r->size_bytes, r->occ.free_bytes, r->occ.movable_bytes,
					r->occ.unmovable_bytes };

		have_occ |= r->occ.granularity != MR_OCC_NONE;
		for (i = 0; i < 4; i++) {
			total[i] += v[i];
			if (v[i] > max[i])
				max[i] = v[i];
		}
	}
	/* the unit of the largest row; the total row is in it too */
	mr_cli_size_col_init(&col[0], "SIZE", max[0]);
	mr_cli_size_col_init(&col[1], "FREE", max[1]);
	mr_cli_size_col_init(&col[2], "MOVABLE", max[2]);
	mr_cli_size_col_init(&col[3], "UNMOVABLE", max[3]);
	printf("source: %s, %u region%s", mr_source_name(map->source), map->nr_regions,
	       map->nr_regions == 1 ? "" : "s");
	if (map->block_size_bytes)
		printf(", memory blocks of %s", mr_format_size(map->block_size_bytes, size,
								sizeof(size)));
	printf("\n\n%3s  %-33s %11s %4s  %-26s %-14s %11s %13s %15s\n", "ID", "RANGE",
	       col[0].head, "NODE", "POWER STATES", "BLOCKS", col[1].head, col[2].head,
	       col[3].head);
	mr_for_each_region(map, r) {
		if (hide_empty && holds_nothing(r)) {
			hidden++;
			continue;
		}
		lines = r->nr_ranges > r->nr_states ? r->nr_ranges : r->nr_states;
		if (!lines)
			lines = 1;
		if (r->node >= 0)
			snprintf(node, sizeof(node), "%d%s", r->node, r->node_has_cpus ? "" : "*");
		else
			snprintf(node, sizeof(node), "-");
		format_ids(r->blocks, r->nr_blocks, blocks, sizeof(blocks));
		if (r->occ.granularity != MR_OCC_NONE) {
			mr_cli_size_col_fmt(&col[1], r->occ.free_bytes, occ[0], sizeof(occ[0]));
			mr_cli_size_col_fmt(&col[2], r->occ.movable_bytes, occ[1], sizeof(occ[1]));
			mr_cli_size_col_fmt(&col[3], r->occ.unmovable_bytes, occ[2], sizeof(occ[2]));
		} else {
			strcpy(occ[0], "-");
			strcpy(occ[1], "-");
			strcpy(occ[2], "-");
		}
		for (i = 0; i < lines; i++) {
			if (i < r->nr_ranges)
				snprintf(range, sizeof(range), "0x%012" PRIx64 "-0x%012" PRIx64,
					 r->ranges[i].start,
					 r->ranges[i].start + r->ranges[i].size - 1);
			else
				snprintf(range, sizeof(range), "%s",
					 i || mr_region_span_known(r) ? "" : "unknown");
			if (i < r->nr_states)
				format_state(&r->states[i], state, sizeof(state));
			else
				strcpy(state, i ? "" : "-");
			if (i == 0)
				printf("%3u  %-33s %11s %4s  %-26s %-14s %11s %13s %15s\n", r->id,
				       range, mr_cli_size_col_fmt(&col[0], r->size_bytes, size, sizeof(size)),
				       node, state, blocks, occ[0], occ[1], occ[2]);
			else
				printf("%3s  %-33s %11s %4s  %s\n", "", range, "", "", state);
		}
	}
	if (have_occ) {
		mr_cli_size_col_fmt(&col[1], total[1], occ[0], sizeof(occ[0]));
		mr_cli_size_col_fmt(&col[2], total[2], occ[1], sizeof(occ[1]));
		mr_cli_size_col_fmt(&col[3], total[3], occ[2], sizeof(occ[2]));
	} else {
		strcpy(occ[0], "-");
		strcpy(occ[1], "-");
		strcpy(occ[2], "-");
	}
	printf("%-38s %11s %4s  %-26s %-14s %11s %13s %15s\n", "total",
	       mr_cli_size_col_fmt(&col[0], total[0], size, sizeof(size)), "", "", "", occ[0], occ[1],
	       occ[2]);
	if (hidden)
		printf("\n%u region%s holding nothing not shown (-z)\n", hidden,
		       hidden == 1 ? "" : "s");
	printf("\nNODE *: a node without CPUs. POWER STATES: state, average power, exit latency;\n"
	       "P memory preserved, A entered by the platform itself, X left by itself.\n");
	if (map->nr_regions && map->regions[0].occ.granularity == MR_OCC_PAGE)
		printf("FREE is an estimate (see the occupancy note).\n");
	if (map->nr_warnings) {
		printf("\nwarnings (the firmware's table is usable, but not as specified):\n");
		for (i = 0; i < map->nr_warnings; i++)
			printf("  %s\n", map->warnings[i]);
	}
	if (map->nr_notes) {
		printf("\nnotes:\n");
		for (i = 0; i < map->nr_notes; i++)
			printf("  %s\n", map->notes[i]);
	}
}

static struct json_object *strings(char **s, unsigned nr)
{
	struct json_object *a = json_object_new_array();
	unsigned i;

	for (i = 0; i < nr; i++)
		json_object_array_add(a, json_object_new_string(s[i]));
	return a;
}

static struct json_object *region_json(const struct mr_region *r)
{
	struct json_object *o = json_object_new_object(), *a, *e;
	unsigned i;

	json_object_object_add(o, "id", json_object_new_int((int)r->id));
	json_object_object_add(o, "node", json_object_new_int(r->node));
	json_object_object_add(o, "node_has_cpus", json_object_new_boolean(r->node_has_cpus));
	json_object_object_add(o, "node_kind", r->node_kind[0] ?
			       json_object_new_string(r->node_kind) : NULL);
	json_object_object_add(o, "size", json_object_new_uint64(r->size_bytes));
	a = json_object_new_array();
	for (i = 0; i < r->nr_ranges; i++) {
		e = json_object_new_object();
		json_object_object_add(e, "start", json_object_new_uint64(r->ranges[i].start));
		json_object_object_add(e, "size", json_object_new_uint64(r->ranges[i].size));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "ranges", a);
	json_object_object_add(o, "mpst_node_id", json_object_new_int(r->mpst_node_id));
	if (r->mpst_node_id >= 0) {
		e = json_object_new_object();
		json_object_object_add(e, "enabled",
				       json_object_new_boolean(r->mpst_flags & MR_MPST_ENABLED));
		json_object_object_add(e, "power_managed",
				       json_object_new_boolean(r->mpst_flags & MR_MPST_POWER_MANAGED));
		json_object_object_add(e, "hot_pluggable",
				       json_object_new_boolean(r->mpst_flags & MR_MPST_HOT_PLUGGABLE));
		json_object_object_add(o, "mpst_flags", e);
	} else {
		json_object_object_add(o, "mpst_flags", NULL);
	}
	a = json_object_new_array();
	for (i = 0; i < r->nr_states; i++) {
		const struct mr_power_state *s = &r->states[i];

		e = json_object_new_object();
		json_object_object_add(e, "state", json_object_new_int(s->state));
		json_object_object_add(e, "has_characteristics",
				       json_object_new_boolean(s->has_characteristics));
		json_object_object_add(e, "average_power_mw",
				       json_object_new_uint64(s->average_power_mw));
		json_object_object_add(e, "power_saving_mw",
				       json_object_new_uint64(s->power_saving_mw));
		json_object_object_add(e, "exit_latency_ns",
				       json_object_new_uint64(s->exit_latency_ns));
		json_object_object_add(e, "memory_preserved",
				       json_object_new_boolean(s->flags & MR_PSTATE_MEMORY_PRESERVED));
		json_object_object_add(e, "auto_entry",
				       json_object_new_boolean(s->flags & MR_PSTATE_AUTO_ENTRY));
		json_object_object_add(e, "auto_exit",
				       json_object_new_boolean(s->flags & MR_PSTATE_AUTO_EXIT));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "power_states", a);
	a = json_object_new_array();
	for (i = 0; i < r->nr_components; i++)
		json_object_array_add(a, json_object_new_int(r->components[i]));
	json_object_object_add(o, "components", a);
	a = json_object_new_array();
	for (i = 0; i < r->nr_blocks; i++)
		json_object_array_add(a, json_object_new_uint64(r->blocks[i]));
	json_object_object_add(o, "blocks", a);
	json_object_object_add(o, "bandwidth_mibps", json_object_new_uint64(r->bandwidth_mibps));
	json_object_object_add(o, "latency_ns", json_object_new_uint64(r->latency_ns));
	e = json_object_new_object();
	json_object_object_add(e, "granularity",
			       json_object_new_string(granularity_names[r->occ.granularity]));
	json_object_object_add(e, "free_bytes", json_object_new_uint64(r->occ.free_bytes));
	json_object_object_add(e, "movable_bytes", json_object_new_uint64(r->occ.movable_bytes));
	json_object_object_add(e, "unmovable_bytes",
			       json_object_new_uint64(r->occ.unmovable_bytes));
	json_object_object_add(o, "occupancy", e);
	return o;
}

static void print_json(const struct mr_region_map *map)
{
	struct json_object *o = json_object_new_object(), *a;
	const struct mr_region *r;

	json_object_object_add(o, "version", json_object_new_int(MR_REGIONS_JSON_VERSION));
	json_object_object_add(o, "source", json_object_new_string(mr_source_name(map->source)));
	json_object_object_add(o, "block_size", json_object_new_uint64(map->block_size_bytes));
	a = json_object_new_array();
	mr_for_each_region(map, r)
		json_object_array_add(a, region_json(r));
	json_object_object_add(o, "regions", a);
	json_object_object_add(o, "warnings", strings(map->warnings, map->nr_warnings));
	json_object_object_add(o, "notes", strings(map->notes, map->nr_notes));
	mr_cli_print_json(o);
	json_object_put(o);
}

int mr_cmd_regions(int argc, char **argv)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "mpst", required_argument, NULL, 'm' },
		{ "source", required_argument, NULL, 's' },
		{ "region-size", required_argument, NULL, 'G' },
		{ "no-occupancy", no_argument, NULL, 'O' },
		{ "json", no_argument, NULL, 'j' },
		{ "zero", no_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mr_discover_opts opts = { .source = MR_SOURCE_AUTO, .occupancy = true };
	const char *root = NULL;
	struct mr_region_map map;
	bool json = false, hide_empty = false;
	int c;

	while ((c = mr_cli_getopt(argc, argv, "zh", options)) != -1) {
		switch (c) {
		case 'r':
			root = optarg;
			break;
		case 'm':
			opts.mpst_file = optarg;
			break;
		case 's':
			if (mr_source_parse(optarg, &opts.source))
				return mr_cli_usage("regions", "%s", mr_last_error());
			break;
		case 'G':
			if (mr_parse_size(optarg, &opts.region_size_bytes))
				return mr_cli_usage("regions", "--region-size: bad size '%s' "
						    "(e.g. 512M, 1G)", optarg);
			if (mr_fixed_size_check(opts.region_size_bytes))
				return mr_cli_usage("regions", "%s", mr_last_error());
			break;
		case 'O':
			opts.occupancy = false;
			break;
		case 'j':
			json = true;
			break;
		case 'z':
			hide_empty = true;
			break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return mr_cli_usage("regions", "unexpected argument '%s'", argv[optind]);
	if (mr_root_set(root))
		return mr_cli_fail("%s", mr_last_error());
	if (mr_region_map_discover(&map, &opts))
		return mr_cli_fail("%s", mr_last_error());
	if (json)
		print_json(&map);
	else
		print_table(&map, hide_empty);
	mr_region_map_destroy(&map);
	return mr_cli_finish(MR_EXIT_OK);
}
