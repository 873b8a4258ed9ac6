/* memreg-accessgen: generate a known memory access pattern from a small config
 * (areas, each its own mapping; phases of sequential or random reads/writes), so
 * monitors can be checked against what was really accessed. See docs/monitor.md. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#ifndef MR_PKGDATADIR
#define MR_PKGDATADIR "/usr/share/memreg"
#endif

#define MAX_AREAS 64
#define MAX_PHASES 256

enum pattern { SEQ, RANDOM };
enum op { OP_READ, OP_WRITE, OP_RW };

struct area {
	char name[32];
	uint64_t size_bytes;
	unsigned char *mem;
};

struct phase {
	uint64_t duration_us;
	unsigned areas[MAX_AREAS];
	unsigned nr_areas;
	enum pattern pattern;
	enum op op;
};

struct config {
	struct area areas[MAX_AREAS];
	unsigned nr_areas;
	struct phase phases[MAX_PHASES];
	unsigned nr_phases;
	unsigned loops;
	uint64_t stride_bytes;	/* one access per stride: 64 a cache line, 4096 a page */
};

static const char *prog = "memreg-accessgen";

static int fail(const char *file, unsigned line, const char *fmt, ...) MR_PRINTF(3, 4);
static int fail(const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s:%u: ", prog, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* "5s", "500ms", "2.5s", "100us" */
static int parse_duration(const char *s, uint64_t *us)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || v > 1e7)
		return -1;
	if (!strcmp(end, "s"))
		*us = (uint64_t)(v * 1e6);
	else if (!strcmp(end, "ms"))
		*us = (uint64_t)(v * 1e3);
	else if (!strcmp(end, "us"))
		*us = (uint64_t)v;
	else
		return -1;
	return *us ? 0 : -1;
}

static int find_area(const struct config *c, const char *name)
{
	unsigned i;

	for (i = 0; i < c->nr_areas; i++)
		if (!strcmp(c->areas[i].name, name))
			return (int)i;
	return -1;
}

