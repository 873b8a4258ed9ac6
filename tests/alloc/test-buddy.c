/* Unit tests of the region-sorted buddy heap (allocator/buddy.c): table-driven steps
 * with every invariant checked after each (mr_buddy_check: no overlap, coalesced
 * buddies, bitmaps agreeing with the lists), lowest-region-first, cold from the top,
 * in-place growth, huge runs, decay; then a long random sequence. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allocator/buddy.h"
#include "allocator/internal.h"

/* Test heap: 8 regions of 16 pages (order 4). No memory behind the arena: the
 * buddy heap only touches descriptors. */
#define T_ORDER 4
#define T_PPR (1u << T_ORDER)
#define T_REGIONS 8

static uint64_t fake_now;
static unsigned commits, purges;
static int fail_commit;

static int t_commit(struct mr_heap *h, uint32_t r)
{
	(void)h;
	(void)r;
	if (fail_commit)
		return -1;
	commits++;
	return 0;
}

/* Like MADV_DONTNEED on the descriptors: they read back as zero. */
static void t_purge(struct mr_heap *h, uint32_t r, uint32_t n)
{
	memset(&h->spans[r * T_PPR], 0, (size_t)n * T_PPR * sizeof(struct mr_span));
	purges++;
}

static unsigned clock_reads;

static uint64_t t_now(void)
{
	clock_reads++;
	return fake_now;
}

static const struct mr_heap_ops t_ops = { .commit = t_commit, .purge = t_purge, .now_ns = t_now };

static struct mr_heap *new_heap(uint64_t decay_ns)
{
	struct mr_heap *h = calloc(1, sizeof(*h));
	struct mr_span *spans = calloc((size_t)T_REGIONS * T_PPR, sizeof(*spans));

	assert_non_null(h);
	assert_non_null(spans);
	fake_now = 1000;
	commits = purges = 0;
	fail_commit = 0;
	mr_buddy_init(h, (char *)0x100000000, spans, T_ORDER, T_REGIONS, decay_ns, &t_ops);
	return h;
}

static void free_heap(struct mr_heap *h)
{
	free(h->spans);
	free(h);
}

static void expect_ok(const struct mr_heap *h, const char *step)
{
	const char *err = mr_buddy_check(h);

	if (err)
		fail_msg("after %s: %s", step, err);
}

enum op { ALLOC, FREE, GROW, NOGROW, HUGE, HUGEFREE, END };
struct step {
	enum op op;
	uint32_t a, b;		/* ALLOC: npages, align order; FREE/GROW: page, npages */
	enum mr_temp temp;
	uint32_t c;		/* GROW: new npages */
	uint32_t expect;	/* ALLOC/HUGE: expected first page */
	const char *what;
};

static void run_steps(struct mr_heap *h, const struct step *s)
{
	for (; s->op != END; s++) {
		uint32_t got;

		switch (s->op) {
		case ALLOC:
			got = mr_buddy_alloc(h, s->a, s->b, s->temp);
			if (got != s->expect)
				fail_msg("%s: got page %u, want %u", s->what, got, s->expect);
			break;
		case FREE:
			mr_buddy_free(h, s->a, s->b);
			break;
		case GROW:
			assert_true(mr_buddy_grow(h, s->a, s->b, s->c));
			break;
		case NOGROW:
			assert_false(mr_buddy_grow(h, s->a, s->b, s->c));
			break;
		case HUGE:
			got = mr_buddy_alloc_huge(h, s->a, s->b, s->temp);
			if (got != s->expect)
				fail_msg("%s: got page %u, want %u", s->what, got, s->expect);
			break;
		case HUGEFREE:
			mr_buddy_free_huge(h, s->a);
			break;
		case END:
			break;
		}
		expect_ok(h, s->what);
	}
}

/* Pages 0..15 are region 0, 16..31 region 1, ..., 112..127 region 7.
 *   a 1 | b 2 | c 1            region 0: [a][.][b b][c]...
 * Frees coalesce back into one order-4 block per region. */
static void test_lowest_first_and_coalescing(void **state)
{
	static const struct step steps[] = {
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 0, "a: 1 page from the lowest region" },
		{ ALLOC, 2, 0, MR_TEMP_NORMAL, 0, 2, "b: 2 pages, aligned, next to a's buddy" },
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 1, "c: 1 page fills a's buddy" },
		{ ALLOC, 12, 0, MR_TEMP_NORMAL, 0, 16, "d: 12 pages do not fit region 0's rest" },
		{ ALLOC, 4, 0, MR_TEMP_NORMAL, 0, 4, "e: 4 pages back in region 0" },
		{ ALLOC, 3, 0, MR_TEMP_NORMAL, 0, 8, "f: 3 pages, tail page freed" },
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 11, "g: the freed tail of f" },
		{ ALLOC, 4, 0, MR_TEMP_NORMAL, 0, 12, "h: last 4 of region 0" },
		{ ALLOC, 4, 0, MR_TEMP_NORMAL, 0, 28, "i: region 1's free tail (d took 16..27)" },
		{ FREE, 0, 1, 0, 0, 0, "free a" },
		{ FREE, 1, 1, 0, 0, 0, "free c: a+c coalesce to order 1" },
		{ ALLOC, 2, 0, MR_TEMP_NORMAL, 0, 0, "j: the coalesced pair" },
		{ FREE, 0, 2, 0, 0, 0, "free j" },
		{ FREE, 2, 2, 0, 0, 0, "free b" },
		{ FREE, 4, 4, 0, 0, 0, "free e" },
		{ FREE, 8, 3, 0, 0, 0, "free f" },
		{ FREE, 11, 1, 0, 0, 0, "free g" },
		{ FREE, 12, 4, 0, 0, 0, "free h: region 0 whole again" },
		{ ALLOC, 16, 0, MR_TEMP_NORMAL, 0, 0, "k: all of region 0 in one block" },
		{ FREE, 0, 16, 0, 0, 0, "free k" },
		{ FREE, 16, 12, 0, 0, 0, "free d" },
		{ FREE, 28, 4, 0, 0, 0, "free i" },
		{ END, 0, 0, 0, 0, 0, NULL },
	};
	struct mr_heap *h = new_heap(UINT64_MAX / 2);

	(void)state;
	run_steps(h, steps);
	assert_int_equal(h->used_pages, 0);
	assert_int_equal(h->regions[0].free_head[T_ORDER], 0);
	assert_int_equal(h->regions[1].free_head[T_ORDER], 16);
	free_heap(h);
}

