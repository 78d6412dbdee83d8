/*
 * partial_internal.h: what the files of the partial writer and reader share (partial.c, and
 * one file per group of views: partial_<views>.c): the reader's state, the field parsers
 * that turn a bad field into one line naming the partial and offset, the string writers,
 * and the bounds that keep the merge's arithmetic inside int64. Not for use outside
 * src/report/partial*.c.
 *
 * A group of views joins in four places of partial.c: its writer is called from
 * write_files, its records' readers are listed in record()'s table, its merge runs in
 * partial_finish, and partial_carries names its views; its fields live in partial_file
 * (partial.h) and report_pre (views.h).
 */
#ifndef OPSCOPE_REPORT_PARTIAL_INTERNAL_H
#define OPSCOPE_REPORT_PARTIAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/device.h"
#include "analyze/distributed.h"
#include "analyze/overview.h"
#include "analyze/phases.h"
#include "report/partial.h"
#include "util/checked.h"

#define PARTIAL_LINE_MAX (1u << 20) /* bytes of one record: longer is not a partial of ours */
#define PARTIAL_FIELDS	 20	    /* fields of the longest record (gt, gs) */
/* Bounds of what a partial may say, so that the differences and sums the merge makes stay
 * inside int64: a time (ns) within +-2^61 (73 years around the epoch: up to 2043), a duration
 * or a count within [0, 2^62], and the times of one file within PARTIAL_SPAN_MAX of each
 * other (2^53 ns, 104 days). */
#define PARTIAL_STAMP_MAX (INT64_C(1) << 61)
#define PARTIAL_TIME_MAX  (INT64_C(1) << 62)
#define PARTIAL_SPAN_MAX  (INT64_C(1) << 53)

#define PARTIAL_BYTES_MAX PARTIAL_TIME_MAX /* bytes: |allocated| and sums within 2^62 */

/* The state of reading one partial. */
struct reader {
	struct partial_set *ps;
	const char *path;	     /* the partial's path, for messages */
	uint64_t offset;	     /* byte offset of the record being read */
	char *err;		     /* where the one line goes */
	size_t errsize;		     /* bytes of err */
	char *f[PARTIAL_FIELDS];     /* the record's fields, unescaped in place */
	size_t flen[PARTIAL_FIELDS]; /* their lengths */
	int nf;			     /* fields of the record */
	struct partial_file *cur;    /* the file the records belong to, NULL before the first */
	uint32_t kern_cap;	     /* items allocated in cur->kern */
	uint32_t steps_cap;	     /* steps allocated in cur->ranks.steps */
	uint32_t colls_cap;	     /* kernels allocated in cur->ranks.kernels */
	uint32_t ops_cap;	     /* items allocated in cur->ops */
	uint32_t nv_cap;	     /* items allocated in cur->nv */
	uint32_t sr_cap;	     /* rows allocated in cur->steps.rows */
	uint32_t gt_cap;	     /* devices allocated in cur->gputime.dev */
	uint32_t gs_cap;	     /* steps allocated in the last device of cur->gputime */
	uint32_t ut_cap;	     /* devices allocated in cur->gpu.dev */
	uint32_t us_cap;	     /* steps allocated in the last device of cur->gpu */
	uint32_t ub_cap;	     /* buckets allocated in the last device of cur->gpu */
	uint32_t lr_cap;	     /* rows allocated in cur->launch.rows */
	uint32_t qt_cap;	     /* streams allocated in cur->queue.st */
	uint32_t qb_cap;	     /* buckets allocated in the last stream of cur->queue */
	uint32_t md_cap;	     /* devices allocated in cur->gpumem.dev */
	uint32_t mb_cap;	     /* buckets allocated in the last device of cur->gpumem */
	uint32_t h_cap;		     /* items allocated in cur->host */
	uint32_t mo_cap;	     /* items allocated in cur->mods */
	uint32_t pt_cap;	     /* entries allocated in cur->perf */
	uint32_t nxd_cap;	     /* runs allocated in cur->nvtx */
	bool nx_item;		     /* an nxr record of cur was read: nxd records may follow */
	uint32_t nx_domain;	     /* the last nxr record's domain (string id) */
	uint32_t nx_name;	     /* its name (string id) */
	uint8_t nx_style;	     /* its style (enum agg_nvtx_kind) */
	int64_t nx_last;	     /* ns: the last nxd record's duration after it, -1 before */
	uint32_t saf_cap;	     /* functions allocated in cur->samples */
	uint32_t sae_cap;	     /* pairs allocated in cur->samples */
	bool oom;		     /* an allocation failed */
};

/* A file's records of the views made of unions across files (partial_unions.c): each
 * analysis's per-file part as the file's partial gives it. */
struct partial_unions {
	bool has_device;	       /* a dv record was read (version 11 on) */
	struct device_usage device;    /* its CPU entries and GPUs (dvc, dvg; gpu[].file unset) */
	uint32_t cpu_cap, gpu_cap;     /* entries allocated in device.cpu, device.gpu */
	bool has_dist;		       /* a di record was read */
	struct distributed_lists dist; /* its communication pairs and computation (dih, dig, dic) */
	bool has_ov;		       /* an ov record was read */
	struct overview_part ov;       /* its overview part (ovb, ovt, ovi, ovu) */
	struct overview_side *ov_side; /* the type of the last ovt record, NULL before one */
	uint64_t ov_open;	       /* ranges aside read for that type (<= ranges - calls) */
	bool has_ph;		       /* a ph record was read */
	struct phases_part ph;	       /* its phase calls (track: the index among the file's
				       * tracks), their GPU shares and ProfileStep row (ph, phc) */
	size_t ph_cap;		       /* calls allocated in ph */
	int64_t ph_gpu;		       /* ns: the GPU shares read (<= ph.step.gpu_ns) */
	uint32_t ph_tracks;	       /* 1 + the largest track of its calls (0: none) */
};

