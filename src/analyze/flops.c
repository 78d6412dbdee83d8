/*
 * flops.c: FLOPs, bytes and achieved throughput per operator (flops.h): the rules of which
 * calls count, the links from backward to forward through sequence numbers, the device time
 * and tensor-core use of each call, and the roll-ups.
 *
 * Three passes per thread track, over its ranges in start order (a parent before its
 * children, tree.h gives each range its parent):
 *   1. down: a range is covered when an enclosing operator has a model; an operator that is
 *      not covered is evaluated (perfmodel_eval), and counted into its row when modelled;
 *   2. up: which ranges have a modelled operator inside them;
 *   3. down: the outermost unmodelled operators with no modelled operator inside are the
 *      gaps, listed with the model's reason.
 * Before them, one pass over every thread finds, per (process, sequence number), the forward
 * operator and the grad_output of the convolution backward of that autograd node.
 */
#include "analyze/flops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "util/checked.h"
#include "util/hashmap.h"

/* What pass 1 made of a range. */
enum fl_state {
	FL_NONE = 0,	/* not an operator, nothing above it modelled */
	FL_COVERED = 1, /* an enclosing operator is modelled: not evaluated */
	FL_COUNTED = 2, /* an operator with a model: counted into a row */
	FL_NO_WORK = 3, /* an operator that does no work (a view, an allocation) */
	FL_NO_MODEL = 4 /* an operator with no model */
};

/* What a name is (struct fl.name_kind), looked at once per string id. */
#define FL_NAME_SEEN	 1u /* looked at */
#define FL_NAME_AUTOGRAD 2u /* an autograd node (is_autograd_node) */
/* its model may take a shape the analysis finds elsewhere (a convolution, a part of cuDNN's
 * backward one): never cached */
#define FL_NAME_HINTED 4u

/* Per range of one track, what the passes keep. */
struct fl_range {
	uint8_t state;	      /* enum fl_state */
	bool backward;	      /* inside an autograd node (itself included) */
	bool modelled_inside; /* pass 2: a counted operator is inside it */
	bool in_gap;	      /* pass 3: itself or an enclosing range is a listed gap */
	const char *reason;   /* FL_NO_MODEL: the model's reason */
	uint64_t autograd;    /* the innermost enclosing autograd node with a sequence
				* number (itself included), MODEL_NONE if none */
};

/* A call's model result, kept by the call's name and arguments. */
struct fl_cached {
	uint32_t name, shapes, dtypes, concrete; /* string ids (0: none) */
	struct perfmodel_result res;		 /* its model's result */
};

/* The state of one run. */
struct fl {
	const struct analysis *an;
	const struct model *m;
	const struct flops_opts *o;
	struct flops_result *r;
	uint32_t k_dims, k_types, k_concrete, k_seq; /* argument keys (0: not in the trace) */
	struct hindex row_index;		     /* rows by (name, shapes, dtypes, dir) */
	struct hindex gap_index;		     /* gaps by (name, reason) */
	const struct flops_row *probe_row;	     /* the key hindex_find compares with */
	const struct flops_gap *probe_gap;
	uint32_t rows_cap, gaps_cap;
	struct hmap fwd_op;   /* (process, seq) -> (track << 40 | range) of the forward operator */
	struct hmap conv_out; /* (process, seq) -> (track << 40 | range) of the conv backward */
	/* per string id: -1 not looked at, else the architecture it was looked at for times 2,
	 * plus 1 when the kernel used tensor cores (files of two devices ask for two) */
	int16_t *tc_by_name;
	uint8_t *name_kind; /* per string id: FL_NAME_* bits, 0 not looked at */
	/* results of calls with no hint, by (name, shapes, dtypes, concrete inputs): a training
	 * loop repeats its calls step after step, and parsing is most of a call's cost */
	struct fl_cached *cache;
	uint32_t ncache, cache_cap;
	struct hindex cache_index;
	const struct fl_cached *probe_cache;
	char *scratch; /* perfmodel_parse_inputs' strings */
	size_t scratch_cap;
	struct perfmodel_call call; /* the call being evaluated */
	/* device peaks by (file, device), looked up once each */
	struct fl_dev {
		uint32_t file, device;
		uint32_t name; /* string id of the device's name, 0 if not known */
		const struct hardware_peaks *peaks;
	} devs[64];
	uint32_t ndevs;
	struct flops_part *part; /* the file's share being made (its r is F->r) */
};

/* ---------------------------------------------------------------------------------------- */
/* Names and arguments */

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* Is a range of this name an autograd node: "AddmmBackward0", "CudnnConvolutionBackward",
 * "autograd::engine::evaluate_function: AddmmBackward0", "torch::autograd::AccumulateGrad"? */
static bool is_autograd_node(const char *name)
{
	if (has_prefix(name, "autograd::engine::evaluate_function:") ||
	    has_prefix(name, "torch::autograd::"))
		return true;
	const char *b = strstr(name, "Backward");
	if (!b)
		return false;
	b += strlen("Backward");
	while (*b >= '0' && *b <= '9')
		b++;
	return *b == '\0';
}

/* The FL_NAME_* bits of string id `name`. */
static unsigned name_kind(struct fl *F, uint32_t name)
{
	if (name >= F->m->nstrings)
		return FL_NAME_SEEN;
	uint8_t *k = &F->name_kind[name];
	if (!*k) {
		const char *s = model_str(F->m, name);
		*k = (uint8_t)(FL_NAME_SEEN | (is_autograd_node(s) ? FL_NAME_AUTOGRAD : 0) |
			       (strstr(s, "conv") ? FL_NAME_HINTED : 0));
	}
	return *k;
}

/* Index of the grad_output among the inputs of a convolution backward call, -1 if the name
 * is not one (docs/flops.md: the argument orders of torch 1.8 to 2.x). */
