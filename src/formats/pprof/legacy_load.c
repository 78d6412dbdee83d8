/*
 * legacy_load.c: gperftools' legacy CPU profile (what CPUPROFILE and yep write) into the
 * model's stack samples, and the recognition of the legacy text profiles (heap, growth,
 * contention, thread, Go count profiles), which are refused with a one-line message.
 *
 * The CPU format (gperftools' docs/cpuprofile-fileformat.html; pprof's legacy_profile.go) is
 * a sequence of machine words of the profiled program (32 or 64 bits, its byte order; the
 * reader tries 32-bit little-endian, 32-bit big-endian, 64-bit little, 64-bit big, and takes
 * the first whose header reads): a header [0, 3, 0, period in microseconds, 0], then records
 * [count, n, pc_1 .. pc_n] (pc_1 the leaf), then the trailer [0, 1, 0], then the text of the
 * program's /proc/self/maps. A header [0, 3, 1, ...] is a Java CPU profile (refused).
 *
 * What the reader does to match pprof's reading of the same file (so that the totals and
 * stacks equal the X.string goldens of pprof's test data): every pc but the leaf is a return
 * address and is moved back by one, onto the call; a frame that is second in nearly every
 * sample (all but one in 32) is the signal handler's and is removed, at most twice; a leaf
 * repeated as the second frame (adjusted) is removed. Executable mappings are kept, adjacent
 * pieces of one binary merged, the main binary put first, and addresses outside every mapping
 * get one mapping of the whole address space. Samples keep [samples/count, cpu/nanoseconds]
 * values (count, count x period) on one track; frames stay addresses (unsymbolized) with the
 * path of their mapping.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/pprof/pprof.h"
#include "util/grow.h"

/* How words are read: size (4 or 8) and byte order. */
struct words {
	const uint8_t *b;
	size_t size;
	unsigned w; /* bytes per word */
	bool big;
};

/* Word at byte offset `off` (the caller checked it fits). */
static uint64_t word_at(const struct words *W, size_t off)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < W->w; i++) {
		unsigned k = W->big ? i : W->w - 1 - i;
		v = v << 8 | W->b[off + k];
	}
	return v;
}

/* The encoding whose header reads [0, 3, java, period > 0, 0]; false if none does. */
static bool find_encoding(const uint8_t *b, size_t n, struct words *W, uint64_t *java,
			  uint64_t *period)
{
	static const struct {
		unsigned w;
		bool big;
	} enc[] = { { 4, false }, { 4, true }, { 8, false }, { 8, true } };
	for (size_t e = 0; e < sizeof(enc) / sizeof(enc[0]); e++) {
		struct words t = { b, n, enc[e].w, enc[e].big };
		if (n < 5 * t.w)
			continue;
		uint64_t h[5];
		for (int i = 0; i < 5; i++)
			h[i] = word_at(&t, (size_t)i * t.w);
		if (h[0] == 0 && h[1] == 3 && h[2] <= 1 && h[3] > 0 && h[4] == 0) {
			*W = t;
			*java = h[2];
			*period = h[3];
			return true;
		}
	}
	return false;
}

/* The legacy text profile a head starts with ("heap", "contention" ...), or NULL. */
static const char *text_kind(const unsigned char *head, size_t n)
{
	static const struct {
		const char *prefix, *kind;
	} kinds[] = {
		{ "heap profile:", "heap" },
		{ "--- heapz", "heap" },
		{ "--- heap", "heap" },
		{ "--- contention", "contention" },
		{ "--- threadz", "thread" },
		{ "--- Thread", "thread" },
		{ "threadcreate profile:", "count" },
		{ "goroutine profile:", "count" },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t l = strlen(kinds[i].prefix);
		if (n >= l && memcmp(head, kinds[i].prefix, l) == 0)
			return kinds[i].kind;
	}
	return NULL;
}

bool legacy_sniff(const unsigned char *head, size_t n)
{
	struct words W;
	uint64_t java, period;
	return find_encoding(head, n, &W, &java, &period) || text_kind(head, n);
}

/* One sample as read: its pcs (leaf first) in pcs[first..first+n). */
struct lsample {
	uint64_t count;
	uint64_t first;
	uint32_t n;
};

struct lmap {
	uint64_t start, limit, offset;
	const char *path; /* into the file's bytes */
	size_t path_len;
};

struct lload {
	struct model *m;
	const char *name;
	char *err;
	size_t errsize;
	struct lsample *s;
	uint64_t ns, s_cap;
	uint64_t *pcs;
	uint64_t npcs, pcs_cap;
	struct lmap *maps;
	uint64_t nmaps, maps_cap;
};

static int loom(struct lload *L)
{
	snprintf(L->err, L->errsize, "%s: out of memory", L->name);
	return OPSCOPE_ENOMEM;
}

