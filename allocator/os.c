/* The OS contract (os.h): the arena's address space, commit, purge, NUMA binding,
 * the clock, locks. Raw system calls only (no libnuma: start-up cost); no policy. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_SYS_SINGLE_THREADED_H
#include <sys/single_threaded.h>
#endif

#include "allocator/internal.h"
#include "allocator/os.h"

char *mr_arena_base;
size_t mr_arena_bytes;
uint32_t mr_arena_max_regions;
struct mr_span *mr_spans;
static size_t region_bytes;	/* the arena's geometry, from mr_os_reserve */
static size_t region_span_bytes;

/* Why the arena could not serve (set where it failed, read by mr_fallback_note). */
static const char *failure = "the arena cannot serve the request";

const char *mr_os_failure(void)
{
	return failure;
}

void mr_os_set_failure(const char *why)
{
	failure = why;
}

/* ---- NUMA: where regions are nodes ---- */

/* The raw system calls; values from <numaif.h>. */
#define MR_MPOL_PREFERRED 1
#define MR_MPOL_F_MEMS_ALLOWED (1 << 2)
#define MR_NODE_IDS 1024

uint32_t mr_os_nnodes;				/* 0 or 1: virtual regions only */
static uint16_t node_id_of[MR_MAX_NODES];	/* group index -> node id */
static uint8_t node_index_of[MR_NODE_IDS];	/* node id -> group index */

/* The nodes this process may use, by one get_mempolicy call (no sysfs). */
void mr_os_numa_detect(void)
{
	unsigned long mask[MR_NODE_IDS / (8 * sizeof(unsigned long))] = { 0 };
	int mode = 0;
	uint32_t id, n = 0;

	if (!MR_OPT(numa) || syscall(SYS_get_mempolicy, &mode, mask, MR_NODE_IDS, NULL,
				     MR_MPOL_F_MEMS_ALLOWED) != 0)
		return;
	for (id = 0; id < MR_NODE_IDS && n < MR_MAX_NODES; id++)
		if (mask[id / (8 * sizeof(unsigned long))] & (1ul << (id % (8 * sizeof(unsigned long))))) {
			node_id_of[n] = (uint16_t)id;
			node_index_of[id] = (uint8_t)n;
			n++;
		}
	mr_os_nnodes = n;
}

/* The group of the calling thread's node (getcpu is a vDSO call). */
uint32_t mr_os_current_node(void)
{
	unsigned cpu, node;

	if (mr_os_nnodes < 2 || getcpu(&cpu, &node) != 0 || node >= MR_NODE_IDS)
		return 0;
	return node_index_of[node];
}

/* Preferred, not bound: a full node falls back instead of the OOM killer. */
void mr_os_bind(void *addr, size_t len, uint32_t node)
{
	unsigned long mask[MR_NODE_IDS / (8 * sizeof(unsigned long))] = { 0 };
	uint32_t id = node_id_of[node];

	mask[id / (8 * sizeof(unsigned long))] = 1ul << (id % (8 * sizeof(unsigned long)));
	syscall(SYS_mbind, addr, len, MR_MPOL_PREFERRED, mask, MR_NODE_IDS, 0);
}

/* ---- moving pages (realloc) ---- */

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

/* mremap moves the page-table entries: no copy, and the source and destination are
 * never both resident, as glibc's realloc of an mmapped chunk does it. With
 * MREMAP_DONTUNMAP (Linux 5.7, private anonymous memory) the source stays mapped,
 * empty, so the arena has no hole to mend. */
bool mr_os_move_pages(void *to, void *from, size_t len)
{
	static _Atomic int unsupported;
	int e = errno;
	long r;

	if (mr_os_nnodes >= 2 || atomic_load_explicit(&unsupported, memory_order_relaxed))
		return false;
	r = syscall(SYS_mremap, from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, to);
	errno = e;
	if (r == (long)(uintptr_t)to)
		return true;
	atomic_store_explicit(&unsupported, 1, memory_order_relaxed);
	return false;
}

