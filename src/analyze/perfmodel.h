/*
 * perfmodel.h: how much work one operator call is, from its name, its inputs' shapes and
 * dtypes and its scalar arguments: floating-point operations (an FMA is 2), bytes read and
 * bytes written, the category it rolls up into, and whether its shapes and dtypes could run on
 * tensor cores. The formulas, and where each comes from (TraceLens, PyProf, torch's
 * flop_counter), are in docs/flops.md; this file and that page change together.
 *
 * Pure functions, no state: safe from any number of threads. Nothing here guesses: an
 * operator with no formula, or whose arguments do not say enough (shapes that do not parse,
 * an unknown dtype, a negative or absurd dimension, a product that overflows), gets
 * PERFMODEL_NONE and a static one-line reason, never a number.
 */
#ifndef OPSCOPE_ANALYZE_PERFMODEL_H
#define OPSCOPE_ANALYZE_PERFMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PERFMODEL_MAX_INPUTS  32   /* inputs read of one call; more: "too many inputs" */
#define PERFMODEL_MAX_DIMS    8	   /* dimensions of one tensor; more: "too many dimensions" */
#define PERFMODEL_TENSOR_LIST (-2) /* perfmodel_input.ndims of a list of tensors */
#define PERFMODEL_LIST_SHAPES 2	   /* shapes kept of a list's first tensors (einsum's operands) */

/* Categories of the roll-up (issue 19 §5; TraceLens's sheet categories). */
enum perfmodel_category {
	PERFMODEL_NONE = 0,	     /* no model: see perfmodel_result.reason */
	PERFMODEL_GEMM = 1,	     /* mm, addmm, bmm, baddbmm, matmul, linear, einsum as a GEMM */
	PERFMODEL_ATTENTION = 2,     /* scaled dot-product and flash attention */
	PERFMODEL_CONVOLUTION = 3,   /* convolutions, forward and backward, transposed */
	PERFMODEL_ELEMENTWISE = 4,   /* unary, binary (broadcast), ternary, copies, optimizers */
	PERFMODEL_REDUCTION = 5,     /* sum, mean, max, norm, softmax, log_softmax, pooling */
	PERFMODEL_NORMALIZATION = 6, /* layer, batch and group norm, forward and backward */
	PERFMODEL_OTHER = 7,	     /* modelled, in none of the above (embedding) */
	PERFMODEL_CATEGORIES = 8,
};

/* "GEMM", "attention", ...; "no model" for PERFMODEL_NONE. */
const char *perfmodel_category_name(enum perfmodel_category c);

/* One input of a call, as the trace gives it (Kineto's "Input Dims", "Input type" and
 * "Concrete Inputs" at the same index). */
struct perfmodel_input {
	int ndims;			       /* dimensions of a tensor (0: "[]", a 0-d tensor or a
					   * scalar: the dtype tells); PERFMODEL_TENSOR_LIST: a list
					   * of tensors (foreach and fused optimizer ops) */
	int64_t dims[PERFMODEL_MAX_DIMS];      /* sizes, outermost first */
	uint32_t list_len;		       /* PERFMODEL_TENSOR_LIST: tensors in the list */
	uint64_t list_numel;		       /* PERFMODEL_TENSOR_LIST: their elements, summed */
	int list_ndims[PERFMODEL_LIST_SHAPES]; /* PERFMODEL_TENSOR_LIST: dimensions of the first
						* tensors (-1 past the list's end) */
	int64_t list_dims[PERFMODEL_LIST_SHAPES][PERFMODEL_MAX_DIMS]; /* and their sizes */
	const char *dtype; /* "float", "c10::Half", "Scalar", "" (NUL-terminated) */
	const char *value; /* the concrete input's text ("1", "[2, 2]", "True"), or
					   * NULL when the trace has none */
};

