/*
 * kineto.h: the inside of the importer of Chrome trace-event JSON, as PyTorch's profiler
 * (Kineto) writes it and as chrome://tracing / Perfetto read it (entry points: chrome.h).
 * Private to src/formats/chrome/: what the four parts share.
 *
 * The text is streamed (json.h): events are parsed in batches, then committed to the model, so
 * memory is the model plus a few windows of a few MB. What the model gets (docs/import-kineto.md
 * is the full contract):
 *   - X events become ranges; B/E pairs too. GPU events (kernel, gpu_memcpy, gpu_memset,
 *     gpu_user_annotation, ...) go to device tracks (device, stream: pid, tid), everything
 *     else to host thread tracks. Depths come from containment (model_nest_track).
 *   - Kineto categories map onto ours (cpu_op -> Operator, cuda_runtime -> CudaRuntime,
 *     kernel -> Kernel or Communication for NCCL kernels, ...), and a few names mark phases
 *     (ProfilerStep#N -> ProfileStep, enumerate(DataLoader)... -> Dataloader, ...).
 *   - Paddle's categories are our names (ProfileStep, Forward, ...: the same words), and its
 *     "name[1.234 ms]" loses the duration; our own export (thread_name events carrying
 *     "opscope_track") is read back exactly: category by name, track kind as marked, range
 *     flags, async b/e pairs and per-process metadata (otherData.processes) restored.
 *   - every member of "args" is kept as a typed argument ("correlation" links a GPU event to
 *     the runtime call that launched it); arrays and objects as compact JSON text.
 *   - i/I instants, C counters, s/f flows (ac2g launches, fwdbwd), M names.
 *   - times: µs with up to 3 decimals, converted exactly to ns; "baseTimeNanoseconds"
 *     (written after the events) is added at the end.
 *
 * The parts, one job each, tied by struct kimport (one import):
 *   kineto_parse.c     the text to events: the top-level state machine and one event's
 *                      members, into batches (struct kbatch); no model access
 *   kineto_meaning.c   what events mean: tracks, categories, ranges, flows and names,
 *                      committed to the model a batch at a time, and the finish
 *   kineto_metadata.c  the top-level members besides the events (distributedInfo,
 *                      deviceProperties, otherData, scalars)
 *   kineto_pipeline.c  batches and windows between the parser and the committer, on one
 *                      thread or two; the entry points
 *   kineto_parallel.c  a text in one piece cut into chunks parsed on several threads on
 *                      speculation, giving the events one parser would (struct kpar)
 * Names shared between the parts start with k (kbatch_, ksink_, kparse_, kpar_, ...).
 */
#ifndef OPSCOPE_FORMATS_CHROME_KINETO_H
#define OPSCOPE_FORMATS_CHROME_KINETO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <pthread.h>

#include "formats/chrome/json.h"
#include "model/model.h"
#include "util/grow.h"
#include "util/hashmap.h"

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

/* The model track of a (pid, tid, kind), indexed by kimport.track_index. */
struct ktrack_key {
	uint64_t pid, tid; /* keys as normalised by kid_key */
	uint32_t kind;	   /* enum model_track_kind, or KTRACK_HINT */
	uint32_t track;	   /* KTRACK_HINT: the kind the track has */
};

/* A key kind: the track kind our own export wrote for (pid, tid) ("opscope_track" of its
 * thread_name), which decides the kind of the track when the events come. */
#define KTRACK_HINT 3u

/* A flow whose ends wait for the tracks to be complete: paired by (category, id) as the
 * events come, resolved to tracks at the end. */
struct kflow {
	uint64_t id;
	uint32_t cat;
	bool has_from, has_to;
	uint64_t from_pid, from_tid, to_pid, to_tid;
	int64_t from_ts, to_ts;
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
	int64_t pid; /* the process it describes (our export's otherData), -1: the main one */
};

/* Open B events of a track. */
struct kopen {
	uint32_t track;
	uint64_t range;
};

/* Open async ranges ('b' of our export, waiting for the 'e' of the same id). */
struct kopen_async {
	uint64_t id; /* the events' "id" */
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

	struct ktrack_key *track_keys;
	uint32_t ntrack_keys, track_keys_cap;
	struct hindex track_index; /* track_keys by (pid, tid, kind) */

