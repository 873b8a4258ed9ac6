/* memregctl record: monitor a process (or physical memory) with one backend and
 * write its snapshots to a record file until the target ends or a signal arrives. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/root.h"
#include "monitor/monitor.h"
#include "monitor/record.h"
#include "tools/cli.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	stop_flag = sig;
}

static void usage(FILE *f)
{
	const struct mr_mon_ops *const *b;
	size_t nr, i;

	fprintf(f, "Usage: memregctl record [OPTIONS] (--pid PID | --phys | -- COMMAND [ARG...])\n\n"
		"Monitor which memory is accessed and write one snapshot of the monitoring\n"
		"regions per aggregation interval to a record file (memreg-record(5)), until\n"
		"the command ends, the process exits, --duration passes or SIGINT/SIGTERM.\n"
		"The file is valid at every moment: read it with `memregctl report`.\n\n"
		"Options:\n"
		"  -b, --backend NAME   auto (default: the best one whose self-test passes),\n"
		"                       or one of the backends below\n"
		"  -a, --attrs LIST     sample_us,aggr_us,update_us,min_regions,max_regions;\n"
		"                       empty fields keep the backend's default\n"
		"  -o, --output FILE    record file (default memreg.rec)\n"
		"  -p, --pid PID        monitor a running process\n"
		"      --phys           monitor physical memory (damon only)\n"
		"  -d, --duration SEC   stop after SEC seconds\n"
		"      --replay FILE    the replay backend's source record\n"
		"      --apply          allow backends that change kernel state: damon (global),\n"
		"                       refs and softdirty on a --pid (a COMMAND record starts\n"
		"                       is its own to observe)\n"
		"      --root DIR       read /proc and /sys under DIR (a fixture: never written)\n"
		"  -h, --help           this text\n\nBackends (default intervals sample/aggr/update):\n");
	b = mr_mon_backends(&nr);
	for (i = 0; i < nr; i++) {
		const struct mr_mon_attrs *a = &b[i]->default_attrs;

		fprintf(f, "  %s (%llu us / %llu us / %llu us, %u..%u regions):\n", b[i]->name,
			(unsigned long long)a->sample_us, (unsigned long long)a->aggr_us,
			(unsigned long long)a->update_us, a->min_nr_regions, a->max_nr_regions);
		{
			const char *p = b[i]->help;

			while (*p) {
				const char *nl = strchr(p, '\n');
				int n = nl ? (int)(nl - p) : (int)strlen(p);

				fprintf(f, "      %.*s\n", n, p);
				p += n + (nl ? 1 : 0);
			}
		}
	}
}

struct rec_state {
	struct mr_rec_writer w;
	size_t nr_snaps;
};

static int write_snapshot(struct mr_mon_ctx *ctx, uint64_t time_us, void *arg)
{
	struct rec_state *s = arg;
	int err = mr_rec_write_snapshot(&s->w, time_us, ctx->target.regions, ctx->target.nr_regions);

	if (!err)
		s->nr_snaps++;
	return err;
}

int mr_cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "attrs", required_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "phys", no_argument, NULL, 'P' },
		{ "duration", required_argument, NULL, 'd' },
		{ "replay", required_argument, NULL, 'R' },
		{ "apply", no_argument, NULL, 'A' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *backend = "auto", *attrs = NULL, *out = "memreg.rec", *root = NULL;
	const char *replay = NULL;
	const struct mr_mon_ops *ops;
	struct mr_mon_ctx ctx, want;
	struct rec_state st = { .w = { .fd = -1 } };
	struct mr_rec_header hdr = { 0 };
	struct sigaction sa = { 0 };
	uint64_t pid = 0, duration = 0;
	bool phys = false, apply = false;
	pid_t child = -1;
	uint64_t start_us = mr_mon_now_us();
	char why[512] = "", note[1024];
	int c, err, status = MR_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+b:a:o:p:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': backend = optarg; break;
		case 'a': attrs = optarg; break;
		case 'o': out = optarg; break;
		case 'p':
			if (mr_parse_u64(optarg, &pid) || !pid || pid > INT32_MAX)
				return mr_cli_usage(argv[0], "bad --pid '%s'", optarg);
			break;
		case 'P': phys = true; break;
		case 'd':
			if (mr_parse_u64(optarg, &duration) || !duration || duration > 86400 * 365)
				return mr_cli_usage(argv[0], "bad --duration '%s' (seconds)", optarg);
			break;
		case 'R': replay = optarg; break;
		case 'A': apply = true; break;
		case 'r': root = optarg; break;
		case 'h': usage(stdout); return mr_cli_finish(MR_EXIT_OK);
		default: return mr_cli_usage(argv[0], "unknown option");
		}
	}
	if ((pid != 0) + phys + (optind < argc) + (replay != NULL) != 1)
		return mr_cli_usage(argv[0], "give exactly one of --pid PID, --phys, --replay FILE "
				    "or -- COMMAND");
	if (replay && strcmp(backend, "auto") && strcmp(backend, "replay"))
		return mr_cli_usage(argv[0], "--replay goes with --backend replay");
	if (replay)
		backend = "replay";
	if (mr_root_set(root))
		return mr_cli_fail("%s", mr_last_error());

	/* what is to be observed, and the consent given for it */
	mr_mon_ctx_init(&want, NULL);
	want.apply = apply;
	want.target.kind = phys ? MR_MON_TARGET_PHYS : MR_MON_TARGET_PROCESS;
	want.target.pid = (pid_t)pid;
	want.target.started = optind < argc;	/* record -- COMMAND */
	if (strcmp(backend, "auto") == 0) {
		ops = mr_mon_backend_auto(&want, why, sizeof(why));
		if (!ops)
			return mr_cli_fail("no backend works here: %s", why);
		fprintf(stderr, "memregctl record: backend auto: using %s%s%s%s\n", ops->name,
			why[0] ? " (passed over: " : "", why, why[0] ? ")" : "");
	} else {
		ops = mr_mon_backend_find(backend);
		if (!ops)
			return mr_cli_usage(argv[0], "unknown backend '%s'", backend);
	}
	if (ops == &mr_mon_ops_uffd)
		return mr_cli_fail("uffd watches only the calling process's own memory; it is "
				   "used through the library (mr_mon_uffd_watch), not by record");
	mr_mon_ctx_init(&ctx, ops);
	if (attrs && mr_mon_attrs_parse(attrs, &ctx.attrs)) {
		mr_mon_ctx_destroy(&ctx);
		return mr_cli_usage(argv[0], "%s", mr_last_error());
	}
	ctx.apply = apply;
	ctx.selftest_passed = strcmp(backend, "auto") == 0;	/* mr_mon_backend_auto ran it */
	ctx.replay_path = replay;
	ctx.stop = &stop_flag;
	ctx.target = want.target;
	if (mr_mon_check_consent(&ctx)) {
		mr_mon_ctx_destroy(&ctx);
		return mr_cli_fail("%s", mr_last_error());
	}

	sa.sa_handler = on_signal;	/* no SA_RESTART: a signal cuts the sleep short */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);	/* --duration */

	if (optind < argc) {
		child = fork();
		if (child < 0) {
			mr_mon_ctx_destroy(&ctx);
			return mr_cli_fail("fork: %s", strerror(errno));
		}
		if (child == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			execvp(argv[optind], argv + optind);
			fprintf(stderr, "memregctl record: %s: %s\n", argv[optind], strerror(errno));
			_exit(127);
		}
		ctx.target.pid = child;
	}

	hdr.kind = ctx.target.kind;
	hdr.pid = ctx.target.pid;
	hdr.attrs = ctx.attrs;
	snprintf(hdr.backend, sizeof(hdr.backend), "%s", ops->name);
	hdr.start_unix_ns = (uint64_t)time(NULL) * 1000000000u;
	err = mr_rec_writer_open(&st.w, out, &hdr);
	if (!err) {
		int n = snprintf(note, sizeof(note), "backend=%s", ops->name);
		int i;

		for (i = optind; i < argc && n > 0 && (size_t)n < sizeof(note); i++)
			n += snprintf(note + n, sizeof(note) - (size_t)n, "%s%s",
				      i == optind ? " command=" : " ", argv[i]);
		err = mr_rec_write_note(&st.w, note);
	}
	if (!err && duration)
		alarm((unsigned)duration);
	if (!err)
		err = mr_mon_run(&ctx, write_snapshot, &st);
	alarm(0);
	if (err)
		status = mr_cli_fail("%s", mr_last_error());
	if (mr_rec_writer_close(&st.w) && !err)
		status = mr_cli_fail("%s", mr_last_error());
	if (child > 0) {
		int ws;

		if (mr_mon_process_alive(child))
			kill(child, SIGTERM);
		while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(ws) && WEXITSTATUS(ws) && !err)
			mr_cli_warn("%s exited with status %d", argv[optind], WEXITSTATUS(ws));
	}
	if (!err) {
		struct rusage ru;
		double cpu_s = 0, wall_s = (mr_mon_now_us() - start_us) / 1e6;

		/* the monitor's own CPU time, not the command's: what monitoring costs */
		if (!getrusage(RUSAGE_SELF, &ru))
			cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		fprintf(stderr, "memregctl record: %zu snapshots (%llu samples) by %s to %s%s\n"
			"memregctl record: monitor cpu %.3f s over %.3f s = %.2f%% of one core\n",
			st.nr_snaps, (unsigned long long)ctx.nr_samples, ops->name, out,
			stop_flag == SIGINT || stop_flag == SIGTERM ? ", stopped by a signal" : "",
			cpu_s, wall_s, wall_s > 0 ? 100 * cpu_s / wall_s : 0);
		if (ctx.kernel_cpu_s > 0)
			fprintf(stderr, "memregctl record: kernel sampling cpu %.3f s = %.2f%% of one "
				"core\n", ctx.kernel_cpu_s, wall_s > 0 ? 100 * ctx.kernel_cpu_s / wall_s : 0);
	}
	mr_mon_ctx_destroy(&ctx);
	mr_mon_ctx_destroy(&want);
	return mr_cli_finish(status);
}
