/*
 * kineto.c: importer of Chrome trace-event JSON, as PyTorch's profiler (Kineto) writes it and
 * as chrome://tracing / Perfetto read it, into the event model.
 *
 * The text is streamed (json.h): events are parsed in batches, then committed to the model, so
 * memory is the model plus a few windows of a few MB. What the model gets (docs/import-kineto.md
 * is the full contract):
 *   - X events become ranges; B/E pairs too. GPU events (kernel, gpu_memcpy, gpu_memset,
 *     gpu_user_annotation, ...) go to device tracks (pid = device, tid = stream), everything
 *     else to host thread tracks. Depths come from containment (model_nest_track).
 *   - Kineto categories map onto ours (cpu_op -> Operator, cuda_runtime -> CudaRuntime,
 *     kernel -> Kernel or Communication for NCCL kernels, ...), and a few names mark phases
 *     (ProfilerStep#N -> ProfileStep, enumerate(DataLoader)... -> Dataloader, ...).
 *   - every member of "args" is kept as a typed argument ("correlation" links a GPU event to
 *     the runtime call that launched it); arrays and objects as compact JSON text.
 *   - i/I instants, C counters, s/f flows (ac2g launches, fwdbwd), M names.
 *   - times: µs with up to 3 decimals, converted exactly to ns; "baseTimeNanoseconds"
 *     (written after the events) is added at the end.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "opscope/opscope.h"

#include "formats/chrome/chrome.h"
#include "formats/chrome/json.h"
#include "model/model.h"
#include "util/bytes.h"
#include "util/parallel.h"
#include "util/zeroed.h"

/* A pid, tid or id as written: a number or a string. */
struct kid {
	bool present;
	bool is_str;
	union { /* unions keep events and arguments small: each crosses to the committer's core */
		int64_t num;	    /* !is_str */
		struct json_span s; /* is_str */
	};
};

/* One argument of the event being parsed. */
struct karg {
	struct json_span key;
	uint8_t type; /* enum model_arg_type */
	union {
		int64_t i;	    /* MODEL_ARG_I64 */
		double d;	    /* MODEL_ARG_F64 */
		struct json_span s; /* MODEL_ARG_STR / MODEL_ARG_JSON */
	};
};

/* A parsed event. Its strings point into the text (a window, or the scratch of its batch). */
struct kev {
	struct json_span ph, name, cat, bp;
	struct kid pid, tid, id;
	int64_t ts, dur;
	bool has_ts, has_dur;
	uint32_t nargs;
	uint32_t first_arg;	 /* index of its first argument in its batch */
	const struct karg *args; /* set when it is committed */
};

/*
 * Parsed events on their way from a parser to the committer. A parser writes an event and
 * its arguments straight into its batch; their strings are not copied: they point into the
 * text they were parsed from (an input window, the mapped file, the caller's memory) or into
 * the batch's scratch (unescaped strings, canonical JSON). A batch handed over pins its
 * window: until the committer is done with it, the parser reads on into another window
 * (struct kwindow) instead of moving the text. Full batches wait in a queue, in the order of
 * the text, and go back to a pool once committed; the parser of windows keeps to KBATCHES of
 * them, which its KWINDOWS are counted for.
 */
#define KBATCHES      4
#define KBATCH_EVENTS 16384
#define KQUEUED_MAX   4 /* parsing in chunks: batches waiting for the committer, at most */
#define KSPEC_BATCHES 2 /* batches a chunk parsed on speculation may hold */
#define KWINDOWS      (KBATCHES + 2) /* one per batch in flight, the parser's, one free */

struct kbatch {
	struct kev *evs;
	uint32_t nevs, evs_cap;
	struct karg *args;
	uint32_t nargs, args_cap;
	struct json_scratch sc;
	const char *lo;		 /* its events' text starts at or after this */
	int window;		 /* the window its strings point into (file input), or -1 */
	struct kbatch *next;	 /* in the pool, the queue or a chunk's list */
	struct kbatch *all_next; /* every batch made, for freeing */
};

/* Where a parse puts its events: the batch it fills, and where the full ones go. */
struct ksink {
	struct kbatch *b;	     /* being filled (NULL after a failure) */
	struct kbatch *first, *last; /* a speculative chunk's parse: its full batches, in order */
	uint32_t nfull;		     /* how many */
	bool to_queue;		     /* parsing in order: full batches go to the queue at once */
	bool limited;		     /* the parser of windows: at most KBATCHES batches exist */
	bool wait_room;		     /* wait while KQUEUED_MAX batches are queued */
};

/* An input window: the buffer of a file input's text, and the batches still pointing into it. */
struct kwindow {
	char *buf;
	size_t cap;
	uint32_t pins;
};

struct kslot {
	uint64_t pid, tid; /* keys as normalised by kid_key */
	uint32_t kind;
	uint32_t track; /* MODEL_NO_TRACK = empty slot */
};

/* A flow whose ends wait for the tracks to be complete: paired by (category, id) as the
 * events come, resolved to tracks at the end. */
struct kflow {
	uint64_t id;
	uint32_t cat;
	bool has_from, has_to;
	uint64_t from_pid, from_tid, to_pid, to_tid;
	int64_t from_ts, to_ts;
};

/* (category, id) -> index in flows of a flow still missing an end; 0 = empty, else i + 1. */
struct kflow_slot {
	uint64_t id;
	uint32_t cat;
	uint64_t flow;
};

/* A memo of classify(): (category id << 32 | name id) -> result. */
struct kclass {
	uint64_t key;
	uint8_t category;
	bool device;
	bool used;
};

/* Recently interned strings (argument keys, names, categories): most events repeat the
 * previous ones, and a hit skips hashing the whole string. */
#define KCACHE_SIZE 512

struct kcache_entry {
	uint32_t len;
	uint32_t id;
	uint64_t head; /* first 8 bytes (zero-padded) */
	uint64_t tail; /* last 8 bytes when longer than 8: up to 16 bytes, these two are all */
};

/* A name waiting for its track (thread_name) or process (process_name / labels). */
struct kname {
	uint64_t pid, tid;
	uint32_t key;	/* 0 for a thread name, else the meta key */
	uint32_t value; /* string id */
};

/* A top-level metadata entry, copied out of the text by the parser. */
struct kmeta {
	char *key, *value;
	size_t key_len, value_len;
};

/* Open B events of a track. */
struct kopen {
	uint32_t track;
	uint64_t range;
};

struct kimport {
	struct model *m;
	struct json_in in;
	char *err;
	size_t errsize;
	uint32_t fi;
	uint32_t first_track;
	uint64_t first_flow;

	struct kslot *slots;
	uint32_t slots_cap, nslots;

	struct kflow *flows;
	uint64_t nflows, flows_cap;
	struct kflow_slot *open_flows;
	uint64_t open_flows_cap, nopen_flows;
	struct kcache_entry cache[KCACHE_SIZE];
	struct kclass *classes;
	uint64_t class_cap, nclass;
	struct kname *names;
	uint64_t nnames, names_cap;
	struct kopen *open;
	uint64_t nopen, open_cap;
	struct kmeta *meta; /* top-level metadata, applied to the main process at the end */
	uint32_t nmeta, meta_cap;

	/* the pipeline (threaded: parsers run in threads of their own, the committer in the
	 * caller's) */
	struct ksink seq;	     /* the parser of the whole input, one window after another */
	struct kbatch *pool;	     /* committed batches, to be filled again */
	struct kbatch *queue, *tail; /* full batches in text order, for the committer */
	struct kbatch *all;	     /* every batch made */
	uint32_t nbatches, nqueued;  /* made; in the queue */
	struct kwindow windows[KWINDOWS]; /* file input only */
	int window;			  /* the one K->in reads into, or -1 (memory input) */
	size_t window_size;		  /* of a new window */
	bool threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool parse_done;
	int parse_rc;
	atomic_bool commit_failed;
	struct kpar *par; /* parsing a text in one piece on several threads, or NULL */

	int64_t base_ns;
	bool events_seen;
	uint64_t events, skipped, unmatched_ends;
};

/* ---------------------------------------------------------------------------------------- */
/* Small helpers */

