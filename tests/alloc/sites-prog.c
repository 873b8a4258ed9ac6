/* Helper of tests/alloc/sites.sh, run under LD_PRELOAD=libmemreg.so: allocation sites,
 * profiles and the memreg.h API, checked through memreg_class_of (found by dlsym,
 * since the program is not linked with the library).
 *   sites-prog map    - objects of site_a and site_b left live for the site map
 *   sites-prog check  - with a profile marking site_a cold: its objects are cold
 *   sites-prog api    - memreg_malloc_cold/hot, thread class, operator new hints */
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...) do { fprintf(stderr, "sites-prog: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *site_a(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("# site a" ::: "memory");
	return p;
}

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) static void *site_b(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("# site b" ::: "memory");
	return p;
}

static void *sym(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	if (!f)
		FAIL("%s not found: is libmemreg.so preloaded?", name);
	return f;
}

int main(int argc, char **argv)
{
	int (*class_of)(const void *) = (int (*)(const void *))sym("memreg_class_of");
	static void *keep[2000];
	int i;

	if (argc != 2)
		return 2;
	if (strcmp(argv[1], "map") == 0) {
		for (i = 0; i < 1000; i++) {
			keep[2 * i] = site_a(100);
			keep[2 * i + 1] = site_b(3000);
			memset(keep[2 * i], 1, 100);
		}
		return 0;	/* left live: the site map is written at exit */
	}
	if (strcmp(argv[1], "check") == 0) {
		for (i = 0; i < 100; i++) {
			void *a = site_a(100), *b = site_b(100), *c = site_a(100000);

			if (class_of(a) != 2 || class_of(c) != 2)
				FAIL("site_a object of class %d/%d, want 2 (cold)", class_of(a), class_of(c));
			if (class_of(b) != 1)
				FAIL("site_b object of class %d, want 1 (normal)", class_of(b));
			if (((uintptr_t)a >> 26) == ((uintptr_t)b >> 26))
				FAIL("cold and normal objects share a 64 MiB region");
			free(a);
			free(b);
			free(c);
		}
		return 0;
	}
	if (strcmp(argv[1], "api") == 0) {
		void *(*cold)(size_t) = (void *(*)(size_t))sym("memreg_malloc_cold");
		void *(*hot)(size_t) = (void *(*)(size_t))sym("memreg_malloc_hot");
		int (*thread_class)(int) = (int (*)(int))sym("memreg_set_thread_class");
		void *(*new_hc)(size_t, uint8_t) = (void *(*)(size_t, uint8_t))sym("_Znwm12__hot_cold_t");
		void *(*new_al_hc)(size_t, size_t, uint8_t) =
			(void *(*)(size_t, size_t, uint8_t))sym("_ZnwmSt11align_val_t12__hot_cold_t");
		void *p;

		p = cold(50);
		if (class_of(p) != 2)
			FAIL("memreg_malloc_cold: class %d", class_of(p));
		free(p);
		p = hot(50);
		if (class_of(p) != 0)
			FAIL("memreg_malloc_hot: class %d", class_of(p));
		free(p);
		if (thread_class(2) != 1)
			FAIL("memreg_set_thread_class did not return the previous class 1");
		p = malloc(70);
		if (class_of(p) != 2)
			FAIL("malloc after memreg_set_thread_class(COLD): class %d", class_of(p));
		free(p);
		thread_class(1);
		if (thread_class(7) >= 0)
			FAIL("memreg_set_thread_class(7) accepted");
		p = new_hc(64, 0);
		if (class_of(p) != 2)
			FAIL("operator new(64, cold hint 0): class %d", class_of(p));
		free(p);
		p = new_hc(64, 255);
		if (class_of(p) != 0)
			FAIL("operator new(64, hot hint 255): class %d", class_of(p));
		free(p);
		p = new_al_hc(64, 4096, 10);
		if (class_of(p) != 2 || (uintptr_t)p % 4096)
			FAIL("aligned operator new(64, 4096, cold): class %d at %p", class_of(p), p);
		free(p);
		p = malloc(10);
		if (class_of(p) != 1)
			FAIL("class restored: %d", class_of(p));
		free(p);
		return 0;
	}
	return 2;
}
