/*
 * format.h: the .opscope trace file format, as constants and on-disk structures.
 *
 * docs/trace-format.md is the normative description; this header is its only C rendering,
 * shared by the writer (record stage) and the reader (load stage). Everything on disk is
 * little-endian and fixed-width; no bitfields; sizes are checked by static assertions.
 *
 * A file is a 64-byte header followed by records. Every record starts with a 16-byte record
 * header {type, flags, payload_bytes, raw_bytes, crc32c}; a reader skips records whose type it
 * does not know unless OPS_RECF_CRITICAL is set. A file cut short at any byte is readable up to
 * its last complete record: the writer emits strings and threads before the events that use
 * them, and an END record only on a clean stop.
 */
#ifndef OPSCOPE_TRACE_FORMAT_H
#define OPSCOPE_TRACE_FORMAT_H

#include <stdint.h>

#define OPS_MAGIC	      "OPSCOPE\x1a" /* 8 bytes, no NUL on disk */
#define OPS_MAGIC_BYTES	      8
#define OPS_FORMAT_VERSION    4 /* version this code writes (4: GPU activity records) */
#define OPS_FORMAT_MIN_READER 2 /* oldest reader that can read what we write (EVENTS2) */
/* min_reader_version of a file that holds stack sample records: the writer raises the
 * header's field to this when it writes the first of them (docs/trace-format.md, 3.1). */
#define OPS_FORMAT_MIN_READER_SAMPLES 3
/* min_reader_version of a file that holds GPU activity records (docs/trace-format.md 3.2). */
#define OPS_FORMAT_MIN_READER_GPU 4
#define OPS_READER_VERSION	  4 /* newest format version this code reads */

/* File header feature bits (informational; records carry their own flags). */
#define OPS_FEAT_ZSTD (1ull << 0) /* some records are zstd-compressed */
#define OPS_FEAT_TSC  (1ull << 1) /* ticks are TSC cycles, mapped by CLOCK records */

struct ops_file_header {
	uint8_t magic[8];	     /* OPS_MAGIC */
	uint16_t version;	     /* format version of the writer */
	uint16_t min_reader_version; /* a reader older than this must refuse the file */
	uint32_t header_bytes;	     /* size of this header; records start here (>= 64) */
	uint64_t features;	     /* OPS_FEAT_* */
	uint64_t create_realtime_ns; /* CLOCK_REALTIME when the file was created, ns */
	uint32_t pid;		     /* process that wrote the file */
	uint32_t reserved0;	     /* 0 */
	uint64_t reserved[3];	     /* 0 */
};
_Static_assert(sizeof(struct ops_file_header) == 64, "file header is 64 bytes");

/* Record types. Values never change; new types get new numbers. */
enum ops_record_type {
	OPS_REC_METADATA = 1, /* key/value strings about the process or session */
	OPS_REC_CLOCK = 2,    /* a (ticks, monotonic ns, realtime ns) correspondence */
	OPS_REC_STRINGS = 3,  /* interned strings with consecutive ids */
	OPS_REC_THREAD = 4,   /* a track: a host thread (pid, tid, name) */
	OPS_REC_EVENTS = 5,   /* encoded events of one track */
	OPS_REC_DROPS = 6,    /* events a track lost because its buffers were full */
	OPS_REC_TIMERS = 7,   /* scoped-timer statistics at the end of the session */
	OPS_REC_END = 8,      /* clean end of the file, with totals */
	OPS_REC_EVENTS2 = 9,  /* events of one track in streams (version 2; written CRITICAL) */
	/* Stack samples (version 3; all written CRITICAL): the tables a sample's stack is made
	 * of, each interned and written once, then the samples. */
	OPS_REC_MAPPINGS = 10, /* binaries mapped into the process (start, end, offset, path) */
	OPS_REC_FRAMES = 11,   /* frames: native (mapping + address) or Python (name, file) */
	OPS_REC_STACKS = 12,   /* the stack prefix tree: (parent stack, frame) entries */
	OPS_REC_SAMPLES = 13,  /* stack samples: (track, ticks, stack, weight, flags) */
	OPS_REC_GPU = 14,      /* GPU activity (version 4, CRITICAL): kernels, copies, API calls */
};
#define OPS_REC_LAST OPS_REC_GPU /* highest record type this code knows */

