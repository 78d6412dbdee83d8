/*
 * gpu_load.h: the GPU records of an .opscope file (docs/trace-format.md 3.2) into the model,
 * as the Kineto importer has GPU work: kernels, copies, memsets and synchronizations as ranges
 * of device tracks (device, stream), runtime and driver calls as ranges of the host thread
 * that made them (nested under the host ranges open around them), a correlation id on both
 * and a flow from each call to the work it launched; allocations as instants and a counter.
 */
#ifndef OPSCOPE_FORMATS_OPSCOPE_GPU_LOAD_H
#define OPSCOPE_FORMATS_OPSCOPE_GPU_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "trace/format.h"

/* The GPU entries of one file, their times already in ns (start_ticks/end_ticks hold ns) and
 * their name ids model string ids. Tracks [first_track, ntracks) are the file's; `process`
 * its process, `pid` its pid. Returns false when out of memory. */
bool gpu_load_settle(struct model *m, uint32_t first_track, uint32_t process, uint32_t pid,
		     struct ops_gpu_entry *e, uint64_t n, uint64_t first_flow);

#endif
