/* Unit tests of the live backends: refs' attribution of smaps Referenced bytes (on a
 * fixture root), the self-tests on this kernel, and uffd's per-page write tracking
 * on memory of our own. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/root.h"
#include "common/util.h"
#include "monitor/monitor.h"
#include "monitor/uffd.h"

#define P 4096u

/* Return lo + rand_offset_bytes (bounded): deterministic sampling and draws. */
static uint64_t rand_offset_bytes;

static uint64_t rand_off(struct mr_mon_ctx *ctx, uint64_t lo, uint64_t hi)
{
	return lo + rand_offset_bytes < hi ? lo + rand_offset_bytes : hi - 1;
}

static uint64_t rand_lo(struct mr_mon_ctx *ctx, uint64_t lo, uint64_t hi)
{
	return lo;
}

/*
 * refs on a fixture smaps: two mappings
 *   A [0x100000, 0x140000) 256 KiB, Referenced 64 KiB: a page drawn from A was
 *     referenced with probability 1/4: accessed when the draw in [0, 256K) < 64K
 *   B [0x200000, 0x210000)  64 KiB, Referenced 0: never
 */
static void test_refs_attribution(void **state)
{
	static const char smaps[] =
		"00100000-00140000 rw-p 00000000 00:00 0\n"
		"Size:                256 kB\n"
		"Referenced:           64 kB\n"
		"Anonymous:           256 kB\n"
		"VmFlags: rd wr mr mw me ac\n"
		"00200000-00210000 rw-p 00000000 00:00 0          [heap]\n"
		"Size:                 64 kB\n"
		"Referenced:            0 kB\n";
	struct mr_mon_region regs[4] = {
		{ .start = 0x100000, .end = 0x110000 },
		{ .start = 0x110000, .end = 0x120000 },
		{ .start = 0x120000, .end = 0x140000 },
		{ .start = 0x200000, .end = 0x210000 },
	};
	char root[] = "/tmp/mr-test-refs-XXXXXX", path[600];
	struct mr_mon_ctx ctx;
	uint32_t max = 0;
	FILE *f;

	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/123", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/123/smaps", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(smaps, f);
	fclose(f);
	assert_int_equal(mr_root_set(root), 0);

	mr_mon_ctx_init(&ctx, &mr_mon_ops_refs);
	ctx.target.pid = 123;
	ctx.target.regions = malloc(sizeof(regs));
	memcpy(ctx.target.regions, regs, sizeof(regs));
	ctx.target.nr_regions = ctx.target.cap_regions = 4;
	ctx.rand = rand_off;
	assert_int_equal(mr_mon_ops_refs.init(&ctx), 0);
	/* prepare writes clear_refs: refused under a fixture root, nothing written */
	assert_int_equal(mr_mon_ops_refs.prepare(&ctx), -EROFS);
	/* draw 0: below 64K, every region of A accessed; B never */
	rand_offset_bytes = 0;
	mr_mon_pick_sampling_addrs(&ctx);
	assert_int_equal(mr_mon_ops_refs.check(&ctx, &max), 0);
	assert_int_equal(ctx.target.regions[0].nr_accesses, 1);
	assert_int_equal(ctx.target.regions[1].nr_accesses, 1);
	assert_int_equal(ctx.target.regions[2].nr_accesses, 1);
	assert_int_equal(ctx.target.regions[3].nr_accesses, 0);
	assert_int_equal(max, 1);
	/* draw 64K - 1: still referenced; draw 64K: not */
	rand_offset_bytes = 64 * 1024 - 1;
	assert_int_equal(mr_mon_ops_refs.check(&ctx, &max), 0);
	assert_int_equal(ctx.target.regions[0].nr_accesses, 2);
	rand_offset_bytes = 64 * 1024;
	assert_int_equal(mr_mon_ops_refs.check(&ctx, &max), 0);
	assert_int_equal(ctx.target.regions[0].nr_accesses, 2);
	assert_int_equal(ctx.target.regions[2].nr_accesses, 2);
	assert_int_equal(ctx.target.regions[3].nr_accesses, 0);
	mr_mon_ops_refs.cleanup(&ctx);
	mr_mon_ctx_destroy(&ctx);
	assert_int_equal(mr_root_set("/"), 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

/* This kernel: refs must work (it is the backend `make check` measures with);
 * softdirty's self-test must agree with the kernel's config. */
static void test_selftests_here(void **state)
{
	struct mr_mon_ctx ctx;
	int err;

	mr_mon_ctx_init(&ctx, &mr_mon_ops_refs);
	err = mr_mon_ops_refs.selftest(&ctx);
	if (err)
		fail_msg("refs self-test failed here: %s", mr_last_error());
	mr_mon_ctx_init(&ctx, &mr_mon_ops_softdirty);
	err = mr_mon_ops_softdirty.selftest(&ctx);
	print_message("softdirty self-test here: %s\n", err ? mr_last_error() : "works");
	if (err)
		assert_non_null(strstr(mr_last_error(), "softdirty: "));
}

/*
 * uffd: 8 regions of 8 pages each over a mapping of ours, sampled at their first
 * page. Writes to regions 0 and 1 -> exactly those count; no write -> nothing
 * (the scan re-protected them); a write to region 5 -> only region 5.
 */
static void test_uffd_tracking(void **state)
{
	struct mr_mon_range *ranges = NULL;
	struct mr_mon_ctx ctx;
	char *mem;
	size_t nr = 0, i;
	uint32_t max = 0;
	int err;

	mr_mon_ctx_init(&ctx, &mr_mon_ops_uffd);
	err = mr_mon_ops_uffd.selftest(&ctx);
	if (err) {
		/* Linux < 6.7 or userfaultfd forbidden: say so, as a skip */
		print_message("SKIP: uffd self-test: %s\n", mr_last_error());
		skip();
	}
	mem = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	memset(mem, 1, 64 * P);
	assert_int_equal(mr_mon_uffd_watch(&ctx, mem, 64 * P), 0);
	assert_int_equal(mr_mon_ops_uffd.ranges(&ctx, &ranges, &nr), 0);
	assert_int_equal(mr_mon_init_regions(&ctx.target, ranges, nr, 8), 0);
	free(ranges);
	assert_int_equal(ctx.target.nr_regions, 8);
	assert_int_equal(mr_mon_ops_uffd.init(&ctx), 0);
	ctx.rand = rand_lo;
	mr_mon_pick_sampling_addrs(&ctx);

	mem[0] = 2;
	mem[8 * P] = 2;
	assert_int_equal(mr_mon_ops_uffd.check(&ctx, &max), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(ctx.target.regions[i].nr_accesses, i < 2 ? 1 : 0);
	assert_int_equal(mr_mon_ops_uffd.check(&ctx, &max), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(ctx.target.regions[i].nr_accesses, i < 2 ? 1 : 0);
	mem[40 * P + 100] = 3;
	(void)*(volatile char *)(mem + 48 * P);	/* a read is not a write */
	assert_int_equal(mr_mon_ops_uffd.check(&ctx, &max), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(ctx.target.regions[i].nr_accesses, i < 2 || i == 5 ? 1 : 0);
	assert_int_equal(ctx.target.regions[5].nr_accesses, 1);
	mr_mon_ops_uffd.cleanup(&ctx);
	mr_mon_ctx_destroy(&ctx);
	munmap(mem, 64 * P);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_attribution),
		cmocka_unit_test(test_selftests_here),
		cmocka_unit_test(test_uffd_tracking),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
