/* libFuzzer target: replays random malloc/free/realloc/memalign/calloc sequences on
 * libmemreg's entry points (compiled in under mrz_* names, see allocator/local.mk
 * `make fuzz`) from three threads at once, with fill checks: every live object
 * carries a pattern of its own, so overlapping objects, lost realloc data or bad
 * alignment abort the run. Sizes go up to SIZE_MAX: a request that cannot be met
 * must fail with NULL and ENOMEM (EINVAL for a bad alignment), leaving a realloc'd
 * block intact; a NULL for a request the heap can meet is a bug. Objects move
 * between threads through a shared mailbox, so frees are remote too. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/buddy.h"
#include "allocator/internal.h"

extern struct mr_heap mr_heap;
void mr_heap_lock(void);
void mr_heap_unlock(void);

void *mrz_malloc(size_t size);
void mrz_free(void *p);
void *mrz_calloc(size_t n, size_t size);
void *mrz_realloc(void *p, size_t size);
void *mrz_reallocarray(void *p, size_t n, size_t size);
void *mrz_memalign(size_t align, size_t size);
int mrz_posix_memalign(void **out, size_t align, size_t size);
size_t mrz_malloc_usable_size(void *p);
int mrz_malloc_trim(size_t pad);
void *memreg_malloc_cold(size_t size);

#define THREADS 3
#define SLOTS 24		/* per thread */
#define MAILBOX 8
#define FILL_MAX (256u << 10)	/* fill objects fully up to this; ends beyond */
#define SURE_MAX (64u << 20)	/* requests up to this must succeed */

struct obj {
	unsigned char *p;
	size_t size;
	uint8_t seed;
};

static struct obj mailbox[MAILBOX];
static pthread_mutex_t mailbox_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned char pat(uint8_t seed, size_t i)
{
	return (unsigned char)(seed + i * 131 + (i >> 8));
}

static __attribute__((noreturn)) void die(const char *what, size_t n)
{
	fprintf(stderr, "fuzz-alloc: %s (size %zu); used %llu pages, %u regions opened\n", what, n,
		(unsigned long long)mr_heap.used_pages, (unsigned)mr_heap.regions_opened);
	abort();
}

/* The first and last pages of big objects, all of small ones. */
static void each_checked_byte(struct obj *o, int write)
{
	size_t i, n = o->size;

	for (i = 0; i < n; i++) {
		if (n > FILL_MAX && i == 4096)
			i = n - 4096;
		if (write)
			o->p[i] = pat(o->seed, i);
		else if (o->p[i] != pat(o->seed, i)) {
			fprintf(stderr, "object %p (%zu bytes) corrupted at %zu\n", (void *)o->p, n, i);
			abort();
		}
	}
}

static uint64_t take(const uint8_t **d, size_t *left, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned k = 0; k < bytes && *left; k++, (*d)++, (*left)--)
		v = v << 8 | **d;
	return v;
}

/* Sizes from 0 to SIZE_MAX: mostly ones the heap can meet, some over a region,
 * some impossible (near SIZE_MAX, above PTRDIFF_MAX, above the arena). */
static size_t take_size(const uint8_t **d, size_t *left)
{
	uint64_t v = take(d, left, 4);

	switch (v >> 28) {
	case 0:
		return (size_t)(v & 0x3ffff) + (size_t)(64u << 20);	/* over a region */
	case 1:
		return SIZE_MAX - (v & 0xffff);				/* wraps any rounding */
	case 2:
		return (size_t)PTRDIFF_MAX + 1 + (v & 0xffff);
	case 3:
		return ((size_t)1 << (40 + (v & 7))) + (v >> 3 & 0xfff);	/* above the arena */
	case 4:
	case 5:
	case 6:
		return v & 0x3fffff;					/* up to 4 MiB */
	default:
		return v & 0x7fff;					/* small */
	}
}

/* A NULL is right only for a request that cannot be met, with errno ENOMEM. */
static void *need(void *p, size_t n, const char *what)
{
	if (!p) {
		if (n <= SURE_MAX)
			die(what, n);
		if (errno != ENOMEM)
			die("NULL without ENOMEM", n);
	}
	return p;
}

static void check_all(struct obj *live)
{
	for (unsigned i = 0; i < SLOTS; i++)
		if (live[i].p)
			each_checked_byte(&live[i], 0);
}

struct stream {
	const uint8_t *data;
	size_t size;
	unsigned id;
	uint8_t seed;
	struct obj live[SLOTS];
};

static void fill_new(struct stream *st, struct obj *o, size_t n)
{
	if (mrz_malloc_usable_size(o->p) < n)
		die("usable size below the request", n);
	o->size = n;
	o->seed = (uint8_t)(++st->seed * THREADS + st->id);
	each_checked_byte(o, 1);
}

