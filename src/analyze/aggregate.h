/*
 * aggregate.h: aggregation of ranges by name: per item the number of calls and the total /
 * max / min of a CPU and a GPU time, keyed by (parent item, name, kind) so that an item can
 * have children (an operator's inner phases and kernels), kept in the order they were first
 * seen; and the aggregations the report's operator, user-defined, memory manipulation, Python
 * function, module, NVTX, kernel and nvprof tables are made of.
 *
 * Invariants: items are only appended, so an item's index never changes; the top-level items
 * and the children of each item are chained in first-seen order; a min is INT64_MAX until the
 * item's first call. Out of memory sets `oom`; agg_get then returns AGG_NONE, which agg_add
 * ignores.
 */
#ifndef OPSCOPE_ANALYZE_AGGREGATE_H
#define OPSCOPE_ANALYZE_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "util/hashmap.h"

#define AGG_NONE UINT32_MAX

struct agg_item {
	uint32_t name;	      /* string id (or the caller's key: nvprof's copy kinds) */
	uint32_t parent;      /* index of the parent item, AGG_NONE at the top */
	uint32_t group;	      /* a second key besides the name: the string id of the value of
			       * the argument grouped by (operators by input shapes), else 0 */
	uint8_t kind;	      /* the caller's: e.g. inner phase or kernel */
	uint64_t calls;	      /* ranges counted */
	int64_t cpu_ns;	      /* sum of the CPU times, ns */
	int64_t cpu_max_ns;   /* longest CPU time, ns */
	int64_t cpu_min_ns;   /* shortest CPU time, ns (INT64_MAX before the first call) */
	int64_t gpu_ns;	      /* sum of the GPU times, ns */
	int64_t gpu_max_ns;   /* longest GPU time, ns */
	int64_t gpu_min_ns;   /* shortest GPU time, ns (INT64_MAX before the first call) */
	int64_t self_ns;      /* CPU self time where the aggregation has one, ns: Python
			       * functions (duration - children), modules (- child modules) */
	int64_t gpu_self_ns;  /* modules: GPU time less the child modules' GPU time, ns */
	uint32_t first_child; /* first child item, AGG_NONE if none */
	uint32_t last_child;  /* last child item, AGG_NONE if none */
	uint32_t next;	      /* next sibling in first-seen order, AGG_NONE at the end */
};

struct agg {
	struct agg_item *v;  /* the items, in first-seen order */
	uint32_t n;	     /* items used */
	uint32_t cap;	     /* items allocated */
	struct hindex index; /* items by (parent, name, kind) */
	uint32_t first_top;  /* first top-level item (valid when n > 0) */
	uint32_t last_top;   /* last top-level item (valid when n > 0) */
	bool oom;	     /* an allocation failed: items are missing */
};

/* The item for (parent, name, kind), made on first use; AGG_NONE when out of memory. */
uint32_t agg_get(struct agg *a, uint32_t parent, uint32_t name, uint8_t kind);
/* The same with a second key, `group` (agg_item.group). */
uint32_t agg_get_group(struct agg *a, uint32_t parent, uint32_t name, uint32_t group, uint8_t kind);
/* Count one call with its CPU and GPU times. */
void agg_add(struct agg *a, uint32_t item, int64_t cpu, int64_t gpu);
/* Count x's calls and times into item (sums added, max and min kept): an item of one file's
 * aggregation merged into the whole's (opscope merge). */
void agg_merge_item(struct agg *a, uint32_t item, const struct agg_item *x);
void agg_free(struct agg *a);
/* The summed CPU and GPU times of the top-level items (ns): the whole that the operator table
 * takes its ratios of. */
void agg_top_sums(const struct agg *a, int64_t *cpu_ns, int64_t *gpu_ns);

/* Which host ranges agg_host_ranges aggregates. */
enum agg_select {
	AGG_OPERATORS,	      /* Operator ranges */
	AGG_USER_DEFINED,     /* UserDefined (C API, C++) and PythonUserDefined ranges, neither
			   * named like a copy (below) nor module calls (agg_is_module) */
	AGG_MEMORY,	      /* UserDefined and PythonUserDefined ranges named like memcpy,
			   * memorycopy or memset, any case */
	AGG_PYTHON_FUNCTIONS, /* PythonFunction ranges that are not module calls */
};