	struct kflow *flows;
	uint64_t nflows, flows_cap;
	/* flows still missing an end, by (category, id): a few at a time (Kineto writes a
	 * launch's two ends close together), so the index stays small enough for the cache */
	struct hindex open_flows;
	struct kcache_entry cache[KCACHE_SIZE];
	struct hmap classes; /* memo of classify(): category id << 32 | name id -> class_memo */
	struct kname *names;
	uint64_t nnames, names_cap;
	struct kopen *open;
	uint64_t nopen, open_cap;
	struct kopen_async *aopen; /* our export's async ranges not closed yet */
	uint64_t naopen, aopen_cap;
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
	struct kpar *par; /* parsing in chunks (kineto_parallel.c's own), or NULL */

	/* our own export (chrome_export.c) is being read back: its thread_name events carry
	 * "opscope_track", its "cat" is our category's name, range flags are args */
	bool opscope_export;

	int64_t base_ns;
	bool events_seen;
	uint64_t events, skipped, unmatched_ends;
};

/* Where the top-level state machine (kstep in kineto_parse.c) stands. */
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

/* How a parse of a range stopped (kparse_range). */
enum kstop {
	KSTOP_RANGE_END,  /* it needs text past the end of its range (or ended there) */
	KSTOP_LEFT_ARRAY, /* on speculation: the state left the events array */
	KSTOP_FULL,	  /* on speculation: KSPEC_BATCHES are full (memory stays bounded) */
	KSTOP_ERROR,
};

#define KCHUNK_BYTES ((size_t)2 << 20)	 /* chunks of a text parsed in parallel: at most */
#define KCHUNK_MIN   ((size_t)256 << 10) /* and at least */

/* Is the span the literal? */
static inline bool span_is(struct json_span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && memcmp(s.s, lit, n) == 0;
}

/* Is `key` in the NULL-terminated list? */
static inline bool keep_arg(const char *const *keys, struct json_span key)
{
	for (; *keys; keys++) /* the first byte first: most keys differ there */
		if (key.len && key.s[0] == (*keys)[0] && span_is(key, *keys))
			return true;
	return false;
}

/* kineto_parse.c */

/* Parse the whole input in order, window after window, into K->seq; 0, or an error in
 * K->err. */
int kparse_all(struct kimport *K);
/* Parse [from, end) from state P into s; on speculation (spec), stop where the state leaves
 * the events array. See kineto_parse.c. */
enum kstop kparse_range(struct kimport *K, struct kparse *P, const char *from, const char *end,
			bool spec, struct ksink *s, const char **stop, const char **err,
			const char **errpos);
/* Put a parse error at `at` in K->err; OPSCOPE_ENOMEM or OPSCOPE_EFORMAT. */
int kerror(struct kimport *K, const char *at, const char *msg);

/* kineto_meaning.c */

/* Commit a batch's events to the model in order; false when out of memory. */
bool kbatch_commit(struct kimport *K, struct kbatch *b);
/* Everything is committed: close what is open, shift, nest, name, add the flows. */
void kfinish(struct kimport *K);

/* kineto_metadata.c */

/* A top-level member other than traceEvents (metadata, baseTimeNanoseconds), parsed. */
int ktop_member(struct kimport *K, struct json_cur *c, struct json_span key);

/* kineto_pipeline.c */

/* An empty batch (see kineto_pipeline.c); NULL when out of memory or the committer failed. */
struct kbatch *kbatch_take(struct kimport *K, bool limited);
/* Give back batches (a list linked by next). Under K->mu when threaded. */
void kpool_put(struct kimport *K, struct kbatch *first);
/* Append batches first..last to the committer's queue. Under K->mu. */
void kqueue_push(struct kimport *K, struct kbatch *first, struct kbatch *last);
/* The sink's batch is full (or the parse is over): hand it on. -1 when out of memory. */
int ksink_ship(struct kimport *K, struct ksink *s, bool take_next);
/* Read on, keeping the text from K->in.pos on. 1: more text, 0: the end, < 0: an error. */
int krefill(struct kimport *K);
/* Commit the queued batches in order until the parsers are done (the caller's thread). */
void kcommit_loop(struct kimport *K);

/* kineto_parallel.c */

/* Parse a text in one piece in chunks of about `chunk` bytes on worker threads while this
 * thread commits; 0, or an error in K->err. */
int kparse_parallel(struct kimport *K, size_t chunk);
/* Note where the model's growing columns are, for the workers to fault in ahead. Under
 * K->mu, on the committer's thread. */
void kpar_columns(struct kimport *K);
/* Free the chunks' state (NULL: nothing). */
void kpar_free(struct kpar *X);

#endif
