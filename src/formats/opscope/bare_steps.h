/*
 * bare_steps.h: the steps of opscope_step() without a profiler, settled at load (see
 * bare_steps.c): the loader's last word on a file's thread tracks before they are sorted.
 */
#ifndef OPSCOPE_FORMATS_OPSCOPE_BARE_STEPS_H
#define OPSCOPE_FORMATS_OPSCOPE_BARE_STEPS_H

#include <stdint.h>

#include "model/model.h"

/* Settle the bare steps of tracks first_track .. m->ntracks - 1 (one file's, times in ns,
 * ranges in the order they began). False when out of memory (m->oom is set too). */
bool bare_steps_settle(struct model *m, uint32_t first_track);

#endif
