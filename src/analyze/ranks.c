/*
 * ranks.c: many ranks side by side (ranks.h; every rule and formula: docs/ranks.md).
 *
 * Order of work: pick one file per rank (notes for the rest), collect each rank's collective
 * kernels, match them across ranks by (kernel name, n-th of that name), align the clocks on
 * the matched ends, then compare steps and collectives on the aligned clocks. The model is
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

/* One collective kernel of one rank, before matching. */
struct kcoll {
	uint32_t name;	/* string id of the kernel name */
	uint32_t seq;	/* n-th kernel of this name on its rank, 0-based */
	uint32_t track; /* device track */
	uint64_t range; /* index on the track */
	int64_t s, e;	/* ns, as recorded */
};

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

/* World size from the file's metadata (distributedInfo.world_size, or the recorder's
 * world_size), -1 when none. Metadata is keyed by pid: files sharing a pid share it. */
static int32_t world_size_of(const struct model *m, uint32_t f)
{
	const char *v = model_get_meta(m, m->files[f].pid, "distributed.world_size");
	if (!v)
		v = model_get_meta(m, m->files[f].pid, "world_size");
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
	const struct kcoll *a = x, *b = y;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

static int kcoll_key_cmp(const void *x, const void *y)
{
	const struct kcoll *a = x, *b = y;
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

/* The collective kernels of file f, sorted by (name, seq): seq numbers each name's kernels
 * in start order. NULL with *n 0 when none; NULL with *oom when out of memory. */
static struct kcoll *collect_colls(const struct model *m, uint32_t f, uint32_t *n, bool *oom)
{
	size_t cnt = 0, cap = 0;
	struct kcoll *v = NULL;
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
				struct kcoll *nv = realloc(v, cap * sizeof(*nv));
				if (!nv) {
					free(v);
					*oom = true;
					return NULL;
				}
				v = nv;
			}
			int64_t s = tr->ranges.start_ns[i];
			v[cnt++] = (struct kcoll){ tr->ranges.name[i],	    0, t, i, s,
						   s + tr->ranges.dur_ns[i] };
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

static const struct kcoll *find_coll(const struct kcoll *v, uint32_t n, uint32_t name, uint32_t seq)
{
	struct kcoll key = { .name = name, .seq = seq };
	return n ? bsearch(&key, v, n, sizeof(*v), kcoll_key_cmp) : NULL;
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

/* Fill the description of collective c from the reference rank's kernel k. */
static void describe(const struct model *m, const struct kcoll *k, uint32_t nranks,
		     struct ranks_coll *c)
{
	const char *name = model_str(m, k->name);
	const char *cname = arg_str(m, k->track, k->range, model_find_str(m, "Collective name"));
	c->op = ranks_coll_op(cname && *cname ? cname : name);
	if (!*c->op)
		c->op = ranks_coll_op(name);
	int64_t group = arg_int(m, k->track, k->range, model_find_str(m, "Group size"));
	c->group = group > 0 && group <= INT32_MAX ? (int32_t)group : (int32_t)nranks;
	c->busbw_factor = ranks_busbw_factor(c->op, c->group);
	int64_t in = arg_int(m, k->track, k->range, model_find_str(m, "In msg nelems"));
	int64_t out = arg_int(m, k->track, k->range, model_find_str(m, "Out msg nelems"));
	int eb = ranks_dtype_bytes(arg_str(m, k->track, k->range, model_find_str(m, "dtype")));
	/* nccl-tests' size: the output for allgather (it is the whole), the input else */
	int64_t nel = strcmp(c->op, "allgather") == 0 ? out : in;
	c->bytes = nel >= 0 && eb > 0 && nel <= INT64_MAX / 8 ? nel * eb : -1;
}

/* Pick one file per rank, with notes for the others. */
static int pick_ranks(const struct model *m, struct ranks *out)
{
	out->ranks = calloc(m->nfiles ? m->nfiles : 1, sizeof(*out->ranks));
	if (!out->ranks)
		return OPSCOPE_ENOMEM;
	uint32_t n = 0;
	for (uint32_t f = 0; f < m->nfiles; f++) {
		const struct model_process *p = file_process(m, f);
		if (!p || p->rank < 0) {
			note(out,
			     "%s: no rank (no distributedInfo.rank, no rank metadata): left out",
			     model_str(m, m->files[f].path));
			continue;
		}
		out->ranks[n++] = (struct ranks_rank){ .file = f,
						       .rank = p->rank,
						       .host = p->host,
						       .world_size = world_size_of(m, f) };
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
static int match_colls(const struct analysis *a, struct ranks *out, struct kcoll **kc,
		       const uint32_t *nkc)
{
	const struct model *m = a->m;
	uint32_t nr = out->nranks;
	/* the reference rank's kernels in start order decide the order of the collectives */
	const struct kcoll *ref = kc[0];
	uint64_t nref = nkc[0];
	const struct kcoll **row = calloc(nr, sizeof(*row));
	struct kcoll *order = nref ? malloc(nref * sizeof(*order)) : NULL;
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
	if (nref)
		qsort(order, nref, sizeof(*order), kcoll_start_cmp);
	/* clock offsets: the median of (reference end - own end) over the shared collectives */
	out->aligned = true;
	for (uint32_t r = 1; r < nr; r++) {
		size_t nd = 0;
		for (uint64_t i = 0; i < nref; i++) {
			const struct kcoll *k =
				find_coll(kc[r], nkc[r], order[i].name, order[i].seq);
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
			all = (row[r] = find_coll(kc[r], nkc[r], order[i].name, order[i].seq)) !=
			      NULL;
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
		describe(m, &order[i], nr, c);
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
		const struct step_table *st = &out->ranks[0].steps;
		for (uint32_t k = 0; k < st->nrows; k++)
			if (row[0]->s >= st->rows[k].start_ns && row[0]->s < st->rows[k].end_ns) {
				c->step = k;
				break;
			}
	}
	out->ncolls = matched;
	uint64_t total = 0;
	for (uint32_t r = 0; r < nr; r++)
		total += nkc[r];
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
		s->name = out->ranks[0].steps.rows[k].name;
		s->why_coll = UINT64_MAX;
		for (uint32_t r = 0; r < nr; r++) {
			const struct step_row *row = &out->ranks[r].steps.rows[k];
			struct ranks_cell *c = &s->per[r];
			c->step_ns = row->end_ns - row->start_ns;
			c->compute_ns = row->role_ns[STEP_KERNEL] + row->role_ns[STEP_MEMCPY] +
					row->role_ns[STEP_MEMSET];
			c->comm_ns = row->role_ns[STEP_COMMUNICATION];
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
			const struct step_table *st = &out->ranks[r].steps;
			for (uint32_t k = 0; k < ns; k++)
				if (at >= st->rows[k].start_ns && at < st->rows[k].end_ns) {
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
		if (x > 0 && 2 * x >= s->margin_ns) {
			s->why = data_x > comp_x ? RANKS_WHY_DATA : RANKS_WHY_COMPUTE;
			s->why_ns = x;
			continue;
		}
		int64_t late_best = 0;
		for (uint64_t i = 0; i < out->ncolls; i++) {
			const struct ranks_coll *c = &out->colls[i];
			int64_t own = c->arrive_ns[best] - out->ranks[best].offset_ns;
			const struct step_row *row = &out->ranks[best].steps.rows[k];
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

int ranks_analyze(const struct analysis *a, struct ranks *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	int rc = pick_ranks(m, out);
	if (rc || out->nranks == 0)
		return rc;
	uint32_t nr = out->nranks;
	struct kcoll **kc = calloc(nr, sizeof(*kc));
	uint32_t *nkc = calloc(nr, sizeof(*nkc));
	bool oom = !kc || !nkc;
	for (uint32_t r = 0; r < nr && !oom; r++) {
		struct ranks_rank *rk = &out->ranks[r];
		if (steps_analyze(&a->tree, rk->file, &rk->steps) != 0 ||
		    distributed_analyze_file(a, rk->file, &rk->dist) != 0) {
			oom = true;
			break;
		}
		/* a file without ProfileStep ranges is one step to steps.h: none to compare */
		bool named = rk->steps.nspans && rk->steps.spans[0].track != UINT32_MAX;
		rk->nsteps = named ? rk->steps.nrows : 0;
		kc[r] = collect_colls(m, rk->file, &nkc[r], &oom);
		rk->ncolls = nkc[r];
	}
	if (!oom && nr >= 2)
		oom = match_colls(a, out, kc, nkc) != 0;
	if (!oom)
		oom = compare_steps(m, out) != 0;
	for (uint32_t r = 0; kc && r < nr; r++)
		free(kc[r]);
	free(kc);
	free(nkc);
	if (oom) {
		ranks_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void ranks_free(struct ranks *r)
{
	for (uint32_t i = 0; r->ranks && i < r->nranks; i++)
		steps_free(&r->ranks[i].steps);
	free(r->ranks);
	for (uint32_t k = 0; r->steps && k < r->nsteps; k++)
		free(r->steps[k].per);
	free(r->steps);
	for (uint64_t i = 0; r->colls && i < r->ncolls; i++)
		free(r->colls[i].arrive_ns);
	free(r->colls);
	memset(r, 0, sizeof(*r));
}
