/*
 * test_chrome.c: the Chrome/Perfetto JSON exporter on the sample trace and on hand-built
 * models: event shapes, exact µs times, escaping of hostile names, non-finite numbers. The
 * e2e test (test_cli_tools.sh) parses the output with a real JSON parser.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/chrome/chrome.h"
#include "formats/opscope/opscope_load.h"
#include "formats/registry.h"
#include "harness.h"
#include "model/model.h"
#include "tracebuild.h"
#include "util/bytes.h"

static char *export_str(const struct model *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	char err[128];
	int rc = chrome_export(m, f, err, sizeof(err));
	fclose(f);
	if (rc != 0) {
		free(text);
		return NULL;
	}
	return text;
}

TEST(sample_events)
{
	struct tb b;
	tb_sample(&b, 0);
	struct model *m = model_new();
	char err[320];
	REQUIRE(opscope_load_mem(m, "s", b.out.data, b.out.len, err, sizeof(err)) == 0);
	char *j = export_str(m);
	REQUIRE(j != NULL);
	CHECK(strncmp(j, "{\"traceEvents\":[", 16) == 0);
	CHECK(strstr(j, "{\"ph\":\"M\",\"pid\":100,\"tid\":0,\"name\":\"process_name\","
			"\"args\":{\"name\":\"train\"}}") != NULL);
	CHECK(strstr(j, "{\"ph\":\"M\",\"pid\":100,\"tid\":100,\"name\":\"thread_name\","
			"\"args\":{\"name\":\"main\",\"opscope_track\":\"thread\"}}") != NULL);
	CHECK(strstr(j, "{\"ph\":\"X\",\"pid\":100,\"tid\":100,\"cat\":\"Operator\","
			"\"name\":\"conv2d\",\"ts\":1.200,\"dur\":0.100,\"args\":{\"shape\":"
			"\"[1,3,224,224]\",\"count\":-3,\"idx\":7}}") != NULL);
	CHECK(strstr(j, "\"name\":\"forward\",\"ts\":1.100,\"dur\":0.400,\"args\":{\"lr\":0.5}}") !=
	      NULL);
	CHECK(strstr(j, "{\"ph\":\"i\",\"pid\":100,\"tid\":100,\"s\":\"t\",\"cat\":\"UserDefined\","
			"\"name\":\"q \\\"d\\\"\\n\\u0001bad\\ufffd\",\"ts\":1.400}") != NULL);
	CHECK(strstr(j, "{\"ph\":\"C\",\"pid\":100,\"tid\":100,\"name\":\"mem\",\"ts\":1.450,"
			"\"args\":{\"value\":1024.5}}") != NULL);
	CHECK(strstr(j, "{\"ph\":\"s\",\"pid\":100,\"tid\":100,\"id\":1,\"cat\":\"flow\","
			"\"name\":\"flow\",\"ts\":1.250,\"args\":{\"flow_id\":42}}") != NULL);
	CHECK(strstr(j, "{\"ph\":\"f\",\"pid\":100,\"tid\":101,\"bp\":\"e\",\"id\":1,"
			"\"cat\":\"flow\",\"name\":\"flow\",\"ts\":1.270}") != NULL);
	CHECK(strstr(j, "{\"ph\":\"b\",\"pid\":100,\"tid\":0,\"id\":1,\"cat\":\"Nvtx\","
			"\"name\":\"nvtx range\",\"ts\":1.550}") != NULL);
	CHECK(strstr(j, "{\"ph\":\"e\",\"pid\":100,\"tid\":0,\"id\":1,\"cat\":\"Nvtx\","
			"\"name\":\"nvtx range\",\"ts\":1.700}") != NULL);
	CHECK(strstr(j, "\"name\":\"load\",\"ts\":1.800,\"dur\":0.700,"
			"\"args\":{\"opscope_unclosed\":true}}") != NULL);
	CHECK(strstr(j, "\"name\":\"opscope: 5 events dropped\",\"ts\":1.290}") != NULL);
	CHECK(strstr(j, "\"displayTimeUnit\":\"ns\"") != NULL);
	CHECK(strstr(j, "\"processes\":{\"100\":{\"program\":\"train\",\"rank\":\"0\"}}") != NULL);
	CHECK(strstr(j, "nan") == NULL);
	free(j);
	model_free(m);
	tb_free(&b);
}

TEST(escaping_and_numbers)
{
	struct model *m = model_new();
	static const char hostile[] = "a\\b\"c\x1f\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
				      "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82";
	uint32_t name = model_intern(m, hostile, sizeof(hostile) - 1);
	uint32_t key = model_intern(m, "k", 1);
	uint32_t t = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, name);
	uint64_t r = model_add_range(m, t, -1500, 2000001, name, 200, 0);
	m->tracks[t].ranges.first_arg[r] = model_add_arg(m, key, MODEL_ARG_F64, f64_bits(NAN));
	model_add_arg(m, key, MODEL_ARG_F64, f64_bits(-INFINITY));
	model_add_arg(m, key, MODEL_ARG_F64, f64_bits(0.1));
	model_add_arg(m, key, MODEL_ARG_U64, UINT64_MAX);
	model_add_arg(m, key, MODEL_ARG_I64, (uint64_t)INT64_MIN);
	m->tracks[t].ranges.nargs[r] = 5;
	model_add_counter(m, t, 5, key, INFINITY);
	model_add_counter(m, t, 6, key, 1e300);
	char *j = export_str(m);
	REQUIRE(j != NULL);
	const char *want =
		"\"a\\\\b\\\"c\\u001f\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
		"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"";
	CHECK(strstr(j, want) != NULL);
	CHECK(strstr(j, "\"cat\":\"Unknown\"") != NULL);
	CHECK(strstr(j, "\"ts\":-1.500,\"dur\":2000.001") != NULL);
	CHECK(strstr(j,
		     "\"args\":{\"k\":\"nan\",\"k\":\"-inf\",\"k\":0.1,\"k\":18446744073709551615,"
		     "\"k\":-9223372036854775808}") != NULL);
	CHECK(strstr(j, "\"ts\":0.005") == NULL); /* the infinite sample is left out */
	CHECK(strstr(j, "\"ts\":0.006,\"args\":{\"value\":1e+300}") != NULL);
	CHECK(strstr(j, "inf,") == NULL);
	free(j);
	model_free(m);
}

TEST(export_table)
{
	const struct format *e = export_find("chrome");
	REQUIRE(e != NULL);
	CHECK_STR(e->ext, ".json");
	CHECK(e->export == chrome_export);
	CHECK(export_find("perfetto-proto") == NULL);
}

TEST(empty_model)
{
	struct model *m = model_new();
	char *j = export_str(m);
	REQUIRE(j != NULL);
	CHECK(strncmp(j, "{\"traceEvents\":[\n],", 19) == 0);
	free(j);
	model_free(m);
}

TEST_MAIN(sample_events, escaping_and_numbers, export_table, empty_model)
