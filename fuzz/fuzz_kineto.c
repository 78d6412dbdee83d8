/*
 * fuzz_kineto.c: libFuzzer target for the Chrome-JSON / Kineto importer: the input bytes are
 * imported from memory into a model and the model's invariants are checked, and imported
 * again by the parallel parser (chunks on speculation), which must give the same model and
 * error; every input runs a second time after a valid trace prefix, so that mutations reach
 * the event parser rather than dying at the top-level structure. Also linked without libFuzzer into the corpus
 * replay test (tests/fuzz/replay.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/import.h"
#include "fuzz/model_check.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Import with OPSCOPE_IMPORT_CHUNK set to `chunk` (parallel parsing on speculation), or
 * unset (one parser, in line, for memory input). */
static struct model *import_with(const void *data, size_t size, const char *chunk, int *rc,
				 char *err, size_t errsize)
{
	struct model *m = model_new();
	if (!m)
		return NULL;
	if (chunk)
		setenv("OPSCOPE_IMPORT_CHUNK", chunk, 1);
	err[0] = '\0';
	*rc = import_load_mem(m, "fuzz.json", data, size, err, errsize);
	if (chunk)
		unsetenv("OPSCOPE_IMPORT_CHUNK");
	return m;
}

static void fuzz_one(const void *data, size_t size)
{
	char err[256], perr[256];
	int rc, prc;
	struct model *m = import_with(data, size, NULL, &rc, err, sizeof(err));
	if (!m)
		return;
	fuzz_model_check(m);
	/* the parallel parser must give the same model and the same error: chunks of a few
	 * bytes (cut at nearly every event) and of about a third of the input */
	char chunk[32];
	for (int k = 0; k < 2; k++) {
		snprintf(chunk, sizeof(chunk), "%zu", k == 0 ? (size_t)5 : size / 3 + 1);
		struct model *p = import_with(data, size, chunk, &prc, perr, sizeof(perr));
		if (!p)
			break;
		if (prc != rc || strcmp(err, perr) != 0 || !fuzz_models_equal(m, p))
			abort();
		model_free(p);
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
