/* Allocation sites and their temperature: a fixed table keyed by return address,
 * filled from MEMREG_PROFILE (sites as module build-id + offset, so profiles survive
 * ASLR), memreg_site_set_class() and a controller's classes page (the live hand-over,
 * classes-format.h); the site map, at exit or live. Lookups are lock-free; nothing
 * here allocates. */
#define _GNU_SOURCE 1
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "allocator/classes-format.h"
#include "allocator/heap.h"
#include "allocator/internal.h"
#include "allocator/os.h"
#include "allocator/sites.h"
#include "allocator/stats.h"

#define SITE_BITS 14
#define SITE_SLOTS (1u << SITE_BITS)

struct site_slot {
	_Atomic uintptr_t addr;	/* 0: empty */
	uint8_t temp;
};

int mr_sites_on;
static struct site_slot sites[SITE_SLOTS];
static pthread_mutex_t sites_lock MR_LINE_ALIGNED = PTHREAD_MUTEX_INITIALIZER;
/* The live hand-over's: one thread at a time reads the classes page or writes a site
 * map (see mr_classes_poll). */
static pthread_mutex_t poll_lock MR_LINE_ALIGNED = PTHREAD_MUTEX_INITIALIZER;
static unsigned nsites;

static inline uint32_t site_hash(uintptr_t a)
{
	return (uint32_t)((a * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - SITE_BITS));
}

enum mr_temp mr_site_temp(const void *ret, enum mr_temp def)
{
	uintptr_t a = (uintptr_t)ret;
	uint32_t i = site_hash(a), n;

	for (n = 0; n < SITE_SLOTS; n++, i = (i + 1) & (SITE_SLOTS - 1)) {
		uintptr_t s = atomic_load_explicit(&sites[i].addr, memory_order_acquire);

		if (s == a)
			return (enum mr_temp)sites[i].temp;
		if (s == 0)
			return def;
	}
	return def;
}

/* Set or change a site's class. The table is 3/4 full at most. */
int mr_site_set(const void *ret, enum mr_temp temp)
{
	uintptr_t a = (uintptr_t)ret;
	uint32_t i = site_hash(a);
	int rc = 0;

	mr_os_lock(&sites_lock);
	for (;; i = (i + 1) & (SITE_SLOTS - 1)) {
		uintptr_t s = atomic_load_explicit(&sites[i].addr, memory_order_relaxed);

		if (s == a) {
			sites[i].temp = (uint8_t)temp;
			break;
		}
		if (s == 0) {
			if (nsites >= SITE_SLOTS / 4 * 3) {
				rc = -12;	/* -ENOMEM */
				break;
			}
			sites[i].temp = (uint8_t)temp;
			atomic_store_explicit(&sites[i].addr, a, memory_order_release);
			nsites++;
			break;
		}
	}
	mr_os_unlock(&sites_lock);
	if (rc == 0)
		__atomic_store_n(&mr_sites_on, 1, __ATOMIC_RELEASE);
	return rc;
}

void mr_sites_lock(void)
{
	mr_os_lock(&sites_lock);
}

void mr_sites_unlock(void)
{
	mr_os_unlock(&sites_lock);
}

void mr_sites_fork_lock(void)
{
	mr_os_fork_lock(&sites_lock);
}

void mr_sites_fork_unlock(void)
{
	mr_os_fork_unlock(&sites_lock);
}

/* ---- build-ids of the loaded modules ---- */

/* The GNU build-id of a loaded module as lower-case hex; 0 if none. */
static int module_build_id(const struct dl_phdr_info *info, char *hex, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *desc;
			size_t namesz = (n->n_namesz + 3) & ~3u, descsz = (n->n_descsz + 3) & ~3u, k;

			desc = (const unsigned char *)p + sizeof(*n) + namesz;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + sizeof(*n), "GNU", 4) == 0 && n->n_descsz * 2 < len) {
				for (k = 0; k < n->n_descsz; k++) {
					hex[2 * k] = digits[desc[k] >> 4];
					hex[2 * k + 1] = digits[desc[k] & 15];
				}
				hex[2 * k] = '\0';
				return 1;
			}
			p += sizeof(*n) + namesz + descsz;
		}
	}
	return 0;
}

