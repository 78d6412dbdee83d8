/*
 * session.c: a recording session and its writer thread.
 *
 * A session owns one trace file. Threads fill chunks (buffers.c); the writer thread wakes
 * every millisecond while there is work, backing off to flush_interval_ms when idle, takes
 * the full chunks, snapshots the committed prefix of every thread's current chunk, and
 * appends records to the file. Producers signal the writer only when the pool of free chunks
 * runs low (a quarter left): a system call on their path, but only then.
 *
 * Ordering rules that make a file readable at any cut:
 *   - STRINGS and THREAD records for everything an EVENTS record references are written
 *     before it (the writer reads the string and thread counts after it has acquired the
 *     chunks, so every id in them is covered);
 *   - events of one track are written in order: full chunks arrive in the order their
 *     thread retired them, and a thread's current chunk is snapshotted only when all its
 *     earlier chunks are written (chunk sequence numbers);
 *   - END is written last, only on a clean stop.
 *
 * One file past 1,000 lines on purpose: the session's start and stop, the writer thread and
 * the fork and exit handlers share one lock order (see session_fork_prepare), which is
 * checked most easily where they all are.
 */
#include "record/session.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/stat.h>
#include <sys/times.h>
#include <unistd.h>

#include "opscope_config.h"
#include "record/buffers.h"
#include "record/clock.h"
#include "record/gpu.h"
#include "record/intern.h"
#include "record/record.h"
#include "record/sampler.h"
#include "record/samples.h"
#include "record/timers.h"
#include "trace/decode.h"
#include "trace/encode.h"
#include "trace/tracefile.h"
#include "util/buf.h"
#include "util/bytes.h"
#include "util/error.h"

#define SESSION_DEFAULT_BUFFER	 (64u << 20)
#define SESSION_DEFAULT_CHUNK	 (64u << 10)
#define SESSION_DEFAULT_FLUSH_MS 100u
#define SESSION_SAMPLES_BATCH	 4096u /* queued samples written without waiting */
/* A snapshot round writes the queued samples once this long has passed since their last
 * writing (and a flush or the stop writes them at once): writer_samples says why. */
#define SESSION_SAMPLES_EVERY_NS  1000000000ull
#define SESSION_BUSY_POLL_MS	  1u
#define SESSION_CLOCK_INTERVAL_NS 1000000000ull

/* Per-track state kept by the writer for the current session. */
struct track_state {
	uint32_t expected_seq;	  /* next chunk sequence number to write */
	uint64_t drops_written;	  /* last cumulative drop count written */
	uint32_t name_id_written; /* name id in the last THREAD record, UINT32_MAX = none */
	int announced;		  /* a THREAD record was written this session */
	int exited_written;	  /* the last THREAD record said the thread exited */
};

struct session {
	pthread_mutex_t lock;		/* start/stop/flush, and `meta` */
	pthread_mutex_t round_lock;	/* held by the writer while it works (see fork below) */
	int active;			/* a session is recording */
	pid_t pid;			/* process that owns the session (not a vfork child) */
	uint64_t gen;			/* generation of the current/last session */
	struct opscope_options opts;	/* resolved options */
	char path[PATH_MAX];		/* trace file (before it opens: the first name to try) */
	char base[PATH_MAX];		/* the configured output (file or directory) */
	char name_stem[PATH_MAX];	/* what file names derive from (see session_name) */
	int plain_name;			/* name_stem itself may be the file (not only with a pid) */
	int root_file;			/* the root file of `opscope record` (see exec below) */
	int base_from_env;		/* base came from OPSCOPE_OUTPUT, not the caller */
	int lazy_open;			/* open the file only when there are events (fork child) */
	int exclusive;			/* create the file with O_EXCL */
	int file_created;		/* the session created its file (path) */
	int exec_removed_root;		/* an exec removed the empty root file (see exec) */
	pthread_t writer;		/* the writer thread */
	int writer_running;		/* writer was started and not joined */
	sem_t writer_started;		/* posted by the writer as it starts (session_launch) */
	_Atomic int stop_requested;	/* writer: final round and exit */
	_Atomic int writer_done;	/* writer finished its final round */
	_Atomic int terminating_signal; /* signal number that stopped the process, 0 if none */
	pthread_cond_t flush_cond;	/* signalled when a flush round completes */
	uint64_t flush_requested;	/* rounds asked for (under lock) */
	uint64_t flush_completed;	/* rounds done (under lock) */
	struct buf meta;		/* pending METADATA entries (under lock) */
	uint32_t meta_count;		/* entries in `meta` */

	/* Writer-only state. */
	struct tracefile tf;	  /* the file, when open */
	int file_open;		  /* tf is open */
	int file_failed;	  /* opening or writing failed: stop writing */
	int open_errno;		  /* errno of a failed open */
	uint32_t strings_written; /* ids < this are in the file */
	/* stack sample tables: ids < these are in the file (samples.h) */
	uint32_t mappings_written, frames_written, stacks_written;
	/* the writer's CPU time writing samples and their tables, the samples, the writings */
	uint64_t samples_write_ns, samples_written, samples_writings;
	uint64_t samples_written_at_ns; /* CLOCK_MONOTONIC of their last writing */
	int min_reader_raised;		/* the header says a reader of version 3 is needed */
	int min_reader_gpu;		/* ... or of version 4 (GPU records written) */
	uint64_t gpu_dropped_written;	/* GPU drops (process total) when last written */
	uint64_t gpu_dropped_base;	/* GPU drops (process total) when the session began */
	struct track_state *tracks;	/* per track */
	uint32_t tracks_cap;		/* entries allocated in `tracks` */
	uint64_t last_clock_mono_ns;	/* when the last CLOCK record was written */
	struct buf rec;			/* record payload being built */
	struct encode_state enc;	/* the EVENTS2 encoder's streams (writer thread) */

	/* Set at launch, read-only while the session runs. */
	uint64_t *drops_baseline;  /* per track: drop counter when the session started */
	uint32_t drops_baseline_n; /* tracks in drops_baseline (later tracks start at 0) */

	/* Shared statistics. */
	_Atomic uint32_t threads_announced; /* tracks with a THREAD record in this file */
	_Atomic uint64_t events_written;    /* events in EVENTS records, DROP_MARKs included */
	_Atomic uint64_t drop_marks;	    /* DROP_MARK events among them */
	_Atomic uint64_t bytes_written;	    /* file size */
};

/* The one session of the process: sessions follow each other, never overlap. */
static struct session the_session = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.round_lock = PTHREAD_MUTEX_INITIALIZER,
	.flush_cond = PTHREAD_COND_INITIALIZER,
};

/* ---------------------------------------------------------------------------------------- */
/* Writer. */

static struct track_state *writer_track(uint32_t track)
{
	if (track >= the_session.tracks_cap) {
		uint32_t cap = the_session.tracks_cap ? the_session.tracks_cap : 64;
		while (cap <= track)
			cap *= 2;
		struct track_state *t = realloc(the_session.tracks, cap * sizeof(*t));
		if (!t)
			return NULL;
		memset(t + the_session.tracks_cap, 0, (cap - the_session.tracks_cap) * sizeof(*t));
		for (uint32_t i = the_session.tracks_cap; i < cap; i++)
			t[i].name_id_written = UINT32_MAX;
		the_session.tracks = t;
		the_session.tracks_cap = cap;
	}
	return &the_session.tracks[track];
}

