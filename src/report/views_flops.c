/*
 * views_flops.c: the flops view of `opscope report` (views.c's registry): the FLOPs analysis
 * (analyze/flops.h) as four tables: per operator (name, shapes, dtypes, direction) its work,
 * achieved throughput, share of peak, bound and tensor-core use, the roofline points of the
 * HTML page to come; the roll-up by category; the operators with no model and why; the
 * ceilings of the devices the rows were measured against. It orders rows and fills cells;
 * every figure comes from flops_run and flops_derive.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/flops.h"
#include "report/views_internal.h"

/* A number column shown with 3 significant digits in text (FLOPs span 1e3 to 1e18). */
static int num_col(struct rtable *t, const char *title, const char *key, int width)
{
	int c = rtable_col(t, title, key, RCOL_NUMBER, width);
	rtable_col_flags(t, c, RCOL_F_SIG3);
	return c;
}

/* The sort key of a row, larger first. */
static double row_key(const struct flops_row *r, const struct flops_derived *d, enum report_sort s,
		      bool device_time)
{
	switch (s) {
	case SORT_CALLS:
		return (double)r->calls;
	case SORT_FLOPS:
		return (double)r->flops;
	case SORT_BYTES:
		return (double)r->bytes;
	case SORT_TFLOPS:
		return d->flops_per_s;
	case SORT_GPU_TOTAL:
	case SORT_GPU_AVG:
	case SORT_GPU_MAX:
	case SORT_GPU_MIN:
		return (double)r->gpu_ns;
	default:
		return (double)(device_time ? r->gpu_ns : r->cpu_ns);
	}
}

