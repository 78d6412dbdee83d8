/*
 * model.c: the in-memory event model (model.h): the string table, the column memory of
 * tracks and arguments, and the builders every loader and importer appends with (tracks,
 * ranges, instants, counters, arguments, flows, metadata, files, processes). Sorting and nesting the
 * ranges of a track are in sort.c; the loaders themselves live in src/formats/.
 *
 * Invariants kept here: string id 0 is "" and every interned string has one id (equal
 * strings share it); a string id handed out is < nstrings; room beyond a column's contents is
 * zero (see "Column memory"), so an element appended as 0 need not be written; counts never
 * go down. Nothing recurses on input depth; nothing is allocated per event except amortized
 * column growth.
 */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include "util/bytes.h"
#include "util/grow.h"

/* ---------------------------------------------------------------------------------------- */
/* Column memory. A column that outgrows COLUMN_MAP_BYTES gets a mapping of its own, aligned
 * for huge pages and grown with mremap: growth moves page tables instead of copying, and a
 * large load takes one page fault per 2 MiB instead of one per 4 KiB where the kernel has
 * transparent huge pages (madvise mode is enough). Smaller columns live in malloc. Every
 * column starts after a header that says which, so freeing never depends on a capacity.
 *
 * Room beyond a column's contents is zero (fresh mappings are; malloc'd room is cleared), and
 * counts never go down, so an element appended as 0 need not be written: the loader leaves
 * the argument and flag columns of a trace without arguments untouched, and their pages are
 * never faulted in. */

#define COLUMN_MAP_BYTES ((size_t)1 << 20)
#define HUGE_PAGE_BYTES	 ((size_t)2 << 20)

struct column_head {
	size_t map_len; /* bytes of the mapping the column lives in, 0 if from malloc */
	size_t bytes;	/* bytes of data it holds room for (keeps the data 16-byte aligned) */
};

static struct column_head *column_head(void *data)
{
	return (struct column_head *)((uint8_t *)data - sizeof(struct column_head));
}

