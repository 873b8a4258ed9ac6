/* memregctl energy: DRAM energy of a command (or a live sample) from RAPL where the
 * hardware reports it, from the power model where it does not, per region with
 * residency from access data. The report goes to stderr or -o FILE, as perf stat's. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/root.h"
#include "power/energy.h"
#include "power/model.h"
#include "regions/region.h"
#include "tools/cli.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: memregctl energy [OPTIONS] -- COMMAND [ARG...]\n"
"       memregctl energy --sample [--interval TIME] [--count N] [OPTIONS]\n"
"Run COMMAND and report the DRAM energy it took: elapsed time, energy (J) and\n"
"average power (W) per socket and in total, and where it came from. The report\n"
"goes to standard error (or -o FILE); standard output is COMMAND's alone. The\n"
"exit status is COMMAND's (128+N if signal N killed it, 127 not found, 126 not\n"
"runnable). SIGTERM, SIGHUP and SIGINT sent to memregctl are passed on to COMMAND;\n"
"the report follows when it ends.\n"
"\n"
"  -o, --output FILE write the report (text or JSON) to FILE instead of standard\n"
"                    error (with --sample: instead of standard output)\n"
"  --source S        powercap, perf, msr, model or auto (default: auto, which\n"
"                    says which it picked and why the others were not usable)\n"
"  --event NAME      perf event: energy-ram (default) or rapl::RAPL_ENERGY_DRAM\n"
"  --root DIR        read a captured machine under DIR (also MEMREG_ROOT)\n"
"  --interval TIME   counter read period (default: from the counter ranges);\n"
"                    with --sample, the time between lines (default 1000)\n"
"  --residency FILE  per-region low-power residency (JSON, see docs/energy.md):\n"
"                    adds per-region energy and the saving against all active\n"
"  --record FILE     an access record of the same run (memreg-record(5)), read\n"
"                    after COMMAND: residency as with --residency (physical, or\n"
"                    a still-running process's, placed through its pagemap)\n"
"  --sample          print one line of DRAM power per interval on standard\n"
"                    output, no command\n"
"  --count N         with --sample, stop after N lines\n"
"  --json            the report as JSON (fields in memregctl-energy(1))\n"
"  -h, --help        this help\n");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Signals while COMMAND runs. SIGTERM, SIGHUP and SIGINT sent to memregctl are
 * passed on to COMMAND, and memregctl goes on waiting: COMMAND decides how to end,
 * and the report then covers the whole run. A SIGINT from the terminal (si_code
 * SI_KERNEL) is not passed on: the terminal sent it to the whole foreground process
 * group, COMMAND included, and a second one would be a second ^C. SIGQUIT is ignored
 * as time(1) does: the terminal's ^\ is for COMMAND. A signal ignored when memregctl
 * started (nohup) stays ignored, for COMMAND too.
 */
static const int run_signals[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT };
static volatile sig_atomic_t run_child_pid;
static volatile sig_atomic_t run_forwarded;	/* bit (1 << signal) per signal passed on */

static void forward_signal(int sig, siginfo_t *si, void *ctx)
{
	int saved_errno = errno;

	(void)ctx;
	if (sig == SIGINT && si && si->si_code == SI_KERNEL)
		return;
	if (run_child_pid > 0 && kill((pid_t)run_child_pid, sig) == 0)
		run_forwarded |= 1 << sig;
	errno = saved_errno;
}

static bool ignored(const struct sigaction *sa)
{
	return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_IGN;
}

