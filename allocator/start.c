/* The start-up heap: a first-fit heap of 64-byte granules in the library's BSS, with
 * two bitmaps (granules in use, and where live objects start) for placement, frees,
 * sizes and the checks that glibc makes. A granule is a cache line: objects handed
 * one after another to different threads never share one (alloc-bench's
 * falseshare: 16-byte granules put four workers' objects on each line, 7.6 s
 * against 0.14), as a slab's handout order keeps them apart in the arena (tcache.c,
 * slab_extend). A page of the heap is a word of the bitmap of granules in use.
 *
 * First fit, lowest first, like glibc's heap, which a short process's buffers reuse:
 * the kernel build's fixdep reads 150 files of 4-70 KiB each into a buffer it frees
 * before the next, between small objects it keeps; taken back from the top only,
 * the small ones pinned each buffer's space and its top rose to 1.5 MiB; first fit
 * keeps it under 96 KiB, in 24 pages (docs/allocator.md, "The start-up heap").
 *
 * After its first MR_START_ALLOCS allocations, or once a small object does not fit
 * in its small objects' part (a long-running program then has its thread caches,
 * without this heap's lock), it takes only buffers, objects of MR_START_BUF_MIN
 * bytes and more, and only while the process has one thread: a compiler's cc1 reads
 * headers of every size into buffers it frees in turn, and its hash tables and
 * obstack chunks come and go; each size class's slab in the arena wrote pages of its
 * own for them, where a buffer freed here is the next one's place, whatever its size
 * (cc1: 246 pages a compile more than glibc before, by docs/allocator.md). A buffer
 * that does not fit goes to the arena, and the heap stays open for the next; a
 * request as large fails at once until a free.
 *
 * It closes, for good, at the first allocation it sees after that once the process
 * has a second thread; its pages that then hold no live object are purged at once,
 * and the others as their last object is freed, so that it keeps no more than its
 * live objects' pages (the small objects' part does so from the end of their time).
 * While open, its pages free for the decay delay are purged (decay), and
 * malloc_trim purges every free page. */
#include "config.h"

#include <pthread.h>

#include "allocator/os.h"
#include "allocator/start.h"
#include "allocator/tcache.h"

#define GRANULE_SHIFT 6
#define GRANULES (MR_START_MAX >> GRANULE_SHIFT)
#define WORDS (GRANULES / 64)
#define PAGE_GRANULES (MR_PAGE_SIZE >> GRANULE_SHIFT)
_Static_assert(PAGE_GRANULES == 64, "a page of the heap is a word of the bitmaps");

/* Page-aligned: its pages are the heap's alone, in the BSS's anonymous mapping
 * (past the file's last page), so that a purged page reads zero. */
char mr_start_heap[MR_START_MAX] __attribute__((aligned(MR_PAGE_SIZE)));
bool mr_start_closed;

/* Its state, zero at start (BSS), in one page-aligned block whose first page holds
 * all that a small process touches: the lock, the counts, the page bitmaps and the
 * granule bitmaps' first words, interleaved (word w of granules in use, then word w
 * of live objects' starts: one page of the heap). */
#define USED 0
#define STARTS 1
static struct {
	pthread_mutex_t lock;		/* all zero: PTHREAD_MUTEX_INITIALIZER */
	uint32_t limit;			/* granules it may use */
	uint32_t low;			/* no free granule below it */
	uint32_t nallocs;		/* allocations, up to MR_START_ALLOCS: then buffers only */
	uint32_t fail_n;		/* buffers as large go to the arena (none fitted); 0: none */
	uint32_t ops;			/* allocations and frees, for the clock's reads */
	uint64_t live_bytes;
	uint64_t next_look_ns;
	uint64_t dirty[(WORDS + 63) / 64];	/* bit i: page i written, not purged since */
	uint64_t idle[(WORDS + 63) / 64];	/* bit i: page i free and written at the last look */
	uint64_t maps[WORDS][2];	/* [w][USED], [w][STARTS] */
} state __attribute__((aligned(MR_PAGE_SIZE)));