static void writer_record(uint16_t type, int compressible)
{
	if (!the_session.file_open || the_session.file_failed)
		return;
	if (the_session.rec.oom || tracefile_record(&the_session.tf, type, the_session.rec.data,
						    the_session.rec.len, compressible) != 0)
		the_session.file_failed = 1;
	atomic_store_explicit(&the_session.bytes_written, the_session.tf.bytes_written,
			      memory_order_relaxed);
	buf_clear(&the_session.rec);
}

static void writer_clock(void)
{
	struct clock_pair p;
	clock_pair(&p);
	buf_u64(&the_session.rec, p.ticks);
	buf_u64(&the_session.rec, p.mono_ns);
	buf_u64(&the_session.rec, p.realtime_ns);
	buf_u64(&the_session.rec, (uint64_t)(record_ticks_per_second() + 0.5));
	writer_record(OPS_REC_CLOCK, 0);
	the_session.last_clock_mono_ns = p.mono_ns;
}

static void meta_add(struct buf *b, uint32_t *count, const char *key, const char *value)
{
	buf_str(b, key, strlen(key));
	buf_str(b, value, strlen(value));
	(*count)++;
}

/* Process description, written once when the file opens. */
static void writer_process_metadata(void)
{
	struct buf m;
	uint32_t n = 0;
	char tmp[4096];
	buf_init(&m);

	FILE *f = fopen("/proc/self/comm", "r");
	if (f) {
		if (fgets(tmp, sizeof(tmp), f)) {
			tmp[strcspn(tmp, "\n")] = '\0';
			meta_add(&m, &n, "program", tmp);
		}
		fclose(f);
	}
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t len = read(fd, tmp, sizeof(tmp) - 1);
		close(fd);
		if (len > 0) {
			for (ssize_t i = 0; i < len - 1; i++)
				if (tmp[i] == '\0')
					tmp[i] = ' ';
			tmp[len] = '\0';
			meta_add(&m, &n, "cmdline", tmp);
		}
	}
	if (gethostname(tmp, sizeof(tmp) - 1) == 0) {
		tmp[sizeof(tmp) - 1] = '\0';
		meta_add(&m, &n, "hostname", tmp);
	}
	snprintf(tmp, sizeof(tmp), "%d", (int)getpid());
	meta_add(&m, &n, "pid", tmp);
	snprintf(tmp, sizeof(tmp), "%d", (int)getppid());
	meta_add(&m, &n, "ppid", tmp);
	/* where the launcher says it: torchrun, Open MPI, PMI (MPICH, Intel MPI), Slurm; the
	 * first set wins per key (docs/ranks.md) */
	static const struct {
		const char *key, *vars[4];
	} dist_vars[] = {
		{ "rank", { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID" } },
		{ "local_rank",
		  { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
		    "SLURM_LOCALID" } },
		{ "world_size",
		  { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS" } },
	};
	for (size_t k = 0; k < sizeof(dist_vars) / sizeof(dist_vars[0]); k++)
		for (size_t i = 0; i < 4; i++) {
			const char *v = getenv(dist_vars[k].vars[i]);
			if (v && *v) {
				meta_add(&m, &n, dist_vars[k].key, v);
				break;
			}
		}
	meta_add(&m, &n, "clocksource", clock_source_name(tmp, sizeof(tmp)));
	meta_add(&m, &n, "tick_clock", clock_use_tsc ? "tsc" : "monotonic");
	meta_add(&m, &n, "opscope_version", OPSCOPE_VERSION_STRING);

	buf_u32(&the_session.rec, n);
	buf_append(&the_session.rec, m.data, m.len);
	buf_free(&m);
	writer_record(OPS_REC_METADATA, 1);
}

static void writer_pending_metadata(void)
{
	pthread_mutex_lock(&the_session.lock);
	if (the_session.meta_count) {
		buf_u32(&the_session.rec, the_session.meta_count);
		buf_append(&the_session.rec, the_session.meta.data, the_session.meta.len);
		buf_clear(&the_session.meta);
		the_session.meta_count = 0;
	}
	pthread_mutex_unlock(&the_session.lock);
	if (the_session.rec.len)
		writer_record(OPS_REC_METADATA, 1);
}

static int session_name(char *dst, size_t size, int attempt);

static int writer_open(void)
{
	if (the_session.file_open || the_session.file_failed)
		return the_session.file_open;
	uint64_t features = clock_use_tsc ? OPS_FEAT_TSC : 0;
	int level = 0;
	if (the_session.opts.compression != OPSCOPE_COMPRESS_NONE && OPSCOPE_HAVE_ZSTD)
		level = the_session.opts.compression_level ? the_session.opts.compression_level : 1;
	char path[PATH_MAX];
	int rc = -EEXIST;
	/* Exclusive: the next name while one is taken (another image of this pid, or a process
	 * of an earlier pid's); never another's file. */
	for (int attempt = 0; attempt < 100 && rc == -EEXIST; attempt++) {
		if (session_name(path, sizeof(path), attempt) != 0) {
			rc = -ENAMETOOLONG;
			break;
		}
		rc = tracefile_open(&the_session.tf, path, the_session.exclusive, features, level,
				    (uint32_t)getpid(), clock_realtime_ns());
		if (rc != 0)
			tracefile_close(&the_session.tf);
		if (!the_session.exclusive)
			break;
	}
	if (rc != 0) {
		the_session.file_failed = 1;
		the_session.open_errno = -rc;
		return 0;
	}
	memcpy(the_session.path, path, sizeof(the_session.path));
	the_session.file_open = 1;
	the_session.file_created = 1;
	writer_process_metadata();
	writer_clock();
	return 1;
}

static void writer_strings(void)
{
	uint32_t count = intern_count();
	uint32_t next = the_session.strings_written ? the_session.strings_written : 1;
	while (next < count) {
		buf_u32(&the_session.rec, next);
		size_t count_pos = the_session.rec.len;
		buf_u32(&the_session.rec, 0);
		uint32_t n = 0;
		/* Keep records well under the reader's limit. */
		for (uint32_t id = next; id < count && the_session.rec.len < (4u << 20);
		     id++, n++) {
			uint32_t len;
			const char *s = record_string(id, &len);
			buf_str(&the_session.rec, s, len);
		}
		if (!the_session.rec.oom)
			put_u32le(the_session.rec.data + count_pos, n);
		writer_record(OPS_REC_STRINGS, 1);
		next += n;
	}
	the_session.strings_written = next;
}

/* The thread's name: set through the API, else what the OS says now. */
static uint32_t writer_thread_name(const struct rthread *t, int exited)
{
	uint32_t id = atomic_load_explicit(&t->name_id, memory_order_relaxed);
	if (id || exited)
		return id;
	char path[64], name[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)t->tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(name, sizeof(name), f)) {
		name[strcspn(name, "\n")] = '\0';
		id = record_intern(name, strlen(name));
	}
	fclose(f);
	return id;
}

static void writer_thread_record(struct rthread *t, struct track_state *ts, uint32_t name,
				 int exited)
{
	writer_strings(); /* the name may be new */
	buf_u32(&the_session.rec, t->track);
	buf_u32(&the_session.rec, (uint32_t)t->pid);
	buf_u64(&the_session.rec, (uint64_t)t->tid);
	buf_u32(&the_session.rec, name);
	buf_u32(&the_session.rec,
		(exited ? OPS_THREADF_EXITED : 0u) | (t->is_main ? OPS_THREADF_MAIN : 0u));
	writer_record(OPS_REC_THREAD, 0);
	if (!ts->announced)
		atomic_fetch_add_explicit(&the_session.threads_announced, 1, memory_order_relaxed);
	ts->announced = 1;
	ts->name_id_written = name;
	ts->exited_written = exited;
}

/* THREAD records for live threads not yet announced, or, when `refresh`, for every
 * announced thread whose name or state changed. */
static void writer_threads(int refresh)
{
	for (struct rthread *t = atomic_load_explicit(&buffers_threads, memory_order_acquire); t;
	     t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		struct track_state *ts = writer_track(t->track);
		if (!ts || t->pid != getpid())
			continue;
		int exited = atomic_load_explicit(&t->exited, memory_order_acquire);
		if (!ts->announced) {
			if (!exited)
				writer_thread_record(t, ts, writer_thread_name(t, 0), 0);
			continue; /* an exited thread is announced by its events, if any */
		}
		if (!refresh)
			continue;
		uint32_t name = writer_thread_name(t, exited);
		if (exited && !name)
			name = ts->name_id_written;
		if (name != ts->name_id_written || exited != ts->exited_written)
			writer_thread_record(t, ts, name, exited);
	}
}

/* Make sure the track of a chunk has its THREAD record before its events. */
static void writer_announce(uint32_t track)
{
	struct track_state *ts = writer_track(track);
	if (!ts || ts->announced)
		return;
	for (struct rthread *t = atomic_load_explicit(&buffers_threads, memory_order_acquire); t;
	     t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		if (t->track == track) {
			int exited = atomic_load_explicit(&t->exited, memory_order_acquire);
			writer_thread_record(t, ts, writer_thread_name(t, exited), exited);
			return;
		}
	}
}

/* Encode slots [from, to) of chunk c as one EVENTS2 record. */
static void writer_events(struct chunk *c, uint32_t from, uint32_t to)
{
	if (from >= to)
		return;
	uint64_t first = 0;
	for (uint32_t i = from; i < to; i++)
		if (c->slots[i].kind != OPS_EV_ARG && c->slots[i].kind != OPS_SLOT_PAYLOAD) {
			first = c->slots[i].ticks;
			break;
		}
	writer_announce(c->track);
	encode_begin(&the_session.rec, &the_session.enc, c->track, first);
	encode_slots(&the_session.rec, &the_session.enc, c->slots + from, to - from);
	encode_finish(&the_session.rec, &the_session.enc);
	writer_record(OPS_REC_EVENTS2, 1);
	atomic_fetch_add_explicit(&the_session.events_written, the_session.enc.events,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&the_session.drop_marks, the_session.enc.drop_marks,
				  memory_order_relaxed);
	c->written = to;
}

/* Table entries in their on-disk byte order (little-endian, whatever the host's). */
static void put_mapping(struct buf *b, uint32_t id)
{
	const struct ops_mapping_entry *e = samples_mapping(id);
	buf_u64(b, e->start);
	buf_u64(b, e->end);
	buf_u64(b, e->file_offset);
	buf_u32(b, e->path_id);
	buf_u32(b, e->build_id);
}

static void put_frame(struct buf *b, uint32_t id)
{
	const struct ops_frame_entry *e = samples_frame(id);
	buf_u32(b, e->kind);
	buf_u32(b, e->mapping);
	buf_u64(b, e->address);
	buf_u32(b, e->name_id);
	buf_u32(b, e->file_id);
	buf_u32(b, (uint32_t)e->line);
	buf_u32(b, 0);
}

static void put_stack(struct buf *b, uint32_t id)
{
	const struct ops_stack_entry *e = samples_stack(id);
	buf_u32(b, e->parent);
	buf_u32(b, e->frame);
}

/* Entries [*written, count) of a stack sample table as records of `type`, at most about
 * 4 MiB each (well under the reader's limit). */
static void writer_table(uint16_t type, uint32_t *written, uint32_t count, size_t entry_bytes,
			 void (*put)(struct buf *, uint32_t))
{
	while (*written < count) {
		uint32_t n = count - *written;
		if (n > (4u << 20) / entry_bytes)
			n = (uint32_t)((4u << 20) / entry_bytes);
		buf_u32(&the_session.rec, *written);
		buf_u32(&the_session.rec, n);
		buf_u32(&the_session.rec, (uint32_t)entry_bytes);
		buf_u32(&the_session.rec, 0);
		for (uint32_t id = *written; id < *written + n; id++)
			put(&the_session.rec, id);
		writer_record(type, 1);
		*written += n;
	}
}

/* The samples queued since the last writing, when there are at least `min`, after the table
 * entries and strings they refer to and the THREAD records of their tracks. The first time,
 * the header's min_reader_version is raised to 3 (docs/trace-format.md 3.1). */
static void writer_samples(uint64_t gen, size_t min)
{
	size_t n;
	struct ops_sample_entry *q = samples_take(gen, min, &n);
	if (!q)
		return; /* most rounds: no clock read (a system call) for them */
	uint64_t cpu_at = clock_thread_cpu_ns();
	if (!the_session.file_open && !writer_open()) {
		free(q);
		return;
	}
	/* dependents first (samples.h): every reference of an entry read is covered */
	uint32_t nstacks = samples_count_stacks();
	uint32_t nframes = samples_count_frames();
	uint32_t nmaps = samples_count_mappings();
	writer_strings();
	writer_threads(0);
	for (size_t i = 0; i < n; i++)
		writer_announce(q[i].track);
	if (!the_session.min_reader_raised) {
		tracefile_set_min_reader(&the_session.tf, OPS_FORMAT_MIN_READER_SAMPLES);
		the_session.min_reader_raised = 1;
	}
	writer_table(OPS_REC_MAPPINGS, &the_session.mappings_written, nmaps,
		     sizeof(struct ops_mapping_entry), put_mapping);
	writer_table(OPS_REC_FRAMES, &the_session.frames_written, nframes,
		     sizeof(struct ops_frame_entry), put_frame);
	writer_table(OPS_REC_STACKS, &the_session.stacks_written, nstacks,
		     sizeof(struct ops_stack_entry), put_stack);
	const size_t per_record = (4u << 20) / sizeof(*q);
	for (size_t at = 0; at < n; at += per_record) {
		size_t k = n - at < per_record ? n - at : per_record;
		buf_u32(&the_session.rec, 0);
		buf_u32(&the_session.rec, (uint32_t)k);
		buf_u32(&the_session.rec, (uint32_t)sizeof(*q));
		buf_u32(&the_session.rec, 0);
		for (size_t i = at; i < at + k; i++) {
			buf_u32(&the_session.rec, q[i].track);
			buf_u32(&the_session.rec, q[i].stack);
			buf_u64(&the_session.rec, q[i].ticks);
			buf_u64(&the_session.rec, (uint64_t)q[i].weight);
			buf_u32(&the_session.rec, q[i].flags);
			buf_u32(&the_session.rec, 0);
		}
		writer_record(OPS_REC_SAMPLES, 1);
	}
	free(q);
	the_session.samples_write_ns += clock_thread_cpu_ns() - cpu_at;
	the_session.samples_written += n;
	the_session.samples_writings++;
	the_session.samples_written_at_ns = clock_mono_ns();
}

/* The writer's share of sampling (docs/sampling.md), for the metadata and, with
 * OPSCOPE_UNWIND_STATS, stderr: the sampler's `sampler_cost` does not count it. */
static void record_samples_write_cost(void)
{
	if (!the_session.samples_written)
		return;
	char v[160];
	snprintf(v, sizeof(v),
		 "%llu samples in %llu writings, %.0f ns of the writer's CPU a sample",
		 (unsigned long long)the_session.samples_written,
		 (unsigned long long)the_session.samples_writings,
		 (double)the_session.samples_write_ns / (double)the_session.samples_written);
	record_metadata("samples_write_cost", v);
	if (getenv("OPSCOPE_UNWIND_STATS"))
		fprintf(stderr, "opscope: samples_write_cost: %s\n", v);
}

/* The GPU activity queued since the last round (gpu.h), after the strings its entries name;
 * the first time, the header's min_reader_version is raised to 4 (docs/trace-format.md 3.2).
 * CUPTI's own drops go in as metadata "gpu.dropped_records" (cumulative: the last wins). */
static void writer_gpu(uint64_t gen)
{
	size_t n, cap;
	struct ops_gpu_entry *q = gpu_take(gen, &n, &cap);
	uint64_t dropped = gpu_dropped_total();
	if (!q && dropped == the_session.gpu_dropped_written)
		return;
	if (!the_session.file_open && !writer_open()) {
		gpu_give_back(q, cap);
		return;
	}
	writer_strings();
	if (q && the_session.min_reader_gpu < OPS_FORMAT_MIN_READER_GPU) {
		tracefile_set_min_reader(&the_session.tf, OPS_FORMAT_MIN_READER_GPU);
		the_session.min_reader_gpu = OPS_FORMAT_MIN_READER_GPU;
		the_session.min_reader_raised = 1;
	}
	const size_t per_record = (4u << 20) / sizeof(*q);
	for (size_t at = 0; at < n; at += per_record) {
		size_t k = n - at < per_record ? n - at : per_record;
		buf_u32(&the_session.rec, 0);
		buf_u32(&the_session.rec, (uint32_t)k);
		buf_u32(&the_session.rec, (uint32_t)sizeof(*q));
		buf_u32(&the_session.rec, 0);
		for (size_t i = at; i < at + k; i++) {
			uint8_t e[sizeof(*q)];
			encode_gpu_entry(e, &q[i]);
			buf_append(&the_session.rec, e, sizeof(e));
		}
		writer_record(OPS_REC_GPU, 1);
	}
	gpu_give_back(q, cap);
	if (dropped != the_session.gpu_dropped_written) {
		char v[32];
		snprintf(v, sizeof(v), "%llu",
			 (unsigned long long)(dropped - the_session.gpu_dropped_base));
		buf_u32(&the_session.rec, 1);
		buf_str(&the_session.rec, "gpu.dropped_records", 19);
		buf_str(&the_session.rec, v, strlen(v));
		writer_record(OPS_REC_METADATA, 0);
		the_session.gpu_dropped_written = dropped;
	}
}

struct snapshot {
	struct chunk *chunk; /* a thread's current chunk */
	uint32_t committed;  /* its committed count when taken */
};

/* What a writer round writes: full chunks (and a batch of samples) always; at a snapshot
 * also the committed part of every thread's current chunk, and the samples when their last
 * writing is SESSION_SAMPLES_EVERY_NS old; at a flush or the stop, everything. */
enum round_kind { ROUND_FULL, ROUND_SNAPSHOT, ROUND_ALL };

/* One round of `kind`. Returns 1 if it wrote events. */
static int writer_round(enum round_kind kind)
{
	int snapshot = kind != ROUND_FULL;
	uint64_t gen = the_session.gen;
	struct chunk *full = buffers_take_full();

	/* Snapshot current chunks before reading the string count (see file comment). */
	uint32_t nthreads = atomic_load_explicit(&buffers_thread_count, memory_order_acquire);
	struct snapshot stack_snaps[64];
	struct snapshot *snaps = !snapshot	  ? NULL
				 : nthreads <= 64 ? stack_snaps
						  : malloc(nthreads * sizeof(*snaps));
	uint32_t nsnaps = 0;
	if (snaps) {
		for (struct rthread *t =
			     atomic_load_explicit(&buffers_threads, memory_order_acquire);
		     t && nsnaps < nthreads;
		     t = atomic_load_explicit(&t->next, memory_order_acquire)) {
			struct chunk *c = atomic_load_explicit(&t->current, memory_order_acquire);
			if (!c || c->gen != gen)
				continue;
			snaps[nsnaps].chunk = c;
			snaps[nsnaps].committed =
				atomic_load_explicit(&c->committed, memory_order_acquire);
			nsnaps++;
		}
	}

	int wrote = 0;
	int have_work = full != NULL || nsnaps > 0;
	if (have_work && !the_session.file_open && !writer_open()) {
		/* Cannot write: recycle what we took so recording goes on (and drops). */
		for (struct chunk *c = full, *next; c; c = next) {
			next = atomic_load_explicit(&c->next, memory_order_relaxed);
			buffers_pool_put(c);
		}
		goto out;
	}
	if (the_session.file_open) {
		writer_pending_metadata();
		writer_strings();
		writer_threads(0);
	}

	for (struct chunk *c = full, *next; c; c = next) {
		next = atomic_load_explicit(&c->next, memory_order_relaxed);
		if (c->gen == gen) {
			struct track_state *ts = writer_track(c->track);
			uint32_t committed =
				atomic_load_explicit(&c->committed, memory_order_acquire);
			if (committed > c->written) {
				writer_events(c, c->written, committed);
				wrote = 1;
			}
			if (ts)
				ts->expected_seq = c->seq + 1;
		}
		buffers_pool_put(c);
	}
	for (uint32_t i = 0; i < nsnaps; i++) {
		struct chunk *c = snaps[i].chunk;
		struct track_state *ts = writer_track(c->track);
		/* Only when every earlier chunk of the thread is written, so order holds. If the
		 * chunk was retired meanwhile and written above, written == committed already. */
		if (!ts || c->seq != ts->expected_seq || snaps[i].committed <= c->written)
			continue;
		writer_events(c, c->written, snaps[i].committed);
		wrote = 1;
	}
	/* Samples wait for a batch, a flush or the stop, or a second: a writing pays for a
	 * record per table with new entries and one of samples, compressed (100-130 us on this
	 * VM, mostly cache misses of the compressor's tables). At 1 kHz, writing in every round
	 * what the sampler had handed over (about 60 samples) cost the writer 1.6-2.0 us of CPU
	 * a sample, at every 100 ms snapshot 1.05-1.2, once a second 0.27-0.32. A fatal signal
	 * or exit that the session sees writes the queue; SIGKILL loses up to its last second. */
	int samples_due =
		kind == ROUND_ALL ||
		(kind == ROUND_SNAPSHOT &&
		 clock_mono_ns() - the_session.samples_written_at_ns >= SESSION_SAMPLES_EVERY_NS);
	writer_samples(gen, samples_due ? 0 : SESSION_SAMPLES_BATCH);
	writer_gpu(gen);
out:
	if (snaps != stack_snaps)
		free(snaps);
	return wrote;
}

/* Events thread t lost during this session. */
static uint64_t session_drops(const struct rthread *t)
{
	uint64_t d = atomic_load_explicit(&t->dropped, memory_order_relaxed);
	uint64_t base =
		t->track < the_session.drops_baseline_n ? the_session.drops_baseline[t->track] : 0;
	return d > base ? d - base : 0;
}

static void writer_drops(void)
{
	for (struct rthread *t = atomic_load_explicit(&buffers_threads, memory_order_acquire); t;
	     t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		struct track_state *ts = writer_track(t->track);
		if (!ts || t->pid != getpid())
			continue;
		uint64_t d = session_drops(t);
		if (d == ts->drops_written)
			continue;
		buf_u32(&the_session.rec, t->track);
		buf_u32(&the_session.rec, 0);
		buf_u64(&the_session.rec, d);
		writer_record(OPS_REC_DROPS, 0);
		ts->drops_written = d;
	}
}

static uint64_t writer_total_drops(void)
{
	uint64_t total = 0;
	for (uint32_t i = 0; i < the_session.tracks_cap; i++)
		total += the_session.tracks[i].drops_written;
	return total;
}

static void writer_timers(void)
{
	struct opscope_timer_stats *stats = NULL;
	size_t n = 0;
	if (timers_snapshot(&stats, &n) != 0 || n == 0) {
		free(stats);
		return;
	}
	struct buf entries;
	buf_init(&entries);
	uint32_t count = 0;
	for (size_t i = 0; i < n; i++) {
		if (!stats[i].count)
			continue;
		buf_u32(&entries, record_intern(stats[i].name, strlen(stats[i].name)));
		buf_u32(&entries, 0);
		buf_u64(&entries, stats[i].count);
		buf_u64(&entries, stats[i].total_ns);
		buf_u64(&entries, stats[i].max_ns);
		buf_u64(&entries, stats[i].min_ns);
		count++;
	}
	free(stats);
	if (count) {
		writer_strings();
		buf_u32(&the_session.rec, count);
		buf_append(&the_session.rec, entries.data, entries.len);
		writer_record(OPS_REC_TIMERS, 1);
	}
	buf_free(&entries);
}

/* CPU use between session start and stop, for the report's Device table: the process's
 * user+system time over the elapsed time (can exceed 1 with many cores, as in Paddle), and
 * the busy share of all CPUs from the aggregate "cpu" line of /proc/stat. */
struct cpu_snap {
	clock_t elapsed;      /* times() */
	clock_t proc;	      /* utime + stime */
	uint64_t busy, total; /* /proc/stat "cpu" line, in USER_HZ */
	bool have_stat;
};

static struct cpu_snap cpu_at_start; /* taken and read by the writer thread */

static void cpu_snapshot(struct cpu_snap *c)
{
	struct tms t;
	c->elapsed = times(&t);
	c->proc = t.tms_utime + t.tms_stime;
	c->have_stat = false;
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return;
	unsigned long long v[8] = { 0 }; /* user nice system idle iowait irq softirq steal */
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) >= 4) {
		c->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
		c->total = c->busy + v[3] + v[4];
		c->have_stat = true;
	}
	fclose(f);
}

