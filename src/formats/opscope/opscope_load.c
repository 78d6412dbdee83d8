/*
 * opscope_load.c: recognising .opscope files by their magic.
 */
#include "formats/opscope/opscope_load.h"

#include <string.h>

#include "trace/format.h"

bool opscope_sniff(const unsigned char *head, size_t n)
{
	return n >= OPS_MAGIC_BYTES && memcmp(head, OPS_MAGIC, OPS_MAGIC_BYTES) == 0;
}
