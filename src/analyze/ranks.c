/*
 * ranks.c: many ranks side by side (ranks.h; every rule and formula: docs/ranks.md).
 *
 * Order of work, in two parts. Per file (ranks_file_extract): its rank, host and world size,
 * its steps (step_table rows reduced to what is compared), its collective kernels with what
 * their arguments say, and its distributed numbers. Over the files' shares (ranks_combine,
 * which reads no track, so that `opscope merge` runs it on shares read from partials): pick
 * one file per rank (notes for the rest), match the collective kernels across ranks by
 * (kernel name, n-th of that name), align the clocks on the matched ends, then compare steps
 * and collectives on the aligned clocks. The model is
 * never written: offsets live in ranks_rank.offset_ns and are added where times are compared.
 * Invariants: ranks[] is sorted by rank with distinct ranks; ranks[0] is the reference clock
 * (offset 0); every ranks_coll has one arrival per rank.
 */
#include "analyze/ranks.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

static void note(struct ranks *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct ranks *r, const char *fmt, ...)
{
	if (r->nnotes >= RANKS_NOTES_MAX) {
		r->nnotes_dropped++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->nnotes++], RANKS_NOTE_LEN, fmt, ap);
	va_end(ap);
}

/* The rank and host of file f: those of its first process with a rank. */
static const struct model_process *file_process(const struct model *m, uint32_t f)
{
	const struct model_process *any = NULL;
	for (uint32_t p = 0; p < m->nprocesses; p++) {
		if (m->processes[p].file != f)
			continue;
		if (m->processes[p].rank >= 0)
			return &m->processes[p];
		if (!any)
			any = &m->processes[p];
	}
	return any;
}

bool ranks_present(const struct model *m)
{
	uint32_t n = 0;
	for (uint32_t f = 0; f < m->nfiles && n < 2; f++) {
		const struct model_process *p = file_process(m, f);
		n += p && p->rank >= 0;
	}
	return n >= 2;
}

/* A file and its rank, for ranks_kept_files. */
struct file_rank {
	int32_t rank; /* its rank */
	uint32_t f;   /* index in model.files */
};

static int file_rank_cmp(const void *x, const void *y)
{
	const struct file_rank *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->f < b->f ? -1 : a->f > b->f;
}

/* Mark in keep (all true before) the files of v (n files with a rank) whose rank a file
 * before them has; v is sorted. The number marked. */
static uint32_t kept_of(struct file_rank *v, uint32_t n, bool *keep)
{
	uint32_t out = 0;
	qsort(v, n, sizeof(*v), file_rank_cmp);
	for (uint32_t i = 1; i < n; i++)
		if (v[i].rank == v[i - 1].rank) {
			keep[v[i].f] = false;
			out++;
		}
	return out;
}

uint32_t ranks_kept_files(const struct model *m, bool *keep)
{
	for (uint32_t f = 0; f < m->nfiles; f++)
		keep[f] = true;
	struct file_rank *v = malloc((m->nfiles ? m->nfiles : 1) * sizeof(*v));
	if (!v)
		return UINT32_MAX;
	uint32_t n = 0;
	for (uint32_t f = 0; f < m->nfiles; f++) {
		const struct model_process *p = file_process(m, f);
		if (p && p->rank >= 0)
			v[n++] = (struct file_rank){ p->rank, f };
	}
	uint32_t out = kept_of(v, n, keep);
	free(v);
	return out;
}

uint32_t ranks_kept_shares(const struct ranks_file *rf, uint32_t n, bool *keep)
{
	for (uint32_t i = 0; i < n; i++)
		keep[i] = true;
	struct file_rank *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return UINT32_MAX;
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (rf[i].rank >= 0)
			v[k++] = (struct file_rank){ rf[i].rank, i };
	uint32_t out = kept_of(v, k, keep);
	free(v);
	return out;
}

/* World size from the file's metadata (distributedInfo.world_size, or the recorder's
 * world_size), -1 when none. */
