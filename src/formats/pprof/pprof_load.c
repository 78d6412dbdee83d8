/*
 * pprof_load.c: the importer of pprof's profile.proto (github.com/google/pprof,
 * proto/profile.proto), gzip'd or plain, into the model's stack samples (docs/import-pprof.md).
 *
 * A Profile refers to its strings, functions, mappings and locations by index or id, and any
 * of them may come after the fields that refer to them, so the message is walked several
 * times: strings and scalars first, then mappings and functions, then locations, then samples.
 * Each location becomes one model frame per line entry (the innermost first, each but the last
 * marked MODEL_FRAMEF_INLINED), or one frame of its address alone when it has no lines
 * (unsymbolized). A sample's locations (leaf first) become a path of the stack prefix tree
 * from the root down. Samples go on one track per value of a "thread" or "thread_id" label,
 * else on one track for the profile. Their values keep every sample type; the weight is the
 * default sample type (else the last).
 *
 * Every error names the file and the offset in the decompressed bytes (in the compressed
 * ones for gzip errors), and the message is one line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "opscope/opscope.h"

#include "formats/pprof/pprof.h"
#include "formats/pprof/protowire.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_DROP_FRAMES = 7,
	PROFILE_KEEP_FRAMES = 8,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	PROFILE_DOC_URL = 15,
};

/* A location as loaded: its frames in loc_frames, innermost first. */
struct ploc {
	uint64_t first; /* index in loc_frames */
	uint32_t n;	/* frames */
};

/* A function as loaded (string ids of the model). */
struct pfunc {
	uint32_t name, file;
};

struct pload {
	struct model *m;
	const char *name; /* for messages */
	char *err;
	size_t errsize;
	int rc;
	uint32_t file; /* index in m->files */
	const uint8_t *data;
	size_t size;
	uint32_t *str; /* model string id of each string-table index */
	uint64_t nstr, str_cap;
	struct hmap fn_index; /* function id -> index in fns */
	struct pfunc *fns;
	uint64_t nfns, fns_cap;
	struct hmap map_index; /* mapping id -> string id of its path */
	struct hmap loc_index; /* location id -> index in locs */
	struct ploc *locs;
	uint64_t nlocs, locs_cap;
	uint32_t *loc_frames;
	uint64_t nloc_frames, loc_frames_cap;
	struct hmap threads; /* thread label -> track */
	uint32_t default_track;
	uint32_t thread_keys[2]; /* string-table indexes of "thread" and "thread_id", or 0 */
	uint32_t nthread_keys;
	uint64_t default_type_str; /* string-table index of default_sample_type's name, 0 */
};

static int perr(struct pload *P, int rc, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int perr(struct pload *P, int rc, size_t off, const char *fmt, ...)
{
	if (P->rc)
		return P->rc;
	int k = snprintf(P->err, P->errsize, "%s: offset %zu: ", P->name, off);
	if (k >= 0 && (size_t)k < P->errsize) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(P->err + k, P->errsize - (size_t)k, fmt, ap);
		va_end(ap);
	}
	P->rc = rc;
	return rc;
}

static int oom(struct pload *P)
{
	if (!P->rc) {
		snprintf(P->err, P->errsize, "%s: out of memory", P->name);
		P->rc = OPSCOPE_ENOMEM;
	}
	return P->rc;
}

/* A reader's failure as the load's error. */
static int wire_err(struct pload *P, const struct pw_reader *r)
{
	return perr(P, OPSCOPE_EFORMAT, r->err_off, "%s", r->err);
}

static const char *wire_name(uint8_t w)
{
	static const char *const names[] = { "varint", "64-bit",    "length-delimited",
					     "group",  "group end", "32-bit",
					     "6",      "7" };
	return names[w & 7];
}

