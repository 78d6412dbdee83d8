/*
 * cmd_info.c: `opscope info FILE...`: what a trace file holds and whether it is whole.
 *
 * Prints the header fields, process metadata, the tracks (threads) with their event and drop
 * counts, events by kind and by category, the time span, scoped timers, and the integrity of
 * the file: a clean END, or where the valid data ends and what was lost. Exit status 1 when
 * a file cannot be read at all; a torn tail is reported, not an error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <getopt.h>

#include "opscope/opscope.h"

#include "cli/cli.h"
#include "model/model.h"
#include "trace/decode.h"

static const char info_usage[] =
	"usage: opscope info [options] FILE...\n"
	"\n"
	"Show what a trace file holds: header, process metadata, threads, event counts by\n"
	"kind and category, drops, time span, timers, and whether the file ended cleanly.\n"
	"\n"
	"options:\n"
	"  --no-symbolize  leave native frames unsymbolized (also OPSCOPE_NO_SYMBOLIZE=1)\n"
	"  -h, --help   show this help\n";

static void info_duration(char *out, size_t size, int64_t ns)
{
	double v = (double)ns;
	if (ns < 1000)
		snprintf(out, size, "%" PRId64 " ns", ns);
	else if (ns < 1000000)
		snprintf(out, size, "%.3f us", v / 1e3);
	else if (ns < 1000000000)
		snprintf(out, size, "%.3f ms", v / 1e6);
	else
		snprintf(out, size, "%.3f s", v / 1e9);
}

static void info_str(const struct model *m, uint32_t id)
{
	cli_put_escaped(stdout, model_str(m, id), model_strlen(m, id));
}

static void info_file(const struct model *m, const struct model_file *f)
{
	printf("file:       ");
	info_str(m, f->path);
	printf(" (%" PRIu64 " bytes)\n", f->file_bytes);
	if (strcmp(model_str(m, f->format), "opscope") != 0) {
		/* an imported trace: no writer version, features or creation time */
		printf("format:     ");
		info_str(m, f->format);
		printf(" (imported)\n");
	} else {
		printf("format:     version %u (readable by version %u and newer), features:",
		       f->version, f->min_reader);
		if (!f->features)
			printf(" none");
		if (f->features & OPS_FEAT_ZSTD)
			printf(" zstd");
		if (f->features & OPS_FEAT_TSC)
			printf(" tsc");
		if (f->features & ~(uint64_t)(OPS_FEAT_ZSTD | OPS_FEAT_TSC))
			printf(" 0x%" PRIx64,
			       f->features & ~(uint64_t)(OPS_FEAT_ZSTD | OPS_FEAT_TSC));
		printf("\n");
		time_t secs = (time_t)(f->create_realtime_ns / 1000000000u);
		struct tm tm;
		char when[64] = "?";
		if (gmtime_r(&secs, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		printf("created:    %s\n", when);
	}
	printf("pid:        %u\n", f->pid);
	bool imported = strcmp(model_str(m, f->format), "opscope") != 0;
	printf("records:    %" PRIu64 "%s", f->records, imported ? " trace events" : "");
	if (f->skipped_records)
		printf(" (%" PRIu64 " %s skipped)", f->skipped_records,
		       imported ? "of phases the model does not hold" : "of unknown types");
	printf("\n");
	if (imported) {
		printf("status:     %s\n", f->complete ? "complete (read to the end)"
						       : "INCOMPLETE: reading stopped at an error");
	} else if (f->complete) {
		printf("status:     complete (the recording stopped cleanly)\n");
	} else {
		printf("status:     INCOMPLETE: no END record (the recording did not stop cleanly)\n");
	}
	if (f->discarded_bytes) {
		printf("            valid data ends at offset %" PRIu64 "; %" PRIu64
		       " bytes after it discarded\n",
		       f->valid_end, f->discarded_bytes);
		printf("            ");
		info_str(m, f->tail_msg);
		printf("\n");
	}
	if (imported && (f->unmatched_ends || f->mismatched_ends))
		printf("anomalies:  %" PRIu64 " E without B, %" PRIu64
		       " ranges crossing the end of their parent\n",
		       f->unmatched_ends, f->mismatched_ends);
	else if (f->unmatched_ends || f->mismatched_ends || f->unmatched_async || f->orphan_args ||
		 f->bad_strings)
		printf("anomalies:  %" PRIu64 " unmatched END, %" PRIu64 " mismatched END, %" PRIu64
		       " unmatched ASYNC_END, %" PRIu64 " orphan ARG, %" PRIu64
		       " undefined string ids\n",
		       f->unmatched_ends, f->mismatched_ends, f->unmatched_async, f->orphan_args,
		       f->bad_strings);
}

static void info_symbolize(const struct model_symbolize_stats *s);

static int info_one(const char *path)
{
	struct model *m = cli_load(path);
	if (!m)
		return CLI_ERROR;
	const struct model_file *f = &m->files[0];
	for (uint32_t i = 0; i < m->nfiles; i++) /* a directory: one file per process */
		info_file(m, &m->files[i]);

	bool meta = false;
	for (uint32_t i = 0; i < m->nmeta; i++) {
		if (!meta)
			printf("metadata:\n");
		meta = true;
		printf("  %-16s ", model_str(m, m->meta[i].key));
		info_str(m, m->meta[i].value);
		printf("\n");
	}

	char a[48];
	if (m->min_ns <= m->max_ns) {
		/* .opscope files are in CLOCK_MONOTONIC; an imported trace keeps the clock it
		 * was written in (Kineto: the epoch, or its baseTimeNanoseconds) */
		uint32_t native = 0;
		for (uint32_t i = 0; i < m->nfiles; i++)
			native += strcmp(model_str(m, m->files[i].format), "opscope") == 0;
		const char *clock = native == m->nfiles ? "CLOCK_MONOTONIC"
				    : native == 0	? "the imported trace's clock"
							: "mixed clocks: .opscope and imported";
		info_duration(a, sizeof(a), m->max_ns - m->min_ns);
		printf("time span:  %" PRId64 " .. %" PRId64 " ns (%s), %s\n", m->min_ns, m->max_ns,
		       clock, a);
	} else {
		printf("time span:  no events\n");
	}

	printf("events:     %" PRIu64 " encoded", m->events_total);
	for (unsigned k = 1; k <= MODEL_EV_DROP_MARK; k++)
		if (f->by_kind[k])
			printf(", %s %" PRIu64, decode_event_name(k), f->by_kind[k]);
	printf("\n");

	uint64_t by_cat[256] = { 0 };
	uint64_t ranges = 0, instants = 0, counters = 0, unclosed = 0;
	uint64_t stack_samples = 0, truncated = 0;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		for (uint64_t i = 0; i < tr->nranges; i++) {
			by_cat[tr->ranges.category[i]]++;
			unclosed += (tr->ranges.flags[i] & MODEL_RANGEF_UNCLOSED) != 0;
		}
		for (uint64_t i = 0; i < tr->ninstants; i++)
			by_cat[tr->instants.category[i]]++;
		ranges += tr->nranges;
		instants += tr->ninstants;
		counters += tr->ncounters;
		stack_samples += tr->nsamples;
		for (uint64_t i = 0; i < tr->nsamples; i++)
			truncated += (tr->samples.flags[i] & MODEL_SAMPLEF_TRUNCATED) != 0;
	}
	printf("model:      %" PRIu64 " ranges (%" PRIu64 " unclosed), %" PRIu64
	       " instants, %" PRIu64 " counter samples, %" PRIu64 " flows, %" PRIu64 " args\n",
	       ranges, unclosed, instants, counters, m->nflows, m->nargs);
	if (stack_samples || m->nstacks) /* only then: traces without samples read as before */
		printf("samples:    %" PRIu64 " stack samples (%" PRIu64
		       " truncated), %u stacks, %u frames\n",
		       stack_samples, truncated, m->nstacks, m->nframes);
	info_symbolize(&m->symbolize);
	bool any = false;
	for (int c = 0; c < 256; c++) {
		if (!by_cat[c])
			continue;
		if (!any)
			printf("by category (ranges and instants):\n");
		any = true;
		printf("  %-18s %10" PRIu64 "\n", opscope_category_name(c), by_cat[c]);
	}

	printf("threads:    %u tracks\n", m->ntracks);
	printf("  %5s %8s %10s %10s %10s  %s\n", "track", "pid", "tid", "events", "dropped",
	       "name");
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		char track[16];
		if (tr->kind == MODEL_TRACK_ASYNC)
			snprintf(track, sizeof(track), "async");
		else
			snprintf(track, sizeof(track), "%u", tr->file_track);
		printf("  %5s %8u %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "  ", track, tr->pid,
		       tr->tid, tr->kind == MODEL_TRACK_ASYNC ? tr->nranges : tr->events,
		       tr->dropped);
		info_str(m, tr->name);
		if (tr->flags & MODEL_TRACKF_MAIN)
			printf(" (main)");
		if (tr->flags & MODEL_TRACKF_EXITED)
			printf(" (exited)");
		printf("\n");
	}
	printf("drops:      %" PRIu64 " events lost", m->dropped_total);
	if (m->dropped_total && m->events_total)
		printf(" (%.2f%% of %" PRIu64 ")",
		       100.0 * (double)m->dropped_total /
			       (double)(m->dropped_total + m->events_total),
		       m->dropped_total + m->events_total);
	printf("\n");
	if (m->ntimers) {
		printf("timers:\n  %-24s %10s %12s %12s %12s %12s\n", "name", "count", "total",
		       "avg", "max", "min");
		for (uint32_t i = 0; i < m->ntimers; i++) {
			const struct model_timer *t = &m->timers[i];
			char tot[48], avg[48], mx[48], mn[48];
			info_duration(tot, sizeof(tot), (int64_t)(t->total_ns & INT64_MAX));
			info_duration(avg, sizeof(avg),
				      t->count ? (int64_t)((t->total_ns / t->count) & INT64_MAX)
					       : 0);
			info_duration(mx, sizeof(mx), (int64_t)(t->max_ns & INT64_MAX));
			info_duration(mn, sizeof(mn), (int64_t)(t->min_ns & INT64_MAX));
			printf("  ");
			info_str(m, t->name);
			int pad = 24 - (int)model_strlen(m, t->name);
			printf("%*s %10" PRIu64 " %12s %12s %12s %12s\n", pad > 0 ? pad : 0, "",
			       t->count, tot, avg, mx, mn);
		}
	}
	model_free(m);
	return CLI_OK;
}

