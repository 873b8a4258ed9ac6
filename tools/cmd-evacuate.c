/* memregctl evacuate: carry out a plan from memregctl plan region by region (the
 * kernel moves the pages out as the blocks go offline), or undo it. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/root.h"
#include "controller/plan.h"
#include "regions/placement.h"
#include "tools/cli.h"

/* memregd's status file (JSON, controller/run.c's mr_ctl_run_status_json). */
#define MEMREGD_STATUS "/run/memreg/memregd.status"

static void usage(FILE *f)
{
	fputs("Usage: memregctl evacuate PLAN [--apply] [--timeout DURATION] [--keep-going]\n"
	      "                              [--force WARNING] [--json] [--root DIR]\n"
	      "       memregctl evacuate --undo PLAN [--apply] [--json] [--root DIR]\n"
	      "Carry out PLAN (from memregctl plan -o): region by region in the plan's order,\n"
	      "first its pre-move (the pages the plan's processes have mapped in the region go\n"
	      "to the plan's node with move_pages), then take the region's memory blocks\n"
	      "offline; the kernel migrates what is left to other nodes, nearest first. A line\n"
	      "per block, and a progress bar on a terminal. The first region that fails is\n"
	      "rolled back (its blocks online again, in their zone; its pre-move stays) and\n"
	      "the evacuation stops there. Without --apply, a dry run. A plan made for\n"
	      "another machine or boot, or whose blocks changed since, is refused; so is a\n"
	      "region a running memregd acts on (" MEMREGD_STATUS ").\n\n"
	      "  --apply             do it (default: say what would be done)\n"
	      "  --timeout DURATION  time limit per region (120, 90s, 2m; default 2m)\n"
	      "  --keep-going        after a region fails (and is rolled back), go on\n"
	      "  --force WARNING     accept an MPST table warning (as for memregctl offline)\n"
	      "  --undo PLAN         bring back online exactly the blocks PLAN took (the state\n"
	      "                      file's entries tagged with its id), each to its zone\n"
	      "  --json              report as JSON: bytes moved by the pre-move and by the\n"
	      "                      offline, seconds, regions offline\n"
	      "  --root DIR          as for memregctl regions (nothing is ever applied there)\n"
	      "  -h, --help          this text\n", f);
}

struct progress {
	bool quiet;		/* --json: no lines on stdout */
	bool tty;
	unsigned region;
};

static void on_block(uint64_t block, const char *state, int err, unsigned nr_done,
		     unsigned nr_blocks, void *ctx)
{
	struct progress *p = ctx;
	unsigned width = 30, fill = nr_blocks ? nr_done * width / nr_blocks : width, i;

	if (p->quiet)
		return;
	if (p->tty)
		printf("\r\033[K");
	if (p->region != UINT_MAX)
		printf("  region %u:", p->region);
	if (err)
		printf("  memory%" PRIu64 " %s FAILED: %s\n", block, state, mr_last_error());
	else
		printf("  memory%" PRIu64 " %s\n", block, state);
	if (p->tty) {
		printf("  [");
		for (i = 0; i < width; i++)
			putchar(i < fill ? '#' : '.');
		printf("] %u/%u blocks", nr_done, nr_blocks);
	}
	fflush(stdout);
}

static int set_state(uint64_t block, const char *state, uint64_t deadline_ns, void *ctx)
{
	(void)ctx;
	return mr_block_sysfs_ops.set_state(block, state, deadline_ns, mr_block_sysfs_ops.ctx);
}

/*
 * memregd's targets: a region in @plan's selection that a running memregd acts on
 * (its status file, the JSON controller/run.c writes: pid alive, running, boot_id
 * this boot's, targeted_regions) is refused. No file, no memregd; a stale one (the
 * pid gone, another boot, a run that ended) is ignored.
 */