/* Cold allocations open regions from the top and never share a region with hot. */
static void test_cold_from_top(void **state)
{
	static const struct step steps[] = {
		{ ALLOC, 1, 0, MR_TEMP_HOT, 0, 0, "hot page in region 0" },
		{ ALLOC, 1, 0, MR_TEMP_COLD, 0, 7 * T_PPR, "cold page in region 7" },
		{ ALLOC, 8, 0, MR_TEMP_COLD, 0, 7 * T_PPR + 8, "cold 8 pages, region 7" },
		{ ALLOC, 8, 0, MR_TEMP_COLD, 0, 6 * T_PPR, "region 7 full: region 6" },
		{ ALLOC, 15, 0, MR_TEMP_NORMAL, 0, T_PPR, "normal 15 pages: region 1, not 0" },
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 1, "normal 1 page: region 0" },
		{ ALLOC, 1, 0, MR_TEMP_COLD, 0, 7 * T_PPR + 1, "cold 1 page: region 7's hole" },
		{ END, 0, 0, 0, 0, 0, NULL },
	};
	struct mr_heap *h = new_heap(UINT64_MAX / 2);

	(void)state;
	run_steps(h, steps);
	assert_int_equal(h->hot_top[0], 2);
	assert_int_equal(h->cold_bottom[0], 6);
	assert_int_equal(mr_buddy_find(h, 0, false), 0);
	assert_int_equal(mr_buddy_find(h, 0, true), 7);
	assert_int_equal(mr_buddy_find(h, T_ORDER, false), 2 > h->hot_top[0] ? 2 : MR_NONE);
	free_heap(h);
}

/* Alignment and in-place growth within a region, never across it. */
static void test_align_and_grow(void **state)
{
	static const struct step steps[] = {
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 0, "page 0" },
		{ ALLOC, 1, 3, MR_TEMP_NORMAL, 0, 8, "1 page aligned to 8 pages: 1..7 free below" },
		{ GROW, 8, 1, 0, 5, 0, "grow 1 -> 5 pages in place, into the untouched top" },
		/* The smallest free block that fits, a listed one before the untouched
		 * top's (13..15) when they are the same order. */
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 1, "page 1, skipped by the alignment" },
		{ ALLOC, 4, 0, MR_TEMP_NORMAL, 0, 4, "4 pages: 4..7" },
		{ ALLOC, 2, 0, MR_TEMP_NORMAL, 0, 2, "2 pages: 2..3" },
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 13, "page 13: the top, once the blocks are used" },
		{ NOGROW, 8, 5, 0, 6, 0, "8..12 cannot grow over page 13" },
		{ FREE, 13, 1, 0, 0, 0, "free page 13" },
		{ GROW, 8, 5, 0, 8, 0, "grow 5 -> 8 pages: page 13 and the top, to the region's end" },
		{ NOGROW, 8, 8, 0, 9, 0, "no growth across a region boundary" },
		{ NOGROW, 0, 1, 0, 2, 0, "page 0 cannot grow over page 1" },
		{ FREE, 8, 8, 0, 0, 0, "free the grown span" },
		{ ALLOC, 8, 3, MR_TEMP_NORMAL, 0, 8, "its 8 pages again, coalesced" },
		{ END, 0, 0, 0, 0, 0, NULL },
	};
	struct mr_heap *h = new_heap(UINT64_MAX / 2);

	(void)state;
	run_steps(h, steps);
	free_heap(h);
}

/* Huge runs of whole regions: alignment, reuse, growth, and regions given back. */
static void test_huge(void **state)
{
	static const struct step steps[] = {
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 0, "a page in region 0" },
		{ HUGE, 2, 1, MR_TEMP_NORMAL, 0, 1 * T_PPR, "2 regions: 1-2" },
		{ HUGE, 2, 4, MR_TEMP_NORMAL, 0, 4 * T_PPR, "2 regions aligned to 4: 4-5" },
		{ HUGE, 1, 1, MR_TEMP_COLD, 0, 7 * T_PPR, "cold region: 7" },
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 1, "a page: region 0" },
		{ HUGEFREE, 1 * T_PPR, 0, 0, 0, 0, "free 1-2" },
		{ ALLOC, 16, 0, MR_TEMP_NORMAL, 0, 1 * T_PPR, "region 1 reused by the buddy heap" },
		{ HUGE, 3, 1, MR_TEMP_NORMAL, 0, MR_NONE, "no 3 free regions in a row" },
		{ END, 0, 0, 0, 0, 0, NULL },
	};
	struct mr_heap *h = new_heap(UINT64_MAX / 2);

	(void)state;
	run_steps(h, steps);
	assert_true(mr_buddy_grow_huge(h, 4 * T_PPR, 3));
	expect_ok(h, "grow huge 2 -> 3 regions");
	assert_false(mr_buddy_grow_huge(h, 4 * T_PPR, 4));
	mr_buddy_shrink_huge(h, 4 * T_PPR, 1);
	expect_ok(h, "shrink huge 3 -> 1 region");
	assert_int_equal(h->regions[5].state, MR_REGION_ACTIVE);
	assert_int_equal(h->regions[5].purged, 1);
	free_heap(h);
}

/* A region left entirely free is purged once the decay delay has passed, and its
 * block survives the purge of its descriptors. */
static void test_decay(void **state)
{
	struct mr_heap *h = new_heap(1000);
	uint32_t a, b;

	(void)state;
	a = mr_buddy_alloc(h, 4, 0, MR_TEMP_NORMAL);
	b = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	assert_int_equal(a, 0);
	assert_int_equal(b, T_PPR);
	mr_buddy_free(h, b, 16);
	assert_int_equal(h->regions[1].pending, 1);
	assert_int_equal(purges, 0);
	fake_now += 999;
	mr_buddy_decay(h, false);
	assert_int_equal(purges, 0);
	fake_now += 1;
	mr_buddy_decay(h, false);
	assert_int_equal(purges, 1);
	assert_int_equal(h->regions[1].purged, 1);
	assert_int_equal(h->regions[0].purged, 0);
	expect_ok(h, "decay");
	/* The purged region is found again, first-fit from the bottom. */
	assert_int_equal(mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL), T_PPR);
	assert_int_equal(h->regions[1].purged, 0);
	expect_ok(h, "reuse after purge");
	free_heap(h);
}

/* Free runs of regions still in use: a free block of 16 pages and more is purged
 * once free for the decay delay (not before, and not one of fewer pages), clean after
 * MADV_DONTNEED (an allocation from it says MR_SPAN_ZEROED), never clean after
 * MADV_FREE; a forced decay (malloc_trim) purges those too, once.
 *   region 0 (64 pages): [a 0-15][b 16-31][c 32-35][e 36-39][free 40-63] */
#define P_ORDER 6
#define P_PPR (1u << P_ORDER)
static uint32_t p_page, p_npages, p_calls, p_queued, p_flushes;
static bool p_lazy;

static void p_purge(struct mr_heap *h, uint32_t r, uint32_t n)
{
	memset(&h->spans[r * P_PPR], 0, (size_t)n * P_PPR * sizeof(struct mr_span));
}

static bool p_fail;	/* the purges fail (locked pages): the op says so */

static void p_purge_pages(struct mr_heap *h, uint32_t page, uint32_t npages, bool lazy)
{
	if (p_fail)
		h->purge_failed = true;
	p_page = page;
	p_npages = npages;
	p_lazy = lazy;
	p_calls++;
	p_queued++;
}

/* The OS layer only queues purges of free pages (one process_madvise for a batch):
 * the heap must flush before it returns, or a block could be handed out and written
 * before its purge, which then clears it. */
static void p_purge_flush(struct mr_heap *h)
{
	(void)h;
	p_queued = 0;
	p_flushes++;
}

static const struct mr_heap_ops p_ops = {
	.commit = t_commit, .purge = p_purge, .now_ns = t_now, .purge_pages = p_purge_pages,
	.purge_flush = p_purge_flush,
};

