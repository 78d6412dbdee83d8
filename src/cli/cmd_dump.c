/*
 * cmd_dump.c: `opscope dump FILE`: the events of a trace as text, one per line.
 *
 * Lines are sorted by track then time (default) or by time across tracks (--sort time);
 * times are ns relative to the first event of the trace. Every name and string argument is
 * escaped so that nothing the profiled program chose can drive the terminal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>

#include "opscope/opscope.h"

#include "cli/cli.h"
#include "model/model.h"
#include "util/bytes.h"
#include "util/numfmt.h"

static const char dump_usage[] =
	"usage: opscope dump [options] FILE\n"
	"\n"
	"Print the events of a trace, one per line:\n"
	"  TIME_NS TRACK KIND CATEGORY NAME [dur=NS] [depth=N] [value=V] [{key=value ...}]\n"
	"TIME_NS is relative to the first event; TRACK is the file's track number (a<pid>\n"
	"for a process's async track, gpu<device>:<stream> for a device queue). A stack\n"
	"sample is `sample - FUNCTION weight=W [truncated] stack=OUTER;...;INNER`, FUNCTION\n"
	"its innermost frame; a Python frame, and a native frame symbolized with debug info,\n"
	"reads FUNCTION@FILE:LINE (docs/symbolize.md).\n"
	"\n"
	"options:\n"
	"      --sort KEY      track (default): by track, then time; time: by time only\n"
	"  -t, --track N       only track N\n"
	"      --from NS       only events that start at or after NS (as printed: relative\n"
	"                      to the first event, absolute with --absolute)\n"
	"      --to NS         only events that end at or before NS (as printed)\n"
	"      --category CAT  only ranges and instants of category CAT (e.g. Kernel)\n"
	"      --name TEXT     only events whose name contains TEXT\n"
	"      --absolute      print absolute times (ns) instead of relative ones\n"
	"  --no-symbolize      leave native frames unsymbolized (also OPSCOPE_NO_SYMBOLIZE=1)\n"
	"  -h, --help          show this help\n";

/* a + b, held to the int64 range (a relative --to of INT64_MAX - 1 must not wrap). */
static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* What to keep (--from, --to, --category, --name). */
struct dump_filter {
	int64_t from, to;
	int category; /* -1: any */
	const char *name;
	bool absolute;
};

enum dump_kind {
	DK_RANGE,
	DK_ASYNC,
	DK_INSTANT,
	DK_COUNTER,
	DK_FLOW_OUT,
	DK_FLOW_IN,
	DK_DROP,
	DK_SAMPLE
};

struct dump_item {
	int64_t ts;	/* time, ns */
	uint32_t track; /* model track */
	uint8_t kind;	/* enum dump_kind */
	uint64_t index; /* in the track's columns, m->flows or m->drop_marks */
};

static int dump_by_track;

