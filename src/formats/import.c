/*
 * import.c: load any supported trace into the model, recognising the format from its first
 * bytes through the sniffers of the registry (registry.h): the .opscope magic, gzip (a gzip'd
 * JSON trace), or JSON text ('{' or '['). Directories load every trace file in them, in name
 * order: one process or rank per file.
 */
#include "formats/import.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "formats/registry.h"

/* The first format whose sniffer recognises the bytes, or NULL. */
static const struct format *sniff(const unsigned char *b, size_t n)
{
	for (const struct format *f = format_table; f->name; f++)
		if (f->sniff && f->load_file && f->sniff(b, n))
			return f;
	return NULL;
}

/* The format of the file at path, or NULL with a message in err. */
static const struct format *sniff_file(const char *path, char *err, size_t errsize, int *rc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		*rc = OPSCOPE_EOPEN;
		return NULL;
	}
	unsigned char head[256];
	ssize_t n = read(fd, head, sizeof(head));
	close(fd);
	if (n < 0) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		*rc = OPSCOPE_EIO;
		return NULL;
	}
	const struct format *f = sniff(head, (size_t)n);
	if (!f) {
		snprintf(err, errsize, "%s: offset 0: %s", path,
			 n == 0 ? "empty file, not a trace"
				: "not a trace (neither an .opscope file nor JSON)");
		*rc = OPSCOPE_EUNSUPPORTED;
	}
	return f;
}

int import_load_path(struct model *m, const char *path, char *err, size_t errsize)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return import_load_dir(m, path, err, errsize);
	int rc = 0;
	const struct format *f = sniff_file(path, err, errsize, &rc);
	return f ? f->load_file(m, path, err, errsize) : rc;
}

int import_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		    size_t errsize)
{
	const struct format *f = sniff(data, size);
	if (f)
		return f->load_mem(m, name, data, size, err, errsize);
	snprintf(err, errsize, "%s: offset 0: not a trace (neither an .opscope file nor JSON)",
		 name);
	return OPSCOPE_EUNSUPPORTED;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int import_load_dir(struct model *m, const char *dir, char *err, size_t errsize)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errsize, "%s: cannot open: %s", dir, strerror(errno));
		return OPSCOPE_EOPEN;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nn = realloc(names, nc * sizeof(*names));
			if (!nn) {
				rc = OPSCOPE_ENOMEM;
				break;
			}
			names = nn;
			cap = nc;
		}
		if (!(names[n] = strdup(e->d_name))) {
			rc = OPSCOPE_ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (rc)
		snprintf(err, errsize, "%s: out of memory", dir);
	qsort(names, n, sizeof(*names), name_cmp);
	uint32_t loaded = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(len);
		if (!path) {
			snprintf(err, errsize, "%s: out of memory", dir);
			rc = OPSCOPE_ENOMEM;
			break;
		}
		/* "dir/" given: no "dir//file" in what the reports print */
		size_t dl = strlen(dir);
		snprintf(path, len, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", names[i]);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			int frc = 0;
			char ignored[256];
			const struct format *f = sniff_file(path, ignored, sizeof(ignored), &frc);
			if (f)
				rc = f->load_file(m, path, err, errsize);
			if (rc == OPSCOPE_EUNSUPPORTED) /* JSON, but not a trace */
				rc = 0;
			else if (f && rc == 0)
				loaded++;
		}
		free(path);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc == 0 && loaded == 0) {
		snprintf(err, errsize, "%s: no trace files in this directory", dir);
		rc = OPSCOPE_EOPEN;
	}
	return rc;
}
