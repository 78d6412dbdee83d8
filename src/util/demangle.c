/*
 * demangle.c: see demangle.h. libstdc++.so.6 is opened once, RTLD_LOCAL, the first time a name
 * needs it; a program without it (or a name it rejects) keeps its mangled names.
 */
#include "util/demangle.h"

#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <pthread.h>

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn cxa_demangle;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	void *f = h ? dlsym(h, "__cxa_demangle") : NULL;
	if (f)
		memcpy(&cxa_demangle, &f, sizeof(f)); /* object to function pointer, POSIX */
}

bool demangle_available(void)
{
	pthread_once(&load_once, load);
	return cxa_demangle != NULL;
}

char *demangle_cxx(const char *name)
{
	if (!name || strncmp(name, "_Z", 2) != 0 || !demangle_available())
		return NULL;
	int status = -1;
	char *d = cxa_demangle(name, NULL, NULL, &status);
	if (d && status == 0)
		return d;
	free(d);
	return NULL;
}
