/*
 * partial.c: mergeable partial summaries (partial.h; the format: docs/merge.md).
 *
 * A partial is text, one record a line, fields separated by tabs:
 *
 *   opscope-partial <version>
 *   input <str>                                  one per path the report was given
 *   file <path> <format> <events> <dropped> <torn bytes> <complete 0|1> <why incomplete>
 *   rank <rank|-1> <host> <world size|-1>
 *   dist <has communication 0|1> <communication ns> <computation ns> <overlap ns>
 *   step <name> <start> <end> <compute> <communication> <data wait>   (ns; one per step)
 *   coll <name> <seq> <start> <end> <op> <group|-1> <bytes|-1>         (one per kernel)
 *   kernels <sum of the kernels' durations, ns>
 *   k <name> <calls> <total> <max> <min>            (ns; one per kernel name)
 *   nvprof <GPU work's sum> <API calls' sum>         (ns)
 *   n <kind> <name, or a copy key> <calls> <total> <max> <min>   (ns; one per nvprof item)
 *   o <parent|-1> <kind> <name> <calls> <cpu> <cpu max> <cpu min> <gpu> <gpu max> <gpu min>
 *     <self>                  (ns; one per item of the operator aggregation, first-seen order;
 *                              parent: the index of an earlier o record of the file)
 *   sv <steps dropped>                           (the step view, version 2 on)
 *   sr <name> <start> <end> <8 parts> <gap> <compute> <tail> <drain> <GPU events>
 *                             (ns; one per step row kept: steps_analyze's rows)
 *   gv                                           (the gputime view, version 3 on)
 *   gt <device> <start> <end> <8 parts> <8 gaps> (ns; one per device: its window)
 *   gs <name> <start> <end> <8 parts> <8 gaps>   (ns; one per step of the device above)
 *   uv                                           (the gpu view, version 4 on)
 *   ut <device> <SMs> <SM known 0|1> <kernels> <kernels with SMs> <bucket> <span>
 *                                                (one per device; span: its window)
 *   us <name> <span>                             (one per step of the device above)
 *   ub <span>                                    (one per bucket of the device above)
 *     span: <start> <end> <kernel busy> <device busy> <SM busy, C99 hex float> <kernels>
 *   lv <device ops not launched by a call>       (the launch view, version 5 on)
 *   lr <name> <category> <count> <launch sum> <launch max> <delay sum> <delay max> <op sum>
 *      <short> <shorter than launch> <launch outliers> <delay outliers>   (ns; one per name)
 *   qv                                           (the queue view, version 6 on)
 *   qt <device> <stream> <name> <ops> <bucket> <qspan>   (one per stream: its window)
 *   qb <qspan>                                   (one per bucket of the stream above)
 *     qspan: <start> <end> <max queued> <queued x ns> <ns with 1024 or more queued>
 *   mv                                           (the gpumem view, version 7 on)
 *   md <device> <allocs> <frees> <alloc bytes> <free bytes> <totals 0|1> <addresses 0|1>
 *      <first> <last> <start bytes> <end bytes> <peak bytes> <peak at> <never freed>
 *      <never freed bytes> <bucket>              (one per device)
 *   ml <0 largest|1 never freed> <at> <bytes> <freed at|-> <address> <launcher>
 *                                                (at most 10 of each per device above)
 *   mb <start> <end> <bytes at end> <most bytes> (one per bucket of the device above)
 *   tv <span 0|1> <first start> <last end> <step kernel ns> <step device ns>   (version 8 on)
 *   ti <start> <end>                             (the file's ProfileStep ranges, merged)
 *   h <1 user-defined|2 memory|3 Python> <name> <calls> <cpu> <cpu max> <cpu min> <gpu>
 *     <gpu max> <gpu min> <self>                 (ns; one per name and kind)
 *   mm                                           (the module view, version 9 on)
 *   mo <parent|-1> <name> <calls> <cpu> <cpu max> <cpu min> <gpu> <gpu max> <gpu min> <self>
 *      <gpu self>      (ns; one per item of the module tree, parents first; parent: the index
 *                       of an earlier mo record of the file)
 *   pv                                           (the perf view, version 10 on)
 *   pt <Dataloader ns> <duration ns> <num_samples>   (one per step with num_samples)
 *   nxv, nxr, nxd                                (the nvtx view, version 11 on:
 *                                                 partial_nvtx.c)
 *   dv, dvc <0 process|1 system> <pid> <utilization %a>, dvg <device> <busy ns>
 *   di, dih <start> <end>, dig <start> <end>, dic <gap> <length>
 *   ov, ovb <gap> <length>, ovt <0 host|1 GPU> <category> <ranges> <calls for sure>,
 *     ovi <gap> <length>, ovu <start> <end> <ranges>
 *   ph <ProfileStep ranges> <longest> <shortest> <steps> <kernel ns> <most> <least>,
 *     phc <phase> <thread> <start> <end> <GPU share ns>
 *                             (version 11 on: device, distributed, overview, model; written
 *                              and read by partial_unions.c)
 *   ad adw adf adg ads adp ade adk               (the advice view, version 11 on: the
 *                                                file's advisor measurement, partial_advice.c)
 *   sa <samples> <weight> <truncated> <no stack> <samples before --under>   (version 11 on)
 *   saf <name> <source file> <address> <flat> <cum>   (one per function with weight)
 *   sae <caller> <callee> <weight>     (one per pair; indices of the file's saf records)
 *   fl <shapes 0|1> <device work 0|1> <device ns> <CPU ns> <no-work calls>
 *      <outputs from backward> <device not in the table>
 *                             (the flops view, version 11 on; ns: the outermost calls')
 *   flc <category> <calls> <device ns> <CPU ns> <FLOPs> <bytes>   (one per category)
 *   flp <name> <source> <tc arch> <fp64> <fp32> <tf32> <fp16> <bf16> <fp8> <int8> <bw>
 *                             (hex floats; one per device peaks of the rows, at most 64)
 *   flr <name> <shapes> <dtypes> <forward op> <flags> <category> <dtype> <tc reason> <calls>
 *       <cpu> <gpu> <kernel> <tc> <kernels> <FLOPs> <bytes> <flp index|-1> <device>
 *                             (one per row; flags: 1 backward, 2 TC eligible, 4 TF32 only)
 *   flg <name> <reason> <calls> <cpu> <gpu>        (one per operator with no model)
 *   end <files>
 *
 * A string field is `-` for none or `=` and the bytes, with \\ \t \n \r \0 escaped, so any
 * name survives the trip byte for byte. The records of a file follow its `file` record. The
 * `end` record says the partial is whole: a partial cut short has none.
 *
 * Invariants of the reader: whatever the bytes, it ends with the set filled or with one line
 * naming the partial and the byte offset of the record it could not take; it never trusts a
 * count it was given (arrays grow as records come), and a version newer than PARTIAL_VERSION
 * is refused rather than half read.
 */
#include "report/partial.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/advice.h"
#include "report/partial_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* Writing */

/* A string field: '=' and the bytes, escaped. */
void partial_put_str(FILE *out, const char *s, size_t n)
{
	fputc('=', out);
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		switch (c) {
		case '\\':
			fputs("\\\\", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\0':
			fputs("\\0", out);
			break;
		default:
			fputc(c, out);
		}
	}
}

/* The string id `id` of m as a field: `-` when 0 (none). */
void partial_put_id(FILE *out, const struct model *m, uint32_t id)
{
	fputc('\t', out);
	if (!id)
		fputc('-', out);
	else
		partial_put_str(out, model_str(m, id), model_strlen(m, id));
}

/* File f's step view (steps_analyze): an sv record (the steps dropped), then an sr record per
 * row kept. The average is not written: the merge makes it from the rows (steps_average). */
static int write_steps(FILE *out, const struct analysis *a, uint32_t f)
{
	struct step_table st;
	if (steps_analyze(&a->tree, f, &st) != 0)
		return OPSCOPE_ENOMEM;
	fprintf(out, "sv\t%" PRIu32 "\n", st.dropped);
	for (uint32_t k = 0; k < st.nrows; k++) {
		const struct step_row *row = &st.rows[k];
		fputs("sr", out);
		partial_put_id(out, a->m, row->name);
		fprintf(out, "\t%" PRId64 "\t%" PRId64, row->start_ns, row->end_ns);
		for (int q = 0; q < STEP_NROLES; q++)
			fprintf(out, "\t%" PRId64, row->role_ns[q]);
		fprintf(out, "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRIu64 "\n",
			row->gap_ns, row->compute_ns, row->tail_ns, row->drain_ns, row->gpu_events);
	}
	steps_free(&st);
	return 0;
}

/* A span of the GPU time breakdown: start, end, the parts, the gaps. */
static void put_gspan(FILE *out, const struct gpu_time_span *sp)
{
	fprintf(out, "\t%" PRId64 "\t%" PRId64, sp->s, sp->e);
	for (int p = 0; p < GPU_TIME_NPARTS; p++)
		fprintf(out, "\t%" PRId64, sp->part[p]);
	for (int p = 0; p < GPU_TIME_NPARTS; p++)
		fprintf(out, "\t%" PRIu64, sp->gaps[p]);
	fputc('\n', out);
}

/* File f's devices of the GPU time breakdown gt (of every file): a gv record, then per device
 * a gt record (its window) and a gs record per step. */
static void write_gputime(FILE *out, const struct model *m, const struct gpu_time *gt, uint32_t f)
{
	fputs("gv\n", out);
	for (uint32_t d = 0; d < gt->ndev; d++) {
		const struct gpu_time_device *g = &gt->dev[d];
		if (g->file != f)
			continue;
		fprintf(out, "gt\t%" PRIu32, g->device);
		put_gspan(out, &g->window);
		for (uint32_t k = 0; k < g->nsteps; k++) {
			fputs("gs", out);
			partial_put_id(out, m, g->steps[k].name);
			put_gspan(out, &g->steps[k]);
		}
	}
}

/* A span of the GPU utilization: start, end, kernel and device busy time (ns), the SM
 * integral (a double: %a, which strtod reads back to the same bits), kernels. */
static void put_uspan(FILE *out, const struct gpu_util_span *sp)
{
	fprintf(out, "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%a\t%" PRIu64 "\n",
		sp->s, sp->e, sp->kernel_ns, sp->work_ns, sp->sm_eff_ns, sp->kernels);
}

/* File f's devices of the GPU utilization u (of every file): a uv record, then per device a
 * ut record (with its window), a us record per step and a ub record per bucket. */
static void write_gpu(FILE *out, const struct model *m, const struct gpu_util *u, uint32_t f)
{
	fputs("uv\n", out);
	for (uint32_t d = 0; d < u->ndev; d++) {
		const struct gpu_util_device *g = &u->dev[d];
		if (g->file != f)
			continue;
		fprintf(out, "ut\t%" PRIu32 "\t%" PRIu32 "\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRId64,
			g->device, g->sm_count, g->sm_known ? 1 : 0, g->kernels, g->kernels_sm,
			g->bucket_ns);
		put_uspan(out, &g->window);
		for (uint32_t k = 0; k < g->nsteps; k++) {
			fputs("us", out);
			partial_put_id(out, m, g->steps[k].name);
			put_uspan(out, &g->steps[k]);
		}
		for (uint32_t k = 0; k < g->nbuckets; k++) {
			fputs("ub", out);
			put_uspan(out, &g->buckets[k]);
		}
	}
}

/* File f's launch statistics: an lv record, then an lr record per name (the total is the
 * sum of the rows: the merge makes it). */
static int write_launch(FILE *out, const struct analysis *a, uint32_t f)
{
	struct gpu_launch l;
	if (gpu_launch_analyze_file(a, f, &l) != 0)
		return OPSCOPE_ENOMEM;
	fprintf(out, "lv\t%" PRIu64 "\n", l.unlaunched);
	for (uint32_t i = 0; i < l.nrows; i++) {
		const struct gpu_launch_row *x = &l.rows[i];
		fputs("lr", out);
		partial_put_id(out, a->m, x->name);
		fprintf(out,
			"\t%u\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
			"\t%" PRId64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
			(unsigned)x->category, x->count, x->cpu_sum_ns, x->cpu_max_ns,
			x->delay_sum_ns, x->delay_max_ns, x->gpu_sum_ns, x->short_ops, x->shorter,
			x->cpu_outliers, x->delay_outliers);
	}
	gpu_launch_free(&l);
	return 0;
}

/* A span of a stream's queue: start, end, max, the integral, time full. */
static void put_qspan(FILE *out, const struct gpu_queue_span *sp)
{
	fprintf(out, "\t%" PRId64 "\t%" PRId64 "\t%" PRIu32 "\t%" PRId64 "\t%" PRId64 "\n", sp->s,
		sp->e, sp->max, sp->queued_ns, sp->full_ns);
}

/* File f's streams of the queue lengths q (of every file): a qv record, then per stream a qt
 * record (with its window) and a qb record per bucket. */
static void write_queue(FILE *out, const struct model *m, const struct gpu_queue *q, uint32_t f)
{
	fputs("qv\n", out);
	for (uint32_t i = 0; i < q->nst; i++) {
		const struct gpu_queue_stream *st = &q->st[i];
		if (st->file != f)
			continue;
		fprintf(out, "qt\t%" PRIu32 "\t%" PRIu64, st->device, st->stream);
		partial_put_id(out, m, st->name);
		fprintf(out, "\t%" PRIu64 "\t%" PRId64, st->ops, st->bucket_ns);
		put_qspan(out, &st->window);
		for (uint32_t b = 0; b < st->nbuckets; b++) {
			fputs("qb", out);
			put_qspan(out, &st->buckets[b]);
		}
	}
}