/* A heap of 4 regions of 64 pages, a 1 s delay, the clock at 5 s. */
static struct mr_heap *p_heap(void)
{
	struct mr_heap *h = calloc(1, sizeof(*h));
	struct mr_span *spans = calloc((size_t)4 * P_PPR, sizeof(*spans));

	assert_non_null(h);
	assert_non_null(spans);
	fake_now = 5000000000u;
	p_calls = p_queued = p_flushes = 0;
	mr_buddy_init(h, (char *)0x100000000, spans, P_ORDER, 4, 1000000000u, &p_ops);
	return h;
}

/* The @calls-th purge of free pages so far took [page, page + npages), and maybe
 * the free pages merged with it, MADV_DONTNEED, and is done (flushed). */
static void expect_purged_over(uint32_t calls, uint32_t page, uint32_t npages)
{
	assert_int_equal(p_calls, calls);
	assert_int_equal(p_queued, 0);
	assert_true(p_page <= page && p_page + p_npages >= page + npages);
	assert_false(p_lazy);
}

/* The same, exactly [page, page + npages). */
static void expect_purged(uint32_t calls, uint32_t page, uint32_t npages)
{
	expect_purged_over(calls, page, npages);
	assert_int_equal(p_page, page);
	assert_int_equal(p_npages, npages);
}

/* @npages allocated again land at @page, clean: calloc need not clear them. */
static uint32_t expect_clean_alloc(struct mr_heap *h, uint32_t npages, uint32_t page)
{
	uint32_t got = mr_buddy_alloc(h, npages, 0, MR_TEMP_NORMAL);

	assert_int_equal(got, page);
	assert_true(h->spans[got].flags & MR_SPAN_ZEROED);
	return got;
}

static void test_purge_runs(void **state)
{
	struct mr_heap *h = p_heap();
	uint32_t a, b, c;

	(void)state;
	a = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	b = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	c = mr_buddy_alloc(h, 4, 0, MR_TEMP_NORMAL);
	assert_int_equal(mr_buddy_alloc(h, 4, 0, MR_TEMP_NORMAL), 36);	/* e: c's buddy */
	assert_int_equal(a, 0);
	assert_int_equal(b, 16);
	assert_int_equal(c, 32);
	assert_true(h->spans[b].flags & MR_SPAN_ZEROED);	/* fresh */
	mr_buddy_free(h, b, 16);
	mr_buddy_free(h, c, 4);
	expect_ok(h, "two frees");
	fake_now += 999999999u;
	assert_int_equal(mr_buddy_decay(h, false), 0);
	assert_int_equal(p_calls, 0);
	fake_now += 1;
	assert_int_equal(mr_buddy_decay(h, false), 16);	/* b, not c's 4 pages */
	expect_purged(1, 16, 16);
	assert_int_equal(h->nruns_pending, 0);
	expect_ok(h, "purged");
	/* Purged with MADV_DONTNEED: clean, calloc need not clear it. */
	b = expect_clean_alloc(h, 16, 16);
	/* Used, freed, purged with MADV_FREE: never clean. */
	h->lazy_purge = 1;
	mr_buddy_free(h, b, 16);
	fake_now += 1000000000u;
	assert_int_equal(mr_buddy_decay(h, false), 16);
	assert_true(p_lazy);
	assert_int_equal(mr_buddy_decay(h, false), 0);	/* nothing dirty left */
	b = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	assert_int_equal(b, 16);
	assert_false(h->spans[b].flags & MR_SPAN_ZEROED);
	mr_buddy_free(h, b, 16);
	fake_now += 1000000000u;
	assert_int_equal(mr_buddy_decay(h, false), 16);
	/* malloc_trim: the MADV_FREE'd block with MADV_DONTNEED, and c's 4 pages (the
	 * decay leaves blocks under 16 pages), then nothing left to give back. */
	p_calls = p_flushes = 0;
	assert_int_equal(mr_buddy_decay(h, true), 16 + 4);
	assert_int_equal(p_calls, 2);
	assert_int_equal(p_queued, 0);
	assert_int_equal(p_flushes, 1);		/* both in one batch */
	assert_false(p_lazy);
	assert_int_equal(mr_buddy_decay(h, true), 0);
	b = expect_clean_alloc(h, 16, 16);
	/* A block freed later than its buddy: the merged block is due after the later. */
	mr_buddy_free(h, b, 16);		/* [16, 32) at t */
	fake_now += 500000000u;
	mr_buddy_free(h, a, 16);		/* [0, 16) at t + 0.5 s: merge to [0, 32) */
	fake_now += 600000000u;
	assert_int_equal(mr_buddy_decay(h, false), 0);
	fake_now += 400000000u;
	assert_int_equal(mr_buddy_decay(h, false), 32);
	expect_ok(h, "merged and purged");
	free(h->spans);
	free(h);
}

/* A purge that failed (MADV_DONTNEED on locked pages) leaves the data: nothing is
 * handed out as reading zero since, neither the block it purged nor a huge run of
 * fresh regions. */
static void test_purge_failed(void **state)
{
	struct mr_heap *h = p_heap();
	uint32_t a, keep;
	uint64_t purged;

	(void)state;
	a = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	keep = mr_buddy_alloc(h, 4, 0, MR_TEMP_NORMAL);	/* the region stays in use */
	assert_true(h->spans[a].flags & MR_SPAN_ZEROED);	/* fresh */
	mr_buddy_free(h, a, 16);
	fake_now += 1000000000u;
	p_fail = true;
	purged = mr_buddy_decay(h, false);
	p_fail = false;
	assert_int_equal(purged, 16);
	assert_true(h->purge_failed);
	a = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	assert_int_equal(a, 0);
	(void)keep;
	assert_false(h->spans[a].flags & MR_SPAN_ZEROED);
	a = mr_buddy_alloc_huge(h, 1, 1, MR_TEMP_NORMAL);
	assert_int_not_equal(a, MR_NONE);
	assert_false(h->spans[a].flags & MR_SPAN_ZEROED);
	expect_ok(h, "after a failed purge");
	free(h->spans);
	free(h);
}

/* The decay's purges come due on allocations, growths and huge runs' frees and
 * shrinks too, not on frees of spans alone: a program that frees one big block and
 * then only allocates or grows kept its pages to the end (memory.c's no-free). */
static void test_purges_due_without_frees(void **state)
{
	struct mr_heap *h = p_heap();
	uint32_t a, b, c, x, y, huge;

	(void)state;
	a = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	b = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	c = mr_buddy_alloc(h, 4, 0, MR_TEMP_NORMAL);
	assert_int_equal(c, 32);
	mr_buddy_free(h, b, 16);
	fake_now += 1000000000u;
	/* An allocation elsewhere ([36, 40), c's buddy) purges b, due now. */
	x = mr_buddy_alloc(h, 4, 0, MR_TEMP_NORMAL);
	assert_int_equal(x, 36);
	expect_purged(1, 16, 16);
	expect_ok(h, "purged at an allocation");
	/* A growth ([36, 40) into [40, 44)) purges a, merged with b's clean block. */
	mr_buddy_free(h, a, 16);
	fake_now += 1000000000u;
	assert_true(mr_buddy_grow(h, x, 4, 8));
	expect_purged(2, 0, 32);
	expect_ok(h, "purged at a growth");
	/* A huge run's shrink and free (regions 1-2, shrunk to one, then freed), each
	 * after a block was freed and its delay passed: each purges it. */
	huge = mr_buddy_alloc_huge(h, 2, 1, MR_TEMP_NORMAL);
	assert_int_equal(huge, P_PPR);
	y = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	mr_buddy_free(h, y, 16);
	fake_now += 1000000000u;
	mr_buddy_shrink_huge(h, huge, 1);
	expect_purged_over(3, y, 16);
	expect_ok(h, "purged at a huge run's shrink");
	y = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	mr_buddy_free(h, y, 16);
	fake_now += 1000000000u;
	mr_buddy_free_huge(h, huge);
	expect_purged_over(4, y, 16);
	expect_ok(h, "purged at a huge run's free");
	free(h->spans);
	free(h);
}

