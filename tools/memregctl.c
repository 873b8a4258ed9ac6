/* memregctl: one binary, one table of subcommands (tools/commands.h). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/root.h"
#include "tools/cli.h"

const char *mr_progname = "memregctl";

struct mr_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct mr_command mr_commands[] = {
#define MR_CMD2(id, name, help) { name, mr_cmd_##id, help },
#define MR_CMD(name, help) MR_CMD2(name, #name, help)
#include "tools/commands.h"
#undef MR_CMD
#undef MR_CMD2
};

int mr_cli_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", mr_progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return MR_EXIT_ERROR;
}

void mr_cli_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: warning: ", mr_progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int mr_cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", mr_progname, cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s help %s'.\n", mr_progname, cmd);
	return MR_EXIT_USAGE;
}

int mr_cli_timeout_us(const char *cmd, const char *arg, uint64_t *timeout_us)
{
	uint64_t us;

	if (mr_parse_duration_us(arg, 1000000u, &us) || !us || us > MR_CLI_TIMEOUT_MAX_US)
		return mr_cli_usage(cmd, "--timeout: bad duration '%s'", arg);
	*timeout_us = us;
	return 0;
}

int mr_cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	static char **scanning;
	char opts[64];
	const char *arg;
	bool plus = shortopts[0] == '+';
	int c;

	if (argv != scanning) {
		scanning = argv;
		optind = 0;	/* glibc: a full restart, as a new optstring needs */
	}
	/* ':' first (after '+'): a missing argument returns ':', not '?' */
	snprintf(opts, sizeof(opts), "%s:%s", plus ? "+" : "", shortopts + plus);
	opterr = 0;
	c = getopt_long(argc, argv, opts, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (c == ':')
		mr_cli_usage(argv[0], "option '%s' needs an argument", arg);
	else if (optopt && strncmp(arg, "--", 2) == 0)
		mr_cli_usage(argv[0], "option '%.*s' takes no argument",
			     (int)strcspn(arg, "="), arg);
	else if (optopt)
		mr_cli_usage(argv[0], "unknown option '-%c'", optopt);
	else
		mr_cli_usage(argv[0], "unknown option '%s'", arg);
	return '?';
}

void mr_cli_size_col_init(struct mr_cli_size_col *c, const char *name, uint64_t max_bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned i = 0;

	while (i + 1 < MR_ARRAY_SIZE(units) && max_bytes >> (10 * (i + 1)))
		i++;
	c->shift = 10 * i;
	snprintf(c->head, sizeof(c->head), "%s (%s)", name, units[i]);
}

const char *mr_cli_size_col_fmt(const struct mr_cli_size_col *c, uint64_t bytes, char *buf,
				size_t len)
{
	double v = (double)bytes / (double)(UINT64_C(1) << c->shift);

	if (!c->shift)
		snprintf(buf, len, "%" PRIu64, bytes);
	else if (bytes && v < 0.005)
		snprintf(buf, len, "<0.01");	/* not 0.00: -z hides only what is empty */
	else
		snprintf(buf, len, "%.2f", v);
	return buf;
}

void mr_cli_print_json(struct json_object *obj)
{
	fputs(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
					     JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
	fputc('\n', stdout);
}

int mr_cli_finish(int status)
{
	int bad = fflush(stdout) != 0 || ferror(stdout);

	if (fclose(stdout) != 0)
		bad = 1;
	if (bad) {
		fprintf(stderr, "%s: error writing output: %s\n", mr_progname, strerror(errno));
		return MR_EXIT_ERROR;
	}
	return status;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: %s [--root DIR] [--version] [--help] COMMAND [ARGS]\n\n"
		"memreg: memory power management for Linux. Discover the machine's memory\n"
		"power regions, pack hot data into few of them, move cold data out, and\n"
		"measure what that saves and costs.\n\nCommands:\n", mr_progname);
	for (i = 0; i < MR_ARRAY_SIZE(mr_commands); i++)
		fprintf(f, "  %-12s %s\n", mr_commands[i].name, mr_commands[i].help);
	fprintf(f, "\n'%s help COMMAND' or '%s COMMAND --help' shows a command's options;\n"
		"'man memregctl-COMMAND' has the details. Every command that reads /sys or\n"
		"/proc takes --root DIR (or MEMREG_ROOT) to read a captured machine instead.\n",
		mr_progname, mr_progname);
}