/* Record flags. */
#define OPS_RECF_ZSTD	  (1u << 0)  /* payload is a zstd frame of raw_bytes bytes */
#define OPS_RECF_CRITICAL (1u << 15) /* a reader that does not know this type must stop */

struct ops_record_header {
	uint16_t type;		/* enum ops_record_type */
	uint16_t flags;		/* OPS_RECF_* */
	uint32_t payload_bytes; /* bytes that follow this header (compressed size if ZSTD) */
	uint32_t raw_bytes;	/* payload size after decompression (== payload_bytes if not) */
	uint32_t crc32c;	/* CRC-32C (Castagnoli) of the payload bytes as stored */
};
_Static_assert(sizeof(struct ops_record_header) == 16, "record header is 16 bytes");

#define OPS_MAX_RECORD_BYTES (64u << 20) /* readers refuse larger payloads */

/*
 * Payloads (all little-endian; "str" = u32 length + bytes, no NUL):
 *
 * METADATA: u32 count, then count x (str key, str value). Keys written by the runtime:
 *   "program", "cmdline" (arguments joined by spaces), "hostname", "pid", "ppid",
 *   "rank" (from RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID when set),
 *   "local_rank" (LOCAL_RANK / OMPI_COMM_WORLD_LOCAL_RANK / MPI_LOCALRANKID / SLURM_LOCALID),
 *   "world_size" (WORLD_SIZE / OMPI_COMM_WORLD_SIZE / PMI_SIZE / SLURM_NTASKS),
 *   "clocksource", "opscope_version", "window" (profiler window index, when scheduled).
 *   A later METADATA record overrides earlier keys.
 *
 * CLOCK: struct ops_clock_payload. Ticks -> ns: piecewise linear between consecutive CLOCK
 *   records (by ticks); before the first / after the last, extrapolate with the nearest
 *   segment's slope, or with ticks_per_second when only one record exists.
 *
 * STRINGS: u32 first_id, u32 count, then count x str. Ids are consecutive from first_id;
 *   id 0 is the empty string and is never written. Strings are UTF-8 as given by the program
 *   (not validated by the writer; readers escape on output).
 *
 * THREAD: struct ops_thread_payload. A later THREAD record for the same track updates it.
 *
 * EVENTS: struct ops_events_payload, then the encoded events (see below). With OPS_RECF_ZSTD
 *   the whole payload (header included) is compressed.
 *
 * DROPS: struct ops_drops_payload: the cumulative number of events the track lost so far.
 *   The last DROPS record of a track holds its total.
 *
 * TIMERS: u32 count, then count x struct ops_timer_entry.
 *
 * END: struct ops_end_payload.
 */

struct ops_clock_payload {
	uint64_t ticks;		   /* the tick counter (TSC cycles, or ns when not TSC) */
	uint64_t monotonic_ns;	   /* CLOCK_MONOTONIC at the same moment */
	uint64_t realtime_ns;	   /* CLOCK_REALTIME at the same moment */
	uint64_t ticks_per_second; /* the writer's estimate of the tick rate */
};
_Static_assert(sizeof(struct ops_clock_payload) == 32, "clock payload is 32 bytes");

struct ops_thread_payload {
	uint32_t track;	  /* track index, unique in the file, small and dense */
	uint32_t pid;	  /* process id */
	uint64_t tid;	  /* OS thread id (gettid) */
	uint32_t name_id; /* string id of the thread name, 0 if unnamed */
	uint32_t flags;	  /* OPS_THREADF_* */
};
_Static_assert(sizeof(struct ops_thread_payload) == 24, "thread payload is 24 bytes");
#define OPS_THREADF_EXITED (1u << 0) /* the thread had exited when this record was written */
#define OPS_THREADF_MAIN   (1u << 1) /* the thread is the process's main thread */

struct ops_events_payload {
	uint32_t track;	      /* track the events belong to */
	uint32_t count;	      /* encoded events that follow (an ARG counts as one) */
	uint64_t first_ticks; /* base for the first event's delta */
};
_Static_assert(sizeof(struct ops_events_payload) == 16, "events payload header is 16 bytes");