struct resolve_arg {
	const char *build_id;	/* hex */
	size_t id_len;
	uintptr_t base;
	int found;
};

static int resolve_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct resolve_arg *a = data;
	char hex[130];

	(void)size;
	if (!module_build_id(info, hex, sizeof(hex)))
		return 0;
	if (strlen(hex) != a->id_len || strncmp(hex, a->build_id, a->id_len) != 0)
		return 0;
	a->base = info->dlpi_addr;
	a->found = 1;
	return 1;
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *skip_word(const char *p, const char *end)
{
	while (p < end && *p != ' ' && *p != '\t' && *p != '\n')
		p++;
	return p;
}

static int parse_hex(const char *p, const char *end, uintptr_t *out)
{
	uintptr_t v = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (p == end || end - p > 16)
		return -1;
	for (; p < end; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 :
			*p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;

		if (d < 0)
			return -1;
		v = v << 4 | (uintptr_t)d;
	}
	*out = v;
	return 0;
}

static void profile_warn(const char *path, unsigned line, const char *what)
{
	char num[24];

	mr_write_str(2, "libmemreg: ");
	mr_write_str(2, path);
	mr_write_str(2, ":");
	mr_fmt_u64(num, line);
	mr_write_str(2, num);
	mr_write_str(2, ": ");
	mr_write_str(2, what);
	mr_write_str(2, "; profile ignored from here\n");
}

/* Load a MEMREG_PROFILE (format in docs/allocator.md):
 *   memreg-profile 1
 *   <build-id hex> <offset hex> hot|normal|cold [anything: a comment]
 * Lines starting with '#' and empty lines are skipped. Returns the sites set. */
int mr_profile_load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
	off_t size;
	const char *buf, *p, *end;
	unsigned line = 0;

	if (fd < 0) {
		mr_write_str(2, "libmemreg: cannot open MEMREG_PROFILE ");
		mr_write_str(2, path);
		mr_write_str(2, "\n");
		return -1;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0) {
		close(fd);
		profile_warn(path, 1, "empty file");
		return -1;
	}
	buf = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (buf == MAP_FAILED)
		return -1;
	end = buf + size;
	for (p = buf; p < end; p = p < end ? p + 1 : p) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *w, *we;
		struct resolve_arg ra = { 0 };
		uintptr_t off;
		enum mr_temp t;

		if (!eol)
			eol = end;
		line++;
		w = skip_space(p, eol);
		if (line == 1) {
			if ((size_t)(eol - w) < 16 || memcmp(w, "memreg-profile 1", 16) != 0 ||
			    (eol - w > 16 && w[16] != ' ' && w[16] != '\t' && w[16] != '\r')) {
				profile_warn(path, line, "first line is not 'memreg-profile 1'");
				break;
			}
			p = eol;
			continue;
		}
		if (w == eol || *w == '#') {
			p = eol;
			continue;
		}
		we = skip_word(w, eol);
		ra.build_id = w;
		ra.id_len = (size_t)(we - w);
		w = skip_space(we, eol);
		we = skip_word(w, eol);
		if (parse_hex(w, we, &off) != 0) {
			profile_warn(path, line, "bad offset");
			break;
		}
		w = skip_space(we, eol);
		we = skip_word(w, eol);
		if (we - w == 3 && memcmp(w, "hot", 3) == 0)
			t = MR_TEMP_HOT;
		else if (we - w == 6 && memcmp(w, "normal", 6) == 0)
			t = MR_TEMP_NORMAL;
		else if (we - w == 4 && memcmp(w, "cold", 4) == 0)
			t = MR_TEMP_COLD;
		else {
			profile_warn(path, line, "class is not hot, normal or cold");
			break;
		}
		/* Sites of modules not loaded yet are skipped: a profile names sites of
		 * the program and its libraries, loaded before their first allocation. */
		dl_iterate_phdr(resolve_cb, &ra);
		if (ra.found && mr_site_set((const void *)(ra.base + off), t) == 0)
			n++;
		p = eol;
	}
	munmap((void *)buf, (size_t)size);
	return n;
}