struct keyed {
	double key;   /* larger first */
	uint32_t idx; /* row index: first-seen order breaks ties */
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const char *dtype_label(const struct flops_row *r)
{
	return perfmodel_dtype_name((enum perfmodel_dtype)r->dtype);
}

/* "yes", "tf32", "no: K = 3 not a multiple of 8", or "-" (not a matrix operator). FP32 work is
 * eligible only through TF32, which a device whose peaks have no TF32 rate (a V100) lacks. */
static void set_eligible(struct rtable *t, struct rrow *rr, int col, const struct flops_row *r)
{
	if (r->tc_eligible && r->tc_tf32_only && r->peaks && r->peaks->tf32_flops <= 0)
		set_cstr(rr, col, "no: fp32 (no TF32 on this device)");
	else if (r->tc_eligible)
		set_cstr(rr, col, r->tc_tf32_only ? "tf32" : "yes");
	else if (r->tc_reason)
		set_label(t, rr, col, "no: %s", r->tc_reason);
	else
		set_cstr(rr, col, "-");
}

static int operator_table(struct report_ctx *c, const struct flops_result *f)
{
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "flops", "FLOPs per Operator");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 34);
	rtable_col_flags(t, cname, RCOL_F_CUT);
	int cdir = rtable_col(t, "Dir", "direction", RCOL_TEXT, 3);
	int cshape = rtable_col(t, "Input Shapes", "input_shapes", RCOL_TEXT, 28);
	rtable_col_flags(t, cshape, RCOL_F_CUT);
	int ctypes = rtable_col(t, "Input Types", "input_types", RCOL_TEXT, 0);
	rtable_col_flags(t, ctypes, RCOL_F_TEXT_HIDDEN);
	int cdt = rtable_col(t, "Dtype", "dtype", RCOL_TEXT, 5);
	int ccat = rtable_col(t, "Category", "category", RCOL_TEXT, 8);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	int ctime =
		rtable_col(t, f->device_time ? "GPU Time" : "CPU Time", "time_ns", RCOL_TIME, 9);
	int cflops = rtable_col(t, "FLOPs", "flops", RCOL_COUNT, 0);
	rtable_col_flags(t, cflops, RCOL_F_TEXT_HIDDEN);
	int cgf = num_col(t, "GFLOPs", "gflops", 9);
	int cbytes = rtable_col(t, "Bytes", "bytes", RCOL_COUNT, 0);
	rtable_col_flags(t, cbytes, RCOL_F_TEXT_HIDDEN);
	int cgb = num_col(t, "GB", "gbytes", 8);
	int cint = num_col(t, "FLOP/B", "flop_per_byte", 8);
	int ctf = num_col(t, "TFLOP/s", "tflops_per_s", 8);
	int ctb = num_col(t, "TB/s", "tbytes_per_s", 8);
	int cpf = rtable_col(t, "Peak FLOP/s(%)", "peak_flops_ratio", RCOL_RATIO, 8);
	int cpb = rtable_col(t, "Peak BW(%)", "peak_bw_ratio", RCOL_RATIO, 8);
	int croof = rtable_col(t, "Roofline(%)", "roofline_ratio", RCOL_RATIO, 8);
	int cbound = rtable_col(t, "Bound", "bound", RCOL_TEXT, 7);
	int ctc = rtable_col(t, "TC Used(%)", "tc_used_ratio", RCOL_RATIO, 8);
	int celig = rtable_col(t, "TC Eligible", "tc_eligible", RCOL_TEXT, 30);
	rtable_col_flags(t, celig, RCOL_F_CUT);
	int cfwd = rtable_col(t, "Forward Op", "forward_op", RCOL_TEXT, 0);
	rtable_col_flags(t, cfwd, RCOL_F_TEXT_HIDDEN);
	int cdev = rtable_col(t, "Device", "device", RCOL_TEXT, 0);
	rtable_col_flags(t, cdev, RCOL_F_TEXT_HIDDEN);

	struct keyed *order = malloc((f->nrows ? f->nrows : 1) * sizeof(*order));
	if (!order)
		return OPSCOPE_ENOMEM;
	for (uint32_t i = 0; i < f->nrows; i++) {
		struct flops_derived d;
		flops_derive(&f->rows[i], f->device_time, &d);
		order[i].key = row_key(&f->rows[i], &d, c->o->sort, f->device_time);
		order[i].idx = i;
	}
	qsort(order, f->nrows, sizeof(*order), keyed_cmp);
	for (uint32_t k = 0; k < f->nrows; k++) {
		const struct flops_row *r = &f->rows[order[k].idx];
		struct flops_derived d;
		flops_derive(r, f->device_time, &d);
		struct rrow *rr = rtable_row(t, 0);
		if (!rr)
			break;
		set_text(rr, cname, m, r->name);
		set_cstr(rr, cdir, r->backward ? "bwd" : "fwd");
		set_text(rr, cshape, m, r->shapes);
		set_text(rr, ctypes, m, r->dtypes);
		set_cstr(rr, cdt, dtype_label(r));
		set_cstr(rr, ccat, perfmodel_category_name((enum perfmodel_category)r->category));
		rr->cells[ccalls].i = (int64_t)r->calls;
		rr->cells[ctime].i = f->device_time ? r->gpu_ns : r->cpu_ns;
		rr->cells[cflops].i = r->flops > INT64_MAX ? INT64_MAX : (int64_t)r->flops;
		rr->cells[cgf].num = (double)r->flops / 1e9;
		rr->cells[cbytes].i = r->bytes > INT64_MAX ? INT64_MAX : (int64_t)r->bytes;
		rr->cells[cgb].num = (double)r->bytes / 1e9;
		rr->cells[cint].num = d.intensity;
		rr->cells[cint].empty = r->bytes == 0;
		rr->cells[ctf].num = d.flops_per_s / 1e12;
		rr->cells[ctb].num = d.bytes_per_s / 1e12;
		rr->cells[ctf].empty = rr->cells[ctb].empty = d.time_s <= 0;
		rr->cells[cpf].ratio = d.pct_peak_flops;
		rr->cells[cpf].empty = d.peak_flops <= 0 || d.time_s <= 0;
		rr->cells[cpb].ratio = d.pct_peak_bw;
		rr->cells[cpb].empty = !r->peaks || r->peaks->mem_bw_bytes <= 0 || d.time_s <= 0;
		rr->cells[croof].ratio = d.roofline_eff;
		rr->cells[croof].empty = d.roofline_eff <= 0;
		set_cstr(rr, cbound, d.bound ? d.bound : "-");
		rr->cells[ctc].ratio = ratio(r->tc_ns, r->kernel_ns);
		rr->cells[ctc].empty = r->kernels == 0;
		set_eligible(t, rr, celig, r);
		set_text(rr, cfwd, m, r->fwd_op);
		set_text(rr, cdev, m, r->device_name);
	}
	free(order);
	if (f->device_time && f->over_roofline)
		t->note =
			"Time is the device time (kernels, copies, memsets) each call launched, "
			"summed; FLOPs and bytes from the call's shapes (docs/flops.md). A call "
			"inside a modelled operator is counted with it, not again. Rows over 100% "
			"of the roofline did fewer FLOPs than the direct count (Winograd, FFT "
			"convolutions) or launched device time the trace missed: read them as an "
			"upper bound of the work.";
	else if (f->device_time)
		t->note = "Time is the device time (kernels, copies, memsets) each call launched, "
			  "summed; FLOPs and bytes from the call's shapes (docs/flops.md). A call "
			  "inside a modelled operator is counted with it, not again.";
	else
		t->note = "No device work in the trace: time is each call's CPU time, and no "
			  "device peak applies (give one with --peak). FLOPs and bytes from the "
			  "call's shapes (docs/flops.md).";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

