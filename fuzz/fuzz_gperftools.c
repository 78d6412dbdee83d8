/*
 * fuzz_gperftools.c: libFuzzer target for the gperftools legacy profile importer
 * (formats/pprof/legacy_load.c): the input is imported from memory and the model's invariants
 * checked; then again after a valid 64-bit little-endian CPU header, so that mutations reach
 * the sample records, the trailer and the maps text rather than dying at the header. Errors
 * are one line. Also linked without libFuzzer into the corpus replay test.
 * Run: build/fuzz/fuzz/fuzz_gperftools -max_total_time=300 tests/fuzz-corpus/gperftools
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

static void fuzz_one(const uint8_t *data, size_t size)
{
	struct model *m = model_new();
	if (!m)
		return;
	char err[256] = "";
	if (legacy_load_mem(m, "fuzz.prof", data, size, err, sizeof(err)) != 0 &&
	    (strchr(err, '\n') || strncmp(err, "fuzz.prof: ", 11) != 0))
		abort();
	fuzz_model_check(m);
	model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_one(data, size);
	/* header words 0, 3, 0, period 10000 us, 0 */
	static const uint8_t header[40] = { [8] = 3, [24] = 0x10, [25] = 0x27 };
	uint8_t *copy = malloc(sizeof(header) + size);
	if (!copy)
		return 0;
	memcpy(copy, header, sizeof(header));
	if (size)
		memcpy(copy + sizeof(header), data, size);
	fuzz_one(copy, sizeof(header) + size);
	free(copy);
	return 0;
}