static int conv_bwd_grad_index(const char *name)
{
	if (strcmp(name, "aten::convolution_backward") == 0)
		return 0;
	if (strcmp(name, "aten::cudnn_convolution_backward") == 0 ||
	    strcmp(name, "aten::cudnn_convolution_backward_input") == 0 ||
	    strcmp(name, "aten::cudnn_convolution_backward_weight") == 0 ||
	    strcmp(name, "aten::mkldnn_convolution_backward") == 0)
		return 1;
	return -1;
}

/* Is range i of track t a call whose parts are its child calls, to be counted instead of it?
 * torch < 1.11's aten::cudnn_convolution_backward calls aten::cudnn_convolution_backward_input
 * and _weight for just the gradients asked for: a network's first convolution gets no input
 * gradient, which a model of the whole (both gradients, with no output_mask in the trace)
 * would count anyway. */
static bool runs_as_parts(const struct model *m, const uint64_t *parent, uint32_t t, uint64_t i)
{
	const struct model_track *tr = &m->tracks[t];
	if (strcmp(model_str(m, tr->ranges.name[i]), "aten::cudnn_convolution_backward") != 0)
		return false;
	int64_t end = tr->ranges.start_ns[i] + tr->ranges.dur_ns[i];
	for (uint64_t j = i + 1; j < tr->nranges && tr->ranges.start_ns[j] <= end; j++) {
		if (tr->ranges.depth[j] <= tr->ranges.depth[i])
			break;
		if (parent[j] != i || tr->ranges.category[j] != OPSCOPE_CAT_OPERATOR)
			continue;
		const char *n = model_str(m, tr->ranges.name[j]);
		if (strcmp(n, "aten::cudnn_convolution_backward_input") == 0 ||
		    strcmp(n, "aten::cudnn_convolution_backward_weight") == 0)
			return true;
	}
	return false;
}

/* The text of range i's argument `key` (a string, or JSON text), NULL if none. */
static const char *arg_text(const struct fl *F, uint32_t t, uint64_t i, uint32_t key, uint32_t *id)
{
	*id = 0;
	if (!key)
		return NULL;
	uint64_t a = model_range_arg(F->m, t, i, key);
	if (a == MODEL_NONE)
		return NULL;
	uint8_t type = F->m->args.type[a];
	if (type != MODEL_ARG_STR && type != MODEL_ARG_JSON)
		return NULL;
	*id = (uint32_t)F->m->args.bits[a];
	return model_str(F->m, *id);
}

/* Range i's "Sequence number", -1 if none. */
static int64_t arg_seq(const struct fl *F, uint32_t t, uint64_t i)
{
	if (!F->k_seq)
		return -1;
	uint64_t a = model_range_arg(F->m, t, i, F->k_seq);
	if (a == MODEL_NONE)
		return -1;
	uint8_t type = F->m->args.type[a];
	if (type == MODEL_ARG_I64 || type == MODEL_ARG_U64) {
		int64_t v = (int64_t)F->m->args.bits[a];
		return v >= 0 ? v : -1;
	}
	return -1;
}

/* The key of (process, sequence number) in the maps. */
static uint64_t seq_key(uint32_t process, int64_t seq)
{
	return ((uint64_t)process << 44) ^ ((uint64_t)seq & ((1ull << 44) - 1));
}

/* Parse the call's inputs (texts of its arguments) into F->call; false (with *reason) when
 * they do not parse. */
static bool load_call(struct fl *F, const char *name, const char *dims, const char *types,
		      const char *concrete, const char **reason)
{
	memset(&F->call, 0, sizeof(F->call));
	F->call.name = name;
	F->call.out_ndims = -1;
	size_t need = (types ? strlen(types) : 0) + (concrete ? strlen(concrete) : 0) + 64;
	if (need > F->scratch_cap) {
		char *s = realloc(F->scratch, need);
		if (!s) {
			F->r->oom = true;
			*reason = "out of memory";
			return false;
		}
		F->scratch = s;
		F->scratch_cap = need;
	}
	return perfmodel_parse_inputs(&F->call, dims, types, concrete, F->scratch, F->scratch_cap,
				      reason);
}

/* ---------------------------------------------------------------------------------------- */
/* Rows and gaps */

static uint64_t row_hash(const struct flops_row *r)
{
	uint64_t h = hash_u64(((uint64_t)r->name << 32) | r->shapes);
	return hash_u64(h ^ (((uint64_t)r->dtypes << 1) | r->backward));
}

static bool row_eq(const void *ctx, uint32_t e)
{
	const struct fl *F = ctx;
	const struct flops_row *a = &F->r->rows[e], *b = F->probe_row;
	return a->name == b->name && a->shapes == b->shapes && a->dtypes == b->dtypes &&
	       a->backward == b->backward;
}

static uint64_t row_rehash(const void *ctx, uint32_t e)
{
	return row_hash(&((const struct fl *)ctx)->r->rows[e]);
}

/* The row of key k (name, shapes, dtypes, backward), made on first use; NULL when out of
 * memory. */
static struct flops_row *row_get(struct fl *F, const struct flops_row *k)
{
	uint64_t h = row_hash(k);
	F->probe_row = k;
	uint32_t e = hindex_find(&F->row_index, h, row_eq, F);
	if (e != HINDEX_NONE)
		return &F->r->rows[e];
	if (F->r->nrows == F->rows_cap) {
		uint32_t cap = F->rows_cap ? F->rows_cap * 2 : 64;
		struct flops_row *v = realloc(F->r->rows, cap * sizeof(*v));
		if (!v)
			return NULL;
		F->r->rows = v;
		F->rows_cap = cap;
	}
	if (!hindex_reserve(&F->row_index, row_rehash, F))
		return NULL;
	struct flops_row *r = &F->r->rows[F->r->nrows];
	*r = *k;
	hindex_insert(&F->row_index, h, F->r->nrows++);
	return r;
}

