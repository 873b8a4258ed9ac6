/* memregctl profile: learn a MEMREG_PROFILE (hot/cold allocation sites) from an access
 * record of a process running under libmemreg.so and that process's MEMREG_SITE_MAP. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util.h"
#include "monitor/profile.h"
#include "monitor/record.h"
#include "tools/cli.h"

static void usage(FILE *f)
{
	fputs("Usage: memregctl profile RECORD --site-map SITEMAP -o PROFILE\n"
	      "                         [--hot-threshold SCORE] [--json]\n\n"
	      "Join a process-scoped record (memregctl record) of a program running under\n"
	      "libmemreg.so with the site map it wrote at exit (MEMREG_SITE_MAP), attribute\n"
	      "each page's access rate to the allocation sites on it by their bytes, and\n"
	      "write the profile MEMREG_PROFILE reads: each site hot or cold.\n\n"
	      "A site's score estimates the fraction of sampling intervals in which its bytes\n"
	      "were accessed (docs/monitor.md); score >= SCORE is hot, anything else cold.\n"
	      "A site none of whose pages was accessed over the whole record is cold.\n\n"
	      "Options:\n"
	      "  -s, --site-map FILE     the MEMREG_SITE_MAP of the recorded process\n"
	      "  -o, --output FILE       the profile to write\n"
	      "  -t, --hot-threshold X   hot from this score on (default 0.5; > 0)\n"
	      "      --json              print the sites as JSON (else a table)\n"
	      "  -h, --help              this text\n", f);
}

static int parse_threshold(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0)
		return -EINVAL;
	*out = v;
	return 0;
}

static void print_table(const struct mr_site_map *m)
{
	size_t i;

	printf("%-5s %-5s %9s %9s %12s %8s %8s  %s\n", "site", "class", "score", "share",
	       "bytes", "pages", "accessed", "build-id offset module");
	for (i = 0; i < m->nr_sites; i++) {
		const struct mr_prof_site *s = &m->sites[i];

		printf("%-5" PRIu32 " %-5s %9.4f %9.4f %12" PRIu64 " %8" PRIu64 " %8" PRIu64
		       "  %s 0x%" PRIx64 " %s\n", s->id, s->hot ? "hot" : "cold", s->score,
		       s->share_score, s->bytes, s->pages, s->accessed_pages,
		       s->build_id[0] ? s->build_id : "-", s->offset, s->module);
	}
}

static void print_json(const struct mr_site_map *m, double thr, const char *out)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t i;

	json_object_object_add(o, "profile", json_object_new_string(out));
	json_object_object_add(o, "pid", json_object_new_int(m->pid));
	json_object_object_add(o, "hot_threshold", json_object_new_double(thr));
	json_object_object_add(o, "pages", json_object_new_uint64(m->nr_pages));
	for (i = 0; i < m->nr_sites; i++) {
		const struct mr_prof_site *s = &m->sites[i];
		struct json_object *j = json_object_new_object();

		json_object_object_add(j, "id", json_object_new_uint64(s->id));
		json_object_object_add(j, "build_id", s->build_id[0] ?
				       json_object_new_string(s->build_id) : NULL);
		json_object_object_add(j, "offset", json_object_new_uint64(s->offset));
		json_object_object_add(j, "module", json_object_new_string(s->module));
		json_object_object_add(j, "class", json_object_new_string(s->hot ? "hot" : "cold"));
		json_object_object_add(j, "score", json_object_new_double(s->score));
		json_object_object_add(j, "share_score", json_object_new_double(s->share_score));
		json_object_object_add(j, "bytes", json_object_new_uint64(s->bytes));
		json_object_object_add(j, "pages", json_object_new_uint64(s->pages));
		json_object_object_add(j, "accessed_pages", json_object_new_uint64(s->accessed_pages));
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "sites", a);
	mr_cli_print_json(o);
	json_object_put(o);
}

int mr_cmd_profile(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "site-map", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "hot-threshold", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *map_path = NULL, *out = NULL, *rec_path;
	double thr = MR_PROF_DEFAULT_HOT_THRESHOLD;
	struct mr_site_map map;
	struct mr_rec rec;
	bool json = false;
	char comment[512];
	FILE *f;
	int c, err;

	while ((c = mr_cli_getopt(argc, argv, "s:o:t:h", opts)) != -1) {
		switch (c) {
		case 's':
			map_path = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 't':
			if (parse_threshold(optarg, &thr))
				return mr_cli_usage("profile", "bad --hot-threshold '%s' (a number > 0)",
						    optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(0);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		return mr_cli_usage("profile", "needs exactly one RECORD");
	if (!map_path || !out)
		return mr_cli_usage("profile", "needs --site-map SITEMAP and -o PROFILE");
	rec_path = argv[optind];
	if (mr_rec_load(rec_path, &rec))
		return mr_cli_fail("%s", mr_last_error());
	if (mr_prof_map_load(map_path, &map)) {
		mr_rec_free(&rec);
		return mr_cli_fail("%s", mr_last_error());
	}
	err = 0;
	if (rec.hdr.kind != MR_MON_TARGET_PROCESS)
		err = mr_error(-EINVAL, "%s: a physical-memory record; profile needs a process record",
			       rec_path);
	else if (rec.hdr.pid != map.pid)
		err = mr_error(-EINVAL, "%s: record of pid %d, but site map %s is of pid %d", rec_path,
			       rec.hdr.pid, map_path, map.pid);
	else if (mr_prof_page_rates(&rec, &map))
		err = mr_error_wrap(-EINVAL, "%s", rec_path);
	if (err) {
		mr_rec_free(&rec);
		mr_prof_map_free(&map);
		return mr_cli_fail("%s", mr_last_error());
	}
	mr_prof_attribute(&map, thr);
	snprintf(comment, sizeof(comment), "record %s (pid %d, backend %s, %zu snapshots), site map %s",
		 rec_path, rec.hdr.pid, rec.hdr.backend, rec.nr_snaps, map_path);
	f = fopen(out, "w");
	if (!f)
		err = mr_error(-errno, "%s: cannot write: %s", out, strerror(errno));
	else if (mr_prof_write(f, &map, thr, comment) | fclose(f))
		err = mr_error(-EIO, "%s: write failed", out);
	if (!err) {
		if (json)
			print_json(&map, thr, out);
		else
			print_table(&map);
	}
	mr_rec_free(&rec);
	mr_prof_map_free(&map);
	return err ? mr_cli_fail("%s", mr_last_error()) : mr_cli_finish(0);
}
