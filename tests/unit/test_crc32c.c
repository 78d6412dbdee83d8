/*
 * test_crc32c.c: CRC-32C against its check value and, on every length and alignment around
 * the three-block path of the SSE 4.2 version, against the portable table version; a CRC
 * continued across two calls equals the CRC of the whole.
 */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "util/crc32c.h"

TEST(check_value)
{
	CHECK_EQ_U(crc32c(0, "123456789", 9), 0xE3069283u);
	CHECK_EQ_U(crc32c_portable(0, "123456789", 9), 0xE3069283u);
	CHECK_EQ_U(crc32c(0, "", 0), 0);
}

TEST(fast_equals_portable)
{
	enum { MAX = 3 * 1024 * 3 + 64 };
	uint8_t *buf = malloc(MAX + 8);
	REQUIRE(buf);
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < MAX + 8; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (uint8_t)(s >> 56);
	}
	int differ = 0;
	for (size_t len = 0; len <= MAX; len += len < 3200 ? 1 : 61)
		for (size_t off = 0; off < 8; off += 3) {
			uint32_t seed = (uint32_t)(len * 2654435761u);
			differ += crc32c(seed, buf + off, len) !=
				  crc32c_portable(seed, buf + off, len);
		}
	CHECK_EQ_I(differ, 0);
	/* continued across calls, split anywhere */
	uint32_t whole = crc32c(0, buf, MAX);
	for (size_t cut = 0; cut <= MAX; cut += 997)
		differ += crc32c(crc32c(0, buf, cut), buf + cut, MAX - cut) != whole;
	CHECK_EQ_I(differ, 0);
	free(buf);
}

TEST_MAIN(check_value, fast_equals_portable)
