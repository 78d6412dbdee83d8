/*
 * kineto_parse.c: the text of a Chrome trace-event JSON file to events: the top-level state
 * machine (an object with "traceEvents" and metadata members, or a bare array of events) and
 * the members of one event, written into the batch of a sink (struct ksink) with its strings
 * pointing into the text or the batch's scratch. It reads the model only for
 * model.keep_arg_keys; what the events mean is kineto_meaning.c's.
 *
 * Invariants: a step that runs off the end of the text (JSON_MORE) changes nothing that
 * matters, and is parsed again from its start after a refill; the same text gives the same
 * events and the same error (message and offset) however it is cut into windows or chunks.
 * The hot path (kstep, parse_event, parse_args) is in this one file, inlined into both loops.
 */
#include <stdio.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/chrome/kineto.h"

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

/* The bound of a time (ts, dur) in ns: within +-2^61 ns (73 years around 0: ns since the
 * epoch up to 2043), every end (ts + dur) and every difference of two times stays inside
 * int64; a file with times beyond would give negative step durations. */
#define KINETO_TIME_MAX (INT64_C(1) << 61)

static int parse_time(struct json_cur *c, int64_t *ns, const char *key_msg)
{
	int rc = json_ws(c);
	if (rc)
		return rc;
	const char *at = c->p;
	if (!json_us_fast(c, ns)) {
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
	}
	if (*ns > KINETO_TIME_MAX || *ns < -KINETO_TIME_MAX) {
		c->err = "time out of range: beyond 2^61 ns (73 years) from 0, where step times "
			 "would overflow";
		c->errpos = at;
		return JSON_ERR;
	}
	return JSON_OK;
}

/* The arguments go to the batch's array after those of the events before; with `keep`, only
 * those whose key it lists, and "correlation" or "correlation id" (the others are validated, as json_value_text
 * would, and skipped). */
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
		/* "correlation" (Paddle: "correlation id") always: the model's correlation column
		 * is filled from it whether the argument is kept or not (commit_args) */
		if (keep && !keep_arg(keep, a->key) &&
		    !((a->key.len == 11 || a->key.len == 14) &&
		      memcmp(a->key.s, "correlation", 11) == 0)) {
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
/* The top level */

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
		if ((rc = ktop_member(K, c, key)) != 0)
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

int kerror(struct kimport *K, const char *at, const char *msg)
{
	snprintf(K->err, K->errsize, "%s: offset %llu%s: %s", K->in.name,
		 (unsigned long long)json_in_offset(&K->in, at),
		 K->in.gzipped ? " (uncompressed)" : "", msg);
	return strcmp(msg, "out of memory") == 0 ? OPSCOPE_ENOMEM : OPSCOPE_EFORMAT;
}

int kparse_all(struct kimport *K)
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

/* Parse [from, end) from state P into s. On speculation, stop where the state leaves the
 * events array. *stop: the start of the step that ran off the end of the range, or where the
 * parse stopped otherwise; P: the state there; an error's message and place in *err. */
enum kstop kparse_range(struct kimport *K, struct kparse *P, const char *from, const char *end,
			bool spec, struct ksink *s, const char **stop, const char **err,
			const char **errpos)
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
