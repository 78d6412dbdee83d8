/*
 * fuzz_pprof.c: libFuzzer target for the profile.proto importer (formats/pprof/pprof_load.c):
 * the input bytes are imported from memory (plain, or gzip'd when they start with gzip's
 * magic), the model's invariants are checked, and a profile that loads is exported as pprof
 * and imported again, which must give the same samples (values and frames) on the same
 * tracks. Also linked without libFuzzer into the corpus replay test (tests/fuzz/replay.c).
 * Run: build/fuzz/fuzz/fuzz_pprof -max_total_time=300 tests/fuzz-corpus/pprof
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/pprof/pprof.h"
#include "fuzz/model_check.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Do the samples of a and b (one file each) have the same values and frames, track by
 * track? */
static bool same_samples(const struct model *a, const struct model *b)
{
	if (a->ntracks != b->ntracks)
		return false;
	for (uint32_t t = 0; t < a->ntracks; t++) {
		const struct model_track *x = &a->tracks[t], *y = &b->tracks[t];
		/* a profile without sample types comes back with one, "samples/count", holding
		 * the weights */
		uint32_t nv = a->files[x->file].nsample_types;
		uint32_t nb = b->files[y->file].nsample_types;
		if (x->nsamples != y->nsamples || (nv != nb && !(nv == 0 && nb == 1)) ||
		    strcmp(model_str(a, x->name), model_str(b, y->name)) != 0)
			return false;
		for (uint64_t i = 0; i < x->nsamples; i++) {
			for (uint32_t c = 0; c < (nv ? nv : 1); c++)
				if (model_sample_value(a, x, i, c) !=
				    model_sample_value(b, y, i, c))
					return false;
			uint32_t s = x->samples.stack[i], r = y->samples.stack[i];
			for (; s != MODEL_NO_STACK && r != MODEL_NO_STACK;
			     s = a->stacks[s].parent, r = b->stacks[r].parent) {
				const struct model_frame *f = &a->frames[a->stacks[s].frame];
				const struct model_frame *g = &b->frames[b->stacks[r].frame];
				if (strcmp(model_str(a, f->name), model_str(b, g->name)) != 0 ||
				    strcmp(model_str(a, f->file), model_str(b, g->file)) != 0 ||
				    f->line != g->line || f->address != g->address ||
				    f->flags != g->flags)
					return false;
			}
			if (s != r)
				return false;
		}
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model *m = model_new();
	if (!m)
		return 0;
	char err[256];
	int rc = pprof_load_mem(m, "fuzz.pb", data, size, err, sizeof(err));
	fuzz_model_check(m);
	if (rc == 0 && !strchr(err, '\n')) {
		char *bytes = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&bytes, &len);
		if (f && pprof_export(m, f, err, sizeof(err)) == 0 && fclose(f) == 0) {
			struct model *back = model_new();
			if (back) {
				if (pprof_load_mem(back, "back.pb.gz", bytes, len, err,
						   sizeof(err)) != 0 ||
				    !same_samples(m, back))
					abort();
				fuzz_model_check(back);
				model_free(back);
			}
		} else if (f) {
			fclose(f);
		}
		free(bytes);
	} else if (rc != 0 && strchr(err, '\n')) {
		abort(); /* an error is one line */
	}
	model_free(m);
	return 0;
}