static const struct mr_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(mr_commands); i++)
		if (strcmp(mr_commands[i].name, name) == 0)
			return &mr_commands[i];
	return NULL;
}

static int run_help(int argc, char **argv)
{
	const struct mr_command *cmd;
	char *args[] = { NULL, (char *)"--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return mr_cli_finish(MR_EXIT_OK);
	}
	cmd = find_command(argv[1]);
	if (!cmd) {
		fprintf(stderr, "%s: no such command '%s'\n", mr_progname, argv[1]);
		usage(stderr);
		return MR_EXIT_USAGE;
	}
	args[0] = (char *)cmd->name;
	return cmd->fn(2, args);
}

int mr_cmd_version(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = mr_cli_getopt(argc, argv, "h", opts)) != -1) {
		if (c != 'h')
			return MR_EXIT_USAGE;
		printf("Usage: memregctl version\n\nPrint memregctl's version "
		       "(also: memregctl --version).\n");
		return mr_cli_finish(MR_EXIT_OK);
	}
	if (optind < argc)
		return mr_cli_usage(argv[0], "unexpected argument '%s'", argv[optind]);
	printf("%s %s\n", mr_progname, PACKAGE_VERSION);
	return mr_cli_finish(MR_EXIT_OK);
}

/*
 * Options before the command apply to every command: "memregctl --root DIR regions".
 * --root is handed on through MEMREG_ROOT, which every command reads unless it is
 * given its own --root. Returns the index of the command in @argv, or -1 after
 * printing an error (*@status then holds the exit status).
 */
static int global_options(int argc, char **argv, int *status)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *root = NULL;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			*status = mr_cli_finish(MR_EXIT_OK);
			return -1;
		}
		if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
			printf("%s %s\n", mr_progname, PACKAGE_VERSION);
			*status = mr_cli_finish(MR_EXIT_OK);
			return -1;
		}
		if (strncmp(argv[i], "--root=", 7) == 0) {
			root = argv[i] + 7;
		} else if (strcmp(argv[i], "--root") == 0) {
			if (i + 1 == argc) {
				fprintf(stderr, "%s: option '--root' needs an argument\n", mr_progname);
				*status = MR_EXIT_USAGE;
				return -1;
			}
			root = argv[++i];
		} else {
			fprintf(stderr, "%s: unknown option '%s' (before the command: --root DIR, "
				"--version, --help)\n", mr_progname, argv[i]);
			*status = MR_EXIT_USAGE;
			return -1;
		}
		if (mr_root_set(root)) {
			*status = mr_cli_fail("%s", mr_last_error());
			return -1;
		}
		setenv("MEMREG_ROOT", root, 1);
	}
	if (i == argc) {
		usage(stderr);
		*status = MR_EXIT_USAGE;
		return -1;
	}
	return i;
}

int main(int argc, char **argv)
{
	const struct mr_command *cmd;
	int first, status = MR_EXIT_OK;

	first = global_options(argc, argv, &status);
	if (first < 0)
		return status;
	argc -= first - 1;
	argv += first - 1;
	if (strcmp(argv[1], "help") == 0)
		return run_help(argc - 1, argv + 1);
	cmd = find_command(argv[1]);
	if (!cmd) {
		fprintf(stderr, "%s: no such command '%s'\n", mr_progname, argv[1]);
		usage(stderr);
		return MR_EXIT_USAGE;
	}
	/* Commands see argv[0] == their own name, so getopt messages name them. */
	return cmd->fn(argc - 1, argv + 1);
}
