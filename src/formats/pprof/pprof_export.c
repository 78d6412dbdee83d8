/*
 * pprof_export.c: the model's stack samples as a gzip'd profile.proto (pprof's
 * proto/profile.proto), the form `go tool pprof` and google-pprof read.
 *
 * What goes where: the sample types, period, period type, time and duration of the first file
 * that has samples (every file's value columns when all files with samples have the same
 * types, else one column of weights); every mapping of the model (id = index + 1); one
 * Function per distinct (name, source file); one Location per distinct run of frames that
 * make one machine location (a frame and the callers it is inlined into, MODEL_FRAMEF_INLINED:
 * its Lines innermost first), with the mapping that holds its address in its binary; one
 * Sample per model sample, leaf first, with a "thread" label naming its track (or a
 * "thread_id" one for an unnamed track with a tid). The importer (pprof_load.c) reads this
 * back into the same samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "opscope/opscope.h"

#include "formats/pprof/pprof.h"
#include "formats/pprof/protowire.h"
#include "util/grow.h"
#include "util/hashmap.h"

struct pexport {
	const struct model *m;
	struct buf out;	     /* the Profile message */
	struct hmap strs;    /* model string id -> string-table index */
	uint64_t *str_order; /* keys of the strings (see key_index) in table order */
	uint64_t nstr, str_cap;
	struct hmap funcs; /* name << 32 | file -> function id */
	uint64_t nfuncs;
	struct hmap loc_hash; /* hash of a location's frames -> location index (probed) */
	uint32_t *loc_frames; /* frames of each location, innermost first, back to back */
	uint64_t nloc_frames, loc_frames_cap;
	uint64_t *loc_first; /* per location: its first index in loc_frames, and one past the
				last location's end */
	uint64_t nlocs, loc_first_cap;
	uint64_t *entry_loc; /* per stack entry: location id + 1 of the run it starts, 0 unknown */
	bool oom;
};

/* Strings the table may need that the model may not hold. */
static const char *const literals[] = { "samples", "count", "thread", "thread_id" };
#define LITERAL (1ull << 32) /* a key of X->strs above the model's ids: literals[key - LITERAL] */

/* The string-table index of key k (a model string id, or LITERAL + i), added on first use. */
static uint64_t key_index(struct pexport *X, uint64_t k)
{
	if (k == 0)
		return 0;
	uint64_t *v = hmap_find(&X->strs, k);
	if (v)
		return *v;
	if (!grow_array((void **)&X->str_order, sizeof(*X->str_order), &X->str_cap, X->nstr + 1) ||
	    !hmap_put(&X->strs, k, X->nstr)) {
		X->oom = true;
		return 0;
	}
	X->str_order[X->nstr] = k;
	return X->nstr++;
}

static uint64_t str_index(struct pexport *X, uint32_t s)
{
	return key_index(X, s);
}

/* The index of literals[i], the model's copy if it has one. */
static uint64_t lit_index(struct pexport *X, unsigned i)
{
	uint32_t id = model_find_str(X->m, literals[i]);
	return key_index(X, id ? id : LITERAL + i);
}

static uint64_t func_id(struct pexport *X, uint32_t name, uint32_t file)
{
	uint64_t key = (uint64_t)name << 32 | file;
	uint64_t *v = hmap_find(&X->funcs, key);
	if (v)
		return *v;
	uint64_t id = ++X->nfuncs;
	if (!hmap_put(&X->funcs, key, id))
		X->oom = true;
	size_t at = pw_begin(&X->out, 5);
	pw_put_varint(&X->out, 1, id);
	pw_put_varint_nz(&X->out, 2, str_index(X, name));
	pw_put_varint_nz(&X->out, 3, str_index(X, name));
	pw_put_varint_nz(&X->out, 4, str_index(X, file));
	pw_end(&X->out, at);
	return id;
}

/* The mapping id (index + 1) of a native frame: the mapping of its binary that holds its
 * address, else one of its binary, else 0. */
