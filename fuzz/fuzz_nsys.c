/*
 * fuzz_nsys.c: libFuzzer target for the Nsight Systems SQLite importer
 * (formats/nsys/nsys_load.c): the input bytes, a database image (plain, or gzip'd when they
 * start with gzip's magic), go through the sniffer and are imported from memory
 * (sqlite3_deserialize); the model's invariants are checked, and an error is one line. Also
 * linked without libFuzzer into the corpus replay test (tests/fuzz/replay.c).
 * Run: build/fuzz/fuzz/fuzz_nsys -max_total_time=300 tests/fuzz-corpus/nsys
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/nsys/nsys.h"
#include "fuzz/model_check.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)nsys_sniff(data, size < 256 ? size : 256);
	struct model *m = model_new();
	if (!m)
		return 0;
	char err[256] = "";
	int rc = nsys_load_mem(m, "fuzz.sqlite", data, size, err, sizeof(err));
	fuzz_model_check(m);
	if (rc != 0 && (!err[0] || strchr(err, '\n')))
		abort(); /* an error is one line, and there is one */
	model_free(m);
	return 0;
}
