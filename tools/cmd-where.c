/* memregctl where: how many bytes of a process live in each region. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/proc.h"
#include "common/root.h"
#include "regions/placement.h"
#include "tools/cli.h"
#include "tools/cli-region.h"

/* 2: "pids" (every process counted) beside "pid" (the first) */
#define MR_WHERE_JSON_VERSION 2

/* Processes matched by a name pattern, at most this many (numastat's limit is lower). */
#define MR_WHERE_MAX_PIDS 256

static int cmp_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static void usage(FILE *f)
{
	fputs("Usage: memregctl where (PID | PATTERN) [-z] [--json] [--root DIR] [--mpst FILE]\n"
	      "Show how many resident bytes of a process lie in each memory region: from\n"
	      "the physical frames of /proc/PID/pagemap when run as root, else from the\n"
	      "per-node counts of /proc/PID/numa_maps (then only nodes with one region map\n"
	      "to a region). A PATTERN (an extended regular expression, as pgrep's) is\n"
	      "matched against each process's name (/proc/PID/comm); the bytes of every\n"
	      "matching process are added up, as numastat -p does.\n\n"
	      "  -z, --zero          hide regions and nodes that hold nothing (numastat -z)\n"
	      "  --json              machine-readable output (see memregctl-where(1))\n"
	      "  --root DIR          read a captured machine under DIR (default: MEMREG_ROOT, or /)\n"
	      "  --mpst FILE         regions from this MPST table instead of the firmware's\n"
	      "  -h, --help          this text\n", f);
}

/*
 * The processes whose name matches @pattern, not memregctl itself, in pid order:
 * 0 with *@nr >= 1, or MR_EXIT_USAGE / MR_EXIT_ERROR after printing why.
 */
static int match_processes(const char *pattern, int *pids, unsigned *nr)
{
	struct dirent *de;
	regex_t re;
	DIR *d;
	int ret;

	ret = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
	if (ret) {
		char msg[128];

		regerror(ret, &re, msg, sizeof(msg));
		return mr_cli_usage("where", "bad PATTERN '%s': %s", pattern, msg);
	}
	d = mr_root_opendir("/proc");
	if (!d) {
		regfree(&re);
		return mr_cli_fail("%s", mr_last_error());
	}
	*nr = 0;
	while ((de = readdir(d))) {
		char path[64], comm[64];
		uint64_t pid;

		if (mr_parse_u64(de->d_name, &pid) || !pid || pid > INT32_MAX ||
		    (pid_t)pid == getpid())
			continue;
		/* a process that ends meanwhile is no match */
		if (mr_root_read_str(mr_pathf(path, sizeof(path), "/proc/%d/comm", (int)pid),
				     comm, sizeof(comm)))
			continue;
		if (regexec(&re, comm, 0, NULL, 0))
			continue;
		if (*nr == MR_WHERE_MAX_PIDS) {
			closedir(d);
			regfree(&re);
			return mr_cli_fail("PATTERN '%s' matches more than %d processes; narrow it",
					   pattern, MR_WHERE_MAX_PIDS);
		}
		pids[(*nr)++] = (int)pid;
	}
	closedir(d);
	regfree(&re);
	if (!*nr)
		return mr_cli_fail("no process matches '%s'", pattern);
	qsort(pids, *nr, sizeof(*pids), cmp_int);
	return 0;
}

