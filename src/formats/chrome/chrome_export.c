/*
 * chrome_export.c: export the model as Chrome / Perfetto trace JSON, object format:
 * {"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}.
 *
 * Mapping: 'M' process_name (the program; "GPU n" for a device) / thread_name ("stream s" for
 * a device queue, with "opscope_track": "thread" | "device" for our importer); the category's
 * name as "cat" (read back as that category); ranges of thread tracks as 'X' (complete) events,
 * which nest properly per tid because the model keeps them nested; async ranges as nestable
 * async 'b'/'e' pairs with one id each, so overlapping ones never share a track; instants as
 * 'i' with "s":"t"; counter samples as 'C'; flows as 's' (inside the source range, at the
 * flow point) + 'f' with "bp":"e" (inside the destination range), sharing id, cat and name;
 * drop marks as instants in category "opscope". CPU stack samples, when the model has any, as
 * the format's "Global Samples": a top-level "stackFrames" dictionary, one entry per entry of
 * the model's stack prefix tree (key: its index; "name": the frame's function, "category":
 * its source file or module, "parent": the caller's key), and a top-level "samples" array
 * ({"pid","tid","ts","name","sf","weight"}; "sf" the key of the innermost frame). Samples
 * without a stack are left out (they have no frame to point at).
 *
 * Invariants of the output: valid JSON whatever the names contain (every string is escaped:
 * quotes, backslashes, control characters as \u00XX, invalid UTF-8 as U+FFFD); numbers are
 * always finite (non-finite argument values become strings, non-finite counter samples are
 * left out); ts and dur are microseconds with exactly three decimals, i.e. the model's ns;
 * other floats in their shortest round-trip form (numfmt_double). An integer "color" argument
 * (NVTX's ARGB) stays exact in args and adds the nearest Chrome "cname".
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/chrome/chrome.h"
#include "opscope_config.h"
#include "util/bytes.h"
#include "util/escape.h"
#include "util/numfmt.h"

#define JW_BUF_BYTES (1 << 16)

/* A buffered JSON writer. Write errors are sticky and reported once at the end. */
struct jw {
	FILE *out;		/* destination */
	size_t len;		/* bytes in buf */
	bool failed;		/* a write failed */
	bool first;		/* no event written yet (no comma needed) */
	uint32_t color_key;	/* string id of "color" (NVTX's ARGB argument), 0 if none */
	char buf[JW_BUF_BYTES]; /* pending output */
};

static void jw_flush(struct jw *w)
{
	if (w->len && !w->failed && fwrite(w->buf, 1, w->len, w->out) != w->len)
		w->failed = true;
	w->len = 0;
}

