/*
 * utf8.h: validation of UTF-8, for everything that escapes strings from a trace for where
 * they go (the report's renderers, the Chrome and SQLite exporters, the JSON importer's
 * string checks, the CLI's terminal output). Strict: what it accepts is what a JSON or CSV
 * reader accepts.
 */
#ifndef OPSCOPE_UTIL_UTF8_H
#define OPSCOPE_UTIL_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there are not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). n > 0. */
static inline size_t utf8_seq_len(const uint8_t *s, size_t n)
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