static int parse_config(FILE *f, const char *file, struct config *c)
{
	char line[1024];
	unsigned ln = 0;

	memset(c, 0, sizeof(*c));
	c->loops = 1;
	c->stride_bytes = 64;
	while (fgets(line, sizeof(line), f)) {
		char *tok[8], *save = NULL, *p;
		unsigned n = 0;

		ln++;
		if (!strchr(line, '\n') && !feof(f))
			return fail(file, ln, "line too long");
		p = strchr(line, '#');
		if (p)
			*p = '\0';
		for (p = strtok_r(line, " \t\r\n", &save); p; p = strtok_r(NULL, " \t\r\n", &save)) {
			if (n == MR_ARRAY_SIZE(tok))
				return fail(file, ln, "too many words");
			tok[n++] = p;
		}
		if (!n)
			continue;
		if (!strcmp(tok[0], "area")) {
			struct area *a;

			if (n != 3)
				return fail(file, ln, "want: area NAME SIZE");
			if (c->nr_areas == MAX_AREAS)
				return fail(file, ln, "more than %d areas", MAX_AREAS);
			if (find_area(c, tok[1]) >= 0 || strlen(tok[1]) >= sizeof(a->name) ||
			    strchr(tok[1], ','))
				return fail(file, ln, "area name '%s' repeated, too long or with a comma", tok[1]);
			a = &c->areas[c->nr_areas];
			if (mr_parse_size(tok[2], &a->size_bytes) || a->size_bytes < 4096 ||
			    a->size_bytes > (UINT64_C(1) << 40))
				return fail(file, ln, "bad size '%s' (4K..1T, e.g. 10M)", tok[2]);
			strcpy(a->name, tok[1]);
			c->nr_areas++;
		} else if (!strcmp(tok[0], "phase")) {
			struct phase *ph;
			char *name, *s2 = NULL;
			unsigned i;

			if (n < 3 || n > 5)
				return fail(file, ln, "want: phase DURATION AREA[,AREA...] [seq|random] "
					    "[read|write|rw]");
			if (c->nr_phases == MAX_PHASES)
				return fail(file, ln, "more than %d phases", MAX_PHASES);
			ph = &c->phases[c->nr_phases];
			ph->pattern = SEQ;
			ph->op = OP_RW;
			if (parse_duration(tok[1], &ph->duration_us))
				return fail(file, ln, "bad duration '%s' (e.g. 5s, 500ms)", tok[1]);
			for (name = strtok_r(tok[2], ",", &s2); name; name = strtok_r(NULL, ",", &s2)) {
				int k = find_area(c, name);

				if (k < 0)
					return fail(file, ln, "no area '%s' defined above", name);
				if (ph->nr_areas == MAX_AREAS)
					return fail(file, ln, "too many areas");
				ph->areas[ph->nr_areas++] = (unsigned)k;
			}
			if (!ph->nr_areas)
				return fail(file, ln, "phase names no area");
			for (i = 3; i < n; i++) {
				if (!strcmp(tok[i], "seq"))
					ph->pattern = SEQ;
				else if (!strcmp(tok[i], "random"))
					ph->pattern = RANDOM;
				else if (!strcmp(tok[i], "read"))
					ph->op = OP_READ;
				else if (!strcmp(tok[i], "write"))
					ph->op = OP_WRITE;
				else if (!strcmp(tok[i], "rw"))
					ph->op = OP_RW;
				else
					return fail(file, ln, "unknown word '%s' (seq, random, read, write, rw)",
						    tok[i]);
			}
			c->nr_phases++;
		} else if (!strcmp(tok[0], "stride")) {
			if (n != 2 || mr_parse_size(tok[1], &c->stride_bytes) || c->stride_bytes < 1 ||
			    c->stride_bytes > (UINT64_C(1) << 30))
				return fail(file, ln, "want: stride BYTES (1..1G, e.g. 64 or 4K)");
		} else if (!strcmp(tok[0], "loop")) {
			uint64_t v;

			if (n != 2 || mr_parse_u64(tok[1], &v) || !v || v > 1000000)
				return fail(file, ln, "want: loop N (1..1000000)");
			c->loops = (unsigned)v;
		} else {
			return fail(file, ln, "unknown statement '%s' (area, phase, stride, loop)", tok[0]);
		}
	}
	if (ferror(f))
		return fail(file, ln, "read error");
	if (!c->nr_phases)
		return fail(file, ln, "no phase");
	return 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static volatile uint64_t sink;

/* Touch @nr lines of the phase's areas, resuming at *@pos; returns lines touched. */
static uint64_t touch(struct config *c, const struct phase *ph, uint64_t *pos, uint64_t *rng,
		      uint64_t nr)
{
	uint64_t total = 0, i, sum = 0;
	unsigned k;

	for (k = 0; k < ph->nr_areas; k++)
		total += (c->areas[ph->areas[k]].size_bytes + c->stride_bytes - 1) / c->stride_bytes;
	for (i = 0; i < nr; i++) {
		uint64_t line, off;
		unsigned char *p;

		if (ph->pattern == SEQ) {
			line = (*pos)++ % total;
		} else {
			uint64_t x = *rng;

			x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
			*rng = x;
			line = (x * UINT64_C(2685821657736338717)) % total;
		}
		/* the line's area: areas of one phase are laid end to end, each taking
		 * ceil(size / stride) slots */
		for (k = 0, off = line; k < ph->nr_areas; k++) {
			const struct area *a = &c->areas[ph->areas[k]];
			uint64_t slots = (a->size_bytes + c->stride_bytes - 1) / c->stride_bytes;

			if (off < slots)
				break;
			off -= slots;
		}
		off *= c->stride_bytes;
		p = c->areas[ph->areas[k]].mem + off;
		if (ph->op != OP_WRITE)
			sum += *(volatile unsigned char *)p;
		if (ph->op != OP_READ)
			*(volatile unsigned char *)p = (unsigned char)(sum + i);
	}
	sink += sum;
	return nr;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s [OPTIONS] CONFIG\n\n"
		"Run the access pattern of CONFIG: a file, or the name of a shipped config\n"
		"in %s/configs (stairs, zigzag). Config language, one statement a line,\n"
		"'#' starts a comment:\n"
		"  area NAME SIZE                          its own anonymous mapping, written\n"
		"                                          once at start so it is resident\n"
		"  phase DURATION AREA[,AREA...] [seq|random] [read|write|rw]\n"
		"                                          DURATION like 5s or 500ms; default\n"
		"                                          seq rw\n"
		"  stride BYTES                            one access per BYTES (default 64, a\n"
		"                                          cache line; 4K: one per page)\n"
		"  loop N                                  run all phases N times (default 1)\n\n"
		"Options:\n"
		"  -t, --time-scale F   multiply every phase's duration by F (e.g. 0.2)\n"
		"  -l, --loops N        override the config's loop count\n"
		"  -n, --dry-run        parse and print the plan, touch nothing\n"
		"  -s, --stats          print accesses per second and the longest stall\n"
		"                       (time between two clock checks) at the end (stdout)\n"
		"  -h, --help           this text\n", prog, MR_PKGDATADIR);
}

