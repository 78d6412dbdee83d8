/*
 * utf8.h: UTF-8 validity, for everything that writes text others parse: the exporters (JSON
 * and SQLite text must be valid UTF-8), the JSON importer's canonical form, the report's
 * column widths and the CLI's escaping of names. Named for its first users, the exporters.
 */
#ifndef OPSCOPE_FORMATS_UTF8_H
#define OPSCOPE_FORMATS_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there are not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). n > 0. */
static inline size_t export_utf8_len(const uint8_t *s, size_t n)
{
	uint8_t c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	uint8_t lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

#endif