/* Run @argv and wait for it; *@status as the shell gives it (128+N for signal N). */
static int run_command(char **argv, int *status)
{
	struct sigaction old[MR_ARRAY_SIZE(run_signals)];
	sigset_t block, old_mask;
	siginfo_t info;
	unsigned i;
	pid_t pid;
	int st, err = 0;

	/* Blocked until COMMAND's pid is known, so none is lost before it can be passed on. */
	sigemptyset(&block);
	for (i = 0; i < MR_ARRAY_SIZE(run_signals); i++)
		sigaddset(&block, run_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	for (i = 0; i < MR_ARRAY_SIZE(run_signals); i++) {
		struct sigaction sa;

		sigaction(run_signals[i], NULL, &old[i]);
		if (ignored(&old[i]))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_mask = block;	/* one handler at a time: run_forwarded is not atomic */
		if (run_signals[i] == SIGQUIT) {
			sa.sa_handler = SIG_IGN;
		} else {
			sa.sa_sigaction = forward_signal;
			sa.sa_flags = SA_SIGINFO;
		}
		sigaction(run_signals[i], &sa, NULL);
	}
	run_forwarded = 0;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < MR_ARRAY_SIZE(run_signals); i++)
			sigaction(run_signals[i], &old[i], NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s: %s\n", mr_progname, argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (pid < 0) {
		err = errno;
		goto restore;
	}
	run_child_pid = pid;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);	/* pending ones go to COMMAND now */
	/* Wait without reaping: until run_child_pid is cleared the pid stays COMMAND's,
	 * so a late signal cannot reach a process that reused it. */
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	sigprocmask(SIG_BLOCK, &block, NULL);
	run_child_pid = 0;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			err = errno;
			break;
		}
restore:
	for (i = 0; i < MR_ARRAY_SIZE(run_signals); i++)
		sigaction(run_signals[i], &old[i], NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (err)
		return mr_error(-err, "%s: %s", pid < 0 ? "fork" : "waitpid", strerror(err));
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	return 0;
}

struct regions_out {
	struct mr_region_map map;
	struct mr_power_model model;
	struct mr_region_energy *energy;
	double scale;
	bool calibrated;
	struct mr_calibration cal;
	char map_note[256];
};

/* Build the map and the model; with @record, read the residency from it now (it
 * is written by the run). */
static int model_regions(struct regions_out *ro, struct mr_residency *res, const char *record,
			 double elapsed_s, struct mr_energy_source *src)
{
	int sockets[MR_ENERGY_MAX_SOCKETS];
	double measured[MR_ENERGY_MAX_SOCKETS];
	char why[300], map_why[200], dmi_why[256];
	unsigned i;
	int ret;

	memset(ro, 0, sizeof(*ro));
	ret = mr_power_model_load(&ro->model, &ro->map, map_why, sizeof(map_why), dmi_why,
				  sizeof(dmi_why));
	if (ret)
		return ret;
	if (map_why[0])
		snprintf(ro->map_note, sizeof(ro->map_note),
			 "regions are NUMA nodes (region discovery: %s)", map_why);
	if (record) {
		ret = mr_residency_read_record(record, &ro->map, res);
		if (ret)
			return ret;
		/* The fallback map has each node's size, not its addresses: a record's
		 * addresses cannot be placed on it. */
		if (ro->map_note[0]) {
			mr_residency_free(res);
			return mr_error(-EINVAL, "%s: cannot place the record's addresses: %s; the "
					"fallback (NUMA node sizes from meminfo) has no physical "
					"ranges", record, ro->map_note);
		}
	}
	ro->energy = calloc(ro->model.nr_regions + 1, sizeof(*ro->energy));
	if (!ro->energy)
		return mr_error(-ENOMEM, "out of memory");
	ret = mr_power_model_energy(&ro->model, res, elapsed_s, -1, ro->energy, &ro->scale);
	if (ret)
		return ret;
	if (!src->ops->measured) {
		/* One modelled figure: the per-node table becomes the regions' sums, with
		 * residency, not every online region active beside them. */
		mr_energy_model_set_regions(src, &ro->model, ro->energy);
		return 0;
	}
	/* RAPL measured each socket: scale each region to its own socket's figure. */
	ro->calibrated = true;
	mr_power_model_read_sockets(&ro->model, why, sizeof(why));
	for (i = 0; i < src->nr_counters; i++) {
		sockets[i] = src->counters[i].socket;
		measured[i] = src->counters[i].energy_uj;
	}
	ret = mr_power_model_calibrate(&ro->model, ro->energy, sockets, measured,
				       src->nr_counters, &ro->cal);
	if (!ret && !ro->cal.per_socket && why[0] &&
	    strlen(ro->cal.why_total) + strlen(why) + 3 < sizeof(ro->cal.why_total)) {
		strcat(ro->cal.why_total, " (");
		strcat(ro->cal.why_total, why);
		strcat(ro->cal.why_total, ")");
	}
	ro->scale = ro->cal.total_factor;
	return ret;
}