void mr_sites_init(void)
{
	if (MR_OPT_STR(profile))
		mr_profile_load(MR_OPT_STR(profile));
}

/* ---- the site of an address, for the site map ---- */

struct locate_arg {
	uintptr_t addr;
	uintptr_t base;
	const char *path;
	char build_id[130];
	int found;
};

static int locate_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct locate_arg *a = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a->addr >= lo && a->addr < lo + ph->p_memsz) {
			a->base = info->dlpi_addr;
			a->path = info->dlpi_name;
			if (!module_build_id(info, a->build_id, sizeof(a->build_id)))
				strcpy(a->build_id, "-");
			a->found = 1;
			return 1;
		}
	}
	return 0;
}

/* Module build-id, path and offset of a code address; 0 if in no module. */
int mr_site_locate(uintptr_t addr, char *build_id, size_t len, const char **path, uintptr_t *off)
{
	struct locate_arg a = { 0 };

	a.addr = addr;
	dl_iterate_phdr(locate_cb, &a);
	if (!a.found)
		return 0;
	strncpy(build_id, a.build_id, len - 1);
	build_id[len - 1] = '\0';
	*path = a.path && *a.path ? a.path : "(main program)";
	*off = addr - a.base;
	return 1;
}

/* ---- site tracking for the site map (MEMREG_SITE_MAP) ---- */

/* Site id of the object at each 16-byte granule of the arena (0: none), and the
 * return address of each site id. Only when tracking: a side table of arena/8. */
uint16_t *mr_site_ids;
#define MAX_SIDS 65535u
static uintptr_t sid_addr[MAX_SIDS + 1];
static uint32_t nsids;
static struct { _Atomic uintptr_t addr; _Atomic uint16_t sid; } sid_hash[1u << 17];

void mr_sites_track(void)
{
	/* For the whole window the arena may grow to: the table never moves. */
	void *m = mmap(NULL, ((size_t)mr_arena_max_regions << (mr_heap.region_order + MR_PAGE_SHIFT)) / 8,
		       PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED) {
		mr_write_str(2, "libmemreg: no memory for MEMREG_SITE_MAP; not tracking sites\n");
		return;
	}
	mr_site_ids = m;
	__atomic_store_n(&mr_sites_on, 1, __ATOMIC_RELEASE);
}

uint16_t mr_site_id(const void *ret)
{
	uintptr_t a = (uintptr_t)ret;
	uint32_t mask = (1u << 17) - 1, i = (uint32_t)((a * UINT64_C(0x9E3779B97F4A7C15)) >> 47) & mask;
	uint16_t sid = 0;

	mr_classes_poll();
	for (;; i = (i + 1) & mask) {
		uintptr_t s = atomic_load_explicit(&sid_hash[i].addr, memory_order_acquire);

		if (s == a) {
			/* The inserter sets the id before the address. */
			return atomic_load_explicit(&sid_hash[i].sid, memory_order_relaxed);
		}
		if (s == 0)
			break;
	}
	mr_os_lock(&sites_lock);
	for (;; i = (i + 1) & mask) {
		uintptr_t s = atomic_load_explicit(&sid_hash[i].addr, memory_order_relaxed);

		if (s == a) {
			sid = atomic_load_explicit(&sid_hash[i].sid, memory_order_relaxed);
			break;
		}
		if (s == 0) {
			if (nsids >= MAX_SIDS)
				break;	/* 0: sites past the limit go unnamed */
			sid = (uint16_t)++nsids;
			sid_addr[sid] = a;
			atomic_store_explicit(&sid_hash[i].sid, sid, memory_order_relaxed);
			atomic_store_explicit(&sid_hash[i].addr, a, memory_order_release);
			break;
		}
	}
	mr_os_unlock(&sites_lock);
	return sid;
}