static int32_t world_size_of(const struct model *m, uint32_t f)
{
	const char *v = model_file_meta(m, f, m->files[f].pid, "distributed.world_size");
	if (!v)
		v = model_file_meta(m, f, m->files[f].pid, "world_size");
	if (!v || !*v)
		return -1;
	char *end;
	long n = strtol(v, &end, 10);
	return *end == '\0' && n > 0 && n <= INT32_MAX ? (int32_t)n : -1;
}

static int rank_cmp(const void *x, const void *y)
{
	const struct ranks_rank *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->file < b->file ? -1 : a->file > b->file;
}

static int kcoll_start_cmp(const void *x, const void *y)
{
	const struct ranks_kernel *a = x, *b = y;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* The order of the reference rank's collectives: by start, then end, then name as text (not
 * its string id, which differs between a model and the one `opscope merge` builds), then seq.
 * qsort's comparison takes no context: the model per thread (views run in parallel). */
static _Thread_local const struct model *order_model;
static int kcoll_order_cmp(const void *x, const void *y)
{
	const struct ranks_kernel *a = x, *b = y;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	if (a->e != b->e)
		return a->e < b->e ? -1 : 1;
	int c = a->name == b->name
			? 0
			: strcmp(model_str(order_model, a->name), model_str(order_model, b->name));
	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int kcoll_key_cmp(const void *x, const void *y)
{
	const struct ranks_kernel *a = x, *b = y;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int i64_cmp(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

/* Median of v[0..n) (sorts v); the lower middle for even n; 0 for n == 0. */
static int64_t median(int64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), i64_cmp);
	return v[(n - 1) / 2];
}

const char *ranks_coll_op(const char *name)
{
	static const struct {
		const char *needle, *op;
	} ops[] = {
		/* longer names first: "reducescatter" holds "reduce", "allreduce" too */
		{ "reducescatter", "reducescatter" },
		{ "reduce_scatter", "reducescatter" },
		{ "allreduce", "allreduce" },
		{ "all_reduce", "allreduce" },
		{ "allgather", "allgather" },
		{ "all_gather", "allgather" },
		{ "alltoall", "alltoall" },
		{ "all_to_all", "alltoall" },
		{ "broadcast", "broadcast" },
		{ "sendrecv", "sendrecv" },
		{ "reduce", "reduce" },
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (analysis_name_has(name, ops[i].needle))
			return ops[i].op;
	return "";
}

double ranks_busbw_factor(const char *op, int32_t n)
{
	if (n < 1 || !op || !*op)
		return 0;
	double d = (double)n;
	if (strcmp(op, "allreduce") == 0)
		return 2.0 * (d - 1) / d;
	if (strcmp(op, "allgather") == 0 || strcmp(op, "reducescatter") == 0 ||
	    strcmp(op, "alltoall") == 0)
		return (d - 1) / d;
	if (strcmp(op, "broadcast") == 0 || strcmp(op, "reduce") == 0 ||
	    strcmp(op, "sendrecv") == 0)
		return 1;
	return 0;
}

int ranks_dtype_bytes(const char *dtype)
{
	static const struct {
		const char *name;
		int bytes;
	} t[] = {
		{ "float", 4 },		{ "float32", 4 },	{ "int", 4 },
		{ "int32", 4 },		{ "uint32", 4 },	{ "double", 8 },
		{ "float64", 8 },	{ "long", 8 },		{ "long int", 8 },
		{ "int64", 8 },		{ "uint64", 8 },	{ "half", 2 },
		{ "c10::half", 2 },	{ "float16", 2 },	{ "bfloat16", 2 },
		{ "c10::bfloat16", 2 }, { "short", 2 },		{ "int16", 2 },
		{ "char", 1 },		{ "byte", 1 },		{ "int8", 1 },
		{ "uint8", 1 },		{ "signed char", 1 },	{ "unsigned char", 1 },
		{ "bool", 1 },		{ "float8_e4m3fn", 1 }, { "float8_e5m2", 1 },
	};
	if (!dtype)
		return 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *a = t[i].name, *b = dtype;
		while (*a && *b && (*a == (*b >= 'A' && *b <= 'Z' ? *b - 'A' + 'a' : *b)))
			a++, b++;
		if (!*a && !*b)
			return t[i].bytes;
	}
	return 0;
}

/* Integer argument `key` (string id; 0: not interned) of range i on track t, -1 if none. */
static int64_t arg_int(const struct model *m, uint32_t t, uint64_t i, uint32_t key)
{
	uint64_t a = key ? model_range_arg(m, t, i, key) : MODEL_NONE;
	if (a == MODEL_NONE)
		return -1;
	uint8_t ty = m->args.type[a];
	if (ty == MODEL_ARG_I64 || ty == MODEL_ARG_U64)
		return (int64_t)m->args.bits[a] >= 0 ? (int64_t)m->args.bits[a] : -1;
	if (ty == MODEL_ARG_F64) {
		double d;
		memcpy(&d, &m->args.bits[a], sizeof(d));
		return d >= 0 && d < 9e18 ? (int64_t)d : -1;
	}
	return -1;
}

static const char *arg_str(const struct model *m, uint32_t t, uint64_t i, uint32_t key)
{
	uint64_t a = key ? model_range_arg(m, t, i, key) : MODEL_NONE;
	if (a == MODEL_NONE || m->args.type[a] != MODEL_ARG_STR)
		return NULL;
	return model_str(m, (uint32_t)m->args.bits[a]);
}

/* "RING LL" from "ncclKernel_AllReduce_RING_LL_Sum_float(...)" or
 * "ncclDevKernel_AllReduce_Sum_f32_RING_LL": the name's algorithm and protocol tokens. */
static void algo_of(const char *name, char *buf, size_t size)
{
	static const char *const algos[] = { "RING",	      "TREE",	 "COLLNET_DIRECT",
					     "COLLNET_CHAIN", "COLLNET", "NVLS_TREE",
					     "NVLS",	      "PAT" };
	static const char *const protos[] = { "LL128", "LL", "SIMPLE" };
	const char *algo = NULL, *proto = NULL;
	size_t n = strcspn(name, "(");
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && name[j] != '_')
			j++;
		/* a token: try the longer names first (COLLNET_DIRECT spans an underscore) */
		for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]) && !algo; a++) {
			size_t l = strlen(algos[a]);
			if (i + l <= n && strncmp(name + i, algos[a], l) == 0 &&
			    (i + l == n || name[i + l] == '_'))
				algo = algos[a];
		}
		for (size_t p = 0; p < sizeof(protos) / sizeof(protos[0]) && !proto; p++)
			if (j - i == strlen(protos[p]) && strncmp(name + i, protos[p], j - i) == 0)
				proto = protos[p];
		i = j + 1;
	}
	snprintf(buf, size, "%s%s%s", algo ? algo : "", algo && proto ? " " : "",
		 proto ? proto : "");
}