static void regions_free(struct regions_out *ro)
{
	free(ro->energy);
	mr_power_model_destroy(&ro->model);
	mr_region_map_destroy(&ro->map);
}

static const char *region_label(const struct regions_out *ro)
{
	static char buf[1024];
	const struct mr_power_model *m = &ro->model;
	const struct mr_calibration *cal = &ro->cal;
	size_t len;
	unsigned i;

	len = (size_t)snprintf(buf, sizeof(buf), "modelled (%s)",
			       m->nr_regions && m->regions[0].from_mpst ? "MPST power states" :
			       m->figures->name);
	if (!ro->calibrated || len >= sizeof(buf))
		return buf;
	if (cal->per_socket) {
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					", calibrated per socket to the measured energy:");
		for (i = 0; i < cal->nr_sockets && len < sizeof(buf); i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s socket %d x%.4f (%u region(s))", i ? "," : "",
						cal->socket[i], cal->factor[i], cal->nr_regions[i]);
	} else {
		snprintf(buf + len, sizeof(buf) - len, ", calibrated to the measured total "
			 "(factor %.4f), not per socket: %s", cal->total_factor, cal->why_total);
	}
	return buf;
}

/*
 * The report's one total is the source's (measured, or the model's). The region rows
 * share it out: calibrated to RAPL, or the model's own per-region figures. What they
 * leave (no region to carry measured energy, or a node beyond the model source's
 * counters) is shown as not attributed; under 1 uJ it is rounding of the sums.
 */
static double unattributed_uj(const struct mr_energy_source *src, const struct regions_out *ro)
{
	double left_uj = 0;
	unsigned i;

	for (i = 0; i < src->nr_counters; i++)
		left_uj += src->counters[i].energy_uj;
	for (i = 0; i < ro->model.nr_regions; i++)
		left_uj -= ro->energy[i].energy_uj;
	return fabs(left_uj) < 0.5 ? 0 : left_uj;
}

