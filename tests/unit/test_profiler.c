/*
 * test_profiler.c: the profiler's state machine and on_trace_ready timing (paddle.profiler's
 * transition table), one file per recorded window, and the ProfileStep ranges in those files,
 * read back through the trace model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "formats/opscope/opscope_load.h"
#include "harness.h"
#include "model/model.h"

static char tmpdir[] = "/tmp/opscope-test-profiler-XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* What the callback saw. */
struct ready_log {
	int calls;
	int iter[16];	    /* loop iteration running when it fired (-1: in stop) */
	uint64_t step[16];  /* opscope_profiler_step_num then */
	char path[16][512]; /* the path it got */
	long size[16];	    /* size of that file when it fired (-1: missing) */
	int session_active; /* opscope_session_active() at the last call */
	void *user;	    /* user pointer received */
};

static int cur_iter;

static void on_ready(struct opscope_profiler *prof, const char *path, void *user)
{
	struct ready_log *log = user;
	if (log->calls < 16) {
		int i = log->calls;
		log->iter[i] = cur_iter;
		log->step[i] = opscope_profiler_step_num(prof);
		snprintf(log->path[i], sizeof(log->path[i]), "%s", path);
		struct stat st;
		log->size[i] = stat(path, &st) == 0 ? (long)st.st_size : -1;
	}
	log->session_active = opscope_session_active();
	log->user = user;
	log->calls++;
}

static struct opscope_profiler *make(const char *output, const struct opscope_schedule *s,
				     opscope_state_fn fn, struct ready_log *log)
{
	memset(log, 0, sizeof(*log));
	struct opscope_profiler_options o = { 0 };
	o.output = output;
	o.schedule = s;
	o.state_fn = fn;
	o.on_trace_ready = on_ready;
	o.user = log;
	o.summary_out = stderr; /* keep TAP output clean */
	return opscope_profiler_create(&o);
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* ProfileStep ranges of a file: count, and the name and num_samples of each (in order). */
struct steps_seen {
	int n;
	char names[32][32];
	int64_t samples[32]; /* -1: no num_samples argument */
};

static int read_steps(const char *path, struct steps_seen *out)
{
	memset(out, 0, sizeof(*out));
	struct model *m = model_new();
	char err[512];
	if (!m || opscope_load_file(m, path, err, sizeof(err)) != 0) {
		printf("#   load %s: %s\n", path, err);
		model_free(m);
		return -1;
	}
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		for (uint64_t i = 0; i < tr->nranges && out->n < 32; i++) {
			if (tr->ranges.category[i] != OPSCOPE_CAT_PROFILE_STEP)
				continue;
			int k = out->n++;
			snprintf(out->names[k], sizeof(out->names[k]), "%s",
				 model_str(m, tr->ranges.name[i]));
			out->samples[k] = -1;
			for (uint32_t a = 0; a < tr->ranges.nargs[i]; a++) {
				uint64_t ai = tr->ranges.first_arg[i] + a;
				if (strcmp(model_str(m, m->args.key[ai]), "num_samples") == 0)
					out->samples[k] = (int64_t)m->args.bits[ai];
			}
		}
	}
	model_free(m);
	return 0;
}

/* Scheduler (2, 5) over 10 steps: READY at 1, recording 2..4, on_trace_ready once, inside
 * the step() that ends iteration 4; the file holds ProfileStep#2..#4. */
TEST(range_2_5_fires_once)
{
	struct opscope_schedule s;
	REQUIRE(opscope_schedule_from_range(2, 5, &s) == 0);
	struct ready_log log;
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/", tmp_path("r25"));
	struct opscope_profiler *p = make(dir, &s, NULL, &log);
	REQUIRE(p);
	CHECK_EQ_I(opscope_profiler_state(p), OPSCOPE_STATE_CLOSED);
	REQUIRE(opscope_profiler_start(p) == 0);
	static const int want_state[] = { 1, 2, 2, 2, 0, 0, 0, 0, 0, 0 }; /* after step() i */
	static const int want_active[] = { 0, 1, 1, 1, 0, 0, 0, 0, 0, 0 };
	for (int i = 0; i < 10; i++) {
		cur_iter = i;
		CHECK_EQ_I(opscope_session_active(), i >= 2 && i <= 4);
		REQUIRE(opscope_profiler_step(p, 16) == 0);
		int st = opscope_profiler_state(p);
		if (st != (i == 3 ? OPSCOPE_STATE_RECORD_AND_RETURN : want_state[i]))
			CHECK_FAIL_("after step %d: state %s", i, opscope_state_name(st));
		CHECK_EQ_I(opscope_session_active(), want_active[i]);
		CHECK_EQ_I(log.calls, i >= 4 ? 1 : 0);
	}
	cur_iter = -1;
	REQUIRE(opscope_profiler_stop(p) == 0);
	CHECK_EQ_I(log.calls, 1);
	CHECK_EQ_I(log.iter[0], 4);
	CHECK_EQ_U(log.step[0], 5);
	CHECK(log.size[0] > 0);
	CHECK(log.user == &log);
	CHECK_EQ_I(log.session_active, 0);
	char host[256];
	gethostname(host, sizeof(host));
	host[255] = '\0';
	char want[1024];
	snprintf(want, sizeof(want), "%shost_%s_pid_%d_w0.opscope", dir, host, (int)getpid());
	CHECK_STR(log.path[0], want);
	CHECK_EQ_I(count_files(tmp_path("r25")), 1);

	struct steps_seen seen;
	REQUIRE(read_steps(log.path[0], &seen) == 0);
	CHECK_EQ_I(seen.n, 3);
	CHECK_STR(seen.names[0], "ProfileStep#2");
	CHECK_STR(seen.names[1], "ProfileStep#3");
	CHECK_STR(seen.names[2], "ProfileStep#4");
	for (int i = 0; i < seen.n; i++)
		CHECK_EQ_I(seen.samples[i], 16);
	opscope_profiler_destroy(p);
}