static void record_cpu_use(void)
{
	struct cpu_snap now;
	cpu_snapshot(&now);
	char v[32];
	clock_t el = now.elapsed - cpu_at_start.elapsed;
	if (el > 0) {
		snprintf(v, sizeof(v), "%.4f", (double)(now.proc - cpu_at_start.proc) / (double)el);
		record_metadata("cpu.process_utilization", v);
	}
	if (now.have_stat && cpu_at_start.have_stat && now.total > cpu_at_start.total) {
		snprintf(v, sizeof(v), "%.4f",
			 (double)(now.busy - cpu_at_start.busy) /
				 (double)(now.total - cpu_at_start.total));
		record_metadata("cpu.system_utilization", v);
	}
}

static void writer_finish(void)
{
	writer_round(ROUND_ALL);
	if (!the_session.file_open && !the_session.lazy_open)
		writer_open();
	if (!the_session.file_open)
		return;
	int sig = atomic_load(&the_session.terminating_signal);
	if (sig) {
		char v[16];
		snprintf(v, sizeof(v), "%d", sig);
		record_metadata("terminated_by_signal", v);
	} else {
		record_cpu_use();
	}
	record_samples_write_cost();
	writer_pending_metadata();
	writer_threads(1);
	writer_drops();
	if (!sig)
		writer_timers();
	writer_clock();
	struct ops_end_payload end = {
		.events_written = atomic_load(&the_session.events_written),
		.events_dropped = writer_total_drops(),
		.stop_ticks = record_ticks(),
		.tracks = atomic_load(&buffers_thread_count),
	};
	buf_u64(&the_session.rec, end.events_written);
	buf_u64(&the_session.rec, end.events_dropped);
	buf_u64(&the_session.rec, end.stop_ticks);
	buf_u32(&the_session.rec, end.tracks);
	buf_u32(&the_session.rec, 0);
	writer_record(OPS_REC_END, 0);
	tracefile_close(&the_session.tf);
	the_session.file_open = 0;
}

