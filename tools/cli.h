/* Helpers shared by memregctl's commands: exit codes, messages, output checks. */
#ifndef MR_TOOLS_CLI_H
#define MR_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/util.h"

struct json_object;

/* Exit statuses, as numactl and perf use them. */
enum {
	MR_EXIT_OK = 0,
	MR_EXIT_ERROR = 1,	/* the operation failed; a message was printed */
	MR_EXIT_USAGE = 2,	/* bad command line; usage was printed */
};

#define MR_CMD2(id, name, help) int mr_cmd_##id(int argc, char **argv);
#define MR_CMD(name, help) MR_CMD2(name, #name, help)
#include "tools/commands.h"
#undef MR_CMD
#undef MR_CMD2

/* "memregctl.c" */
extern const char *mr_progname;		/* "memregctl" */
/* "memregctl: <msg>\n" on stderr; returns MR_EXIT_ERROR. */
int mr_cli_fail(const char *fmt, ...) MR_PRINTF(1, 2);
/* "memregctl: warning: <msg>\n" on stderr. */
void mr_cli_warn(const char *fmt, ...) MR_PRINTF(1, 2);
/* "memregctl CMD: <msg>\nTry 'memregctl help CMD'.\n"; returns MR_EXIT_USAGE. */
int mr_cli_usage(const char *cmd, const char *fmt, ...) MR_PRINTF(2, 3);
/*
 * A time limit option of an offline path (offline, evacuate: --timeout DURATION):
 * seconds when bare ("120"), else with a unit ("90s", "2m"); more than 0 and at most
 * a day. 0 with *@timeout_us set, or the usage line "--timeout: bad duration '@arg'"
 * printed for @cmd and MR_EXIT_USAGE returned.
 */
#define MR_CLI_TIMEOUT_MAX_US (86400ull * 1000000u)
int mr_cli_timeout_us(const char *cmd, const char *arg, uint64_t *timeout_us);
/*
 * getopt_long for every command, with one error line instead of getopt's own
 * message and ours: on a bad option (unknown, missing or unexpected argument)
 * prints "memregctl CMD: unknown option '--x'" and the hint, then returns '?': the
 * caller's default case returns MR_EXIT_USAGE. A new @argv starts the scan afresh,
 * so callers need not reset optind. @shortopts as getopt's ("+" first to stop at
 * the first non-option, for commands that run a COMMAND).
 */
struct option;
int mr_cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);
/*
 * One unit per size column of a table, as numastat keeps one: the largest binary
 * unit in which the column's largest value is at least 1, every row in it with two
 * decimals ("<0.01" for a value above 0 that would read 0.00; whole bytes when the
 * unit is B), the unit named in the header.
 */
struct mr_cli_size_col {
	unsigned shift;		/* 0 (B), 10 (KiB), 20 (MiB), ... */
	char head[24];		/* "SIZE (GiB)" */
};
void mr_cli_size_col_init(struct mr_cli_size_col *c, const char *name, uint64_t max_bytes);
const char *mr_cli_size_col_fmt(const struct mr_cli_size_col *c, uint64_t bytes, char *buf,
				size_t len);
/* Print a JSON document (pretty, with a newline) on stdout. */
void mr_cli_print_json(struct json_object *obj);
/* fflush + ferror + fclose of stdout: a full disk or closed pipe is an error.
 * Returns @status if stdout is fine, MR_EXIT_ERROR otherwise. */
int mr_cli_finish(int status);

#endif
