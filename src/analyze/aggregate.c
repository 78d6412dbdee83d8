/*
 * aggregate.c: aggregation by (parent, name, kind) (aggregate.h): a table of items in
 * first-seen order, found through an open-addressing hash of their keys that is kept at most
 * half full.
 */
#include "analyze/aggregate.h"

#include <stdlib.h>
#include <string.h>

#include "util/zeroed.h"

static uint64_t agg_hash(uint32_t parent, uint32_t name, uint8_t kind)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull ^ kind;
	return h ^ (h >> 31);
}

static bool agg_rehash(struct agg *a, uint32_t cap)
{
	uint32_t *s = zeroed_table(cap, sizeof(*s));
	if (!s)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct agg_item *it = &a->v[i];
		uint32_t j = (uint32_t)agg_hash(it->parent, it->name, it->kind) & (cap - 1);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = i + 1;
	}
	free(a->slots);
	a->slots = s;
	a->slots_cap = cap;
	return true;
}

uint32_t agg_get(struct agg *a, uint32_t parent, uint32_t name, uint8_t kind)
{
	if (a->slots_cap) {
		uint32_t mask = a->slots_cap - 1;
		for (uint32_t j = (uint32_t)agg_hash(parent, name, kind) & mask; a->slots[j];
		     j = (j + 1) & mask) {
			const struct agg_item *it = &a->v[a->slots[j] - 1];
			if (it->parent == parent && it->name == name && it->kind == kind)
				return a->slots[j] - 1;
		}
	}
	if ((a->n + 1) * 2 > a->slots_cap &&
	    (a->slots_cap >= (1u << 30) || !agg_rehash(a, a->slots_cap ? a->slots_cap * 2 : 256))) {
		a->oom = true;
		return AGG_NONE;
	}
	if (a->n == a->cap) {
		uint32_t cap = a->cap ? a->cap * 2 : 256;
		struct agg_item *v = realloc(a->v, cap * sizeof(*v));
		if (!v) {
			a->oom = true;
			return AGG_NONE;
		}
		a->v = v;
		a->cap = cap;
	}
	if (a->n == 0)
		a->first_top = a->last_top = AGG_NONE;
	uint32_t i = a->n++;
	struct agg_item *it = &a->v[i];
	memset(it, 0, sizeof(*it));
	it->name = name;
	it->parent = parent;
	it->kind = kind;
	it->cpu_min_ns = INT64_MAX;
	it->gpu_min_ns = INT64_MAX;
	it->first_child = it->last_child = it->next = AGG_NONE;
	/* chain into the parent's children (or the top level), keeping first-seen order */
	uint32_t *first = parent == AGG_NONE ? &a->first_top : &a->v[parent].first_child;
	uint32_t *last = parent == AGG_NONE ? &a->last_top : &a->v[parent].last_child;
	if (*first == AGG_NONE)
		*first = i;
	else
		a->v[*last].next = i;
	*last = i;
	uint32_t mask = a->slots_cap - 1;
	uint32_t j = (uint32_t)agg_hash(parent, name, kind) & mask;
	while (a->slots[j])
		j = (j + 1) & mask;
	a->slots[j] = i + 1;
	return i;
}

void agg_add(struct agg *a, uint32_t item, int64_t cpu, int64_t gpu)
{
	if (item == AGG_NONE)
		return;
	struct agg_item *it = &a->v[item];
	it->calls++;
	it->cpu_ns += cpu;
	it->cpu_max_ns = cpu > it->cpu_max_ns ? cpu : it->cpu_max_ns;
	it->cpu_min_ns = cpu < it->cpu_min_ns ? cpu : it->cpu_min_ns;
	it->gpu_ns += gpu;
	it->gpu_max_ns = gpu > it->gpu_max_ns ? gpu : it->gpu_max_ns;
	it->gpu_min_ns = gpu < it->gpu_min_ns ? gpu : it->gpu_min_ns;
}

void agg_free(struct agg *a)
{
	free(a->v);
	free(a->slots);
	memset(a, 0, sizeof(*a));
}
