/*
 * replay.c: run a fuzz target's entry point (LLVMFuzzerTestOneInput, linked in) over every
 * file of a corpus directory, without libFuzzer. Used by CTest (label fuzz) so that every
 * seed and every input that once crashed is replayed under the sanitizers of the build.
 * usage: fuzz_replay_XXX DIR...   Exit 0 when every file ran, 1 on an I/O error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 4096, len = 0;
	uint8_t *data = malloc(cap);
	size_t n;
	while (data && (n = fread(data + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *p = realloc(data, cap * 2);
			if (!p) {
				free(data);
				data = NULL;
				break;
			}
			data = p;
			cap *= 2;
		}
	}
	fclose(f);
	if (!data)
		return -1;
	/* an exact-size copy so that ASan sees reads past the end */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(data);
		return -1;
	}
	memcpy(exact, data, len);
	free(data);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, failed = 0;
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			printf("replay %s\n", e->d_name);
			fflush(stdout);
			if (replay_file(path) != 0) {
				perror(path);
				failed++;
			}
			files++;
		}
		closedir(d);
	}
	printf("%d files replayed, %d unreadable\n", files, failed);
	return failed ? 1 : 0;
}
