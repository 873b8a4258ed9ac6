/* memregctl profile's core: parse a MEMREG_SITE_MAP, give each page its access rate
 * from a record, attribute the rates to the sites by bytes, classify hot or cold. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/root.h"
#include "common/util.h"
#include "monitor/profile.h"

#define MAP_MAX_BYTES (1u << 30)
#define ATTR_MAX_ROUNDS 1000
#define ATTR_EPSILON 1e-9

void mr_prof_map_free(struct mr_site_map *m)
{
	size_t i;

	for (i = 0; i < m->nr_sites; i++)
		free(m->sites[i].module);
	free(m->sites);
	free(m->pages);
	free(m->parts);
	memset(m, 0, sizeof(*m));
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	void *n;
	size_t c = *cap ? *cap : 64;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*p, c * elem);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

static int find_site(const struct mr_site_map *m, uint32_t id)
{
	size_t i;

	/* ids are 1..n in the allocator's order, so the index is a first guess */
	if (id >= 1 && id <= m->nr_sites && m->sites[id - 1].id == id)
		return (int)(id - 1);
	for (i = 0; i < m->nr_sites; i++)
		if (m->sites[i].id == id)
			return (int)i;
	return -1;
}

static int cmp_page(const void *a, const void *b)
{
	const struct mr_prof_page *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool is_hex_id(const char *s)
{
	size_t n = strlen(s);

	return n >= 2 && n < sizeof(((struct mr_prof_site *)0)->build_id) &&
	       strspn(s, "0123456789abcdefABCDEF") == n;
}

static int parse_site(struct mr_site_map *m, size_t *cap, char *rest, const char *name,
		      unsigned line)
{
	char *save = NULL, *id = strtok_r(rest, " \t", &save), *bid = strtok_r(NULL, " \t", &save);
	char *off = strtok_r(NULL, " \t", &save), *mod = save;
	struct mr_prof_site *s;
	uint64_t v;

	if (!id || !bid || !off || !mod || !*mod)
		return mr_error(-EINVAL, "%s:%u: site line needs <id> <build-id> <offset> <module>",
				name, line);
	if (mr_parse_u64(id, &v) || v == 0 || v > UINT32_MAX)
		return mr_error(-EINVAL, "%s:%u: bad site id '%s'", name, line, id);
	if (find_site(m, (uint32_t)v) >= 0)
		return mr_error(-EINVAL, "%s:%u: site %s defined twice", name, line, id);
	if (strcmp(bid, "-") && !is_hex_id(bid))
		return mr_error(-EINVAL, "%s:%u: bad build-id '%s'", name, line, bid);
	if (grow((void **)&m->sites, cap, m->nr_sites + 1, sizeof(*m->sites)))
		return mr_error(-ENOMEM, "%s: out of memory", name);
	s = &m->sites[m->nr_sites];
	memset(s, 0, sizeof(*s));
	s->id = (uint32_t)v;
	if (strcmp(bid, "-"))
		strcpy(s->build_id, bid);
	if (strncmp(off, "0x", 2) || mr_parse_u64(off, &s->offset))
		return mr_error(-EINVAL, "%s:%u: bad offset '%s'", name, line, off);
	s->module = strdup(mod);
	if (!s->module)
		return mr_error(-ENOMEM, "%s: out of memory", name);
	m->nr_sites++;
	return 0;
}

static int parse_page(struct mr_site_map *m, size_t *cap_pages, size_t *cap_parts, char *rest,
		      const char *name, unsigned line)
{
	char *save = NULL, *tok = strtok_r(rest, " \t", &save);
	struct mr_prof_page *p;
	uint64_t sum = 0;

	if (!tok || strncmp(tok, "0x", 2))
		return mr_error(-EINVAL, "%s:%u: page line needs an address 0x...", name, line);
	if (grow((void **)&m->pages, cap_pages, m->nr_pages + 1, sizeof(*m->pages)))
		return mr_error(-ENOMEM, "%s: out of memory", name);
	p = &m->pages[m->nr_pages];
	memset(p, 0, sizeof(*p));
	if (mr_parse_u64(tok, &p->addr) || p->addr % m->page_size ||
	    p->addr > UINT64_MAX - m->page_size)
		return mr_error(-EINVAL, "%s:%u: bad page address '%s'", name, line, tok);
	p->first = m->nr_parts;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		char *colon = strchr(tok, ':');
		uint64_t id, bytes;
		int si;

		if (!colon)
			return mr_error(-EINVAL, "%s:%u: '%s' is not <site>:<bytes>", name, line, tok);
		*colon = '\0';
		if (mr_parse_u64(tok, &id) || mr_parse_u64(colon + 1, &bytes))
			return mr_error(-EINVAL, "%s:%u: bad <site>:<bytes> '%s:%s'", name, line, tok,
					colon + 1);
		si = id <= UINT32_MAX ? find_site(m, (uint32_t)id) : -1;
		if (si < 0)
			return mr_error(-EINVAL, "%s:%u: site %" PRIu64 " has no site line", name,
					line, id);
		sum += bytes;
		if (bytes == 0 || sum > m->page_size)
			return mr_error(-EINVAL, "%s:%u: %" PRIu64 " bytes do not fit a page of %" PRIu64,
					name, line, sum, m->page_size);
		if (grow((void **)&m->parts, cap_parts, m->nr_parts + 1, sizeof(*m->parts)))
			return mr_error(-ENOMEM, "%s: out of memory", name);
		m->parts[m->nr_parts].site = (uint32_t)si;
		m->parts[m->nr_parts].bytes = (uint32_t)bytes;
		m->nr_parts++;
		p->nr++;
	}
	if (!p->nr)
		return mr_error(-EINVAL, "%s:%u: page without any site", name, line);
	m->nr_pages++;
	return 0;
}

