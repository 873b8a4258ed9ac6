/* memregctl move: move a process's pages to the node of a region (move_pages). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "common/root.h"
#include "regions/placement.h"
#include "tools/cli.h"
#include "tools/cli-region.h"

static void usage(FILE *f)
{
	fputs("Usage: memregctl move PID --to REGION [--range START-END] [--apply] [--json]\n"
	      "Move the resident pages of process PID (or those in the virtual address range\n"
	      "START-END) to the NUMA node of REGION with move_pages(2). Without --apply,\n"
	      "only count what would move. Pages the kernel reports busy are retried; pages\n"
	      "that cannot move (mapped by other processes, ...) are counted and reported.\n"
	      "The pages go to the region's node: on a node with several regions the kernel\n"
	      "picks the frames. The process's own memory policy decides where its new pages\n"
	      "go; memreg cannot change another process's policy.\n\n"
	      "  --to REGION         the target region id (memregctl regions)\n"
	      "  --range START-END   only pages in [START, END) (0x hex or decimal)\n"
	      "  --apply             move (default: print what would move)\n"
	      "  --batch N           pages per move_pages call (default 65536)\n"
	      "  --json              machine-readable output\n"
	      "  --root DIR, --mpst FILE  as for memregctl regions\n"
	      "  -h, --help          this text\n", f);
}

static int parse_range(const char *s, uint64_t *start, uint64_t *end)
{
	char buf[64], *dash;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (!dash)
		return -1;
	*dash = '\0';
	if (mr_parse_u64(buf, start) || mr_parse_u64(dash + 1, end) || *end <= *start)
		return -1;
	return 0;
}

static void print_json(const struct mr_move_opts *o, unsigned region,
		       const struct mr_move_stats *st)
{
	json_object *j = json_object_new_object(), *f = json_object_new_object();

	json_object_object_add(j, "version", json_object_new_int(1));
	json_object_object_add(j, "pid", json_object_new_int(o->pid));
	json_object_object_add(j, "region", json_object_new_int((int)region));
	json_object_object_add(j, "node", json_object_new_int(o->node));
	json_object_object_add(j, "applied", json_object_new_boolean(o->apply));
	json_object_object_add(j, "page_bytes", json_object_new_uint64(st->page_bytes));
	json_object_object_add(j, "pages", json_object_new_uint64(st->pages));
	json_object_object_add(j, "absent_pages", json_object_new_uint64(st->absent));
	json_object_object_add(j, "already_pages", json_object_new_uint64(st->already));
	json_object_object_add(j, "to_move_pages", json_object_new_uint64(st->to_move));
	json_object_object_add(j, "moved_pages", json_object_new_uint64(st->moved));
	json_object_object_add(j, "moved_bytes",
			       json_object_new_uint64(st->moved * st->page_bytes));
	json_object_object_add(j, "busy_retried", json_object_new_uint64(st->busy_retried));
	json_object_object_add(f, "busy", json_object_new_uint64(st->failed_busy));
	json_object_object_add(f, "access", json_object_new_uint64(st->failed_access));
	json_object_object_add(f, "noent", json_object_new_uint64(st->failed_noent));
	json_object_object_add(f, "fault", json_object_new_uint64(st->failed_fault));
	json_object_object_add(f, "nomem", json_object_new_uint64(st->failed_nomem));
	json_object_object_add(f, "other", json_object_new_uint64(st->failed_other));
	json_object_object_add(j, "failed_pages", f);
	json_object_object_add(j, "elapsed_ns", json_object_new_uint64(st->elapsed_ns));
	mr_cli_print_json(j);
	json_object_put(j);
}

static void print_text(const struct mr_move_opts *o, unsigned region,
		       const struct mr_move_stats *st)
{
	uint64_t pb = st->page_bytes, failed = mr_move_failed_pages(st);
	char a[32], b[32];

	if (!o->apply) {
		printf("pid %d: %s (%llu pages) would move to node %d (region %u); %s already "
		       "there, %llu pages not present\n", o->pid,
		       mr_format_size(st->to_move * pb, a, sizeof(a)),
		       (unsigned long long)st->to_move, o->node, region,
		       mr_format_size(st->already * pb, b, sizeof(b)),
		       (unsigned long long)st->absent);
		printf("nothing moved: pass --apply to move\n");
	} else {
		double s = (double)st->elapsed_ns / 1e9;

		printf("pid %d: moved %s (%llu pages) to node %d (region %u) in %.3f s",
		       o->pid, mr_format_size(st->moved * pb, a, sizeof(a)),
		       (unsigned long long)st->moved, o->node, region, s);
		if (st->elapsed_ns)
			printf(", %.1f MiB/s", (double)(st->moved * pb) / (1 << 20) / s);
		printf("; %s already there\n", mr_format_size(st->already * pb, b, sizeof(b)));
		if (st->busy_retried)
			printf("busy pages retried: %llu\n", (unsigned long long)st->busy_retried);
	}
	if (failed) {
		printf("not moved: %llu pages:", (unsigned long long)failed);
		if (st->failed_access)
			printf(" %llu mapped by other processes (EACCES);",
			       (unsigned long long)st->failed_access);
		if (st->failed_busy)
			printf(" %llu busy (EBUSY);", (unsigned long long)st->failed_busy);
		if (st->failed_noent)
			printf(" %llu gone (ENOENT);", (unsigned long long)st->failed_noent);
		if (st->failed_fault)
			printf(" %llu unmapped (EFAULT);", (unsigned long long)st->failed_fault);
		if (st->failed_nomem)
			printf(" %llu no memory on the node (ENOMEM);",
			       (unsigned long long)st->failed_nomem);
		if (st->failed_other)
			printf(" %llu other (last: %s);", (unsigned long long)st->failed_other,
			       strerror(st->last_other_errno));
		printf("\n");
	}
}

int mr_cmd_move(int argc, char **argv)
{
	static const struct option options[] = {
		{ "to", required_argument, NULL, 't' },
		{ "range", required_argument, NULL, 'R' },
		{ "apply", no_argument, NULL, 'a' },
		{ "batch", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "mpst", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *mpst = NULL, *to = NULL;
	struct mr_move_opts o = { 0 };
	const struct mr_region *r;
	struct mr_region_map map;
	struct mr_move_stats st;
	bool json = false;
	uint64_t v;
	int c, ret;

	while ((c = mr_cli_getopt(argc, argv, "h", options)) != -1) {
		switch (c) {
		case 't': to = optarg; break;
		case 'R':
			if (parse_range(optarg, &o.start, &o.end))
				return mr_cli_usage("move", "--range: bad range '%s' (START-END, "
						    "START < END)", optarg);
			break;
		case 'a': o.apply = true; break;
		case 'b':
			if (mr_parse_u64(optarg, &v) || !v || v > 1u << 20)
				return mr_cli_usage("move", "--batch: bad count '%s'", optarg);
			o.batch_pages = (unsigned)v;
			break;
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
		return mr_cli_usage("move", "give one PID");
	if (!to)
		return mr_cli_usage("move", "--to REGION is required");
	if (mr_cli_pid_arg("move", argv[optind], &o.pid))
		return MR_EXIT_USAGE;
	if (mr_cli_load_region(root, mpst, to, &map, &r))
		return MR_EXIT_ERROR;
	if (r->node < 0) {
		mr_region_map_destroy(&map);
		return mr_cli_fail("region %s is on no single NUMA node: move_pages needs one", to);
	}
	o.node = r->node;
	/* without --apply move only asks where the pages are */
	if (o.apply && mr_root_may_change("move pages", true)) {
		mr_region_map_destroy(&map);
		return mr_cli_fail("%s", mr_last_error());
	}
	if (mr_numa_balancing_on())
		mr_cli_warn("automatic NUMA balancing is on (/proc/sys/kernel/numa_balancing): "
			    "the kernel may move these pages back toward the CPUs touching them; "
			    "memreg cannot set another process's memory policy, so only the "
			    "process's own policy (numactl --membind, mbind) makes this stick");
	ret = mr_move_pid(&o, &st);
	if (ret) {
		mr_region_map_destroy(&map);
		return mr_cli_fail("%s", mr_last_error());
	}
	if (json)
		print_json(&o, r->id, &st);
	else
		print_text(&o, r->id, &st);
	mr_region_map_destroy(&map);
	return mr_cli_finish(MR_EXIT_OK);
}