/* The default scheduler records every step and returns data only at stop(). */
TEST(default_fires_at_stop)
{
	struct ready_log log;
	struct opscope_profiler *p = make(tmp_path("default.opscope"), NULL, NULL, &log);
	REQUIRE(p);
	CHECK_EQ_I(opscope_profiler_state(p), OPSCOPE_STATE_RECORD);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 5; i++) {
		cur_iter = i;
		CHECK_EQ_I(opscope_session_active(), 1);
		opscope_step(-1); /* the global form reaches the active profiler */
		CHECK_EQ_I(opscope_profiler_state(p), OPSCOPE_STATE_RECORD);
	}
	CHECK_EQ_I(log.calls, 0);
	CHECK_EQ_U(opscope_profiler_step_num(p), 5);
	cur_iter = -1;
	REQUIRE(opscope_profiler_stop(p) == 0);
	CHECK_EQ_I(log.calls, 1);
	CHECK_EQ_I(log.iter[0], -1);
	CHECK_STR(log.path[0], tmp_path("default.opscope"));
	CHECK(log.size[0] > 0);
	CHECK_EQ_I(opscope_session_active(), 0);
	struct steps_seen seen;
	REQUIRE(read_steps(log.path[0], &seen) == 0);
	CHECK_EQ_I(seen.n, 6); /* #0..#5, the last one ended by stop() */
	CHECK_STR(seen.names[0], "ProfileStep#0");
	CHECK_STR(seen.names[5], "ProfileStep#5");
	CHECK_EQ_I(seen.samples[0], -1);
	opscope_profiler_destroy(p);
}

/* closed=1, ready=1, record=2, repeat=3: three windows, three distinct files. */
TEST(repeat_windows_own_files)
{
	struct opscope_schedule s = { .closed = 1, .ready = 1, .record = 2, .repeat = 3 };
	struct ready_log log;
	char dir[600];
	snprintf(dir, sizeof(dir), "%s", tmp_path("repeat"));
	mkdir(dir, 0755); /* an existing directory (no trailing '/') is a directory too */
	struct opscope_profiler *p = make(dir, &s, NULL, &log);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 14; i++) {
		cur_iter = i;
		REQUIRE(opscope_profiler_step(p, 1) == 0);
	}
	REQUIRE(opscope_profiler_stop(p) == 0);
	REQUIRE(log.calls == 3);
	CHECK_EQ_I(log.iter[0], 3);
	CHECK_EQ_I(log.iter[1], 7);
	CHECK_EQ_I(log.iter[2], 11);
	for (int i = 0; i < 3; i++) {
		CHECK(log.size[i] > 0);
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "_w%d.opscope", i);
		size_t n = strlen(log.path[i]), k = strlen(suffix);
		CHECK(n > k && strcmp(log.path[i] + n - k, suffix) == 0);
		CHECK(strncmp(log.path[i], dir, strlen(dir)) == 0);
		struct steps_seen seen;
		REQUIRE(read_steps(log.path[i], &seen) == 0);
		CHECK_EQ_I(seen.n, 2);
		char want[32];
		snprintf(want, sizeof(want), "ProfileStep#%d", 4 * i + 2);
		CHECK_STR(seen.names[0], want);
	}
	CHECK(strcmp(log.path[0], log.path[1]) != 0 && strcmp(log.path[1], log.path[2]) != 0);
	CHECK_EQ_I(count_files(dir), 3);
	opscope_profiler_destroy(p);
}

