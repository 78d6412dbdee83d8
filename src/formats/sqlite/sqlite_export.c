/*
 * sqlite_export.c: export the model as one SQLite database (schema: docs/sqlite-schema.md), for
 * queries with the sqlite3 shell, pandas or any SQL tool.
 *
 * Everything goes in one transaction through prepared statements, with the journal and
 * fsyncs off while writing (the CLI writes to a temporary file and renames it when done, so
 * a crash leaves no half database under the final name); indexes are built at the end.
 * Strings that are not valid UTF-8 are stored with U+FFFD in place of the bad bytes, so that
 * every TEXT value is valid.
 */
#include "formats/sqlite/sqlite_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "opscope/opscope.h"

#include "opscope_config.h"
#include "util/bytes.h"
#include "util/escape.h"

static const char schema[] =
	"PRAGMA journal_mode=OFF;"
	"PRAGMA synchronous=OFF;"
	"PRAGMA page_size=65536;"
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT, format TEXT, pid INTEGER,"
	" complete INTEGER, events INTEGER, dropped INTEGER, file_bytes INTEGER);"
	"CREATE TABLE strings(id INTEGER PRIMARY KEY, value TEXT);"
	"CREATE TABLE tracks(id INTEGER PRIMARY KEY, file_id INTEGER, kind TEXT, pid INTEGER,"
	" tid INTEGER, name_id INTEGER, dropped INTEGER);"
	"CREATE TABLE events(id INTEGER PRIMARY KEY, track_id INTEGER, kind TEXT,"
	" start_ns INTEGER, dur_ns INTEGER, end_ns INTEGER, name_id INTEGER, category TEXT,"
	" depth INTEGER, value REAL);"
	"CREATE TABLE args(event_id INTEGER, key_id INTEGER, type TEXT, int_value INTEGER,"
	" real_value REAL, str_id INTEGER);"
	"CREATE TABLE flows(id INTEGER PRIMARY KEY, flow_id INTEGER, from_track INTEGER,"
	" from_ns INTEGER, from_event INTEGER, to_track INTEGER, to_ns INTEGER,"
	" to_event INTEGER);"
	"CREATE TABLE process_meta(pid INTEGER, key TEXT, value TEXT);"
	"CREATE VIEW events_named AS SELECT e.id, e.track_id, t.pid, t.tid, t.kind AS track_kind,"
	" e.kind, e.category, s.value AS name, e.start_ns, e.dur_ns, e.end_ns, e.depth, e.value"
	" FROM events e JOIN tracks t ON t.id = e.track_id LEFT JOIN strings s ON s.id = e.name_id;"
	"CREATE VIEW args_named AS SELECT a.event_id, k.value AS key, a.type, a.int_value,"
	" a.real_value, v.value AS str_value FROM args a JOIN strings k ON k.id = a.key_id"
	" LEFT JOIN strings v ON v.id = a.str_id;"
	"BEGIN;";

static const char indexes[] = "CREATE INDEX events_track_start ON events(track_id, start_ns);"
			      "CREATE INDEX events_name ON events(name_id);"
			      "CREATE INDEX args_event ON args(event_id);"
			      "COMMIT;";

struct sq {
	sqlite3 *db;
	sqlite3_stmt *str, *track, *event, *arg, *flow, *meta, *file, *pmeta;
	struct buf fix; /* scratch for UTF-8 repairs */
	char *err;
	size_t errsize;
	int rc;
};

static int sq_fail(struct sq *q, const char *what)
{
	if (!q->rc) {
		snprintf(q->err, q->errsize, "sqlite: %s: %s", what, sqlite3_errmsg(q->db));
		q->rc = OPSCOPE_EIO;
	}
	return q->rc;
}

/* Bind s[0..n) as valid UTF-8 text (bad bytes as U+FFFD): as it is when valid, the common
 * case, else repaired in q->fix. */
