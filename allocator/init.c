/* Start-up and fork: the first allocation reads the options, reserves the arena and
 * sets every layer up, bottom first; fork takes every layer's locks, top first;
 * when libmemreg cannot serve, the one line on stderr. Called by the front end only. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "allocator/fit.h"
#include "allocator/heap.h"
#include "allocator/init.h"
#include "allocator/internal.h"
#include "allocator/os.h"
#include "allocator/sites.h"
#include "allocator/start.h"
#include "allocator/stats.h"
#include "allocator/tcache.h"

static _Atomic int init_state;	/* 0 not yet, 1 in progress, 2 ready, -1 failed */

/* "libmemreg: ignoring bad NAME=VALUE" (and why, if @why), or for an unknown
 * variable (@value NULL, @name its whole entry) "ignoring unknown NAME=VALUE". */
static void warn_value(const char *name, const char *value, const char *why)
{
	mr_write_str(2, value ? "libmemreg: ignoring bad " : "libmemreg: ignoring unknown ");
	mr_write_str(2, name);
	if (value) {
		mr_write_str(2, "=");
		mr_write_str(2, value);
	}
	if (why) {
		mr_write_str(2, " (");
		mr_write_str(2, why);
		mr_write_str(2, ")");
	}
	mr_write_str(2, "\n");
}

static void warn_option(const char *name, const char *value)
{
	warn_value(name, value, NULL);
}

static void fallback_note_reason(void);
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

/* ---- reports: the site table, the stats export, what is said at exit ---- */

static void at_exit(void)
{
	if (MR_OPT(show_stats))
		mr_heap_print_stats();
	if (MR_OPT_STR(site_map))
		mr_site_map_write(MR_OPT_STR(site_map));
}

static void start_reports(void)
{
	mr_sites_init();
	if (MR_OPT_STR(site_map) || MR_OPT(track_sites))
		mr_sites_track();
	if (MR_OPT(export_stats))
		mr_heap_export_open(mr_site_ids != NULL);
	mr_stats_init();
	if (MR_OPT(show_stats) || MR_OPT_STR(site_map))
		atexit(at_exit);
}

/* The options, read once by the first allocation (the start-up heap's or the arena's):
 * they say whether the start-up heap is used, and how much of it. It is not when a
 * profile, site tracking, the stats export or the exit report is asked for: they
 * place or count every object by its region. */
static void options_load(void)
{
	extern char **environ;
	uint64_t sh, rs;

	mr_options_load(environ, getauxval(AT_SECURE) != 0, warn_option);
	/* Checked here, not where the arena is set up: a process that never sets it up
	 * (the start-up heap) is told too. */
	rs = MR_OPT(region_size);
	if (rs < (UINT64_C(1) << 20) || rs > (UINT64_C(1) << (MR_MAX_ORDER + MR_PAGE_SHIFT)) ||
	    (rs & (rs - 1))) {
		warn_value("MEMREG_REGION_SIZE", MR_OPT_STR(region_size), "a power of two, 1M..1G");
		mr_options[MR_OPT_region_size].value = mr_options[MR_OPT_region_size].def;
	}
	sh = MR_OPT(start_heap);
	if (sh > MR_START_MAX) {
		warn_value("MEMREG_START_HEAP", MR_OPT_STR(start_heap), "at most 256K");
		sh = mr_options[MR_OPT_start_heap].def;
		mr_options[MR_OPT_start_heap].value = sh;
	}
	if (MR_OPT_STR(profile) || MR_OPT_STR(site_map) || MR_OPT(track_sites) ||
	    MR_OPT(export_stats) || MR_OPT(show_stats))
		sh = 0;
	mr_start_set(sh);
	/* The site maps and the classes page know slabs and spans only. */
	mr_fit_on = !MR_OPT_STR(profile) && !MR_OPT_STR(site_map) && !MR_OPT(track_sites);
}

void mr_options_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	static _Atomic bool done;

	if (MR_LIKELY(atomic_load_explicit(&done, memory_order_acquire)))
		return;
	pthread_once(&once, options_load);
	atomic_store_explicit(&done, true, memory_order_release);
}