/* An allocation of a device's lists: its list (0 largest, 1 never freed), then its fields. */
static void put_alloc(FILE *out, const struct model *m, int list, const struct gpu_mem_alloc *al)
{
	fprintf(out, "ml\t%d\t%" PRId64 "\t%" PRId64, list, al->ts_ns, al->bytes);
	if (al->freed_ns == INT64_MIN)
		fputs("\t-", out);
	else
		fprintf(out, "\t%" PRId64, al->freed_ns);
	fprintf(out, "\t%" PRIu64, al->address);
	partial_put_id(out, m, al->launcher);
	fputc('\n', out);
}

/* File f's devices of the GPU memory gm (of every file): an mv record, then per device an md
 * record, its ml records (largest, then never freed) and an mb record per bucket. */
static void write_gpumem(FILE *out, const struct model *m, const struct gpu_mem *gm, uint32_t f)
{
	fputs("mv\n", out);
	for (uint32_t d = 0; d < gm->ndev; d++) {
		const struct gpu_mem_device *g = &gm->dev[d];
		if (g->file != f)
			continue;
		fprintf(out,
			"md\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64
			"\t%d\t%d\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
			"\t%" PRId64 "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\n",
			g->device, g->allocs, g->frees, g->alloc_bytes, g->free_bytes,
			g->totals ? 1 : 0, g->addresses ? 1 : 0, g->first_ns, g->last_ns,
			g->start_bytes, g->end_bytes, g->peak_bytes, g->peak_ns, g->never_freed,
			g->never_freed_bytes, g->bucket_ns);
		for (uint32_t k = 0; k < g->nlargest; k++)
			put_alloc(out, m, 0, &g->largest[k]);
		for (uint32_t k = 0; k < g->nleaks; k++)
			put_alloc(out, m, 1, &g->leaks[k]);
		for (uint32_t b = 0; b < g->nbuckets; b++)
			fprintf(out, "mb\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n",
				g->buckets[b].s, g->buckets[b].e, g->buckets[b].end_bytes,
				g->buckets[b].max_bytes);
	}
}

/* File f's total parts (analysis_file_total: tv and ti records) and its user-defined, memory
 * and Python function ranges by name (h records). */
static int write_host(FILE *out, const struct analysis *a, uint32_t f)
{
	struct analysis_total at;
	analysis_file_total(a, f, &at);
	if (at.steps.oom) {
		ivec_free(&at.steps);
		return OPSCOPE_ENOMEM;
	}
	bool span = at.lo <= at.hi;
	fprintf(out, "tv\t%d\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n", span ? 1 : 0,
		span ? at.lo : 0, span ? at.hi : 0, at.step_kernel_ns, at.step_device_ns);
	for (size_t k = 0; k < at.steps.n; k++)
		fprintf(out, "ti\t%" PRId64 "\t%" PRId64 "\n", at.steps.v[k].s, at.steps.v[k].e);
	ivec_free(&at.steps);
	for (int sel = AGG_USER_DEFINED; sel <= AGG_PYTHON_FUNCTIONS; sel++) {
		struct agg ag;
		if (agg_host_ranges_file(a, (enum agg_select)sel, f, false, &ag) != 0)
			return OPSCOPE_ENOMEM;
		for (uint32_t i = 0; i < ag.n; i++) { /* first-seen order */
			const struct agg_item *it = &ag.v[i];
			fprintf(out, "h\t%d\t", sel);
			partial_put_str(out, model_str(a->m, it->name),
					model_strlen(a->m, it->name));
			fprintf(out,
				"\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
				"\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n",
				it->calls, it->cpu_ns, it->cpu_max_ns, it->cpu_min_ns, it->gpu_ns,
				it->gpu_max_ns, it->gpu_min_ns, it->self_ns);
		}
		agg_free(&ag);
	}
	return 0;
}

/* File f's module hierarchy (agg_modules_file): an mm record, then an mo record per item. */
static int write_modules(FILE *out, const struct analysis *a, uint32_t f)
{
	struct agg ag;
	if (agg_modules_file(a, f, &ag) != 0)
		return OPSCOPE_ENOMEM;
	fputs("mm\n", out);
	for (uint32_t i = 0; i < ag.n; i++) { /* index order: parents before children */
		const struct agg_item *it = &ag.v[i];
		fprintf(out, "mo\t%" PRId64 "\t",
			it->parent == AGG_NONE ? INT64_C(-1) : (int64_t)it->parent);
		partial_put_str(out, model_str(a->m, it->name), model_strlen(a->m, it->name));
		fprintf(out,
			"\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
			"\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n",
			it->calls, it->cpu_ns, it->cpu_max_ns, it->cpu_min_ns, it->gpu_ns,
			it->gpu_max_ns, it->gpu_min_ns, it->self_ns, it->gpu_self_ns);
	}
	agg_free(&ag);
	return 0;
}

/* throughput_file_steps's callback of write_perf: a pt record. */
static void put_perf_step(void *arg, int64_t reader_ns, int64_t dur_ns, int64_t samples)
{
	fprintf(arg, "pt\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n", reader_ns, dur_ns, samples);
}

/* The analyses of every file that partial_write writes a share of, made once. */
struct write_an {
	struct gpu_time gt;  /* the GPU time breakdown */
	struct gpu_util gu;  /* the GPU utilization */
	struct gpu_queue gq; /* the queue lengths */
	struct gpu_mem gm;   /* the GPU memory */
};

/* partial_write's work, with the analyses of every file made once. */
static int write_files(FILE *out, const struct analysis *a, const struct write_an *wa,
		       const char *const *inputs, size_t ninputs)
{
	const struct model *m = a->m;
	fprintf(out, "%s\t%d\n", PARTIAL_MAGIC, PARTIAL_VERSION);
	for (size_t i = 0; i < ninputs; i++) {
		fputs("input\t", out);
		partial_put_str(out, inputs[i], strlen(inputs[i]));
		fputc('\n', out);
	}
	for (uint32_t f = 0; f < m->nfiles; f++) {
		const struct model_file *mf = &m->files[f];
		struct ranks_file rf;
		struct agg ag;
		int64_t kern_ns;
		if (ranks_file_extract(a, f, &rf) != 0)
			return OPSCOPE_ENOMEM;
		if (agg_kernels_file(m, f, &ag, &kern_ns) != 0) {
			ranks_file_free(&rf);
			return OPSCOPE_ENOMEM;
		}
		fputs("file", out);
		/* the path and format are never "none": an empty one is "=" */
		fputc('\t', out);
		partial_put_str(out, model_str(m, mf->path), model_strlen(m, mf->path));
		fputc('\t', out);
		partial_put_str(out, model_str(m, mf->format), model_strlen(m, mf->format));
		fprintf(out, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%d", mf->events, mf->dropped,
			mf->discarded_bytes, mf->complete ? 1 : 0);
		partial_put_id(out, m, mf->tail_msg);
		fprintf(out, "\nrank\t%" PRId32, rf.rank);
		partial_put_id(out, m, rf.host);
		fprintf(out, "\t%" PRId32 "\n", rf.world_size);
		fprintf(out, "dist\t%d\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n",
			rf.dist.has_communication ? 1 : 0, rf.dist.communication_ns,
			rf.dist.computation_ns, rf.dist.overlap_ns);
		for (uint32_t k = 0; k < rf.nsteps; k++) {
			const struct ranks_steprow *s = &rf.steps[k];
			fputs("step", out);
			partial_put_id(out, m, s->name);
			fprintf(out,
				"\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
				"\n",
				s->start_ns, s->end_ns, s->compute_ns, s->comm_ns, s->gap_ns);
		}
		for (uint32_t k = 0; k < rf.nkernels; k++) {
			const struct ranks_kernel *c = &rf.kernels[k];
			fputs("coll\t", out);
			partial_put_str(out, model_str(m, c->name), model_strlen(m, c->name));
			fprintf(out, "\t%" PRIu32 "\t%" PRId64 "\t%" PRId64 "\t", c->seq, c->s,
				c->e);
			partial_put_str(out, c->op, strlen(c->op));
			fprintf(out, "\t%" PRId32 "\t%" PRId64 "\n", c->group, c->bytes);
		}
		fprintf(out, "kernels\t%" PRId64 "\n", kern_ns);
		for (uint32_t i = ag.n ? ag.first_top : AGG_NONE; i != AGG_NONE; i = ag.v[i].next) {
			const struct agg_item *it = &ag.v[i];
			fputs("k\t", out);
			partial_put_str(out, model_str(m, it->name), model_strlen(m, it->name));
			fprintf(out, "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n",
				it->calls, it->gpu_ns, it->gpu_max_ns, it->gpu_min_ns);
		}
		agg_free(&ag);
		int64_t nv_gpu, nv_api;
		if (agg_nvprof_file(m, f, &ag, &nv_gpu, &nv_api) != 0) {
			ranks_file_free(&rf);
			return OPSCOPE_ENOMEM;
		}
		fprintf(out, "nvprof\t%" PRId64 "\t%" PRId64 "\n", nv_gpu, nv_api);
		for (uint32_t i = ag.n ? ag.first_top : AGG_NONE; i != AGG_NONE; i = ag.v[i].next) {
			const struct agg_item *it = &ag.v[i];
			fprintf(out, "n\t%u\t", (unsigned)it->kind);
			if (it->kind == AGG_NVPROF_COPY) /* a key, not a string */
				fprintf(out, "%" PRIu32, it->name);
			else
				partial_put_str(out, model_str(m, it->name),
						model_strlen(m, it->name));
			fprintf(out, "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n",
				it->calls, it->gpu_ns, it->gpu_max_ns, it->gpu_min_ns);
		}
		agg_free(&ag);
		if (agg_host_ranges_file(a, AGG_OPERATORS, f, true, &ag) != 0) {
			ranks_file_free(&rf);
			return OPSCOPE_ENOMEM;
		}
		for (uint32_t i = 0; i < ag.n; i++) { /* index order: parents before children */
			const struct agg_item *it = &ag.v[i];
			fprintf(out, "o\t%" PRId64 "\t%u\t",
				it->parent == AGG_NONE ? INT64_C(-1) : (int64_t)it->parent,
				(unsigned)it->kind);
			partial_put_str(out, model_str(m, it->name), model_strlen(m, it->name));
			fprintf(out,
				"\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
				"\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n",
				it->calls, it->cpu_ns, it->cpu_max_ns, it->cpu_min_ns, it->gpu_ns,
				it->gpu_max_ns, it->gpu_min_ns, it->self_ns);
		}
		agg_free(&ag);
		ranks_file_free(&rf);
		if (write_steps(out, a, f) != 0)
			return OPSCOPE_ENOMEM;
		write_gputime(out, m, &wa->gt, f);
		write_gpu(out, m, &wa->gu, f);
		write_queue(out, m, &wa->gq, f);
		write_gpumem(out, m, &wa->gm, f);
		if (write_host(out, a, f) != 0 || write_modules(out, a, f) != 0)
			return OPSCOPE_ENOMEM;
		fputs("pv\n", out);
		throughput_file_steps(a, f, put_perf_step, out);
		if (write_launch(out, a, f) != 0 || partial_write_nvtx(out, a, f) != 0 ||
		    partial_write_unions(out, a, f) != 0 ||
		    partial_advice_write(out, a, &wa->gu, f) != 0 ||
		    partial_write_samples(out, a, f) != 0 || partial_write_flops(out, a, f) != 0)
			return OPSCOPE_ENOMEM;
	}
	fprintf(out, "end\t%" PRIu32 "\n", m->nfiles);
	return ferror(out) ? -1 : 0;
}

int partial_write(FILE *out, const struct analysis *a, const char *const *inputs, size_t ninputs)
{
	struct write_an wa;
	if (gpu_time_analyze(a, &wa.gt) != 0)
		return OPSCOPE_ENOMEM;
	if (gpu_util_analyze(a, &wa.gu) != 0) {
		gpu_time_free(&wa.gt);
		return OPSCOPE_ENOMEM;
	}
	if (gpu_queue_analyze(a, &wa.gq) != 0) {
		gpu_time_free(&wa.gt);
		gpu_util_free(&wa.gu);
		return OPSCOPE_ENOMEM;
	}
	if (gpu_mem_analyze(a, &wa.gm) != 0) {
		gpu_time_free(&wa.gt);
		gpu_util_free(&wa.gu);
		gpu_queue_free(&wa.gq);
		return OPSCOPE_ENOMEM;
	}
	int rc = write_files(out, a, &wa, inputs, ninputs);
	gpu_mem_free(&wa.gm);
	gpu_time_free(&wa.gt);
	gpu_util_free(&wa.gu);
	gpu_queue_free(&wa.gq);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading */

/* s (up to its NUL, at most size - 1 bytes) with every control byte as '?': a name from a
 * partial put in a one-line message stays one line. */
const char *partial_printable(const char *s, char *buf, size_t size)
{
	size_t n = 0;
	for (; s[n] && n + 1 < size; n++)
		buf[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
	buf[n] = '\0';
	return buf;
}

int partial_fail(struct reader *r, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errsize, "%s: offset %" PRIu64 ": %s", r->path, r->offset, what);
	return -1;
}

int partial_oom(struct reader *r)
{
	r->oom = true;
	return partial_fail(r, "out of memory");
}

/* Split a record at tabs into r->f (no more than PARTIAL_FIELDS). */
static int split(struct reader *r, char *line, size_t len)
{
	r->nf = 0;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && line[i] != '\t')
			continue;
		if (r->nf == PARTIAL_FIELDS)
			return partial_fail(r, "more than %d fields", PARTIAL_FIELDS);
		line[i] = '\0';
		r->f[r->nf] = line + start;
		r->flen[r->nf] = i - start;
		r->nf++;
		start = i + 1;
	}
	return 0;
}

