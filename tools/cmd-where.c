/* memregctl where: how many bytes of a process live in each region. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include <json-c/json.h>

#include "regions/placement.h"
#include "tools/cli.h"
#include "tools/cli-region.h"

#define MR_WHERE_JSON_VERSION 1

static void usage(FILE *f)
{
	fputs("Usage: memregctl where PID [--json] [--root DIR] [--mpst FILE]\n"
	      "Show how many resident bytes of process PID lie in each memory region: from\n"
	      "the physical frames of /proc/PID/pagemap when run as root, else from the\n"
	      "per-node counts of /proc/PID/numa_maps (then only nodes with one region map\n"
	      "to a region).\n\n"
	      "  --json              machine-readable output (see memregctl-where(1))\n"
	      "  --root DIR          read a captured machine under DIR (default: MEMREG_ROOT, or /)\n"
	      "  --mpst FILE         regions from this MPST table instead of the firmware's\n"
	      "  -h, --help          this text\n", f);
}

static void print_json(const struct mr_region_map *map, int pid, const struct mr_where *w)
{
	json_object *o = json_object_new_object(), *a;
	const struct mr_region *r;
	int n;

	json_object_object_add(o, "version", json_object_new_int(MR_WHERE_JSON_VERSION));
	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "source", json_object_new_string(mr_where_source_name(w->source)));
	json_object_object_add(o, "total_bytes", json_object_new_uint64(w->total_bytes));
	json_object_object_add(o, "unplaced_bytes", json_object_new_uint64(w->unplaced_bytes));
	a = json_object_new_array();
	mr_for_each_region(map, r) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "id", json_object_new_int((int)r->id));
		json_object_object_add(e, "node", json_object_new_int(r->node));
		json_object_object_add(e, "bytes", json_object_new_uint64(w->region_bytes[r->id]));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "regions", a);
	a = json_object_new_array();
	for (n = 0; n < MR_MAX_NODES; n++) {
		json_object *e;

		if (!w->node_bytes[n])
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "node", json_object_new_int(n));
		json_object_object_add(e, "bytes", json_object_new_uint64(w->node_bytes[n]));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "nodes", a);
	mr_cli_print_json(o);
	json_object_put(o);
}

static void print_table(const struct mr_region_map *map, int pid, const struct mr_where *w)
{
	const struct mr_region *r;
	char buf[32];
	int n;

	printf("pid %d: %s resident, from %s\n\n", pid,
	       mr_format_size(w->total_bytes, buf, sizeof(buf)), mr_where_source_name(w->source));
	printf("%7s %5s %14s\n", "REGION", "NODE", "BYTES");
	mr_for_each_region(map, r)
		printf("%7u %5d %14s\n", r->id, r->node,
		       mr_format_size(w->region_bytes[r->id], buf, sizeof(buf)));
	if (w->unplaced_bytes)
		printf("%7s %5s %14s\n", "-", "-",
		       mr_format_size(w->unplaced_bytes, buf, sizeof(buf)));
	printf("\n%7s %14s\n", "NODE", "BYTES");
	for (n = 0; n < MR_MAX_NODES; n++)
		if (w->node_bytes[n])
			printf("%7d %14s\n", n, mr_format_size(w->node_bytes[n], buf, sizeof(buf)));
	if (w->unplaced_bytes)
		printf("\n'-': %s\n", w->source == MR_WHERE_PAGEMAP ?
		       "frames in no region" :
		       "on nodes with several regions (run as root for per-region bytes)");
}

int mr_cmd_where(int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "mpst", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *mpst = NULL;
	struct mr_region_map map;
	struct mr_where w;
	bool json = false;
	int c, pid;

	while ((c = mr_cli_getopt(argc, argv, "h", options)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'r': root = optarg; break;
		case 'm': mpst = optarg; break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return mr_cli_usage("where", "give one PID");
	if (mr_cli_pid_arg("where", argv[optind], &pid))
		return MR_EXIT_USAGE;
	if (mr_cli_load_map(root, mpst, &map))
		return MR_EXIT_ERROR;
	if (mr_where_pid(&map, pid, &w)) {
		mr_region_map_destroy(&map);
		return mr_cli_fail("%s", mr_last_error());
	}
	if (json)
		print_json(&map, pid, &w);
	else
		print_table(&map, pid, &w);
	mr_where_destroy(&w);
	mr_region_map_destroy(&map);
	return mr_cli_finish(MR_EXIT_OK);
}