/* A small buffered writer on a file descriptor: no stdio (it allocates). With
 * @at >= 0 it writes at that file offset (pwrite: the export memfd, whose file
 * position is nobody's business). @total: bytes flushed. */
struct wbuf {
	int fd;
	size_t n;
	int err;
	int64_t at;
	uint64_t total;
	char b[1 << 16];
};

static void wb_flush(struct wbuf *w)
{
	size_t off = 0;

	while (off < w->n) {
		ssize_t k = w->at >= 0 ? pwrite(w->fd, w->b + off, w->n - off, (off_t)(w->at + w->total)) :
					 write(w->fd, w->b + off, w->n - off);

		if (k <= 0) {
			w->err = 1;
			break;
		}
		off += (size_t)k;
		w->total += (uint64_t)k;
	}
	w->n = 0;
}

static void wb_str(struct wbuf *w, const char *s)
{
	size_t len = strlen(s);

	if (w->n + len > sizeof(w->b))
		wb_flush(w);
	if (len > sizeof(w->b))
		return;
	memcpy(w->b + w->n, s, len);
	w->n += len;
}

static void wb_u64(struct wbuf *w, uint64_t v)
{
	char b[24];

	mr_fmt_u64(b, v);
	wb_str(w, b);
}

static void wb_hex(struct wbuf *w, uint64_t v)
{
	static const char d[] = "0123456789abcdef";
	char b[20];
	int i = 19;

	b[i] = '\0';
	do {
		b[--i] = d[v & 15];
		v >>= 4;
	} while (v);
	b[--i] = 'x';
	b[--i] = '0';
	wb_str(w, b + i);
}

/* Per page: (site, bytes) pairs, merged while one page is walked. */
struct page_acc {
	uint16_t sid[64];
	uint64_t bytes[64];
	unsigned n;
};

static void acc_add(struct page_acc *a, uint16_t sid, uint64_t bytes)
{
	unsigned i;

	for (i = 0; i < a->n; i++)
		if (a->sid[i] == sid) {
			a->bytes[i] += bytes;
			return;
		}
	if (a->n < 64) {
		a->sid[a->n] = sid;
		a->bytes[a->n++] = bytes;
	}
}

static void acc_emit(struct wbuf *w, struct page_acc *a, uintptr_t page_addr)
{
	unsigned i;

	if (!a->n)
		return;
	wb_str(w, "page ");
	wb_hex(w, page_addr);
	for (i = 0; i < a->n; i++) {
		wb_str(w, " ");
		wb_u64(w, a->sid[i]);
		wb_str(w, ":");
		wb_u64(w, a->bytes[i]);
	}
	wb_str(w, "\n");
	a->n = 0;
}

/* Emit the site map (format in docs/allocator.md) to @w: which pages hold which
 * sites' live objects now. Walks the heap under its lock (the sites lock first,
 * released before: never both, in fork_prepare's order or any other). */