/* Field i as a string: *s and *n its bytes (unescaped in place), *none for `-`. */
int partial_field_str(struct reader *r, int i, const char **s, size_t *n, bool *none)
{
	char *p = r->f[i];
	size_t len = r->flen[i];
	if (len == 1 && p[0] == '-') {
		*none = true;
		*s = "";
		*n = 0;
		return 0;
	}
	if (len == 0 || p[0] != '=')
		return partial_fail(r, "field %d: not a string (- or =...)", i + 1);
	*none = false;
	size_t w = 0;
	for (size_t k = 1; k < len; k++) {
		char c = p[k];
		if (c == '\\') {
			if (++k == len)
				return partial_fail(r, "field %d: a \\ at its end", i + 1);
			switch (p[k]) {
			case '\\':
				c = '\\';
				break;
			case 't':
				c = '\t';
				break;
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case '0':
				c = '\0';
				break;
			default:
				return partial_fail(r, "field %d: unknown escape \\%c", i + 1,
						    p[k]);
			}
		}
		p[w++] = c;
	}
	p[w] = '\0'; /* w < len: the '=' was one byte */
	*s = p;
	*n = w;
	return 0;
}

/* Field i as a string id of the set's model; 0 for `-` unless `required`. */
int partial_field_id(struct reader *r, int i, bool required, uint32_t *id)
{
	const char *s = "";
	size_t n = 0;
	bool none = true; /* set by field_str; initialized for the compiler's sake */
	if (partial_field_str(r, i, &s, &n, &none) != 0)
		return -1;
	if (none) {
		if (required)
			return partial_fail(r, "field %d: a string is required, not -", i + 1);
		*id = 0;
		return 0;
	}
	*id = model_intern(r->ps->m, s, n);
	if (r->ps->m->oom)
		return partial_oom(r);
	return 0;
}

/* The decimal digits of p (one at least, nothing after them) as a number no greater than
 * max: true and *v, else false. What strtoull takes without its leading blanks and sign; by
 * hand, as strtoll was a fifth of the time of reading a thousand partials. */
static bool parse_digits(const char *p, uint64_t max, uint64_t *v)
{
	if (*p < '0' || *p > '9')
		return false;
	uint64_t x = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (x > (max - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return *p == '\0';
}

int partial_field_i64(struct reader *r, int i, int64_t lo, int64_t hi, int64_t *v)
{
	const char *p = r->f[i];
	bool neg = *p == '-';
	uint64_t u;
	/* -2^63 .. 2^63 - 1, as strtoll reads without ERANGE */
	if (!parse_digits(p + neg, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &u))
		return partial_fail(r, "field %d: not an integer", i + 1);
	int64_t x = !neg ? (int64_t)u : u > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)u;
	if (x < lo || x > hi)
		return partial_fail(r, "field %d: %lld is out of range", i + 1, (long long)x);
	*v = x;
	return 0;
}

int partial_field_u64(struct reader *r, int i, uint64_t *v)
{
	if (!parse_digits(r->f[i], UINT64_MAX, v))
		return partial_fail(r, "field %d: not a count", i + 1);
	return 0;
}

/* Does the record have exactly n fields (its tag included)? */
int partial_want_fields(struct reader *r, int n)
{
	if (r->nf != n)
		return partial_fail(r, "%s record: %d fields, %d expected", r->f[0], r->nf, n);
	return 0;
}

/* Grow *v (of *cap entries of size sz) to hold n + 1. */
int partial_grow(struct reader *r, void **v, uint32_t *cap, uint32_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	if (n >= UINT32_MAX / 2)
		return partial_fail(r, "too many records");
	uint32_t nc = *cap ? *cap * 2 : 16;
	void *nv = realloc(*v, (size_t)nc * sz);
	if (!nv)
		return partial_oom(r);
	*v = nv;
	*cap = nc;
	return 0;
}

int partial_marker(struct reader *r, bool *seen)
{
	if (partial_want_fields(r, 1))
		return -1;
	if (*seen)
		return partial_fail(r, "a second %s record for the file", r->f[0]);
	*seen = true;
	return 0;
}

static int rec_input(struct reader *r)
{
	const char *s;
	size_t n;
	bool none;
	if (partial_want_fields(r, 2) || partial_field_str(r, 1, &s, &n, &none))
		return -1;
	struct partial_set *ps = r->ps;
	if (ps->ninputs == ps->inputs_cap) {
		size_t nc = ps->inputs_cap ? ps->inputs_cap * 2 : 16;
		char **nv = realloc(ps->inputs, nc * sizeof(*nv));
		if (!nv)
			return partial_oom(r);
		ps->inputs = nv;
		ps->inputs_cap = nc;
	}
	char *copy = malloc(n + 1);
	if (!copy)
		return partial_oom(r);
	memcpy(copy, s, n);
	copy[n] = '\0';
	ps->inputs[ps->ninputs++] = copy;
	return 0;
}

static int rec_file(struct reader *r)
{
	struct partial_set *ps = r->ps;
	if (partial_want_fields(r, 8) ||
	    partial_grow(r, (void **)&ps->files, &ps->files_cap, ps->nfiles, sizeof(*ps->files)))
		return -1;
	struct partial_file *pf = &ps->files[ps->nfiles];
	memset(pf, 0, sizeof(*pf));
	pf->ranks.rank = -1;
	pf->ranks.world_size = -1;
	pf->source = ps->nsources;
	pf->offset = r->offset;
	int64_t complete;
	if (partial_field_id(r, 1, true, &pf->path) || partial_field_id(r, 2, true, &pf->format) ||
	    partial_field_u64(r, 3, &pf->events) || partial_field_u64(r, 4, &pf->dropped) ||
	    partial_field_u64(r, 5, &pf->discarded_bytes) ||
	    partial_field_i64(r, 6, 0, 1, &complete) ||
	    partial_field_id(r, 7, false, &pf->tail_msg))
		return -1;
	pf->complete = complete == 1;
	ps->nfiles++;
	r->cur = pf;
	r->kern_cap = r->steps_cap = r->colls_cap = r->ops_cap = r->nv_cap = r->sr_cap = 0;
	r->gt_cap = r->gs_cap = r->ut_cap = r->us_cap = r->ub_cap = r->lr_cap = 0;
	r->qt_cap = r->qb_cap = r->md_cap = r->mb_cap = r->h_cap = r->mo_cap = r->pt_cap = 0;
	r->nxd_cap = 0;
	r->nx_item = false;
	r->saf_cap = r->sae_cap = 0;
	return 0;
}

static int rec_rank(struct reader *r)
{
	int64_t rank, ws;
	if (partial_want_fields(r, 4) || partial_field_i64(r, 1, -1, INT32_MAX, &rank) ||
	    partial_field_id(r, 2, false, &r->cur->ranks.host) ||
	    partial_field_i64(r, 3, -1, INT32_MAX, &ws))
		return -1;
	if (ws == 0)
		return partial_fail(r, "field 4: a world size of 0");
	r->cur->ranks.rank = (int32_t)rank;
	r->cur->ranks.world_size = (int32_t)ws;
	return 0;
}

static int rec_dist(struct reader *r)
{
	int64_t has;
	struct distributed *d = &r->cur->ranks.dist;
	if (partial_want_fields(r, 5) || partial_field_i64(r, 1, 0, 1, &has) ||
	    partial_field_i64(r, 2, 0, PARTIAL_TIME_MAX, &d->communication_ns) ||
	    partial_field_i64(r, 3, 0, PARTIAL_TIME_MAX, &d->computation_ns) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &d->overlap_ns))
		return -1;
	d->has_communication = has == 1;
	return 0;
}

static int rec_step(struct reader *r)
{
	struct ranks_file *rf = &r->cur->ranks;
	if (partial_want_fields(r, 7) ||
	    partial_grow(r, (void **)&rf->steps, &r->steps_cap, rf->nsteps, sizeof(*rf->steps)))
		return -1;
	struct ranks_steprow *s = &rf->steps[rf->nsteps];
	if (partial_field_id(r, 1, false, &s->name) ||
	    partial_field_i64(r, 2, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &s->start_ns) ||
	    partial_field_i64(r, 3, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &s->end_ns) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &s->compute_ns) ||
	    partial_field_i64(r, 5, 0, PARTIAL_TIME_MAX, &s->comm_ns) ||
	    partial_field_i64(r, 6, 0, PARTIAL_TIME_MAX, &s->gap_ns))
		return -1;
	if (s->end_ns < s->start_ns)
		return partial_fail(r, "step ends before it starts");
	/* the partition and the data wait are of [start, end) */
	if (s->compute_ns > s->end_ns - s->start_ns || s->comm_ns > s->end_ns - s->start_ns ||
	    s->gap_ns > s->end_ns - s->start_ns)
		return partial_fail(
			r, "step: its compute, communication or data wait exceeds the step");
	rf->nsteps++;
	return 0;
}

static int rec_coll(struct reader *r)
{
	struct ranks_file *rf = &r->cur->ranks;
	if (partial_want_fields(r, 8) || partial_grow(r, (void **)&rf->kernels, &r->colls_cap,
						      rf->nkernels, sizeof(*rf->kernels)))
		return -1;
	struct ranks_kernel *k = &rf->kernels[rf->nkernels];
	int64_t seq, group;
	const char *op;
	size_t oplen;
	bool none;
	if (partial_field_id(r, 1, true, &k->name) ||
	    partial_field_i64(r, 2, 0, UINT32_MAX, &seq) ||
	    partial_field_i64(r, 3, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &k->s) ||
	    partial_field_i64(r, 4, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &k->e) ||
	    partial_field_str(r, 5, &op, &oplen, &none) ||
	    partial_field_i64(r, 6, -1, INT32_MAX, &group) ||
	    partial_field_i64(r, 7, -1, PARTIAL_TIME_MAX, &k->bytes))
		return -1;
	/* the op as ranks.h names it (a static string), or "" */
	k->op = ranks_coll_op(op);
	if (none || strlen(op) != oplen || strcmp(k->op, op) != 0)
		return partial_fail(r, "field 6: '%s' is not a collective op",
				    partial_printable(op, (char[33]){ 0 }, 33));
	if (k->e < k->s)
		return partial_fail(r, "collective ends before it starts");
	if (group == 0)
		return partial_fail(r, "field 7: a group of 0 ranks");
	k->seq = (uint32_t)seq;
	k->group = (int32_t)group;
	rf->nkernels++;
	return 0;
}

static int rec_kernels(struct reader *r)
{
	return partial_want_fields(r, 2) ||
			       partial_field_i64(r, 1, 0, PARTIAL_TIME_MAX, &r->cur->kern_ns)
		       ? -1
		       : 0;
}

static int rec_k(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (partial_want_fields(r, 6) ||
	    partial_grow(r, (void **)&pf->kern, &r->kern_cap, pf->nkern, sizeof(*pf->kern)))
		return -1;
	struct agg_item *it = &pf->kern[pf->nkern];
	memset(it, 0, sizeof(*it)); /* kernels have no CPU time: 0 as agg_kernels counts it */
	int64_t calls;
	if (partial_field_id(r, 1, true, &it->name) ||
	    partial_field_i64(r, 2, 1, PARTIAL_TIME_MAX, &calls) ||
	    partial_field_i64(r, 3, 0, PARTIAL_TIME_MAX, &it->gpu_ns) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &it->gpu_max_ns) ||
	    partial_field_i64(r, 5, 0, PARTIAL_TIME_MAX, &it->gpu_min_ns))
		return -1;
	it->calls = (uint64_t)calls;
	if (it->gpu_min_ns > it->gpu_max_ns || it->gpu_max_ns > it->gpu_ns)
		return partial_fail(r, "kernel record: its min, max and total do not fit together");
	/* the file's total is the sum of its names' totals: what bounds the merged sums */
	if (__builtin_add_overflow(pf->kern_sum, it->gpu_ns, &pf->kern_sum) ||
	    pf->kern_sum > pf->kern_ns)
		return partial_fail(r, "kernel record: the names' totals exceed the kernels' sum");
	pf->nkern++;
	return 0;
}

static int rec_nvprof(struct reader *r)
{
	struct partial_file *pf = r->cur;
	return partial_want_fields(r, 3) ||
			       partial_field_i64(r, 1, 0, PARTIAL_TIME_MAX, &pf->nv_sum[0]) ||
			       partial_field_i64(r, 2, 0, PARTIAL_TIME_MAX, &pf->nv_sum[1])
		       ? -1
		       : 0;
}