/* The clock is read where a purge may be due: never by allocations and growths in
 * a heap nothing was freed to (a short process then never faults in the page of
 * the kernel's clock data), and at each one once a freed block waits for the decay,
 * until it is purged. */
static void test_clock_read_when_due(void **state)
{
	struct mr_heap *h = p_heap();
	uint32_t b, x;

	(void)state;
	clock_reads = 0;
	assert_int_equal(mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL), 0);
	b = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	x = mr_buddy_alloc(h, 4, 0, MR_TEMP_NORMAL);
	assert_true(mr_buddy_grow(h, x, 4, 8));
	assert_int_not_equal(mr_buddy_alloc_huge(h, 1, 1, MR_TEMP_NORMAL), MR_NONE);
	if (clock_reads)
		fail_msg("%u clock reads with nothing freed", clock_reads);
	mr_buddy_free(h, b, 16);	/* dirty, due after the delay */
	assert_int_equal(clock_reads, 1);
	mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL);
	assert_int_equal(clock_reads, 2);	/* not due yet: nothing purged */
	assert_int_equal(p_calls, 0);
	fake_now += 1000000000u;
	mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL);
	assert_true(clock_reads >= 3);	/* the decay reads it too */
	expect_purged(1, b, 16);
	free(h->spans);
	free(h);
}

/* A span freed bigger than every one before (and of purge_new_max_min pages or
 * more) is purged at its free and goes back clean; one of the same size freed again
 * is left to the decay. */
static void test_purge_new_max(void **state)
{
	struct mr_heap *h = p_heap();
	uint32_t a;

	(void)state;
	h->purge_new_max_min = 16;
	assert_int_equal(mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL), 0);	/* the region in use */
	a = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	mr_buddy_free(h, a, 16);
	expect_purged(1, a, 16);
	assert_int_equal(h->dirty_pages, 0);
	expect_ok(h, "the biggest yet, purged");
	a = expect_clean_alloc(h, 16, a);
	mr_buddy_free(h, a, 16);		/* the same size again: dirty */
	assert_int_equal(p_calls, 1);
	assert_int_equal(h->dirty_pages, 16);
	expect_ok(h, "the same size, left to the decay");
	a = mr_buddy_alloc(h, 32, 0, MR_TEMP_NORMAL);
	mr_buddy_free(h, a, 32);
	expect_purged(2, a, 32);
	expect_ok(h, "a bigger one, purged");
	h->free_max_pages = 0;
	a = mr_buddy_alloc(h, 8, 0, MR_TEMP_NORMAL);
	mr_buddy_free(h, a, 8);			/* under the minimum */
	assert_int_equal(p_calls, 2);
	free(h->spans);
	free(h);
}

/* A span purged at its free merges with a dirty buddy that the decay passed over
 * (under 16 pages: left resident) after its region's look: the merged block is
 * dirty and big enough, and the decay must look at its region again, or only
 * malloc_trim would ever purge it (found by a review). */
static void test_purge_at_free_merges_dirty(void **state)
{
	struct mr_heap *h = p_heap();
	uint32_t keep, c, e;

	(void)state;
	h->purge_new_max_min = 8;
	h->free_max_pages = 8;			/* c, 8 pages, is not the biggest yet */
	keep = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	c = mr_buddy_alloc(h, 8, 0, MR_TEMP_NORMAL);
	e = mr_buddy_alloc(h, 8, 0, MR_TEMP_NORMAL);
	assert_int_equal(c, 16);
	assert_int_equal(e, 24);		/* c's buddy */
	mr_buddy_free(h, c, 8);			/* dirty, its region due in 1 s */
	assert_int_equal(p_calls, 0);
	fake_now += 1000000000u;
	assert_int_equal(mr_buddy_decay(h, false), 0);	/* under 16 pages: left */
	h->free_max_pages = 7;			/* e is the biggest yet: purged at its free */
	mr_buddy_free(h, e, 8);
	expect_purged(1, 24, 8);
	expect_ok(h, "purged at its free, merged with a dirty buddy");
	fake_now += 1000000000u;
	assert_int_equal(mr_buddy_decay(h, false), 16);
	expect_purged_over(2, 16, 16);
	expect_ok(h, "the merged block purged by the decay");
	(void)keep;
	free(h->spans);
	free(h);
}

/* As glibc's mmap threshold: whether a span is purged at its free is decided when it
 * is handed out. Two spans bigger than every one purged so far, the bigger freed
 * first: the smaller goes back at its free too (it waited for the decay before, as
 * not the biggest yet then: readelf's buffers). One handed out after them, of a
 * size already purged, waits for the decay. */
static void test_purge_threshold_at_alloc(void **state)
{
	struct mr_heap *h = p_heap();
	uint32_t a, b, c;

	(void)state;
	h->purge_new_max_min = 16;
	assert_int_equal(mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL), 0);	/* the region in use */
	a = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	b = mr_buddy_alloc(h, 24, 0, MR_TEMP_NORMAL);
	mr_buddy_free(h, b, 24);
	expect_purged(1, b, 24);
	c = mr_buddy_alloc(h, 20, 0, MR_TEMP_NORMAL);	/* not above the 24 purged */
	mr_buddy_free(h, a, 16);
	expect_purged(2, a, 16);
	assert_int_equal(h->dirty_pages, 0);
	expect_ok(h, "handed out above the threshold, purged at its free");
	mr_buddy_free(h, c, 20);
	assert_int_equal(p_calls, 2);
	assert_true(h->dirty_pages >= 16);
	expect_ok(h, "handed out under it, left to the decay");
	free(h->spans);
	free(h);
}

/* The dirty share: dirty free blocks of 16 pages and more past dirty_pct% of the
 * used pages (and dirty_min_pages) are purged at the free that passes it if free for
 * dirty_age_ms (10 ms here), long before the 1 s delay; younger ones are left to the
 * delay, and no second look comes within dirty_age_ms. dirty_pages counts what the
 * decay could purge: mr_buddy_check recounts it after every step.
 *   region 0 (64 pages): [a 0-15][b 16-31][c 32-47][d 48-63], region 1: [e 64-79] */