static int check_memregd(const struct mr_plan *plan)
{
	json_object *j, *v, *regions = NULL;
	char *data = NULL, now[64] = "";
	const char *boot = "";
	size_t len;
	long pid = 0;
	bool running = false;
	unsigned i;
	int ret = mr_root_read_file(MEMREGD_STATUS, 1u << 20, &data, &len);

	if (ret == -ENOENT) {
		mr_clear_error();
		return 0;
	}
	if (ret)
		return ret;
	j = json_tokener_parse(data);
	free(data);
	if (!j || !json_object_is_type(j, json_type_object)) {
		json_object_put(j);
		return mr_error(-EINVAL, "%s: not memregd's status (JSON): remove it if no "
				"memregd runs", MEMREGD_STATUS);
	}
	if (json_object_object_get_ex(j, "pid", &v))
		pid = (long)json_object_get_int64(v);
	if (json_object_object_get_ex(j, "running", &v))
		running = json_object_get_boolean(v);
	if (json_object_object_get_ex(j, "boot_id", &v) && json_object_is_type(v, json_type_string))
		boot = json_object_get_string(v);
	json_object_object_get_ex(j, "targeted_regions", &regions);
	if (mr_root_read_str("/proc/sys/kernel/random/boot_id", now, sizeof(now)))
		now[0] = '\0';
	mr_clear_error();
	if (pid <= 0 || !running || strcmp(boot, now) != 0 || !mr_proc_alive((pid_t)pid)) {
		mr_clear_error();
		json_object_put(j);
		return 0;	/* a stale file: memregd is not running */
	}
	for (i = 0; i < plan->nr_regions; i++) {
		size_t k;

		if (!plan->regions[i].order)
			continue;
		for (k = 0; regions && k < json_object_array_length(regions); k++) {
			if (json_object_get_int(json_object_array_get_idx(regions, k)) !=
			    (int)plan->regions[i].id)
				continue;
			json_object_put(j);
			return mr_error(-EBUSY, "region %u is one memregd (pid %ld) acts on (%s): "
					"refusing to evacuate it; stop memregd or drop the region "
					"from its configuration", plan->regions[i].id, pid,
					MEMREGD_STATUS);
		}
	}
	json_object_put(j);
	return 0;
}

/* A region's "premove" object: planned (dry run: @seconds < 0) or done. */
static json_object *premove_json(int node, uint64_t bytes, unsigned procs, unsigned gone,
				 uint64_t failed_pages, double seconds)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "node", json_object_new_int(node));
	json_object_object_add(j, seconds < 0 ? "bytes" : "bytes_moved",
			       json_object_new_uint64(bytes));
	json_object_object_add(j, "processes", json_object_new_int((int)procs));
	if (seconds >= 0) {
		json_object_object_add(j, "processes_gone", json_object_new_int((int)gone));
		json_object_object_add(j, "pages_left", json_object_new_uint64(failed_pages));
		json_object_object_add(j, "seconds", json_object_new_double(seconds));
	}
	return j;
}

/*
 * struct premove - what a region's pre-move did: bytes now on the plan's node
 * (@moved_bytes), pages that stayed (move_pages refused them: the offline moves
 * them), processes gone or replaced since the plan.
 */
struct premove {
	uint64_t moved_bytes, failed_pages;
	unsigned procs, gone;
	uint64_t elapsed_ns;
};

/* The pre-move of @pl: each process of the plan that still runs has its pages mapped
 * in @r moved to the plan's node (mr_move_pid with the region filter). A process
 * that cannot be moved is left to the offline, said as a warning. */
static void premove_region(const struct mr_plan_region *pl, const struct mr_region *r,
			   struct premove *pm)
{
	uint64_t t0 = mr_now_ns();
	unsigned k;

	memset(pm, 0, sizeof(*pm));
	for (k = 0; k < pl->nr_procs; k++) {
		const struct mr_plan_proc *p = &pl->procs[k];
		struct mr_move_opts mo = { .pid = p->pid, .node = pl->premove_node,
					   .region = r, .apply = true };
		struct mr_move_stats st;

		if (mr_proc_same(p->pid, p->starttime_ticks)) {
			mr_clear_error();
			pm->gone++;
			continue;
		}
		pm->procs++;
		if (mr_move_pid(&mo, &st)) {
			mr_cli_warn("region %u: pre-move of pid %d (%s): %s; the offline moves its "
				    "pages", r->id, p->pid, p->comm, mr_last_error());
			mr_clear_error();
			continue;
		}
		pm->moved_bytes += st.moved * st.page_bytes;
		pm->failed_pages += mr_move_failed_pages(&st);
	}
	pm->elapsed_ns = mr_now_ns() - t0;
}

