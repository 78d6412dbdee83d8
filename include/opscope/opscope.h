/*
 * opscope.h: the one public C header of opscope, a profiler for deep-learning workloads.
 *
 * Link with -lopscope (shared) or libopscope.a (static, also needs -lpthread -ldl -lzstd).
 *
 * What it offers:
 *   - a recording session that streams events to a .opscope trace file (one per process);
 *   - ranges (begin/end, scoped), instants, counters, flows and typed arguments, from any thread;
 *   - scoped timers with total/avg/max/min/count per name that work without any session;
 *   - a profiler object with a step scheduler (closed/ready/record/repeat/skip_first), a
 *     callback when a recorded window is ready, and a timer-only benchmark mode.
 *
 * Thread safety: every function may be called from any thread unless its comment says
 * otherwise. Recording functions never block, never take a lock and never make a system call
 * on their fast path; when buffers are full they drop the event and count it.
 *
 * Compile-time switch: define OPSCOPE_DISABLE before including this header and every
 * OPSCOPE_* instrumentation macro expands to nothing.
 */
#ifndef OPSCOPE_OPSCOPE_H
#define OPSCOPE_OPSCOPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define OPSCOPE_API __attribute__((visibility("default")))
#else
#define OPSCOPE_API
#endif

#define OPSCOPE_VERSION_MAJOR 0
#define OPSCOPE_VERSION_MINOR 1
#define OPSCOPE_VERSION_PATCH 0

/* ---------------------------------------------------------------------------------------- */
/* Errors: negative numbers, one table. */

#define OPSCOPE_ERRNO_MAP(X)                                       \
	X(OK, 0, "success")                                        \
	X(EINVAL, -1, "invalid argument")                          \
	X(ENOMEM, -2, "out of memory")                             \
	X(EIO, -3, "input/output error")                           \
	X(EBUSY, -4, "a session is already active")                \
	X(ENOTACTIVE, -5, "no session is active")                  \
	X(EFORMAT, -6, "malformed trace file")                     \
	X(EVERSION, -7, "trace file needs a newer reader")         \
	X(ETRUNCATED, -8, "trace file is truncated")               \
	X(EUNSUPPORTED, -9, "feature not supported by this build") \
	X(ETHREAD, -10, "could not start a thread")                \
	X(EOPEN, -11, "could not open file")

enum opscope_error {
#define OPSCOPE_ERR_ENUM_(name, value, text) OPSCOPE_##name = (value),
	OPSCOPE_ERRNO_MAP(OPSCOPE_ERR_ENUM_)
#undef OPSCOPE_ERR_ENUM_
};

/* A static English sentence for an error code ("unknown error" for codes not in the table). */
OPSCOPE_API const char *opscope_strerror(int err);
/* The symbolic name of an error code ("EINVAL"). */
OPSCOPE_API const char *opscope_err_name(int err);
/* The first detailed message of the last failed session or profiler call on this thread
 * ("cannot create /x/y.opscope: Permission denied"), or "" if none. */
OPSCOPE_API const char *opscope_last_error(void);

/* ---------------------------------------------------------------------------------------- */
/* Event categories. The numbering of the first fifteen follows paddle.profiler's
 * TracerEventType; the values are stored in trace files and never change. */

enum opscope_category {
	OPSCOPE_CAT_OPERATOR = 0,
	OPSCOPE_CAT_DATALOADER = 1,
	OPSCOPE_CAT_PROFILE_STEP = 2,
	OPSCOPE_CAT_CUDA_RUNTIME = 3,
	OPSCOPE_CAT_KERNEL = 4,
	OPSCOPE_CAT_MEMCPY = 5,
	OPSCOPE_CAT_MEMSET = 6,
	OPSCOPE_CAT_USER_DEFINED = 7,
	OPSCOPE_CAT_OPERATOR_INNER = 8,
	OPSCOPE_CAT_FORWARD = 9,
	OPSCOPE_CAT_BACKWARD = 10,
	OPSCOPE_CAT_OPTIMIZATION = 11,
	OPSCOPE_CAT_COMMUNICATION = 12,
	OPSCOPE_CAT_PYTHON_OP = 13,
	OPSCOPE_CAT_PYTHON_USER_DEFINED = 14,
	OPSCOPE_CAT_PYTHON_FUNCTION = 15,
	OPSCOPE_CAT_MEMORY = 16,
	OPSCOPE_CAT_CUDA_DRIVER = 17,
	OPSCOPE_CAT_NVTX = 18,
	OPSCOPE_CAT_COUNT_
};