static void test_dirty_share(void **state)
{
	struct mr_heap *h = p_heap();
	uint32_t a, b, c, d, e;

	(void)state;
	h->dirty_pct = 25;
	h->dirty_min_pages = 16;
	h->dirty_age_ms = 10;
	a = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	b = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	c = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	d = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	e = mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL);
	assert_int_equal(d, 48);
	assert_int_equal(e, 64);
	/* t = 0: 16 dirty pages of 64 used: not past the minimum. */
	mr_buddy_free(h, a, 16);
	assert_int_equal(h->dirty_pages, 16);
	expect_ok(h, "a freed");
	/* t = 20 ms: b merges with a into a dirty block [0, 32) of the later free's age,
	 * 0 ms; 32 pages past 25% of 48 used, but none free for 10 ms. */
	fake_now += 20000000u;
	mr_buddy_free(h, b, 16);
	assert_int_equal(h->dirty_pages, 32);
	assert_int_equal(p_calls, 0);
	expect_ok(h, "b freed");
	/* t = 25 ms: within 10 ms of that look, none (though [0, 32) is 5 ms old). */
	fake_now += 5000000u;
	mr_buddy_free(h, d, 16);
	assert_int_equal(h->dirty_pages, 48);
	assert_int_equal(p_calls, 0);
	/* t = 30 ms: e leaves region 1 entirely free (64 dirty pages, its delay its
	 * own); the share is passed and [0, 32), free 10 ms, goes; d (5 ms) stays. */
	fake_now += 5000000u;
	mr_buddy_free(h, e, 16);
	expect_purged(1, 0, 32);
	assert_int_equal(h->dirty_pages, 16 + 64);
	assert_int_equal(h->regions[1].pending, 1);
	expect_ok(h, "share passed");
	/* What the share left still goes after the delay: d and region 1. */
	fake_now += 1000000000u;
	assert_int_equal(mr_buddy_decay(h, false), 16 + 64);
	expect_purged(2, 48, 16);
	assert_int_equal(h->dirty_pages, 0);
	expect_ok(h, "delay");
	/* Purged with MADV_DONTNEED: clean again. */
	a = expect_clean_alloc(h, 32, 0);
	/* Off (dirty_pct 0): only the delay purges, however much is dirty. */
	h->dirty_pct = 0;
	fake_now += 1000000u;
	mr_buddy_free(h, a, 32);
	fake_now += 100000000u;
	mr_buddy_free(h, c, 16);		/* region 0 entirely free again */
	assert_int_equal(p_calls, 2);
	assert_int_equal(h->dirty_pages, 64);
	expect_ok(h, "off");
	free(h->spans);
	free(h);
}

/* Regions split between two nodes: 0-3 node 0, 4-7 node 1. Each node's group fills
 * from its own bottom (hot) and top (cold); a full node falls back to the other. */
static void test_nodes(void **state)
{
	struct mr_heap *h = new_heap(UINT64_MAX / 2);
	uint32_t i;

	(void)state;
	mr_buddy_set_nodes(h, 2);
	assert_int_equal(mr_buddy_node_of(h, 3), 0);
	assert_int_equal(mr_buddy_node_of(h, 4), 1);
	assert_int_equal(mr_buddy_alloc_on(h, 1, 0, MR_TEMP_NORMAL, 1), 4 * T_PPR);
	assert_int_equal(mr_buddy_alloc_on(h, 1, 0, MR_TEMP_COLD, 1), 7 * T_PPR);
	assert_int_equal(mr_buddy_alloc_on(h, 1, 0, MR_TEMP_NORMAL, 0), 0);
	assert_int_equal(mr_buddy_alloc_on(h, 1, 0, MR_TEMP_COLD, 0), 3 * T_PPR);
	expect_ok(h, "one page of each class on each node");
	/* The range search sees node 1's free block in region 4, not node 0's. */
	assert_int_equal(mr_buddy_find_range(h, 0, 4, 8, false), 4);
	assert_int_equal(mr_buddy_find_range(h, 0, 0, 4, true), 3);
	assert_int_equal(mr_buddy_find_range(h, T_ORDER, 0, 4, false), MR_NONE);
	/* Fill node 0 (regions 1 and 2 whole, the rest of 0 and 3): then node 1. */
	assert_int_equal(mr_buddy_alloc_on(h, 15, 0, MR_TEMP_NORMAL, 0), T_PPR);
	for (i = 0; i < 2; i++)
		assert_true(mr_buddy_alloc_on(h, 16, 0, MR_TEMP_NORMAL, 0) != MR_NONE);
	while ((i = mr_buddy_alloc_on(h, 1, 0, MR_TEMP_NORMAL, 0)) < 4 * T_PPR)
		;
	assert_true(i >= 4 * T_PPR && i < 8 * T_PPR);
	expect_ok(h, "node 0 full, node 1 takes the overflow");
	/* Huge runs stay on the asked node when they fit. */
	free_heap(h);
	h = new_heap(UINT64_MAX / 2);
	mr_buddy_set_nodes(h, 2);
	assert_int_equal(mr_buddy_alloc_huge_on(h, 2, 1, MR_TEMP_NORMAL, 1), 4 * T_PPR);
	assert_int_equal(mr_buddy_alloc_huge_on(h, 1, 1, MR_TEMP_COLD, 0), 3 * T_PPR);
	assert_int_equal(mr_buddy_alloc_huge_on(h, 3, 1, MR_TEMP_NORMAL, 1), 0);
	expect_ok(h, "huge runs on nodes");
	free_heap(h);
}

/* A group of 64 regions keeps its lowest eighth for hot data:
 *   0 .. 7  hot (opened from 0 up)   8 .. hot_top  normal   cold_bottom .. 63  cold
 * and mr_buddy_lower_free says when a block could come from below a region. */
static void test_hot_reserve(void **state)
{
	struct mr_heap *h = calloc(1, sizeof(*h));
	struct mr_span *spans = calloc((size_t)64 * T_PPR, sizeof(*spans));
	uint32_t p;

	(void)state;
	mr_buddy_init(h, (char *)0x100000000, spans, T_ORDER, 64, UINT64_MAX / 2, &t_ops);
	assert_int_equal(h->norm_lo[0], 8);
	assert_int_equal(mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL), 8 * T_PPR);
	assert_int_equal(mr_buddy_alloc(h, 1, 0, MR_TEMP_HOT), 0);
	assert_int_equal(mr_buddy_alloc(h, 1, 0, MR_TEMP_COLD), 63 * T_PPR);
	assert_int_equal(mr_buddy_alloc(h, 16, 0, MR_TEMP_HOT), 1 * T_PPR);
	assert_int_equal(mr_buddy_alloc(h, 16, 0, MR_TEMP_NORMAL), 9 * T_PPR);
	assert_int_equal(mr_buddy_alloc_huge(h, 2, 1, MR_TEMP_HOT), 2 * T_PPR);
	assert_int_equal(mr_buddy_alloc_huge(h, 2, 1, MR_TEMP_NORMAL), 10 * T_PPR);
	assert_int_equal(h->hot_end[0], 4);
	assert_int_equal(h->hot_top[0], 12);
	expect_ok(h, "hot, normal and cold regions apart");
	/* Normal pages fill region 8 (never the reserve's free pages), then open 12;
	 * a page freed in 8 is room below 12, for one page only. */
	for (p = 0; p < 15; p++)
		assert_int_equal(mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL) / T_PPR, 8);
	assert_int_equal(mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL), 12 * T_PPR);
	assert_false(mr_buddy_lower_free(h, 0, MR_TEMP_NORMAL, 12));
	mr_buddy_free(h, 8 * T_PPR, 1);
	assert_true(mr_buddy_lower_free(h, 0, MR_TEMP_NORMAL, 12));
	assert_false(mr_buddy_lower_free(h, 1, MR_TEMP_NORMAL, 12));	/* no 2-page block */
	assert_false(mr_buddy_lower_free(h, 0, MR_TEMP_NORMAL, 8));
	assert_false(mr_buddy_lower_free(h, 0, MR_TEMP_COLD, 12));
	/* Hot: the reserve has unopened regions, so there is room below any normal one. */
	assert_true(mr_buddy_lower_free(h, 0, MR_TEMP_HOT, 12));
	expect_ok(h, "lower-free hints");
	free(spans);
	free(h);
}

