/*
 * gpu_load.c: GPU entries into the model (gpu_load.h). Names follow Kineto's, so that every
 * view reads our recordings as it reads PyTorch's: "Memcpy HtoD (Pageable -> Device)",
 * "Memset (Device)", kernels by their (mangled) names, runtime calls by CUPTI's callback
 * names ("cudaLaunchKernel_v7000"); arguments "correlation", "External id", "device",
 * "stream", "context", "grid", "block", "registers per thread", "shared memory", "bytes".
 * An allocation or free (MEMORY2) is a "[memory]" instant on its device's track with
 * "device", "bytes" (negative for a free), "Addr", "Total Allocated" and the "correlation"
 * of the cudaMalloc/cudaFree call that made it (analyze/gpu_mem.c finds the host range
 * around that call).
 *
 * Kernel names come mangled from CUPTI ("_Z3addPfPKfi"); they are demangled here ("add(float*,
 * float const*, int)"), as Kineto and Nsight Systems show them, so that a recording and a
 * torch.profiler trace of the same program name the same kernels (tests/e2e/test_h200.sh).
 *
 * Runtime and driver calls land on the host track of their thread id; that track is nested
 * again afterwards (model_nest_track), so a call sits under the operator or user range that
 * made it and the event tree (analyze/tree.c) links op -> call -> kernel through the
 * correlation id. CUPTI's own overhead is not a range of any view: it is summed into the
 * metadata "gpu.overhead_ns" and "gpu.overhead_records".
 */
#include "formats/opscope/gpu_load.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "util/demangle.h"
#include "util/hashmap.h"

static const char *copy_kind(unsigned k)
{
	static const char *const n[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					 "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP" };
	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "Unknown";
}

static const char *mem_kind(unsigned k)
{
	static const char *const n[] = { "Unknown", "Pageable", "Pinned",	 "Device",
					 "Array",   "Managed",	"Device Static", "Managed Static" };
	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "Unknown";
}

static const char *sync_kind(unsigned k)
{
	static const char *const n[] = { "Unknown Synchronize", "Event Synchronize",
					 "Stream Wait Event", "Stream Synchronize",
					 "Context Synchronize" };
	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "Unknown Synchronize";
}

struct gl {
	struct model *m;
	uint32_t first_track, process, pid;
	struct hmap dev_tracks;	 /* device << 32 | stream -> track */
	struct hmap host_tracks; /* tid -> track */
	struct hmap ext_of;	 /* correlation -> external id (from the calls) */
	struct hmap call_at;	 /* correlation -> index of the call entry + 1 */
	struct hmap shown_as;	 /* kernel name (string id) -> its demangled form's string id */
	uint32_t k_corr, k_ext, k_dev, k_stream, k_ctx, k_grid, k_block, k_regs, k_shared, k_bytes,
		k_bw, k_graph, k_addr, k_total, k_tid, k_ret;
	bool *renest; /* per track from first_track: runtime calls were added */
	uint32_t renest_cap;
};

static uint32_t gl_str(struct gl *g, const char *s)
{
	return model_intern(g->m, s, strlen(s));
}

/* The name a kernel is shown by: its demangled form where it is a mangled C++ name; UINT32_MAX
 * when out of memory. */
static uint32_t kernel_name(struct gl *g, uint32_t name)
{
	if (!name)
		return 0;
	uint64_t *v = hmap_find(&g->shown_as, name);
	if (v)
		return (uint32_t)*v;
	char *d = demangle_cxx(model_str(g->m, name));
	uint32_t shown = d ? gl_str(g, d) : name;
	free(d);
	return shown && hmap_put(&g->shown_as, name, shown) ? shown : UINT32_MAX;
}

static uint32_t dev_track(struct gl *g, uint32_t device, uint32_t stream)
{
	uint64_t key = (uint64_t)device << 32 | stream;
	uint64_t *v = hmap_find(&g->dev_tracks, key);
	if (v)
		return (uint32_t)*v;
	char name[48];
	snprintf(name, sizeof(name), "stream %u", stream);
	uint32_t t = model_add_device_track(g->m, device, stream, g->process, gl_str(g, name));
	if (t == MODEL_NO_TRACK || !hmap_put(&g->dev_tracks, key, t))
		return MODEL_NO_TRACK;
	g->m->tracks[t].file_track = UINT32_MAX;
	return t;
}