int mr_prof_map_parse(const char *text, size_t len, const char *name, struct mr_site_map *m)
{
	size_t cap_sites = 0, cap_pages = 0, cap_parts = 0, i;
	char *buf, *line, *next;
	unsigned no = 0;
	int err = 0;
	bool have_ps = false, have_pid = false;

	memset(m, 0, sizeof(*m));
	if (memchr(text, '\0', len))
		return mr_error(-EINVAL, "%s: not a site map (binary data)", name);
	buf = malloc(len + 1);
	if (!buf)
		return mr_error(-ENOMEM, "%s: out of memory", name);
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (line = buf; line && !err; line = next) {
		char *sp;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else if (!*line)
			break;
		no++;
		if (no == 1) {
			if (strcmp(line, "memreg-site-map 1"))
				err = mr_error(-EINVAL, "%s:1: not a site map of version 1 (want 'memreg-site-map 1')",
					       name);
			continue;
		}
		sp = strchr(line, ' ');
		if (!sp) {
			err = mr_error(-EINVAL, "%s:%u: unknown line '%.40s'", name, no, line);
			break;
		}
		*sp++ = '\0';
		if (!strcmp(line, "page_size") && !have_ps && !m->nr_sites) {
			have_ps = true;
			if (mr_parse_u64(sp, &m->page_size) || m->page_size < 512 ||
			    m->page_size > (1u << 30) || (m->page_size & (m->page_size - 1)))
				err = mr_error(-EINVAL, "%s:%u: bad page_size '%s'", name, no, sp);
		} else if (!strcmp(line, "pid") && !have_pid && !m->nr_sites) {
			uint64_t v;

			have_pid = true;
			if (mr_parse_u64(sp, &v) || v == 0 || v > INT32_MAX)
				err = mr_error(-EINVAL, "%s:%u: bad pid '%s'", name, no, sp);
			m->pid = (int32_t)v;
		} else if (!strcmp(line, "site") && have_ps && have_pid && !m->nr_pages) {
			err = parse_site(m, &cap_sites, sp, name, no);
		} else if (!strcmp(line, "page") && have_ps && have_pid) {
			err = parse_page(m, &cap_pages, &cap_parts, sp, name, no);
		} else {
			err = mr_error(-EINVAL, "%s:%u: unexpected '%s' line here", name, no, line);
		}
	}
	free(buf);
	if (!err && no == 0)
		err = mr_error(-EINVAL, "%s: empty file, not a site map", name);
	if (!err && (!have_ps || !have_pid))
		err = mr_error(-EINVAL, "%s: no %s line", name, have_ps ? "pid" : "page_size");
	if (err) {
		mr_prof_map_free(m);
		return err;
	}
	qsort(m->pages, m->nr_pages, sizeof(*m->pages), cmp_page);
	for (i = 1; i < m->nr_pages; i++)
		if (m->pages[i].addr == m->pages[i - 1].addr) {
			err = mr_error(-EINVAL, "%s: page 0x%" PRIx64 " listed twice", name,
				       m->pages[i].addr);
			mr_prof_map_free(m);
			return err;
		}
	for (i = 0; i < m->nr_parts; i++) {
		m->sites[m->parts[i].site].bytes += m->parts[i].bytes;
		m->sites[m->parts[i].site].pages++;
	}
	return 0;
}

int mr_prof_map_load(const char *path, struct mr_site_map *m)
{
	char *data;
	size_t len;
	int err = mr_root_read_file(path, MAP_MAX_BYTES, &data, &len);

	if (err)
		return mr_error(err, "%s: cannot read: %s", path, strerror(-err));
	err = mr_prof_map_parse(data, len, path, m);
	free(data);
	return err;
}