static void jw_raw(struct jw *w, const char *s, size_t n)
{
	if (n > JW_BUF_BYTES - w->len) {
		jw_flush(w);
		if (n > JW_BUF_BYTES) {
			if (!w->failed && fwrite(s, 1, n, w->out) != n)
				w->failed = true;
			return;
		}
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void jw_lit(struct jw *w, const char *s)
{
	jw_raw(w, s, strlen(s));
}

static void jw_u64(struct jw *w, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	jw_raw(w, tmp + i, sizeof(tmp) - i);
}

static void jw_i64(struct jw *w, int64_t v)
{
	if (v < 0) {
		jw_raw(w, "-", 1);
		jw_u64(w, (uint64_t)0 - (uint64_t)v);
	} else {
		jw_u64(w, (uint64_t)v);
	}
}

/* ns as microseconds with three decimals: exact. */
static void jw_us(struct jw *w, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	if (ns < 0)
		jw_raw(w, "-", 1);
	jw_u64(w, a / 1000);
	char frac[4] = { '.', (char)('0' + a % 1000 / 100), (char)('0' + a % 100 / 10),
			 (char)('0' + a % 10) };
	jw_raw(w, frac, 4);
}

/* A finite double, shortest round trip (numfmt_double): 0.074074, not 0.074074000000000001. */
static void jw_f64(struct jw *w, double v)
{
	char tmp[40];
	int n = numfmt_double(tmp, sizeof(tmp), v);
	jw_raw(w, tmp, (size_t)n);
}

/* jw_raw as the put function of an escaper's sink. */
static void jw_put(void *ctx, const char *s, size_t n)
{
	jw_raw(ctx, s, n);
}

/* A JSON string: escape_json with the default flags (DEL as it is). */
static void jw_str(struct jw *w, const char *s, size_t n)
{
	escape_json_inline((struct esc_sink){ jw_put, w }, s, n, 0);
}

static void jw_sid(struct jw *w, const struct model *m, uint32_t id)
{
	jw_str(w, model_str(m, id), model_strlen(m, id));
}

static void jw_cstr(struct jw *w, const char *s)
{
	jw_str(w, s, strlen(s));
}

/* Start one event object: {"ph":"X","pid":P,"tid":T */
static void jw_event(struct jw *w, const char *ph, uint32_t pid, uint64_t tid)
{
	jw_raw(w, w->first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"", w->first ? 8 : 9);
	w->first = false;
	jw_lit(w, ph);
	jw_lit(w, "\",\"pid\":");
	jw_u64(w, pid);
	jw_lit(w, ",\"tid\":");
	jw_u64(w, tid);
}

static void jw_ts(struct jw *w, const char *key, int64_t ns)
{
	jw_lit(w, key);
	jw_us(w, ns);
}

static void jw_cat(struct jw *w, uint8_t category)
{
	jw_lit(w, ",\"cat\":");
	jw_cstr(w, opscope_category_name(category));
}

/* The colour names a Chrome JSON "cname" may take (catapult's reserved colours; Perfetto
 * ignores cname and picks its own), with their RGB. */
static const struct {
	const char *name;
	uint8_t r, g, b;
} cnames[] = {
	{ "thread_state_uninterruptible", 182, 125, 143 },
	{ "thread_state_iowait", 255, 140, 0 },
	{ "thread_state_running", 126, 200, 148 },
	{ "thread_state_runnable", 133, 160, 210 },
	{ "thread_state_sleeping", 240, 240, 240 },
	{ "thread_state_unknown", 199, 155, 125 },
	{ "background_memory_dump", 0, 180, 180 },
	{ "light_memory_dump", 0, 0, 180 },
	{ "detailed_memory_dump", 180, 0, 180 },
	{ "vsync_highlight_color", 0, 0, 255 },
	{ "generic_work", 125, 125, 125 },
	{ "good", 0, 125, 0 },
	{ "bad", 180, 125, 0 },
	{ "terrible", 180, 0, 0 },
	{ "black", 0, 0, 0 },
	{ "grey", 221, 221, 221 },
	{ "white", 255, 255, 255 },
	{ "yellow", 255, 255, 0 },
	{ "olive", 100, 100, 0 },
	{ "rail_response", 67, 135, 253 },
	{ "rail_animation", 244, 74, 63 },
	{ "rail_idle", 238, 142, 0 },
	{ "rail_load", 13, 168, 97 },
	{ "startup", 230, 230, 0 },
	{ "cq_build_running", 255, 255, 119 },
	{ "cq_build_passed", 153, 238, 102 },
	{ "cq_build_failed", 238, 136, 136 },
	{ "cq_build_abandoned", 187, 187, 187 },
	{ "cq_build_attempt_passed", 103, 218, 35 },
	{ "cq_build_attempt_failed", 197, 81, 81 },
};

/* The reserved colour nearest to an ARGB colour (alpha ignored; squared RGB distance). */
const char *chrome_cname(uint32_t argb)
{
	int r = (int)(argb >> 16 & 0xff), g = (int)(argb >> 8 & 0xff), b = (int)(argb & 0xff);
	size_t best = 0;
	long best_d = -1;
	for (size_t i = 0; i < sizeof(cnames) / sizeof(cnames[0]); i++) {
		long dr = r - cnames[i].r, dg = g - cnames[i].g, db = b - cnames[i].b;
		long d = dr * dr + dg * dg + db * db;
		if (best_d < 0 || d < best_d) {
			best_d = d;
			best = i;
		}
	}
	return cnames[best].name;
}

/* ,"cname":"..." for an event whose "color" argument holds an ARGB colour (NVTX's
 * attributes: the argument itself stays, exact, among the args). */
static void jw_cname(struct jw *w, const struct model *m, uint64_t first, uint32_t n)
{
	uint32_t key = w->color_key;
	if (!key)
		return;
	for (uint64_t i = first; i < first + n && i < m->nargs; i++) {
		if (m->args.key[i] != key ||
		    (m->args.type[i] != MODEL_ARG_U64 && m->args.type[i] != MODEL_ARG_I64) ||
		    m->args.bits[i] > UINT32_MAX)
			continue;
		jw_lit(w, ",\"cname\":\"");
		jw_lit(w, chrome_cname((uint32_t)m->args.bits[i]));
		jw_raw(w, "\"", 1);
		return;
	}
}

/* The value of argument i. */
static void jw_arg_value(struct jw *w, const struct model *m, uint64_t i)
{
	uint64_t bits = m->args.bits[i];
	switch (m->args.type[i]) {
	case MODEL_ARG_I64:
		jw_i64(w, (int64_t)bits);
		break;
	case MODEL_ARG_U64:
		jw_u64(w, bits);
		break;
	case MODEL_ARG_F64: {
		double d = f64_from_bits(bits);
		if (isfinite(d))
			jw_f64(w, d);
		else
			jw_cstr(w, isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
		break;
	}
	case MODEL_ARG_STR:
		jw_sid(w, m, bits > UINT32_MAX ? 0 : (uint32_t)bits);
		break;
	case MODEL_ARG_JSON: /* compact JSON text checked by the importer: written as is */
		jw_raw(w, model_str(m, bits > UINT32_MAX ? 0 : (uint32_t)bits),
		       model_strlen(m, bits > UINT32_MAX ? 0 : (uint32_t)bits));
		break;
	default:
		jw_lit(w, "null");
	}
}

/* ,"args":{...} for `n` args from `first`, plus a flag for unusual ranges. */
static void jw_args(struct jw *w, const struct model *m, uint64_t first, uint32_t n, uint8_t flags)
{
	if (!n && !flags)
		return;
	jw_lit(w, ",\"args\":{");
	bool comma = false;
	for (uint64_t i = first; i < first + n && i < m->nargs; i++) {
		if (comma)
			jw_raw(w, ",", 1);
		jw_sid(w, m, m->args.key[i]);
		jw_raw(w, ":", 1);
		jw_arg_value(w, m, i);
		comma = true;
	}
	if (flags & MODEL_RANGEF_UNCLOSED) {
		jw_lit(w, comma ? ",\"opscope_unclosed\":true" : "\"opscope_unclosed\":true");
		comma = true;
	}
	if (flags & MODEL_RANGEF_MISMATCH)
		jw_lit(w, comma ? ",\"opscope_closed_by_outer_end\":true"
				: "\"opscope_closed_by_outer_end\":true");
	jw_raw(w, "}", 1);
}

/* The name of process `pid`: the program of its process table entry (the .opscope file's
 * "program", a Chrome trace's process_name), else its "program" or "name" metadata, else
 * "process <pid>". */
static const char *process_name(const struct model *m, uint32_t pid, char *tmp, size_t size)
{
	for (uint32_t p = 0; p < m->nprocesses; p++)
		if (m->processes[p].pid == pid && m->processes[p].name &&
		    model_strlen(m, m->processes[p].name))
			return model_str(m, m->processes[p].name);
	const char *keys[] = { "program", "name" };
	for (size_t k = 0; k < 2; k++) {
		const char *v = model_get_meta(m, pid, keys[k]);
		if (v && *v)
			return v;
	}
	snprintf(tmp, size, "process %u", pid);
	return tmp;
}

/* One 'M' naming event: {"ph":"M",...,"name":"<what>","args":{"name":<name>}}, and for
 * thread_name the kind of the track ("opscope_track": "thread" or "device"), which our
 * importer reads back so that a device queue stays one whatever its categories. */
static void jw_name_event(struct jw *w, const char *what, uint32_t pid, uint64_t tid,
			  const char *name, size_t len, const char *kind)
{
	jw_event(w, "M", pid, tid);
	jw_lit(w, ",\"name\":\"");
	jw_lit(w, what);
	jw_lit(w, "\",\"args\":{\"name\":");
	jw_str(w, name, len);
	if (kind) {
		jw_lit(w, ",\"opscope_track\":\"");
		jw_lit(w, kind);
		jw_raw(w, "\"", 1);
	}
	jw_lit(w, "}}");
}

/* Is pid one of the first n of pids? */
static bool pid_seen(const uint32_t *pids, uint32_t n, uint32_t pid)
{
	for (uint32_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static void chrome_metadata(struct jw *w, const struct model *m)
{
	uint32_t pids[256];
	uint32_t np = model_pids(m, pids, 256);
	char tmp[64];
	for (uint32_t i = 0; i < np && i < 256; i++) {
		const char *prog = process_name(m, pids[i], tmp, sizeof(tmp));
		jw_name_event(w, "process_name", pids[i], 0, prog, strlen(prog), NULL);
		const char *rank = model_get_meta(m, pids[i], "rank");
		if (rank && *rank) {
			jw_event(w, "M", pids[i], 0);
			jw_lit(w, ",\"name\":\"process_labels\",\"args\":{\"labels\":");
			char label[80];
			snprintf(label, sizeof(label), "rank %.60s", rank);
			jw_cstr(w, label);
			jw_lit(w, "}}");
		}
	}
	/* devices: one process each (pid = the device), named as the trace named it or "GPU n" */
	uint32_t devs[256], nd = 0;
	for (uint32_t t = 0; t < m->ntracks && nd < 256; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_DEVICE || pid_seen(devs, nd, tr->pid))
			continue;
		devs[nd++] = tr->pid;
		const char *name = model_get_meta(m, tr->pid, "name");
		if (!name || !*name || pid_seen(pids, np < 256 ? np : 256, tr->pid)) {
			snprintf(tmp, sizeof(tmp), "GPU %u", tr->device);
			name = tmp;
		}
		jw_name_event(w, "process_name", tr->pid, 0, name, strlen(name), NULL);
	}
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind == MODEL_TRACK_ASYNC)
			continue;
		bool device = tr->kind == MODEL_TRACK_DEVICE;
		const char *kind = device ? "device" : "thread";
		if (tr->name) {
			jw_name_event(w, "thread_name", tr->pid, tr->tid, model_str(m, tr->name),
				      model_strlen(m, tr->name), kind);
			continue;
		}
		if (device)
			snprintf(tmp, sizeof(tmp), "stream %llu", (unsigned long long)tr->stream);
		else
			snprintf(tmp, sizeof(tmp), "thread %llu", (unsigned long long)tr->tid);
		jw_name_event(w, "thread_name", tr->pid, tr->tid, tmp, strlen(tmp), kind);
	}
}

/* The part of the time line being written: events that start in [from, to). */
struct chrome_window {
	int64_t from, to;
};

static bool in_window(const struct chrome_window *win, int64_t ts)
{
	return ts >= win->from && ts < win->to;
}

static void chrome_track(struct jw *w, const struct model *m, uint32_t t, uint64_t *async_id,
			 const struct chrome_window *win)
{
	const struct model_track *tr = &m->tracks[t];
	const struct model_ranges *r = &tr->ranges;
	for (uint64_t i = 0; i < tr->nranges; i++) {
		if (!in_window(win, r->start_ns[i]))
			continue;
		if (tr->kind == MODEL_TRACK_ASYNC) {
			uint64_t id = ++*async_id;
			jw_event(w, "b", tr->pid, tr->tid);
			jw_lit(w, ",\"id\":");
			jw_u64(w, id);
			jw_cat(w, r->category[i]);
			jw_cname(w, m, r->first_arg[i], r->nargs[i]);
			jw_lit(w, ",\"name\":");
			jw_sid(w, m, r->name[i]);
			jw_ts(w, ",\"ts\":", r->start_ns[i]);
			jw_args(w, m, r->first_arg[i], r->nargs[i], r->flags[i]);
			jw_raw(w, "}", 1);
			jw_event(w, "e", tr->pid, tr->tid);
			jw_lit(w, ",\"id\":");
			jw_u64(w, id);
			jw_cat(w, r->category[i]);
			jw_lit(w, ",\"name\":");
			jw_sid(w, m, r->name[i]);
			jw_ts(w, ",\"ts\":", r->start_ns[i] + r->dur_ns[i]);
			jw_raw(w, "}", 1);
			continue;
		}
		jw_event(w, "X", tr->pid, tr->tid);
		jw_cat(w, r->category[i]);
		jw_cname(w, m, r->first_arg[i], r->nargs[i]);
		jw_lit(w, ",\"name\":");
		jw_sid(w, m, r->name[i]);
		jw_ts(w, ",\"ts\":", r->start_ns[i]);
		jw_ts(w, ",\"dur\":", r->dur_ns[i]);
		jw_args(w, m, r->first_arg[i], r->nargs[i], r->flags[i]);
		jw_raw(w, "}", 1);
	}
	const struct model_instants *in = &tr->instants;
	for (uint64_t i = 0; i < tr->ninstants; i++) {
		if (!in_window(win, in->ts_ns[i]))
			continue;
		jw_event(w, "i", tr->pid, tr->tid);
		jw_lit(w, ",\"s\":\"t\"");
		jw_cat(w, in->category[i]);
		jw_cname(w, m, in->first_arg[i], in->nargs[i]);
		jw_lit(w, ",\"name\":");
		jw_sid(w, m, in->name[i]);
		jw_ts(w, ",\"ts\":", in->ts_ns[i]);
		jw_args(w, m, in->first_arg[i], in->nargs[i], 0);
		jw_raw(w, "}", 1);
	}
	const struct model_counters *co = &tr->counters;
	for (uint64_t i = 0; i < tr->ncounters; i++) {
		if (!isfinite(co->value[i]) || !in_window(win, co->ts_ns[i]))
			continue;
		jw_event(w, "C", tr->pid, tr->tid);
		jw_lit(w, ",\"name\":");
		jw_sid(w, m, co->name[i]);
		jw_ts(w, ",\"ts\":", co->ts_ns[i]);
		jw_lit(w, ",\"args\":{\"value\":");
		jw_f64(w, co->value[i]);
		jw_lit(w, "}}");
	}
}

static void chrome_flows(struct jw *w, const struct model *m, const struct chrome_window *win)
{
	for (uint64_t i = 0; i < m->nflows; i++) {
		const struct model_flow *f = &m->flows[i];
		if (f->from_track >= m->ntracks || f->to_track >= m->ntracks)
			continue; /* one end never seen: nothing to draw */
		if (!in_window(win, f->from_ns))
			continue;
		const struct model_track *a = &m->tracks[f->from_track];
		const struct model_track *b = &m->tracks[f->to_track];
		jw_event(w, "s", a->pid, a->tid);
		jw_lit(w, ",\"id\":");
		jw_u64(w, i + 1);
		jw_lit(w, ",\"cat\":\"flow\",\"name\":\"flow\"");
		jw_ts(w, ",\"ts\":", f->from_ns);
		jw_lit(w, ",\"args\":{\"flow_id\":");
		jw_u64(w, f->id);
		jw_lit(w, "}}");
		jw_event(w, "f", b->pid, b->tid);
		jw_lit(w, ",\"bp\":\"e\",\"id\":");
		jw_u64(w, i + 1);
		jw_lit(w, ",\"cat\":\"flow\",\"name\":\"flow\"");
		jw_ts(w, ",\"ts\":", f->to_ns);
		jw_raw(w, "}", 1);
	}
}

static void chrome_drops(struct jw *w, const struct model *m, const struct chrome_window *win)
{
	for (uint64_t i = 0; i < m->ndrop_marks; i++) {
		const struct model_drop_mark *d = &m->drop_marks[i];
		if (d->track >= m->ntracks || !in_window(win, d->ts_ns))
			continue;
		const struct model_track *tr = &m->tracks[d->track];
		char name[64];
		snprintf(name, sizeof(name), "opscope: %llu events dropped",
			 (unsigned long long)d->count);
		jw_event(w, "i", tr->pid, tr->tid);
		jw_lit(w, ",\"s\":\"t\",\"cat\":\"opscope\",\"name\":");
		jw_cstr(w, name);
		jw_ts(w, ",\"ts\":", d->ts_ns);
		jw_raw(w, "}", 1);
	}
}

static bool model_has_samples(const struct model *m)
{
	for (uint32_t t = 0; t < m->ntracks; t++)
		if (m->tracks[t].nsamples)
			return true;
	return false;
}

/* A frame's "category": its source file (Python), else the last component of its module. */
static void jw_frame_category(struct jw *w, const struct model *m, const struct model_frame *f)
{
	if (f->file) {
		jw_sid(w, m, f->file);
		return;
	}
	const char *mod = model_str(m, f->module);
	const char *slash = strrchr(mod, '/');
	jw_cstr(w, slash && slash[1] ? slash + 1 : mod);
}

/* "stackFrames" and "samples" (see the file comment), then a comma; nothing without samples,
 * so that traces without them export as before. */
static void chrome_samples(struct jw *w, const struct model *m, const struct chrome_window *win)
{
	if (!model_has_samples(m))
		return;
	jw_lit(w, "\"stackFrames\":{");
	for (uint32_t s = 0; s < m->nstacks; s++) {
		const struct model_stack *st = &m->stacks[s];
		const struct model_frame *f = &m->frames[st->frame];
		jw_lit(w, s ? ",\n\"" : "\n\"");
		jw_u64(w, s);
		jw_lit(w, "\":{\"name\":");
		if (f->name)
			jw_sid(w, m, f->name);
		else
			jw_cstr(w, "?");
		jw_lit(w, ",\"category\":");
		jw_frame_category(w, m, f);
		if (st->parent != MODEL_NO_STACK) {
			jw_lit(w, ",\"parent\":");
			jw_u64(w, st->parent);
		}
		jw_raw(w, "}", 1);
	}
	jw_lit(w, "\n},\n\"samples\":[");
	bool first = true;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		const struct model_samples *sa = &tr->samples;
		for (uint64_t i = 0; i < tr->nsamples; i++) {
			if (sa->stack[i] == MODEL_NO_STACK || !in_window(win, sa->ts_ns[i]))
				continue;
			jw_lit(w, first ? "\n{\"pid\":" : ",\n{\"pid\":");
			first = false;
			jw_u64(w, tr->pid);
			jw_lit(w, ",\"tid\":");
			jw_u64(w, tr->tid);
			jw_ts(w, ",\"ts\":", sa->ts_ns[i]);
			jw_lit(w, ",\"name\":\"cpu stack sample\",\"sf\":");
			jw_u64(w, sa->stack[i]);
			jw_lit(w, ",\"weight\":");
			jw_i64(w, sa->weight[i]);
			jw_raw(w, "}", 1);
		}
	}
	jw_lit(w, "\n],\n");
}

static void chrome_other(struct jw *w, const struct model *m)
{
	jw_lit(w, "\"otherData\":{\"generator\":\"opscope " OPSCOPE_VERSION_STRING "\"");
	jw_lit(w, ",\"files\":");
	jw_u64(w, m->nfiles);
	jw_lit(w, m->complete ? ",\"complete\":true" : ",\"complete\":false");
	jw_lit(w, ",\"events\":");
	jw_u64(w, m->events_total);
	jw_lit(w, ",\"dropped_events\":");
	jw_u64(w, m->dropped_total);
	jw_lit(w, ",\"processes\":{");
	uint32_t pids[256];
	uint32_t np = model_pids(m, pids, 256);
	for (uint32_t i = 0; i < np && i < 256; i++) {
		char key[16];
		snprintf(key, sizeof(key), "%u", pids[i]);
		if (i)
			jw_raw(w, ",", 1);
		jw_cstr(w, key);
		jw_lit(w, ":{");
		/* one object per pid: of files sharing a pid (metadata is per file), the last
		 * file's, as model_get_meta reads it; so no key twice */
		uint32_t last = 0;
		for (uint32_t k = 0; k < m->nmeta; k++)
			if (m->meta[k].pid == pids[i] && m->meta[k].file > last)
				last = m->meta[k].file;
		bool comma = false;
		for (uint32_t k = 0; k < m->nmeta; k++) {
			if (m->meta[k].pid != pids[i] || m->meta[k].file != last)
				continue;
			if (comma)
				jw_raw(w, ",", 1);
			jw_sid(w, m, m->meta[k].key);
			jw_raw(w, ":", 1);
			jw_sid(w, m, m->meta[k].value);
			comma = true;
		}
		jw_raw(w, "}", 1);
	}
	jw_lit(w, "}}");
}

int chrome_export(const struct model *m, FILE *out, char *err, size_t errsize)
{
	return chrome_export_window(m, out, INT64_MIN, INT64_MAX, err, errsize);
}

int chrome_export_window(const struct model *m, FILE *out, int64_t from, int64_t to, char *err,
			 size_t errsize)
{
	struct chrome_window win = { from, to };
	struct jw *w = malloc(sizeof(*w));
	if (!w) {
		snprintf(err, errsize, "out of memory");
		return OPSCOPE_ENOMEM;
	}
	w->out = out;
	w->len = 0;
	w->failed = false;
	w->first = true;
	w->color_key = model_find_str(m, "color");
	jw_lit(w, "{\"traceEvents\":[");
	chrome_metadata(w, m);
	uint64_t async_id = 0;
	for (uint32_t t = 0; t < m->ntracks; t++)
		chrome_track(w, m, t, &async_id, &win);
	chrome_flows(w, m, &win);
	chrome_drops(w, m, &win);
	jw_lit(w, "\n],\n\"displayTimeUnit\":\"ns\",\n");
	chrome_samples(w, m, &win);
	chrome_other(w, m);
	jw_lit(w, "}\n");
	jw_flush(w);
	bool failed = w->failed || fflush(out) != 0 || ferror(out);
	free(w);
	if (failed) {
		snprintf(err, errsize, "write failed");
		return OPSCOPE_EIO;
	}
	return 0;
}
