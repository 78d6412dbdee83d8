/*
 * opscope_load.c: the loader of .opscope files (docs/trace-format.md) into the event model,
 * through the record and event decoder of trace/decode.h. One file for one job: the general
 * path and the fast loops that do the same for the common events must stay in one translation
 * unit, where the loops inline the decoder and keep the loader's state in registers.
 *
 * Loading is one pass over the records. Events are appended to per-track columns with their
 * times still in ticks (a range's dur_ns column holds its end tick until the file is done),
 * because CLOCK records may come anywhere in the file; when the file ends, open ranges are
 * closed, every tick of the file is mapped to ns through its clock map (clockmap.h), and
 * tracks that are not in start order (async tracks, whose begins come from many threads) are
 * sorted.
 *
 * Invariants kept for readers of the model: on a thread track, times never go back (a tick
 * that does is clamped to the previous one, like the encoder does), so ranges are in start
 * order and nest properly; the tick->ns map is monotonic, so this survives the mapping; every
 * time is within +-CLOCKMAP_TIME_LIMIT ns so differences never overflow; every string id in
 * the model is < nstrings. Nothing recurses on input depth; nothing is allocated per event
 * except amortized column growth.
 *
 * The model has its own names for what the file holds: argument types, thread flags and event
 * kinds are stored as the file writes them, and the assertions below keep the two the same.
 */
#include "formats/opscope/opscope_load.h"

#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/opscope/bare_steps.h"
#include "formats/opscope/clockmap.h"
#include "formats/opscope/gpu_load.h"
#include "formats/symbolize/symbolize.h"
#include "model/model.h"
#include "trace/decode.h"
#include "util/bytes.h"
#include "util/cursor.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* The model's name and the file's for one value (of two different enums). */
#define SAME(model_value, file_value) ((int)(model_value) == (int)(file_value))
_Static_assert(SAME(MODEL_ARG_I64, OPS_ARG_I64) && SAME(MODEL_ARG_U64, OPS_ARG_U64) &&
		       SAME(MODEL_ARG_F64, OPS_ARG_F64) && SAME(MODEL_ARG_STR, OPS_ARG_STR),
	       "an ARG's type is stored in model.args as the file has it");
_Static_assert(SAME(MODEL_TRACKF_EXITED, OPS_THREADF_EXITED) &&
		       SAME(MODEL_TRACKF_MAIN, OPS_THREADF_MAIN),
	       "a THREAD record's flags are stored in model_track.flags as the file has them");
_Static_assert(SAME(MODEL_EV_BEGIN, OPS_EV_BEGIN) && SAME(MODEL_EV_END, OPS_EV_END) &&
		       SAME(MODEL_EV_INSTANT, OPS_EV_INSTANT) &&
		       SAME(MODEL_EV_COUNTER, OPS_EV_COUNTER) && SAME(MODEL_EV_ARG, OPS_EV_ARG) &&
		       SAME(MODEL_EV_FLOW_OUT, OPS_EV_FLOW_OUT) &&
		       SAME(MODEL_EV_FLOW_IN, OPS_EV_FLOW_IN) &&
		       SAME(MODEL_EV_ASYNC_BEGIN, OPS_EV_ASYNC_BEGIN) &&
		       SAME(MODEL_EV_ASYNC_END, OPS_EV_ASYNC_END) &&
		       SAME(MODEL_EV_DROP_MARK, OPS_EV_DROP_MARK),
	       "model_file.by_kind is indexed by the file's event kinds");
_Static_assert(MODEL_EV_KINDS == 16, "model_file.by_kind has a slot per 4-bit kind tag");
#undef SAME

#define MAX_FILE_STRING_IDS (1u << 24) /* largest string id a file may use */

/* ---------------------------------------------------------------------------------------- */
/* Loader state. */

enum ref_kind { REF_NONE, REF_RANGE, REF_INSTANT };

/* Loader state of one track of the file being loaded. */
struct load_track {
	uint64_t *stack; /* open ranges, innermost last (range indices) */
	uint64_t nstack, stack_cap;
	uint64_t last_ticks;	 /* time of the latest event (times never go back) */
	uint64_t marks;		 /* sum of DROP_MARK counts */
	uint64_t drops_record;	 /* last DROPS total */
	bool has_drops_record;	 /* a DROPS record was seen */
	enum ref_kind last_kind; /* what the next ARG of this track attaches to */
	uint32_t last_track;	 /* its track (an async begin's range is on the async track) */
	uint64_t last_index;	 /* its index */
};

/* A MAPPINGS entry as the loader keeps it, to name the native frames in it. */
struct load_mapping {
	uint64_t start, end, file_offset; /* as in the file */
	uint32_t path;			  /* model string id of the path, 0 if anonymous */
	uint32_t base;			  /* model string id of the path's last component */
	uint32_t build_id;		  /* model string id of the build-id (hex), 0 if none */
};

/* A file frame as the model has it: locs[first .. first + n) of the loader, innermost first
 * (a symbolized native frame gives one model frame per inlined call; others give one). */
struct load_frame {
	uint32_t first, n;
};

struct loader {
	struct model *m;
	struct decoder dec;	 /* the file, record by record */
	struct model_file *file; /* m->files[fi]; refreshed after growth of m->files */
	uint32_t fi;		 /* index of the file in m->files */
	uint32_t first_track;	 /* tracks from here on belong to this file */
	uint64_t first_flow;	 /* flows from here on belong to this file */
	uint64_t first_mark;	 /* drop marks from here on belong to this file */
	uint32_t *strmap;	 /* file string id -> model id + 1, 0 if undefined */
	uint32_t nstrmap;	 /* entries in strmap */
	struct load_track *lt;	 /* per track, indexed by track - first_track */
	uint64_t lt_cap;	 /* entries allocated in lt */
	uint64_t nlt;		 /* entries of lt in use (tracks gpu_load.c adds have none) */
	struct hmap tracks;	 /* file track -> model track; (1 << 32 | pid) -> async track */
	struct hmap flows;	 /* flow id -> index in m->flows */
	struct hmap asyncs;	 /* async id -> (async track << 40 | range index) */
	struct load_track *cur;	 /* state of the track whose events are being read */
	/* Stack sample tables of the file (MAPPINGS, FRAMES, STACKS), file id -> what it is in
	 * the model; ids are dense from 0, so an array each. */
	struct load_mapping *maps;
	uint64_t nmaps, maps_cap;
	struct load_frame *frames; /* file frame id -> its model frames */
	uint64_t nframes, frames_cap;
	uint32_t *locs; /* model frame indices of the frames, innermost first per frame */
	uint64_t nlocs, locs_cap;
	uint32_t *stacks; /* file stack id -> model stack index */
	uint64_t nstacks, stacks_cap;
	struct ops_gpu_entry *gpu; /* GPU entries (gpu_load.h), times in ticks until the end */
	uint64_t ngpu, gpu_cap;
	uint64_t max_ticks;	    /* latest tick of the file */
	struct ops_end_payload end; /* the END record (zero until one is read) */
};

static int loader_oom(struct loader *L, size_t offset)
{
	L->m->oom = true;
	snprintf(L->dec.err, sizeof(L->dec.err), "%s: offset %zu: out of memory", L->dec.name,
		 offset);
	L->dec.rc = OPSCOPE_ENOMEM;
	return OPSCOPE_ENOMEM;
}

static uint32_t loader_str(struct loader *L, uint64_t id)
{
	if (id == 0)
		return 0;
	if (id < L->nstrmap && L->strmap[id] != 0)
		return L->strmap[id] - 1;
	L->file->bad_strings++;
	return 0;
}

static struct load_track *loader_lt(struct loader *L, uint32_t track)
{
	return &L->lt[track - L->first_track];
}

/* A new model track of this file, with its loader state. */
static uint32_t loader_new_track(struct loader *L, uint32_t kind, uint32_t pid, uint64_t tid)
{
	uint32_t t = model_add_track(L->m, kind, pid, tid, 0);
	if (t == MODEL_NO_TRACK)
		return t;
	uint64_t need = (uint64_t)t - L->first_track + 1;
	if (!grow_array((void **)&L->lt, sizeof(*L->lt), &L->lt_cap, need)) {
		L->m->oom = true;
		L->m->ntracks--;
		return MODEL_NO_TRACK;
	}
	memset(&L->lt[need - 1], 0, sizeof(*L->lt));
	L->nlt = need;
	L->m->tracks[t].file = L->fi;
	return t;
}

