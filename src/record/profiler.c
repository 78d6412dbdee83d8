/*
 * profiler.c: the profiler object, the C form of paddle.profiler.Profiler (and of
 * torch.profiler.profile's schedule loop): a step counter driven by opscope_profiler_step(),
 * a scheduler that maps each step to CLOSED/READY/RECORD/RECORD_AND_RETURN, and the actions
 * of Paddle's transition table. Also the global opscope_step() and the reader hooks.
 *
 * Invariants:
 *   - a recorded window is exactly one opscope session, hence one file; READY ("prepare")
 *     allocates nothing, the session starts on the step that enters RECORD(_AND_RETURN);
 *   - on_trace_ready fires where Paddle fires it: in the step() that leaves a
 *     RECORD_AND_RETURN step (after the next window, if any, has started), and in stop()
 *     when the profiler is still recording; a window that is stopped without being returned
 *     (RECORD -> CLOSED/READY) is discarded and its file removed, like Paddle drops the data;
 *   - window numbers count delivered windows, so file names have no gaps;
 *   - a "ProfileStep#N" range is open on the calling thread from start()/step() to the next
 *     step()/stop() whenever a session records (ours or one started by someone else); it is
 *     closed only in the session that saw it begin (compared through the recording word);
 *   - one profiler at a time is "active" (record_active_profiler): it receives opscope_step()
 *     and the reader hooks. A profiler object is driven from one thread (the training loop).
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "record/record.h"
#include "record/throughput.h"
#include "util/error.h"

#define PROFILER_DEFAULT_OUTPUT "./opscope_log/"
#define PROFILER_DEFAULT_SKIP	10

struct opscope_profiler {
	char *output;			  /* where windows go (copy), see profiler_window_path */
	int output_is_dir;		  /* 1: a directory of "<worker>_w<N>.opscope" files */
	struct opscope_schedule schedule; /* valid when has_schedule */
	int has_schedule;
	opscope_state_fn state_fn;	 /* wins over the schedule */
	opscope_ready_fn on_trace_ready; /* may be NULL */
	void *user;			 /* for both callbacks */
	int timer_only;			 /* no sessions, no events */
	FILE *summary_out;		 /* Perf Summary destination */
	struct opscope_options session;	 /* copy of the caller's session options */

	int started;	   /* between start() and stop() */
	uint64_t step_num; /* current step */
	int prev_state;	   /* state of the previous step */
	int cur_state;	   /* state of step_num */

	int window_open;      /* our session is recording a window */
	uint32_t window;      /* number of the next window to deliver */
	char path[PATH_MAX];  /* file of the open window */
	char ready[PATH_MAX]; /* file of the window being handed to on_trace_ready */
	int ready_pending;    /* `ready` is waiting for its callback */
	uint64_t step_word;   /* recording word when ProfileStep#step_num began; 0 = none */
	uint32_t step_name;   /* name id of that range */

	struct throughput throughput;
};

static struct opscope_profiler *_Atomic profiler_active;

void record_set_active_profiler(struct opscope_profiler *prof)
{
	atomic_store(&profiler_active, prof);
}

struct opscope_profiler *record_active_profiler(void)
{
	return atomic_load(&profiler_active);
}

/* ---------------------------------------------------------------------------------------- */
/* Warnings: Paddle's texts (spelling fixed), each printed once per process. */

enum profiler_warning {
	PROFILER_WARN_READY_CLOSED,
	PROFILER_WARN_RECORD_CLOSED,
	PROFILER_WARN_RECORD_READY,
	PROFILER_WARN_STOP_READY,
	PROFILER_WARN_BUSY,
	PROFILER_WARN_COUNT_
};

static atomic_int profiler_warned[PROFILER_WARN_COUNT_];

static void profiler_warn(enum profiler_warning w)
{
	static const char *const text[PROFILER_WARN_COUNT_] = {
		[PROFILER_WARN_READY_CLOSED] = "Improper schedule: READY->CLOSED, profiler will "
					       "start and stop without saving data",
		[PROFILER_WARN_RECORD_CLOSED] = "Improper schedule: RECORD->CLOSED, profiler will "
						"not save data",
		[PROFILER_WARN_RECORD_READY] = "Improper schedule: RECORD->READY, profiler will "
					       "stop and re-prepare",
		[PROFILER_WARN_STOP_READY] = "Improper profiler state transition: READY->CLOSED, "
					     "profiler will start and stop without saving data",
		[PROFILER_WARN_BUSY] = "a session is already recording; the profiler's windows "
				       "go into it instead of files of their own",
	};
	if (atomic_exchange(&profiler_warned[w], 1) == 0)
		fprintf(stderr, "opscope: warning: %s\n", text[w]);
}