/* ---- commit and purge ---- */

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MADV_FREE
#define MADV_FREE 8
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The soft limit of @resource, RLIM_INFINITY if none (or unknown). */
static rlim_t soft_limit(int resource)
{
	struct rlimit rl;

	return getrlimit(resource, &rl) == 0 ? rl.rlim_cur : RLIM_INFINITY;
}

bool mr_os_data_limited(void)
{
	return soft_limit(RLIMIT_DATA) != RLIM_INFINITY;
}

int mr_os_commit(void *addr, size_t len)
{
	if (mprotect(addr, len, PROT_READ | PROT_WRITE) != 0) {
		failure = "cannot commit memory (RLIMIT_DATA or the overcommit limit)";
		return -1;
	}
	return 0;
}

bool mr_os_purge_failed;

/* MADV_DONTNEED fails (EINVAL) on locked pages: mlockall(MCL_FUTURE), mlock, mlock2.
 * They keep their data then, so nothing purged is taken to read zero since
 * (os.h). */
static void dontneed(void *addr, size_t len)
{
	if (madvise(addr, len, MADV_DONTNEED) != 0)
		__atomic_store_n(&mr_os_purge_failed, true, __ATOMIC_RELAXED);
}

void mr_os_purge(void *addr, size_t len)
{
	dontneed(addr, len);
}

/* One range, at once. MADV_FREE needs Linux 4.5: where it fails, DONTNEED does it
 * (clean then too, but the heap does not know: it only costs a calloc a memset). */
static void purge_range(void *addr, size_t len, bool lazy)
{
	if (!lazy || madvise(addr, len, MADV_FREE) != 0)
		dontneed(addr, len);
}

/* The purge batch: ranges given to one process_madvise(2) call on the process
 * itself (PIDFD_SELF_THREAD_GROUP), where the kernel allows it: any advice on
 * itself since Linux 6.13, the sentinel since 6.15, and since 6.16 one TLB flush
 * for the whole vector rather than one per range. A madvise per range flushes the
 * TLB each time: on this project's 2-vCPU VMs (Linux 6.18) 4096 ranges of 64 KiB
 * with 2 pages written took 2.7 to 45 us a range that way, depending on the host,
 * and 1.0 to 1.2 us in batches (bench/purge-batch; docs/allocator.md, "Purges in
 * one call").
 *
 * A call glibc's malloc never makes must not kill the program: under a seccomp
 * filter (OpenSSH's sandbox, systemd's SystemCallFilter= without
 * SystemCallErrorNumber=) an unlisted call is fatal, and programs install filters
 * long after start-up. So before each batched call, the process's own status:
 * under a filter (or where it cannot be read), never again. That costs about 14 us
 * (open, read, close), so only batches of MR_PURGE_BATCH_MIN ranges and more are
 * batched; fewer go a madvise each. Where the call fails (ENOSYS, EINVAL, EBADF: an
 * older kernel; EPERM: a security module), never again either. What a call left
 * undone (it stops at a range it cannot advise: ENOMEM, a hole; or it was
 * interrupted, EINTR, EAGAIN: none says anything of the call itself) is done range
 * by range. Serialised by the caller (the heap lock; empty at a fork, whose
 * prepare handler takes it). */
#define MR_PIDFD_SELF_THREAD_GROUP (-10001)
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
static struct iovec purge_iov[MR_PURGE_BATCH];
static unsigned purge_n;
static bool purge_lazy, purge_unbatched;
uint64_t mr_os_purge_calls, mr_os_purge_batched;

/* Whether a seccomp filter may be on: /proc/self/status's "Seccomp:" not 0, or not
 * read. Raw system calls (an open interposed by another preloaded library may
 * malloc, under the heap lock), a small stack buffer, the field looked for across
 * reads. The process's own status, not the system's: no root-directory layer. */