static void bind_text(struct sq *q, sqlite3_stmt *st, int col, const char *s, size_t n)
{
	if (utf8_valid(s, n)) {
		sqlite3_bind_text(st, col, s, (int)n, SQLITE_STATIC);
		return;
	}
	buf_clear(&q->fix);
	q->fix.oom = false;
	escape_utf8(esc_sink_buf(&q->fix), s, n);
	if (q->fix.oom)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_text(st, col, (const char *)q->fix.data, (int)q->fix.len,
				  SQLITE_TRANSIENT);
}

static void step(struct sq *q, sqlite3_stmt *st, const char *what)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		sq_fail(q, what);
	sqlite3_reset(st);
}

static const char *track_kind(uint32_t kind)
{
	return kind == MODEL_TRACK_ASYNC    ? "async"
	       : kind == MODEL_TRACK_DEVICE ? "device"
					    : "thread";
}

static void put_args(struct sq *q, const struct model *m, int64_t event, uint64_t first, uint32_t n)
{
	static const char *const types[] = { "?", "i64", "u64", "f64", "str", "json" };
	for (uint64_t a = first; a < first + n && a < m->nargs && !q->rc; a++) {
		uint8_t t = m->args.type[a];
		uint64_t bits = m->args.bits[a];
		sqlite3_bind_int64(q->arg, 1, event);
		sqlite3_bind_int64(q->arg, 2, m->args.key[a]);
		sqlite3_bind_text(q->arg, 3, t < 6 ? types[t] : "?", -1, SQLITE_STATIC);
		sqlite3_bind_null(q->arg, 4);
		sqlite3_bind_null(q->arg, 5);
		sqlite3_bind_null(q->arg, 6);
		if (t == MODEL_ARG_I64 || t == MODEL_ARG_U64)
			sqlite3_bind_int64(q->arg, 4, (int64_t)bits); /* u64 above 2^63 wraps */
		else if (t == MODEL_ARG_F64)
			sqlite3_bind_double(q->arg, 5, f64_from_bits(bits));
		else
			sqlite3_bind_int64(q->arg, 6, (int64_t)bits);
		step(q, q->arg, "args");
	}
}

static int prepare(struct sq *q, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(q->db, sql, -1, st, NULL) != SQLITE_OK)
		return sq_fail(q, "prepare");
	return 0;
}