/* Notes for the signals passed on to COMMAND, as @add(@arg, text). */
static void forwarded_notes(void (*add)(void *arg, const char *note), void *arg)
{
	static const struct { int sig; const char *name; } names[] = {
		{ SIGTERM, "SIGTERM" }, { SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" },
	};
	char buf[128];
	unsigned i;

	for (i = 0; i < MR_ARRAY_SIZE(names); i++)
		if (run_forwarded & (1 << names[i].sig)) {
			snprintf(buf, sizeof(buf), "%s sent to %s was passed on to the command",
				 names[i].name, mr_progname);
			add(arg, buf);
		}
}

static void note_line(void *arg, const char *note)
{
	fprintf((FILE *)arg, "note: %s\n", note);
}

static void print_human(FILE *out, struct mr_energy_source *src, char **cmd, int status,
			double elapsed, const struct regions_out *ro,
			const struct mr_residency *res)
{
	double total = 0, left_uj = 0;
	unsigned i;

	if (cmd)
		fprintf(out, "command   %s ... exit %d\n", cmd[0], status);
	fprintf(out, "elapsed   %.3f s\n", elapsed);
	fprintf(out, "source    %s: %s (%s)\n", src->ops->name, src->detail,
		src->ops->measured ? "measured" : "modelled");
	fprintf(out, "%-8s %-28s %14s %10s\n", "socket", "counter", "energy_J", "power_W");
	for (i = 0; i < src->nr_counters; i++) {
		const struct mr_energy_counter *c = &src->counters[i];

		total += c->energy_uj;
		fprintf(out, "%-8d %-28s %14.6f %10.3f\n", c->socket, c->label,
			c->energy_uj / 1e6, elapsed > 0 ? c->energy_uj / 1e6 / elapsed : 0);
	}
	fprintf(out, "%-8s %-28s %14.6f %10.3f\n", "total", "", total / 1e6,
		elapsed > 0 ? total / 1e6 / elapsed : 0);
	for (i = 0; i < src->nr_notes; i++)
		fprintf(out, "note: %s\n", src->notes[i]);
	forwarded_notes(note_line, out);
	if (!ro)
		return;
	fprintf(out, "\n%-7s %-5s %10s %-16s %9s %9s %9s %12s %12s\n", "region", "node",
		"size", "devices", "active_W", "low_W", "low_pct", "energy_J", "saving_J");
	for (i = 0; i < ro->model.nr_regions; i++) {
		const struct mr_region_power *p = &ro->model.regions[i];
		const struct mr_region_energy *e = &ro->energy[i];
		char size[32], dev[32];

		mr_format_size(p->size_bytes, size, sizeof(size));
		if (p->from_mpst)
			snprintf(dev, sizeof(dev), "- (mpst)");
		else
			snprintf(dev, sizeof(dev), "%.1f (%s)", p->devices,
				 mr_devices_from_name(p->devices_from));
		fprintf(out, "%-7u %-5d %10s %-16s %9.3f %9.3f %8.1f%% %12.6f %12.6f%s\n",
			p->id, p->node, size, dev, p->active_mw / 1e3, p->low_mw / 1e3,
			e->low_fraction * 100, e->energy_uj / 1e6, e->saving_uj / 1e6,
			p->offline ? " offline" : "");
	}
	left_uj = unattributed_uj(src, ro);
	/* In the energy_J column: 72 characters of the columns before it. */
	if (left_uj != 0)
		fprintf(out, "%-72s%12.6f\n", "not attributed to regions", left_uj / 1e6);
	fprintf(out, "per-region energy: %s; the rows%s add up to the total above\n",
		region_label(ro), left_uj != 0 ? " and the energy not attributed" : "");
	if (res && res->scope != MR_RESIDENCY_NONE)
		fprintf(out, "residency: %s access data from %s, interval %llu us; low-power "
			"residency and saving are upper bounds (gaps shorter than the interval "
			"are not seen)%s\n", mr_residency_scope_name(res->scope), res->from,
			(unsigned long long)res->interval_us,
			res->scope == MR_RESIDENCY_PROCESS ?
			"; process-scoped: other processes' accesses are not seen" : "");
	else
		fprintf(out, "residency: no access data: every online region counted active\n");
	if (ro->map_note[0])
		fprintf(out, "note: %s\n", ro->map_note);
	for (i = 0; i < ro->model.nr_notes; i++)
		fprintf(out, "note: %s\n", ro->model.notes[i]);
}

static void note_json(void *arg, const char *note)
{
	json_object_array_add((struct json_object *)arg, json_object_new_string(note));
}

static void print_json(FILE *out, struct mr_energy_source *src, char **cmd, int status,
		       double elapsed, const struct regions_out *ro,
		       const struct mr_residency *res)
{
	struct json_object *o = json_object_new_object(), *a, *x;
	double total = 0;
	unsigned i;

	json_object_object_add(o, "version", json_object_new_int(1));
	if (cmd) {
		json_object_object_add(o, "command", json_object_new_string(cmd[0]));
		json_object_object_add(o, "exit_status", json_object_new_int(status));
	}
	json_object_object_add(o, "elapsed_s", json_object_new_double(elapsed));
	json_object_object_add(o, "source", json_object_new_string(src->ops->name));
	json_object_object_add(o, "source_detail", json_object_new_string(src->detail));
	json_object_object_add(o, "measured", json_object_new_boolean(src->ops->measured));
	a = json_object_new_array();
	for (i = 0; i < src->nr_counters; i++) {
		const struct mr_energy_counter *c = &src->counters[i];

		total += c->energy_uj;
		x = json_object_new_object();
		json_object_object_add(x, "socket", json_object_new_int(c->socket));
		json_object_object_add(x, "counter", json_object_new_string(c->label));
		json_object_object_add(x, "energy_uj", json_object_new_double(c->energy_uj));
		json_object_object_add(x, "energy_j", json_object_new_double(c->energy_uj / 1e6));
		json_object_object_add(x, "power_w", json_object_new_double(
			elapsed > 0 ? c->energy_uj / 1e6 / elapsed : 0));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "sockets", a);
	x = json_object_new_object();
	json_object_object_add(x, "energy_uj", json_object_new_double(total));
	json_object_object_add(x, "energy_j", json_object_new_double(total / 1e6));
	json_object_object_add(x, "power_w", json_object_new_double(
		elapsed > 0 ? total / 1e6 / elapsed : 0));
	json_object_object_add(o, "total", x);
	a = json_object_new_array();
	for (i = 0; i < src->nr_notes; i++)
		json_object_array_add(a, json_object_new_string(src->notes[i]));
	forwarded_notes(note_json, a);
	if (ro) {
		struct json_object *r = json_object_new_array();

		for (i = 0; i < ro->model.nr_regions; i++) {
			const struct mr_region_power *p = &ro->model.regions[i];
			const struct mr_region_energy *e = &ro->energy[i];

			x = json_object_new_object();
			json_object_object_add(x, "id", json_object_new_int((int)p->id));
			json_object_object_add(x, "node", json_object_new_int(p->node));
			json_object_object_add(x, "socket", json_object_new_int(p->socket));
			json_object_object_add(x, "size_bytes", json_object_new_int64((int64_t)p->size_bytes));
			json_object_object_add(x, "power_from", json_object_new_string(
				p->from_mpst ? "mpst" : "datasheet"));
			json_object_object_add(x, "devices", json_object_new_double(p->devices));
			json_object_object_add(x, "devices_from", json_object_new_string(
				mr_devices_from_name(p->devices_from)));
			json_object_object_add(x, "active_mw", json_object_new_double(p->active_mw));
			json_object_object_add(x, "low_mw", json_object_new_double(p->low_mw));
			json_object_object_add(x, "low_state", json_object_new_int(p->low_state));
			json_object_object_add(x, "offline", json_object_new_boolean(p->offline));
			json_object_object_add(x, "low_fraction", json_object_new_double(e->low_fraction));
			json_object_object_add(x, "energy_uj", json_object_new_double(e->energy_uj));
			json_object_object_add(x, "all_active_uj", json_object_new_double(e->all_active_uj));
			json_object_object_add(x, "saving_uj", json_object_new_double(e->saving_uj));
			json_object_array_add(r, x);
		}
		x = json_object_new_object();
		json_object_object_add(x, "regions", r);
		json_object_object_add(x, "energy", json_object_new_string("modelled"));
		json_object_object_add(x, "label", json_object_new_string(region_label(ro)));
		json_object_object_add(x, "calibration", json_object_new_string(
			!ro->calibrated ? "none" : ro->cal.per_socket ? "per-socket" : "total"));
		json_object_object_add(x, "calibration_factor", json_object_new_double(ro->scale));
		json_object_object_add(x, "unattributed_uj",
				       json_object_new_double(unattributed_uj(src, ro)));
		if (ro->calibrated) {
			struct json_object *sf = json_object_new_array();

			for (i = 0; i < ro->cal.nr_sockets; i++) {
				struct json_object *f = json_object_new_object();

				json_object_object_add(f, "socket", json_object_new_int(ro->cal.socket[i]));
				json_object_object_add(f, "factor",
						       json_object_new_double(ro->cal.factor[i]));
				json_object_array_add(sf, f);
			}
			json_object_object_add(x, "socket_factors", sf);
		}
		json_object_object_add(x, "residency_scope", json_object_new_string(
			mr_residency_scope_name(res ? res->scope : MR_RESIDENCY_NONE)));
		json_object_object_add(x, "saving_is_upper_bound", json_object_new_boolean(
			res && res->scope != MR_RESIDENCY_NONE));
		json_object_object_add(o, "model", x);
		if (ro->map_note[0])
			json_object_array_add(a, json_object_new_string(ro->map_note));
		for (i = 0; i < ro->model.nr_notes; i++)
			json_object_array_add(a, json_object_new_string(ro->model.notes[i]));
	}
	json_object_object_add(o, "notes", a);
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
					     JSON_C_TO_STRING_NOSLASHESCAPE), out);
	fputc('\n', out);
	json_object_put(o);
}

