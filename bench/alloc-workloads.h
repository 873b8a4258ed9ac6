/* What alloc-bench's workloads share with the programs that run them elsewhere
 * (tests/lab/progs/mr-alloc-pack, scaled to the lab; tests/alloc/packing's churn):
 * the random numbers, the mixed sizes and the churn of random lifetimes, so that
 * "alloc-bench's workload, scaled" stays the same workload. Header-only (static
 * functions): bench/alloc-bench.sh compiles alloc-bench.c alone with gcc. */
#ifndef MEMREG_BENCH_ALLOC_WORKLOADS_H
#define MEMREG_BENCH_ALLOC_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64: the same sequence under every allocator. */
static inline uint64_t aw_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Mixed sizes, 16 B to 128 KiB, mostly small (a long tail): a power of two, 16 B to
 * 64 KiB (60% of the time 16-128 B, 30% 256 B-2 KiB, 10% 4-64 KiB, each of its range's
 * powers as likely), then a size between it and the next power, evenly. */
static inline size_t aw_mixed_size(uint64_t *s)
{
	uint64_t r = aw_rng(s);
	unsigned lg = (unsigned)(r % 100 < 60 ? 4 + r / 100 % 4 : r % 100 < 90 ? 8 + r / 100 % 4 :
				 12 + r / 100 % 5);

	return ((size_t)1 << lg) + (r >> 32) % ((size_t)1 << lg);
}

/* ---- the churn of random lifetimes (sorted-buddy v3's "free regions after churn") ----
 * A ramp of @ramp objects that die at random points of a churn of @churn more
 * allocations, each of which lives an exponential number of allocations (mean
 * @mean). The live objects are a min-heap by death in @heap (room for ramp + churn,
 * outside the heap under test). Each object is written on its first @touch bytes
 * and its last byte. alloc-bench's lifetimes is this with the sizes above and: */
#define AW_LIFETIMES_RAMP 62500u
#define AW_LIFETIMES_CHURN 300000u
#define AW_LIFETIMES_MEAN 4096.0

struct aw_obj {
	uint64_t death;		/* allocation count at which it is freed */
	void *p;
	size_t size;
};

struct aw_churn {
	struct aw_obj *heap;
	size_t n;		/* live objects */
	size_t live, peak;	/* live bytes, now and at most */
	uint64_t s, ramp, churn;
	double mean;
	size_t touch;
	size_t (*size)(uint64_t *s);
};

static inline void aw_push(struct aw_obj *h, size_t *n, struct aw_obj o)
{
	size_t i = (*n)++;

	for (; i && h[(i - 1) / 2].death > o.death; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = o;
}

static inline struct aw_obj aw_pop(struct aw_obj *h, size_t *n)
{
	struct aw_obj top = h[0], last = h[--*n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1].death < h[c].death)
			c++;
		if (h[c].death >= last.death)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = last;
	return top;
}

/* Step @t (0 .. ramp + churn - 1): free what dies at @t, allocate the next object.
 * Returns it (p NULL if malloc failed: then it is not kept). */
static inline struct aw_obj aw_churn_step(struct aw_churn *c, uint64_t t)
{
	struct aw_obj o;

	while (c->n && c->heap[0].death <= t) {
		o = aw_pop(c->heap, &c->n);
		c->live -= o.size;
		free(o.p);
	}
	o.size = c->size(&c->s);
	o.p = malloc(o.size);
	if (!o.p)
		return o;
	memset(o.p, 3, o.size < c->touch ? o.size : c->touch);
	((char *)o.p)[o.size - 1] = 3;
	if (t < c->ramp) {	/* dies at a random point of the churn */
		o.death = c->ramp + aw_rng(&c->s) % c->churn;
	} else {
		double u = (double)((aw_rng(&c->s) >> 11) + 1) / 9007199254740993.0;

		o.death = t + 1 + (uint64_t)(-c->mean * __builtin_log(u));
	}
	c->live += o.size;
	if (c->live > c->peak)
		c->peak = c->live;
	aw_push(c->heap, &c->n, o);
	return o;
}

#endif