/* The collective kernels of file f with what their arguments say (op, group, bytes), sorted by
 * (name, seq): seq numbers each name's kernels in start order. NULL with *n 0 when none; NULL
 * with *oom when out of memory. */
static struct ranks_kernel *collect_colls(const struct model *m, uint32_t f, uint32_t *n, bool *oom)
{
	size_t cnt = 0, cap = 0;
	struct ranks_kernel *v = NULL;
	uint32_t kcname = model_find_str(m, "Collective name"),
		 kgroup = model_find_str(m, "Group size");
	uint32_t kin = model_find_str(m, "In msg nelems"),
		 kout = model_find_str(m, "Out msg nelems");
	uint32_t kdtype = model_find_str(m, "dtype");
	*n = 0;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->file != f || tr->kind != MODEL_TRACK_DEVICE)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (tr->ranges.category[i] != OPSCOPE_CAT_COMMUNICATION)
				continue;
			if (cnt == cap) {
				cap = cap ? cap * 2 : 64;
				struct ranks_kernel *nv = realloc(v, cap * sizeof(*nv));
				if (!nv) {
					free(v);
					*oom = true;
					return NULL;
				}
				v = nv;
			}
			struct ranks_kernel *k = &v[cnt++];
			k->name = tr->ranges.name[i];
			k->s = tr->ranges.start_ns[i];
			k->e = k->s + tr->ranges.dur_ns[i];
			const char *name = model_str(m, k->name);
			const char *cname = arg_str(m, t, i, kcname);
			k->op = ranks_coll_op(cname && *cname ? cname : name);
			if (!*k->op)
				k->op = ranks_coll_op(name);
			int64_t group = arg_int(m, t, i, kgroup);
			k->group = group > 0 && group <= INT32_MAX ? (int32_t)group : -1;
			int64_t in = arg_int(m, t, i, kin), out = arg_int(m, t, i, kout);
			int eb = ranks_dtype_bytes(arg_str(m, t, i, kdtype));
			/* nccl-tests' size: the output for allgather (it is the whole), the input
			 * else */
			int64_t nel = strcmp(k->op, "allgather") == 0 ? out : in;
			k->bytes = nel >= 0 && eb > 0 && nel <= INT64_MAX / 8 ? nel * eb : -1;
		}
	}
	if (!cnt)
		return v;
	qsort(v, cnt, sizeof(*v), kcoll_start_cmp);
	/* seq: a stable count per name in start order; sort by name then keeps it */
	for (size_t i = 0; i < cnt; i++)
		v[i].seq = (uint32_t)i; /* the start order, as a tie-break key for now */
	qsort(v, cnt, sizeof(*v), kcoll_key_cmp);
	for (size_t i = 0; i < cnt; i++)
		v[i].seq = i && v[i - 1].name == v[i].name ? v[i - 1].seq + 1 : 0;
	*n = (uint32_t)cnt;
	return v;
}