static void *writer_main(void *arg)
{
	(void)arg;
	sem_post(&the_session.writer_started); /* past the thread's start-up: session_launch */
	/* Here, not in session_launch: to make /proc/stat the kernel sums the counters of every
	 * CPU and every interrupt (15 us on a 2-CPU VM; it grows with the machine), and the
	 * thread that starts a window should not wait for that. */
	pthread_mutex_lock(&the_session.round_lock);
	cpu_snapshot(&cpu_at_start);
	pthread_mutex_unlock(&the_session.round_lock);
	/* Full chunks are taken every millisecond while they come, and when the pool runs low
	 * (buffers.c wakes the writer); partial chunks are snapshotted every flush interval (and
	 * on flush requests). An idle writer sleeps to the next snapshot: waking every 8 ms,
	 * as it did, cost a session that recorded nothing 0.4% of a CPU on this VM (617
	 * wake-ups and 20 ms of CPU in 5 s). */
	unsigned poll_ms = SESSION_BUSY_POLL_MS;
	uint64_t interval_ns = the_session.opts.flush_interval_ms * 1000000ull;
	uint64_t last_snapshot_ns = clock_mono_ns();
	uint64_t flush_done = 0;
	uint32_t seq = wakeword_prepare(&buffers_writer_wake);
	for (;;) {
		uint64_t deadline = clock_mono_ns() + poll_ms * 1000000ull;
		if (deadline > last_snapshot_ns + interval_ns)
			deadline = last_snapshot_ns + interval_ns;
		wakeword_sleep(&buffers_writer_wake, seq, deadline);
		seq = wakeword_prepare(&buffers_writer_wake); /* wakes from here on: next round */
		if (atomic_load(&the_session.stop_requested))
			break;
		pthread_mutex_lock(&the_session.lock);
		uint64_t flush_target = the_session.flush_requested;
		pthread_mutex_unlock(&the_session.lock);

		uint64_t now = clock_mono_ns();
		int snapshot =
			flush_target > flush_done ||
			now - last_snapshot_ns >= the_session.opts.flush_interval_ms * 1000000ull;
		if (snapshot)
			last_snapshot_ns = now;
		pthread_mutex_lock(&the_session.round_lock);
		int busy = writer_round(flush_target > flush_done ? ROUND_ALL
					: snapshot		  ? ROUND_SNAPSHOT
								  : ROUND_FULL);
		if (the_session.file_open &&
		    now - the_session.last_clock_mono_ns >= SESSION_CLOCK_INTERVAL_NS)
			writer_clock();
		pthread_mutex_unlock(&the_session.round_lock);
		/* Poll fast while chunks keep coming, back off when idle. */
		unsigned idle_ms = the_session.opts.flush_interval_ms;
		poll_ms = busy ? SESSION_BUSY_POLL_MS
			       : (poll_ms < idle_ms / 2 ? poll_ms * 2 : idle_ms);
		flush_done = flush_target;

		pthread_mutex_lock(&the_session.lock);
		the_session.flush_completed = flush_target;
		pthread_cond_broadcast(&the_session.flush_cond);
		pthread_mutex_unlock(&the_session.lock);
	}
	pthread_mutex_lock(&the_session.round_lock);
	writer_finish();
	pthread_mutex_unlock(&the_session.round_lock);
	atomic_store(&the_session.writer_done, 1);
	pthread_mutex_lock(&the_session.lock);
	the_session.flush_completed = the_session.flush_requested;
	pthread_cond_broadcast(&the_session.flush_cond);
	pthread_mutex_unlock(&the_session.lock);
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Output path. */

static int path_is_dir(const char *p)
{
	struct stat st;
	size_t n = strlen(p);
	return (n && p[n - 1] == '/') || (stat(p, &st) == 0 && S_ISDIR(st.st_mode));
}

static void mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
	mkdir(tmp, 0755);
}

