/*
 * test_sqlite.c: the SQLite exporter (src/formats/sqlite/sqlite_export.c) on a model built by hand, read
 * back through the sqlite3 C API: every table's rows, ids that tie events, args and flows
 * together, a hostile name stored as valid UTF-8 text, JSON-valued args, the views.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "formats/sqlite/sqlite_export.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"

/* The first column of the first row of a query, as text ("" when there is none). */
static const char *q1(sqlite3 *db, const char *sql)
{
	static char out[512];
	sqlite3_stmt *st;
	out[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(out, sizeof(out), "error: %s", sqlite3_errmsg(db));
		return out;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, sizeof(out), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return out;
}

TEST(roundtrip)
{
	struct model *m = model_new();
	model_add_file(m, "trace.json", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 42, 7, S(m, "main"));
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 3, 0);
	uint64_t r0 = model_add_range(m, h, 1000, 500, S(m, "step"), OPSCOPE_CAT_PROFILE_STEP, 0);
	uint64_t r1 =
		model_add_range(m, h, 1100, 100, S(m, "q\"uote\n\xff"), OPSCOPE_CAT_OPERATOR, 1);
	uint64_t a = model_add_arg(m, S(m, "correlation"), MODEL_ARG_I64, 5);
	model_add_arg(m, S(m, "dims"), MODEL_ARG_JSON, S(m, "[[2,3]]"));
	double f = 2.5;
	uint64_t bits;
	memcpy(&bits, &f, 8);
	model_add_arg(m, S(m, "ratio"), MODEL_ARG_F64, bits);
	m->tracks[h].ranges.first_arg[r1] = a;
	m->tracks[h].ranges.nargs[r1] = 3;
	model_add_range(m, d, 1150, 40, S(m, "kern"), OPSCOPE_CAT_KERNEL, 0);
	model_add_instant(m, h, 1300, S(m, "mark"), OPSCOPE_CAT_USER_DEFINED);
	model_add_counter(m, h, 1400, S(m, "mem"), 64.0);
	model_add_flow(m, 5, h, 1110, d, 1160);
	model_resolve_flows(m, 0);
	model_set_meta(m, 42, S(m, "rank"), S(m, "3"));
	(void)r0;

	char path[] = "/tmp/opscope-test-XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	char err[256] = "";
	REQUIRE(sqlite_export(m, path, err, sizeof(err)) == 0);
	sqlite3 *db;
	REQUIRE(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	CHECK_STR(q1(db, "SELECT value FROM meta WHERE key='format'"), "opscope-sqlite");
	CHECK_STR(q1(db, "SELECT count(*) FROM events"), "5");
	CHECK_STR(q1(db, "SELECT count(*) FROM tracks WHERE kind='device' AND pid=0 AND tid=3"),
		  "1");
	CHECK_STR(
		q1(db,
		   "SELECT s.value FROM tracks t JOIN strings s ON s.id=t.name_id WHERE t.pid=42"),
		"main");
	/* the hostile name: valid UTF-8 (U+FFFD for the bad byte), quote and newline kept */
	CHECK_STR(q1(db, "SELECT name FROM events_named WHERE category='Operator'"),
		  "q\"uote\n\xef\xbf\xbd");
	CHECK_STR(q1(db, "SELECT dur_ns || ' ' || end_ns || ' ' || depth FROM events WHERE "
			 "category='Operator'"),
		  "100 1200 1");
	CHECK_STR(q1(db, "SELECT int_value FROM args_named WHERE key='correlation'"), "5");
	CHECK_STR(q1(db, "SELECT type || ' ' || str_value FROM args_named WHERE key='dims'"),
		  "json [[2,3]]");
	CHECK_STR(q1(db, "SELECT real_value FROM args_named WHERE key='ratio'"), "2.5");
	/* the args belong to the Operator event */
	CHECK_STR(q1(db, "SELECT count(*) FROM args a JOIN events e ON e.id=a.event_id WHERE "
			 "e.category='Operator'"),
		  "3");
	CHECK_STR(q1(db, "SELECT value FROM events WHERE kind='counter'"), "64.0");
	CHECK_STR(q1(db, "SELECT count(*) FROM events WHERE kind='instant' AND dur_ns IS NULL"),
		  "1");
	/* the flow leaves the Operator range and enters the kernel */
	CHECK_STR(q1(db, "SELECT a.name || '>' || b.name FROM flows f JOIN events_named a ON "
			 "a.id=f.from_event JOIN events_named b ON b.id=f.to_event"),
		  "q\"uote\n\xef\xbf\xbd>kern");
	CHECK_STR(q1(db, "SELECT value FROM process_meta WHERE pid=42 AND key='rank'"), "3");
	CHECK_STR(q1(db, "SELECT path || ' ' || format FROM files"), "trace.json test");
	sqlite3_close(db);
	unlink(path);
	model_free(m);
}

/* An unwritable place: an error naming it, not a crash. */
TEST(unwritable)
{
	struct model *m = model_new();
	char err[256] = "";
	CHECK(sqlite_export(m, "/nonexistent/dir/x.sqlite", err, sizeof(err)) != 0);
	CHECK(strstr(err, "/nonexistent/dir/x.sqlite") != NULL);
	model_free(m);
}

TEST_MAIN(roundtrip, unwritable)
