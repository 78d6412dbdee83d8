/*
 * fuzz_trace.c: libFuzzer target for the .opscope decoder and loader: the input bytes are
 * loaded as a trace file from memory into a model (trace/decode.c + the "opscope" format of
 * the registry), then exported as Chrome JSON to a sink and checked for the model's
 * invariants. Also linked without libFuzzer into the corpus
 * replay test (tests/fuzz/replay.c).
 *
 * Each input runs twice: as given (framing, CRC and tail handling), and with the CRC of every
 * record recomputed, since a mutation almost never keeps a CRC right and would otherwise
 * never reach the payload parsers. Each run loads the input twice: with the loader's fast
 * loops and its read-ahead thread, and without either (model.general_only, read in line): the
 * two models must be the same, and the errors too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/registry.h"
#include "fuzz/model_check.h"
#include "model/model.h"
#include "util/bytes.h"
#include "util/crc32c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_one(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	struct model *m = model_new(), *g = model_new();
	if (!m || !g) {
		model_free(m);
		model_free(g);
		return;
	}
	const struct format *opscope = format_find("opscope"), *chrome = format_find("chrome");
	char err[256] = "", gerr[256] = "";
	setenv("OPSCOPE_LOAD_THREADS", "1", 1); /* records read ahead by a thread */
	int rc = opscope->load_mem(m, "fuzz.opscope", data, size, err, sizeof(err));
	fuzz_model_check(m);
	/* the loader's fast loops build what the general path builds, and fail the same way;
	 * the general load also reads its records itself */
	g->general_only = true;
	setenv("OPSCOPE_LOAD_THREADS", "0", 1);
	int grc = opscope->load_mem(g, "fuzz.opscope", data, size, gerr, sizeof(gerr));
	if (!m->oom && !g->oom && (rc != grc || strcmp(err, gerr) != 0 || !fuzz_models_equal(m, g)))
		abort();
	if (sink)
		chrome->export(m, sink, err, sizeof(err));
	model_free(m);
	model_free(g);
}

/* Recompute the CRC of every record that fits, following the sizes as they are. */
static void fuzz_fix_crcs(uint8_t *d, size_t size)
{
	if (size < 64)
		return;
	size_t pos = get_u32le(d + 12);
	while (pos >= 64 && pos <= size && size - pos >= 16) {
		uint32_t len = get_u32le(d + pos + 4);
		if (len > size - pos - 16)
			break;
		put_u32le(d + pos + 12, crc32c(0, d + pos + 16, len));
		pos += 16 + (size_t)len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_one(data, size);
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fuzz_fix_crcs(copy, size);
	fuzz_one(copy, size);
	free(copy);
	return 0;
}