/* record=1 and nothing else: every step is a window (RECORD_AND_RETURN -> RECORD_AND_RETURN);
 * a file output gets ".<N>" before its extension from the second window on. */
TEST(every_step_a_window_file_names)
{
	struct opscope_schedule s = { .record = 1 };
	struct ready_log log;
	struct opscope_profiler *p = make(tmp_path("names/run.opscope"), &s, NULL, &log);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 3; i++) {
		cur_iter = i;
		REQUIRE(opscope_profiler_step(p, -1) == 0);
		CHECK_EQ_I(log.calls, i + 1);
		CHECK_EQ_I(log.session_active, 1); /* the next window started before the call */
	}
	cur_iter = -1;
	REQUIRE(opscope_profiler_stop(p) == 0);
	REQUIRE(log.calls == 4);
	CHECK_STR(log.path[0], tmp_path("names/run.opscope"));
	CHECK_STR(log.path[1], tmp_path("names/run.1.opscope"));
	CHECK_STR(log.path[2], tmp_path("names/run.2.opscope"));
	CHECK_STR(log.path[3], tmp_path("names/run.3.opscope"));
	for (int i = 0; i < 4; i++) {
		CHECK(log.size[i] > 0);
		struct steps_seen seen;
		REQUIRE(read_steps(log.path[i], &seen) == 0);
		CHECK_EQ_I(seen.n, 1);
		char want[32];
		snprintf(want, sizeof(want), "ProfileStep#%d", i);
		CHECK_STR(seen.names[0], want);
	}
	opscope_profiler_destroy(p);

	/* no extension: ".<N>" at the end */
	p = make(tmp_path("names/plain"), &s, NULL, &log);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	REQUIRE(opscope_profiler_step(p, -1) == 0);
	REQUIRE(opscope_profiler_stop(p) == 0);
	REQUIRE(log.calls == 2);
	CHECK_STR(log.path[0], tmp_path("names/plain"));
	CHECK_STR(log.path[1], tmp_path("names/plain.1"));
	opscope_profiler_destroy(p);
}

/* A custom state function wins over a schedule and gets the user pointer. */
static int custom_state(uint64_t step, void *user)
{
	(void)user;
	if (step == 2)
		return OPSCOPE_STATE_READY;
	if (step == 3)
		return OPSCOPE_STATE_RECORD_AND_RETURN;
	if (step == 9)
		return 42; /* not a state: treated as CLOSED */
	return OPSCOPE_STATE_CLOSED;
}

TEST(custom_state_fn)
{
	struct opscope_schedule s = { .record = 1 }; /* ignored */
	struct ready_log log;
	struct opscope_profiler *p = make(tmp_path("custom/"), &s, custom_state, &log);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 10; i++) {
		cur_iter = i;
		REQUIRE(opscope_profiler_step(p, 4) == 0);
		CHECK_EQ_I(opscope_session_active(), i == 2);
	}
	CHECK_EQ_I(opscope_profiler_state(p), OPSCOPE_STATE_CLOSED);
	REQUIRE(opscope_profiler_stop(p) == 0);
	REQUIRE(log.calls == 1);
	CHECK_EQ_I(log.iter[0], 3);
	CHECK_EQ_U(log.step[0], 4);
	CHECK(log.size[0] > 0);
	struct steps_seen seen;
	REQUIRE(read_steps(log.path[0], &seen) == 0);
	CHECK_EQ_I(seen.n, 1);
	CHECK_STR(seen.names[0], "ProfileStep#3");
	CHECK_EQ_I(seen.samples[0], 4);
	opscope_profiler_destroy(p);
}

/* Improper transitions: RECORD -> CLOSED drops the window (no callback, no file);
 * RECORD -> READY drops it and the next window still comes; stop() in READY saves nothing. */
static int improper_state(uint64_t step, void *user)
{
	(void)user;
	switch (step) {
	case 1:
	case 2:
		return OPSCOPE_STATE_RECORD;
	case 3:
		return OPSCOPE_STATE_CLOSED; /* RECORD -> CLOSED */
	case 4:
		return OPSCOPE_STATE_RECORD;
	case 5:
		return OPSCOPE_STATE_READY; /* RECORD -> READY */
	case 6:
		return OPSCOPE_STATE_RECORD_AND_RETURN;
	case 7:
		return OPSCOPE_STATE_READY;
	case 8:
		return OPSCOPE_STATE_CLOSED; /* READY -> CLOSED */
	default:
		return OPSCOPE_STATE_READY; /* stop() in READY */
	}
}

