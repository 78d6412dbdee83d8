/*
 * stacks.c: the model's tables for stack samples (model.h): frames, interned so that equal
 * frames share an index, and the stack prefix tree, each entry a frame under its caller's
 * entry, interned on (parent, frame) so that equal stacks share an index: the shape pprof's
 * locations and flame graphs fold samples into. The samples themselves are columns of their
 * track (model.c), and model_free frees these tables. Nothing fills them yet: a CPU stack
 * sampler and pprof and folded-stack importers will.
 *
 * Invariants: a stack entry's parent is MODEL_NO_STACK or a smaller index, and its frame a
 * valid frame index; the index tables hold index + 1 per used slot (0 = empty) and are at most
 * half full. Growth is amortized; out of memory leaves the tables as they were and sets oom.
 */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/grow.h"
#include "util/zeroed.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

static uint64_t frame_hash(const struct model_frame *f)
{
	uint64_t h = mix(0x632be59bd9b4e019ull, (uint64_t)f->name << 32 | f->file);
	h = mix(h, (uint64_t)(uint32_t)f->line << 32 | f->module);
	return mix(mix(h, f->address), f->kind);
}

static bool frame_same(const struct model_frame *a, const struct model_frame *b)
{
	return a->name == b->name && a->file == b->file && a->line == b->line &&
	       a->module == b->module && a->address == b->address && a->kind == b->kind;
}

static uint64_t stack_hash(uint32_t parent, uint32_t frame)
{
	return mix(0xbf58476d1ce4e5b9ull, (uint64_t)parent << 32 | frame);
}

/* Rebuild an index table of `cap` slots (a power of two) over n entries, hashed by hash(i). */
static uint32_t *index_build(uint32_t cap, uint32_t n,
			     uint64_t (*hash)(const struct model *, uint32_t),
			     const struct model *m)
{
	uint32_t *slots = zeroed_table(cap, sizeof(*slots));
	if (!slots)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t s = hash(m, i) & (cap - 1);
		while (slots[s])
			s = (s + 1) & (cap - 1);
		slots[s] = i + 1;
	}
	return slots;
}

static uint64_t frame_hash_at(const struct model *m, uint32_t i)
{
	return frame_hash(&m->frames[i]);
}

static uint64_t stack_hash_at(const struct model *m, uint32_t i)
{
	return stack_hash(m->stacks[i].parent, m->stacks[i].frame);
}

/* Room in *slots (cap *cap) for one more of n entries; false if out of memory. */
static bool index_room(struct model *m, uint32_t **slots, uint32_t *cap, uint32_t n,
		       uint64_t (*hash)(const struct model *, uint32_t))
{
	if (((uint64_t)n + 1) * 2 <= *cap)
		return true;
	if (*cap >= (1u << 31))
		return false;
	uint32_t ncap = *cap ? *cap * 2 : 256;
	uint32_t *s = index_build(ncap, n, hash, m);
	if (!s)
		return false;
	free(*slots);
	*slots = s;
	*cap = ncap;
	return true;
}

uint32_t model_add_frame(struct model *m, uint32_t name, uint32_t file, int32_t line,
			 uint32_t module, uint64_t address, uint8_t kind)
{
	struct model_frame f = { name, file, line, module, address, kind };
	uint64_t h = frame_hash(&f);
	uint32_t mask = m->frame_slots_cap - 1, s;
	if (m->frame_slots_cap) {
		for (s = (uint32_t)(h & mask); m->frame_slots[s]; s = (s + 1) & mask)
			if (frame_same(&m->frames[m->frame_slots[s] - 1], &f))
				return m->frame_slots[s] - 1;
	}
	if (m->nframes >= UINT32_MAX - 1 ||
	    !index_room(m, &m->frame_slots, &m->frame_slots_cap, m->nframes, frame_hash_at) ||
	    !grow_array32((void **)&m->frames, sizeof(*m->frames), &m->frames_cap,
			  (uint64_t)m->nframes + 1)) {
		m->oom = true;
		return MODEL_NO_FRAME;
	}
	mask = m->frame_slots_cap - 1;
	for (s = (uint32_t)(h & mask); m->frame_slots[s];)
		s = (s + 1) & mask;
	m->frames[m->nframes] = f;
	m->frame_slots[s] = m->nframes + 1;
	return m->nframes++;
}

uint32_t model_add_stack(struct model *m, uint32_t parent, uint32_t frame)
{
	if (frame >= m->nframes || (parent != MODEL_NO_STACK && parent >= m->nstacks))
		return MODEL_NO_STACK;
	uint64_t h = stack_hash(parent, frame);
	uint32_t mask = m->stack_slots_cap - 1, s;
	if (m->stack_slots_cap) {
		for (s = (uint32_t)(h & mask); m->stack_slots[s]; s = (s + 1) & mask) {
			const struct model_stack *e = &m->stacks[m->stack_slots[s] - 1];
			if (e->parent == parent && e->frame == frame)
				return m->stack_slots[s] - 1;
		}
	}
	if (m->nstacks >= UINT32_MAX - 1 ||
	    !index_room(m, &m->stack_slots, &m->stack_slots_cap, m->nstacks, stack_hash_at) ||
	    !grow_array32((void **)&m->stacks, sizeof(*m->stacks), &m->stacks_cap,
			  (uint64_t)m->nstacks + 1)) {
		m->oom = true;
		return MODEL_NO_STACK;
	}
	mask = m->stack_slots_cap - 1;
	for (s = (uint32_t)(h & mask); m->stack_slots[s];)
		s = (s + 1) & mask;
	m->stacks[m->nstacks] = (struct model_stack){ parent, frame };
	m->stack_slots[s] = m->nstacks + 1;
	return m->nstacks++;
}
