/*
 * rec_symbolize.c: records stack samples whose native frames are addresses in this program
 * itself, with its real mapping (from /proc/self/maps) and build-id, so that the symbolizer
 * (src/formats/symbolize) has something real to name: tests/e2e/test_symbolize.sh compares
 * what `opscope` shows with `addr2line -f -i` on the same addresses. Built with -g -O1
 * (tests/CMakeLists.txt). Usage: rec_symbolize OUTPUT
 *
 * The frames, innermost first, one stack of 5 samples:
 *   sym_probe + 4      a noinline function
 *   return - 1         the call of sym_probe in sym_inner, which is always inlined into
 *                      sym_outer: the symbolizer must give sym_inner, then sym_outer
 * Prints "probe ADDR" and "call ADDR" (ELF addresses, for addr2line) and "path PATH".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <link.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "record/record.h"
#include "record/samples.h"

static uintptr_t call_site; /* sym_probe's return address */

__attribute__((noinline)) void sym_probe(void);
__attribute__((noinline)) void sym_probe(void)
{
	call_site = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void sym_inner(void)
{
	sym_probe();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void sym_outer(void);
__attribute__((noinline)) void sym_outer(void)
{
	sym_inner();
	__asm__ volatile("" ::: "memory");
}

/* The program's load bias and build-id (hex), from its program headers. */
struct self {
	uintptr_t bias;
	char build_id[129];
};

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct self *s = arg;
	s->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
			const unsigned char *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + sizeof(*n), "GNU", 4) == 0 && n->n_descsz <= 64) {
				for (unsigned k = 0; k < n->n_descsz; k++)
					snprintf(s->build_id + 2 * k, 3, "%02x", desc[k]);
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* the first object is the program */
}

int main(int argc, char **argv)
{
	struct opscope_options o = { .output = argc > 1 ? argv[1] : "symbolize.opscope" };
	struct self self = { 0 };
	dl_iterate_phdr(find_self, &self);
	sym_outer();
	uintptr_t probe = (uintptr_t)&sym_probe + 4, call = call_site - 1;

	/* the mapping of /proc/self/maps that holds sym_probe */
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096], path[4096] = "";
	unsigned long long start = 0, end = 0, off = 0;
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long long a, b, c;
		int pos = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s%n", &a, &b, &c, &pos) < 3)
			continue;
		if (probe >= a && probe < b && call >= a && call < b) {
			start = a, end = b, off = c;
			snprintf(path, sizeof(path), "%s", line + pos + strspn(line + pos, " "));
			path[strcspn(path, "\n")] = '\0';
		}
	}
	if (maps)
		fclose(maps);
	if (!end || !*path || !*self.build_id) {
		fprintf(stderr, "rec_symbolize: no mapping or build-id for the program\n");
		return 1;
	}
	printf("probe 0x%llx\ncall 0x%llx\npath %s\nbuild_id %s\n",
	       (unsigned long long)(probe - self.bias), (unsigned long long)(call - self.bias),
	       path, self.build_id);

	if (opscope_session_start(&o) != 0) {
		fprintf(stderr, "rec_symbolize: %s\n", opscope_last_error());
		return 1;
	}
	uint32_t map = record_sample_mapping(start, end, off, path, self.build_id);
	uint32_t f[2] = { record_sample_frame_native(map, probe),
			  record_sample_frame_native(map, call) };
	uint32_t st = record_sample_stack(f, 2);
	uint32_t track = record_sample_track(getpid());
	if (st == RECORD_SAMPLE_NONE || track == RECORD_SAMPLE_NONE) {
		fprintf(stderr, "rec_symbolize: interning the stack failed\n");
		return 1;
	}
	for (int i = 0; i < 5; i++)
		if (record_sample(track, record_ticks(), st, 1, 0) != 0)
			return 1;
	return opscope_session_stop() == 0 ? 0 : 1;
}
