/*
 * views_ranks.c: the `ranks` view ("Ranks"): the rank analysis of analyze/ranks.h as tables,
 * when the loaded files hold two or more ranks (else nothing; asked for by name, the one line
 * of the registry). Tables, in order: the ranks (file, host, clock offset, overlap), the notes
 * (one line each: what does not fit), the steps side by side with their straggler, and the
 * collectives across ranks. It computes nothing: it reads ranks_analyze's fields, labels and
 * fills cells. Definitions: docs/ranks.md.
 */
#include <stdio.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/ranks.h"
#include "report/views_internal.h"

#define RANKS_COLL_ROWS 200 /* collective rows shown; the rest are counted in the notes */

static int ranks_table(struct report_ctx *c, const struct ranks *rk)
{
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "ranks", "Ranks");
	if (!t)
		return OPSCOPE_ENOMEM;
	int crank = rtable_col(t, "Rank", "rank", RCOL_COUNT, 5);
	int chost = rtable_col(t, "Host", "host", RCOL_TEXT, 12);
	int cfile = rtable_col(t, "File", "file", RCOL_TEXT, 24);
	rtable_col_flags(t, cfile, RCOL_F_CUT);
	int cws = rtable_col(t, "World", "world_size", RCOL_COUNT, 5);
	int coff = rtable_col(t, "Clock Offset", "clock_offset_ns", RCOL_TIME, 12);
	int cal = rtable_col(t, "Aligned", "aligned", RCOL_TEXT, 7);
	int cnc = rtable_col(t, "Collectives", "collectives", RCOL_COUNT, 11);
	int cst = rtable_col(t, "Steps", "steps", RCOL_COUNT, 5);
	int ccomm = rtable_col(t, "Communication", "communication_ns", RCOL_TIME, 13);
	int ccomp = rtable_col(t, "Computation", "computation_ns", RCOL_TIME, 11);
	int cov = rtable_col(t, "Overlap", "overlap_ns", RCOL_TIME, 9);
	int covr = rtable_col(t, "Overlap/Comm (%)", "overlap_ratio", RCOL_RATIO, 16);
	for (uint32_t i = 0; i < rk->nranks; i++) {
		const struct ranks_rank *r = &rk->ranks[i];
		struct rrow *row = rtable_row(t, 0);
		if (!row)
			break;
		row->cells[crank].i = r->rank;
		if (r->host)
			set_text(row, chost, m, r->host);
		else
			row->cells[chost].empty = true;
		set_text(row, cfile, m, m->files[r->file].path);
		if (r->world_size > 0)
			row->cells[cws].i = r->world_size;
		else
			row->cells[cws].empty = true;
		row->cells[coff].i = r->offset_ns;
		set_cstr(row, cal, i == 0 ? (r->aligned ? "ref" : "-") : r->aligned ? "yes" : "no");
		row->cells[cnc].i = r->ncolls;
		row->cells[cst].i = r->nsteps;
		row->cells[ccomm].i = r->dist.communication_ns;
		row->cells[ccomp].i = r->dist.computation_ns;
		row->cells[cov].i = r->dist.overlap_ns;
		row->cells[covr].ratio = ratio(r->dist.overlap_ns, r->dist.communication_ns);
		row->cells[covr].empty = r->dist.communication_ns <= 0;
	}
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

