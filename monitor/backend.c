/* The registry of monitor backends, by name, best first, and `auto`: the first one
 * whose self-test passes on this kernel. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/root.h"
#include "common/util.h"
#include "monitor/monitor.h"

/* Preference for `auto`: the kernel's own DAMON is cheapest and per page; soft-dirty
 * is per page but writes only; refs sees reads too but only per mapping; perf (PEBS)
 * samples loads per address, cheap, but needs a PMU. uffd only
 * watches the caller's own memory and replay is not a live source: never auto. */
static const struct mr_mon_ops *const backends[] = {
	&mr_mon_ops_damon,
	&mr_mon_ops_perf,
	&mr_mon_ops_softdirty,
	&mr_mon_ops_refs,
	&mr_mon_ops_uffd,
	&mr_mon_ops_replay,
};

const struct mr_mon_ops *const *mr_mon_backends(size_t *nr)
{
	*nr = MR_ARRAY_SIZE(backends);
	return backends;
}

const struct mr_mon_ops *mr_mon_backend_find(const char *name)
{
	size_t i;

	for (i = 0; i < MR_ARRAY_SIZE(backends); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

bool mr_mon_target_consent(const struct mr_mon_ctx *ctx)
{
	return ctx->apply || ctx->target.started;
}

int mr_mon_check_consent(const struct mr_mon_ctx *ctx)
{
	const struct mr_mon_ops *ops = ctx->ops;
	char what[96];
	int err;

	/* the one guard (common/root.h), so a fixture root refuses as everywhere */
	if (ops->needs_apply) {
		snprintf(what, sizeof(what), "use the kernel's %s", ops->name);
		err = mr_root_may_change(what, ctx->apply);
		if (err)
			return mr_error_wrap(err, "%s", ops->name);
	}
	/* a process memreg started is its own to observe; anyone else's reclaim and
	 * soft-dirty users would be misled without a word */
	if (ops->writes_target && ctx->target.kind == MR_MON_TARGET_PROCESS &&
	    !mr_mon_target_consent(ctx))
		return mr_error(-EPERM, "%s: would write /proc/%d/clear_refs of a process memreg "
				"did not start, changing what its reclaim and soft-dirty users see; "
				"give --apply to allow it", ops->name, (int)ctx->target.pid);
	return 0;
}

const struct mr_mon_ops *mr_mon_backend_auto(const struct mr_mon_ctx *want, char *why,
					     size_t why_len)
{
	enum mr_mon_target_kind kind = want->target.kind;
	size_t i, used = 0;

	if (why && why_len)
		why[0] = '\0';
	for (i = 0; i < MR_ARRAY_SIZE(backends); i++) {
		const struct mr_mon_ops *ops = backends[i];
		struct mr_mon_ctx ctx;
		const char *reason = NULL;
		int err;

		if (ops == &mr_mon_ops_uffd || ops == &mr_mon_ops_replay)
			continue;
		mr_mon_ctx_init(&ctx, ops);
		ctx.target.kind = kind;
		ctx.target.started = want->target.started;
		ctx.apply = want->apply;
		if (ops->process_only && kind != MR_MON_TARGET_PROCESS) {
			reason = "process targets only";
		} else if (ops->needs_apply && !ctx.apply) {
			reason = "changes kernel state, needs --apply";
		} else if (ops->writes_target && !mr_mon_target_consent(&ctx)) {
			reason = "writes the process's clear_refs, needs --apply for a process "
				 "memreg did not start";
		} else {
			err = ops->selftest ? ops->selftest(&ctx) : 0;
			if (!err) {
				mr_mon_ctx_destroy(&ctx);
				return ops;
			}
			reason = mr_last_error();
		}
		mr_mon_ctx_destroy(&ctx);
		if (why && used < why_len) {
			/* backend messages already start with the backend's name */
			bool named = strncmp(reason, ops->name, strlen(ops->name)) == 0;
			int n = snprintf(why + used, why_len - used, "%s%s%s%s",
					 used ? "; " : "", named ? "" : ops->name,
					 named ? "" : ": ", reason);

			if (n > 0)
				used += (size_t)n;
		}
	}
	mr_error(-ENOTSUP, "no monitor backend works here");
	return NULL;
}