/* EVENTS2 (version 2): the header below, then five streams back to back: one tag byte per
 * event, then the time, id, byte and value streams of the sizes given here. A tag holds the
 * event's kind and the widths of its time and id fields, so that every field is found without
 * decoding the event before it (docs/trace-format.md, section 4.2). */
struct ops_events2_payload {
	uint32_t track;	      /* track the events belong to */
	uint32_t count;	      /* events, i.e. bytes of the tag stream */
	uint64_t first_ticks; /* base for the first event's delta */
	uint32_t time_bytes;  /* time stream: dt (ARG: the value), 1, 2, 4 or 8 bytes */
	uint32_t id_bytes;    /* id stream: name or key string id, 0, 1, 2 or 4 bytes */
	uint32_t byte_bytes;  /* byte stream: category or argument type, 1 byte */
	uint32_t value_bytes; /* value stream: counter value, flow/async id, drop count: 8 bytes */
};
_Static_assert(sizeof(struct ops_events2_payload) == 32, "events2 payload header is 32 bytes");

#define OPS_TAG_KIND(tag)     ((unsigned)(tag)&15u)	    /* enum ops_event_kind */
#define OPS_TAG_TIME(tag)     (((unsigned)(tag) >> 4) & 3u) /* time width code */
#define OPS_TAG_ID(tag)	      ((unsigned)(tag) >> 6)	    /* id width code */
#define OPS_TAG(kind, tc, ic) ((uint8_t)((kind) | (tc) << 4 | (ic) << 6))
/* Bytes of a field by its width code: time 1, 2, 4, 8; id 0, 1, 2, 4. */
#define OPS_TIME_WIDTH(code) (1u << (code))
#define OPS_ID_WIDTH(code)   ((1u << (code)) >> 1) /* no branch: 0 1 2 4 */

/*
 * Stack sample tables (version 3). MAPPINGS, FRAMES and STACKS are interned tables with dense
 * ids from 0: each record is a struct ops_table_payload, then `count` entries of
 * `entry_bytes` bytes each (at least the size of this version's entry; readers ignore the
 * bytes after the fields they know), with ids first_id, first_id + 1, ... The first record of
 * a table starts at id 0 and each next one where the previous ended. Every id an entry or a
 * sample refers to is defined in an earlier record. SAMPLES has the same header with
 * first_id 0 (samples have no ids).
 */
#define OPS_NO_ID UINT32_MAX /* "none": a stack entry's parent at the root, a frame's mapping */

struct ops_table_payload {
	uint32_t first_id;    /* id of the first entry (SAMPLES: 0) */
	uint32_t count;	      /* entries that follow */
	uint32_t entry_bytes; /* bytes per entry, >= this version's entry size */
	uint32_t reserved;    /* 0 */
};
_Static_assert(sizeof(struct ops_table_payload) == 16, "table payload header is 16 bytes");

/*
 * GPU activity (version 4, docs/trace-format.md 3.2): a GPU record is a struct
 * ops_table_payload (first_id 0) and `count` entries of `entry_bytes` bytes, each one piece of
 * work a GPU collector (src/collect/cupti) saw: a kernel, a copy, a memset, a runtime or
 * driver API call, a synchronization, an allocation or free, the collector's own overhead.
 * Entries need not be in time order. Times are ticks of the event clock (section 5).
 */
enum ops_gpu_kind {
	OPS_GPU_KERNEL = 1,   /* a kernel on (device, stream) */
	OPS_GPU_MEMCPY = 2,   /* a copy; sub: copy kind; src_kind/dst_kind: memory kinds */
	OPS_GPU_MEMSET = 3,   /* a memset; src_kind: memory kind; value: the byte value */
	OPS_GPU_RUNTIME = 4,  /* a CUDA runtime call on host thread `tid` */
	OPS_GPU_DRIVER = 5,   /* a CUDA driver call on host thread `tid` */
	OPS_GPU_SYNC = 6,     /* a synchronization; sub: its type (CUPTI's numbering) */
	OPS_GPU_MEMORY = 7,   /* an allocation (sub 1) or release (sub 2) of `bytes` at `address` */
	OPS_GPU_OVERHEAD = 8, /* the collector's (CUPTI's) own overhead; sub: its kind */
	OPS_GPU_EXTERNAL = 9, /* external correlation: the call `correlation` was made inside the
				 host range `external_id`; no time, no work */
};
#define OPS_GPU_KIND_LAST OPS_GPU_EXTERNAL