static void write_all(struct sq *q, const struct model *m)
{
	/* meta and files */
	const char *kv[][2] = { { "format", "opscope-sqlite" },
				{ "format_version", "1" },
				{ "generator", "opscope " OPSCOPE_VERSION_STRING },
				{ "time_unit", "ns" } };
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		sqlite3_bind_text(q->meta, 1, kv[i][0], -1, SQLITE_STATIC);
		sqlite3_bind_text(q->meta, 2, kv[i][1], -1, SQLITE_STATIC);
		step(q, q->meta, "meta");
	}
	for (uint32_t f = 0; f < m->nfiles && !q->rc; f++) {
		const struct model_file *mf = &m->files[f];
		sqlite3_bind_int64(q->file, 1, f);
		bind_text(q, q->file, 2, model_str(m, mf->path), model_strlen(m, mf->path));
		bind_text(q, q->file, 3, model_str(m, mf->format), model_strlen(m, mf->format));
		sqlite3_bind_int64(q->file, 4, mf->pid);
		sqlite3_bind_int(q->file, 5, mf->complete);
		sqlite3_bind_int64(q->file, 6, (int64_t)mf->events);
		sqlite3_bind_int64(q->file, 7, (int64_t)mf->dropped);
		sqlite3_bind_int64(q->file, 8, (int64_t)mf->file_bytes);
		step(q, q->file, "files");
	}
	for (uint32_t i = 0; i < m->nmeta && !q->rc; i++) {
		const struct model_meta *mm = &m->meta[i];
		sqlite3_bind_int64(q->pmeta, 1, mm->pid);
		bind_text(q, q->pmeta, 2, model_str(m, mm->key), model_strlen(m, mm->key));
		bind_text(q, q->pmeta, 3, model_str(m, mm->value), model_strlen(m, mm->value));
		step(q, q->pmeta, "process_meta");
	}
	for (uint32_t s = 0; s < m->nstrings && !q->rc; s++) {
		sqlite3_bind_int64(q->str, 1, s);
		bind_text(q, q->str, 2, model_str(m, s), model_strlen(m, s));
		step(q, q->str, "strings");
	}
	/* events: per track, ranges then instants then counters; ids in that order */
	int64_t id = 0;
	int64_t *first_id = malloc((m->ntracks ? m->ntracks : 1) * sizeof(*first_id));
	if (!first_id) {
		snprintf(q->err, q->errsize, "out of memory");
		q->rc = OPSCOPE_ENOMEM;
		return;
	}
	for (uint32_t t = 0; t < m->ntracks && !q->rc; t++) {
		const struct model_track *tr = &m->tracks[t];
		sqlite3_bind_int64(q->track, 1, t);
		sqlite3_bind_int64(q->track, 2, tr->file);
		sqlite3_bind_text(q->track, 3, track_kind(tr->kind), -1, SQLITE_STATIC);
		sqlite3_bind_int64(q->track, 4, tr->pid);
		sqlite3_bind_int64(q->track, 5, (int64_t)tr->tid);
		sqlite3_bind_int64(q->track, 6, tr->name);
		sqlite3_bind_int64(q->track, 7, (int64_t)tr->dropped);
		step(q, q->track, "tracks");
		first_id[t] = id;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges && !q->rc; i++, id++) {
			sqlite3_bind_int64(q->event, 1, id);
			sqlite3_bind_int64(q->event, 2, t);
			sqlite3_bind_text(q->event, 3, "range", -1, SQLITE_STATIC);
			sqlite3_bind_int64(q->event, 4, r->start_ns[i]);
			sqlite3_bind_int64(q->event, 5, r->dur_ns[i]);
			sqlite3_bind_int64(q->event, 6, r->start_ns[i] + r->dur_ns[i]);
			sqlite3_bind_int64(q->event, 7, r->name[i]);
			sqlite3_bind_text(q->event, 8, opscope_category_name(r->category[i]), -1,
					  SQLITE_STATIC);
			sqlite3_bind_int64(q->event, 9, r->depth[i]);
			sqlite3_bind_null(q->event, 10);
			step(q, q->event, "events");
			put_args(q, m, id, r->first_arg[i], r->nargs[i]);
		}
		const struct model_instants *in = &tr->instants;
		for (uint64_t i = 0; i < tr->ninstants && !q->rc; i++, id++) {
			sqlite3_bind_int64(q->event, 1, id);
			sqlite3_bind_int64(q->event, 2, t);
			sqlite3_bind_text(q->event, 3, "instant", -1, SQLITE_STATIC);
			sqlite3_bind_int64(q->event, 4, in->ts_ns[i]);
			sqlite3_bind_null(q->event, 5);
			sqlite3_bind_int64(q->event, 6, in->ts_ns[i]);
			sqlite3_bind_int64(q->event, 7, in->name[i]);
			sqlite3_bind_text(q->event, 8, opscope_category_name(in->category[i]), -1,
					  SQLITE_STATIC);
			sqlite3_bind_null(q->event, 9);
			sqlite3_bind_null(q->event, 10);
			step(q, q->event, "events");
			put_args(q, m, id, in->first_arg[i], in->nargs[i]);
		}
		const struct model_counters *co = &tr->counters;
		for (uint64_t i = 0; i < tr->ncounters && !q->rc; i++, id++) {
			sqlite3_bind_int64(q->event, 1, id);
			sqlite3_bind_int64(q->event, 2, t);
			sqlite3_bind_text(q->event, 3, "counter", -1, SQLITE_STATIC);
			sqlite3_bind_int64(q->event, 4, co->ts_ns[i]);
			sqlite3_bind_null(q->event, 5);
			sqlite3_bind_int64(q->event, 6, co->ts_ns[i]);
			sqlite3_bind_int64(q->event, 7, co->name[i]);
			sqlite3_bind_null(q->event, 8);
			sqlite3_bind_null(q->event, 9);
			sqlite3_bind_double(q->event, 10, co->value[i]); /* NaN becomes NULL */
			step(q, q->event, "events");
		}
	}
	for (uint64_t f = 0; f < m->nflows && !q->rc; f++) {
		const struct model_flow *fl = &m->flows[f];
		sqlite3_bind_int64(q->flow, 1, (int64_t)f);
		sqlite3_bind_int64(q->flow, 2, (int64_t)fl->id);
		for (int end = 0; end < 2; end++) {
			uint32_t t = end ? fl->to_track : fl->from_track;
			uint64_t r = end ? fl->to_range : fl->from_range;
			int base = 3 + end * 3;
			if (t >= m->ntracks) {
				sqlite3_bind_null(q->flow, base);
				sqlite3_bind_null(q->flow, base + 1);
				sqlite3_bind_null(q->flow, base + 2);
				continue;
			}
			sqlite3_bind_int64(q->flow, base, t);
			sqlite3_bind_int64(q->flow, base + 1, end ? fl->to_ns : fl->from_ns);
			if (r < m->tracks[t].nranges)
				sqlite3_bind_int64(q->flow, base + 2, first_id[t] + (int64_t)r);
			else
				sqlite3_bind_null(q->flow, base + 2);
		}
		step(q, q->flow, "flows");
	}
	free(first_id);
}