static int sample_loop(FILE *out, struct mr_energy_source *src, uint64_t interval_ms,
		       uint64_t count, bool json)
{
	double prev[MR_ENERGY_MAX_SOCKETS], t0 = now_s(), t_prev = t0;
	uint64_t n;
	unsigned i;

	if (!json) {
		fprintf(out, "%10s", "time_s");
		for (i = 0; i < src->nr_counters; i++) {
			char h[32];

			snprintf(h, sizeof(h), "socket%d_W", src->counters[i].socket);
			fprintf(out, "  %12s", h);
		}
		fprintf(out, "  %10s  (%s, %s)\n", "total_W", src->ops->name,
			src->ops->measured ? "measured" : "modelled");
	}
	for (i = 0; i < src->nr_counters; i++)
		prev[i] = 0;
	for (n = 0; count == 0 || n < count; n++) {
		struct timespec ts = { (time_t)(interval_ms / 1000),
				       (long)(interval_ms % 1000) * 1000000L };
		double t, dt, w[MR_ENERGY_MAX_SOCKETS], total = 0;

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		if (mr_energy_update(src))
			return mr_cli_fail("%s", mr_last_error());
		t = now_s();
		dt = t - t_prev;
		t_prev = t;
		for (i = 0; i < src->nr_counters; i++) {
			w[i] = (src->counters[i].energy_uj - prev[i]) / 1e6 / dt;
			total += w[i];
			prev[i] = src->counters[i].energy_uj;
		}
		if (json) {
			struct json_object *o = json_object_new_object(), *a = json_object_new_array();

			json_object_object_add(o, "time_s", json_object_new_double(t - t0));
			for (i = 0; i < src->nr_counters; i++)
				json_object_array_add(a, json_object_new_double(w[i]));
			json_object_object_add(o, "socket_power_w", a);
			json_object_object_add(o, "total_power_w", json_object_new_double(total));
			fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), out);
			fputc('\n', out);
			json_object_put(o);
		} else {
			fprintf(out, "%10.3f", t - t0);
			for (i = 0; i < src->nr_counters; i++)
				fprintf(out, "  %12.3f", w[i]);
			fprintf(out, "  %10.3f\n", total);
		}
		fflush(out);
	}
	return MR_EXIT_OK;
}

