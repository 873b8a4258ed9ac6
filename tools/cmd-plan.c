/* memregctl plan: which regions can be emptied, what each costs and saves, and a
 * plan file for memregctl evacuate (controller/plan.h does the work). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/root.h"
#include "controller/plan.h"
#include "tools/cli.h"

static void usage(FILE *f)
{
	fputs("Usage: memregctl plan [--free SIZE | --regions N | --target-power W]\n"
	      "                      [--record PHYS.rec] [--move-rate RATE] [--json] [-o PLAN]\n"
	      "                      [--to NODE] [--root DIR] [--mpst FILE]\n"
	      "Rank the regions that can be emptied: per region the bytes the kernel must move\n"
	      "(by kind), what blocks it, where its pages go, the time at a move rate measured on\n"
	      "this machine and the power it saves. With a goal, select regions for it, in the\n"
	      "order memregctl evacuate takes them, each with its pre-move: the pages processes\n"
	      "have mapped in the region go by move_pages to one node before its blocks go\n"
	      "offline (by default the nearest with room, the kernel's own first choice).\n"
	      "Changes nothing.\n\n"
	      "  --free SIZE         select regions until SIZE of memory is freed (2G, 512M)\n"
	      "  --regions N         select N regions\n"
	      "  --target-power W    select regions until the modelled saving reaches W watts\n"
	      "  --record PHYS.rec   residency from a physical record (memregctl record --phys);\n"
	      "                      without it savings are counted at standby (an upper bound)\n"
	      "  --move-rate RATE    bytes a second the kernel moves (256M); default: the rate\n"
	      "                      of the last memregctl evacuate in this boot, else a timed\n"
	      "                      move_pages of 64 MiB of memregctl's own memory between\n"
	      "                      two nodes of this machine\n"
	      "  --to NODE           pre-move to NODE (where locality matters); refused when\n"
	      "                      NODE lacks the room or the plan empties a region on it\n"
	      "  --json              the plan as JSON (memreg-plan(5)) on stdout\n"
	      "  -o PLAN             write the plan to PLAN, for memregctl evacuate\n"
	      "  --root DIR, --mpst FILE  as for memregctl regions\n"
	      "  -h, --help          this text\n", f);
}

static void print_size(const char *label, uint64_t bytes)
{
	char b[32];

	printf("%s%s", label, mr_format_size(bytes, b, sizeof(b)));
}

static void print_text(const struct mr_plan *plan)
{
	unsigned i, k, idx[4096], n;
	char b[32], c[32], o[16];

	printf("plan %s, boot %s, source %s, %u regions\n", plan->id,
	       plan->boot_id[0] ? plan->boot_id : "(none)", plan->source, plan->nr_regions);
	for (i = 0; i < plan->nr_warnings; i++)
		printf("MPST warning (%s): %s\n", plan->warnings[i].kind, plan->warnings[i].text);
	printf("move rate: %s%s%s\n",
	       plan->move_rate_bytes_per_s ? mr_format_size(plan->move_rate_bytes_per_s, b,
							    sizeof(b)) : "unknown",
	       plan->move_rate_bytes_per_s ? "/s, " : ", ", plan->move_rate_from);
	printf("\nRANK ORDER REGION NODE      SIZE      MOVE      ANON      FILE  SECONDS  SAVING mW  "
	       "PAGES GO TO\n");
	for (i = 0; i < plan->nr_regions; i++) {
		const struct mr_plan_region *pr = &plan->regions[i];

		if (pr->blockers)
			continue;
		snprintf(o, sizeof(o), pr->order ? "%u" : "-", pr->order);
		printf("%4u %5s %6u %4d %9s %9s", pr->rank, o, pr->id, pr->node,
		       mr_format_size(pr->size_bytes, b, sizeof(b)),
		       mr_format_size(pr->move_bytes, c, sizeof(c)));
		if (pr->kinds_known)
			printf(" %9s", mr_format_size(pr->anon_bytes, b, sizeof(b))),
			printf(" %9s", mr_format_size(pr->file_bytes, b, sizeof(b)));
		else
			printf(" %9s %9s", "-", "-");
		if (pr->seconds >= 0)
			printf(" %8.1f", pr->seconds);
		else
			printf(" %8s", "?");
		printf(" %10.0f ", pr->saving_mw);
		for (k = 0; k < pr->nr_dests; k++)
			printf(" node %d %s", pr->dests[k].node,
			       mr_format_size(pr->dests[k].bytes, b, sizeof(b)));
		printf("\n");
	}
	printf("\nblocked:\n");
	for (i = 0; i < plan->nr_regions; i++) {
		const struct mr_plan_region *pr = &plan->regions[i];

		for (k = 0; k < NR_MR_BLOCKERS; k++)
			if (pr->blockers & (1u << k))
				printf("  region %u (node %d): %s: %s\n", pr->id, pr->node,
				       mr_plan_blocker_name((enum mr_plan_blocker)k), pr->reasons[k]);
	}
	n = mr_plan_order(plan, idx, MR_ARRAY_SIZE(idx));
	if (plan->goal == MR_PLAN_GOAL_NONE) {
		printf("\nno goal given (--free, --regions, --target-power): nothing selected\n");
	} else {
		printf("\nselected regions, in evacuation order:");
		for (i = 0; i < n; i++)
			printf("%s %u", i ? "," : "", plan->regions[idx[i]].id);
		printf("%s\n", n ? "" : " none");
		print_size("  frees ", plan->selected_bytes);
		print_size(", moves ", plan->selected_move_bytes);
		if (plan->move_rate_bytes_per_s)
			printf(", about %.1f s", plan->selected_seconds);
		printf(", saves %.0f mW%s\n", plan->selected_saving_mw,
		       plan->goal_met ? "" : "; the goal is NOT met");
		for (i = 0; i < n; i++) {
			const struct mr_plan_region *pr = &plan->regions[idx[i]];

			if (pr->premove_node < 0) {
				printf("  region %u: no pre-move: %s\n", pr->id, pr->premove_note);
				continue;
			}
			printf("  region %u: pre-move %s to node %d with move_pages, of %u "
			       "process%s:", pr->id, mr_format_size(pr->premove_bytes, b, sizeof(b)),
			       pr->premove_node, pr->nr_procs, pr->nr_procs == 1 ? "" : "es");
			for (k = 0; k < pr->nr_procs && k < 5; k++)
				printf(" %d (%s)", pr->procs[k].pid, pr->procs[k].comm);
			printf("%s\n", pr->nr_procs > 5 ? " ..." : "");
		}
	}
	printf("savings: %s, %s\n", plan->residency_from[0] ? "at the record's residency"
	       : "at standby (no --record)", MR_PLAN_SAVING_CAVEAT);
	printf("notes:\n");
	for (i = 0; i < plan->nr_notes; i++)
		printf("  %s\n", plan->notes[i]);
}

/* "256M", "256M/s", or bytes. */
static int parse_rate(const char *s, uint64_t *out)
{
	char buf[64];
	size_t n = strlen(s);

	if (n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n + 1);
	if (n > 2 && strcmp(buf + n - 2, "/s") == 0)
		buf[n - 2] = '\0';
	return mr_parse_size(buf, out) || !*out ? -EINVAL : 0;
}