static bool seccomp_filtered(void)
{
	static const char key[] = "\nSeccomp:\t";
	const size_t klen = sizeof(key) - 1;
	char buf[256];
	size_t have = 0, i;
	bool filtered = true;
	ssize_t n;
	long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return true;
	while ((n = syscall(SYS_read, fd, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)n;
		for (i = 0; i + klen < have; i++)
			if (!memcmp(buf + i, key, klen)) {
				filtered = buf[i + klen] != '0';
				goto out;
			}
		/* Keep the tail that could start the key. */
		i = have > klen ? have - klen : 0;
		memmove(buf, buf + i, have - i);
		have -= i;
	}
out:
	syscall(SYS_close, fd);
	return filtered;
}

void mr_os_purge_flush(void)
{
	size_t done = 0, off = 0;
	unsigned i;
	long r;
	int e;

	if (!purge_n)
		return;
	e = errno;
	if (!purge_unbatched && purge_n >= MR_PURGE_BATCH_MIN) {
		if (seccomp_filtered()) {
			purge_unbatched = true;
		} else {
			r = syscall(SYS_process_madvise, MR_PIDFD_SELF_THREAD_GROUP, purge_iov,
				    (unsigned long)purge_n, purge_lazy ? MADV_FREE : MADV_DONTNEED,
				    0u);
			if (r > 0) {
				done = (size_t)r;
				mr_os_purge_calls++;
				mr_os_purge_batched++;
			} else if (r < 0 && errno != ENOMEM && errno != EINTR && errno != EAGAIN) {
				purge_unbatched = true;
			}
		}
	}
	/* What the call did not do (all of it, unbatched), one range at a time. */
	for (i = 0; i < purge_n; off += purge_iov[i].iov_len, i++) {
		size_t len = purge_iov[i].iov_len, skip;

		if (off + len <= done)
			continue;
		skip = done > off ? done - off : 0;
		purge_range((char *)purge_iov[i].iov_base + skip, len - skip, purge_lazy);
		mr_os_purge_calls++;
	}
	purge_n = 0;
	errno = e;
}

void mr_os_purge_pages(void *addr, size_t len, bool lazy)
{
	struct iovec *last = purge_n ? &purge_iov[purge_n - 1] : NULL;

	if (purge_n && lazy != purge_lazy) {	/* a batch holds one advice */
		mr_os_purge_flush();
		last = NULL;
	}
	if (last && (char *)last->iov_base + last->iov_len == (char *)addr) {
		last->iov_len += len;
		return;
	}
	if (purge_n == MR_PURGE_BATCH)
		mr_os_purge_flush();
	purge_iov[purge_n].iov_base = addr;
	purge_iov[purge_n].iov_len = len;
	purge_n++;
	purge_lazy = lazy;
}

/* MADV_POPULATE_WRITE needs Linux 5.14: where it is unknown (EINVAL), never again.
 * errno is kept: a malloc that succeeds leaves it as it was. */
int mr_os_populate(void *addr, size_t len)
{
	static bool unsupported;
	int e = errno, rc = 0;

	if (__atomic_load_n(&unsupported, __ATOMIC_RELAXED))
		return -1;
	if (madvise(addr, len, MADV_POPULATE_WRITE) != 0) {
		if (errno == EINVAL)
			__atomic_store_n(&unsupported, true, __ATOMIC_RELAXED);
		rc = -1;
	}
	errno = e;
	return rc;
}

uint32_t mr_os_resident_pages(const void *addr, uint32_t npages)
{
	unsigned char vec[MR_OS_RESIDENT_MAX];
	uint32_t i, n = 0;
	int e = errno;

	if (npages > MR_OS_RESIDENT_MAX)
		npages = MR_OS_RESIDENT_MAX;
	if (mincore((void *)addr, (size_t)npages << MR_PAGE_SHIFT, vec) == 0)
		for (i = 0; i < npages; i++)
			n += vec[i] & 1;
	errno = e;
	return n;
}

/* ---- the clock ---- */

/* The decay clock is read by page-heap operations when a purge may be due. libc's
 * clock_gettime calls the vDSO's too, but its wrapper lies on a page of libc that
 * nothing else of libmemreg, of glibc's malloc or of a small program touches, and the
 * first call maps the 64 KiB of libc around it (the kernel's fault-around): up to 64
 * KiB more resident in every process (docs/allocator.md, "Peak RSS against glibc, by
 * cause").
 * So the vDSO's function is called directly, found in the vDSO's symbol table (an ELF
 * image the kernel maps, named by AT_SYSINFO_EHDR; its DT_HASH gives the symbol count:
 * x86's and arm64's vDSOs have one). Without it, or on another architecture, libc's. */
#if defined(__x86_64__) || defined(__i386__) || defined(__riscv)
#define MR_VDSO_CLOCK "__vdso_clock_gettime"
#elif defined(__aarch64__) || defined(__powerpc64__)	/* not s390x: 64-bit hash words */
#define MR_VDSO_CLOCK "__kernel_clock_gettime"
#endif

typedef int (*clock_fn)(clockid_t, struct timespec *);
static int clock_first(clockid_t id, struct timespec *ts);
static clock_fn clock_now = clock_first;
bool mr_os_clock_vdso;

#ifdef MR_VDSO_CLOCK
/* The address of the vDSO's function @name, or NULL. */
static void *vdso_function(const char *name)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Phdr) *ph;
	const ElfW(Dyn) *d = NULL;
	const ElfW(Sym) *sym = NULL;
	const Elf32_Word *hash = NULL;
	const char *str = NULL;
	uintptr_t bias = 0;
	bool loaded = false;
	Elf32_Word i;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return NULL;
	ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !loaded) {
			bias = (uintptr_t)eh + ph[i].p_offset - ph[i].p_vaddr;
			loaded = true;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			d = (const ElfW(Dyn) *)((const char *)eh + ph[i].p_offset);
		}
	}
	if (!loaded || !d)
		return NULL;
	for (; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			sym = (const ElfW(Sym) *)(bias + d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			str = (const char *)(bias + d->d_un.d_ptr);
		else if (d->d_tag == DT_HASH)
			hash = (const Elf32_Word *)(bias + d->d_un.d_ptr);
	}
	if (!sym || !str || !hash)
		return NULL;
	/* nchain: one per symbol; ELF64_ST_TYPE is ELF32_ST_TYPE. */
	for (i = 0; i < hash[1]; i++)
		if (ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC && sym[i].st_shndx != SHN_UNDEF &&
		    !strcmp(str + sym[i].st_name, name))
			return (void *)(bias + sym[i].st_value);
	return NULL;
}
#endif