static void print_json(const struct mr_region_map *map, const int *pids, unsigned nr_pids,
		       const struct mr_where *w, bool hide_zero)
{
	json_object *o = json_object_new_object(), *a;
	const struct mr_region *r;
	unsigned i;
	int n;

	json_object_object_add(o, "version", json_object_new_int(MR_WHERE_JSON_VERSION));
	json_object_object_add(o, "pid", json_object_new_int(pids[0]));
	a = json_object_new_array();
	for (i = 0; i < nr_pids; i++)
		json_object_array_add(a, json_object_new_int(pids[i]));
	json_object_object_add(o, "pids", a);
	json_object_object_add(o, "source", json_object_new_string(mr_where_source_name(w->source)));
	json_object_object_add(o, "total_bytes", json_object_new_uint64(w->total_bytes));
	json_object_object_add(o, "unplaced_bytes", json_object_new_uint64(w->unplaced_bytes));
	a = json_object_new_array();
	mr_for_each_region(map, r) {
		json_object *e;

		if (hide_zero && !w->region_bytes[r->id])
			continue;
		e = json_object_new_object();
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

static void print_table(const struct mr_region_map *map, const int *pids, unsigned nr_pids,
			const struct mr_where *w, bool hide_zero)
{
	const struct mr_region *r;
	struct mr_cli_size_col col;
	uint64_t node_total = 0, max = w->unplaced_bytes;
	unsigned i, hidden = 0;
	char buf[32];
	int n;

	if (nr_pids == 1) {
		printf("pid %d", pids[0]);
	} else {
		printf("%u processes (pid", nr_pids);
		for (i = 0; i < nr_pids; i++)
			printf(" %d", pids[i]);
		printf(")");
	}
	printf(": %s resident, from %s\n\n", mr_format_size(w->total_bytes, buf, sizeof(buf)),
	       mr_where_source_name(w->source));
	/* one unit for the column, the largest row's, as numastat keeps one */
	mr_for_each_region(map, r)
		if (w->region_bytes[r->id] > max)
			max = w->region_bytes[r->id];
	for (n = 0; n < MR_MAX_NODES; n++)
		if (w->node_bytes[n] > max)
			max = w->node_bytes[n];
	mr_cli_size_col_init(&col, "BYTES", max);
	printf("%7s %5s %14s\n", "REGION", "NODE", col.head);
	mr_for_each_region(map, r) {
		if (hide_zero && !w->region_bytes[r->id]) {
			hidden++;
			continue;
		}
		printf("%7u %5d %14s\n", r->id, r->node,
		       mr_cli_size_col_fmt(&col, w->region_bytes[r->id], buf, sizeof(buf)));
	}
	if (w->unplaced_bytes)
		printf("%7s %5s %14s\n", "-", "-",
		       mr_cli_size_col_fmt(&col, w->unplaced_bytes, buf, sizeof(buf)));
	printf("%7s %5s %14s\n", "total", "",
	       mr_cli_size_col_fmt(&col, w->total_bytes, buf, sizeof(buf)));
	printf("\n%7s %14s\n", "NODE", col.head);
	for (n = 0; n < MR_MAX_NODES; n++) {
		node_total += w->node_bytes[n];
		if (w->node_bytes[n])
			printf("%7d %14s\n", n,
			       mr_cli_size_col_fmt(&col, w->node_bytes[n], buf, sizeof(buf)));
	}
	printf("%7s %14s\n", "total", mr_cli_size_col_fmt(&col, node_total, buf, sizeof(buf)));
	if (hidden)
		printf("\n%u region%s holding nothing not shown (-z)\n", hidden,
		       hidden == 1 ? "" : "s");
	if (w->unplaced_bytes)
		printf("\n'-': %s\n", w->source == MR_WHERE_PAGEMAP ?
		       "frames in no region" :
		       "on nodes with several regions (run as root for per-region bytes)");
}

/* Add @b's counts to @a (same map). */
static void where_add(struct mr_where *a, const struct mr_where *b)
{
	unsigned i;

	for (i = 0; i < a->nr_regions; i++)
		a->region_bytes[i] += b->region_bytes[i];
	for (i = 0; i < MR_MAX_NODES; i++)
		a->node_bytes[i] += b->node_bytes[i];
	a->unplaced_bytes += b->unplaced_bytes;
	a->total_bytes += b->total_bytes;
	/* numa_maps for any process makes the sum per node only */
	if (b->source != MR_WHERE_PAGEMAP)
		a->source = b->source;
}

int mr_cmd_where(int argc, char **argv)
{
	static const struct option options[] = {
		{ "zero", no_argument, NULL, 'z' },
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "mpst", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *mpst = NULL;
	static int pids[MR_WHERE_MAX_PIDS];
	struct mr_region_map map;
	struct mr_where w, one;
	bool json = false, hide_zero = false;
	unsigned nr_pids = 1, counted, i;
	int c, ret;

	while ((c = mr_cli_getopt(argc, argv, "zh", options)) != -1) {
		switch (c) {
		case 'z': hide_zero = true; break;
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
		return mr_cli_usage("where", "give one PID or PATTERN");
	if (mr_cli_load_map(root, mpst, &map))
		return MR_EXIT_ERROR;
	/* all digits: a PID (and a bad one is an error); anything else: a name pattern */
	if (argv[optind][strspn(argv[optind], "0123456789")] == '\0') {
		if (mr_cli_pid_arg("where", argv[optind], &pids[0])) {
			mr_region_map_destroy(&map);
			return MR_EXIT_USAGE;
		}
	} else {
		ret = match_processes(argv[optind], pids, &nr_pids);
		if (ret) {
			mr_region_map_destroy(&map);
			return ret;
		}
	}
	/* a matched process may end before it is read: it is left out, with a warning */
	for (i = 0, counted = 0; i < nr_pids; i++) {
		if (mr_where_pid(&map, pids[i], counted ? &one : &w)) {
			if (nr_pids > 1 && !mr_proc_alive(pids[i])) {
				mr_cli_warn("pid %d ended before it was read", pids[i]);
				continue;
			}
			if (counted)
				mr_where_destroy(&w);
			mr_region_map_destroy(&map);
			return mr_cli_fail("%s", mr_last_error());
		}
		if (counted) {
			where_add(&w, &one);
			mr_where_destroy(&one);
		}
		pids[counted++] = pids[i];
	}
	if (!counted) {
		mr_region_map_destroy(&map);
		return mr_cli_fail("every process matching '%s' ended before it was read",
				   argv[optind]);
	}
	nr_pids = counted;
	if (json)
		print_json(&map, pids, nr_pids, &w, hide_zero);
	else
		print_table(&map, pids, nr_pids, &w, hide_zero);
	mr_where_destroy(&w);
	mr_region_map_destroy(&map);
	return mr_cli_finish(MR_EXIT_OK);
}