static int notes_table(struct report_ctx *c, const struct ranks *rk)
{
	uint64_t hidden = rk->ncolls > RANKS_COLL_ROWS ? rk->ncolls - RANKS_COLL_ROWS : 0;
	if (!rk->nnotes && !hidden)
		return 0;
	struct rtable *t = ctx_table(c, "ranks", "Rank Notes");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cn = rtable_col(t, "Note", "note", RCOL_TEXT, 40);
	for (uint32_t i = 0; i < rk->nnotes; i++) {
		struct rrow *row = rtable_row(t, 0);
		if (!row)
			break;
		size_t len = strlen(rk->notes[i]);
		rcell_text(row, cn, rtable_str(t, rk->notes[i], len), len);
	}
	char buf[96];
	int n = 0;
	if (rk->nnotes_dropped)
		n = snprintf(buf, sizeof(buf), "%u more notes not shown", rk->nnotes_dropped);
	struct rrow *row = n > 0 ? rtable_row(t, 0) : NULL;
	if (row)
		rcell_text(row, cn, rtable_str(t, buf, (size_t)n), (size_t)n);
	if (hidden) {
		n = snprintf(buf, sizeof(buf), "collective table: %d rows shown, %llu more",
			     RANKS_COLL_ROWS, (unsigned long long)hidden);
		if ((row = rtable_row(t, 0)) != NULL)
			rcell_text(row, cn, rtable_str(t, buf, (size_t)n), (size_t)n);
	}
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

static const char *why_name(enum ranks_why w)
{
	switch (w) {
	case RANKS_WHY_DATA:
		return "waited for data";
	case RANKS_WHY_COMPUTE:
		return "longer compute";
	case RANKS_WHY_LATE:
		return "arrived late at";
	default:
		return "-";
	}
}

static int steps_table(struct report_ctx *c, const struct ranks *rk)
{
	const struct model *m = c->an.m;
	if (!rk->nsteps)
		return 0;
	struct rtable *t = ctx_table(c, "ranks", "Rank Steps");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cname = rtable_col(t, "Step / Rank", "step", RCOL_TEXT, 18);
	int crank = rtable_col(t, "Straggler", "rank", RCOL_COUNT, 9);
	int cmargin = rtable_col(t, "By", "margin_ns", RCOL_TIME, 9);
	int cwhy = rtable_col(t, "Why", "why", RCOL_TEXT, 16);
	int cat = rtable_col(t, "At", "collective", RCOL_TEXT, 24);
	rtable_col_flags(t, cat, RCOL_F_CUT);
	int cstep = rtable_col(t, "Step Time", "step_ns", RCOL_TIME, 9);
	int ccomp = rtable_col(t, "Compute", "compute_ns", RCOL_TIME, 9);
	int ccomm = rtable_col(t, "Communication", "communication_ns", RCOL_TIME, 13);
	int cdata = rtable_col(t, "Data Wait", "data_wait_ns", RCOL_TIME, 9);
	int cwait = rtable_col(t, "Coll. Wait", "collective_wait_ns", RCOL_TIME, 10);
	for (uint32_t k = 0; k < rk->nsteps; k++) {
		const struct ranks_step *s = &rk->steps[k];
		struct rrow *row = rtable_row(t, 0);
		if (!row)
			break;
		if (s->name)
			set_text(row, cname, m, s->name);
		else
			set_label(t, row, cname, "step %u", k);
		bool has = rk->nranks >= 2 && s->margin_ns > 0;
		row->cells[crank].i = rk->ranks[s->straggler].rank;
		row->cells[crank].empty = !has;
		row->cells[cmargin].i = s->margin_ns;
		row->cells[cmargin].empty = !has;
		set_cstr(row, cwhy, why_name(has ? s->why : RANKS_WHY_NONE));
		if (s->why == RANKS_WHY_LATE && s->why_coll < rk->ncolls) {
			const struct ranks_coll *co = &rk->colls[s->why_coll];
			set_label(t, row, cat, "#%u %.50s", co->seq, model_str(m, co->name));
		} else {
			row->cells[cat].empty = true;
		}
		if (s->why == RANKS_WHY_DATA || s->why == RANKS_WHY_COMPUTE ||
		    s->why == RANKS_WHY_LATE) {
			/* the excess that explains it, in the column of its cause */
			int col = s->why == RANKS_WHY_DATA	? cdata
				  : s->why == RANKS_WHY_COMPUTE ? ccomp
								: cwait;
			row->cells[col].i = s->why_ns;
		}
		for (int col = cstep; col <= cwait; col++)
			if (col != (s->why == RANKS_WHY_DATA	  ? cdata
				    : s->why == RANKS_WHY_COMPUTE ? ccomp
				    : s->why == RANKS_WHY_LATE	  ? cwait
								  : -1))
				row->cells[col].empty = true;
		for (uint32_t r = 0; r < rk->nranks; r++) {
			const struct ranks_cell *x = &s->per[r];
			struct rrow *sub = rtable_row(t, 1);
			if (!sub)
				break;
			set_label(t, sub, cname, "rank %d%s", rk->ranks[r].rank,
				  has && r == s->straggler ? " *" : "");
			sub->cells[crank].empty = sub->cells[cmargin].empty = true;
			sub->cells[cwhy].empty = sub->cells[cat].empty = true;
			sub->cells[cstep].i = x->step_ns;
			sub->cells[ccomp].i = x->compute_ns;
			sub->cells[ccomm].i = x->comm_ns;
			sub->cells[cdata].i = x->data_ns;
			sub->cells[cwait].i = x->wait_ns;
		}
	}
	t->note = "a step row: its straggler (*), by how much it ended after the next rank once "
		  "collective waits are taken out, why, and the excess over the other ranks' "
		  "median that explains it (docs/ranks.md)";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

static int colls_table(struct report_ctx *c, const struct ranks *rk)
{
	const struct model *m = c->an.m;
	if (!rk->ncolls)
		return 0;
	struct rtable *t = ctx_table(c, "ranks", "Collectives Across Ranks");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cname = rtable_col(t, "Collective", "name", RCOL_TEXT, 32);
	rtable_col_flags(t, cname, RCOL_F_CUT);
	int cseq = rtable_col(t, "#", "seq", RCOL_COUNT, 4);
	int cstep = rtable_col(t, "Step", "step", RCOL_COUNT, 4);
	int cop = rtable_col(t, "Op", "op", RCOL_TEXT, 13);
	int calgo = rtable_col(t, "Algorithm", "algorithm", RCOL_TEXT, 9);
	int cbytes = rtable_col(t, "Bytes", "bytes", RCOL_COUNT, 10);
	int cn = rtable_col(t, "Ranks", "group", RCOL_COUNT, 5);
	int ctr = rtable_col(t, "Transfer", "transfer_ns", RCOL_TIME, 9);
	int cwait = rtable_col(t, "Wait", "wait_ns", RCOL_TIME, 9);
	int cspread = rtable_col(t, "Arrival Spread", "arrival_spread_ns", RCOL_TIME, 14);
	int clast = rtable_col(t, "Last", "last_rank", RCOL_COUNT, 4);
	int cbw = rtable_col(t, "Bus BW (GB/s)", "busbw_gbps", RCOL_NUMBER, 13);
	rtable_col_flags(t, cbw, RCOL_F_SIG3);
	for (uint64_t i = 0; i < rk->ncolls && i < RANKS_COLL_ROWS; i++) {
		const struct ranks_coll *co = &rk->colls[i];
		struct rrow *row = rtable_row(t, 0);
		if (!row)
			break;
		set_text(row, cname, m, co->name);
		row->cells[cseq].i = co->seq;
		row->cells[cstep].i = co->step;
		row->cells[cstep].empty = co->step == UINT32_MAX;
		if (*co->op)
			set_cstr(row, cop, co->op);
		else
			row->cells[cop].empty = true;
		if (*co->algo)
			rcell_text(row, calgo, rtable_str(t, co->algo, strlen(co->algo)),
				   strlen(co->algo));
		else
			row->cells[calgo].empty = true;
		row->cells[cbytes].i = co->bytes;
		row->cells[cbytes].empty = co->bytes < 0;
		row->cells[cn].i = co->group;
		row->cells[ctr].i = co->transfer_ns;
		row->cells[cwait].i = co->mean_ns - co->transfer_ns;
		row->cells[cspread].i = co->spread_ns;
		row->cells[clast].i = rk->ranks[co->last].rank;
		/* bytes / ns is GB/s */
		bool bw = co->bytes >= 0 && co->transfer_ns > 0 && co->busbw_factor > 0;
		row->cells[cbw].num =
			bw ? (double)co->bytes / (double)co->transfer_ns * co->busbw_factor : 0;
		row->cells[cbw].empty = !bw;
	}
	t->note = "Transfer: the shortest duration across ranks; Wait: the mean duration minus "
		  "it; Bus BW: bytes / transfer x nccl-tests' factor (docs/ranks.md)";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

int view_ranks(struct report_ctx *c)
{
	struct ranks rk;
	if (c->pre) { /* opscope merge: the files' shares read from partials */
		if (!ranks_files_present(c->pre->ranks, c->pre->nranks))
			return 0;
		if (ranks_combine(c->an.m, c->pre->ranks, c->pre->nranks, &rk) != 0)
			return OPSCOPE_ENOMEM;
	} else {
		if (!ranks_present(c->an.m))
			return 0;
		if (ranks_analyze(&c->an, &rk) != 0)
			return OPSCOPE_ENOMEM;
	}
	int rc = ranks_table(c, &rk);
	if (!rc)
		rc = notes_table(c, &rk);
	if (!rc)
		rc = steps_table(c, &rk);
	if (!rc)
		rc = colls_table(c, &rk);
	ranks_free(&rk);
	return rc;
}