static const struct ranks_kernel *find_coll(const struct ranks_kernel *v, uint32_t n, uint32_t name,
					    uint32_t seq)
{
	struct ranks_kernel key = { .name = name, .seq = seq };
	return n ? bsearch(&key, v, n, sizeof(*v), kcoll_key_cmp) : NULL;
}

/* Fill the description of collective c from the reference rank's kernel k. */
static void describe(const struct ranks_kernel *k, uint32_t nranks, struct ranks_coll *c)
{
	c->op = k->op;
	c->group = k->group > 0 ? k->group : (int32_t)nranks;
	c->busbw_factor = ranks_busbw_factor(c->op, c->group);
	c->bytes = k->bytes;
}

/* Pick one file per rank, with notes for the others. */
static int pick_ranks(const struct model *m, const struct ranks_file *files, uint32_t nfiles,
		      struct ranks *out)
{
	out->ranks = calloc(nfiles ? nfiles : 1, sizeof(*out->ranks));
	if (!out->ranks)
		return OPSCOPE_ENOMEM;
	uint32_t n = 0;
	for (uint32_t f = 0; f < nfiles; f++) {
		const struct ranks_file *x = &files[f];
		if (x->rank < 0) {
			note(out,
			     "%s: no rank (no distributedInfo.rank, no rank metadata): left out",
			     model_str(m, m->files[x->file].path));
			continue;
		}
		out->ranks[n++] = (struct ranks_rank){ .file = x->file,
						       .rank = x->rank,
						       .host = x->host,
						       .world_size = x->world_size,
						       .ncolls = x->nkernels,
						       .steps = x->steps,
						       .nsteps = x->nsteps,
						       .kernels = x->kernels,
						       .dist = x->dist };
	}
	qsort(out->ranks, n, sizeof(*out->ranks), rank_cmp);
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (k && out->ranks[k - 1].rank == out->ranks[i].rank) {
			note(out, "duplicate rank %d: %s and %s; the first is used",
			     out->ranks[i].rank,
			     model_str(m, m->files[out->ranks[k - 1].file].path),
			     model_str(m, m->files[out->ranks[i].file].path));
			continue;
		}
		out->ranks[k++] = out->ranks[i];
	}
	out->nranks = k;
	/* world sizes: they should agree, and every rank below them should be here */
	int32_t ws = -1;
	for (uint32_t i = 0; i < k; i++) {
		int32_t w = out->ranks[i].world_size;
		if (w < 0)
			continue;
		if (ws < 0)
			ws = w;
		else if (w != ws)
			note(out, "world sizes disagree: rank %d says %d, rank %d says %d",
			     out->ranks[0].rank, ws, out->ranks[i].rank, w);
	}
	if (k && ws < 0 && out->ranks[k - 1].rank + 1 > (int32_t)k)
		ws = out->ranks[k - 1].rank + 1; /* no world size: the ranks up to the highest */
	if (ws > 0 && (int64_t)k < ws) {
		/* the missing ranks as ranges ("2-127") in one line */
		char list[96] = "";
		size_t len = 0;
		int32_t next = 0;
		uint32_t i = 0;
		bool cut = false;
		while (next < ws && !cut) {
			while (i < k && out->ranks[i].rank < next)
				i++;
			if (i < k && out->ranks[i].rank == next) {
				next++;
				continue;
			}
			int32_t hi =
				i < k && out->ranks[i].rank < ws ? out->ranks[i].rank - 1 : ws - 1;
			int w = next == hi ? snprintf(list + len, sizeof(list) - len, "%s%d",
						      len ? "," : "", next)
					   : snprintf(list + len, sizeof(list) - len, "%s%d-%d",
						      len ? "," : "", next, hi);
			if (w < 0 || (size_t)w >= sizeof(list) - len)
				cut = true;
			else
				len += (size_t)w;
			next = hi + 1;
		}
		note(out, "missing ranks: %d of world size %d loaded; not here: %s%s", (int)k, ws,
		     list, cut ? ",..." : "");
	}
	for (uint32_t i = 0; i < k; i++)
		if (out->ranks[i].rank >= ws && ws > 0)
			note(out, "rank %d is outside world size %d", out->ranks[i].rank, ws);
	return 0;
}