/* Is field f of the message `what` of wire type w? Else the load's error. */
static bool want(struct pload *P, const struct pw_field *f, uint8_t w, const char *what)
{
	if (f->wire == w)
		return true;
	perr(P, OPSCOPE_EFORMAT, f->offset, "%s field %u: wire type %s, expected %s", what,
	     f->number, wire_name(f->wire), wire_name(w));
	return false;
}

/* The model string id of string-table index i (field at `off` for messages). */
static bool str_at(struct pload *P, uint64_t i, size_t off, uint32_t *id)
{
	if (i >= P->nstr) {
		perr(P, OPSCOPE_EFORMAT, off, "string index %llu out of range (%llu strings)",
		     (unsigned long long)i, (unsigned long long)P->nstr);
		return false;
	}
	*id = P->str[i];
	return true;
}

/* Walk the top-level fields, calling fn on each of field number `number` (0: every field). */
static int each_field(struct pload *P, uint32_t number,
		      int (*fn)(struct pload *P, const struct pw_field *f))
{
	struct pw_reader r;
	struct pw_field f;
	int k;
	pw_init(&r, P->data, P->size, 0);
	while ((k = pw_next(&r, &f)) == 1)
		if ((number == 0 || f.number == number) && fn(P, &f) != 0)
			return P->rc;
	return k < 0 ? wire_err(P, &r) : 0;
}

/* Pass 1: the string table. */
static int load_string(struct pload *P, const struct pw_field *f)
{
	if (!want(P, f, PW_LEN, "Profile.string_table"))
		return P->rc;
	if (!grow_array((void **)&P->str, sizeof(*P->str), &P->str_cap, P->nstr + 1))
		return oom(P);
	uint32_t id = model_intern(P->m, (const char *)f->data, f->len);
	if (P->m->oom)
		return oom(P);
	P->str[P->nstr++] = id;
	return 0;
}

/* A ValueType message: type and unit as string ids; type_index its string-table index. */
static int value_type(struct pload *P, const struct pw_field *f, struct model_value_type *vt,
		      uint64_t *type_index)
{
	if (!want(P, f, PW_LEN, "Profile"))
		return P->rc;
	struct pw_reader r;
	struct pw_field g;
	int k;
	pw_sub(&r, f);
	memset(vt, 0, sizeof(*vt));
	*type_index = 0;
	while ((k = pw_next(&r, &g)) == 1) {
		if (g.number != 1 && g.number != 2)
			continue;
		if (!want(P, &g, PW_VARINT, "ValueType"))
			return P->rc;
		if (!str_at(P, g.value, g.offset, g.number == 1 ? &vt->type : &vt->unit))
			return P->rc;
		if (g.number == 1)
			*type_index = g.value;
	}
	return k < 0 ? wire_err(P, &r) : 0;
}