/* "out.opscope" + "<tag>" -> "out.<tag>.opscope" ("out" -> "out.<tag>"). 0, or -1 when it
 * does not fit in `size`. */
static int path_with_tag(char *dst, size_t size, const char *path, const char *tag)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(path, '.');
	int n;
	if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
		n = snprintf(dst, size, "%s.%s", path, tag);
	else
		n = snprintf(dst, size, "%.*s.%s%s", (int)(dot - path), path, tag, dot);
	return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* The attempt-th file name this process tries (exclusive files go on while one is taken):
 * the plain name when allowed (`run.opscope`), then `run.<pid>.opscope`,
 * `run.<pid>.1.opscope`, `run.<pid>.2.opscope`, ... The pid is read now, so a fork child
 * that inherited the names gets its own. 0, or -1 when the name is too long. */
static int session_name(char *dst, size_t size, int attempt)
{
	if (the_session.plain_name) {
		if (attempt == 0) {
			int n = snprintf(dst, size, "%s", the_session.name_stem);
			return n >= 0 && (size_t)n < size ? 0 : -1;
		}
		attempt--;
	}
	char tag[32];
	if (attempt == 0)
		snprintf(tag, sizeof(tag), "%d", (int)getpid());
	else
		snprintf(tag, sizeof(tag), "%d.%d", (int)getpid(), attempt);
	return path_with_tag(dst, size, the_session.name_stem, tag);
}