static int rec_n(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (partial_want_fields(r, 7) ||
	    partial_grow(r, (void **)&pf->nv, &r->nv_cap, pf->nnv, sizeof(*pf->nv)))
		return -1;
	struct agg_item *it = &pf->nv[pf->nnv];
	memset(it, 0, sizeof(*it));
	int64_t kind, key, calls;
	if (partial_field_i64(r, 1, AGG_NVPROF_GPU, AGG_NVPROF_COPY, &kind))
		return -1;
	if (kind == AGG_NVPROF_COPY) {
		if (partial_field_i64(r, 2, 1, AGG_NVPROF_COPY_KEYS, &key))
			return -1;
		it->name = (uint32_t)key;
	} else if (partial_field_id(r, 2, true, &it->name)) {
		return -1;
	}
	if (partial_field_i64(r, 3, 1, PARTIAL_TIME_MAX, &calls) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &it->gpu_ns) ||
	    partial_field_i64(r, 5, 0, PARTIAL_TIME_MAX, &it->gpu_max_ns) ||
	    partial_field_i64(r, 6, 0, PARTIAL_TIME_MAX, &it->gpu_min_ns))
		return -1;
	if (it->gpu_min_ns > it->gpu_max_ns || it->gpu_max_ns > it->gpu_ns)
		return partial_fail(r, "nvprof record: its min, max and total do not fit together");
	/* each side's totals are bounded by that side's sum: what bounds the merged sums */
	int side = kind == AGG_NVPROF_API;
	if (__builtin_add_overflow(pf->nv_seen[side], it->gpu_ns, &pf->nv_seen[side]) ||
	    pf->nv_seen[side] > pf->nv_sum[side])
		return partial_fail(r, "nvprof record: the names' totals exceed their side's sum");
	it->kind = (uint8_t)kind;
	it->calls = (uint64_t)calls;
	pf->nnv++;
	return 0;
}

static int rec_o(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (partial_want_fields(r, 12) ||
	    partial_grow(r, (void **)&pf->ops, &r->ops_cap, pf->nops, sizeof(*pf->ops)))
		return -1;
	struct agg_item *it = &pf->ops[pf->nops];
	memset(it, 0, sizeof(*it));
	int64_t parent, kind, calls;
	if (partial_field_i64(r, 1, -1, (int64_t)pf->nops - 1, &parent) ||
	    partial_field_i64(r, 2, AGG_KIND_RANGE, AGG_KIND_KERNEL, &kind) ||
	    partial_field_id(r, 3, true, &it->name) ||
	    partial_field_i64(r, 4, 1, PARTIAL_TIME_MAX, &calls) ||
	    partial_field_i64(r, 5, 0, PARTIAL_TIME_MAX, &it->cpu_ns) ||
	    partial_field_i64(r, 6, 0, PARTIAL_TIME_MAX, &it->cpu_max_ns) ||
	    partial_field_i64(r, 7, 0, PARTIAL_TIME_MAX, &it->cpu_min_ns) ||
	    partial_field_i64(r, 8, 0, PARTIAL_TIME_MAX, &it->gpu_ns) ||
	    partial_field_i64(r, 9, 0, PARTIAL_TIME_MAX, &it->gpu_max_ns) ||
	    partial_field_i64(r, 10, 0, PARTIAL_TIME_MAX, &it->gpu_min_ns) ||
	    partial_field_i64(r, 11, -PARTIAL_TIME_MAX, PARTIAL_TIME_MAX, &it->self_ns))
		return -1;
	/* the shape agg_host_ranges makes: operators at the top, their inner phases under
	 * them, kernels under either */
	uint8_t pk = parent < 0 ? 0 : pf->ops[parent].kind;
	bool shape = parent < 0		       ? kind == AGG_KIND_RANGE
		     : kind == AGG_KIND_INNER  ? pk == AGG_KIND_RANGE
		     : kind == AGG_KIND_KERNEL ? pk != AGG_KIND_KERNEL
					       : false;
	if (!shape)
		return partial_fail(r, "operator record: a kind %lld item under a kind %d one",
				    (long long)kind, parent < 0 ? -1 : pk);
	if (it->cpu_min_ns > it->cpu_max_ns || it->cpu_max_ns > it->cpu_ns ||
	    it->gpu_min_ns > it->gpu_max_ns || it->gpu_max_ns > it->gpu_ns)
		return partial_fail(r,
				    "operator record: its min, max and total do not fit together");
	it->parent = parent < 0 ? AGG_NONE : (uint32_t)parent;
	it->kind = (uint8_t)kind;
	it->calls = (uint64_t)calls;
	pf->nops++;
	return 0;
}

static int rec_sv(struct reader *r)
{
	struct partial_file *pf = r->cur;
	int64_t dropped;
	if (partial_want_fields(r, 2) || partial_field_i64(r, 1, 0, UINT32_MAX, &dropped))
		return -1;
	if (pf->has_steps)
		return partial_fail(r, "a second sv record for the file");
	pf->has_steps = true;
	pf->steps.dropped = (uint32_t)dropped;
	return 0;
}

static int rec_sr(struct reader *r)
{
	struct partial_file *pf = r->cur;
	struct step_table *st = &pf->steps;
	if (!pf->has_steps)
		return partial_fail(r, "sr record before the file's sv record");
	if (partial_want_fields(r, 17) ||
	    partial_grow(r, (void **)&st->rows, &r->sr_cap, st->nrows, sizeof(*st->rows)))
		return -1;
	struct step_row *row = &st->rows[st->nrows];
	memset(row, 0, sizeof(*row));
	if (partial_field_id(r, 1, false, &row->name) ||
	    partial_field_i64(r, 2, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &row->start_ns) ||
	    partial_field_i64(r, 3, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &row->end_ns))
		return -1;
	if (row->end_ns < row->start_ns)
		return partial_fail(r, "step ends before it starts");
	/* the parts of the step (the partition, the data wait, compute, tail and drain) are
	 * within it: so the average's sums are bounded by the sum of the durations */
	int64_t dur = row->end_ns - row->start_ns, events;
	int64_t *part[STEP_NROLES + 4];
	for (int q = 0; q < STEP_NROLES; q++)
		part[q] = &row->role_ns[q];
	part[STEP_NROLES] = &row->gap_ns;
	part[STEP_NROLES + 1] = &row->compute_ns;
	part[STEP_NROLES + 2] = &row->tail_ns;
	part[STEP_NROLES + 3] = &row->drain_ns;
	for (int q = 0; q < STEP_NROLES + 4; q++)
		if (partial_field_i64(r, 4 + q, 0, dur, part[q]))
			return -1;
	if (partial_field_i64(r, 16, 0, PARTIAL_TIME_MAX, &events))
		return -1;
	row->gpu_events = (uint64_t)events;
	row->host_start_ns = row->start_ns; /* not shown by the step view */
	row->host_end_ns = row->end_ns;
	if (__builtin_add_overflow(pf->steps_dur, dur, &pf->steps_dur) ||
	    __builtin_add_overflow(pf->steps_events, events, &pf->steps_events) ||
	    pf->steps_dur > PARTIAL_TIME_MAX || pf->steps_events > PARTIAL_TIME_MAX)
		return partial_fail(
			r, "step rows: their durations or GPU events sum to more than 2^62");
	st->nrows++;
	return 0;
}

static int rec_gv(struct reader *r)
{
	return partial_marker(r, &r->cur->has_gputime);
}

/* Fields i.. as a span of the GPU time breakdown: start, end, 8 parts that sum to its length,
 * 8 gap counts. */
static int field_gspan(struct reader *r, int i, struct gpu_time_span *sp)
{
	if (partial_field_i64(r, i, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &sp->s) ||
	    partial_field_i64(r, i + 1, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &sp->e))
		return -1;
	if (sp->e < sp->s)
		return partial_fail(r, "GPU time span ends before it starts");
	int64_t len = sp->e - sp->s, sum = 0, gaps;
	for (int p = 0; p < GPU_TIME_NPARTS; p++) {
		if (partial_field_i64(r, i + 2 + p, 0, len, &sp->part[p]))
			return -1;
		if (__builtin_add_overflow(sum, sp->part[p], &sum) || sum > len)
			break;
	}
	if (sum != len)
		return partial_fail(r, "GPU time span: its parts do not sum to its length");
	for (int p = 0; p < GPU_TIME_NPARTS; p++) {
		if (partial_field_i64(r, i + 2 + GPU_TIME_NPARTS + p, 0, PARTIAL_TIME_MAX, &gaps))
			return -1;
		sp->gaps[p] = (uint64_t)gaps;
	}
	return 0;
}

static int rec_gt(struct reader *r)
{
	struct gpu_time *gt = &r->cur->gputime;
	if (!r->cur->has_gputime)
		return partial_fail(r, "gt record before the file's gv record");
	if (partial_want_fields(r, 20) ||
	    partial_grow(r, (void **)&gt->dev, &r->gt_cap, gt->ndev, sizeof(*gt->dev)))
		return -1;
	struct gpu_time_device *g = &gt->dev[gt->ndev];
	memset(g, 0, sizeof(*g));
	int64_t dev;
	if (partial_field_i64(r, 1, 0, UINT32_MAX, &dev) || field_gspan(r, 2, &g->window))
		return -1;
	g->device = (uint32_t)dev;
	gt->ndev++;
	r->gs_cap = 0;
	return 0;
}

static int rec_gs(struct reader *r)
{
	struct gpu_time *gt = &r->cur->gputime;
	if (!gt->ndev)
		return partial_fail(r, "gs record before the file's first gt record");
	struct gpu_time_device *g = &gt->dev[gt->ndev - 1];
	if (partial_want_fields(r, 20) ||
	    partial_grow(r, (void **)&g->steps, &r->gs_cap, g->nsteps, sizeof(*g->steps)))
		return -1;
	struct gpu_time_span *sp = &g->steps[g->nsteps];
	memset(sp, 0, sizeof(*sp));
	if (partial_field_id(r, 1, false, &sp->name) || field_gspan(r, 2, sp))
		return -1;
	g->nsteps++;
	return 0;
}

static int rec_uv(struct reader *r)
{
	return partial_marker(r, &r->cur->has_gpu);
}

/* Fields i..i+5 as a span of the GPU utilization: start, end, kernel busy and device busy
 * (within the span), the SM integral (a finite double in [0, 2^62]), kernels. */
static int field_uspan(struct reader *r, int i, struct gpu_util_span *sp)
{
	int64_t kernels;
	if (partial_field_i64(r, i, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &sp->s) ||
	    partial_field_i64(r, i + 1, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &sp->e))
		return -1;
	if (sp->e < sp->s)
		return partial_fail(r, "GPU utilization span ends before it starts");
	if (partial_field_i64(r, i + 2, 0, sp->e - sp->s, &sp->kernel_ns) ||
	    partial_field_i64(r, i + 3, 0, sp->e - sp->s, &sp->work_ns) ||
	    partial_field_i64(r, i + 5, 0, PARTIAL_TIME_MAX, &kernels))
		return -1;
	const char *p = r->f[i + 4];
	char *end;
	errno = 0;
	double v = strtod(p, &end);
	/* !(v >= 0) catches NaN too */
	if (!*p || *end || errno == ERANGE || !(v >= 0) || v > (double)PARTIAL_TIME_MAX)
		return partial_fail(r, "field %d: not a number in [0, 2^62]", i + 5);
	sp->sm_eff_ns = v;
	sp->kernels = (uint64_t)kernels;
	return 0;
}

static int rec_ut(struct reader *r)
{
	struct gpu_util *u = &r->cur->gpu;
	if (!r->cur->has_gpu)
		return partial_fail(r, "ut record before the file's uv record");
	if (partial_want_fields(r, 13) ||
	    partial_grow(r, (void **)&u->dev, &r->ut_cap, u->ndev, sizeof(*u->dev)))
		return -1;
	struct gpu_util_device *g = &u->dev[u->ndev];
	memset(g, 0, sizeof(*g));
	int64_t dev, sms, known, kernels, kernels_sm;
	if (partial_field_i64(r, 1, 0, UINT32_MAX, &dev) ||
	    partial_field_i64(r, 2, 0, UINT32_MAX, &sms) || partial_field_i64(r, 3, 0, 1, &known) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &kernels) ||
	    partial_field_i64(r, 5, 0, kernels, &kernels_sm) ||
	    partial_field_i64(r, 6, 0, PARTIAL_TIME_MAX, &g->bucket_ns) ||
	    field_uspan(r, 7, &g->window))
		return -1;
	g->device = (uint32_t)dev;
	g->sm_count = (uint32_t)sms;
	g->sm_known = known == 1;
	g->kernels = (uint64_t)kernels;
	g->kernels_sm = (uint64_t)kernels_sm;
	u->ndev++;
	r->us_cap = r->ub_cap = 0;
	return 0;
}

/* A us (step) or ub (bucket) record: a span of the file's last device. */
static int rec_uspan(struct reader *r, bool bucket)
{
	struct gpu_util *u = &r->cur->gpu;
	if (!u->ndev)
		return partial_fail(r, "%s record before the file's first ut record", r->f[0]);
	struct gpu_util_device *g = &u->dev[u->ndev - 1];
	struct gpu_util_span **v = bucket ? &g->buckets : &g->steps;
	uint32_t *n = bucket ? &g->nbuckets : &g->nsteps;
	if (bucket && *n == GPU_UTIL_MAX_BUCKETS)
		return partial_fail(r, "more than %d buckets for a device", GPU_UTIL_MAX_BUCKETS);
	if (partial_want_fields(r, bucket ? 7 : 8) ||
	    partial_grow(r, (void **)v, bucket ? &r->ub_cap : &r->us_cap, *n, sizeof(**v)))
		return -1;
	struct gpu_util_span *sp = &(*v)[*n];
	memset(sp, 0, sizeof(*sp));
	if ((!bucket && partial_field_id(r, 1, false, &sp->name)) ||
	    field_uspan(r, bucket ? 1 : 2, sp))
		return -1;
	(*n)++;
	return 0;
}

