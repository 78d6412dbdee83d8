/*
 * flops.h: how far each operator is from the hardware. Every operator call whose shapes,
 * dtypes and arguments the performance model (perfmodel.h) understands gets its FLOPs and
 * bytes; the device time it launched (tree.h: all kernels, copies and memsets launched from
 * inside it, summed) gives achieved FLOP/s and bytes/s, and the device's peaks (hardware.h)
 * the share of peak, the bound and the roofline efficiency. Rows are keyed by operator name,
 * input shapes, input dtypes and direction, as PyProf and TraceLens print them.
 *
 * Rules (docs/flops.md states them for users):
 *   - A call counts when it is an Operator range with a model and no operator enclosing it on
 *     its thread has one: aten::linear is counted and the aten::addmm inside it is not, so no
 *     FLOP is counted twice. An operator with no model and no modelled operator inside it is
 *     listed with the model's reason (only the outermost such call of a nest), never guessed.
 *   - Autograd nodes (AddmmBackward0, ...) are containers, neither modelled nor listed: their
 *     work is the operators they call.
 *   - Direction: backward when the call is inside a range named like an autograd node
 *     ("...Backward", "...Backward0", "autograd::engine::evaluate_function: ..."), else
 *     forward. A backward row names the forward operator of its autograd node, found through
 *     the "Sequence number" argument (the outermost forward call carrying it, same process).
 *   - torch < 1.11's aten::cudnn_convolution_backward is counted as its child calls
 *     (_input, _weight), which are just the gradients cuDNN ran.
 *   - A forward convolution with no "Concrete Inputs" takes its output shape from the
 *     grad_output of the convolution backward call of its autograd node (same sequence number,
 *     same process), when batch and channels agree.
 *   - Time: on a trace with device work, the device time each call launched (ns); on a trace
 *     without any, the call's CPU time (issue 19: CPU recordings get FLOP/s of CPU time).
 *   - Tensor cores: a call used them when any kernel it launched matches the kernel-name table
 *     (hardware_kernel_uses_tc); the row keeps the kernel time that did.
 *
 * Thread safety: flops_run reads the analysis and model only; the result is the caller's.
 */
#ifndef OPSCOPE_ANALYZE_FLOPS_H
#define OPSCOPE_ANALYZE_FLOPS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "analyze/hardware.h"
#include "analyze/perfmodel.h"

/* Options of the analysis. */
struct flops_opts {
	/* Peaks given by hand (--peak): used for every device, NULL to look each device's name
	 * up in the table (hardware_find). */
	const struct hardware_peaks *peaks;
};

/* One row: the calls of one operator with the same shapes, dtypes and direction. */
struct flops_row {
	uint32_t name;	       /* string id of the operator name */
	uint32_t shapes;       /* string id of its "Input Dims" text, 0 if none */
	uint32_t dtypes;       /* string id of its "Input type" text, 0 if none */
	uint32_t fwd_op;       /* backward rows: string id of the forward operator's name, 0 if
			       * not found; forward rows 0 */
	bool backward;	       /* inside an autograd node */
	uint8_t category;      /* enum perfmodel_category */
	uint8_t dtype;	       /* enum perfmodel_dtype: the compute dtype */
	bool tc_eligible;      /* the model says tensor cores could run it */
	bool tc_tf32_only;     /* ... only through TF32 */
	const char *tc_reason; /* static: why not eligible, NULL if eligible or not a matrix op */
	uint64_t calls;	       /* calls counted */
	int64_t cpu_ns;	       /* sum of the calls' durations, ns */
	int64_t gpu_ns;	       /* sum of the device work they launched, ns */
	int64_t kernel_ns;     /* of which kernels, ns */
	int64_t tc_ns;	       /* of which kernels that used tensor cores, ns */
	uint64_t kernels;      /* kernels launched */
	uint64_t flops;	       /* FLOPs, summed over the calls (saturates at UINT64_MAX) */
	uint64_t bytes;	       /* bytes read and written, summed */
	/* The peaks of the device the row's first kernel ran on (or --peak); NULL when the
	 * device is not in the table or the trace has no device work. */
	const struct hardware_peaks *peaks;
	uint32_t device_name; /* string id of that device's name, 0 if not known */
};

/* Operators with no model, by name and reason. */
struct flops_gap {
	uint32_t name;	    /* string id of the operator name */
	const char *reason; /* static text from the model */
	uint64_t calls;	    /* outermost unmodelled calls */
	int64_t cpu_ns;	    /* sum of their durations, ns */
	int64_t gpu_ns;	    /* sum of the device work they launched, ns */
};