/* Granule bitmaps (@m: USED or STARTS). */
static bool bit(int m, uint32_t g)
{
	return state.maps[g / 64][m] >> (g % 64) & 1;
}

/* The first granule in [@g, @end) whose bit in map @m is @set, or @end. */
static uint32_t next_bit(int m, uint32_t g, uint32_t end, bool set)
{
	while (g < end) {
		uint64_t w = set ? state.maps[g / 64][m] : ~state.maps[g / 64][m];
		uint64_t x = w & (~UINT64_C(0) << (g % 64));

		if (x) {
			uint32_t r = g / 64 * 64 + (uint32_t)__builtin_ctzll(x);

			return r < end ? r : end;
		}
		g = (g / 64 + 1) * 64;
	}
	return end;
}

/* Set (or clear) the bits [@g, @end) of map @m. */
static void set_range(int m, uint32_t g, uint32_t end, bool set)
{
	while (g < end) {
		uint32_t n = end - g < 64 - g % 64 ? end - g : 64 - g % 64;
		uint64_t x = (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1) << (g % 64);

		if (set)
			state.maps[g / 64][m] |= x;
		else
			state.maps[g / 64][m] &= ~x;
		g += n;
	}
}

/* Page bitmaps (dirty, idle): bit @i. */
static bool page_bit(const uint64_t *map, uint32_t i)
{
	return map[i / 64] >> (i % 64) & 1;
}

static void page_set(uint64_t *map, uint32_t i, bool set)
{
	if (set)
		map[i / 64] |= UINT64_C(1) << (i % 64);
	else
		map[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

static void page_set_range(uint64_t *map, uint32_t i, uint32_t end, bool set)
{
	for (; i < end; i++)
		page_set(map, i, set);
}

/* Whether page @i (a word of the granule bitmaps) holds no live granule. */
static bool page_free(uint32_t i)
{
	return !state.maps[i][USED];
}

/* Where the live object starting at @g ends: the next object's start or the next
 * free granule. */
static uint32_t end_of(uint32_t g)
{
	uint32_t e = next_bit(USED, g + 1, state.limit, false);

	return next_bit(STARTS, g + 1, e, true);
}

/* The lowest run of @n free granules in [@from, @to), or GRANULES; GRANULES too
 * after stepping over *@looks - 1 shorter runs (when *@looks is not 0: counted down). */
static uint32_t first_fit_in(uint32_t n, uint32_t from, uint32_t to, uint32_t *looks)
{
	uint32_t g = from > state.low ? from : state.low, e;

	while (g + n <= to) {
		if (*looks == 1)
			break;
		if (*looks)
			--*looks;
		g = next_bit(USED, g, to, false);
		if (g + n > to)
			break;
		e = next_bit(USED, g, g + n, true);
		if (e == g + n)
			return g;
		g = e;
	}
	return GRANULES;
}

/* The granules of the small objects' part: [0, small_part()). */
static uint32_t small_part(void)
{
	return state.limit < (MR_START_SMALL >> GRANULE_SHIFT) ? state.limit
	       : (MR_START_SMALL >> GRANULE_SHIFT);
}

/* Where @n granules go. Small objects: in the heap's first MR_START_SMALL bytes.
 * Buffers under MR_START_BESIDE among the first MR_START_ALLOCS allocations: there
 * too where they fit (a short process's stdio buffers on the pages of its small
 * objects: a shell that forks copies fewer), else above. Other buffers: above only,
 * so that buffers freed and made in turn reuse their own pages and leave the small
 * objects theirs (an assembler's first hash tables and chunks filled the small
 * objects' part, which then went to the arena's slabs: 29 pages more for `as`; and
 * once the small objects' part gives its pages back as they empty, a buffer there
 * had its pages purged at each free and faulted in at the next). A buffer's search
 * steps over MR_START_LOOKS runs too short at most (a heap full of holes, searched
 * whole at each request, slowed alloc-bench lifetimes by 18%). */
static uint32_t first_fit(uint32_t n, bool buffer)
{
	uint32_t split = small_part(), looks = buffer ? MR_START_LOOKS + 1 : 0, g;

	if (!buffer)
		return first_fit_in(n, 0, split, &looks);
	if (state.nallocs < MR_START_ALLOCS && n < (MR_START_BESIDE >> GRANULE_SHIFT)) {
		g = first_fit_in(n, 0, split, &looks);
		if (g != GRANULES)
			return g;
	}
	return first_fit_in(n, split, state.limit, &looks);
}

/* Where the free run ending at @g starts: past the last granule in use below it. */
static uint32_t free_run_start(uint32_t g)
{
	while (g > 0) {
		uint32_t w = (g - 1) / 64, b = (g - 1) % 64;
		uint64_t m = state.maps[w][USED] & (b == 63 ? ~UINT64_C(0) : (UINT64_C(2) << b) - 1);

		if (m)
			return w * 64 + 64 - (uint32_t)__builtin_clzll(m);
		g = w * 64;
	}
	return 0;
}

/* @p's granule if it is a live object's start, else GRANULES. */
static uint32_t live_granule(const void *p)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)mr_start_heap;
	uint32_t g = (uint32_t)(off >> GRANULE_SHIFT);

	if ((off & ((1u << GRANULE_SHIFT) - 1)) || g >= state.limit || !bit(STARTS, g))
		return GRANULES;
	return g;
}