/* Match the collectives across ranks, align the clocks on their ends, and fill out->colls. */
static int match_colls(const struct model *m, struct ranks *out)
{
	uint32_t nr = out->nranks;
	/* the reference rank's kernels in start order decide the order of the collectives */
	const struct ranks_kernel *ref = out->ranks[0].kernels;
	uint64_t nref = out->ranks[0].ncolls;
	const struct ranks_kernel **row = calloc(nr, sizeof(*row));
	struct ranks_kernel *order = nref ? malloc(nref * sizeof(*order)) : NULL;
	int64_t *diffs = malloc((nref ? nref : 1) * sizeof(*diffs));
	out->colls = calloc(nref ? nref : 1, sizeof(*out->colls));
	if (!row || (nref && !order) || !diffs || !out->colls) {
		free(row);
		free(order);
		free(diffs);
		return OPSCOPE_ENOMEM;
	}
	if (nref)
		memcpy(order, ref, nref * sizeof(*order));
	if (nref) {
		order_model = m;
		qsort(order, nref, sizeof(*order), kcoll_order_cmp);
	}
	/* clock offsets: the median of (reference end - own end) over the shared collectives */
	out->aligned = true;
	for (uint32_t r = 1; r < nr; r++) {
		size_t nd = 0;
		for (uint64_t i = 0; i < nref; i++) {
			const struct ranks_kernel *k =
				find_coll(out->ranks[r].kernels, out->ranks[r].ncolls,
					  order[i].name, order[i].seq);
			if (k)
				diffs[nd++] = order[i].e - k->e;
		}
		out->ranks[r].aligned = nd > 0;
		out->ranks[r].offset_ns = median(diffs, nd);
		if (!nd) {
			out->aligned = false;
			note(out,
			     "rank %d: no collective in common with rank %d: clocks cannot be "
			     "aligned, compared as recorded",
			     out->ranks[r].rank, out->ranks[0].rank);
		}
	}
	out->ranks[0].aligned = nr > 1 && out->aligned;
	uint64_t matched = 0;
	for (uint64_t i = 0; i < nref; i++) {
		bool all = true;
		for (uint32_t r = 0; r < nr && all; r++)
			all = (row[r] = find_coll(out->ranks[r].kernels, out->ranks[r].ncolls,
						  order[i].name, order[i].seq)) != NULL;
		if (!all)
			continue;
		struct ranks_coll *c = &out->colls[matched];
		c->arrive_ns = malloc(nr * sizeof(*c->arrive_ns));
		if (!c->arrive_ns) {
			free(row);
			free(order);
			free(diffs);
			return OPSCOPE_ENOMEM;
		}
		matched++;
		c->name = order[i].name;
		c->seq = order[i].seq;
		algo_of(model_str(m, c->name), c->algo, sizeof(c->algo));
		describe(&order[i], nr, c);
		c->transfer_ns = INT64_MAX;
		int64_t first = INT64_MAX, last = INT64_MIN, sum = 0;
		for (uint32_t r = 0; r < nr; r++) {
			int64_t d = row[r]->e - row[r]->s;
			sum += d;
			c->transfer_ns = d < c->transfer_ns ? d : c->transfer_ns;
			int64_t at = row[r]->s + out->ranks[r].offset_ns;
			c->arrive_ns[r] = at;
			first = at < first ? at : first;
			if (at > last) {
				last = at;
				c->last = r;
			}
		}
		c->mean_ns = sum / (int64_t)nr;
		c->spread_ns = last - first;
		c->step = UINT32_MAX;
		const struct ranks_rank *r0 = &out->ranks[0];
		for (uint32_t k = 0; k < r0->nsteps; k++)
			if (row[0]->s >= r0->steps[k].start_ns && row[0]->s < r0->steps[k].end_ns) {
				c->step = k;
				break;
			}
	}
	out->ncolls = matched;
	uint64_t total = 0;
	for (uint32_t r = 0; r < nr; r++)
		total += out->ranks[r].ncolls;
	out->unmatched = total - matched * nr;
	if (out->unmatched)
		note(out,
		     "%llu collective kernels are not on every rank (by name and order): "
		     "left out of the collective table",
		     (unsigned long long)out->unmatched);
	free(row);
	free(order);
	free(diffs);
	return 0;
}