static void test_commit_failure(void **state)
{
	struct mr_heap *h = new_heap(0);

	(void)state;
	fail_commit = 1;
	assert_int_equal(mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL), MR_NONE);
	assert_int_equal(mr_buddy_alloc_huge(h, 1, 1, MR_TEMP_NORMAL), MR_NONE);
	fail_commit = 0;
	assert_int_equal(mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL), 0);
	expect_ok(h, "after a failed commit");
	free_heap(h);
}

/* Growth and chunked commits, on regions of 1024 pages (2 commit chunks of 512):
 * the heap starts with 2 of 8 regions and asks for more (ops->grow) when its zones
 * meet or a huge run does not fit; pages are committed chunk by chunk, and a huge run
 * whose commit fails part-way leaves its regions opened and free, reused next time.
 *   start: [r0 r1] | r2..r7 not reserved
 *   cold 1 page: zones met at 2 -> grow to 4, cold opens r3
 *   huge 3 with 5 chunks of budget: r4.. needs growth to 8; fails at r6's commit
 *   huge 2 fits in what was committed (r4, r5): no new commit */
#define G_ORDER 10
#define G_PPR (1u << G_ORDER)
#define G_MAX 8
static uint32_t g_chunks_committed, g_chunk_budget, g_grows;
static uint8_t g_committed[G_MAX * G_PPR];

static int g_commit_pages(struct mr_heap *h, uint32_t page, uint32_t n)
{
	(void)h;
	if (page % 512 || n % 512)
		fail_msg("commit of [%u, +%u) not in whole chunks", page, n);
	if (g_chunks_committed + n / 512 > g_chunk_budget)
		return -1;
	for (uint32_t i = page; i < page + n; i++) {
		if (g_committed[i])
			fail_msg("page %u committed twice", i);
		g_committed[i] = 1;
	}
	g_chunks_committed += n / 512;
	return 0;
}

static uint32_t g_grow(struct mr_heap *h, uint32_t want)
{
	uint32_t n = h->nregions * 2 > G_MAX ? G_MAX : h->nregions * 2;

	if (want > G_MAX)
		return h->nregions;
	g_grows++;
	return n < want ? want : n;
}

static void g_purge(struct mr_heap *h, uint32_t r, uint32_t n)
{
	memset(&h->spans[r * G_PPR], 0, (size_t)n * G_PPR * sizeof(struct mr_span));
}

static const struct mr_heap_ops g_ops = {
	.commit = t_commit, .purge = g_purge, .now_ns = t_now, .commit_pages = g_commit_pages, .grow = g_grow,
};

static void expect_committed(uint32_t page, uint32_t n, const char *what)
{
	for (uint32_t i = page; i < page + n; i++)
		if (!g_committed[i])
			fail_msg("%s: page %u handed out uncommitted", what, i);
}

static void test_grow_and_chunks(void **state)
{
	struct mr_heap *h = calloc(1, sizeof(*h));
	struct mr_span *spans = calloc((size_t)G_MAX * G_PPR, sizeof(*spans));
	uint32_t p, q, c, r;

	(void)state;
	assert_non_null(h);
	assert_non_null(spans);
	memset(g_committed, 0, sizeof(g_committed));
	g_chunks_committed = g_grows = 0;
	g_chunk_budget = 100;
	fake_now = 1000;
	mr_buddy_init(h, (char *)0x100000000, spans, G_ORDER, 2, UINT64_MAX / 2, &g_ops);
	assert_int_equal(h->chunk_order, 9);

	p = mr_buddy_alloc(h, 1, 0, MR_TEMP_NORMAL);
	assert_int_equal(p, 0);
	assert_int_equal(g_chunks_committed, 1);	/* one chunk, not the region */
	expect_committed(p, 1, "1 page");
	q = mr_buddy_alloc(h, 600, 0, MR_TEMP_NORMAL);
	assert_int_equal(mr_page_region(h, q), 1);
	expect_committed(q, 600, "600 pages");
	assert_int_equal(g_chunks_committed, 3);
	expect_ok(h, "two regions, three chunks");

	c = mr_buddy_alloc(h, 1, 0, MR_TEMP_COLD);	/* zones met: grow */
	assert_int_equal(h->nregions, 4);
	assert_int_equal(g_grows, 1);
	assert_int_equal(mr_page_region(h, c), 3);
	expect_committed(c, 1, "cold page");
	expect_ok(h, "grown to 4 regions");

	/* 4 chunks used; 5 more let r4 and r5 commit (2 each), not r6 (2 at once). */
	assert_int_equal(g_chunks_committed, 4);
	g_chunk_budget = g_chunks_committed + 5;
	assert_int_equal(mr_buddy_alloc_huge(h, 3, 1, MR_TEMP_NORMAL), MR_NONE);
	assert_int_equal(h->nregions, 8);
	assert_int_equal(g_chunks_committed, 8);
	expect_ok(h, "huge run failed part-way");
	for (r = 4; r < 7; r++) {
		assert_int_equal(h->regions[r].state, MR_REGION_ACTIVE);
		assert_int_equal(h->regions[r].used_pages, 0);
	}
	/* The regions it committed are free: a run of 2 takes them, committing nothing. */
	c = g_chunks_committed;
	p = mr_buddy_alloc_huge(h, 2, 1, MR_TEMP_NORMAL);
	assert_int_equal(mr_page_region(h, p), 4);
	assert_int_equal(g_chunks_committed, c);
	expect_committed(p, 2 * G_PPR, "huge run of 2");
	expect_ok(h, "huge run of 2 after a failed one");
	mr_buddy_free_huge(h, p);
	expect_ok(h, "huge run freed");
	/* Beyond the window: this request fails, growth is still allowed later. */
	assert_int_equal(mr_buddy_alloc_huge(h, 9, 1, MR_TEMP_NORMAL), MR_NONE);
	assert_int_equal(h->grow_failed, 0);
	free(h->spans);
	free(h);
}

/* A fresh region's first spans write heads on the descriptors around them only, not
 * on one descriptor page in every power of two (the split of a whole region does:
 * pages 16, 32, ..., 2048 of a 4096-page region's descriptors, 6 of 32 pages). */