static uint64_t gap_hash(const struct flops_gap *g)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a of the reason's text */
	for (const char *c = g->reason ? g->reason : ""; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	return hash_u64(((uint64_t)g->name << 32) ^ h);
}

static bool gap_eq(const void *ctx, uint32_t e)
{
	const struct fl *F = ctx;
	const struct flops_gap *a = &F->r->gaps[e], *b = F->probe_gap;
	return a->name == b->name &&
	       (a->reason == b->reason ||
		(a->reason && b->reason && strcmp(a->reason, b->reason) == 0));
}

static uint64_t gap_rehash(const void *ctx, uint32_t e)
{
	return gap_hash(&((const struct fl *)ctx)->r->gaps[e]);
}

static struct flops_gap *gap_get(struct fl *F, uint32_t name, const char *reason)
{
	struct flops_gap k = { name, reason, 0, 0, 0 };
	uint64_t h = gap_hash(&k);
	F->probe_gap = &k;
	uint32_t e = hindex_find(&F->gap_index, h, gap_eq, F);
	if (e != HINDEX_NONE)
		return &F->r->gaps[e];
	if (F->r->ngaps == F->gaps_cap) {
		uint32_t cap = F->gaps_cap ? F->gaps_cap * 2 : 64;
		struct flops_gap *v = realloc(F->r->gaps, cap * sizeof(*v));
		if (!v)
			return NULL;
		F->r->gaps = v;
		F->gaps_cap = cap;
	}
	if (!hindex_reserve(&F->gap_index, gap_rehash, F))
		return NULL;
	struct flops_gap *g = &F->r->gaps[F->r->ngaps];
	*g = k;
	hindex_insert(&F->gap_index, h, F->r->ngaps++);
	return g;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ---------------------------------------------------------------------------------------- */
/* Devices and tensor cores */

/* The peaks and name of `device` of file `file` (NULL peaks: not in the table). */
static const struct fl_dev *device_of(struct fl *F, uint32_t file, uint32_t device, uint32_t pid)
{
	for (uint32_t i = 0; i < F->ndevs; i++)
		if (F->devs[i].file == file && F->devs[i].device == device)
			return &F->devs[i];
	static const struct fl_dev none = { 0, 0, 0, NULL };
	if (F->ndevs == sizeof(F->devs) / sizeof(F->devs[0]))
		return &none;
	struct fl_dev *d = &F->devs[F->ndevs++];
	d->file = file;
	d->device = device;
	d->name = 0;
	d->peaks = NULL;
	/* Kineto's deviceProperties and nsys: "device.N.name"; our CUPTI recordings "gpu.N.name" */
	char key[48];
	snprintf(key, sizeof(key), "device.%u.name", device);
	const char *name = model_file_meta(F->m, file, pid, key);
	if (!name) {
		snprintf(key, sizeof(key), "gpu.%u.name", device);
		name = model_file_meta(F->m, file, pid, key);
	}
	if (name)
		d->name = model_find_str(F->m, name);
	d->peaks = F->o && F->o->peaks ? F->o->peaks : name ? hardware_find(name) : NULL;
	if (name && !d->peaks && !F->r->unknown_device)
		F->r->unknown_device = d->name;
	return d;
}

static bool kernel_uses_tc(struct fl *F, uint32_t name, int arch)
{
	if (name >= F->m->nstrings)
		return false;
	int16_t *c = &F->tc_by_name[name];
	if (*c < 0 || *c >> 1 != arch)
		*c = (int16_t)(arch * 2 +
			       (hardware_kernel_uses_tc(model_str(F->m, name), arch) ? 1 : 0));
	return *c & 1;
}

/* The kernels range i of track t launched from inside it: count, time, time on tensor cores,
 * and the device of the first one into the row (when the row has none yet). */
static void scan_kernels(struct fl *F, uint32_t t, uint64_t i, struct flops_row *row)
{
	const struct model *m = F->m;
	const struct model_track *tr = &m->tracks[t];
	const struct tree_track *tk = &F->an->tree.tracks[t];
	int64_t end = tr->ranges.start_ns[i] + tr->ranges.dur_ns[i];
	uint32_t depth = tr->ranges.depth[i];
	for (uint64_t j = i + 1; j < tr->nranges && tr->ranges.start_ns[j] <= end; j++) {
		if (tr->ranges.depth[j] <= depth)
			break; /* a sibling starting where i ends */
		if (!tk->launches || tk->launches[j] == TREE_NONE)
			continue;
		for (uint32_t l = tk->launches[j]; l != TREE_NONE;
		     l = F->an->tree.launches[l].next) {
			const struct tree_launch *L = &F->an->tree.launches[l];
			const struct model_track *dt = &m->tracks[L->track];
			if (!tree_is_kernel(dt->ranges.category[L->range]))
				continue;
			if (!row->peaks && !row->device_name) {
				const struct fl_dev *d =
					device_of(F, dt->file, dt->device, tr->pid);
				row->peaks = d->peaks;
				row->device_name = d->name;
			}
			int arch = row->peaks ? row->peaks->tc_arch : 0;
			row->kernels++;
			if (kernel_uses_tc(F, dt->ranges.name[L->range], arch))
				row->tc_ns += dt->ranges.dur_ns[L->range];
		}
	}
}

/* ---------------------------------------------------------------------------------------- */
/* The passes */

/* The start of range ref (track << 40 | range). */
static int64_t range_start(const struct model *m, uint64_t ref)
{
	return m->tracks[ref >> 40].ranges.start_ns[ref & ((1ull << 40) - 1)];
}

/* Is operator i inside an operator carrying the same sequence number (conv2d > convolution >
 * _convolution all carry their node's)? The outermost of such a chain names it. */
static bool inside_same_seq(const struct fl *F, uint32_t t, const uint64_t *parent, uint64_t i,
			    int64_t seq)
{
	const struct model_track *tr = &F->m->tracks[t];
	for (uint64_t q = parent ? parent[i] : MODEL_NONE; q != MODEL_NONE; q = parent[q])
		if (tr->ranges.category[q] == OPSCOPE_CAT_OPERATOR)
			return arg_seq(F, t, q) == seq;
	return false;
}

/* Every thread: the forward operator and the convolution backward of each (process, seq). */
static bool link_sequences(struct fl *F, struct fl_range **per_track)
{
	const struct model *m = F->m;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		struct fl_range *R = per_track[t];
		if (!R)
			continue;
		const uint64_t *parent = F->an->tree.tracks[t].parent;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint64_t p = parent ? parent[i] : MODEL_NONE;
			unsigned kind = name_kind(F, tr->ranges.name[i]);
			bool node = kind & FL_NAME_AUTOGRAD;
			bool op = tr->ranges.category[i] == OPSCOPE_CAT_OPERATOR;
			/* runtime calls and kernels' launches are most ranges: no argument scan */
			int64_t seq = node || op ? arg_seq(F, t, i) : -1;
			R[i].backward = node || (p != MODEL_NONE && R[p].backward);
			R[i].autograd = node && seq >= 0  ? i
					: p != MODEL_NONE ? R[p].autograd
							  : MODEL_NONE;
			if (!op)
				continue;
			if (!R[i].backward && seq >= 0 && !inside_same_seq(F, t, parent, i, seq)) {
				/* the latest call with the number is the one that made the node:
				 * torch stamps calls that make none (aten::item, lift_fresh) with
				 * the number the next node will get, as TraceLens found */
				uint64_t k = seq_key(tr->process, seq),
					 *v = hmap_find(&F->fwd_op, k);
				uint64_t ref = ((uint64_t)t << 40) | i;
				if (v && range_start(m, *v) <= tr->ranges.start_ns[i])
					*v = ref;
				else if (!v && !hmap_put(&F->fwd_op, k, ref))
					return false;
			} else if (R[i].backward && R[i].autograd != MODEL_NONE &&
				   (kind & FL_NAME_HINTED) &&
				   conv_bwd_grad_index(model_str(m, tr->ranges.name[i])) >= 0) {
				int64_t s = arg_seq(F, t, R[i].autograd);
				uint64_t k = seq_key(tr->process, s);
				if (!hmap_find(&F->conv_out, k) &&
				    !hmap_put(&F->conv_out, k, ((uint64_t)t << 40) | i))
					return false;
			}
		}
	}
	return true;
}