static int rec_us(struct reader *r)
{
	return rec_uspan(r, false);
}

static int rec_ub(struct reader *r)
{
	return rec_uspan(r, true);
}

static int rec_lv(struct reader *r)
{
	int64_t n;
	if (partial_want_fields(r, 2) || partial_field_i64(r, 1, 0, PARTIAL_TIME_MAX, &n))
		return -1;
	if (r->cur->has_launch)
		return partial_fail(r, "a second lv record for the file");
	r->cur->has_launch = true;
	r->cur->launch.unlaunched = (uint64_t)n;
	return 0;
}

static int rec_lr(struct reader *r)
{
	struct gpu_launch *l = &r->cur->launch;
	if (!r->cur->has_launch)
		return partial_fail(r, "lr record before the file's lv record");
	if (partial_want_fields(r, 13) ||
	    partial_grow(r, (void **)&l->rows, &r->lr_cap, l->nrows, sizeof(*l->rows)))
		return -1;
	struct gpu_launch_row *x = &l->rows[l->nrows];
	memset(x, 0, sizeof(*x));
	int64_t cat, count, n[4];
	if (partial_field_id(r, 1, false, &x->name) ||
	    partial_field_i64(r, 2, 0, UINT8_MAX, &cat) ||
	    partial_field_i64(r, 3, 1, PARTIAL_TIME_MAX, &count) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &x->cpu_sum_ns) ||
	    partial_field_i64(r, 5, 0, x->cpu_sum_ns, &x->cpu_max_ns) ||
	    partial_field_i64(r, 6, 0, PARTIAL_TIME_MAX, &x->delay_sum_ns) ||
	    partial_field_i64(r, 7, 0, x->delay_sum_ns, &x->delay_max_ns) ||
	    partial_field_i64(r, 8, 0, PARTIAL_TIME_MAX, &x->gpu_sum_ns))
		return -1;
	/* the short ops and outliers are some of the ops */
	for (int k = 0; k < 4; k++)
		if (partial_field_i64(r, 9 + k, 0, count, &n[k]))
			return -1;
	x->category = (uint8_t)cat;
	x->count = (uint64_t)count;
	x->short_ops = (uint64_t)n[0];
	x->shorter = (uint64_t)n[1];
	x->cpu_outliers = (uint64_t)n[2];
	x->delay_outliers = (uint64_t)n[3];
	l->nrows++;
	return 0;
}

static int rec_qv(struct reader *r)
{
	return partial_marker(r, &r->cur->has_queue);
}

/* Fields i..i+4 as a span of a stream's queue: start, end, max, the integral of the queue
 * length (ops x ns), the time full (within the span). */
static int field_qspan(struct reader *r, int i, struct gpu_queue_span *sp)
{
	int64_t max;
	if (partial_field_i64(r, i, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &sp->s) ||
	    partial_field_i64(r, i + 1, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &sp->e))
		return -1;
	if (sp->e < sp->s)
		return partial_fail(r, "queue span ends before it starts");
	if (partial_field_i64(r, i + 2, 0, UINT32_MAX, &max) ||
	    partial_field_i64(r, i + 3, 0, INT64_MAX, &sp->queued_ns) ||
	    partial_field_i64(r, i + 4, 0, sp->e - sp->s, &sp->full_ns))
		return -1;
	sp->max = (uint32_t)max;
	return 0;
}

static int rec_qt(struct reader *r)
{
	struct gpu_queue *q = &r->cur->queue;
	if (!r->cur->has_queue)
		return partial_fail(r, "qt record before the file's qv record");
	if (partial_want_fields(r, 11) ||
	    partial_grow(r, (void **)&q->st, &r->qt_cap, q->nst, sizeof(*q->st)))
		return -1;
	struct gpu_queue_stream *st = &q->st[q->nst];
	memset(st, 0, sizeof(*st));
	int64_t dev, ops;
	if (partial_field_i64(r, 1, 0, UINT32_MAX, &dev) || partial_field_u64(r, 2, &st->stream) ||
	    partial_field_id(r, 3, false, &st->name) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &ops) ||
	    partial_field_i64(r, 5, 0, PARTIAL_TIME_MAX, &st->bucket_ns) ||
	    field_qspan(r, 6, &st->window))
		return -1;
	st->device = (uint32_t)dev;
	st->ops = (uint64_t)ops;
	q->nst++;
	r->qb_cap = 0;
	return 0;
}

static int rec_qb(struct reader *r)
{
	struct gpu_queue *q = &r->cur->queue;
	if (!q->nst)
		return partial_fail(r, "qb record before the file's first qt record");
	struct gpu_queue_stream *st = &q->st[q->nst - 1];
	if (st->nbuckets == GPU_UTIL_MAX_BUCKETS)
		return partial_fail(r, "more than %d buckets for a stream", GPU_UTIL_MAX_BUCKETS);
	if (partial_want_fields(r, 6) ||
	    partial_grow(r, (void **)&st->buckets, &r->qb_cap, st->nbuckets, sizeof(*st->buckets)))
		return -1;
	struct gpu_queue_span *sp = &st->buckets[st->nbuckets];
	memset(sp, 0, sizeof(*sp));
	if (field_qspan(r, 1, sp))
		return -1;
	st->nbuckets++;
	return 0;
}

static int rec_mv(struct reader *r)
{
	return partial_marker(r, &r->cur->has_gpumem);
}

static int rec_md(struct reader *r)
{
	struct gpu_mem *gm = &r->cur->gpumem;
	if (!r->cur->has_gpumem)
		return partial_fail(r, "md record before the file's mv record");
	if (partial_want_fields(r, 17) ||
	    partial_grow(r, (void **)&gm->dev, &r->md_cap, gm->ndev, sizeof(*gm->dev)))
		return -1;
	struct gpu_mem_device *g = &gm->dev[gm->ndev];
	memset(g, 0, sizeof(*g));
	int64_t dev, allocs, frees, totals, addresses, nf;
	if (partial_field_i64(r, 1, 0, UINT32_MAX, &dev) ||
	    partial_field_i64(r, 2, 0, PARTIAL_TIME_MAX, &allocs) ||
	    partial_field_i64(r, 3, 0, PARTIAL_TIME_MAX, &frees) ||
	    partial_field_i64(r, 4, 0, PARTIAL_BYTES_MAX, &g->alloc_bytes) ||
	    partial_field_i64(r, 5, 0, PARTIAL_BYTES_MAX, &g->free_bytes) ||
	    partial_field_i64(r, 6, 0, 1, &totals) || partial_field_i64(r, 7, 0, 1, &addresses) ||
	    partial_field_i64(r, 8, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &g->first_ns) ||
	    partial_field_i64(r, 9, g->first_ns, PARTIAL_STAMP_MAX, &g->last_ns) ||
	    partial_field_i64(r, 10, -PARTIAL_BYTES_MAX, PARTIAL_BYTES_MAX, &g->start_bytes) ||
	    partial_field_i64(r, 11, -PARTIAL_BYTES_MAX, PARTIAL_BYTES_MAX, &g->end_bytes) ||
	    partial_field_i64(r, 12, -PARTIAL_BYTES_MAX, PARTIAL_BYTES_MAX, &g->peak_bytes) ||
	    partial_field_i64(r, 13, g->first_ns, g->last_ns, &g->peak_ns) ||
	    partial_field_i64(r, 14, 0, allocs, &nf) ||
	    partial_field_i64(r, 15, 0, PARTIAL_BYTES_MAX, &g->never_freed_bytes) ||
	    partial_field_i64(r, 16, 0, PARTIAL_TIME_MAX, &g->bucket_ns))
		return -1;
	g->device = (uint32_t)dev;
	g->allocs = (uint64_t)allocs;
	g->frees = (uint64_t)frees;
	g->totals = totals == 1;
	g->addresses = addresses == 1;
	g->never_freed = (uint64_t)nf;
	gm->ndev++;
	r->mb_cap = 0;
	return 0;
}

static int rec_ml(struct reader *r)
{
	struct gpu_mem *gm = &r->cur->gpumem;
	if (!gm->ndev)
		return partial_fail(r, "ml record before the file's first md record");
	struct gpu_mem_device *g = &gm->dev[gm->ndev - 1];
	int64_t list;
	if (partial_want_fields(r, 7) || partial_field_i64(r, 1, 0, 1, &list))
		return -1;
	uint32_t *n = list ? &g->nleaks : &g->nlargest;
	if (*n == GPU_MEM_TOP)
		return partial_fail(r, "more than %d allocations in a list of a device",
				    GPU_MEM_TOP);
	struct gpu_mem_alloc *al = list ? &g->leaks[*n] : &g->largest[*n];
	memset(al, 0, sizeof(*al));
	if (partial_field_i64(r, 2, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &al->ts_ns) ||
	    partial_field_i64(r, 3, 0, PARTIAL_BYTES_MAX, &al->bytes))
		return -1;
	if (strcmp(r->f[4], "-") == 0)
		al->freed_ns = INT64_MIN; /* not freed in the trace */
	else if (partial_field_i64(r, 4, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &al->freed_ns))
		return -1;
	if (partial_field_u64(r, 5, &al->address) || partial_field_id(r, 6, false, &al->launcher))
		return -1;
	(*n)++;
	return 0;
}

static int rec_mb(struct reader *r)
{
	struct gpu_mem *gm = &r->cur->gpumem;
	if (!gm->ndev)
		return partial_fail(r, "mb record before the file's first md record");
	struct gpu_mem_device *g = &gm->dev[gm->ndev - 1];
	if (g->nbuckets == GPU_UTIL_MAX_BUCKETS)
		return partial_fail(r, "more than %d buckets for a device", GPU_UTIL_MAX_BUCKETS);
	if (partial_want_fields(r, 5) ||
	    partial_grow(r, (void **)&g->buckets, &r->mb_cap, g->nbuckets, sizeof(*g->buckets)))
		return -1;
	struct gpu_mem_bucket *b = &g->buckets[g->nbuckets];
	memset(b, 0, sizeof(*b));
	if (partial_field_i64(r, 1, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &b->s) ||
	    partial_field_i64(r, 2, b->s, PARTIAL_STAMP_MAX, &b->e) ||
	    partial_field_i64(r, 3, -PARTIAL_BYTES_MAX, PARTIAL_BYTES_MAX, &b->end_bytes) ||
	    partial_field_i64(r, 4, -PARTIAL_BYTES_MAX, PARTIAL_BYTES_MAX, &b->max_bytes))
		return -1;
	g->nbuckets++;
	return 0;
}

static int rec_tv(struct reader *r)
{
	struct partial_file *pf = r->cur;
	struct analysis_total *t = &pf->total;
	int64_t span;
	if (partial_want_fields(r, 6) || partial_field_i64(r, 1, 0, 1, &span) ||
	    partial_field_i64(r, 2, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &t->lo) ||
	    partial_field_i64(r, 3, t->lo, PARTIAL_STAMP_MAX, &t->hi) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &t->step_kernel_ns) ||
	    partial_field_i64(r, 5, t->step_kernel_ns, PARTIAL_TIME_MAX, &t->step_device_ns))
		return -1;
	if (pf->has_total)
		return partial_fail(r, "a second tv record for the file");
	if (!span) { /* no host range: as analysis_file_total leaves them */
		t->lo = INT64_MAX;
		t->hi = INT64_MIN;
	}
	pf->has_total = true;
	return 0;
}

static int rec_ti(struct reader *r)
{
	struct partial_file *pf = r->cur;
	int64_t s, e;
	if (!pf->has_total)
		return partial_fail(r, "ti record before the file's tv record");
	if (partial_want_fields(r, 3) ||
	    partial_field_i64(r, 1, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &s) ||
	    partial_field_i64(r, 2, s, PARTIAL_STAMP_MAX, &e))
		return -1;
	ivec_push(&pf->total.steps, s, e);
	return pf->total.steps.oom ? partial_oom(r) : 0;
}

/* Fields i..i+6 of a range record as its calls (at least 1), CPU total, max and min, GPU
 * total, max and min (ns): each maximum within its total, each minimum within its maximum. */
static int field_calls_times(struct reader *r, int i, struct agg_item *it)
{
	int64_t calls;
	if (partial_field_i64(r, i, 1, PARTIAL_TIME_MAX, &calls) ||
	    partial_field_i64(r, i + 1, 0, PARTIAL_TIME_MAX, &it->cpu_ns) ||
	    partial_field_i64(r, i + 2, 0, it->cpu_ns, &it->cpu_max_ns) ||
	    partial_field_i64(r, i + 3, 0, it->cpu_max_ns, &it->cpu_min_ns) ||
	    partial_field_i64(r, i + 4, 0, PARTIAL_TIME_MAX, &it->gpu_ns) ||
	    partial_field_i64(r, i + 5, 0, it->gpu_ns, &it->gpu_max_ns) ||
	    partial_field_i64(r, i + 6, 0, it->gpu_max_ns, &it->gpu_min_ns))
		return -1;
	it->calls = (uint64_t)calls;
	return 0;
}

