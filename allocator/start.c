/* The start-up heap: a bump heap of 64-byte granules in the library's BSS, with two
 * bitmaps (where objects start, which are live) for frees, sizes and the checks that
 * glibc makes. A granule is a cache line: objects handed one after another to
 * different threads never share one (alloc-bench's falseshare: 16-byte granules put
 * four workers' objects on each line, 7.6 s against 0.14), as a slab's handout order
 * keeps them apart in the arena (tcache.c, slab_extend). Space is taken back from
 * the top only: a short process frees little, and a long one has moved on to the
 * arena after its first few pages. */
#include "config.h"

#include <pthread.h>

#include "allocator/os.h"
#include "allocator/start.h"
#include "allocator/tcache.h"

#define GRANULE_SHIFT 6
#define GRANULES (MR_START_MAX >> GRANULE_SHIFT)
#define WORDS (GRANULES / 64)

/* Page-aligned: its pages are the heap's alone, written in order. */
char mr_start_heap[MR_START_MAX] __attribute__((aligned(MR_PAGE_SIZE)));
bool mr_start_closed;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t starts[WORDS], live[WORDS];
static uint32_t top, limit;		/* granules */
static uint64_t live_bytes;

static bool bit(const uint64_t *map, uint32_t g)
{
	return map[g / 64] >> (g % 64) & 1;
}

static void set_bit(uint64_t *map, uint32_t g)
{
	map[g / 64] |= UINT64_C(1) << (g % 64);
}

static void clear_bit(uint64_t *map, uint32_t g)
{
	map[g / 64] &= ~(UINT64_C(1) << (g % 64));
}

/* The first object start after granule @g, or the top: where @g's object ends. */
static uint32_t end_of(uint32_t g)
{
	uint32_t w = (g + 1) / 64;
	uint64_t m;

	if (w >= WORDS)
		return top;
	m = starts[w] & (~UINT64_C(0) << ((g + 1) % 64));
	for (;;) {
		if (m) {
			uint32_t e = w * 64 + (uint32_t)__builtin_ctzll(m);

			return e < top ? e : top;
		}
		if (++w >= WORDS || w * 64 >= top)
			return top;
		m = starts[w];
	}
}

/* The last object start below the top (top > 0: there is one). */
static uint32_t last_start(void)
{
	uint32_t w = (top - 1) / 64;
	uint64_t m = starts[w] & (~UINT64_C(0) >> (63 - (top - 1) % 64));

	while (!m)
		m = starts[--w];
	return w * 64 + 63 - (uint32_t)__builtin_clzll(m);
}

/* @p's granule if it is a live object's start, else GRANULES. */
static uint32_t live_granule(const void *p)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)mr_start_heap;
	uint32_t g = (uint32_t)(off >> GRANULE_SHIFT);

	if ((off & ((1u << GRANULE_SHIFT) - 1)) || g >= top || !bit(live, g))
		return GRANULES;
	return g;
}

/* Before any allocation from it (start-up's once: no lock, which might run the lock
 * hook, whose pthread_atfork allocates). */
void mr_start_set(size_t bytes)
{
	limit = (uint32_t)((bytes < MR_START_MAX ? bytes : MR_START_MAX) >> GRANULE_SHIFT);
	if (!limit)
		__atomic_store_n(&mr_start_closed, true, __ATOMIC_RELAXED);
}

void *mr_start_alloc(size_t size)
{
	uint32_t n = size ? (uint32_t)((size + (1u << GRANULE_SHIFT) - 1) >> GRANULE_SHIFT) : 1;
	void *p = NULL;

	if (size > MR_START_OBJ_MAX)
		return NULL;
	mr_os_lock(&lock);
	if (__atomic_load_n(&mr_start_closed, __ATOMIC_RELAXED)) {
		/* closed while this thread waited */
	} else if (top + n > limit) {
		__atomic_store_n(&mr_start_closed, true, __ATOMIC_RELAXED);
	} else {
		set_bit(starts, top);
		set_bit(live, top);
		p = mr_start_heap + ((size_t)top << GRANULE_SHIFT);
		top += n;
		live_bytes += (uint64_t)n << GRANULE_SHIFT;
	}
	mr_os_unlock(&lock);
	return p;
}

void mr_start_free(void *p)
{
	uint32_t g;

	mr_os_lock(&lock);
	g = live_granule(p);
	if (g == GRANULES) {
		mr_os_unlock(&lock);
		mr_heap_corrupt("free(): double free or invalid pointer");
	}
	live_bytes -= (uint64_t)(end_of(g) - g) << GRANULE_SHIFT;
	clear_bit(live, g);
	/* Back from the top over every freed object: the next ones go there. */
	while (top) {
		uint32_t last = last_start();

		if (bit(live, last))
			break;
		clear_bit(starts, last);
		top = last;
	}
	mr_os_unlock(&lock);
}

size_t mr_start_usable(const void *p)
{
	size_t n = 0;
	uint32_t g;

	mr_os_lock(&lock);
	g = live_granule(p);
	if (g != GRANULES)
		n = (size_t)(end_of(g) - g) << GRANULE_SHIFT;
	mr_os_unlock(&lock);
	return n;
}

bool mr_start_resize(void *p, size_t size)
{
	uint32_t g, end, want;
	bool ok = false;

	mr_os_lock(&lock);
	g = live_granule(p);
	if (g == GRANULES) {
		mr_os_unlock(&lock);
		mr_heap_corrupt("realloc(): invalid pointer");
	}
	end = end_of(g);
	want = (uint32_t)((size + (1u << GRANULE_SHIFT) - 1) >> GRANULE_SHIFT);
	if (size <= MR_START_OBJ_MAX && want <= end - g) {
		ok = true;
	} else if (size <= MR_START_OBJ_MAX && end == top &&
		   !__atomic_load_n(&mr_start_closed, __ATOMIC_RELAXED) && g + want <= limit) {
		live_bytes += (uint64_t)(g + want - end) << GRANULE_SHIFT;
		top = g + want;
		ok = true;
	}
	mr_os_unlock(&lock);
	return ok;
}

void mr_start_totals(uint64_t *live_out, uint64_t *top_out)
{
	mr_os_lock(&lock);
	*live_out = live_bytes;
	*top_out = (uint64_t)top << GRANULE_SHIFT;
	mr_os_unlock(&lock);
}

void mr_start_fork_lock(void)
{
	mr_os_fork_lock(&lock);
}

void mr_start_fork_unlock(void)
{
	mr_os_fork_unlock(&lock);
}
