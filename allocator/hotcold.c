/* The hot/cold `operator new` hint overloads that compilers emit from memory
 * profiles (LLVM MemProf, tcmalloc's new_extension.h): operator new(size_t,
 * __hot_cold_t) and its nothrow/aligned/array forms, defined in C under their
 * mangled names so libmemreg needs no C++ runtime. The hint is a byte: 0 is the
 * coldest, 255 the hottest; memreg maps 0..63 to cold, 192..255 to hot. */
#include "config.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "memreg.h"

#define MR_EXPORT __attribute__((visibility("default")))

static int hint_class(uint8_t hint)
{
	return hint < 64 ? MEMREG_COLD : hint >= 192 ? MEMREG_HOT : MEMREG_NORMAL;
}

/* Out of memory in a throwing form: the C++ runtime's own operator new runs the
 * new-handler and throws std::bad_alloc (it calls our malloc, which fails again).
 * A size that cannot be rounded to @align goes to the plain form with SIZE_MAX:
 * libstdc++'s aligned form rounds (size + align - 1) unchecked itself (GCC 12). */
static void *throwing_fallback(size_t size, size_t align, bool overflow)
{
	void *(*plain)(size_t);
	void *(*aligned)(size_t, size_t);

	if (overflow)
		size = SIZE_MAX;
	else if (align) {
		aligned = (void *(*)(size_t, size_t))dlsym(RTLD_DEFAULT, "_ZnwmSt11align_val_t");
		if (aligned)
			return aligned(size, align);
	}
	plain = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "_Znwm");
	if (plain)
		return plain(size);
	abort();	/* no C++ runtime, yet a throwing operator new failed: never a short block */
}

static void *hinted(size_t size, size_t align, uint8_t hint, int nothrow)
{
	bool overflow = false;
	size_t rounded = size;
	void *p = NULL;

	if (align > 16) {
		/* C++ alignments are powers of two; aligned_alloc wants a multiple of it. */
		overflow = (align & (align - 1)) != 0 ||
			   __builtin_add_overflow(size, align - 1, &rounded);
		if (!overflow) {
			int old = memreg_set_thread_class(hint_class(hint));

			p = aligned_alloc(align, rounded & ~(align - 1));
			if (old >= 0)
				memreg_set_thread_class(old);
		}
	} else {
		p = memreg_malloc_class(size ? size : 1, hint_class(hint));
	}
	if (!p && !nothrow)
		p = throwing_fallback(size, align > 16 ? align : 0, overflow);
	return p;
}

MR_EXPORT void *mr_new_hc(size_t size, uint8_t hint) __asm__("_Znwm12__hot_cold_t");
MR_EXPORT void *mr_new_hc(size_t size, uint8_t hint)
{
	return hinted(size, 0, hint, 0);
}

MR_EXPORT void *mr_newa_hc(size_t size, uint8_t hint) __asm__("_Znam12__hot_cold_t");
MR_EXPORT void *mr_newa_hc(size_t size, uint8_t hint)
{
	return hinted(size, 0, hint, 0);
}

MR_EXPORT void *mr_new_nt_hc(size_t size, const void *nt, uint8_t hint)
	__asm__("_ZnwmRKSt9nothrow_t12__hot_cold_t");
MR_EXPORT void *mr_new_nt_hc(size_t size, const void *nt, uint8_t hint)
{
	(void)nt;
	return hinted(size, 0, hint, 1);
}

MR_EXPORT void *mr_newa_nt_hc(size_t size, const void *nt, uint8_t hint)
	__asm__("_ZnamRKSt9nothrow_t12__hot_cold_t");
MR_EXPORT void *mr_newa_nt_hc(size_t size, const void *nt, uint8_t hint)
{
	(void)nt;
	return hinted(size, 0, hint, 1);
}

MR_EXPORT void *mr_new_al_hc(size_t size, size_t align, uint8_t hint)
	__asm__("_ZnwmSt11align_val_t12__hot_cold_t");
MR_EXPORT void *mr_new_al_hc(size_t size, size_t align, uint8_t hint)
{
	return hinted(size, align, hint, 0);
}

MR_EXPORT void *mr_newa_al_hc(size_t size, size_t align, uint8_t hint)
	__asm__("_ZnamSt11align_val_t12__hot_cold_t");
MR_EXPORT void *mr_newa_al_hc(size_t size, size_t align, uint8_t hint)
{
	return hinted(size, align, hint, 0);
}

MR_EXPORT void *mr_new_al_nt_hc(size_t size, size_t align, const void *nt, uint8_t hint)
	__asm__("_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t");
MR_EXPORT void *mr_new_al_nt_hc(size_t size, size_t align, const void *nt, uint8_t hint)
{
	(void)nt;
	return hinted(size, align, hint, 1);
}

MR_EXPORT void *mr_newa_al_nt_hc(size_t size, size_t align, const void *nt, uint8_t hint)
	__asm__("_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t");
MR_EXPORT void *mr_newa_al_nt_hc(size_t size, size_t align, const void *nt, uint8_t hint)
{
	(void)nt;
	return hinted(size, align, hint, 1);
}
