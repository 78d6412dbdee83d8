/*
 * gpu_time.c: GPU time, explained: the time breakdown per device and step, the kernel
 * launch statistics, and the queue length per stream (gpu_time.h states the rules).
 *
 * All three read the launch links of the tree (a runtime call -> the device ops it
 * launched), turned here into a per device op table of its launching call's start and end
 * (INT64_MIN: no call). The breakdown merges each device's ops into one union per class and
 * peels them in priority order (compute, then communication outside compute, then copies
 * outside both, then memsets outside all three), so the four busy parts are disjoint and
 * their sum is the union of the device work; the idle gaps are the span's complement of
 * that union, each instant of them given to one cause, so busy + idle = the span exactly. Steps and
 * window are gpu_util.c's (the Step table's rows; without steps, the span of the file's
 * device work).
 */
#include "analyze/gpu_time.h"

#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/device.h"
#include "analyze/gpu_util.h"
#include "analyze/ranks.h"
#include "analyze/steps.h"

static const char *const part_names[GPU_TIME_NPARTS] = {
	"Compute",    "Communication", "Memcpy",	   "Memset",
	"Idle: data", "Idle: sync",    "Idle: host-bound", "Idle: other",
};

const char *gpu_time_part_name(enum gpu_time_part p)
{
	return p < GPU_TIME_NPARTS ? part_names[p] : "?";
}

static bool has_ci(const char *s, const char *needle)
{
	return analysis_name_has(s, needle);
}

bool gpu_time_is_comm_name(const char *name)
{
	return has_ci(name, "nccl") || has_ci(name, "rccl") || has_ci(name, "hccl") ||
	       has_ci(name, "cross_device_reduce");
}

bool gpu_time_is_sync_call(const char *name)
{
	bool api = strncmp(name, "cuda", 4) == 0 || strncmp(name, "hip", 3) == 0 ||
		   strncmp(name, "cu", 2) == 0;
	if (!api)
		return false;
	if (strstr(name, "Synchronize"))
		return true;
	/* cudaMemcpy, cudaMemcpy2D, hipMemcpyDtoH, cuMemcpyHtoD: the host waits for the copy
	 * (pageable memory); their Async forms do not */
	return strstr(name, "Memcpy") && !strstr(name, "Async");
}

/* What a name is, kept per string id in the by_name cache (bits; 0: not looked at): a
 * synchronizing runtime call (NAME_SYNC_*) and a communication kernel (NAME_COMM_*). Kernel
 * names are long and a trace has hundreds of thousands of kernels: scanning each name four
 * times per kernel was more than half of a 1 GiB report. */
#define NAME_SYNC_NO  0x01u
#define NAME_SYNC_YES 0x02u
#define NAME_COMM_NO  0x04u
#define NAME_COMM_YES 0x08u

/* Is string id n a communication kernel's name? Cached in by_name (may be NULL). */
static bool comm_name(const struct model *m, uint8_t *by_name, uint32_t n)
{
	if (!by_name || n >= m->nstrings)
		return gpu_time_is_comm_name(model_str(m, n));
	if (!(by_name[n] & (NAME_COMM_NO | NAME_COMM_YES)))
		by_name[n] |= gpu_time_is_comm_name(model_str(m, n)) ? NAME_COMM_YES : NAME_COMM_NO;
	return by_name[n] & NAME_COMM_YES;
}

/* Kineto's cuda_sync events that block the host ("Stream Wait Event" makes one stream wait
 * for another on the device; the host goes on). */