static int dump_cmp(const void *a, const void *b)
{
	const struct dump_item *x = a, *y = b;
	if (dump_by_track && x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void dump_str(const struct model *m, uint32_t id)
{
	cli_put_escaped(stdout, model_str(m, id), model_strlen(m, id));
}

static void dump_args(const struct model *m, uint64_t first, uint32_t n)
{
	if (!n)
		return;
	printf(" {");
	for (uint64_t i = first; i < first + n && i < m->nargs; i++) {
		if (i > first)
			printf(" ");
		dump_str(m, m->args.key[i]);
		printf("=");
		uint64_t bits = m->args.bits[i];
		switch (m->args.type[i]) {
		case MODEL_ARG_I64:
			printf("%" PRId64, (int64_t)bits);
			break;
		case MODEL_ARG_U64:
			printf("%" PRIu64, bits);
			break;
		case MODEL_ARG_F64: {
			char num[40];
			numfmt_double(num, sizeof(num), f64_from_bits(bits));
			fputs(num, stdout);
			break;
		}
		case MODEL_ARG_STR:
			printf("\"");
			dump_str(m, (uint32_t)bits);
			printf("\"");
			break;
		case MODEL_ARG_JSON: /* compact JSON text */
			dump_str(m, (uint32_t)bits);
			break;
		}
	}
	printf("}");
}

/* The innermost frame's name of stack entry `st` (0 when there is none). */
static uint32_t dump_leaf_name(const struct model *m, uint32_t st)
{
	return st < m->nstacks ? m->frames[m->stacks[st].frame].name : 0;
}

/* The frames of stack entry `st`, outermost first, separated by ';'. Iterative: a stack may
 * be thousands of frames deep. */
static void dump_stack(const struct model *m, uint32_t st)
{
	uint32_t depth = 0;
	for (uint32_t s = st; s < m->nstacks; s = m->stacks[s].parent)
		depth++;
	for (uint32_t d = depth; d > 0; d--) {
		uint32_t s = st;
		for (uint32_t k = 1; k < d; k++)
			s = m->stacks[s].parent; /* the entry d - 1 steps out of st */
		const struct model_frame *f = &m->frames[m->stacks[s].frame];
		dump_str(m, f->name);
		if ((f->kind == MODEL_FRAME_NATIVE || f->kind == MODEL_FRAME_PYTHON) && f->file &&
		    f->line > 0) {
			printf("@"); /* where in the source: symbolized native, or Python */
			dump_str(m, f->file);
			printf(":%d", (int)f->line);
		}
		if (d > 1)
			printf(";");
	}
}

static void dump_track_name(const struct model_track *tr)
{
	if (tr->kind == MODEL_TRACK_ASYNC)
		printf("a%u", tr->pid);
	else if (tr->kind == MODEL_TRACK_DEVICE)
		printf("gpu%u:%" PRIu64, tr->pid, tr->tid);
	else
		printf("%u", tr->file_track);
}

static void dump_item(const struct model *m, const struct dump_item *it, int64_t t0)
{
	const struct model_track *tr = &m->tracks[it->track];
	printf("%12" PRId64 " ", it->ts - t0);
	dump_track_name(tr);
	uint64_t i = it->index;
	switch (it->kind) {
	case DK_RANGE:
	case DK_ASYNC: {
		const struct model_ranges *r = &tr->ranges;
		printf(" %s %s ", it->kind == DK_RANGE ? "range" : "async",
		       opscope_category_name(r->category[i]));
		dump_str(m, r->name[i]);
		printf(" dur=%" PRId64, r->dur_ns[i]);
		if (it->kind == DK_RANGE)
			printf(" depth=%u", r->depth[i]);
		if (r->flags[i] & MODEL_RANGEF_UNCLOSED)
			printf(" unclosed");
		if (r->flags[i] & MODEL_RANGEF_MISMATCH)
			printf(" closed-by-outer-end");
		dump_args(m, r->first_arg[i], r->nargs[i]);
		break;
	}
	case DK_INSTANT:
		printf(" instant %s ", opscope_category_name(tr->instants.category[i]));
		dump_str(m, tr->instants.name[i]);
		dump_args(m, tr->instants.first_arg[i], tr->instants.nargs[i]);
		break;
	case DK_COUNTER: {
		printf(" counter - ");
		dump_str(m, tr->counters.name[i]);
		char num[40];
		numfmt_double(num, sizeof(num), tr->counters.value[i]);
		printf(" value=%s", num);
		break;
	}
	case DK_FLOW_OUT:
	case DK_FLOW_IN: {
		const struct model_flow *f = &m->flows[i];
		bool out = it->kind == DK_FLOW_OUT;
		uint32_t other = out ? f->to_track : f->from_track;
		printf(" %s - id=%" PRIu64, out ? "flow_out" : "flow_in", f->id);
		if (other < m->ntracks) {
			printf(out ? " to=" : " from=");
			dump_track_name(&m->tracks[other]);
		}
		break;
	}
	case DK_DROP:
		printf(" drop - count=%" PRIu64, m->drop_marks[i].count);
		break;
	case DK_SAMPLE: {
		const struct model_samples *sa = &tr->samples;
		printf(" sample - ");
		dump_str(m, dump_leaf_name(m, sa->stack[i]));
		printf(" weight=%" PRId64, sa->weight[i]);
		if (sa->flags[i] & MODEL_SAMPLEF_TRUNCATED)
			printf(" truncated");
		printf(" stack=");
		dump_stack(m, sa->stack[i]);
		break;
	}
	}
	printf("\n");
}

static bool dump_push(struct dump_item **items, uint64_t *n, uint64_t *cap, struct dump_item it)
{
	if (*n == *cap) {
		uint64_t c = *cap ? *cap * 2 : 1024;
		struct dump_item *p = realloc(*items, (size_t)c * sizeof(*p));
		if (!p)
			return false;
		*items = p;
		*cap = c;
	}
	(*items)[(*n)++] = it;
	return true;
}

static bool dump_keep(const struct model *m, const struct dump_filter *f, int64_t s, int64_t e,
		      int category, uint32_t name)
{
	if (s < f->from || e > f->to)
		return false;
	if (f->category >= 0 && category != f->category)
		return false;
	return !f->name || strstr(model_str(m, name), f->name) != NULL;
}

static int dump_run(const char *path, long only_track, const struct dump_filter *given)
{
	struct model *m = cli_load(path);
	if (!m)
		return CLI_ERROR;
	/* --from and --to are read as the times are printed: relative to the first event,
	 * unless --absolute */
	struct dump_filter relative = *given;
	const struct dump_filter *flt = &relative;
	if (!given->absolute && m->min_ns <= m->max_ns) {
		if (given->from != INT64_MIN)
			relative.from = sat_add(given->from, m->min_ns);
		if (given->to != INT64_MAX)
			relative.to = sat_add(given->to, m->min_ns);
	}
	struct dump_item *items = NULL;
	uint64_t n = 0, cap = 0;
	bool ok = true;
	for (uint32_t t = 0; t < m->ntracks && ok; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (only_track >= 0 &&
		    (tr->kind != MODEL_TRACK_THREAD || tr->file_track != (unsigned long)only_track))
			continue;
		uint8_t rk = tr->kind == MODEL_TRACK_ASYNC ? DK_ASYNC : DK_RANGE;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges && ok; i++)
			if (dump_keep(m, flt, r->start_ns[i], r->start_ns[i] + r->dur_ns[i],
				      r->category[i], r->name[i]))
				ok = dump_push(&items, &n, &cap,
					       (struct dump_item){ r->start_ns[i], t, rk, i });
		const struct model_instants *in = &tr->instants;
		for (uint64_t i = 0; i < tr->ninstants && ok; i++)
			if (dump_keep(m, flt, in->ts_ns[i], in->ts_ns[i], in->category[i],
				      in->name[i]))
				ok = dump_push(
					&items, &n, &cap,
					(struct dump_item){ in->ts_ns[i], t, DK_INSTANT, i });
		for (uint64_t i = 0; i < tr->ncounters && ok; i++)
			if (dump_keep(m, flt, tr->counters.ts_ns[i], tr->counters.ts_ns[i],
				      flt->category, tr->counters.name[i]))
				ok = dump_push(&items, &n, &cap,
					       (struct dump_item){ tr->counters.ts_ns[i], t,
								   DK_COUNTER, i });
		const struct model_samples *sa = &tr->samples;
		for (uint64_t i = 0; i < tr->nsamples && ok; i++)
			if (dump_keep(m, flt, sa->ts_ns[i], sa->ts_ns[i], flt->category,
				      dump_leaf_name(m, sa->stack[i])))
				ok = dump_push(&items, &n, &cap,
					       (struct dump_item){ sa->ts_ns[i], t, DK_SAMPLE, i });
	}
	/* flows and drop marks have no category or name: shown only without those filters */
	bool plain = flt->category < 0 && !flt->name;
	for (uint64_t i = 0; i < m->nflows && ok; i++) {
		const struct model_flow *f = &m->flows[i];
		if (plain && f->from_track < m->ntracks && f->from_ns >= flt->from &&
		    f->from_ns <= flt->to &&
		    (only_track < 0 || m->tracks[f->from_track].file_track == only_track))
			ok = dump_push(
				&items, &n, &cap,
				(struct dump_item){ f->from_ns, f->from_track, DK_FLOW_OUT, i });
		if (ok && plain && f->to_track < m->ntracks && f->to_ns >= flt->from &&
		    f->to_ns <= flt->to &&
		    (only_track < 0 || m->tracks[f->to_track].file_track == only_track))
			ok = dump_push(&items, &n, &cap,
				       (struct dump_item){ f->to_ns, f->to_track, DK_FLOW_IN, i });
	}
	for (uint64_t i = 0; i < m->ndrop_marks && ok; i++) {
		const struct model_drop_mark *d = &m->drop_marks[i];
		if (plain && d->ts_ns >= flt->from && d->ts_ns <= flt->to &&
		    (only_track < 0 || m->tracks[d->track].file_track == only_track))
			ok = dump_push(&items, &n, &cap,
				       (struct dump_item){ d->ts_ns, d->track, DK_DROP, i });
	}
	if (!ok)
		cli_die_oom();
	if (n > 1) /* qsort(NULL, 0, ...) is undefined: a trace with nothing to print */
		qsort(items, (size_t)n, sizeof(*items), dump_cmp);
	int64_t t0 = m->min_ns <= m->max_ns && !flt->absolute ? m->min_ns : 0;
	printf("# %12s track kind category name details\n", "time_ns");
	for (uint64_t i = 0; i < n && !ferror(stdout); i++) /* stop when no one reads */
		dump_item(m, &items[i], t0);
	const struct model_file *f = &m->files[0];
	if (!f->complete)
		printf("# incomplete: no END record; %" PRIu64
		       " bytes discarded after offset %" PRIu64 "\n",
		       f->discarded_bytes, f->valid_end);
	free(items);
	model_free(m);
	return CLI_OK; /* main() checks what was written to stdout */
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "track", required_argument, NULL, 't' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ "category", required_argument, NULL, 'c' },
		{ "name", required_argument, NULL, 'n' },
		{ "absolute", no_argument, NULL, 'a' },
		{ "no-symbolize", no_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long track = -1;
	struct dump_filter flt = { INT64_MIN, INT64_MAX, -1, NULL, false };
	int c;
	dump_by_track = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'Y':
			cli_no_symbolize = true;
			break;
		case 's':
			if (strcmp(optarg, "track") == 0)
				dump_by_track = 1;
			else if (strcmp(optarg, "time") == 0)
				dump_by_track = 0;
			else
				return cli_usage_error("dump", "--sort wants 'track' or 'time'");
			break;
		case 't': {
			char *end;
			track = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || track < 0 || track > UINT32_MAX)
				return cli_usage_error("dump", "--track wants a track number");
			break;
		}
		case 'F':
		case 'T': {
			char *end;
			long long v = strtoll(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0')
				return cli_usage_error("dump", c == 'F' ? "--from wants ns"
									: "--to wants ns");
			*(c == 'F' ? &flt.from : &flt.to) = v;
			break;
		}
		case 'c':
			flt.category = opscope_category_from_name(optarg);
			if (flt.category < 0)
				return cli_usage_error("dump", "unknown --category (e.g. Kernel, "
							       "Operator, CudaRuntime)");
			break;
		case 'n':
			flt.name = optarg;
			break;
		case 'a':
			flt.absolute = true;
			break;
		case 'h':
			fputs(dump_usage, stdout);
			return CLI_OK;
		default:
			return cli_usage_error("dump", NULL);
		}
	}
	if (optind >= argc)
		return cli_usage_error("dump", "no trace file given");
	if (optind + 1 < argc)
		return cli_usage_error("dump", "one trace file at a time");
	return dump_run(argv[optind], track, &flt);
}