/* The step table across ranks: cells, stragglers and why. */
static int compare_steps(const struct model *m, struct ranks *out)
{
	uint32_t nr = out->nranks, ns = UINT32_MAX;
	for (uint32_t r = 0; r < nr; r++) {
		const struct ranks_rank *rk = &out->ranks[r];
		if (rk->nsteps == 0) {
			note(out, "rank %d (%s): no steps: no step to compare", rk->rank,
			     model_str(m, m->files[rk->file].path));
			ns = 0;
		} else if (rk->nsteps < ns) {
			ns = rk->nsteps;
		}
	}
	if (ns == UINT32_MAX)
		ns = 0;
	for (uint32_t r = 0; r < nr && ns; r++)
		if (out->ranks[r].nsteps != ns) {
			note(out, "ranks kept different numbers of steps: the first %u compared",
			     ns);
			break;
		}
	if (!ns)
		return 0;
	out->steps = calloc(ns, sizeof(*out->steps));
	int64_t *tmp = malloc(nr * sizeof(*tmp));
	if (!out->steps || !tmp) {
		free(tmp);
		return OPSCOPE_ENOMEM;
	}
	out->nsteps = ns;
	for (uint32_t k = 0; k < ns; k++) {
		struct ranks_step *s = &out->steps[k];
		s->per = calloc(nr, sizeof(*s->per));
		if (!s->per) {
			free(tmp);
			return OPSCOPE_ENOMEM;
		}
		s->name = out->ranks[0].steps[k].name;
		s->why_coll = UINT64_MAX;
		for (uint32_t r = 0; r < nr; r++) {
			const struct ranks_steprow *row = &out->ranks[r].steps[k];
			struct ranks_cell *c = &s->per[r];
			c->step_ns = row->end_ns - row->start_ns;
			c->compute_ns = row->compute_ns;
			c->comm_ns = row->comm_ns;
			c->data_ns = row->gap_ns;
			c->end_ns = row->end_ns + out->ranks[r].offset_ns;
		}
	}
	/* waits: at each collective, every rank waits for the last arrival; the wait counts
	 * for the step of that rank whose span holds its kernel's start */
	for (uint64_t i = 0; i < out->ncolls; i++) {
		const struct ranks_coll *c = &out->colls[i];
		int64_t last = c->arrive_ns[c->last];
		for (uint32_t r = 0; r < nr; r++) {
			int64_t at = c->arrive_ns[r] - out->ranks[r].offset_ns; /* own clock */
			const struct ranks_steprow *st = out->ranks[r].steps;
			for (uint32_t k = 0; k < ns; k++)
				if (at >= st[k].start_ns && at < st[k].end_ns) {
					out->steps[k].per[r].wait_ns += last - c->arrive_ns[r];
					break;
				}
		}
	}
	for (uint32_t k = 0; k < ns; k++) {
		struct ranks_step *s = &out->steps[k];
		uint32_t best = 0;
		for (uint32_t r = 0; r < nr; r++) {
			struct ranks_cell *c = &s->per[r];
			c->ready_ns = c->end_ns - c->wait_ns;
			if (c->ready_ns > s->per[best].ready_ns)
				best = r;
		}
		s->straggler = best;
		if (nr < 2)
			continue;
		int64_t second = INT64_MIN;
		for (uint32_t r = 0; r < nr; r++)
			if (r != best && s->per[r].ready_ns > second)
				second = s->per[r].ready_ns;
		s->margin_ns = s->per[best].ready_ns - second;
		if (s->margin_ns <= 0)
			continue;
		/* why: its data wait and compute against the others' medians; the larger excess
		 * explains it when it is at least half the margin; else the collective where it
		 * arrived furthest behind the next arrival */
		size_t n = 0;
		for (uint32_t r = 0; r < nr; r++)
			if (r != best)
				tmp[n++] = s->per[r].data_ns;
		int64_t data_x = s->per[best].data_ns - median(tmp, n);
		n = 0;
		for (uint32_t r = 0; r < nr; r++)
			if (r != best)
				tmp[n++] = s->per[r].compute_ns;
		int64_t comp_x = s->per[best].compute_ns - median(tmp, n);
		int64_t x = data_x > comp_x ? data_x : comp_x;
		if (x > 0 && x >= s->margin_ns - x) { /* 2x >= margin, without overflow */
			s->why = data_x > comp_x ? RANKS_WHY_DATA : RANKS_WHY_COMPUTE;
			s->why_ns = x;
			continue;
		}
		int64_t late_best = 0;
		for (uint64_t i = 0; i < out->ncolls; i++) {
			const struct ranks_coll *c = &out->colls[i];
			int64_t own = c->arrive_ns[best] - out->ranks[best].offset_ns;
			const struct ranks_steprow *row = &out->ranks[best].steps[k];
			if (c->last != best || own < row->start_ns || own >= row->end_ns)
				continue;
			int64_t next = INT64_MIN;
			for (uint32_t r = 0; r < nr; r++)
				if (r != best && c->arrive_ns[r] > next)
					next = c->arrive_ns[r];
			int64_t late = c->arrive_ns[best] - next;
			if (late > late_best) {
				late_best = late;
				s->why_coll = i;
			}
		}
		if (s->why_coll != UINT64_MAX) {
			s->why = RANKS_WHY_LATE;
			s->why_ns = late_best;
		}
	}
	free(tmp);
	return 0;
}