static void site_map_emit(struct wbuf *w)
{
	static struct page_acc acc;
	const struct mr_heap *h = &mr_heap;
	uint32_t r, sid, page, end;

	acc.n = 0;
	wb_str(w, "memreg-site-map 1\npage_size 4096\npid ");
	wb_u64(w, (uint64_t)getpid());
	wb_str(w, "\n");
	mr_sites_lock();
	for (sid = 1; sid <= nsids; sid++) {
		char id[130];
		const char *mpath;
		uintptr_t off;

		wb_str(w, "site ");
		wb_u64(w, sid);
		if (mr_site_locate(sid_addr[sid], id, sizeof(id), &mpath, &off)) {
			wb_str(w, " ");
			wb_str(w, id);
			wb_str(w, " ");
			wb_hex(w, off);
			wb_str(w, " ");
			wb_str(w, mpath);
		} else {
			wb_str(w, " - ");
			wb_hex(w, sid_addr[sid]);
			wb_str(w, " -");
		}
		wb_str(w, "\n");
	}
	mr_sites_unlock();
	mr_heap_lock();
	for (r = 0; r < h->nregions; r++) {
		if (h->regions[r].state == MR_REGION_UNUSED || !h->regions[r].used_pages)
			continue;
		page = r << h->region_order;
		end = page + h->regions[r].fresh;	/* above: untouched, no heads */
		while (page < end) {
			const struct mr_span *s = &h->spans[page];
			uint32_t np = 1;

			if (s->head == page && s->kind == MR_SPAN_SLAB) {
				uint32_t size = mr_class_size[s->cls], i;
				char *base = mr_page_addr(page);
				uintptr_t cur_page = (uintptr_t)base;

				np = mr_span_pages(s);
				for (i = 0; i < s->bump; i++) {
					char *o = base + (size_t)i * size;
					uint16_t id = mr_site_ids[mr_site_slot(o)];
					uint64_t left = size;

					if (!id)
						continue;
					/* An object may span pages: count its bytes on each. */
					while (left) {
						uintptr_t pg = (uintptr_t)o & ~(uintptr_t)(MR_PAGE_SIZE - 1);
						uint64_t here = pg + MR_PAGE_SIZE - (uintptr_t)o;

						if (here > left)
							here = left;
						if (pg != cur_page) {
							acc_emit(w, &acc, cur_page);
							cur_page = pg;
						}
						acc_add(&acc, id, here);
						o += here;
						left -= here;
					}
				}
				acc_emit(w, &acc, cur_page);
			} else if (s->head == page && (s->kind == MR_SPAN_LARGE || s->kind == MR_SPAN_HUGE)) {
				char *base = mr_page_addr(page);
				uint16_t id = mr_site_ids[mr_site_slot(base)];
				uint32_t i;

				np = s->npages;
				for (i = 0; id && i < np; i++) {
					acc_add(&acc, id, MR_PAGE_SIZE);
					acc_emit(w, &acc, (uintptr_t)base + ((size_t)i << MR_PAGE_SHIFT));
				}
			} else if (s->kind == MR_SPAN_FREE && s->head == page) {
				np = UINT32_C(1) << s->order;
			}
			page += np ? np : 1;
		}
	}
	mr_heap_unlock();
	wb_flush(w);
}

/* Write the site map to @path: at exit (MEMREG_SITE_MAP). */
void mr_site_map_write(const char *path)
{
	static struct wbuf w;
	static char name[4096];

	if (!mr_site_ids)
		return;
	w.fd = mr_option_open_output(path, name, sizeof(name));
	if (w.fd == -2)
		return;		/* another process's file (see mr_option_open_output) */
	if (w.fd < 0) {
		int e = errno;

		mr_write_str(2, "libmemreg: cannot write MEMREG_SITE_MAP ");
		mr_write_str(2, e == ENAMETOOLONG ? path : name);
		mr_write_str(2, e == ELOOP ? ": a symbolic link\n" : "\n");
		return;
	}
	w.n = 0;
	w.at = -1;
	w.total = 0;
	w.err = 0;
	mr_os_lock(&poll_lock);
	site_map_emit(&w);
	mr_os_unlock(&poll_lock);
	if (close(w.fd) != 0 || w.err)
		mr_write_str(2, "libmemreg: error writing MEMREG_SITE_MAP\n");
}

/* ---- the live hand-over: the classes page and the live site map ---- */

/* poll_lock (top of the file): one thread at a time reads the page or writes the
 * map (trylock: the others go on allocating); the at-exit map writer takes it too,
 * for the shared buffers. */
static uint64_t seen_generation, seen_map_request;
static struct mr_alloc_class_entry class_copy[(MR_ALLOC_CLASSES_BYTES -
					       sizeof(struct mr_alloc_classes)) /
					      sizeof(struct mr_alloc_class_entry)];

static void hex_id(const uint8_t *id, unsigned len, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	unsigned k;

	for (k = 0; k < len; k++) {
		hex[2 * k] = digits[id[k] >> 4];
		hex[2 * k + 1] = digits[id[k] & 15];
	}
	hex[2 * k] = '\0';
}

