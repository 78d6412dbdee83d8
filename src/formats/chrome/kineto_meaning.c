/*
 * kineto_meaning.c: what Kineto / Chrome trace events mean in the model: the track of an
 * event (pid and tid as numbers or strings; host thread or device queue by category), its
 * category (classify), the range, instant, counter or flow end it becomes (commit_event), the
 * names (M events), and the finish once every event is in: B without E closed, times shifted by
 * baseTimeNanoseconds, tracks nested, flows resolved to ranges.
 *
 * Invariants: events are committed in text order, one batch after another, on one thread
 * (the committer), so the model is the same however the text was parsed; an event the model
 * has no place for is counted as skipped, never an error; only out of memory fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/chrome/kineto.h"
#include "util/bytes.h"

/* ---------------------------------------------------------------------------------------- */
/* Small helpers */

static bool span_starts(struct json_span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len >= n && memcmp(s.s, lit, n) == 0;
}

static bool span_contains_ci(struct json_span s, const char *lit)
{
	size_t n = strlen(lit);
	for (size_t i = 0; i + n <= s.len; i++) {
		size_t k = 0;
		while (k < n && (s.s[i + k] | 0x20) == lit[k])
			k++;
		if (k == n)
			return true;
	}
	return false;
}

static uint32_t intern_span(struct kimport *K, struct json_span s)
{
	if (s.len == 0) /* also a missing member: s.s is NULL */
		return 0;
	uint64_t head = get_upto8le((const uint8_t *)s.s, s.len), tail = 0;
	uint64_t h = (head ^ s.len * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
	if (s.len > 8) { /* the tail too: names often share their first 8 bytes */
		tail = get_u64le((const uint8_t *)s.s + s.len - 8);
		h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
	}
	struct kcache_entry *e = &K->cache[(h >> 40) & (KCACHE_SIZE - 1)];
	/* keys and categories are short: head and tail compare them whole, without memcmp */
	if (e->len == s.len && e->head == head && e->tail == tail && e->id &&
	    (s.len <= 16 || memcmp(model_str(K->m, e->id) + 8, s.s + 8, s.len - 16) == 0))
		return e->id;
	uint32_t id = model_intern(K->m, s.s, s.len);
	*e = (struct kcache_entry){ (uint32_t)s.len, id, head, tail };
	return id;
}

/* A pid/tid as a map key: numbers (and strings of digits, which 2021 traces write for tids)
 * as themselves; other strings as their string id with the top bit set. */
static uint64_t kid_key(struct kimport *K, const struct kid *id, uint32_t *str_id)
{
	*str_id = UINT32_MAX; /* "not a string" (the empty string has id 0) */
	if (!id->present)
		return 0;
	if (!id->is_str)
		return (uint64_t)id->num;
	if (id->s.len > 0 && id->s.len <= 18) {
		uint64_t v = 0;
		size_t i = 0;
		while (i < id->s.len && id->s.s[i] >= '0' && id->s.s[i] <= '9')
			v = v * 10 + (uint64_t)(id->s.s[i++] - '0');
		if (i == id->s.len)
			return v;
	}
	*str_id = intern_span(K, id->s);
	return (1ull << 63) | *str_id;
}

static uint64_t track_key_hash(uint64_t pid, uint64_t tid, uint32_t kind)
{
	return hash_u64(hash_u64(pid ^ (uint64_t)kind << 56) ^ tid);
}

struct track_probe {
	const struct kimport *K;
	uint64_t pid, tid;
	uint32_t kind;
};

/* hindex_eq_fn: is track_keys[i] the probe's (pid, tid, kind)? */
static bool track_key_eq(const void *ctx, uint32_t i)
{
	const struct track_probe *p = ctx;
	const struct ktrack_key *k = &p->K->track_keys[i];
	return k->pid == p->pid && k->tid == p->tid && k->kind == p->kind;
}

/* hindex_hash_fn: the hash of track_keys[i], for growing the index. */
static uint64_t track_key_hash_at(const void *ctx, uint32_t i)
{
	const struct kimport *K = ctx;
	const struct ktrack_key *k = &K->track_keys[i];
	return track_key_hash(k->pid, k->tid, k->kind);
}

/* The existing track for (pid, tid, kind), or MODEL_NO_TRACK. */
static uint32_t track_lookup(struct kimport *K, uint64_t pid, uint64_t tid, uint32_t kind)
{
	struct track_probe p = { K, pid, tid, kind };
	uint32_t i = hindex_find(&K->track_index, track_key_hash(pid, tid, kind), track_key_eq, &p);
	return i == HINDEX_NONE ? MODEL_NO_TRACK : K->track_keys[i].track;
}

/* The track of an event, made on first use. */
static uint32_t track_get(struct kimport *K, const struct kev *ev, uint32_t kind)
{
	uint32_t pid_sid, tid_sid;
	uint64_t pid = kid_key(K, &ev->pid, &pid_sid);
	uint64_t tid = kid_key(K, &ev->tid, &tid_sid);
	uint32_t known = track_lookup(K, pid, tid, kind);
	if (known != MODEL_NO_TRACK)
		return known;
	if (!hindex_reserve(&K->track_index, track_key_hash_at, K) ||
	    !grow_array32((void **)&K->track_keys, sizeof(*K->track_keys), &K->track_keys_cap,
			  (uint64_t)K->ntrack_keys + 1))
		return MODEL_NO_TRACK;
	/* string pids get a made-up process id with the string as its name */
	bool pid_str = pid_sid != UINT32_MAX, tid_str = tid_sid != UINT32_MAX;
	uint32_t mpid = pid_str ? 0xf0000000u | (pid_sid & 0x0fffffffu) : (uint32_t)pid;
	uint64_t mtid = tid_str ? tid_sid : tid;
	/* a device queue: Kineto writes the device as the pid and the stream as the tid (its
	 * process, the one that launched the work, is known at the end: fill_processes) */
	uint32_t t = kind == MODEL_TRACK_DEVICE
			     ? model_add_device_track(K->m, mpid, mtid, MODEL_NO_PROCESS,
						      tid_str ? tid_sid : 0)
			     : model_add_track(K->m, kind, mpid, mtid, tid_str ? tid_sid : 0);
	if (t == MODEL_NO_TRACK)
		return t;
	K->m->tracks[t].file_track = t - K->first_track;
	if (pid_str && pid_sid) {
		model_set_meta(K->m, mpid, model_intern(K->m, "name", 4), pid_sid);
		if (K->m->tracks[t].process != MODEL_NO_PROCESS)
			K->m->processes[K->m->tracks[t].process].name = pid_sid;
	}
	K->track_keys[K->ntrack_keys] = (struct ktrack_key){ pid, tid, kind, t };
	hindex_insert(&K->track_index, track_key_hash(pid, tid, kind), K->ntrack_keys++);
	return t;
}

/* Note the kind our export gave the track (pid, tid): an entry of the track index of kind
 * KTRACK_HINT whose "track" is that kind. False when out of memory. */
static bool hint_set(struct kimport *K, uint64_t pid, uint64_t tid, uint32_t kind)
{
	struct track_probe p = { K, pid, tid, KTRACK_HINT };
	uint32_t i = hindex_find(&K->track_index, track_key_hash(pid, tid, KTRACK_HINT),
				 track_key_eq, &p);
	if (i != HINDEX_NONE) {
		K->track_keys[i].track = kind;
		return true;
	}
	if (!hindex_reserve(&K->track_index, track_key_hash_at, K) ||
	    !grow_array32((void **)&K->track_keys, sizeof(*K->track_keys), &K->track_keys_cap,
			  (uint64_t)K->ntrack_keys + 1))
		return false;
	K->track_keys[K->ntrack_keys] = (struct ktrack_key){ pid, tid, KTRACK_HINT, kind };
	hindex_insert(&K->track_index, track_key_hash(pid, tid, KTRACK_HINT), K->ntrack_keys++);
	return true;
}

/* The kind of the track of an event of our own export: as its thread_name said, else a
 * host thread. */
static uint32_t hint_kind(struct kimport *K, const struct kev *ev)
{
	uint32_t ps, ts;
	uint64_t pid = kid_key(K, &ev->pid, &ps), tid = kid_key(K, &ev->tid, &ts);
	uint32_t kind = track_lookup(K, pid, tid, KTRACK_HINT);
	return kind == MODEL_NO_TRACK ? MODEL_TRACK_THREAD : kind;
}

/* A thread_name of our own export: {"name": ..., "opscope_track": "thread" | "device"}.
 * The first one switches the import to reading our export back (K->opscope_export). */
static bool track_hint(struct kimport *K, const struct kev *ev)
{
	for (uint32_t i = 0; i < ev->nargs; i++) {
		const struct karg *a = &ev->args[i];
		if (a->type != MODEL_ARG_STR || !span_is(a->key, "opscope_track"))
			continue;
		if (!K->opscope_export) {
			K->opscope_export = true;
			/* classify's memo was filled by the other rules: start it again */
			hmap_free(&K->classes);
			K->classes = (struct hmap){ 0 };
		}
		uint32_t ps, ts;
		return hint_set(K, kid_key(K, &ev->pid, &ps), kid_key(K, &ev->tid, &ts),
				span_is(a->s, "device") ? MODEL_TRACK_DEVICE : MODEL_TRACK_THREAD);
	}
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Categories */

/* Paddle writes a duration into every name: "matmul[1.234 ms]", "ProfileStep#3[870.251 us]".
 * Without it the calls of one operator share their name again. Only for Paddle's types:
 * Kineto's names are left as they are. */
static struct json_span paddle_name(struct json_span cat, struct json_span name)
{
	if (name.len < 7 || name.s[name.len - 1] != ']' || name.s[name.len - 4] != ' ' ||
	    (name.s[name.len - 3] != 'm' && name.s[name.len - 3] != 'u') ||
	    name.s[name.len - 2] != 's')
		return name;
	size_t i = name.len - 4, digits = 0;
	while (i > 0 && ((name.s[i - 1] >= '0' && name.s[i - 1] <= '9') || name.s[i - 1] == '.')) {
		digits += name.s[i - 1] != '.';
		i--;
	}
	if (i < 2 || name.s[i - 1] != '[' || !digits)
		return name; /* "[1.2 ms]" alone stays a name */
	int c = -1;
	for (int k = 0; k < OPSCOPE_CAT_COUNT_ && c < 0; k++)
		if (span_is(cat, opscope_category_name(k)))
			c = k;
	if (c < 0 && !span_is(cat, "DygraphKernelLaunch") && !span_is(cat, "StaticKernelLaunch") &&
	    !span_is(cat, "MluRuntime"))
		return name;
	name.len = i - 1;
	return name;
}

/* Our category whose name is exactly `cat` ("ProfileStep", "Kernel", ...), or -1. These are
 * also the names Paddle's profiler writes (TracerEventType), and our export's "cat". */
static int category_named(struct json_span cat)
{
	if (!cat.len)
		return -1;
	for (int i = 0; i < OPSCOPE_CAT_COUNT_; i++) {
		const char *n = opscope_category_name(i);
		if (n[0] == cat.s[0] && span_is(cat, n))
			return i;
	}
	return -1;
}

/* Our category for a Kineto category and event name, and whether it runs on a device. Read
 * back from our own export (opscope), the category is the one named, nothing else. */
static uint8_t classify(struct json_span cat, struct json_span name, bool opscope, bool *device)
{
	*device = false;
	int named = category_named(cat);
	if (opscope)
		return named >= 0 ? (uint8_t)named : OPSCOPE_CAT_USER_DEFINED;
	uint8_t c = OPSCOPE_CAT_USER_DEFINED;
	if (span_is(cat, "mtia_ccp_events") && span_is(name, "dma_request")) {
		*device = true; /* MTIA's DMA transfers are copies */
		return OPSCOPE_CAT_MEMCPY;
	}
	if (span_is(cat, "kernel") || span_is(cat, "Kernel") || span_is(cat, "mtia_ccp_events")) {
		*device = true;
		return span_contains_ci(name, "nccl") || span_contains_ci(name, "xccl")
			       ? OPSCOPE_CAT_COMMUNICATION
			       : OPSCOPE_CAT_KERNEL;
	}
	if (span_is(cat, "gpu_memcpy") || span_is(cat, "Memcpy")) {
		*device = true;
		return OPSCOPE_CAT_MEMCPY;
	}
	if (span_is(cat, "gpu_memset") || span_is(cat, "Memset")) {
		*device = true;
		return OPSCOPE_CAT_MEMSET;
	}
	if (span_is(cat, "gpu_user_annotation") || span_is(cat, "cuda_profiler_range") ||
	    span_is(cat, "cuda_sync")) {
		*device = true;
		return OPSCOPE_CAT_USER_DEFINED;
	}
	if (span_is(cat, "cuda_runtime") || span_is(cat, "Runtime") ||
	    span_is(cat, "cuda_driver") || span_is(cat, "mtia_runtime") ||
	    span_is(cat, "MluRuntime"))
		return OPSCOPE_CAT_CUDA_RUNTIME;
	/* Paddle's host types, named as ours (Operator goes on: torch 1.8 wrote it too, with
	 * its phases marked by name); the kernel-launch spans of its newer versions are the
	 * inside of an operator */
	if (named >= 0 && named != OPSCOPE_CAT_OPERATOR)
		return (uint8_t)named;
	if (span_is(cat, "DygraphKernelLaunch") || span_is(cat, "StaticKernelLaunch"))
		return OPSCOPE_CAT_OPERATOR_INNER;
	if (span_is(cat, "cpu_op") || span_is(cat, "Operator"))
		c = OPSCOPE_CAT_OPERATOR;
	else if (span_is(cat, "user_annotation"))
		c = OPSCOPE_CAT_PYTHON_USER_DEFINED;
	else if (span_is(cat, "python_function"))
		c = OPSCOPE_CAT_PYTHON_FUNCTION;
	/* phases that torch marks by name */
	if (span_starts(name, "ProfilerStep#"))
		return OPSCOPE_CAT_PROFILE_STEP;
	if (span_starts(name, "enumerate(DataLoader)"))
		return OPSCOPE_CAT_DATALOADER;
	if (span_starts(name, "Optimizer.step#") || span_starts(name, "Optimizer.zero_grad#"))
		return OPSCOPE_CAT_OPTIMIZATION;
	if (span_starts(name, "autograd::engine::evaluate_function:"))
		return OPSCOPE_CAT_BACKWARD;
	if (c == OPSCOPE_CAT_OPERATOR && span_starts(name, "nccl:"))
		return OPSCOPE_CAT_COMMUNICATION;
	return c;
}

/* classify() for interned (category, name): it depends on nothing else, and an event's pair
 * is nearly always one seen before (its kernel name is long: the scan for "nccl" adds up).
 * The memo's value: the category, and bit 8 for "runs on a device". */
static uint8_t classify_ids(struct kimport *K, uint32_t cat_id, uint32_t name_id,
			    struct json_span cat, struct json_span name, bool *device)
{
	uint64_t key = (uint64_t)cat_id << 32 | name_id;
	const uint64_t *memo = hmap_find(&K->classes, key);
	if (memo) {
		*device = *memo >> 8 & 1;
		return (uint8_t)*memo;
	}
	uint8_t category = classify(cat, name, K->opscope_export, device);
	(void)hmap_put(&K->classes, key, category | (uint64_t)*device << 8); /* OOM: no memo */
	return category;
}

/* ---------------------------------------------------------------------------------------- */
/* Committing one event to the model */

/* Add the parsed args to the model (those it keeps: model.keep_arg_keys); *first and *n
 * say where they are, *corr the value of the first "correlation" argument when it is an
 * integer (kept or not), else 0. */
static bool commit_args(struct kimport *K, const struct kev *ev, uint64_t *first, uint32_t *n,
			uint64_t *corr, uint8_t *flags)
{
	struct model *m = K->m;
	bool corr_seen = false;
	*first = m->nargs;
	*n = 0;
	*corr = 0;
	for (uint32_t i = 0; i < ev->nargs; i++) {
		const struct karg *a = &ev->args[i];
		/* our export writes a range's flags as arguments: flags again */
		if (K->opscope_export && flags && a->key.len > 8 &&
		    memcmp(a->key.s, "opscope_", 8) == 0) {
			if (span_is(a->key, "opscope_unclosed")) {
				*flags |= MODEL_RANGEF_UNCLOSED;
				continue;
			}
			if (span_is(a->key, "opscope_closed_by_outer_end")) {
				*flags |= MODEL_RANGEF_MISMATCH;
				continue;
			}
		}
		/* the length first: one compare for nearly every other key */
		/* Paddle writes "correlation id" */
		if (!corr_seen && (a->key.len == 11 || a->key.len == 14) &&
		    memcmp(a->key.s, "correlation", 11) == 0 &&
		    (a->key.len == 11 || memcmp(a->key.s + 11, " id", 3) == 0)) {
			corr_seen = true;
			*corr = a->type == MODEL_ARG_I64 ? (uint64_t)a->i : 0;
		}
		if (m->keep_arg_keys && !keep_arg(m->keep_arg_keys, a->key))
			continue;
		uint64_t bits;
		switch (a->type) {
		case MODEL_ARG_I64:
			bits = (uint64_t)a->i;
			break;
		case MODEL_ARG_F64:
			memcpy(&bits, &a->d, sizeof(bits));
			break;
		default:
			bits = intern_span(K, a->s);
		}
		if (model_add_arg(m, intern_span(K, a->key), a->type, bits) == MODEL_NONE)
			return false;
		(*n)++;
	}
	return true;
}

static bool add_name(struct kimport *K, const struct kev *ev, uint32_t key)
{
	/* the value is args.name (thread_name, process_name) or args.labels */
	for (uint32_t i = 0; i < ev->nargs; i++) {
		const struct karg *a = &ev->args[i];
		if (a->type != MODEL_ARG_STR ||
		    !(span_is(a->key, "name") || span_is(a->key, "labels")))
			continue;
		if (!grow_array((void **)&K->names, sizeof(*K->names), &K->names_cap,
				K->nnames + 1))
			return false;
		uint32_t ps, ts;
		struct kname *n = &K->names[K->nnames++];
		n->pid = kid_key(K, &ev->pid, &ps);
		n->tid = kid_key(K, &ev->tid, &ts);
		n->key = key;
		n->value = intern_span(K, a->s);
		return true;
	}
	return true;
}

static uint64_t flow_hash(uint64_t id, uint32_t cat)
{
	return hash_u64(id ^ (uint64_t)cat << 40);
}

struct flow_probe {
	const struct kimport *K;
	uint64_t id;
	uint32_t cat;
};

/* hindex_eq_fn: is flows[i] the probe's (category, id)? */
static bool flow_eq(const void *ctx, uint32_t i)
{
	const struct flow_probe *p = ctx;
	return p->K->flows[i].id == p->id && p->K->flows[i].cat == p->cat;
}

/* hindex_hash_fn: the hash of flows[i], for growing and removal. */
static uint64_t flow_hash_at(const void *ctx, uint32_t i)
{
	const struct kimport *K = ctx;
	return flow_hash(K->flows[i].id, K->flows[i].cat);
}

/* One end of a flow: pairs with the other end of the same (category, id) still waiting. */
static bool add_flow_end(struct kimport *K, const struct kev *ev, char phase)
{
	uint32_t ps, ts, is;
	uint32_t cat = intern_span(K, ev->cat);
	uint64_t id =
		ev->id.is_str ? (1ull << 63) | kid_key(K, &ev->id, &is) : (uint64_t)ev->id.num;
	bool from = phase == 's';
	uint64_t h = flow_hash(id, cat);
	struct flow_probe p = { K, id, cat };
	uint32_t open = hindex_find(&K->open_flows, h, flow_eq, &p);
	struct kflow *f = open != HINDEX_NONE ? &K->flows[open] : NULL;
	if (f && (from ? f->has_from : f->has_to)) {
		/* that end is taken: the id was reused, a new flow starts, the old one stays
		 * with one end (dropped at the end, as unpaired) */
		hindex_remove(&K->open_flows, h, open, flow_hash_at, K);
		f = NULL;
	}
	if (!f) {
		/* the index holds 32-bit entries: past 4 G flows, the import stops as if out
		 * of memory */
		if (K->nflows >= UINT32_MAX - 1 ||
		    !hindex_reserve(&K->open_flows, flow_hash_at, K) ||
		    !grow_array((void **)&K->flows, sizeof(*K->flows), &K->flows_cap,
				K->nflows + 1))
			return false;
		open = (uint32_t)K->nflows++;
		f = &K->flows[open];
		memset(f, 0, sizeof(*f));
		f->id = id;
		f->cat = cat;
		hindex_insert(&K->open_flows, h, open);
	}
	if (from) {
		f->has_from = true;
		f->from_pid = kid_key(K, &ev->pid, &ps);
		f->from_tid = kid_key(K, &ev->tid, &ts);
		f->from_ts = ev->ts;
	} else {
		f->has_to = true;
		f->to_pid = kid_key(K, &ev->pid, &ps);
		f->to_tid = kid_key(K, &ev->tid, &ts);
		f->to_ts = ev->ts;
	}
	if (f->has_from && f->has_to)
		hindex_remove(&K->open_flows, h, open, flow_hash_at, K);
	return true;
}

/* An async range of our own export: 'b' opens it on the async track of its process, the 'e'
 * of the same id closes it (our export gives each range its own id). False when out of
 * memory. */
static bool async_event(struct kimport *K, const struct kev *ev, char ph)
{
	struct model *m = K->m;
	if (ph == 'e') {
		for (uint64_t i = K->naopen; i-- > 0;) {
			struct kopen_async *o = &K->aopen[i];
			if (o->id != (uint64_t)ev->id.num)
				continue;
			struct model_ranges *r = &m->tracks[o->track].ranges;
			r->dur_ns[o->range] =
				ev->ts > r->start_ns[o->range] ? ev->ts - r->start_ns[o->range] : 0;
			*o = K->aopen[--K->naopen];
			return true;
		}
		K->unmatched_ends++;
		return true;
	}
	bool device;
	uint8_t cat = classify(ev->cat, ev->name, true, &device);
	uint32_t t = track_get(K, ev, MODEL_TRACK_ASYNC);
	if (t == MODEL_NO_TRACK)
		return false;
	if (!m->tracks[t].name)
		m->tracks[t].name =
			model_intern(m, "async", 5); /* as the .opscope loader names it */
	uint64_t first, corr;
	uint32_t n;
	uint8_t flags = 0;
	uint64_t r = model_add_range(m, t, ev->ts, 0, intern_span(K, ev->name), cat, 0);
	if (r == MODEL_NONE || !commit_args(K, ev, &first, &n, &corr, &flags) ||
	    !grow_array((void **)&K->aopen, sizeof(*K->aopen), &K->aopen_cap, K->naopen + 1))
		return false;
	m->tracks[t].ranges.flags[r] |= flags;
	m->tracks[t].ranges.first_arg[r] = first;
	m->tracks[t].ranges.nargs[r] = n;
	m->tracks[t].events++;
	K->aopen[K->naopen++] = (struct kopen_async){ (uint64_t)ev->id.num, t, r };
	return true;
}

/* 0, or -1 when out of memory. Events the model has no place for are counted as skipped. */
static int commit_event(struct kimport *K, const struct kev *ev)
{
	struct model *m = K->m;
	K->events++;
	char ph = ev->ph.len ? ev->ph.s[0] : 0;
	bool device;
	uint8_t cat;
	uint64_t first;
	uint32_t n;
	switch (ph) {
	case 'X':
	case 'B': {
		if (!ev->has_ts) {
			K->skipped++;
			return 0;
		}
		struct json_span nm = K->opscope_export ? ev->name : paddle_name(ev->cat, ev->name);
		uint32_t name = intern_span(K, nm);
		cat = classify_ids(K, intern_span(K, ev->cat), name, ev->cat, nm, &device);
		uint32_t kind = K->opscope_export ? hint_kind(K, ev)
				: device	  ? MODEL_TRACK_DEVICE
						  : MODEL_TRACK_THREAD;
		uint32_t t = track_get(K, ev, kind);
		if (t == MODEL_NO_TRACK)
			return -1;
		int64_t dur = ph == 'X' && ev->has_dur ? ev->dur : 0;
		if (dur < 0)
			dur = 0;
		uint8_t flags = 0;
		uint64_t r = model_add_range(m, t, ev->ts, dur, name, cat, 0), corr;
		if (r == MODEL_NONE || !commit_args(K, ev, &first, &n, &corr, &flags) ||
		    (corr && !model_set_correlation(m, t, r, corr)))
			return -1;
		m->tracks[t].ranges.flags[r] |= flags;
		m->tracks[t].ranges.first_arg[r] = first;
		m->tracks[t].ranges.nargs[r] = n;
		m->tracks[t].events++;
		if (ph == 'B') {
			if (!grow_array((void **)&K->open, sizeof(*K->open), &K->open_cap,
					K->nopen + 1))
				return -1;
			K->open[K->nopen++] = (struct kopen){ t, r };
		}
		return 0;
	}
	case 'E': {
		/* closes the innermost open B of its track */
		uint32_t ps, ts;
		uint64_t pid = kid_key(K, &ev->pid, &ps), tid = kid_key(K, &ev->tid, &ts);
		for (uint64_t i = K->nopen; i-- > 0;) {
			uint32_t t = K->open[i].track;
			if (track_lookup(K, pid, tid, m->tracks[t].kind) != t)
				continue;
			struct model_ranges *r = &m->tracks[t].ranges;
			uint64_t ri = K->open[i].range;
			r->dur_ns[ri] = ev->ts > r->start_ns[ri] ? ev->ts - r->start_ns[ri] : 0;
			memmove(&K->open[i], &K->open[i + 1],
				(K->nopen - i - 1) * sizeof(*K->open));
			K->nopen--;
			return 0;
		}
		K->unmatched_ends++;
		return 0;
	}
	case 'i':
	case 'I': {
		if (!ev->has_ts) {
			K->skipped++;
			return 0;
		}
		cat = span_is(ev->name, "[memory]") && !K->opscope_export
			      ? OPSCOPE_CAT_MEMORY
			      : classify(ev->cat, ev->name, K->opscope_export, &device);
		uint32_t t =
			track_get(K, ev, K->opscope_export ? hint_kind(K, ev) : MODEL_TRACK_THREAD);
		if (t == MODEL_NO_TRACK)
			return -1;
		uint64_t i = model_add_instant(m, t, ev->ts, intern_span(K, ev->name), cat), corr;
		if (i == MODEL_NONE || !commit_args(K, ev, &first, &n, &corr, NULL))
			return -1;
		m->tracks[t].instants.first_arg[i] = first;
		m->tracks[t].instants.nargs[i] = n;
		m->tracks[t].events++;
		return 0;
	}
	case 'C': {
		if (!ev->has_ts) {
			K->skipped++;
			return 0;
		}
		uint32_t t = track_get(K, ev, MODEL_TRACK_THREAD);
		if (t == MODEL_NO_TRACK)
			return -1;
		for (uint32_t i = 0; i < ev->nargs; i++) {
			const struct karg *a = &ev->args[i];
			if (a->type != MODEL_ARG_I64 && a->type != MODEL_ARG_F64)
				continue;
			double v = a->type == MODEL_ARG_I64 ? (double)a->i : a->d;
			/* one series per argument: "name" alone when it is the only one */
			uint32_t name;
			if (ev->nargs == 1) {
				name = intern_span(K, ev->name);
			} else {
				char buf[512];
				int len = snprintf(buf, sizeof(buf), "%.*s.%.*s", (int)ev->name.len,
						   ev->name.s, (int)a->key.len, a->key.s);
				name = model_intern(m, buf,
						    len < (int)sizeof(buf) ? (size_t)len
									   : sizeof(buf) - 1);
			}
			if (model_add_counter(m, t, ev->ts, name, v) == MODEL_NONE)
				return -1;
			m->tracks[t].events++;
		}
		return 0;
	}
	case 'M':
		if (span_is(ev->name, "thread_name"))
			return add_name(K, ev, 0) && track_hint(K, ev) ? 0 : -1;
		if (span_is(ev->name, "process_name"))
			return add_name(K, ev, model_intern(m, "name", 4)) ? 0 : -1;
		if (span_is(ev->name, "process_labels"))
			return add_name(K, ev, model_intern(m, "labels", 6)) ? 0 : -1;
		return 0; /* sort indexes: order is the viewer's business */
	case 'b':
	case 'e':
		if (!K->opscope_export || !ev->has_ts || !ev->id.present || ev->id.is_str) {
			K->skipped++; /* others' async events: not read (docs/import-kineto.md) */
			return 0;
		}
		return async_event(K, ev, ph) ? 0 : -1;
	case 's':
	case 'f':
		if (!ev->has_ts || !ev->id.present) {
			K->skipped++;
			return 0;
		}
		return add_flow_end(K, ev, ph) ? 0 : -1;
	default:
		K->skipped++; /* async (b/e/n), samples (P), objects (O/N/D), flow steps (t) */
		return 0;
	}
}

bool kbatch_commit(struct kimport *K, struct kbatch *b)
{
	for (uint32_t i = 0; i < b->nevs; i++) {
		struct kev *ev = &b->evs[i];
		/* a batch without arguments has no array: no pointer arithmetic on NULL */
		ev->args = ev->nargs ? b->args + ev->first_arg : NULL;
		if (commit_event(K, ev) != 0)
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Finishing */

static void shift_times(struct kimport *K, int64_t by)
{
	struct model *m = K->m;
	for (uint32_t ti = K->first_track; ti < m->ntracks; ti++) {
		struct model_track *t = &m->tracks[ti];
		for (uint64_t j = 0; j < t->nranges; j++)
			t->ranges.start_ns[j] += by;
		for (uint64_t j = 0; j < t->ninstants; j++)
			t->instants.ts_ns[j] += by;
		for (uint64_t j = 0; j < t->ncounters; j++)
			t->counters.ts_ns[j] += by;
	}
	for (uint64_t i = 0; i < K->nflows; i++) {
		K->flows[i].from_ts += by;
		K->flows[i].to_ts += by;
	}
}

/* The track a flow end is on: flow starts are on host threads, ends mostly on device queues
 * (Kineto's launch flows); either kind is taken when the preferred one does not exist. */
static uint32_t flow_track(struct kimport *K, uint64_t pid, uint64_t tid, bool start)
{
	uint32_t first = start ? MODEL_TRACK_THREAD : MODEL_TRACK_DEVICE;
	uint32_t t = track_lookup(K, pid, tid, first);
	if (t == MODEL_NO_TRACK)
		t = track_lookup(K, pid, tid, start ? MODEL_TRACK_DEVICE : MODEL_TRACK_THREAD);
	return t;
}

/* Add the flows to the model, their ends on the tracks now complete. */
static void build_flows(struct kimport *K)
{
	for (uint64_t i = 0; i < K->nflows; i++) {
		const struct kflow *f = &K->flows[i];
		uint32_t from = f->has_from ? flow_track(K, f->from_pid, f->from_tid, true)
					    : MODEL_NO_TRACK;
		uint32_t to =
			f->has_to ? flow_track(K, f->to_pid, f->to_tid, false) : MODEL_NO_TRACK;
		model_add_flow(K->m, f->id & ~(1ull << 63), from, f->from_ts, to, f->to_ts);
	}
}

static void apply_names(struct kimport *K)
{
	struct model *m = K->m;
	uint32_t name_key = model_find_str(m, "name");
	for (uint64_t i = 0; i < K->nnames; i++) {
		const struct kname *n = &K->names[i];
		if (n->key) { /* process name or labels; string pids are named by their string */
			if ((n->pid >> 63) == 0 && n->pid < 0xf0000000u) {
				model_set_meta(m, (uint32_t)n->pid, n->key, n->value);
				/* the name of a process of the trace (not of a device's pid) */
				uint32_t p = model_find_process(m, K->fi, (uint32_t)n->pid);
				if (p != MODEL_NO_PROCESS && n->key == name_key)
					m->processes[p].name = n->value;
			}
			continue;
		}
		for (uint32_t kind = 0; kind <= MODEL_TRACK_DEVICE; kind++) {
			uint32_t t = track_lookup(K, n->pid, n->tid, kind);
			if (t != MODEL_NO_TRACK)
				m->tracks[t].name = n->value;
		}
	}
}

/* The process the file is about: the host pid with the most ranges. */
static uint32_t main_pid(struct kimport *K)
{
	struct model *m = K->m;
	uint32_t best = 0;
	uint64_t most = 0;
	for (uint32_t ti = K->first_track; ti < m->ntracks; ti++) {
		struct model_track *t = &m->tracks[ti];
		if (t->kind != MODEL_TRACK_THREAD || t->pid >= 0xf0000000u)
			continue;
		uint64_t n = 0;
		for (uint32_t tj = K->first_track; tj < m->ntracks; tj++)
			if (m->tracks[tj].kind == MODEL_TRACK_THREAD && m->tracks[tj].pid == t->pid)
				n += m->tracks[tj].nranges;
		if (n > most || best == 0) {
			most = n;
			best = t->pid;
		}
	}
	return best;
}

/* A top-level metadata value (as parsed: a string's text, else canonical JSON), or NULL. */
static const struct kmeta *kmeta_get(const struct kimport *K, const char *key)
{
	size_t n = strlen(key);
	for (uint32_t i = K->nmeta; i-- > 0;) /* the last one wins, as in model_set_meta */
		if (K->meta[i].key_len == n && memcmp(K->meta[i].key, key, n) == 0)
			return &K->meta[i];
	return NULL;
}

/* The process table's fields from the trace as a whole: the host it ran on (top-level
 * "host_name" or "hostname", for every process of the file), the rank of its main process
 * (distributedInfo.rank), and the main process for device tracks (it launched their work). */
static void fill_processes(struct kimport *K, uint32_t main)
{
	struct model *m = K->m;
	uint32_t mp = model_process(m, K->fi, main);
	if (mp == MODEL_NO_PROCESS)
		return;
	const struct kmeta *rank = kmeta_get(K, "distributed.rank");
	if (rank && rank->value_len && rank->value_len <= 10) {
		int64_t r = 0;
		size_t i = 0;
		while (i < rank->value_len && rank->value[i] >= '0' && rank->value[i] <= '9')
			r = r * 10 + (rank->value[i++] - '0');
		if (i == rank->value_len && r <= INT32_MAX)
			m->processes[mp].rank = (int32_t)r;
	}
	const struct kmeta *host = kmeta_get(K, "trace.host_name");
	if (!host)
		host = kmeta_get(K, "trace.hostname");
	uint32_t host_id = host ? model_intern(m, host->value, host->value_len) : 0;
	for (uint32_t p = 0; p < m->nprocesses; p++)
		if (m->processes[p].file == K->fi && host_id)
			m->processes[p].host = host_id;
	for (uint32_t ti = K->first_track; ti < m->ntracks; ti++)
		if (m->tracks[ti].kind == MODEL_TRACK_DEVICE)
			m->tracks[ti].process = mp;
}

/* Our export read back: each process's metadata as it was written (otherData), and the
 * process table's fields from it, as the .opscope loader takes them (program, hostname,
 * rank). */
static void restore_processes(struct kimport *K)
{
	struct model *m = K->m;
	for (uint32_t i = 0; i < K->nmeta; i++) {
		const struct kmeta *e = &K->meta[i];
		if (e->pid < 0)
			continue;
		uint32_t pid = (uint32_t)e->pid;
		uint32_t value = model_intern(m, e->value, e->value_len);
		model_set_meta(m, pid, model_intern(m, e->key, e->key_len), value);
		uint32_t p = model_find_process(m, K->fi, pid);
		if (p == MODEL_NO_PROCESS)
			continue;
		struct json_span k = { e->key, e->key_len };
		if (span_is(k, "program")) {
			m->processes[p].name = value;
		} else if (span_is(k, "hostname") || span_is(k, "host")) {
			m->processes[p].host = value;
		} else if (span_is(k, "rank") && e->value_len && e->value_len <= 10) {
			int64_t r = 0;
			size_t j = 0;
			while (j < e->value_len && e->value[j] >= '0' && e->value[j] <= '9')
				r = r * 10 + (e->value[j++] - '0');
			if (j == e->value_len && r <= INT32_MAX)
				m->processes[p].rank = (int32_t)r;
		}
	}
}

void kfinish(struct kimport *K)
{
	struct model *m = K->m;
	struct model_file *f = &m->files[K->fi];
	/* B without E: closed at the last time of their track */
	for (uint64_t i = 0; i < K->nopen; i++) {
		struct model_track *t = &m->tracks[K->open[i].track];
		struct model_ranges *r = &t->ranges;
		int64_t last = r->start_ns[K->open[i].range];
		for (uint64_t j = 0; j < t->nranges; j++) {
			int64_t e = r->start_ns[j] + r->dur_ns[j];
			last = e > last ? e : last;
		}
		r->dur_ns[K->open[i].range] = last - r->start_ns[K->open[i].range];
		r->flags[K->open[i].range] |= MODEL_RANGEF_UNCLOSED;
	}
	/* async ranges without their 'e': the same */
	for (uint64_t i = 0; i < K->naopen; i++) {
		struct model_track *t = &m->tracks[K->aopen[i].track];
		struct model_ranges *r = &t->ranges;
		uint64_t ri = K->aopen[i].range;
		int64_t last = r->start_ns[ri];
		for (uint64_t j = 0; j < t->nranges; j++) {
			int64_t e = r->start_ns[j] + r->dur_ns[j];
			last = e > last ? e : last;
		}
		r->dur_ns[ri] = last - r->start_ns[ri];
		r->flags[ri] |= MODEL_RANGEF_UNCLOSED;
	}
	if (K->base_ns)
		shift_times(K, K->base_ns);
	uint64_t overlaps =
		model_nest_tracks(m, K->first_track, model_threads_for(m, K->first_track));
	apply_names(K);
	build_flows(K);
	model_resolve_flows(m, K->first_flow);
	model_finish_tracks(m, K->first_track);
	uint32_t pid = main_pid(K);
	f->pid = pid;
	for (uint32_t i = 0; i < K->nmeta; i++)
		if (K->meta[i].pid < 0)
			model_set_meta(m, pid, model_intern(m, K->meta[i].key, K->meta[i].key_len),
				       model_intern(m, K->meta[i].value, K->meta[i].value_len));
	fill_processes(K, pid);
	if (K->opscope_export)
		restore_processes(K);
	f->complete = true;
	f->events = K->events;
	f->records = K->events;
	f->skipped_records = K->skipped;
	f->unmatched_ends = K->unmatched_ends;
	f->mismatched_ends = overlaps;
	f->valid_end = K->in.base + K->in.len;
	f->file_bytes = K->in.file_bytes;
	m->events_total += K->events;
	m->complete = (m->nfiles == 1 || m->complete) && f->complete;
}