/* The program's name as started (argv[0] without directories; comm is cut at 15 bytes),
 * made safe for a file name. */
static const char *program_name(char *buf, size_t size)
{
	snprintf(buf, size, "%s",
		 program_invocation_short_name && *program_invocation_short_name
			 ? program_invocation_short_name
			 : "process");
	for (char *p = buf; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	return buf;
}

/* Decide the names of this process's file (session_name). `base` is the configured output
 * (file or directory), from the caller or, when `from_env`, from OPSCOPE_OUTPUT. Under
 * `opscope record` (OPSCOPE_ROOT_PID set) only the root process may take the output's own
 * name, and when that name is record's (from the environment) even the root takes it only
 * if it is free (O_EXCL): another image of the root's pid, after an exec, finds it taken
 * and goes on to the pid names. Every other process gets its pid in the name, created
 * exclusively. Without `opscope record`, the caller's file is overwritten, as asked.
 * Returns whether this process is not the root (its file is then created lazily). */
static int session_resolve_path(const char *base, int from_env, int force_child)
{
	int pid = (int)getpid();
	const char *root = getenv("OPSCOPE_ROOT_PID");
	int child = force_child || (root && atoi(root) != pid);
	char prog[128];
	if (base != the_session.base)
		snprintf(the_session.base, sizeof(the_session.base), "%s", base);
	the_session.base_from_env = from_env;
	/* record's own output, in the root: the file an exec may remove when empty */
	the_session.root_file = !child && root && from_env;
	if (path_is_dir(base)) {
		mkdir_p(base);
		size_t n = strlen(base);
		snprintf(the_session.name_stem, sizeof(the_session.name_stem), "%s%s%s.opscope",
			 base, n && base[n - 1] == '/' ? "" : "/",
			 program_name(prog, sizeof(prog)));
		the_session.plain_name = 0;
		the_session.exclusive = 1;
	} else {
		snprintf(the_session.name_stem, sizeof(the_session.name_stem), "%s", base);
		the_session.plain_name = !child;
		the_session.exclusive = child || the_session.root_file;
	}
	if (session_name(the_session.path, sizeof(the_session.path), 0) != 0)
		snprintf(the_session.path, sizeof(the_session.path), "%s", base); /* in errors */
	return child;
}

/* ---------------------------------------------------------------------------------------- */
/* Public API. */

static void session_resolve_options(const struct opscope_options *in)
{
	struct opscope_options o = { 0 };
	if (in)
		o = *in;
	if (!o.buffer_bytes)
		o.buffer_bytes = SESSION_DEFAULT_BUFFER;
	if (!o.chunk_bytes)
		o.chunk_bytes = SESSION_DEFAULT_CHUNK;
	if (!o.flush_interval_ms)
		o.flush_interval_ms = SESSION_DEFAULT_FLUSH_MS;
	the_session.opts = o;
	the_session.opts.output =
		NULL; /* not kept: the caller owns it; the_session.path is what counts */
}

/* Start the writer and open recording. Called with the_session.lock held. */
static int session_launch(void)
{
	/* Drops before this session do not count in its file. */
	free(the_session.tracks);
	the_session.tracks = NULL;
	the_session.tracks_cap = 0;
	free(the_session.drops_baseline);
	the_session.drops_baseline_n = atomic_load(&buffers_thread_count);
	the_session.drops_baseline =
		calloc(the_session.drops_baseline_n + 1, sizeof(*the_session.drops_baseline));
	if (!the_session.drops_baseline)
		the_session.drops_baseline_n = 0;
	for (struct rthread *t = atomic_load(&buffers_threads); t; t = atomic_load(&t->next))
		if (t->track < the_session.drops_baseline_n)
			the_session.drops_baseline[t->track] =
				atomic_load_explicit(&t->dropped, memory_order_relaxed);
	atomic_store(&the_session.threads_announced, 0);
	the_session.file_open = 0;
	the_session.file_created = 0;
	the_session.file_failed = 0;
	the_session.strings_written = 0;
	the_session.mappings_written = 0;
	the_session.frames_written = 0;
	the_session.stacks_written = 0;
	the_session.samples_write_ns = 0;
	the_session.samples_written = 0;
	the_session.samples_writings = 0;
	the_session.samples_written_at_ns = clock_mono_ns();
	the_session.min_reader_raised = 0;
	the_session.min_reader_gpu = 0;
	the_session.gpu_dropped_base = gpu_dropped_total(); /* counted from this session on */
	the_session.gpu_dropped_written = the_session.gpu_dropped_base;
	buf_init(&the_session.rec);
	atomic_store(&the_session.events_written, 0);
	atomic_store(&the_session.drop_marks, 0);
	atomic_store(&the_session.bytes_written, 0);
	atomic_store(&the_session.stop_requested, 0);
	atomic_store(&the_session.writer_done, 0);
	atomic_store(&the_session.terminating_signal, 0);
	the_session.flush_requested = the_session.flush_completed = 0;

	if (!the_session.lazy_open && !writer_open()) {
		return error_set(OPSCOPE_EOPEN, "cannot create %s: %s", the_session.path,
				 strerror(the_session.open_errno));
	}
	the_session.gen++;
	sem_init(&the_session.writer_started, 0, 0);
	if (pthread_create(&the_session.writer, NULL, writer_main, NULL) != 0) {
		if (the_session.file_open)
			tracefile_close(&the_session.tf);
		the_session.file_open = 0;
		sem_destroy(&the_session.writer_started);
		return error_set(OPSCOPE_ETHREAD, "cannot start the writer thread");
	}
	/* Until the writer runs writer_main, it may be inside a sanitizer's thread start, which
	 * allocates and frees (see session_fork_prepare): a fork then must not happen. */
	while (sem_wait(&the_session.writer_started) != 0 && errno == EINTR)
		;
	sem_destroy(&the_session.writer_started);
	the_session.writer_running = 1;
	the_session.active = 1;
	the_session.pid = getpid();
	__atomic_store_n(&opscope_recording_word, the_session.gen * 2 + 1, __ATOMIC_RELEASE);
	return 0;
}

static pthread_once_t session_fork_once = PTHREAD_ONCE_INIT;

static void session_register_fork(void)
{
	pthread_atfork(session_fork_prepare, session_fork_parent, session_fork_child);
}

void record_fork_handlers_install(void)
{
	pthread_once(&session_fork_once, session_register_fork);
}

int record_nvtx_wanted(void)
{
	const char *env = getenv("OPSCOPE_NVTX");
	if (env && strcmp(env, "0") == 0)
		return 0;
	return the_session.opts.nvtx != -1;
}

OPSCOPE_API int opscope_session_start(const struct opscope_options *opts)
{
	error_clear();
	record_fork_handlers_install();
	pthread_mutex_lock(&the_session.lock);
	int rc = 0;
	if (the_session.active) {
		rc = error_set(OPSCOPE_EBUSY, "a session is already recording to %s",
			       the_session.path);
		goto out;
	}
	session_resolve_options(opts);
	if (buffers_pool_init(the_session.opts.buffer_bytes, the_session.opts.chunk_bytes) != 0) {
		rc = error_set(OPSCOPE_ENOMEM, "cannot allocate %zu bytes of event buffers",
			       the_session.opts.buffer_bytes);
		goto out;
	}
	int from_env = !(opts && opts->output);
	const char *base = from_env ? getenv("OPSCOPE_OUTPUT") : opts->output;
	char def[64];
	if (!base || !*base) {
		snprintf(def, sizeof(def), "opscope.%d.opscope", (int)getpid());
		base = def;
		from_env = 0;
	}
	/* Another process of a recorded program creates its file only if it records something:
	 * a build or a shell that runs many tools leaves no empty files behind. */
	the_session.lazy_open = session_resolve_path(base, from_env, 0);
	the_session.exec_removed_root = 0;
	rc = session_launch();
out:
	pthread_mutex_unlock(&the_session.lock);
	/* After the lock: the sampler records its mechanism in the metadata. */
	if (rc == 0)
		sampler_start(opts ? opts->sample_hz : 0, opts ? opts->sample_mode : 0);
	return rc;
}

/* Ask the writer to finish and wait for it. Called with the_session.lock held. */
static void session_join_writer(void)
{
	__atomic_store_n(&opscope_recording_word, the_session.gen * 2 + 2, __ATOMIC_RELEASE);
	atomic_store(&the_session.stop_requested, 1);
	wakeword_wake_now(&buffers_writer_wake);
	pthread_mutex_unlock(&the_session.lock); /* the writer takes it while finishing */
	pthread_join(the_session.writer, NULL);
	pthread_mutex_lock(&the_session.lock);
	the_session.writer_running = 0;
	the_session.active = 0;
	buf_free(&the_session.rec);
	encode_free(&the_session.enc);
}

OPSCOPE_API int opscope_session_stop(void)
{
	error_clear();
	sampler_stop();	    /* its last samples go into the final round */
	record_gpu_flush(); /* so do the GPU's last records (no lock of ours held: CUPTI may call
			       back into record_gpu_entries on this thread) */
	pthread_mutex_lock(&the_session.lock);
	if (!the_session.active) {
		pthread_mutex_unlock(&the_session.lock);
		return error_set(OPSCOPE_ENOTACTIVE, "no session is recording");
	}
	record_close_bare_step();
	buffers_release_current(); /* the caller's own partial chunk goes in whole */
	session_join_writer();
	int rc = the_session.file_failed
			 ? error_set(OPSCOPE_EIO, "writing %s failed", the_session.path)
			 : 0;
	pthread_mutex_unlock(&the_session.lock);
	return rc;
}

OPSCOPE_API int opscope_session_flush(void)
{
	error_clear();
	pthread_mutex_lock(&the_session.lock);
	if (!the_session.active) {
		pthread_mutex_unlock(&the_session.lock);
		return error_set(OPSCOPE_ENOTACTIVE, "no session is recording");
	}
	uint64_t target = ++the_session.flush_requested;
	wakeword_wake_now(&buffers_writer_wake);
	while (the_session.flush_completed < target && !atomic_load(&the_session.writer_done))
		pthread_cond_wait(&the_session.flush_cond, &the_session.lock);
	int rc = the_session.file_failed
			 ? error_set(OPSCOPE_EIO, "writing %s failed", the_session.path)
			 : 0;
	pthread_mutex_unlock(&the_session.lock);
	return rc;
}

OPSCOPE_API int opscope_session_active(void)
{
	return opscope_recording();
}

OPSCOPE_API const char *opscope_session_path(void)
{
	return the_session.path[0] ? the_session.path : NULL;
}

OPSCOPE_API int opscope_session_get_stats(struct opscope_session_stats *out)
{
	if (!out)
		return OPSCOPE_EINVAL;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&the_session.lock);
	out->events_written =
		atomic_load(&the_session.events_written) - atomic_load(&the_session.drop_marks);
	out->bytes_written = atomic_load(&the_session.bytes_written);
	for (struct rthread *t = atomic_load(&buffers_threads); t; t = atomic_load(&t->next))
		if (t->pid == getpid())
			out->events_dropped += session_drops(t);
	out->threads = atomic_load(&the_session.threads_announced);
	out->events_recorded = out->events_written;
	pthread_mutex_unlock(&the_session.lock);
	return 0;
}