static uint32_t host_track(struct gl *g, uint64_t tid)
{
	uint64_t *v = hmap_find(&g->host_tracks, tid);
	if (v)
		return (uint32_t)*v;
	uint32_t t = model_add_track(g->m, MODEL_TRACK_THREAD, g->pid, tid, 0);
	if (t == MODEL_NO_TRACK || !hmap_put(&g->host_tracks, tid, t))
		return MODEL_NO_TRACK;
	g->m->tracks[t].file_track = UINT32_MAX;
	return t;
}

static bool arg_i(struct gl *g, uint32_t key, int64_t v)
{
	return model_add_arg(g->m, key, MODEL_ARG_I64, (uint64_t)v) != MODEL_NONE;
}

static bool arg_s(struct gl *g, uint32_t key, const char *s, uint8_t type)
{
	return model_add_arg(g->m, key, type, gl_str(g, s)) != MODEL_NONE;
}

/* A range with its arguments (added right after it: first_arg/nargs cover them). */
static uint64_t add_range(struct gl *g, uint32_t t, const struct ops_gpu_entry *e, uint32_t name,
			  uint8_t cat)
{
	int64_t s = (int64_t)e->start_ticks, d = (int64_t)(e->end_ticks - e->start_ticks);
	uint64_t r = model_add_range(g->m, t, s, d < 0 ? 0 : d, name, cat, 0);
	if (r == MODEL_NONE)
		return r;
	g->m->tracks[t].ranges.first_arg[r] = g->m->nargs;
	return r;
}

static void end_args(struct gl *g, uint32_t t, uint64_t r)
{
	struct model_track *tr = &g->m->tracks[t];
	tr->ranges.nargs[r] = (uint32_t)(g->m->nargs - tr->ranges.first_arg[r]);
}

static bool device_args(struct gl *g, const struct ops_gpu_entry *e, uint64_t ext)
{
	bool ok = arg_i(g, g->k_dev, e->device) && arg_i(g, g->k_ctx, e->context) &&
		  arg_i(g, g->k_stream, e->stream) && arg_i(g, g->k_corr, e->correlation);
	if (ext)
		ok = ok && arg_i(g, g->k_ext, (int64_t)ext);
	if (e->graph_id)
		ok = ok && arg_i(g, g->k_graph, e->graph_id);
	return ok;
}

