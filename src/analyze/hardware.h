/*
 * hardware.h: what the devices a trace ran on can do at best, and what their kernels' names
 * say about the units they used.
 *
 *   - Peaks: a table of accelerators (V100, A100, H100, H200, B200, MI250X, MI300X and more),
 *     each with its peak FLOP/s per unit and data type (FP64, FP32 on the vector units, TF32,
 *     FP16 and BF16 on tensor/matrix cores, FP8, INT8) and its memory bandwidth, every number
 *     from the vendor's published datasheet cited beside it in hardware.c and in
 *     docs/peaks.md. A device is found by the name the trace gives ("Tesla V100-DGXS-32GB",
 *     "NVIDIA H100 80GB HBM3", "AMD Instinct MI300X") through an ordered list of patterns, so
 *     a form factor (SXM, PCIe, NVL) picks its own row. Peaks given by hand
 *     (hardware_peaks_parse) replace the table's.
 *   - Tensor cores: whether a kernel ran on tensor cores, from its name, by an ordered list of
 *     substrings per architecture (PyProf's list, which the TensorBoard plugin copied, and
 *     the names of cuBLAS/cuDNN/CUTLASS kernels of Ampere, Hopper and Blackwell), kept in one
 *     table in hardware.c and printed in docs/peaks.md.
 *
 * Static tables and pure functions: safe from any thread.
 */
#ifndef OPSCOPE_ANALYZE_HARDWARE_H
#define OPSCOPE_ANALYZE_HARDWARE_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/perfmodel.h"

/* The peaks of one device (0 where the device has no such unit or the datasheet gives no
 * number). FLOP/s are dense (no structured sparsity). */
struct hardware_peaks {
	const char *name;    /* the table's name: "NVIDIA H100 SXM5 80GB" */
	const char *source;  /* the datasheet it comes from: title and URL */
	double fp64_flops;   /* FP64 on the vector units, FLOP/s */
	double fp32_flops;   /* FP32 on the vector units (CUDA cores), FLOP/s */
	double tf32_flops;   /* TF32 on tensor cores, FLOP/s */
	double fp16_flops;   /* FP16 on tensor / matrix cores, FLOP/s */
	double bf16_flops;   /* BF16 on tensor / matrix cores, FLOP/s */
	double fp8_flops;    /* FP8 on tensor / matrix cores, FLOP/s */
	double int8_ops;     /* INT8 on tensor / matrix cores, OP/s */
	double mem_bw_bytes; /* memory bandwidth, bytes/s */
	int tc_arch;	     /* the architecture for hardware_kernel_uses_tc: 70, 75, 80, 89, 90,
				100 (NVIDIA sm), 0 for AMD (matrix cores: MFMA names) */
};

/* The row for a device name as a trace gives it; NULL when none matches (then the report
 * says the device is not in the table and that --peak can give its peaks). */
const struct hardware_peaks *hardware_find(const char *device_name);
/* Every row of the table, ending with a row whose name is NULL (for the docs and tests). */
extern const struct hardware_peaks hardware_table[];

/* The peak that bounds work of dtype `dt`: on tensor cores when `tensor_cores` (the op's
 * kernels used them), else on the vector units (FP16/BF16 without tensor cores: the FP32
 * vector rate, as the datasheets give no other). 0 when the row has no such number. */
double hardware_peak_flops(const struct hardware_peaks *p, enum perfmodel_dtype dt,
			   bool tensor_cores);

/* Parse peaks given by hand: "fp32=19.5T,tf32=156T,bf16=312T,fp16=312T,fp8=0,int8=624T,
 * fp64=9.7T,bw=1.555T" (suffixes k, M, G, T, P; bw in bytes/s; keys in any order, any
 * subset: the others stay as in *out, so a table row can be amended). name is set to "given
 * by hand" and source to "--peak". False, with err (size errlen) saying which key and why,
 * on a malformed text. */
bool hardware_peaks_parse(const char *text, struct hardware_peaks *out, char *err, size_t errlen);

/* Did the kernel named `kernel_name` run on tensor cores? By the substring table; tc_arch 0
 * (unknown architecture) tries every architecture's patterns. */
bool hardware_kernel_uses_tc(const char *kernel_name, int tc_arch);

/* One pattern of the tensor-core table (docs and tests). */
struct hardware_tc_pattern {
	const char *substring; /* matched anywhere in the kernel name, case-sensitive */
	int min_arch;	       /* first architecture it applies to (70: Volta) */
	const char *source;    /* where it comes from: "PyProf tc.py", "cuBLAS sm80 names" */
};
extern const struct hardware_tc_pattern hardware_tc_patterns[]; /* ends with substring NULL */

#endif