/* "ProfileStep", "Dataloader", ...; "Unknown" for values out of range. */
OPSCOPE_API const char *opscope_category_name(int category);
/* The category whose name is `name` (case-insensitive), or -1. */
OPSCOPE_API int opscope_category_from_name(const char *name);

/* ---------------------------------------------------------------------------------------- */
/* Sessions: one recording into one trace file. At most one session is active per process. */

enum opscope_compression {
	OPSCOPE_COMPRESS_DEFAULT = 0, /* zstd when this build has it, else none */
	OPSCOPE_COMPRESS_NONE = 1,
	OPSCOPE_COMPRESS_ZSTD = 2,
};

/* Options for a session. Zero (or NULL) in any field means its default. */
struct opscope_options {
	/* Output file, or a directory (ends in '/' or exists) that receives
	 * "<program>.<pid>.opscope". Default: $OPSCOPE_OUTPUT, else "opscope.<pid>.opscope". */
	const char *output;
	size_t buffer_bytes;	    /* event buffer for all threads, bytes; default 64 MiB */
	size_t chunk_bytes;	    /* per-thread chunk, bytes (power of two); default 64 KiB */
	uint32_t flush_interval_ms; /* how often partial chunks reach the file; default 100 */
	int compression;	    /* enum opscope_compression */
	int compression_level;	    /* zstd level; default 1 */
	int nvtx;		    /* capture NVTX ranges: 0 default (on), 1 on, -1 off */
	/* CPU stack sampling of every thread of the process (docs/sampling.md): samples per
	 * second, 0 = off (the default; `opscope record --sample` uses 99). */
	uint32_t sample_hz;
	int sample_mode; /* enum opscope_sample_mode */
};

/* What a sample is taken of (opscope_options.sample_mode). */
enum opscope_sample_mode {
	OPSCOPE_SAMPLE_CPU = 0,	 /* on-CPU: every 1/HZ of a thread's CPU time (default) */
	OPSCOPE_SAMPLE_WALL = 1, /* wall-clock: every thread every 1/HZ s, waiting or not */
};

/* Start recording. Returns 0, OPSCOPE_EBUSY if a session is active, or another error;
 * details in opscope_last_error(). */
OPSCOPE_API int opscope_session_start(const struct opscope_options *opts);
/* Stop recording, write everything buffered and close the file. Returns 0 or an error. */
OPSCOPE_API int opscope_session_stop(void);
/* Write everything committed so far to the file and return when it is there. */
OPSCOPE_API int opscope_session_flush(void);
/* 1 while a session is recording, else 0. */
OPSCOPE_API int opscope_session_active(void);
/* Path of the file of the active (or last) session, or NULL. The string stays valid until
 * the next session starts. */
OPSCOPE_API const char *opscope_session_path(void);

/* Counters of the active session, or of the last one after it stopped. */
struct opscope_session_stats {
	uint64_t events_recorded; /* events stored in buffers */
	uint64_t events_written;  /* events written to the file */
	uint64_t events_dropped;  /* events lost because every buffer was full */
	uint64_t bytes_written;	  /* bytes of the trace file */
	uint32_t threads;	  /* threads that recorded at least one event */
};
OPSCOPE_API int opscope_session_get_stats(struct opscope_session_stats *out);

/* Mark a training-step boundary: ends the current "ProfileStep#N" range and begins
 * "ProfileStep#N+1". num_samples < 0 means "not given". Also feeds the benchmark of an
 * active profiler (see below). Without a profiler, call it at the start or at the end of
 * each iteration: both give one step per iteration (docs/profiler.md). */
OPSCOPE_API void opscope_step(int64_t num_samples);
/* Without a profiler: end the current step range (with its num_samples, < 0 for none) and
 * begin none, e.g. when the data runs out at the end of an epoch. */
OPSCOPE_API void opscope_step_end(int64_t num_samples);

/* ---------------------------------------------------------------------------------------- */
/* Recording. */

/* A static descriptor per call site, made by the macros below. `id` is filled by the library
 * on first use; treat it as private. */