/* A forward convolution's output shape from its backward's grad_output, when the trace has
 * no concrete inputs: set into F->call when found and consistent (batch = input's batch,
 * channels = weight's output channels). */
static void conv_out_from_backward(struct fl *F, uint32_t t, uint64_t i)
{
	const struct model *m = F->m;
	const struct model_track *tr = &m->tracks[t];
	if (!strstr(F->call.name, "conv") || F->call.ninputs < 2 || F->call.in[0].ndims < 3 ||
	    F->call.in[1].ndims != F->call.in[0].ndims)
		return;
	for (int k = 0; k < F->call.ninputs; k++)
		if (F->call.in[k].value && F->call.in[k].value[0])
			return; /* concrete inputs: the model computes the output itself */
	int64_t seq = arg_seq(F, t, i);
	if (seq < 0)
		return;
	uint64_t *v = hmap_find(&F->conv_out, seq_key(tr->process, seq));
	if (!v)
		return;
	uint32_t bt = (uint32_t)(*v >> 40);
	uint64_t bi = *v & ((1ull << 40) - 1);
	const char *bname = model_str(m, m->tracks[bt].ranges.name[bi]);
	int g = conv_bwd_grad_index(bname);
	uint32_t id;
	const char *dims = arg_text(F, bt, bi, F->k_dims, &id);
	if (g < 0 || !dims)
		return;
	struct perfmodel_call *bc = malloc(sizeof(*bc));
	if (!bc) {
		F->r->oom = true;
		return;
	}
	char scratch[8];
	const char *why;
	if (perfmodel_parse_inputs(bc, dims, NULL, NULL, scratch, sizeof(scratch), &why) &&
	    g < bc->ninputs && bc->in[g].ndims == F->call.in[0].ndims &&
	    bc->in[g].dims[0] == F->call.in[0].dims[0] &&
	    bc->in[g].dims[1] == F->call.in[1].dims[0]) {
		F->call.out_ndims = bc->in[g].ndims;
		memcpy(F->call.out_dims, bc->in[g].dims, sizeof(F->call.out_dims));
		F->r->out_from_bwd++;
	}
	free(bc);
}

/* The shape a part of cuDNN's backward convolution gives only as its sizes (torch < 1.11:
 * _input's first input is the input's sizes, _weight's the weight's, as lists the trace does
 * not keep), from the enclosing aten::cudnn_convolution_backward's own inputs (input 0 is the
 * input, 2 the weight): set as F->call's output hint, which the model reads for them. */
