/*
 * bare_steps.c: where the steps of opscope_step() (without a profiler) begin and end.
 *
 * Each call ends the thread's current ProfileStep range and begins the next. Programs call it
 * at the start of each iteration, or at its end (the pattern of torch's and Paddle's
 * prof.step(), and of opscope_step(batch_size)), and the recording cannot tell which:
 *
 *   calls at the start:  [setup] |it0| |it1| ... |itN-1 ...stop
 *   calls at the end:    [setup] it0| |it1| ... |itN-1| ...stop
 *
 * so the same iterations would give different steps: at the end, iteration 0 lies before the
 * first call, outside every step, and the interval after the last call is a step with
 * nothing in it (whose rate, samples over a few microseconds, was the Perf Summary's
 * maximum). The runtime marks the two ends (record/profiler.c: step_first_call on a thread's
 * first step, step_closed_at_stop on a step that the session's stop closed), and here they
 * are decided by what they hold, compared with their neighbour step:
 *
 *   - before the first step: the top-level ranges just before it, back to the first whose
 *     name the first step does not have among its top-level ranges, are iteration 0 when
 *     they include every such name; then they become ProfileStep#0, from the start of the
 *     first of them to the first step. Setup ranges (other names) stay outside.
 *   - the step closed at stop is a step when it has every top-level name of the step
 *     before it (the last iteration), and it ends with the last of its top-level ranges
 *     that follow each other with names of that step (teardown after them lies outside);
 *     otherwise (empty, or teardown only) it is removed and what it held lies outside the
 *     steps.
 *
 * Both patterns then give the same steps. A program whose iterations differ in their
 * top-level ranges from one step to the next can lose its first or last step here; one
 * that closes its last step with opscope_step_end() keeps it (no mark).
 */
#include "formats/opscope/bare_steps.h"

#include "opscope/opscope.h"

#include "util/hashmap.h"

/* The ranges r[from, to) (begin order) at depth `depth` whose start lies in
 * [lo, hi): their names into *names (a set). False when out of memory. */
static bool names_at(const struct model_ranges *r, uint64_t from, uint64_t to, uint32_t depth,
		     int64_t lo, int64_t hi, struct hmap *names)
{
	for (uint64_t i = from; i < to; i++)
		if (r->depth[i] == depth && r->start_ns[i] >= lo && r->start_ns[i] < hi &&
		    !hmap_put(names, r->name[i], 1))
			return false;
	return true;
}

/* Has range i of the track an i64 argument `key` (a string id, 0: none) equal to 1? */
static bool has_mark(const struct model *m, const struct model_ranges *r, uint64_t i, uint32_t key)
{
	if (!key)
		return false;
	for (uint32_t a = 0; a < r->nargs[i]; a++) {
		uint64_t k = r->first_arg[i] + a;
		if (m->args.key[k] == key && m->args.type[k] == MODEL_ARG_I64 &&
		    m->args.bits[k] == 1)
			return true;
	}
	return false;
}

/* Is every key of `want` in `have`? */
static bool covers(struct hmap *have, const struct hmap *want)
{
	for (uint64_t s = 0; s < want->cap; s++)
		if (want->slots[s].key != HMAP_EMPTY_KEY && !hmap_find(have, want->slots[s].key))
			return false;
	return true;
}

/* Iteration 0 before the first step f: ProfileStep#0 added when found. */
static bool settle_first(struct model *m, uint32_t track, uint64_t f, bool *changed)
{
	const struct model_ranges *r = &m->tracks[track].ranges;
	uint64_t n = m->tracks[track].nranges;
	int64_t f_start = r->start_ns[f], f_end = f_start + r->dur_ns[f];
	uint32_t d = r->depth[f];
	struct hmap inside = { 0 }, before = { 0 };
	bool ok = names_at(r, f + 1, n, d + 1, f_start, f_end, &inside);
	uint64_t first = MODEL_NONE;
	/* top-level ranges before f, last first, while the first step has their names */
	for (uint64_t i = f; ok && i-- > 0;) {
		if (r->depth[i] != d)
			continue;
		if (r->category[i] == OPSCOPE_CAT_PROFILE_STEP || !hmap_find(&inside, r->name[i]))
			break;
		ok = hmap_put(&before, r->name[i], 1);
		first = i;
	}
	if (ok && first != MODEL_NONE && inside.count && covers(&before, &inside)) {
		uint32_t name = model_intern(m, "ProfileStep#0", 13);
		int64_t start = r->start_ns[first];
		ok = name && model_add_range(m, track, start, f_start - start, name,
					     OPSCOPE_CAT_PROFILE_STEP, d) != MODEL_NONE;
		*changed = true;
	}
	hmap_free(&inside);
	hmap_free(&before);
	return ok;
}