struct ops_gpu_entry {
	uint8_t kind;	      /* enum ops_gpu_kind */
	uint8_t sub;	      /* kind-specific (see enum ops_gpu_kind) */
	uint8_t src_kind;     /* MEMCPY: source memory kind; MEMSET/MEMORY: memory kind */
	uint8_t dst_kind;     /* MEMCPY: destination memory kind */
	uint32_t device;      /* device id (RUNTIME/DRIVER: 0) */
	uint32_t context;     /* context id */
	uint32_t stream;      /* stream id (RUNTIME/DRIVER/OVERHEAD: 0) */
	uint64_t start_ticks; /* start, ticks */
	uint64_t end_ticks;   /* end, ticks (>= start; MEMORY: the same as start) */
	uint32_t correlation; /* CUPTI correlation id: a call and the work it launched share it */
	uint32_t name_id;     /* string id: kernel name, API function name; 0 if none */
	uint64_t external_id; /* the host range that launched it (external correlation), 0 none */
	uint64_t bytes;	      /* MEMCPY/MEMSET/MEMORY: bytes; RUNTIME/DRIVER: the OS thread id
				 (CUPTI's threadId if the thread was not known: record/gpu.h) */
	uint64_t address;     /* MEMORY: the address; MEMSET: the value */
	uint32_t grid[3];     /* KERNEL: grid; MEMCPY: source device, destination device */
	uint32_t block[3];    /* KERNEL: block */
	uint32_t registers;   /* KERNEL: registers per thread; RUNTIME/DRIVER: return value */
	uint32_t shared;      /* KERNEL: static + dynamic shared memory per block, bytes */
	uint32_t graph_id;    /* KERNEL/MEMCPY/MEMSET: CUDA graph id, 0 if none */
	uint32_t reserved;    /* 0 */
};
_Static_assert(sizeof(struct ops_gpu_entry) == 104, "GPU entry is 104 bytes");

/* A mapping: [start, end) of the process's address space holds the bytes of `path` from
 * file_offset on (as /proc/self/maps says), so address a is offset a - start + file_offset of
 * the file. */
struct ops_mapping_entry {
	uint64_t start;	      /* first address */
	uint64_t end;	      /* one past the last address (> start) */
	uint64_t file_offset; /* offset in the file of the byte at `start` */
	uint32_t path_id;     /* string id of the file's path, 0 if anonymous */
	uint32_t build_id;    /* string id of the ELF build-id as lowercase hex, 0 if not known */
};
_Static_assert(sizeof(struct ops_mapping_entry) == 32, "mapping entry is 32 bytes");

enum ops_frame_kind {
	OPS_FRAME_NATIVE = 1, /* an instruction address in a mapping */
	OPS_FRAME_PYTHON = 2, /* a Python function: name, file, line */
};

struct ops_frame_entry {
	uint32_t kind; /* enum ops_frame_kind */
	uint32_t
		mapping; /* NATIVE: mapping id, OPS_NO_ID if in no known mapping; PYTHON: OPS_NO_ID */
	uint64_t address;  /* NATIVE: the instruction address (return addresses minus one); 0 */
	uint32_t name_id;  /* function name (PYTHON; NATIVE: 0 until symbolized), string id */
	uint32_t file_id;  /* source file (PYTHON), string id, 0 if not known */
	int32_t line;	   /* source line (PYTHON), 0 if not known */
	uint32_t reserved; /* 0 */
};
_Static_assert(sizeof(struct ops_frame_entry) == 32, "frame entry is 32 bytes");

/* A stack entry: `frame` called from the stack `parent` (OPS_NO_ID: an outermost frame);
 * parent < this entry's id, so a stack is read from innermost out by following parents. */