/* Write file f's device, dv; distributed, di; overview, ov; model, ph records. 0, or
 * OPSCOPE_ENOMEM. */
int partial_write_unions(FILE *out, const struct analysis *a, uint32_t f);
/* Read a record of theirs if `tag` is one (*known set): 0, or -1 with the line in r->err. */
struct reader;
int partial_unions_record(struct reader *r, const char *tag, bool *known);
/* Make the four views' data in ps->pre from the files' records (those every file carries),
 * once the totals are merged. 0; -1 with one line in err; or OPSCOPE_ENOMEM. */
int partial_unions_finish(struct partial_set *ps, char *err, size_t errsize);
void partial_unions_free_file(struct partial_file *pf);
void partial_unions_free_pre(struct report_pre *p);

/* Writing: a string field ('=' and the bytes, escaped), and string id `id` of m as one
 * (`-` when 0) after a tab. */
void partial_put_str(FILE *out, const char *s, size_t n);
void partial_put_id(FILE *out, const struct model *m, uint32_t id);

/* Reading. Each returns 0, or -1 with the one line in r->err. */
/* s (up to its NUL, at most size - 1 bytes) with every control byte as '?'. */
const char *partial_printable(const char *s, char *buf, size_t size);
/* Fail with "PATH: offset N: what". */
int partial_fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int partial_oom(struct reader *r);
/* Field i as a string: *s and *n its bytes (unescaped in place), *none for `-`. */
int partial_field_str(struct reader *r, int i, const char **s, size_t *n, bool *none);
/* Field i as a string id of the set's model; 0 for `-` unless `required`. */
int partial_field_id(struct reader *r, int i, bool required, uint32_t *id);
/* Field i as an integer in [lo, hi], or as a count. */
int partial_field_i64(struct reader *r, int i, int64_t lo, int64_t hi, int64_t *v);
int partial_field_u64(struct reader *r, int i, uint64_t *v);
/* Does the record have exactly n fields (its tag included)? */
int partial_want_fields(struct reader *r, int n);
/* Grow *v (of *cap entries of size sz) to hold n + 1. */
int partial_grow(struct reader *r, void **v, uint32_t *cap, uint32_t n, size_t sz);
/* A view's marker record (no field, at most once a file: the view's records follow it);
 * *seen set. */
int partial_marker(struct reader *r, bool *seen);

/* Merging (sums through checked_add_i64, util/checked.h). */
/* Per file of the finished set, whether the merge keeps its rows: false for the second copy
 * of a rank (ranks_kept_shares). Malloc'd; NULL without memory. */
bool *partial_kept_files(const struct partial_set *ps);

/* The NVTX view (partial_nvtx.c): file f's records, their readers, and the merge into
 * ps->pre.nvtx when every file carries them (-1 and *bad a file when a sum would leave
 * int64, OPSCOPE_ENOMEM). */
int partial_write_nvtx(FILE *out, const struct analysis *a, uint32_t f);
int partial_rec_nxv(struct reader *r);
int partial_rec_nxr(struct reader *r);
int partial_rec_nxd(struct reader *r);
int partial_merge_nvtx(struct partial_set *ps, uint32_t *bad);

/* The advice view's records (partial_advice.c). */
/* File f's ad* records (u: gpu_util_analyze of a's model). 0 or OPSCOPE_ENOMEM. */
int partial_advice_write(FILE *out, const struct analysis *a, const struct gpu_util *u, uint32_t f);
/* Read a record whose tag starts with "ad" into r->cur. */
int partial_advice_record(struct reader *r);
/* The files' measurements (moved) into ps->pre.advice when every file carries them. 0; -1
 * or OPSCOPE_ENOMEM with one line in err. */
int partial_advice_merge(struct partial_set *ps, char *err, size_t errsize);
void partial_advice_free(struct partial_advice *pa);

/* The samples view's records (partial_samples.c): the writer of file f's, its readers, and
 * the merge into ps->pre.samples (when every file carries them). 0, or -1 with err. */
int partial_write_samples(FILE *out, const struct analysis *a, uint32_t f);
int partial_rec_sa(struct reader *r);
int partial_rec_saf(struct reader *r);
int partial_rec_sae(struct reader *r);
int partial_merge_samples(struct partial_set *ps, char *err, size_t errsize);

/* The flops view's records (partial_flops.c), the same; partial_flops_free frees a file's
 * share, partial_merged_flops_free ps->pre.flops. */
int partial_write_flops(FILE *out, const struct analysis *a, uint32_t f);
int partial_rec_fl(struct reader *r);
int partial_rec_flc(struct reader *r);
int partial_rec_flp(struct reader *r);
int partial_rec_flr(struct reader *r);
int partial_rec_flg(struct reader *r);
int partial_merge_flops(struct partial_set *ps, char *err, size_t errsize);
void partial_flops_free(struct partial_flops *pf);
/* A file's share of the FLOPs analysis as read (after partial_merge_flops: its rows point at
 * their devices' peaks and reasons). */
const struct flops_part *partial_flops_part(const struct partial_flops *pf);
void partial_merged_flops_free(struct flops_result *r);

#endif