static bool is_sync_event(const char *name)
{
	return strcmp(name, "Context Sync") == 0 || strcmp(name, "Stream Sync") == 0 ||
	       strcmp(name, "Event Sync") == 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Launch links */

/* Per model track, for device tracks: the start and end of the call that launched each
 * range (INT64_MIN: none). */
struct launch_map {
	int64_t **s, **e; /* [track][range], NULL for tracks without a launched range */
	uint32_t ntracks; /* slots in s and e */
};

static void launch_map_free(struct launch_map *L)
{
	for (uint32_t t = 0; t < L->ntracks && L->s; t++) {
		free(L->s[t]);
		free(L->e[t]);
	}
	free(L->s);
	free(L->e);
	memset(L, 0, sizeof(*L));
}

static bool launch_map_build(const struct analysis *a, struct launch_map *L)
{
	const struct model *m = a->m;
	memset(L, 0, sizeof(*L));
	L->ntracks = m->ntracks;
	L->s = calloc(m->ntracks ? m->ntracks : 1, sizeof(*L->s));
	L->e = calloc(m->ntracks ? m->ntracks : 1, sizeof(*L->e));
	if (!L->s || !L->e) {
		launch_map_free(L);
		return false;
	}
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		const uint32_t *ln = a->tree.tracks[t].launches;
		if (tr->kind == MODEL_TRACK_DEVICE || !ln)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int64_t cs = tr->ranges.start_ns[i], ce = cs + tr->ranges.dur_ns[i];
			for (uint32_t l = ln[i]; l != TREE_NONE; l = a->tree.launches[l].next) {
				const struct tree_launch *x = &a->tree.launches[l];
				if (!L->s[x->track]) {
					uint64_t n = m->tracks[x->track].nranges;
					L->s[x->track] = malloc(n * sizeof(int64_t));
					L->e[x->track] = malloc(n * sizeof(int64_t));
					if (!L->s[x->track] || !L->e[x->track]) {
						launch_map_free(L);
						return false;
					}
					for (uint64_t k = 0; k < n; k++)
						L->s[x->track][k] = L->e[x->track][k] = INT64_MIN;
				}
				L->s[x->track][x->range] = cs;
				L->e[x->track][x->range] = ce;
			}
		}
	}
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Time breakdown */

/* out = a ∪ b, merged (a and b merged). */
static void ivec_union(const struct ivec *a, const struct ivec *b, struct ivec *out)
{
	for (size_t i = 0; i < a->n; i++)
		ivec_push(out, a->v[i].s, a->v[i].e);
	for (size_t i = 0; i < b->n; i++)
		ivec_push(out, b->v[i].s, b->v[i].e);
	ivec_merge(out);
}

/* What a device's spans are read from. */
struct bd_data {
	struct ivec cls[4];	 /* merged: compute, comm, memcpy, memset kernels (raw classes) */
	struct ivec part[4];	 /* merged, disjoint: the four busy parts */
	struct ivec work;	 /* merged: all device work */
	struct ivec queued;	 /* merged: [call end, op start) of the device's launched ops */
	struct ivec sync;	 /* merged: the file's sync calls and the device's sync events */
	const struct ivec *data; /* merged: the file's Dataloader ranges and data-wait gaps */
};

static void bd_free(struct bd_data *d)
{
	for (int k = 0; k < 4; k++) {
		ivec_free(&d->cls[k]);
		ivec_free(&d->part[k]);
	}
	ivec_free(&d->work);
	ivec_free(&d->queued);
	ivec_free(&d->sync);
}

static bool bd_oom(const struct bd_data *d)
{
	bool oom = d->work.oom || d->queued.oom || d->sync.oom;
	for (int k = 0; k < 4; k++)
		oom = oom || d->cls[k].oom || d->part[k].oom;
	return oom;
}

/* Give each instant of idle gap [a, b) of a span to the first cause that holds at it: data,
 * sync, other (work launched and not started), host-bound (none). A gap counts once for
 * each cause it gave time to. */
