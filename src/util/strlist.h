/*
 * strlist.h: comma-separated lists of names, as options take them ("kernel,step",
 * "name,calls,cpu"): walk the items, or ask whether a name is one of them (exact match).
 */
#ifndef OPSCOPE_UTIL_STRLIST_H
#define OPSCOPE_UTIL_STRLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The next item of *p: its start in *item, its length returned; *p moves past it. Returns
 * (size_t)-1 at the end of the list. */
static inline size_t strlist_next(const char **p, const char **item)
{
	if (!*p || !**p)
		return (size_t)-1;
	const char *e = strchr(*p, ',');
	size_t len = e ? (size_t)(e - *p) : strlen(*p);
	*item = *p;
	*p = e ? e + 1 : *p + len;
	return len;
}

/* Is name[0..len) an item of the list? */
static inline bool strlist_has(const char *list, const char *name, size_t len)
{
	const char *item;
	size_t n;
	while ((n = strlist_next(&list, &item)) != (size_t)-1)
		if (n == len && memcmp(item, name, len) == 0)
			return true;
	return false;
}

#endif