static int heap_init(void)
{
	uint64_t rs;
	uint32_t order, nregions, max_regions;
	char *base;
	struct mr_span *spans;

	mr_options_once();
	rs = MR_OPT(region_size);
	order = (uint32_t)__builtin_ctzll(rs) - MR_PAGE_SHIFT;
	max_regions = (uint32_t)(MR_ARENA_MAX / rs < MR_MAX_REGIONS ? MR_ARENA_MAX / rs : MR_MAX_REGIONS);
	if (mr_os_reserve(order, max_regions, &base, &spans, &nregions) != 0)
		return -1;
	mr_heap_init(base, spans, order, nregions);
	mr_fit_init(order);
	mr_os_arena_publish(base, spans, nregions, max_regions);
	mr_tcache_init();
	return 0;
}

/* The fork handlers: os.c's lock hook, run before the first lock taken once the
 * process may have a second thread (a process that never has one needs them only
 * for the stats export: mr_heap_export_open), so a fork made while another thread sets
 * the heap up (and holds its lock) waits for the set-up, rather than leaving the
 * child a lock no thread of its own will release (tests/alloc/fork-init.c). The
 * handlers take static locks only, so they are safe before the set-up or if it
 * fails. pthread_atfork may allocate: through us (os.c lets the hook's thread lock). */
static void register_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The lock hook, and the thread caches' key once: at load (below), or at the first
 * allocation if another module's constructor allocates before ours runs. */
static void start_fork_handlers(void)
{
	static _Atomic int once;

	mr_os_set_lock_hook(register_fork_handlers);
	if (!atomic_exchange(&once, 1))
		mr_tcache_start();
}

__attribute__((constructor)) static void at_load(void)
{
	start_fork_handlers();
}

/* The first allocation sets the heap up. Nothing here allocates through us: the
 * options come from environ, the arena from mmap. */
static bool mr_init_slow(void)
{
	int st = atomic_load_explicit(&init_state, memory_order_acquire);

	if (st == 2)
		return true;
	if (st == -1)
		return false;
	start_fork_handlers();	/* the lock hook in place before the first lock */
	mr_heap_lock();
	st = atomic_load_explicit(&init_state, memory_order_relaxed);
	if (st == 0) {
		st = heap_init() == 0 ? 2 : -1;
		atomic_store_explicit(&init_state, st, memory_order_release);
	}
	mr_heap_unlock();
	if (st == -1) {
		static _Atomic int failed_once;

		/* Said now, not at the first fallback: the process must know at once. The
		 * export (if asked for) says so, with the fallback count. */
		if (!atomic_exchange(&failed_once, 1)) {
			fallback_note_reason();
			mr_stats_set_disabled();
			if (MR_OPT(export_stats))
				mr_heap_export_open(false);
		}
	}
	if (st == 2) {
		static _Atomic int once;

		/* After the heap is ready: these may allocate (through us, safely). */
		if (!atomic_exchange(&once, 1))
			start_reports();
	}
	return st == 2;
}

bool mr_ready(void)
{
	if (MR_LIKELY(atomic_load_explicit(&init_state, memory_order_acquire) == 2))
		return true;
	return mr_init_slow();
}

/* ---- when libmemreg cannot serve ---- */

static _Atomic uint64_t fallbacks;

static _Atomic int fallback_said;

/* The one line on stderr: why, and that glibc serves from now on. */
static void fallback_note_reason(void)
{
	if (!atomic_exchange(&fallback_said, 1)) {
		mr_write_str(2, "libmemreg: ");
		mr_write_str(2, mr_os_failure());
		mr_write_str(2, ": glibc's malloc serves what libmemreg cannot\n");
	}
}

void mr_fallback_note(void)
{
	uint64_t n = atomic_fetch_add_explicit(&fallbacks, 1, memory_order_relaxed) + 1;

	fallback_note_reason();
	mr_stats_fallback(n);
}

/* ---- fork: every layer's locks, top first ---- */

static void fork_prepare(void)
{
	mr_start_fork_lock();
	mr_tcache_lock_all();
	mr_fit_fork_lock();
	mr_heap_fork_lock();
	mr_sites_fork_lock();
}

static void fork_parent(void)
{
	mr_sites_fork_unlock();
	mr_heap_fork_unlock();
	mr_fit_fork_unlock();
	mr_tcache_unlock_all();
	mr_start_fork_unlock();
}

/* The child has only the forking thread: the caches of the others stay theirs,
 * unused (their memory is lost to the child, not corrupted). */
static void fork_child(void)
{
	mr_sites_fork_unlock();
	mr_heap_fork_unlock();
	mr_fit_fork_unlock();
	mr_tcache_unlock_all();
	mr_start_fork_unlock();
	if (mr_stats_after_fork())
		mr_classes_after_fork();
}