static uint64_t mapping_of(const struct model *m, const struct model_frame *f)
{
	uint64_t any = 0;
	for (uint32_t i = 0; i < m->nmappings; i++) {
		const struct model_mapping *mp = &m->mappings[i];
		if (mp->path != f->module)
			continue;
		if (mp->start <= f->address && f->address < mp->limit)
			return i + 1;
		if (!any)
			any = i + 1;
	}
	return any;
}

/* The location id of the run of frames that starts at stack entry s; *next is the entry
 * after the run. */
static uint64_t location_of(struct pexport *X, uint32_t s, uint32_t *next)
{
	const struct model *m = X->m;
	uint32_t e = s, n = 0;
	uint64_t h = 0x84222325cbf29ce4ull;
	for (;;) {
		uint32_t fr = m->stacks[e].frame;
		h = (h ^ fr) * 0x100000001b3ull;
		n++;
		e = m->stacks[e].parent;
		if (!(m->frames[fr].flags & MODEL_FRAMEF_INLINED) || e == MODEL_NO_STACK)
			break;
	}
	*next = e;
	if (X->entry_loc[s])
		return X->entry_loc[s];
	/* the same run of frames elsewhere in the tree is the same location: probe h, h+1 ... */
	for (uint64_t k = h;; k++) {
		uint64_t *v = hmap_find(&X->loc_hash, k);
		if (!v)
			break;
		uint64_t a = X->loc_first[*v], b = X->loc_first[*v + 1];
		bool same = b - a == n;
		uint32_t t = s;
		for (uint64_t i = a; same && i < b; i++, t = m->stacks[t].parent)
			same = X->loc_frames[i] == m->stacks[t].frame;
		if (same)
			return X->entry_loc[s] = *v + 1;
		h = k + 1;
	}
	uint64_t li = X->nlocs;
	if (!grow_array((void **)&X->loc_frames, sizeof(*X->loc_frames), &X->loc_frames_cap,
			X->nloc_frames + n) ||
	    !grow_array((void **)&X->loc_first, sizeof(*X->loc_first), &X->loc_first_cap, li + 2) ||
	    !hmap_put(&X->loc_hash, h, li)) {
		X->oom = true;
		return 0;
	}
	X->loc_first[li] = X->nloc_frames;
	uint32_t t = s;
	for (uint32_t i = 0; i < n; i++, t = m->stacks[t].parent)
		X->loc_frames[X->nloc_frames++] = m->stacks[t].frame;
	X->loc_first[li + 1] = X->nloc_frames;
	X->nlocs++;
	/* the Location: address and mapping of its frames (one machine location), a Line per
	 * frame with a function */
	const struct model_frame *f0 = &m->frames[m->stacks[s].frame];
	/* the Functions first: they are top-level messages, and the Location is open below */
	for (uint64_t i = X->loc_first[li]; i < X->loc_first[li + 1]; i++) {
		const struct model_frame *f = &m->frames[X->loc_frames[i]];
		if (f->name || f->file || f->line || X->loc_first[li + 1] - X->loc_first[li] > 1)
			func_id(X, f->name, f->file);
	}
	size_t at = pw_begin(&X->out, 4);
	pw_put_varint(&X->out, 1, li + 1);
	pw_put_varint_nz(&X->out, 2, f0->module ? mapping_of(m, f0) : 0);
	pw_put_varint_nz(&X->out, 3, f0->address);
	for (uint64_t i = X->loc_first[li]; i < X->loc_first[li + 1]; i++) {
		const struct model_frame *f = &m->frames[X->loc_frames[i]];
		if (!f->name && !f->file && !f->line &&
		    X->loc_first[li + 1] - X->loc_first[li] == 1)
			continue; /* unsymbolized: an address without lines */
		size_t ln = pw_begin(&X->out, 4);
		pw_put_varint(&X->out, 1, func_id(X, f->name, f->file));
		pw_put_varint_nz(&X->out, 2, (uint64_t)(int64_t)f->line);
		pw_end(&X->out, ln);
	}
	pw_end(&X->out, at);
	return X->entry_loc[s] = li + 1;
}

