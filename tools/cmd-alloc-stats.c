/* memregctl alloc-stats PID: the live stats a process running under libmemreg.so
 * exports (MEMREG_EXPORT_STATS=1) in a memfd found in /proc/PID/fd
 * (allocator/stats-format.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocator/stats-format.h"
#include "common/root.h"
#include "common/util.h"
#include "controller/classes.h"
#include "tools/cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: memregctl alloc-stats [--root DIR] [--all] [--json] PID\n"
		"       memregctl alloc-stats [--all] [--json] --file FILE\n\n"
		"Show the allocator stats of a process running with LD_PRELOAD=libmemreg.so and\n"
		"MEMREG_EXPORT_STATS=1: per region its state, live and peak bytes.\n\n"
		"  --root DIR   read a captured machine under DIR (default: MEMREG_ROOT, or /)\n"
		"  --file FILE  read a saved copy of the stats (cp /proc/PID/fd/N FILE)\n"
		"  --all        list every region of the arena, not only those ever opened\n"
		"  --json       one JSON object (fields: man memregctl-alloc-stats)\n"
		"  -h, --help   this help\n");
}

static const char *state_name(const struct mr_alloc_stats_region *r)
{
	if (r->state == 2)
		return "huge";
	if (r->state == 0)
		return "unused";
	if (r->used_bytes)
		return "live";
	if (r->flags & MR_ALLOC_REGION_PURGED)
		return "empty";
	return r->flags & MR_ALLOC_REGION_PENDING ? "decaying" : "free";
}

/* Read the file and take a consistent copy (the writer's seq is even and unchanged). */
static int load(const char *path, struct mr_alloc_stats_file **out, size_t *len)
{
	char *data = NULL;
	size_t n = 0;
	int rc, tries;
	const struct mr_alloc_stats_file *f;

	for (tries = 0; tries < 100; tries++) {
		free(data);
		rc = mr_root_read_file(path, 64 << 20, &data, &n);
		if (rc)
			return rc;
		f = (const struct mr_alloc_stats_file *)data;
		if (n < sizeof(*f) || f->magic != MR_ALLOC_STATS_MAGIC) {
			free(data);
			return mr_error(-EINVAL, "%s: not a libmemreg stats file", path);
		}
		if (f->version != MR_ALLOC_STATS_VERSION || f->header_bytes != sizeof(*f) ||
		    f->region_entry_bytes != sizeof(struct mr_alloc_stats_region)) {
			unsigned v = f->version;

			free(data);
			return mr_error(-EINVAL, "%s: stats format version %u, this memregctl reads %u",
					path, v, MR_ALLOC_STATS_VERSION);
		}
		if (n < sizeof(*f) + (size_t)f->nregions * sizeof(struct mr_alloc_stats_region)) {
			unsigned nr = f->nregions;

			free(data);
			return mr_error(-EINVAL, "%s: truncated (%zu bytes for %u regions)", path, n, nr);
		}
		if (f->seq % 2 == 0)
			break;
		usleep(1000);
	}
	*out = (struct mr_alloc_stats_file *)data;
	*len = n;
	return 0;
}

static struct json_object *to_json(const struct mr_alloc_stats_file *f, bool all)
{
	struct json_object *o = json_object_new_object(), *regs = json_object_new_array();
	uint32_t i;

	json_object_object_add(o, "version", json_object_new_int(f->version));
	json_object_object_add(o, "pid", json_object_new_int64(f->pid));
#define MR_JSON_COUNTER(name, help) \
	json_object_object_add(o, #name, json_object_new_uint64(f->name));
	MR_ALLOC_COUNTERS(MR_JSON_COUNTER)
#undef MR_JSON_COUNTER
	for (i = 0; i < f->nregions; i++) {
		const struct mr_alloc_stats_region *r = &f->region[i];
		struct json_object *e;

		if (!all && r->state == 0)
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "id", json_object_new_int64(i));
		json_object_object_add(e, "state", json_object_new_string(state_name(r)));
		json_object_object_add(e, "live_bytes", json_object_new_uint64(r->used_bytes));
		json_object_object_add(e, "peak_bytes", json_object_new_uint64(r->peak_bytes));
		json_object_object_add(e, "touched",
				       json_object_new_boolean(r->flags & MR_ALLOC_REGION_TOUCHED));
		json_object_array_add(regs, e);
	}
	json_object_object_add(o, "regions_list", regs);
	return o;
}

