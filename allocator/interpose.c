/* The exported malloc family (glibc's rules: errno, overflow, malloc(0), alignment),
 * its __libc_* aliases, foreign pointers handed to glibc, and the memreg.h API. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/fit.h"
#include "allocator/heap.h"
#include "allocator/init.h"
#include "allocator/internal.h"
#include "allocator/large.h"
#include "allocator/os.h"
#include "allocator/sites.h"
#include "allocator/start.h"
#include "allocator/stats.h"
#include "allocator/tcache.h"
#include "memreg.h"

#define MR_EXPORT __attribute__((visibility("default")))
#define MR_MIN_ALIGN 16

/* ---- foreign pointers: glibc's own functions, found lazily ---- */

static void *(*g_malloc)(size_t);
static void *(*g_memalign)(size_t, size_t);
static void (*g_free)(void *);
static void *(*g_realloc)(void *, size_t);
static size_t (*g_usable)(void *);
static _Atomic int g_resolving;

/* dlsym may allocate: while it runs, allocations come from this buffer, and frees
 * of them are ignored. */
static char boot_buf[16384] __attribute__((aligned(MR_PAGE_SIZE)));
static size_t boot_used;

static bool in_boot(const void *p)
{
	return (const char *)p >= boot_buf && (const char *)p < boot_buf + sizeof(boot_buf);
}

/* @align is a power of two; sizes and alignments that cannot fit fail as glibc's
 * would (ENOMEM), never wrapping the offset. */