/* One line on what symbolizing the native frames gave, when the trace has any. */
static void info_symbolize(const struct model_symbolize_stats *s)
{
	if (!s->frames)
		return;
	if (s->skipped == s->frames) {
		printf("symbols:    %" PRIu64 " native frames not symbolized: %s\n", s->frames,
		       s->off ? s->off : "skipped");
		return;
	}
	printf("symbols:    %" PRIu64 " of %" PRIu64 " native frames symbolized (%" PRIu64
	       " with file:line, %" PRIu64 " inlined frames added)",
	       s->named, s->frames, s->with_line, s->inlined);
	const struct {
		uint64_t n;
		const char *why;
	} not [] = {
		{ s->no_binary, "binary missing" }, { s->build_id_mismatch, "build-id mismatch" },
		{ s->no_symbol, "no symbol" },	    { s->no_path, "not in a file" },
		{ s->skipped, "skipped" },
	};
	const char *sep = "; not: ";
	for (size_t i = 0; i < sizeof(not ) / sizeof(not [0]); i++)
		if (not [i].n) {
			printf("%s%" PRIu64 " %s", sep, not [i].n, not [i].why);
			sep = ", ";
		}
	if (s->mangled)
		printf("; %" PRIu64 " names left mangled (libstdc++'s demangler not found)",
		       s->mangled);
	printf("\n");
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "no-symbolize", no_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'Y':
			cli_no_symbolize = true;
			break;
		case 'h':
			fputs(info_usage, stdout);
			return CLI_OK;
		default:
			return cli_usage_error("info", NULL);
		}
	}
	if (optind >= argc)
		return cli_usage_error("info", "no trace file given");
	int rc = CLI_OK;
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			printf("\n");
		if (info_one(argv[i]) != CLI_OK)
			rc = CLI_ERROR;
	}
	return rc;
}
