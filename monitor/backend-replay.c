/* The `replay` backend: a record file as the source of snapshots, for deterministic
 * tests and offline planning. Replays as fast as the consumer takes them. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "monitor/monitor.h"
#include "monitor/record.h"

struct replay_priv {
	struct mr_rec rec;
	size_t next;
};

/* Proves the file is readable and well formed before anything consumes it. */
static int replay_selftest(struct mr_mon_ctx *ctx)
{
	struct mr_rec rec;
	int err;

	if (!ctx->replay_path)
		return mr_error(-EINVAL, "replay: no record file given");
	err = mr_rec_load(ctx->replay_path, &rec);
	if (err)
		return err;
	mr_rec_free(&rec);
	return 0;
}

static int replay_init(struct mr_mon_ctx *ctx)
{
	struct replay_priv *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return mr_error(-ENOMEM, "replay: out of memory");
	err = mr_rec_load(ctx->replay_path, &p->rec);
	if (err) {
		free(p);
		return err;
	}
	ctx->priv = p;
	ctx->target.kind = p->rec.hdr.kind;
	ctx->target.pid = 0;	/* the recorded process is gone: no liveness polling */
	return 0;
}

static int replay_snapshot(struct mr_mon_ctx *ctx)
{
	struct replay_priv *p = ctx->priv;
	const struct mr_rec_snapshot *s;
	struct mr_mon_region *r;
	size_t i;

	if (p->next >= p->rec.nr_snaps)
		return 1;
	s = &p->rec.snaps[p->next++];
	if (s->nr_regions + 1 > ctx->target.cap_regions) {	/* grow only: snapshots vary */
		r = realloc(ctx->target.regions, (s->nr_regions + 1) * sizeof(*r));
		if (!r)
			return mr_error(-ENOMEM, "replay: out of memory");
		ctx->target.regions = r;
		ctx->target.cap_regions = s->nr_regions + 1;
	}
	r = ctx->target.regions;
	for (i = 0; i < s->nr_regions; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].start = s->regions[i].start;
		r[i].end = s->regions[i].end;
		r[i].nr_accesses = s->regions[i].nr_accesses;
		r[i].age = s->regions[i].age;
		r[i].sampling_addr = r[i].start;
	}
	ctx->target.nr_regions = s->nr_regions;
	ctx->snapshot_time_us = s->time_us;
	return 0;
}

static void replay_cleanup(struct mr_mon_ctx *ctx)
{
	struct replay_priv *p = ctx->priv;

	if (p)
		mr_rec_free(&p->rec);
	free(p);
	ctx->priv = NULL;
}

const struct mr_mon_ops mr_mon_ops_replay = {
	.name = "replay",
	.help = "a record file (--replay FILE) as the source: its snapshots, in order, as fast\n"
		"as they are consumed. For tests and offline planning.",
	.default_attrs = { .sample_us = 1, .aggr_us = 1, .update_us = 1,
			   .min_nr_regions = 10, .max_nr_regions = 1000 },
	.selftest = replay_selftest,
	.init = replay_init,
	.snapshot = replay_snapshot,
	.cleanup = replay_cleanup,
};