static void part_sizes_from_parent(struct fl *F, uint32_t t, uint64_t p)
{
	const struct model *m = F->m;
	int k = strcmp(F->call.name, "aten::cudnn_convolution_backward_input") == 0    ? 0
		: strcmp(F->call.name, "aten::cudnn_convolution_backward_weight") == 0 ? 2
										       : -1;
	if (k < 0 || p == MODEL_NONE ||
	    strcmp(model_str(m, m->tracks[t].ranges.name[p]), "aten::cudnn_convolution_backward") !=
		    0)
		return;
	uint32_t id;
	const char *dims = arg_text(F, t, p, F->k_dims, &id);
	struct perfmodel_call *pc = dims ? malloc(sizeof(*pc)) : NULL;
	if (!pc)
		return;
	char scratch[8];
	const char *why;
	if (perfmodel_parse_inputs(pc, dims, NULL, NULL, scratch, sizeof(scratch), &why) &&
	    k < pc->ninputs && pc->in[k].ndims > 0) {
		F->call.out_ndims = pc->in[k].ndims;
		memcpy(F->call.out_dims, pc->in[k].dims, sizeof(F->call.out_dims));
	}
	free(pc);
}

static uint64_t cached_hash(const struct fl_cached *c)
{
	uint64_t h = hash_u64(((uint64_t)c->name << 32) | c->shapes);
	return hash_u64(h ^ (((uint64_t)c->dtypes << 32) | c->concrete));
}

static bool cached_eq(const void *ctx, uint32_t e)
{
	const struct fl *F = ctx;
	const struct fl_cached *a = &F->cache[e], *b = F->probe_cache;
	return a->name == b->name && a->shapes == b->shapes && a->dtypes == b->dtypes &&
	       a->concrete == b->concrete;
}

static uint64_t cached_rehash(const void *ctx, uint32_t e)
{
	return cached_hash(&((const struct fl *)ctx)->cache[e]);
}

/* Remember the result of key k (k->res set); out of memory only loses the speed. */
static void cache_put(struct fl *F, const struct fl_cached *k)
{
	if (F->ncache == F->cache_cap) {
		uint32_t cap = F->cache_cap ? F->cache_cap * 2 : 256;
		struct fl_cached *v = realloc(F->cache, cap * sizeof(*v));
		if (!v)
			return;
		F->cache = v;
		F->cache_cap = cap;
	}
	if (!hindex_reserve(&F->cache_index, cached_rehash, F))
		return;
	F->cache[F->ncache] = *k;
	hindex_insert(&F->cache_index, cached_hash(k), F->ncache++);
}

/* The model of operator call i of track t (parent p) into *res, its shapes and dtypes' string
 * ids into *shapes and *dtypes: from the cache when a call with the same name and arguments
 * had no hint, else parsed, given its hint and evaluated. */
static void evaluate(struct fl *F, uint32_t t, uint64_t i, uint64_t p, bool backward,
		     struct perfmodel_result *res, uint32_t *shapes, uint32_t *dtypes)
{
	const struct model *m = F->m;
	uint32_t name = m->tracks[t].ranges.name[i];
	struct fl_cached k;
	memset(&k, 0, sizeof(k));
	memset(res, 0, sizeof(*res));
	k.name = name;
	const char *dims = arg_text(F, t, i, F->k_dims, &k.shapes);
	const char *types = arg_text(F, t, i, F->k_types, &k.dtypes);
	const char *concrete = arg_text(F, t, i, F->k_concrete, &k.concrete);
	*shapes = k.shapes;
	*dtypes = k.dtypes;
	if (!dims) {
		res->reason = "no input shapes recorded";
		return;
	}
	bool hinted = name_kind(F, name) & FL_NAME_HINTED;
	if (!hinted) {
		F->probe_cache = &k;
		uint32_t e = hindex_find(&F->cache_index, cached_hash(&k), cached_eq, F);
		if (e != HINDEX_NONE) {
			*res = F->cache[e].res;
			return;
		}
	}
	const char *why = NULL;
	if (!load_call(F, model_str(m, name), dims, types, concrete, &why)) {
		res->reason = why;
	} else {
		if (!backward)
			conv_out_from_backward(F, t, i);
		else
			part_sizes_from_parent(F, t, p);
		perfmodel_eval(&F->call, res);
	}
	if (!hinted && !F->r->oom) {
		k.res = *res;
		cache_put(F, &k);
	}
}

/* Count operator call i of track t (modelled, result res) into its row. */
static bool count_call(struct fl *F, uint32_t t, uint64_t i, const struct fl_range *R,
		       const struct perfmodel_result *res, uint32_t shapes, uint32_t dtypes)
{
	const struct model *m = F->m;
	const struct model_track *tr = &m->tracks[t];
	const struct tree_track *tk = &F->an->tree.tracks[t];
	struct flops_row k = { 0 };
	k.name = tr->ranges.name[i];
	k.shapes = shapes;
	k.dtypes = dtypes;
	k.backward = R[i].backward;
	struct flops_row *row = row_get(F, &k);
	if (!row)
		return false;
	if (row->calls == 0) {
		row->category = (uint8_t)res->category;
		row->dtype = (uint8_t)res->dtype;
		row->tc_eligible = res->tc_eligible;
		row->tc_tf32_only = res->tc_tf32_only;
		row->tc_reason = res->tc_reason;
		if (row->backward && R[i].autograd != MODEL_NONE) {
			int64_t s = arg_seq(F, t, R[i].autograd);
			uint64_t *v = hmap_find(&F->fwd_op, seq_key(tr->process, s));
			row->fwd_op =
				v ? m->tracks[*v >> 40].ranges.name[*v & ((1ull << 40) - 1)] : 0;
		}
	}
	row->calls++;
	row->cpu_ns += tr->ranges.dur_ns[i];
	row->gpu_ns += tk->ggpu_ns ? tk->ggpu_ns[i] : 0;
	row->kernel_ns += tk->gpu_ns ? tk->gpu_ns[i] : 0;
	row->flops = sat_add(row->flops, res->flops);
	row->bytes = sat_add(row->bytes, sat_add(res->bytes_read, res->bytes_written));
	scan_kernels(F, t, i, row);
	return true;
}

