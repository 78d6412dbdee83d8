/*
 * crc32c.h: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every
 * trace record's payload. crc32c(0, "123456789", 9) == 0xE3069283.
 */
#ifndef OPSCOPE_UTIL_CRC32C_H
#define OPSCOPE_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: pass 0 to start. */
uint32_t crc32c(uint32_t crc, const void *data, size_t len);
/* The same without the CPU's CRC instruction (what crc32c does on other CPUs; for tests). */
uint32_t crc32c_portable(uint32_t crc, const void *data, size_t len);

#endif