static void test_fresh_top(void **state)
{
	static const uint32_t want[] = { 0, 1, 2, 4, 16, 32, 48, 7 };
	static const uint32_t sizes[] = { 1, 1, 2, 3, 16, 16, 9, 1 };
	const uint32_t order = 12, ppr = 1u << order;
	size_t bytes = (size_t)2 * ppr * sizeof(struct mr_span), pg;
	struct mr_heap *h = calloc(1, sizeof(*h));
	unsigned char *d = aligned_alloc(4096, bytes);
	unsigned i, written = 0;

	(void)state;
	assert_non_null(h);
	assert_non_null(d);
	memset(d, 0, bytes);
	mr_buddy_init(h, (char *)0x100000000, (struct mr_span *)(void *)d, order, 2,
		      UINT64_MAX / 2, &t_ops);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t got = mr_buddy_alloc(h, sizes[i], 0, MR_TEMP_NORMAL);

		if (got != want[i])
			fail_msg("span %u (%u pages): page %u, want %u", i, sizes[i], got, want[i]);
		assert_true(h->spans[got].flags & MR_SPAN_ZEROED);
		expect_ok(h, "a span from the fresh region");
		if (i + 2 != sizeof(sizes) / sizeof(sizes[0]))
			continue;
		/* Before the last, a page skipped by an alignment (the buddy heap
		 * would give the newest free page, 57). */
		for (pg = 0; pg < bytes / 4096; pg++) {
			size_t j;

			for (j = 0; j < 4096 && !d[pg * 4096 + j]; j++)
				;
			written += j < 4096;
		}
		print_message("descriptor pages written: %u of %zu\n", written, bytes / 4096);
		assert_int_equal(written, 1);
	}
	/* All of it back: one free block again, given back whole by the decay. */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		mr_buddy_free(h, want[i], sizes[i]);
	expect_ok(h, "all freed");
	assert_int_equal(h->regions[0].free_head[order], 0);
	assert_int_equal(h->regions[0].fresh, ppr);
	assert_int_equal(mr_buddy_decay(h, true), ppr);
	expect_ok(h, "decayed");
	assert_int_equal(h->regions[0].fresh, 0);
	assert_int_equal(h->regions[0].free_head[order], MR_NONE);
	assert_int_equal(mr_buddy_alloc(h, ppr, 0, MR_TEMP_NORMAL), 0);
	assert_true(h->spans[0].flags & MR_SPAN_ZEROED);
	free(d);
	free(h);
}

/* Random allocations, frees, growth in place and huge runs: invariants after every
 * step, no page owned twice, no span said to read zero (MR_SPAN_ZEROED) holding a page
 * written since it was last purged (the model: every page handed out is written; a
 * purge with MADV_DONTNEED clears it), and everything coalesced at the end. */
static uint8_t r_written[T_REGIONS * T_PPR];

static void r_purge(struct mr_heap *h, uint32_t r, uint32_t n)
{
	t_purge(h, r, n);
	memset(&r_written[r * T_PPR], 0, (size_t)n * T_PPR);
}

static void r_purge_pages(struct mr_heap *h, uint32_t page, uint32_t npages, bool lazy)
{
	(void)h;
	if (!lazy)
		memset(&r_written[page], 0, npages);
}

static const struct mr_heap_ops r_ops = {
	.commit = t_commit, .purge = r_purge, .now_ns = t_now, .purge_pages = r_purge_pages,
};

/* Pages [p, p + n) handed out at @step: none owned, none written if the span says
 * it reads zero; then owned and written. */
static void r_take(const struct mr_heap *h, uint32_t *owner, uint32_t p, uint32_t n,
		   unsigned step)
{
	bool zeroed = h->spans[p].flags & MR_SPAN_ZEROED;
	uint32_t i;

	for (i = p; i < p + n; i++) {
		if (owner[i])
			fail_msg("step %u: page %u handed out twice", step, i);
		if (zeroed && r_written[i])
			fail_msg("step %u: span %u said to read zero, page %u written", step, p, i);
		owner[i] = step;
		r_written[i] = 1;
	}
}

/* First fit (big spans): a 15-page span and a 1-page one after it in region 0, the
 * big one freed (its pages now blocks of orders 3, 2, 1, 0). Spans of 4 pages go at
 * the top of the free run, one below the other, and a page taken between them (the
 * smallest block: the fragment the first one's carve left below it) only moves the
 * next one down: all of them fit where the big span was. First fit opens no region:
 * when no open one has the run, the caller takes the buddy's way. */
static void test_first_fit(void **state)
{
	struct mr_heap *h = new_heap(UINT64_MAX / 2);
	static const struct step steps[] = {
		{ ALLOC, 15, 0, MR_TEMP_NORMAL, 0, 0, "a big span" },
		{ ALLOC, 1, 0, MR_TEMP_NORMAL, 0, 15, "a small one after it" },
		{ FREE, 0, 15, MR_TEMP_NORMAL, 0, 0, "the big one freed" },
		{ END, 0, 0, MR_TEMP_NORMAL, 0, 0, NULL },
	};
	static const struct { uint32_t n; bool ff; uint32_t expect; const char *what; } seq[] = {
		{ 4, true, 11, "first fit: the run's top" },
		{ 1, false, 10, "a page: the fragment below it" },
		{ 4, true, 6, "first fit: below the page" },
		{ 4, true, 2, "first fit: below that" },
		{ 2, true, 0, "first fit: the rest" },
		{ 2, true, MR_NONE, "first fit: region 0 full, and it opens none" },
	};
	unsigned i;

	(void)state;
	run_steps(h, steps);
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		uint32_t got = seq[i].ff ? mr_buddy_alloc_first_fit(h, seq[i].n, 0)
			       : mr_buddy_alloc(h, seq[i].n, 0, MR_TEMP_NORMAL);

		if (got != seq[i].expect)
			fail_msg("%s: got page %u, want %u", seq[i].what, got, seq[i].expect);
		expect_ok(h, seq[i].what);
	}
	free_heap(h);

	/* Spans of 5 pages: three fit where the big one was, first fit. The buddy's
	 * way puts the first at 0 (order 3: the block [0, 8)) and the second in
	 * region 1, as a big buffer's pages are stranded (sort -S). */
	h = new_heap(UINT64_MAX / 2);
	run_steps(h, steps);
	assert_int_equal(mr_buddy_alloc_first_fit(h, 5, 0), 10);
	assert_int_equal(mr_buddy_alloc_first_fit(h, 5, 0), 5);
	assert_int_equal(mr_buddy_alloc_first_fit(h, 5, 0), 0);
	expect_ok(h, "three 5-page spans first fit");
	free_heap(h);
	h = new_heap(UINT64_MAX / 2);
	run_steps(h, steps);
	assert_int_equal(mr_buddy_alloc(h, 5, 0, MR_TEMP_NORMAL), 0);
	assert_int_equal(mr_buddy_alloc(h, 5, 0, MR_TEMP_NORMAL), 16);
	free_heap(h);
}

