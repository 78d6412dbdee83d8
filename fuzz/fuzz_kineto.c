/*
 * fuzz_kineto.c: libFuzzer target for the Chrome-JSON / Kineto importer: the input bytes are
 * imported from memory into a model and the model's invariants are checked; every input runs
 * a second time after a valid trace prefix, so that mutations reach the event parser rather
 * than dying at the top-level structure. Also linked without libFuzzer into the corpus
 * replay test (tests/fuzz/replay.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convert/import.h"
#include "fuzz/model_check.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_one(const void *data, size_t size)
{
	struct model *m = model_new();
	if (!m)
		return;
	char err[256];
	import_load_mem(m, "fuzz.json", data, size, err, sizeof(err));
	fuzz_model_check(m);
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