struct ops_stack_entry {
	uint32_t parent; /* stack id of the caller's entry, OPS_NO_ID at the root */
	uint32_t frame;	 /* frame id */
};
_Static_assert(sizeof(struct ops_stack_entry) == 8, "stack entry is 8 bytes");

#define OPS_SAMPLEF_TRUNCATED (1u << 0) /* the stack was cut: its outermost frames are missing */

struct ops_sample_entry {
	uint32_t track;	   /* track (THREAD record) of the sampled thread */
	uint32_t stack;	   /* stack id of the innermost frame, OPS_NO_ID: no stack was read */
	uint64_t ticks;	   /* when the sample was taken (the tick clock of events) */
	int64_t weight;	   /* what it stands for: 1, or ns of CPU or wall time */
	uint32_t flags;	   /* OPS_SAMPLEF_* */
	uint32_t reserved; /* 0 */
};
_Static_assert(sizeof(struct ops_sample_entry) == 32, "sample entry is 32 bytes");

struct ops_drops_payload {
	uint32_t track;	   /* track that lost events */
	uint32_t reserved; /* 0 */
	uint64_t dropped;  /* events lost so far, cumulative */
};
_Static_assert(sizeof(struct ops_drops_payload) == 16, "drops payload is 16 bytes");

struct ops_timer_entry {
	uint32_t name_id;  /* string id of the timer name */
	uint32_t reserved; /* 0 */
	uint64_t count;	   /* samples */
	uint64_t total_ns; /* sum */
	uint64_t max_ns;   /* largest sample */
	uint64_t min_ns;   /* smallest sample */
};
_Static_assert(sizeof(struct ops_timer_entry) == 40, "timer entry is 40 bytes");

struct ops_end_payload {
	uint64_t events_written; /* events in all EVENTS records */
	uint64_t events_dropped; /* events lost, all tracks */
	uint64_t stop_ticks;	 /* tick counter when the session stopped */
	uint32_t tracks;	 /* tracks in the file */
	uint32_t reserved;	 /* 0 */
};
_Static_assert(sizeof(struct ops_end_payload) == 32, "end payload is 32 bytes");

/*
 * Encoded events. Each event starts with one kind byte; "varint" is unsigned LEB128
 * (at most 10 bytes); "dt" is a varint of ticks since the previous event of the record
 * (the first from first_ticks), so times within a record never go back.
 *
 *   BEGIN       kind, dt, u8 category, varint name_id           open a range on this track
 *   END         kind, dt, varint name_id (0: innermost)         close the innermost range
 *   INSTANT     kind, dt, u8 category, varint name_id
 *   COUNTER     kind, dt, varint name_id, f64 value
 *   ARG         kind, varint key_id, u8 arg_type, value          argument of the previous event
 *                   value: I64 zigzag varint | U64 varint | F64 8 bytes | STR varint string id
 *   FLOW_OUT    kind, dt, varint flow_id     flow leaves the innermost open range here
 *   FLOW_IN     kind, dt, varint flow_id     flow enters the innermost open range here
 *   ASYNC_BEGIN kind, dt, u8 category, varint name_id, varint async_id
 *   ASYNC_END   kind, dt, varint async_id    (may be on another track than its begin)
 *   DROP_MARK   kind, dt, varint count       `count` events were lost just before this point
 */
enum ops_event_kind {
	OPS_EV_BEGIN = 1,
	OPS_EV_END = 2,
	OPS_EV_INSTANT = 3,
	OPS_EV_COUNTER = 4,
	OPS_EV_ARG = 5,
	OPS_EV_FLOW_OUT = 6,
	OPS_EV_FLOW_IN = 7,
	OPS_EV_ASYNC_BEGIN = 8,
	OPS_EV_ASYNC_END = 9,
	OPS_EV_DROP_MARK = 10,
};

enum ops_arg_type {
	OPS_ARG_I64 = 1,
	OPS_ARG_U64 = 2,
	OPS_ARG_F64 = 3,
	OPS_ARG_STR = 4,
};

#endif /* OPSCOPE_TRACE_FORMAT_H */