TEST(improper_transitions)
{
	struct ready_log log;
	struct opscope_profiler *p = make(tmp_path("improper/"), NULL, improper_state, &log);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 10; i++) {
		cur_iter = i;
		REQUIRE(opscope_profiler_step(p, 1) == 0);
	}
	REQUIRE(opscope_profiler_stop(p) == 0);
	REQUIRE(log.calls == 1);
	CHECK_EQ_I(log.iter[0], 6);
	/* the delivered window is the first one delivered: w0, and the only file left */
	CHECK(strstr(log.path[0], "_w0.opscope") != NULL);
	CHECK_EQ_I(count_files(tmp_path("improper")), 1);
	struct steps_seen seen;
	REQUIRE(read_steps(log.path[0], &seen) == 0);
	CHECK_EQ_I(seen.n, 1);
	CHECK_STR(seen.names[0], "ProfileStep#6");
	CHECK_EQ_I(opscope_session_active(), 0);
	opscope_profiler_destroy(p);
}

/* A session started by someone else: windows cannot have files of their own, but the
 * ProfileStep ranges go into that session; no callback. */
TEST(foreign_session)
{
	struct opscope_options so = { .output = tmp_path("foreign.opscope") };
	REQUIRE(opscope_session_start(&so) == 0);
	struct opscope_schedule s;
	REQUIRE(opscope_schedule_from_range(1, 3, &s) == 0);
	struct ready_log log;
	struct opscope_profiler *p = make(tmp_path("foreign-dir/"), &s, NULL, &log);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 4; i++)
		REQUIRE(opscope_profiler_step(p, 2) == 0);
	REQUIRE(opscope_profiler_stop(p) == 0);
	CHECK_EQ_I(log.calls, 0);
	CHECK_EQ_I(opscope_session_active(), 1);
	REQUIRE(opscope_session_stop() == 0);
	struct steps_seen seen;
	REQUIRE(read_steps(tmp_path("foreign.opscope"), &seen) == 0);
	CHECK_EQ_I(seen.n, 5);
	opscope_profiler_destroy(p);
}

/* opscope_step() in a bare session (no profiler): ProfileStep#1.. ranges from a global count;
 * the empty interval after the last call is no step. */
TEST(bare_session_steps)
{
	struct opscope_options so = { .output = tmp_path("bare.opscope") };
	REQUIRE(opscope_session_start(&so) == 0);
	opscope_step(-1); /* begins the first step range */
	OPSCOPE_RANGE_BEGIN(OPSCOPE_CAT_USER_DEFINED, "left-open");
	opscope_step(7); /* closes it together with the step */
	opscope_step(8);
	REQUIRE(opscope_session_stop() == 0);
	opscope_step(9); /* no session: nothing, and nothing dangling for the next one */
	struct steps_seen seen;
	REQUIRE(read_steps(tmp_path("bare.opscope"), &seen) == 0);
	/* the third, begun by opscope_step(8) and closed by the stop with nothing in it, is the
	 * interval after the last call, not a step (formats/opscope/bare_steps.c) */
	CHECK_EQ_I(seen.n, 2);
	CHECK_EQ_I(seen.samples[0], 7);
	CHECK_EQ_I(seen.samples[1], 8);
	/* names are consecutive */
	unsigned a = 0, b = 0;
	CHECK(sscanf(seen.names[0], "ProfileStep#%u", &a) == 1);
	CHECK(sscanf(seen.names[1], "ProfileStep#%u", &b) == 1);
	CHECK_EQ_U(b, a + 1);
}

TEST(create_errors)
{
	struct opscope_schedule bad = { .closed = 1, .record = 0 };
	struct opscope_profiler_options o = { 0 };
	o.schedule = &bad;
	CHECK(opscope_profiler_create(&o) == NULL);
	CHECK(strstr(opscope_last_error(), "schedule") != NULL);
	/* a window that cannot be created: the error comes back from the step that starts it */
	struct opscope_schedule s = { .ready = 1, .record = 2, .repeat = 1 };
	o.schedule = &s;
	o.output = "/proc/opscope-cannot/x.opscope";
	o.summary_out = stderr;
	struct opscope_profiler *p = opscope_profiler_create(&o);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	CHECK(opscope_profiler_step(p, 1) < 0);
	CHECK_EQ_I(opscope_session_active(), 0);
	CHECK_EQ_I(opscope_profiler_step(p, 1), 0);
	CHECK_EQ_I(opscope_profiler_stop(p), 0);
	opscope_profiler_destroy(p);
	opscope_profiler_destroy(NULL);
}

static void setup(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void cleanup_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			cleanup_dir(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

TEST(setup_dir)
{
	setup();
}

TEST(cleanup)
{
	cleanup_dir(tmpdir);
}

TEST_MAIN(setup_dir, range_2_5_fires_once, default_fires_at_stop, repeat_windows_own_files,
	  every_step_a_window_file_names, custom_state_fn, improper_transitions, foreign_session,
	  bare_session_steps, create_errors, cleanup)