static void *boot_alloc(size_t size, size_t align)
{
	size_t off = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), start;

	if (align < MR_MIN_ALIGN)
		align = MR_MIN_ALIGN;
	do {
		if (size > sizeof(boot_buf) || align > sizeof(boot_buf)) {
			errno = ENOMEM;
			return NULL;
		}
		start = (off + align - 1) & ~(align - 1);
		if (start + size > sizeof(boot_buf)) {
			errno = ENOMEM;
			return NULL;
		}
	} while (!__atomic_compare_exchange_n(&boot_used, &off, start + ((size + 15) & ~(size_t)15),
					      true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return boot_buf + start;	/* zero: never reused */
}

static void resolve_glibc(void)
{
	if (g_free)
		return;
	atomic_store(&g_resolving, 1);
	g_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	g_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	g_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	g_usable = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	g_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	atomic_store(&g_resolving, 0);
}

static void foreign_free(void *p)
{
	if (mr_in_start(p)) {
		mr_start_free(p);
		return;
	}
	if (in_boot(p))
		return;
	resolve_glibc();
	if (g_free)
		g_free(p);
}

static size_t foreign_usable(void *p)
{
	if (mr_in_start(p))
		return mr_start_usable(p);
	if (in_boot(p))
		return 0;
	resolve_glibc();
	return g_usable ? g_usable(p) : 0;
}

/* ---- allocation ---- */

/* When libmemreg cannot serve a request its heap could (it could not set up, or the
 * arena cannot grow), glibc's malloc does, and the process is told once on stderr
 * (mr_fallback_note): never split between two allocators silently. */
static void *glibc_alloc(size_t size, size_t align)
{
	void *p = NULL;

	resolve_glibc();
	if (align <= MR_MIN_ALIGN && g_malloc)
		p = g_malloc(size);
	else if (g_memalign)
		p = g_memalign(align, size);
	if (p)
		mr_fallback_note();
	else
		errno = ENOMEM;
	return p;
}

/* The last object this thread had from the first-fit heap, and which of its pages
 * read zero then: calloc clears only the others. */
static __thread void *fit_obj;
static __thread uint64_t fit_clean;

/* Whether an object of @align and @temp, of the first-fit heap's sizes, is made
 * there. One lock serves that heap: with threads, slabs and spans and their caches
 * (alloc-bench's server took 0.79 of glibc's time with it, 0.30 without). */
static inline bool fit_wanted(size_t align, enum mr_temp temp)
{
	return align <= MR_MIN_ALIGN && temp == MR_TEMP_NORMAL &&
	       __atomic_load_n(&mr_fit_on, __ATOMIC_RELAXED) && mr_os_single_threaded();
}

/* @site: by which large spans written whole are learned and prefaulted (large.c). */
static void *alloc_pick(size_t size, size_t align, enum mr_temp temp, const void *site)
{
	struct mr_tcache *tc;
	unsigned cls;
	bool fit;
	void *p;

	/* glibc's bound: no object may exceed PTRDIFF_MAX (nor its size wrap below). */
	if (MR_UNLIKELY(size > PTRDIFF_MAX)) {
		errno = ENOMEM;
		return NULL;
	}
	if (MR_UNLIKELY(atomic_load_explicit(&g_resolving, memory_order_relaxed)))
		return boot_alloc(size, align);
	if (MR_UNLIKELY(!mr_ready()))
		return glibc_alloc(size, align);
	fit = size > MR_FIT_MIN && size <= MR_FIT_MAX && fit_wanted(align, temp);
	if (!fit && size <= MR_SMALL_MAX && align <= MR_PAGE_SIZE) {
		cls = align <= MR_MIN_ALIGN ? mr_size_class(size) : mr_size_class_aligned(size, align);
		if (cls < MR_NR_CLASSES) {
			tc = mr_tc ? mr_tc : mr_tc_slow();
			if (tc) {
				struct mr_bin *b = &tc->bins[temp][cls];

				if (b->free) {
					p = mr_list_pop(&b->free);
					b->cur_used++;
				} else {
					p = mr_small_refill(tc, cls, temp);
				}
			} else {
				p = mr_small_alloc_shared(cls, temp);
			}
			if (p)
				return p;
			return glibc_alloc(size, align);
		}
	}
	if (fit) {
		p = mr_fit_alloc(size, &fit_clean);
		if (p) {
			fit_obj = p;
			if (site)
				mr_large_prefault_object(site, p, size, fit_clean);
			return p;
		}
	}
	if (__atomic_load_n(&mr_fit_dirty, __ATOMIC_RELAXED))
		mr_fit_tick();
	tc = mr_tc;
	if (tc && temp == MR_TEMP_NORMAL)
		mr_tcache_medium_return(tc);
	p = mr_large_alloc(size, align, temp, site, tc ? &tc->spans : NULL);
	if (p)
		return p;
	if (!mr_large_fits(size, align)) {	/* more than the whole arena: as glibc would */
		errno = ENOMEM;
		return NULL;
	}
	return glibc_alloc(size, align);
}

/* Every allocation that is not a bin pop: site tracking is done here, since site
 * tracking turns the fast path off. */
static void *alloc_slow_from(size_t size, size_t align, enum mr_temp temp, const void *ret,
			     const void *prefault_site)
{
	void *p = alloc_pick(size, align, temp, prefault_site);

	if (MR_UNLIKELY(mr_site_ids != NULL) && p && mr_in_arena(p))
		mr_site_ids[mr_site_slot(p)] = mr_site_id(ret);
	return p;
}

static void *alloc_slow(size_t size, size_t align, enum mr_temp temp, const void *ret)
{
	return alloc_slow_from(size, align, temp, ret, ret);
}

static inline enum mr_temp cur_temp(struct mr_tcache *tc, const void *ret)
{
	enum mr_temp t = tc ? (enum mr_temp)tc->temp : MR_TEMP_NORMAL;

	/* The very first allocation sets up the heap and reads the profile: before
	 * looking its site up. */
	if (MR_UNLIKELY(!tc))
		mr_ready();

	if (MR_UNLIKELY(mr_sites_on))
		t = mr_site_temp(ret, t);
	return t;
}

/* The cold paths of malloc and free live out of line, so that the exported
 * functions need no stack frame. */
static __attribute__((noinline)) void *alloc_fast_miss(struct mr_tcache *tc, size_t size,
						       const void *ret)
{
	/* A thread without a cache yet: the start-up heap while it is open (start.h). */
	if (MR_UNLIKELY(!tc) && size <= MR_START_OBJ_MAX && mr_start_open()) {
		void *p;

		mr_options_once();
		p = mr_start_alloc(size);
		if (p)
			return p;
	}
	return alloc_slow(size, MR_MIN_ALIGN, cur_temp(tc, ret), ret);
}

static __attribute__((noinline)) void foreign_free_keep_errno(void *p)
{
	int e = errno;

	foreign_free(p);
	errno = e;
}

static __attribute__((noinline)) void large_free_keep_errno(struct mr_span *s,
							   struct mr_tcache *tc)
{
	int e = errno;

	mr_large_free(s, tc ? &tc->spans : NULL);
	if (__atomic_load_n(&mr_fit_dirty, __ATOMIC_RELAXED))
		mr_fit_tick();
	errno = e;
}

/* A pop from the thread's bin of temperature t and the size's class, or NULL. */
static inline void *bin_pop(struct mr_tcache *tc, enum mr_temp t, size_t size)
{
	struct mr_bin *b = &tc->bins[t][mr_size_class(size)];

	if (MR_LIKELY(b->free != NULL)) {
		b->cur_used++;
		return mr_list_pop(&b->free);
	}
	return NULL;
}

/* With a profile loaded the call site picks the bin (site-map tracking is off). */
static __attribute__((noinline)) void *alloc_profiled(struct mr_tcache *tc, size_t size,
						      const void *ret)
{
	enum mr_temp t = mr_site_temp(ret, (enum mr_temp)tc->temp);
	void *p = bin_pop(tc, t, size);

	return p ? p : alloc_slow(size, MR_MIN_ALIGN, t, ret);
}

/* The fast path: a pop from the thread's bin of the size's class. A profile only
 * picks the bin; site-map tracking needs alloc_slow. */
static inline void *alloc_fast(size_t size, const void *ret)
{
	struct mr_tcache *tc = mr_tc;

	if (MR_LIKELY(tc != NULL && size <= MR_SMALL_MAX && !mr_site_ids)) {
		void *p;

		if (MR_UNLIKELY(mr_sites_on))
			return alloc_profiled(tc, size, ret);
		p = bin_pop(tc, (enum mr_temp)tc->temp, size);
		if (MR_LIKELY(p != NULL))
			return p;
	}
	return alloc_fast_miss(tc, size, ret);
}

/* A pointer free() or realloc() cannot take: say what (as glibc does) and abort. */
static __attribute__((noinline, noreturn, cold)) void bad_pointer(const char *msg)
{
	mr_heap_corrupt(msg);
}

/* Whether @p, on a page of slab @s (that page's descriptor), is the start of an
 * object: its offset from the slab's start is a multiple of the class size. */
static inline bool slab_object_start(const struct mr_span *s, uint32_t page, const void *p)
{
	uint64_t off = ((uint64_t)(page - s->head) << MR_PAGE_SHIFT) |
		       ((uintptr_t)p & (MR_PAGE_SIZE - 1));

	return off * mr_class_magic[s->cls] <= mr_class_magic[s->cls] - 1;
}

/* The descriptor of the large or huge span starting at @p, or NULL. Only a head's
 * own descriptor is trusted: interior pages keep stale heads from earlier spans. */
static inline struct mr_span *large_head(uint32_t page, const void *p)
{
	struct mr_span *s = &mr_spans[page];

	if (((uintptr_t)p & (MR_PAGE_SIZE - 1)) || s->head != page ||
	    (s->kind != MR_SPAN_LARGE && s->kind != MR_SPAN_HUGE) || (s->flags & MR_SPAN_CACHED))
		return NULL;
	return s;
}

/* Whether @p, in the arena, lies in a chunk of the first-fit heap; a slab's page
 * (the commonest) answers from its own descriptor. */
static inline bool in_fit(const void *p)
{
	uint32_t page = mr_addr_page(p);

	return mr_spans[page].kind != MR_SPAN_SLAB && mr_fit_chunk(mr_spans, page);
}

static __attribute__((noinline)) void fit_free_keep_errno(void *p)
{
	int e = errno;

	if (!mr_fit_free(p))
		bad_pointer("free(): double free or invalid pointer");
	errno = e;
}

static inline void free_inline(void *p)
{
	struct mr_span *s;
	struct mr_tcache *tc;
	uint32_t page;

	if (MR_UNLIKELY(!mr_in_arena(p))) {
		if (p)
			foreign_free_keep_errno(p);
		return;
	}
	if (MR_UNLIKELY(mr_site_ids != NULL))
		mr_site_ids[mr_site_slot(p)] = 0;
	/* A slab's every page descriptor has kind, owner, class: one read. */
	page = mr_addr_page(p);
	s = &mr_spans[page];
	tc = mr_tc;
	if (MR_LIKELY(s->kind == MR_SPAN_SLAB)) {
		if (MR_UNLIKELY(!slab_object_start(s, page, p)))
			bad_pointer("free(): invalid pointer");
		if (MR_LIKELY(__atomic_load_n(&s->owner, __ATOMIC_RELAXED) == mr_tc_owner)) {
			struct mr_bin *b = &tc->bins[s->temp][s->cls];

			if (MR_LIKELY(s->head == b->cur_head)) {
				/* The object is not read: freed just before is all it checks. */
				if (MR_UNLIKELY(p == b->free))
					bad_pointer("free(): double free detected");
				mr_list_push(&b->free, p);
				b->cur_used--;
				return;
			}
			mr_local_free_slow(tc, b, &mr_spans[s->head], p);
			return;
		}
		mr_remote_free(tc, s, p);	/* the owner is the same on every page */
		return;
	}
	s = large_head(page, p);
	if (!s && mr_fit_chunk(mr_spans, page)) {
		fit_free_keep_errno(p);
		return;
	}
	if (MR_UNLIKELY(!s))	/* glibc aborts on these too: never ignored */
		bad_pointer("free(): double free or invalid pointer");
	large_free_keep_errno(s, tc);
}

/* The span of @p for realloc and malloc_usable_size: the slab page's descriptor or
 * the large span's head; NULL if @p is not the start of a live object's span. */
static struct mr_span *span_checked(void *p)
{
	uint32_t page = mr_addr_page(p);
	struct mr_span *s = &mr_spans[page];

	if (s->kind == MR_SPAN_SLAB)
		return slab_object_start(s, page, p) ? &mr_spans[s->head] : NULL;
	return large_head(page, p);
}

static size_t usable_size(void *p)
{
	struct mr_span *s;

	if (!p)
		return 0;
	if (!mr_in_arena(p))
		return foreign_usable(p);
	if (in_fit(p))
		return mr_fit_usable(p);
	s = span_checked(p);
	return s ? mr_usable_size_span(s) : 0;
}

static void *realloc_impl(void *p, size_t size, const void *ret)
{
	enum mr_temp temp = MR_TEMP_NORMAL;
	bool pages = false;	/* a large or huge span: its pages may move */
	struct mr_span *s;
	size_t old, n;
	void *q;

	if (!p)
		return alloc_fast(size, ret);
	if (size == 0) {
		free_inline(p);
		return NULL;
	}
	if (MR_UNLIKELY(size > PTRDIFF_MAX)) {	/* glibc's bound; the block stays intact */
		errno = ENOMEM;
		return NULL;
	}
	if (!mr_in_arena(p)) {
		if (mr_in_start(p)) {
			if (mr_start_resize(p, size))
				return p;
			old = mr_start_usable(p);
		} else if (in_boot(p)) {
			old = (size_t)(boot_buf + sizeof(boot_buf) - (char *)p);
		} else {
			resolve_glibc();
			old = g_usable ? g_usable(p) : 0;
		}
		q = alloc_fast(size, ret);
		if (!q)
			return NULL;
		memcpy(q, p, old < size ? old : size);
		foreign_free(p);
		return q;
	}
	if (in_fit(p)) {
		int r = mr_fit_resize(p, size, &old);

		if (r < 0)
			bad_pointer("realloc(): invalid pointer");
		if (r)
			return p;
	} else {
		s = span_checked(p);
		if (!s)
			bad_pointer("realloc(): invalid pointer");
		temp = (enum mr_temp)s->temp;
		if (s->kind == MR_SPAN_SLAB) {
			old = mr_class_size[s->cls];
			/* Keep it if the size still maps to its class (shrinks by up to a
			 * class). */
			if (size <= old && (size > MR_SMALL_MAX || mr_size_class(size) + 1 >= s->cls))
				return p;
		} else {
			pages = true;
			old = (size_t)s->npages << MR_PAGE_SHIFT;
			if (size > MR_SMALL_MAX && mr_large_resize(s, size))
				return p;
		}
	}
	/* Not learned for prefaulting: a grown buffer is often filled later, or never. */
	q = alloc_slow_from(size, MR_MIN_ALIGN, temp, ret, NULL);
	if (!q)
		return NULL;
	n = old < size ? old : size;
	if (pages)
		mr_large_move(q, p, n);
	else
		memcpy(q, p, n);
	free_inline(p);
	return q;
}

static void *aligned_impl(size_t align, size_t size, const void *ret)
{
	/* glibc rounds a non-power-of-two alignment up for memalign/aligned_alloc. */
	if (align & (align - 1)) {
		if (align > SIZE_MAX / 2 + 1) {
			errno = EINVAL;
			return NULL;
		}
		align = (size_t)1 << (64 - __builtin_clzll(align));
	}
	if (align <= MR_MIN_ALIGN)
		return alloc_fast(size, ret);
	if (size > PTRDIFF_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc_slow(size ? size : 1, align, cur_temp(mr_tc, ret), ret);
}

/* ---- the exported family ---- */

#define RET __builtin_return_address(0)

/* Not declared by every glibc's headers. */
void cfree(void *p);
void free_sized(void *p, size_t size);
void free_aligned_sized(void *p, size_t align, size_t size);

MR_EXPORT void *malloc(size_t size)
{
	return alloc_fast(size, RET);
}

MR_EXPORT void free(void *p)
{
	free_inline(p);
}

MR_EXPORT void cfree(void *p)
{
	free_inline(p);
}

MR_EXPORT void free_sized(void *p, size_t size)
{
	(void)size;
	free_inline(p);
}

MR_EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
	(void)align;
	(void)size;
	free_inline(p);
}

/* Clear the bytes of [@p, @p + @len) on pages not set in @clean (bit i: the i-th
 * page from @p's reads zero). */
static void clear_unclean(char *p, size_t len, uint64_t clean)
{
	char *end = p + len;

	for (unsigned i = 0; p < end; i++) {
		char *next = (char *)(((uintptr_t)p | (MR_PAGE_SIZE - 1)) + 1);

		if (next > end)
			next = end;
		if (!(clean >> i & 1))
			memset(p, 0, (size_t)(next - p));
		p = next;
	}
}

MR_EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	mr_fresh_obj = NULL;
	fit_obj = NULL;
	p = alloc_fast(total, RET);
	/* Large and huge spans of pages fresh from mmap or purged with MADV_DONTNEED are
	 * already zero (the page heap says so in the head: MR_SPAN_ZEROED), and stay
	 * untouched; so are such pages of a first-fit object (fit_clean); so is a fresh
	 * slab's object handed out for the first time but for its link and key
	 * (mr_fresh_obj: an object over a page is not made resident whole for nothing);
	 * other slab objects are not looked up. */
	if (p && p == fit_obj) {
		clear_unclean(p, total, fit_clean);
	} else if (p) {
		const struct mr_span *s = total > MR_SMALL_MAX && mr_in_arena(p) && !in_fit(p) ?
					  mr_span_of(p) : NULL;

		if (p == mr_fresh_obj)
			memset(p, 0, total < 2 * sizeof(void *) ? total : 2 * sizeof(void *));
		else if (!s || (s->kind != MR_SPAN_HUGE && s->kind != MR_SPAN_LARGE) ||
			 !(s->flags & MR_SPAN_ZEROED))
			memset(p, 0, total);
	}
	return p;
}

