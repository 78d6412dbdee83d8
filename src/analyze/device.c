/*
 * device.c: CPU utilization from the trace's metadata, GPU busy time as the union of each
 * device's kernels (device.h). The CPU entries are set as the loader sets metadata
 * (model_set_meta: one entry per process and key, a later value replacing the earlier in
 * its place), so that entries of several files, set one file after another, come out as the
 * model of those files holds them (opscope merge).
 */
#include "analyze/device.h"

#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/intervals.h"

static const char *const cpu_keys[2] = {
	[DEVICE_CPU_PROCESS] = "cpu.process_utilization",
	[DEVICE_CPU_SYSTEM] = "cpu.system_utilization",
};

/* Append one GPU entry; false when out of memory. */
static bool add_gpu(struct device_usage *d, uint32_t *cap, struct device_gpu g)
{
	if (d->ngpu == *cap) {
		uint32_t n = *cap ? *cap * 2 : 8;
		struct device_gpu *v = realloc(d->gpu, n * sizeof(*v));
		if (!v)
			return false;
		d->gpu = v;
		*cap = n;
	}
	d->gpu[d->ngpu++] = g;
	return true;
}

/* The union of the kernels of device `pid` of file f, from its first track tt on. */
static int64_t kernel_union_ns(const struct model *m, uint32_t f, uint32_t pid, uint32_t tt,
			       bool *oom)
{
	struct ivec k = { 0 };
	for (uint32_t t = tt; t < m->ntracks; t++) {
		const struct model_track *d = &m->tracks[t];
		if (d->kind != MODEL_TRACK_DEVICE || d->file != f || d->pid != pid)
			continue;
		for (uint64_t i = 0; i < d->nranges; i++)
			if (tree_is_kernel(d->ranges.category[i]))
				ivec_push(&k, d->ranges.start_ns[i],
					  d->ranges.start_ns[i] + d->ranges.dur_ns[i]);
	}
	ivec_merge(&k);
	int64_t busy = ivec_sum(&k);
	*oom = *oom || k.oom;
	ivec_free(&k);
	return busy;
}

uint32_t device_file_gpus(const struct model *m, uint32_t f, uint32_t *dev, uint32_t *first)
{
	uint32_t n = 0;
	for (uint32_t t = 0; t < m->ntracks && n < DEVICE_MAX_GPUS; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_DEVICE || tr->file != f)
			continue;
		bool dup = false;
		for (uint32_t k = 0; k < n && !dup; k++)
			dup = dev[k] == tr->pid;
		if (dup)
			continue;
		if (first)
			first[n] = t;
		dev[n++] = tr->pid;
	}
	return n;
}

int device_cpu_add(struct device_usage *d, uint32_t *cap, enum device_cpu_kind kind, uint32_t file,
		   uint32_t pid, double utilization)
{
	if (d->ncpu == *cap) {
		uint32_t n = *cap ? *cap * 2 : 8;
		struct device_cpu *v = realloc(d->cpu, n * sizeof(*v));
		if (!v)
			return OPSCOPE_ENOMEM;
		d->cpu = v;
		*cap = n;
	}
	d->cpu[d->ncpu++] = (struct device_cpu){ kind, file, pid, utilization };
	d->ncpu_of[kind]++;
	return 0;
}

void device_cpu_order(struct device_usage *d)
{
	/* a stable partition: process entries, then system ones, each in the order set */
	uint32_t o = 0;
	for (int k = 0; k < 2; k++)
		for (uint32_t i = o; i < d->ncpu; i++)
			if (d->cpu[i].kind == (enum device_cpu_kind)k) {
				struct device_cpu c = d->cpu[i];
				memmove(&d->cpu[o + 1], &d->cpu[o], (i - o) * sizeof(c));
				d->cpu[o++] = c;
			}
}

int device_file(const struct analysis *a, uint32_t f, struct device_usage *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	uint32_t key[2], cap = 0;
	for (int k = 0; k < 2; k++)
		key[k] = model_find_str(m, cpu_keys[k]);
	/* metadata order (model_set_meta keeps one entry per file, process and key) */
	for (uint32_t i = 0; i < m->nmeta; i++)
		for (int k = 0; k < 2; k++)
			if (key[k] && m->meta[i].key == key[k] &&
			    (f == DEVICE_ALL_FILES || m->meta[i].file == f) &&
			    device_cpu_add(out, &cap, (enum device_cpu_kind)k, m->meta[i].file,
					   m->meta[i].pid,
					   strtod(model_str(m, m->meta[i].value), NULL)) != 0) {
				device_free(out);
				return OPSCOPE_ENOMEM;
			}
	device_cpu_order(out);
	/* one GPU per (file, device id) */
	cap = 0;
	bool oom = false;
	for (uint32_t g = 0; g < m->nfiles && !oom; g++) {
		if (f != DEVICE_ALL_FILES && g != f)
			continue;
		uint32_t dev[DEVICE_MAX_GPUS], first[DEVICE_MAX_GPUS];
		uint32_t n = device_file_gpus(m, g, dev, first);
		for (uint32_t k = 0; k < n && !oom; k++) {
			int64_t busy = kernel_union_ns(m, g, dev[k], first[k], &oom);
			oom = oom || !add_gpu(out, &cap, (struct device_gpu){ g, dev[k], busy });
		}
	}
	if (oom) {
		device_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

int device_analyze(const struct analysis *a, struct device_usage *out)
{
	return device_file(a, DEVICE_ALL_FILES, out);
}

void device_free(struct device_usage *d)
{
	free(d->cpu);
	free(d->gpu);
	memset(d, 0, sizeof(*d));
}
