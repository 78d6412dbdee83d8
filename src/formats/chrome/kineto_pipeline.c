/*
 * kineto_pipeline.c: the batches and windows between the parser and the committer, and the
 * import from start to finish (kineto_load_file, kineto_load_mem). Parsed events travel in
 * batches (struct kbatch): on one thread each batch is committed as soon as it is full; on
 * two, full batches wait in a queue, in text order, for the committer in the caller's thread,
 * and go back to a pool once committed. A batch's strings point into the input window it was
 * parsed from, which it pins: the parser of a file reads on into another window (struct
 * kwindow) until the committer is done with it. How to parse (one thread, a parser thread, or
 * chunks on several: kineto_parallel.c) is chosen by the input's size and kind.
 *
 * Invariants: batches are committed in text order; a window is never refilled while a batch
 * that points into it waits; memory is bounded by KBATCHES batches and KWINDOWS windows (the
 * parallel parser by KQUEUED_MAX queued batches); the model keeps what was read before an
 * error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/chrome/chrome.h"
#include "formats/chrome/kineto.h"
#include "util/parallel.h"

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

/* Give back batches (a list linked by next). Under K->mu when threaded. */
void kpool_put(struct kimport *K, struct kbatch *first)
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
struct kbatch *kbatch_take(struct kimport *K, bool limited)
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
void kqueue_push(struct kimport *K, struct kbatch *first, struct kbatch *last)
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
int ksink_ship(struct kimport *K, struct ksink *s, bool take_next)
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
int krefill(struct kimport *K)
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
/* The import */

static void kfree(struct kimport *K)
{
	json_in_close(&K->in);
	for (int i = 0; i < KWINDOWS; i++)
		free(K->windows[i].buf);
	free(K->track_keys);
	hindex_free(&K->track_index);
	free(K->flows);
	hindex_free(&K->open_flows);
	hmap_free(&K->classes);
	free(K->names);
	free(K->open);
	free(K->aopen);
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
	kpar_free(K->par);
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

/* The committer's side of the threaded pipeline: commit the queued batches in order until
 * the parsers are done. */
void kcommit_loop(struct kimport *K)
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
	if (pthread_mutex_init(&K->mu, NULL) != 0)
		goto sync;
	if (pthread_cond_init(&K->cv, NULL) != 0) {
		pthread_mutex_destroy(&K->mu);
		goto sync;
	}
	int rc;
	pthread_t th;
	if (mode == KM_PARALLEL) {
		rc = kparse_parallel(K, chunk);
	} else if (pthread_create(&th, NULL, kparse_thread, K) != 0) {
		pthread_cond_destroy(&K->cv);
		pthread_mutex_destroy(&K->mu);
		goto sync;
	} else {
		kcommit_loop(K);
		pthread_join(th, NULL);
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