static FILE *open_config(const char *arg, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s", arg);
	f = fopen(path, "r");
	if (f || strchr(arg, '/'))
		return f;
	/* MEMREG_DATADIR first; then the configured data directory; then the one beside
	 * the executable (BIN/../share/memreg), so a tree installed under another
	 * prefix than it was configured with (the VM lab's) still finds its configs. */
	if (getenv("MEMREG_DATADIR")) {
		snprintf(path, len, "%s/configs/%s", getenv("MEMREG_DATADIR"), arg);
		return fopen(path, "r");
	}
	snprintf(path, len, "%s/configs/%s", MR_PKGDATADIR, arg);
	f = fopen(path, "r");
	if (!f && (const char *)getauxval(AT_EXECFN)) {
		char exe[1024], *slash;

		snprintf(exe, sizeof(exe), "%s", (const char *)getauxval(AT_EXECFN));
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, len, "%s/../share/memreg/configs/%s", exe, arg);
			f = fopen(path, "r");
		}
		if (!f)	/* name the configured place in the error */
			snprintf(path, len, "%s/configs/%s", MR_PKGDATADIR, arg);
	}
	return f;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "time-scale", required_argument, NULL, 't' },
		{ "loops", required_argument, NULL, 'l' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "stats", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct config c;
	double scale = 1;
	uint64_t loops = 0, lines = 0, start, stall_us = 0, rng = 0x9e3779b97f4a7c15u;
	bool dry = false, stats = false;
	char path[4096], *end;
	unsigned i, l;
	FILE *f;
	int ch;

	while ((ch = getopt_long(argc, argv, "t:l:nsh", opts, NULL)) != -1) {
		switch (ch) {
		case 't':
			errno = 0;
			scale = strtod(optarg, &end);
			if (errno || *end || !(scale > 0) || scale > 1000) {
				fprintf(stderr, "%s: bad --time-scale '%s'\n", prog, optarg);
				return 2;
			}
			break;
		case 'l':
			if (mr_parse_u64(optarg, &loops) || !loops || loops > 1000000) {
				fprintf(stderr, "%s: bad --loops '%s'\n", prog, optarg);
				return 2;
			}
			break;
		case 'n': dry = true; break;
		case 's': stats = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 1) {
		usage(stderr);
		return 2;
	}
	f = open_config(argv[optind], path, sizeof(path));
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return 1;
	}
	if (parse_config(f, path, &c)) {
		fclose(f);
		return 1;
	}
	fclose(f);
	if (loops)
		c.loops = (unsigned)loops;
	for (i = 0; i < c.nr_phases; i++) {
		c.phases[i].duration_us = (uint64_t)(c.phases[i].duration_us * scale);
		if (!c.phases[i].duration_us)
			c.phases[i].duration_us = 1;
	}
	if (dry) {
		for (i = 0; i < c.nr_areas; i++)
			printf("area %s %" PRIu64 "\n", c.areas[i].name, c.areas[i].size_bytes);
		for (i = 0; i < c.nr_phases; i++) {
			unsigned k;

			printf("phase %" PRIu64 "us ", c.phases[i].duration_us);
			for (k = 0; k < c.phases[i].nr_areas; k++)
				printf("%s%s", k ? "," : "", c.areas[c.phases[i].areas[k]].name);
			printf(" %s %s\n", c.phases[i].pattern == SEQ ? "seq" : "random",
			       c.phases[i].op == OP_READ ? "read" : c.phases[i].op == OP_WRITE ? "write" : "rw");
		}
		printf("stride %" PRIu64 "\nloop %u\n", c.stride_bytes, c.loops);
		return 0;
	}
	for (i = 0; i < c.nr_areas; i++) {
		struct area *a = &c.areas[i];

		/* one page more, made inaccessible: a guard that keeps neighbouring areas
		 * from merging into one VMA, so per-mapping monitors see each area apart */
		a->mem = mmap(NULL, a->size_bytes + 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a->mem == MAP_FAILED || mprotect(a->mem + a->size_bytes, 4096, PROT_NONE)) {
			fprintf(stderr, "%s: mmap %s (%" PRIu64 " bytes): %s\n", prog, a->name,
				a->size_bytes, strerror(errno));
			return 1;
		}
		memset(a->mem, 1, a->size_bytes);
	}
	start = now_us();
	for (l = 0; l < c.loops; l++)
		for (i = 0; i < c.nr_phases; i++) {
			const struct phase *ph = &c.phases[i];
			uint64_t pos = 0, t = now_us(), end_us = t + ph->duration_us, prev;

			while (t < end_us) {
				lines += touch(&c, ph, &pos, &rng, 4096);
				prev = t;
				t = now_us();
				if (t - prev > stall_us)
					stall_us = t - prev;
			}
		}
	if (stats) {
		double s = (now_us() - start) / 1e6;

		/* the longest stretch between two checks of the clock (4096 accesses
		 * apart, microseconds when the process runs): how long it went without
		 * a CPU, which a monitor's accuracy test needs to know */
		printf("accesses %" PRIu64 " seconds %.3f accesses_per_second %.0f "
		       "longest_stall_ms %.1f\n", lines, s, s > 0 ? lines / s : 0, stall_us / 1e3);
	}
	return 0;
}