/* ---------------------------------------------------------------------------------------- */
/* Output files. */

static int profiler_path_is_dir(const char *p)
{
	struct stat st;
	size_t n = strlen(p);
	return (n && p[n - 1] == '/') || (stat(p, &st) == 0 && S_ISDIR(st.st_mode));
}

/* mkdir -p; errors surface when the session cannot create its file. */
static void profiler_mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp) || !tmp[0])
		return;
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
	mkdir(tmp, 0755);
}

/* Directory output: "<dir>/host_<hostname>_pid_<pid>_w<N>.opscope" (paddle's worker name,
 * with the separator it lacks before "pid"). File output: window 0 is the path itself, window
 * N > 0 gets ".<N>" before the extension ("run.opscope" -> "run.2.opscope"). */
static int profiler_window_path(const struct opscope_profiler *prof, char *dst, size_t size)
{
	int n;
	if (prof->output_is_dir) {
		char host[256];
		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		size_t len = strlen(prof->output);
		n = snprintf(dst, size, "%s%shost_%s_pid_%d_w%u.opscope", prof->output,
			     len && prof->output[len - 1] == '/' ? "" : "/", host, (int)getpid(),
			     prof->window);
	} else if (prof->window == 0) {
		n = snprintf(dst, size, "%s", prof->output);
	} else {
		const char *path = prof->output;
		const char *slash = strrchr(path, '/');
		const char *base = slash ? slash + 1 : path;
		const char *dot = strrchr(base, '.');
		if (!dot || dot == base)
			n = snprintf(dst, size, "%s.%u", path, prof->window);
		else
			n = snprintf(dst, size, "%.*s.%u%s", (int)(dot - path), path, prof->window,
				     dot);
	}
	if (n < 0 || (size_t)n >= size)
		return error_set(OPSCOPE_EINVAL, "profiler output path too long: %s", prof->output);
	return 0;
}

