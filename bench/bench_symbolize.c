/*
 * bench_symbolize.c: writes a trace with one stack sample per address read from stdin (hex
 * file offsets of the binary PATH, one a line), each in a mapping of PATH with its build-id,
 * for bench/bench_symbolize.sh, which times loading it (the symbolizer at work) against
 * addr2line on the same addresses. Usage: bench_symbolize OUTPUT PATH BUILD_ID < offsets
 */
#include <stdio.h>
#include <stdlib.h>

#include <sys/stat.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "record/record.h"
#include "record/samples.h"

#define MAP_START 0x7e0000000000ull

int main(int argc, char **argv)
{
	struct stat st;
	if (argc != 4 || stat(argv[2], &st) != 0) {
		fprintf(stderr, "usage: bench_symbolize OUTPUT PATH BUILD_ID < offsets\n");
		return 2;
	}
	struct opscope_options o = { .output = argv[1] };
	if (opscope_session_start(&o) != 0) {
		fprintf(stderr, "bench_symbolize: %s\n", opscope_last_error());
		return 1;
	}
	uint32_t map = record_sample_mapping(MAP_START, MAP_START + (uint64_t)st.st_size, 0,
					     argv[2], argv[3]);
	uint32_t track = record_sample_track(getpid());
	unsigned long long off;
	while (scanf("%llx", &off) == 1) {
		uint32_t f = record_sample_frame_native(map, MAP_START + off);
		uint32_t s = record_sample_stack(&f, 1);
		if (s == RECORD_SAMPLE_NONE || record_sample(track, record_ticks(), s, 1, 0) != 0) {
			fprintf(stderr, "bench_symbolize: offset 0x%llx not recorded\n", off);
			return 1;
		}
	}
	return opscope_session_stop() == 0 ? 0 : 1;
}
