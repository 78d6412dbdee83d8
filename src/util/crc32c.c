/*
 * crc32c.c: CRC-32C with the SSE 4.2 instruction where the CPU has it, else table-driven,
 * slicing by 8 bytes. Tables are built once, on first use, under pthread_once so that
 * concurrent writers and readers can share them.
 */
#include "util/crc32c.h"

#include <pthread.h>

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_build(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/*
 * SSE 4.2 has a CRC-32C instruction: 8 bytes per instruction instead of 8 table lookups. Its
 * result takes 3 cycles and the next one needs it, so one chain does 8 bytes per 3 cycles;
 * three chains over three consecutive blocks of CRC_BLOCK bytes keep the unit busy, and the
 * three CRCs are joined after: the CRC register is linear, so the state after A then B is the
 * state after A run through CRC_BLOCK zero bytes, xor the state after B from 0. Running a
 * state through the zero bytes is a 32x32 bit matrix, applied as four 256-entry tables.
 */
#include <string.h>

#define CRC_BLOCK 1024

static uint32_t crc_zeros[4][256]; /* state -> the state after CRC_BLOCK zero bytes, by byte */

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw_serial(uint64_t c, const uint8_t *p,
								   size_t len)
{
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (len--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return c32;
}

static uint32_t crc_shift(uint32_t c)
{
	return crc_zeros[0][c & 0xff] ^ crc_zeros[1][(c >> 8) & 0xff] ^
	       crc_zeros[2][(c >> 16) & 0xff] ^ crc_zeros[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p,
							    size_t len)
{
	uint64_t c = (uint32_t)~crc;
	while (len >= 3 * CRC_BLOCK) {
		uint64_t c1 = 0, c2 = 0;
		for (size_t i = 0; i < CRC_BLOCK; i += 8) {
			uint64_t w0, w1, w2;
			memcpy(&w0, p + i, 8);
			memcpy(&w1, p + CRC_BLOCK + i, 8);
			memcpy(&w2, p + 2 * CRC_BLOCK + i, 8);
			c = __builtin_ia32_crc32di(c, w0);
			c1 = __builtin_ia32_crc32di(c1, w1);
			c2 = __builtin_ia32_crc32di(c2, w2);
		}
		c = crc_shift(crc_shift((uint32_t)c) ^ (uint32_t)c1) ^ (uint32_t)c2;
		p += 3 * CRC_BLOCK;
		len -= 3 * CRC_BLOCK;
	}
	return ~crc32c_hw_serial(c, p, len);
}

static int crc_hw = -1; /* -1 unknown, 0 no, 1 yes */

static void crc_detect(void)
{
	__builtin_cpu_init();
	crc_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	if (!crc_hw)
		return;
	/* the matrix, column by column: each state bit alone through the zero bytes */
	static const uint8_t zeros[CRC_BLOCK];
	uint32_t col[32];
	for (int b = 0; b < 32; b++)
		col[b] = crc32c_hw_serial(1u << b, zeros, CRC_BLOCK);
	for (int k = 0; k < 4; k++)
		for (uint32_t v = 0; v < 256; v++) {
			uint32_t x = 0;
			for (int b = 0; b < 8; b++)
				if (v >> b & 1)
					x ^= col[8 * k + b];
			crc_zeros[k][v] = x;
		}
}
#define CRC_HW_AVAILABLE 1
#endif

uint32_t crc32c_portable(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	pthread_once(&crc_once, crc_build);
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
		      crc_table[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

uint32_t crc32c(uint32_t crc, const void *data, size_t len)
{
#ifdef CRC_HW_AVAILABLE
	static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
	pthread_once(&detect_once, crc_detect);
	if (crc_hw)
		return crc32c_hw(crc, data, len);
#endif
	return crc32c_portable(crc, data, len);
}
