/*
 * model.h: the one in-memory event model every input is loaded into and every analysis and
 * exporter reads. It knows no file format: the loaders of src/formats/ (formats/import.h
 * picks one by content) build it through the model_add_* functions and the columns below, and
 * more files append to the same model (one file per process or rank).
 *
 * Shape: a string table (id 0 is ""), processes (one per pid per file: the same pid in two
 * files is two processes), tracks (host threads, per-process async tracks, device queues),
 * and per track the events as columns (struct of arrays) sorted by start:
 * ranges, instants, counter samples, stack samples. Flows, typed arguments, process metadata,
 * scoped-timer statistics, drop marks, and the frames, stacks, value types, values and
 * binary mappings of stack samples are model-wide tables. Times are int64 nanoseconds of
 * CLOCK_MONOTONIC (ticks are mapped at load), durations are >= 0.
 *
 * Not thread-safe while loading; read-only use from many threads is fine.
 */
#ifndef OPSCOPE_MODEL_MODEL_H
#define OPSCOPE_MODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

#define MODEL_NONE	 UINT64_MAX /* "no index" in index columns */
#define MODEL_NO_TRACK	 UINT32_MAX
#define MODEL_NO_PROCESS UINT32_MAX /* a device track whose host process is not known */
#define MODEL_NO_FRAME	 UINT32_MAX /* no frame (out of memory) */
#define MODEL_NO_STACK	 UINT32_MAX /* no stack entry: the parent of a root frame's entry */

enum model_track_kind {
	MODEL_TRACK_THREAD = 0, /* a host thread: ranges nest properly */
	MODEL_TRACK_ASYNC = 1,	/* async ranges of one process: may overlap, depth 0 */
	MODEL_TRACK_DEVICE = 2, /* a device queue (device, stream); from importers */
};

/*
 * A process of one loaded file. Processes are per file: the same pid in two files (two hosts,
 * two runs) is two processes. Filled by the .opscope loader from the file header (pid) and its
 * METADATA ("program", "hostname" or "host", "rank"), and by the Kineto importer per pid of
 * the trace (name from process_name; host from the top-level "host_name" or "hostname", for
 * every process of the file; rank from distributedInfo.rank, for the trace's main process:
 * the host pid with the most ranges).
 */
struct model_process {
	uint32_t file; /* index in model.files of the file it came from */
	uint32_t pid;  /* OS process id as recorded (Kineto string pids: a made-up 0xfXXXXXXX) */
	int32_t rank;  /* distributed rank (torchrun, MPI), -1 if not known */
	uint32_t host; /* string id of the host name, 0 if not known */
	uint32_t name; /* string id of the program / process name, 0 if not known */
};

/* Track flags (what the recorder knew of a host thread; importers leave them 0). */
#define MODEL_TRACKF_EXITED (1u << 0) /* the thread had exited when it was last described */
#define MODEL_TRACKF_MAIN   (1u << 1) /* the thread is its process's main thread */

/* Range flags. */
#define MODEL_RANGEF_UNCLOSED (1u << 0) /* still open at the end; closed at the last time */
#define MODEL_RANGEF_MISMATCH (1u << 1) /* closed early by an END naming an outer range */

/* Ranges of one track, as columns; index i is one range. Sorted by start (then by depth). */
struct model_ranges {
	int64_t *start_ns;   /* start, ns */
	int64_t *dur_ns;     /* duration, ns, >= 0 */
	uint32_t *name;	     /* string id */
	uint8_t *category;   /* enum opscope_category */
	uint8_t *flags;	     /* MODEL_RANGEF_* */
	uint32_t *depth;     /* nesting depth on the track, 0 = outermost */
	uint64_t *first_arg; /* index of the first argument in model.args */
	uint32_t *nargs;     /* arguments, consecutive from first_arg */
	/* Correlation id (the launch link of a runtime call and the device work it launched),
	 * 0 = none: the value of the range's first "correlation" argument when that is an
	 * integer (the argument stays: exporters and dump print it). NULL while no range of
	 * the track has one (host tracks without runtime calls, traces without GPU work): read
	 * it with model_range_correlation(), write it with model_set_correlation(). */
	uint64_t *correlation;
};

