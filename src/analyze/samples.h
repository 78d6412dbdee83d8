/*
 * samples.h: the profile of the model's CPU stack samples, as `pprof -top` and `-peek` show
 * one: per function the weight of the samples where it is the innermost frame (flat) and of
 * the samples whose stack holds it anywhere (cum), and per caller -> callee pair the weight of
 * the samples whose stack holds that call. Optionally only the samples taken while their
 * thread was inside a range of a given name (`report --views samples --under NAME`).
 *
 * A function is a frame name with its source file (Python frames of the same name in two
 * files are two functions; native frames have no file). Recursion never counts twice: a
 * sample adds its weight once to the cum of each function its stack holds and once to each
 * distinct caller -> callee pair, however often they repeat in it. Also the flame graph: the
 * stack prefix tree with frames merged by function, each path's self and total weight (a
 * recursive function is one node per level there, as in every flame graph). Pure: reads the
 * model only.
 */
#ifndef OPSCOPE_ANALYZE_SAMPLES_H
#define OPSCOPE_ANALYZE_SAMPLES_H

#include <stdint.h>

#include "model/model.h"

struct samples_fn {
	uint32_t name; /* string id of the function name (0: not known) */
	uint32_t file; /* string id of its source file, 0 if none */
	int64_t flat;  /* weight of the samples whose innermost frame it is */
	int64_t cum;   /* weight of the samples whose stack holds it */
	/* a frame with no name (an imported address that nothing named): its address, which
	 * is then the function's key; 0 otherwise */
	uint64_t address;
};

/* Samples whose stack has function `caller` calling function `callee` (indices in fns). */
struct samples_edge {
	uint32_t caller, callee;
	int64_t weight; /* their weight, each sample once */
};

/* One node of the flame graph: a path of functions from the root, samples merged by function
 * (two frames of one function at two lines are one node). */
struct samples_node {
	uint32_t
		parent; /* index of the caller's node (smaller than this one), UINT32_MAX at a root */
	uint32_t fn;	/* index in samples_profile.fns */
	int64_t self;	/* weight of the samples whose stack ends at this path */
	int64_t total; /* weight of the samples whose stack starts with this path */
};

struct samples_profile {
	struct samples_fn *fns; /* by flat (descending), then cum, then the texts of name
				 * and file, then address */
	uint32_t nfns;
	struct samples_edge *edges; /* by weight (descending), then caller, then callee */
	uint64_t nedges;
	int64_t total;		    /* weight of every sample kept, stackless ones included */
	uint64_t samples;	    /* samples kept */
	uint64_t truncated;	    /* of them, with a truncated stack */
	uint64_t no_stack;	    /* of them, with no stack at all (count no function) */
	uint64_t all_samples;	    /* samples in the model, before --under */
	struct samples_node *nodes; /* the flame graph: callers before callees, roots first in
				     * stack order; only paths of some weight */
	uint32_t nnodes;
};

/* The profile of the samples of model m; with `under` (not NULL), only of those taken while
 * their thread was inside a range named exactly `under` (start <= time < end). 0, or
 * OPSCOPE_ENOMEM (p is then empty). */
int samples_profile(const struct model *m, const char *under, struct samples_profile *p);
void samples_profile_free(struct samples_profile *p);

/* The profile of the samples of file `file` of m alone (every sample of its tracks): a
 * partial's share (opscope merge). The flame graph is made too; the merge does not read it. */
int samples_profile_file(const struct model *m, uint32_t file, struct samples_profile *p);

/* The profile of n parts (profiles of string ids of m, each file's share) as samples_profile
 * of all their samples gives it: functions summed by (name, file) or address, caller ->
 * callee pairs by their functions, counts summed, both ordered as samples_profile orders
 * them; no flame graph. Exact, as a sample belongs to one part. 0, OPSCOPE_ENOMEM, or -1 when
 * a sum leaves int64 (out is then empty). */
int samples_combine(const struct model *m, const struct samples_profile *parts, uint32_t n,
		    struct samples_profile *out);

/* A range name and the weight of the samples taken inside ranges of that name. */
struct samples_range {
	uint32_t name;	/* string id */
	int64_t weight; /* of the samples inside (each once, nested ranges of the name merged) */
};

/* The names of the ranges that hold the most sample weight (what `--under NAME` would keep),
 * heaviest first (ties: smaller string id), at most k, into out; only names with some weight.
 * Returns how many, or -1 when out of memory. */
int samples_top_ranges(const struct model *m, uint32_t k, struct samples_range *out);

#endif