static int rec_h(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (!pf->has_total)
		return partial_fail(r, "h record before the file's tv record");
	if (partial_want_fields(r, 11) ||
	    partial_grow(r, (void **)&pf->host, &r->h_cap, pf->nhost, sizeof(*pf->host)))
		return -1;
	struct agg_item *it = &pf->host[pf->nhost];
	memset(it, 0, sizeof(*it));
	int64_t sel;
	if (partial_field_i64(r, 1, AGG_USER_DEFINED, AGG_PYTHON_FUNCTIONS, &sel) ||
	    partial_field_id(r, 2, true, &it->name) || field_calls_times(r, 3, it) ||
	    partial_field_i64(r, 10, -PARTIAL_TIME_MAX, PARTIAL_TIME_MAX, &it->self_ns))
		return -1;
	it->parent = AGG_NONE;
	it->kind = (uint8_t)sel; /* which aggregation; merged as AGG_KIND_RANGE */
	pf->nhost++;
	return 0;
}

static int rec_mm(struct reader *r)
{
	return partial_marker(r, &r->cur->has_modules);
}

static int rec_mo(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (!pf->has_modules)
		return partial_fail(r, "mo record before the file's mm record");
	if (partial_want_fields(r, 12) ||
	    partial_grow(r, (void **)&pf->mods, &r->mo_cap, pf->nmods, sizeof(*pf->mods)))
		return -1;
	struct agg_item *it = &pf->mods[pf->nmods];
	memset(it, 0, sizeof(*it));
	int64_t parent;
	if (partial_field_i64(r, 1, -1, (int64_t)pf->nmods - 1, &parent) ||
	    partial_field_id(r, 2, true, &it->name) || field_calls_times(r, 3, it) ||
	    partial_field_i64(r, 10, -PARTIAL_TIME_MAX, PARTIAL_TIME_MAX, &it->self_ns) ||
	    partial_field_i64(r, 11, -PARTIAL_TIME_MAX, PARTIAL_TIME_MAX, &it->gpu_self_ns))
		return -1;
	it->parent = parent < 0 ? AGG_NONE : (uint32_t)parent;
	it->kind = AGG_KIND_RANGE;
	pf->nmods++;
	return 0;
}

static int rec_pv(struct reader *r)
{
	return partial_marker(r, &r->cur->has_perf);
}

static int rec_pt(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (!pf->has_perf)
		return partial_fail(r, "pt record before the file's pv record");
	if (partial_want_fields(r, 4) ||
	    partial_grow(r, (void **)&pf->perf, &r->pt_cap, pf->nperf, sizeof(*pf->perf)))
		return -1;
	int64_t *v = pf->perf[pf->nperf];
	/* a step of some duration; its Dataloader time within it */
	if (partial_field_i64(r, 2, 1, PARTIAL_TIME_MAX, &v[1]) ||
	    partial_field_i64(r, 1, 0, v[1], &v[0]) ||
	    partial_field_i64(r, 3, -PARTIAL_TIME_MAX, PARTIAL_TIME_MAX, &v[2]))
		return -1;
	pf->nperf++;
	return 0;
}

/* One record (split in r->f). *end set by the end record. */
static int record(struct reader *r, bool *end)
{
	const char *tag = r->f[0];
	if (tag[0] == 'i' && strcmp(tag, "input") == 0)
		return r->cur ? partial_fail(r, "input record after a file record") : rec_input(r);
	if (tag[0] == 'f' && strcmp(tag, "file") == 0)
		return rec_file(r);
	if (tag[0] == 'e' && strcmp(tag, "end") == 0) {
		int64_t n;
		if (partial_want_fields(r, 2) || partial_field_i64(r, 1, 0, UINT32_MAX, &n))
			return -1;
		uint32_t mine = 0;
		for (uint32_t i = 0; i < r->ps->nfiles; i++)
			mine += r->ps->files[i].source == r->ps->nsources;
		if ((uint64_t)n != mine)
			return partial_fail(r, "end record says %lld files, %u were read",
					    (long long)n, mine);
		*end = true;
		return 0;
	}
	if (tag[0] == 'a' && tag[1] == 'd') /* the advice view's records: partial_advice.c */
		return r->cur ? partial_advice_record(r)
			      : partial_fail(r, "%s record before any file record",
					     partial_printable(tag, (char[33]){ 0 }, 33));
	static const struct {
		const char *tag;
		int (*fn)(struct reader *r);
	} per_file[] = { { "rank", rec_rank },
			 { "dist", rec_dist },
			 { "step", rec_step },
			 { "coll", rec_coll },
			 { "kernels", rec_kernels },
			 { "k", rec_k },
			 { "o", rec_o },
			 { "nvprof", rec_nvprof },
			 { "n", rec_n },
			 { "sv", rec_sv },
			 { "sr", rec_sr },
			 { "gv", rec_gv },
			 { "gt", rec_gt },
			 { "gs", rec_gs },
			 { "uv", rec_uv },
			 { "ut", rec_ut },
			 { "us", rec_us },
			 { "ub", rec_ub },
			 { "qv", rec_qv },
			 { "qt", rec_qt },
			 { "qb", rec_qb },
			 { "lv", rec_lv },
			 { "lr", rec_lr },
			 { "mv", rec_mv },
			 { "md", rec_md },
			 { "ml", rec_ml },
			 { "mb", rec_mb },
			 { "tv", rec_tv },
			 { "ti", rec_ti },
			 { "h", rec_h },
			 { "mm", rec_mm },
			 { "mo", rec_mo },
			 { "pv", rec_pv },
			 { "pt", rec_pt },
			 { "nxv", partial_rec_nxv },
			 { "nxr", partial_rec_nxr },
			 { "nxd", partial_rec_nxd },
			 { "sa", partial_rec_sa },
			 { "saf", partial_rec_saf },
			 { "sae", partial_rec_sae },
			 { "fl", partial_rec_fl },
			 { "flc", partial_rec_flc },
			 { "flp", partial_rec_flp },
			 { "flr", partial_rec_flr },
			 { "flg", partial_rec_flg } };
	bool known;
	int urc = partial_unions_record(r, tag, &known);
	if (known)
		return urc;
	/* a known tag: it belongs to a file record before it */
	for (size_t i = 0; i < sizeof(per_file) / sizeof(per_file[0]); i++)
		if (tag[0] == per_file[i].tag[0] && strcmp(tag, per_file[i].tag) == 0)
			return r->cur ? per_file[i].fn(r)
				      : partial_fail(r, "%s record before any file record", tag);
	return partial_fail(r, "unknown record '%s'", partial_printable(tag, (char[33]){ 0 }, 33));
}

int partial_read(struct partial_set *ps, const char *path, char *err, size_t errsize)
{
	FILE *in = fopen(path, "rb");
	if (!in) {
		snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	int rc = partial_read_stream(ps, in, path, err, errsize);
	fclose(in);
	return rc;
}

int partial_read_stream(struct partial_set *ps, FILE *in, const char *path, char *err,
			size_t errsize)
{
	struct reader r = { .ps = ps, .path = path, .err = err, .errsize = errsize };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	bool header = false, end = false;
	int rc = 0;
	uint64_t next = 0;
	while (rc == 0 && (len = getline(&line, &cap, in)) >= 0) {
		r.offset = next;
		next += (uint64_t)len;
		if (end) {
			rc = partial_fail(&r, "data after the end record");
			break;
		}
		if (!header && ((size_t)len < sizeof(PARTIAL_MAGIC) ||
				memcmp(line, PARTIAL_MAGIC "\t", sizeof(PARTIAL_MAGIC)) != 0)) {
			rc = partial_fail(&r,
					  "not an opscope partial (make one with opscope report "
					  "--format partial)");
			break;
		}
		if (len == 0 || line[len - 1] != '\n') {
			rc = partial_fail(&r, "truncated: the last record has no end of line");
			break;
		}
		if ((size_t)len > PARTIAL_LINE_MAX) {
			rc = partial_fail(&r, "a record of more than %u bytes", PARTIAL_LINE_MAX);
			break;
		}
		line[--len] = '\0';
		if (memchr(line, '\0', (size_t)len)) {
			rc = partial_fail(&r, "a NUL byte in a record");
			break;
		}
		if ((rc = split(&r, line, (size_t)len)) != 0)
			break;
		if (!header) {
			int64_t v;
			if (r.nf != 2 || strcmp(r.f[0], PARTIAL_MAGIC) != 0) {
				rc = partial_fail(&r,
						  "not an opscope partial (make one with opscope "
						  "report --format partial)");
				break;
			}
			if ((rc = partial_field_i64(&r, 1, 1, INT32_MAX, &v)) != 0)
				break;
			if (v > PARTIAL_VERSION) {
				rc = partial_fail(
					&r,
					"partial format version %lld is newer than this opscope "
					"reads (%d): merge with a newer opscope",
					(long long)v, PARTIAL_VERSION);
				break;
			}
			header = true;
			continue;
		}
		rc = record(&r, &end);
	}
	if (rc == 0 && ferror(in)) {
		snprintf(err, errsize, "%s: read error: %s", path, strerror(errno));
		rc = -1;
	} else if (rc == 0 && !header) {
		r.offset = next;
		rc = partial_fail(&r, "empty: not an opscope partial");
	} else if (rc == 0 && !end) {
		r.offset = next;
		rc = partial_fail(&r, "truncated: no end record");
	}
	free(line);
	if (rc)
		return r.oom ? OPSCOPE_ENOMEM : -1;
	char *copy = strdup(path);
	char **nv = copy ? realloc(ps->sources, (ps->nsources + 1) * sizeof(*nv)) : NULL;
	if (!nv) {
		free(copy);
		snprintf(err, errsize, "%s: out of memory", path);
		return OPSCOPE_ENOMEM;
	}
	ps->sources = nv;
	ps->sources[ps->nsources++] = copy;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The set */

int partial_set_init(struct partial_set *ps)
{
	memset(ps, 0, sizeof(*ps));
	ps->m = model_new();
	return ps->m ? 0 : OPSCOPE_ENOMEM;
}

/* qsort's comparison takes no context: the set being finished (one at a time). */
static _Thread_local const struct partial_set *sort_set;

static int file_cmp(const void *x, const void *y)
{
	const struct partial_file *a = x, *b = y;
	int c = strcmp(model_str(sort_set->m, a->path), model_str(sort_set->m, b->path));
	if (c)
		return c;
	/* the same path twice: in the order read, so the message names the first */
	if (a->source != b->source)
		return a->source < b->source ? -1 : 1;
	return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static int str_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Merge file pf's operator items into ps->pre.ops, parents before children, so that the
 * merged items come in the order agg_host_ranges of all the files makes them. -1 when a sum
 * would leave int64 (the top-level sums too: the table's ratios are of them). */
static int merge_ops(struct partial_set *ps, const struct partial_file *pf)
{
	struct agg *a = &ps->pre.ops;
	uint32_t *map = malloc((pf->nops ? pf->nops : 1) * sizeof(*map));
	if (!map) {
		a->oom = true;
		return 0;
	}
	int rc = 0;
	for (uint32_t k = 0; k < pf->nops && rc == 0; k++) {
		const struct agg_item *x = &pf->ops[k];
		uint32_t parent = x->parent == AGG_NONE ? AGG_NONE : map[x->parent];
		if (x->parent != AGG_NONE && parent == AGG_NONE)
			break; /* out of memory before: a->oom */
		uint32_t it = map[k] = agg_get(a, parent, x->name, x->kind);
		if (it == AGG_NONE)
			break;
		const struct agg_item *y = &a->v[it];
		int64_t c, g, sf, top_c = 0, top_g = 0;
		int64_t calls;
		if (__builtin_add_overflow(y->calls, x->calls, &calls) ||
		    !checked_add_i64(&c, y->cpu_ns, x->cpu_ns) ||
		    !checked_add_i64(&g, y->gpu_ns, x->gpu_ns) ||
		    !checked_add_i64(&sf, y->self_ns, x->self_ns) ||
		    (parent == AGG_NONE && (!checked_add_i64(&top_c, ps->ops_cpu, x->cpu_ns) ||
					    !checked_add_i64(&top_g, ps->ops_gpu, x->gpu_ns)))) {
			rc = -1;
			break;
		}
		if (parent == AGG_NONE) {
			ps->ops_cpu = top_c;
			ps->ops_gpu = top_g;
		}
		agg_merge_item(a, it, x);
	}
	free(map);
	return rc;
}

/* Merge file pf's nvprof items into ps->pre.nvprof (items in the file's first-seen order, so
 * in agg_nvprof's of all the files). -1 when a sum would leave int64. */
static int merge_nvprof(struct partial_set *ps, const struct partial_file *pf)
{
	struct agg *a = &ps->pre.nvprof;
	for (int side = 0; side < 2; side++)
		if (!checked_add_i64(&ps->pre.nvprof_ns[side], ps->pre.nvprof_ns[side],
				     pf->nv_sum[side]))
			return -1;
	for (uint32_t k = 0; k < pf->nnv; k++) {
		const struct agg_item *x = &pf->nv[k];
		uint32_t it = agg_get(a, AGG_NONE, x->name, x->kind);
		if (it == AGG_NONE)
			return 0; /* a->oom */
		int64_t calls;
		if (__builtin_add_overflow(a->v[it].calls, x->calls, &calls))
			return -1;
		agg_merge_item(a, it, x);
	}
	return 0;
}

/* Per file of ps, whether the merge keeps its rows: false for the second copy of a rank, as
 * the analyses of a report leave it out (ranks_kept_shares). Malloc'd; NULL without memory. */
bool *partial_kept_files(const struct partial_set *ps)
{
	bool *keep = malloc((ps->nfiles ? ps->nfiles : 1) * sizeof(*keep));
	if (keep && ranks_kept_shares(ps->pre.ranks, ps->pre.nranks, keep) == UINT32_MAX) {
		free(keep);
		return NULL;
	}
	return keep;
}

/* The files' GPU time devices, in file order (the order gpu_time_analyze of every file gives
 * them), into ps->pre.gputime, when every file carries them. 0 or OPSCOPE_ENOMEM. */
static int merge_gputime(struct partial_set *ps)
{
	size_t n = 0;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		if (!ps->files[i].has_gputime)
			return 0;
		n += ps->files[i].gputime.ndev;
	}
	if (n >= UINT32_MAX)
		return OPSCOPE_ENOMEM;
	struct gpu_time *gt = calloc(1, sizeof(*gt));
	if (!gt || !(gt->dev = calloc(n ? n : 1, sizeof(*gt->dev)))) {
		free(gt);
		return OPSCOPE_ENOMEM;
	}
	/* a second copy of a rank is left out, as gpu_time_analyze leaves it */
	bool *keep = partial_kept_files(ps);
	if (!keep) {
		free(gt->dev);
		free(gt);
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		struct gpu_time *f = &ps->files[i].gputime;
		for (uint32_t d = 0; keep[i] && d < f->ndev; d++) {
			gt->dev[gt->ndev] = f->dev[d];
			gt->dev[gt->ndev++].file = i;
			f->dev[d].steps = NULL; /* moved */
		}
		gpu_time_free(f);
	}
	free(keep);
	ps->pre.gputime = gt;
	return 0;
}

/* The files' GPU utilization devices, in file order (gpu_util_analyze's of every file),
 * into ps->pre.gpu, when every file carries them. 0 or OPSCOPE_ENOMEM. */
static int merge_gpu(struct partial_set *ps)
{
	size_t n = 0;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		if (!ps->files[i].has_gpu)
			return 0;
		n += ps->files[i].gpu.ndev;
	}
	if (n >= UINT32_MAX)
		return OPSCOPE_ENOMEM;
	struct gpu_util *u = calloc(1, sizeof(*u));
	if (!u || !(u->dev = calloc(n ? n : 1, sizeof(*u->dev)))) {
		free(u);
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		struct gpu_util *f = &ps->files[i].gpu;
		for (uint32_t d = 0; d < f->ndev; d++) {
			u->dev[u->ndev] = f->dev[d];
			u->dev[u->ndev++].file = i;
		}
		free(f->dev); /* the spans moved */
		memset(f, 0, sizeof(*f));
	}
	ps->pre.gpu = u;
	return 0;
}

/* The files' queue streams, in file order (gpu_queue_analyze's of every file), into
 * ps->pre.queue, when every file carries them; a second copy of a rank is left out, as
 * gpu_queue_analyze leaves it. 0 or OPSCOPE_ENOMEM. */
static int merge_queue(struct partial_set *ps)
{
	size_t n = 0;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		if (!ps->files[i].has_queue)
			return 0;
		n += ps->files[i].queue.nst;
	}
	if (n >= UINT32_MAX)
		return OPSCOPE_ENOMEM;
	struct gpu_queue *q = calloc(1, sizeof(*q));
	bool *keep = partial_kept_files(ps);
	if (!q || !keep || !(q->st = calloc(n ? n : 1, sizeof(*q->st)))) {
		if (q)
			free(q->st);
		free(q);
		free(keep);
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		struct gpu_queue *f = &ps->files[i].queue;
		for (uint32_t k = 0; keep[i] && k < f->nst; k++) {
			q->st[q->nst] = f->st[k];
			q->st[q->nst++].file = i;
			f->st[k].buckets = NULL; /* moved */
		}
		gpu_queue_free(f);
	}
	free(keep);
	ps->pre.queue = q;
	return 0;
}

/* The files' GPU memory devices, in file order (gpu_mem_analyze's of every file), into
 * ps->pre.gpumem, when every file carries them. 0 or OPSCOPE_ENOMEM. */
static int merge_gpumem(struct partial_set *ps)
{
	size_t n = 0;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		if (!ps->files[i].has_gpumem)
			return 0;
		n += ps->files[i].gpumem.ndev;
	}
	if (n >= UINT32_MAX)
		return OPSCOPE_ENOMEM;
	struct gpu_mem *gm = calloc(1, sizeof(*gm));
	if (!gm || !(gm->dev = calloc(n ? n : 1, sizeof(*gm->dev)))) {
		free(gm);
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		struct gpu_mem *f = &ps->files[i].gpumem;
		for (uint32_t d = 0; d < f->ndev; d++) {
			gm->dev[gm->ndev] = f->dev[d];
			gm->dev[gm->ndev++].file = i;
		}
		free(f->dev); /* the buckets moved */
		memset(f, 0, sizeof(*f));
	}
	ps->pre.gpumem = gm;
	return 0;
}