static bool add_work(struct gl *g, const struct ops_gpu_entry *e, int64_t *allocated)
{
	uint64_t ext = e->external_id;
	if (!ext && e->correlation) {
		uint64_t *v = hmap_find(&g->ext_of, e->correlation);
		ext = v ? *v : 0;
	}
	uint32_t stream = e->stream == UINT32_MAX ? 0 : e->stream;
	uint32_t t = dev_track(g, e->device, stream);
	if (t == MODEL_NO_TRACK)
		return false;
	char name[128], tmp[96];
	uint64_t r;
	uint32_t name_id;
	switch (e->kind) {
	case OPS_GPU_KERNEL:
		if ((name_id = kernel_name(g, e->name_id)) == UINT32_MAX ||
		    (r = add_range(g, t, e, name_id, OPSCOPE_CAT_KERNEL)) == MODEL_NONE ||
		    !device_args(g, e, ext))
			return false;
		snprintf(tmp, sizeof(tmp), "[%u, %u, %u]", e->grid[0], e->grid[1], e->grid[2]);
		if (!arg_s(g, g->k_grid, tmp, MODEL_ARG_JSON))
			return false;
		snprintf(tmp, sizeof(tmp), "[%u, %u, %u]", e->block[0], e->block[1], e->block[2]);
		if (!arg_s(g, g->k_block, tmp, MODEL_ARG_JSON) ||
		    !arg_i(g, g->k_regs, e->registers) || !arg_i(g, g->k_shared, e->shared))
			return false;
		break;
	case OPS_GPU_MEMCPY:
		snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_kind(e->sub),
			 mem_kind(e->src_kind), mem_kind(e->dst_kind));
		if ((r = add_range(g, t, e, gl_str(g, name), OPSCOPE_CAT_MEMCPY)) == MODEL_NONE ||
		    !device_args(g, e, ext) || !arg_i(g, g->k_bytes, (int64_t)e->bytes))
			return false;
		if (e->end_ticks > e->start_ticks) {
			double gbps = (double)e->bytes / (double)(e->end_ticks - e->start_ticks);
			if (model_add_arg(g->m, g->k_bw, MODEL_ARG_F64, 0) == MODEL_NONE)
				return false;
			memcpy(&g->m->args.bits[g->m->nargs - 1], &gbps, sizeof(gbps));
		}
		break;
	case OPS_GPU_MEMSET:
		snprintf(name, sizeof(name), "Memset (%s)", mem_kind(e->src_kind));
		if ((r = add_range(g, t, e, gl_str(g, name), OPSCOPE_CAT_MEMSET)) == MODEL_NONE ||
		    !device_args(g, e, ext) || !arg_i(g, g->k_bytes, (int64_t)e->bytes))
			return false;
		break;
	case OPS_GPU_SYNC:
		if ((r = add_range(g, t, e, gl_str(g, sync_kind(e->sub)),
				   OPSCOPE_CAT_USER_DEFINED)) == MODEL_NONE ||
		    !device_args(g, e, ext))
			return false;
		break;
	case OPS_GPU_MEMORY: {
		int64_t b = e->sub == 2 ? -(int64_t)e->bytes : (int64_t)e->bytes;
		int64_t *total = &allocated[e->device & 255];
		*total += b;
		uint64_t i = model_add_instant(g->m, t, (int64_t)e->start_ticks,
					       gl_str(g, "[memory]"), OPSCOPE_CAT_MEMORY);
		if (i == MODEL_NONE)
			return false;
		struct model_track *tr = &g->m->tracks[t];
		tr->instants.first_arg[i] = g->m->nargs;
		snprintf(tmp, sizeof(tmp), "0x%" PRIx64, e->address);
		if (!arg_i(g, g->k_dev, e->device) || !arg_i(g, g->k_bytes, b) ||
		    !arg_s(g, g->k_addr, tmp, MODEL_ARG_STR) || !arg_i(g, g->k_total, *total) ||
		    !arg_s(g, g->k_stream, mem_kind(e->src_kind), MODEL_ARG_STR) ||
		    (e->correlation && !arg_i(g, g->k_corr, (int64_t)e->correlation)))
			return false;
		tr = &g->m->tracks[t];
		tr->instants.nargs[i] = (uint32_t)(g->m->nargs - tr->instants.first_arg[i]);
		snprintf(name, sizeof(name), "GPU %u memory allocated (bytes)", e->device);
		return model_add_counter(g->m, t, (int64_t)e->start_ticks, gl_str(g, name),
					 (double)*total) != MODEL_NONE;
	}
	default:
		return true;
	}
	end_args(g, t, r);
	if (!model_set_correlation(g->m, t, r, e->correlation))
		return false;
	/* the flow from the call that launched it */
	uint64_t *c = e->correlation ? hmap_find(&g->call_at, e->correlation) : NULL;
	if (c && *c) {
		const struct ops_gpu_entry *call = (const struct ops_gpu_entry *)(uintptr_t)*c;
		uint32_t ht = host_track(g, call->bytes);
		if (ht == MODEL_NO_TRACK ||
		    model_add_flow(g->m, e->correlation, ht, (int64_t)call->start_ticks, t,
				   (int64_t)e->start_ticks) == MODEL_NONE)
			return false;
	}
	return true;
}

static bool add_call(struct gl *g, const struct ops_gpu_entry *e)
{
	uint32_t t = host_track(g, e->bytes);
	if (t == MODEL_NO_TRACK)
		return false;
	uint8_t cat =
		e->kind == OPS_GPU_DRIVER ? OPSCOPE_CAT_CUDA_DRIVER : OPSCOPE_CAT_CUDA_RUNTIME;
	uint64_t r = add_range(g, t, e, e->name_id, cat);
	if (r == MODEL_NONE || !arg_i(g, g->k_corr, e->correlation) ||
	    (e->external_id && !arg_i(g, g->k_ext, (int64_t)e->external_id)) ||
	    (e->registers && !arg_i(g, g->k_ret, e->registers)))
		return false;
	end_args(g, t, r);
	if (!model_set_correlation(g->m, t, r, e->correlation))
		return false;
	uint32_t at = t - g->first_track;
	if (at >= g->renest_cap) {
		uint32_t cap = at * 2 + 16;
		bool *n = realloc(g->renest, cap * sizeof(*n));
		if (!n)
			return false;
		memset(n + g->renest_cap, 0, (cap - g->renest_cap) * sizeof(*n));
		g->renest = n;
		g->renest_cap = cap;
	}
	g->renest[at] = true;
	return true;
}

/* Allocations in time order, for the running totals (ties in file order). */
struct at_time {
	uint64_t ns, index;
};