/* A fresh 2 MiB-aligned mapping of `len` bytes (a multiple of HUGE_PAGE_BYTES), or NULL. */
static void *column_map(size_t len)
{
	size_t span = len + HUGE_PAGE_BYTES;
	uint8_t *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	uint8_t *a = (uint8_t *)(((uintptr_t)p + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + len < p + span)
		munmap(a + len, (size_t)(p + span - (a + len)));
	(void)madvise(a, len, MADV_HUGEPAGE); /* a hint: without THP it is 4 KiB pages */
	return a;
}

/* Resize column *pp to `bytes` (never smaller than its contents); false if out of memory,
 * with the column as it was. */
static bool column_resize(void **pp, size_t bytes)
{
	const size_t hs = sizeof(struct column_head);
	struct column_head *h = *pp ? column_head(*pp) : NULL;
	if (bytes > SIZE_MAX - hs - HUGE_PAGE_BYTES)
		return false;
	if (bytes + hs < COLUMN_MAP_BYTES && (!h || h->map_len == 0)) {
		size_t old = h ? h->bytes : 0;
		struct column_head *q = realloc(h, bytes + hs);
		if (!q)
			return false;
		if (bytes > old)
			memset((uint8_t *)(q + 1) + old, 0, bytes - old);
		q->map_len = 0;
		q->bytes = bytes;
		*pp = q + 1;
		return true;
	}
	size_t len = (bytes + hs + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
	if (h && h->map_len >= len) {
		h->bytes = bytes;
		return true;
	}
	if (h && h->map_len) {
		/* grow where it is if the addresses after it are free, else move it (page tables
		 * only) to a new aligned place */
		void *q = mremap(h, h->map_len, len, 0);
		if (q == MAP_FAILED) {
			void *to = column_map(len);
			if (!to)
				return false;
			q = mremap(h, h->map_len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
			if (q == MAP_FAILED) {
				munmap(to, len);
				return false;
			}
		}
		h = q;
		h->map_len = len;
		h->bytes = bytes;
		*pp = h + 1;
		return true;
	}
	struct column_head *q = column_map(len);
	if (!q)
		return false;
	if (h) {
		memcpy(q + 1, h + 1, h->bytes);
		free(h);
	}
	q->map_len = len;
	q->bytes = bytes;
	*pp = q + 1;
	return true;
}

static void column_free(void *data)
{
	if (!data)
		return;
	struct column_head *h = column_head(data);
	if (h->map_len)
		munmap(h, h->map_len);
	else
		free(h);
}

/* Grow one column to `n` elements (the column set shares a capacity). */
static bool column(void *pp, size_t size, uint64_t n)
{
	if (n > SIZE_MAX / size)
		return false;
	return column_resize(pp, (size_t)(n * size));
}

/* ---------------------------------------------------------------------------------------- */
/* Strings. */

/* Eight bytes at a time: importers intern every name and argument of every event. */
static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		h = (h ^ get_u64le((const uint8_t *)s + i)) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h = (h ^ get_upto8le((const uint8_t *)s + i, len - i)) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

/* A string looked up in the index: the model and the bytes. */
struct str_key {
	const struct model *m;
	const char *s;
	size_t len;
};

/* hindex_eq_fn: does string id hold the key's bytes? */
static bool str_eq(const void *ctx, uint32_t id)
{
	const struct str_key *k = ctx;
	return k->m->str_len[id] == k->len &&
	       memcmp(k->m->text + k->m->str_off[id], k->s, k->len) == 0;
}

/* hindex_hash_fn: the hash of string id, for growing the index. */
static uint64_t str_id_hash(const void *ctx, uint32_t id)
{
	const struct model *m = ctx;
	return str_hash(m->text + m->str_off[id], m->str_len[id]);
}

uint32_t model_intern(struct model *m, const char *s, size_t len)
{
	if (len == 0 || m->oom)
		return 0;
	if (len >= UINT32_MAX) {
		m->oom = true;
		return 0;
	}
	uint64_t h = str_hash(s, len);
	struct str_key key = { m, s, len };
	uint32_t found = hindex_find(&m->str_index, h, str_eq, &key);
	if (found != HINDEX_NONE)
		return found;
	if (!hindex_reserve(&m->str_index, str_id_hash, m)) {
		m->oom = true;
		return 0;
	}
	uint64_t need = (uint64_t)m->nstrings + 1;
	uint32_t cap = m->strings_cap, cap2 = m->strings_cap;
	if (!grow_array32((void **)&m->str_off, sizeof(*m->str_off), &cap, need) ||
	    !grow_array32((void **)&m->str_len, sizeof(*m->str_len), &cap2, need)) {
		m->oom = true;
		return 0;
	}
	m->strings_cap = cap < cap2 ? cap : cap2;
	uint64_t tcap = m->text_cap;
	if (!grow_array((void **)&m->text, 1, &tcap, m->text_len + len + 1)) {
		m->oom = true;
		return 0;
	}
	m->text_cap = (size_t)tcap;
	uint32_t id = m->nstrings++;
	m->str_off[id] = m->text_len;
	m->str_len[id] = (uint32_t)len;
	memcpy(m->text + m->text_len, s, len);
	m->text[m->text_len + len] = '\0';
	m->text_len += len + 1;
	hindex_insert(&m->str_index, h, id);
	return id;
}

uint32_t model_find_str(const struct model *m, const char *s)
{
	size_t len = strlen(s);
	if (len == 0)
		return 0;
	struct str_key key = { m, s, len };
	uint32_t id = hindex_find(&m->str_index, str_hash(s, len), str_eq, &key);
	return id == HINDEX_NONE ? 0 : id;
}

const char *model_str(const struct model *m, uint32_t id)
{
	if (id == 0 || id >= m->nstrings)
		return "";
	return m->text + m->str_off[id];
}

uint32_t model_strlen(const struct model *m, uint32_t id)
{
	if (id == 0 || id >= m->nstrings)
		return 0;
	return m->str_len[id];
}

/* ---------------------------------------------------------------------------------------- */
/* Model object and builders. */

struct model *model_new(void)
{
	struct model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->min_ns = INT64_MAX;
	m->max_ns = INT64_MIN;
	/* id 0 is the empty string */
	m->str_off = calloc(16, sizeof(*m->str_off));
	m->str_len = calloc(16, sizeof(*m->str_len));
	m->text = calloc(16, 1);
	if (!m->str_off || !m->str_len || !m->text) {
		model_free(m);
		return NULL;
	}
	m->strings_cap = 16;
	m->text_cap = 16;
	m->nstrings = 1;
	m->text_len = 1;
	return m;
}

static void track_free(struct model_track *t)
{
	struct model_ranges *r = &t->ranges;
	column_free(r->start_ns);
	column_free(r->dur_ns);
	column_free(r->name);
	column_free(r->category);
	column_free(r->flags);
	column_free(r->depth);
	column_free(r->first_arg);
	column_free(r->nargs);
	column_free(r->correlation);
	column_free(t->instants.ts_ns);
	column_free(t->instants.name);
	column_free(t->instants.category);
	column_free(t->instants.first_arg);
	column_free(t->instants.nargs);
	column_free(t->counters.ts_ns);
	column_free(t->counters.name);
	column_free(t->counters.value);
	column_free(t->samples.ts_ns);
	column_free(t->samples.stack);
	column_free(t->samples.weight);
	column_free(t->samples.flags);
	column_free(t->samples.first_value);
}

void model_free(struct model *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->ntracks; i++)
		track_free(&m->tracks[i]);
	free(m->tracks);
	for (uint32_t i = 0; i < m->nfiles; i++)
		free(m->files[i].clocks);
	free(m->files);
	free(m->processes);
	if (m->symbolizer && m->symbolizer_free)
		m->symbolizer_free(m->symbolizer);
	free(m->frames); /* stacks.c's tables */
	free(m->stacks);
	free(m->sample_types);
	free(m->sample_values);
	free(m->mappings);
	hindex_free(&m->frame_index);
	hindex_free(&m->stack_index);
	free(m->str_off);
	free(m->str_len);
	free(m->text);
	hindex_free(&m->str_index);
	column_free(m->args.key);
	column_free(m->args.type);
	column_free(m->args.bits);
	free(m->flows);
	free(m->meta);
	free(m->timers);
	free(m->drop_marks);
	free(m);
}

uint32_t model_find_process(const struct model *m, uint32_t file, uint32_t pid)
{
	/* files are loaded one after another, so a file's processes come together, after those
	 * of the files before it: a backward scan stops at the first process of an earlier file
	 * (a fleet of files loaded into one model holds many processes) */
	for (uint32_t i = m->nprocesses; i-- > 0 && m->processes[i].file >= file;)
		if (m->processes[i].file == file && m->processes[i].pid == pid)
			return i;
	return MODEL_NO_PROCESS;
}

uint32_t model_process(struct model *m, uint32_t file, uint32_t pid)
{
	uint32_t found = model_find_process(m, file, pid);
	if (found != MODEL_NO_PROCESS)
		return found;
	if (m->nprocesses >= UINT32_MAX - 1 ||
	    !grow_array32((void **)&m->processes, sizeof(*m->processes), &m->processes_cap,
			  (uint64_t)m->nprocesses + 1)) {
		m->oom = true;
		return MODEL_NO_PROCESS;
	}
	m->processes[m->nprocesses] = (struct model_process){ file, pid, -1, 0, 0 };
	return m->nprocesses++;
}

uint32_t model_add_track(struct model *m, uint32_t kind, uint32_t pid, uint64_t tid, uint32_t name)
{
	uint32_t file = m->nfiles ? m->nfiles - 1 : 0;
	uint32_t process =
		kind == MODEL_TRACK_DEVICE ? MODEL_NO_PROCESS : model_process(m, file, pid);
	if ((process == MODEL_NO_PROCESS && kind != MODEL_TRACK_DEVICE) ||
	    m->ntracks >= UINT32_MAX - 1 ||
	    !grow_array32((void **)&m->tracks, sizeof(*m->tracks), &m->tracks_cap,
			  (uint64_t)m->ntracks + 1)) {
		m->oom = true;
		return MODEL_NO_TRACK;
	}
	struct model_track *t = &m->tracks[m->ntracks];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->pid = pid;
	t->tid = tid;
	t->name = name;
	t->file = file;
	t->process = process;
	if (kind == MODEL_TRACK_DEVICE) {
		t->device = pid;
		t->stream = tid;
	}
	t->min_ns = INT64_MAX;
	t->max_ns = INT64_MIN;
	return m->ntracks++;
}

uint32_t model_add_device_track(struct model *m, uint32_t device, uint64_t stream, uint32_t process,
				uint32_t name)
{
	uint32_t t = model_add_track(m, MODEL_TRACK_DEVICE, device, stream, name);
	if (t != MODEL_NO_TRACK)
		m->tracks[t].process = process;
	return t;
}

uint64_t model_add_range(struct model *m, uint32_t track, int64_t start_ns, int64_t dur_ns,
			 uint32_t name, uint8_t category, uint32_t depth)
{
	struct model_track *t = &m->tracks[track];
	struct model_ranges *r = &t->ranges;
	if (t->nranges == t->nranges_cap) {
		uint64_t n = t->nranges_cap ? t->nranges_cap * 2 : 64;
		if (!column(&r->start_ns, sizeof(*r->start_ns), n) ||
		    !column(&r->dur_ns, sizeof(*r->dur_ns), n) ||
		    !column(&r->name, sizeof(*r->name), n) ||
		    !column(&r->category, sizeof(*r->category), n) ||
		    !column(&r->flags, sizeof(*r->flags), n) ||
		    !column(&r->depth, sizeof(*r->depth), n) ||
		    !column(&r->first_arg, sizeof(*r->first_arg), n) ||
		    !column(&r->nargs, sizeof(*r->nargs), n) ||
		    (r->correlation && !column(&r->correlation, sizeof(*r->correlation), n))) {
			m->oom = true;
			return MODEL_NONE;
		}
		t->nranges_cap = n;
	}
	uint64_t i = t->nranges++;
	if (r->correlation)
		r->correlation[i] = 0;
	r->start_ns[i] = start_ns;
	r->dur_ns[i] = dur_ns;
	r->name[i] = name;
	r->category[i] = category;
	r->flags[i] = 0;
	r->depth[i] = depth;
	r->first_arg[i] = 0;
	r->nargs[i] = 0;
	return i;
}

/* Move column entries i + 1 .. n - 1 down one place. */
#define REMOVE_AT(col, i, n) memmove(&(col)[i], &(col)[(i) + 1], ((n) - (i)-1) * sizeof(*(col)))

void model_remove_range(struct model *m, uint32_t track, uint64_t i)
{
	struct model_track *t = &m->tracks[track];
	struct model_ranges *r = &t->ranges;
	uint64_t n = t->nranges;
	if (i >= n)
		return;
	REMOVE_AT(r->start_ns, i, n);
	REMOVE_AT(r->dur_ns, i, n);
	REMOVE_AT(r->name, i, n);
	REMOVE_AT(r->category, i, n);
	REMOVE_AT(r->flags, i, n);
	REMOVE_AT(r->depth, i, n);
	REMOVE_AT(r->first_arg, i, n);
	REMOVE_AT(r->nargs, i, n);
	if (r->correlation)
		REMOVE_AT(r->correlation, i, n);
	t->nranges--;
	for (uint64_t k = 0; k < m->nflows; k++) {
		struct model_flow *f = &m->flows[k];
		if (f->from_track == track && f->from_range != MODEL_NONE && f->from_range >= i)
			f->from_range = f->from_range == i ? MODEL_NONE : f->from_range - 1;
		if (f->to_track == track && f->to_range != MODEL_NONE && f->to_range >= i)
			f->to_range = f->to_range == i ? MODEL_NONE : f->to_range - 1;
	}
}

#undef REMOVE_AT

bool model_set_correlation(struct model *m, uint32_t track, uint64_t i, uint64_t corr)
{
	struct model_ranges *r = &m->tracks[track].ranges;
	if (!r->correlation) {
		if (corr == 0)
			return true;
		/* made with the room the other columns have (zero: no correlation) and grown with
		 * them from now on */
		if (!column(&r->correlation, sizeof(*r->correlation),
			    m->tracks[track].nranges_cap)) {
			m->oom = true;
			return false;
		}
	}
	r->correlation[i] = corr;
	return true;
}

bool model_correlations_from_args(struct model *m, uint32_t first_track)
{
	uint32_t key = model_find_str(m, "correlation");
	if (!key)
		return true; /* no argument has the key: nothing to read */
	for (uint32_t t = first_track; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (!tr->ranges.nargs[i])
				continue;
			uint64_t a = model_range_arg(m, t, i, key);
			if (a == MODEL_NONE ||
			    (m->args.type[a] != MODEL_ARG_I64 && m->args.type[a] != MODEL_ARG_U64))
				continue;
			if (!model_set_correlation(m, t, i, m->args.bits[a]))
				return false;
		}
	}
	return true;
}

uint64_t model_add_instant(struct model *m, uint32_t track, int64_t ts_ns, uint32_t name,
			   uint8_t category)
{
	struct model_track *t = &m->tracks[track];
	struct model_instants *r = &t->instants;
	if (t->ninstants == t->ninstants_cap) {
		uint64_t n = t->ninstants_cap ? t->ninstants_cap * 2 : 16;
		if (!column(&r->ts_ns, sizeof(*r->ts_ns), n) ||
		    !column(&r->name, sizeof(*r->name), n) ||
		    !column(&r->category, sizeof(*r->category), n) ||
		    !column(&r->first_arg, sizeof(*r->first_arg), n) ||
		    !column(&r->nargs, sizeof(*r->nargs), n)) {
			m->oom = true;
			return MODEL_NONE;
		}
		t->ninstants_cap = n;
	}
	uint64_t i = t->ninstants++;
	r->ts_ns[i] = ts_ns;
	r->name[i] = name;
	r->category[i] = category;
	r->first_arg[i] = 0;
	r->nargs[i] = 0;
	return i;
}

uint64_t model_add_counter(struct model *m, uint32_t track, int64_t ts_ns, uint32_t name,
			   double value)
{
	struct model_track *t = &m->tracks[track];
	struct model_counters *r = &t->counters;
	if (t->ncounters == t->ncounters_cap) {
		uint64_t n = t->ncounters_cap ? t->ncounters_cap * 2 : 16;
		if (!column(&r->ts_ns, sizeof(*r->ts_ns), n) ||
		    !column(&r->name, sizeof(*r->name), n) ||
		    !column(&r->value, sizeof(*r->value), n)) {
			m->oom = true;
			return MODEL_NONE;
		}
		t->ncounters_cap = n;
	}
	uint64_t i = t->ncounters++;
	r->ts_ns[i] = ts_ns;
	r->name[i] = name;
	r->value[i] = value;
	return i;
}

uint64_t model_add_sample(struct model *m, uint32_t track, int64_t ts_ns, uint32_t stack,
			  int64_t weight)
{
	struct model_track *t = &m->tracks[track];
	struct model_samples *r = &t->samples;
	if (t->nsamples == t->nsamples_cap) {
		uint64_t n = t->nsamples_cap ? t->nsamples_cap * 2 : 64;
		if (!column(&r->ts_ns, sizeof(*r->ts_ns), n) ||
		    !column(&r->stack, sizeof(*r->stack), n) ||
		    !column(&r->weight, sizeof(*r->weight), n) ||
		    !column(&r->flags, sizeof(*r->flags), n)) {
			m->oom = true;
			return MODEL_NONE;
		}
		t->nsamples_cap = n;
	}
	uint64_t i = t->nsamples++;
	r->ts_ns[i] = ts_ns;
	r->stack[i] = stack;
	r->weight[i] = weight;
	r->flags[i] = 0;
	return i;
}

uint64_t model_add_sample_values(struct model *m, uint32_t track, int64_t ts_ns, uint32_t stack,
				 const int64_t *values)
{
	struct model_track *t = &m->tracks[track];
	const struct model_file *f = t->file < m->nfiles ? &m->files[t->file] : NULL;
	uint32_t n = f ? f->nsample_types : 0;
	if (n == 0)
		return model_add_sample(m, track, ts_ns, stack, values[0]);
	if (!grow_array((void **)&m->sample_values, sizeof(*m->sample_values),
			&m->sample_values_cap, m->nsample_values + n)) {
		m->oom = true;
		return MODEL_NONE;
	}
	uint64_t cap = t->nsamples_cap;
	uint64_t i = model_add_sample(m, track, ts_ns, stack, values[f->weight_type]);
	if (i == MODEL_NONE)
		return MODEL_NONE;
	struct model_samples *r = &t->samples;
	/* the column of value indexes keeps the track's sample capacity, made at the first
	 * sample that has values */
	if ((!r->first_value || t->nsamples_cap != cap) &&
	    !column(&r->first_value, sizeof(*r->first_value), t->nsamples_cap)) {
		t->nsamples--;
		m->oom = true;
		return MODEL_NONE;
	}
	r->first_value[i] = m->nsample_values;
	memcpy(m->sample_values + m->nsample_values, values, n * sizeof(*values));
	m->nsample_values += n;
	return i;
}

uint64_t model_add_arg(struct model *m, uint32_t key, uint8_t type, uint64_t bits)
{
	if (m->nargs == m->args_cap) {
		uint64_t n = m->args_cap ? m->args_cap * 2 : 64;
		if (!column(&m->args.key, sizeof(*m->args.key), n) ||
		    !column(&m->args.type, sizeof(*m->args.type), n) ||
		    !column(&m->args.bits, sizeof(*m->args.bits), n)) {
			m->oom = true;
			return MODEL_NONE;
		}
		m->args_cap = n;
	}
	uint64_t i = m->nargs++;
	m->args.key[i] = key;
	m->args.type[i] = type;
	m->args.bits[i] = bits;
	return i;
}

bool model_reserve_args(struct model *m, uint64_t n)
{
	if (n <= m->args_cap)
		return true;
	if (!column(&m->args.key, sizeof(*m->args.key), n) ||
	    !column(&m->args.type, sizeof(*m->args.type), n) ||
	    !column(&m->args.bits, sizeof(*m->args.bits), n))
		return false; /* those grown keep their contents: args_cap still holds */
	m->args_cap = n;
	return true;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels say EINVAL */
#endif

void model_prefault(const void *col, size_t size, uint64_t from, uint64_t to)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)col + from * size) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)col + to * size) & ~(page - 1);
	if (col && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

uint64_t model_add_flow(struct model *m, uint64_t id, uint32_t from_track, int64_t from_ns,
			uint32_t to_track, int64_t to_ns)
{
	if (!grow_array((void **)&m->flows, sizeof(*m->flows), &m->flows_cap, m->nflows + 1)) {
		m->oom = true;
		return MODEL_NONE;
	}
	m->flows[m->nflows] = (struct model_flow){ id,	  from_track, to_track,	 from_ns,
						   to_ns, MODEL_NONE, MODEL_NONE };
	return m->nflows++;
}

/* The first range of a track starting after ts (nranges if none), galloping from `hint`
 * (a previous answer): flows come nearly in time order, so the answer is usually close to
 * the last one and a binary search over the whole track (cache misses all the way) is not
 * needed. */
static uint64_t first_after(const struct model_ranges *r, uint64_t n, int64_t ts, uint64_t hint)
{
	/* everything before lo starts at or before ts, everything from hi on after it */
	uint64_t lo = 0, hi = n;
	if (hint > n)
		hint = n;
	if (hint < n && r->start_ns[hint] <= ts) {
		lo = hint + 1;
		for (uint64_t step = 1; lo + step - 1 < n; step *= 2) {
			uint64_t probe = lo + step - 1;
			if (r->start_ns[probe] > ts) {
				hi = probe;
				break;
			}
			lo = probe + 1;
		}
	} else {
		hi = hint;
		for (uint64_t step = 1; step <= hi; step *= 2) {
			uint64_t probe = hi - step;
			if (r->start_ns[probe] <= ts) {
				lo = probe + 1;
				break;
			}
			hi = probe;
		}
	}
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (r->start_ns[mid] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The innermost range of track t that contains time ts, or MODEL_NONE; *hint: where the
 * search starts, and then the place found. */
static uint64_t innermost_range_at(const struct model *m, uint32_t t, int64_t ts, uint64_t *hint)
{
	const struct model_track *tr = &m->tracks[t];
	const struct model_ranges *r = &tr->ranges;
	uint64_t lo = first_after(r, tr->nranges, ts, *hint);
	*hint = lo;
	/* Walking back, the first range that contains ts is the innermost one; an outermost
	 * range that does not contain it hides everything before it. */
	for (uint64_t i = lo; i-- > 0;) {
		if (r->start_ns[i] + r->dur_ns[i] >= ts)
			return i;
		if (r->depth[i] == 0)
			break;
	}
	return MODEL_NONE;
}

void model_resolve_flows(struct model *m, uint64_t first)
{
	/* where the last search on each track ended (a few tracks: else from the middle) */
	enum { HINTS = 64 };
	uint64_t hint[HINTS] = { 0 };
	for (uint64_t f = first; f < m->nflows; f++) {
		struct model_flow *fl = &m->flows[f];
		uint64_t mid;
		if (fl->from_track != MODEL_NO_TRACK) {
			uint64_t *h = fl->from_track < HINTS ? &hint[fl->from_track] : &mid;
			mid = m->tracks[fl->from_track].nranges / 2;
			fl->from_range = innermost_range_at(m, fl->from_track, fl->from_ns, h);
		}
		if (fl->to_track != MODEL_NO_TRACK) {
			uint64_t *h = fl->to_track < HINTS ? &hint[fl->to_track] : &mid;
			mid = m->tracks[fl->to_track].nranges / 2;
			fl->to_range = innermost_range_at(m, fl->to_track, fl->to_ns, h);
		}
	}
}

uint64_t model_range_arg(const struct model *m, uint32_t track, uint64_t i, uint32_t key)
{
	const struct model_ranges *r = &m->tracks[track].ranges;
	uint64_t a = r->first_arg[i];
	for (uint32_t k = 0; k < r->nargs[i]; k++)
		if (m->args.key[a + k] == key)
			return a + k;
	return MODEL_NONE;
}

void model_set_meta(struct model *m, uint32_t pid, uint32_t key, uint32_t value)
{
	uint32_t file = m->nfiles ? m->nfiles - 1 : 0;
	for (uint32_t i = 0; i < m->nmeta; i++) {
		if (m->meta[i].file == file && m->meta[i].pid == pid && m->meta[i].key == key) {
			m->meta[i].value = value;
			return;
		}
	}
	if (!grow_array32((void **)&m->meta, sizeof(*m->meta), &m->meta_cap,
			  (uint64_t)m->nmeta + 1)) {
		m->oom = true;
		return;
	}
	m->meta[m->nmeta++] = (struct model_meta){ file, pid, key, value };
}

const char *model_file_meta(const struct model *m, uint32_t file, uint32_t pid, const char *key)
{
	for (uint32_t i = 0; i < m->nmeta; i++)
		if (m->meta[i].file == file && m->meta[i].pid == pid &&
		    strcmp(model_str(m, m->meta[i].key), key) == 0)
			return model_str(m, m->meta[i].value);
	return NULL;
}

const char *model_get_meta(const struct model *m, uint32_t pid, const char *key)
{
	/* entries are appended file after file: the last one is the last file's */
	for (uint32_t i = m->nmeta; i-- > 0;)
		if (m->meta[i].pid == pid && strcmp(model_str(m, m->meta[i].key), key) == 0)
			return model_str(m, m->meta[i].value);
	return NULL;
}

uint32_t model_pids(const struct model *m, uint32_t *pids, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		uint32_t pid = m->tracks[t].pid;
		if (m->tracks[t].kind == MODEL_TRACK_DEVICE)
			continue;
		bool seen = false;
		/* few processes per model: a linear scan of what is stored is enough */
		for (uint32_t i = 0; i < n && i < max; i++)
			seen = seen || pids[i] == pid;
		if (seen)
			continue;
		if (n < max)
			pids[n] = pid;
		else
			break;
		n++;
	}
	return n;
}

void model_finish_tracks(struct model *m, uint32_t first_track)
{
	for (uint32_t ti = first_track; ti < m->ntracks; ti++) {
		struct model_track *t = &m->tracks[ti];
		t->min_ns = INT64_MAX;
		t->max_ns = INT64_MIN;
		for (uint64_t j = 0; j < t->nranges; j++) {
			int64_t s = t->ranges.start_ns[j], e = s + t->ranges.dur_ns[j];
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = e > t->max_ns ? e : t->max_ns;
		}
		for (uint64_t j = 0; j < t->ninstants; j++) {
			int64_t s = t->instants.ts_ns[j];
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		for (uint64_t j = 0; j < t->ncounters; j++) {
			int64_t s = t->counters.ts_ns[j];
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		for (uint64_t j = 0; j < t->nsamples; j++) {
			int64_t s = t->samples.ts_ns[j];
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		m->min_ns = t->min_ns < m->min_ns ? t->min_ns : m->min_ns;
		m->max_ns = t->max_ns > m->max_ns ? t->max_ns : m->max_ns;
	}
}

uint32_t model_add_file(struct model *m, const char *path, const char *format)
{
	if (!grow_array32((void **)&m->files, sizeof(*m->files), &m->files_cap,
			  (uint64_t)m->nfiles + 1)) {
		m->oom = true;
		return UINT32_MAX;
	}
	struct model_file *f = &m->files[m->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = model_intern(m, path, strlen(path));
	f->format = model_intern(m, format, strlen(format));
	return m->nfiles++;
}