/* The files' totals and ranges by name into ps->pre (host, total_ns, the step times), when
 * every file carries them: the ranges merged by name in file order, as agg_host_ranges of
 * every file makes them; total_ns as analysis_run makes it of every file: the union of the
 * files' steps, or without any, from the first start to the last end. 0, -1 when a sum would
 * leave int64 (*bad: the file), or OPSCOPE_ENOMEM. */
static int merge_host(struct partial_set *ps, uint32_t *bad)
{
	for (uint32_t i = 0; i < ps->nfiles; i++)
		if (!ps->files[i].has_total)
			return 0;
	struct report_pre *p = &ps->pre;
	struct ivec steps = { 0 };
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	int64_t top_cpu[AGG_PYTHON_FUNCTIONS + 1] = { 0 },
					       top_gpu[AGG_PYTHON_FUNCTIONS + 1] = { 0 };
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct partial_file *pf = &ps->files[i];
		const struct analysis_total *t = &pf->total;
		*bad = i;
		for (size_t k = 0; k < t->steps.n; k++)
			ivec_push(&steps, t->steps.v[k].s, t->steps.v[k].e);
		lo = t->lo < lo ? t->lo : lo;
		hi = t->hi > hi ? t->hi : hi;
		if (!checked_add_i64(&p->step_kernel_ns, p->step_kernel_ns, t->step_kernel_ns) ||
		    !checked_add_i64(&p->step_device_ns, p->step_device_ns, t->step_device_ns)) {
			ivec_free(&steps);
			return -1;
		}
		for (uint32_t k = 0; k < pf->nhost; k++) {
			const struct agg_item *x = &pf->host[k];
			struct agg *a = &p->host[x->kind];
			uint32_t it = agg_get(a, AGG_NONE, x->name, AGG_KIND_RANGE);
			if (it == AGG_NONE) {
				ivec_free(&steps);
				return OPSCOPE_ENOMEM;
			}
			const struct agg_item *y = &a->v[it];
			int64_t v;
			int64_t calls;
			/* the items' sums, and the sums over the items (agg_top_sums) */
			if (__builtin_add_overflow(y->calls, x->calls, &calls) ||
			    !checked_add_i64(&v, y->cpu_ns, x->cpu_ns) ||
			    !checked_add_i64(&v, y->gpu_ns, x->gpu_ns) ||
			    !checked_add_i64(&v, y->self_ns, x->self_ns) ||
			    !checked_add_i64(&top_cpu[x->kind], top_cpu[x->kind], x->cpu_ns) ||
			    !checked_add_i64(&top_gpu[x->kind], top_gpu[x->kind], x->gpu_ns)) {
				ivec_free(&steps);
				return -1;
			}
			struct agg_item m = *x;
			m.kind = AGG_KIND_RANGE;
			agg_merge_item(a, it, &m);
		}
	}
	ivec_merge(&steps);
	if (steps.n == 0 && hi > lo)
		ivec_push(&steps, lo, hi);
	bool oom = steps.oom;
	p->total_ns = ivec_sum(&steps); /* within [lo, hi]: 2^62 at most */
	ivec_free(&steps);
	if (oom)
		return OPSCOPE_ENOMEM;
	for (int s = AGG_USER_DEFINED; s <= AGG_PYTHON_FUNCTIONS; s++)
		if (p->host[s].oom)
			return OPSCOPE_ENOMEM;
	p->has_host = true;
	return 0;
}

/* The files' module trees merged into ps->pre.modules, parents before children, in file
 * order (as agg_modules of every file makes them), when every file carries them. 0, -1 when
 * a sum would leave int64 (*bad: the file), or OPSCOPE_ENOMEM. */
static int merge_modules(struct partial_set *ps, uint32_t *bad)
{
	for (uint32_t i = 0; i < ps->nfiles; i++)
		if (!ps->files[i].has_modules)
			return 0;
	struct agg *a = &ps->pre.modules;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct partial_file *pf = &ps->files[i];
		uint32_t *map = malloc((pf->nmods ? pf->nmods : 1) * sizeof(*map));
		if (!map)
			return OPSCOPE_ENOMEM;
		*bad = i;
		for (uint32_t k = 0; k < pf->nmods; k++) {
			const struct agg_item *x = &pf->mods[k];
			uint32_t parent = x->parent == AGG_NONE ? AGG_NONE : map[x->parent];
			uint32_t it = map[k] = agg_get(a, parent, x->name, AGG_KIND_RANGE);
			if (it == AGG_NONE) {
				free(map);
				return OPSCOPE_ENOMEM;
			}
			const struct agg_item *y = &a->v[it];
			int64_t v;
			int64_t calls;
			if (__builtin_add_overflow(y->calls, x->calls, &calls) ||
			    !checked_add_i64(&v, y->cpu_ns, x->cpu_ns) ||
			    !checked_add_i64(&v, y->gpu_ns, x->gpu_ns) ||
			    !checked_add_i64(&v, y->self_ns, x->self_ns) ||
			    !checked_add_i64(&v, y->gpu_self_ns, x->gpu_self_ns)) {
				free(map);
				return -1;
			}
			agg_merge_item(a, it, x);
		}
		free(map);
	}
	if (a->oom)
		return OPSCOPE_ENOMEM;
	ps->pre.has_modules = ps->pre.has_host; /* its ratios are of the totals (tv) */
	return 0;
}

/* The Perf Summary of every file's steps into ps->pre.perf, the steps added in file order (as
 * throughput_analyze adds them), when every file carries them. 0, or -1 when the samples or
 * durations summed leave int64 (*bad: the file). */
static int merge_perf(struct partial_set *ps, uint32_t *bad)
{
	for (uint32_t i = 0; i < ps->nfiles; i++)
		if (!ps->files[i].has_perf)
			return 0;
	struct throughput_acc acc;
	perf_summary_start(&acc);
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct partial_file *pf = &ps->files[i];
		for (uint32_t k = 0; k < pf->nperf; k++) {
			int64_t v;
			if (!checked_add_i64(&v, acc.t.samples, pf->perf[k][2]) ||
			    !checked_add_i64(&v, acc.t.batch_ns, pf->perf[k][1])) {
				*bad = i;
				return -1;
			}
			perf_summary_add_step(&acc, pf->perf[k][0], pf->perf[k][1], pf->perf[k][2]);
		}
	}
	perf_summary_finish(&acc, &ps->pre.perf);
	ps->pre.has_perf = true;
	return 0;
}

/* Add row x into `into` (gpu_launch_row_add), unless a count or sum would leave int64: then
 * -1 and `into` unchanged. */
static int launch_add_checked(struct gpu_launch_row *into, const struct gpu_launch_row *x)
{
	int64_t v;
	if (__builtin_add_overflow((int64_t)into->count, (int64_t)x->count, &v) ||
	    __builtin_add_overflow(into->cpu_sum_ns, x->cpu_sum_ns, &v) ||
	    __builtin_add_overflow(into->delay_sum_ns, x->delay_sum_ns, &v) ||
	    __builtin_add_overflow(into->gpu_sum_ns, x->gpu_sum_ns, &v))
		return -1; /* the other counts are at most the count */
	gpu_launch_row_add(into, x);
	return 0;
}

/* The files' launch rows summed by name into ps->pre.launch (with their total, and ordered
 * as gpu_launch_analyze orders them), when every file carries them. 0, -1 when a sum would
 * leave int64 (*bad: the index of the file whose row did), or OPSCOPE_ENOMEM. */