static uint32_t loader_track(struct loader *L, uint32_t file_track)
{
	uint64_t *v = hmap_find(&L->tracks, file_track);
	if (v)
		return (uint32_t)*v;
	uint32_t t = loader_new_track(L, MODEL_TRACK_THREAD, L->dec.hdr.pid, 0);
	if (t == MODEL_NO_TRACK)
		return t;
	L->m->tracks[t].file_track = file_track;
	if (!hmap_put(&L->tracks, file_track, t)) {
		L->m->oom = true;
		return MODEL_NO_TRACK;
	}
	return t;
}

static uint32_t loader_async_track(struct loader *L, uint32_t pid)
{
	uint64_t key = ((uint64_t)1 << 32) | pid;
	uint64_t *v = hmap_find(&L->tracks, key);
	if (v)
		return (uint32_t)*v;
	uint32_t t = loader_new_track(L, MODEL_TRACK_ASYNC, pid, 0);
	if (t == MODEL_NO_TRACK)
		return t;
	L->m->tracks[t].file_track = UINT32_MAX;
	L->m->tracks[t].name = model_intern(L->m, "async", 5);
	if (!hmap_put(&L->tracks, key, t)) {
		L->m->oom = true;
		return MODEL_NO_TRACK;
	}
	return t;
}

/* A decimal rank ("3") as an int32, -1 for anything else. */
static int32_t parse_rank(const char *v, uint32_t len)
{
	int64_t r = 0;
	if (len == 0 || len > 10)
		return -1;
	for (uint32_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		r = r * 10 + (v[i] - '0');
	}
	return r <= INT32_MAX ? (int32_t)r : -1;
}

/* What the process table takes from a METADATA entry of the file's process (the runtime
 * writes "program", "hostname" and "rank": docs/trace-format.md). */
/* The sampling period of the file's stack samples from the recorder's `sampler` metadata
 * ("999 Hz on-CPU through ...", "99 Hz wall-clock through ..."; "none: ..." when nothing
 * sampled): cpu or wall nanoseconds per sample, as pprof's period type, for the exports. */
static void sampler_period(struct loader *L, const char *v, uint32_t vlen)
{
	uint64_t hz = 0;
	uint32_t i = 0;
	for (; i < vlen && v[i] >= '0' && v[i] <= '9' && hz < 1000000000u; i++)
		hz = hz * 10 + (uint64_t)(v[i] - '0');
	if (hz == 0 || i + 4 > vlen || memcmp(v + i, " Hz ", 4) != 0)
		return;
	bool wall = vlen - i >= 14 && memmem(v + i, vlen - i, "wall-clock", 10) != NULL;
	L->file->period_type = model_intern(L->m, wall ? "wall" : "cpu", wall ? 4 : 3);
	L->file->period_unit = model_intern(L->m, "nanoseconds", 11);
	L->file->period = (int64_t)(1000000000u / hz);
}

static void process_meta(struct loader *L, const char *k, uint32_t klen, const char *v,
			 uint32_t vlen, uint32_t value)
{
	struct model *m = L->m;
	uint32_t p = model_process(m, L->fi, L->dec.hdr.pid);
	if (p == MODEL_NO_PROCESS)
		return;
	if (klen == 7 && memcmp(k, "program", 7) == 0)
		m->processes[p].name = value;
	else if ((klen == 8 && memcmp(k, "hostname", 8) == 0) ||
		 (klen == 4 && memcmp(k, "host", 4) == 0))
		m->processes[p].host = value;
	else if (klen == 4 && memcmp(k, "rank", 4) == 0)
		m->processes[p].rank = parse_rank(v, vlen);
	else if (klen == 7 && memcmp(k, "sampler", 7) == 0)
		sampler_period(L, v, vlen);
}

static int load_metadata(struct loader *L, const struct decode_record *rec)
{
	struct cursor c;
	decode_payload_cursor(&L->dec, rec, &c);
	uint32_t count = cursor_u32(&c);
	for (uint32_t i = 0; i < count && !c.failed; i++) {
		uint32_t klen, vlen;
		const char *k = cursor_str(&c, &klen);
		const char *v = cursor_str(&c, &vlen);
		if (c.failed)
			break;
		uint32_t key = model_intern(L->m, k, klen);
		if (key) {
			uint32_t value = model_intern(L->m, v, vlen);
			model_set_meta(L->m, L->dec.hdr.pid, key, value);
			process_meta(L, k, klen, v, vlen, value);
		}
	}
	if (c.failed)
		return decode_fail(&L->dec, rec->offset, "METADATA payload is cut short");
	return L->m->oom ? loader_oom(L, rec->offset) : 0;
}

static int load_strings(struct loader *L, const struct decode_record *rec)
{
	struct cursor c;
	decode_payload_cursor(&L->dec, rec, &c);
	uint32_t first = cursor_u32(&c);
	uint32_t count = cursor_u32(&c);
	if (c.failed)
		return decode_fail(&L->dec, rec->offset, "STRINGS payload is cut short");
	if (count > cursor_left(&c) / 4)
		return decode_fail(&L->dec, rec->offset, "STRINGS count %u exceeds the payload",
				   count);
	uint64_t end = (uint64_t)first + count;
	if (end > MAX_FILE_STRING_IDS)
		return decode_fail(&L->dec, rec->offset, "string id %llu beyond the limit of %u",
				   (unsigned long long)end, MAX_FILE_STRING_IDS);
	if (end > L->nstrmap) {
		/* calloc: untouched pages of a sparse id space cost no memory; 0 = undefined */
		uint64_t cap = L->nstrmap ? L->nstrmap : 256;
		while (cap < end)
			cap *= 2;
		if (cap > MAX_FILE_STRING_IDS)
			cap = MAX_FILE_STRING_IDS;
		uint32_t *p = calloc((size_t)cap, sizeof(*p));
		if (!p)
			return loader_oom(L, rec->offset);
		if (L->nstrmap)
			memcpy(p, L->strmap, (size_t)L->nstrmap * sizeof(*p));
		free(L->strmap);
		L->strmap = p;
		L->nstrmap = (uint32_t)cap;
	}
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len;
		const char *s = cursor_str(&c, &len);
		if (c.failed)
			return decode_fail(&L->dec, rec->offset, "STRINGS payload is cut short");
		if ((uint64_t)first + i == 0)
			continue; /* id 0 is always "" */
		L->strmap[first + i] = model_intern(L->m, s, len) + 1;
	}
	return L->m->oom ? loader_oom(L, rec->offset) : 0;
}

static int load_thread(struct loader *L, const struct decode_record *rec)
{
	struct ops_thread_payload p;
	int rc = decode_parse_thread(&L->dec, rec, &p);
	if (rc)
		return rc;
	uint32_t t = loader_track(L, p.track);
	if (t == MODEL_NO_TRACK)
		return loader_oom(L, rec->offset);
	uint32_t process = model_process(L->m, L->fi, p.pid);
	if (process == MODEL_NO_PROCESS)
		return loader_oom(L, rec->offset);
	struct model_track *tr = &L->m->tracks[t];
	tr->process = process;
	tr->pid = p.pid;
	tr->tid = p.tid;
	tr->flags = p.flags;
	if (p.name_id)
		tr->name = loader_str(L, p.name_id);
	return 0;
}