/* Pass 2: scalars, period type, sample types. */
static int load_header(struct pload *P)
{
	struct model *m = P->m;
	struct model_file *mf = &m->files[P->file];
	struct model_value_type *types = NULL;
	uint64_t *type_index = NULL;
	uint64_t ntypes = 0, cap = 0, tcap = 0;
	struct pw_reader r;
	struct pw_field f;
	int k;
	pw_init(&r, P->data, P->size, 0);
	while ((k = pw_next(&r, &f)) == 1 && !P->rc) {
		switch (f.number) {
		case PROFILE_SAMPLE_TYPE:
			if (!grow_array((void **)&types, sizeof(*types), &cap, ntypes + 1) ||
			    !grow_array((void **)&type_index, sizeof(*type_index), &tcap,
					ntypes + 1)) {
				oom(P);
				break;
			}
			value_type(P, &f, &types[ntypes], &type_index[ntypes]);
			ntypes++;
			break;
		case PROFILE_PERIOD_TYPE: {
			struct model_value_type vt;
			uint64_t ti;
			if (value_type(P, &f, &vt, &ti) == 0) {
				mf->period_type = vt.type;
				mf->period_unit = vt.unit;
			}
			break;
		}
		case PROFILE_TIME_NANOS:
		case PROFILE_DURATION_NANOS:
		case PROFILE_PERIOD:
		case PROFILE_DEFAULT_SAMPLE_TYPE:
		case PROFILE_DROP_FRAMES:
		case PROFILE_KEEP_FRAMES:
		case PROFILE_DOC_URL:
			if (!want(P, &f, PW_VARINT, "Profile"))
				break;
			if (f.number == PROFILE_TIME_NANOS)
				mf->create_realtime_ns = f.value;
			else if (f.number == PROFILE_DURATION_NANOS)
				mf->duration_ns = (int64_t)f.value;
			else if (f.number == PROFILE_PERIOD)
				mf->period = (int64_t)f.value;
			else if (f.number == PROFILE_DEFAULT_SAMPLE_TYPE)
				P->default_type_str = f.value;
			break;
		case PROFILE_SAMPLE:
		case PROFILE_MAPPING:
		case PROFILE_LOCATION:
		case PROFILE_FUNCTION:
			want(P, &f, PW_LEN, "Profile");
			break;
		default: /* comments and fields newer than this reader */
			break;
		}
	}
	if (k < 0)
		wire_err(P, &r);
	if (!P->rc && ntypes > UINT32_MAX / 2)
		perr(P, OPSCOPE_EFORMAT, 0, "too many sample types");
	if (!P->rc) {
		/* the weight: the default sample type named by its type, else the last */
		uint32_t weight = ntypes ? (uint32_t)ntypes - 1 : 0;
		for (uint64_t i = 0; P->default_type_str && i < ntypes; i++)
			if (type_index[i] == P->default_type_str) {
				weight = (uint32_t)i;
				break;
			}
		if (!model_set_sample_types(m, P->file, types, (uint32_t)ntypes, weight))
			oom(P);
	}
	free(types);
	free(type_index);
	return P->rc;
}

static int load_mapping(struct pload *P, const struct pw_field *f)
{
	struct pw_reader r;
	struct pw_field g;
	int k;
	uint64_t id = 0;
	struct model_mapping mp;
	memset(&mp, 0, sizeof(mp));
	mp.file = P->file;
	pw_sub(&r, f);
	while ((k = pw_next(&r, &g)) == 1) {
		if (g.number > 10)
			continue;
		if (!want(P, &g, PW_VARINT, "Mapping"))
			return P->rc;
		switch (g.number) {
		case 1:
			id = g.value;
			break;
		case 2:
			mp.start = g.value;
			break;
		case 3:
			mp.limit = g.value;
			break;
		case 4:
			mp.offset = g.value;
			break;
		case 5:
			if (!str_at(P, g.value, g.offset, &mp.path))
				return P->rc;
			break;
		case 6:
			if (!str_at(P, g.value, g.offset, &mp.build_id))
				return P->rc;
			break;
		default: /* has_functions and the other symbolization flags */
			break;
		}
	}
	if (k < 0)
		return wire_err(P, &r);
	if (model_add_mapping(P->m, &mp) == UINT32_MAX || !hmap_put(&P->map_index, id, mp.path))
		return oom(P);
	return 0;
}

static int load_function(struct pload *P, const struct pw_field *f)
{
	struct pw_reader r;
	struct pw_field g;
	int k;
	uint64_t id = 0;
	struct pfunc fn = { 0, 0 };
	pw_sub(&r, f);
	while ((k = pw_next(&r, &g)) == 1) {
		if (g.number > 5)
			continue;
		if (!want(P, &g, PW_VARINT, "Function"))
			return P->rc;
		if (g.number == 1)
			id = g.value;
		else if (g.number == 2 && !str_at(P, g.value, g.offset, &fn.name))
			return P->rc;
		else if (g.number == 4 && !str_at(P, g.value, g.offset, &fn.file))
			return P->rc;
		/* system_name (3) and start_line (5) have no place in the model */
	}
	if (k < 0)
		return wire_err(P, &r);
	if (!grow_array((void **)&P->fns, sizeof(*P->fns), &P->fns_cap, P->nfns + 1) ||
	    !hmap_put(&P->fn_index, id, P->nfns))
		return oom(P);
	P->fns[P->nfns++] = fn;
	return 0;
}