/* Add range i of track t's times, in both bases, into two: [0] the device time it launched,
 * [1] its CPU time (the file's basis is known only once every file is: flops_combine). */
static void add_basis(int64_t *two, const struct fl *F, uint32_t t, uint64_t i)
{
	const struct tree_track *tk = &F->an->tree.tracks[t];
	two[0] += tk->ggpu_ns ? tk->ggpu_ns[i] : 0;
	two[1] += F->m->tracks[t].ranges.dur_ns[i];
}

static bool track_passes(struct fl *F, uint32_t t, struct fl_range *R)
{
	const struct model *m = F->m;
	const struct model_track *tr = &m->tracks[t];
	const uint64_t *parent = F->an->tree.tracks[t].parent;
	struct flops_result *r = F->r;
	/* 1. down: evaluate what no modelled operator encloses */
	for (uint64_t i = 0; i < tr->nranges; i++) {
		uint64_t p = parent ? parent[i] : MODEL_NONE;
		bool covered =
			p != MODEL_NONE && (R[p].state == FL_COVERED || R[p].state == FL_COUNTED);
		bool op = tr->ranges.category[i] == OPSCOPE_CAT_OPERATOR;
		if (covered) {
			R[i].state = FL_COVERED;
			continue;
		}
		if (!op)
			continue;
		/* outermost operator calls make the whole the shares are of */
		bool outermost = true;
		for (uint64_t q = p; q != MODEL_NONE; q = parent[q])
			if (tr->ranges.category[q] == OPSCOPE_CAT_OPERATOR) {
				outermost = false;
				break;
			}
		if (outermost)
			add_basis(F->part->total_ns, F, t, i);
		if (runs_as_parts(m, parent, t, i))
			continue; /* its parts are evaluated, not it */
		if (name_kind(F, tr->ranges.name[i]) & FL_NAME_AUTOGRAD)
			continue; /* a container: its work is the operators it calls */
		uint32_t shapes, dtypes;
		struct perfmodel_result res;
		evaluate(F, t, i, p, R[i].backward, &res, &shapes, &dtypes);
		const char *why = res.reason;
		if (res.category != PERFMODEL_NONE) {
			R[i].state = FL_COUNTED;
			if (!count_call(F, t, i, R, &res, shapes, dtypes))
				return false;
			struct flops_category *c = &r->cat[res.category];
			c->calls++;
			add_basis(F->part->cat_ns[res.category], F, t, i);
			c->flops = sat_add(c->flops, res.flops);
			c->bytes = sat_add(c->bytes, sat_add(res.bytes_read, res.bytes_written));
		} else if (why && strcmp(why, "no work (a view or allocation)") == 0) {
			R[i].state = FL_NO_WORK;
		} else {
			R[i].state = FL_NO_MODEL;
			R[i].reason = why ? why : "no model for this operator";
		}
	}
	/* 2. up: ranges with a counted operator inside */
	for (uint64_t i = tr->nranges; i-- > 0;) {
		uint64_t p = parent ? parent[i] : MODEL_NONE;
		if (p != MODEL_NONE && (R[i].modelled_inside || R[i].state == FL_COUNTED))
			R[p].modelled_inside = true;
	}
	/* 3. down: the outermost unmodelled operators with nothing modelled inside */
	for (uint64_t i = 0; i < tr->nranges; i++) {
		uint64_t p = parent ? parent[i] : MODEL_NONE;
		if (p != MODEL_NONE && R[p].in_gap) {
			R[i].in_gap = true;
			continue;
		}
		if (R[i].state == FL_NO_WORK && !R[i].modelled_inside) {
			bool outer = true;
			for (uint64_t q = p; q != MODEL_NONE; q = parent[q])
				outer &= R[q].state != FL_NO_WORK;
			r->no_work_calls += outer;
			continue;
		}
		if (R[i].state != FL_NO_MODEL || R[i].modelled_inside)
			continue;
		R[i].in_gap = true;
		struct flops_gap *g = gap_get(F, tr->ranges.name[i], R[i].reason);
		if (!g)
			return false;
		const struct tree_track *tk = &F->an->tree.tracks[t];
		g->calls++;
		g->cpu_ns += tr->ranges.dur_ns[i];
		g->gpu_ns += tk->ggpu_ns ? tk->ggpu_ns[i] : 0;
		r->cat[PERFMODEL_NONE].calls++;
		add_basis(F->part->cat_ns[PERFMODEL_NONE], F, t, i);
	}
	return true;
}

/* The roofline sums of the categories, from the rows (their peaks are known by now). A row
 * that beats the roofline (a Winograd convolution does fewer FLOPs than the direct count; a
 * call whose device time was missed) counts as at the roofline, so that one such row cannot
 * lift its category above 100%; the rows are counted in over_roofline. False when a
 * category's time at peak would leave int64 (rows of a crafted partial: each within 2^62). */
static bool roll_up_roofline(struct flops_result *r)
{
	for (uint32_t i = 0; i < r->nrows; i++) {
		const struct flops_row *row = &r->rows[i];
		struct flops_derived d;
		flops_derive(row, r->device_time, &d);
		if (d.roofline_ns <= 0)
			continue;
		double t = d.time_s * 1e9;
		r->over_roofline += d.roofline_ns > t;
		struct flops_category *c = &r->cat[row->category];
		c->roofline_ns += d.roofline_ns < t ? d.roofline_ns : t;
		if (!(t < 0x1p62) ||
		    !checked_add_i64(&c->peak_time_ns, c->peak_time_ns, (int64_t)(t + 0.5)))
			return false;
	}
	return true;
}

/* Start the state shared by the files of one model (the caches by string id). False when out
 * of memory, or *none when no operator of the model has shapes. */