MR_EXPORT void *realloc(void *p, size_t size)
{
	return realloc_impl(p, size, RET);
}

MR_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc_impl(p, total, RET);
}

MR_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int e = errno;
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = aligned_impl(align, size, RET);
	if (!p) {
		errno = e;
		return ENOMEM;
	}
	*out = p;
	return 0;
}

MR_EXPORT void *memalign(size_t align, size_t size)
{
	return aligned_impl(align, size, RET);
}

MR_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return aligned_impl(align, size, RET);
}

MR_EXPORT void *valloc(size_t size)
{
	return aligned_impl(MR_PAGE_SIZE, size, RET);
}

MR_EXPORT void *pvalloc(size_t size)
{
	size_t rounded;

	if (__builtin_add_overflow(size, MR_PAGE_SIZE - 1, &rounded)) {
		errno = ENOMEM;
		return NULL;
	}
	rounded &= ~(size_t)(MR_PAGE_SIZE - 1);
	return aligned_impl(MR_PAGE_SIZE, rounded ? rounded : MR_PAGE_SIZE, RET);
}

MR_EXPORT size_t malloc_usable_size(void *p)
{
	return usable_size(p);
}

/* glibc's contract: 1 if memory was given back to the OS, 0 if there was none. */
MR_EXPORT int malloc_trim(size_t pad)
{
	bool spares;

	(void)pad;
	if (!mr_ready())
		return 0;
	spares = mr_tcache_trim();	/* this thread's remote frees not sent yet, its spare slabs */
	if (mr_tc)
		mr_large_cache_flush(&mr_tc->spans);	/* and its cached spans */
	spares |= mr_fit_trim();	/* the first-fit heap's free pages and empty chunks */
	return mr_heap_trim() || spares;
}