/* Append a frame index to loc_frames. */
static bool push_frame(struct pload *P, uint32_t frame)
{
	if (frame == MODEL_NO_FRAME || !grow_array((void **)&P->loc_frames, sizeof(*P->loc_frames),
						   &P->loc_frames_cap, P->nloc_frames + 1)) {
		oom(P);
		return false;
	}
	P->loc_frames[P->nloc_frames++] = frame;
	return true;
}

static int load_location(struct pload *P, const struct pw_field *f)
{
	struct pw_reader r;
	struct pw_field g;
	int k;
	uint64_t id = 0, mapping = 0, address = 0;
	/* pass a: the scalars (the lines need the mapping and address, which may follow) */
	pw_sub(&r, f);
	while ((k = pw_next(&r, &g)) == 1) {
		if (g.number == 4) {
			if (!want(P, &g, PW_LEN, "Location"))
				return P->rc;
			continue;
		}
		if (g.number > 5)
			continue;
		if (!want(P, &g, PW_VARINT, "Location"))
			return P->rc;
		if (g.number == 1)
			id = g.value;
		else if (g.number == 2)
			mapping = g.value;
		else if (g.number == 3)
			address = g.value;
	}
	if (k < 0)
		return wire_err(P, &r);
	uint32_t module = 0;
	if (mapping) {
		uint64_t *path = hmap_find(&P->map_index, mapping);
		if (!path)
			return perr(P, OPSCOPE_EFORMAT, f->data_offset,
				    "location %llu: no mapping with id %llu",
				    (unsigned long long)id, (unsigned long long)mapping);
		module = (uint32_t)*path;
	}
	uint8_t kind = mapping || address ? MODEL_FRAME_NATIVE : MODEL_FRAME_UNKNOWN;
	uint64_t first = P->nloc_frames;
	/* pass b: one frame per line, innermost first; all but the last are inlined into the
	 * next */
	pw_sub(&r, f);
	while ((k = pw_next(&r, &g)) == 1) {
		if (g.number != 4)
			continue;
		struct pw_reader lr;
		struct pw_field h;
		uint64_t fid = 0;
		int64_t line = 0;
		pw_sub(&lr, &g);
		while ((k = pw_next(&lr, &h)) == 1) {
			if (h.number > 3)
				continue;
			if (!want(P, &h, PW_VARINT, "Line"))
				return P->rc;
			if (h.number == 1)
				fid = h.value;
			else if (h.number == 2)
				line = (int64_t)h.value;
		}
		if (k < 0)
			return wire_err(P, &lr);
		struct model_frame fr = { 0, 0, 0, module, address, kind, MODEL_FRAMEF_INLINED };
		/* a line names its function (pprof refuses a line without one too) */
		uint64_t *fi = hmap_find(&P->fn_index, fid);
		if (!fi)
			return perr(P, OPSCOPE_EFORMAT, g.data_offset,
				    "line of location %llu: no function with id %llu",
				    (unsigned long long)id, (unsigned long long)fid);
		fr.name = P->fns[*fi].name;
		fr.file = P->fns[*fi].file;
		fr.line = line > INT32_MAX || line < INT32_MIN ? 0 : (int32_t)line;
		if (!push_frame(P, model_add_frame_full(P->m, &fr)))
			return P->rc;
	}
	if (k < 0)
		return wire_err(P, &r);
	if (P->nloc_frames == first) {
		if (!push_frame(P, model_add_frame(P->m, 0, 0, 0, module, address, kind)))
			return P->rc;
	} else {
		/* the last line is the function the others were inlined into: not inlined */
		uint32_t *last = &P->loc_frames[P->nloc_frames - 1];
		struct model_frame fr = P->m->frames[*last];
		fr.flags = 0;
		if ((*last = model_add_frame_full(P->m, &fr)) == MODEL_NO_FRAME)
			return oom(P);
	}
	if (!grow_array((void **)&P->locs, sizeof(*P->locs), &P->locs_cap, P->nlocs + 1))
		return oom(P);
	if (hmap_find(&P->loc_index, id))
		return perr(P, OPSCOPE_EFORMAT, f->data_offset, "location id %llu defined twice",
			    (unsigned long long)id);
	if (!hmap_put(&P->loc_index, id, P->nlocs))
		return oom(P);
	P->locs[P->nlocs].first = first;
	P->locs[P->nlocs].n = (uint32_t)(P->nloc_frames - first);
	P->nlocs++;
	return 0;
}