static int category_table(struct report_ctx *c, const struct flops_result *f)
{
	struct rtable *t = ctx_table(c, "flops", "FLOPs by Category");
	if (!t)
		return OPSCOPE_ENOMEM;
	int ccat = rtable_col(t, "Category", "category", RCOL_TEXT, 14);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 8);
	int ctime =
		rtable_col(t, f->device_time ? "GPU Time" : "CPU Time", "time_ns", RCOL_TIME, 10);
	int cshare = rtable_col(t, "Share(%)", "share", RCOL_RATIO, 8);
	int cgf = num_col(t, "GFLOPs", "gflops", 10);
	int cgb = num_col(t, "GB", "gbytes", 9);
	int ctf = num_col(t, "TFLOP/s", "tflops_per_s", 9);
	int ctb = num_col(t, "TB/s", "tbytes_per_s", 9);
	int croof = rtable_col(t, "Roofline(%)", "roofline_ratio", RCOL_RATIO, 8);
	for (int k = 1; k <= PERFMODEL_CATEGORIES; k++) {
		int i = k % PERFMODEL_CATEGORIES; /* "no model" last */
		const struct flops_category *x = &f->cat[i];
		if (!x->calls)
			continue;
		struct rrow *rr = rtable_row(t, 0);
		if (!rr)
			break;
		set_cstr(rr, ccat, perfmodel_category_name((enum perfmodel_category)i));
		rr->cells[ccalls].i = (int64_t)x->calls;
		rr->cells[ctime].i = x->time_ns;
		rr->cells[cshare].ratio = ratio(x->time_ns, f->total_ns);
		double s = (double)x->time_ns / 1e9;
		bool none = i == PERFMODEL_NONE;
		rr->cells[cgf].num = (double)x->flops / 1e9;
		rr->cells[cgb].num = (double)x->bytes / 1e9;
		rr->cells[cgf].empty = rr->cells[cgb].empty = none;
		rr->cells[ctf].num = s > 0 ? (double)x->flops / s / 1e12 : 0;
		rr->cells[ctb].num = s > 0 ? (double)x->bytes / s / 1e12 : 0;
		rr->cells[ctf].empty = rr->cells[ctb].empty = none || s <= 0;
		rr->cells[croof].ratio =
			x->peak_time_ns > 0 ? x->roofline_ns / (double)x->peak_time_ns : 0;
		rr->cells[croof].empty = x->peak_time_ns <= 0;
	}
	t->note = "Share: of the time of every outermost operator call. Roofline: the time the "
		  "category's calls would take at the device's roofline over the time they took "
		  "(calls on devices with known peaks; a row faster than its roofline counts as "
		  "at it).";
	rtable_total(t, "operator_time_ns", f->total_ns);
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

static int gap_cmp(const void *a, const void *b)
{
	const struct flops_gap *x = *(const struct flops_gap *const *)a;
	const struct flops_gap *y = *(const struct flops_gap *const *)b;
	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns > y->gpu_ns ? -1 : 1;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int gap_table(struct report_ctx *c, const struct flops_result *f)
{
	if (!f->ngaps)
		return 0;
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "flops", "Operators with no FLOPs Model");
	const struct flops_gap **v = malloc(f->ngaps * sizeof(*v));
	if (!t || !v) {
		free(v);
		return OPSCOPE_ENOMEM;
	}
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 40);
	rtable_col_flags(t, cname, RCOL_F_CUT);
	int creason = rtable_col(t, "Reason", "reason", RCOL_TEXT, 36);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 8);
	int ccpu = rtable_col(t, "CPU Time", "cpu_ns", RCOL_TIME, 10);
	int cgpu = rtable_col(t, "GPU Time", "gpu_ns", RCOL_TIME, 10);
	for (uint32_t i = 0; i < f->ngaps; i++)
		v[i] = &f->gaps[i];
	qsort(v, f->ngaps, sizeof(*v), gap_cmp);
	for (uint32_t i = 0; i < f->ngaps; i++) {
		struct rrow *rr = rtable_row(t, 0);
		if (!rr)
			break;
		set_text(rr, cname, m, v[i]->name);
		set_cstr(rr, creason, v[i]->reason);
		rr->cells[ccalls].i = (int64_t)v[i]->calls;
		rr->cells[ccpu].i = v[i]->cpu_ns;
		rr->cells[cgpu].i = v[i]->gpu_ns;
	}
	free(v);
	t->note = "The outermost calls with no model and no modelled operator inside; views "
		  "and allocations (no work) are not listed.";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* The devices the rows were measured against, once each. */
