/*
 * kineto_parallel.c: parsing a text in one piece (a mapped file, the caller's memory) on
 * several threads: cut into chunks where an event likely starts, parsed on speculation by
 * idle workers, and resolved in text order against the one parse that goes in order (the
 * frontier), so that the events, errors and offsets are those of one parser reading the whole
 * text. The committer (kineto_pipeline.c) takes the batches in order as they are resolved;
 * idle workers fault in the model's columns ahead of it.
 *
 * Invariants: everything of struct kpar is under K->mu; chunks are resolved in text order and
 * what a chunk parsed is used only where the in-order parse stands exactly at its start,
 * between two events; speculation runs at most KAHEAD chunks ahead and waits while
 * KQUEUED_MAX batches wait for the committer, which bounds memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/chrome/kineto.h"
#include "util/parallel.h"

#define KARG_BYTES   24 /* argument room reserved per byte of text: 1 per this many */
#define KPREFAULT    ((uint64_t)4 << 20) /* bytes of a column faulted in ahead of the committer */
#define KAHEAD	     3
#define KWORKERS_MAX 4

enum kchunk_state { KC_FREE, KC_BUSY, KC_PARSED };

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
void kpar_columns(struct kimport *K)
{
	struct kpar *X = K->par;
	struct model *m = K->m;
	uint64_t want = 3 + 9 * (uint64_t)(m->ntracks - K->first_track);
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
		KPCOL(r->correlation, tr->nranges, tr->nranges_cap); /* NULL: nothing to do */
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
		if (!e->col)
			continue; /* a correlation column not made (yet) */
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

/* Parse a text in one piece on several workers (one per CPU, 2 to KWORKERS_MAX) while this
 * thread builds the model. */
int kparse_parallel(struct kimport *K, size_t chunk)
{
	unsigned cpus = parallel_cpus();
	uint32_t nworkers = cpus < 2 ? 2 : cpus > KWORKERS_MAX ? KWORKERS_MAX : cpus;
	pthread_t th[KWORKERS_MAX];
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

void kpar_free(struct kpar *X)
{
	if (X) {
		free(X->chunks);
		free(X->cols);
	}
	free(X);
}