/* The step z closed at stop: removed unless it holds the last iteration. */
static bool settle_last(struct model *m, uint32_t track, uint64_t z, bool *changed)
{
	const struct model_ranges *r = &m->tracks[track].ranges;
	uint64_t n = m->tracks[track].nranges;
	uint32_t d = r->depth[z];
	uint64_t prev = MODEL_NONE; /* the step that began last before z */
	for (uint64_t i = z; i-- > 0;)
		if (r->depth[i] == d && r->category[i] == OPSCOPE_CAT_PROFILE_STEP) {
			prev = i;
			break;
		}
	struct hmap held = { 0 }, want = { 0 };
	int64_t z_start = r->start_ns[z];
	bool ok = names_at(r, z + 1, n, d + 1, z_start, z_start + r->dur_ns[z], &held);
	if (ok && prev != MODEL_NONE)
		ok = names_at(r, prev + 1, z, d + 1, r->start_ns[prev],
			      r->start_ns[prev] + r->dur_ns[prev], &want);
	bool keep = held.count > 0 && covers(&held, &want);
	if (ok && !keep) {
		model_remove_range(m, track, z);
		*changed = true;
	} else if (ok && prev != MODEL_NONE) {
		/* the step ends with its last range of the iteration: what follows (teardown,
		 * a checkpoint) is outside, as setup is before the first step */
		struct model_ranges *w = &m->tracks[track].ranges;
		int64_t end = z_start;
		for (uint64_t i = z + 1; i < n && w->start_ns[i] < z_start + w->dur_ns[z]; i++) {
			if (w->depth[i] != d + 1)
				continue;
			if (!hmap_find(&want, w->name[i]))
				break;
			int64_t e = w->start_ns[i] + w->dur_ns[i];
			end = e > end ? e : end;
		}
		if (end < z_start + w->dur_ns[z]) {
			w->dur_ns[z] = end - z_start;
			*changed = true;
		}
	}
	hmap_free(&held);
	hmap_free(&want);
	return ok;
}

bool bare_steps_settle(struct model *m, uint32_t first_track)
{
	uint32_t first_key = model_find_str(m, "step_first_call");
	uint32_t stop_key = model_find_str(m, "step_closed_at_stop");
	if (!first_key && !stop_key)
		return true; /* no bare steps in the model */
	for (uint32_t ti = first_track; ti < m->ntracks; ti++) {
		const struct model_track *t = &m->tracks[ti];
		if (t->kind != MODEL_TRACK_THREAD)
			continue;
		uint64_t f = MODEL_NONE, z = MODEL_NONE;
		for (uint64_t i = 0; i < t->nranges; i++) {
			if (t->ranges.category[i] != OPSCOPE_CAT_PROFILE_STEP)
				continue;
			if (f == MODEL_NONE && has_mark(m, &t->ranges, i, first_key))
				f = i;
			if (has_mark(m, &t->ranges, i, stop_key))
				z = i;
		}
		bool changed = false;
		/* the last one first: removing it moves no range before it */
		if (z != MODEL_NONE && !settle_last(m, ti, z, &changed))
			return false;
		if (f != MODEL_NONE && f != z && !settle_first(m, ti, f, &changed))
			return false;
		if (changed)
			model_nest_track(m, ti);
	}
	return !m->oom;
}
