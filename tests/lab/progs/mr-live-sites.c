/* The live allocator loop's workload: allocates and frees for D seconds, every object
 * living L ms; a hot site (10% of the bytes, its objects touched all the time)
 * interleaved in allocation order with a cold site; the default heap layout. At the
 * end (or on SIGTERM) it frees what outlived L and prints the hot-set inflation of
 * the objects still live: pages holding hot objects / (hot bytes / page), and, before
 * it, where each site's live objects are ("hot_median=0x.. cold_median=0x..
 * hot_low=yes|no": libmemreg puts a hot site's objects low, a cold one's high, so a
 * packing that swapped the sites' classes shows).
 * Usage: mr-live-sites [-d SECONDS] [-l LIFETIME_MS] [-m LIVE_MIB]   (60, 5000, 32)
 * Prints "sites a=0xOFF b=0xOFF" (the site functions' offsets in the program, for
 * finding them in a site map) and "ready PID" at the start. Links only libc. */
#define _GNU_SOURCE 1
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct obj {
	char *p;
	uint32_t size;
	uint8_t hot;
	uint64_t born_ms;
};

static volatile sig_atomic_t stop;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* The two allocation sites: a return address each for libmemreg. */
__attribute__((noinline)) static char *site_a(size_t n)
{
	char *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static char *site_b(size_t n)
{
	char *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static int base_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = info->dlpi_addr;	/* the first one is the program */
	return 1;
}

static int cmp_uptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* The median address of the live objects of one site (0 if none). */
static uintptr_t median_addr(const struct obj *ring, size_t cap, size_t head, size_t tail,
			     int hot, uintptr_t *buf)
{
	size_t i, n = 0;

	for (i = head; i != tail; i = (i + 1) % cap)
		if (ring[i].hot == hot)
			buf[n++] = (uintptr_t)ring[i].p;
	if (!n)
		return 0;
	qsort(buf, n, sizeof(*buf), cmp_uptr);
	return buf[n / 2];
}

int main(int argc, char **argv)
{
	uint64_t duration_s = 60, life_ms = 5000, live_mib = 32, start, t, last, bytes_per_ms;
	size_t cap, head = 0, tail = 0, i, n, nhot, hot_bytes = 0, pages = 0;
	struct obj *ring;
	uintptr_t base = 0, *hp;
	double budget = 0;
	int c;

	while ((c = getopt(argc, argv, "d:l:m:")) != -1) {
		switch (c) {
		case 'd': duration_s = strtoull(optarg, NULL, 10); break;
		case 'l': life_ms = strtoull(optarg, NULL, 10); break;
		case 'm': live_mib = strtoull(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: mr-live-sites [-d SECONDS] [-l LIFETIME_MS] [-m LIVE_MIB]\n");
			return 2;
		}
	}
	if (!life_ms || !live_mib)
		return 2;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	/* objects of 64..255 bytes, 160 on average */
	cap = (size_t)(live_mib << 20) / 64 * 2;
	ring = malloc(cap * sizeof(*ring));
	hp = malloc(2 * cap * sizeof(*hp));	/* an object spans two pages at most */
	if (!ring || !hp)
		return 1;
	dl_iterate_phdr(base_cb, &base);
	printf("sites a=0x%lx b=0x%lx\n", (unsigned long)((uintptr_t)site_a - base),
	       (unsigned long)((uintptr_t)site_b - base));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	bytes_per_ms = (live_mib << 20) / life_ms;
	start = last = now_ms();
	while (!stop && (t = now_ms()) - start < duration_s * 1000) {
		/* allocate what the time since the last step is worth */
		budget += (double)(t - last) * (double)bytes_per_ms;
		last = t;
		/* a slow machine (TCG) that cannot keep up allocates less, never a burst
		 * longer than a lifetime: at most 1 MiB a step */
		if (budget > (double)(1u << 20))
			budget = (double)(1u << 20);
		for (n = 0; budget > 0 && (tail + 1) % cap != head; n++) {
			struct obj *o = &ring[tail];

			if (n % 64 == 63)
				t = now_ms();	/* each object's own birth time */

			o->size = (uint32_t)(rng() % 192 + 64);
			o->hot = rng() % 10 == 0;
			o->p = o->hot ? site_a(o->size) : site_b(o->size);
			if (!o->p)
				return 1;
			memset(o->p, o->hot ? 1 : 2, o->size);
			o->born_ms = t;
			budget -= o->size;
			tail = (tail + 1) % cap;
		}
		while (head != tail && t - ring[head].born_ms >= life_ms) {
			free(ring[head].p);
			head = (head + 1) % cap;
		}
		/* the hot objects are touched all the time */
		for (i = head; i != tail; i = (i + 1) % cap)
			if (ring[i].hot)
				((volatile char *)ring[i].p)[0]++;
		usleep(1000);
	}
	/* what outlived its lifetime goes: the objects live now were all born within L */
	t = now_ms();
	while (head != tail && t - ring[head].born_ms >= life_ms) {
		free(ring[head].p);
		head = (head + 1) % cap;
	}
	/* hp has room for 2 x cap addresses: one per live object fits */
	{
		uintptr_t hot_med = median_addr(ring, cap, head, tail, 1, hp);
		uintptr_t cold_med = median_addr(ring, cap, head, tail, 0, hp);

		printf("hot_median=0x%lx cold_median=0x%lx hot_low=%s\n", (unsigned long)hot_med,
		       (unsigned long)cold_med, hot_med && cold_med && hot_med < cold_med ? "yes" : "no");
	}
	nhot = 0;
	for (i = head; i != tail; i = (i + 1) % cap)
		if (ring[i].hot) {
			uintptr_t a = (uintptr_t)ring[i].p, e = a + ring[i].size - 1;

			hot_bytes += ring[i].size;
			for (a &= ~(uintptr_t)4095; a <= e; a += 4096)
				hp[nhot++] = a;
		}
	qsort(hp, nhot, sizeof(*hp), cmp_uptr);
	for (n = 0; n < nhot; n++)
		if (n == 0 || hp[n] != hp[n - 1])
			pages++;
	printf("live_objects=%zu ", (tail + cap - head) % cap);
	printf("hot_bytes=%zu hot_pages=%zu inflation=%.2f\n", hot_bytes, pages,
	       hot_bytes ? (double)pages / ((double)hot_bytes / 4096) : 0.0);
	return 0;
}