static bool fl_start(struct fl *F, const struct analysis *an, const struct flops_opts *o,
		     bool *none)
{
	const struct model *m = an->m;
	memset(F, 0, sizeof(*F));
	F->an = an;
	F->m = m;
	F->o = o;
	F->k_dims = model_find_str(m, "Input Dims");
	F->k_types = model_find_str(m, "Input type");
	F->k_concrete = model_find_str(m, "Concrete Inputs");
	F->k_seq = model_find_str(m, "Sequence number");
	*none = !F->k_dims; /* no operator has shapes: nothing to model, nothing to list */
	size_t n = m->nstrings ? m->nstrings : 1;
	F->tc_by_name = malloc(n * sizeof(*F->tc_by_name));
	F->name_kind = calloc(n, 1);
	if (!F->tc_by_name || !F->name_kind)
		return false;
	memset(F->tc_by_name, -1, n * sizeof(*F->tc_by_name));
	return true;
}

static void fl_end(struct fl *F)
{
	free(F->tc_by_name);
	free(F->name_kind);
	free(F->cache);
	hindex_free(&F->cache_index);
	free(F->scratch);
}

/* The share of file `file` into part (F started). False when out of memory. */
static bool fl_file(struct fl *F, uint32_t file, struct flops_part *part)
{
	const struct model *m = F->m;
	memset(part, 0, sizeof(*part));
	F->part = part;
	F->r = &part->r;
	F->rows_cap = F->gaps_cap = 0;
	F->ndevs = 0;
	for (uint32_t t = 0; t < m->ntracks && !part->r.device_time; t++)
		part->r.device_time = m->tracks[t].file == file &&
				      m->tracks[t].kind == MODEL_TRACK_DEVICE &&
				      m->tracks[t].nranges;
	struct fl_range **per_track = calloc(m->ntracks ? m->ntracks : 1, sizeof(*per_track));
	bool ok = per_track != NULL;
	for (uint32_t t = 0; ok && t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->file != file || tr->kind != MODEL_TRACK_THREAD || !tr->nranges)
			continue;
		per_track[t] = calloc(tr->nranges, sizeof(struct fl_range));
		ok = per_track[t] != NULL;
	}
	ok = ok && link_sequences(F, per_track);
	for (uint32_t t = 0; ok && t < m->ntracks; t++)
		if (per_track[t])
			ok = track_passes(F, t, per_track[t]);
	if (per_track)
		for (uint32_t t = 0; t < m->ntracks; t++)
			free(per_track[t]);
	free(per_track);
	/* the *_free calls leave them empty */
	hindex_free(&F->row_index);
	hindex_free(&F->gap_index);
	hmap_free(&F->fwd_op);
	hmap_free(&F->conv_out);
	if (!ok)
		part->r.oom = true;
	return ok && !part->r.oom;
}

int flops_file(const struct analysis *an, uint32_t file, struct flops_part *part)
{
	struct fl F;
	bool none;
	memset(part, 0, sizeof(*part));
	bool ok = fl_start(&F, an, NULL, &none);
	if (ok) /* with no shapes too: a file with shapes beside it lists these calls */
		ok = fl_file(&F, file, part);
	part->has_shapes = !none;
	fl_end(&F);
	if (!ok)
		part->r.oom = true;
	return ok ? 0 : OPSCOPE_ENOMEM;
}

void flops_part_free(struct flops_part *part)
{
	flops_free(&part->r);
	memset(part, 0, sizeof(*part));
}

/* Add row x (of a later file) into row y of the same key: the sums; the device and its peaks
 * when y has none yet (the first kernel of the row's calls, file after file). */
static bool row_add(struct flops_row *y, const struct flops_row *x)
{
	uint64_t calls = y->calls + x->calls, kernels = y->kernels + x->kernels;
	if (calls < y->calls || kernels < y->kernels ||
	    !checked_add_i64(&y->cpu_ns, y->cpu_ns, x->cpu_ns) ||
	    !checked_add_i64(&y->gpu_ns, y->gpu_ns, x->gpu_ns) ||
	    !checked_add_i64(&y->kernel_ns, y->kernel_ns, x->kernel_ns) ||
	    !checked_add_i64(&y->tc_ns, y->tc_ns, x->tc_ns))
		return false;
	y->calls = calls;
	y->kernels = kernels;
	y->flops = sat_add(y->flops, x->flops);
	y->bytes = sat_add(y->bytes, x->bytes);
	if (!y->peaks && !y->device_name) {
		y->peaks = x->peaks;
		y->device_name = x->device_name;
	}
	return true;
}