static int undo(const char *path, bool apply, bool json)
{
	struct progress pr = { .quiet = json, .tty = !json && isatty(STDOUT_FILENO),
			       .region = UINT_MAX };
	struct mr_block_ops ops = { .set_state = set_state, .ctx = &pr, .done = on_block };
	struct mr_block_result res = { 0 };
	struct mr_block_plan bp;
	struct mr_plan plan;
	unsigned i;
	int ret;

	if (mr_plan_read(path, &plan))
		return mr_cli_fail("%s", mr_last_error());
	/* Entries of blocks that never went offline (memregctl killed during the write)
	 * go first, so the state file ends empty when everything is back. */
	if (apply && mr_block_state_prune(true)) {
		mr_plan_destroy(&plan);
		return mr_cli_fail("%s", mr_last_error());
	}
	if (mr_restore_plan(&bp, plan.id)) {
		mr_plan_destroy(&plan);
		return mr_cli_fail("%s", mr_last_error());
	}
	for (i = 0; i < bp.nr_notes; i++)
		mr_cli_warn("%s", bp.notes[i]);
	if (!apply) {
		if (!json) {
			printf("plan %s: would bring back %u blocks:", plan.id, bp.nr_blocks);
			for (i = 0; i < bp.nr_blocks; i++)
				printf(" memory%" PRIu64 " (%s)", bp.blocks[i],
				       mr_block_zone_online(bp.zones[i]));
			printf("\nnothing changed: pass --apply to do it\n");
		}
		ret = MR_EXIT_OK;
	} else if (!bp.nr_blocks) {
		ret = MR_EXIT_OK;
		if (!json)
			printf("plan %s: no block of it is offline\n", plan.id);
	} else if (mr_block_plan_apply(&bp, 0, true, &ops, &res)) {
		if (pr.tty)
			printf("\n");
		ret = mr_cli_fail("undo of plan %s: %s (%u of %u blocks online)", plan.id,
				  mr_last_error(), res.done, bp.nr_blocks);
	} else {
		if (pr.tty)
			printf("\n");
		if (!json)
			printf("plan %s: %u blocks back online in %.3f s\n", plan.id, res.done,
			       (double)res.elapsed_ns / 1e9);
		ret = MR_EXIT_OK;
	}
	if (json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "plan", json_object_new_string(plan.id));
		json_object_object_add(o, "applied", json_object_new_boolean(apply));
		json_object_object_add(o, "blocks_online", json_object_new_int((int)res.done));
		json_object_object_add(o, "blocks", json_object_new_int((int)bp.nr_blocks));
		json_object_object_add(o, "seconds",
				       json_object_new_double((double)res.elapsed_ns / 1e9));
		mr_cli_print_json(o);
		json_object_put(o);
	}
	mr_block_plan_destroy(&bp);
	mr_plan_destroy(&plan);
	return mr_cli_finish(ret);
}