static int load_timers(struct loader *L, const struct decode_record *rec)
{
	struct cursor c;
	decode_payload_cursor(&L->dec, rec, &c);
	uint32_t count = cursor_u32(&c);
	if (c.failed || count > cursor_left(&c) / sizeof(struct ops_timer_entry))
		return decode_fail(&L->dec, rec->offset, "TIMERS count exceeds the payload");
	struct model *m = L->m;
	if (!grow_array32((void **)&m->timers, sizeof(*m->timers), &m->timers_cap,
			  (uint64_t)m->ntimers + count))
		return loader_oom(L, rec->offset);
	for (uint32_t i = 0; i < count; i++) {
		struct model_timer *t = &m->timers[m->ntimers++];
		t->pid = L->dec.hdr.pid;
		t->name = loader_str(L, cursor_u32(&c));
		(void)cursor_u32(&c);
		t->count = cursor_u64(&c);
		t->total_ns = cursor_u64(&c);
		t->max_ns = cursor_u64(&c);
		t->min_ns = cursor_u64(&c);
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Stack samples (docs/trace-format.md 3.1): the tables, checked entry by entry, then the
 * samples. A reference to an id not yet defined is a malformed record. */

/* The table's first id must continue the ids read so far: the tables are dense. */
static int table_check_ids(struct loader *L, const struct decode_record *rec,
			   const struct decode_table *t, uint64_t have)
{
	if (t->first_id != have)
		return decode_fail(&L->dec, rec->offset, "%s first id %u, expected %llu",
				   decode_record_name(rec->type), t->first_id,
				   (unsigned long long)have);
	return 0;
}

static int load_mappings(struct loader *L, const struct decode_record *rec)
{
	struct decode_table t;
	int rc = decode_table_begin(&L->dec, rec, sizeof(struct ops_mapping_entry), &t);
	if (rc || (rc = table_check_ids(L, rec, &t, L->nmaps)))
		return rc;
	if (!grow_array((void **)&L->maps, sizeof(*L->maps), &L->maps_cap, L->nmaps + t.count))
		return loader_oom(L, rec->offset);
	for (uint32_t i = 0; i < t.count; i++) {
		struct ops_mapping_entry e;
		decode_mapping(&t, i, &e);
		if (e.end <= e.start)
			return decode_fail(&L->dec, rec->offset,
					   "mapping %llu: end 0x%llx is not above start 0x%llx",
					   (unsigned long long)L->nmaps, (unsigned long long)e.end,
					   (unsigned long long)e.start);
		struct load_mapping *lm = &L->maps[L->nmaps++];
		lm->start = e.start;
		lm->end = e.end;
		lm->file_offset = e.file_offset;
		lm->path = loader_str(L, e.path_id);
		/* copied out first: interning may move the model's text the path lives in */
		char base[256];
		const char *path = model_str(L->m, lm->path);
		const char *slash = strrchr(path, '/');
		int n = snprintf(base, sizeof(base), "%s", slash && slash[1] ? slash + 1 : path);
		lm->base = model_intern(L->m, base,
					n < (int)sizeof(base) ? (size_t)n : sizeof(base) - 1);
		lm->build_id = loader_str(L, e.build_id); /* for the symbolizer */
		/* and for the exports (pprof's Mapping, gperftools' maps text) */
		struct model_mapping mp = { L->fi,	     lm->start, lm->end,
					    lm->file_offset, lm->path,	lm->build_id };
		if (model_add_mapping(L->m, &mp) == UINT32_MAX)
			return loader_oom(L, rec->offset);
	}
	return L->m->oom ? loader_oom(L, rec->offset) : 0;
}

/* Append model frame f to the frame being loaded; false when out of memory. */
static bool add_loc(struct loader *L, uint32_t f)
{
	if (f == MODEL_NO_FRAME ||
	    !grow_array((void **)&L->locs, sizeof(*L->locs), &L->locs_cap, L->nlocs + 1))
		return false;
	L->locs[L->nlocs++] = f;
	return true;
}

/* Symbolize native frame e (formats/symbolize) into its model frames, innermost first, and
 * count the outcome; 0 when it stays unnamed, -1 when out of memory, else the count. */
static int symbolize_frame(struct loader *L, const struct ops_frame_entry *e)
{
	struct model *m = L->m;
	struct model_symbolize_stats *st = &m->symbolize;
	st->frames++;
	if (m->no_symbolize || symbolize_unavailable()) {
		st->off = m->no_symbolize ? "skipped (--no-symbolize or OPSCOPE_NO_SYMBOLIZE)"
					  : symbolize_unavailable();
		st->skipped++;
		return 0;
	}
	if (e->mapping == OPS_NO_ID) {
		st->no_path++;
		return 0;
	}
	const struct load_mapping *lm = &L->maps[e->mapping];
	struct symbolize_loc locs[SYMBOLIZE_MAX_DEPTH];
	enum symbolize_why why;
	bool mangled;
	int n = symbolize_address(m, lm->path, lm->build_id,
				  e->address - lm->start + lm->file_offset, locs,
				  SYMBOLIZE_MAX_DEPTH, &why, &mangled);
	if (m->oom)
		return -1;
	switch (n ? SYMBOLIZE_OK : why) {
	case SYMBOLIZE_OK:
		break;
	case SYMBOLIZE_NO_PATH:
		st->no_path++;
		return 0;
	case SYMBOLIZE_NO_BINARY:
		st->no_binary++;
		return 0;
	case SYMBOLIZE_BUILD_ID_MISMATCH:
		st->build_id_mismatch++;
		return 0;
	case SYMBOLIZE_OFF:
		st->skipped++;
		return 0;
	case SYMBOLIZE_NO_SYMBOL:
	default:
		st->no_symbol++;
		return 0;
	}
	st->named++;
	st->with_line += locs[0].file && locs[0].line > 0;
	st->inlined += (uint64_t)(n - 1);
	st->mangled += mangled;
	for (int i = 0; i < n; i++)
		if (!add_loc(L, model_add_frame(m, locs[i].name, locs[i].file, locs[i].line,
						lm->path, e->address, MODEL_FRAME_NATIVE)))
			return -1;
	return n;
}

/* The model frame of a native frame: its symbol when the file has one, else
 * "module+0xoffset" (the offset in the mapped file) when the symbolizer cannot name it. */
static uint32_t native_frame(struct loader *L, const struct ops_frame_entry *e)
{
	uint32_t name = loader_str(L, e->name_id), module = 0;
	if (e->mapping != OPS_NO_ID) {
		const struct load_mapping *lm = &L->maps[e->mapping];
		module = lm->path;
		if (!name) {
			char label[320];
			const char *base = model_str(L->m, lm->base);
			int n = snprintf(
				label, sizeof(label), "%.256s+0x%llx", *base ? base : "[anon]",
				(unsigned long long)(e->address - lm->start + lm->file_offset));
			name = model_intern(L->m, label, (size_t)n);
		}
	} else if (!name) {
		char label[32];
		int n = snprintf(label, sizeof(label), "0x%llx", (unsigned long long)e->address);
		name = model_intern(L->m, label, (size_t)n);
	}
	return model_add_frame(L->m, name, 0, 0, module, e->address, MODEL_FRAME_NATIVE);
}

static int load_frames(struct loader *L, const struct decode_record *rec)
{
	struct decode_table t;
	int rc = decode_table_begin(&L->dec, rec, sizeof(struct ops_frame_entry), &t);
	if (rc || (rc = table_check_ids(L, rec, &t, L->nframes)))
		return rc;
	if (!grow_array((void **)&L->frames, sizeof(*L->frames), &L->frames_cap,
			L->nframes + t.count))
		return loader_oom(L, rec->offset);
	for (uint32_t i = 0; i < t.count; i++) {
		struct ops_frame_entry e;
		decode_frame(&t, i, &e);
		unsigned long long id = L->nframes;
		uint32_t f = MODEL_NO_FRAME, first = (uint32_t)L->nlocs;
		int nsym = 0;
		if (e.kind == OPS_FRAME_NATIVE) {
			if (e.mapping != OPS_NO_ID && e.mapping >= L->nmaps)
				return decode_fail(&L->dec, rec->offset,
						   "frame %llu: unknown mapping %u", id, e.mapping);
			if (e.mapping != OPS_NO_ID && (e.address < L->maps[e.mapping].start ||
						       e.address >= L->maps[e.mapping].end))
				return decode_fail(&L->dec, rec->offset,
						   "frame %llu: address 0x%llx outside mapping %u",
						   id, (unsigned long long)e.address, e.mapping);
			nsym = e.name_id ? 0 : symbolize_frame(L, &e);
			if (nsym < 0)
				return loader_oom(L, rec->offset);
			if (nsym == 0)
				f = native_frame(L, &e);
		} else if (e.kind == OPS_FRAME_PYTHON) {
			f = model_add_frame(L->m, loader_str(L, e.name_id),
					    loader_str(L, e.file_id), e.line, 0, 0,
					    MODEL_FRAME_PYTHON);
		} else {
			return decode_fail(&L->dec, rec->offset, "frame %llu: unknown kind %u", id,
					   e.kind);
		}
		if (nsym == 0 && !add_loc(L, f))
			return loader_oom(L, rec->offset);
		L->frames[L->nframes++] = (struct load_frame){ first, (uint32_t)L->nlocs - first };
	}
	return 0;
}

static int load_stacks(struct loader *L, const struct decode_record *rec)
{
	struct decode_table t;
	int rc = decode_table_begin(&L->dec, rec, sizeof(struct ops_stack_entry), &t);
	if (rc || (rc = table_check_ids(L, rec, &t, L->nstacks)))
		return rc;
	if (!grow_array((void **)&L->stacks, sizeof(*L->stacks), &L->stacks_cap,
			L->nstacks + t.count))
		return loader_oom(L, rec->offset);
	for (uint32_t i = 0; i < t.count; i++) {
		struct ops_stack_entry e;
		decode_stack(&t, i, &e);
		unsigned long long id = L->nstacks;
		if (e.parent != OPS_NO_ID && e.parent >= id)
			return decode_fail(&L->dec, rec->offset,
					   "stack %llu: parent %u is not an earlier stack", id,
					   e.parent);
		if (e.frame >= L->nframes)
			return decode_fail(&L->dec, rec->offset, "stack %llu: unknown frame %u", id,
					   e.frame);
		/* an inlined chain becomes one entry per level, its outermost under the parent */
		uint32_t st = e.parent == OPS_NO_ID ? MODEL_NO_STACK : L->stacks[e.parent];
		const struct load_frame *lf = &L->frames[e.frame];
		for (uint32_t k = lf->n; k-- > 0;) {
			st = model_add_stack(L->m, st, L->locs[lf->first + k]);
			if (st == MODEL_NO_STACK)
				return loader_oom(L, rec->offset);
		}
		L->stacks[L->nstacks++] = st;
	}
	return 0;
}

static int load_samples(struct loader *L, const struct decode_record *rec)
{
	struct decode_table t;
	int rc = decode_table_begin(&L->dec, rec, sizeof(struct ops_sample_entry), &t);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < t.count; i++) {
		struct ops_sample_entry e;
		decode_sample(&t, i, &e);
		if (e.stack != OPS_NO_ID && e.stack >= L->nstacks)
			return decode_fail(&L->dec, rec->offset, "sample %u: unknown stack %u", i,
					   e.stack);
		if (e.ticks > (uint64_t)INT64_MAX)
			return decode_fail(&L->dec, rec->offset, "sample %u: time overflows", i);
		uint32_t tr = loader_track(L, e.track);
		if (tr == MODEL_NO_TRACK)
			return loader_oom(L, rec->offset);
		uint32_t st = e.stack == OPS_NO_ID ? MODEL_NO_STACK : L->stacks[e.stack];
		/* ticks for now: loader_finish maps them to ns with the rest */
		uint64_t idx = model_add_sample(L->m, tr, (int64_t)e.ticks, st, e.weight);
		if (idx == MODEL_NONE)
			return loader_oom(L, rec->offset);
		if (e.flags & OPS_SAMPLEF_TRUNCATED)
			L->m->tracks[tr].samples.flags[idx] |= MODEL_SAMPLEF_TRUNCATED;
		if (e.ticks > L->max_ticks)
			L->max_ticks = e.ticks;
	}
	return 0;
}

/* GPU records (docs/trace-format.md 3.2): kept until the file ends, when their ticks can be
 * mapped (gpu_load.c makes the tracks and ranges). */
static int load_gpu(struct loader *L, const struct decode_record *rec)
{
	struct decode_table t;
	int rc = decode_table_begin(&L->dec, rec, sizeof(struct ops_gpu_entry), &t);
	if (rc)
		return rc;
	if (!grow_array((void **)&L->gpu, sizeof(*L->gpu), &L->gpu_cap, L->ngpu + t.count))
		return loader_oom(L, rec->offset);
	for (uint32_t i = 0; i < t.count; i++) {
		struct ops_gpu_entry *e = &L->gpu[L->ngpu];
		decode_gpu(&t, i, e);
		if (e->kind < OPS_GPU_KERNEL || e->kind > OPS_GPU_KIND_LAST)
			return decode_fail(&L->dec, rec->offset, "GPU entry %u: unknown kind %u", i,
					   e->kind);
		if (e->start_ticks > (uint64_t)INT64_MAX || e->end_ticks > (uint64_t)INT64_MAX ||
		    e->end_ticks < e->start_ticks)
			return decode_fail(&L->dec, rec->offset, "GPU entry %u: bad times", i);
		e->name_id = loader_str(L, e->name_id);
		if (e->end_ticks > L->max_ticks)
			L->max_ticks = e->end_ticks;
		L->ngpu++;
	}
	return 0;
}

static bool loader_push(struct load_track *lt, uint64_t idx)
{
	if (!grow_array((void **)&lt->stack, sizeof(*lt->stack), &lt->stack_cap, lt->nstack + 1))
		return false;
	lt->stack[lt->nstack++] = idx;
	return true;
}

/* Close range `idx` of `track` at `ticks` (dur_ns holds the end tick until the file ends). */
static void loader_close(struct model_track *t, uint64_t idx, uint64_t ticks)
{
	t->ranges.dur_ns[idx] = (int64_t)ticks;
}

static int loader_end(struct loader *L, uint32_t track, const struct decode_event *ev,
		      uint64_t ticks)
{
	struct load_track *lt = loader_lt(L, track);
	struct model_track *t = &L->m->tracks[track];
	if (lt->nstack == 0) {
		L->file->unmatched_ends++;
		return 0;
	}
	uint64_t top = lt->stack[lt->nstack - 1];
	uint32_t name = ev->name_id ? loader_str(L, ev->name_id) : 0;
	if (!ev->name_id || t->ranges.name[top] == name) {
		loader_close(t, top, ticks);
		lt->nstack--;
		L->cur->last_kind = REF_RANGE;
		L->cur->last_track = track;
		L->cur->last_index = top;
		return 0;
	}
	/* The END names an outer range: close everything inside it too. The search is bounded
	 * by the stack, which is bounded by the events already read. */
	L->file->mismatched_ends++;
	uint64_t k = lt->nstack;
	while (k > 0 && t->ranges.name[lt->stack[k - 1]] != name)
		k--;
	if (k == 0)
		return 0; /* names nothing open: ignored */
	for (uint64_t j = lt->nstack; j > k; j--) {
		uint64_t idx = lt->stack[j - 1];
		loader_close(t, idx, ticks);
		t->ranges.flags[idx] |= MODEL_RANGEF_MISMATCH;
	}
	uint64_t idx = lt->stack[k - 1];
	loader_close(t, idx, ticks);
	lt->nstack = k - 1;
	L->cur->last_kind = REF_RANGE;
	L->cur->last_track = track;
	L->cur->last_index = idx;
	return 0;
}

/* Append an argument to the event whose first_arg and nargs are *first and *n (fewer than
 * UINT32_MAX), keeping the event's arguments consecutive. 0 or OPSCOPE_ENOMEM. */
static int attach_arg(struct model *m, uint64_t *first, uint32_t *n, uint32_t key, uint8_t type,
		      uint64_t bits)
{
	if (*n && *first + *n != m->nargs) {
		/* args of this event are not the last block (args came after its END):
		 * move them to the end so they stay consecutive */
		uint64_t old = *first, cnt = *n;
		*first = m->nargs;
		for (uint64_t i = 0; i < cnt; i++) {
			if (model_add_arg(m, m->args.key[old + i], m->args.type[old + i],
					  m->args.bits[old + i]) == MODEL_NONE)
				return OPSCOPE_ENOMEM;
		}
	}
	uint64_t a = model_add_arg(m, key, type, bits);
	if (a == MODEL_NONE)
		return OPSCOPE_ENOMEM;
	if (*n == 0)
		*first = a;
	(*n)++;
	return 0;
}

static int loader_arg(struct loader *L, const struct decode_event *ev)
{
	struct model *m = L->m;
	uint64_t *first;
	uint32_t *n;
	if (L->cur->last_kind == REF_RANGE) {
		first = &m->tracks[L->cur->last_track].ranges.first_arg[L->cur->last_index];
		n = &m->tracks[L->cur->last_track].ranges.nargs[L->cur->last_index];
	} else if (L->cur->last_kind == REF_INSTANT) {
		first = &m->tracks[L->cur->last_track].instants.first_arg[L->cur->last_index];
		n = &m->tracks[L->cur->last_track].instants.nargs[L->cur->last_index];
	} else {
		L->file->orphan_args++;
		return 0;
	}
	if (*n == UINT32_MAX) {
		L->file->orphan_args++;
		return 0;
	}
	uint32_t key = loader_str(L, ev->name_id);
	uint64_t bits = ev->value;
	if (ev->arg_type == OPS_ARG_STR)
		bits = loader_str(L, ev->value);
	return attach_arg(m, first, n, key, ev->arg_type, bits);
}

static int loader_flow(struct loader *L, uint32_t track, const struct decode_event *ev,
		       uint64_t ticks)
{
	struct model *m = L->m;
	struct load_track *lt = loader_lt(L, track);
	uint64_t range = lt->nstack ? lt->stack[lt->nstack - 1] : MODEL_NONE;
	bool out = ev->kind == OPS_EV_FLOW_OUT;
	uint64_t *v = hmap_find(&L->flows, ev->value);
	struct model_flow *f = NULL;
	if (v) {
		f = &m->flows[*v];
		if ((out ? f->from_track : f->to_track) != MODEL_NO_TRACK)
			f = NULL; /* that end is taken: the id was reused, start a new flow */
	}
	if (!f) {
		if (!grow_array((void **)&m->flows, sizeof(*m->flows), &m->flows_cap,
				m->nflows + 1))
			return OPSCOPE_ENOMEM;
		f = &m->flows[m->nflows];
		*f = (struct model_flow){ ev->value, MODEL_NO_TRACK, MODEL_NO_TRACK, 0,
					  0,	     MODEL_NONE,     MODEL_NONE };
		if (!hmap_put(&L->flows, ev->value, m->nflows))
			return OPSCOPE_ENOMEM;
		m->nflows++;
	}
	if (out) {
		f->from_track = track;
		f->from_ns = (int64_t)ticks;
		f->from_range = range;
	} else {
		f->to_track = track;
		f->to_ns = (int64_t)ticks;
		f->to_range = range;
	}
	return 0;
}

static int loader_async_begin(struct loader *L, uint32_t track, const struct decode_event *ev,
			      uint64_t ticks)
{
	uint32_t at = loader_async_track(L, L->m->tracks[track].pid);
	if (at == MODEL_NO_TRACK)
		return OPSCOPE_ENOMEM;
	L->cur = loader_lt(L, track); /* L->lt may have moved */
	uint64_t idx = model_add_range(L->m, at, (int64_t)ticks, (int64_t)ticks,
				       loader_str(L, ev->name_id), ev->category, 0);
	if (idx == MODEL_NONE || idx >= ((uint64_t)1 << 40))
		return OPSCOPE_ENOMEM;
	/* open until ASYNC_END: flagged unclosed now, the flag is cleared when it ends */
	L->m->tracks[at].ranges.flags[idx] = MODEL_RANGEF_UNCLOSED;
	if (!hmap_put(&L->asyncs, ev->value, ((uint64_t)at << 40) | idx))
		return OPSCOPE_ENOMEM;
	L->cur->last_kind = REF_RANGE;
	L->cur->last_track = at;
	L->cur->last_index = idx;
	return 0;
}

static int loader_async_end(struct loader *L, const struct decode_event *ev, uint64_t ticks)
{
	uint64_t *v = hmap_find(&L->asyncs, ev->value);
	if (!v || *v == MODEL_NONE) {
		L->file->unmatched_async++;
		return 0;
	}
	uint32_t at = (uint32_t)(*v >> 40);
	uint64_t idx = *v & (((uint64_t)1 << 40) - 1);
	struct model_track *t = &L->m->tracks[at];
	uint64_t start = (uint64_t)t->ranges.start_ns[idx];
	loader_close(t, idx, ticks > start ? ticks : start);
	t->ranges.flags[idx] &= (uint8_t)~MODEL_RANGEF_UNCLOSED;
	*v = MODEL_NONE;
	L->cur->last_kind = REF_RANGE;
	L->cur->last_track = at;
	L->cur->last_index = idx;
	return 0;
}

/* One event the general way: every kind but the BEGINs and ENDs the loop in load_events
 * does itself (a BEGIN still comes here when its columns need room or its name id is not
 * defined, an END when it names an outer range or nothing is open). */
static int load_event(struct loader *L, uint32_t track, const struct decode_event *ev)
{
	struct model *m = L->m;
	struct load_track *lt = L->cur;
	uint64_t ticks = ev->ticks, idx;
	switch (ev->kind) {
	case OPS_EV_BEGIN:
		idx = model_add_range(m, track, (int64_t)ticks, (int64_t)ticks,
				      loader_str(L, ev->name_id), ev->category,
				      lt->nstack > UINT32_MAX ? UINT32_MAX : (uint32_t)lt->nstack);
		if (idx == MODEL_NONE || !loader_push(lt, idx))
			return OPSCOPE_ENOMEM;
		lt->last_kind = REF_RANGE;
		lt->last_track = track;
		lt->last_index = idx;
		return 0;
	case OPS_EV_END:
		return loader_end(L, track, ev, ticks);
	case OPS_EV_INSTANT:
		idx = model_add_instant(m, track, (int64_t)ticks, loader_str(L, ev->name_id),
					ev->category);
		if (idx == MODEL_NONE)
			return OPSCOPE_ENOMEM;
		lt->last_kind = REF_INSTANT;
		lt->last_track = track;
		lt->last_index = idx;
		return 0;
	case OPS_EV_COUNTER:
		lt->last_kind = REF_NONE;
		if (model_add_counter(m, track, (int64_t)ticks, loader_str(L, ev->name_id),
				      ev->f64) == MODEL_NONE)
			return OPSCOPE_ENOMEM;
		return 0;
	case OPS_EV_ARG:
		return loader_arg(L, ev);
	case OPS_EV_FLOW_OUT:
	case OPS_EV_FLOW_IN:
		lt->last_kind = REF_NONE;
		return loader_flow(L, track, ev, ticks);
	case OPS_EV_ASYNC_BEGIN:
		return loader_async_begin(L, track, ev, ticks);
	case OPS_EV_ASYNC_END:
		return loader_async_end(L, ev, ticks);
	case OPS_EV_DROP_MARK:
		lt->marks += ev->value;
		lt->last_kind = REF_NONE;
		if (!grow_array((void **)&m->drop_marks, sizeof(*m->drop_marks), &m->drop_marks_cap,
				m->ndrop_marks + 1))
			return OPSCOPE_ENOMEM;
		m->drop_marks[m->ndrop_marks++] =
			(struct model_drop_mark){ track, (int64_t)ticks, ev->value };
		return 0;
	}
	return 0;
}

/* The hot state of the track whose events are being read, in locals of load_events: stores
 * into the columns could otherwise alias it, and the compiler would reload it after each.
 * Kept small enough for registers: what the fast loop did (how many BEGINs and ENDs, so the
 * target of the next ARG) is worked out when it is written back. */
struct hot_track {
	struct model_ranges r;
	uint64_t nranges, nstack, *stack;
	uint64_t ranges_cap, stack_cap; /* room in the columns and the stack */
	uint64_t last_index;		/* range of the latest BEGIN or END of the fast loop */
	const uint32_t *strmap;
	uint64_t nstrmap;
	uint64_t nranges0, nstack0; /* nranges and nstack when read */
	uint64_t args;		    /* ARGs the block loop attached (load2_blocks) */
};

static struct hot_track hot_get(const struct loader *L, uint32_t track)
{
	const struct model_track *t = &L->m->tracks[track];
	const struct load_track *lt = &L->lt[track - L->first_track];
	return (struct hot_track){ .r = t->ranges,
				   .nranges = t->nranges,
				   .nstack = lt->nstack,
				   .stack = lt->stack,
				   .ranges_cap = t->nranges_cap,
				   .stack_cap = lt->stack_cap,
				   .last_index = lt->last_index,
				   .strmap = L->strmap,
				   .nstrmap = L->nstrmap,
				   .nranges0 = t->nranges,
				   .nstack0 = lt->nstack };
}

static void hot_put(struct loader *L, uint32_t track, const struct hot_track *h)
{
	struct load_track *lt = loader_lt(L, track);
	/* the fast loop appends a range per BEGIN and pops one per END, and nothing else */
	uint64_t begins = h->nranges - h->nranges0, ends = h->nstack0 + begins - h->nstack;
	L->m->tracks[track].nranges = h->nranges;
	lt->nstack = h->nstack;
	L->file->by_kind[OPS_EV_BEGIN] += begins;
	L->file->by_kind[OPS_EV_END] += ends;
	L->file->by_kind[OPS_EV_ARG] += h->args;
	if (begins || ends) {
		lt->last_kind = REF_RANGE;
		lt->last_track = track;
		lt->last_index = h->last_index;
	}
}

/* An event the loops in load_events do not do themselves, through load_event, with the hot state
 * written back before and read again after (it may grow and move anything). Takes and returns
 * the state by value, so that the caller's copy never has its address taken. */
static struct hot_track load_other(struct loader *L, uint32_t track, struct hot_track h,
				   const struct decode_event *ev, uint64_t ticks, int *rc)
{
	hot_put(L, track, &h);
	L->file->by_kind[ev->kind & 15]++;
	struct decode_event e = *ev;
	e.ticks = ticks;
	L->cur = loader_lt(L, track);
	*rc = load_event(L, track, &e);
	return hot_get(L, track);
}

/* The time of an event on its track: times never go back on a track, even across records,
 * so one before the latest is taken as the latest (*last). An ARG has its event's time. */
static inline uint64_t track_ticks(uint64_t *last, const struct decode_event *ev)
{
	if (ev->kind == OPS_EV_ARG)
		return ev->ticks;
	*last = ev->ticks < *last ? *last : ev->ticks;
	return *last;
}

/* The ARG the block loop of load2_blocks stopped at, if it belongs to the latest BEGIN or END
 * of the fast loops (any since hot_get: the target of ARGs stays the same across ARGs) and
 * nothing about it is odd; false (nothing consumed) sends it the general way. Its fields are
 * in their streams: the block that stopped at it had room for it. */
__attribute__((noinline)) static bool block_arg(struct model *m, struct decode_events *it,
						struct hot_track *h)
{
	unsigned tag = it->c.base[it->c.pos];
	unsigned tw = OPS_TIME_WIDTH(OPS_TAG_TIME(tag)), iw = OPS_ID_WIDTH(OPS_TAG_ID(tag));
	size_t tp = it->pos[DECODE_TIME], ip = it->pos[DECODE_ID], bp = it->pos[DECODE_BYTE];
	bool target = h->nranges != h->nranges0 || h->nstack != h->nstack0;
	if (OPS_TAG_KIND(tag) != OPS_EV_ARG || !target || it->end[DECODE_TIME] - tp < 8 ||
	    it->end[DECODE_ID] - ip < 4 || it->end[DECODE_BYTE] - bp < 1)
		return false;
	uint64_t t = decode_time_field(it->payload + tp, OPS_TAG_TIME(tag));
	uint32_t id = decode_id_field(it->payload + ip, OPS_TAG_ID(tag));
	unsigned type = it->payload[bp];
	uint64_t bits = type == OPS_ARG_I64 ? (uint64_t)zigzag_decode(t) : t;
	const uint32_t *strmap = h->strmap;
	bool bad_str = type == OPS_ARG_STR && t && (t >= h->nstrmap || !strmap[t]);
	if (type < OPS_ARG_I64 || type > OPS_ARG_STR || bad_str || id >= h->nstrmap ||
	    (id && !strmap[id]) || h->r.nargs[h->last_index] == UINT32_MAX)
		return false;
	if (type == OPS_ARG_STR && t)
		bits = strmap[t] - 1;
	uint64_t i = h->last_index;
	if (attach_arg(m, &h->r.first_arg[i], &h->r.nargs[i], id ? strmap[id] - 1 : 0,
		       (uint8_t)type, bits) != 0)
		return false;
	it->c.pos++;
	it->seen++;
	it->pos[DECODE_TIME] = tp + tw;
	it->pos[DECODE_ID] = ip + iw;
	it->pos[DECODE_BYTE] = bp + 1;
	h->args++;
	return true;
}

/*
 * The BEGINs and ENDs of an EVENTS2 record, in blocks of events that cannot run past a stream
 * even at the widest fields: with that checked once per block and the state in locals, an
 * event is a tag, two masked loads, a few compares and the stores into the columns. An ARG
 * ends a block and is attached by block_arg (in the block loop it would cost the other events
 * registers). Stops at the first event of any other kind or anything odd (a bad id, a
 * time that would overflow, an END that is not the innermost's, a full column or stack) and
 * at the record's last few events, for decode_fast2_next and the general path.
 */
static inline __attribute__((always_inline)) void
load2_blocks(struct model *m, struct decode_events *it, struct hot_track *h, uint64_t *last)
{
	const uint8_t *p = it->payload;
	for (;;) {
		uint64_t k = it->count - it->seen;
		uint64_t room[4] = { (it->end[DECODE_TIME] - it->pos[DECODE_TIME]) / 8,
				     (it->end[DECODE_ID] - it->pos[DECODE_ID]) / 4,
				     it->end[DECODE_BYTE] - it->pos[DECODE_BYTE],
				     h->ranges_cap - h->nranges };
		for (int i = 0; i < 4; i++)
			k = room[i] < k ? room[i] : k;
		if (k < 16 || it->ticks < *last)
			return; /* a short block is not worth it; times clamped go the other way */
		const uint8_t *tg = it->c.base + it->c.pos, *tp = p + it->pos[DECODE_TIME];
		const uint8_t *ip = p + it->pos[DECODE_ID], *bp = p + it->pos[DECODE_BYTE];
		uint64_t ticks = it->ticks, nr = h->nranges, ns = h->nstack;
		const struct model_ranges r = h->r;
		uint64_t *stack = h->stack;
		const uint32_t *strmap = h->strmap;
		uint64_t nstrmap = h->nstrmap, stack_cap = h->stack_cap;
		uint64_t j = 0;
		/* k leaves room in the columns for a BEGIN per event */
		for (; j < k; j++) {
			unsigned tag = tg[j], tc = OPS_TAG_TIME(tag), ic = OPS_TAG_ID(tag);
			uint64_t t = decode_time_field(tp, tc);
			uint32_t id = decode_id_field(ip, ic);
			if (t > UINT64_MAX - ticks)
				break;
			uint64_t now = ticks + t;
			if (OPS_TAG_KIND(tag) == OPS_EV_BEGIN) {
				if (ns == stack_cap || id >= nstrmap || (id && !strmap[id]))
					break; /* the general path grows, or reports */
				uint64_t idx = nr++;
				r.start_ns[idx] = (int64_t)now;
				r.dur_ns[idx] = (int64_t)now;
				r.name[idx] = id ? strmap[id] - 1 : 0;
				r.category[idx] = *bp++;
				r.depth[idx] = (uint32_t)(ns < UINT32_MAX ? ns : UINT32_MAX);
				/* flags, first_arg and nargs are 0 already (column memory) */
				stack[ns++] = idx;
			} else if (OPS_TAG_KIND(tag) == OPS_EV_END && ns &&
				   (id == 0 || (id < nstrmap && strmap[id] != 0 &&
						r.name[stack[ns - 1]] == strmap[id] - 1))) {
				r.dur_ns[stack[--ns]] = (int64_t)now;
			} else {
				break;
			}
			ticks = now;
			tp += OPS_TIME_WIDTH(tc);
			ip += OPS_ID_WIDTH(ic);
		}
		it->seen += (uint32_t)j;
		it->c.pos += j;
		it->pos[DECODE_TIME] = (size_t)(tp - p);
		it->pos[DECODE_ID] = (size_t)(ip - p);
		it->pos[DECODE_BYTE] = (size_t)(bp - p);
		it->ticks = ticks;
		if (j)
			*last = ticks; /* >= *last: checked before the block; times only grow */
		h->nranges = nr;
		h->nstack = ns;
		/* the range of the block's last event, for ARGs: a BEGIN's is the newest range, an
		 * END's is still in the stack slot it was popped from */
		if (j)
			h->last_index =
				OPS_TAG_KIND(tg[j - 1]) == OPS_EV_BEGIN ? nr - 1 : stack[ns];
		if (j < k && !block_arg(m, it, h))
			return;
	}
}

/* The events of an EVENTS (v2 false) or EVENTS2 record: inlined once per fast decoder, so
 * that each loop has its decoder's state in registers, and once without them (use_fast
 * false: model.general_only). */
static inline __attribute__((always_inline)) int load_events_with(struct loader *L,
								  struct decode_events *it,
								  const struct decode_record *rec,
								  bool v2, bool use_fast)
{
	int rc = 0;
	uint32_t track = loader_track(L, it->track);
	if (track == MODEL_NO_TRACK)
		return loader_oom(L, rec->offset);
	uint64_t last = loader_lt(L, track)->last_ticks;
	struct hot_track h = hot_get(L, track);
	struct decode_event ev;
	/* the last event of the track stays the target of ARGs across records: a chunk may
	 * end between an event and its arguments */
	for (;;) {
		struct decode_fast fast;
		struct decode_fast2 fast2;
		if (v2 && use_fast)
			load2_blocks(L->m, it, &h, &last);
		if (v2)
			decode_fast2_begin(it, &fast2);
		else
			decode_fast_begin(it, &fast);
		while (use_fast &&
		       (v2 ? decode_fast2_next(&fast2, &ev) : decode_fast_next(&fast, &ev))) {
			uint64_t ticks = track_ticks(&last, &ev);
			uint32_t id = ev.name_id;
			/* a BEGIN with room for it (else the general path grows the columns) */
			if (ev.kind == OPS_EV_BEGIN && h.nranges < h.ranges_cap &&
			    h.nstack < h.stack_cap && id < h.nstrmap && (id == 0 || h.strmap[id])) {
				uint64_t idx = h.nranges++;
				h.r.start_ns[idx] = (int64_t)ticks;
				h.r.dur_ns[idx] = (int64_t)ticks;
				h.r.name[idx] = id ? h.strmap[id] - 1 : 0;
				h.r.category[idx] = ev.category;
				h.r.depth[idx] =
					(uint32_t)(h.nstack < UINT32_MAX ? h.nstack : UINT32_MAX);
				/* flags, first_arg and nargs are 0 already (column memory) */
				h.stack[h.nstack++] = idx;
				h.last_index = idx;
				continue;
			}
			/* an END that closes the innermost range: unnamed or naming it (a bad id goes
			 * to loader_end, which counts it) */
			if (ev.kind == OPS_EV_END && h.nstack &&
			    (id == 0 || (id < h.nstrmap && h.strmap[id] != 0 &&
					 h.r.name[h.stack[h.nstack - 1]] == h.strmap[id] - 1))) {
				uint64_t top = h.stack[--h.nstack];
				h.r.dur_ns[top] = (int64_t)ticks;
				h.last_index = top;
				continue;
			}
			h = load_other(L, track, h, &ev, ticks, &rc);
			if (rc != 0)
				break;
		}
		if (v2)
			decode_fast2_end(it, &fast2);
		else
			decode_fast_end(it, &fast);
		if (rc != 0) {
			rc = loader_oom(L, rec->offset);
			break;
		}
		/* the event the fast decoder stopped at, the general way */
		rc = decode_events_next(&L->dec, it, &ev);
		if (rc != 1)
			break;
		h = load_other(L, track, h, &ev, track_ticks(&last, &ev), &rc);
		if (rc != 0) {
			rc = loader_oom(L, rec->offset);
			break;
		}
	}
	hot_put(L, track, &h);
	/* counted once per record; on an error, the events before it */
	L->m->tracks[track].events += it->seen;
	L->file->events += it->seen;
	loader_lt(L, track)->last_ticks = last;
	if (last > L->max_ticks)
		L->max_ticks = last;
	return rc;
}

/* Out of line, as when the loader and the clock map shared a file: without the clock map's
 * code in loader_run, GCC inlines this into the record loop, and the fast loops inside it
 * would be compiled anew in a larger function. */
__attribute__((noinline)) static int load_events(struct loader *L, const struct decode_record *rec)
{
	struct decode_events it;
	int rc = decode_events_begin(&L->dec, rec, &it);
	if (rc)
		return rc;
	if (L->m->general_only)
		return load_events_with(L, &it, rec, it.v2, false);
	return it.v2 ? load_events_with(L, &it, rec, true, true)
		     : load_events_with(L, &it, rec, false, true);
}

static int load_record(struct loader *L, const struct decode_record *rec)
{
	struct model_file *f = L->file;
	switch (rec->type) {
	case OPS_REC_METADATA:
		return load_metadata(L, rec);
	case OPS_REC_CLOCK: {
		struct ops_clock_payload p;
		int rc = decode_parse_clock(&L->dec, rec, &p);
		if (rc)
			return rc;
		if (f->nclocks >= (1u << 20))
			return 0;	   /* a sane file has a handful; ignore a flood */
		uint64_t cap = f->nclocks; /* grown one by one: a handful per file */
		if (!grow_array((void **)&f->clocks, sizeof(*f->clocks), &cap,
				(uint64_t)f->nclocks + 1))
			return loader_oom(L, rec->offset);
		int64_t mono = p.monotonic_ns > (uint64_t)CLOCKMAP_TIME_LIMIT
				       ? CLOCKMAP_TIME_LIMIT
				       : (int64_t)p.monotonic_ns;
		f->clocks[f->nclocks++] =
			(struct model_clock){ p.ticks, mono, p.realtime_ns, p.ticks_per_second };
		return 0;
	}
	case OPS_REC_STRINGS:
		return load_strings(L, rec);
	case OPS_REC_THREAD:
		return load_thread(L, rec);
	case OPS_REC_EVENTS:
	case OPS_REC_EVENTS2:
		return load_events(L, rec);
	case OPS_REC_DROPS: {
		struct ops_drops_payload p;
		int rc = decode_parse_drops(&L->dec, rec, &p);
		if (rc)
			return rc;
		uint32_t t = loader_track(L, p.track);
		if (t == MODEL_NO_TRACK)
			return loader_oom(L, rec->offset);
		loader_lt(L, t)->drops_record = p.dropped;
		loader_lt(L, t)->has_drops_record = true;
		return 0;
	}
	case OPS_REC_TIMERS:
		return load_timers(L, rec);
	case OPS_REC_MAPPINGS:
		return load_mappings(L, rec);
	case OPS_REC_FRAMES:
		return load_frames(L, rec);
	case OPS_REC_STACKS:
		return load_stacks(L, rec);
	case OPS_REC_GPU:
		return load_gpu(L, rec);
	case OPS_REC_SAMPLES:
		return load_samples(L, rec);
	case OPS_REC_END: {
		int rc = decode_parse_end(&L->dec, rec, &L->end);
		if (rc)
			return rc;
		f->complete = true;
		return 0;
	}
	}
	return 0;
}

/* The file is read: close what is open, map ticks to ns, sort, sum up. */
static void loader_finish(struct loader *L)
{
	struct model *m = L->m;
	struct model_file *f = L->file;
	uint64_t stop = L->max_ticks;
	if (f->complete && L->end.stop_ticks > stop)
		stop = L->end.stop_ticks;
	struct clockmap cm;
	if (!clockmap_init(&cm, f)) {
		m->oom = true;
		return;
	}
	struct clock_seg g = cm.seg;
	uint64_t file_dropped = 0, gpu_dropped = 0;
	for (uint32_t ti = L->first_track; ti < m->ntracks; ti++) {
		struct model_track *t = &m->tracks[ti];
		struct load_track *lt = loader_lt(L, ti);
		struct model_ranges *r = &t->ranges;
		/* ranges still open: closed at the track's last time, or the stop time */
		uint64_t close = lt->last_ticks;
		if (f->complete && L->end.stop_ticks > close)
			close = L->end.stop_ticks;
		for (uint64_t j = 0; j < lt->nstack; j++) {
			uint64_t idx = lt->stack[j];
			loader_close(t, idx, close);
			r->flags[idx] |= MODEL_RANGEF_UNCLOSED;
		}
		if (t->kind == MODEL_TRACK_ASYNC) {
			for (uint64_t j = 0; j < t->nranges; j++)
				if (r->flags[j] & MODEL_RANGEF_UNCLOSED)
					r->dur_ns[j] = (int64_t)stop;
		}
		clockmap_ranges(&cm, &g, t);
		for (uint64_t j = 0; j < t->ninstants; j++) {
			int64_t s = clockmap_ns(&cm, &g, (uint64_t)t->instants.ts_ns[j]);
			t->instants.ts_ns[j] = s;
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		for (uint64_t j = 0; j < t->ncounters; j++) {
			int64_t s = clockmap_ns(&cm, &g, (uint64_t)t->counters.ts_ns[j]);
			t->counters.ts_ns[j] = s;
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		for (uint64_t j = 0; j < t->nsamples; j++) {
			int64_t s = clockmap_ns(&cm, &g, (uint64_t)t->samples.ts_ns[j]);
			t->samples.ts_ns[j] = s;
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		t->dropped = lt->has_drops_record ? lt->drops_record : lt->marks;
		file_dropped += t->dropped;
		if (t->min_ns < m->min_ns)
			m->min_ns = t->min_ns;
		if (t->max_ns > m->max_ns)
			m->max_ns = t->max_ns;
		free(lt->stack);
		lt->stack = NULL;
	}
	for (uint64_t i = L->first_flow; i < m->nflows; i++) {
		struct model_flow *fl = &m->flows[i];
		if (fl->from_track != MODEL_NO_TRACK)
			fl->from_ns = clockmap_ns(&cm, &g, (uint64_t)fl->from_ns);
		if (fl->to_track != MODEL_NO_TRACK)
			fl->to_ns = clockmap_ns(&cm, &g, (uint64_t)fl->to_ns);
	}
	for (uint64_t i = L->first_mark; i < m->ndrop_marks; i++)
		m->drop_marks[i].ts_ns = clockmap_ns(&cm, &g, (uint64_t)m->drop_marks[i].ts_ns);
	/* GPU work (gpu_load.c), its times mapped like the rest */
	uint64_t first_gpu_flow = m->nflows;
	if (L->ngpu) {
		for (uint64_t i = 0; i < L->ngpu; i++) {
			L->gpu[i].start_ticks =
				(uint64_t)clockmap_ns(&cm, &g, L->gpu[i].start_ticks);
			L->gpu[i].end_ticks = (uint64_t)clockmap_ns(&cm, &g, L->gpu[i].end_ticks);
			if ((int64_t)L->gpu[i].end_ticks < (int64_t)L->gpu[i].start_ticks)
				L->gpu[i].end_ticks = L->gpu[i].start_ticks;
		}
		uint32_t proc = model_find_process(m, L->fi, L->dec.hdr.pid);
		if (!gpu_load_settle(m, L->first_track, proc, L->dec.hdr.pid, L->gpu, L->ngpu,
				     first_gpu_flow))
			m->oom = true;
		const char *d = model_file_meta(m, L->fi, L->dec.hdr.pid, "gpu.dropped_records");
		if (d)
			gpu_dropped = strtoull(d, NULL, 10);
	}
	/* where the steps of opscope_step() begin and end (bare_steps.c) */
	if (!bare_steps_settle(m, L->first_track))
		m->oom = true;
	/* the correlation column from the ARGs (a GPU collector's launch links): one pass over
	 * the ranges with arguments, none at all when no file of the model has the key */
	if (!model_correlations_from_args(m, L->first_track))
		m->oom = true;
	for (uint32_t ti = L->first_track; ti < m->ntracks; ti++)
		model_sort_track(m, ti);
	if (first_gpu_flow < m->nflows)
		model_resolve_flows(m, first_gpu_flow);
	clockmap_free(&cm);
	if (f->complete && L->end.events_dropped > file_dropped)
		file_dropped = L->end.events_dropped;
	file_dropped += gpu_dropped; /* CUPTI's losses are the file's too */
	f->dropped = file_dropped;
	m->dropped_total += file_dropped;
	m->events_total += f->events;
	m->complete = (m->nfiles == 1 || m->complete) && f->complete;
}

/* Decompressing takes a third of the time of a load of zstd records: a thread reads ahead
 * (decode_ahead_*) for compressed files of 1 MiB and more. OPSCOPE_LOAD_THREADS=0 or 1
 * decides instead (the tests use both). */
static bool loader_reads_ahead(const struct loader *L)
{
	const char *env = getenv("OPSCOPE_LOAD_THREADS");
	if (env && *env)
		return strcmp(env, "0") != 0;
	return (L->dec.hdr.features & OPS_FEAT_ZSTD) && L->dec.size >= (1u << 20);
}

static int loader_run(struct model *m, struct loader *L, char *err, size_t errsize)
{
	int rc = 0;
	L->m = m;
	L->first_track = m->ntracks;
	L->first_flow = m->nflows;
	L->first_mark = m->ndrop_marks;
	if (!grow_array32((void **)&m->files, sizeof(*m->files), &m->files_cap,
			  (uint64_t)m->nfiles + 1)) {
		m->oom = true;
		snprintf(err, errsize, "%s: out of memory", L->dec.name);
		return OPSCOPE_ENOMEM;
	}
	L->fi = m->nfiles++;
	L->file = &m->files[L->fi];
	struct model_file *f = L->file;
	memset(f, 0, sizeof(*f));
	f->path = model_intern(m, L->dec.name, strlen(L->dec.name));
	f->format = model_intern(m, "opscope", 7);
	f->pid = L->dec.hdr.pid;
	f->version = L->dec.hdr.version;
	f->min_reader = L->dec.hdr.min_reader_version;
	f->features = L->dec.hdr.features;
	f->create_realtime_ns = L->dec.hdr.create_realtime_ns;
	f->file_bytes = L->dec.size;
	/* the file's own process, tracks or not */
	(void)model_process(m, L->fi, L->dec.hdr.pid);
	struct decode_record rec;
	struct decode_ahead ahead;
	bool ahead_on = loader_reads_ahead(L) && decode_ahead_start(&ahead, &L->dec) == 0;
	while ((rc = ahead_on ? decode_ahead_next(&ahead, &rec) : decode_next(&L->dec, &rec)) ==
	       1) {
		if ((rc = load_record(L, &rec)) != 0)
			break;
	}
	if (ahead_on)
		decode_ahead_stop(&ahead, &L->dec);
	f->valid_end = L->dec.valid_end;
	f->discarded_bytes = L->dec.discarded_bytes;
	f->records = L->dec.records;
	f->skipped_records = L->dec.skipped_records;
	if (L->dec.tail_msg[0])
		f->tail_msg = model_intern(m, L->dec.tail_msg, strlen(L->dec.tail_msg));
	loader_finish(L);
	if (rc == 0 && m->oom)
		rc = loader_oom(L, L->dec.pos);
	if (rc < 0 && err && errsize)
		snprintf(err, errsize, "%s", L->dec.err[0] ? L->dec.err : opscope_strerror(rc));
	return rc < 0 ? rc : 0;
}

static void loader_free(struct loader *L)
{
	if (L->lt && L->m) {
		for (uint64_t i = 0; i < L->nlt && L->first_track + i < L->m->ntracks; i++)
			free(L->lt[i].stack);
	}
	free(L->lt);
	free(L->strmap);
	free(L->maps);
	free(L->frames);
	free(L->locs);
	free(L->stacks);
	free(L->gpu);
	hmap_free(&L->tracks);
	hmap_free(&L->flows);
	hmap_free(&L->asyncs);
	decode_close(&L->dec);
}

int opscope_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		     size_t errsize)
{
	struct loader L;
	memset(&L, 0, sizeof(L));
	int rc = decode_open_mem(&L.dec, name, data, size);
	if (rc) {
		if (err && errsize)
			snprintf(err, errsize, "%s", L.dec.err);
		decode_close(&L.dec);
		return rc;
	}
	rc = loader_run(m, &L, err, errsize);
	loader_free(&L);
	return rc;
}

int opscope_load_file(struct model *m, const char *path, char *err, size_t errsize)
{
	struct loader L;
	memset(&L, 0, sizeof(L));
	int rc = decode_open_file(&L.dec, path);
	if (rc) {
		if (err && errsize)
			snprintf(err, errsize, "%s", L.dec.err);
		return rc;
	}
	rc = loader_run(m, &L, err, errsize);
	loader_free(&L);
	return rc;
}

bool opscope_sniff(const unsigned char *head, size_t n)
{
	return n >= OPS_MAGIC_BYTES && memcmp(head, OPS_MAGIC, OPS_MAGIC_BYTES) == 0;
}