static int at_time_cmp(const void *a, const void *b)
{
	const struct at_time *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

bool gpu_load_settle(struct model *m, uint32_t first_track, uint32_t process, uint32_t pid,
		     struct ops_gpu_entry *e, uint64_t n, uint64_t first_flow)
{
	(void)first_flow;
	struct gl g = { .m = m, .first_track = first_track, .process = process, .pid = pid };
	g.k_corr = gl_str(&g, "correlation");
	g.k_ext = gl_str(&g, "External id");
	g.k_dev = gl_str(&g, "device");
	g.k_stream = gl_str(&g, "stream");
	g.k_ctx = gl_str(&g, "context");
	g.k_grid = gl_str(&g, "grid");
	g.k_block = gl_str(&g, "block");
	g.k_regs = gl_str(&g, "registers per thread");
	g.k_shared = gl_str(&g, "shared memory");
	g.k_bytes = gl_str(&g, "bytes");
	g.k_bw = gl_str(&g, "memory bandwidth (GB/s)");
	g.k_graph = gl_str(&g, "graph id");
	g.k_addr = gl_str(&g, "Addr");
	g.k_total = gl_str(&g, "Total Allocated");
	g.k_ret = gl_str(&g, "return value");
	bool ok = !m->oom;
	/* the host tracks of the file by thread id (the first track of a tid wins) */
	for (uint32_t t = first_track; ok && t < m->ntracks; t++)
		if (m->tracks[t].kind == MODEL_TRACK_THREAD &&
		    !hmap_find(&g.host_tracks, m->tracks[t].tid))
			ok = hmap_put(&g.host_tracks, m->tracks[t].tid, t);
	/* external correlations (in any order with their calls: buffers complete out of order) */
	for (uint64_t i = 0; ok && i < n; i++)
		if (e[i].kind == OPS_GPU_EXTERNAL && e[i].correlation)
			ok = hmap_put(&g.ext_of, e[i].correlation, e[i].external_id);
	/* calls first: flow sources by correlation id */
	int64_t overhead = 0, noverhead = 0;
	for (uint64_t i = 0; ok && i < n; i++) {
		if (e[i].kind == OPS_GPU_RUNTIME || e[i].kind == OPS_GPU_DRIVER) {
			if (!e[i].external_id && e[i].correlation) {
				uint64_t *x = hmap_find(&g.ext_of, e[i].correlation);
				e[i].external_id = x ? *x : 0;
			}
			if (ok && e[i].correlation && !hmap_find(&g.call_at, e[i].correlation))
				ok = hmap_put(&g.call_at, e[i].correlation,
					      (uint64_t)(uintptr_t)&e[i]);
			ok = ok && add_call(&g, &e[i]);
		} else if (e[i].kind == OPS_GPU_OVERHEAD) {
			overhead += (int64_t)(e[i].end_ticks - e[i].start_ticks);
			noverhead++;
		}
	}
	int64_t allocated[256] = { 0 };
	for (uint64_t i = 0; ok && i < n; i++)
		if (e[i].kind != OPS_GPU_RUNTIME && e[i].kind != OPS_GPU_DRIVER &&
		    e[i].kind != OPS_GPU_OVERHEAD && e[i].kind != OPS_GPU_MEMORY &&
		    e[i].kind != OPS_GPU_EXTERNAL)
			ok = add_work(&g, &e[i], allocated);
	struct at_time *order = NULL;
	uint64_t nmem = 0;
	for (uint64_t i = 0; i < n; i++)
		nmem += e[i].kind == OPS_GPU_MEMORY;
	if (ok && nmem) {
		if (!(order = malloc(nmem * sizeof(*order))))
			ok = false;
		uint64_t k = 0;
		for (uint64_t i = 0; ok && i < n; i++)
			if (e[i].kind == OPS_GPU_MEMORY)
				order[k++] = (struct at_time){ e[i].start_ticks, i };
		if (ok)
			qsort(order, nmem, sizeof(*order), at_time_cmp);
		for (uint64_t a = 0; ok && a < nmem; a++)
			ok = add_work(&g, &e[order[a].index], allocated);
	}
	free(order);
	if (ok && noverhead) {
		char v[32];
		snprintf(v, sizeof(v), "%" PRId64, overhead);
		model_set_meta(m, pid, gl_str(&g, "gpu.overhead_ns"), gl_str(&g, v));
		snprintf(v, sizeof(v), "%" PRId64, noverhead);
		model_set_meta(m, pid, gl_str(&g, "gpu.overhead_records"), gl_str(&g, v));
	}
	/* host tracks with calls: nested again, so calls sit under the ranges around them */
	for (uint32_t i = 0; ok && i < g.renest_cap; i++)
		if (g.renest[i])
			model_nest_track(m, first_track + i);
	free(g.renest);
	hmap_free(&g.dev_tracks);
	hmap_free(&g.host_tracks);
	hmap_free(&g.ext_of);
	hmap_free(&g.call_at);
	hmap_free(&g.shown_as);
	return ok && !m->oom;
}
