/* memregd's configuration file (/etc/memreg/memregd.conf, memregd.conf(5)): "key value"
 * lines, then a line "schemes" after which the rest of the file is schemes in the
 * scheme format, line numbers kept for messages. */
#ifndef MR_CONTROLLER_CONF_H
#define MR_CONTROLLER_CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "controller/scheme.h"
#include "monitor/monitor.h"

#define MR_CONF_PATH_DEFAULT MR_SYSCONFDIR "/memreg/memregd.conf"
#define MR_CONF_STATUS_DEFAULT "/run/memreg/memregd.status"

/*
 * struct mr_conf - what memregd.conf says.
 * @apply:	"apply yes": consent to change the targets' placement (required).
 * @pids:	the target processes ("pid N", repeatable); @pid is the first (0: none).
 * @cgroups:	cgroup v2 directories whose processes are targets ("cgroup PATH",
 *		repeatable), followed as they change.
 * @backend:	monitoring backend ("backend damon"; default damon).
 * @engine:	"engine user" (default) or "engine kernel" (the kernel's DAMOS, kengine.h).
 * @attrs:	"intervals SAMPLE AGGR UPDATE" (units required) and "regions MIN MAX";
 *		@has_attrs false keeps the backend's defaults.
 * @metrics_dir: "metrics DIR": DIR/memreg.prom for node_exporter ("" none).
 * @status_path: "status FILE" (default /run/memreg/memregd.status).
 * @schemes:	everything after the "schemes" line, parsed.
 */
struct mr_conf {
	bool apply;
	pid_t pid;
	pid_t *pids;
	size_t nr_pids;
	char **cgroups;
	size_t nr_cgroups;
	char backend[32];
	char engine[16];
	struct mr_mon_attrs attrs;
	bool has_attrs;
	char metrics_dir[1024];
	char status_path[1024];
	struct mr_scheme_set schemes;
};

/* "conf.c" */

/* Parse @text, named @source in messages ("FILE:LINE: what is wrong"). 0 or -EINVAL
 * with mr_error set; free with mr_conf_free. */
int mr_conf_parse(const char *text, const char *source, struct mr_conf *c);
/* Read and parse @path. */
int mr_conf_load(const char *path, struct mr_conf *c);
void mr_conf_free(struct mr_conf *c);

#endif