/* The profile's track, for samples without a thread, made on first use. */
static uint32_t default_track(struct pload *P)
{
	if (P->default_track == MODEL_NO_TRACK)
		P->default_track = model_add_track(P->m, MODEL_TRACK_THREAD, 0, 0, 0);
	return P->default_track;
}

/* The track of a thread label (num, or str: a string id), made on first use; thread 0 is the
 * profile's track (tid 0 and no name: what the exporter writes no label for). */
static uint32_t thread_track(struct pload *P, bool is_num, int64_t num, uint32_t str)
{
	struct model *m = P->m;
	uint64_t key = is_num ? (uint64_t)num & ~(1ull << 63) : (1ull << 63) | str;
	uint64_t *t = hmap_find(&P->threads, key);
	if (t)
		return (uint32_t)*t;
	uint64_t tid = is_num ? (uint64_t)num : 0;
	uint32_t name = 0;
	if (!is_num) {
		/* a decimal string is the thread id; other text its name */
		const char *s = model_str(m, str);
		char *end;
		unsigned long long v = strtoull(s, &end, 10);
		if (*s >= '0' && *s <= '9' && *end == '\0')
			tid = v;
		else
			name = str, tid = P->threads.count + 1;
	}
	if (tid == 0 && name == 0)
		return default_track(P);
	uint32_t track = model_add_track(m, MODEL_TRACK_THREAD, 0, tid, name);
	if (track == MODEL_NO_TRACK || !hmap_put(&P->threads, key, track)) {
		oom(P);
		return MODEL_NO_TRACK;
	}
	return track;
}

/* The thread a Label names, if its key is "thread" or "thread_id": true with *track set. */
static bool label_thread(struct pload *P, const struct pw_field *f, uint32_t *track)
{
	struct pw_reader r;
	struct pw_field g;
	int k;
	uint64_t key = 0, str = 0;
	int64_t num = 0;
	bool has_num = false, has_str = false;
	pw_sub(&r, f);
	while ((k = pw_next(&r, &g)) == 1) {
		if (g.number > 4)
			continue;
		if (!want(P, &g, PW_VARINT, "Label"))
			return false;
		if (g.number == 1)
			key = g.value;
		else if (g.number == 2)
			str = g.value, has_str = true;
		else if (g.number == 3)
			num = (int64_t)g.value, has_num = true;
	}
	if (k < 0) {
		wire_err(P, &r);
		return false;
	}
	uint32_t id;
	if (!str_at(P, key, f->data_offset, &id) ||
	    (has_str && !str_at(P, str, f->data_offset, &id)))
		return false;
	bool is_thread = false;
	for (uint32_t i = 0; i < P->nthread_keys; i++)
		is_thread |= key == P->thread_keys[i];
	if (!is_thread || (!has_num && !has_str))
		return false;
	*track = thread_track(P, !has_str, num, has_str ? P->str[str] : 0);
	return *track != MODEL_NO_TRACK;
}