struct model_instants {
	int64_t *ts_ns;	     /* time, ns */
	uint32_t *name;	     /* string id */
	uint8_t *category;   /* enum opscope_category */
	uint64_t *first_arg; /* index in model.args */
	uint32_t *nargs;     /* arguments */
};

struct model_counters {
	int64_t *ts_ns; /* time, ns */
	uint32_t *name; /* string id of the counter (series) name */
	double *value;	/* sample value (may be any double, NaN included) */
};

/* Sample flags. */
#define MODEL_SAMPLEF_TRUNCATED (1u << 0) /* the stack was cut: its outermost frames are missing */

/* Stack samples of one track (CPU stack sampling), as columns; index i is one sample, sorted
 * by time. Filled by the .opscope loader (SAMPLES records) and the importers of profiles
 * (formats/pprof/). A sample of a profile that has several values per sample (pprof's sample
 * types: "samples/count" and "cpu/nanoseconds") keeps them all in model.sample_values, and
 * its weight is the one its file names (model_file.weight_type); a file without sample types
 * has the weight alone. */
struct model_samples {
	int64_t *ts_ns;	 /* time, ns (imported profiles without sample times: 0) */
	uint32_t *stack; /* index in model.stacks of the entry of the innermost frame,
			    MODEL_NO_STACK when no stack was read (pprof: a sample with no
			    locations) */
	int64_t *weight; /* sample value: 1 per sample, or what it stands for (ns, bytes) */
	uint8_t *flags;	 /* MODEL_SAMPLEF_*, 0 from model_add_sample */
	/* Index in model.sample_values of the sample's first value, its file's nsample_types
	 * values in a row; NULL while the track's file has no sample types. */
	uint64_t *first_value;
};

/* What one value column of a file's stack samples measures (pprof's ValueType). */
struct model_value_type {
	uint32_t type; /* string id: "samples", "cpu", "alloc_space" */
	uint32_t unit; /* string id: "count", "nanoseconds", "bytes" */
};

/* A mapping of a binary into a profiled process (pprof's Mapping, a line of
 * /proc/PID/maps): native frames name their binary by its path (model_frame.module), and
 * exporters find the mapping of a frame by that path and its address. */
struct model_mapping {
	uint32_t file;	   /* index in model.files of the file it came from */
	uint64_t start;	   /* first address of the mapping */
	uint64_t limit;	   /* address just past it */
	uint64_t offset;   /* offset in the binary of `start` */
	uint32_t path;	   /* string id of the binary's path, 0 if not known */
	uint32_t build_id; /* string id of the build id (hex), 0 if not known */
};

enum model_frame_kind {
	MODEL_FRAME_UNKNOWN = 0,
	MODEL_FRAME_NATIVE = 1, /* compiled code of the process (an address in a binary) */
	MODEL_FRAME_PYTHON = 2, /* a Python function (file and line) */
	MODEL_FRAME_KERNEL = 3, /* the operating system's kernel */
	MODEL_FRAME_DEVICE = 4, /* code on an accelerator (a GPU kernel's function) */
};

/* Frame flags. */
/* Inlined into its caller: the next frame toward the root is the same machine location
 * (address), the function this one was inlined into (pprof: every line of a location but
 * its last). */
#define MODEL_FRAMEF_INLINED (1u << 0)

/* One frame of a stack; interned: equal frames share one index in model.frames. A native
 * frame with an address but no name is unsymbolized: its binary (module) and address are
 * all that is known. */
struct model_frame {
	uint32_t name;	  /* string id of the function name, 0 if not known */
	uint32_t file;	  /* string id of the source file, 0 if not known */
	int32_t line;	  /* source line, 0 if not known */
	uint32_t module;  /* string id of the binary (shared object) or Python module, 0 unknown */
	uint64_t address; /* instruction address (native frames), 0 if not known */
	uint8_t kind;	  /* enum model_frame_kind */
	uint8_t flags;	  /* MODEL_FRAMEF_* */
};

/* One entry of the stack prefix tree (what pprof's samples and flame graphs fold into): a
 * frame under the entry of its caller. Interned, so equal stacks share one index; a parent
 * always has a smaller index than its children, so a pass in index order sees callers first. */
struct model_stack {
	uint32_t
		parent; /* index in model.stacks of the caller's entry, MODEL_NO_STACK at the root */
	uint32_t frame; /* index in model.frames of this frame */
};