/* Do files a and b have the same sample types (by their text)? */
static bool same_types(const struct model *m, const struct model_file *a,
		       const struct model_file *b)
{
	if (a->nsample_types != b->nsample_types || a->weight_type != b->weight_type)
		return false;
	for (uint32_t i = 0; i < a->nsample_types; i++) {
		const struct model_value_type *x = &m->sample_types[a->first_sample_type + i];
		const struct model_value_type *y = &m->sample_types[b->first_sample_type + i];
		if (x->type != y->type || x->unit != y->unit)
			return false;
	}
	return true;
}

static void put_value_type(struct pexport *X, uint32_t number, uint32_t type, uint32_t unit)
{
	size_t at = pw_begin(&X->out, number);
	pw_put_varint_nz(&X->out, 1, str_index(X, type));
	pw_put_varint_nz(&X->out, 2, str_index(X, unit));
	pw_end(&X->out, at);
}

/* Build the Profile message in X->out. */
static void build(struct pexport *X)
{
	const struct model *m = X->m;
	/* the file whose sample types and period speak for the profile */
	const struct model_file *lead = NULL;
	bool all_same = true;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (!tr->nsamples || tr->file >= m->nfiles)
			continue;
		const struct model_file *f = &m->files[tr->file];
		if (!lead)
			lead = f;
		else if (!same_types(m, lead, f))
			all_same = false;
	}
	uint32_t ncols = lead && all_same && lead->nsample_types ? lead->nsample_types : 1;
	uint32_t weight_type = 0, weight_unit = 0;
	if (lead && lead->nsample_types) {
		const struct model_value_type *w =
			&m->sample_types[lead->first_sample_type + lead->weight_type];
		weight_type = w->type;
		weight_unit = w->unit;
	}
	if (ncols > 1) {
		for (uint32_t i = 0; i < ncols; i++) {
			const struct model_value_type *v =
				&m->sample_types[lead->first_sample_type + i];
			put_value_type(X, 1, v->type, v->unit);
		}
	} else if (weight_type) {
		put_value_type(X, 1, weight_type, weight_unit);
	} else {
		/* samples with a weight alone: counted samples */
		size_t at = pw_begin(&X->out, 1);
		pw_put_varint_nz(&X->out, 1, lit_index(X, 0));
		pw_put_varint_nz(&X->out, 2, lit_index(X, 1));
		pw_end(&X->out, at);
	}
	for (uint32_t i = 0; i < m->nmappings; i++) {
		const struct model_mapping *mp = &m->mappings[i];
		size_t at = pw_begin(&X->out, 3);
		pw_put_varint(&X->out, 1, i + 1);
		pw_put_varint_nz(&X->out, 2, mp->start);
		pw_put_varint_nz(&X->out, 3, mp->limit);
		pw_put_varint_nz(&X->out, 4, mp->offset);
		pw_put_varint_nz(&X->out, 5, str_index(X, mp->path));
		pw_put_varint_nz(&X->out, 6, str_index(X, mp->build_id));
		pw_end(&X->out, at);
	}
	X->entry_loc = calloc(m->nstacks + 1, sizeof(*X->entry_loc));
	uint64_t *locs = NULL, *vals = malloc(ncols * sizeof(*vals));
	uint64_t nlocs_cap = 0;
	if (!X->entry_loc || !vals) {
		X->oom = true;
		free(vals);
		return;
	}
	for (uint32_t t = 0; t < m->ntracks && !X->oom; t++) {
		const struct model_track *tr = &m->tracks[t];
		for (uint64_t i = 0; i < tr->nsamples && !X->oom; i++) {
			uint64_t n = 0;
			for (uint32_t s = tr->samples.stack[i]; s != MODEL_NO_STACK && !X->oom;) {
				uint32_t next;
				uint64_t id = location_of(X, s, &next);
				if (!grow_array((void **)&locs, sizeof(*locs), &nlocs_cap, n + 1)) {
					X->oom = true;
					break;
				}
				locs[n++] = id;
				s = next;
			}
			for (uint32_t c = 0; c < ncols; c++)
				vals[c] = (uint64_t)(ncols > 1 ? model_sample_value(m, tr, i, c)
							       : tr->samples.weight[i]);
			size_t at = pw_begin(&X->out, 2);
			pw_put_packed(&X->out, 1, locs, n);
			pw_put_packed(&X->out, 2, vals, ncols);
			if (tr->name || tr->tid) {
				/* the thread, as the importer reads it back */
				size_t l = pw_begin(&X->out, 3);
				if (tr->name) {
					pw_put_varint(&X->out, 1, lit_index(X, 2));
					pw_put_varint(&X->out, 2, str_index(X, tr->name));
				} else {
					pw_put_varint(&X->out, 1, lit_index(X, 3));
					pw_put_varint(&X->out, 3, tr->tid);
				}
				pw_end(&X->out, l);
			}
			pw_end(&X->out, at);
		}
	}
	free(locs);
	free(vals);
	if (lead) {
		pw_put_varint_nz(&X->out, 9, lead->create_realtime_ns);
		pw_put_varint_nz(&X->out, 10, (uint64_t)lead->duration_ns);
		if (lead->period_type || lead->period_unit)
			put_value_type(X, 11, lead->period_type, lead->period_unit);
		pw_put_varint_nz(&X->out, 12, (uint64_t)lead->period);
		if (ncols > 1)
			pw_put_varint_nz(&X->out, 14, str_index(X, weight_type));
	}
	/* the string table last: every index is known by now */
	pw_put_bytes(&X->out, 6, "", 0);
	for (uint64_t i = 1; i < X->nstr; i++) {
		uint64_t k = X->str_order[i];
		if (k >= LITERAL)
			pw_put_bytes(&X->out, 6, literals[k - LITERAL],
				     strlen(literals[k - LITERAL]));
		else
			pw_put_bytes(&X->out, 6, model_str(m, (uint32_t)k),
				     model_strlen(m, (uint32_t)k));
	}
}

