/*
 * fuzz_kineto.c: libFuzzer target for the Chrome-JSON / Kineto importer: the input bytes are
 * imported from memory into a model and the model's invariants are checked, and imported
 * again by the parallel parser (chunks on speculation), which must give the same model and
 * error; every input runs a second time after a valid trace prefix, so that mutations reach
 * the event parser rather than dying at the top-level structure. A third import keeps only one
 * argument key (model.keep_arg_keys, as a report loads): the same error, the same events, and
 * each range and instant with just its arguments of that key. Also linked without libFuzzer
 * into the corpus replay test (tests/fuzz/replay.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/import.h"
#include "fuzz/model_check.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Import with OPSCOPE_IMPORT_CHUNK set to `chunk` (parallel parsing on speculation), or
 * unset (one parser, in line, for memory input). */
static struct model *import_with(const void *data, size_t size, const char *chunk, int *rc,
				 char *err, size_t errsize, const char *const *keep)
{
	struct model *m = model_new();
	if (!m)
		return NULL;
	m->keep_arg_keys = keep;
	if (chunk)
		setenv("OPSCOPE_IMPORT_CHUNK", chunk, 1);
	err[0] = '\0';
	*rc = import_load_mem(m, "fuzz.json", data, size, err, errsize);
	if (chunk)
		unsetenv("OPSCOPE_IMPORT_CHUNK");
	return m;
}

/* Do n arguments from a of model a equal those from b of model b with key `key`? */
static bool args_kept(const struct model *ma, uint64_t a, uint32_t na, const struct model *mb,
		      uint64_t b, uint32_t nb, const char *key)
{
	uint32_t j = 0;
	for (uint32_t i = 0; i < na; i++) {
		if (strcmp(model_str(ma, ma->args.key[a + i]), key) != 0)
			continue;
		uint8_t ta = ma->args.type[a + i];
		if (j == nb || strcmp(model_str(mb, mb->args.key[b + j]), key) != 0 ||
		    ta != mb->args.type[b + j])
			return false;
		bool str = ta == MODEL_ARG_STR || ta == MODEL_ARG_JSON;
		if (str ? strcmp(model_str(ma, (uint32_t)ma->args.bits[a + i]),
				 model_str(mb, (uint32_t)mb->args.bits[b + j])) != 0
			: ma->args.bits[a + i] != mb->args.bits[b + j])
			return false;
		j++;
	}
	return j == nb;
}

/* Model b, loaded keeping only the arguments with `key`, against model a with them all. */
static bool same_but_args(const struct model *a, const struct model *b, const char *key)
{
	if (a->ntracks != b->ntracks || a->nflows != b->nflows ||
	    a->events_total != b->events_total)
		return false;
	for (uint32_t t = 0; t < a->ntracks; t++) {
		const struct model_track *x = &a->tracks[t], *y = &b->tracks[t];
		if (x->nranges != y->nranges || x->ninstants != y->ninstants ||
		    x->ncounters != y->ncounters ||
		    !FUZZ_SAME(x->ranges.start_ns, y->ranges.start_ns, x->nranges) ||
		    !FUZZ_SAME(x->ranges.dur_ns, y->ranges.dur_ns, x->nranges) ||
		    !FUZZ_SAME(x->ranges.depth, y->ranges.depth, x->nranges))
			return false;
		for (uint64_t i = 0; i < x->nranges; i++)
			if (!args_kept(a, x->ranges.first_arg[i], x->ranges.nargs[i], b,
				       y->ranges.first_arg[i], y->ranges.nargs[i], key))
				return false;
		for (uint64_t i = 0; i < x->ninstants; i++)
			if (!args_kept(a, x->instants.first_arg[i], x->instants.nargs[i], b,
				       y->instants.first_arg[i], y->instants.nargs[i], key))
				return false;
	}
	return true;
}

static void fuzz_one(const void *data, size_t size)
{
	char err[256], perr[256];
	int rc, prc;
	struct model *m = import_with(data, size, NULL, &rc, err, sizeof(err), NULL);
	if (!m)
		return;
	fuzz_model_check(m);
	/* the parallel parser must give the same model and the same error: chunks of a few
	 * bytes (cut at nearly every event) and of about a third of the input */
	char chunk[32];
	for (int k = 0; k < 2; k++) {
		snprintf(chunk, sizeof(chunk), "%zu", k == 0 ? (size_t)5 : size / 3 + 1);
		struct model *p = import_with(data, size, chunk, &prc, perr, sizeof(perr), NULL);
		if (!p)
			break;
		if (prc != rc || strcmp(err, perr) != 0 || !fuzz_models_equal(m, p))
			abort();
		model_free(p);
	}
	static const char *const keep[] = { "correlation", NULL };
	struct model *k = import_with(data, size, NULL, &prc, perr, sizeof(perr), keep);
	if (k) {
		/* the input may be an .opscope file, whose loader keeps every argument */
		bool json =
			m->nfiles && strcmp(model_str(m, m->files[0].format), "chrome-json") == 0;
		if (prc != rc || strcmp(err, perr) != 0 ||
		    !(json ? same_but_args(m, k, keep[0]) : fuzz_models_equal(m, k)))
			abort();
		model_free(k);
	}
	model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_one(data, size);
	static const char prefix[] = "{\"traceEvents\":[";
	uint8_t *copy = malloc(sizeof(prefix) - 1 + size);
	if (!copy)
		return 0;
	memcpy(copy, prefix, sizeof(prefix) - 1);
	memcpy(copy + sizeof(prefix) - 1, data, size);
	fuzz_one(copy, sizeof(prefix) - 1 + size);
	free(copy);
	return 0;
}