/* What symbolizing the native frames of the loaded .opscope files gave, counted once per
 * native frame of each file's frame table (docs/symbolize.md). Each frame lands in exactly
 * one of named, no_path, no_binary, build_id_mismatch, no_symbol, or skipped. */
struct model_symbolize_stats {
	uint64_t frames;	    /* native frames seen */
	uint64_t named;		    /* given a function name */
	uint64_t with_line;	    /* of those, with a source file and line */
	uint64_t inlined;	    /* extra frames added for inlined calls */
	uint64_t no_path;	    /* in no file (anonymous memory, [vdso], no mapping) */
	uint64_t no_binary;	    /* the binary was not found, nor its debug file */
	uint64_t build_id_mismatch; /* a file at the path, but of another build */
	uint64_t no_symbol;	    /* the binary has no symbol for the address */
	uint64_t skipped;	    /* not tried: see off */
	uint64_t mangled;	    /* named with a mangled C++ name (no demangler found) */
	const char *off; /* static text: why frames were skipped ("--no-symbolize", "opscope was
			    built without libdw"), NULL when the symbolizer ran */
};

struct model_track {
	uint32_t kind; /* enum model_track_kind */
	uint32_t file; /* index in model.files of the file it came from */
	/* Index in model.processes of its process: the reference for new code. Host tracks always
	 * have one; a device track the process that launched its work (Kineto: the file's main
	 * process), or MODEL_NO_PROCESS. */
	uint32_t process;
	/* Legacy: process id, and for device tracks the device (as `device`), which the views,
	 * exporters, dump and info still print; new code reads model.processes[process].pid. */
	uint32_t pid;
	/* Legacy: OS thread id, and for device tracks the stream (as `stream`); 0 for async. */
	uint64_t tid;
	uint32_t device;     /* device index (MODEL_TRACK_DEVICE only, else 0) */
	uint64_t stream;     /* stream (queue) id on the device (MODEL_TRACK_DEVICE only, else 0) */
	uint32_t name;	     /* string id of the thread name, 0 if unnamed */
	uint32_t flags;	     /* MODEL_TRACKF_* */
	uint32_t file_track; /* track index inside its file */
	uint64_t dropped;    /* events this track lost (last DROPS total, else sum of marks) */
	uint64_t events;     /* encoded events read for this track (ARGs included) */
	uint64_t nranges, nranges_cap;
	struct model_ranges ranges;
	uint64_t ninstants, ninstants_cap;
	struct model_instants instants;
	uint64_t ncounters, ncounters_cap;
	struct model_counters counters;
	uint64_t nsamples, nsamples_cap;
	struct model_samples samples;
	int64_t min_ns; /* earliest time of any event on the track (INT64_MAX if none) */
	int64_t max_ns; /* latest time, end of ranges included (INT64_MIN if none) */
};

enum model_arg_type {
	MODEL_ARG_I64 = 1, /* int64_t */
	MODEL_ARG_U64 = 2, /* uint64_t */
	MODEL_ARG_F64 = 3, /* double, as its bits */
	MODEL_ARG_STR = 4, /* a string id */
	/* A JSON value (array, object, true/false/null) kept as its compact text in a string id;
	 * only importers of JSON traces make these, and exporters write the text back verbatim. */
	MODEL_ARG_JSON = 5,
};

/* Typed arguments, as columns. */
struct model_args {
	uint32_t *key;	/* string id of the key */
	uint8_t *type;	/* enum model_arg_type */
	uint64_t *bits; /* value: int64/uint64 bits, double bits, or a string id */
};

struct model_flow {
	uint64_t id;	     /* flow id as recorded */
	uint32_t from_track; /* track where it leaves, MODEL_NO_TRACK if never seen */
	uint32_t to_track;   /* track where it enters, MODEL_NO_TRACK if never seen */
	int64_t from_ns;     /* time it leaves, ns */
	int64_t to_ns;	     /* time it enters, ns */
	uint64_t from_range; /* range on from_track it leaves, MODEL_NONE if outside any range */
	uint64_t to_range;   /* range on to_track it enters, MODEL_NONE if outside any range */
};

/* Process metadata as loaded, keyed by pid (legacy: two files with the same pid share the
 * keys; model.processes tells them apart and has the fields new code needs). */
