/* memregctl: one binary, one table of subcommands (tools/commands.h). */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

	fprintf(f, "Usage: %s [--version] [--help] COMMAND [ARGS]\n\n"
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

int main(int argc, char **argv)
{
	const struct mr_command *cmd;

	if (argc < 2) {
		usage(stderr);
		return MR_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return mr_cli_finish(MR_EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("%s %s\n", mr_progname, PACKAGE_VERSION);
		return mr_cli_finish(MR_EXIT_OK);
	}
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
