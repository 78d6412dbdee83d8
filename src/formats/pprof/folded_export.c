/*
 * folded_export.c: the model's stack samples as folded stacks, the text flamegraph.pl,
 * inferno and speedscope read: one line per distinct stack, "root;caller;leaf weight", the
 * frames from the outermost, the weight summed over every sample of that stack on every
 * track (model_samples.weight: the file's default sample type, e.g. cpu nanoseconds).
 *
 * A frame is its function's name; an unsymbolized one its address and binary
 * ("0x42ef04 [cppbench_server_main]"); one with neither "[unknown]". Names are made safe for
 * the line: ';' (the frame separator) becomes ':', control characters (a newline would end
 * the line) become spaces, invalid UTF-8 becomes U+FFFD (escape.h). Samples without frames
 * have no line. Lines come in the order of the stack table (callers before callees).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/pprof/pprof.h"
#include "util/buf.h"
#include "util/escape.h"

/* Append the text of frame f to b, made safe for a folded line. */
static void frame_text(const struct model *m, const struct model_frame *f, struct buf *b)
{
	struct buf raw;
	buf_init(&raw);
	if (f->name) {
		buf_append(&raw, model_str(m, f->name), model_strlen(m, f->name));
	} else if (f->address) {
		const char *mod = model_str(m, f->module), *slash = strrchr(mod, '/');
		buf_printf(&raw, "0x%llx", (unsigned long long)f->address);
		if (*mod)
			buf_printf(&raw, " [%s]", slash ? slash + 1 : mod);
	} else {
		buf_append(&raw, "[unknown]", 9);
	}
	for (size_t i = 0; i < raw.len; i++) {
		if (raw.data[i] == ';')
			raw.data[i] = ':';
		else if (raw.data[i] < 0x20 || raw.data[i] == 0x7f)
			raw.data[i] = ' ';
	}
	if (raw.len)
		escape_utf8(esc_sink_buf(b), (const char *)raw.data, raw.len);
	b->oom |= raw.oom;
	buf_free(&raw);
}

int folded_export(const struct model *m, FILE *out, char *err, size_t errsize)
{
	int64_t *sum = calloc((size_t)m->nstacks + 1, sizeof(*sum));
	uint8_t *seen = calloc((size_t)m->nstacks + 1, 1);
	uint32_t *path = malloc(((size_t)m->nstacks + 1) * sizeof(*path));
	if (!sum || !seen || !path) {
		free(sum);
		free(seen);
		free(path);
		snprintf(err, errsize, "out of memory");
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		for (uint64_t i = 0; i < tr->nsamples; i++) {
			uint32_t s = tr->samples.stack[i];
			if (s == MODEL_NO_STACK)
				continue;
			sum[s] += tr->samples.weight[i];
			seen[s] = 1;
		}
	}
	struct buf line;
	buf_init(&line);
	int rc = 0;
	for (uint32_t s = 0; s < m->nstacks && rc == 0; s++) {
		if (!seen[s])
			continue;
		uint32_t n = 0;
		for (uint32_t e = s; e != MODEL_NO_STACK; e = m->stacks[e].parent)
			path[n++] = e;
		buf_clear(&line);
		while (n-- > 0) {
			frame_text(m, &m->frames[m->stacks[path[n]].frame], &line);
			if (n)
				buf_append(&line, ";", 1);
		}
		buf_printf(&line, " %lld\n", (long long)sum[s]);
		if (line.oom) {
			snprintf(err, errsize, "out of memory");
			rc = OPSCOPE_ENOMEM;
		} else if (fwrite(line.data, 1, line.len, out) != line.len) {
			snprintf(err, errsize, "%s", strerror(errno));
			rc = OPSCOPE_EIO;
		}
	}
	buf_free(&line);
	free(sum);
	free(seen);
	free(path);
	return rc;
}