static void profiler_make_parent(const struct opscope_profiler *prof, const char *path)
{
	if (prof->output_is_dir) {
		profiler_mkdir_p(prof->output);
		return;
	}
	const char *slash = strrchr(path, '/');
	if (slash && slash != path) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		profiler_mkdir_p(dir);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* The actions of the transition table. */

static int profiler_window_start(struct opscope_profiler *prof)
{
	if (prof->window_open)
		return 0;
	char path[PATH_MAX];
	int rc = profiler_window_path(prof, path, sizeof(path));
	if (rc)
		return rc;
	profiler_make_parent(prof, path);
	struct opscope_options o = prof->session;
	o.output = path;
	rc = opscope_session_start(&o);
	if (rc == OPSCOPE_EBUSY) {
		profiler_warn(PROFILER_WARN_BUSY);
		return 0;
	}
	if (rc)
		return rc;
	const char *actual = opscope_session_path();
	snprintf(prof->path, sizeof(prof->path), "%s", actual ? actual : path);
	prof->window_open = 1;
	return 0;
}

/* Stop the open window. keep = 1: it becomes `ready` for on_trace_ready; keep = 0: the data
 * is dropped (paddle's stop() whose result nobody reads) and the file removed. */
static int profiler_window_stop(struct opscope_profiler *prof, int keep)
{
	if (!prof->window_open)
		return 0;
	prof->window_open = 0;
	int rc = 0;
	/* Someone may have stopped our session (and even started another): stop only ours. */
	const char *cur = opscope_session_path();
	if (opscope_session_active() && cur && strcmp(cur, prof->path) == 0)
		rc = opscope_session_stop();
	if (!keep) {
		unlink(prof->path);
		return rc;
	}
	if (rc == 0) {
		snprintf(prof->ready, sizeof(prof->ready), "%s", prof->path);
		prof->ready_pending = 1;
		prof->window++;
	}
	return rc;
}

static int profiler_is_recording(int state)
{
	return state == OPSCOPE_STATE_RECORD || state == OPSCOPE_STATE_RECORD_AND_RETURN;
}

/* paddle's _trigger_action. "prepare" has nothing to do: sessions start cheaply. */
static int profiler_transition(struct opscope_profiler *prof, int prev, int cur)
{
	int rc = 0;
	switch (prev) {
	case OPSCOPE_STATE_CLOSED:
	case OPSCOPE_STATE_READY:
		if (prev == OPSCOPE_STATE_READY && cur == OPSCOPE_STATE_CLOSED)
			profiler_warn(PROFILER_WARN_READY_CLOSED); /* nothing was started */
		if (profiler_is_recording(cur))
			rc = profiler_window_start(prof);
		break;
	case OPSCOPE_STATE_RECORD:
		if (cur == OPSCOPE_STATE_CLOSED) {
			profiler_warn(PROFILER_WARN_RECORD_CLOSED);
			rc = profiler_window_stop(prof, 0);
		} else if (cur == OPSCOPE_STATE_READY) {
			profiler_warn(PROFILER_WARN_RECORD_READY);
			rc = profiler_window_stop(prof, 0);
		}
		break;
	case OPSCOPE_STATE_RECORD_AND_RETURN:
		rc = profiler_window_stop(prof, 1);
		if (profiler_is_recording(cur)) {
			int rc2 = profiler_window_start(prof);
			if (!rc)
				rc = rc2;
		}
		break;
	}
	return rc;
}

/* Hand a finished window to the callback (after the next window started, like paddle). */
static void profiler_deliver(struct opscope_profiler *prof)
{
	if (!prof->ready_pending)
		return;
	prof->ready_pending = 0;
	if (prof->on_trace_ready)
		prof->on_trace_ready(prof, prof->ready, prof->user);
}

static int profiler_state_of(const struct opscope_profiler *prof, uint64_t step)
{
	int s = OPSCOPE_STATE_RECORD; /* the default scheduler: record every step */
	if (prof->state_fn)
		s = prof->state_fn(step, prof->user);
	else if (prof->has_schedule)
		s = opscope_schedule_state(&prof->schedule, step);
	if (s < OPSCOPE_STATE_CLOSED || s > OPSCOPE_STATE_RECORD_AND_RETURN)
		s = OPSCOPE_STATE_CLOSED;
	return s;
}

/* ---------------------------------------------------------------------------------------- */
/* ProfileStep ranges. */

static uint64_t profiler_word(void)
{
	return __atomic_load_n(&opscope_recording_word, __ATOMIC_ACQUIRE);
}

/* Begin "ProfileStep#<step>" if a session records; returns the recording word (0 if none)
 * and the name id in *name. */
static uint64_t profiler_range_begin(uint64_t step, uint32_t *name)
{
	uint64_t word = profiler_word();
	if (!(word & 1))
		return 0;
	char buf[48];
	int n = snprintf(buf, sizeof(buf), "ProfileStep#%llu", (unsigned long long)step);
	*name = record_intern(buf, (size_t)n);
	if (!*name)
		return 0;
	record_emit_begin(OPSCOPE_CAT_PROFILE_STEP, *name);
	return word;
}

/* End the ProfileStep range begun under `word`, by name so that ranges the user left open
 * inside the step are closed with it. num_samples goes on the range as an argument. */
static void profiler_range_end(uint64_t word, uint32_t name, int64_t num_samples)
{
	if (!word || profiler_word() != word)
		return;
	record_emit_end(name);
	if (num_samples >= 0) {
		static uint32_t key;
		uint32_t k = __atomic_load_n(&key, __ATOMIC_RELAXED);
		if (!k) {
			k = record_intern("num_samples", 11);
			__atomic_store_n(&key, k, __ATOMIC_RELAXED);
		}
		record_emit_arg_i64(k, num_samples);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Public API. */

OPSCOPE_API struct opscope_profiler *
opscope_profiler_create(const struct opscope_profiler_options *opts)
{
	error_clear();
	struct opscope_profiler_options o = { 0 };
	if (opts)
		o = *opts;
	if (!o.state_fn && o.schedule && opscope_schedule_check(o.schedule) != 0) {
		error_set(OPSCOPE_EINVAL, "invalid profiler schedule: record must be > 0");
		return NULL;
	}
	struct opscope_profiler *prof = calloc(1, sizeof(*prof));
	const char *output = o.output && *o.output ? o.output : PROFILER_DEFAULT_OUTPUT;
	if (!prof || !(prof->output = strdup(output))) {
		free(prof);
		error_set(OPSCOPE_ENOMEM, "out of memory");
		return NULL;
	}
	if (strlen(output) >= PATH_MAX - 64) {
		free(prof->output);
		free(prof);
		error_set(OPSCOPE_EINVAL, "profiler output path too long: %s", output);
		return NULL;
	}
	prof->output_is_dir = profiler_path_is_dir(output);
	if (o.schedule) {
		prof->schedule = *o.schedule;
		prof->has_schedule = 1;
	}
	prof->state_fn = o.state_fn;
	prof->on_trace_ready = o.on_trace_ready;
	prof->user = o.user;
	prof->timer_only = o.timer_only;
	prof->summary_out = o.summary_out ? o.summary_out : stdout;
	if (o.session)
		prof->session = *o.session;
	prof->session.output = NULL;
	throughput_init(&prof->throughput, o.skip_steps == 0  ? PROFILER_DEFAULT_SKIP
					   : o.skip_steps < 0 ? 0
							      : o.skip_steps);
	prof->prev_state = OPSCOPE_STATE_CLOSED;
	prof->cur_state = profiler_state_of(prof, 0);
	/* the GPU target: CUPTI from now on, its records in every window's file (each window's
	 * stop flushes them); where it cannot, a warning and the host alone, as Paddle does */
	if (o.gpu && !o.timer_only && opscope_gpu_start() != 0) {
		fprintf(stderr, "opscope: warning: Profiling GPU is not supported: %s\n",
			opscope_last_error());
		error_clear();
	}
	return prof;
}

OPSCOPE_API void opscope_profiler_destroy(struct opscope_profiler *prof)
{
	if (!prof)
		return;
	if (prof->started)
		opscope_profiler_stop(prof);
	throughput_destroy(&prof->throughput);
	free(prof->output);
	free(prof);
}

OPSCOPE_API int opscope_profiler_start(struct opscope_profiler *prof)
{
	error_clear();
	if (!prof)
		return error_set(OPSCOPE_EINVAL, "no profiler");
	if (prof->started)
		return error_set(OPSCOPE_EINVAL, "the profiler is already started");
	struct opscope_profiler *expected = NULL;
	if (!atomic_compare_exchange_strong(&profiler_active, &expected, prof))
		return error_set(OPSCOPE_EBUSY, "another profiler is active");
	prof->started = 1;
	throughput_begin(&prof->throughput);
	if (prof->timer_only)
		return 0;
	int rc = profiler_transition(prof, OPSCOPE_STATE_CLOSED, prof->cur_state);
	prof->step_word = profiler_range_begin(prof->step_num, &prof->step_name);
	return rc;
}

OPSCOPE_API int opscope_profiler_step(struct opscope_profiler *prof, int64_t num_samples)
{
	error_clear();
	if (!prof || !prof->started)
		return error_set(OPSCOPE_EINVAL, "the profiler is not started");
	throughput_step(&prof->throughput, num_samples);
	if (prof->timer_only)
		return 0;
	profiler_range_end(prof->step_word, prof->step_name, num_samples);
	prof->step_word = 0;
	prof->prev_state = prof->cur_state;
	prof->step_num++;
	prof->cur_state = profiler_state_of(prof, prof->step_num);
	int rc = profiler_transition(prof, prof->prev_state, prof->cur_state);
	profiler_deliver(prof);
	prof->step_word = profiler_range_begin(prof->step_num, &prof->step_name);
	return rc;
}

OPSCOPE_API int opscope_profiler_stop(struct opscope_profiler *prof)
{
	error_clear();
	if (!prof || !prof->started)
		return error_set(OPSCOPE_EINVAL, "the profiler is not started");
	throughput_end(&prof->throughput, prof->summary_out);
	prof->started = 0;
	struct opscope_profiler *expected = prof;
	atomic_compare_exchange_strong(&profiler_active, &expected, NULL);
	if (prof->timer_only)
		return 0;
	profiler_range_end(prof->step_word, prof->step_name, -1);
	prof->step_word = 0;
	int rc = 0;
	if (prof->cur_state == OPSCOPE_STATE_READY)
		profiler_warn(PROFILER_WARN_STOP_READY);
	else if (profiler_is_recording(prof->cur_state))
		rc = profiler_window_stop(prof, 1);
	/* Defensive: a window is open only in a recording state, but never leak a session. */
	if (prof->window_open)
		profiler_window_stop(prof, 0);
	profiler_deliver(prof);
	return rc;
}

OPSCOPE_API int opscope_profiler_state(const struct opscope_profiler *prof)
{
	return prof ? prof->cur_state : OPSCOPE_STATE_CLOSED;
}

OPSCOPE_API uint64_t opscope_profiler_step_num(const struct opscope_profiler *prof)
{
	return prof ? prof->step_num : 0;
}

OPSCOPE_API int opscope_profiler_step_info(struct opscope_profiler *prof, const char *unit,
					   char *buf, size_t size)
{
	if (!prof) {
		if (buf && size)
			buf[0] = '\0';
		return OPSCOPE_EINVAL;
	}
	return throughput_step_info(&prof->throughput, unit, buf, size);
}

OPSCOPE_API int opscope_profiler_bench_summary(const struct opscope_profiler *prof,
					       struct opscope_bench_summary *out)
{
	if (!prof || !out)
		return OPSCOPE_EINVAL;
	/* The lock inside is the only thing written; the figures are not changed. */
	throughput_summary((struct throughput *)&prof->throughput, out);
	return 0;
}

OPSCOPE_API void opscope_profiler_print_summary(const struct opscope_profiler *prof, FILE *out)
{
	if (!prof)
		return;
	throughput_print((struct throughput *)&prof->throughput, out ? out : stdout);
}

OPSCOPE_API void opscope_reader_begin(void)
{
	struct opscope_profiler *prof = record_active_profiler();
	if (prof)
		throughput_reader_begin(&prof->throughput);
}

OPSCOPE_API void opscope_reader_end(void)
{
	struct opscope_profiler *prof = record_active_profiler();
	if (prof)
		throughput_reader_end(&prof->throughput);
}

/* opscope_step() without a profiler: step ranges in a bare session, numbered by a process-wide
 * counter. The open range is per thread. A call marks a boundary, and programs call it at the
 * start of each iteration or at its end (as torch's prof.step()); the recording cannot tell
 * which, so it marks the two ends where they differ, and the loader decides from what the
 * ranges hold (formats/opscope/bare_steps.c):
 *   - a thread's first step gets the argument step_first_call = 1: what the thread recorded
 *     before it may be iteration 0 (calls at the end of each iteration);
 *   - a step still open when the session stops gets step_closed_at_stop = 1: it may be the
 *     empty interval after the last call (calls at the end) or the last iteration (calls at
 *     the start). */
static atomic_uint_fast64_t profiler_bare_steps;
static _Thread_local uint64_t profiler_bare_word;
static _Thread_local uint32_t profiler_bare_name;
static _Thread_local uint64_t profiler_bare_begun; /* session word of this thread's first step */

/* An i64 argument on the event just emitted, its key interned once into *key. */
static void profiler_mark(uint32_t *key, const char *name, int64_t value)
{
	uint32_t k = __atomic_load_n(key, __ATOMIC_RELAXED);
	if (!k) {
		k = record_intern(name, strlen(name));
		__atomic_store_n(key, k, __ATOMIC_RELAXED);
	}
	record_emit_arg_i64(k, value);
}

void record_close_bare_step(void)
{
	static uint32_t key;
	uint64_t word = profiler_bare_word;
	profiler_range_end(word, profiler_bare_name, -1);
	if (word && profiler_word() == word)
		profiler_mark(&key, "step_closed_at_stop", 1);
	profiler_bare_word = 0;
}

OPSCOPE_API void opscope_step_end(int64_t num_samples)
{
	if (record_active_profiler())
		return; /* a profiler's steps follow its schedule */
	profiler_range_end(profiler_bare_word, profiler_bare_name, num_samples);
	profiler_bare_word = 0;
}

OPSCOPE_API void opscope_step(int64_t num_samples)
{
	struct opscope_profiler *prof = record_active_profiler();
	if (prof) {
		opscope_profiler_step(prof, num_samples);
		return;
	}
	uint64_t n = atomic_fetch_add(&profiler_bare_steps, 1) + 1;
	profiler_range_end(profiler_bare_word, profiler_bare_name, num_samples);
	profiler_bare_word = profiler_range_begin(n, &profiler_bare_name);
	if (profiler_bare_word && profiler_bare_begun != profiler_bare_word) {
		static uint32_t key;
		profiler_mark(&key, "step_first_call", 1);
		profiler_bare_begun = profiler_bare_word;
	}
}