static void print_table(const struct mr_alloc_stats_file *f, bool all)
{
	char a[24], b[24];
	uint32_t i;

	/* The allocator's regions are windows of the process's address space, never
	 * physical memory regions (on a one-node machine they are nothing else). */
	printf("pid %" PRId64 ": %" PRIu64 " regions of %s (windows of its virtual address space), %"
	       PRIu64 " live, %" PRIu64 " empty, %" PRIu64 " touched\n", f->pid, f->regions,
	       mr_format_size(f->region_bytes, a, sizeof(a)), f->regions_live, f->regions_empty,
	       f->regions_touched);
	printf("used %s (peak %s), %" PRIu64 " purges, %" PRIu64 " thread caches\n\n",
	       mr_format_size(f->used_bytes, a, sizeof(a)),
	       mr_format_size(f->peak_used_bytes, b, sizeof(b)), f->purges, f->thread_caches);
	if (f->disabled)
		printf("libmemreg could not set up its arena: glibc served everything\n");
	if (f->glibc_fallbacks)
		printf("glibc served %" PRIu64 " allocations libmemreg could not\n", f->glibc_fallbacks);
	if (f->disabled || f->glibc_fallbacks)
		printf("\n");
	printf("%6s  %-9s %12s %12s\n", "REGION", "STATE", "LIVE", "PEAK");
	for (i = 0; i < f->nregions; i++) {
		const struct mr_alloc_stats_region *r = &f->region[i];

		if (!all && r->state == 0)
			continue;
		printf("%6" PRIu32 "  %-9s %12s %12s\n", i, state_name(r),
		       mr_format_size(r->used_bytes, a, sizeof(a)),
		       mr_format_size(r->peak_bytes, b, sizeof(b)));
	}
}

int mr_cmd_alloc_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "all", no_argument, NULL, 'a' },
		{ "file", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mr_alloc_stats_file *f = NULL;
	bool json = false, all = false;
	const char *file = NULL;
	char path[336];
	uint64_t pid;
	size_t len;
	int c, rc;

	while ((c = mr_cli_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'r':
			if (mr_root_set(optarg))
				return mr_cli_fail("--root %s: %s", optarg, mr_last_error());
			break;
		case 'a':
			all = true;
			break;
		case 'f':
			file = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (file) {
		if (optind != argc)
			return mr_cli_usage(argv[0], "--file takes no PID");
		/* A saved copy is a file of the host, not of a captured machine. */
		if (mr_root_set("/"))
			return mr_cli_fail("%s", mr_last_error());
		rc = load(file, &f, &len);
		if (rc == -ENOENT)
			return mr_cli_fail("%s: no such file", file);
	} else {
		if (optind != argc - 1)
			return mr_cli_usage(argv[0], "expected one PID");
		if (mr_parse_u64(argv[optind], &pid) || pid == 0 || pid > INT32_MAX)
			return mr_cli_usage(argv[0], "'%s' is not a process id", argv[optind]);
		rc = mr_alloc_export_find((pid_t)pid, path, sizeof(path));
		if (rc == -ENOENT || rc == -ESRCH)
			return mr_cli_fail("process %" PRIu64 ": no libmemreg stats: is it running "
					   "under libmemreg.so with MEMREG_EXPORT_STATS=1?", pid);
		if (rc == 0)
			rc = load(path, &f, &len);
	}
	if (rc)
		return mr_cli_fail("%s", mr_last_error()[0] ? mr_last_error() : strerror(-rc));
	if (json) {
		struct json_object *o = to_json(f, all);

		mr_cli_print_json(o);
		json_object_put(o);
	} else {
		print_table(f, all);
	}
	free(f);
	return mr_cli_finish(MR_EXIT_OK);
}