static int merge_launch(struct partial_set *ps, uint32_t *bad)
{
	for (uint32_t i = 0; i < ps->nfiles; i++)
		if (!ps->files[i].has_launch)
			return 0;
	struct gpu_launch *l = calloc(1, sizeof(*l));
	uint32_t *row_of = calloc(ps->m->nstrings ? ps->m->nstrings : 1, sizeof(*row_of));
	uint32_t cap = 0;
	int rc = l && row_of ? 0 : OPSCOPE_ENOMEM;
	for (uint32_t i = 0; i < ps->nfiles && rc == 0; i++) {
		const struct gpu_launch *f = &ps->files[i].launch;
		l->unlaunched += f->unlaunched; /* each <= 2^62, at most 2^32 files */
		for (uint32_t k = 0; k < f->nrows && rc == 0; k++) {
			const struct gpu_launch_row *x = &f->rows[k];
			if (!row_of[x->name]) {
				if (l->nrows == cap) {
					uint32_t c = cap ? cap * 2 : 64;
					struct gpu_launch_row *v = realloc(l->rows, c * sizeof(*v));
					if (!v) {
						rc = OPSCOPE_ENOMEM;
						break;
					}
					l->rows = v;
					cap = c;
				}
				memset(&l->rows[l->nrows], 0, sizeof(*l->rows));
				l->rows[l->nrows].name = x->name;
				l->rows[l->nrows].category = x->category;
				row_of[x->name] = ++l->nrows;
			}
			if (launch_add_checked(&l->rows[row_of[x->name] - 1], x) != 0 ||
			    launch_add_checked(&l->total, x) != 0) {
				rc = -1;
				*bad = i;
			}
		}
	}
	free(row_of);
	if (rc == 0)
		rc = gpu_launch_order(ps->m, l);
	if (rc != 0) {
		if (l)
			gpu_launch_free(l);
		free(l);
		return rc;
	}
	ps->pre.launch = l;
	return 0;
}

int partial_finish(struct partial_set *ps, char *err, size_t errsize)
{
	struct model *m = ps->m;
	sort_set = ps;
	if (ps->nfiles > 1)
		qsort(ps->files, ps->nfiles, sizeof(*ps->files), file_cmp);
	if (ps->ninputs > 1)
		qsort(ps->inputs, ps->ninputs, sizeof(*ps->inputs), str_cmp);
	for (uint32_t i = 1; i < ps->nfiles; i++) {
		const struct partial_file *a = &ps->files[i - 1], *b = &ps->files[i];
		if (a->path != b->path)
			continue;
		snprintf(err, errsize,
			 "%s: offset %" PRIu64 ": trace %s is also in %s (a partial given twice?)",
			 ps->sources[b->source], b->offset,
			 partial_printable(model_str(m, b->path), (char[256]){ 0 }, 256),
			 ps->sources[a->source]);
		return -1;
	}
	/* each file's times within PARTIAL_SPAN_MAX of each other, so that the clock offsets,
	 * arrivals and waits the rank analysis computes stay far inside int64 */
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct ranks_file *rf = &ps->files[i].ranks;
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		for (uint32_t k = 0; k < rf->nsteps; k++) {
			lo = rf->steps[k].start_ns < lo ? rf->steps[k].start_ns : lo;
			hi = rf->steps[k].end_ns > hi ? rf->steps[k].end_ns : hi;
		}
		for (uint32_t k = 0; k < rf->nkernels; k++) {
			lo = rf->kernels[k].s < lo ? rf->kernels[k].s : lo;
			hi = rf->kernels[k].e > hi ? rf->kernels[k].e : hi;
		}
		if (lo <= hi && hi - lo > PARTIAL_SPAN_MAX) {
			snprintf(err, errsize,
				 "%s: offset %" PRIu64
				 ": the steps and collectives of %s span more "
				 "than 2^53 ns (104 days)",
				 ps->sources[ps->files[i].source], ps->files[i].offset,
				 partial_printable(model_str(m, ps->files[i].path),
						   (char[256]){ 0 }, 256));
			return -1;
		}
	}
	ps->pre.ranks = calloc(ps->nfiles ? ps->nfiles : 1, sizeof(*ps->pre.ranks));
	if (!ps->pre.ranks)
		goto oom;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		struct partial_file *pf = &ps->files[i];
		/* copies: model_add_file interns, which may move the strings */
		char *path = strdup(model_str(m, pf->path));
		char *format = strdup(model_str(m, pf->format));
		uint32_t f = path && format ? model_add_file(m, path, format) : UINT32_MAX;
		free(path);
		free(format);
		if (f == UINT32_MAX || m->oom)
			goto oom;
		struct model_file *mf = &m->files[f];
		mf->events = pf->events;
		mf->dropped = pf->dropped;
		mf->discarded_bytes = pf->discarded_bytes;
		mf->complete = pf->complete;
		mf->tail_msg = pf->tail_msg;
		/* the names were interned in another order than the report's: sort again */
		ps->pre.ranks[i] = pf->ranks;
		memset(&pf->ranks, 0, sizeof(pf->ranks));
		ps->pre.ranks[i].file = f;
		ranks_file_index(&ps->pre.ranks[i]);
		ps->pre.nranks = i + 1;
		/* the items' totals are bounded by the files' sums (rec_k), checked here */
		if (__builtin_add_overflow(ps->pre.kernels_ns, pf->kern_ns, &ps->pre.kernels_ns))
			goto overflow;
		for (uint32_t k = 0; k < pf->nkern; k++) {
			uint32_t it = agg_get(&ps->pre.kernels, AGG_NONE, pf->kern[k].name,
					      AGG_KIND_RANGE);
			if (it == AGG_NONE)
				goto oom;
			int64_t calls;
			if (__builtin_add_overflow(ps->pre.kernels.v[it].calls, pf->kern[k].calls,
						   &calls))
				goto overflow;
			agg_merge_item(&ps->pre.kernels, it, &pf->kern[k]);
		}
		if (merge_ops(ps, pf) != 0 || merge_nvprof(ps, pf) != 0)
			goto overflow;
		if (ps->pre.nvprof.oom)
			goto oom;
		if (ps->pre.ops.oom)
			goto oom;
	}
	/* the step view, when every file's partial carries it (version 2 on) */
	bool steps = true;
	for (uint32_t i = 0; i < ps->nfiles; i++)
		steps = steps && ps->files[i].has_steps;
	if (steps) {
		ps->pre.steps = calloc(ps->nfiles ? ps->nfiles : 1, sizeof(*ps->pre.steps));
		if (!ps->pre.steps)
			goto oom;
		for (uint32_t i = 0; i < ps->nfiles; i++) {
			struct step_table *st = &ps->pre.steps[i];
			*st = ps->files[i].steps;
			memset(&ps->files[i].steps, 0, sizeof(ps->files[i].steps));
			st->file = i;
			steps_average(st);
		}
	}
	if (merge_gputime(ps) != 0 || merge_gpu(ps) != 0 || merge_queue(ps) != 0 ||
	    merge_gpumem(ps) != 0)
		goto oom;
	/* the sums over the files, each refused in one line when it would leave int64 */
	static const struct {
		int (*fn)(struct partial_set *ps, uint32_t *bad);
		const char *what;
	} sums[] = {
		{ merge_host, "the ranges' times or calls" },
		{ merge_modules, "the modules' times or calls" },
		{ merge_perf, "the steps' samples or durations" },
		{ merge_launch, "the launch statistics' counts or times" },
		{ partial_merge_nvtx, "the NVTX ranges' times" },
	};
	for (size_t k = 0; k < sizeof(sums) / sizeof(sums[0]); k++) {
		uint32_t bad = 0;
		int rc = sums[k].fn(ps, &bad);
		if (rc == OPSCOPE_ENOMEM)
			goto oom;
		if (rc != 0) {
			snprintf(err, errsize,
				 "%s: offset %" PRIu64 ": %s, summed over the files, exceed 2^63",
				 ps->sources[ps->files[bad].source], ps->files[bad].offset,
				 sums[k].what);
			return -1;
		}
	}
	int urc = partial_unions_finish(ps, err, errsize);
	if (urc != 0)
		return urc;
	/* the flops rows point at strings of m, which nothing interns into after the flops
	 * merge; the advice merge reads each file's rows once they point at their peaks */
	int src = partial_merge_samples(ps, err, errsize);
	if (src == 0)
		src = partial_merge_flops(ps, err, errsize);
	if (src == 0)
		src = partial_advice_merge(ps, err, errsize);
	return src;
overflow:
	snprintf(err, errsize,
		 "%s: the kernels' times or calls, summed over the files, exceed 2^63",
		 ps->sources[ps->files[ps->pre.nranks - 1].source]);
	return -1;
oom:
	snprintf(err, errsize, "out of memory");
	return OPSCOPE_ENOMEM;
}

bool partial_carries(const struct partial_set *ps, const char *view)
{
	const struct report_view *v = report_view_find(view);
	if (!v)
		return false;
	if (strcmp(view, "step") == 0)
		return ps->pre.steps != NULL;
	if (strcmp(view, "gputime") == 0)
		return ps->pre.gputime != NULL;
	if (strcmp(view, "gpu") == 0)
		return ps->pre.gpu != NULL;
	if (strcmp(view, "launch") == 0)
		return ps->pre.launch != NULL;
	if (strcmp(view, "queue") == 0)
		return ps->pre.queue != NULL;
	if (strcmp(view, "gpumem") == 0)
		return ps->pre.gpumem != NULL;
	if (strcmp(view, "module") == 0)
		return ps->pre.has_modules;
	if (strcmp(view, "perf") == 0)
		return ps->pre.has_perf;
	if (strcmp(view, "nvtx") == 0)
		return ps->pre.has_nvtx;
	if (strcmp(view, "device") == 0)
		return ps->pre.device != NULL;
	if (strcmp(view, "distributed") == 0)
		return ps->pre.distributed != NULL;
	if (strcmp(view, "overview") == 0)
		return ps->pre.overview != NULL;
	if (strcmp(view, "model") == 0)
		return ps->pre.phases != NULL;
	if (strcmp(view, "advice") == 0) /* its pageable-copy rule reads the total time */
		return ps->pre.advice && ps->pre.has_host;
	if (strcmp(view, "samples") == 0)
		return ps->pre.samples != NULL;
	if (strcmp(view, "flops") == 0)
		return ps->pre.flops != NULL;
	if (strcmp(view, "userdefined") == 0 || strcmp(view, "memcpy") == 0 ||
	    strcmp(view, "python") == 0)
		return ps->pre.has_host;
	return true;
}

void partial_analysis(const struct partial_set *ps, struct analysis *an)
{
	if (!ps->pre.has_host)
		return;
	an->total_ns = ps->pre.total_ns;
	an->step_kernel_ns = ps->pre.step_kernel_ns;
	an->step_device_ns = ps->pre.step_device_ns;
	an->has_steps = ps->pre.has_steps;
}

void partial_set_free(struct partial_set *ps)
{
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		ranks_file_free(&ps->files[i].ranks);
		free(ps->files[i].kern);
		free(ps->files[i].ops);
		free(ps->files[i].nv);
		steps_free(&ps->files[i].steps);
		gpu_time_free(&ps->files[i].gputime);
		gpu_util_free(&ps->files[i].gpu);
		gpu_launch_free(&ps->files[i].launch);
		gpu_queue_free(&ps->files[i].queue);
		gpu_mem_free(&ps->files[i].gpumem);
		ivec_free(&ps->files[i].total.steps);
		free(ps->files[i].host);
		free(ps->files[i].mods);
		free(ps->files[i].perf);
		free(ps->files[i].nvtx);
		partial_unions_free_file(&ps->files[i]);
		partial_advice_free(ps->files[i].advice);
		samples_profile_free(&ps->files[i].samples);
		partial_flops_free(ps->files[i].flops);
	}
	free(ps->files);
	for (uint32_t i = 0; i < ps->nsources; i++)
		free(ps->sources[i]);
	free(ps->sources);
	for (size_t i = 0; i < ps->ninputs; i++)
		free(ps->inputs[i]);
	free(ps->inputs);
	for (uint32_t i = 0; i < ps->pre.nranks; i++)
		ranks_file_free(&ps->pre.ranks[i]);
	free(ps->pre.ranks);
	for (uint32_t i = 0; ps->pre.steps && i < ps->pre.nranks; i++)
		steps_free(&ps->pre.steps[i]);
	free(ps->pre.steps);
	for (uint32_t i = 0; ps->pre.advice && i < ps->pre.nranks; i++)
		advice_file_free(&ps->pre.advice[i]);
	free(ps->pre.advice);
	if (ps->pre.gputime)
		gpu_time_free(ps->pre.gputime);
	free(ps->pre.gputime);
	if (ps->pre.gpu)
		gpu_util_free(ps->pre.gpu);
	free(ps->pre.gpu);
	if (ps->pre.launch)
		gpu_launch_free(ps->pre.launch);
	free(ps->pre.launch);
	if (ps->pre.queue)
		gpu_queue_free(ps->pre.queue);
	free(ps->pre.queue);
	if (ps->pre.gpumem)
		gpu_mem_free(ps->pre.gpumem);
	free(ps->pre.gpumem);
	for (int s = 0; s <= AGG_PYTHON_FUNCTIONS; s++)
		agg_free(&ps->pre.host[s]);
	agg_free(&ps->pre.modules);
	partial_unions_free_pre(&ps->pre);
	if (ps->pre.samples)
		samples_profile_free(ps->pre.samples);
	free(ps->pre.samples);
	partial_merged_flops_free(ps->pre.flops);
	agg_free(&ps->pre.kernels);
	agg_free(&ps->pre.ops);
	agg_free(&ps->pre.nvprof);
	agg_nvtx_free(&ps->pre.nvtx);
	if (ps->m)
		model_free(ps->m);
	memset(ps, 0, sizeof(*ps));
}
