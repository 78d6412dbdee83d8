/*
 * legacy_export.c: the model's stack samples as a gperftools legacy CPU profile, the format
 * CPUPROFILE writes and the only one Debian's google-pprof (gperftools' Perl pprof) reads;
 * `go tool pprof` reads it too. legacy_load.c reads it back.
 *
 * The layout (gperftools' docs/cpuprofile-fileformat.html), in 64-bit little-endian words
 * as an x86-64 program writes it: the header [0, 3, 0, period in microseconds, 0]; one record
 * [count, n, pc_1 .. pc_n] per distinct stack, pc_1 the leaf; the trailer [0, 1, 0]; then the
 * text of /proc/self/maps, one line per executable mapping the model knows, from which pprof
 * finds the binaries to symbolize the addresses with.
 *
 * Only addresses can be stored. What the model has beyond them is left out: Python frames
 * (a function and a line, no address), frames of unknown address, and the frames a
 * symbolizer added for inlined calls (they share the machine address of the frame they are
 * inlined into, which is kept). Callers' addresses are written one past the call, as return
 * addresses: readers move every pc but the leaf back by one, onto the call, which is where
 * the model's caller frames already point. count is the number of samples of the stack: a
 * file's "samples" value column where it has one, else one per model sample. period: the
 * lead file's sampling period (pprof's period, or the recorder's `sampler` rate), else 10 ms,
 * gperftools' default.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/pprof/pprof.h"
#include "util/buf.h"
#include "util/bytes.h"

#define LEGACY_MAX_FRAMES 4096 /* pcs kept per stack, innermost first */

static void put_word(struct buf *b, uint64_t v)
{
	uint8_t w[8];
	put_u64le(w, v);
	buf_append(b, w, 8);
}

/* The sampling period of the profile in microseconds. */
static uint64_t period_us(const struct model *m)
{
	for (uint32_t i = 0; i < m->nfiles; i++) {
		const struct model_file *f = &m->files[i];
		if (f->period <= 0)
			continue;
		const char *unit = f->period_unit ? model_str(m, f->period_unit) : "";
		uint64_t p = (uint64_t)f->period;
		if (strcmp(unit, "nanoseconds") == 0)
			p /= 1000;
		else if (strcmp(unit, "milliseconds") == 0)
			p *= 1000;
		else if (strcmp(unit, "seconds") == 0)
			p *= 1000000;
		else if (strcmp(unit, "microseconds") != 0)
			continue; /* a period in bytes or counts says nothing about time */
		return p ? p : 1;
	}
	return 10000;
}

/* Column of the "samples" values of file f, or -1 when it has none. */
static int samples_column(const struct model *m, const struct model_file *f)
{
	for (uint32_t k = 0; k < f->nsample_types; k++) {
		uint32_t type = m->sample_types[f->first_sample_type + k].type;
		if (type && strcmp(model_str(m, type), "samples") == 0)
			return (int)k;
	}
	return -1;
}

/* The pcs of stack entry s, innermost first: addresses of native frames that are not
 * inlined copies; callers' one past the call. Their count. */
static uint32_t stack_pcs(const struct model *m, uint32_t s, uint64_t *pcs)
{
	uint32_t n = 0;
	for (uint32_t e = s; e != MODEL_NO_STACK && n < LEGACY_MAX_FRAMES;
	     e = m->stacks[e].parent) {
		const struct model_frame *f = &m->frames[m->stacks[e].frame];
		if (f->kind != MODEL_FRAME_NATIVE || !f->address ||
		    (f->flags & MODEL_FRAMEF_INLINED))
			continue;
		pcs[n] = n == 0 ? f->address : f->address + 1;
		n++;
	}
	return n;
}

int legacy_export(const struct model *m, FILE *out, char *err, size_t errsize)
{
	/* per stack entry: its samples (a stack's record is written once, with the sum) */
	uint64_t *count = calloc((size_t)m->nstacks + 1, sizeof(*count));
	uint64_t *pcs = malloc(LEGACY_MAX_FRAMES * sizeof(*pcs));
	if (!count || !pcs) {
		free(count);
		free(pcs);
		snprintf(err, errsize, "out of memory");
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (!tr->nsamples)
			continue;
		int col = tr->samples.first_value ? samples_column(m, &m->files[tr->file]) : -1;
		for (uint64_t i = 0; i < tr->nsamples; i++) {
			uint32_t s = tr->samples.stack[i];
			if (s == MODEL_NO_STACK)
				continue;
			int64_t c = col >= 0 ? model_sample_value(m, tr, i, (uint32_t)col) : 1;
			if (c > 0)
				count[s] += (uint64_t)c;
		}
	}
	struct buf b;
	buf_init(&b);
	uint64_t header[5] = { 0, 3, 0, period_us(m), 0 };
	for (int i = 0; i < 5; i++)
		put_word(&b, header[i]);
	for (uint32_t s = 0; s < m->nstacks; s++) {
		if (!count[s])
			continue;
		uint32_t n = stack_pcs(m, s, pcs);
		if (!n)
			continue; /* no address at all (a Python-only stack) */
		put_word(&b, count[s]);
		put_word(&b, n);
		for (uint32_t i = 0; i < n; i++)
			put_word(&b, pcs[i]);
	}
	put_word(&b, 0);
	put_word(&b, 1);
	put_word(&b, 0);
	for (uint32_t i = 0; i < m->nmappings; i++) {
		const struct model_mapping *mp = &m->mappings[i];
		const char *path = mp->path ? model_str(m, mp->path) : "";
		/* a path with a newline would end the line early: such a mapping is left out */
		if (strchr(path, '\n'))
			continue;
		buf_printf(&b, "%llx-%llx r-xp %08llx 00:00 0 %s\n", (unsigned long long)mp->start,
			   (unsigned long long)mp->limit, (unsigned long long)mp->offset, path);
	}
	int rc = 0;
	if (b.oom) {
		snprintf(err, errsize, "out of memory");
		rc = OPSCOPE_ENOMEM;
	} else if (fwrite(b.data, 1, b.len, out) != b.len) {
		snprintf(err, errsize, "%s", strerror(errno));
		rc = OPSCOPE_EIO;
	}
	buf_free(&b);
	free(count);
	free(pcs);
	return rc;
}