struct model_meta {
	uint32_t file;	/* index in model.files of the file that set it (the one being loaded;
			 * 0 in a model without files) */
	uint32_t pid;	/* process the key belongs to */
	uint32_t key;	/* string id */
	uint32_t value; /* string id */
};

struct model_timer {
	uint32_t pid;	   /* process */
	uint32_t name;	   /* string id */
	uint64_t count;	   /* samples */
	uint64_t total_ns; /* sum, ns */
	uint64_t max_ns;   /* largest sample, ns */
	uint64_t min_ns;   /* smallest sample, ns */
};

struct model_drop_mark {
	uint32_t track; /* track that lost events */
	int64_t ts_ns;	/* where the loss was noticed, ns */
	uint64_t count; /* events lost just before ts_ns */
};

struct model_clock {
	uint64_t ticks;		   /* tick counter */
	int64_t mono_ns;	   /* CLOCK_MONOTONIC, ns */
	uint64_t realtime_ns;	   /* CLOCK_REALTIME, ns */
	uint64_t ticks_per_second; /* writer's estimate */
};

/* Kinds of the events a loaded file encoded, for model_file.by_kind (an .opscope file's
 * events, ARGs included; importers count their events in model_file.events only). */
enum model_event_kind {
	MODEL_EV_BEGIN = 1,
	MODEL_EV_END = 2,
	MODEL_EV_INSTANT = 3,
	MODEL_EV_COUNTER = 4,
	MODEL_EV_ARG = 5,
	MODEL_EV_FLOW_OUT = 6,
	MODEL_EV_FLOW_IN = 7,
	MODEL_EV_ASYNC_BEGIN = 8,
	MODEL_EV_ASYNC_END = 9,
	MODEL_EV_DROP_MARK = 10,
	MODEL_EV_KINDS = 16, /* slots in by_kind */
};

/* One loaded file and what the loader found about its integrity. */
struct model_file {
	uint32_t path;		     /* string id of the path (or name) */
	uint32_t format;	     /* string id: "opscope", "chrome-json" */
	uint32_t pid;		     /* process that wrote it (header) */
	uint16_t version;	     /* format version of the writer */
	uint16_t min_reader;	     /* oldest reader that can read it */
	uint64_t features;	     /* feature bits of the file header (docs/trace-format.md) */
	uint64_t create_realtime_ns; /* CLOCK_REALTIME at creation, ns */
	uint64_t file_bytes;	     /* size of the file */
	uint64_t valid_end;	     /* offset just past the last valid record */
	uint64_t discarded_bytes;    /* bytes of torn tail that were not read */
	uint32_t tail_msg;	     /* string id of why reading stopped early, 0 if it did not */
	bool complete;		     /* an END record was read (imports: read to the end) */
	uint64_t records;	     /* records read */
	uint64_t skipped_records;    /* unknown non-critical records skipped */
	uint64_t events;	     /* encoded events read (ARGs included) */
	uint64_t dropped;	     /* events lost (END total, else the sum of its tracks) */
	uint64_t by_kind[MODEL_EV_KINDS]; /* encoded events by enum model_event_kind */
	uint64_t unmatched_ends;	  /* END with no open range (ignored) */
	uint64_t mismatched_ends;	  /* END naming a range that is not innermost, or none */
	uint64_t unmatched_async;	  /* ASYNC_END with no open async range (ignored) */
	uint64_t orphan_args;		  /* ARG with no event to attach to (ignored) */
	uint64_t bad_strings;		  /* references to undefined string ids (read as "") */
	uint32_t nclocks;		  /* CLOCK records */
	struct model_clock *clocks;	  /* sorted by ticks */
	/* What the values of its stack samples mean (pprof's sample types; all 0 for a file
	 * whose samples have a weight alone): nsample_types columns from first_sample_type in
	 * model.sample_types, and model_samples.weight is column weight_type (pprof's
	 * default_sample_type, else its last). */
	uint32_t first_sample_type;
	uint32_t nsample_types;
	uint32_t weight_type;
	uint32_t period_type; /* string id: what the sampling period measures ("cpu"), 0 unknown */
	uint32_t period_unit; /* string id: its unit ("nanoseconds"), 0 unknown */
	int64_t period;	      /* sampling period in period_unit, 0 if not known */
	int64_t duration_ns;  /* length of the profile, ns, 0 if not known */
};