static void bd_gap(const struct bd_data *d, struct gpu_time_span *sp, int64_t a, int64_t b)
{
	int64_t got[GPU_TIME_NPARTS] = { 0 };
	for (int64_t t = a; t < b;) {
		int64_t next = b;
		bool data = ivec_at(d->data, t, &next);
		bool sync = ivec_at(&d->sync, t, &next);
		bool queued = ivec_at(&d->queued, t, &next);
		enum gpu_time_part p = data	? GPU_TIME_IDLE_DATA
				       : sync	? GPU_TIME_IDLE_SYNC
				       : queued ? GPU_TIME_IDLE_OTHER
						: GPU_TIME_IDLE_HOST;
		got[p] += next - t;
		t = next;
	}
	for (int p = GPU_TIME_IDLE_DATA; p < GPU_TIME_NPARTS; p++)
		if (got[p]) {
			sp->part[p] += got[p];
			sp->gaps[p]++;
		}
}

static void bd_fill(const struct bd_data *d, struct gpu_time_span *sp)
{
	for (int k = 0; k < 4; k++)
		sp->part[k] = ivec_sum_within(&d->part[k], sp->s, sp->e);
	const struct ivec *w = &d->work;
	int64_t cur = sp->s;
	for (size_t i = ivec_first_ending_after(w, sp->s); i < w->n && w->v[i].s < sp->e; i++) {
		if (w->v[i].s > cur)
			bd_gap(d, sp, cur, w->v[i].s);
		cur = w->v[i].e > cur ? w->v[i].e : cur;
	}
	if (cur < sp->e)
		bd_gap(d, sp, cur, sp->e);
}

/* Collect device `dev` of file f into d (host_sync: the file's sync calls, merged). */
static bool bd_collect(const struct model *m, const struct launch_map *L, uint32_t f, uint32_t dev,
		       const struct ivec *host_sync, uint8_t *by_name, struct bd_data *d)
{
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_DEVICE || tr->file != f || tr->pid != dev)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t c = r->category[i];
			int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
			if (!tree_is_device_work(c)) {
				if (e > s && is_sync_event(model_str(m, r->name[i])))
					ivec_push(&d->sync, s, e);
				continue;
			}
			int k = c == OPSCOPE_CAT_MEMCPY	  ? 2
				: c == OPSCOPE_CAT_MEMSET ? 3
				: c == OPSCOPE_CAT_COMMUNICATION ||
						comm_name(m, by_name, r->name[i])
					? 1
					: 0;
			ivec_push(&d->cls[k], s, e);
			ivec_push(&d->work, s, e);
			int64_t le = L->e[t] ? L->e[t][i] : INT64_MIN;
			if (le != INT64_MIN && le < s)
				ivec_push(&d->queued, le, s);
		}
	}
	for (size_t i = 0; i < host_sync->n; i++)
		ivec_push(&d->sync, host_sync->v[i].s, host_sync->v[i].e);
	for (int k = 0; k < 4; k++)
		ivec_merge(&d->cls[k]);
	ivec_merge(&d->work);
	ivec_merge(&d->queued);
	ivec_merge(&d->sync);
	/* peel: compute; comm \ compute; memcpy \ (compute ∪ comm); memset \ all three */
	struct ivec above = { 0 }, next = { 0 };
	ivec_union(&d->cls[0], &above, &d->part[0]);
	for (int k = 1; k < 4; k++) {
		ivec_union(&above, &d->cls[k - 1], &next);
		ivec_free(&above);
		above = next;
		memset(&next, 0, sizeof(next));
		ivec_subtract(&d->cls[k], &above, &d->part[k]);
	}
	bool oom = above.oom;
	ivec_free(&above);
	return !oom && !bd_oom(d);
}

/* The file's host ranges of interest: Dataloader ranges and sync calls, merged. */
static void file_host(const struct model *m, uint32_t f, uint8_t *sync_by_name, struct ivec *dl,
		      struct ivec *sync)
{
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind == MODEL_TRACK_DEVICE || tr->file != f)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t c = r->category[i];
			int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
			if (c == OPSCOPE_CAT_DATALOADER) {
				ivec_push(dl, s, e);
				continue;
			}
			if (!tree_is_runtime(c) || e <= s)
				continue;
			uint32_t n = r->name[i];
			bool yes;
			if (sync_by_name && n < m->nstrings) {
				if (!(sync_by_name[n] & (NAME_SYNC_NO | NAME_SYNC_YES)))
					sync_by_name[n] |= gpu_time_is_sync_call(model_str(m, n))
								   ? NAME_SYNC_YES
								   : NAME_SYNC_NO;
				yes = sync_by_name[n] & NAME_SYNC_YES;
			} else {
				yes = gpu_time_is_sync_call(model_str(m, n));
			}
			if (yes)
				ivec_push(sync, s, e);
		}
	}
}

