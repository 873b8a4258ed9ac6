/* libFuzzer target: replays random malloc/free/realloc/memalign/calloc sequences on
 * libmemreg's entry points (compiled in under mrz_* names, see allocator/local.mk
 * `make fuzz`) with fill checks: every live object carries a pattern of its own, so
 * overlapping objects, lost realloc data or bad alignment abort the run. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/internal.h"

extern struct mr_heap mr_heap;

void *mrz_malloc(size_t size);
void mrz_free(void *p);
void *mrz_calloc(size_t n, size_t size);
void *mrz_realloc(void *p, size_t size);
void *mrz_memalign(size_t align, size_t size);
size_t mrz_malloc_usable_size(void *p);
int mrz_malloc_trim(size_t pad);
void *memreg_malloc_cold(size_t size);

#define SLOTS 64
#define FILL_MAX (256u << 10)	/* fill objects fully up to this; ends beyond */

struct obj {
	unsigned char *p;
	size_t size;
	uint8_t seed;
};

static struct obj live[SLOTS];

static unsigned char pat(uint8_t seed, size_t i)
{
	return (unsigned char)(seed + i * 131 + (i >> 8));
}

static void each_checked_byte(struct obj *o, int write)
{
	size_t i, n = o->size;

	for (i = 0; i < n; i++) {
		if (n > FILL_MAX && i == 4096)
			i = n - 4096;	/* big objects: the first and last pages */
		if (write)
			o->p[i] = pat(o->seed, i);
		else if (o->p[i] != pat(o->seed, i)) {
			fprintf(stderr, "object %p (%zu bytes) corrupted at %zu\n", (void *)o->p, n, i);
			abort();
		}
	}
}

static size_t take_size(const uint8_t **d, size_t *left)
{
	uint32_t v = 0;
	unsigned k;

	for (k = 0; k < 4 && *left; k++, (*d)++, (*left)--)
		v = v << 8 | **d;
	switch (v >> 29) {
	case 0:
		return (size_t)(v & 0x3ffff) + (size_t)(64u << 20);	/* huge: over a region */
	case 1:
	case 2:
		return v & 0x3fffff;					/* up to 4 MiB */
	default:
		return v & 0x7fff;					/* small */
	}
}

/* A NULL from an allocation the heap can satisfy is a bug too. */
static void *need(void *p, size_t n, const char *what)
{
	if (!p) {
		fprintf(stderr, "%s(%zu) returned NULL; used %llu pages, %u regions opened\n", what, n,
			(unsigned long long)mr_heap.used_pages, (unsigned)mr_heap.regions_opened);
		abort();
	}
	return p;
}

static void check_all(void)
{
	unsigned i;

	for (i = 0; i < SLOTS; i++)
		if (live[i].p)
			each_checked_byte(&live[i], 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t seed;
	unsigned i;

	while (size >= 2) {
		uint8_t op = data[0], slot = data[1] % SLOTS;
		struct obj *o = &live[slot];
		size_t n;

		data += 2;
		size -= 2;
		n = take_size(&data, &size);
		switch (op % 8) {
		case 0:
		case 1:
		case 2:	/* malloc / calloc / cold into an empty slot */
			if (o->p)
				break;
			o->p = need(op % 8 == 1 ? mrz_calloc(1, n) : op % 8 == 2 ? memreg_malloc_cold(n) :
				    mrz_malloc(n), n, "malloc");
			if (op % 8 == 1) {
				size_t j, lim = n > FILL_MAX ? 4096 : n;

				for (j = 0; j < lim; j++)
					if (o->p[j])
						abort();
			}
			if (mrz_malloc_usable_size(o->p) < n)
				abort();
			o->size = n;
			o->seed = ++seed;
			each_checked_byte(o, 1);
			break;
		case 3:	/* free */
			if (!o->p)
				break;
			each_checked_byte(o, 0);
			mrz_free(o->p);
			o->p = NULL;
			break;
		case 4: {	/* realloc: the common prefix survives */
			struct obj old = *o;
			size_t keep, j;

			if (!o->p || !n)
				break;
			each_checked_byte(o, 0);
			o->p = need(mrz_realloc(o->p, n), n, "realloc");
			keep = old.size < n ? old.size : n;
			for (j = 0; j < keep; j++) {
				if (keep > FILL_MAX && j == 4096)
					j = keep > 8192 ? keep - 4096 : 4096;
				if (old.size > FILL_MAX && j >= 4096 && j < old.size - 4096)
					continue;
				if (o->p[j] != pat(old.seed, j))
					abort();
			}
			o->size = n;
			each_checked_byte(o, 1);
			break;
		}
		case 5: {	/* memalign, alignments 2^4 .. 2^27 */
			size_t align = (size_t)1 << (4 + op / 8 % 24);

			if (o->p)
				break;
			o->p = need(mrz_memalign(align, n), n, "memalign");
			if ((uintptr_t)o->p % align)
				abort();
			o->size = n;
			o->seed = ++seed;
			each_checked_byte(o, 1);
			break;
		}
		case 6:
			check_all();
			break;
		case 7:
			if (op & 0x80)
				mrz_malloc_trim(0);
			break;
		}
		{
			const char *err = mr_heap.nregions ? mr_buddy_check(&mr_heap) : NULL;

			if (err) {
				fprintf(stderr, "heap invariant broken: %s\n", err);
				abort();
			}
		}
	}
	/* Each input starts from an empty heap of live objects. */
	for (i = 0; i < SLOTS; i++) {
		if (live[i].p) {
			each_checked_byte(&live[i], 0);
			mrz_free(live[i].p);
			live[i].p = NULL;
		}
	}
	return 0;
}