/* The page heap's totals with the start-up heap's (its top as opened, its live
 * objects as used) and the first-fit heap's (its chunks are the page heap's used
 * spans; its dirty pages releasable, its purges purged). */
static void totals(struct mr_heap_totals *t)
{
	uint64_t live, top, dirty, purged;

	mr_heap_totals(t);
	mr_start_totals(&live, &top);
	t->active_bytes += top;
	t->used_bytes += live;
	mr_fit_totals(&dirty, &purged);
	t->releasable_bytes += dirty;
	t->runs_purged_bytes += purged;
}

/* ---- mallinfo2, mallinfo, malloc_stats, malloc_info: libmemreg's heap ----
 * glibc's fields, filled from the page heap (mr_heap_totals): arena = the regions
 * opened for spans and slabs, uordblks = pages of live spans and slabs in them,
 * fordblks = the rest of those regions, ordblks = their free blocks, hblks/hblkhd =
 * runs of whole regions (glibc's mmapped chunks), keepcost = free pages not clean
 * (what malloc_trim would give back); the fast-bin fields are 0. Small objects count
 * by their slabs' pages. If libmemreg could not set up, glibc's own answer. Not in
 * the fuzz and sanitizer builds (MR_NO_ALIASES): the sanitizers have their own. */
#ifndef MR_NO_ALIASES