int mr_cmd_evacuate(int argc, char **argv)
{
	static const struct option options[] = {
		{ "apply", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "force", required_argument, NULL, 'F' },
		{ "undo", required_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mr_discover_opts dopts = { .source = MR_SOURCE_AUTO, .occupancy = true,
					  .skip_hwloc = true };
	const char *root = NULL, *forced = NULL, *undo_path = NULL;
	uint64_t timeout_us = 120 * 1000000u, moved = 0, elapsed_ns = 0, offline_ns = 0,
		 premoved = 0, premove_ns = 0;
	bool apply = false, keep_going = false, json = false;
	struct progress pr = { 0 };
	struct mr_block_ops ops = { .set_state = set_state, .ctx = &pr, .done = on_block };
	struct mr_plan_warning w[32];
	struct mr_region_map map = { 0 };
	struct mr_plan plan;
	unsigned idx[4096], n, i, k, nr_w, nr_offline = 0, nr_failed = 0;
	json_object *jregions = NULL;
	char sz[32];
	int c, ret = MR_EXIT_OK;

	while ((c = mr_cli_getopt(argc, argv, "h", options)) != -1) {
		switch (c) {
		case 'a': apply = true; break;
		case 't':
			if (mr_cli_timeout_us("evacuate", optarg, &timeout_us))
				return MR_EXIT_USAGE;
			break;
		case 'k': keep_going = true; break;
		case 'F': forced = optarg; break;
		case 'u': undo_path = optarg; break;
		case 'j': json = true; break;
		case 'r': root = optarg; break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (undo_path ? optind != argc : optind != argc - 1)
		return mr_cli_usage("evacuate", "give one PLAN, or --undo PLAN");
	if (mr_root_set(root))
		return mr_cli_fail("%s", mr_last_error());
	if (undo_path) {
		if (apply && mr_root_may_change("bring memory back online", true))
			return mr_cli_fail("%s", mr_last_error());
		return undo(undo_path, apply, json);
	}

	/* Under a fixture root --apply is refused before anything is read or locked. */
	if (apply && mr_root_may_change("evacuate memory", true))
		return mr_cli_fail("%s", mr_last_error());
	if (mr_plan_read(argv[optind], &plan))
		return mr_cli_fail("%s", mr_last_error());
	if (mr_plan_check_machine(&plan, plan.mpst_file) || check_memregd(&plan)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out_plan;
	}
	dopts.mpst_file = plan.mpst_file[0] ? plan.mpst_file : NULL;
	if (mr_region_map_discover(&map, &dopts)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out_plan;
	}
	nr_w = mr_plan_mpst_warnings(&map, w, 32);
	for (i = 0; i < nr_w; i++)
		mr_cli_warn("MPST warning (%s): %s", w[i].kind, w[i].text);
	if (mr_plan_guard_apply(w, nr_w, plan.mpst_file, apply, forced)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	n = mr_plan_order(&plan, idx, MR_ARRAY_SIZE(idx));
	if (!n) {
		ret = mr_cli_fail("plan %s selects no region (make it with --free, --regions or "
				  "--target-power)", plan.id);
		goto out;
	}
	if (apply && mr_block_state_lock()) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	/* A running controller reads this and never targets these regions meanwhile. */
	if (apply && mr_plan_evacuation_begin(&plan, idx, n)) {
		ret = mr_cli_fail("%s", mr_last_error());
		mr_block_state_unlock();
		goto out;
	}
	pr.quiet = json;
	pr.tty = !json && isatty(STDOUT_FILENO);
	jregions = json_object_new_array();
	if (!json)
		printf("plan %s: %u region%s, %s\n", plan.id, n, n == 1 ? "" : "s",
		       apply ? "taking them offline" : "dry run (nothing changes without --apply)");
	for (k = 0; k < n; k++) {
		const struct mr_plan_region *pl = &plan.regions[idx[k]];
		const struct mr_region *r = pl->id < map.nr_regions ? &map.regions[pl->id] : NULL;
		struct mr_block_result res = { 0 };
		struct premove pm = { 0 };
		uint64_t offline_bytes;
		struct mr_block_plan bp;
		json_object *jr = json_object_new_object();
		const char *status;
		char err[512] = "";

		json_object_object_add(jr, "id", json_object_new_int((int)pl->id));
		json_object_array_add(jregions, jr);
		if (!r || mr_offline_plan(&map, r, &bp)) {
			snprintf(err, sizeof(err), "%s", r ? mr_last_error() : "no such region now");
			status = "refused";
			goto failed;
		}
		snprintf(bp.tag, sizeof(bp.tag), "%s", plan.id);
		json_object_object_add(jr, "node", json_object_new_int(r->node));
		json_object_object_add(jr, "blocks", json_object_new_int((int)bp.nr_blocks));
		json_object_object_add(jr, "estimated_seconds", pl->seconds >= 0 ?
				       json_object_new_double(pl->seconds) : NULL);
		if (!apply) {
			offline_bytes = r->occ.movable_bytes > pl->premove_bytes ?
					r->occ.movable_bytes - pl->premove_bytes : 0;
			if (!json && pl->premove_node >= 0)
				printf("region %u (node %d): would pre-move %s of %u process%s to "
				       "node %d with move_pages\n", r->id, r->node,
				       mr_format_size(pl->premove_bytes, sz, sizeof(sz)),
				       pl->nr_procs, pl->nr_procs == 1 ? "" : "es",
				       pl->premove_node);
			if (!json) {
				printf("region %u (node %d): would offline %u blocks, moving %s",
				       r->id, r->node, bp.nr_blocks,
				       mr_format_size(offline_bytes, sz, sizeof(sz)));
				if (pl->seconds >= 0)
					printf(", about %.1f s", pl->seconds);
				printf("\n");
			}
			json_object_object_add(jr, "status", json_object_new_string("dry-run"));
			json_object_object_add(jr, "premove", pl->premove_node < 0 ? NULL :
					       premove_json(pl->premove_node, pl->premove_bytes,
							    pl->nr_procs, 0, 0, -1));
			json_object_object_add(jr, "move_bytes",
					       json_object_new_uint64(offline_bytes));
			mr_block_plan_destroy(&bp);
			continue;
		}
		pr.region = r->id;
		if (pl->premove_node >= 0) {
			premove_region(pl, r, &pm);
			premoved += pm.moved_bytes;
			premove_ns += pm.elapsed_ns;
			elapsed_ns += pm.elapsed_ns;
			json_object_object_add(jr, "premove",
					       premove_json(pl->premove_node, pm.moved_bytes,
							    pm.procs, pm.gone, pm.failed_pages,
							    (double)pm.elapsed_ns / 1e9));
			if (!json)
				printf("  region %u:  pre-move: %s of %u process%s to node %d in "
				       "%.3f s (%" PRIu64 " pages left to the offline, %u "
				       "process%s gone)\n", r->id,
				       mr_format_size(pm.moved_bytes, sz, sizeof(sz)), pm.procs,
				       pm.procs == 1 ? "" : "es", pl->premove_node,
				       (double)pm.elapsed_ns / 1e9, pm.failed_pages, pm.gone,
				       pm.gone == 1 ? "" : "es");
		} else {
			json_object_object_add(jr, "premove", NULL);
		}
		/* What the offline moves: the region's movable bytes less the pre-move's. */
		offline_bytes = r->occ.movable_bytes > pm.moved_bytes ?
				r->occ.movable_bytes - pm.moved_bytes : 0;
		mr_format_size(offline_bytes, sz, sizeof(sz));
		if (!json)
			printf("region %u (node %d): %u blocks, moving %s\n", r->id, r->node,
			       bp.nr_blocks, sz);
		if (mr_block_plan_apply(&bp, timeout_us * 1000u, true, &ops, &res)) {
			snprintf(err, sizeof(err), "%s", mr_last_error());
			status = "rolled-back";
			elapsed_ns += res.elapsed_ns;
			json_object_object_add(jr, "seconds",
					       json_object_new_double((double)res.elapsed_ns / 1e9));
			mr_block_plan_destroy(&bp);
			goto failed;
		}
		if (pr.tty)
			printf("\r\033[K");
		moved += offline_bytes;
		elapsed_ns += res.elapsed_ns;
		offline_ns += res.elapsed_ns;
		nr_offline++;
		if (!json)
			printf("region %u: offline in %.3f s\n", r->id, (double)res.elapsed_ns / 1e9);
		json_object_object_add(jr, "status", json_object_new_string("offline"));
		json_object_object_add(jr, "bytes_moved", json_object_new_uint64(offline_bytes));
		json_object_object_add(jr, "seconds",
				       json_object_new_double((double)res.elapsed_ns / 1e9));
		mr_block_plan_destroy(&bp);
		continue;
failed:
		/* the bar's line cleared before the error goes to stderr (the same tty) */
		if (pr.tty) {
			printf("\r\033[K");
			fflush(stdout);
		}
		nr_failed++;
		json_object_object_add(jr, "status", json_object_new_string(status));
		json_object_object_add(jr, "error", json_object_new_string(err));
		mr_cli_fail("region %u: %s%s", pl->id, err, keep_going ? "" :
			    "; stopping (--keep-going goes on to the next region)");
		if (!keep_going)
			break;
	}
	if (apply) {
		/* The rate this machine emptied regions at, for the next plan: its estimate
		 * covers every byte, pre-moved or moved by the offline. */
		if (nr_offline && mr_plan_rate_save(moved + premoved, offline_ns + premove_ns))
			mr_cli_warn("%s", mr_last_error());
		mr_plan_evacuation_end();
		mr_block_state_unlock();
	}
	if (json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "plan", json_object_new_string(plan.id));
		json_object_object_add(o, "applied", json_object_new_boolean(apply));
		json_object_object_add(o, "bytes_moved", json_object_new_uint64(moved));
		json_object_object_add(o, "bytes_premoved", json_object_new_uint64(premoved));
		json_object_object_add(o, "premove_seconds",
				       json_object_new_double((double)premove_ns / 1e9));
		json_object_object_add(o, "seconds", json_object_new_double((double)elapsed_ns / 1e9));
		json_object_object_add(o, "estimated_seconds", plan.move_rate_bytes_per_s ?
				       json_object_new_double(plan.selected_seconds) : NULL);
		json_object_object_add(o, "regions_offline", json_object_new_int((int)nr_offline));
		json_object_object_add(o, "regions_failed", json_object_new_int((int)nr_failed));
		json_object_object_add(o, "regions", jregions);
		jregions = NULL;
		mr_cli_print_json(o);
		json_object_put(o);
	} else if (apply) {
		char psz[32];

		mr_format_size(moved, sz, sizeof(sz));
		mr_format_size(premoved, psz, sizeof(psz));
		printf("%u of %u regions offline, %s moved by the offline and %s by the pre-move "
		       "in %.3f s", nr_offline, n, sz, psz, (double)elapsed_ns / 1e9);
		if (plan.move_rate_bytes_per_s)
			printf(" (estimated %.1f s)", plan.selected_seconds);
		printf("; `memregctl evacuate --undo %s --apply` brings them back\n", argv[optind]);
	}
	ret = nr_failed ? MR_EXIT_ERROR : MR_EXIT_OK;
out:
	json_object_put(jregions);
	mr_region_map_destroy(&map);
out_plan:
	mr_plan_destroy(&plan);
	return mr_cli_finish(ret);
}