static bool push_device(struct gpu_time *out, uint32_t *cap, struct gpu_time_device **g)
{
	if (out->ndev == *cap) {
		uint32_t n = *cap ? *cap * 2 : 4;
		struct gpu_time_device *v = realloc(out->dev, n * sizeof(*v));
		if (!v)
			return false;
		out->dev = v;
		*cap = n;
	}
	*g = &out->dev[out->ndev++];
	memset(*g, 0, sizeof(**g));
	return true;
}

/* The breakdown of the devices of file f. */
static bool bd_file(const struct analysis *a, const struct launch_map *L, uint32_t f,
		    uint8_t *sync_by_name, struct gpu_time *out, uint32_t *cap)
{
	const struct model *m = a->m;
	uint32_t dev[DEVICE_MAX_GPUS];
	uint32_t ndev = device_file_gpus(m, f, dev, NULL);
	if (!ndev)
		return true;
	struct step_table st;
	if (steps_analyze(&a->tree, f, &st) != 0)
		return false;
	struct ivec dl = { 0 }, hsync = { 0 };
	file_host(m, f, sync_by_name, &dl, &hsync);
	/* a step waits for its data from its start to the end of its last Dataloader range */
	for (uint32_t k = 0; k < st.nrows; k++)
		if (st.rows[k].gap_ns > 0)
			ivec_push(&dl, st.rows[k].start_ns,
				  st.rows[k].start_ns + st.rows[k].gap_ns);
	ivec_merge(&dl);
	ivec_merge(&hsync);
	bool ok = !dl.oom && !hsync.oom;
	int64_t ws, we;
	gpu_util_window(m, f, &st, &ws, &we);
	for (uint32_t k = 0; k < ndev && ok; k++) {
		struct gpu_time_device *g;
		if (!(ok = push_device(out, cap, &g)))
			break;
		g->file = f;
		g->device = dev[k];
		struct bd_data d;
		memset(&d, 0, sizeof(d));
		d.data = &dl;
		if (!(ok = bd_collect(m, L, f, dev[k], &hsync, sync_by_name, &d))) {
			bd_free(&d);
			break;
		}
		if (st.nrows) {
			g->steps = calloc(st.nrows, sizeof(*g->steps));
			if (!(ok = g->steps != NULL)) {
				bd_free(&d);
				break;
			}
			g->nsteps = st.nrows;
			for (uint32_t i = 0; i < st.nrows; i++) {
				g->steps[i].name = st.rows[i].name;
				g->steps[i].s = st.rows[i].start_ns;
				g->steps[i].e = st.rows[i].end_ns;
				bd_fill(&d, &g->steps[i]);
			}
		}
		g->window.s = ws;
		g->window.e = we;
		bd_fill(&d, &g->window);
		bd_free(&d);
	}
	ivec_free(&dl);
	ivec_free(&hsync);
	steps_free(&st);
	return ok;
}