/* Does aggregation `sel` select a host range of category `cat` named `name` (string id)?
 * The rule agg_host_ranges applies to each range (the diff attributes ranges to steps by it). */
bool agg_selects(const struct model *m, enum agg_select sel, uint8_t cat, uint32_t name);
/* The string id of the value of range i of track t's argument `key` (a string id; a string,
 * or JSON text as Kineto's "Input Dims"), 0 if it has none or key is 0: agg_item.group. */
uint32_t agg_arg_group(const struct model *m, uint32_t t, uint64_t i, uint32_t key);

/* Is a range of category `cat` named `name` an nn.Module call? Named "nn.Module: <class>"
 * (opscope's PyTorch capture, Kineto's python_function events), or a Forward range named
 * "forward: <class>" (opscope's capture names the outermost module call so). */
bool agg_is_module(uint8_t cat, const char *name);
/* Bytes of the prefix ("nn.Module: ", "forward: ") that agg_is_module recognised in name,
 * 0 if none: the module's class is what follows. */
size_t agg_module_prefix_len(const char *name);

/* Item kinds of the aggregations below. */
enum agg_kind {
	AGG_KIND_RANGE,	 /* a selected range, or a kernel of the kernel aggregation */
	AGG_KIND_INNER,	 /* an operator's inner phase */
	AGG_KIND_KERNEL, /* device work launched from inside an operator or inner phase */
};

/* The selected host ranges of thread track `track` (MODEL_NO_TRACK: every thread), by name:
 * CPU time = duration, GPU time = all device time launched from inside (tree.h), self time
 * (agg_item.self_ns) = duration - the durations of its children. With `detail`, each item's
 * children are its inner phases (direct children that are neither operators nor runtime
 * calls), each with the device work its runtime calls launched (AGG_KIND_KERNEL, GPU time
 * only), and the device work of the item's own runtime calls. With `group_key` (a string
 * id, 0 for none), ranges are grouped by name and the value of their argument of that key
 * too (agg_item.group: the value's string id, 0 for a range without the argument): the
 * operators by "Input Dims", as torch's key_averages(group_by_input_shape=True).
 * 0, or OPSCOPE_ENOMEM (out is then empty). */
int agg_host_ranges(const struct analysis *a, enum agg_select sel, uint32_t track, bool detail,
		    uint32_t group_key, struct agg *out);
/* The same over the thread tracks of file `file` alone, grouped by name. The tracks of a file
 * come one after the other in the model, so agg_host_ranges of every track is these, file
 * after file, merged by (parent, name, kind) in first-seen order (opscope merge). */
int agg_host_ranges_file(const struct analysis *a, enum agg_select sel, uint32_t file, bool detail,
			 struct agg *out);

/* The module hierarchy of thread track `track` (MODEL_NO_TRACK: every thread): each module
 * call (agg_is_module) is an item under the item of the module call that encloses it on its
 * thread (none: at the top), keyed by name, so that the items form the tree of module paths
 * (Net > Sequential > Conv2d), children in first-seen order. CPU = duration, GPU = all device
 * time launched from inside; self_ns and gpu_self_ns = those less the child modules'. 0, or
 * OPSCOPE_ENOMEM (out is then empty). */
int agg_modules(const struct analysis *a, uint32_t track, struct agg *out);
/* The same over the thread tracks of file `file` alone (opscope merge): agg_modules of every
 * track is these, file after file, merged by (parent, name) in first-seen order, the self
 * times summed (each is the total less the child modules', which sums). */
int agg_modules_file(const struct analysis *a, uint32_t file, struct agg *out);

/* Item kinds of the NVTX aggregation. */
enum agg_nvtx_kind {
	AGG_NVTX_DOMAIN,   /* a domain: name = its string id, 0 for the default domain */
	AGG_NVTX_PUSHPOP,  /* push/pop ranges of one name (thread tracks) */
	AGG_NVTX_STARTEND, /* start/end ranges of one name (async tracks) */
};

/* A run of NVTX ranges of one item (index in agg_nvtx.a) and one duration, ns. */
struct agg_nvtx_dur {
	uint32_t item;
	int64_t dur;
	uint64_t count; /* ranges */
};