struct model {
	/* strings: id -> offset in `text`; interned, so equal strings share one id */
	uint32_t nstrings, strings_cap;
	uint64_t *str_off; /* byte offset of string id in text */
	uint32_t *str_len; /* bytes, without the NUL */
	char *text;	   /* NUL-terminated strings back to back */
	size_t text_len, text_cap;
	struct hindex str_index; /* string ids by their bytes */

	uint32_t nprocesses, processes_cap;
	struct model_process *processes; /* in order of first appearance; a file's together */

	uint32_t ntracks, tracks_cap;
	struct model_track *tracks;

	uint64_t nargs, args_cap;
	struct model_args args;

	uint64_t nflows, flows_cap;
	struct model_flow *flows;

	uint32_t nmeta, meta_cap;
	struct model_meta *meta;

	uint32_t ntimers, timers_cap;
	struct model_timer *timers;

	uint64_t ndrop_marks, drop_marks_cap;
	struct model_drop_mark *drop_marks;

	uint32_t nfiles, files_cap;
	struct model_file *files;

	/* frames and the stack prefix tree of stack samples (stacks.c); empty until sampling
	 * lands. Interned through an index over each array. */
	uint32_t nframes, frames_cap;
	struct model_frame *frames;
	uint32_t nstacks, stacks_cap;
	struct model_stack *stacks;
	struct hindex frame_index, stack_index;
	/* the value columns of the files' samples (model_file.first_sample_type), their values
	 * (model_samples.first_value), and the binaries' mappings of imported profiles */
	uint32_t nsample_types, sample_types_cap;
	struct model_value_type *sample_types;
	uint64_t nsample_values, sample_values_cap;
	int64_t *sample_values;
	uint32_t nmappings, mappings_cap;
	struct model_mapping *mappings;

	uint64_t events_total;	/* encoded events of all files */
	uint64_t dropped_total; /* events lost, all files */
	bool complete;		/* every loaded file ended with an END record */
	int64_t min_ns;		/* earliest time of any event (INT64_MAX if none) */
	int64_t max_ns;		/* latest time of any event (INT64_MIN if none) */
	bool oom;		/* an allocation failed; the model is incomplete */
	/* Set before loading, for tests: the .opscope loader loads every event the general way,
	 * without its fast loops, which must build the same model (fuzz/fuzz_trace.c compares
	 * the two). */
	bool general_only;
	/* Set before loading: the JSON importer keeps only the arguments with these keys (a
	 * NULL-terminated list; NULL keeps all). `report` reads a few of the many a Kineto
	 * event carries, and the rest were most of the model's memory (1 GiB trace: 13 of 14 M
	 * arguments). */
	const char *const *keep_arg_keys;

	/* Set before loading: leave native frames unsymbolized (`--no-symbolize`,
	 * OPSCOPE_NO_SYMBOLIZE) for speed; they show as module+0xOFFSET. */
	bool no_symbolize;
	struct model_symbolize_stats symbolize; /* what symbolizing the loaded files gave */
	/* The symbolizer's state (formats/symbolize: open binaries and the results per address),
	 * kept across the files of one load; the model only frees it, through the function
	 * stored with it. NULL until a native frame is symbolized. */
	void *symbolizer;
	void (*symbolizer_free)(void *symbolizer);
};

struct model *model_new(void);
void model_free(struct model *m);

/* The string with id `id` ("" for ids out of range). */
const char *model_str(const struct model *m, uint32_t id);
uint32_t model_strlen(const struct model *m, uint32_t id);
/* Intern `len` bytes; returns the id, 0 for "" or when out of memory (m->oom set). */
uint32_t model_intern(struct model *m, const char *s, size_t len);

/* Builders for importers (and the loader). Tracks get times in ns directly. Out of memory:
 * each sets m->oom and returns its "none" (MODEL_NONE, MODEL_NO_TRACK, ...). */

/* The process `pid` of file `file` (index in m->files): its index in m->processes, made on
 * first use (rank -1, host and name unknown); MODEL_NO_PROCESS when out of memory. */
uint32_t model_process(struct model *m, uint32_t file, uint32_t pid);
/* The same without making it: MODEL_NO_PROCESS when file has no process `pid`. */
uint32_t model_find_process(const struct model *m, uint32_t file, uint32_t pid);
/* A track of the latest file. A host track (thread, async) gets the process (file, pid); a
 * device track gets device = pid and stream = tid, and no process (MODEL_NO_PROCESS: its
 * importer says which process launched its work). */