int mr_prof_page_rates(const struct mr_rec *rec, struct mr_site_map *m)
{
	double max_acc = (double)(rec->hdr.attrs.aggr_us / rec->hdr.attrs.sample_us);
	size_t s, i;

	if (max_acc < 1)
		max_acc = 1;
	for (i = 0; i < m->nr_pages; i++)
		m->pages[i].rate = 0;
	if (!rec->nr_snaps)
		return mr_error(-EINVAL, "record holds no snapshot");
	for (s = 0; s < rec->nr_snaps; s++) {
		const struct mr_rec_snapshot *sn = &rec->snaps[s];
		size_t r = 0;

		/* pages and regions are both sorted: one merge pass per snapshot */
		for (i = 0; i < m->nr_pages; i++) {
			uint64_t a = m->pages[i].addr;
			double v;

			while (r < sn->nr_regions && sn->regions[r].end <= a)
				r++;
			if (r == sn->nr_regions)
				break;
			if (sn->regions[r].start > a)
				continue;
			v = sn->regions[r].nr_accesses / max_acc;
			m->pages[i].rate += v > 1 ? 1 : v;
		}
	}
	for (i = 0; i < m->nr_pages; i++)
		m->pages[i].rate /= (double)rec->nr_snaps;
	return 0;
}

/*
 * A page's accesses, rate x its live bytes, are shared among its sites in proportion
 * to bytes x the site's current score; a site's score is what it received over its
 * bytes. The first round (all scores equal) is the plain byte-weighted share; the
 * rounds after it (the EM / Richardson-Lucy iteration for "each page's rate is the
 * sum of its sites' rates") move the accesses of pages shared by a hot and a cold
 * site to the site that is also accessed on its other pages: with hot objects
 * interleaved among cold ones, every hot object's page is accessed and the plain
 * share would call both sites hot.
 */
void mr_prof_attribute(struct mr_site_map *m, double hot_threshold)
{
	double *score, *acc;
	size_t i, j, round;

	score = calloc(m->nr_sites ? m->nr_sites : 1, sizeof(*score));
	acc = calloc(m->nr_sites ? m->nr_sites : 1, sizeof(*acc));
	for (i = 0; i < m->nr_sites; i++) {
		score[i] = 1;
		m->sites[i].accessed_pages = 0;
	}
	for (i = 0; i < m->nr_pages; i++)
		if (m->pages[i].rate > 0)
			for (j = 0; j < m->pages[i].nr; j++)
				m->sites[m->parts[m->pages[i].first + j].site].accessed_pages++;
	for (round = 0; score && acc && round < ATTR_MAX_ROUNDS; round++) {
		double change = 0;

		memset(acc, 0, m->nr_sites * sizeof(*acc));
		for (i = 0; i < m->nr_pages; i++) {
			const struct mr_prof_page *p = &m->pages[i];
			const struct mr_prof_part *pt = &m->parts[p->first];
			double pred = 0, bytes = 0;

			if (p->rate <= 0)
				continue;
			for (j = 0; j < p->nr; j++) {
				pred += pt[j].bytes * score[pt[j].site];
				bytes += pt[j].bytes;
			}
			if (pred <= 0)
				continue;
			for (j = 0; j < p->nr; j++)
				acc[pt[j].site] += p->rate * bytes * pt[j].bytes * score[pt[j].site] / pred;
		}
		for (i = 0; i < m->nr_sites; i++) {
			double v = m->sites[i].bytes ? acc[i] / (double)m->sites[i].bytes : 0;

			if (round == 0)
				m->sites[i].share_score = v;
			change = fmax(change, fabs(v - score[i]));
			score[i] = v;
		}
		if (change < ATTR_EPSILON)
			break;
	}
	for (i = 0; i < m->nr_sites; i++) {
		struct mr_prof_site *s = &m->sites[i];

		s->score = score && acc ? score[i] : s->share_score;
		/* the rule: no accessed page over the whole record is cold, whatever the score */
		s->hot = s->accessed_pages > 0 && s->score >= hot_threshold;
	}
	free(score);
	free(acc);
}

int mr_prof_write(FILE *f, const struct mr_site_map *m, double hot_threshold, const char *comment)
{
	size_t i;

	fprintf(f, "memreg-profile 1\n# written by memregctl profile: score >= %g is hot, else cold\n",
		hot_threshold);
	if (comment)
		fprintf(f, "# %s\n", comment);
	for (i = 0; i < m->nr_sites; i++) {
		const struct mr_prof_site *s = &m->sites[i];

		fprintf(f, "%s%s 0x%" PRIx64 " %s score=%.4f share=%.4f bytes=%" PRIu64
			" pages=%" PRIu64 " accessed_pages=%" PRIu64 " %s\n",
			s->build_id[0] ? "" : "# no build-id: ", s->build_id[0] ? s->build_id : "-",
			s->offset, s->hot ? "hot" : "cold", s->score, s->share_score, s->bytes,
			s->pages, s->accessed_pages, s->module);
	}
	return ferror(f) ? -EIO : 0;
}
