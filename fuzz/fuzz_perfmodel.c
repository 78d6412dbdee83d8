/*
 * fuzz_perfmodel.c: libFuzzer target for the operator performance model (analyze/
 * perfmodel.c). The input is up to five texts separated by NUL bytes: operator name, Input
 * Dims, Input type, Concrete Inputs and an output-shape hint (an Input Dims text whose first
 * entry is used); a missing text is NULL. Each text is an exact-size NUL-terminated copy and
 * the scratch an exact-size allocation (half the input: smaller than some texts need), so
 * that ASan sees any read or write past them. Checked: a parse that fails says why and
 * leaves no inputs; every dtype and value points into the scratch; perfmodel_eval's result
 * is either a model without a reason or no model with a reason and zero counts.
 * Also linked without libFuzzer into the corpus replay test (tests/fuzz/replay.c).
 * Run: build/fuzz/fuzz/fuzz_perfmodel -max_total_time=300 tests/fuzz-corpus/perfmodel
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/perfmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The text p of n bytes (no NUL inside) as an exact-size NUL-terminated copy. */
static char *fuzz_text(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

/* Does s point into [base, base + len) with its NUL there too? */
static int fuzz_inside(const char *s, const char *base, size_t len)
{
	return s >= base && s < base + len && memchr(s, '\0', (size_t)(base + len - s)) != NULL;
}

static void fuzz_check_result(const struct perfmodel_result *r)
{
	if ((unsigned)r->category >= PERFMODEL_CATEGORIES)
		abort();
	if (r->category == PERFMODEL_NONE) {
		if (!r->reason || r->flops || r->bytes_read || r->bytes_written || r->tc_eligible)
			abort();
	} else if (r->reason) {
		abort();
	}
	if (r->tc_tf32_only && !r->tc_eligible)
		abort();
	if (r->tc_eligible && r->tc_reason)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text[5] = { NULL, NULL, NULL, NULL, NULL };
	size_t start = 0;
	for (int k = 0; k < 5 && start <= size; k++) {
		const uint8_t *end = memchr(data + start, '\0', size - start);
		size_t n = end ? (size_t)(end - (data + start)) : size - start;
		text[k] = fuzz_text(data + start, n);
		start += n + 1;
		if (!end)
			break;
	}
	size_t scratch_len = size / 2;
	char *scratch = malloc(scratch_len ? scratch_len : 1);
	static struct perfmodel_call call, hint;
	const char *why = NULL;
	if (!scratch)
		goto out;
	if (!perfmodel_parse_inputs(&call, text[1], text[2], text[3], scratch, scratch_len, &why)) {
		if (!why || call.ninputs != 0)
			abort();
		goto out;
	}
	if (call.ninputs < 0 || call.ninputs > PERFMODEL_MAX_INPUTS)
		abort();
	for (int i = 0; i < call.ninputs; i++) {
		const struct perfmodel_input *in = &call.in[i];
		if (!in->dtype || (text[2] && !fuzz_inside(in->dtype, scratch, scratch_len)))
			abort();
		if ((in->value != NULL) != (text[3] != NULL) ||
		    (in->value && !fuzz_inside(in->value, scratch, scratch_len)))
			abort();
		if (in->ndims != PERFMODEL_TENSOR_LIST &&
		    (in->ndims < 0 || in->ndims > PERFMODEL_MAX_DIMS))
			abort();
	}
	call.name = text[0];
	struct perfmodel_result r;
	perfmodel_eval(&call, &r);
	fuzz_check_result(&r);
	/* again with the hint, where it parses into a plain shape */
	char hs[16];
	if (text[4] && perfmodel_parse_inputs(&hint, text[4], NULL, NULL, hs, sizeof(hs), &why) &&
	    hint.ninputs > 0 && hint.in[0].ndims >= 0) {
		call.out_ndims = hint.in[0].ndims;
		memcpy(call.out_dims, hint.in[0].dims, sizeof(call.out_dims));
		perfmodel_eval(&call, &r);
		fuzz_check_result(&r);
	}
out:
	free(scratch);
	for (int k = 0; k < 5; k++)
		free(text[k]);
	return 0;
}