/* Remove frame 1 of sample i. */
static void drop_second(struct lload *L, struct lsample *s)
{
	memmove(&L->pcs[s->first + 1], &L->pcs[s->first + 2], (s->n - 2) * sizeof(*L->pcs));
	s->n--;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The signal handler's frame: an address second in all samples but one in 32 is removed from
 * them, at most twice (pprof's reading of legacy CPU profiles). */
static void strip_handler_frames(struct lload *L)
{
	uint64_t margin = L->ns / 32;
	for (int iter = 0; iter < 2; iter++) {
		/* the most common second frame, counted in a sorted copy */
		uint64_t *second = malloc((L->ns + 1) * sizeof(*second));
		if (!second)
			return;
		uint64_t k = 0;
		for (uint64_t i = 0; i < L->ns; i++)
			if (L->s[i].n > 1)
				second[k++] = L->pcs[L->s[i].first + 1];
		qsort(second, k, sizeof(*second), u64_cmp);
		uint64_t best = 0, best_n = 0;
		for (uint64_t i = 0, j; i < k; i = j) {
			for (j = i; j < k && second[j] == second[i]; j++)
				;
			if (j - i > best_n)
				best_n = j - i, best = second[i];
		}
		free(second);
		if (k == 0 || best_n < L->ns - margin)
			return;
		for (uint64_t i = 0; i < L->ns; i++)
			if (L->s[i].n > 1 && L->pcs[L->s[i].first + 1] == best)
				drop_second(L, &L->s[i]);
	}
}

/* Is c a hex digit? Its value in *v. */
static bool hexval(char c, unsigned *v)
{
	if (c >= '0' && c <= '9')
		*v = (unsigned)(c - '0');
	else if (c >= 'a' && c <= 'f')
		*v = (unsigned)(c - 'a' + 10);
	else if (c >= 'A' && c <= 'F')
		*v = (unsigned)(c - 'A' + 10);
	else
		return false;
	return true;
}

/* A hex number at *p (an optional 0x); false if none. */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t v = 0;
	unsigned d;
	const char *start = s;
	while (s < end && hexval(*s, &d) && s - start < 16)
		v = v << 4 | d, s++;
	if (s == start)
		return false;
	*p = s;
	*out = v;
	return true;
}

static void skip_space(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

/* The next whitespace-separated word of the line; false at its end. */
static bool next_word(const char **p, const char *end, const char **w, size_t *len)
{
	skip_space(p, end);
	if (*p >= end)
		return false;
	*w = *p;
	while (*p < end && **p != ' ' && **p != '\t')
		(*p)++;
	*len = (size_t)(*p - *w);
	return true;
}

/* A line of /proc/PID/maps ("start-end perms offset dev inode path") or the brief form
 * ("start-end [perms] [path]"); executable mappings (or those without permissions) are kept.
 * Lines of another shape are skipped, as pprof does. */
static int parse_map_line(struct lload *L, const char *s, const char *end)
{
	uint64_t start, limit, offset = 0;
	skip_space(&s, end);
	if (!parse_hex(&s, end, &start))
		return 0;
	if (s < end && (*s == '-' || *s == ' '))
		s++;
	skip_space(&s, end);
	if (!parse_hex(&s, end, &limit))
		return 0;
	const char *w[5];
	size_t wl[5];
	int nw = 0;
	while (nw < 5 && next_word(&s, end, &w[nw], &wl[nw]))
		nw++;
	/* permissions: four of "-rwxps" (the line is not NUL-terminated: no strspn) */
	bool has_perm = nw > 0 && wl[0] == 4;
	for (size_t i = 0; has_perm && i < 4; i++)
		has_perm = memchr("-rwxps", w[0][i], 6) != NULL;
	if (has_perm && memchr(w[0], 'x', 4) == NULL)
		return 0;
	const char *path = NULL;
	size_t path_len = 0;
	if (has_perm && nw >= 4) { /* perms offset dev inode [path ...] */
		const char *o = w[1];
		if (!parse_hex(&o, w[1] + wl[1], &offset))
			return 0;
		if (nw >= 5) {
			path = w[4];
			/* the path runs to the end of the line (it may hold spaces) */
			const char *e = end;
			while (e > path && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				e--;
			path_len = (size_t)(e - path);
		}
	} else if (nw >= (has_perm ? 2 : 1)) {
		path = w[has_perm ? 1 : 0];
		path_len = wl[has_perm ? 1 : 0];
	}
	if (!grow_array((void **)&L->maps, sizeof(*L->maps), &L->maps_cap, L->nmaps + 1))
		return loom(L);
	L->maps[L->nmaps++] = (struct lmap){ start, limit, offset, path, path_len };
	return 0;
}

static bool same_path(const struct lmap *a, const struct lmap *b)
{
	return a->path_len == b->path_len && memcmp(a->path, b->path, a->path_len) == 0;
}

/* Is the path a shared library or a pseudo-file ([vdso])? Not the main binary then. */
static bool not_main(const struct lmap *mp)
{
	if (!mp->path_len || mp->path[0] == '[')
		return true;
	for (size_t i = 0; i + 3 <= mp->path_len; i++)
		if (memcmp(mp->path + i, ".so", 3) == 0 &&
		    (i + 3 == mp->path_len || mp->path[i + 3] == '.' || mp->path[i + 3] == '_'))
			return true;
	return false;
}

/* Adjacent pieces of one binary merged, the main binary first. */
static void massage_maps(struct lload *L)
{
	uint64_t k = 0;
	for (uint64_t i = 0; i < L->nmaps; i++) {
		struct lmap *mp = &L->maps[i];
		if (k > 0) {
			struct lmap *lm = &L->maps[k - 1];
			if ((!lm->path_len || !mp->path_len || same_path(lm, mp)) &&
			    lm->limit == mp->start) {
				lm->limit = mp->limit;
				if (mp->path_len)
					lm->path = mp->path, lm->path_len = mp->path_len;
				continue;
			}
		}
		L->maps[k++] = *mp;
	}
	L->nmaps = k;
	for (uint64_t i = 0; i < L->nmaps; i++) {
		if (not_main(&L->maps[i]))
			continue;
		struct lmap t = L->maps[0];
		L->maps[0] = L->maps[i];
		L->maps[i] = t;
		break;
	}
	/* a main binary mapped at 0x400000 + offset (a remapped text section) starts at
	 * 0x400000 */
	if (L->nmaps && L->maps[0].start - L->maps[0].offset == 0x400000) {
		L->maps[0].start = 0x400000;
		L->maps[0].offset = 0;
	}
}

/* Build the model from the samples and mappings read. */
static int build(struct lload *L, uint64_t period_us)
{
	struct model *m = L->m;
	uint32_t file = model_add_file(m, L->name, "gperftools-cpu");
	if (file == UINT32_MAX)
		return loom(L);
	struct model_value_type vt[2] = {
		{ model_intern(m, "samples", 7), model_intern(m, "count", 5) },
		{ model_intern(m, "cpu", 3), model_intern(m, "nanoseconds", 11) },
	};
	int64_t period_ns = (int64_t)(period_us > INT64_MAX / 1000 ? 0 : period_us * 1000);
	struct model_file *mf = &m->files[file];
	mf->period_type = vt[1].type;
	mf->period_unit = vt[1].unit;
	mf->period = period_ns;
	if (!model_set_sample_types(m, file, vt, 2, 1))
		return loom(L);
	/* the mappings, and one of everything for addresses outside them */
	uint32_t first_map = m->nmappings;
	for (uint64_t i = 0; i < L->nmaps; i++) {
		struct model_mapping mp = { file,
					    L->maps[i].start,
					    L->maps[i].limit,
					    L->maps[i].offset,
					    model_intern(m, L->maps[i].path, L->maps[i].path_len),
					    0 };
		if (model_add_mapping(m, &mp) == UINT32_MAX)
			return loom(L);
	}
	bool fake = false;
	uint32_t track = model_add_track(m, MODEL_TRACK_THREAD, 0, 0, 0);
	if (track == MODEL_NO_TRACK)
		return loom(L);
	for (uint64_t i = 0; i < L->ns; i++) {
		const struct lsample *s = &L->s[i];
		uint32_t stack = MODEL_NO_STACK;
		for (uint32_t j = s->n; j-- > 0;) {
			uint64_t a = L->pcs[s->first + j];
			uint32_t module = 0;
			bool found = false;
			for (uint32_t k = first_map; k < m->nmappings && !found; k++)
				if (m->mappings[k].start <= a && a < m->mappings[k].limit)
					module = m->mappings[k].path, found = true;
			fake |= !found && a != 0;
			uint32_t fr = model_add_frame(m, 0, 0, 0, module, a, MODEL_FRAME_NATIVE);
			stack = fr == MODEL_NO_FRAME ? MODEL_NO_STACK
						     : model_add_stack(m, stack, fr);
			if (stack == MODEL_NO_STACK)
				return loom(L);
		}
		int64_t count = (int64_t)(s->count > INT64_MAX ? INT64_MAX : s->count);
		int64_t ns;
		if (__builtin_mul_overflow(count, period_ns, &ns))
			ns = INT64_MAX; /* a count no profiler wrote: saturated */
		int64_t v[2] = { count, ns };
		if (model_add_sample_values(m, track, 0, stack, v) == MODEL_NONE)
			return loom(L);
	}
	if (fake) {
		struct model_mapping mp = { file, 0, UINT64_MAX, 0, 0, 0 };
		if (model_add_mapping(m, &mp) == UINT32_MAX)
			return loom(L);
	}
	model_finish_tracks(m, track);
	mf = &m->files[file];
	mf->complete = true;
	mf->events = L->ns;
	mf->records = L->ns;
	m->events_total += L->ns;
	m->complete = (m->nfiles == 1 || m->complete) && mf->complete;
	return m->oom ? loom(L) : 0;
}

static int load_cpu(struct lload *L, const struct words *W, uint64_t period_us)
{
	size_t w = W->w, off = 5 * w;
	bool trailer = false;
	while (off < W->size) {
		if (W->size - off < 2 * w) {
			snprintf(L->err, L->errsize, "%s: offset %zu: truncated sample record",
				 L->name, off);
			return OPSCOPE_ETRUNCATED;
		}
		uint64_t count = word_at(W, off), n = word_at(W, off + w);
		if (n > (W->size - off - 2 * w) / w) {
			snprintf(L->err, L->errsize,
				 "%s: offset %zu: stack of %llu frames runs past the end of the "
				 "file",
				 L->name, off, (unsigned long long)n);
			return OPSCOPE_ETRUNCATED;
		}
		size_t rec = off;
		off += 2 * w;
		if (count == 0 && n == 1 && word_at(W, off) == 0) {
			off += w;
			trailer = true;
			break;
		}
		if (n > UINT32_MAX) {
			snprintf(L->err, L->errsize, "%s: offset %zu: stack of %llu frames",
				 L->name, rec, (unsigned long long)n);
			return OPSCOPE_EFORMAT;
		}
		if (!grow_array((void **)&L->s, sizeof(*L->s), &L->s_cap, L->ns + 1) ||
		    !grow_array((void **)&L->pcs, sizeof(*L->pcs), &L->pcs_cap, L->npcs + n))
			return loom(L);
		struct lsample *s = &L->s[L->ns++];
		s->count = count;
		s->first = L->npcs;
		s->n = (uint32_t)n;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t a = word_at(W, off + i * w);
			/* return addresses point after their call: back onto it */
			L->pcs[L->npcs++] = i > 0 && a > 0 ? a - 1 : a;
		}
		off += n * w;
	}
	strip_handler_frames(L);
	for (uint64_t i = 0; i < L->ns; i++) {
		struct lsample *s = &L->s[i];
		/* the leaf taken from both the signal context and the stack */
		if (s->n > 1 && L->pcs[s->first] == L->pcs[s->first + 1] + 1)
			drop_second(L, s);
	}
	if (trailer) {
		const char *t = (const char *)W->b + off, *end = (const char *)W->b + W->size;
		while (t < end) {
			const char *nl = memchr(t, '\n', (size_t)(end - t));
			const char *le = nl ? nl : end;
			int rc = parse_map_line(L, t, le);
			if (rc)
				return rc;
			t = nl ? nl + 1 : end;
		}
		massage_maps(L);
	}
	return build(L, period_us);
}

int legacy_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		    size_t errsize)
{
	struct lload L;
	memset(&L, 0, sizeof(L));
	L.m = m;
	L.name = name;
	L.err = err;
	L.errsize = errsize;
	struct words W;
	uint64_t java, period;
	const char *kind = text_kind(data, size);
	int rc;
	if (kind) {
		snprintf(err, errsize, "%s: offset 0: legacy %s profiles are not supported yet",
			 name, kind);
		rc = OPSCOPE_EUNSUPPORTED;
	} else if (!find_encoding(data, size, &W, &java, &period)) {
		snprintf(err, errsize,
			 "%s: offset 0: not a gperftools CPU profile (header is not 0, 3, 0, "
			 "period, 0)",
			 name);
		rc = OPSCOPE_EFORMAT;
	} else if (java) {
		snprintf(err, errsize,
			 "%s: offset %u: legacy Java CPU profiles are not supported yet", name,
			 2 * W.w);
		rc = OPSCOPE_EUNSUPPORTED;
	} else {
		rc = load_cpu(&L, &W, period);
	}
	free(L.s);
	free(L.pcs);
	free(L.maps);
	return rc;
}

int legacy_load_file(struct model *m, const char *path, char *err, size_t errsize)
{
	unsigned char *data;
	size_t size;
	int rc = pprof_read_file(path, &data, &size, err, errsize);
	if (rc)
		return rc;
	rc = legacy_load_mem(m, path, data, size, err, errsize);
	if (rc == 0 && m->nfiles)
		m->files[m->nfiles - 1].file_bytes = m->files[m->nfiles - 1].valid_end = size;
	free(data);
	return rc;
}
