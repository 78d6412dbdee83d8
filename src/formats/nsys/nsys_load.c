/*
 * nsys_load.c: the importer of Nsight Systems SQLite exports (`nsys export --type sqlite`),
 * plain or gzip'd, into the same model the Kineto importer builds, so that every view treats
 * them alike (docs/import-nsys.md is the contract):
 *   - CUPTI kernels, copies and memsets become ranges on device tracks (device, stream), their
 *     work launched by the process of globalPid, categories and names as Kineto's (Kernel, or
 *     Communication for NCCL kernels; "Memcpy HtoD (Pageable -> Device)"; "Memset (Device)");
 *     synchronization records too, as Kineto's cuda_sync (UserDefined, not device work).
 *   - CUDA runtime and driver calls become ranges on their host thread (globalTid), with the
 *     correlation id that ties a kernel to the call that launched it (the model's correlation
 *     column, as Kineto's "correlation" argument) and a launch flow from call to kernel.
 *   - NVTX push/pop ranges go to their thread, start/end ranges to the process's async track,
 *     marks become instants; their text is inline or a StringIds id; the domain is an argument.
 *   - device properties (TARGET_INFO_GPU, else TARGET_INFO_CUDA_DEVICE) become the metadata
 *     "device.<id>.<key>" Kineto's deviceProperties give; export metadata, "nsys.*".
 * Times are nsys's session clock in ns, kept as they are.
 *
 * The schema changes between nsys versions, so nothing is assumed: the tables and columns
 * present are looked up (sqlite_master, pragma_table_info), each query names the columns that
 * exist and NULL for the others, and what was read is said in the metadata ("nsys.variant").
 * The database is deserialized read-only from memory (sqlite3_deserialize; a file is mapped
 * privately, not copied): one path for a file, a gzip'd file and bytes (the fuzzer), no
 * temporary file, nothing written anywhere.
 * Only tables are read (a view of the same name is not run), with triggers and an untrusted
 * schema off; SQLite's own checks catch a corrupt file, whose error becomes one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "opscope/opscope.h"

#include "formats/nsys/nsys.h"
#include "formats/pprof/pprof.h"
#include "util/grow.h"
#include "util/hashmap.h"

static const unsigned char sqlite_magic[16] = "SQLite format 3";

bool nsys_sniff(const unsigned char *head, size_t n)
{
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
		/* gzip: decompress what the head holds */
		unsigned char out[64];
		z_stream z;
		memset(&z, 0, sizeof(z));
		if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
			return false;
		z.next_in = (unsigned char *)head;
		z.avail_in = (uInt)n;
		z.next_out = out;
		z.avail_out = sizeof(out);
		int zr = inflate(&z, Z_SYNC_FLUSH);
		size_t got = sizeof(out) - z.avail_out;
		inflateEnd(&z);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			return false;
		return got >= sizeof(sqlite_magic) &&
		       memcmp(out, sqlite_magic, sizeof(sqlite_magic)) == 0;
	}
	return n >= sizeof(sqlite_magic) && memcmp(head, sqlite_magic, sizeof(sqlite_magic)) == 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The import's state */

/* A runtime or driver call, for the launch flow of the device work of its correlation id. */
struct nlaunch {
	uint32_t track;
	int64_t start_ns;
};

/* A range whose end nsys did not record (an NVTX range still open at the end). */
struct nopen {
	uint32_t track;
	uint64_t range;
};

/* A metadata entry of the whole file, given to its main process at the end. */
struct nmeta {
	uint32_t key, value; /* string ids */
};

#define NVARIANT_MAX 512

struct nimport {
	struct model *m;
	sqlite3 *db;
	const char *name;
	char *err;
	size_t errsize;
	int rc; /* the first error, 0 while none */
	uint32_t fi, first_track;
	uint64_t first_flow;

	struct hmap strings;  /* StringIds id -> model string id */
	struct hmap rt_names; /* StringIds id -> string id of the name without "_v3020" */
	struct hmap threads;  /* globalTid -> host track */
	struct hmap devices;  /* device << 56 | pid << 32 | stream -> device track */
	struct hmap asyncs;   /* pid -> async track */
	struct hmap launches; /* pid << 32 | correlationId -> index in launches_v */
	struct nlaunch *launches_v;
	uint64_t nlaunches, launches_cap;
	struct hmap domains;	/* NVTX domainId -> string id of its name */
	struct hmap copy_kinds; /* ENUM_CUDA_MEMCPY_OPER id -> label string id (when present) */
	struct hmap mem_kinds;	/* ENUM_CUDA_MEM_KIND id -> label string id (when present) */
	struct nopen *open;
	uint64_t nopen, open_cap;
	struct nmeta *meta;
	uint32_t nmeta, meta_cap;

	int64_t last_ns; /* the latest end of any range */
	uint64_t events, skipped;
	char variant[NVARIANT_MAX]; /* what was read, for "nsys.variant" */
	size_t variant_len;
};