int sqlite_export(const struct model *m, const char *path, char *err, size_t errsize)
{
	struct sq q;
	memset(&q, 0, sizeof(q));
	q.err = err;
	q.errsize = errsize;
	remove(path); /* a fresh database, never rows appended to an old one */
	if (sqlite3_open_v2(path, &q.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errsize, "sqlite: cannot create %s: %s", path,
			 q.db ? sqlite3_errmsg(q.db) : "out of memory");
		sqlite3_close(q.db);
		return OPSCOPE_EOPEN;
	}
	if (sqlite3_exec(q.db, schema, NULL, NULL, NULL) != SQLITE_OK)
		sq_fail(&q, "schema");
	if (!q.rc && !prepare(&q, "INSERT INTO strings VALUES(?,?)", &q.str) &&
	    !prepare(&q, "INSERT INTO tracks VALUES(?,?,?,?,?,?,?)", &q.track) &&
	    !prepare(&q, "INSERT INTO events VALUES(?,?,?,?,?,?,?,?,?,?)", &q.event) &&
	    !prepare(&q, "INSERT INTO args VALUES(?,?,?,?,?,?)", &q.arg) &&
	    !prepare(&q, "INSERT INTO flows VALUES(?,?,?,?,?,?,?,?)", &q.flow) &&
	    !prepare(&q, "INSERT INTO meta VALUES(?,?)", &q.meta) &&
	    !prepare(&q, "INSERT INTO files VALUES(?,?,?,?,?,?,?,?)", &q.file) &&
	    !prepare(&q, "INSERT INTO process_meta VALUES(?,?,?)", &q.pmeta))
		write_all(&q, m);
	sqlite3_stmt *all[] = { q.str, q.track, q.event, q.arg, q.flow, q.meta, q.file, q.pmeta };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		sqlite3_finalize(all[i]);
	if (!q.rc && sqlite3_exec(q.db, indexes, NULL, NULL, NULL) != SQLITE_OK)
		sq_fail(&q, "indexes");
	if (sqlite3_close(q.db) != SQLITE_OK && !q.rc) {
		snprintf(err, errsize, "sqlite: closing %s failed", path);
		q.rc = OPSCOPE_EIO;
	}
	buf_free(&q.fix);
	return q.rc;
}
