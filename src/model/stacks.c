/*
 * stacks.c: the model's tables for stack samples (model.h): frames, interned so that equal
 * frames share an index, and the stack prefix tree, each entry a frame under its caller's
 * entry, interned on (parent, frame) so that equal stacks share an index: the shape pprof's
 * locations and flame graphs fold samples into. The samples themselves are columns of their
 * track (model.c), and model_free frees these tables. Also the per-file value types of samples
 * (pprof's sample types) and the binaries' mappings. The pprof and gperftools importers
 * (formats/pprof/) fill them; a CPU stack sampler will.
 *
 * Invariants: a stack entry's parent is MODEL_NO_STACK or a smaller index, and its frame a
 * valid frame index; each array has an index (util/hashmap.h) of its entries by value. Growth
 * is amortized; out of memory leaves the tables as they were and sets oom.
 */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/grow.h"
#include "util/hashmap.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

static uint64_t frame_hash(const struct model_frame *f)
{
	uint64_t h = mix(0x632be59bd9b4e019ull, (uint64_t)f->name << 32 | f->file);
	h = mix(h, (uint64_t)(uint32_t)f->line << 32 | f->module);
	return mix(mix(h, f->address), (uint64_t)f->flags << 8 | f->kind);
}

static uint64_t stack_hash(uint32_t parent, uint32_t frame)
{
	return mix(0xbf58476d1ce4e5b9ull, (uint64_t)parent << 32 | frame);
}

/* A frame or stack entry looked for, with the model holding the arrays. */
struct frame_key {
	const struct model *m;
	struct model_frame f;
};

struct stack_key {
	const struct model *m;
	uint32_t parent, frame;
};

/* hindex_eq_fn: is frame i the key's? */
static bool frame_eq(const void *ctx, uint32_t i)
{
	const struct frame_key *k = ctx;
	const struct model_frame *a = &k->m->frames[i], *b = &k->f;
	return a->name == b->name && a->file == b->file && a->line == b->line &&
	       a->module == b->module && a->address == b->address && a->kind == b->kind &&
	       a->flags == b->flags;
}

/* hindex_hash_fn: the hash of frame i, for growing the index. */
static uint64_t frame_hash_at(const void *ctx, uint32_t i)
{
	const struct model *m = ctx;
	return frame_hash(&m->frames[i]);
}

static bool stack_eq(const void *ctx, uint32_t i)
{
	const struct stack_key *k = ctx;
	return k->m->stacks[i].parent == k->parent && k->m->stacks[i].frame == k->frame;
}

static uint64_t stack_hash_at(const void *ctx, uint32_t i)
{
	const struct model *m = ctx;
	return stack_hash(m->stacks[i].parent, m->stacks[i].frame);
}

uint32_t model_add_frame(struct model *m, uint32_t name, uint32_t file, int32_t line,
			 uint32_t module, uint64_t address, uint8_t kind)
{
	struct model_frame f = { name, file, line, module, address, kind, 0 };
	return model_add_frame_full(m, &f);
}

uint32_t model_add_frame_full(struct model *m, const struct model_frame *f)
{
	struct frame_key key = { m, *f };
	uint64_t h = frame_hash(&key.f);
	uint32_t found = hindex_find(&m->frame_index, h, frame_eq, &key);
	if (found != HINDEX_NONE)
		return found;
	if (m->nframes >= UINT32_MAX - 1 || !hindex_reserve(&m->frame_index, frame_hash_at, m) ||
	    !grow_array32((void **)&m->frames, sizeof(*m->frames), &m->frames_cap,
			  (uint64_t)m->nframes + 1)) {
		m->oom = true;
		return MODEL_NO_FRAME;
	}
	m->frames[m->nframes] = key.f;
	hindex_insert(&m->frame_index, h, m->nframes);
	return m->nframes++;
}

uint32_t model_add_stack(struct model *m, uint32_t parent, uint32_t frame)
{
	if (frame >= m->nframes || (parent != MODEL_NO_STACK && parent >= m->nstacks))
		return MODEL_NO_STACK;
	struct stack_key key = { m, parent, frame };
	uint64_t h = stack_hash(parent, frame);
	uint32_t found = hindex_find(&m->stack_index, h, stack_eq, &key);
	if (found != HINDEX_NONE)
		return found;
	if (m->nstacks >= UINT32_MAX - 1 || !hindex_reserve(&m->stack_index, stack_hash_at, m) ||
	    !grow_array32((void **)&m->stacks, sizeof(*m->stacks), &m->stacks_cap,
			  (uint64_t)m->nstacks + 1)) {
		m->oom = true;
		return MODEL_NO_STACK;
	}
	m->stacks[m->nstacks] = (struct model_stack){ parent, frame };
	hindex_insert(&m->stack_index, h, m->nstacks);
	return m->nstacks++;
}

bool model_set_sample_types(struct model *m, uint32_t file, const struct model_value_type *types,
			    uint32_t n, uint32_t weight)
{
	if (file >= m->nfiles || (n && weight >= n))
		return false;
	if (!grow_array32((void **)&m->sample_types, sizeof(*m->sample_types), &m->sample_types_cap,
			  (uint64_t)m->nsample_types + n)) {
		m->oom = true;
		return false;
	}
	struct model_file *f = &m->files[file];
	f->first_sample_type = m->nsample_types;
	f->nsample_types = n;
	f->weight_type = weight;
	if (n)
		memcpy(m->sample_types + m->nsample_types, types, n * sizeof(*types));
	m->nsample_types += n;
	return true;
}

uint32_t model_add_mapping(struct model *m, const struct model_mapping *mp)
{
	if (!grow_array32((void **)&m->mappings, sizeof(*m->mappings), &m->mappings_cap,
			  (uint64_t)m->nmappings + 1)) {
		m->oom = true;
		return UINT32_MAX;
	}
	m->mappings[m->nmappings] = *mp;
	return m->nmappings++;
}