void mr_os_clock_init(void)
{
	clock_fn fn = clock_gettime;
#ifdef MR_VDSO_CLOCK
	void *v = vdso_function(MR_VDSO_CLOCK);
	struct timespec ts;

	/* Used only if it answers the clock decay reads. */
	if (v && ((clock_fn)v)(CLOCK_MONOTONIC_COARSE, &ts) == 0) {
		fn = (clock_fn)v;
		__atomic_store_n(&mr_os_clock_vdso, true, __ATOMIC_RELAXED);
	}
#endif
	__atomic_store_n(&clock_now, fn, __ATOMIC_RELAXED);
}

/* The first read finds the clock (two threads at once find the same one): a process
 * whose page heap never has a purge to time never reads it, nor faults in the page
 * of the kernel's clock data that the vDSO's function reads. */
static int clock_first(clockid_t id, struct timespec *ts)
{
	mr_os_clock_init();
	return __atomic_load_n(&clock_now, __ATOMIC_RELAXED)(id, ts);
}

uint64_t mr_os_now_ns(void)
{
	struct timespec ts = { 0, 0 };

	__atomic_load_n(&clock_now, __ATOMIC_RELAXED)(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- locks, and the process's second thread ---- */

/* glibc's fork handlers are what a multi-threaded process needs (a fork must not
 * leave the child a lock another thread held), but registering them touches
 * __register_atfork's code and data, and pthread_mutex_trylock reads a jump table:
 * two more places in libc that nothing else touches, each mapping up to 64 KiB
 * around it (the clock's comment above). A process with one thread can hold no lock
 * at a fork but its own, which it does not hold when it forks: so the hook (the
 * handlers) runs before the first lock taken once a second thread may exist; a lock
 * taken while the process had one thread cannot be held when the second starts (no
 * lock is held across a call that starts a thread). The hook runs under
 * pthread_once: the other threads' locks wait for it to end (else one could take a
 * lock, unguarded, before the handlers are in), and a child forked while it ran (in
 * the parent, before glibc's atfork lock) runs it again. The hook may allocate, and
 * so lock: the thread that runs it goes on. */
static void (*_Atomic lock_hook)(void);
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
static _Atomic bool hook_done;
static __thread bool hook_running __attribute__((tls_model("initial-exec")));

bool mr_os_single_threaded(void)
{
#ifdef HAVE_SYS_SINGLE_THREADED_H
	return __libc_single_threaded;
#else
	return false;
#endif
}

void mr_os_set_lock_hook(void (*hook)(void))
{
	atomic_store_explicit(&lock_hook, hook, memory_order_relaxed);
}

static void hook_run(void)
{
	void (*hook)(void) = atomic_load_explicit(&lock_hook, memory_order_relaxed);

	hook_running = true;
	if (hook)
		hook();
	hook_running = false;
	atomic_store_explicit(&hook_done, true, memory_order_release);
}

void mr_os_run_lock_hook(void)
{
	if (!hook_running)
		pthread_once(&hook_once, hook_run);
}

static inline void lock_guard(void)
{
	if (MR_UNLIKELY(!atomic_load_explicit(&hook_done, memory_order_acquire)) &&
	    !mr_os_single_threaded())
		mr_os_run_lock_hook();
}

/* The locks this thread holds for a fork (os.h, mr_os_fork_lock). */
#define MR_FORK_LOCKS 8
static __thread pthread_mutex_t *fork_held[MR_FORK_LOCKS] __attribute__((tls_model("initial-exec")));
static __thread unsigned fork_nheld __attribute__((tls_model("initial-exec")));

static bool held_for_fork(const pthread_mutex_t *m)
{
	for (unsigned i = 0; i < fork_nheld; i++)
		if (fork_held[i] == m)
			return true;
	return false;
}

void mr_os_lock(pthread_mutex_t *m)
{
	lock_guard();
	if (MR_UNLIKELY(fork_nheld) && held_for_fork(m))
		return;
	pthread_mutex_lock(m);
}

bool mr_os_trylock(pthread_mutex_t *m)
{
	lock_guard();
	if (MR_UNLIKELY(fork_nheld) && held_for_fork(m))
		return true;
	return pthread_mutex_trylock(m) == 0;
}

void mr_os_unlock(pthread_mutex_t *m)
{
	if (MR_UNLIKELY(fork_nheld) && held_for_fork(m))
		return;
	pthread_mutex_unlock(m);
}

void mr_os_fork_lock(pthread_mutex_t *m)
{
	mr_os_lock(m);
	if (fork_nheld < MR_FORK_LOCKS)
		fork_held[fork_nheld++] = m;
}

void mr_os_fork_unlock(pthread_mutex_t *m)
{
	for (unsigned i = 0; i < fork_nheld; i++)
		if (fork_held[i] == m) {
			fork_held[i] = fork_held[--fork_nheld];
			break;
		}
	pthread_mutex_unlock(m);
}

/* ---- the arena's address space ---- */

/* @bytes of address space exactly at @addr, PROT_NONE, never replacing a mapping;
 * NULL if any of it is taken (or the kernel, before 4.17, took the flag as a hint). */
static char *map_at(char *addr, size_t bytes)
{
	char *p = mmap(addr, bytes, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (p != addr) {
		munmap(p, bytes);
		return NULL;
	}
	return p;
}

/* Grow the arena in place to at least @want regions (at most the window): its
 * pages and its descriptors, each right above what is reserved. Doubling first
 * (few mappings), else just @want. Returns the new region count; the old one if
 * @want is beyond the window (that request cannot be met, others may); 0 if the
 * arena cannot grow: RLIMIT_AS, or the address space above is taken. */
uint32_t mr_os_grow(uint32_t old, uint32_t want)
{
	uint32_t n;
	size_t rb = region_bytes, sb = region_span_bytes;

	if (want > mr_arena_max_regions) {
		failure = "the arena is full";
		return old;
	}
	n = old * 2 < mr_arena_max_regions ? old * 2 : mr_arena_max_regions;
	if (n < want)
		n = want;
	for (;;) {
		char *a = map_at(mr_arena_base + (size_t)old * rb, (size_t)(n - old) * rb);

		if (a) {
			if (map_at((char *)mr_spans + (size_t)old * sb, (size_t)(n - old) * sb)) {
				__atomic_store_n(&mr_arena_bytes, (size_t)n * rb, __ATOMIC_RELEASE);
				return n;
			}
			munmap(a, (size_t)(n - old) * rb);
		}
		if (n == want)
			break;
		n = want;
	}
	failure = "the arena cannot grow (RLIMIT_AS, or the address space above it is taken)";
	return 0;
}

/* The space below each reservation stays aligned to this. mmap hands out addresses
 * top-down, so the program's next mappings go right below the lowest one the arena
 * made: a reservation whose bottom is a page off a boundary puts every later
 * mapping a page off it too. The descriptors' 3 GiB + 4 KiB (page alignment asked
 * for, and paid for with a page) did that, and CPython's pymalloc, whose 1 MiB arenas
 * hold 64 pools of 16 KiB when aligned and 63 otherwise, then mapped about 35 more
 * of them (9 K more page faults) in alloc-bench's python: in 16 runs of 20, against
 * 4 of 20 under glibc, whose own mappings vary the offset. 2 MiB: a huge page, and
 * any smaller power of two a program may align its mappings to. */
#define RESERVE_ALIGN (UINT64_C(1) << 21)

/* Reserve @bytes of address space aligned to @align (at least RESERVE_ALIGN, which
 * the space left below it keeps), costing nothing until used. With @slack, the
 * slack above the aligned bytes stays reserved too (PROT_NONE) and *@slack says how
 * much: for the window reserved whole, which never grows, so that the hole above it
 * (up to @align) does not take the program's next mappings at whatever offset the
 * mapping above that hole has. */
static char *reserve(size_t bytes, size_t align, size_t *slack)
{
	char *p;
	uintptr_t a;
	size_t above;

	if (align < RESERVE_ALIGN)
		align = RESERVE_ALIGN;
	p = mmap(NULL, bytes + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	above = (uintptr_t)p + align - a;
	if (slack)
		*slack = above;
	else if (above)
		munmap((char *)a + bytes, above);
	return (char *)a;
}

/* Under RLIMIT_AS the window cannot be reserved whole: reserve its first @step
 * bytes (and @sstep of descriptors), placed so that the window above them is free
 * for growth. mmap hands out addresses top-down, so the window goes right below the
 * lowest mapping (found by a probe): the program's later mappings fill free space
 * from the top and the arena grows from the bottom, meeting only if both together
 * exceed the window (which an RLIMIT_AS below the window's size forbids). */
static int reserve_stepped(size_t step, size_t sstep, size_t max, size_t smax, size_t align,
			   char **base, struct mr_span **spans)
{
	char *probe = mmap(NULL, step + align, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t top, b, sb;

	if (probe == MAP_FAILED)
		return -1;
	munmap(probe, step + align);
	top = (uintptr_t)probe + step + align;
	if (top > max + smax + align + (UINT64_C(1) << 32)) {
		b = (top - max) & ~(uintptr_t)(align - 1);
		sb = (b - smax) & ~(uintptr_t)(RESERVE_ALIGN - 1);
		*base = map_at((char *)b, step);
		*spans = *base ? (struct mr_span *)map_at((char *)sb, sstep) : NULL;
		if (*spans)
			return 0;
		if (*base)
			munmap(*base, step);
	}
	/* No room below: anywhere (growth then finds out what is above). */
	*base = reserve(step, align, NULL);
	*spans = *base ? (struct mr_span *)reserve(sstep, RESERVE_ALIGN, NULL) : NULL;
	if (*spans)
		return 0;
	if (*base)
		munmap(*base, step);
	return -1;
}

/* The first step under RLIMIT_AS: at most an eighth of the limit (one region at
 * least), so that the program's own mappings keep the rest; the arena grows in place
 * as it needs. The largest share that fit, as before, took half of an 8 GiB limit
 * or more: a JVM's heap and class space, a mmap of three quarters of the limit and
 * half of the threads' stacks no longer fitted (under glibc they do). */
static uint32_t first_step(uint32_t max_regions, size_t rs)
{
	rlim_t as = soft_limit(RLIMIT_AS);
	uint32_t n = max_regions / 2;

	if (as != RLIM_INFINITY)
		while (n > 1 && (uint64_t)n * rs > as / 8)
			n /= 2;
	return n;
}

int mr_os_reserve(uint32_t region_order, uint32_t max_regions, char **base,
		  struct mr_span **spans, uint32_t *nregions)
{
	size_t rs = (size_t)1 << (region_order + MR_PAGE_SHIFT);
	size_t align = rs;	/* larger alignments come from the base's phase (find_run) */
	size_t max_bytes = (size_t)max_regions * rs;
	size_t max_sbytes = max_bytes / MR_PAGE_SIZE * sizeof(struct mr_span);
	size_t slack = 0, sslack = 0;	/* the descriptors' is never given back */
	uint32_t n;

	region_bytes = rs;
	region_span_bytes = ((size_t)1 << region_order) * sizeof(struct mr_span);
	/* The whole window at once where RLIMIT_AS allows it (no growth ever needed). */
	n = max_regions;
	*base = reserve(max_bytes, align, &slack);
	*spans = *base ? (struct mr_span *)reserve(max_sbytes, RESERVE_ALIGN, &sslack) : NULL;
	if (!*spans) {
		if (*base)
			munmap(*base, max_bytes + slack);
		for (n = first_step(max_regions, rs); n; n /= 2)
			if (reserve_stepped((size_t)n * rs, max_sbytes / max_regions * n,
					    max_bytes, max_sbytes, align, base, spans) == 0)
				break;
		if (!n) {
			failure = "cannot reserve address space for the arena (RLIMIT_AS?)";
			return -1;
		}
	}
	*nregions = n;
	return 0;
}

void mr_os_arena_publish(char *base, struct mr_span *spans, uint32_t nregions,
			 uint32_t max_regions)
{
	mr_spans = spans;
	mr_arena_max_regions = max_regions;
	__atomic_store_n(&mr_arena_base, base, __ATOMIC_RELAXED);	/* mr_in_arena reads it */
	/* Last, with release: a thread that reads a size other than 0 (mr_in_arena,
	 * acquire) sees the base and the descriptors too. Another thread's free may
	 * run while this one sets the arena up (TSan saw the two race). */
	__atomic_store_n(&mr_arena_bytes, (size_t)nregions * region_bytes, __ATOMIC_RELEASE);
}