int ranks_combine(const struct model *m, const struct ranks_file *files, uint32_t n,
		  struct ranks *out)
{
	memset(out, 0, sizeof(*out));
	int rc = pick_ranks(m, files, n, out);
	if (rc || out->nranks == 0)
		return rc;
	if (out->nranks >= 2)
		rc = match_colls(m, out);
	if (!rc)
		rc = compare_steps(m, out);
	if (rc)
		ranks_free(out);
	return rc;
}

int ranks_file_extract(const struct analysis *a, uint32_t file, struct ranks_file *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	out->file = file;
	out->rank = -1;
	out->world_size = -1;
	const struct model_process *p = file_process(m, file);
	if (!p || p->rank < 0)
		return 0;
	out->rank = p->rank;
	out->host = p->host;
	out->world_size = world_size_of(m, file);
	struct step_table st;
	if (steps_analyze(&a->tree, file, &st) != 0)
		return OPSCOPE_ENOMEM;
	/* a file without ProfileStep ranges is one step to steps.h: none to compare */
	bool named = st.nspans && st.spans[0].track != UINT32_MAX;
	uint32_t ns = named ? st.nrows : 0;
	bool oom = false;
	if (ns && !(out->steps = calloc(ns, sizeof(*out->steps))))
		oom = true;
	for (uint32_t k = 0; k < ns && !oom; k++) {
		const struct step_row *row = &st.rows[k];
		out->steps[k] = (struct ranks_steprow){
			.name = row->name,
			.start_ns = row->start_ns,
			.end_ns = row->end_ns,
			.compute_ns = row->role_ns[STEP_KERNEL] + row->role_ns[STEP_MEMCPY] +
				      row->role_ns[STEP_MEMSET],
			.comm_ns = row->role_ns[STEP_COMMUNICATION],
			.gap_ns = row->gap_ns,
		};
	}
	out->nsteps = oom ? 0 : ns;
	steps_free(&st);
	if (!oom && distributed_analyze_file(a, file, &out->dist) != 0)
		oom = true;
	if (!oom)
		out->kernels = collect_colls(m, file, &out->nkernels, &oom);
	if (oom) {
		ranks_file_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void ranks_file_free(struct ranks_file *f)
{
	free(f->steps);
	free(f->kernels);
	memset(f, 0, sizeof(*f));
}

void ranks_file_index(struct ranks_file *f)
{
	if (f->nkernels > 1)
		qsort(f->kernels, f->nkernels, sizeof(*f->kernels), kcoll_key_cmp);
}

bool ranks_files_present(const struct ranks_file *files, uint32_t n)
{
	uint32_t k = 0;
	for (uint32_t f = 0; f < n && k < 2; f++)
		k += files[f].rank >= 0;
	return k >= 2;
}

int ranks_analyze(const struct analysis *a, struct ranks *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	struct ranks_file *files = calloc(m->nfiles ? m->nfiles : 1, sizeof(*files));
	if (!files)
		return OPSCOPE_ENOMEM;
	int rc = 0;
	for (uint32_t f = 0; f < m->nfiles && !rc; f++)
		rc = ranks_file_extract(a, f, &files[f]);
	if (!rc)
		rc = ranks_combine(m, files, m->nfiles, out);
	if (rc) {
		for (uint32_t f = 0; f < m->nfiles; f++)
			ranks_file_free(&files[f]);
		free(files);
		return OPSCOPE_ENOMEM;
	}
	out->owned = files;
	out->nowned = m->nfiles;
	return 0;
}

void ranks_free(struct ranks *r)
{
	free(r->ranks);
	for (uint32_t k = 0; r->steps && k < r->nsteps; k++)
		free(r->steps[k].per);
	free(r->steps);
	for (uint64_t i = 0; r->colls && i < r->ncolls; i++)
		free(r->colls[i].arrive_ns);
	free(r->colls);
	for (uint32_t f = 0; r->owned && f < r->nowned; f++)
		ranks_file_free(&r->owned[f]);
	free(r->owned);
	memset(r, 0, sizeof(*r));
}