/* A sample: its stack from the root down, its values, its thread. */
static int load_sample(struct pload *P, const struct pw_field *f)
{
	struct model *m = P->m;
	const struct model_file *mf = &m->files[P->file];
	uint32_t nvals = mf->nsample_types;
	uint64_t *locs = NULL, nloc = 0, lcap = 0;
	int64_t *vals = NULL;
	uint64_t nv = 0, vcap = 0;
	uint32_t track = MODEL_NO_TRACK;
	struct pw_reader r;
	struct pw_field g;
	int k;
	pw_sub(&r, f);
	while ((k = pw_next(&r, &g)) == 1 && !P->rc) {
		if (g.number == 1 || g.number == 2) {
			size_t pos = 0;
			uint64_t v;
			int j;
			while ((j = pw_scalars_next(&r, &g, &pos, &v)) == 1) {
				bool ok = g.number == 1 ? grow_array((void **)&locs, sizeof(*locs),
								     &lcap, nloc + 1)
							: grow_array((void **)&vals, sizeof(*vals),
								     &vcap, nv + 1);
				if (!ok) {
					oom(P);
					break;
				}
				if (g.number == 1)
					locs[nloc++] = v;
				else
					vals[nv++] = (int64_t)v;
			}
			if (j < 0)
				wire_err(P, &r);
		} else if (g.number == 3) {
			if (want(P, &g, PW_LEN, "Sample")) {
				uint32_t t;
				if (label_thread(P, &g, &t))
					track = t;
			}
		}
	}
	if (k < 0)
		wire_err(P, &r);
	if (!P->rc && nv != (nvals ? nvals : 1) && !(nvals == 0 && nv == 0))
		perr(P, OPSCOPE_EFORMAT, f->data_offset,
		     "sample has %llu values for %u sample types", (unsigned long long)nv, nvals);
	/* the stack: locations leaf first, so from the last one; a location's frames
	 * innermost first, so from its last */
	uint32_t stack = MODEL_NO_STACK;
	for (uint64_t i = nloc; i-- > 0 && !P->rc;) {
		uint64_t *li = hmap_find(&P->loc_index, locs[i]);
		if (!li) {
			perr(P, OPSCOPE_EFORMAT, f->data_offset, "sample: no location with id %llu",
			     (unsigned long long)locs[i]);
			break;
		}
		const struct ploc *L = &P->locs[*li];
		for (uint32_t j = L->n; j-- > 0;) {
			stack = model_add_stack(m, stack, P->loc_frames[L->first + j]);
			if (stack == MODEL_NO_STACK) {
				oom(P);
				break;
			}
		}
	}
	if (!P->rc) {
		if (track == MODEL_NO_TRACK)
			track = default_track(P);
		int64_t zero = 0;
		if (track == MODEL_NO_TRACK ||
		    model_add_sample_values(m, track, 0, stack, nv ? vals : &zero) == MODEL_NONE)
			oom(P);
	}
	free(locs);
	free(vals);
	return P->rc;
}

static int load_profile(struct pload *P)
{
	struct model *m = P->m;
	P->file = model_add_file(m, P->name, "pprof");
	if (P->file == UINT32_MAX)
		return oom(P);
	uint32_t first_track = m->ntracks;
	if (each_field(P, PROFILE_STRING_TABLE, load_string) || load_header(P))
		return P->rc;
	for (uint64_t i = 0; i < P->nstr; i++) {
		const char *s = model_str(m, P->str[i]);
		if ((strcmp(s, "thread") == 0 || strcmp(s, "thread_id") == 0) &&
		    P->nthread_keys < 2)
			P->thread_keys[P->nthread_keys++] = (uint32_t)i;
	}
	if (each_field(P, PROFILE_MAPPING, load_mapping) ||
	    each_field(P, PROFILE_FUNCTION, load_function) ||
	    each_field(P, PROFILE_LOCATION, load_location) ||
	    each_field(P, PROFILE_SAMPLE, load_sample))
		return P->rc;
	struct model_file *mf = &m->files[P->file];
	uint64_t n = 0;
	for (uint32_t t = first_track; t < m->ntracks; t++)
		n += m->tracks[t].nsamples;
	model_finish_tracks(m, first_track);
	mf->complete = true;
	mf->events = n;
	mf->records = n;
	mf->valid_end = P->size;
	m->events_total += n;
	m->complete = (m->nfiles == 1 || m->complete) && mf->complete;
	return m->oom ? oom(P) : 0;
}