/* Purge the pages of [@p0, @p1) written since their last purge that hold no live
 * object. Under the lock. */
static void purge_free_pages(uint32_t p0, uint32_t p1)
{
	uint32_t run = p0, i;

	for (i = p0; i <= p1; i++) {
		bool free_page = i < p1 && page_free(i) && page_bit(state.dirty, i);

		if (free_page)
			continue;
		if (i > run) {
			mr_os_purge(mr_start_heap + (size_t)run * MR_PAGE_SIZE,
				    (size_t)(i - run) * MR_PAGE_SIZE);
			page_set_range(state.dirty, run, i, false);
		}
		run = i + 1;
	}
}

/* While open, as the arena's page heap does with what stays free for the decay
 * delay: every MEMREG_DECAY_MS (the clock read once in 64 allocations and frees),
 * the written pages that hold no live object and held none at the last look either
 * are purged (all of them with a delay of 0). Under the lock. */
static void decay(void)
{
	uint64_t now, delay_ns = MR_OPT(decay_ms) * 1000000u;
	uint32_t i, run = 0;

	if (++state.ops % 64)
		return;
	now = mr_os_now_ns();
	if (now < state.next_look_ns)
		return;
	state.next_look_ns = now + delay_ns;
	for (i = 0; i <= WORDS; i++) {
		bool free_page = i < WORDS && page_free(i) && page_bit(state.dirty, i);

		if (free_page && (page_bit(state.idle, i) || !delay_ns))
			continue;
		if (i > run)
			purge_free_pages(run, i);
		run = i + 1;
	}
	for (i = 0; i < WORDS; i++)
		page_set(state.idle, i, page_free(i) && page_bit(state.dirty, i));
}

/* Granules [@g, @e) become an object's (or part of one). Under the lock. */
static void take_granules(uint32_t g, uint32_t e)
{
	set_range(USED, g, e, true);
	page_set_range(state.dirty, g / PAGE_GRANULES, (e + PAGE_GRANULES - 1) / PAGE_GRANULES, true);
	if (g == state.low)
		state.low = next_bit(USED, e, state.limit, false);
	state.live_bytes += (uint64_t)(e - g) << GRANULE_SHIFT;
}

