/* mr-runas: run a command as another user id (and group id), without a user
 * database: the lab guest has none. `mr-runas UID COMMAND [ARG...]`. */
#include "config.h"

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/util.h"

int main(int argc, char **argv)
{
	uint64_t id;

	if (argc < 3 || mr_parse_u64(argv[1], &id) || id > 65535) {
		fprintf(stderr, "usage: mr-runas UID COMMAND [ARG...]\n");
		return 2;
	}
	if (setgroups(0, NULL) || setgid((gid_t)id) || setuid((uid_t)id)) {
		perror("mr-runas");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror("mr-runas: exec");
	return 127;
}