void record_metadata(const char *key, const char *value)
{
	pthread_mutex_lock(&the_session.lock);
	meta_add(&the_session.meta, &the_session.meta_count, key, value ? value : "");
	pthread_mutex_unlock(&the_session.lock);
}

/* ---------------------------------------------------------------------------------------- */
/* Process events: fork, exit, fatal signals (called from autostart.c). */

/* fork() copies only the calling thread. Every lock another thread might hold is taken
 * first, so the child inherits them free, and in one fixed order (one handler for all of
 * them: pthread_atfork runs separate handlers in reverse order of registration, and the
 * writer takes the timer, session and intern locks inside a round).
 *
 * The round lock comes first: the fork waits until the writer is between rounds (a round is
 * milliseconds). Then the child's copy of the writer's state (its buffers, encoder, track
 * table) is not half-updated, and the writer holds no lock of the C library or of a
 * sanitizer's allocator (GCC 12's ASan does not take its allocator's locks on fork: a child
 * forked while the writer was inside malloc hung in its first malloc). The sampler's lock
 * does the same for the sampler thread, which allocates only inside its rounds.
 *
 * Outside our code, a thread's start-up allocates too: GCC 12's ASan starts each thread with
 * AsanThread::Init, whose pthread_getattr_np frees into the quarantine, which may take a lock
 * of the allocator's size classes. A fork while the writer or the sampler thread was there
 * (a program that forks right after the session started, on a busy machine where the new
 * threads had not run yet) left that lock held in the child, whose own new threads then hung
 * in the same place (seen with gdb: both in GetFromAllocator, class 36, under
 * pthread_getattr_np's free). So session_launch and sampler_start return only once their
 * thread runs our code: no fork can fall into a start-up of ours. */