static int ceiling_table(struct report_ctx *c, const struct flops_result *f)
{
	const struct hardware_peaks *seen[16];
	int n = 0;
	for (uint32_t i = 0; i < f->nrows && n < 16; i++) {
		const struct hardware_peaks *p = f->rows[i].peaks;
		bool dup = !p;
		for (int k = 0; k < n && !dup; k++)
			dup = seen[k] == p;
		if (!dup)
			seen[n++] = p;
	}
	if (!n)
		return 0;
	struct rtable *t = ctx_table(c, "flops", "Roofline Ceilings");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cname = rtable_col(t, "Device", "device", RCOL_TEXT, 26);
	int c64 = num_col(t, "FP64 TFLOP/s", "fp64_tflops", 9);
	int c32 = num_col(t, "FP32 TFLOP/s", "fp32_tflops", 9);
	int ctf32 = num_col(t, "TF32 TC", "tf32_tflops", 9);
	int c16 = num_col(t, "FP16 TC", "fp16_tflops", 9);
	int cbf = num_col(t, "BF16 TC", "bf16_tflops", 9);
	int c8 = num_col(t, "FP8 TC", "fp8_tflops", 9);
	int cbw = num_col(t, "TB/s", "tbytes_per_s", 8);
	int cridge = num_col(t, "Ridge FP32", "ridge_fp32_flop_per_byte", 9);
	int csrc = rtable_col(t, "Source", "source", RCOL_TEXT, 0);
	rtable_col_flags(t, csrc, RCOL_F_TEXT_HIDDEN);
	for (int k = 0; k < n; k++) {
		const struct hardware_peaks *p = seen[k];
		struct rrow *rr = rtable_row(t, 0);
		if (!rr)
			break;
		set_cstr(rr, cname, p->name ? p->name : "?");
		const double v[] = { p->fp64_flops, p->fp32_flops, p->tf32_flops,
				     p->fp16_flops, p->bf16_flops, p->fp8_flops };
		const int cols[] = { c64, c32, ctf32, c16, cbf, c8 };
		for (int j = 0; j < 6; j++) {
			rr->cells[cols[j]].num = v[j] / 1e12;
			rr->cells[cols[j]].empty = v[j] <= 0;
		}
		rr->cells[cbw].num = p->mem_bw_bytes / 1e12;
		rr->cells[cbw].empty = p->mem_bw_bytes <= 0;
		rr->cells[cridge].num = p->mem_bw_bytes > 0 ? p->fp32_flops / p->mem_bw_bytes : 0;
		rr->cells[cridge].empty = p->mem_bw_bytes <= 0 || p->fp32_flops <= 0;
		set_cstr(rr, csrc, p->source ? p->source : "");
	}
	t->note = "Dense peaks from the vendors' datasheets (docs/peaks.md), or --peak.";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

int view_flops(struct report_ctx *c)
{
	struct flops_opts o = { .peaks = c->o->peaks };
	struct flops_result f;
	bool merged = c->pre != NULL; /* the partials' result (not freed here) */
	if (merged && !c->pre->flops)
		return 0; /* merged partials that do not carry it */
	int rc = 0;
	if (merged)
		f = *c->pre->flops;
	else
		rc = flops_run(&c->an, &o, &f);
	if (rc == 0 && (f.nrows || f.ngaps)) {
		if (f.nrows)
			rc = operator_table(c, &f);
		if (rc == 0)
			rc = category_table(c, &f);
		if (rc == 0)
			rc = gap_table(c, &f);
		if (rc == 0)
			rc = ceiling_table(c, &f);
	}
	if (!merged)
		flops_free(&f);
	return rc;
}