/* gzip data[0..n) to out; 0 or an OPSCOPE_E* code with err set. */
static int write_gzip(FILE *out, const uint8_t *data, size_t n, char *err, size_t errsize)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		snprintf(err, errsize, "out of memory");
		return OPSCOPE_ENOMEM;
	}
	uint8_t chunk[1 << 16];
	size_t in = 0;
	int zr, rc = 0;
	do {
		size_t left = n - in;
		z.next_in = (uint8_t *)data + in;
		z.avail_in = (uInt)(left < (1u << 30) ? left : (1u << 30));
		uInt had = z.avail_in;
		int flush = left <= (1u << 30) ? Z_FINISH : Z_NO_FLUSH;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			zr = deflate(&z, flush);
			size_t got = sizeof(chunk) - z.avail_out;
			if (got && fwrite(chunk, 1, got, out) != got) {
				snprintf(err, errsize, "%s", strerror(errno));
				rc = OPSCOPE_EIO;
				break;
			}
		} while (z.avail_out == 0);
		in += had - z.avail_in;
	} while (rc == 0 && zr != Z_STREAM_END);
	deflateEnd(&z);
	return rc;
}

int pprof_export(const struct model *m, FILE *out, char *err, size_t errsize)
{
	struct pexport X;
	memset(&X, 0, sizeof(X));
	X.m = m;
	buf_init(&X.out);
	/* string index 0 is "" */
	if (!grow_array((void **)&X.str_order, sizeof(*X.str_order), &X.str_cap, 1))
		X.oom = true;
	else
		X.str_order[X.nstr++] = 0;
	if (!X.oom)
		build(&X);
	int rc = 0;
	if (X.oom || X.out.oom) {
		snprintf(err, errsize, "out of memory");
		rc = OPSCOPE_ENOMEM;
	} else {
		rc = write_gzip(out, X.out.data, X.out.len, err, errsize);
	}
	buf_free(&X.out);
	free(X.str_order);
	free(X.loc_frames);
	free(X.loc_first);
	free(X.entry_loc);
	hmap_free(&X.strs);
	hmap_free(&X.funcs);
	hmap_free(&X.loc_hash);
	return rc;
}