void session_fork_prepare(void)
{
	sampler_fork_prepare();
	pthread_mutex_lock(&the_session.round_lock);
	pthread_mutex_lock(&the_session.lock);
	timers_lock_for_fork();
	samples_lock_for_fork();
	gpu_lock_for_fork();
	intern_lock_for_fork();
	buffers_lock_for_fork();
}

void session_fork_parent(void)
{
	buffers_unlock_for_fork();
	intern_unlock_for_fork();
	gpu_unlock_for_fork();
	samples_unlock_for_fork();
	timers_unlock_for_fork();
	pthread_mutex_unlock(&the_session.lock);
	pthread_mutex_unlock(&the_session.round_lock);
	sampler_fork_parent();
}

/* The child has the parent's memory but not its writer thread. Its events go to a file of
 * its own, created only if it records something (a child that execs at once leaves none). */
void session_fork_child(void)
{
	sampler_fork_child();
	buffers_after_fork_child();
	intern_after_fork_child();
	samples_after_fork_child();
	gpu_after_fork_child();
	timers_unlock_for_fork();
	pthread_mutex_init(&the_session.lock, NULL);
	pthread_mutex_init(&the_session.round_lock, NULL);
	pthread_cond_init(&the_session.flush_cond, NULL);
	int was_active = the_session.active;
	the_session.active = 0;
	the_session.writer_running = 0;
	if (the_session.file_open) {
		close(the_session.tf.fd); /* the parent's file: never write to it from here */
		the_session.tf.fd = -1;
		tracefile_close(&the_session.tf);
		the_session.file_open = 0;
	}
	/* The parent's metadata and record buffer are the child's copies of heap blocks: freed
	 * here rather than dropped (LeakSanitizer counted both in every forked child). */
	buf_free(&the_session.meta);
	buf_free(&the_session.rec);
	the_session.meta_count = 0;
	if (!was_active) {
		__atomic_store_n(&opscope_recording_word, the_session.gen * 2 + 2,
				 __ATOMIC_RELEASE);
		return;
	}
	/* Names derive from the parent's configured output, not from the file it got. */
	session_resolve_path(the_session.base, the_session.base_from_env, 1);
	the_session.lazy_open = 1;
	pthread_mutex_lock(&the_session.lock);
	int rc = session_launch();
	pthread_mutex_unlock(&the_session.lock);
	if (rc == 0)
		sampler_after_fork_child_session();
}

/* Stop from a signal handler: ask the writer for its final round and wait (bounded) for it.
 * Only async-signal-safe calls: atomics, sem_post, nanosleep. */
void session_stop_from_signal(int sig)
{
	if (!the_session.writer_running || pthread_equal(pthread_self(), the_session.writer))
		return;
	__atomic_store_n(&opscope_recording_word, the_session.gen * 2 + 2, __ATOMIC_RELEASE);
	atomic_store(&the_session.terminating_signal, sig);
	atomic_store(&the_session.stop_requested, 1);
	wakeword_wake_now(&buffers_writer_wake);
	for (int i = 0; i < 2000 && !atomic_load(&the_session.writer_done); i++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

int session_owned_here(void)
{
	return the_session.active && the_session.pid == getpid();
}

/* exec() keeps the pid and replaces the image: its buffers, its writer thread and its atexit
 * handlers are gone without a word. So the session is stopped first, as at exit (final round,
 * every thread's committed events included, END, file closed), and the new image, which
 * starts its own session from the environment, never reuses the name (session_name). One
 * exception: the root file of `opscope record` that holds nothing is removed, so that the
 * program run by a wrapper that records nothing and execs (`env`, `sh -c 'exec ...'`,
 * `numactl`) gets the name the user chose. */
int session_exec_prepare(const char *program)
{
	if (!session_owned_here())
		return 0;
	record_metadata("exec", program);
	if (opscope_session_stop() == OPSCOPE_ENOTACTIVE)
		return 0;
	pthread_mutex_lock(&the_session.lock);
	the_session.exec_removed_root = 0;
	if (the_session.root_file && the_session.file_created && !the_session.file_failed &&
	    atomic_load(&the_session.events_written) == 0 && writer_total_drops() == 0)
		the_session.exec_removed_root = unlink(the_session.path) == 0;
	pthread_mutex_unlock(&the_session.lock);
	return 1;
}

/* The exec failed and the program goes on: so does its recording, into a new file (the
 * finished one is never reopened), created once there are events, or at once when the exec
 * removed the root file (the root always has its file). */
void session_exec_failed(void)
{
	pthread_mutex_lock(&the_session.lock);
	if (!the_session.active) {
		session_resolve_path(the_session.base, the_session.base_from_env, 0);
		the_session.exclusive = 1;
		the_session.lazy_open = !the_session.exec_removed_root;
		the_session.exec_removed_root = 0;
		session_launch();
	}
	pthread_mutex_unlock(&the_session.lock);
	sampler_resume();
}