static void op(struct stream *st, uint8_t code, uint8_t slot, size_t n)
{
	struct obj *o = &st->live[slot % SLOTS];

	switch (code % 10) {
	case 0:
	case 1:
	case 2:	/* malloc / calloc / cold into an empty slot */
		if (o->p)
			break;
		if (code % 10 == 1 && n > SURE_MAX && n <= PTRDIFF_MAX)
			n &= SURE_MAX - 1;	/* calloc may zero it all: bounded */
		errno = 0;
		o->p = need(code % 10 == 1 ? mrz_calloc(1, n) : code % 10 == 2 ? memreg_malloc_cold(n) :
			    mrz_malloc(n), n, "malloc");
		if (!o->p)
			break;
		if (code % 10 == 1) {
			size_t j, lim = n > FILL_MAX ? 4096 : n;

			for (j = 0; j < lim; j++)
				if (o->p[j])
					die("calloc not zero", n);
		}
		fill_new(st, o, n);
		break;
	case 3:	/* free */
		if (!o->p)
			break;
		each_checked_byte(o, 0);
		mrz_free(o->p);
		o->p = NULL;
		break;
	case 4: {	/* realloc: the common prefix survives; a failure keeps the block */
		struct obj old = *o;
		size_t keep, j;
		unsigned char *q;

		if (!o->p || !n)
			break;
		each_checked_byte(o, 0);
		errno = 0;
		q = code & 0x80 ? mrz_reallocarray(o->p, 1, n) : mrz_realloc(o->p, n);
		if (!need(q, n, "realloc")) {
			each_checked_byte(o, 0);	/* intact */
			break;
		}
		o->p = q;
		keep = old.size < n ? old.size : n;
		for (j = 0; j < keep; j++) {
			if (keep > FILL_MAX && j == 4096)
				j = keep > 8192 ? keep - 4096 : 4096;
			if (old.size > FILL_MAX && j >= 4096 && j < old.size - 4096)
				continue;
			if (o->p[j] != pat(old.seed, j))
				die("realloc lost data", n);
		}
		o->size = n;
		each_checked_byte(o, 1);
		break;
	}
	case 5: {	/* memalign / posix_memalign, alignments 2^4 .. 2^36 */
		size_t align = (size_t)1 << (4 + (code / 10 + slot) % 33);
		void *p = NULL;
		int rc;

		if (o->p)
			break;
		errno = 0;
		if (code & 1) {
			p = mrz_memalign(align, n);
		} else {
			rc = mrz_posix_memalign(&p, align, n);
			if (rc && (p || rc != ENOMEM))
				die("posix_memalign failed without ENOMEM", n);
			errno = rc;
		}
		/* With alignments of whole GiB, few places in the arena qualify. */
		o->p = align > (UINT64_C(1) << 30) && !p && errno == ENOMEM ? NULL :
		       need(p, n, "memalign");
		if (!o->p)
			break;
		if ((uintptr_t)o->p % align)
			die("misaligned", align);
		fill_new(st, o, n);
		break;
	}
	case 6: {	/* a bad alignment: EINVAL, nothing allocated */
		void *p = NULL;

		if (mrz_posix_memalign(&p, (n | 1) & 0xffff ? (n | 1) & 0xffff : 3, 64) != EINVAL || p)
			die("posix_memalign with a bad alignment", n);
		break;
	}
	case 7:	/* hand the object to another thread (which frees it remotely) */
		pthread_mutex_lock(&mailbox_lock);
		if (o->p && !mailbox[slot % MAILBOX].p) {
			mailbox[slot % MAILBOX] = *o;
			o->p = NULL;
		} else if (!o->p && mailbox[slot % MAILBOX].p) {
			*o = mailbox[slot % MAILBOX];
			mailbox[slot % MAILBOX].p = NULL;
		}
		pthread_mutex_unlock(&mailbox_lock);
		break;
	case 8:
		check_all(st->live);
		break;
	case 9:
		if (code & 0x80)
			mrz_malloc_trim(0);
		break;
	}
}

static void *run_stream(void *arg)
{
	struct stream *st = arg;
	const uint8_t *d = st->data;
	size_t left = st->size;

	while (left >= 2) {
		uint8_t code = d[0], slot = d[1];

		d += 2;
		left -= 2;
		op(st, code, slot, take_size(&d, &left));
	}
	for (unsigned i = 0; i < SLOTS; i++) {
		if (st->live[i].p) {
			each_checked_byte(&st->live[i], 0);
			mrz_free(st->live[i].p);
			st->live[i].p = NULL;
		}
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct stream st[THREADS];
	pthread_t t[THREADS];
	size_t part = size / THREADS;
	unsigned i;

	/* The input in three parts, one per thread, run at once. */
	for (i = 0; i < THREADS; i++) {
		st[i].data = data + i * part;
		st[i].size = i + 1 == THREADS ? size - i * part : part;
		st[i].id = i;
		if (pthread_create(&t[i], NULL, run_stream, &st[i]) != 0)
			run_stream(&st[i]);
		else
			continue;
		t[i] = 0;
	}
	for (i = 0; i < THREADS; i++)
		if (t[i])
			pthread_join(t[i], NULL);
	for (i = 0; i < MAILBOX; i++) {
		if (mailbox[i].p) {
			each_checked_byte(&mailbox[i], 0);
			mrz_free(mailbox[i].p);
			mailbox[i].p = NULL;
		}
	}
	if (mr_heap.nregions) {
		const char *err;

		mr_heap_lock();
		err = mr_buddy_check(&mr_heap);
		mr_heap_unlock();
		if (err) {
			fprintf(stderr, "heap invariant broken: %s\n", err);
			abort();
		}
	}
	return 0;
}
