/* Unit tests of the live backends: refs' attribution of smaps Referenced bytes (on a
 * fixture root), the self-tests on this kernel (against what the kernel says it
 * has, asked apart), uffd's per-page write tracking on memory of our own, and
 * softdirty following a child of ours across its exec. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/root.h"
#include "common/util.h"
#include "monitor/monitor.h"
#include "monitor/uffd.h"

#define P 4096u

/* Return lo + rand_offset_bytes (bounded): deterministic sampling and draws. */
static uint64_t rand_offset_bytes;

static uint64_t rand_off(struct mr_mon_ctx *ctx, uint64_t lo, uint64_t hi)
{
	return lo + rand_offset_bytes < hi ? lo + rand_offset_bytes : hi - 1;
}

static uint64_t rand_lo(struct mr_mon_ctx *ctx, uint64_t lo, uint64_t hi)
{
	return lo;
}

/*
 * refs on a fixture smaps: two mappings
 *   A [0x100000, 0x140000) 256 KiB, Referenced 64 KiB: a page drawn from A was
 *     referenced with probability 1/4: accessed when the draw in [0, 256K) < 64K
 *   B [0x200000, 0x210000)  64 KiB, Referenced 0: never
 */
static void test_refs_attribution(void **state)
{
	static const char smaps[] =
		"00100000-00140000 rw-p 00000000 00:00 0\n"
		"Size:                256 kB\n"
		"Referenced:           64 kB\n"
		"Anonymous:           256 kB\n"
		"VmFlags: rd wr mr mw me ac\n"
		"00200000-00210000 rw-p 00000000 00:00 0          [heap]\n"
		"Size:                 64 kB\n"
		"Referenced:            0 kB\n";
	struct mr_mon_region regs[4] = {
		{ .start = 0x100000, .end = 0x110000 },
		{ .start = 0x110000, .end = 0x120000 },
		{ .start = 0x120000, .end = 0x140000 },
		{ .start = 0x200000, .end = 0x210000 },
	};
	char root[] = "/tmp/mr-test-refs-XXXXXX", path[600];
	struct mr_mon_ctx ctx;
	uint32_t max = 0;
	FILE *f;

	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/123", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/123/smaps", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(smaps, f);
	fclose(f);
	assert_int_equal(mr_root_set(root), 0);

	mr_mon_ctx_init(&ctx, &mr_mon_ops_refs);
	ctx.target.pid = 123;
	ctx.target.regions = malloc(sizeof(regs));
	memcpy(ctx.target.regions, regs, sizeof(regs));
	ctx.target.nr_regions = ctx.target.cap_regions = 4;
	ctx.rand = rand_off;
	assert_int_equal(mr_mon_ops_refs.init(&ctx), 0);
	/* prepare writes clear_refs: refused under a fixture root, nothing written */
	assert_int_equal(mr_mon_ops_refs.prepare(&ctx), -EROFS);
	/* draw 0: below 64K, every region of A accessed; B never */
	rand_offset_bytes = 0;
	mr_mon_pick_sampling_addrs(&ctx);
	assert_int_equal(mr_mon_ops_refs.check(&ctx, &max), 0);
	assert_int_equal(ctx.target.regions[0].nr_accesses, 1);
	assert_int_equal(ctx.target.regions[1].nr_accesses, 1);
	assert_int_equal(ctx.target.regions[2].nr_accesses, 1);
	assert_int_equal(ctx.target.regions[3].nr_accesses, 0);
	assert_int_equal(max, 1);
	/* draw 64K - 1: still referenced; draw 64K: not */
	rand_offset_bytes = 64 * 1024 - 1;
	assert_int_equal(mr_mon_ops_refs.check(&ctx, &max), 0);
	assert_int_equal(ctx.target.regions[0].nr_accesses, 2);
	rand_offset_bytes = 64 * 1024;
	assert_int_equal(mr_mon_ops_refs.check(&ctx, &max), 0);
	assert_int_equal(ctx.target.regions[0].nr_accesses, 2);
	assert_int_equal(ctx.target.regions[2].nr_accesses, 2);
	assert_int_equal(ctx.target.regions[3].nr_accesses, 0);
	mr_mon_ops_refs.cleanup(&ctx);
	mr_mon_ctx_destroy(&ctx);
	assert_int_equal(mr_root_set("/"), 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

/*
 * Is soft-dirty tracking built into this kernel? Asked apart from the self-test:
 * the kernel marks every new mapping VM_SOFTDIRTY and smaps prints that flag ("sd"
 * in VmFlags) only under CONFIG_MEM_SOFT_DIRTY.
 */
static bool kernel_has_soft_dirty(void)
{
	char *map = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char line[1024];
	bool in_map = false, sd = false;
	FILE *f;

	assert_true(map != MAP_FAILED);
	map[0] = 1;
	f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char *tok, *save = NULL;

		if (sscanf(line, "%llx-%llx ", &start, &end) == 2 && strchr(line, '-') <
		    strchr(line, ' ')) {
			in_map = start == (unsigned long long)(uintptr_t)map;
			continue;
		}
		if (!in_map || strncmp(line, "VmFlags:", 8) != 0)
			continue;
		for (tok = strtok_r(line + 8, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			if (strcmp(tok, "sd") == 0)
				sd = true;
		break;
	}
	fclose(f);
	munmap(map, P);
	return sd;
}

/* This kernel: refs must work (it is the backend `make check` measures with);
 * softdirty's self-test must pass where the kernel tracks soft-dirty and say
 * exactly why not where it does not. */
static void test_selftests_here(void **state)
{
	struct mr_mon_ctx ctx;
	bool has_sd = kernel_has_soft_dirty();
	int err;

	mr_mon_ctx_init(&ctx, &mr_mon_ops_refs);
	err = mr_mon_ops_refs.selftest(&ctx);
	if (err)
		fail_msg("refs self-test failed here: %s", mr_last_error());
	mr_mon_ctx_init(&ctx, &mr_mon_ops_softdirty);
	err = mr_mon_ops_softdirty.selftest(&ctx);
	print_message("soft-dirty in smaps VmFlags: %s; softdirty self-test: %s\n",
		      has_sd ? "yes" : "no", err ? mr_last_error() : "works");
	if (has_sd) {
		if (err)
			fail_msg("softdirty self-test failed on a kernel with soft-dirty tracking: %s",
				 mr_last_error());
		return;
	}
	assert_int_equal(err, -ENOTSUP);
	assert_string_equal(mr_last_error(), "softdirty: self-test: pagemap bit 55 read 0 after "
			    "clear_refs 4 and 0 after a write: this kernel has no soft-dirty "
			    "tracking (CONFIG_MEM_SOFT_DIRTY)");
}

/* What the uffd backend needs, for the probe below (Linux 6.7 uapi; older headers
 * lack it). Own names: <linux/fs.h> may define the same ones. */
#define T_UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#define T_UFFD_FEATURE_WP_ASYNC (1 << 15)
struct t_pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define T_PAGEMAP_SCAN _IOWR('f', 16, struct t_pm_scan_arg)

/*
 * Does this kernel offer what uffd needs? Asked directly, apart from the self-test:
 * the userfaultfd syscall (user-mode faults only), UFFDIO_API listing async
 * write-protection of unpopulated pages, and /proc/PID/pagemap's PAGEMAP_SCAN ioctl
 * (the kernel answers ENOTTY where pagemap has no ioctls). Returns NULL when it
 * does, else the reason (in @why).
 */
static const char *uffd_missing(char *why, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	struct t_pm_scan_arg scan = { .size = sizeof(scan) };
	uint64_t need = T_UFFD_FEATURE_WP_ASYNC | T_UFFD_FEATURE_WP_UNPOPULATED;
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	int pm;

	if (fd < 0) {
		snprintf(why, len, "userfaultfd: %s", strerror(errno));
		return why;
	}
	/* features 0 asks for none: the kernel answers with all it has */
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		snprintf(why, len, "UFFDIO_API: %s", strerror(errno));
		close(fd);
		return why;
	}
	close(fd);
	if ((api.features & need) != need) {
		snprintf(why, len, "UFFDIO_API features %#llx lack async write-protection "
			 "(WP_ASYNC, WP_UNPOPULATED: Linux 6.7)", (unsigned long long)api.features);
		return why;
	}
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	assert_true(pm >= 0);
	if (ioctl(pm, T_PAGEMAP_SCAN, &scan) < 0 && errno == ENOTTY) {
		snprintf(why, len, "no PAGEMAP_SCAN ioctl on /proc/self/pagemap (Linux 6.7)");
		close(pm);
		return why;
	}
	close(pm);
	return NULL;
}

/*
 * uffd: 8 regions of 8 pages each over a mapping of ours, sampled at their first
 * page. Writes to regions 0 and 1 -> exactly those count; no write -> nothing
 * (the scan re-protected them); a write to region 5 -> only region 5.
 */
static void test_uffd_tracking(void **state)
{
	struct mr_mon_range *ranges = NULL;
	struct mr_mon_ctx ctx;
	char *mem;
	size_t nr = 0, i;
	uint32_t max = 0;
	char why[256];
	int err;


	/* a skip only where the kernel lacks the feature, as the kernel itself says */
	if (uffd_missing(why, sizeof(why))) {
		print_message("SKIP: uffd: this kernel lacks it: %s\n", why);
		skip();
	}
	mr_mon_ctx_init(&ctx, &mr_mon_ops_uffd);
	err = mr_mon_ops_uffd.selftest(&ctx);
	if (err)
		fail_msg("uffd self-test failed on a kernel that has what it needs: %s",
			 mr_last_error());
	mem = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	memset(mem, 1, 64 * P);
	assert_int_equal(mr_mon_uffd_watch(&ctx, mem, 64 * P), 0);
	assert_int_equal(mr_mon_ops_uffd.ranges(&ctx, &ranges, &nr), 0);
	assert_int_equal(mr_mon_init_regions(&ctx.target, ranges, nr, 8), 0);
	free(ranges);
	assert_int_equal(ctx.target.nr_regions, 8);
	assert_int_equal(mr_mon_ops_uffd.init(&ctx), 0);
	ctx.rand = rand_lo;
	mr_mon_pick_sampling_addrs(&ctx);

	mem[0] = 2;
	mem[8 * P] = 2;
	assert_int_equal(mr_mon_ops_uffd.check(&ctx, &max), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(ctx.target.regions[i].nr_accesses, i < 2 ? 1 : 0);
	assert_int_equal(mr_mon_ops_uffd.check(&ctx, &max), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(ctx.target.regions[i].nr_accesses, i < 2 ? 1 : 0);
	mem[40 * P + 100] = 3;
	(void)*(volatile char *)(mem + 48 * P);	/* a read is not a write */
	assert_int_equal(mr_mon_ops_uffd.check(&ctx, &max), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(ctx.target.regions[i].nr_accesses, i < 2 || i == 5 ? 1 : 0);
	assert_int_equal(ctx.target.regions[5].nr_accesses, 1);
	mr_mon_ops_uffd.cleanup(&ctx);
	mr_mon_ctx_destroy(&ctx);
	munmap(mem, 64 * P);
}

/*
 * softdirty on a process that execs after the monitor attached to it, as record
 * --cgroup meets a shell's child between its fork and its exec. The pagemap opened
 * on the old address space reads 0 bytes once the exec replaced it; monitoring
 * must go on, on the new program's mappings, and still end when the process exits.
 *
 *   child:    fork, blocked on a pipe |  exec sleep 600  ............. | SIGKILL: a zombie
 *   monitor:  attach | snapshot 0: go | snapshots 1..N on sleep's mappings | ends by itself
 *
 * N is at least 3, and as many more as it takes the regions to tile sleep's mappings
 * (its loader maps libraries after the exec, and the regions follow at the next
 * update: on a slow machine that may be later than the third aggregation), at most
 * EXEC_WAIT_US after the exec was seen (sleep outlives that: only the SIGKILL ends
 * it); after the SIGKILL the monitor has as long to end by itself. Only the sampling is judged, not the soft-dirty bits (this
 * kernel may not track them: its self-test is skipped; clear_refs 4 is accepted
 * there and does nothing).
 */
#define EXEC_WAIT_US (120 * 1000000ull)

static struct {
	pid_t pid;
	int go_fd;		/* a byte lets the child exec */
	int exec_fd;		/* end of file: the child exec'd (its end is close-on-exec) */
	bool execd;
	unsigned nr_snaps, after_exec, after_kill;
	uint64_t execd_us, killed_us;	/* mr_mon_now_us() when seen, when sent */
	bool covered;		/* the regions were exactly sleep's mappings */
	volatile sig_atomic_t stop;
} ex;

/* Do the regions tile exactly the process's current ranges (mappings, adjacent ones
 * joined)? Split and merged regions do; regions of another address space do not. */
static bool regions_cover_maps(const struct mr_mon_target *t)
{
	struct mr_mon_range *ranges = NULL;
	size_t nr = 0, i = 0, k = 0;
	bool same = true;

	if (mr_mon_read_maps(t->pid, &ranges, &nr))
		return false;
	while (same && k < t->nr_regions) {
		uint64_t start = t->regions[k].start, end = t->regions[k].end;

		while (++k < t->nr_regions && t->regions[k].start == end)
			end = t->regions[k].end;
		same = i < nr && ranges[i].start == start && ranges[i].end == end;
		i++;
	}
	same = same && i == nr;
	free(ranges);
	return same;
}

static int exec_snapshot(struct mr_mon_ctx *ctx, uint64_t time_us, void *arg)
{
	char c;

	(void)time_us;
	(void)arg;
	if (ex.nr_snaps++ == 0) {
		assert_int_equal(write(ex.go_fd, "x", 1), 1);
		return 0;
	}
	if (!ex.execd) {
		ex.execd = read(ex.exec_fd, &c, 1) == 0;
		if (ex.execd)
			ex.execd_us = mr_mon_now_us();
		return 0;	/* the exec fell somewhere in this interval */
	}
	if (ex.after_kill) {
		ex.after_kill++;
		if (mr_mon_now_us() - ex.killed_us > EXEC_WAIT_US)
			ex.stop = 1;	/* a zombie followed all that time: fails below */
		return 0;
	}
	if (++ex.after_exec < 3)
		return 0;
	ex.covered = regions_cover_maps(&ctx->target);
	if (ex.covered || mr_mon_now_us() - ex.execd_us > EXEC_WAIT_US) {
		assert_int_equal(kill(ex.pid, SIGKILL), 0);
		ex.killed_us = mr_mon_now_us();
		ex.after_kill = 1;
	}
	return 0;
}

static void test_softdirty_across_exec(void **state)
{
	int go[2], execd[2], err;
	struct mr_mon_ctx ctx;
	bool alive;

	memset(&ex, 0, sizeof(ex));
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(execd, O_CLOEXEC), 0);
	ex.pid = fork();
	assert_true(ex.pid >= 0);
	if (ex.pid == 0) {
		char c;

		close(go[1]);
		close(execd[0]);
		if (read(go[0], &c, 1) == 1)
			execlp("sleep", "sleep", "600", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(execd[1]);
	ex.go_fd = go[1];
	ex.exec_fd = execd[0];
	assert_int_equal(fcntl(ex.exec_fd, F_SETFL, O_NONBLOCK), 0);

	mr_mon_ctx_init(&ctx, &mr_mon_ops_softdirty);
	/* 5 ms samples, 10 to an aggregation; the mappings re-read every aggregation,
	 * which alone never makes an already open pagemap read again */
	ctx.attrs = (struct mr_mon_attrs){ .sample_us = 5000, .aggr_us = 50000,
					   .update_us = 50000, .min_nr_regions = 10,
					   .max_nr_regions = 100 };
	ctx.selftest_passed = true;
	ctx.target.kind = MR_MON_TARGET_PROCESS;
	ctx.target.pid = ex.pid;
	ctx.target.started = true;	/* our own child: consent to write its clear_refs */
	ctx.stop = &ex.stop;
	err = mr_mon_run(&ctx, exec_snapshot, NULL);
	alive = !ex.after_kill && waitpid(ex.pid, NULL, WNOHANG) == 0;
	if (!ex.after_kill)
		kill(ex.pid, SIGKILL);
	waitpid(ex.pid, NULL, 0);
	close(ex.go_fd);
	close(ex.exec_fd);
	mr_mon_ctx_destroy(&ctx);
	if (err)
		fail_msg("mr_mon_run: %s", mr_last_error());
	if (!ex.after_kill)
		fail_msg("monitoring ended by itself %u snapshots after the child was let exec "
			 "(exec seen: %s), the child %s", ex.nr_snaps - 1, ex.execd ? "yes" : "no",
			 alive ? "still running" : "gone");
	if (!ex.covered)
		fail_msg("the regions never tiled sleep's mappings in %u snapshots (%.0f s) "
			 "after its exec", ex.after_exec, EXEC_WAIT_US / 1e6);
	/* the exit ended it, not our stop */
	if (ex.stop)
		fail_msg("monitoring followed the killed child for %u snapshots (%.0f s) "
			 "without ending", ex.after_kill - 1, EXEC_WAIT_US / 1e6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_attribution),
		cmocka_unit_test(test_selftests_here),
		cmocka_unit_test(test_uffd_tracking),
		cmocka_unit_test(test_softdirty_across_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