static bool grow_array(void **p, size_t size, uint64_t *cap, uint64_t need)
{
	if (need <= *cap)
		return true;
	uint64_t n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

static bool span_is(struct json_span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && memcmp(s.s, lit, n) == 0;
}

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

static uint64_t slot_hash(uint64_t pid, uint64_t tid, uint32_t kind)
{
	uint64_t h =
		pid * 0x9e3779b97f4a7c15ull ^ (tid + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= kind;
	h ^= h >> 31;
	return h * 0x94d049bb133111ebull;
}

static struct kslot *slot_find(struct kimport *K, uint64_t pid, uint64_t tid, uint32_t kind)
{
	if (!K->slots_cap)
		return NULL;
	uint32_t mask = K->slots_cap - 1;
	for (uint32_t i = (uint32_t)slot_hash(pid, tid, kind) & mask;; i = (i + 1) & mask) {
		struct kslot *s = &K->slots[i];
		if (s->track == MODEL_NO_TRACK)
			return s;
		if (s->pid == pid && s->tid == tid && s->kind == kind)
			return s;
	}
}

static bool slots_grow(struct kimport *K)
{
	uint32_t cap = K->slots_cap ? K->slots_cap * 2 : 64;
	struct kslot *old = K->slots;
	uint32_t oldcap = K->slots_cap;
	K->slots = malloc(cap * sizeof(*K->slots));
	if (!K->slots) {
		K->slots = old;
		return false;
	}
	for (uint32_t i = 0; i < cap; i++)
		K->slots[i].track = MODEL_NO_TRACK;
	K->slots_cap = cap;
	for (uint32_t i = 0; i < oldcap; i++)
		if (old[i].track != MODEL_NO_TRACK)
			*slot_find(K, old[i].pid, old[i].tid, old[i].kind) = old[i];
	free(old);
	return true;
}

/* The existing track for (pid, tid, kind), or MODEL_NO_TRACK. */
static uint32_t track_lookup(struct kimport *K, uint64_t pid, uint64_t tid, uint32_t kind)
{
	struct kslot *s = slot_find(K, pid, tid, kind);
	return s ? s->track : MODEL_NO_TRACK;
}

/* The track of an event, made on first use. */
static uint32_t track_get(struct kimport *K, const struct kev *ev, uint32_t kind)
{
	uint32_t pid_sid, tid_sid;
	uint64_t pid = kid_key(K, &ev->pid, &pid_sid);
	uint64_t tid = kid_key(K, &ev->tid, &tid_sid);
	struct kslot *s = slot_find(K, pid, tid, kind);
	if (s && s->track != MODEL_NO_TRACK)
		return s->track;
	if ((K->nslots + 1) * 2 > K->slots_cap) {
		if (!slots_grow(K))
			return MODEL_NO_TRACK;
		s = slot_find(K, pid, tid, kind);
	}
	/* string pids get a made-up process id with the string as its name */
	bool pid_str = pid_sid != UINT32_MAX, tid_str = tid_sid != UINT32_MAX;
	uint32_t mpid = pid_str ? 0xf0000000u | (pid_sid & 0x0fffffffu) : (uint32_t)pid;
	uint64_t mtid = tid_str ? tid_sid : tid;
	uint32_t t = model_add_track(K->m, kind, mpid, mtid, tid_str ? tid_sid : 0);
	if (t == MODEL_NO_TRACK)
		return t;
	K->m->tracks[t].file_track = t - K->first_track;
	if (pid_str && pid_sid)
		model_set_meta(K->m, mpid, model_intern(K->m, "name", 4), pid_sid);
	*s = (struct kslot){ pid, tid, kind, t };
	K->nslots++;
	return t;
}

/* ---------------------------------------------------------------------------------------- */
/* Categories */

/* Our category for a Kineto category and event name, and whether it runs on a device. */
static uint8_t classify(struct json_span cat, struct json_span name, bool *device)
{
	*device = false;
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
	    span_is(cat, "cuda_driver") || span_is(cat, "mtia_runtime"))
		return OPSCOPE_CAT_CUDA_RUNTIME;
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
 * is nearly always one seen before (its kernel name is long: the scan for "nccl" adds up). */
static uint8_t classify_ids(struct kimport *K, uint32_t cat_id, uint32_t name_id,
			    struct json_span cat, struct json_span name, bool *device)
{
	uint64_t key = (uint64_t)cat_id << 32 | name_id;
	if ((K->nclass + 1) * 2 > K->class_cap) {
		uint64_t cap = K->class_cap ? K->class_cap * 2 : 1024;
		struct kclass *nt = zeroed_table(cap, sizeof(*nt));
		if (!nt) { /* no memo: still right, only slower */
			return classify(cat, name, device);
		}
		for (uint64_t i = 0; i < K->class_cap; i++) {
			if (!K->classes[i].used)
				continue;
			uint64_t j = (K->classes[i].key * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
			while (nt[j].used)
				j = (j + 1) & (cap - 1);
			nt[j] = K->classes[i];
		}
		free(K->classes);
		K->classes = nt;
		K->class_cap = cap;
	}
	uint64_t mask = K->class_cap - 1;
	uint64_t j = (key * 0x9e3779b97f4a7c15ull >> 20) & mask;
	while (K->classes[j].used && K->classes[j].key != key)
		j = (j + 1) & mask;
	struct kclass *e = &K->classes[j];
	if (!e->used) {
		e->used = true;
		e->key = key;
		e->category = classify(cat, name, &e->device);
		K->nclass++;
	}
	*device = e->device;
	return e->category;
}

/* ---------------------------------------------------------------------------------------- */
/* Parsing one event */

static int parse_id(struct json_cur *c, struct kid *id)
{
	int rc = json_ws(c);
	if (rc)
		return rc;
	id->present = true;
	if (*c->p == '"') {
		id->is_str = true;
		return json_string(c, &id->s);
	}
	struct json_span num;
	bool is_int;
	if (*c->p != '-' && (*c->p < '0' || *c->p > '9')) {
		c->err = "expected a number or a string";
		c->errpos = c->p;
		return JSON_ERR;
	}
	if ((rc = json_number(c, &num, &is_int, &id->num)) != 0)
		return rc;
	id->is_str = false;
	if (!is_int) {
		/* 1.5 or 1e30 as a pid: keep the number's text as the id, like a string */
		id->is_str = true;
		id->s = num;
	}
	return JSON_OK;
}

static int parse_str(struct json_cur *c, struct json_span *out, const char *key_msg)
{
	int rc = json_ws(c);
	if (rc)
		return rc;
	if (*c->p != '"') {
		c->err = key_msg;
		c->errpos = c->p;
		return JSON_ERR;
	}
	return json_string(c, out);
}

static int parse_time(struct json_cur *c, int64_t *ns, const char *key_msg)
{
	int rc = json_ws(c);
	if (rc)
		return rc;
	if (json_us_fast(c, ns))
		return JSON_OK;
	const char *at = c->p;
	if (*c->p != '-' && (*c->p < '0' || *c->p > '9')) {
		c->err = key_msg;
		c->errpos = at;
		return JSON_ERR;
	}
	struct json_span num;
	bool is_int;
	int64_t iv;
	if ((rc = json_number(c, &num, &is_int, &iv)) != 0)
		return rc;
	if (!json_us_to_ns(num, ns)) {
		c->err = "time out of range";
		c->errpos = at;
		return JSON_ERR;
	}
	return JSON_OK;
}

/* Is `key` in the NULL-terminated list? */
static bool keep_arg(const char *const *keys, struct json_span key)
{
	for (; *keys; keys++) /* the first byte first: most keys differ there */
		if (key.len && key.s[0] == (*keys)[0] && span_is(key, *keys))
			return true;
	return false;
}

/* The arguments go to the batch's array after those of the events before; with `keep`, only
 * those whose key it lists (the others are validated, as json_value_text would, and
 * skipped). */
static int parse_args(struct kbatch *b, struct json_cur *c, struct kev *ev, const char *const *keep)
{
	int rc = json_expect(c, '{', "\"args\" must be an object");
	bool first = true;
	while (rc == JSON_OK) {
		uint64_t at = (uint64_t)b->nargs + ev->nargs;
		if (at == b->args_cap) {
			uint64_t cap = b->args_cap;
			if (at >= UINT32_MAX / 2 ||
			    !grow_array((void **)&b->args, sizeof(*b->args), &cap, at + 1))
				return json_fail(c, c->p, "out of memory");
			b->args_cap = (uint32_t)cap;
		}
		struct karg *a = &b->args[at];
		/* the key straight into its slot: a copy from the stack was a 16-byte load of
		 * two 8-byte stores, which stalls: a tenth of the parser's samples sat on it */
		if ((rc = json_member(c, &first, &a->key)) != JSON_OK)
			break;
		if (keep && !keep_arg(keep, a->key)) {
			rc = json_skip(c, 0);
			continue;
		}
		if ((rc = json_ws(c)) != 0)
			return rc;
		char ch = *c->p;
		if (ch == '"') {
			a->type = MODEL_ARG_STR;
			rc = json_string(c, &a->s);
		} else if (ch == '-' || (ch >= '0' && ch <= '9')) {
			struct json_span num;
			bool is_int;
			rc = json_number(c, &num, &is_int, &a->i);
			if (rc == JSON_OK && is_int) {
				a->type = MODEL_ARG_I64;
			} else if (rc == JSON_OK) {
				a->type = MODEL_ARG_F64;
				a->d = json_to_double(num);
			}
		} else {
			a->type = MODEL_ARG_JSON;
			rc = json_value_text(c, &a->s);
		}
		if (rc == JSON_OK)
			ev->nargs++;
	}
	return rc == JSON_END ? JSON_OK : rc;
}

/* Parse the event at the cursor into ev, a slot of batch b. With keep_args (model.keep_arg_keys),
 * the arguments of an event whose phase is known by then and takes them into the model
 * through commit_args (not M or C, which the importer reads itself) are cut to those keys
 * here already: most never cross to the committer. (An event that names its phase twice,
 * X before its args and M or C after, loses its name or counters so: no table reads them.) */
static int parse_event(struct kbatch *b, struct json_cur *c, struct kev *ev,
		       const char *const *keep_args)
{
	/* field by field: a memset of the whole struct costs more on this hot path; and one
	 * assignment each, as a chain reads each span back (a 16-byte load of two 8-byte
	 * stores, which stalls) */
	ev->ph = (struct json_span){ NULL, 0 };
	ev->name = (struct json_span){ NULL, 0 };
	ev->cat = (struct json_span){ NULL, 0 };
	ev->bp = (struct json_span){ NULL, 0 };
	ev->pid.present = ev->tid.present = ev->id.present = false;
	ev->has_ts = ev->has_dur = false;
	ev->ts = ev->dur = 0;
	ev->nargs = 0;
	ev->first_arg = b->nargs;
	ev->args = NULL;
	int rc = json_ws(c);
	if (rc)
		return rc;
	if (*c->p != '{') {
		c->err = "a trace event must be an object";
		c->errpos = c->p;
		return JSON_ERR;
	}
	c->p++;
	bool first = true;
	struct json_span key;
	while ((rc = json_member(c, &first, &key)) == JSON_OK) {
		switch (key.len) {
		case 2:
			if (key.s[0] == 'p' && key.s[1] == 'h')
				rc = parse_str(c, &ev->ph, "\"ph\" must be a string");
			else if (key.s[0] == 't' && key.s[1] == 's') {
				rc = parse_time(c, &ev->ts, "\"ts\" must be a number");
				ev->has_ts = true;
			} else if (key.s[0] == 'i' && key.s[1] == 'd')
				rc = parse_id(c, &ev->id);
			else if (key.s[0] == 'b' && key.s[1] == 'p')
				rc = parse_str(c, &ev->bp, "\"bp\" must be a string");
			else
				rc = json_skip(c, 1);
			break;
		case 3:
			if (memcmp(key.s, "pid", 3) == 0)
				rc = parse_id(c, &ev->pid);
			else if (memcmp(key.s, "tid", 3) == 0)
				rc = parse_id(c, &ev->tid);
			else if (memcmp(key.s, "cat", 3) == 0)
				rc = parse_str(c, &ev->cat, "\"cat\" must be a string");
			else if (memcmp(key.s, "dur", 3) == 0) {
				rc = parse_time(c, &ev->dur, "\"dur\" must be a number");
				ev->has_dur = true;
			} else
				rc = json_skip(c, 1);
			break;
		case 4:
			if (memcmp(key.s, "name", 4) == 0)
				rc = parse_str(c, &ev->name, "\"name\" must be a string");
			else if (memcmp(key.s, "args", 4) == 0)
				rc = parse_args(b, c, ev,
						keep_args && ev->ph.len && ev->ph.s[0] != 'M' &&
								ev->ph.s[0] != 'C'
							? keep_args
							: NULL);
			else
				rc = json_skip(c, 1);
			break;
		default:
			rc = json_skip(c, 1);
		}
		if (rc)
			return rc;
	}
	return rc == JSON_END ? JSON_OK : rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Committing one event to the model */

/* Add the parsed args to the model (those it keeps: model.keep_arg_keys); *first and *n
 * say where they are. */
static bool commit_args(struct kimport *K, const struct kev *ev, uint64_t *first, uint32_t *n)
{
	struct model *m = K->m;
	*first = m->nargs;
	*n = 0;
	for (uint32_t i = 0; i < ev->nargs; i++) {
		const struct karg *a = &ev->args[i];
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
	uint64_t h = (id ^ (uint64_t)cat << 40) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

/* The slot of (cat, id) in the open-flow map: its flow, or the empty slot to fill. */
static struct kflow_slot *flow_slot(struct kimport *K, uint64_t id, uint32_t cat)
{
	uint64_t mask = K->open_flows_cap - 1;
	for (uint64_t i = flow_hash(id, cat) & mask;; i = (i + 1) & mask) {
		struct kflow_slot *sl = &K->open_flows[i];
		if (!sl->flow || (sl->id == id && sl->cat == cat))
			return sl;
	}
}

/* Empty the slot of a flow that has both ends now, so that the map holds only flows still
 * waiting for an end (a few: Kineto writes a launch's two ends close together) and stays
 * small enough for the cache. Backward-shift deletion: entries after it that probed past it
 * move back, so lookups need no tombstones. */
static void flow_slot_remove(struct kimport *K, struct kflow_slot *sl)
{
	uint64_t mask = K->open_flows_cap - 1;
	uint64_t i = (uint64_t)(sl - K->open_flows);
	for (uint64_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		struct kflow_slot *n = &K->open_flows[j];
		if (!n->flow)
			break;
		uint64_t home = flow_hash(n->id, n->cat) & mask;
		/* n stays if its home is cyclically in (i, j]: a lookup reaches it without i */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			K->open_flows[i] = *n;
			i = j;
		}
	}
	K->open_flows[i] = (struct kflow_slot){ 0, 0, 0 };
	K->nopen_flows--;
}

static bool open_flows_grow(struct kimport *K)
{
	uint64_t cap = K->open_flows_cap ? K->open_flows_cap * 2 : 1024;
	struct kflow_slot *old = K->open_flows;
	uint64_t oldcap = K->open_flows_cap;
	K->open_flows = zeroed_table(cap, sizeof(*K->open_flows));
	if (!K->open_flows) {
		K->open_flows = old;
		return false;
	}
	K->open_flows_cap = cap;
	uint64_t n = 0;
	for (uint64_t i = 0; i < oldcap; i++)
		if (old[i].flow && !(K->flows[old[i].flow - 1].has_from &&
				     K->flows[old[i].flow - 1].has_to)) { /* drop paired ones */
			*flow_slot(K, old[i].id, old[i].cat) = old[i];
			n++;
		}
	K->nopen_flows = n;
	free(old);
	return true;
}

/* One end of a flow: pairs with the other end of the same (category, id) still waiting. */
static bool add_flow_end(struct kimport *K, const struct kev *ev, char phase)
{
	uint32_t ps, ts, is;
	uint32_t cat = intern_span(K, ev->cat);
	uint64_t id =
		ev->id.is_str ? (1ull << 63) | kid_key(K, &ev->id, &is) : (uint64_t)ev->id.num;
	bool from = phase == 's';
	if ((K->nopen_flows + 1) * 2 > K->open_flows_cap && !open_flows_grow(K))
		return false;
	struct kflow_slot *sl = flow_slot(K, id, cat);
	struct kflow *f = sl->flow ? &K->flows[sl->flow - 1] : NULL;
	if (f && (from ? f->has_from : f->has_to))
		f = NULL; /* that end is taken: the id was reused, a new flow starts */
	if (!f) {
		if (!grow_array((void **)&K->flows, sizeof(*K->flows), &K->flows_cap,
				K->nflows + 1))
			return false;
		f = &K->flows[K->nflows++];
		memset(f, 0, sizeof(*f));
		f->id = id;
		f->cat = cat;
		if (!sl->flow)
			K->nopen_flows++;
		*sl = (struct kflow_slot){ id, cat, K->nflows };
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
		flow_slot_remove(K, sl);
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
		uint32_t name = intern_span(K, ev->name);
		cat = classify_ids(K, intern_span(K, ev->cat), name, ev->cat, ev->name, &device);
		uint32_t t = track_get(K, ev, device ? MODEL_TRACK_DEVICE : MODEL_TRACK_THREAD);
		if (t == MODEL_NO_TRACK)
			return -1;
		int64_t dur = ph == 'X' && ev->has_dur ? ev->dur : 0;
		if (dur < 0)
			dur = 0;
		uint64_t r = model_add_range(m, t, ev->ts, dur, name, cat, 0);
		if (r == MODEL_NONE || !commit_args(K, ev, &first, &n))
			return -1;
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
			struct kslot *s = slot_find(K, pid, tid, m->tracks[t].kind);
			if (!s || s->track != t)
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
		cat = span_is(ev->name, "[memory]") ? OPSCOPE_CAT_MEMORY
						    : classify(ev->cat, ev->name, &device);
		uint32_t t = track_get(K, ev, MODEL_TRACK_THREAD);
		if (t == MODEL_NO_TRACK)
			return -1;
		uint64_t i = model_add_instant(m, t, ev->ts, intern_span(K, ev->name), cat);
		if (i == MODEL_NONE || !commit_args(K, ev, &first, &n))
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
			return add_name(K, ev, 0) ? 0 : -1;
		if (span_is(ev->name, "process_name"))
			return add_name(K, ev, model_intern(m, "name", 4)) ? 0 : -1;
		if (span_is(ev->name, "process_labels"))
			return add_name(K, ev, model_intern(m, "labels", 6)) ? 0 : -1;
		return 0; /* sort indexes: order is the viewer's business */
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

/* ---------------------------------------------------------------------------------------- */
/* The pipeline between parser and committer */

static void kbatch_free(struct kbatch *b)
{
	free(b->evs);
	free(b->args);
	json_scratch_free(&b->sc);
	free(b);
}

/* An emptied batch, to be filled again. */
static void kbatch_reset(struct kbatch *b)
{
	b->nevs = b->nargs = 0;
	b->window = -1;
	b->next = NULL;
	json_scratch_reset(&b->sc);
}

/* Commit a batch's events in order; false when out of memory. */
static bool kbatch_commit(struct kimport *K, struct kbatch *b)
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

/* Give back batches (a list linked by next). Under K->mu when threaded. */
static void kpool_put(struct kimport *K, struct kbatch *first)
{
	while (first) {
		struct kbatch *n = first->next;
		first->next = K->pool;
		K->pool = first;
		first = n;
	}
}

/* An empty batch: from the pool, or a new one. With `limited` (the parser of windows, whose
 * windows are counted for KBATCHES) it waits for the committer rather than make more. NULL
 * when out of memory or the committer failed. */
static struct kbatch *kbatch_take(struct kimport *K, bool limited)
{
	struct kbatch *b = NULL;
	bool failed = false;
	if (K->threaded) {
		pthread_mutex_lock(&K->mu);
		while (!K->pool && limited && K->nbatches >= KBATCHES &&
		       !atomic_load(&K->commit_failed))
			pthread_cond_wait(&K->cv, &K->mu);
		failed = atomic_load(&K->commit_failed);
		if (!failed && K->pool) {
			b = K->pool;
			K->pool = b->next;
		}
		pthread_mutex_unlock(&K->mu);
	} else if (K->pool) {
		b = K->pool;
		K->pool = b->next;
	}
	if (!b && !failed && (b = calloc(1, sizeof(*b))) != NULL) {
		if (K->threaded)
			pthread_mutex_lock(&K->mu);
		b->all_next = K->all;
		K->all = b;
		K->nbatches++;
		if (K->threaded)
			pthread_mutex_unlock(&K->mu);
	}
	if (b)
		kbatch_reset(b);
	return b;
}

/* Append batches first..last (linked by next) to the committer's queue. Under K->mu. */
static void kqueue_push(struct kimport *K, struct kbatch *first, struct kbatch *last)
{
	if (!first)
		return;
	last->next = NULL;
	if (K->tail)
		K->tail->next = first;
	else
		K->queue = first;
	K->tail = last;
	for (struct kbatch *b = first; b; b = b->next)
		K->nqueued++;
	pthread_cond_broadcast(&K->cv);
}

/* The sink's batch is full (or the parse is over): commit it now (one thread), queue it for
 * the committer with a pin on its window (the parser of windows), or add it to the chunk's
 * list. With take_next the sink gets an empty batch to go on with. -1 when out of memory. */
static int ksink_ship(struct kimport *K, struct ksink *s, bool take_next)
{
	struct kbatch *b = s->b;
	if (!b || b->nevs == 0)
		return 0;
	if (!K->threaded) {
		bool ok = kbatch_commit(K, b);
		kbatch_reset(b);
		json_in_release(&K->in, K->in.buf + K->in.pos); /* what is before is committed */
		return ok ? 0 : -1;
	}
	s->b = NULL;
	b->next = NULL;
	if (s->to_queue) {
		pthread_mutex_lock(&K->mu);
		b->window = K->window;
		if (K->window >= 0)
			K->windows[K->window].pins++;
		kqueue_push(K, b, b);
		while (s->wait_room && K->nqueued >= KQUEUED_MAX && !atomic_load(&K->commit_failed))
			pthread_cond_wait(&K->cv, &K->mu);
		pthread_mutex_unlock(&K->mu);
	} else {
		if (s->last)
			s->last->next = b;
		else
			s->first = b;
		s->last = b;
		s->nfull++;
	}
	if (atomic_load(&K->commit_failed))
		return -1;
	if (take_next && !(s->b = kbatch_take(K, s->limited)))
		return -1;
	return 0;
}

/* Whether a batch in the committer's hands still points into window w. */
static bool kwindow_pinned(struct kimport *K, int w)
{
	if (!K->threaded)
		return false; /* batches are committed as they are shipped */
	pthread_mutex_lock(&K->mu);
	bool pinned = K->windows[w].pins > 0;
	pthread_mutex_unlock(&K->mu);
	return pinned;
}

/* A window other than the current one that no batch pins, of at least cap bytes (plus the
 * sentinel): one already made if possible; waits for the committer when all are pinned.
 * -1 when out of memory or the committer failed. Threaded only: otherwise nothing pins. */
static int kwindow_take(struct kimport *K, size_t cap)
{
	int w = -1;
	pthread_mutex_lock(&K->mu);
	while (w < 0 && !atomic_load(&K->commit_failed)) {
		for (int pass = 0; pass < 2 && w < 0; pass++)
			for (int i = 0; i < KWINDOWS && w < 0; i++)
				if (i != K->window && K->windows[i].pins == 0 &&
				    (pass == 1 || K->windows[i].buf))
					w = i;
		if (w < 0)
			pthread_cond_wait(&K->cv, &K->mu);
	}
	pthread_mutex_unlock(&K->mu);
	if (w < 0)
		return -1;
	struct kwindow *win = &K->windows[w];
	if (win->cap < cap || !win->buf) {
		char *nb = realloc(win->buf, cap + 1); /* nothing in it is needed any more */
		if (!nb)
			return -1;
		win->buf = nb;
		win->cap = cap;
	}
	return w;
}

/* Read on, keeping the text from K->in.pos on (the value being parsed). The events parsed
 * from the window go to the committer first; while it may still read them, the parser moves
 * the kept text to another window instead of over them. 1: more text, 0: the end, < 0: an
 * error, in K->err. */
static int krefill(struct kimport *K)
{
	struct json_in *in = &K->in;
	if (K->window >= 0) {
		if (ksink_ship(K, &K->seq, true) != 0) {
			snprintf(K->err, K->errsize, "%s: out of memory", in->name);
			return OPSCOPE_ENOMEM;
		}
		if (kwindow_pinned(K, K->window)) {
			size_t kept = in->len - in->pos;
			int w = kwindow_take(K, kept > K->window_size ? kept : K->window_size);
			if (w < 0) {
				snprintf(K->err, K->errsize, "%s: out of memory", in->name);
				return OPSCOPE_ENOMEM;
			}
			json_in_rebase(in, in->buf + in->pos, K->windows[w].buf, K->windows[w].cap);
			K->window = w;
		}
	}
	int r = json_in_refill(in, in->buf + in->pos, K->err, K->errsize);
	if (K->window >= 0) { /* the refill may have grown it */
		K->windows[K->window].buf = in->buf;
		K->windows[K->window].cap = in->cap;
	}
	return r;
}

/* ---------------------------------------------------------------------------------------- */
/* Top level */

/* Metadata for the main process of the file, applied when it is known. */
static bool add_meta(struct kimport *K, const char *key, size_t keylen, struct json_span value)
{
	uint64_t cap = K->meta_cap;
	if (!grow_array((void **)&K->meta, sizeof(*K->meta), &cap, (uint64_t)K->nmeta + 1))
		return false;
	K->meta_cap = (uint32_t)cap;
	struct kmeta *e = &K->meta[K->nmeta];
	e->key = malloc(keylen + 1);
	e->value = malloc(value.len + 1);
	if (!e->key || !e->value) {
		free(e->key);
		free(e->value);
		return false;
	}
	memcpy(e->key, key, keylen);
	memcpy(e->value, value.s, value.len);
	e->key_len = keylen;
	e->value_len = value.len;
	K->nmeta++;
	return true;
}

/* A parsed member of a small metadata object. */
struct kpair {
	struct json_span k, v; /* v: a string's text, else canonical JSON */
};

#define KPAIRS_MAX 256 /* members kept per metadata value; more are parsed and dropped */

/* Parse an object into pairs[*np..] (at most KPAIRS_MAX in all). Nothing is committed here:
 * a refill restarts the whole value. */
static int parse_pairs(struct json_cur *c, struct kpair *pairs, int *np)
{
	int rc = json_expect(c, '{', "expected an object");
	bool first = true;
	struct json_span k, v;
	while (rc == JSON_OK && (rc = json_member(c, &first, &k)) == JSON_OK) {
		if ((rc = json_ws(c)) != 0)
			return rc;
		rc = *c->p == '"' ? json_string(c, &v) : json_canon(c, &v);
		if (rc == JSON_OK && *np < KPAIRS_MAX)
			pairs[(*np)++] = (struct kpair){ k, v };
	}
	return rc == JSON_END ? JSON_OK : rc;
}

/* Store pairs as metadata "<prefix><key>". */
static int pairs_to_meta(struct kimport *K, struct json_cur *c, const char *prefix,
			 const struct kpair *pairs, int np)
{
	for (int i = 0; i < np; i++) {
		char key[256];
		int len = snprintf(key, sizeof(key), "%s%.*s", prefix, (int)pairs[i].k.len,
				   pairs[i].k.s);
		if (len >= (int)sizeof(key))
			len = (int)sizeof(key) - 1;
		if (!add_meta(K, key, (size_t)len, pairs[i].v)) {
			c->err = "out of memory";
			c->errpos = c->p;
			return JSON_ERR;
		}
	}
	return JSON_OK;
}

/* distributedInfo: {"rank": 0, "world_size": 2, ...} -> meta "distributed.<key>". */
static int distributed_info(struct kimport *K, struct json_cur *c)
{
	struct kpair pairs[KPAIRS_MAX];
	int np = 0;
	int rc = parse_pairs(c, pairs, &np);
	return rc ? rc : pairs_to_meta(K, c, "distributed.", pairs, np);
}

/* deviceProperties: [{"id": 0, "name": ..., ...}, ...] -> meta "device.<id>.<key>". */
static int device_props(struct kimport *K, struct json_cur *c)
{
	struct kpair pairs[KPAIRS_MAX];
	int np = 0, ends[64], nobj = 0;
	int rc = json_expect(c, '[', "\"deviceProperties\" must be an array");
	if (rc)
		return rc;
	if ((rc = json_ws(c)) != 0)
		return rc;
	if (*c->p == ']') {
		c->p++;
		return JSON_OK;
	}
	for (;;) {
		if ((rc = parse_pairs(c, pairs, &np)) != 0)
			return rc;
		if (nobj < 64)
			ends[nobj++] = np;
		if ((rc = json_ws(c)) != 0)
			return rc;
		if (*c->p == ']') {
			c->p++;
			break;
		}
		if (*c->p != ',') {
			c->err = "expected ',' or ']'";
			c->errpos = c->p;
			return JSON_ERR;
		}
		c->p++;
	}
	for (int o = 0, from = 0; o < nobj; from = ends[o++]) {
		long long id = o; /* the array index when there is no "id" */
		for (int i = from; i < ends[o]; i++)
			if (span_is(pairs[i].k, "id") && pairs[i].v.len < 20) {
				char tmp[24];
				memcpy(tmp, pairs[i].v.s, pairs[i].v.len);
				tmp[pairs[i].v.len] = '\0';
				id = strtoll(tmp, NULL, 10);
			}
		char prefix[48];
		snprintf(prefix, sizeof(prefix), "device.%lld.", id);
		if ((rc = pairs_to_meta(K, c, prefix, pairs + from, ends[o] - from)) != 0)
			return rc;
	}
	return JSON_OK;
}

/* A top-level member other than traceEvents. */
static int top_member(struct kimport *K, struct json_cur *c, struct json_span key)
{
	if (span_is(key, "deviceProperties"))
		return device_props(K, c);
	if (span_is(key, "distributedInfo"))
		return distributed_info(K, c);
	int rc = json_ws(c);
	if (rc)
		return rc;
	if (span_is(key, "baseTimeNanoseconds")) {
		struct json_span num;
		bool is_int;
		int64_t v;
		if (*c->p != '-' && (*c->p < '0' || *c->p > '9')) {
			c->err = "\"baseTimeNanoseconds\" must be an integer";
			c->errpos = c->p;
			return JSON_ERR;
		}
		if ((rc = json_number(c, &num, &is_int, &v)) != 0)
			return rc;
		if (!is_int) {
			c->err = "\"baseTimeNanoseconds\" must be an integer";
			c->errpos = num.s;
			return JSON_ERR;
		}
		K->base_ns = v;
		return JSON_OK;
	}
	/* short scalars (schemaVersion, displayTimeUnit, host_name, ...) are kept as metadata;
	 * long logs (INFO, ERROR) and other structures are skipped */
	struct json_span v;
	if (*c->p == '[' || *c->p == '{')
		return json_skip(c, 0);
	rc = *c->p == '"' ? json_string(c, &v) : json_canon(c, &v);
	if (rc == JSON_OK && v.len <= 1024 && key.len < 200) {
		char k[256];
		int len = snprintf(k, sizeof(k), "trace.%.*s", (int)key.len, key.s);
		if (!add_meta(K, k, (size_t)len, v)) {
			c->err = "out of memory";
			c->errpos = c->p;
			return JSON_ERR;
		}
	}
	return rc;
}

enum kstate {
	KS_START,	 /* before the top-level value */
	KS_MEMBER,	 /* in the top object, before a member or '}' */
	KS_AFTER_MEMBER, /* after a member: ',' or '}' */
	KS_FIRST_EVENT,	 /* after '[' of the events: an event or ']' */
	KS_EVENT,	 /* after ',' in the events: an event */
	KS_AFTER_EVENT,	 /* after an event: ',' or ']' */
	KS_END,		 /* after the top-level value: only whitespace */
	KS_DONE,
};

struct kparse {
	enum kstate state;
	bool bare_array; /* the top level is the events array itself */
};

#define KCHUNK_BYTES ((size_t)2 << 20)	 /* chunks of a text parsed in parallel: at most */
#define KCHUNK_MIN   ((size_t)256 << 10) /* and at least */
#define KARG_BYTES   24 /* argument room reserved per byte of text: 1 per this many */
#define KPREFAULT    ((uint64_t)4 << 20) /* bytes of a column faulted in ahead of the committer */
#define KAHEAD	     3
#define KWORKERS_MAX 4

enum kchunk_state { KC_FREE, KC_BUSY, KC_PARSED };

/* How a parse of a range stopped. */
enum kstop {
	KSTOP_RANGE_END,  /* it needs text past the end of its range (or ended there) */
	KSTOP_LEFT_ARRAY, /* on speculation: the state left the events array */
	KSTOP_FULL,	  /* on speculation: KSPEC_BATCHES are full (memory stays bounded) */
	KSTOP_ERROR,
};

struct kchunk {
	const char *start, *end;
	enum kchunk_state state;
	bool dropped;	  /* the in-order parse covers its text: what it parsed is not used */
	struct ksink out; /* what it parsed */
	const char *stop; /* where its parse stopped, */
	struct kparse P;  /* in which state, */
	enum kstop how;	  /* and why */
};

/* A column of the model, as the committer last saw it, for idle workers to fault in ahead
 * of it: `size`-byte elements at col, n appended of room for cap, faulted in up to done. */
struct kpcol {
	const void *col;
	size_t size;
	uint64_t n, cap, done;
};

struct kpar {
	const char *text, *text_end;
	struct kchunk *chunks; /* room for chunks_cap, made once: entries never move */
	uint32_t nchunks;      /* cut so far */
	uint64_t chunks_cap;
	size_t chunk;	    /* bytes a chunk should have */
	const char *cut_at; /* where the next chunk starts */
	bool no_more;	    /* the in-order parse takes the rest: cut no more */
	/* the frontier: text before fpos is parsed in order, and chunks before front resolved */
	uint32_t front;
	const char *fpos;
	struct kparse fP;
	bool inorder_due, inorder_busy; /* an in-order parse from fpos to inorder_end */
	const char *inorder_end;
	uint32_t inorder_last; /* the chunk inorder_end ends */
	uint32_t span;	       /* chunks the next in-order parse takes, if it takes chunks */
	bool done;	       /* the in-order parse reached the end of the text or an error */
	int rc;		       /* 0, or the error (in K->err) */
	uint32_t running;      /* workers not yet finished */
	/* the model's argument columns, faulted in ahead of the committer by idle workers (on
	 * machines where the kernel clears fresh pages slowly that is a good part of its time) */
	struct kpcol *cols;
	uint32_t ncols, cols_cap;
	bool prefaulting;
};

/* One step of the top-level state machine: parses one thing (an event goes to the sink). */
static int kstep(struct kimport *K, struct kparse *P, struct json_cur *c, struct ksink *sink)
{
	int rc = json_ws(c);
	if (rc)
		return rc;
	char ch = *c->p;
	switch (P->state) {
	case KS_START:
		if ((unsigned char)ch == 0xef) { /* a UTF-8 byte order mark */
			if (c->end - c->p < 3)
				return JSON_MORE;
			if ((unsigned char)c->p[1] == 0xbb && (unsigned char)c->p[2] == 0xbf) {
				c->p += 3;
				return JSON_OK;
			}
		}
		if (ch == '{') {
			P->state = KS_MEMBER;
		} else if (ch == '[') {
			P->bare_array = true;
			P->state = KS_FIRST_EVENT;
		} else {
			c->err = "not a JSON trace: expected '{' or '['";
			c->errpos = c->p;
			return JSON_ERR;
		}
		c->p++;
		return JSON_OK;
	case KS_MEMBER: {
		if (ch == '}') {
			c->p++;
			P->state = KS_END;
			return JSON_OK;
		}
		if (ch != '"') {
			c->err = "expected a string key";
			c->errpos = c->p;
			return JSON_ERR;
		}
		struct json_span key;
		if ((rc = json_string(c, &key)) != 0)
			return rc;
		if ((rc = json_expect(c, ':', "expected ':'")) != 0)
			return rc;
		if (span_is(key, "traceEvents")) {
			if ((rc = json_expect(c, '[', "\"traceEvents\" must be an array")) != 0)
				return rc;
			K->events_seen = true;
			P->state = KS_FIRST_EVENT;
			return JSON_OK;
		}
		if ((rc = top_member(K, c, key)) != 0)
			return rc;
		P->state = KS_AFTER_MEMBER;
		return JSON_OK;
	}
	case KS_AFTER_MEMBER:
		if (ch == ',') {
			c->p++;
			if ((rc = json_ws(c)) != 0)
				return rc;
			if (*c->p == '}') {
				c->err = "expected a member after ','";
				c->errpos = c->p;
				return JSON_ERR;
			}
			P->state = KS_MEMBER;
			return JSON_OK;
		}
		if (ch == '}') {
			c->p++;
			P->state = KS_END;
			return JSON_OK;
		}
		c->err = "expected ',' or '}'";
		c->errpos = c->p;
		return JSON_ERR;
	case KS_FIRST_EVENT:
	case KS_EVENT: {
		if (ch == ']' && P->state == KS_FIRST_EVENT) {
			c->p++;
			P->state = P->bare_array ? KS_END : KS_AFTER_MEMBER;
			return JSON_OK;
		}
		/* a full batch goes on before the next event, so that a failure to get the
		 * next batch leaves the state as it was */
		if (sink->b->nevs >= KBATCH_EVENTS) {
			if (ksink_ship(K, sink, true) != 0)
				return json_fail(c, c->p, "out of memory");
			c->sc = &sink->b->sc; /* unescaped strings go with their batch */
		}
		struct kbatch *b = sink->b;
		if (b->nevs == b->evs_cap) {
			uint64_t cap = b->evs_cap;
			if (!grow_array((void **)&b->evs, sizeof(*b->evs), &cap,
					(uint64_t)b->nevs + 1))
				return json_fail(c, c->p, "out of memory");
			b->evs_cap = (uint32_t)cap;
		}
		struct kev *ev = &b->evs[b->nevs];
		if (b->nevs == 0)
			b->lo = c->p;
		if ((rc = parse_event(b, c, ev, K->m->keep_arg_keys)) != 0)
			return rc; /* the slot is not counted: a refill parses the event again */
		b->nargs += ev->nargs;
		b->nevs++;
		P->state = KS_AFTER_EVENT;
		return JSON_OK;
	}
	case KS_AFTER_EVENT:
		if (ch == ',') {
			c->p++;
			P->state = KS_EVENT;
			return JSON_OK;
		}
		if (ch == ']') {
			c->p++;
			P->state = P->bare_array ? KS_END : KS_AFTER_MEMBER;
			return JSON_OK;
		}
		c->err = "expected ',' or ']' after a trace event";
		c->errpos = c->p;
		return JSON_ERR;
	case KS_END:
	case KS_DONE:
		c->err = "unexpected data after the end of the JSON value";
		c->errpos = c->p;
		return JSON_ERR;
	}
	return JSON_ERR;
}

static int kerror(struct kimport *K, const char *at, const char *msg)
{
	snprintf(K->err, K->errsize, "%s: offset %llu%s: %s", K->in.name,
		 (unsigned long long)json_in_offset(&K->in, at),
		 K->in.gzipped ? " (uncompressed)" : "", msg);
	return strcmp(msg, "out of memory") == 0 ? OPSCOPE_ENOMEM : OPSCOPE_EFORMAT;
}

static int kparse_all(struct kimport *K)
{
	struct kparse P = { KS_START, false };
	for (;;) {
		struct kbatch *b = K->seq.b;
		if (b->nevs == 0) /* nothing points into its scratch: what a retry left goes */
			json_scratch_reset(&b->sc);
		struct json_cur c = json_in_cursor(&K->in, &b->sc);
		if (P.state == KS_END) {
			/* only whitespace may follow */
			int rc = json_ws(&c);
			if (rc == JSON_OK)
				return kerror(K, c.p,
					      "unexpected data after the end of the JSON value");
			K->in.pos = K->in.len;
			int r = krefill(K);
			if (r < 0)
				return r;
			if (r == 0)
				return 0;
			continue;
		}
		int rc = kstep(K, &P, &c, &K->seq);
		if (rc == JSON_OK) {
			K->in.pos = (size_t)(c.p - K->in.buf);
			continue;
		}
		if (rc == JSON_ERR)
			return kerror(K, c.errpos, c.err);
		/* JSON_MORE: read on, keeping the value being parsed, and parse it again */
		int r = krefill(K);
		if (r < 0)
			return r;
		if (r == 0) {
			struct json_cur e = json_in_cursor(&K->in, NULL);
			return kerror(K, e.end,
				      P.state == KS_START ? "empty input: not a JSON trace"
							  : "unexpected end of input (truncated?)");
		}
	}
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
	for (uint64_t i = 0; i < K->nnames; i++) {
		const struct kname *n = &K->names[i];
		if (n->key) { /* process name or labels; string pids are named by their string */
			if ((n->pid >> 63) == 0 && n->pid < 0xf0000000u)
				model_set_meta(m, (uint32_t)n->pid, n->key, n->value);
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

static void kfinish(struct kimport *K)
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
		model_set_meta(m, pid, model_intern(m, K->meta[i].key, K->meta[i].key_len),
			       model_intern(m, K->meta[i].value, K->meta[i].value_len));
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

static void kfree(struct kimport *K)
{
	json_in_close(&K->in);
	for (int i = 0; i < KWINDOWS; i++)
		free(K->windows[i].buf);
	free(K->slots);
	free(K->flows);
	free(K->open_flows);
	free(K->classes);
	free(K->names);
	free(K->open);
	for (uint32_t i = 0; i < K->nmeta; i++) {
		free(K->meta[i].key);
		free(K->meta[i].value);
	}
	free(K->meta);
	while (K->all) {
		struct kbatch *n = K->all->all_next;
		kbatch_free(K->all);
		K->all = n;
	}
	if (K->par) {
		free(K->par->chunks);
		free(K->par->cols);
	}
	free(K->par);
}

/* Parse everything and ship the last batch: what was parsed before an error stays. */
static int kparse_run(struct kimport *K)
{
	int rc = kparse_all(K);
	if (ksink_ship(K, &K->seq, false) != 0 && rc == 0) {
		snprintf(K->err, K->errsize, "%s: out of memory", K->in.name);
		rc = OPSCOPE_ENOMEM;
	}
	return rc;
}

static void *kparse_thread(void *arg)
{
	struct kimport *K = arg;
	int rc = kparse_run(K);
	pthread_mutex_lock(&K->mu);
	K->parse_done = true;
	K->parse_rc = rc;
	pthread_cond_broadcast(&K->cv);
	pthread_mutex_unlock(&K->mu);
	return NULL;
}

static void kpar_columns(struct kimport *K);

/* The committer's side of the threaded pipeline: commit the queued batches in order until
 * the parsers are done. */
static void kcommit_loop(struct kimport *K)
{
	pthread_mutex_lock(&K->mu);
	for (;;) {
		while (!K->queue && !K->parse_done)
			pthread_cond_wait(&K->cv, &K->mu);
		struct kbatch *b = K->queue;
		if (!b)
			break; /* parsed and queued in order: nothing is left */
		K->queue = b->next;
		if (!K->queue)
			K->tail = NULL;
		K->nqueued--;
		pthread_mutex_unlock(&K->mu);
		/* the text before this batch's events is committed: a mapped file gives it back */
		json_in_release(&K->in, b->lo);
		if (atomic_load(&K->commit_failed) || !kbatch_commit(K, b))
			atomic_store(&K->commit_failed, true);
		pthread_mutex_lock(&K->mu);
		if (b->window >= 0)
			K->windows[b->window].pins--;
		if (K->par)
			kpar_columns(K);
		b->next = NULL;
		kpool_put(K, b);
		pthread_cond_broadcast(&K->cv);
	}
	pthread_mutex_unlock(&K->mu);
}

/* ---------------------------------------------------------------------------------------- */
/* Parsing a text in one piece on several threads */

/*
 * A text in one piece (a mapped file, the caller's memory) is cut into chunks of about
 * KCHUNK_BYTES, each where an event likely starts ('{' after '}' and ',', whitespace
 * between). The first chunk is parsed in order from the start; the others, by whichever
 * worker is free, on speculation: as if they began with an event of the traceEvents array.
 * Chunks are then resolved in text order, where the in-order parse stands (the frontier):
 *   - the parse before ended exactly where the chunk starts, between two events (after a
 *     ',' and whitespace): what the chunk parsed is what one parser would have, and is used;
 *     if it stopped before its end (the end of the array, an error), the in-order parse goes
 *     on from there to the end of the text;
 *   - otherwise (the cut was inside a string or outside the array, the parse before stopped
 *     inside an event at the cut) what the chunk parsed is dropped, and the in-order parse
 *     goes on over it.
 * Events, errors and offsets are thus those of one parser reading the whole text (the tests
 * and the fuzz target compare the two). Speculation runs at most KAHEAD chunks ahead and
 * waits while KQUEUED_MAX batches wait for the committer, which bounds memory.
 */
static bool is_ws(char ch)
{
	return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t';
}

/* Where an event likely starts at or after p: a '{' after '}', ',' and whitespace. NULL when
 * there is none before limit. */
static const char *kchunk_cut(const char *p, const char *text, const char *limit)
{
	while (p < limit && (p = memchr(p, '{', (size_t)(limit - p))) != NULL) {
		const char *q = p;
		while (q > text && is_ws(q[-1]))
			q--;
		if (q > text && q[-1] == ',') {
			q--;
			while (q > text && is_ws(q[-1]))
				q--;
			if (q > text && q[-1] == '}')
				return p;
		}
		p++;
	}
	return NULL;
}

/* Parse [from, end) from state P into s. On speculation, stop where the state leaves the
 * events array. *stop: the start of the step that ran off the end of the range, or where the
 * parse stopped otherwise; P: the state there; an error's message and place in *err. */
static enum kstop kparse_range(struct kimport *K, struct kparse *P, const char *from,
			       const char *end, bool spec, struct ksink *s, const char **stop,
			       const char **err, const char **errpos)
{
	const char *p = from;
	for (;;) {
		*stop = p;
		struct kbatch *b = s->b;
		if (b->nevs == 0) /* nothing points into its scratch: what a retry left goes */
			json_scratch_reset(&b->sc);
		struct json_cur c = { p, end, &b->sc, NULL, NULL };
		if (P->state == KS_END) { /* only whitespace may follow */
			if (json_ws(&c) == JSON_MORE) {
				*stop = end;
				return KSTOP_RANGE_END;
			}
			*err = "unexpected data after the end of the JSON value";
			*errpos = c.p;
			return KSTOP_ERROR;
		}
		struct kparse before = *P;
		int rc = kstep(K, P, &c, s);
		if (spec && rc == JSON_OK && P->state != KS_EVENT && P->state != KS_AFTER_EVENT) {
			/* the end of the array: what follows depends on the top level, which only
			 * the in-order parse knows (a bare array, an object's other members) */
			*P = before;
			return KSTOP_LEFT_ARRAY;
		}
		if (rc == JSON_OK) {
			p = c.p;
			if (spec && s->nfull >= KSPEC_BATCHES) {
				*stop = p; /* between two steps: the in-order parse goes on here */
				return KSTOP_FULL;
			}
			continue;
		}
		if (rc == JSON_MORE)
			return KSTOP_RANGE_END;
		*err = c.err;
		*errpos = c.errpos;
		return KSTOP_ERROR;
	}
}

/* Cut the text into chunks up to chunk `upto` (as the parse gets there: cutting looks at the
 * text, which a cold file reads from disk), and ask the kernel to read ahead what the new
 * chunks and the one after them hold. Under K->mu. */
static void kpar_extend(struct kimport *K, uint64_t upto)
{
	struct kpar *X = K->par;
	size_t chunk = X->chunk;
	while (!X->no_more && X->nchunks <= upto && X->cut_at < X->text_end &&
	       X->nchunks < X->chunks_cap) {
		const char *at = X->cut_at;
		struct kchunk *c = &X->chunks[X->nchunks++];
		c->start = at;
		const char *want = (size_t)(X->text_end - at) > chunk ? at + chunk : X->text_end;
		/* the next cut, looked for in the next chunk's worth of text */
		const char *limit =
			(size_t)(X->text_end - want) > chunk ? want + chunk : X->text_end;
		json_in_willneed(&K->in, at, limit);
		const char *cut = want < X->text_end ? kchunk_cut(want, X->text, limit) : NULL;
		c->end = cut ? cut : limit;
		/* what the look mapped need not count in memory until it is parsed */
		json_in_forget(&K->in, want - (want > X->text ? 1 : 0), cut ? cut + 1 : limit);
		X->cut_at = c->end;
	}
}

/* Chunks from j on will not be used: what they parsed goes back, and no more are cut. Under
 * K->mu. */
static void kpar_drop_from(struct kimport *K, uint32_t j)
{
	struct kpar *X = K->par;
	X->no_more = true;
	for (; j < X->nchunks; j++) {
		struct kchunk *c = &X->chunks[j];
		c->dropped = true;
		if (c->state == KC_PARSED) {
			kpool_put(K, c->out.first);
			c->out.first = c->out.last = NULL;
		}
	}
}

/* The in-order parse reached the end of the text (stop, state P) or an error: done. */
static void kpar_finish(struct kimport *K, const char *at, const char *msg)
{
	struct kpar *X = K->par;
	X->done = true;
	X->rc = msg ? kerror(K, at, msg) : 0;
	kpar_drop_from(K, 0);
	pthread_cond_broadcast(&K->cv);
}

/* Move the frontier on as far as the chunks parsed allow; when a chunk must be parsed in
 * order, say so (inorder_due). Under K->mu. */
static void kpar_advance(struct kimport *K)
{
	struct kpar *X = K->par;
	while (!X->done && !X->inorder_due && !X->inorder_busy) {
		kpar_extend(K, X->front);
		if (X->front == X->nchunks) {
			/* the text ran out inside the array (a speculative parse got there) */
			kpar_finish(K, X->text_end, "unexpected end of input (truncated?)");
			return;
		}
		struct kchunk *c = &X->chunks[X->front];
		/* between events: after a ',' and nothing but whitespace up to the chunk */
		struct json_cur gap = { X->fpos, c->start, NULL, NULL, NULL };
		bool between_events = X->fP.state == KS_EVENT && json_ws(&gap) == JSON_MORE;
		if (between_events && !c->dropped && c->state == KC_BUSY)
			break; /* its worker calls again when it is done */
		if (between_events && !c->dropped && c->state == KC_PARSED) {
			kqueue_push(K, c->out.first, c->out.last);
			c->out.first = c->out.last = NULL;
			X->fpos = c->stop;
			X->fP.state = c->P.state; /* bare_array is the in-order parse's to know */
			if (c->how == KSTOP_RANGE_END) {
				X->front++;
				continue;
			}
			if (c->how == KSTOP_FULL) { /* the rest of the chunk, in order */
				c->dropped = true;
				X->inorder_last = X->front;
				X->inorder_end = c->end;
				X->inorder_due = true;
				break;
			}
			X->front++;
			/* it stopped early: the rest of the text is parsed in order from there */
			kpar_drop_from(K, X->front);
			X->inorder_end = X->text_end;
			X->inorder_due = true;
			break;
		}
		/* not parsed yet, or parsed from a start that is not where the in-order parse
		 * stands: parse its text in order, with the chunks after it when the last
		 * in-order parse could not finish a single step (a value larger than a chunk:
		 * twice as many each time, so that such a value is not scanned again and again) */
		kpar_extend(K, (uint64_t)X->front + X->span - 1);
		uint32_t last = X->front + X->span - 1 < X->nchunks ? X->front + X->span - 1
								    : X->nchunks - 1;
		for (uint32_t j = X->front; j <= last; j++) {
			struct kchunk *d = &X->chunks[j];
			if (d->state == KC_PARSED) {
				kpool_put(K, d->out.first);
				d->out.first = d->out.last = NULL;
			}
			d->dropped = true;
		}
		X->inorder_last = last;
		X->inorder_end = X->chunks[last].end;
		X->inorder_due = true;
	}
	pthread_cond_broadcast(&K->cv);
}

/* Note where the model's growing columns are (the arguments, the ranges of this file's
 * tracks) for kpar_prefault. The committer's thread, under K->mu. */
static void kpar_columns(struct kimport *K)
{
	struct kpar *X = K->par;
	struct model *m = K->m;
	uint64_t want = 3 + 8 * (uint64_t)(m->ntracks - K->first_track);
	uint64_t cap = X->cols_cap;
	if (!grow_array((void **)&X->cols, sizeof(*X->cols), &cap, want))
		return; /* no faulting ahead then; nothing else needs it */
	X->cols_cap = (uint32_t)cap;
	uint32_t i = 0;
#define KPCOL(ptr, count, room)                                                                 \
	do {                                                                                    \
		struct kpcol *e = &X->cols[i++];                                                \
		if (i > X->ncols || e->col != (const void *)(ptr))                              \
			*e = (struct kpcol){ (ptr), sizeof(*(ptr)), (count), (room), (count) }; \
		e->n = (count);                                                                 \
		e->cap = (room);                                                                \
	} while (0)
	KPCOL(m->args.key, m->nargs, m->args_cap);
	KPCOL(m->args.type, m->nargs, m->args_cap);
	KPCOL(m->args.bits, m->nargs, m->args_cap);
	for (uint32_t t = K->first_track; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		const struct model_ranges *r = &tr->ranges;
		KPCOL(r->start_ns, tr->nranges, tr->nranges_cap);
		KPCOL(r->dur_ns, tr->nranges, tr->nranges_cap);
		KPCOL(r->name, tr->nranges, tr->nranges_cap);
		KPCOL(r->category, tr->nranges, tr->nranges_cap);
		KPCOL(r->flags, tr->nranges, tr->nranges_cap);
		KPCOL(r->depth, tr->nranges, tr->nranges_cap);
		KPCOL(r->first_arg, tr->nranges, tr->nranges_cap);
		KPCOL(r->nargs, tr->nranges, tr->nranges_cap);
	}
#undef KPCOL
	X->ncols = i;
}

/* An idle worker faults in the next stretch of a column the committer is about to fill
 * (under K->mu, which it drops while the kernel works): true if it did. */
static bool kpar_prefault(struct kimport *K)
{
	struct kpar *X = K->par;
	for (uint32_t i = 0; i < X->ncols; i++) {
		struct kpcol *e = &X->cols[i];
		/* ahead by a quarter of what the column holds, 64 KB to KPREFAULT: faulted in
		 * but unused pages count in memory, and a column that grew by doubling has up to
		 * as much room again as it holds */
		uint64_t bytes = e->n * e->size / 4;
		bytes = bytes < 65536 ? 65536 : bytes > KPREFAULT ? KPREFAULT : bytes;
		uint64_t from = e->done > e->n ? e->done : e->n;
		uint64_t ahead = e->n + bytes / e->size;
		uint64_t to = ahead < e->cap ? ahead : e->cap;
		if (from >= to || (to - from) * e->size < 65536)
			continue; /* far enough ahead (or too little to be worth a call) */
		const void *col = e->col;
		size_t size = e->size;
		X->prefaulting = true;
		pthread_mutex_unlock(&K->mu);
		model_prefault(col, size, from, to);
		pthread_mutex_lock(&K->mu);
		X->prefaulting = false;
		if (i < X->ncols && X->cols[i].col == col && X->cols[i].done < to)
			X->cols[i].done = to;
		return true;
	}
	return false;
}

/* A worker: the in-order parse when one is due, else the next chunk on speculation. */
static void *kpar_worker(void *arg)
{
	struct kimport *K = arg;
	struct kpar *X = K->par;
	pthread_mutex_lock(&K->mu);
	while (!X->done && !atomic_load(&K->commit_failed)) {
		/* while the committer is behind, nobody parses more (memory stays bounded) */
		bool room = K->nqueued < KQUEUED_MAX;
		bool inorder = room && X->inorder_due && !X->inorder_busy;
		struct kchunk *c = NULL;
		if (!inorder && room)
			kpar_extend(K, (uint64_t)X->front + KAHEAD);
		if (!inorder && room)
			for (uint32_t j = X->front + 1; j < X->nchunks && j <= X->front + KAHEAD;
			     j++)
				if (X->chunks[j].state == KC_FREE && !X->chunks[j].dropped) {
					c = &X->chunks[j];
					break;
				}
		if (!inorder && !c && !X->prefaulting && kpar_prefault(K))
			continue; /* nothing to parse: pages the committer will need were faulted in */
		if (!inorder && !c) {
			pthread_cond_wait(&K->cv, &K->mu);
			continue;
		}
		struct kparse P = inorder ? X->fP : (struct kparse){ KS_EVENT, false };
		const char *from = inorder ? X->fpos : c->start;
		const char *end = inorder ? X->inorder_end : c->end;
		if (inorder) {
			X->inorder_due = false;
			X->inorder_busy = true;
		} else {
			c->state = KC_BUSY;
		}
		pthread_mutex_unlock(&K->mu);

		/* in order, full batches go to the committer at once (waiting for room) */
		struct ksink out = {
			kbatch_take(K, false), NULL, NULL, 0, inorder, false, inorder
		};
		const char *stop = from, *err = "out of memory", *errpos = from;
		enum kstop how = KSTOP_ERROR;
		if (out.b)
			how = kparse_range(K, &P, from, end, !inorder, &out, &stop, &err, &errpos);
		if (ksink_ship(K, &out, false) != 0 && how != KSTOP_ERROR) {
			how = KSTOP_ERROR;
			err = "out of memory";
			errpos = stop;
		}
		if (out.b) { /* an empty last batch */
			out.b->next = NULL;
			pthread_mutex_lock(&K->mu);
			kpool_put(K, out.b);
			pthread_mutex_unlock(&K->mu);
			out.b = NULL;
		}

		pthread_mutex_lock(&K->mu);
		if (!inorder) {
			c->state = KC_PARSED;
			c->out = out;
			c->stop = stop;
			c->P = P;
			c->how = how;
			if (c->dropped || X->done) {
				kpool_put(K, out.first);
				c->out.first = c->out.last = NULL;
			}
		} else {
			X->inorder_busy = false;
			kqueue_push(K, out.first, out.last);
			if (how == KSTOP_ERROR) {
				kpar_finish(K, errpos, err);
			} else if (end == X->text_end) {
				kpar_finish(K, X->text_end,
					    P.state == KS_END ? NULL
					    : P.state == KS_START
						    ? "empty input: not a JSON trace"
						    : "unexpected end of input (truncated?)");
			} else {
				/* no step finished: the next in-order parse takes twice the text */
				X->span = stop == from && X->span < (1u << 20) ? X->span * 2 : 1;
				X->fpos = stop;
				X->fP = P;
				X->front = X->inorder_last + 1;
			}
		}
		kpar_advance(K);
	}
	if (--X->running == 0) {
		K->parse_done = true;
		pthread_cond_broadcast(&K->cv);
	}
	pthread_mutex_unlock(&K->mu);
	return NULL;
}

/* Set up the chunks of a text in one piece; false when out of memory. */
static bool kpar_setup(struct kimport *K, size_t chunk)
{
	struct kpar *X = calloc(1, sizeof(*X));
	if (!X)
		return false;
	K->par = X;
	X->text = K->in.buf;
	X->text_end = K->in.buf + K->in.len;
	/* no more than 64 k chunks, whatever was asked: the table is made once, and its
	 * entries never move */
	X->chunk = chunk > K->in.len / 65536 ? chunk : K->in.len / 65536 + 1;
	X->chunks_cap = K->in.len / X->chunk + 2;
	X->chunks = calloc(X->chunks_cap, sizeof(*X->chunks));
	if (!X->chunks)
		return false;
	X->cut_at = X->text;
	kpar_extend(K, 0);
	/* address space only: the argument columns will not move while they fill, and idle
	 * workers can fault them in ahead (it is fine to go without) */
	(void)model_reserve_args(K->m, K->m->nargs + K->in.len / KARG_BYTES);
	kpar_columns(K);
	X->fpos = X->text;
	X->fP = (struct kparse){ KS_START, false };
	X->inorder_end = X->nchunks ? X->chunks[0].end : X->text_end;
	X->inorder_last = 0;
	X->span = 1;
	X->inorder_due = true;
	if (X->nchunks)
		X->chunks[0].dropped = true; /* parsed in order */
	return true;
}

/* Parse a text in one piece on several workers while this thread builds the model. */
static int kparse_parallel(struct kimport *K, size_t chunk, pthread_t *th, uint32_t nworkers)
{
	if (!kpar_setup(K, chunk)) {
		snprintf(K->err, K->errsize, "%s: out of memory", K->in.name);
		return OPSCOPE_ENOMEM;
	}
	struct kpar *X = K->par;
	pthread_mutex_lock(&K->mu);
	uint32_t started = 0;
	for (; started < nworkers; started++) {
		X->running++;
		if (pthread_create(&th[started], NULL, kpar_worker, K) != 0) {
			X->running--;
			break;
		}
	}
	if (started == 0)
		K->parse_done = true;
	pthread_mutex_unlock(&K->mu);
	if (started == 0) {
		snprintf(K->err, K->errsize, "%s: cannot start a thread", K->in.name);
		return OPSCOPE_ENOMEM;
	}
	kcommit_loop(K);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	int rc = X->rc;
	if (rc == 0 && atomic_load(&K->commit_failed)) {
		snprintf(K->err, K->errsize, "%s: out of memory", K->in.name);
		rc = OPSCOPE_ENOMEM;
	}
	return rc;
}

enum kmode {
	KM_SYNC,     /* parse and commit in this thread */
	KM_THREAD,   /* one parser thread (windows of the input, or the text in one piece) */
	KM_PARALLEL, /* a text in one piece, in chunks on several parser threads */
};

/* How to parse: on threads for inputs large enough to pay for them, chunks on several for a
 * mapped file. OPSCOPE_IMPORT_THREADS=0 or 1 forces one of the first two, and
 * OPSCOPE_IMPORT_CHUNK=bytes the third for any text in one piece (the tests use all three). */
static enum kmode import_mode(const struct kimport *K, size_t *chunk)
{
	bool whole = K->in.mapped || !K->in.gz;
	const char *cenv = getenv("OPSCOPE_IMPORT_CHUNK");
	*chunk = KCHUNK_BYTES;
	if (cenv && atol(cenv) > 0 && whole) {
		*chunk = (size_t)atol(cenv);
		return KM_PARALLEL;
	}
	const char *env = getenv("OPSCOPE_IMPORT_THREADS");
	if (env && *env)
		return strcmp(env, "0") == 0 ? KM_SYNC : KM_THREAD;
	if (!K->in.gz && !K->in.mapped)
		return KM_SYNC; /* memory input */
	/* a mapped file on chunks of a 32nd of it, 256 KB to 2 MB: small chunks get the
	 * committer going sooner and leave less of a tail (15 MB: 30 -> 23 ms with 512 KB ones,
	 * 1.7 MB: 6.6 ms on one thread -> 5.8), large ones cost less to hand over */
	if (K->in.mapped && parallel_cpus() >= 2 && K->in.len >= 4 * KCHUNK_MIN) {
		size_t c = K->in.len / 32;
		*chunk = c < KCHUNK_MIN ? KCHUNK_MIN : c > KCHUNK_BYTES ? KCHUNK_BYTES : c;
		return KM_PARALLEL;
	}
	if (K->in.file_bytes <= (K->in.gzipped ? 1u << 20 : 8u << 20))
		return KM_SYNC;
	return KM_THREAD;
}

static int kparse_threaded(struct kimport *K, enum kmode mode, size_t chunk)
{
	K->threaded = true;
	atomic_init(&K->commit_failed, false);
	pthread_t th[KWORKERS_MAX];
	if (pthread_mutex_init(&K->mu, NULL) != 0)
		goto sync;
	if (pthread_cond_init(&K->cv, NULL) != 0) {
		pthread_mutex_destroy(&K->mu);
		goto sync;
	}
	int rc;
	if (mode == KM_PARALLEL) {
		unsigned cpus = parallel_cpus();
		uint32_t n = cpus < 2 ? 2 : cpus > KWORKERS_MAX ? KWORKERS_MAX : cpus;
		rc = kparse_parallel(K, chunk, th, n);
	} else if (pthread_create(&th[0], NULL, kparse_thread, K) != 0) {
		pthread_cond_destroy(&K->cv);
		pthread_mutex_destroy(&K->mu);
		goto sync;
	} else {
		kcommit_loop(K);
		pthread_join(th[0], NULL);
		rc = K->parse_rc;
	}
	pthread_cond_destroy(&K->cv);
	pthread_mutex_destroy(&K->mu);
	K->threaded = false;
	return rc;
sync:
	K->threaded = false;
	return kparse_run(K);
}

/* Shared by the file and memory entry points: K->in is open. */
static int kimport_run(struct model *m, struct kimport *K, const char *format)
{
	K->m = m;
	K->first_track = m->ntracks;
	K->first_flow = m->nflows;
	K->fi = model_add_file(m, K->in.name, format);
	if (K->fi == UINT32_MAX) {
		snprintf(K->err, K->errsize, "%s: out of memory", K->in.name);
		return OPSCOPE_ENOMEM;
	}
	K->window = -1;
	K->seq = (struct ksink){ kbatch_take(K, false), NULL, NULL, 0, true, true, false };
	if (!K->seq.b) {
		snprintf(K->err, K->errsize, "%s: out of memory", K->in.name);
		return OPSCOPE_ENOMEM;
	}
	if (K->in.owned) { /* a file's window becomes the first of ours */
		K->windows[0] = (struct kwindow){ K->in.buf, K->in.cap, 0 };
		K->in.owned = false;
		K->window = 0;
		K->window_size = K->in.cap;
	}
	size_t chunk;
	enum kmode mode = import_mode(K, &chunk);
	int rc = mode == KM_SYNC ? kparse_run(K) : kparse_threaded(K, mode, chunk);
	if (rc == 0 && !K->events_seen && K->events == 0 && m->ntracks == K->first_track) {
		/* a JSON object without traceEvents is not a trace (an empty list is one): say
		 * so, and leave the model as it was */
		snprintf(K->err, K->errsize,
			 "%s: not a trace: a JSON object without \"traceEvents\"", K->in.name);
		m->nfiles--;
		return OPSCOPE_EUNSUPPORTED;
	}
	/* what was read stays in the model, errors or not */
	kfinish(K);
	if (rc == 0 && m->oom) {
		snprintf(K->err, K->errsize, "%s: out of memory", K->in.name);
		rc = OPSCOPE_ENOMEM;
	}
	if (rc)
		m->files[K->fi].complete = false, m->complete = false;
	return rc;
}

int kineto_load_file(struct model *m, const char *path, char *err, size_t errsize)
{
	struct kimport K;
	memset(&K, 0, sizeof(K));
	K.err = err;
	K.errsize = errsize;
	int rc = json_in_open_file(&K.in, path, err, errsize);
	if (rc)
		return rc;
	rc = kimport_run(m, &K, "chrome-json");
	kfree(&K);
	return rc;
}

int kineto_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		    size_t errsize)
{
	struct kimport K;
	memset(&K, 0, sizeof(K));
	K.err = err;
	K.errsize = errsize;
	json_in_open_mem(&K.in, name, data, size);
	int rc = kimport_run(m, &K, "chrome-json");
	kfree(&K);
	return rc;
}

bool kineto_sniff(const unsigned char *head, size_t n)
{
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return true; /* gzip: a gzip'd JSON trace */
	size_t i = 0;
	if (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf)
		i = 3; /* byte order mark */
	while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
		i++;
	return i < n && (head[i] == '{' || head[i] == '[');
}