/* Granules [@g, @e) of a live object become free: for the next allocation while the
 * heap is open, else their pages are purged once free. Under the lock. */
static void free_granules(uint32_t g, uint32_t e)
{
	uint32_t s, t;

	set_range(USED, g, e, false);
	/* The free run it joins is the only one that grew: if it is as long as a
	 * buffer that did not fit, the next that may fit is one longer than it. */
	if (state.fail_n) {
		s = free_run_start(g);
		t = next_bit(USED, e, state.limit, true);
		if (t - s >= state.fail_n)
			state.fail_n = t - s + 1;
	}
	if (g < state.low)
		state.low = g;
	state.live_bytes -= (uint64_t)(e - g) << GRANULE_SHIFT;
	/* Closed, or the small objects' part once they go to the thread's cache: no
	 * small object comes back, so its pages go as they empty. */
	if (!mr_start_open() || (state.nallocs == MR_START_ALLOCS && g < small_part()))
		purge_free_pages(g / PAGE_GRANULES, (e + PAGE_GRANULES - 1) / PAGE_GRANULES);
}

size_t mr_start_small_limit = MR_SMALL_MAX + 1;
static bool used_ever;			/* set up with a size (not off): its state is in use */

/* Small objects go to the thread's cache from now on: the free pages of their part
 * are purged, and the others as they empty (free_granules). */
static void small_objects_done(void)
{
	state.nallocs = MR_START_ALLOCS;
	purge_free_pages(0, small_part() / PAGE_GRANULES);
}

static void close_heap(void)
{
	__atomic_store_n(&mr_start_small_limit, (size_t)MR_SMALL_MAX + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&mr_start_closed, true, __ATOMIC_RELAXED);
	purge_free_pages(0, WORDS);
}

/* Before any allocation from it (start-up's once: no lock, which might run the lock
 * hook, whose pthread_atfork allocates). */
void mr_start_set(size_t bytes)
{
	uint32_t limit = (uint32_t)((bytes < MR_START_MAX ? bytes : MR_START_MAX) >> GRANULE_SHIFT);

	/* Off: its state's page is never touched (not even read: a read maps a page). */
	if (!limit) {
		__atomic_store_n(&mr_start_closed, true, __ATOMIC_RELAXED);
		return;
	}
	state.limit = limit;
	used_ever = true;
	mr_start_small_limit = MR_START_BUF_MIN;
}

/* How many bytes of granules [@g, @e) from @g lie on pages written since their
 * last purge (up to the end of the last such page): the rest reads zero. */
static size_t written_bytes(uint32_t g, uint32_t e)
{
	uint32_t p0 = g / PAGE_GRANULES, p = (e + PAGE_GRANULES - 1) / PAGE_GRANULES;

	while (p > p0 && !page_bit(state.dirty, p - 1))
		p--;
	if (p == p0)
		return 0;
	return p * PAGE_GRANULES >= e ? (size_t)(e - g) << GRANULE_SHIFT
				       : (size_t)(p * PAGE_GRANULES - g) << GRANULE_SHIFT;
}