uint32_t model_add_track(struct model *m, uint32_t kind, uint32_t pid, uint64_t tid, uint32_t name);
/* A device track (MODEL_TRACK_DEVICE) of queue `stream` of `device`, its work launched by
 * process `process` (or MODEL_NO_PROCESS); pid and tid get device and stream (legacy). */
uint32_t model_add_device_track(struct model *m, uint32_t device, uint64_t stream, uint32_t process,
				uint32_t name);
/* Returns the range index, or MODEL_NONE when out of memory. Ranges must be added in start
 * order per track, or model_sort_track() called afterwards. */
uint64_t model_add_range(struct model *m, uint32_t track, int64_t start_ns, int64_t dur_ns,
			 uint32_t name, uint8_t category, uint32_t depth);
/* Remove range i of a track: the ranges after it move down one place, and flows that point
 * at them follow (at range i itself: MODEL_NONE). Its arguments stay in model.args, no longer
 * referred to. Depths are left as they were: model_nest_track() sets them again. */
void model_remove_range(struct model *m, uint32_t track, uint64_t i);
uint64_t model_add_instant(struct model *m, uint32_t track, int64_t ts_ns, uint32_t name,
			   uint8_t category);
uint64_t model_add_counter(struct model *m, uint32_t track, int64_t ts_ns, uint32_t name,
			   double value);
/* The frame (name, file, line, module, address, kind), interned: its index in m->frames, the
 * same for equal frames; MODEL_NO_FRAME when out of memory. */
uint32_t model_add_frame(struct model *m, uint32_t name, uint32_t file, int32_t line,
			 uint32_t module, uint64_t address, uint8_t kind);
/* The same for a whole frame, flags included. */
uint32_t model_add_frame_full(struct model *m, const struct model_frame *f);
/* The stack entry of `frame` called from entry `parent` (MODEL_NO_STACK for an outermost
 * frame), interned: the same (parent, frame) gives the same index, so equal stacks share it.
 * MODEL_NO_STACK when out of memory, or when parent or frame is not an index of the model. */
uint32_t model_add_stack(struct model *m, uint32_t parent, uint32_t frame);
/* Append a stack sample to a track (in time order, or model_sort_track() afterwards); returns
 * its index or MODEL_NONE. */
uint64_t model_add_sample(struct model *m, uint32_t track, int64_t ts_ns, uint32_t stack,
			  int64_t weight);
/* Give file `file` n sample value columns (string ids of type and unit each) whose column
 * `weight` is the samples' weight; once per file, before its samples. False when out of
 * memory, or when weight >= n. */
bool model_set_sample_types(struct model *m, uint32_t file, const struct model_value_type *types,
			    uint32_t n, uint32_t weight);
/* Append a sample with the values of every column of its track's file (model_set_sample_types;
 * its weight is the weight column's value); returns its index or MODEL_NONE. */
uint64_t model_add_sample_values(struct model *m, uint32_t track, int64_t ts_ns, uint32_t stack,
				 const int64_t *values);
/* Value column c of sample i of track t (its weight where the file has no sample types). */
static inline int64_t model_sample_value(const struct model *m, const struct model_track *t,
					 uint64_t i, uint32_t c)
{
	return t->samples.first_value ? m->sample_values[t->samples.first_value[i] + c]
				      : t->samples.weight[i];
}
/* Append a mapping of file `file`; its index, or UINT32_MAX when out of memory. */
uint32_t model_add_mapping(struct model *m, const struct model_mapping *mp);
/* Set the correlation id of range i of `track` (0: none); the column is made at the first id
 * other than 0. False when out of memory (m->oom set). */
bool model_set_correlation(struct model *m, uint32_t track, uint64_t i, uint64_t corr);
/* The correlation id of range i of track t, 0 if none. */
static inline uint64_t model_range_correlation(const struct model_track *t, uint64_t i)
{
	return t->ranges.correlation ? t->ranges.correlation[i] : 0;
}
/* Set the correlation ids of the ranges of tracks [first_track, ntracks) from their
 * "correlation" arguments (integers other than 0), for loaders that attach arguments
 * afterwards. False when out of memory. */