int gpu_time_analyze(const struct analysis *a, struct gpu_time *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	struct launch_map L;
	if (!launch_map_build(a, &L))
		return OPSCOPE_ENOMEM;
	uint8_t *sync_by_name = calloc(m->nstrings ? m->nstrings : 1, 1); /* NULL: no cache */
	bool *keep = malloc((m->nfiles ? m->nfiles : 1) * sizeof(*keep));
	uint32_t cap = 0;
	bool ok = keep && ranks_kept_files(m, keep) != UINT32_MAX;
	/* a second copy of a rank is left out, as the ranks view leaves it (and says so) */
	for (uint32_t f = 0; f < m->nfiles && ok; f++)
		ok = !keep[f] || bd_file(a, &L, f, sync_by_name, out, &cap);
	free(keep);
	free(sync_by_name);
	launch_map_free(&L);
	if (!ok) {
		gpu_time_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void gpu_time_free(struct gpu_time *t)
{
	for (uint32_t i = 0; i < t->ndev; i++)
		free(t->dev[i].steps);
	free(t->dev);
	memset(t, 0, sizeof(*t));
}

/* ---------------------------------------------------------------------------------------- */
/* Launch statistics */

/* A row and its name, for sorting (qsort has no context argument). */
struct launch_key {
	struct gpu_launch_row row; /* the row */
	const char *name;	   /* its name's text */
};

static int launch_key_cmp(const void *x, const void *y)
{
	const struct launch_key *a = x, *b = y;
	if (a->row.count != b->row.count)
		return a->row.count < b->row.count ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* Order the rows by count, most first, then by name. */
static bool launch_sort(const struct model *m, struct gpu_launch *out)
{
	struct launch_key *k = malloc(out->nrows * sizeof(*k));
	if (!k)
		return false;
	for (uint32_t i = 0; i < out->nrows; i++)
		k[i] = (struct launch_key){ out->rows[i], model_str(m, out->rows[i].name) };
	qsort(k, out->nrows, sizeof(*k), launch_key_cmp);
	for (uint32_t i = 0; i < out->nrows; i++)
		out->rows[i] = k[i].row;
	free(k);
	return true;
}

static void launch_add(struct gpu_launch_row *r, int64_t cpu, int64_t delay, int64_t gpu)
{
	r->count++;
	r->cpu_sum_ns += cpu;
	r->cpu_max_ns = cpu > r->cpu_max_ns ? cpu : r->cpu_max_ns;
	r->delay_sum_ns += delay;
	r->delay_max_ns = delay > r->delay_max_ns ? delay : r->delay_max_ns;
	r->gpu_sum_ns += gpu;
	r->short_ops += gpu < GPU_TIME_SHORT_NS;
	r->shorter += cpu <= GPU_TIME_RUNTIME_CUTOFF_NS && gpu < cpu;
	r->cpu_outliers += cpu > GPU_TIME_RUNTIME_CUTOFF_NS;
	r->delay_outliers += delay > GPU_TIME_DELAY_CUTOFF_NS;
}

void gpu_launch_row_add(struct gpu_launch_row *into, const struct gpu_launch_row *x)
{
	into->count += x->count;
	into->cpu_sum_ns += x->cpu_sum_ns;
	into->cpu_max_ns = x->cpu_max_ns > into->cpu_max_ns ? x->cpu_max_ns : into->cpu_max_ns;
	into->delay_sum_ns += x->delay_sum_ns;
	into->delay_max_ns =
		x->delay_max_ns > into->delay_max_ns ? x->delay_max_ns : into->delay_max_ns;
	into->gpu_sum_ns += x->gpu_sum_ns;
	into->short_ops += x->short_ops;
	into->shorter += x->shorter;
	into->cpu_outliers += x->cpu_outliers;
	into->delay_outliers += x->delay_outliers;
}

int gpu_launch_order(const struct model *m, struct gpu_launch *l)
{
	return l->nrows && !launch_sort(m, l) ? OPSCOPE_ENOMEM : 0;
}

int gpu_launch_analyze(const struct analysis *a, struct gpu_launch *out)
{
	return gpu_launch_analyze_file(a, UINT32_MAX, out);
}

int gpu_launch_analyze_file(const struct analysis *a, uint32_t file, struct gpu_launch *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	struct launch_map L;
	if (!launch_map_build(a, &L))
		return OPSCOPE_ENOMEM;
	uint32_t *row_of = calloc(m->nstrings ? m->nstrings : 1, sizeof(*row_of)); /* row + 1 */
	uint32_t cap = 0;
	bool ok = row_of != NULL;
	for (uint32_t t = 0; t < m->ntracks && ok; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_DEVICE || (file != UINT32_MAX && tr->file != file))
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges && ok; i++) {
			if (!tree_is_device_work(r->category[i]))
				continue;
			if (!L.s[t] || L.s[t][i] == INT64_MIN) {
				out->unlaunched++;
				continue;
			}
			uint32_t n = r->name[i] < m->nstrings ? r->name[i] : 0;
			if (!row_of[n]) {
				if (out->nrows == cap) {
					uint32_t c = cap ? cap * 2 : 64;
					struct gpu_launch_row *v =
						realloc(out->rows, c * sizeof(*v));
					if (!(ok = v != NULL))
						break;
					out->rows = v;
					cap = c;
				}
				memset(&out->rows[out->nrows], 0, sizeof(*out->rows));
				out->rows[out->nrows].name = n;
				out->rows[out->nrows].category = r->category[i];
				row_of[n] = ++out->nrows;
			}
			int64_t s = r->start_ns[i], cpu = L.e[t][i] - L.s[t][i];
			int64_t delay = s - L.e[t][i];
			delay = delay > 0 ? delay : 0;
			launch_add(&out->rows[row_of[n] - 1], cpu, delay, r->dur_ns[i]);
			launch_add(&out->total, cpu, delay, r->dur_ns[i]);
		}
	}
	free(row_of);
	launch_map_free(&L);
	if (ok && out->nrows)
		ok = launch_sort(m, out);
	if (!ok) {
		gpu_launch_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void gpu_launch_free(struct gpu_launch *l)
{
	free(l->rows);
	memset(l, 0, sizeof(*l));
}

/* ---------------------------------------------------------------------------------------- */
/* Queue length */

/* One end of a queued interval: +1 at the call's start, -1 at the op's start. */
struct q_edge {
	int64_t t; /* ns */
	int d;	   /* +1, -1 */
};

/* A stretch of constant queue length. */
struct q_seg {
	int64_t s, e; /* ns */
	uint32_t n;   /* ops queued */
};

static int q_edge_cmp(const void *x, const void *y)
{
	const struct q_edge *a = x, *b = y;
	return (a->t > b->t) - (a->t < b->t);
}

static void q_fill(const struct q_seg *seg, size_t nseg, struct gpu_queue_span *sp)
{
	size_t lo = 0, hi = nseg; /* first segment ending after s */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (seg[mid].e <= sp->s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < nseg && seg[i].s < sp->e; i++) {
		int64_t x = seg[i].s > sp->s ? seg[i].s : sp->s;
		int64_t y = seg[i].e < sp->e ? seg[i].e : sp->e;
		if (y <= x)
			continue;
		sp->queued_ns += (y - x) * (int64_t)seg[i].n;
		sp->max = seg[i].n > sp->max ? seg[i].n : sp->max;
		if (seg[i].n >= GPU_TIME_QUEUE_FULL)
			sp->full_ns += y - x;
	}
}

/* The queue of device track t into q (its window set). */
static bool q_stream(const struct model *m, const struct launch_map *L, uint32_t t,
		     struct gpu_queue_stream *q)
{
	const struct model_track *tr = &m->tracks[t];
	size_t n = 0;
	struct q_edge *edge = malloc((tr->nranges ? tr->nranges : 1) * 2 * sizeof(*edge));
	struct q_seg *seg = malloc((tr->nranges ? tr->nranges : 1) * 2 * sizeof(*seg));
	if (!edge || !seg) {
		free(edge);
		free(seg);
		return false;
	}
	for (uint64_t i = 0; i < tr->nranges; i++) {
		if (!tree_is_device_work(tr->ranges.category[i]) || !L->s[t] ||
		    L->s[t][i] == INT64_MIN)
			continue;
		q->ops++;
		int64_t ls = L->s[t][i], s = tr->ranges.start_ns[i];
		if (ls >= s) /* started as launched (or clocks disagree): never queued */
			continue;
		edge[n++] = (struct q_edge){ ls, 1 };
		edge[n++] = (struct q_edge){ s, -1 };
	}
	if (n)
		qsort(edge, n, sizeof(*edge), q_edge_cmp);
	size_t nseg = 0;
	long cur = 0;
	for (size_t i = 0; i < n;) {
		int64_t t0 = edge[i].t;
		while (i < n && edge[i].t == t0)
			cur += edge[i++].d;
		if (i < n && cur > 0)
			seg[nseg++] = (struct q_seg){ t0, edge[i].t, (uint32_t)cur };
	}
	q_fill(seg, nseg, &q->window);
	bool ok = true;
	uint32_t nb = gpu_util_nbuckets(q->window.s, q->window.e, &q->bucket_ns);
	if (nb) {
		int64_t ws = q->window.s, we = q->window.e;
		q->buckets = calloc(nb, sizeof(*q->buckets));
		ok = q->buckets != NULL;
		for (uint32_t b = 0; ok && b < nb; b++) {
			struct gpu_queue_span *sp = &q->buckets[b];
			sp->s = ws + (int64_t)b * q->bucket_ns;
			sp->e = sp->s + q->bucket_ns < we ? sp->s + q->bucket_ns : we;
			q_fill(seg, nseg, sp);
		}
		q->nbuckets = ok ? nb : 0;
	}
	free(edge);
	free(seg);
	return ok;
}

int gpu_queue_analyze(const struct analysis *a, struct gpu_queue *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	struct launch_map L;
	if (!launch_map_build(a, &L))
		return OPSCOPE_ENOMEM;
	uint32_t cap = 0;
	bool *keep = malloc((m->nfiles ? m->nfiles : 1) * sizeof(*keep));
	bool ok = keep && ranks_kept_files(m, keep) != UINT32_MAX;
	for (uint32_t f = 0; f < m->nfiles && ok; f++) {
		uint32_t dev[DEVICE_MAX_GPUS];
		uint32_t ndev = keep[f] ? device_file_gpus(m, f, dev, NULL) : 0;
		if (!ndev)
			continue;
		struct step_table st;
		if (steps_analyze(&a->tree, f, &st) != 0) {
			ok = false;
			break;
		}
		int64_t ws, we;
		gpu_util_window(m, f, &st, &ws, &we);
		steps_free(&st);
		for (uint32_t k = 0; k < ndev && ok; k++) {
			for (uint32_t t = 0; t < m->ntracks && ok; t++) {
				const struct model_track *tr = &m->tracks[t];
				if (tr->kind != MODEL_TRACK_DEVICE || tr->file != f ||
				    tr->pid != dev[k])
					continue;
				bool work = false;
				for (uint64_t i = 0; i < tr->nranges && !work; i++)
					work = tree_is_device_work(tr->ranges.category[i]);
				if (!work)
					continue;
				if (out->nst == cap) {
					uint32_t c = cap ? cap * 2 : 8;
					struct gpu_queue_stream *v =
						realloc(out->st, c * sizeof(*v));
					if (!(ok = v != NULL))
						break;
					out->st = v;
					cap = c;
				}
				struct gpu_queue_stream *q = &out->st[out->nst++];
				memset(q, 0, sizeof(*q));
				q->file = f;
				q->device = dev[k];
				q->stream = tr->stream;
				q->name = tr->name;
				q->window.s = ws;
				q->window.e = we;
				ok = q_stream(m, &L, t, q);
			}
		}
	}
	free(keep);
	launch_map_free(&L);
	if (!ok) {
		gpu_queue_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void gpu_queue_free(struct gpu_queue *q)
{
	for (uint32_t i = 0; i < q->nst; i++)
		free(q->st[i].buckets);
	free(q->st);
	memset(q, 0, sizeof(*q));
}