struct opscope_site {
	const char *name;  /* range name, a string literal */
	const char *file;  /* __FILE__ */
	uint32_t line;	   /* __LINE__ */
	uint32_t category; /* enum opscope_category */
	uint32_t id;	   /* interned name id, 0 until first use (library-owned) */
};

/* The run-time switch: bit 0 set while a session records. Read by the macros with one
 * relaxed load so that a disabled range costs nothing more. Library-owned. */
OPSCOPE_API extern uint64_t opscope_recording_word;

static inline int opscope_recording(void)
{
#if defined(__GNUC__)
	return (int)(__atomic_load_n(&opscope_recording_word, __ATOMIC_RELAXED) & 1u);
#else
	return (int)(opscope_recording_word & 1u);
#endif
}

OPSCOPE_API void opscope_range_begin_site(struct opscope_site *site);
/* Begin a range with a dynamic name (copied and interned; prefer the macros for literals). */
OPSCOPE_API void opscope_range_begin(int category, const char *name);
/* End the innermost open range of this thread. */
OPSCOPE_API void opscope_range_end(void);
/* A zero-duration event. */
OPSCOPE_API void opscope_instant(int category, const char *name);
/* A sample of the counter `name`. */
OPSCOPE_API void opscope_counter(const char *name, double value);
/* Typed arguments, attached to the last event this thread recorded. */
OPSCOPE_API void opscope_arg_int(const char *key, int64_t value);
OPSCOPE_API void opscope_arg_uint(const char *key, uint64_t value);
OPSCOPE_API void opscope_arg_double(const char *key, double value);
OPSCOPE_API void opscope_arg_string(const char *key, const char *value);
/* The same by interned string id: for collectors that pass the same few names and values
 * again and again (the PyTorch observer), an id is looked up once instead of per event. An
 * id names its string for the life of the process, in every session; 0 when out of memory. */
OPSCOPE_API uint32_t opscope_string_id(const char *s, size_t len);
OPSCOPE_API void opscope_range_begin_id(int category, uint32_t name_id);
OPSCOPE_API void opscope_arg_int_id(uint32_t key_id, int64_t value);
OPSCOPE_API void opscope_arg_string_id(uint32_t key_id, uint32_t value_id);
/* Flows: `flow_out` leaves the innermost open range of this thread; `flow_in` with the same
 * id enters the innermost open range of the thread that calls it (any thread). */
OPSCOPE_API void opscope_flow_out(uint64_t id);
OPSCOPE_API void opscope_flow_in(uint64_t id);
/* Ranges that may end on another thread and need not nest (NVTX start/end ranges). */
OPSCOPE_API void opscope_async_begin(int category, const char *name, uint64_t id);
OPSCOPE_API void opscope_async_end(uint64_t id);
/* Name the calling thread in traces (also read from the OS when the session stops). */
OPSCOPE_API void opscope_thread_name(const char *name);

/* ---------------------------------------------------------------------------------------- */
/* Scoped timers: aggregate statistics per name (total, average, max, min, count), kept in
 * per-thread slots with no lock and no system call, with or without a session.
 * Like paddle's StatSet REGISTER_TIMER, without its integer-division average. */

struct opscope_timer_site {
	const char *name; /* timer name, a string literal */
	uint32_t id;	  /* library-owned, 0 until first use */
};

struct opscope_timer_stats {
	const char *name;  /* owned by the library */
	uint64_t count;	   /* samples */
	uint64_t total_ns; /* sum of samples */
	uint64_t max_ns;   /* largest sample */
	uint64_t min_ns;   /* smallest sample (0 when count == 0) */
	double avg_ns;	   /* total_ns / count */
};

/* The current time in the timers' clock (TSC ticks or ns; only differences matter). */
OPSCOPE_API uint64_t opscope_timer_now(void);
/* Add one sample that started at `start` (a value of opscope_timer_now()). */
OPSCOPE_API void opscope_timer_stop(struct opscope_timer_site *site, uint64_t start);
/* Add one sample of `ns` nanoseconds to the timer named `name`. */
OPSCOPE_API void opscope_timer_add_ns(const char *name, uint64_t ns);
/* Fill `out` with the merged statistics of the timer `name`; OPSCOPE_EINVAL if unknown. */
OPSCOPE_API int opscope_timer_get(const char *name, struct opscope_timer_stats *out);
/* Print every timer with count > 0 as a table (ms), sorted by total time. Returns rows. */
OPSCOPE_API int opscope_timers_print(FILE *out);
/* Zero every timer. */
OPSCOPE_API void opscope_timers_reset(void);