/* Copy the page's entries under its seqlock and set each site's class. Returns 0,
 * or -1 when the controller was writing (tried again on a later call). */
static int classes_apply(struct mr_alloc_classes *c)
{
	uint64_t s1, s2, gen, set = 0;
	uint32_t n, i;

	s1 = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
	if (s1 & 1)
		return -1;
	gen = __atomic_load_n(&c->generation, __ATOMIC_RELAXED);
	n = __atomic_load_n(&c->count, __ATOMIC_RELAXED);
	if (n > c->capacity || n > sizeof(class_copy) / sizeof(class_copy[0]))
		n = 0;	/* a bad page sets nothing; its generation is still answered */
	memcpy(class_copy, (const void *)c->entry, (size_t)n * sizeof(class_copy[0]));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&c->seq, __ATOMIC_RELAXED);
	if (s1 != s2)
		return -1;
	for (i = 0; i < n; i++) {
		const struct mr_alloc_class_entry *e = &class_copy[i];
		struct resolve_arg ra = { 0 };
		char hex[2 * MR_ALLOC_CLASSES_BUILD_ID_MAX + 1];

		if (e->cls >= NR_MR_ALLOC_CLASS || !e->build_id_len ||
		    e->build_id_len > MR_ALLOC_CLASSES_BUILD_ID_MAX)
			continue;
		hex_id(e->build_id, e->build_id_len, hex);
		ra.build_id = hex;
		ra.id_len = 2u * e->build_id_len;
		/* sites of modules not loaded (any more) are skipped, as in a profile */
		dl_iterate_phdr(resolve_cb, &ra);
		if (ra.found && mr_site_set((const void *)(ra.base + e->offset), (enum mr_temp)e->cls) == 0)
			set++;
	}
	seen_generation = gen;
	__atomic_store_n(&c->applied_sites, set, __ATOMIC_RELAXED);
	__atomic_store_n(&c->applied_generation, gen, __ATOMIC_RELEASE);
	return 0;
}

/* Answer a map request: the site map text at map_offset in the memfd, then its
 * length, then the request answered (release: the reader sees the text). */
static void live_map_write(struct mr_alloc_classes *c, uint64_t req)
{
	static struct wbuf w;
	int fd = mr_stats_export_fd();

	if (fd < 0)
		return;
	w.fd = fd;
	w.n = 0;
	w.err = 0;
	w.at = (int64_t)c->map_offset;
	w.total = 0;
	site_map_emit(&w);
	if (w.err)
		w.total = 0;	/* the reader gets an empty map: no half a map */
	/* what a longer map before left beyond it goes back to the system */
	if (ftruncate(fd, (off_t)(c->map_offset + w.total)) != 0)
		w.total = 0;
	seen_map_request = req;
	__atomic_store_n(&c->map_bytes, w.total, __ATOMIC_RELAXED);
	__atomic_store_n(&c->map_generation, req, __ATOMIC_RELEASE);
}

/* On the allocator's slow path (every allocation site tracking sees): a few loads
 * unless the controller wrote a new generation or asked for a map. */
void mr_classes_poll(void)
{
	struct mr_alloc_classes *c = mr_stats_classes();
	uint64_t gen, req;

	if (MR_LIKELY(!c))
		return;
	gen = __atomic_load_n(&c->generation, __ATOMIC_ACQUIRE);
	req = __atomic_load_n(&c->map_request, __ATOMIC_ACQUIRE);
	if (MR_LIKELY(gen == seen_generation && req == seen_map_request))
		return;
	if (!mr_os_trylock(&poll_lock))
		return;
	if (gen != seen_generation)
		classes_apply(c);
	if (req != seen_map_request)
		live_map_write(c, req);
	mr_os_unlock(&poll_lock);
}

/* The child of a fork starts a new export: nothing seen, no poll in progress. */
void mr_classes_after_fork(void)
{
	pthread_mutex_init(&poll_lock, NULL);
	seen_generation = seen_map_request = 0;
}