/* flops_combine's work on F (F->r = out). 0, -1 (a sum leaves int64) or OPSCOPE_ENOMEM. */
static int combine_run(struct fl *F, const struct flops_opts *o, const struct flops_part *parts,
		       uint32_t n)
{
	struct flops_result *out = F->r;
	int64_t total[2] = { 0, 0 }, cat_ns[PERFMODEL_CATEGORIES][2];
	memset(cat_ns, 0, sizeof(cat_ns));
	for (uint32_t k = 0; k < n; k++) {
		const struct flops_part *p = &parts[k];
		out->device_time |= p->r.device_time;
		out->oom |= p->r.oom;
		out->no_work_calls += p->r.no_work_calls;
		out->out_from_bwd += p->r.out_from_bwd;
		if (!out->unknown_device)
			out->unknown_device = p->r.unknown_device;
		for (int b = 0; b < 2; b++) {
			if (!checked_add_i64(&total[b], total[b], p->total_ns[b]))
				return -1;
			for (int c = 0; c < PERFMODEL_CATEGORIES; c++)
				if (!checked_add_i64(&cat_ns[c][b], cat_ns[c][b], p->cat_ns[c][b]))
					return -1;
		}
		for (int c = 0; c < PERFMODEL_CATEGORIES; c++) {
			struct flops_category *y = &out->cat[c];
			const struct flops_category *x = &p->r.cat[c];
			if (y->calls + x->calls < y->calls)
				return -1;
			y->calls += x->calls;
			y->flops = sat_add(y->flops, x->flops);
			y->bytes = sat_add(y->bytes, x->bytes);
		}
		for (uint32_t i = 0; i < p->r.nrows; i++) {
			const struct flops_row *x = &p->r.rows[i];
			struct flops_row k0 = { 0 };
			k0.name = x->name;
			k0.shapes = x->shapes;
			k0.dtypes = x->dtypes;
			k0.backward = x->backward;
			uint32_t before = out->nrows;
			struct flops_row *y = row_get(F, &k0);
			if (!y)
				return OPSCOPE_ENOMEM;
			if (out->nrows > before) {
				*y = *x; /* first seen here: its first call's attributes */
				continue;
			}
			if (!row_add(y, x))
				return -1;
		}
		for (uint32_t i = 0; i < p->r.ngaps; i++) {
			const struct flops_gap *x = &p->r.gaps[i];
			struct flops_gap *y = gap_get(F, x->name, x->reason);
			if (!y)
				return OPSCOPE_ENOMEM;
			if (y->calls + x->calls < y->calls ||
			    !checked_add_i64(&y->cpu_ns, y->cpu_ns, x->cpu_ns) ||
			    !checked_add_i64(&y->gpu_ns, y->gpu_ns, x->gpu_ns))
				return -1;
			y->calls += x->calls;
		}
	}
	bool shapes = false;
	for (uint32_t k = 0; k < n; k++)
		shapes |= parts[k].has_shapes;
	if (!shapes) { /* no operator with shapes anywhere: nothing to model, nothing to list */
		flops_free(out);
		return 0;
	}
	int b = out->device_time ? 0 : 1;
	out->total_ns = total[b];
	for (int c = 0; c < PERFMODEL_CATEGORIES; c++)
		out->cat[c].time_ns = cat_ns[c][b];
	/* CPU time has no peak in the table; peaks given by hand apply to it too */
	if (!out->device_time && o && o->peaks)
		for (uint32_t i = 0; i < out->nrows; i++)
			out->rows[i].peaks = o->peaks;
	return roll_up_roofline(out) ? 0 : -1;
}

int flops_combine(const struct flops_opts *o, const struct flops_part *parts, uint32_t n,
		  struct flops_result *out)
{
	memset(out, 0, sizeof(*out));
	struct fl F;
	memset(&F, 0, sizeof(F));
	F.r = out;
	int rc = combine_run(&F, o, parts, n);
	hindex_free(&F.row_index);
	hindex_free(&F.gap_index);
	if (rc == OPSCOPE_ENOMEM)
		out->oom = true;
	return rc;
}

int flops_run(const struct analysis *an, const struct flops_opts *o, struct flops_result *out)
{
	memset(out, 0, sizeof(*out));
	const struct model *m = an->m;
	struct fl F;
	bool none;
	bool ok = fl_start(&F, an, o, &none);
	if (ok && none) {
		fl_end(&F);
		return 0;
	}
	uint32_t n = m->nfiles ? m->nfiles : 1; /* a model built by hand may have no file */
	struct flops_part *parts = ok ? calloc(n, sizeof(*parts)) : NULL;
	ok = parts != NULL;
	for (uint32_t f = 0; ok && f < n; f++)
		if ((ok = fl_file(&F, m->nfiles ? f : 0, &parts[f])))
			parts[f].has_shapes = true;
	fl_end(&F);
	int rc = ok ? flops_combine(o, parts, n, out) : OPSCOPE_ENOMEM;
	for (uint32_t f = 0; parts && f < n; f++)
		flops_part_free(&parts[f]);
	free(parts);
	if (rc) {
		out->oom = true;
		return OPSCOPE_ENOMEM;
	}
	return out->oom ? OPSCOPE_ENOMEM : 0;
}

void flops_free(struct flops_result *r)
{
	free(r->rows);
	free(r->gaps);
	memset(r, 0, sizeof(*r));
}

void flops_derive(const struct flops_row *r, bool device_time, struct flops_derived *d)
{
	memset(d, 0, sizeof(*d));
	int64_t ns = device_time ? r->gpu_ns : r->cpu_ns;
	d->time_s = (double)ns / 1e9;
	double flops = (double)r->flops, bytes = (double)r->bytes;
	d->intensity = bytes > 0 ? flops / bytes : 0;
	if (d->time_s > 0) {
		d->flops_per_s = flops / d->time_s;
		d->bytes_per_s = bytes / d->time_s;
	}
	if (!r->peaks)
		return;
	enum perfmodel_dtype dt = (enum perfmodel_dtype)r->dtype;
	d->peak_flops = hardware_peak_flops(r->peaks, dt, r->tc_ns > 0);
	if (d->peak_flops <= 0 && r->tc_ns > 0) /* no such tensor-core rate (TF32 on a V100) */
		d->peak_flops = hardware_peak_flops(r->peaks, dt, false);
	double bw = r->peaks->mem_bw_bytes;
	if (d->peak_flops > 0 && d->time_s > 0)
		d->pct_peak_flops = d->flops_per_s / d->peak_flops;
	if (bw > 0 && d->time_s > 0)
		d->pct_peak_bw = d->bytes_per_s / bw;
	if (d->peak_flops > 0 && bw > 0) {
		double tc = flops / d->peak_flops * 1e9, tm = bytes / bw * 1e9;
		d->roofline_ns = tc > tm ? tc : tm;
		d->bound = tc >= tm ? "compute" : "memory";
		if (ns > 0)
			d->roofline_eff = d->roofline_ns / (double)ns;
	}
}