/* The roll-up per category. */
struct flops_category {
	uint64_t calls;	      /* calls counted */
	int64_t time_ns;      /* sum of the rows' time basis (device time, or CPU time), ns */
	uint64_t flops;	      /* FLOPs */
	uint64_t bytes;	      /* bytes */
	double roofline_ns;   /* the time the rows with peaks would take at the roofline, ns */
	int64_t peak_time_ns; /* the time of the rows that have peaks, ns */
};

struct flops_result {
	struct flops_row *rows; /* in first-seen order */
	uint32_t nrows;
	struct flops_gap *gaps; /* in first-seen order */
	uint32_t ngaps;
	bool device_time; /* the time basis is device time (else CPU time) */
	/* per enum perfmodel_category; [PERFMODEL_NONE] holds the unmodelled outermost calls */
	struct flops_category cat[PERFMODEL_CATEGORIES];
	int64_t total_ns;	 /* the time basis summed over every outermost operator call */
	uint64_t no_work_calls;	 /* outermost calls of views and allocations (no work) */
	uint64_t out_from_bwd;	 /* convolution calls whose output came from their backward */
	uint32_t over_roofline;	 /* rows faster than the roofline allows (Winograd, FFT, or
				  * device time missed); capped at it in the categories */
	uint32_t unknown_device; /* string id of a device name not in the table, 0 if none */
	bool oom;		 /* out of memory: rows are missing */
};

/* Run the analysis over every thread of the model. 0, or OPSCOPE_ENOMEM (out then holds what
 * was made, oom set; flops_free it either way). */
int flops_run(const struct analysis *an, const struct flops_opts *o, struct flops_result *out);
void flops_free(struct flops_result *r);

/* One file's share of the analysis (flops_file): what flops_combine adds up. flops_run is the
 * combination of every file's share, so that a merge of partials (opscope merge), which has
 * only the shares, makes the very result. */
struct flops_part {
	struct flops_result r; /* the file's rows and gaps (first-seen order), category counts,
				* FLOPs and bytes; device_time: the file has device work; no
				* times (below), roofline sums, or --peak for CPU rows
				* (flops_combine makes them) */
	int64_t total_ns[2];   /* the outermost calls' time, ns: [0] device time, [1] CPU time */
	int64_t cat_ns[PERFMODEL_CATEGORIES][2]; /* per category the same, ns */
	bool has_shapes; /* the model has operators with shapes ("Input Dims"): without any in
			  * every part, the result is empty */
};

/* The share of file `file` of the analysis's model (no --peak: the device table's peaks).
 * 0, or OPSCOPE_ENOMEM (part->r.oom set; flops_part_free it either way). */
int flops_file(const struct analysis *an, uint32_t file, struct flops_part *part);
void flops_part_free(struct flops_part *part);

/* The result of n files' shares, in file order (string ids of one model): rows and gaps
 * summed by key in first-seen order, file after file; a row's first call's attributes and
 * its first device from the first file that has them; device time when any file has device
 * work, the times in that basis; with o->peaks and no device work, those peaks on every row;
 * then the roofline sums over the rows in their order. 0, OPSCOPE_ENOMEM, or -1 when a sum
 * leaves int64 (flops_free out either way). */
int flops_combine(const struct flops_opts *o, const struct flops_part *parts, uint32_t n,
		  struct flops_result *out);

/* Derived figures of a row, from its sums and peaks (NaN-free: 0 when not defined). */
struct flops_derived {
	double time_s;	       /* the time basis, s */
	double intensity;      /* FLOPs / byte (0 without bytes) */
	double flops_per_s;    /* achieved FLOP/s */
	double bytes_per_s;    /* achieved bytes/s */
	double peak_flops;     /* the peak that bounds it (hardware_peak_flops), 0 unknown */
	double pct_peak_flops; /* achieved / peak (a fraction), 0 unknown */
	double pct_peak_bw;    /* achieved / bandwidth (a fraction), 0 unknown */
	double roofline_ns;    /* max(flops / peak, bytes / bandwidth), ns; 0 unknown */
	double roofline_eff;   /* roofline_ns / time: 1 is at the roofline, 0 unknown */
	const char *bound;     /* "compute", "memory", or NULL (no peaks) */
};

void flops_derive(const struct flops_row *r, bool device_time, struct flops_derived *d);

#endif
