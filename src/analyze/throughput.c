/*
 * throughput.c: batch cost, reader cost and throughput of the steps with num_samples
 * (throughput.h). The averages are sums divided at the end, in step order, so that the same
 * trace always gives the same digits.
 */
#include "analyze/throughput.h"

#include <string.h>

#include "opscope/opscope.h"

/* Running sum, max and min of one statistic. */
struct running {
	double sum, max, min;
};

static void running_add(struct running *r, double v)
{
	r->sum += v;
	r->max = v > r->max ? v : r->max;
	r->min = v < r->min ? v : r->min;
}

int throughput_analyze(const struct analysis *a, struct throughput *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	struct running st[3] = { { 0, 0, 1e300 }, { 0, 0, 1e300 }, { 0, 0, 1e300 } };
	uint32_t key = model_find_str(m, "num_samples");
	for (uint32_t tt = 0; key && tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD)
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
			int64_t samples = (int64_t)m->args.bits[arg];
			running_add(&st[0], (double)reader / 1e9);
			running_add(&st[1], (double)r->dur_ns[i] / 1e9);
			running_add(&st[2], (double)samples * 1e9 / (double)r->dur_ns[i]);
			out->steps++;
			out->samples += samples;
			out->batch_ns += r->dur_ns[i];
		}
	}
	struct throughput_stat *stat[3] = { &out->reader_cost_s, &out->batch_cost_s, &out->ips };
	for (int k = 0; k < 3; k++) {
		stat[k]->max = st[k].max;
		stat[k]->min = st[k].min;
	}
	if (out->steps) {
		out->reader_cost_s.avg = st[0].sum / (double)out->steps;
		out->batch_cost_s.avg = st[1].sum / (double)out->steps;
		out->ips.avg = (double)out->samples * 1e9 / (double)out->batch_ns;
	}
	return 0;
}