static void *glibc_sym(const char *name)
{
	resolve_glibc();
	return dlsym(RTLD_NEXT, name);
}

static struct mallinfo2 info_of(const struct mr_heap_totals *t)
{
	struct mallinfo2 mi;

	memset(&mi, 0, sizeof(mi));
	mi.arena = t->active_bytes;
	mi.ordblks = t->free_blocks;
	mi.hblks = t->huge_runs;
	mi.hblkhd = t->huge_bytes;
	mi.uordblks = t->used_bytes;
	mi.fordblks = t->active_bytes - t->used_bytes;
	mi.keepcost = t->releasable_bytes;
	return mi;
}

MR_EXPORT struct mallinfo2 mallinfo2(void)
{
	struct mr_heap_totals t;

	if (!mr_ready()) {
		struct mallinfo2 (*g)(void) = (struct mallinfo2 (*)(void))glibc_sym("mallinfo2");
		struct mallinfo2 none;

		if (g)
			return g();
		memset(&none, 0, sizeof(none));
		return none;
	}
	totals(&t);
	return info_of(&t);
}

static int clamp_int(size_t v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

/* The old int fields: saturated at INT_MAX (glibc's wrap instead). */
MR_EXPORT struct mallinfo mallinfo(void)
{
	struct mallinfo2 m2 = mallinfo2();
	struct mallinfo mi;

	mi.arena = clamp_int(m2.arena);
	mi.ordblks = clamp_int(m2.ordblks);
	mi.smblks = clamp_int(m2.smblks);
	mi.hblks = clamp_int(m2.hblks);
	mi.hblkhd = clamp_int(m2.hblkhd);
	mi.usmblks = clamp_int(m2.usmblks);
	mi.fsmblks = clamp_int(m2.fsmblks);
	mi.uordblks = clamp_int(m2.uordblks);
	mi.fordblks = clamp_int(m2.fordblks);
	mi.keepcost = clamp_int(m2.keepcost);
	return mi;
}

/* "name = value" with the value right-aligned in 10 columns, as glibc prints it. */
static void put_line(const char *name, uint64_t v)
{
	char digits[24], line[40];
	size_t n = (size_t)(mr_fmt_u64(digits, v) - digits), pad = n < 10 ? 10 - n : 0;

	memset(line, ' ', pad);
	memcpy(line + pad, digits, n);
	memcpy(line + pad + n, "\n", 2);
	mr_write_str(2, name);
	mr_write_str(2, line);
}

MR_EXPORT void malloc_stats(void)
{
	struct mr_heap_totals t;
	int e = errno;

	if (!mr_ready()) {
		void (*g)(void) = (void (*)(void))glibc_sym("malloc_stats");

		if (g)
			g();
		errno = e;
		return;
	}
	totals(&t);
	mr_write_str(2, "Arena 0:\n");
	put_line("system bytes     = ", t.active_bytes);
	put_line("in use bytes     = ", t.used_bytes);
	mr_write_str(2, "Total (incl. mmap):\n");
	put_line("system bytes     = ", t.active_bytes + t.huge_bytes);
	put_line("in use bytes     = ", t.used_bytes + t.huge_bytes);
	put_line("max mmap regions = ", t.huge_runs);
	put_line("max mmap bytes   = ", t.huge_bytes);
	errno = e;
}

/* glibc's XML (version 1) with one heap; "max" is the peak of pages in use. */
MR_EXPORT int malloc_info(int options, FILE *fp)
{
	struct mr_heap_totals t;
	unsigned long long sys, rest;

	if (options != 0)
		return EINVAL;
	if (!mr_ready()) {
		int (*g)(int, FILE *) = (int (*)(int, FILE *))glibc_sym("malloc_info");

		return g ? g(options, fp) : EINVAL;
	}
	totals(&t);
	sys = t.active_bytes;
	rest = t.active_bytes - t.used_bytes;
	fprintf(fp, "<malloc version=\"1\">\n<heap nr=\"0\">\n<sizes>\n</sizes>\n"
		"<total type=\"fast\" count=\"0\" size=\"0\"/>\n"
		"<total type=\"rest\" count=\"%llu\" size=\"%llu\"/>\n"
		"<system type=\"current\" size=\"%llu\"/>\n"
		"<system type=\"max\" size=\"%llu\"/>\n"
		"<aspace type=\"total\" size=\"%llu\"/>\n"
		"<aspace type=\"mprotect\" size=\"%llu\"/>\n</heap>\n",
		(unsigned long long)t.free_blocks, rest, sys,
		(unsigned long long)t.peak_used_bytes, sys, sys);
	fprintf(fp, "<total type=\"fast\" count=\"0\" size=\"0\"/>\n"
		"<total type=\"rest\" count=\"%llu\" size=\"%llu\"/>\n"
		"<total type=\"mmap\" count=\"%llu\" size=\"%llu\"/>\n"
		"<system type=\"current\" size=\"%llu\"/>\n"
		"<system type=\"max\" size=\"%llu\"/>\n"
		"<aspace type=\"total\" size=\"%llu\"/>\n"
		"<aspace type=\"mprotect\" size=\"%llu\"/>\n</malloc>\n",
		(unsigned long long)t.free_blocks, rest, (unsigned long long)t.huge_runs,
		(unsigned long long)t.huge_bytes, sys + t.huge_bytes,
		(unsigned long long)t.peak_used_bytes, sys + t.huge_bytes, sys + t.huge_bytes);
	return 0;
}
#endif

#ifndef MR_NO_ALIASES	/* the fuzz build renames the family and has no aliases */
/* copy(): the alias carries its target's attributes (GCC; clang has no need). */
#if defined(__GNUC__) && !defined(__clang__)
#define MR_ALIAS(f) __attribute__((alias(#f), copy(f)))
#else
#define MR_ALIAS(f) __attribute__((alias(#f)))
#endif
MR_EXPORT void *__libc_malloc(size_t) MR_ALIAS(malloc);
MR_EXPORT void __libc_free(void *) MR_ALIAS(free);
MR_EXPORT void *__libc_calloc(size_t, size_t) MR_ALIAS(calloc);
MR_EXPORT void *__libc_realloc(void *, size_t) MR_ALIAS(realloc);
MR_EXPORT void *__libc_memalign(size_t, size_t) MR_ALIAS(memalign);
MR_EXPORT void *__libc_valloc(size_t) MR_ALIAS(valloc);
MR_EXPORT void *__libc_pvalloc(size_t) MR_ALIAS(pvalloc);
#endif

/* ---- memreg.h ---- */

static enum mr_temp temp_of(int cls)
{
	return cls == MEMREG_HOT ? MR_TEMP_HOT : cls == MEMREG_COLD ? MR_TEMP_COLD : MR_TEMP_NORMAL;
}

MR_EXPORT void *memreg_malloc_class(size_t size, int cls)
{
	if (cls < MEMREG_HOT || cls > MEMREG_COLD) {
		errno = EINVAL;
		return NULL;
	}
	return alloc_slow(size, MR_MIN_ALIGN, temp_of(cls), RET);
}

MR_EXPORT void *memreg_malloc_cold(size_t size)
{
	return alloc_slow(size, MR_MIN_ALIGN, MR_TEMP_COLD, RET);
}

MR_EXPORT void *memreg_malloc_hot(size_t size)
{
	return alloc_slow(size, MR_MIN_ALIGN, MR_TEMP_HOT, RET);
}

MR_EXPORT int memreg_set_thread_class(int cls)
{
	struct mr_tcache *tc;
	int old;

	if (cls < MEMREG_HOT || cls > MEMREG_COLD)
		return -EINVAL;
	tc = mr_tc ? mr_tc : mr_ready() ? mr_tc_slow() : NULL;
	if (!tc)
		return -ENOMEM;
	old = tc->temp;
	tc->temp = (uint8_t)temp_of(cls);
	return old;
}

MR_EXPORT int memreg_site_set_class(const void *site_addr, int cls)
{
	if (cls < MEMREG_HOT || cls > MEMREG_COLD || !site_addr)
		return -EINVAL;
	if (!mr_ready())
		return -ENOMEM;
	return mr_site_set(site_addr, temp_of(cls));
}

MR_EXPORT int memreg_class_of(const void *p)
{
	if (p && mr_in_start(p) && mr_start_usable(p))
		return MEMREG_NORMAL;	/* normal data, in no region yet */
	if (!p || !mr_in_arena(p))
		return -EINVAL;
	if (in_fit(p))
		return MEMREG_NORMAL;	/* the first-fit heap holds normal data only */
	return mr_span_of(p)->temp;
}

MR_EXPORT int memreg_get_stats(struct memreg_stats *st, size_t size)
{
	struct mr_heap_totals t;
	struct memreg_stats all;

	if (!st)
		return -EINVAL;
	mr_ready();
	totals(&t);
	all.region_bytes = t.region_bytes;
	all.regions_live = t.regions_live;
	all.used_bytes = t.used_bytes + t.huge_bytes;
	all.peak_used_bytes = t.peak_used_bytes;
	all.huge_bytes = t.huge_bytes;
	all.free_bytes = t.active_bytes - t.used_bytes;
	all.releasable_bytes = t.releasable_bytes;
	all.purged_bytes = t.runs_purged_bytes;
	all.glibc_fallbacks = t.glibc_fallbacks;
	memcpy(st, &all, size < sizeof(all) ? size : sizeof(all));
	return 0;
}