/* NVTX ranges by domain and name, as `nsys stats -r nvtx_sum` sums them. */
struct agg_nvtx {
	struct agg a;		  /* the domains at the top (AGG_NVTX_DOMAIN, no calls), under
				   * each its ranges by name and style (push/pop, start/end);
				   * CPU = duration */
	int64_t *median_ns;	  /* per item index: the median duration (of an even count, the
				   * mean of the two middle ones, rounded down), ns; 0 for
				   * domains */
	int64_t *stddev_ns;	  /* per item index: the sample standard deviation (n - 1) of
				   * the durations, rounded to the ns; 0 with one range */
	int64_t total_ns;	  /* the sum of every NVTX range's duration, ns */
	struct agg_nvtx_dur *dur; /* the ranges as runs of one item and duration; after
				   * agg_nvtx_finish one run per item and duration, ordered by
				   * item, then duration (what a partial carries) */
	uint64_t ndur;		  /* entries of dur */
	uint64_t dur_cap;	  /* entries allocated */
};

/* Every range of category Nvtx, on thread tracks (push/pop) and async tracks (start/end), by
 * its "domain" argument (the recorder's, for a non-default domain) and name, the files taken
 * in order. 0, or OPSCOPE_ENOMEM (out is then empty). */
int agg_nvtx(const struct model *m, struct agg_nvtx *out);
/* The same over the tracks of file `file` alone: agg_nvtx is these, file after file, added
 * by agg_nvtx_add (opscope merge). */
int agg_nvtx_file(const struct model *m, uint32_t file, struct agg_nvtx *out);
/* Count `count` ranges of `dur` ns of (domain string id, 0 for the default; name string id;
 * style AGG_NVTX_PUSHPOP or _STARTEND) into out, which starts zeroed, as one run (count x
 * dur within int64: the caller's bound); agg_nvtx_finish then makes the medians and
 * deviations. 0, or OPSCOPE_ENOMEM (free out). */
int agg_nvtx_add(struct agg_nvtx *out, uint32_t domain, uint32_t name, uint8_t style, int64_t dur,
		 uint64_t count);
/* The medians and standard deviations of the ranges added. 0, or OPSCOPE_ENOMEM (out is then
 * empty). */
int agg_nvtx_finish(struct agg_nvtx *out);
void agg_nvtx_free(struct agg_nvtx *n);

/* Every kernel (NCCL kernels included) by name, GPU time = its duration; *total_ns = the sum
 * of their durations. 0, or OPSCOPE_ENOMEM (out is then empty). */
int agg_kernels(const struct model *m, struct agg *out, int64_t *total_ns);
/* The same over the device tracks of file `file` alone. agg_kernels takes the files in
 * order, so the items of the whole come in the order of the files' items one after the
 * other, merged by name. */
int agg_kernels_file(const struct model *m, uint32_t file, struct agg *out, int64_t *total_ns);

/* Item kinds of the nvprof aggregation. */
enum agg_nvprof_kind {
	AGG_NVPROF_GPU,	 /* GPU work by name */
	AGG_NVPROF_API,	 /* runtime calls by name */
	AGG_NVPROF_COPY, /* copies of one kind, or memsets: `name` is a key for
			  * agg_nvprof_copy_name, not a string id */
};

/* nvprof's summary: GPU work (kernels, copies, memsets) and runtime calls, by name, GPU time
 * = duration; copies by kind ("[CUDA memcpy HtoD]" for "Memcpy HtoD (Pageable -> Device)"),
 * memsets all one item. *gpu_ns and *api_ns are the summed durations of each side. 0, or
 * OPSCOPE_ENOMEM (out is then empty). */
int agg_nvprof(const struct model *m, struct agg *out, int64_t *gpu_ns, int64_t *api_ns);
/* The same over the tracks of file `file` alone (the tracks of a file come one after the
 * other: agg_nvprof is these, file after file, merged in first-seen order). */
int agg_nvprof_file(const struct model *m, uint32_t file, struct agg *out, int64_t *gpu_ns,
		    int64_t *api_ns);
/* The number of copy keys agg_nvprof_copy_name knows: keys 1 to this. */
#define AGG_NVPROF_COPY_KEYS 8

/* nvprof's name of an AGG_NVPROF_COPY item ("[CUDA memcpy HtoD]", "[CUDA memset]"). */
const char *agg_nvprof_copy_name(uint32_t key);

#endif