/*
 * -o FILE: opened before COMMAND runs, so a path that cannot be written fails before
 * any work, but emptied only when the report is written: a run that fails leaves
 * the previous report in place. Not inherited by COMMAND.
 */
static FILE *output_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	FILE *f;

	if (fd < 0) {
		mr_error(-errno, "%s: %s", path, strerror(errno));
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		mr_error(-errno, "%s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/* Empty a regular -o FILE before the report is written (a pipe or tty has nothing to empty). */
static int output_begin(FILE *out, const char *path)
{
	struct stat st;

	if (!path || fstat(fileno(out), &st) || !S_ISREG(st.st_mode))
		return 0;
	if (ftruncate(fileno(out), 0))
		return mr_error(-errno, "%s: %s", path, strerror(errno));
	return 0;
}

/* Flush (and close -o FILE): a full disk is an error, as perf checks stdout. */
static int output_finish(FILE **out, const char *path, int status)
{
	int bad = fflush(*out) != 0 || ferror(*out);

	if (path && fclose(*out) != 0)
		bad = 1;
	*out = NULL;
	if (bad)
		return mr_cli_fail("error writing the report to %s: %s",
				   path ? path : "standard error", strerror(errno));
	return status;
}

int mr_cmd_energy(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "source", required_argument, NULL, 's' },
		{ "event", required_argument, NULL, 'e' },
		{ "root", required_argument, NULL, 'r' },
		{ "interval", required_argument, NULL, 'i' },
		{ "record", required_argument, NULL, 'R' },
		{ "residency", required_argument, NULL, 'D' },
		{ "sample", no_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *source = "auto", *root = NULL, *record = NULL, *residency = NULL;
	const char *output = NULL;
	FILE *out = NULL;
	struct mr_energy_opts opts = { 0 };
	struct mr_energy_source src;
	struct mr_residency res = { 0 };
	struct regions_out ro;
	bool json = false, sample = false, have_res = false, have_ro = false;
	uint64_t interval_ms = 0, count = 0;
	double t0, elapsed;
	int c, status = 0, ret;

	while ((c = mr_cli_getopt(argc, argv, "+ho:", longopts)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 's': source = optarg; break;
		case 'e': opts.event = optarg; break;
		case 'r': root = optarg; break;
		case 'R': record = optarg; break;
		case 'D': residency = optarg; break;
		case 'S': sample = true; break;
		case 'j': json = true; break;
		case 'i': {
			uint64_t us;

			/* a unit, or a bare number of milliseconds as before */
			if (mr_parse_duration_us(optarg, 1000, &us) || us < 1000 ||
			    us > 86400000000ull || us % 1000)
				return mr_cli_usage(argv[0], "--interval: bad time '%s' (1ms to 1d, "
						    "whole milliseconds: 500ms, 2s)", optarg);
			interval_ms = us / 1000;
			break;
		}
		case 'c':
			if (mr_parse_u64(optarg, &count) || count == 0)
				return mr_cli_usage(argv[0], "--count: '%s' is not a positive number",
						    optarg);
			break;
		case 'h':
			usage(stdout);
			return mr_cli_finish(MR_EXIT_OK);
		default:
			return MR_EXIT_USAGE;
		}
	}
	if (sample && optind < argc)
		return mr_cli_usage(argv[0], "--sample takes no command");
	if (!sample && optind >= argc)
		return mr_cli_usage(argv[0], "no command given (memregctl energy -- COMMAND)");
	if (count && !sample)
		return mr_cli_usage(argv[0], "--count needs --sample");
	if (record && residency)
		return mr_cli_usage(argv[0], "--record and --residency both give residency: "
				    "choose one");
	if (output && !output[0])
		return mr_cli_usage(argv[0], "--output: empty file name");
	if (mr_root_set(root))
		return mr_cli_fail("%s", mr_last_error());
	if (residency) {
		if (mr_residency_read_json(residency, &res))
			return mr_cli_fail("%s", mr_last_error());
		have_res = true;
	}
	/* The command's stdout is its own: the report goes to stderr, as perf stat's.
	 * --sample has no command: its lines go to stdout. */
	out = output ? output_open(output) : sample ? stdout : stderr;
	if (!out) {
		mr_residency_free(&res);
		return mr_cli_fail("%s", mr_last_error());
	}
	if (!sample && interval_ms)
		opts.sample_period_ms = interval_ms;
	if (mr_energy_open(&src, source, &opts)) {
		char msg[1024];
		unsigned i;

		snprintf(msg, sizeof(msg), "%s", mr_last_error());
		for (i = 0; i < src.nr_notes; i++)
			fprintf(stderr, "%s: %s\n", mr_progname, src.notes[i]);
		mr_residency_free(&res);
		if (output)
			fclose(out);
		return mr_cli_fail("energy source %s: %s", source, msg);
	}
	if (sample && !interval_ms)
		interval_ms = 1000;
	if (mr_energy_start(&src)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	if (sample) {
		if (output_begin(out, output)) {
			ret = mr_cli_fail("%s", mr_last_error());
			goto out;
		}
		ret = sample_loop(out, &src, interval_ms, count, json);
		mr_energy_stop(&src);
		if (ret == MR_EXIT_OK)
			ret = output ? output_finish(&out, output, MR_EXIT_OK) :
				       mr_cli_finish(MR_EXIT_OK);
		goto out;
	}
	t0 = now_s();
	ret = run_command(argv + optind, &status);
	elapsed = now_s() - t0;
	if (ret) {
		mr_energy_stop(&src);
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	/* The last read happens after COMMAND, so a fixture's files changed by COMMAND
	 * give exact deltas. */
	ret = mr_energy_update(&src);
	mr_energy_stop(&src);
	if (ret || src.thread_err) {
		ret = mr_cli_fail("reading %s: %s", src.ops->name,
				  ret ? mr_last_error() : "the sampling thread failed to read");
		goto out;
	}
	if (have_res || record) {
		have_res = true;
		have_ro = true;
		if (model_regions(&ro, &res, record, elapsed, &src)) {
			ret = mr_cli_fail("%s", mr_last_error());
			goto out;
		}
	}
	if (output_begin(out, output)) {
		ret = mr_cli_fail("%s", mr_last_error());
		goto out;
	}
	if (json)
		print_json(out, &src, argv + optind, status, elapsed, have_ro ? &ro : NULL,
			   have_res ? &res : NULL);
	else
		print_human(out, &src, argv + optind, status, elapsed, have_ro ? &ro : NULL,
			    have_res ? &res : NULL);
	ret = output_finish(&out, output, status);
out:
	if (output && out)
		fclose(out);
	if (have_ro)
		regions_free(&ro);
	mr_residency_free(&res);
	mr_energy_close(&src);
	return ret;
}
