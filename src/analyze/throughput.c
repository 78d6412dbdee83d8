/*
 * throughput.c: batch cost, reader cost and throughput of the steps with num_samples
 * (throughput.h). The averages are sums divided at the end, in step order, so that the same
 * trace always gives the same digits.
 */
#include "analyze/throughput.h"

#include <string.h>

#include "opscope/opscope.h"

static void running_add(struct throughput_running *r, double v)
{
	r->sum += v;
	r->max = v > r->max ? v : r->max;
	r->min = v < r->min ? v : r->min;
}

void perf_summary_start(struct throughput_acc *acc)
{
	memset(acc, 0, sizeof(*acc));
	for (int k = 0; k < 3; k++)
		acc->st[k] = (struct throughput_running){ 0, 0, 1e300 };
}

void perf_summary_add_step(struct throughput_acc *acc, int64_t reader_ns, int64_t dur_ns,
			   int64_t samples)
{
	running_add(&acc->st[0], (double)reader_ns / 1e9);
	running_add(&acc->st[1], (double)dur_ns / 1e9);
	running_add(&acc->st[2], (double)samples * 1e9 / (double)dur_ns);
	acc->t.steps++;
	acc->t.samples += samples;
	acc->t.batch_ns += dur_ns;
}

void perf_summary_finish(const struct throughput_acc *acc, struct throughput *out)
{
	*out = acc->t;
	struct throughput_stat *stat[3] = { &out->reader_cost_s, &out->batch_cost_s, &out->ips };
	for (int k = 0; k < 3; k++) {
		stat[k]->max = acc->st[k].max;
		stat[k]->min = acc->st[k].min;
	}
	if (out->steps) {
		out->reader_cost_s.avg = acc->st[0].sum / (double)out->steps;
		out->batch_cost_s.avg = acc->st[1].sum / (double)out->steps;
		out->ips.avg = (double)out->samples * 1e9 / (double)out->batch_ns;
	}
}

void throughput_file_steps(const struct analysis *a, uint32_t file,
			   void (*fn)(void *ctx, int64_t reader_ns, int64_t dur_ns,
				      int64_t samples),
			   void *ctx)
{
	const struct model *m = a->m;
	uint32_t key = model_find_str(m, "num_samples");
	for (uint32_t tt = 0; key && tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD || (file != UINT32_MAX && tr->file != file))
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint64_t arg;
			if (r->category[i] != OPSCOPE_CAT_PROFILE_STEP ||
			    (arg = model_range_arg(m, tt, i, key)) == MODEL_NONE ||
			    m->args.type[arg] != MODEL_ARG_I64 || r->dur_ns[i] <= 0)
				continue;
			int64_t reader = 0, end = r->start_ns[i] + r->dur_ns[i];
			for (uint64_t j = i + 1; j < tr->nranges && r->start_ns[j] < end; j++)
				if (r->category[j] == OPSCOPE_CAT_DATALOADER &&
				    a->tree.tracks[tt].parent[j] == i)
					reader += r->dur_ns[j];
			fn(ctx, reader, r->dur_ns[i], (int64_t)m->args.bits[arg]);
		}
	}
}

/* throughput_file_steps's callback of throughput_analyze. */
static void add_step(void *arg, int64_t reader_ns, int64_t dur_ns, int64_t samples)
{
	perf_summary_add_step(arg, reader_ns, dur_ns, samples);
}

int throughput_analyze(const struct analysis *a, struct throughput *out)
{
	struct throughput_acc acc;
	perf_summary_start(&acc);
	throughput_file_steps(a, UINT32_MAX, add_step, &acc);
	perf_summary_finish(&acc, out);
	return 0;
}