int pprof_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		   size_t errsize)
{
	struct pload P;
	memset(&P, 0, sizeof(P));
	P.m = m;
	P.name = name;
	P.err = err;
	P.errsize = errsize;
	P.default_track = MODEL_NO_TRACK;
	unsigned char *plain = NULL;
	const unsigned char *b = data;
	if (size >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		int rc = pprof_gunzip(name, b, size, &plain, &P.size, err, errsize);
		if (rc)
			return rc;
		P.data = plain;
	} else {
		P.data = data;
		P.size = size;
	}
	int rc = load_profile(&P);
	if (rc == 0)
		m->files[P.file].file_bytes = size;
	free(plain);
	free(P.str);
	free(P.fns);
	free(P.locs);
	free(P.loc_frames);
	hmap_free(&P.fn_index);
	hmap_free(&P.map_index);
	hmap_free(&P.loc_index);
	hmap_free(&P.threads);
	return rc;
}

int pprof_load_file(struct model *m, const char *path, char *err, size_t errsize)
{
	unsigned char *data;
	size_t size;
	int rc = pprof_read_file(path, &data, &size, err, errsize);
	if (rc)
		return rc;
	rc = pprof_load_mem(m, path, data, size, err, errsize);
	free(data);
	return rc;
}

/* Are b[0..n) the start of a Profile message? Every whole field must be one of Profile's
 * with its wire type; a field cut off by the end of the head is taken on trust. */
static bool looks_like_profile(const unsigned char *b, size_t n)
{
	struct pw_reader r;
	struct pw_field f;
	size_t fields = 0;
	pw_init(&r, b, n, 0);
	while (r.c.pos < n) {
		int k = pw_next(&r, &f);
		if (k == 0)
			break;
		bool len = f.number <= 6 || f.number == 11 || f.number == 13;
		if (k < 0) /* a field cut off by the end of the head, after a whole one */
			return fields > 0 && (strcmp(r.err, "truncated varint") == 0 ||
					      strcmp(r.err, "truncated fixed-width field") == 0 ||
					      (len && f.wire == PW_LEN &&
					       strcmp(r.err, "length runs past the end of the "
							     "message") == 0));
		if (f.number > 15 || (len ? f.wire != PW_LEN && !(f.number == 13 && f.wire == 0)
					  : f.wire != PW_VARINT))
			return false;
		/* a whole ValueType, Sample, Mapping ...: its own fields must read */
		if (f.wire == PW_LEN && f.number != 6) {
			struct pw_reader s;
			struct pw_field g;
			int j;
			pw_sub(&s, &f);
			while ((j = pw_next(&s, &g)) == 1)
				if (g.number > 15)
					return false;
			if (j < 0)
				return false;
		}
		fields++;
	}
	return fields > 0;
}

bool pprof_sniff(const unsigned char *head, size_t n)
{
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
		/* gzip: decompress what the head holds (a Kineto JSON trace is gzip'd too) */
		unsigned char out[512];
		z_stream z;
		memset(&z, 0, sizeof(z));
		if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
			return false;
		z.next_in = (unsigned char *)head;
		z.avail_in = (uInt)n;
		z.next_out = out;
		z.avail_out = sizeof(out);
		int zr = inflate(&z, Z_SYNC_FLUSH);
		size_t got = sizeof(out) - z.avail_out;
		inflateEnd(&z);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			return false;
		return got > 0 && looks_like_profile(out, got);
	}
	return looks_like_profile(head, n);
}