static void test_random(void **state)
{
	struct mr_heap *h = new_heap(UINT64_MAX / 2);
	static uint32_t owner[T_REGIONS * T_PPR];
	struct { uint32_t page, n; bool huge; } live[256];
	unsigned nlive = 0, i, step, grown = 0, huge = 0, first_fits = 0;
	uint64_t s = 12345;

	(void)state;
	h->ops = &r_ops;
	/* The dirty share on, with no minimum age: entirely free regions go at once
	 * when more than a tenth of the pages are dirty (the delay never comes). */
	h->dirty_pct = 10;
	h->dirty_min_pages = T_PPR;
	memset(owner, 0, sizeof(owner));
	memset(r_written, 0, sizeof(r_written));
	for (step = 1; step < 20000; step++) {
		/* Every fourth thousand steps mostly frees: regions empty, are given
		 * back (the dirty share) and come back untouched, and huge runs fit. */
		bool draining = step / 1000 % 4 == 3;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		if (nlive && s % 13 == 0) {
			/* Grow a span in place by 1-4 pages, if its neighbours are free. */
			unsigned k = (unsigned)(s >> 12) % nlive;
			uint32_t more = (uint32_t)(s >> 40) % 4 + 1, end = live[k].page + live[k].n;

			if (live[k].huge || !mr_buddy_grow(h, live[k].page, live[k].n, live[k].n + more))
				continue;
			for (i = end; i < end + more; i++) {
				if (owner[i])
					fail_msg("step %u: page %u grown over, owned", step, i);
				owner[i] = step;
				r_written[i] = 1;
			}
			live[k].n += more;
			grown++;
		} else if (nlive < 256 && s % 89 == 1) {
			uint32_t p = mr_buddy_alloc_huge(h, 1, 1, (enum mr_temp)((s >> 30) % NR_MR_TEMP));

			if (p == MR_NONE)
				continue;
			r_take(h, owner, p, T_PPR, step);
			live[nlive].page = p;
			live[nlive].n = T_PPR;
			live[nlive++].huge = true;
			huge++;
		} else if (nlive < 256 && ((draining ? s % 5 == 0 : s % 3 != 0) || nlive == 0)) {
			uint32_t n = (uint32_t)(s >> 8) % (s % 7 == 0 ? T_PPR : 4) + 1;
			uint32_t al = (uint32_t)(s >> 20) % 3 == 0 ? (uint32_t)(s >> 24) % 3 : 0;
			enum mr_temp t = (enum mr_temp)((s >> 30) % NR_MR_TEMP);
			/* A fifth of the unaligned normal ones first fit (big spans' way). */
			bool ff = al == 0 && t == MR_TEMP_NORMAL && (s >> 34) % 5 == 0;
			uint32_t p = ff ? mr_buddy_alloc_first_fit(h, n, 0) : MR_NONE;

			if (ff && p != MR_NONE)
				first_fits++;
			if (p == MR_NONE)
				p = mr_buddy_alloc(h, n, al, t);
			if (p == MR_NONE)
				continue;
			if (p & ((1u << al) - 1))
				fail_msg("step %u: page %u not aligned to order %u", step, p, al);
			r_take(h, owner, p, n, step);
			live[nlive].page = p;
			live[nlive].n = n;
			live[nlive++].huge = false;
		} else {
			unsigned k = (unsigned)(s >> 12) % nlive;

			for (i = live[k].page; i < live[k].page + live[k].n; i++)
				owner[i] = 0;
			if (live[k].huge)
				mr_buddy_free_huge(h, live[k].page);
			else
				mr_buddy_free(h, live[k].page, live[k].n);
			live[k] = live[--nlive];
		}
		{
			const char *err = mr_buddy_check(h);

			if (err)
				fail_msg("step %u: %s", step, err);
		}
	}
	print_message("grown %u, huge %u, first fits %u, regions purged %u\n", grown, huge,
		      first_fits, purges);
	assert_true(grown > 100);	/* the sequence does what it says */
	assert_true(first_fits > 100);
	assert_true(huge > 10);
	assert_true(purges > 10);
	while (nlive) {
		nlive--;
		if (live[nlive].huge)
			mr_buddy_free_huge(h, live[nlive].page);
		else
			mr_buddy_free(h, live[nlive].page, live[nlive].n);
	}
	expect_ok(h, "all freed");
	for (i = 0; i < T_REGIONS; i++)	/* one block, or untouched (purged) */
		if (h->regions[i].state == MR_REGION_ACTIVE && h->regions[i].fresh)
			assert_int_equal(h->regions[i].free_head[T_ORDER], i * T_PPR);
	free_heap(h);
}

/* The range search over a whole window (4096 regions, 64 bitmap words) against a
 * plain scan: random free blocks of random orders in random regions, then random
 * queries [lo, hi) for order k, lowest and highest: the region of the answer is the
 * lowest (highest) in the range holding a block of order k or more. */
static void test_find_range_words(void **state)
{
	struct mr_heap *h = calloc(1, sizeof(*h));
	uint64_t s = 777;
	unsigned round, q;

	(void)state;
	assert_non_null(h);
	h->region_order = T_ORDER;
	h->nregions = MR_MAX_REGIONS;
	for (round = 0; round < 20; round++) {
		unsigned nset = round < 5 ? round : round * 40;

		memset(h->bitmap, 0, sizeof(h->bitmap));
		memset(h->summary, 0, sizeof(h->summary));
		while (nset--) {
			uint32_t r, k;

			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			r = (uint32_t)(s % MR_MAX_REGIONS);
			k = (uint32_t)(s >> 32) % (T_ORDER + 1);
			h->bitmap[r / 64][k] |= UINT64_C(1) << (r % 64);
			h->summary[k] |= UINT64_C(1) << (r / 64);
		}
		for (q = 0; q < 2000; q++) {
			uint32_t lo, hi, k, r, want = MR_NONE, got, kk;
			bool highest;

			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			lo = (uint32_t)(s % MR_MAX_REGIONS);
			hi = lo + 1 + (uint32_t)(s >> 16) % (q % 2 ? 200 : MR_MAX_REGIONS);
			if (hi > MR_MAX_REGIONS)
				hi = MR_MAX_REGIONS;
			if (q % 7 == 0)
				lo = 0;
			k = (uint32_t)(s >> 40) % (T_ORDER + 1);
			highest = (s >> 50) & 1;
			for (r = lo; r < hi; r++)
				for (kk = k; kk <= T_ORDER; kk++)
					if (h->bitmap[r / 64][kk] & (UINT64_C(1) << (r % 64)))
						if (want == MR_NONE || highest)
							want = r;
			got = mr_buddy_find_range(h, k, lo, hi, highest);
			if (got != want)
				fail_msg("round %u: find_range(order %u, [%u, %u), %s) = %u, want %u", round,
					 k, lo, hi, highest ? "highest" : "lowest", got, want);
		}
	}
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lowest_first_and_coalescing),
		cmocka_unit_test(test_cold_from_top),
		cmocka_unit_test(test_align_and_grow),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_decay),
		cmocka_unit_test(test_dirty_share),
		cmocka_unit_test(test_purge_runs),
		cmocka_unit_test(test_purge_failed),
		cmocka_unit_test(test_purges_due_without_frees),
		cmocka_unit_test(test_clock_read_when_due),
		cmocka_unit_test(test_purge_new_max),
		cmocka_unit_test(test_purge_at_free_merges_dirty),
		cmocka_unit_test(test_purge_threshold_at_alloc),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_hot_reserve),
		cmocka_unit_test(test_commit_failure),
		cmocka_unit_test(test_grow_and_chunks),
		cmocka_unit_test(test_fresh_top),
		cmocka_unit_test(test_first_fit),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_find_range_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