/* ---------------------------------------------------------------------------------------- */
/* Profiler: the paddle.profiler / torch.profiler control loop in C. */

enum opscope_state {
	OPSCOPE_STATE_CLOSED = 0,
	OPSCOPE_STATE_READY = 1,
	OPSCOPE_STATE_RECORD = 2,
	OPSCOPE_STATE_RECORD_AND_RETURN = 3,
};
OPSCOPE_API const char *opscope_state_name(int state);

/* make_scheduler(closed, ready, record, repeat, skip_first). repeat 0 = forever. */
struct opscope_schedule {
	uint32_t closed, ready, record, repeat, skip_first;
};
/* Validate like paddle.profiler.make_scheduler: record > 0. Returns 0 or OPSCOPE_EINVAL. */
OPSCOPE_API int opscope_schedule_check(const struct opscope_schedule *s);
/* The state of step `step` under schedule `s`. */
OPSCOPE_API int opscope_schedule_state(const struct opscope_schedule *s, uint64_t step);
/* The (start, end) form: record steps [start, end). OPSCOPE_EINVAL unless end > start. */
OPSCOPE_API int opscope_schedule_from_range(int64_t start, int64_t end,
					    struct opscope_schedule *out);

struct opscope_profiler;
typedef int (*opscope_state_fn)(uint64_t step, void *user);
typedef void (*opscope_ready_fn)(struct opscope_profiler *prof, const char *trace_path, void *user);

struct opscope_profiler_options {
	/* Where windows go: a directory (each window "<worker>_w<N>.opscope") or a file path
	 * (window N > 0 gets ".<N>" before the extension). Default "./opscope_log/". */
	const char *output;
	const struct opscope_schedule *schedule; /* NULL and no state_fn: record every step */
	opscope_state_fn state_fn;		 /* a custom scheduler; wins over `schedule` */
	opscope_ready_fn on_trace_ready;	 /* called when a recorded window is complete */
	void *user;				 /* passed to the callbacks */
	int timer_only;				 /* benchmark only: no events, no files */
	int skip_steps;	   /* benchmark: steps left out of the Perf Summary; default 10 */
	FILE *summary_out; /* where stop() prints the Perf Summary; default stdout */
	const struct opscope_options *session; /* buffer sizes, compression, ... */
	/* 1: also record GPU activity (the profiler's GPU target): opscope_gpu_start() at
	 * opscope_profiler_create(); where it cannot, one warning and the host is recorded. */
	int gpu;
};

OPSCOPE_API struct opscope_profiler *
opscope_profiler_create(const struct opscope_profiler_options *opts);
/* Start recording GPU activity through CUPTI (docs/gpu.md), as the CUDA driver does when
 * CUDA_INJECTION64_PATH names libopscope (`opscope record`): call it before the program's
 * first CUDA call (CUPTI sees the work launched after it). Idempotent. 0, or
 * OPSCOPE_EUNSUPPORTED when this build has no GPU collector or CUPTI cannot be used (one
 * warning line says why; host recording is not affected). */
OPSCOPE_API int opscope_gpu_start(void);
OPSCOPE_API void opscope_profiler_destroy(struct opscope_profiler *prof);
OPSCOPE_API int opscope_profiler_start(struct opscope_profiler *prof);
/* End step N and begin step N+1; num_samples < 0 = not given (throughput in steps/s). */
OPSCOPE_API int opscope_profiler_step(struct opscope_profiler *prof, int64_t num_samples);
OPSCOPE_API int opscope_profiler_stop(struct opscope_profiler *prof);
OPSCOPE_API int opscope_profiler_state(const struct opscope_profiler *prof);
OPSCOPE_API uint64_t opscope_profiler_step_num(const struct opscope_profiler *prof);

/* Benchmark hooks: the data loader calls these around fetching a batch (reader cost). */
OPSCOPE_API void opscope_reader_begin(void);
OPSCOPE_API void opscope_reader_end(void);

/* Averages since the previous call, like paddle's step_info(unit):
 * " reader_cost: 0.51946 s batch_cost: 0.66077 s ips: 6.054 images/s". unit NULL = "samples".
 * Writes at most `size` bytes to `buf`; returns the length it needed. */