/* Put the first error in N->err ("name: what"); returns N->rc. */
static int nfail(struct nimport *N, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int nfail(struct nimport *N, int rc, const char *fmt, ...)
{
	if (N->rc)
		return N->rc;
	N->rc = rc;
	int k = snprintf(N->err, N->errsize, "%s: ", N->name);
	if (k >= 0 && (size_t)k < N->errsize) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(N->err + k, N->errsize - (size_t)k, fmt, ap);
		va_end(ap);
	}
	/* one line, whatever SQLite's message held */
	for (char *p = N->err; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return rc;
}

static int noom(struct nimport *N)
{
	N->m->oom = true;
	return nfail(N, OPSCOPE_ENOMEM, "out of memory");
}

/* A SQLite error while reading `what`: corrupt (or not a database) is a format error. */
static int nsql(struct nimport *N, int src, const char *what)
{
	if (src == SQLITE_NOMEM)
		return noom(N);
	return nfail(N, OPSCOPE_EFORMAT, "%s: %s", what, sqlite3_errmsg(N->db));
}

static void variant_add(struct nimport *N, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void variant_add(struct nimport *N, const char *fmt, ...)
{
	if (N->variant_len >= sizeof(N->variant) - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(N->variant + N->variant_len, sizeof(N->variant) - N->variant_len, fmt,
			  ap);
	va_end(ap);
	if (k > 0)
		N->variant_len += (size_t)k;
	if (N->variant_len >= sizeof(N->variant))
		N->variant_len = sizeof(N->variant) - 1;
}

static uint32_t intern(struct nimport *N, const char *s)
{
	return model_intern(N->m, s, strlen(s));
}

/* ---------------------------------------------------------------------------------------- */
/* The schema: what is there */

/* 1 if `table` is a table of the database, 0 if not, < 0 on an error. */
static int has_table(struct nimport *N, const char *table)
{
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(
		N->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st,
		NULL);
	if (src != SQLITE_OK)
		return nsql(N, src, "reading the schema");
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	sqlite3_finalize(st);
	if (src == SQLITE_ROW)
		return 1;
	if (src == SQLITE_DONE)
		return 0;
	return nsql(N, src, "reading the schema");
}

/* 1 if `table` has column `col`, 0 if not, < 0 on an error. */
static int has_column(struct nimport *N, const char *table, const char *col)
{
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(N->db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2",
				     -1, &st, NULL);
	if (src != SQLITE_OK)
		return nsql(N, src, table);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	sqlite3_finalize(st);
	if (src == SQLITE_ROW)
		return 1;
	if (src == SQLITE_DONE)
		return 0;
	return nsql(N, src, table);
}

#define NCOLS_MAX 24

/* A query over one table naming the columns it has and NULL for the others. */
struct nquery {
	sqlite3_stmt *st;
	const char *table;
	bool have[NCOLS_MAX]; /* which of the asked columns the table has */
};

/*
 * Prepare SELECT cols FROM table [WHERE where] for the columns of `cols` (NULL-terminated, at
 * most NCOLS_MAX) the table has; the columns in `need` (a bit per column) must be there.
 * 1: prepared; 0: the table or a needed column is missing (nothing prepared, not an error);
 * < 0: an error. Table and column names are this file's constants, never the file's.
 */
static int nquery_open(struct nimport *N, struct nquery *q, const char *table,
		       const char *const *cols, uint32_t need, const char *where)
{
	memset(q, 0, sizeof(*q));
	q->table = table;
	int t = has_table(N, table);
	if (t <= 0)
		return t;
	char sql[1024];
	size_t len = (size_t)snprintf(sql, sizeof(sql), "SELECT ");
	for (int i = 0; cols[i] && i < NCOLS_MAX; i++) {
		int c = has_column(N, table, cols[i]);
		if (c < 0)
			return c;
		q->have[i] = c == 1;
		if (!c && (need >> i & 1))
			return 0;
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s%s%s%s", i ? ", " : "",
					c ? "\"" : "", c ? cols[i] : "NULL", c ? "\"" : "");
	}
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, " FROM \"%s\"%s%s", table,
				where ? " WHERE " : "", where ? where : "");
	if (len >= sizeof(sql))
		return nfail(N, OPSCOPE_EINVAL, "%s: query too long", table);
	int src = sqlite3_prepare_v2(N->db, sql, -1, &q->st, NULL);
	if (src != SQLITE_OK)
		return nsql(N, src, table);
	return 1;
}

/* The next row: 1, 0 at the end, < 0 on an error (the query is finalized then). */
static int nquery_step(struct nimport *N, struct nquery *q)
{
	int src = sqlite3_step(q->st);
	if (src == SQLITE_ROW)
		return 1;
	sqlite3_finalize(q->st);
	q->st = NULL;
	if (src == SQLITE_DONE)
		return 0;
	return nsql(N, src, q->table);
}

static void nquery_close(struct nquery *q)
{
	sqlite3_finalize(q->st); /* NULL: nothing */
	q->st = NULL;
}

/* Column i as an integer; false when NULL (or missing). */
static bool col_i64(struct nquery *q, int i, int64_t *v)
{
	if (sqlite3_column_type(q->st, i) == SQLITE_NULL)
		return false;
	*v = sqlite3_column_int64(q->st, i);
	return true;
}

static int64_t col_or(struct nquery *q, int i, int64_t dflt)
{
	int64_t v;
	return col_i64(q, i, &v) ? v : dflt;
}

/* Column i's bytes interned as they are (text that is not UTF-8 included: the renderers
 * escape what they print), 0 for NULL or "". */
static uint32_t col_str(struct nimport *N, struct nquery *q, int i)
{
	if (sqlite3_column_type(q->st, i) == SQLITE_NULL)
		return 0;
	const void *b = sqlite3_column_blob(q->st, i);
	int n = sqlite3_column_bytes(q->st, i);
	return b && n > 0 ? model_intern(N->m, b, (size_t)n) : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Strings, tracks, arguments */

/* The string of StringIds id `id` (0: none, or an id the table does not have). */
static uint32_t sid(struct nimport *N, int64_t id)
{
	uint64_t *v = hmap_find(&N->strings, (uint64_t)id);
	return v ? (uint32_t)*v : 0;
}

static int read_strings(struct nimport *N)
{
	static const char *const cols[] = { "id", "value", NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, "StringIds", cols, 3, NULL);
	if (rc <= 0)
		return rc;
	while ((rc = nquery_step(N, &q)) == 1) {
		int64_t id;
		if (!col_i64(&q, 0, &id))
			continue;
		if (!hmap_put(&N->strings, (uint64_t)id, col_str(N, &q, 1)))
			break;
	}
	nquery_close(&q);
	return rc == 1 ? noom(N) : rc;
}

/* A CUDA API name without its version suffix ("cudaMalloc_v3020" -> "cudaMalloc"), as nsys
 * stats and nvprof print it. */
static uint32_t api_name(struct nimport *N, int64_t id)
{
	uint64_t *v = hmap_find(&N->rt_names, (uint64_t)id);
	if (v)
		return (uint32_t)*v;
	uint32_t s = sid(N, id);
	const char *t = model_str(N->m, s);
	size_t n = model_strlen(N->m, s), k = n;
	while (k > 0 && t[k - 1] >= '0' && t[k - 1] <= '9')
		k--;
	uint32_t r = s;
	if (k >= 3 && k < n && t[k - 1] == 'v' && t[k - 2] == '_') {
		/* a copy: interning may move the model's text, which t points into */
		char *c = malloc(k - 2);
		r = c ? model_intern(N->m, memcpy(c, t, k - 2), k - 2) : 0;
		if (!c)
			N->m->oom = true;
		free(c);
	}
	if (!hmap_put(&N->rt_names, (uint64_t)id, r))
		N->m->oom = true;
	return r;
}

/* nsys's serialized global ids: the process id in bits 24..47, the thread id in 0..23. */
static uint32_t gid_pid(int64_t g)
{
	return (uint32_t)((uint64_t)g >> 24 & 0xffffff);
}

static uint32_t gid_tid(int64_t g)
{
	return (uint32_t)((uint64_t)g & 0xffffff);
}

static uint32_t thread_track(struct nimport *N, int64_t gtid)
{
	uint64_t *v = hmap_find(&N->threads, (uint64_t)gtid);
	if (v)
		return (uint32_t)*v;
	uint32_t t = model_add_track(N->m, MODEL_TRACK_THREAD, gid_pid(gtid), gid_tid(gtid), 0);
	if (t == MODEL_NO_TRACK || !hmap_put(&N->threads, (uint64_t)gtid, t))
		return MODEL_NO_TRACK;
	N->m->tracks[t].file_track = t - N->first_track;
	return t;
}

static uint32_t async_track(struct nimport *N, uint32_t pid)
{
	uint64_t *v = hmap_find(&N->asyncs, pid);
	if (v)
		return (uint32_t)*v;
	uint32_t t = model_add_track(N->m, MODEL_TRACK_ASYNC, pid, 0, intern(N, "async"));
	if (t == MODEL_NO_TRACK || !hmap_put(&N->asyncs, pid, t))
		return MODEL_NO_TRACK;
	N->m->tracks[t].file_track = t - N->first_track;
	return t;
}

/* The queue `stream` of `device`, its work launched by process pid. Streams are CUPTI's 32-bit
 * ids; 0xffffffff (a context-wide synchronization) is the track "context". */
static uint32_t device_track(struct nimport *N, int64_t device, int64_t stream, uint32_t pid)
{
	uint64_t key = ((uint64_t)device & 0xff) << 56 | (uint64_t)pid << 32 |
		       ((uint64_t)stream & 0xffffffff);
	uint64_t *v = hmap_find(&N->devices, key);
	if (v)
		return (uint32_t)*v;
	char name[32];
	if ((uint64_t)stream == 0xffffffffu)
		snprintf(name, sizeof(name), "context");
	else
		snprintf(name, sizeof(name), "stream %" PRId64, stream);
	uint32_t p = model_process(N->m, N->fi, pid);
	uint32_t t = model_add_device_track(N->m, (uint32_t)device, (uint64_t)stream & 0xffffffff,
					    p, intern(N, name));
	if (t == MODEL_NO_TRACK || !hmap_put(&N->devices, key, t))
		return MODEL_NO_TRACK;
	N->m->tracks[t].file_track = t - N->first_track;
	return t;
}

/* Arguments of one event, added in a row; keys the model does not keep are left out. */
struct nargs {
	uint64_t first;
	uint32_t n;
};

static bool kept(const struct model *m, const char *key)
{
	if (!m->keep_arg_keys)
		return true;
	for (const char *const *k = m->keep_arg_keys; *k; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

static void arg_add(struct nimport *N, struct nargs *a, const char *key, uint8_t type,
		    uint64_t bits)
{
	if (!kept(N->m, key))
		return;
	uint64_t i = model_add_arg(N->m, intern(N, key), type, bits);
	if (i == MODEL_NONE)
		return; /* m->oom is set */
	if (a->n++ == 0)
		a->first = i;
}

static void arg_i64(struct nimport *N, struct nargs *a, const char *key, int64_t v)
{
	arg_add(N, a, key, MODEL_ARG_I64, (uint64_t)v);
}

static void arg_str(struct nimport *N, struct nargs *a, const char *key, uint32_t s)
{
	arg_add(N, a, key, MODEL_ARG_STR, s);
}

/* Times nsys could have written (ns of a session: far from the ends of int64, which the
 * analyses add and subtract). A row outside is skipped and counted. */
#define NTIME_LIMIT  ((int64_t)1 << 62)
#define NROW_SKIPPED (MODEL_NONE - 1) /* add_range: the row was skipped */

static bool time_ok(int64_t t)
{
	return t > -NTIME_LIMIT && t < NTIME_LIMIT;
}

/* Add a range with its arguments; its index, NROW_SKIPPED for a time out of range, or
 * MODEL_NONE when out of memory. */
static uint64_t add_range(struct nimport *N, uint32_t t, int64_t start, int64_t end, uint32_t name,
			  uint8_t cat, const struct nargs *a, uint64_t corr)
{
	struct model *m = N->m;
	if (!time_ok(start) || !time_ok(end)) {
		N->skipped++;
		return NROW_SKIPPED;
	}
	int64_t dur = end > start ? end - start : 0;
	uint64_t r = model_add_range(m, t, start, dur, name, cat, 0);
	if (r == MODEL_NONE || (corr && !model_set_correlation(m, t, r, corr)))
		return MODEL_NONE;
	if (a && a->n) {
		m->tracks[t].ranges.first_arg[r] = a->first;
		m->tracks[t].ranges.nargs[r] = a->n;
	}
	m->tracks[t].events++;
	N->events++;
	if (start + dur > N->last_ns)
		N->last_ns = start + dur;
	return r;
}

/* ---------------------------------------------------------------------------------------- */
/* CUDA API calls */

static int read_api(struct nimport *N, const char *table, uint8_t cat)
{
	static const char *const cols[] = { "start",	     "end",    "globalTid",
					    "correlationId", "nameId", NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, table, cols, 1 | 2 | 16, NULL);
	if (rc <= 0)
		return rc;
	variant_add(N, " %s", table + strlen("CUPTI_ACTIVITY_KIND_"));
	while ((rc = nquery_step(N, &q)) == 1) {
		int64_t start = col_or(&q, 0, 0), end = col_or(&q, 1, start);
		int64_t gtid = col_or(&q, 2, 0), corr = col_or(&q, 3, 0);
		uint32_t t = thread_track(N, gtid);
		if (t == MODEL_NO_TRACK)
			break;
		struct nargs a = { 0 };
		if (corr)
			arg_i64(N, &a, "correlation", corr);
		uint64_t r = add_range(N, t, start, end, api_name(N, col_or(&q, 4, 0)), cat, &a,
				       (uint64_t)corr);
		if (r == NROW_SKIPPED)
			continue;
		if (r == MODEL_NONE)
			break;
		if (corr) {
			/* the runtime call first: a driver call of the same id does not replace it */
			uint64_t key =
				(uint64_t)gid_pid(gtid) << 32 | ((uint64_t)corr & 0xffffffff);
			if (!hmap_find(&N->launches, key)) {
				if (!grow_array((void **)&N->launches_v, sizeof(*N->launches_v),
						&N->launches_cap, N->nlaunches + 1) ||
				    !hmap_put(&N->launches, key, N->nlaunches))
					break;
				N->launches_v[N->nlaunches++] = (struct nlaunch){ t, start };
			}
		}
	}
	nquery_close(&q);
	if (rc == 1)
		return noom(N);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Device work */

/* The columns every CUPTI device record has, first in each query. */
enum { DC_START, DC_END, DC_DEVICE, DC_CONTEXT, DC_STREAM, DC_CORR, DC_PID, DC_FIRST_OWN };
#define DC_NEED (1u << DC_START | 1u << DC_END | 1u << DC_DEVICE | 1u << DC_STREAM)

/* Add a device record at the query's row: its track, range, common arguments and launch
 * flow. The caller's own arguments follow in *a (started here). */
static uint64_t device_range(struct nimport *N, struct nquery *q, uint32_t name, uint8_t cat,
			     struct nargs *a, bool link, uint32_t *track)
{
	int64_t start = col_or(q, DC_START, 0), end = col_or(q, DC_END, start);
	int64_t dev = col_or(q, DC_DEVICE, 0), stream = col_or(q, DC_STREAM, 0);
	int64_t corr = col_or(q, DC_CORR, 0);
	uint32_t pid = gid_pid(col_or(q, DC_PID, 0));
	if (!time_ok(start) || !time_ok(end)) {
		N->skipped++;
		return NROW_SKIPPED;
	}
	uint32_t t = device_track(N, dev, stream, pid);
	*track = t;
	if (t == MODEL_NO_TRACK)
		return MODEL_NONE;
	arg_i64(N, a, "device", dev);
	arg_i64(N, a, "context", col_or(q, DC_CONTEXT, 0));
	arg_i64(N, a, "stream", stream);
	if (corr)
		arg_i64(N, a, "correlation", corr);
	uint64_t r = add_range(N, t, start, end, name, cat, NULL, (uint64_t)corr);
	if (r == MODEL_NONE)
		return r;
	if (link && corr) {
		uint64_t *l = hmap_find(&N->launches,
					(uint64_t)pid << 32 | ((uint64_t)corr & 0xffffffff));
		if (l && model_add_flow(N->m, (uint64_t)corr, N->launches_v[*l].track,
					N->launches_v[*l].start_ns, t, start) == MODEL_NONE)
			return MODEL_NONE;
	}
	return r;
}

static void device_args(struct nimport *N, uint32_t t, uint64_t r, const struct nargs *a)
{
	if (a->n) {
		N->m->tracks[t].ranges.first_arg[r] = a->first;
		N->m->tracks[t].ranges.nargs[r] = a->n;
	}
}

/* Is the kernel NCCL's (or another collective library's): Kineto's rule. */
static bool is_collective(const char *s)
{
	for (; *s; s++)
		if (((s[0] | 0x20) == 'n' || (s[0] | 0x20) == 'x') && (s[1] | 0x20) == 'c' &&
		    (s[2] | 0x20) == 'c' && (s[3] | 0x20) == 'l')
			return true;
	return false;
}

static int read_kernels(struct nimport *N)
{
	static const char *const cols[] = { "start",
					    "end",
					    "deviceId",
					    "contextId",
					    "streamId",
					    "correlationId",
					    "globalPid",
					    "demangledName",
					    "shortName",
					    "mangledName",
					    "gridX",
					    "gridY",
					    "gridZ",
					    "blockX",
					    "blockY",
					    "blockZ",
					    "registersPerThread",
					    "staticSharedMemory",
					    "dynamicSharedMemory",
					    NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, "CUPTI_ACTIVITY_KIND_KERNEL", cols, DC_NEED, NULL);
	if (rc <= 0)
		return rc;
	variant_add(N, " KERNEL");
	while ((rc = nquery_step(N, &q)) == 1) {
		int64_t nid = 0;
		uint32_t name = 0;
		for (int c = 7; c <= 9 && !name; c++) /* demangled, short, mangled */
			if (col_i64(&q, c, &nid))
				name = sid(N, nid);
		uint8_t cat = is_collective(model_str(N->m, name)) ? OPSCOPE_CAT_COMMUNICATION
								   : OPSCOPE_CAT_KERNEL;
		struct nargs a = { 0 };
		uint32_t t;
		uint64_t r = device_range(N, &q, name, cat, &a, true, &t);
		if (r == NROW_SKIPPED)
			continue;
		if (r == MODEL_NONE)
			break;
		char dims[96];
		if (q.have[10]) {
			snprintf(dims, sizeof(dims), "[%" PRId64 ", %" PRId64 ", %" PRId64 "]",
				 col_or(&q, 10, 0), col_or(&q, 11, 0), col_or(&q, 12, 0));
			arg_add(N, &a, "grid", MODEL_ARG_JSON, intern(N, dims));
		}
		if (q.have[13]) {
			snprintf(dims, sizeof(dims), "[%" PRId64 ", %" PRId64 ", %" PRId64 "]",
				 col_or(&q, 13, 0), col_or(&q, 14, 0), col_or(&q, 15, 0));
			arg_add(N, &a, "block", MODEL_ARG_JSON, intern(N, dims));
		}
		if (q.have[16])
			arg_i64(N, &a, "registers per thread", col_or(&q, 16, 0));
		if (q.have[17] || q.have[18])
			arg_i64(N, &a, "shared memory", col_or(&q, 17, 0) + col_or(&q, 18, 0));
		device_args(N, t, r, &a);
	}
	nquery_close(&q);
	return rc == 1 ? noom(N) : rc;
}

/* nsys's CUDA_MEMCPY_KIND (CUPTI's CUpti_ActivityMemcpyKind order) and CUDA_MEMOPR_MEMORY_KIND
 * (its own order, not CUPTI's: the exports' HtoD copies from cudaHostAlloc memory read
 * 1 -> 2, Pinned -> Device, and their DtoH 2 -> 1), named as Kineto names them; an id past
 * these takes the label of the file's ENUM table when it has one. */
static const char *const copy_kind_names[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					       "AtoD",	  "DtoA", "DtoD", "HtoH", "PtoP" };
static const char *const mem_kind_names[] = { "Pageable",	"Pinned",  "Device",
					      "Array",		"Managed", "Device Static",
					      "Managed Static", "Unknown" };

static const char *kind_name(struct nimport *N, struct hmap *labels, const char *const *names,
			     size_t n, int64_t id)
{
	if (id >= 0 && (uint64_t)id < n)
		return names[id];
	uint64_t *v = hmap_find(labels, (uint64_t)id);
	return v ? model_str(N->m, (uint32_t)*v) : "Unknown";
}

#define NKINDS(a) (sizeof(a) / sizeof((a)[0]))

static int read_copies(struct nimport *N)
{
	static const char *const cols[] = { "start",	"end",		 "deviceId",  "contextId",
					    "streamId", "correlationId", "globalPid", "bytes",
					    "copyKind", "srcKind",	 "dstKind",   NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, "CUPTI_ACTIVITY_KIND_MEMCPY", cols, DC_NEED, NULL);
	if (rc <= 0)
		return rc;
	variant_add(N, " MEMCPY");
	while ((rc = nquery_step(N, &q)) == 1) {
		char name[160];
		const char *kind = kind_name(N, &N->copy_kinds, copy_kind_names,
					     NKINDS(copy_kind_names), col_or(&q, 8, 0));
		if (q.have[9] && q.have[10])
			snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", kind,
				 kind_name(N, &N->mem_kinds, mem_kind_names, NKINDS(mem_kind_names),
					   col_or(&q, 9, 0)),
				 kind_name(N, &N->mem_kinds, mem_kind_names, NKINDS(mem_kind_names),
					   col_or(&q, 10, 0)));
		else
			snprintf(name, sizeof(name), "Memcpy %s", kind);
		struct nargs a = { 0 };
		uint32_t t;
		uint64_t r = device_range(N, &q, intern(N, name), OPSCOPE_CAT_MEMCPY, &a, true, &t);
		if (r == NROW_SKIPPED)
			continue;
		if (r == MODEL_NONE)
			break;
		arg_i64(N, &a, "bytes", col_or(&q, 7, 0));
		device_args(N, t, r, &a);
	}
	nquery_close(&q);
	return rc == 1 ? noom(N) : rc;
}

static int read_memsets(struct nimport *N)
{
	static const char *const cols[] = { "start",	"end",		 "deviceId",  "contextId",
					    "streamId", "correlationId", "globalPid", "bytes",
					    "memKind",	"value",	 NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, "CUPTI_ACTIVITY_KIND_MEMSET", cols, DC_NEED, NULL);
	if (rc <= 0)
		return rc;
	variant_add(N, " MEMSET");
	while ((rc = nquery_step(N, &q)) == 1) {
		char name[96];
		snprintf(name, sizeof(name), "Memset (%s)",
			 q.have[8] && col_or(&q, 8, -1) >= 0
				 ? kind_name(N, &N->mem_kinds, mem_kind_names,
					     NKINDS(mem_kind_names), col_or(&q, 8, 0))
				 : "Device");
		struct nargs a = { 0 };
		uint32_t t;
		uint64_t r = device_range(N, &q, intern(N, name), OPSCOPE_CAT_MEMSET, &a, true, &t);
		if (r == NROW_SKIPPED)
			continue;
		if (r == MODEL_NONE)
			break;
		arg_i64(N, &a, "bytes", col_or(&q, 7, 0));
		if (q.have[9])
			arg_i64(N, &a, "value", col_or(&q, 9, 0));
		device_args(N, t, r, &a);
	}
	nquery_close(&q);
	return rc == 1 ? noom(N) : rc;
}

/* CUpti_ActivitySynchronizationType, as Kineto names its cuda_sync events. */
static const char *const sync_names[] = { "Unknown Sync", "Event Sync", "Stream Wait Event",
					  "Stream Sync", "Context Sync" };

static int read_syncs(struct nimport *N)
{
	static const char *const cols[] = { "start",	 "end",	     "deviceId",
					    "contextId", "streamId", "correlationId",
					    "globalPid", "syncType", NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", cols, DC_NEED, NULL);
	if (rc <= 0)
		return rc;
	variant_add(N, " SYNCHRONIZATION");
	while ((rc = nquery_step(N, &q)) == 1) {
		int64_t k = col_or(&q, 7, 0);
		const char *name =
			k >= 0 && (uint64_t)k < NKINDS(sync_names) ? sync_names[k] : sync_names[0];
		struct nargs a = { 0 };
		uint32_t t;
		/* the id of the call that waited, as Kineto's cuda_sync keeps it; not device
		 * work (the event tree links none), and no launch flow */
		uint64_t r = device_range(N, &q, intern(N, name), OPSCOPE_CAT_USER_DEFINED, &a,
					  false, &t);
		if (r == NROW_SKIPPED)
			continue;
		if (r == MODEL_NONE)
			break;
		device_args(N, t, r, &a);
	}
	nquery_close(&q);
	return rc == 1 ? noom(N) : rc;
}

/* An ENUM_* table's labels by id (newer nsys: id, name, label). */
static int read_enum(struct nimport *N, const char *table, struct hmap *out)
{
	static const char *const cols[] = { "id", "label", "name", NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, table, cols, 1, NULL);
	if (rc <= 0)
		return rc;
	while ((rc = nquery_step(N, &q)) == 1) {
		uint32_t s = col_str(N, &q, 1);
		if (!s)
			s = col_str(N, &q, 2);
		if (!hmap_put(out, (uint64_t)col_or(&q, 0, 0), s))
			break;
	}
	nquery_close(&q);
	return rc == 1 ? noom(N) : rc;
}

/* ---------------------------------------------------------------------------------------- */
/* NVTX */

/* NvtxEventType values of NVTX_EVENTS.eventType. */
enum {
	NVTX_MARK = 34,
	NVTX_PUSHPOP = 59,
	NVTX_STARTEND = 60,
	NVTX_DOMAIN_CREATE = 75,
};

static int read_nvtx(struct nimport *N)
{
	static const char *const cols[] = { "start",  "end",	  "eventType", "text",
					    "textId", "domainId", "globalTid", NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, "NVTX_EVENTS", cols, 1 | 4, "eventType = 75");
	if (rc <= 0)
		return rc;
	variant_add(N, " NVTX(text%s%s)", q.have[4] ? "+textId" : "", q.have[5] ? ", domains" : "");
	while ((rc = nquery_step(N, &q)) == 1) {
		uint32_t s = col_str(N, &q, 3);
		if (!s)
			s = sid(N, col_or(&q, 4, 0));
		if (!hmap_put(&N->domains, (uint64_t)col_or(&q, 5, 0), s))
			break;
	}
	nquery_close(&q);
	if (rc == 1)
		return noom(N);
	if (rc < 0 ||
	    (rc = nquery_open(N, &q, "NVTX_EVENTS", cols, 1 | 4, "eventType IN (34, 59, 60)")) <= 0)
		return rc;
	while ((rc = nquery_step(N, &q)) == 1) {
		int64_t start = col_or(&q, 0, 0), end, type = col_or(&q, 2, 0);
		int64_t gtid = col_or(&q, 6, 0), dom = col_or(&q, 5, 0);
		uint32_t name = col_str(N, &q, 3);
		if (!name)
			name = sid(N, col_or(&q, 4, 0));
		struct nargs a = { 0 };
		uint64_t *d = dom ? hmap_find(&N->domains, (uint64_t)dom) : NULL;
		if (d && *d)
			arg_str(N, &a, "domain", (uint32_t)*d);
		if (!time_ok(start)) {
			N->skipped++;
			continue;
		}
		if (type == NVTX_MARK) {
			uint32_t t = thread_track(N, gtid);
			uint64_t i = t == MODEL_NO_TRACK ? MODEL_NONE
							 : model_add_instant(N->m, t, start, name,
									     OPSCOPE_CAT_NVTX);
			if (i == MODEL_NONE)
				break;
			N->m->tracks[t].instants.first_arg[i] = a.first;
			N->m->tracks[t].instants.nargs[i] = a.n;
			N->m->tracks[t].events++;
			N->events++;
			continue;
		}
		uint32_t t = type == NVTX_PUSHPOP ? thread_track(N, gtid)
						  : async_track(N, gid_pid(gtid));
		bool closed = col_i64(&q, 1, &end);
		uint64_t r = t == MODEL_NO_TRACK ? MODEL_NONE
						 : add_range(N, t, start, closed ? end : start,
							     name, OPSCOPE_CAT_NVTX, &a, 0);
		if (r == NROW_SKIPPED)
			continue;
		if (r == MODEL_NONE)
			break;
		if (!closed) {
			if (!grow_array((void **)&N->open, sizeof(*N->open), &N->open_cap,
					N->nopen + 1))
				break;
			N->open[N->nopen++] = (struct nopen){ t, r };
		}
	}
	nquery_close(&q);
	if (rc == 1)
		return noom(N);
	if (rc == 0 && has_column(N, "NVTX_EVENTS", "eventType") == 1) {
		/* the kinds not read (categories, thread names, domain destroys ...) */
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(N->db,
				       "SELECT count(*) FROM NVTX_EVENTS WHERE eventType NOT IN "
				       "(34, 59, 60, 75)",
				       -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW)
				N->skipped += (uint64_t)sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Names, devices, metadata */

static void meta_add(struct nimport *N, uint32_t key, uint32_t value)
{
	if (!grow_array32((void **)&N->meta, sizeof(*N->meta), &N->meta_cap,
			  (uint64_t)N->nmeta + 1)) {
		N->m->oom = true;
		return;
	}
	N->meta[N->nmeta++] = (struct nmeta){ key, value };
}

static int read_thread_names(struct nimport *N)
{
	static const char *const cols[] = { "nameId", "globalTid", NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, "ThreadNames", cols, 3, NULL);
	if (rc <= 0)
		return rc;
	while ((rc = nquery_step(N, &q)) == 1) {
		uint64_t *t = hmap_find(&N->threads, (uint64_t)col_or(&q, 1, 0));
		if (t)
			N->m->tracks[*t].name = sid(N, col_or(&q, 0, 0));
	}
	return rc;
}

/* Names of the processes the file has tracks of (PROCESSES lists every process of the
 * machine). */
static int read_processes(struct nimport *N)
{
	static const char *const cols[] = { "globalPid", "pid", "name", NULL };
	struct nquery q;
	int rc = nquery_open(N, &q, "PROCESSES", cols, 4, NULL);
	if (rc <= 0)
		return rc;
	uint32_t name_key = intern(N, "name");
	while ((rc = nquery_step(N, &q)) == 1) {
		int64_t gp;
		uint32_t pid = col_i64(&q, 0, &gp) ? gid_pid(gp) : (uint32_t)col_or(&q, 1, 0);
		uint32_t p = model_find_process(N->m, N->fi, pid);
		uint32_t name = col_str(N, &q, 2);
		if (p == MODEL_NO_PROCESS || !name)
			continue;
		N->m->processes[p].name = name;
		model_set_meta(N->m, pid, name_key, name);
	}
	return rc;
}

/* "device.<id>.<key>", the metadata Kineto's deviceProperties give (same keys where the two
 * name the same thing). */
static void device_meta(struct nimport *N, int64_t id, const char *key, uint32_t value)
{
	char k[96];
	snprintf(k, sizeof(k), "device.%" PRId64 ".%s", id, key);
	meta_add(N, intern(N, k), value);
}

static void device_meta_i64(struct nimport *N, int64_t id, const char *key, int64_t v)
{
	char s[32];
	snprintf(s, sizeof(s), "%" PRId64, v);
	device_meta(N, id, key, intern(N, s));
}

static int read_gpus(struct nimport *N, bool *any)
{
	static const char *const cols[] = { "id",
					    "cuDevice",
					    "computeMajor",
					    "name",
					    "totalMemory",
					    "smCount",
					    "clockRate",
					    "memoryBandwidth",
					    "l2CacheSize",
					    "computeMinor",
					    "maxThreadsPerBlock",
					    "maxRegistersPerBlock",
					    "maxRegistersPerSm",
					    "threadsPerWarp",
					    "maxShmemPerBlock",
					    "maxShmemPerSm",
					    "maxShmemPerBlockOptin",
					    "busLocation",
					    "uuid",
					    "chipName",
					    NULL };
	/* our key for each column from index 4 on (Kineto's where it has one) */
	static const char *const keys[] = { "totalGlobalMem",
					    "numSms",
					    "clockRateHz",
					    "memoryBandwidthBytesPerSecond",
					    "l2CacheSize",
					    "computeMinor",
					    "maxThreadsPerBlock",
					    "regsPerBlock",
					    "regsPerMultiprocessor",
					    "warpSize",
					    "sharedMemPerBlock",
					    "sharedMemPerMultiprocessor",
					    "sharedMemPerBlockOptin",
					    "busLocation",
					    "uuid",
					    "chipName" };
	struct nquery q;
	int rc = nquery_open(N, &q, "TARGET_INFO_GPU", cols, 1, NULL);
	if (rc <= 0)
		return rc;
	variant_add(N, " TARGET_INFO_GPU");
	while ((rc = nquery_step(N, &q)) == 1) {
		/* the CUDA devices alone (a laptop lists its Intel GPU too), by CUDA id */
		int64_t major = col_or(&q, 2, -1), id;
		if (q.have[2] && major <= 0)
			continue;
		if (!col_i64(&q, 1, &id))
			id = col_or(&q, 0, 0);
		*any = true;
		if (col_str(N, &q, 3))
			device_meta(N, id, "name", col_str(N, &q, 3));
		if (q.have[2])
			device_meta_i64(N, id, "computeMajor", major);
		for (int c = 4; cols[c]; c++) {
			if (!q.have[c] || sqlite3_column_type(q.st, c) == SQLITE_NULL)
				continue;
			if (sqlite3_column_type(q.st, c) == SQLITE_INTEGER)
				device_meta_i64(N, id, keys[c - 4], col_or(&q, c, 0));
			else if (col_str(N, &q, c))
				device_meta(N, id, keys[c - 4], col_str(N, &q, c));
		}
	}
	return rc;
}

/* TARGET_INFO_CUDA_DEVICE (other nsys versions): every column as it is named, by its CUDA id
 * ("cudaId", else "id"). */
static int read_cuda_devices(struct nimport *N)
{
	if (has_table(N, "TARGET_INFO_CUDA_DEVICE") != 1)
		return N->rc;
	int idcol = -1;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(N->db, "SELECT * FROM TARGET_INFO_CUDA_DEVICE", -1, &st, NULL);
	if (src != SQLITE_OK)
		return nsql(N, src, "TARGET_INFO_CUDA_DEVICE");
	variant_add(N, " TARGET_INFO_CUDA_DEVICE");
	int ncol = sqlite3_column_count(st);
	for (int c = 0; c < ncol; c++) {
		const char *cn = sqlite3_column_name(st, c);
		if (cn && (strcmp(cn, "cudaId") == 0 || (idcol < 0 && strcmp(cn, "id") == 0)))
			idcol = c;
	}
	int64_t row = 0;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = idcol >= 0 ? sqlite3_column_int64(st, idcol) : row;
		row++;
		for (int c = 0; c < ncol; c++) {
			const char *cn = sqlite3_column_name(st, c);
			const void *b = sqlite3_column_blob(st, c);
			int n = sqlite3_column_bytes(st, c);
			if (c == idcol || !cn || !b || n <= 0 || strlen(cn) > 48)
				continue;
			device_meta(N, id, cn, model_intern(N->m, b, (size_t)n));
		}
	}
	sqlite3_finalize(st);
	return src == SQLITE_DONE ? 0 : nsql(N, src, "TARGET_INFO_CUDA_DEVICE");
}

/* META_DATA_EXPORT (newer) or EXPORT_META_DATA (older): "nsys.<name>", lower case, without
 * "EXPORT_". */
static int read_export_meta(struct nimport *N, char *schema, size_t schema_size)
{
	static const char *const cols[] = { "name", "value", NULL };
	static const char *const tables[] = { "META_DATA_EXPORT", "EXPORT_META_DATA" };
	for (int i = 0; i < 2; i++) {
		struct nquery q;
		int rc = nquery_open(N, &q, tables[i], cols, 3, NULL);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		variant_add(N, "metadata %s; read:", tables[i]);
		while ((rc = nquery_step(N, &q)) == 1) {
			const char *k = (const char *)sqlite3_column_text(q.st, 0);
			if (!k)
				continue;
			if (strncmp(k, "EXPORT_", 7) == 0)
				k += 7;
			char key[80];
			size_t n = (size_t)snprintf(key, sizeof(key), "nsys.%s", k);
			for (size_t j = 5; j < n && j < sizeof(key); j++)
				key[j] = (char)(key[j] >= 'A' && key[j] <= 'Z' ? key[j] + 32
									       : key[j]);
			uint32_t v = col_str(N, &q, 1);
			if (strcmp(key, "nsys.schema_version") == 0 && v)
				snprintf(schema, schema_size, "%s", model_str(N->m, v));
			meta_add(N, intern(N, key), v);
		}
		return rc;
	}
	variant_add(N, "no export metadata; read:");
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The whole import */

/* Is this database an nsys export at all? 1 yes, 0 no (with the message), < 0 an error. */
static int check_export(struct nimport *N)
{
	static const char *const marks[] = {
		"CUPTI_ACTIVITY_KIND_KERNEL",
		"CUPTI_ACTIVITY_KIND_RUNTIME",
		"CUPTI_ACTIVITY_KIND_MEMCPY",
		"NVTX_EVENTS",
		"EXPORT_META_DATA",
		"META_DATA_EXPORT",
		"TARGET_INFO_GPU",
		NULL,
	};
	int s = has_table(N, "StringIds");
	if (s < 0)
		return s;
	for (int i = 0; s == 1 && marks[i]; i++) {
		int t = has_table(N, marks[i]);
		if (t != 0)
			return t;
	}
	char tables[160] = "";
	size_t len = 0;
	sqlite3_stmt *st;
	int src = sqlite3_prepare_v2(N->db,
				     "SELECT name FROM sqlite_master WHERE type = 'table' "
				     "ORDER BY name LIMIT 6",
				     -1, &st, NULL);
	if (src != SQLITE_OK)
		return nsql(N, src, "reading the schema");
	while ((src = sqlite3_step(st)) == SQLITE_ROW && len < sizeof(tables) - 1) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		len += (size_t)snprintf(tables + len, sizeof(tables) - len, "%s%s", len ? ", " : "",
					t ? (const char *)t : "");
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE && src != SQLITE_ROW)
		return nsql(N, src, "reading the schema");
	if (len >= sizeof(tables))
		len = sizeof(tables) - 1;
	/* table names come from the file: only printable ASCII goes into the message */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)tables[i] < 0x20 || (unsigned char)tables[i] >= 0x7f)
			tables[i] = '?';
	nfail(N, OPSCOPE_EUNSUPPORTED,
	      "a SQLite database, but not an Nsight Systems export: %s (tables: %s)",
	      s == 1 ? "no CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, TARGET_INFO_GPU or export "
		       "metadata table"
		     : "no StringIds table",
	      len ? tables : "none");
	return 0;
}

/* The host process the file is about: the one with the most host ranges. */
static uint32_t main_pid(struct nimport *N)
{
	struct model *m = N->m;
	uint32_t best = 0;
	uint64_t most = 0;
	bool any = false;
	for (uint32_t p = 0; p < m->nprocesses; p++) {
		if (m->processes[p].file != N->fi)
			continue;
		uint64_t n = 0;
		for (uint32_t t = N->first_track; t < m->ntracks; t++)
			if (m->tracks[t].kind != MODEL_TRACK_DEVICE && m->tracks[t].process == p)
				n += m->tracks[t].nranges;
		if (!any || n > most) {
			any = true;
			most = n;
			best = m->processes[p].pid;
		}
	}
	return best;
}

/* Make the tracks read so far what the model promises (sorted, nested, flows resolved), also
 * when reading stopped at an error: the caller may go on with the model. The ranges that
 * crossed the end of their parent. */
static uint64_t settle(struct nimport *N)
{
	struct model *m = N->m;
	/* ranges nsys did not see end: closed at the last time of the file */
	for (uint64_t i = 0; i < N->nopen; i++) {
		struct model_ranges *r = &m->tracks[N->open[i].track].ranges;
		uint64_t k = N->open[i].range;
		r->dur_ns[k] = N->last_ns > r->start_ns[k] ? N->last_ns - r->start_ns[k] : 0;
		r->flags[k] |= MODEL_RANGEF_UNCLOSED;
	}
	N->nopen = 0;
	uint64_t overlaps =
		model_nest_tracks(m, N->first_track, model_threads_for(m, N->first_track));
	model_resolve_flows(m, N->first_flow);
	model_finish_tracks(m, N->first_track);
	return overlaps;
}

static void finish(struct nimport *N, const char *schema, uint64_t file_bytes)
{
	struct model *m = N->m;
	uint64_t overlaps = settle(N);
	uint32_t pid = main_pid(N);
	struct model_file *f = &m->files[N->fi];
	f->pid = pid;
	for (uint32_t i = 0; i < N->nmeta; i++)
		model_set_meta(m, pid, N->meta[i].key, N->meta[i].value);
	char v[NVARIANT_MAX + 64];
	snprintf(v, sizeof(v), "nsys-sqlite schema %s, %.*s", schema[0] ? schema : "unknown",
		 (int)N->variant_len, N->variant);
	model_set_meta(m, pid, intern(N, "nsys.variant"), intern(N, v));
	f->complete = true;
	f->events = N->events;
	f->records = N->events;
	f->skipped_records = N->skipped;
	f->mismatched_ends = overlaps;
	f->file_bytes = file_bytes;
	f->valid_end = file_bytes;
	m->events_total += N->events;
	m->complete = (m->nfiles == 1 || m->complete) && f->complete;
}

static int import_db(struct nimport *N, uint64_t file_bytes)
{
	struct model *m = N->m;
	int rc = check_export(N);
	if (rc <= 0)
		return N->rc ? N->rc : OPSCOPE_EFORMAT;
	N->fi = model_add_file(m, N->name, "nsys-sqlite");
	if (N->fi == UINT32_MAX)
		return noom(N);
	N->first_track = m->ntracks;
	N->first_flow = m->nflows;
	char schema[64] = "";
	bool gpus = false;
	if ((rc = read_export_meta(N, schema, sizeof(schema))) < 0 || (rc = read_strings(N)) < 0 ||
	    (rc = read_enum(N, "ENUM_CUDA_MEMCPY_OPER", &N->copy_kinds)) < 0 ||
	    (rc = read_enum(N, "ENUM_CUDA_MEM_KIND", &N->mem_kinds)) < 0 ||
	    (rc = read_api(N, "CUPTI_ACTIVITY_KIND_RUNTIME", OPSCOPE_CAT_CUDA_RUNTIME)) < 0 ||
	    (rc = read_api(N, "CUPTI_ACTIVITY_KIND_DRIVER", OPSCOPE_CAT_CUDA_DRIVER)) < 0 ||
	    (rc = read_kernels(N)) < 0 || (rc = read_copies(N)) < 0 || (rc = read_memsets(N)) < 0 ||
	    (rc = read_syncs(N)) < 0 || (rc = read_nvtx(N)) < 0 ||
	    (rc = read_thread_names(N)) < 0 || (rc = read_processes(N)) < 0 ||
	    (rc = read_gpus(N, &gpus)) < 0 || (!gpus && (rc = read_cuda_devices(N)) < 0)) {
		settle(N); /* what was read stays a valid model */
		return N->rc ? N->rc : rc;
	}
	if (m->oom) {
		settle(N);
		return noom(N);
	}
	finish(N, schema, file_bytes);
	return m->oom ? noom(N) : 0;
}

/* Import the database image `img` (size bytes, owned by the caller, may be patched). */
static int import_image(struct model *m, const char *name, unsigned char *img, size_t size,
			uint64_t file_bytes, char *err, size_t errsize)
{
	struct nimport N = { 0 };
	N.m = m;
	N.name = name;
	N.err = err;
	N.errsize = errsize;
	N.last_ns = INT64_MIN;
	if (size < 100 || memcmp(img, sqlite_magic, sizeof(sqlite_magic)) != 0) {
		snprintf(err, errsize, "%s: offset 0: not a SQLite database", name);
		return OPSCOPE_EFORMAT;
	}
	/* a database in WAL mode (header bytes 18 and 19 are 2) would look for its -wal file:
	 * everything of it is in the image, so read it as a rollback-journal database */
	if (img[18] == 2 && img[19] == 2)
		img[18] = img[19] = 1;
	/* one thread uses the connection: no mutexes (they were 6% of an import) */
	int src = sqlite3_open_v2(":memory:", &N.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
				  NULL);
	if (src != SQLITE_OK) {
		sqlite3_close(N.db);
		snprintf(err, errsize, "%s: cannot open SQLite: %s", name, sqlite3_errstr(src));
		return OPSCOPE_ENOMEM;
	}
	/* the file is untrusted: no triggers, no functions called from its schema */
	sqlite3_db_config(N.db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(N.db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(N.db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	src = sqlite3_deserialize(N.db, "main", img, (sqlite3_int64)size, (sqlite3_int64)size,
				  SQLITE_DESERIALIZE_READONLY);
	int rc;
	if (src != SQLITE_OK) {
		rc = nsql(&N, src, "opening the database");
	} else {
		sqlite3_exec(N.db, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
		rc = import_db(&N, file_bytes);
	}
	sqlite3_close(N.db);
	hmap_free(&N.strings);
	hmap_free(&N.rt_names);
	hmap_free(&N.threads);
	hmap_free(&N.devices);
	hmap_free(&N.asyncs);
	hmap_free(&N.launches);
	hmap_free(&N.domains);
	hmap_free(&N.copy_kinds);
	hmap_free(&N.mem_kinds);
	free(N.launches_v);
	free(N.open);
	free(N.meta);
	return rc;
}

/* Import an image: gunzip'd first when it is gzip. `img` may be patched (import_image). */
static int import_bytes(struct model *m, const char *name, unsigned char *img, size_t size,
			char *err, size_t errsize)
{
	if (size >= 2 && img[0] == 0x1f && img[1] == 0x8b) {
		unsigned char *plain = NULL;
		size_t n = 0;
		int rc = pprof_gunzip(name, img, size, &plain, &n, err, errsize);
		if (rc)
			return rc;
		rc = import_image(m, name, plain, n, size, err, errsize);
		free(plain);
		return rc;
	}
	return import_image(m, name, img, size, size, err, errsize);
}

int nsys_load_file(struct model *m, const char *path, char *err, size_t errsize)
{
	/* mapped, not read: no copy of a large file; private, so that patching a WAL header
	 * touches our page alone */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		return OPSCOPE_EOPEN;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		/* not a regular file (a pipe) or empty: read it the ordinary way */
		unsigned char *data;
		size_t size;
		int rc = pprof_read_file(path, &data, &size, err, errsize);
		if (rc)
			return rc;
		rc = import_bytes(m, path, data, size, err, errsize);
		free(data);
		return rc;
	}
	size_t size = (size_t)st.st_size;
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errsize, "%s: cannot map: %s", path, strerror(errno));
		return OPSCOPE_EIO;
	}
	int rc = import_bytes(m, path, map, size, err, errsize);
	munmap(map, size);
	return rc;
}

int nsys_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		  size_t errsize)
{
	/* a copy: SQLite wants a writable pointer, and a WAL header is patched */
	unsigned char *copy = malloc(size ? size : 1);
	if (!copy) {
		snprintf(err, errsize, "%s: out of memory", name);
		return OPSCOPE_ENOMEM;
	}
	if (size)
		memcpy(copy, data, size);
	int rc = import_bytes(m, name, copy, size, err, errsize);
	free(copy);
	return rc;
}
