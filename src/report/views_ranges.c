/*
 * views_ranges.c: the views of ranges by name (views.c's registry), over the aggregates of
 * analyze/aggregate.h: operators with their inner phases and kernels, user-defined and
 * memory-manipulation ranges, Python functions, the nn.Module hierarchy, NVTX ranges (nsys's
 * nvtx_sum), kernels, and nvprof's GPU activities and API calls. docs/report.md defines
 * every number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/aggregate.h"
#include "report/views_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* Tables of aggregated items: operator, user-defined, memory manipulation */

static int64_t sort_value(const struct agg_item *it, enum report_sort s)
{
	int64_t n = it->calls ? (int64_t)it->calls : 1;
	switch (s) {
	case SORT_CPU_TOTAL:
		return it->cpu_ns;
	case SORT_CPU_AVG:
		return it->cpu_ns / n;
	case SORT_CPU_MAX:
		return it->cpu_max_ns;
	case SORT_CPU_MIN:
		return -it->cpu_min_ns; /* ascending */
	case SORT_GPU_TOTAL:
		return it->gpu_ns;
	case SORT_GPU_AVG:
		return it->gpu_ns / n;
	case SORT_GPU_MAX:
		return it->gpu_max_ns;
	case SORT_GPU_MIN:
		return -it->gpu_min_ns;
	case SORT_CALLS:
		return (int64_t)it->calls;
	case SORT_FLOPS: /* the flops view's keys: CPU total elsewhere */
	case SORT_BYTES:
	case SORT_TFLOPS:
		break;
	}
	return it->cpu_ns;
}

/* qsort's comparison takes no context: per thread, since views run in parallel */
static _Thread_local const struct agg *sort_agg;
static _Thread_local enum report_sort sort_key;