void *mr_start_alloc(size_t size, size_t *written)
{
	uint32_t n = size ? (uint32_t)((size + (1u << GRANULE_SHIFT) - 1) >> GRANULE_SHIFT) : 1;
	uint32_t g;
	void *p = NULL;

	/* Off (the options just read said so): its state is not touched. */
	if (size > MR_START_OBJ_MAX || !mr_start_open())
		return NULL;
	mr_os_lock(&state.lock);
	if (!mr_start_open()) {
		/* closed while this thread waited */
	} else if (state.nallocs == MR_START_ALLOCS && !mr_os_single_threaded()) {
		close_heap();
	} else if (state.nallocs == MR_START_ALLOCS && size < MR_START_BUF_MIN) {
		/* a small object: the thread's cache's */
	} else if ((state.fail_n && n >= state.fail_n) ||
		   (g = first_fit(n, size >= MR_START_BUF_MIN)) == GRANULES) {
		/* A small object: the small ones' part is full, and the thread's cache
		 * takes them from now on. A buffer: the arena's, and none as large is
		 * looked for here again until a free leaves a run as long. */
		if (size < MR_START_BUF_MIN)
			small_objects_done();
		else if (!state.fail_n || n < state.fail_n)
			state.fail_n = n;
	} else {
		if (state.nallocs < MR_START_ALLOCS && ++state.nallocs == MR_START_ALLOCS)
			small_objects_done();
		if (written)
			*written = written_bytes(g, g + n);
		take_granules(g, g + n);
		state.maps[g / 64][STARTS] |= UINT64_C(1) << (g % 64);
		p = mr_start_heap + ((size_t)g << GRANULE_SHIFT);
	}
	if (mr_start_open())
		decay();
	mr_os_unlock(&state.lock);
	return p;
}

void mr_start_free(void *p)
{
	uint32_t g;

	mr_os_lock(&state.lock);
	g = live_granule(p);
	if (g == GRANULES) {
		mr_os_unlock(&state.lock);
		mr_heap_corrupt("free(): double free or invalid pointer");
	}
	free_granules(g, end_of(g));
	state.maps[g / 64][STARTS] &= ~(UINT64_C(1) << (g % 64));
	if (mr_start_open())
		decay();
	mr_os_unlock(&state.lock);
}

size_t mr_start_usable(const void *p)
{
	size_t n = 0;
	uint32_t g;

	mr_os_lock(&state.lock);
	g = live_granule(p);
	if (g != GRANULES)
		n = (size_t)(end_of(g) - g) << GRANULE_SHIFT;
	mr_os_unlock(&state.lock);
	return n;
}

bool mr_start_resize(void *p, size_t size)
{
	uint32_t g, end, want;
	bool ok = false;

	mr_os_lock(&state.lock);
	g = live_granule(p);
	if (g == GRANULES) {
		mr_os_unlock(&state.lock);
		mr_heap_corrupt("realloc(): invalid pointer");
	}
	end = end_of(g);
	want = (uint32_t)((size + (1u << GRANULE_SHIFT) - 1) >> GRANULE_SHIFT);
	if (want == 0)
		want = 1;
	if (size <= MR_START_OBJ_MAX && want <= end - g) {
		/* Its granules past @size are free for the next (as glibc splits a chunk). */
		if (want < end - g)
			free_granules(g + want, end);
		ok = true;
	} else if (size <= MR_START_OBJ_MAX && mr_start_open() && g + want <= state.limit &&
		   next_bit(USED, end, g + want, true) == g + want) {
		/* The granules after it are free: it grows over them. */
		take_granules(end, g + want);
		ok = true;
	}
	mr_os_unlock(&state.lock);
	return ok;
}

static uint64_t dirty_pages(void)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < (WORDS + 63) / 64; i++)
		n += (uint64_t)__builtin_popcountll(state.dirty[i]);
	return n;
}

bool mr_start_trim(void)
{
	uint64_t before;
	bool released;

	if (!used_ever)
		return false;
	mr_os_lock(&state.lock);
	before = dirty_pages();
	purge_free_pages(0, WORDS);
	released = dirty_pages() != before;
	mr_os_unlock(&state.lock);
	return released;
}

void mr_start_totals(uint64_t *live_out, uint64_t *top_out)
{
	if (!used_ever) {
		*live_out = *top_out = 0;
		return;
	}
	mr_os_lock(&state.lock);
	*live_out = state.live_bytes;
	*top_out = dirty_pages() * MR_PAGE_SIZE;	/* its pages written and not purged */
	mr_os_unlock(&state.lock);
}

void mr_start_fork_lock(void)
{
	mr_os_fork_lock(&state.lock);
}

void mr_start_fork_unlock(void)
{
	mr_os_fork_unlock(&state.lock);
}