/* One operator call. */
struct perfmodel_call {
	const char *name; /* operator name: "aten::addmm" */
	int ninputs;
	struct perfmodel_input in[PERFMODEL_MAX_INPUTS];
	/* The output's shape when the analysis knows it from elsewhere (a convolution in a trace
	 * with no "Concrete Inputs": the grad_output of the backward call linked to it by the
	 * sequence number); out_ndims -1 when not known. A model that needs the output and has
	 * neither this nor the scalar arguments to compute it gives PERFMODEL_NONE. */
	int out_ndims;
	int64_t out_dims[PERFMODEL_MAX_DIMS];
};

/* What the data types of a call are, for picking a peak (hardware.h). */
enum perfmodel_dtype {
	PERFMODEL_DT_UNKNOWN = 0,
	PERFMODEL_DT_FP64 = 1,
	PERFMODEL_DT_FP32 = 2,
	PERFMODEL_DT_FP16 = 3, /* c10::Half */
	PERFMODEL_DT_BF16 = 4, /* c10::BFloat16 */
	PERFMODEL_DT_FP8 = 5,  /* every float8 variant */
	PERFMODEL_DT_INT8 = 6,
	PERFMODEL_DT_INT = 7, /* wider integers, bool */
};

/* The result for one call. */
struct perfmodel_result {
	enum perfmodel_category category; /* PERFMODEL_NONE: no model */
	const char *reason;		  /* static text: why no model ("no model for this
					   * operator", "negative dimension", "no work (a view or
					   * allocation)"); NULL when modelled */
	uint64_t flops;			  /* floating-point operations, an FMA counted as 2 */
	uint64_t bytes_read;		  /* bytes of inputs read, each tensor once */
	uint64_t bytes_written;		  /* bytes of outputs written */
	enum perfmodel_dtype dtype;	  /* the compute dtype (of the first floating input) */
	/* Could tensor cores run it: a GEMM or convolution (or attention) in FP16, BF16, FP8 or
	 * INT8 (TF32 for FP32 on Ampere and later: tc_tf32_only), with the GEMM dimensions
	 * (M, N, K; channels for a convolution; head dimensions for attention) multiples of 16
	 * bytes: 8 elements (16 for FP8 and INT8, 4 for TF32), the rule of NVIDIA's guides cited
	 * in docs/flops.md. */
	bool tc_eligible;
	bool tc_tf32_only;     /* eligible only through TF32 (FP32 inputs, sm80 and later) */
	const char *tc_reason; /* static text: why not eligible ("K not a multiple of 8",
				* "float64"), NULL when eligible or not a matrix op */
};

/* The model of one call; never fails (no model is a result). */
void perfmodel_eval(const struct perfmodel_call *call, struct perfmodel_result *out);

/* Parse the text of a Kineto "Input Dims" value ("[[32, 3, 224, 224], [], [64]]") into
 * call->in[i].ndims/dims, setting ninputs; a "[]" entry is ndims 0 (a 0-d tensor or a scalar:
 * perfmodel_eval tells them apart by the dtype); a list of lists ("[[[10], [20, 3]], []]", a
 * TensorList input) is PERFMODEL_TENSOR_LIST with its length and summed elements. Parse the "Input type" list
 * (["float", "Scalar", ""]) and "Concrete Inputs" list (["", "1", "[2, 2]"]) into the
 * dtype/value pointers, which point into `scratch` (NUL-terminated copies, scratch_len bytes
 * at most; the strings are unescaped JSON). types or concrete may be NULL (dtype "" / value
 * NULL then). False, with *reason set to a static text, when a list does not parse or
 * overflows the limits; call is then unusable. */
bool perfmodel_parse_inputs(struct perfmodel_call *call, const char *dims, const char *types,
			    const char *concrete, char *scratch, size_t scratch_len,
			    const char **reason);

/* Bytes per element of a dtype name as Kineto writes it ("float" 4, "c10::Half" 2,
 * "long int" 8, "unsigned char" 1, "bool" 1); 0 when not known. */
unsigned perfmodel_dtype_bytes(const char *dtype);
/* The enum for a dtype name; PERFMODEL_DT_UNKNOWN when not known. */
enum perfmodel_dtype perfmodel_dtype_of(const char *dtype);
/* "fp32", "bf16", ...; "?" for unknown. */
const char *perfmodel_dtype_name(enum perfmodel_dtype d);

#endif