bool model_correlations_from_args(struct model *m, uint32_t first_track);
/* Append an argument; returns its index or MODEL_NONE. */
uint64_t model_add_arg(struct model *m, uint32_t key, uint8_t type, uint64_t bits);
/* Room for n arguments in all, made now (address space only: nothing is touched), so that
 * appending up to n neither moves nor grows the columns. False if out of memory (the columns
 * are as they were). */
bool model_reserve_args(struct model *m, uint64_t n);
/* Fault in the pages of elements [from, to) of a column (elements of `size` bytes at `col`,
 * room for `to` of them), so that the thread appending them later does not stop for the
 * kernel to clear pages. Safe from another thread while that one appends below `from`:
 * faulting a page in changes nothing in it; and if the column has moved since `col` was
 * read, it faults in nothing useful and nothing harmful. Without MADV_POPULATE_WRITE
 * (Linux < 5.14), nothing. */
void model_prefault(const void *col, size_t size, uint64_t from, uint64_t to);
/* Append a flow that leaves (from_track, from_ns) and enters (to_track, to_ns); either end
 * may be MODEL_NO_TRACK. The range ends are resolved by model_resolve_flows(). Returns the
 * flow index or MODEL_NONE. */
uint64_t model_add_flow(struct model *m, uint64_t id, uint32_t from_track, int64_t from_ns,
			uint32_t to_track, int64_t to_ns);
/* Set from_range/to_range of flows [first, nflows) to the innermost range of their track that
 * contains their time (MODEL_NONE when none does). Tracks must be sorted. */
void model_resolve_flows(struct model *m, uint64_t first);
/* Index in m->args of the argument of range `i` on `track` whose key is the string id `key`,
 * or MODEL_NONE. */
uint64_t model_range_arg(const struct model *m, uint32_t track, uint64_t i, uint32_t key);
/* The id of string s if it is interned, else 0 (never interns). */
uint32_t model_find_str(const struct model *m, const char *s);
/* Set process metadata of the file being loaded (the last one added): a later value for the
 * same file, pid and key replaces the earlier. Two files may hold one pid (the same process
 * traced twice, or processes of different hosts or containers): each keeps its own. */
void model_set_meta(struct model *m, uint32_t pid, uint32_t key, uint32_t value);
/* The value of metadata `key` of process `pid` of file `file`, or NULL. */
const char *model_file_meta(const struct model *m, uint32_t file, uint32_t pid, const char *key);
/* The same of the last file that set it for `pid`: what a model of the files loaded one after
 * another says of the process (a model of one file: its value). */
const char *model_get_meta(const struct model *m, uint32_t pid, const char *key);
/* Sort one track's ranges by (start, depth) and instants, counters and samples by time,
 * keeping argument and flow references right (every column of an event moves with it). */
void model_sort_track(struct model *m, uint32_t track);

/* Sort the ranges of a track by start, longer first at equal starts, and set their depths
 * from how they contain each other (for importers whose ranges carry no depth). A range that
 * crosses the end of the range it starts in is nested under it anyway; returns how many did.
 * Call before model_resolve_flows(). */
uint64_t model_nest_track(struct model *m, uint32_t track);
/* model_nest_track() then model_sort_track() on every track from `first` on, on up to
 * `threads` threads (the caller's included); the sum of their overlaps. */
uint64_t model_nest_tracks(struct model *m, uint32_t first, unsigned threads);
/* Tracks from `first` on, the most ranges first (malloc'd; NULL when out of memory): the
 * order to share them out to threads in. */
uint32_t *model_tracks_largest_first(const struct model *m, uint32_t first);
/* Threads worth using for work per track from `first` on: one per CPU when they hold enough
 * ranges to pay for starting them (200,000: nesting a million takes 50-100 ms), else 1. */
unsigned model_threads_for(const struct model *m, uint32_t first);
/* Recompute min_ns/max_ns of tracks [first_track, ntracks) and of the model. */
void model_finish_tracks(struct model *m, uint32_t first_track);
/* Append a file entry (importers; the .opscope loader makes its own) and return its index,
 * or UINT32_MAX when out of memory. Tracks added afterwards belong to it. */
uint32_t model_add_file(struct model *m, const char *path, const char *format);

/* Processes of the model, in order of first appearance: fills up to `max` pids, returns how
 * many there are. */
uint32_t model_pids(const struct model *m, uint32_t *pids, uint32_t max);

#endif