/* Time a move between the first two nodes with memory, when this is the live machine. */
static void measure(const struct mr_region_map *map, struct mr_plan_opts *o, char *from,
		    size_t len)
{
	int a = -1, b = -1;
	unsigned i;

	/* An offline this machine did in this boot says most about the next one. */
	if (mr_plan_rate_load(&o->move_rate_bytes_per_s, from, len) == 0)
		return;
	o->move_rate_bytes_per_s = 0;
	if (mr_root_is_fixture()) {
		snprintf(from, len, "not measured: a fixture root is not this machine");
		return;
	}
	for (i = 0; i < map->nr_regions; i++) {
		int n = map->regions[i].node;

		if (n < 0)
			continue;
		if (a < 0 || n < a) {
			if (a >= 0 && (b < 0 || a < b))
				b = a;
			a = n;
		} else if (n != a && (b < 0 || n < b)) {
			b = n;
		}
	}
	if (b < 0) {
		snprintf(from, len, "not measured: one node with memory");
		return;
	}
	if (mr_plan_measure_rate(a, b, 64u << 20, &o->move_rate_bytes_per_s, from, len)) {
		snprintf(from, len, "not measured: %s", mr_last_error());
		o->move_rate_bytes_per_s = 0;
	}
}

int mr_cmd_plan(int argc, char **argv)
{
	static const struct option options[] = {
		{ "free", required_argument, NULL, 'f' },
		{ "regions", required_argument, NULL, 'n' },
		{ "target-power", required_argument, NULL, 'p' },
		{ "record", required_argument, NULL, 'R' },
		{ "move-rate", required_argument, NULL, 'M' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "root", required_argument, NULL, 'r' },
		{ "mpst", required_argument, NULL, 'm' },
		{ "to", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mr_discover_opts dopts = { .source = MR_SOURCE_AUTO, .occupancy = true,
					  .skip_hwloc = true };
	struct mr_plan_opts o = { .scan_processes = true };
	const char *root = NULL, *record = NULL, *out = NULL;
	struct mr_residency res = { 0 };
	struct mr_power_model model = { 0 };
	struct mr_dmi_memory dmi;
	struct mr_region_map map = { 0 };
	struct mr_plan plan;
	char rate_from[200] = "";
	bool json = false, have_model = false;
	unsigned goals = 0;
	uint64_t v;
	int c, ret;

	while ((c = mr_cli_getopt(argc, argv, "ho:", options)) != -1) {
		switch (c) {
		case 'f':
			if (mr_parse_size(optarg, &o.goal_bytes) || !o.goal_bytes)
				return mr_cli_usage("plan", "--free: bad size '%s'", optarg);
			o.goal = MR_PLAN_GOAL_FREE;
			goals++;
			break;
		case 'n':
			if (mr_parse_u64(optarg, &v) || !v || v > 65536)
				return mr_cli_usage("plan", "--regions: bad count '%s'", optarg);
			o.goal_regions = (unsigned)v;
			o.goal = MR_PLAN_GOAL_REGIONS;
			goals++;
			break;
		case 'p': {
			char *end;
			double w = strtod(optarg, &end);

			if (end == optarg || *end || !(w > 0) || w > 1e6)
				return mr_cli_usage("plan", "--target-power: bad watts '%s'", optarg);
			o.goal_mw = w * 1000;
			o.goal = MR_PLAN_GOAL_POWER;
			goals++;
			break;
		}
		case 'R': record = optarg; break;
		case 'M':
			if (parse_rate(optarg, &o.move_rate_bytes_per_s))
				return mr_cli_usage("plan", "--move-rate: bad rate '%s' (bytes a "
						    "second: 256M or 256M/s)", optarg);
			snprintf(rate_from, sizeof(rate_from), "--move-rate %s", optarg);
			break;
		case 'j': json = true; break;
		case 'o': out = optarg; break;
		case 'r': root = optarg; break;
		case 'm': dopts.mpst_file = optarg; break;
		case 'T':
			if (mr_parse_u64(optarg, &v) || v >= MR_MAX_NODES)
				return mr_cli_usage("plan", "--to: bad node '%s'", optarg);
			o.to_set = true;
			o.to_node = (int)v;
			break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return mr_cli_usage("plan", "unexpected argument '%s'", argv[optind]);
	if (goals > 1)
		return mr_cli_usage("plan", "give one of --free, --regions and --target-power");
	if (mr_root_set(root))
		return mr_cli_fail("%s", mr_last_error());
	if (mr_region_map_discover(&map, &dopts))
		return mr_cli_fail("%s", mr_last_error());
	if (record && mr_residency_read_record(record, &map, &res)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	if (!mr_power_model_build(&model, &map, mr_dmi_memory_read(&dmi) == 0 ? &dmi : NULL))
		have_model = true;
	mr_clear_error();
	if (!o.move_rate_bytes_per_s)
		measure(&map, &o, rate_from, sizeof(rate_from));
	o.move_rate_from = rate_from;
	o.residency = record ? &res : NULL;
	o.mpst_file = dopts.mpst_file;
	if (mr_plan_make(&map, have_model ? &model : NULL, &o, &plan)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	if (!o.move_rate_bytes_per_s && rate_from[0])
		snprintf(plan.move_rate_from, sizeof(plan.move_rate_from), "%s", rate_from);
	ret = MR_EXIT_OK;
	if (out && mr_plan_write(&plan, out))
		ret = mr_cli_fail("%s", mr_last_error());
	if (json) {
		json_object *j = mr_plan_to_json(&plan);

		mr_cli_print_json(j);
		json_object_put(j);
	} else {
		print_text(&plan);
		if (out && ret == MR_EXIT_OK)
			printf("plan written to %s: `memregctl evacuate %s` shows what it would do\n",
			       out, out);
	}
	mr_plan_destroy(&plan);
out:
	if (record)
		mr_residency_free(&res);
	if (have_model)
		mr_power_model_destroy(&model);
	mr_region_map_destroy(&map);
	return mr_cli_finish(ret);
}