static int item_cmp(const void *x, const void *y)
{
	const struct agg_item *a = &sort_agg->v[*(const uint32_t *)x];
	const struct agg_item *b = &sort_agg->v[*(const uint32_t *)y];
	int64_t va = sort_value(a, sort_key), vb = sort_value(b, sort_key);
	if (va != vb)
		return va > vb ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Top-level items of a, sorted by the report's key (or kept in first-seen order). */
static uint32_t *sorted_top(const struct agg *a, enum report_sort key, bool sort, uint32_t *n)
{
	*n = 0;
	for (uint32_t i = a->n ? a->first_top : AGG_NONE; i != AGG_NONE; i = a->v[i].next)
		(*n)++;
	uint32_t *v = malloc((*n ? *n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	uint32_t k = 0;
	for (uint32_t i = a->n ? a->first_top : AGG_NONE; i != AGG_NONE; i = a->v[i].next)
		v[k++] = i;
	if (sort && *n > 1) {
		sort_agg = a;
		sort_key = key;
		qsort(v, *n, sizeof(*v), item_cmp);
	}
	return v;
}

/* "Thread: All threads merged", or the thread of track t. */
static void group_title(const struct model *m, uint32_t track, char *buf, size_t n)
{
	if (track == MODEL_NO_TRACK) {
		snprintf(buf, n, "Thread: All threads merged");
		return;
	}
	const struct model_track *tr = &m->tracks[track];
	snprintf(buf, n, "Thread: %llu (pid %u)", (unsigned long long)tr->tid, tr->pid);
}

/* Rows of one item's children (inner phases, their kernels, its kernels). */
static void detail_rows(const struct model *m, struct rtable *t, const struct agg *a, uint32_t op,
			int cols[4])
{
	const struct agg_item *it = &a->v[op];
	/* inner phases first, each with its kernels; then the operator's own kernels */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t ch = it->first_child; ch != AGG_NONE; ch = a->v[ch].next) {
			const struct agg_item *x = &a->v[ch];
			if ((pass == 0) != (x->kind == AGG_KIND_INNER))
				continue;
			struct rrow *r = rtable_row(t, 1);
			if (!r)
				return;
			set_text(r, cols[0], m, x->name);
			r->cells[cols[1]].i = (int64_t)x->calls;
			if (x->kind == AGG_KIND_INNER)
				set_item_stats(&r->cells[cols[2]], x, false, it->cpu_ns);
			else
				r->cells[cols[2]].empty = true;
			set_item_stats(&r->cells[cols[3]], x, true, it->gpu_ns);
			for (uint32_t k = x->first_child; k != AGG_NONE; k = a->v[k].next) {
				const struct agg_item *y = &a->v[k];
				struct rrow *rk = rtable_row(t, 2);
				if (!rk)
					return;
				set_text(rk, cols[0], m, y->name);
				rk->cells[cols[1]].i = (int64_t)y->calls;
				rk->cells[cols[2]].empty = true;
				set_item_stats(&rk->cells[cols[3]], y, true, x->gpu_ns);
			}
		}
	}
}

/* The table of the ranges `sel` selects on thread track `track` (MODEL_NO_TRACK: all);
 * by_shape: operators by name and input shapes whatever --group-by says (the HTML page's
 * second operator table, titled so, without the inner rows). */
static int view_agg_group(struct report_ctx *c, enum agg_select sel, uint32_t track, bool by_shape)
{
	const struct analysis *an = &c->an;
	struct agg a;
	bool detail = sel == AGG_OPERATORS && c->o->op_detail && !by_shape;
	/* operators by input shapes too (--group-by input-shape): the recorders' and Kineto's
	 * "Input Dims" argument */
	bool shapes =
		sel == AGG_OPERATORS && (by_shape || c->o->group_by == REPORT_GROUP_INPUT_SHAPE);
	uint32_t group_key = shapes ? model_find_str(an->m, "Input Dims") : 0;
	const struct agg *ap = &a; /* opscope merge: the partials' operators, merged */
	if (c->pre) { /* the operators, or the ranges by name when the partials carry them */
		memset(&a, 0, sizeof(a));
		if (sel != AGG_OPERATORS && !c->pre->has_host)
			return 0;
		ap = sel == AGG_OPERATORS ? &c->pre->ops : &c->pre->host[sel];
	} else if (agg_host_ranges(an, sel, track, detail, group_key, &a) != 0) {
		return OPSCOPE_ENOMEM;
	}
	if (ap->n == 0) {
		agg_free(&a);
		return 0;
	}
	static const char *const titles[] = { [AGG_OPERATORS] = "Operator Summary",
					      [AGG_USER_DEFINED] = "UserDefined Summary",
					      [AGG_MEMORY] = "Memory Manipulation Summary",
					      [AGG_PYTHON_FUNCTIONS] = "PythonFunction Summary" };
	static const char *const views[] = { [AGG_OPERATORS] = "operator",
					     [AGG_USER_DEFINED] = "userdefined",
					     [AGG_MEMORY] = "memcpy",
					     [AGG_PYTHON_FUNCTIONS] = "python" };
	struct rtable *t = ctx_table(c, views[sel],
				     by_shape ? "Operator Summary by Input Shape" : titles[sel]);
	if (!t) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	if (sel != AGG_MEMORY)
		group_title(an->m, track, t->group, sizeof(t->group));
	int cols[4];
	cols[0] = rtable_col(t, "Name", "name", RCOL_TEXT, sel == AGG_OPERATORS ? 52 : 0);
	int cshape = shapes ? rtable_col(t, "Input Shapes", "input_shapes", RCOL_TEXT, 12) : -1;
	cols[1] = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	cols[2] = rtable_col(t, "CPU Total / Avg / Max / Min / Ratio(%)", "cpu", RCOL_STATS, 40);
	/* a Python function's own time, as pstats' tottime beside its cumtime */
	int cself = sel == AGG_PYTHON_FUNCTIONS
			    ? rtable_col(t, "Self CPU", "self_cpu_ns", RCOL_TIME, 10)
			    : -1;
	cols[3] = rtable_col(t, "GPU Total / Avg / Max / Min / Ratio(%)", "gpu", RCOL_STATS, 40);
	uint32_t n;
	uint32_t *top = sorted_top(ap, c->o->sort, sel != AGG_MEMORY, &n);
	int64_t cpu_all, gpu_all;
	agg_top_sums(ap, &cpu_all, &gpu_all);
	/* operators: ratios of all operators' time; the others: of the total (step) time */
	int64_t cpu_whole = sel == AGG_OPERATORS ? cpu_all : an->total_ns;
	int64_t gpu_whole = sel == AGG_OPERATORS ? gpu_all : an->step_device_ns;
	for (uint32_t k = 0; top && k < n; k++) {
		const struct agg_item *it = &ap->v[top[k]];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		set_text(r, cols[0], an->m, it->name);
		if (cshape >= 0)
			set_text(r, cshape, an->m, it->group); /* "" without shapes */
		r->cells[cols[1]].i = (int64_t)it->calls;
		set_item_stats(&r->cells[cols[2]], it, false, cpu_whole);
		if (cself >= 0)
			r->cells[cself].i = it->self_ns;
		set_item_stats(&r->cells[cols[3]], it, true, gpu_whole);
		if (detail)
			detail_rows(an->m, t, ap, top[k], cols);
	}
	if (sel == AGG_PYTHON_FUNCTIONS)
		t->note = "CPU: the calls' durations (a recursive function's nested calls count "
			  "again, as in torch);\nSelf CPU: their durations less those of the "
			  "ranges directly inside them. Ratio = / total time.";
	int rc = !top || t->oom ? OPSCOPE_ENOMEM : 0;
	free(top);
	agg_free(&a);
	return rc;
}

/* One table of all threads merged, or (--thread-sep) one per thread; the memory
 * manipulation table is always merged. */
static int view_agg(struct report_ctx *c, enum agg_select sel)
{
	const struct model *m = c->an.m;
	if (!c->o->thread_sep || sel == AGG_MEMORY)
		return view_agg_group(c, sel, MODEL_NO_TRACK, false);
	for (uint32_t t = 0; t < m->ntracks; t++) {
		if (m->tracks[t].kind != MODEL_TRACK_THREAD)
			continue;
		int rc = view_agg_group(c, sel, t, false);
		if (rc)
			return rc;
	}
	return 0;
}

int view_operator(struct report_ctx *c)
{
	int rc = view_agg(c, AGG_OPERATORS);
	/* the HTML page shows the operators by input shape too (all threads merged) */
	if (!rc && c->o->html && c->o->group_by != REPORT_GROUP_INPUT_SHAPE &&
	    model_find_str(c->an.m, "Input Dims"))
		rc = view_agg_group(c, AGG_OPERATORS, MODEL_NO_TRACK, true);
	return rc;
}

int view_userdefined(struct report_ctx *c)
{
	return view_agg(c, AGG_USER_DEFINED);
}

int view_memcpy(struct report_ctx *c)
{
	return view_agg(c, AGG_MEMORY);
}

int view_python(struct report_ctx *c)
{
	return view_agg(c, AGG_PYTHON_FUNCTIONS);
}

/* ---------------------------------------------------------------------------------------- */
/* Module hierarchy */

/* The items of the module tree in depth-first order (parents before children, siblings in
 * first-seen order): the next item after i. */
static uint32_t module_next(const struct agg *a, uint32_t i, int *depth)
{
	if (a->v[i].first_child != AGG_NONE) {
		(*depth)++;
		return a->v[i].first_child;
	}
	while (i != AGG_NONE && a->v[i].next == AGG_NONE) {
		i = a->v[i].parent;
		(*depth)--;
	}
	return i == AGG_NONE ? AGG_NONE : a->v[i].next;
}

static int view_module_group(struct report_ctx *c, uint32_t track)
{
	const struct analysis *an = &c->an;
	struct agg own;
	const struct agg *ap = &own; /* opscope merge: the partials' modules, merged */
	memset(&own, 0, sizeof(own));
	if (c->pre) {
		if (!c->pre->has_modules)
			return 0;
		ap = &c->pre->modules;
	} else if (agg_modules(an, track, &own) != 0) {
		return OPSCOPE_ENOMEM;
	}
	const struct agg a = *ap; /* read only */
	if (a.n == 0) {
		agg_free(&own);
		return 0;
	}
	struct rtable *t = ctx_table(c, "module", "Module Summary");
	if (!t) {
		agg_free(&own);
		return OPSCOPE_ENOMEM;
	}
	group_title(an->m, track, t->group, sizeof(t->group));
	int cname = rtable_col(t, "Module", "name", RCOL_TEXT, 30);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	int ccpu = rtable_col(t, "CPU Total / Avg / Max / Min / Ratio(%)", "cpu", RCOL_STATS, 40);
	int cself = rtable_col(t, "Self CPU", "self_cpu_ns", RCOL_TIME, 10);
	int cgpu = rtable_col(t, "GPU Total / Avg / Max / Min / Ratio(%)", "gpu", RCOL_STATS, 40);
	int cgself = rtable_col(t, "Self GPU", "self_gpu_ns", RCOL_TIME, 10);
	int depth = 0;
	for (uint32_t i = a.first_top; i != AGG_NONE; i = module_next(&a, i, &depth)) {
		const struct agg_item *it = &a.v[i];
		struct rrow *r = rtable_row(t, depth);
		if (!r)
			break;
		const char *s = model_str(an->m, it->name);
		size_t skip = agg_module_prefix_len(s); /* the class: "nn.Module: " is no news */
		rcell_text(r, cname, s + skip, model_strlen(an->m, it->name) - skip);
		r->cells[ccalls].i = (int64_t)it->calls;
		set_item_stats(&r->cells[ccpu], it, false, an->total_ns);
		r->cells[cself].i = it->self_ns;
		set_item_stats(&r->cells[cgpu], it, true, an->step_device_ns);
		r->cells[cgself].i = it->gpu_self_ns;
	}
	t->note = "Each row is a module path: a module's calls inside the calls of the module "
		  "above it, in the order\nfirst called. CPU: the calls' durations; GPU: the "
		  "device time launched inside them (ratio = /\nthe ProfileStep device time). "
		  "Self: less the modules directly inside. CPU ratio = / total time.";
	int rc = t->oom ? OPSCOPE_ENOMEM : 0;
	agg_free(&own);
	return rc;
}

int view_module(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	if (!c->o->thread_sep)
		return view_module_group(c, MODEL_NO_TRACK);
	for (uint32_t t = 0; t < m->ntracks; t++) {
		if (m->tracks[t].kind != MODEL_TRACK_THREAD)
			continue;
		int rc = view_module_group(c, t);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* NVTX */

static int nvtx_cmp(const void *x, const void *y)
{
	const struct agg_item *a = &sort_agg->v[*(const uint32_t *)x];
	const struct agg_item *b = &sort_agg->v[*(const uint32_t *)y];
	if (a->cpu_ns != b->cpu_ns)
		return a->cpu_ns > b->cpu_ns ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* nsys stats' nvtx_sum: per domain and range name, sorted by total time. */
int view_nvtx(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	/* from the merged partials (opscope merge), or from the model */
	struct agg_nvtx own = { 0 };
	if (!c->pre && agg_nvtx(m, &own) != 0)
		return OPSCOPE_ENOMEM;
	const struct agg_nvtx *nv = c->pre ? &c->pre->nvtx : &own;
	uint32_t n = 0, *rows = malloc((nv->a.n ? nv->a.n : 1) * sizeof(*rows));
	if (!rows) {
		agg_nvtx_free(&own);
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t i = 0; i < nv->a.n; i++)
		if (nv->a.v[i].kind != AGG_NVTX_DOMAIN)
			rows[n++] = i;
	struct rtable *t = n ? ctx_table(c, "nvtx", "NVTX Range Summary") : NULL;
	if (!t) {
		free(rows);
		agg_nvtx_free(&own);
		return n ? OPSCOPE_ENOMEM : 0;
	}
	sort_agg = &nv->a;
	qsort(rows, n, sizeof(*rows), nvtx_cmp);
	int cratio = rtable_col(t, "Time (%)", "ratio", RCOL_RATIO, 8);
	int ctot = rtable_col(t, "Total Time", "total_ns", RCOL_TIME, 10);
	int ccalls = rtable_col(t, "Instances", "instances", RCOL_COUNT, 9);
	int cavg = rtable_col(t, "Avg", "avg_ns", RCOL_TIME, 8);
	int cmed = rtable_col(t, "Med", "med_ns", RCOL_TIME, 8);
	int cmin = rtable_col(t, "Min", "min_ns", RCOL_TIME, 8);
	int cmax = rtable_col(t, "Max", "max_ns", RCOL_TIME, 8);
	int csd = rtable_col(t, "StdDev", "stddev_ns", RCOL_TIME, 8);
	int cstyle = rtable_col(t, "Style", "style", RCOL_TEXT, 8);
	int crange = rtable_col(t, "Range", "range", RCOL_TEXT, 0);
	int cdom = rtable_col(t, "Domain", "domain", RCOL_TEXT, 0);
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 0);
	rtable_col_flags(t, cdom, RCOL_F_TEXT_HIDDEN);
	rtable_col_flags(t, cname, RCOL_F_TEXT_HIDDEN);
	for (uint32_t k = 0; k < n; k++) {
		const struct agg_item *it = &nv->a.v[rows[k]];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		r->cells[cratio].ratio = ratio(it->cpu_ns, nv->total_ns);
		r->cells[ctot].i = it->cpu_ns;
		r->cells[ccalls].i = (int64_t)it->calls;
		r->cells[cavg].i = it->calls ? it->cpu_ns / (int64_t)it->calls : 0;
		r->cells[cmed].i = nv->median_ns[rows[k]];
		r->cells[cmin].i = it->cpu_min_ns;
		r->cells[cmax].i = it->cpu_max_ns;
		r->cells[csd].i = nv->stddev_ns[rows[k]];
		set_cstr(r, cstyle, it->kind == AGG_NVTX_STARTEND ? "StartEnd" : "PushPop");
		uint32_t dom = nv->a.v[it->parent].name;
		set_text(r, cdom, m, dom);
		set_text(r, cname, m, it->name);
		/* nsys names a range of a domain "domain:name" */
		size_t dl = model_strlen(m, dom), nl = model_strlen(m, it->name);
		char *s = dom ? malloc(dl + 1 + nl) : NULL;
		if (s) {
			memcpy(s, model_str(m, dom), dl);
			s[dl] = ':';
			memcpy(s + dl + 1, model_str(m, it->name), nl);
			rcell_text(r, crange, rtable_str(t, s, dl + 1 + nl), dl + 1 + nl);
			free(s);
		} else if (dom) {
			t->oom = true;
		} else {
			set_text(r, crange, m, it->name);
		}
	}
	t->note = "Per NVTX domain and range name (\"domain:name\"; the default domain: the "
		  "name alone), as\nnsys stats -r nvtx_sum. Time (%) = total / the total of every "
		  "NVTX range. PushPop: push/pop\nranges; StartEnd: start/end ranges. Med: the "
		  "median (an even count: the mean of the middle\ntwo); StdDev: the sample "
		  "standard deviation.";
	int rc = t->oom ? OPSCOPE_ENOMEM : 0;
	free(rows);
	agg_nvtx_free(&own);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Kernel */

/* Paddle's display name: re.match(r'(.+?)(<.*>)(\(.*\))', name), group 1 + group 2: the
 * template arguments stay, the parameter list goes. As in Python, the pattern is anchored at
 * the start only and '.' matches anything but '\n'. Group 1 is lazy, so only the first '<'
 * after the first character can start group 2 (a later one has less room); group 2 is greedy:
 * it ends at the last ">(" whose '(' has a ')' after it on the same line. Names without that
 * shape stay whole. Linear in the length. */
size_t report_kernel_display_len(const char *s, size_t n)
{
	size_t eol = 0;
	while (eol < n && s[eol] != '\n')
		eol++;
	const char *lt = eol > 1 ? memchr(s + 1, '<', eol - 1) : NULL;
	if (!lt)
		return n;
	size_t l = (size_t)(lt - s), rp = eol; /* rp: the last ')' of the line */
	while (rp > l && s[rp - 1] != ')')
		rp--;
	if (rp == l)
		return n;
	rp--;
	for (size_t g = rp; g-- > l + 1;)
		if (s[g] == '>' && g + 1 < rp && s[g + 1] == '(')
			return g + 1;
	return n;
}

int view_kernel(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct agg own = { 0 };
	int64_t all;
	const struct agg *ap = &own; /* opscope merge: the partials' aggregation, merged */
	if (c->pre) {
		ap = &c->pre->kernels;
		all = c->pre->kernels_ns;
	} else if (agg_kernels(m, &own, &all) != 0) {
		return OPSCOPE_ENOMEM;
	}
	if (ap->n == 0) {
		agg_free(&own);
		return 0;
	}
	struct rtable *t = ctx_table(c, "kernel", "Kernel Summary");
	if (!t) {
		agg_free(&own);
		return OPSCOPE_ENOMEM;
	}
	int cdisp = rtable_col(t, "Name", "display_name", RCOL_TEXT, 90);
	rtable_col_flags(t, cdisp, RCOL_F_CUT);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	int cgpu = rtable_col(t, "GPU Total / Avg / Max / Min / Ratio(%)", "", RCOL_STATS, 40);
	int cname = rtable_col(t, "Full name", "name", RCOL_TEXT, 0);
	rtable_col_flags(t, cname, RCOL_F_TEXT_HIDDEN);
	/* GPU keys sort as themselves; every other key by total GPU time */
	enum report_sort key = c->o->sort;
	if (key != SORT_GPU_AVG && key != SORT_GPU_MAX && key != SORT_GPU_MIN)
		key = SORT_GPU_TOTAL;
	uint32_t n;
	uint32_t *top = sorted_top(ap, key, true, &n);
	for (uint32_t k = 0; top && k < n; k++) {
		const struct agg_item *it = &ap->v[top[k]];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		const char *s = model_str(m, it->name);
		size_t len = model_strlen(m, it->name);
		rcell_text(r, cdisp, s, report_kernel_display_len(s, len));
		rcell_text(r, cname, s, len);
		r->cells[ccalls].i = (int64_t)it->calls;
		set_item_stats(&r->cells[cgpu], it, true, all);
	}
	int rc = !top || t->oom ? OPSCOPE_ENOMEM : 0;
	free(top);
	agg_free(&own);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* nvprof */

int view_nvprof(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct agg a;
	int64_t sum[2];		   /* GPU activities, API calls */
	const struct agg *ap = &a; /* opscope merge: the partials' items, merged */
	if (c->pre) {
		memset(&a, 0, sizeof(a));
		ap = &c->pre->nvprof;
		sum[0] = c->pre->nvprof_ns[0];
		sum[1] = c->pre->nvprof_ns[1];
	} else if (agg_nvprof(m, &a, &sum[0], &sum[1]) != 0) {
		return OPSCOPE_ENOMEM;
	}
	if (ap->n == 0) {
		agg_free(&a);
		return 0;
	}
	struct rtable *t = ctx_table(c, "nvprof", "GPU activities and API calls");
	if (!t) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	t->style = RSTYLE_NVPROF;
	int csec = rtable_col(t, "Type", "section", RCOL_TEXT, 0);
	int cratio = rtable_col(t, "Time(%)", "ratio", RCOL_RATIO, 0);
	int ctot = rtable_col(t, "Time", "total_ns", RCOL_TIME, 0);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 0);
	int cavg = rtable_col(t, "Avg", "avg_ns", RCOL_TIME, 0);
	int cmin = rtable_col(t, "Min", "min_ns", RCOL_TIME, 0);
	int cmax = rtable_col(t, "Max", "max_ns", RCOL_TIME, 0);
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 0);
	uint32_t n;
	uint32_t *top = sorted_top(ap, SORT_GPU_TOTAL, true, &n);
	for (int api = 0; api < 2 && top; api++) {
		for (uint32_t k = 0; k < n; k++) {
			const struct agg_item *it = &ap->v[top[k]];
			if ((it->kind == AGG_NVPROF_API) != (api == 1))
				continue;
			struct rrow *r = rtable_row(t, 0);
			if (!r)
				break;
			set_cstr(r, csec, api ? "api" : "gpu");
			if (it->kind == AGG_NVPROF_COPY)
				set_cstr(r, cname, agg_nvprof_copy_name(it->name));
			else
				set_text(r, cname, m, it->name);
			r->cells[cratio].ratio = ratio(it->gpu_ns, sum[api]);
			r->cells[ctot].i = it->gpu_ns;
			r->cells[ccalls].i = (int64_t)it->calls;
			r->cells[cavg].i = it->calls ? it->gpu_ns / (int64_t)it->calls : 0;
			r->cells[cmin].i = it->gpu_min_ns;
			r->cells[cmax].i = it->gpu_max_ns;
		}
	}
	int rc = !top || t->oom ? OPSCOPE_ENOMEM : 0;
	free(top);
	agg_free(&a);
	return rc;
}