OPSCOPE_API int opscope_profiler_step_info(struct opscope_profiler *prof, const char *unit,
					   char *buf, size_t size);

/* The Perf Summary figures over the steps after `skip_steps`. */
struct opscope_bench_summary {
	uint64_t steps; /* steps measured */
	double reader_avg_s, reader_max_s, reader_min_s;
	double batch_avg_s, batch_max_s, batch_min_s;
	double ips_avg, ips_max, ips_min; /* samples/s, or steps/s when samples_mode == 0 */
	int samples_mode;		  /* 1: every step gave num_samples */
	double reader_ratio;		  /* reader_avg / batch_avg * 100 */
};
OPSCOPE_API int opscope_profiler_bench_summary(const struct opscope_profiler *prof,
					       struct opscope_bench_summary *out);
OPSCOPE_API void opscope_profiler_print_summary(const struct opscope_profiler *prof, FILE *out);

/* ---------------------------------------------------------------------------------------- */
/* Instrumentation macros. */

#define OPSCOPE_CONCAT2_(a, b) a##b
#define OPSCOPE_CONCAT_(a, b)  OPSCOPE_CONCAT2_(a, b)

#if defined(OPSCOPE_DISABLE)

#define OPSCOPE_RANGE_BEGIN(category, name) ((void)0)
#define OPSCOPE_RANGE_END()		    ((void)0)
#define OPSCOPE_SCOPE(category, name)
#define OPSCOPE_TIMER(name)
#define OPSCOPE_INSTANT(category, name) ((void)0)
#define OPSCOPE_COUNTER(name, value)	((void)0)

#else

/* Begin a range named by a string literal, with a static descriptor for this call site. */
#define OPSCOPE_RANGE_BEGIN(category, name)                                                      \
	do {                                                                                     \
		static struct opscope_site opscope_site_ = { name, __FILE__, __LINE__, category, \
							     0 };                                \
		if (opscope_recording())                                                         \
			opscope_range_begin_site(&opscope_site_);                                \
	} while (0)

#define OPSCOPE_RANGE_END()                  \
	do {                                 \
		if (opscope_recording())     \
			opscope_range_end(); \
	} while (0)

static inline int opscope_scope_begin_(struct opscope_site *site)
{
	if (!opscope_recording())
		return 0;
	opscope_range_begin_site(site);
	return 1;
}

static inline void opscope_scope_end_(int *begun)
{
	if (*begun)
		opscope_range_end();
}

/* A range from here to the end of the enclosing block (GCC/Clang cleanup attribute). */
#define OPSCOPE_SCOPE(category, name)                                                            \
	static struct opscope_site OPSCOPE_CONCAT_(                                              \
		opscope_site_, __LINE__) = { name, __FILE__, __LINE__, category, 0 };            \
	__attribute__((cleanup(opscope_scope_end_), unused)) int OPSCOPE_CONCAT_(opscope_scope_, \
										 __LINE__) =     \
		opscope_scope_begin_(&OPSCOPE_CONCAT_(opscope_site_, __LINE__))

struct opscope_timer_scope_ {
	struct opscope_timer_site *site;
	uint64_t start;
};

static inline void opscope_timer_scope_end_(struct opscope_timer_scope_ *t)
{
	opscope_timer_stop(t->site, t->start);
}

/* A scoped timer: adds the time to the end of the enclosing block to the timer `name`. */
#define OPSCOPE_TIMER(name)                                                                       \
	static struct opscope_timer_site OPSCOPE_CONCAT_(opscope_tsite_, __LINE__) = { name, 0 }; \
	__attribute__((cleanup(opscope_timer_scope_end_), unused)) struct opscope_timer_scope_    \
	OPSCOPE_CONCAT_(opscope_timer_, __LINE__) = { &OPSCOPE_CONCAT_(opscope_tsite_, __LINE__), \
						      opscope_timer_now() }

#define OPSCOPE_INSTANT(category, name)                  \
	do {                                             \
		if (opscope_recording())                 \
			opscope_instant(category, name); \
	} while (0)

#define OPSCOPE_COUNTER(name, value)                  \
	do {                                          \
		if (opscope_recording())              \
			opscope_counter(name, value); \
	} while (0)

#endif /* OPSCOPE_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* OPSCOPE_OPSCOPE_H */
