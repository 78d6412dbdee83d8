/*
 * test_numfmt.c: numfmt_double prints the shortest of %.15g/%.16g/%.17g that reads back as the
 * same double: short where a short form is exact, never lossy.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/numfmt.h"

static const char *fmt(double v)
{
	static char buf[64];
	numfmt_double(buf, sizeof(buf), v);
	return buf;
}

TEST(short_when_exact)
{
	CHECK_STR(fmt(0.074074), "0.074074"); /* %.17g: 0.074074000000000001 */
	CHECK_STR(fmt(0.1), "0.1");
	CHECK_STR(fmt(1024.5), "1024.5");
	CHECK_STR(fmt(-3.0), "-3");
	CHECK_STR(fmt(1e300), "1e+300");
	CHECK_STR(fmt(330552202.66666669), "330552202.6666667"); /* needs 16 digits */
	CHECK_STR(fmt(1.0 / 3.0), "0.3333333333333333");
	CHECK_STR(fmt(0.30000000000000004), "0.30000000000000004"); /* needs 17 */
	CHECK_STR(fmt(INFINITY), "inf");
	CHECK_STR(fmt(NAN), "nan");
}

/* Every printed value reads back as the same bits, over many random doubles. */
TEST(round_trips)
{
	uint64_t s = 88172645463325252ull;
	int bad = 0;
	for (int i = 0; i < 200000; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		double v;
		memcpy(&v, &s, sizeof(v));
		if (!isfinite(v))
			continue;
		double back = strtod(fmt(v), NULL);
		bad += memcmp(&back, &v, sizeof(v)) != 0;
	}
	CHECK_EQ_I(bad, 0);
}

TEST_MAIN(short_when_exact, round_trips)
