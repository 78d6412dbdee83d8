/*
 * perfmodel.c: FLOPs, bytes read and written, category and tensor-core eligibility of one
 * operator call from its name and its Kineto "Input Dims" / "Input type" / "Concrete Inputs"
 * (perfmodel.h; the formulas and their sources are in docs/flops.md).
 *
 * One table (pm_ops) maps an operator name to a model function and the positions of the
 * arguments it reads; a new operator is one row. Invariants: every product and sum goes
 * through the checked helpers (pm_mul, pm_add), and a model that overflowed, or found an
 * argument missing, answers PERFMODEL_NONE with a static reason and zero counts; nothing is
 * guessed. The parser reads its NUL-terminated texts strictly left to right, stops at the
 * NUL, and writes to scratch only through pm_put, which checks the room left.
 */
#include "analyze/perfmodel.h"

#include <string.h>

#define PM_MAX_ELEMS	   (UINT64_C(1) << 40) /* elements of one tensor past which it is absurd */
#define PM_NARGS	   9		       /* argument positions of one table row */
#define PM_REASON_NO_WORK  "no work (a view or allocation)"
#define PM_REASON_NO_MODEL "no model for this operator"

/* ------------------------------------------------------------------------------------------ */
/* Names */

const char *perfmodel_category_name(enum perfmodel_category c)
{
	switch (c) {
	case PERFMODEL_GEMM:
		return "GEMM";
	case PERFMODEL_ATTENTION:
		return "attention";
	case PERFMODEL_CONVOLUTION:
		return "convolution";
	case PERFMODEL_ELEMENTWISE:
		return "elementwise";
	case PERFMODEL_REDUCTION:
		return "reduction";
	case PERFMODEL_NORMALIZATION:
		return "normalization";
	case PERFMODEL_OTHER:
		return "other";
	default:
		return "no model";
	}
}

const char *perfmodel_dtype_name(enum perfmodel_dtype d)
{
	static const char *const names[] = { "?",    "fp64", "fp32", "fp16",
					     "bf16", "fp8",  "int8", "int" };
	return (unsigned)d < sizeof(names) / sizeof(names[0]) ? names[d] : "?";
}

/* One dtype as Kineto writes it (c10's scalar type names, as torch's profiler prints them). */
struct pm_dtype {
	const char *name;	 /* "float", "c10::Half" */
	unsigned bytes;		 /* bytes per element */
	enum perfmodel_dtype dt; /* its class */
};

/* Exact, case-sensitive names: "Int" and "Double" are scalar arguments, "int" and "double"
 * tensors. The c10:: names are compared ignoring case (TraceLens lower-cases them). */
static const struct pm_dtype pm_dtypes[] = {
	{ "float", 4, PERFMODEL_DT_FP32 },
	{ "double", 8, PERFMODEL_DT_FP64 },
	{ "c10::Half", 2, PERFMODEL_DT_FP16 },
	{ "c10::BFloat16", 2, PERFMODEL_DT_BF16 },
	{ "c10::Float8_e4m3fn", 1, PERFMODEL_DT_FP8 },
	{ "c10::Float8_e5m2", 1, PERFMODEL_DT_FP8 },
	{ "c10::Float8_e4m3fnuz", 1, PERFMODEL_DT_FP8 },
	{ "c10::Float8_e5m2fnuz", 1, PERFMODEL_DT_FP8 },
	{ "c10::Float8_e8m0fnu", 1, PERFMODEL_DT_FP8 },
	{ "signed char", 1, PERFMODEL_DT_INT8 },
	{ "unsigned char", 1, PERFMODEL_DT_INT8 },
	{ "c10::qint8", 1, PERFMODEL_DT_INT8 },
	{ "c10::quint8", 1, PERFMODEL_DT_INT8 },
	{ "bool", 1, PERFMODEL_DT_INT },
	{ "short int", 2, PERFMODEL_DT_INT },
	{ "short", 2, PERFMODEL_DT_INT },
	{ "unsigned short", 2, PERFMODEL_DT_INT },
	{ "int", 4, PERFMODEL_DT_INT },
	{ "unsigned int", 4, PERFMODEL_DT_INT },
	{ "c10::qint32", 4, PERFMODEL_DT_INT },
	{ "long int", 8, PERFMODEL_DT_INT },
	{ "long", 8, PERFMODEL_DT_INT },
	{ "long long", 8, PERFMODEL_DT_INT },
	{ "unsigned long", 8, PERFMODEL_DT_INT },
	{ "c10::complex<c10::Half>", 4, PERFMODEL_DT_UNKNOWN },
	{ "c10::complex<float>", 8, PERFMODEL_DT_UNKNOWN },
	{ "c10::complex<double>", 16, PERFMODEL_DT_UNKNOWN },
};

static int pm_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static bool pm_iequal(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (pm_lower((unsigned char)*a) != pm_lower((unsigned char)*b))
			return false;
	return *a == *b;
}

static const struct pm_dtype *pm_dtype_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(pm_dtypes) / sizeof(pm_dtypes[0]); i++) {
		const char *n = pm_dtypes[i].name;
		if (strncmp(n, "c10::", 5) == 0 ? pm_iequal(n, name) : strcmp(n, name) == 0)
			return &pm_dtypes[i];
	}
	return NULL;
}

unsigned perfmodel_dtype_bytes(const char *dtype)
{
	const struct pm_dtype *d = pm_dtype_find(dtype);
	return d ? d->bytes : 0;
}

enum perfmodel_dtype perfmodel_dtype_of(const char *dtype)
{
	const struct pm_dtype *d = pm_dtype_find(dtype);
	return d ? d->dt : PERFMODEL_DT_UNKNOWN;
}

static bool pm_is_float(enum perfmodel_dtype d)
{
	return d >= PERFMODEL_DT_FP64 && d <= PERFMODEL_DT_FP8;
}

/* ------------------------------------------------------------------------------------------ */
/* The parser */

/* A cursor over one NUL-terminated text and the scratch it copies strings into. */
struct pm_scan {
	const char *p;	    /* next character; never moves past the NUL */
	char *scratch;	    /* where strings are copied */
	size_t used, len;   /* bytes of scratch used, and its size */
	const char *reason; /* the first error, static text */
};

static void pm_ws(struct pm_scan *s)
{
	while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
		s->p++;
}

static bool pm_err(struct pm_scan *s, const char *why)
{
	if (!s->reason)
		s->reason = why;
	return false;
}

/* Consume c after optional white space. */
static bool pm_eat(struct pm_scan *s, char c)
{
	pm_ws(s);
	if (*s->p != c)
		return false;
	s->p++;
	return true;
}

/* A decimal integer, optionally negative, that fits an int64_t. */
static bool pm_int(struct pm_scan *s, int64_t *out)
{
	pm_ws(s);
	bool neg = *s->p == '-';
	if (neg)
		s->p++;
	if (*s->p < '0' || *s->p > '9')
		return pm_err(s, "a dimension is not a number");
	uint64_t v = 0;
	for (; *s->p >= '0' && *s->p <= '9'; s->p++) {
		uint64_t d = (uint64_t)(*s->p - '0');
		if (v > (UINT64_C(9223372036854775807) - d) / 10)
			return pm_err(s, "a dimension does not fit 64 bits");
		v = v * 10 + d;
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

/* "[d0, d1, ...]" into dims; *nd set. The '[' is already consumed. */
static bool pm_shape(struct pm_scan *s, int64_t *dims, int *nd)
{
	*nd = 0;
	if (pm_eat(s, ']'))
		return true;
	for (;;) {
		int64_t v;
		if (*nd == PERFMODEL_MAX_DIMS)
			return pm_err(s, "too many dimensions");
		if (!pm_int(s, &v))
			return false;
		dims[(*nd)++] = v;
		if (pm_eat(s, ']'))
			return true;
		if (!pm_eat(s, ','))
			return pm_err(s, "Input Dims: expected ',' or ']'");
	}
}

/* A list of tensors' shapes, "[[10], [20, 3]]", the outer '[' and the first inner '[' already
 * consumed. */
static bool pm_list(struct pm_scan *s, struct perfmodel_input *in)
{
	in->ndims = PERFMODEL_TENSOR_LIST;
	in->list_len = 0;
	in->list_numel = 0;
	for (int k = 0; k < PERFMODEL_LIST_SHAPES; k++)
		in->list_ndims[k] = -1;
	for (;;) {
		int64_t dims[PERFMODEL_MAX_DIMS];
		int nd;
		if (!pm_shape(s, dims, &nd))
			return false;
		uint64_t n = 1;
		for (int d = 0; d < nd; d++) {
			if (dims[d] < 0)
				return pm_err(s, "negative dimension in a tensor list");
			if (dims[d] != 0 && n > PM_MAX_ELEMS / (uint64_t)dims[d])
				return pm_err(s, "tensor list of more than 2^40 elements");
			n *= (uint64_t)dims[d];
		}
		if (n > PM_MAX_ELEMS - in->list_numel || in->list_len == UINT32_MAX)
			return pm_err(s, "tensor list of more than 2^40 elements");
		if (in->list_len < PERFMODEL_LIST_SHAPES) {
			in->list_ndims[in->list_len] = nd;
			memcpy(in->list_dims[in->list_len], dims, sizeof(dims[0]) * (size_t)nd);
		}
		in->list_len++;
		in->list_numel += n;
		if (pm_eat(s, ']'))
			return true;
		if (!pm_eat(s, ',') || !pm_eat(s, '['))
			return pm_err(s,
				      "Input Dims: a tensor list holds something else than shapes");
	}
}

static bool pm_parse_dims(struct pm_scan *s, struct perfmodel_call *call)
{
	call->ninputs = 0;
	if (!pm_eat(s, '['))
		return pm_err(s, "Input Dims is not a list");
	if (!pm_eat(s, ']')) {
		for (;;) {
			if (call->ninputs == PERFMODEL_MAX_INPUTS)
				return pm_err(s, "too many inputs");
			struct perfmodel_input *in = &call->in[call->ninputs];
			memset(in, 0, sizeof(*in));
			in->dtype = "";
			if (!pm_eat(s, '['))
				return pm_err(s, "Input Dims: an input is not a list");
			pm_ws(s);
			if (*s->p == '[') {
				s->p++;
				if (!pm_list(s, in))
					return false;
			} else if (!pm_shape(s, in->dims, &in->ndims)) {
				return false;
			}
			call->ninputs++;
			if (pm_eat(s, ']'))
				break;
			if (!pm_eat(s, ','))
				return pm_err(s, "Input Dims: expected ',' or ']'");
		}
	}
	pm_ws(s);
	return *s->p == '\0' || pm_err(s, "Input Dims: text after the list");
}

/* Append one byte to scratch. */
static bool pm_put(struct pm_scan *s, char c)
{
	if (s->used >= s->len)
		return pm_err(s, "scratch too small for the input texts");
	s->scratch[s->used++] = c;
	return true;
}

static int pm_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)pm_lower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Four hex digits of a \u escape. */
static bool pm_u16(struct pm_scan *s, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int h = pm_hex(s->p[0]);
		if (h < 0)
			return pm_err(s, "bad \\u escape in a string");
		v = v * 16 + (unsigned)h;
		s->p++;
	}
	*out = v;
	return true;
}

/* A JSON string, unescaped into scratch with its NUL; *out points at the copy. */
static bool pm_string(struct pm_scan *s, const char **out)
{
	if (!pm_eat(s, '"'))
		return pm_err(s, "expected a string");
	size_t start = s->used;
	for (;;) {
		unsigned char c = (unsigned char)*s->p;
		if (c == '\0')
			return pm_err(s, "unterminated string");
		s->p++;
		if (c == '"')
			break;
		if (c < 0x20)
			return pm_err(s, "control character in a string");
		if (c != '\\') {
			if (!pm_put(s, (char)c))
				return false;
			continue;
		}
		char e = *s->p;
		if (e == '\0')
			return pm_err(s, "unterminated string");
		s->p++;
		static const char esc[] = "\"\\/bfnrt", map[] = "\"\\/\b\f\n\r\t";
		const char *simple = strchr(esc, e); /* e is not the NUL here */
		if (simple) {
			if (!pm_put(s, map[simple - esc]))
				return false;
			continue;
		}
		if (e != 'u')
			return pm_err(s, "bad escape in a string");
		unsigned cp;
		if (!pm_u16(s, &cp))
			return false;
		if (cp >= 0xDC00 && cp <= 0xDFFF)
			return pm_err(s, "bad \\u escape in a string");
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			unsigned lo;
			if (s->p[0] != '\\' || s->p[1] != 'u')
				return pm_err(s, "bad \\u escape in a string");
			s->p += 2;
			if (!pm_u16(s, &lo))
				return false;
			if (lo < 0xDC00 || lo > 0xDFFF)
				return pm_err(s, "bad \\u escape in a string");
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
		}
		if (cp == 0)
			return pm_err(s, "NUL in a string");
		bool ok;
		if (cp < 0x80) {
			ok = pm_put(s, (char)cp);
		} else if (cp < 0x800) {
			ok = pm_put(s, (char)(0xC0 | (cp >> 6))) &&
			     pm_put(s, (char)(0x80 | (cp & 0x3F)));
		} else if (cp < 0x10000) {
			ok = pm_put(s, (char)(0xE0 | (cp >> 12))) &&
			     pm_put(s, (char)(0x80 | ((cp >> 6) & 0x3F))) &&
			     pm_put(s, (char)(0x80 | (cp & 0x3F)));
		} else {
			ok = pm_put(s, (char)(0xF0 | (cp >> 18))) &&
			     pm_put(s, (char)(0x80 | ((cp >> 12) & 0x3F))) &&
			     pm_put(s, (char)(0x80 | ((cp >> 6) & 0x3F))) &&
			     pm_put(s, (char)(0x80 | (cp & 0x3F)));
		}
		if (!ok)
			return false;
	}
	if (!pm_put(s, '\0'))
		return false;
	*out = s->scratch + start;
	return true;
}

/* A list of strings with exactly call->ninputs entries; field 0: dtype, 1: value. */
static bool pm_parse_strings(struct pm_scan *s, struct perfmodel_call *call, int field,
			     const char *what)
{
	int n = 0;
	if (!pm_eat(s, '['))
		return pm_err(s, what);
	if (!pm_eat(s, ']')) {
		for (;;) {
			const char *str;
			if (n == call->ninputs)
				return pm_err(
					s,
					field ? "Concrete Inputs has more entries than Input Dims"
					      : "Input type has more entries than Input Dims");
			if (!pm_string(s, &str))
				return false;
			if (field)
				call->in[n].value = str;
			else
				call->in[n].dtype = str;
			n++;
			if (pm_eat(s, ']'))
				break;
			if (!pm_eat(s, ','))
				return pm_err(s, what);
		}
	}
	pm_ws(s);
	if (*s->p != '\0')
		return pm_err(s, what);
	if (n != call->ninputs)
		return pm_err(s, field ? "Concrete Inputs has fewer entries than Input Dims"
				       : "Input type has fewer entries than Input Dims");
	return true;
}

bool perfmodel_parse_inputs(struct perfmodel_call *call, const char *dims, const char *types,
			    const char *concrete, char *scratch, size_t scratch_len,
			    const char **reason)
{
	struct pm_scan s = { .p = dims ? dims : "",
			     .scratch = scratch,
			     .len = scratch ? scratch_len : 0 };
	call->ninputs = 0;
	call->out_ndims = -1;
	bool ok = dims && pm_parse_dims(&s, call);
	if (!dims)
		pm_err(&s, "no Input Dims");
	if (ok && types) {
		s.p = types;
		ok = pm_parse_strings(&s, call, 0, "Input type is not a list of strings");
	}
	if (ok && concrete) {
		s.p = concrete;
		ok = pm_parse_strings(&s, call, 1, "Concrete Inputs is not a list of strings");
	}
	if (!ok) {
		call->ninputs = 0;
		if (reason)
			*reason = s.reason ? s.reason : "Input Dims does not parse";
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Evaluation context and checked arithmetic */

struct pm_op;

/* The state of one evaluation. */
struct pm_ctx {
	const struct perfmodel_call *c; /* the call */
	struct perfmodel_result *r;	/* its result */
	const struct pm_op *op;		/* its table row */
	bool inplace;			/* matched the row by dropping a trailing '_' */
	bool ovf;			/* a checked product or sum overflowed */
	bool baddt;			/* the bytes of a tensor of unknown dtype were needed */
};

typedef void (*pm_model_fn)(struct pm_ctx *x);

/* One row of the operator table. */
struct pm_op {
	const char *name;   /* "aten::addmm" */
	pm_model_fn fn;	    /* its model; NULL: no work (a view or allocation) */
	int8_t a[PM_NARGS]; /* argument positions the model reads (its comment says which) */
	uint8_t k;	    /* model parameter (FLOPs per element, spatial dimensions, ...) */
	uint16_t f;	    /* PM_F_ flags */
};

#define PM_F_TRANSPOSED	 0x01	/* convolution: transposed by its name */
#define PM_F_BOOL_OUT	 0x02	/* elementwise: the output is bool */
#define PM_F_INDICES	 0x04	/* pooling/reduction: also writes int64 indices */
#define PM_F_INPLACE_OK	 0x08	/* the name with a trailing '_' is the in-place variant */
#define PM_F_BACKWARD	 0x10	/* the backward of the family */
#define PM_F_ADAPTIVE	 0x20	/* pooling: adaptive */
#define PM_F_AVG	 0x40	/* pooling: average */
#define PM_F_NOBIAS	 0x100	/* convolution: no bias argument */
#define PM_F_DTYPE_LAST	 0x400	/* reduction: the last argument is the output dtype or tensor */
#define PM_F_INT_TO_LONG 0x800	/* reduction: integer inputs give int64 (sum, prod, cumsum) */
#define PM_F_LONG_OUT	 0x1000 /* reduction: the output is int64 (argmax, argmin) */
#define PM_F_TRUEDIV	 0x2000 /* elementwise: true division (integers give float) */
#define PM_F_COND	 0x4000 /* elementwise: a[2] is a condition, not in the type promotion */
#define PM_F_NOREAD	 0x200	/* foreach: the list is only written (_foreach_zero_) */

static uint64_t pm_mul(struct pm_ctx *x, uint64_t a, uint64_t b)
{
	uint64_t r;
	if (__builtin_mul_overflow(a, b, &r)) {
		x->ovf = true;
		return 0;
	}
	return r;
}

static uint64_t pm_add(struct pm_ctx *x, uint64_t a, uint64_t b)
{
	uint64_t r;
	if (__builtin_add_overflow(a, b, &r)) {
		x->ovf = true;
		return 0;
	}
	return r;
}

static bool pm_fail(struct pm_ctx *x, const char *why)
{
	x->r->category = PERFMODEL_NONE;
	x->r->reason = why;
	return false;
}

/* Give up on the model of x with a reason, from a model function. */
#define PM_FAIL(...)                     \
	do {                             \
		pm_fail(x, __VA_ARGS__); \
		return;                  \
	} while (0)

static void pm_set(struct pm_ctx *x, enum perfmodel_category cat, uint64_t flops, uint64_t rd,
		   uint64_t wr)
{
	x->r->category = cat;
	x->r->reason = NULL;
	x->r->flops = flops;
	x->r->bytes_read = rd;
	x->r->bytes_written = wr;
}

/* Input i, or NULL past the call's inputs (or i < 0: the row does not have the argument). */
static const struct perfmodel_input *pm_in(const struct pm_ctx *x, int i)
{
	return i >= 0 && i < x->c->ninputs ? &x->c->in[i] : NULL;
}

/* Is in a tensor (not a scalar argument, a list or None)? A "[]" is a 0-d tensor when its
 * type is a tensor dtype; an input with dimensions is a tensor whatever its type says (an
 * unknown one makes pm_bytes give up). */
static bool pm_tensor(const struct perfmodel_input *in)
{
	return in && (in->ndims > 0 || (in->ndims == 0 && perfmodel_dtype_bytes(in->dtype) > 0));
}

/* Elements of a tensor whose dimensions were validated by perfmodel_eval. */
static uint64_t pm_numel(struct pm_ctx *x, const struct perfmodel_input *in)
{
	if (!in)
		return 0;
	if (in->ndims == PERFMODEL_TENSOR_LIST)
		return in->list_numel;
	uint64_t n = 1;
	for (int d = 0; d < in->ndims; d++)
		n = pm_mul(x, n, (uint64_t)in->dims[d]);
	return n;
}

/* Bytes of a tensor (0 for a scalar argument or a missing input). */
static uint64_t pm_bytes(struct pm_ctx *x, const struct perfmodel_input *in)
{
	if (!pm_tensor(in))
		return 0;
	unsigned bpe = perfmodel_dtype_bytes(in->dtype);
	if (!bpe)
		x->baddt = true;
	return pm_mul(x, pm_numel(x, in), bpe);
}

static uint64_t pm_prod(struct pm_ctx *x, const int64_t *dims, int n)
{
	uint64_t p = 1;
	for (int d = 0; d < n; d++)
		p = pm_mul(x, p, (uint64_t)dims[d]);
	return p;
}

/* The concrete text of argument i, or NULL when not recorded (absent or ""). */
static const char *pm_val(const struct pm_ctx *x, int i)
{
	const struct perfmodel_input *in = pm_in(x, i);
	return in && in->value && in->value[0] ? in->value : NULL;
}

/* Is argument i None (the trace writes an empty type for it)? */
static bool pm_none(const struct pm_ctx *x, int i)
{
	const struct perfmodel_input *in = pm_in(x, i);
	return !in || (in->ndims == 0 && in->dtype[0] == '\0');
}

static const char *pm_skipws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A concrete integer ("3", "-1"); false when it is not one. */
static bool pm_parse_i64(const char *p, int64_t *out)
{
	struct pm_scan s = { .p = p };
	if (!pm_int(&s, out))
		return false;
	return *pm_skipws(s.p) == '\0';
}

/* A concrete integer list ("[1, 2]", "[]", or one integer "2") of at most max entries. */
static bool pm_parse_ilist(const char *p, int64_t *v, int max, int *n)
{
	struct pm_scan s = { .p = p };
	*n = 0;
	if (!pm_eat(&s, '[')) {
		if (max < 1 || !pm_int(&s, &v[0]))
			return false;
		*n = 1;
		return *pm_skipws(s.p) == '\0';
	}
	if (!pm_eat(&s, ']')) {
		for (;;) {
			if (*n == max || !pm_int(&s, &v[*n]))
				return false;
			(*n)++;
			if (pm_eat(&s, ']'))
				break;
			if (!pm_eat(&s, ','))
				return false;
		}
	}
	return *pm_skipws(s.p) == '\0';
}

/* One boolean word at p; *len set to its length. */
static bool pm_bool_word(const char *p, bool *b, size_t *len)
{
	static const struct {
		const char *w;
		bool v;
	} words[] = { { "True", true },	  { "true", true },   { "1", true },
		      { "False", false }, { "false", false }, { "0", false } };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t l = strlen(words[i].w);
		if (strncmp(p, words[i].w, l) == 0) {
			*b = words[i].v;
			*len = l;
			return true;
		}
	}
	return false;
}

static bool pm_parse_bool(const char *p, bool *out)
{
	size_t len;
	p = pm_skipws(p);
	return pm_bool_word(p, out, &len) && *pm_skipws(p + len) == '\0';
}

/* A boolean list "[True, False, True]" of exactly n entries. */
static bool pm_parse_blist(const char *p, bool *v, int n)
{
	p = pm_skipws(p);
	if (*p++ != '[')
		return false;
	for (int i = 0; i < n; i++) {
		size_t len;
		p = pm_skipws(p);
		if (!pm_bool_word(p, &v[i], &len))
			return false;
		p = pm_skipws(p + len);
		if (*p++ != (i == n - 1 ? ']' : ','))
			return false;
	}
	return *pm_skipws(p) == '\0';
}

/* The compute dtype and its element size from input in. */
static bool pm_dtype(struct pm_ctx *x, const struct perfmodel_input *in, unsigned *bpe)
{
	*bpe = in ? perfmodel_dtype_bytes(in->dtype) : 0;
	if (!*bpe)
		return pm_fail(x, "unknown dtype");
	x->r->dtype = perfmodel_dtype_of(in->dtype);
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Tensor cores: NVIDIA's alignment rule (docs/flops.md): 16 bytes of each of the GEMM's
 * dimensions: 8 FP16/BF16 elements, 16 FP8/INT8 elements, 4 TF32 elements. */

static void pm_tc(struct pm_ctx *x, uint64_t m, uint64_t n, uint64_t k, const char *const *why)
{
	struct perfmodel_result *r = x->r;
	r->tc_eligible = false;
	r->tc_tf32_only = false;
	r->tc_reason = NULL;
	unsigned align;
	switch (r->dtype) {
	case PERFMODEL_DT_FP16:
	case PERFMODEL_DT_BF16:
		align = 8;
		break;
	case PERFMODEL_DT_FP8:
	case PERFMODEL_DT_INT8:
		align = 16;
		break;
	case PERFMODEL_DT_FP32:
		align = 4;
		r->tc_tf32_only = true;
		break;
	case PERFMODEL_DT_FP64:
		r->tc_reason = "float64";
		return;
	default:
		r->tc_reason = "a dtype without tensor cores";
		return;
	}
	uint64_t d[3] = { m, n, k };
	for (int i = 0; i < 3; i++) {
		if (d[i] % align) {
			r->tc_tf32_only = false;
			r->tc_reason = why[(align == 4 ? 0 : align == 8 ? 3 : 6) + i];
			return;
		}
	}
	r->tc_eligible = true;
}

static const char *const pm_tc_gemm_why[] = {
	"M not a multiple of 4",  "N not a multiple of 4",  "K not a multiple of 4",
	"M not a multiple of 8",  "N not a multiple of 8",  "K not a multiple of 8",
	"M not a multiple of 16", "N not a multiple of 16", "K not a multiple of 16",
};
static const char *const pm_tc_conv_why[] = {
	"C_out not a multiple of 4",	    "C_in/groups not a multiple of 4",
	"C_in/groups not a multiple of 4",  "C_out not a multiple of 8",
	"C_in/groups not a multiple of 8",  "C_in/groups not a multiple of 8",
	"C_out not a multiple of 16",	    "C_in/groups not a multiple of 16",
	"C_in/groups not a multiple of 16",
};
static const char *const pm_tc_attn_why[] = {
	"head dimension not a multiple of 4",  "head dimension not a multiple of 4",
	"head dimension not a multiple of 4",  "head dimension not a multiple of 8",
	"head dimension not a multiple of 8",  "head dimension not a multiple of 8",
	"head dimension not a multiple of 16", "head dimension not a multiple of 16",
	"head dimension not a multiple of 16",
};

/* ------------------------------------------------------------------------------------------ */
/* GEMM family */

/* Finish a (batched) GEMM of batch b, M x K times K x N: 2·b·M·N·K FLOPs plus extra; bytes of
 * the inputs as given (rd) and b·M·N outputs of bpe bytes. */
static void pm_gemm_done(struct pm_ctx *x, uint64_t b, uint64_t m, uint64_t n, uint64_t k,
			 uint64_t extra, uint64_t rd, unsigned bpe)
{
	uint64_t mn = pm_mul(x, pm_mul(x, b, m), n);
	uint64_t flops = pm_add(x, pm_mul(x, pm_mul(x, mn, k), 2), extra);
	pm_set(x, PERFMODEL_GEMM, flops, rd, pm_mul(x, mn, bpe));
	pm_tc(x, m, n, k, pm_tc_gemm_why);
}

/* mm [A(M,K), B(K,N)]; addmm [C, A, B, beta, alpha]: a = {C or -1, A, B}. The bias add of
 * addmm is M·N more FLOPs; C is read as given (it broadcasts). */
static void m_mm(struct pm_ctx *x)
{
	const struct perfmodel_input *c = pm_in(x, x->op->a[0]), *a = pm_in(x, x->op->a[1]),
				     *b = pm_in(x, x->op->a[2]);
	unsigned bpe;
	if (!pm_tensor(a) || !pm_tensor(b) || a->ndims != 2 || b->ndims != 2)
		PM_FAIL("GEMM operands are not matrices");
	if (a->dims[1] != b->dims[0])
		PM_FAIL("GEMM inner dimensions differ");
	if (!pm_dtype(x, a, &bpe))
		return;
	uint64_t m = (uint64_t)a->dims[0], k = (uint64_t)a->dims[1], n = (uint64_t)b->dims[1];
	uint64_t rd = pm_add(x, pm_bytes(x, a), pm_bytes(x, b)), extra = 0;
	if (x->op->a[0] >= 0) {
		if (!pm_tensor(c))
			PM_FAIL("addmm bias is not a tensor");
		rd = pm_add(x, rd, pm_bytes(x, c));
		extra = pm_mul(x, m, n);
	}
	pm_gemm_done(x, 1, m, n, k, extra, rd, bpe);
}

/* bmm [A(B,M,K), B(B,K,N)]; baddbmm [C, A, B, beta, alpha]: a = {C or -1, A, B}. */
static void m_bmm(struct pm_ctx *x)
{
	const struct perfmodel_input *c = pm_in(x, x->op->a[0]), *a = pm_in(x, x->op->a[1]),
				     *b = pm_in(x, x->op->a[2]);
	unsigned bpe;
	if (!pm_tensor(a) || !pm_tensor(b) || a->ndims != 3 || b->ndims != 3)
		PM_FAIL("bmm operands are not 3-d");
	if (a->dims[0] != b->dims[0] || a->dims[2] != b->dims[1])
		PM_FAIL("GEMM inner dimensions differ");
	if (!pm_dtype(x, a, &bpe))
		return;
	uint64_t bt = (uint64_t)a->dims[0], m = (uint64_t)a->dims[1], k = (uint64_t)a->dims[2],
		 n = (uint64_t)b->dims[2];
	uint64_t rd = pm_add(x, pm_bytes(x, a), pm_bytes(x, b)), extra = 0;
	if (x->op->a[0] >= 0) {
		if (!pm_tensor(c))
			PM_FAIL("baddbmm bias is not a tensor");
		rd = pm_add(x, rd, pm_bytes(x, c));
		extra = pm_mul(x, pm_mul(x, bt, m), n);
	}
	pm_gemm_done(x, bt, m, n, k, extra, rd, bpe);
}

/* linear [x(..., K), w(N, K), bias(N) or None]: M = the product of x's leading dims. */
static void m_linear(struct pm_ctx *x)
{
	const struct perfmodel_input *in = pm_in(x, 0), *w = pm_in(x, 1), *bias = pm_in(x, 2);
	unsigned bpe;
	if (!pm_tensor(in) || !pm_tensor(w) || in->ndims < 1 || w->ndims != 2)
		PM_FAIL("linear operands have the wrong shapes");
	if (in->dims[in->ndims - 1] != w->dims[1])
		PM_FAIL("GEMM inner dimensions differ");
	if (!pm_dtype(x, in, &bpe))
		return;
	uint64_t k = (uint64_t)w->dims[1], n = (uint64_t)w->dims[0];
	uint64_t m = pm_prod(x, in->dims, in->ndims - 1);
	uint64_t rd = pm_add(x, pm_bytes(x, in), pm_bytes(x, w)), extra = 0;
	if (pm_tensor(bias) && bias->ndims > 0) {
		rd = pm_add(x, rd, pm_bytes(x, bias));
		extra = pm_mul(x, m, n);
	}
	pm_gemm_done(x, 1, m, n, k, extra, rd, bpe);
}

/* NumPy broadcasting of two shapes (right-aligned; a size 1 stretches). */
static bool pm_broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
			 int *nout)
{
	int n = na > nb ? na : nb;
	for (int i = 0; i < n; i++) {
		int ia = na - n + i, ib = nb - n + i;
		int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return false;
		out[i] = da == 1 ? db : da;
	}
	*nout = n;
	return true;
}

/* matmul [a, b] with torch.matmul's rules: 1-d·1-d a dot product, a 1-d operand gets a
 * dimension of 1 that the result drops, leading (batch) dimensions broadcast. */
static void m_matmul(struct pm_ctx *x)
{
	const struct perfmodel_input *a = pm_in(x, 0), *b = pm_in(x, 1);
	unsigned bpe;
	if (!pm_tensor(a) || !pm_tensor(b) || a->ndims < 1 || b->ndims < 1)
		PM_FAIL("matmul operands are not tensors of at least 1 dimension");
	uint64_t m = a->ndims == 1 ? 1 : (uint64_t)a->dims[a->ndims - 2];
	uint64_t k = (uint64_t)a->dims[a->ndims - 1];
	uint64_t kb = (uint64_t)b->dims[b->ndims == 1 ? 0 : b->ndims - 2];
	uint64_t n = b->ndims == 1 ? 1 : (uint64_t)b->dims[b->ndims - 1];
	if (k != kb)
		PM_FAIL("GEMM inner dimensions differ");
	int64_t batch[PERFMODEL_MAX_DIMS];
	int nbatch;
	int na = a->ndims > 2 ? a->ndims - 2 : 0, nb = b->ndims > 2 ? b->ndims - 2 : 0;
	if (!pm_broadcast(a->dims, na, b->dims, nb, batch, &nbatch))
		PM_FAIL("matmul batch dimensions do not broadcast");
	if (!pm_dtype(x, a, &bpe))
		return;
	uint64_t rd = pm_add(x, pm_bytes(x, a), pm_bytes(x, b));
	pm_gemm_done(x, pm_prod(x, batch, nbatch), m, n, k, 0, rd, bpe);
}

/* einsum [equation, TensorList of two operands, path]: modelled only where the equation is
 * a (batched) GEMM: every index either in both operands and the output (batch), in one
 * operand and the output (M from the first, N from the second) or in both operands only
 * (contracted: K). No "...", no repeated index in one operand, no index summed out of one
 * operand alone. */
static void m_einsum(struct pm_ctx *x)
{
	const char *eq = pm_val(x, 0);
	const struct perfmodel_input *l = pm_in(x, 1);
	if (!eq)
		PM_FAIL("einsum equation not recorded");
	if (!l || l->ndims != PERFMODEL_TENSOR_LIST || l->list_len != 2)
		PM_FAIL("einsum without two operand shapes");
	char ops[3][PERFMODEL_MAX_DIMS + 1];
	int nops[3] = { 0, 0, 0 }, which = 0;
	bool explicit_out = false;
	for (const char *p = eq; *p; p++) {
		if (*p == ' ' || *p == '"' || *p == '\'')
			continue;
		if (*p == ',' && which == 0) {
			which = 1;
		} else if (*p == '-' && p[1] == '>' && which == 1) {
			which = 2;
			explicit_out = true;
			p++;
		} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
			if (nops[which] == PERFMODEL_MAX_DIMS)
				PM_FAIL("einsum equation is not a GEMM");
			for (int i = 0; i < nops[which]; i++)
				if (ops[which][i] == *p)
					PM_FAIL("einsum equation is not a GEMM");
			ops[which][nops[which]++] = *p;
		} else {
			PM_FAIL("einsum equation is not a GEMM");
		}
	}
	if (which == 0)
		PM_FAIL("einsum equation is not a GEMM");
	if (!explicit_out) {
		/* implicit output: the indices seen once, in alphabetical order */
		for (int c = 'A'; c <= 'z'; c++) {
			int seen = 0;
			for (int w = 0; w < 2; w++)
				seen += memchr(ops[w], c, (size_t)nops[w]) != NULL;
			if (seen == 1 && nops[2] == PERFMODEL_MAX_DIMS)
				PM_FAIL("einsum equation is not a GEMM");
			if (seen == 1)
				ops[2][nops[2]++] = (char)c;
		}
	}
	for (int w = 0; w < 2; w++)
		if (nops[w] != l->list_ndims[w])
			PM_FAIL("einsum equation does not match its operands");
	uint64_t bt = 1, m = 1, n = 1, k = 1;
	for (int w = 0; w < 2; w++) {
		for (int i = 0; i < nops[w]; i++) {
			char c = ops[w][i];
			const char *o = memchr(ops[1 - w], c, (size_t)nops[1 - w]);
			bool in_out = memchr(ops[2], c, (size_t)nops[2]) != NULL;
			uint64_t size = (uint64_t)l->list_dims[w][i];
			if (o && (uint64_t)l->list_dims[1 - w][o - ops[1 - w]] != size)
				PM_FAIL("einsum operand sizes differ");
			if (!o && !in_out)
				PM_FAIL("einsum equation is not a GEMM");
			if (o && w == 1)
				continue; /* counted from the first operand */
			if (o && in_out)
				bt = pm_mul(x, bt, size);
			else if (o)
				k = pm_mul(x, k, size);
			else if (w == 0)
				m = pm_mul(x, m, size);
			else
				n = pm_mul(x, n, size);
		}
	}
	for (int i = 0; i < nops[2]; i++)
		if (!memchr(ops[0], ops[2][i], (size_t)nops[0]) &&
		    !memchr(ops[1], ops[2][i], (size_t)nops[1]))
			PM_FAIL("einsum output index in no operand");
	unsigned bpe;
	if (!pm_dtype(x, l, &bpe))
		PM_FAIL("dtype of the tensor list not recorded");
	pm_gemm_done(x, bt, m, n, k, 0, pm_mul(x, l->list_numel, bpe), bpe);
}

/* ------------------------------------------------------------------------------------------ */
/* Convolution */

/* A per-spatial-dimension argument (stride, padding, ...): "[2, 2]" or one value for all. */
static bool pm_spatial_arg(const struct pm_ctx *x, int pos, int nsp, int64_t def, int64_t *v,
			   bool *known)
{
	if (pos < 0) {
		for (int i = 0; i < nsp; i++)
			v[i] = def;
		return true;
	}
	const char *t = pm_val(x, pos);
	int n;
	if (!t) {
		*known = false;
		return true;
	}
	if (!pm_parse_ilist(t, v, PERFMODEL_MAX_DIMS, &n) || (n != 1 && n != nsp))
		return false;
	for (int i = n; i < nsp; i++)
		v[i] = v[0];
	return true;
}

/* Is the convolution transposed: by its name, its concrete flag, or, failing those, by its
 * shapes when they leave one possibility (a transposed convolution's input has w[0]
 * channels). -1: not known. */
static int pm_conv_transposed(const struct pm_ctx *x, int pos, int64_t in_ch, int64_t w0)
{
	if (x->op->f & PM_F_TRANSPOSED)
		return 1;
	if (pos < 0)
		return 0;
	const char *t = pm_val(x, pos);
	bool b;
	if (t && pm_parse_bool(t, &b))
		return b;
	return in_ch != w0 ? 0 : -1;
}

/* Check the shapes of a convolution: x (N, C, spatial...) or unbatched (C, spatial...),
 * w (C_out, C_in/g, kernel...); sets the spatial rank. */
static bool pm_conv_shapes(struct pm_ctx *x, const struct perfmodel_input *in,
			   const struct perfmodel_input *w, int *nsp)
{
	if (!pm_tensor(in) || !pm_tensor(w) || w->ndims < 3 || w->ndims > 5)
		return pm_fail(x, "convolution operands have the wrong shapes");
	*nsp = w->ndims - 2;
	if (in->ndims != w->ndims && in->ndims != w->ndims - 1)
		return pm_fail(x, "convolution operands have the wrong shapes");
	return true;
}

/* Convolution forward. a = {x, w, bias, stride, padding, dilation, transposed,
 * output_padding, groups}, -1 where the operator has no such argument. MACs: for each output
 * element, C_in/g·Πkernel (= Π w[1:]); transposed: for each input element, Π w[1:]. */
static void m_conv(struct pm_ctx *x)
{
	const int8_t *a = x->op->a;
	const struct perfmodel_input *in = pm_in(x, a[0]), *w = pm_in(x, a[1]),
				     *bias = pm_in(x, a[2]);
	int nsp;
	unsigned bpe;
	if (!pm_conv_shapes(x, in, w, &nsp) || !pm_dtype(x, in, &bpe))
		return;
	int off = in->ndims - nsp; /* first spatial dimension of x */
	uint64_t batch = off == 2 ? (uint64_t)in->dims[0] : 1;
	int64_t ch = in->dims[off - 1];
	int tr = pm_conv_transposed(x, a[6], ch, w->dims[0]);
	if (tr < 0)
		PM_FAIL("transposed flag not recorded");
	int64_t groups = 1;
	const char *gt = pm_val(x, a[8]);
	bool have_groups = a[8] < 0 || (gt && pm_parse_i64(gt, &groups));
	int64_t wg; /* w[1]·groups: C_in (not transposed) or C_out (transposed) */
	if (have_groups && (groups < 1 || __builtin_mul_overflow(w->dims[1], groups, &wg) ||
			    wg > (int64_t)PM_MAX_ELEMS))
		PM_FAIL("groups out of range");
	if (!have_groups)
		wg = w->dims[1];
	if ((!tr && have_groups && ch != wg) || (tr && ch != w->dims[0]))
		PM_FAIL("convolution channels do not match the weight");
	bool has_bias = pm_tensor(bias) && bias->ndims > 0;
	int64_t out_ch = tr ? wg : w->dims[0];
	int64_t osp[PERFMODEL_MAX_DIMS];
	int64_t st[PERFMODEL_MAX_DIMS], pad[PERFMODEL_MAX_DIMS], dil[PERFMODEL_MAX_DIMS],
		opad[PERFMODEL_MAX_DIMS];
	bool known = have_groups || !tr;
	if (!pm_spatial_arg(x, a[3], nsp, 1, st, &known) ||
	    !pm_spatial_arg(x, a[5], nsp, 1, dil, &known) ||
	    !pm_spatial_arg(x, tr ? a[7] : -1, nsp, 0, opad, &known))
		PM_FAIL("convolution arguments do not parse");
	const char *pt = pm_val(x, a[4]);
	bool same = false;
	if (pt && (strstr(pt, "same") || strstr(pt, "valid"))) {
		same = strstr(pt, "same") != NULL; /* conv2d(padding="same"): output = input */
		for (int i = 0; i < nsp; i++)
			pad[i] = 0;
	} else if (!pm_spatial_arg(x, a[4], nsp, 0, pad, &known)) {
		PM_FAIL("convolution arguments do not parse");
	}
	if (known) {
		for (int i = 0; i < nsp; i++) {
			int64_t iw = in->dims[off + i], k = w->dims[2 + i];
			if (st[i] < 1 || dil[i] < 1 || pad[i] < 0 || opad[i] < 0 ||
			    iw > INT32_MAX || k > INT32_MAX || st[i] > INT32_MAX ||
			    pad[i] > INT32_MAX || dil[i] > INT32_MAX || opad[i] > INT32_MAX)
				PM_FAIL("convolution arguments out of range");
			if (same)
				osp[i] = iw;
			else if (tr)
				osp[i] = (iw - 1) * st[i] - 2 * pad[i] + dil[i] * (k - 1) +
					 opad[i] + 1;
			else
				osp[i] = (iw + 2 * pad[i] - dil[i] * (k - 1) - 1) / st[i] + 1;
			if (osp[i] < 1 ||
			    (!tr && !same && iw + 2 * pad[i] - dil[i] * (k - 1) - 1 < 0))
				PM_FAIL("convolution output would be empty");
		}
	} else if (x->c->out_ndims == in->ndims) {
		const int64_t *od = x->c->out_dims;
		if ((off == 2 && od[0] != in->dims[0]) || (!tr && od[off - 1] != out_ch))
			PM_FAIL("the output hint does not match the convolution");
		out_ch = od[off - 1];
		for (int i = 0; i < nsp; i++) {
			if (od[off + i] < 1)
				PM_FAIL("the output hint does not match the convolution");
			osp[i] = od[off + i];
		}
	} else {
		PM_FAIL("stride/padding not recorded");
	}
	uint64_t kw = pm_prod(x, w->dims + 1, w->ndims - 1); /* Π w[1:] */
	uint64_t out_n = pm_mul(x, pm_mul(x, batch, (uint64_t)out_ch), pm_prod(x, osp, nsp));
	uint64_t macs = pm_mul(x, tr ? pm_numel(x, in) : out_n, kw);
	uint64_t flops = pm_mul(x, macs, 2);
	uint64_t rd = pm_add(x, pm_bytes(x, in), pm_bytes(x, w));
	if (has_bias) {
		flops = pm_add(x, flops, out_n);
		rd = pm_add(x, rd, pm_bytes(x, bias));
	}
	pm_set(x, PERFMODEL_CONVOLUTION, flops, rd, pm_mul(x, out_n, bpe));
	pm_tc(x, (uint64_t)w->dims[0], (uint64_t)w->dims[1], (uint64_t)w->dims[1], pm_tc_conv_why);
}

/* Convolution backward, data and weight gradients (and the bias's when output_mask asks).
 * a = {grad_output, input, weight, transposed, output_mask, grad_input/weight sizes,
 * which}: torch >= 1.11 convolution_backward [grad_output, input, weight, bias_sizes,
 * stride, padding, dilation, transposed, output_padding, groups, output_mask]; torch 1.8
 * cudnn_convolution_backward [input, grad_output, weight, padding, stride, dilation, groups,
 * benchmark, deterministic, allow_tf32, output_mask]; cudnn_convolution_backward_input
 * [input sizes, grad_output, weight, ...] and _weight [weight sizes, grad_output, input,
 * ...], whose missing shape comes from the concrete sizes or the output hint. k: 0 both, 1
 * data only, 2 weight only. */
static void m_conv_bwd(struct pm_ctx *x)
{
	const int8_t *a = x->op->a;
	const struct perfmodel_input *go = pm_in(x, a[0]);
	struct perfmodel_input given; /* the shape given only by its sizes */
	const struct perfmodel_input *in = pm_in(x, a[1]), *w = pm_in(x, a[2]);
	if (x->op->k) {
		const char *t = pm_val(x, a[5]);
		memset(&given, 0, sizeof(given));
		given.dtype = go ? go->dtype : "";
		if (t) {
			if (!pm_parse_ilist(t, given.dims, PERFMODEL_MAX_DIMS, &given.ndims))
				PM_FAIL("convolution sizes do not parse");
		} else if (x->c->out_ndims > 0) {
			given.ndims = x->c->out_ndims;
			memcpy(given.dims, x->c->out_dims, sizeof(given.dims));
		} else {
			PM_FAIL(x->op->k == 1 ? "input size not recorded"
					      : "weight size not recorded");
		}
		for (int d = 0; d < given.ndims; d++)
			if (given.dims[d] < 0)
				PM_FAIL("negative dimension");
		if (pm_prod(x, given.dims, given.ndims) > PM_MAX_ELEMS)
			PM_FAIL("tensor of more than 2^40 elements");
		if (x->op->k == 1)
			in = &given;
		else
			w = &given;
	}
	int nsp;
	unsigned bpe;
	if (!pm_tensor(go) || !pm_conv_shapes(x, in, w, &nsp) || go->ndims != in->ndims)
		PM_FAIL("convolution operands have the wrong shapes");
	if (!pm_dtype(x, go, &bpe))
		return;
	int off = in->ndims - nsp;
	int tr = pm_conv_transposed(x, a[3], in->dims[off - 1], w->dims[0]);
	if (tr < 0) {
		/* not transposed: go has w[0] channels; transposed: x has */
		if (go->dims[off - 1] != w->dims[0])
			tr = 1;
		else if (pm_numel(x, go) == pm_numel(x, in))
			tr = 0; /* both readings give the same count */
		else
			PM_FAIL("transposed flag not recorded");
	}
	bool mask[3] = { x->op->k != 2, x->op->k != 1, false }, m3[3], m2[2];
	const char *mt = pm_val(x, a[4]);
	if (mt && pm_parse_blist(mt, m3, 3))
		memcpy(mask, m3, sizeof(mask));
	else if (mt && pm_parse_blist(mt, m2, 2))
		mask[0] = m2[0], mask[1] = m2[1];
	else if (mt)
		PM_FAIL("output_mask does not parse");
	uint64_t go_n = pm_numel(x, go);
	uint64_t macs =
		pm_mul(x, tr ? pm_numel(x, in) : go_n, pm_prod(x, w->dims + 1, w->ndims - 1));
	uint64_t flops = 0, rd = pm_mul(x, go_n, bpe), wr = 0;
	if (mask[0]) { /* dgrad: reads grad_output and weight, writes grad_input */
		flops = pm_add(x, flops, pm_mul(x, macs, 2));
		rd = pm_add(x, rd, pm_mul(x, pm_numel(x, w), bpe));
		wr = pm_add(x, wr, pm_mul(x, pm_numel(x, in), bpe));
	}
	if (mask[1]) { /* wgrad: reads grad_output and input, writes grad_weight */
		flops = pm_add(x, flops, pm_mul(x, macs, 2));
		rd = pm_add(x, rd, pm_mul(x, pm_numel(x, in), bpe));
		wr = pm_add(x, wr, pm_mul(x, pm_numel(x, w), bpe));
	}
	if (mask[2]) { /* bias gradient: grad_output summed per channel */
		flops = pm_add(x, flops, go_n);
		wr = pm_add(x, wr, pm_mul(x, (uint64_t)go->dims[off - 1], bpe));
	}
	pm_set(x, PERFMODEL_CONVOLUTION, flops, rd, wr);
	pm_tc(x, (uint64_t)w->dims[0], (uint64_t)w->dims[1], (uint64_t)w->dims[1], pm_tc_conv_why);
}

/* ------------------------------------------------------------------------------------------ */
/* Attention */

/* Query-key pairs one head computes: Nq·Nkv, causal N(N+1)/2 (only Nq == Nkv is modelled:
 * torch and flash-attn align the mask differently when they differ). */
static bool pm_attn_pairs(struct pm_ctx *x, uint64_t nq, uint64_t nkv, int causal_pos,
			  uint64_t *pairs)
{
	bool causal = false;
	if (causal_pos >= 0) {
		const char *t = pm_val(x, causal_pos);
		if (!t || !pm_parse_bool(t, &causal))
			return pm_fail(x, "is_causal not recorded");
	}
	if (!causal) {
		*pairs = pm_mul(x, nq, nkv);
		return true;
	}
	if (nq != nkv)
		return pm_fail(x, "causal attention with different query and key lengths");
	*pairs = nq % 2 ? pm_mul(x, nq, (nq + 1) / 2) : pm_mul(x, nq / 2, nq + 1);
	return true;
}

/* Read q, k, v in (B, H, N, d) (k: 0) or (B, N, H, d) (k: 1) layouts. */
static bool pm_attn_dims(struct pm_ctx *x, const struct perfmodel_input *const *t, uint64_t *b,
			 uint64_t *hq, uint64_t *nq, uint64_t *nkv, uint64_t *d, uint64_t *dv)
{
	for (int i = 0; i < 3; i++)
		if (!pm_tensor(t[i]) || t[i]->ndims != 4)
			return pm_fail(x, "attention operands are not 4-d");
	const int64_t *q = t[0]->dims, *k = t[1]->dims, *v = t[2]->dims;
	int hi = x->op->k ? 2 : 1, ni = x->op->k ? 1 : 2;
	if (q[0] != k[0] || k[0] != v[0] || q[3] != k[3] || k[ni] != v[ni] || k[hi] != v[hi] ||
	    k[hi] == 0 || q[hi] % k[hi] != 0)
		return pm_fail(x, "attention operand shapes do not match");
	*b = (uint64_t)q[0];
	*hq = (uint64_t)q[hi];
	*nq = (uint64_t)q[ni];
	*nkv = (uint64_t)k[ni];
	*d = (uint64_t)q[3];
	*dv = (uint64_t)v[3];
	return true;
}

/* Attention forward: a = {q, k, v, is_causal, attn_mask or -1, cum_seq_q or -1}. FLOPs
 * 2·pairs·(d + dv) per head: QKᵀ and PV, softmax not counted. */
static void m_attn(struct pm_ctx *x)
{
	const int8_t *a = x->op->a;
	const struct perfmodel_input *t[3] = { pm_in(x, a[0]), pm_in(x, a[1]), pm_in(x, a[2]) };
	uint64_t b, hq, nq, nkv, d, dv, pairs;
	unsigned bpe;
	if (a[5] >= 0 && !pm_none(x, a[5]))
		PM_FAIL("variable-length attention");
	if (!pm_attn_dims(x, t, &b, &hq, &nq, &nkv, &d, &dv) || !pm_dtype(x, t[0], &bpe) ||
	    !pm_attn_pairs(x, nq, nkv, a[3], &pairs))
		return;
	uint64_t heads = pm_mul(x, b, hq);
	uint64_t flops = pm_mul(x, pm_mul(x, pm_mul(x, heads, pairs), pm_add(x, d, dv)), 2);
	uint64_t rd = pm_add(x, pm_add(x, pm_bytes(x, t[0]), pm_bytes(x, t[1])), pm_bytes(x, t[2]));
	const struct perfmodel_input *mask = pm_in(x, a[4]);
	if (pm_tensor(mask))
		rd = pm_add(x, rd, pm_bytes(x, mask));
	uint64_t wr = pm_mul(x, pm_mul(x, pm_mul(x, heads, nq), dv), bpe);
	pm_set(x, PERFMODEL_ATTENTION, flops, rd, wr);
	pm_tc(x, d, dv, d, pm_tc_attn_why);
}

/* Attention backward: a = {grad_out, q, k, v, out, is_causal, cum_seq_q or -1}. FLOPs
 * 2·pairs·(3d + 2dv) per head: QKᵀ recomputed, dV, dP, dQ, dK (TraceLens's count). Reads
 * grad_out, q, k, v, out; writes dq, dk, dv. */
static void m_attn_bwd(struct pm_ctx *x)
{
	const int8_t *a = x->op->a;
	const struct perfmodel_input *t[3] = { pm_in(x, a[1]), pm_in(x, a[2]), pm_in(x, a[3]) };
	const struct perfmodel_input *go = pm_in(x, a[0]), *out = pm_in(x, a[4]);
	uint64_t b, hq, nq, nkv, d, dv, pairs;
	unsigned bpe;
	if (a[6] >= 0 && !pm_none(x, a[6]))
		PM_FAIL("variable-length attention");
	if (!pm_attn_dims(x, t, &b, &hq, &nq, &nkv, &d, &dv) || !pm_dtype(x, t[0], &bpe) ||
	    !pm_attn_pairs(x, nq, nkv, a[5], &pairs))
		return;
	if (!pm_tensor(go) || !pm_tensor(out))
		PM_FAIL("attention backward operands missing");
	uint64_t heads = pm_mul(x, b, hq);
	uint64_t per = pm_add(x, pm_mul(x, d, 3), pm_mul(x, dv, 2));
	uint64_t flops = pm_mul(x, pm_mul(x, pm_mul(x, heads, pairs), per), 2);
	uint64_t qkv =
		pm_add(x, pm_add(x, pm_bytes(x, t[0]), pm_bytes(x, t[1])), pm_bytes(x, t[2]));
	uint64_t rd = pm_add(x, qkv, pm_add(x, pm_bytes(x, go), pm_bytes(x, out)));
	pm_set(x, PERFMODEL_ATTENTION, flops, rd, qkv);
	pm_tc(x, d, dv, d, pm_tc_attn_why);
}

/* ------------------------------------------------------------------------------------------ */
/* Elementwise */

/* Is the op's name in-place (ends in '_' and matched without it, or listed with it)? */
static bool pm_inplace(const struct pm_ctx *x)
{
	size_t l = strlen(x->c->name);
	return x->inplace || (l > 0 && x->c->name[l - 1] == '_');
}

/* Does a Scalar argument's text hold a floating-point number ("0.5", "1e-05", "inf"), not an
 * integer or a boolean? */
static bool pm_float_text(const char *t)
{
	int64_t i;
	bool b;
	return !pm_parse_i64(t, &i) && !pm_parse_bool(t, &b);
}

/* Bytes per element of the output of an elementwise op over the operands at a[0..2], by
 * torch's type promotion: the dimensioned tensors decide within their category (float over
 * integer; float16 with bfloat16 gives float32); 0-d tensors and Scalar arguments count only
 * when they are of a higher category, and then give torch's default dtype (float32) for a
 * floating Scalar; a 0-d floating tensor beside integer tensors is ambiguous (a wrapped
 * Python number gives float32, a real 0-d tensor its own dtype), as is a Scalar whose value
 * was not recorded. True division (PM_F_TRUEDIV) of integers gives float32; where's condition
 * (PM_F_COND) takes no part. False: failed. */
static bool pm_ew_out_bpe(struct pm_ctx *x, unsigned *bpe)
{
	unsigned dim_f = 0, dim_i = 0, zero_f = 0, zero_i = 0;
	bool f16 = false, b16 = false, scalar_f = false, scalar_unknown = false;
	for (int i = 0; i < ((x->op->f & PM_F_COND) ? 2 : 3); i++) {
		const struct perfmodel_input *in = x->op->a[i] >= 0 ? pm_in(x, x->op->a[i]) : NULL;
		if (!in)
			continue;
		if (!pm_tensor(in)) {
			const char *t = pm_val(x, x->op->a[i]);
			if (strcmp(in->dtype, "Double") == 0 || (t && pm_float_text(t)))
				scalar_f = true;
			else if (strcmp(in->dtype, "Scalar") == 0 && !t)
				scalar_unknown = true;
			continue;
		}
		enum perfmodel_dtype d = perfmodel_dtype_of(in->dtype);
		unsigned b = perfmodel_dtype_bytes(in->dtype);
		if (!b)
			return pm_fail(x, "unknown dtype");
		if (pm_is_float(d)) {
			unsigned *m = in->ndims > 0 ? &dim_f : &zero_f;
			*m = b > *m ? b : *m;
			f16 |= d == PERFMODEL_DT_FP16;
			b16 |= d == PERFMODEL_DT_BF16;
		} else if (d == PERFMODEL_DT_UNKNOWN) {
			return pm_fail(x, "unknown dtype"); /* complex */
		} else {
			unsigned *m = in->ndims > 0 ? &dim_i : &zero_i;
			*m = b > *m ? b : *m;
		}
	}
	unsigned fl = dim_f ? dim_f : zero_f;
	if (fl) {
		if (!dim_f && dim_i)
			return pm_fail(x, "output dtype not recorded");
		*bpe = f16 && b16 && fl == 2 ? 4 : fl;
		return true;
	}
	if (scalar_f) {
		*bpe = 4;
		return true;
	}
	if (scalar_unknown)
		return pm_fail(x, "output dtype not recorded");
	*bpe = dim_i ? dim_i : zero_i;
	if (x->op->f & PM_F_TRUEDIV) {
		const char *mode = pm_val(x, 2);
		if (x->c->ninputs < 3 || pm_none(x, 2))
			*bpe = 4;
		else if (!mode)
			return pm_fail(x, "rounding mode not recorded");
	}
	return true;
}

/* Elementwise over the tensors at a[0..2] (-1: none): output = their broadcast shape; k
 * FLOPs per output element. In place: the output is input a[0]. The output dtype: bool for
 * comparisons (PM_F_BOOL_OUT), else torch's promotion (pm_ew_out_bpe). Scalar arguments are
 * not memory. */
static void m_ew(struct pm_ctx *x)
{
	const struct perfmodel_input *t[3];
	int64_t shape[PERFMODEL_MAX_DIMS];
	int nd = 0, nt = 0;
	const struct perfmodel_input *first = NULL, *compute = NULL;
	uint64_t rd = 0;
	for (int i = 0; i < 3; i++) {
		t[i] = x->op->a[i] >= 0 ? pm_in(x, x->op->a[i]) : NULL;
		if (!pm_tensor(t[i]))
			continue;
		if (!pm_broadcast(shape, nd, t[i]->dims, t[i]->ndims, shape, &nd))
			PM_FAIL("shapes do not broadcast");
		if (!first)
			first = t[i];
		if (!compute && t[i]->ndims > 0 && pm_is_float(perfmodel_dtype_of(t[i]->dtype)))
			compute = t[i];
		rd = pm_add(x, rd, pm_bytes(x, t[i]));
		nt++;
	}
	if (!nt)
		PM_FAIL("no tensor operand");
	unsigned bpe;
	if (!pm_dtype(x, compute ? compute : first, &bpe))
		return;
	uint64_t n = pm_prod(x, shape, nd);
	if (pm_inplace(x)) {
		if (!pm_tensor(t[0]))
			PM_FAIL("in-place operand is not a tensor");
		if (pm_numel(x, t[0]) != n)
			PM_FAIL("in-place operand smaller than the broadcast shape");
		bpe = perfmodel_dtype_bytes(t[0]->dtype);
	} else if (x->op->f & PM_F_BOOL_OUT) {
		bpe = 1;
	} else if (!pm_ew_out_bpe(x, &bpe)) {
		return;
	}
	pm_set(x, PERFMODEL_ELEMENTWISE, pm_mul(x, n, x->op->k), rd, pm_mul(x, n, bpe));
}

/* copy_ [dst, src, non_blocking]: src (broadcast) read, dst written; no FLOPs. */
static void m_copy(struct pm_ctx *x)
{
	const struct perfmodel_input *dst = pm_in(x, 0), *src = pm_in(x, 1);
	unsigned bpe;
	if (!pm_tensor(dst) || !pm_tensor(src))
		PM_FAIL("copy operands are not tensors");
	if (!pm_dtype(x, src, &bpe))
		return;
	pm_set(x, PERFMODEL_ELEMENTWISE, 0, pm_bytes(x, src), pm_bytes(x, dst));
}

/* clone [x, memory_format] and fill-like ops (k 1: fill_, zero_: written only): a copy. */
static void m_clone(struct pm_ctx *x)
{
	const struct perfmodel_input *in = pm_in(x, 0);
	unsigned bpe;
	if (!pm_tensor(in))
		PM_FAIL("operand is not a tensor");
	if (!pm_dtype(x, in, &bpe))
		return;
	uint64_t b = pm_bytes(x, in);
	pm_set(x, PERFMODEL_ELEMENTWISE, 0, x->op->k ? 0 : b, b);
}

/* contiguous copies only when its input is not contiguous, which the trace does not say;
 * when it does, the copy is its aten::clone child, modelled. */
static void m_contiguous(struct pm_ctx *x)
{
	PM_FAIL("contiguous copies only when needed (its aten::clone child is modelled)");
}

/* c10::ScalarType codes, as a concrete dtype argument writes them ("6": float). */
static const char *pm_scalar_type(int64_t code)
{
	static const char *const names[] = {
		"unsigned char",
		"signed char",
		"short int",
		"int",
		"long int",
		"c10::Half",
		"float",
		"double",
		NULL,
		NULL,
		NULL,
		"bool",
		NULL,
		NULL,
		NULL,
		"c10::BFloat16",
		NULL,
		NULL,
		NULL,
		NULL,
		NULL,
		NULL,
		NULL,
		"c10::Float8_e5m2",
		"c10::Float8_e4m3fn",
	};
	return code >= 0 && code < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[code] : NULL;
}

/* _to_copy [x, dtype, ...] and to (the overload told by the number of inputs: 5 to.dtype,
 * 6 to.device, 8 to.dtype_layout): a conversion; aten::to is modelled only where the dtype
 * changes (else it may return its input untouched). a[0]: dtype position of _to_copy. */
static void m_to(struct pm_ctx *x)
{
	const struct perfmodel_input *in = pm_in(x, 0);
	int pos = x->op->a[0];
	bool is_to = pos < 0;
	if (is_to)
		pos = x->c->ninputs == 6 ? 2 : x->c->ninputs == 5 || x->c->ninputs == 8 ? 1 : -1;
	unsigned bpe;
	if (!pm_tensor(in))
		PM_FAIL("operand is not a tensor");
	if (!pm_dtype(x, in, &bpe))
		return;
	const char *t = pm_val(x, pos);
	const char *to = in->dtype;
	int64_t code;
	if (t) {
		if (!pm_parse_i64(t, &code) || !(to = pm_scalar_type(code)))
			PM_FAIL("unknown target dtype");
	} else if (!pm_none(x, pos)) {
		PM_FAIL("target dtype not recorded");
	}
	if (is_to && perfmodel_dtype_bytes(to) == bpe &&
	    perfmodel_dtype_of(to) == perfmodel_dtype_of(in->dtype))
		PM_FAIL("aten::to without a dtype change (a no-op or a device copy)");
	uint64_t n = pm_numel(x, in);
	pm_set(x, PERFMODEL_ELEMENTWISE, 0, pm_bytes(x, in),
	       pm_mul(x, n, perfmodel_dtype_bytes(to)));
}

/* foreach and fused optimizer ops: a[0..3] the TensorList inputs read (-1: none), k FLOPs
 * per element of the first list; in place: the first list is written (fused optimizers: a[4]
 * and a[5] more lists written: exp_avg, exp_avg_sq). Out of place: a new list written. */
static void m_foreach(struct pm_ctx *x)
{
	const struct perfmodel_input *l0 = pm_in(x, x->op->a[0]);
	if (!l0 || l0->ndims != PERFMODEL_TENSOR_LIST)
		PM_FAIL("tensor list sizes not recorded");
	unsigned bpe;
	if (!pm_dtype(x, l0, &bpe))
		PM_FAIL("dtype of the tensor list not recorded");
	uint64_t rd = 0, wr = 0;
	for (int i = 0; i < 4 && !(x->op->f & PM_F_NOREAD); i++) {
		const struct perfmodel_input *l = x->op->a[i] >= 0 ? pm_in(x, x->op->a[i]) : NULL;
		if (!l || l->ndims != PERFMODEL_TENSOR_LIST)
			continue; /* a scalar or ScalarList operand */
		unsigned b = perfmodel_dtype_bytes(l->dtype);
		if (!b)
			PM_FAIL("dtype of the tensor list not recorded");
		if (l->list_len != l0->list_len)
			PM_FAIL("tensor lists of different lengths");
		rd = pm_add(x, rd, pm_mul(x, l->list_numel, b));
	}
	uint64_t n = l0->list_numel;
	wr = pm_mul(x, n, bpe);
	for (int i = 4; i < 6; i++) {
		const struct perfmodel_input *l = x->op->a[i] >= 0 ? pm_in(x, x->op->a[i]) : NULL;
		if (l && l->ndims == PERFMODEL_TENSOR_LIST)
			wr = pm_add(x, wr, pm_mul(x, l->list_numel, bpe));
	}
	pm_set(x, PERFMODEL_ELEMENTWISE, pm_mul(x, n, x->op->k), rd, wr);
}

/* ------------------------------------------------------------------------------------------ */
/* Reductions, softmax, pooling */

/* The output's bytes per element given by argument pos (a dtype code in Concrete Inputs, or
 * an out= tensor), def when it is None. False (the call failed) when it was not recorded. */
static bool pm_out_bpe(struct pm_ctx *x, int pos, const struct perfmodel_input *in, unsigned def,
		       unsigned *obpe)
{
	const struct perfmodel_input *arg = pm_in(x, pos);
	const char *t = pm_val(x, pos);
	int64_t code;
	const char *name;
	*obpe = def;
	if (!arg || arg == in || pm_none(x, pos))
		return true;
	if (arg->ndims > 0 || pm_tensor(arg)) { /* an out= tensor */
		*obpe = perfmodel_dtype_bytes(arg->dtype);
		return *obpe || pm_fail(x, "unknown dtype");
	}
	if (!t)
		return pm_fail(x, "output dtype not recorded");
	if (!pm_parse_i64(t, &code) || !(name = pm_scalar_type(code)))
		return pm_fail(x, "unknown target dtype");
	*obpe = perfmodel_dtype_bytes(name);
	return true;
}

/* Reduction of input a[0] over the dims at a[1] (-1: the op reduces everything; an int or a
 * list; None: everything), read only when an argument follows it (sum(x, dtype) and
 * sum(x, dim, keepdim, dtype) are told apart by their count). k FLOPs per input element.
 * Output elements: the dims not reduced (keepdim does not change the count); a[2] 1:
 * cumulative (one output per input). PM_F_INDICES: max/min over a dim also write int64
 * indices. */
static void m_reduce(struct pm_ctx *x)
{
	const struct perfmodel_input *in = pm_in(x, x->op->a[0]);
	unsigned bpe;
	if ((x->op->f & PM_F_INDICES) && pm_tensor(pm_in(x, 1)) && pm_in(x, 1)->ndims > 0) {
		/* max(a, b), min(a, b): elementwise */
		static const struct pm_op binary = { "max/min", m_ew, { 0, 1, -1 }, 1, 0 };
		x->op = &binary;
		m_ew(x);
		return;
	}
	if (!pm_tensor(in))
		PM_FAIL("operand is not a tensor");
	if (!pm_dtype(x, in, &bpe))
		return;
	uint64_t n = pm_numel(x, in), out_n = 1;
	int pos = x->op->a[1];
	bool indices = (x->op->f & PM_F_INDICES) != 0;
	if (x->op->a[2] == 1) { /* cumsum, cumprod: one output per input */
		out_n = n;
	} else if (pos >= 0 && pos + 1 < x->c->ninputs && !pm_none(x, pos)) {
		const char *t = pm_val(x, pos);
		int64_t dims[PERFMODEL_MAX_DIMS];
		int nd;
		if (!t) {
			if (x->c->out_ndims < 0)
				PM_FAIL("reduced dimensions not recorded");
			out_n = pm_prod(x, x->c->out_dims, x->c->out_ndims);
		} else {
			if (!pm_parse_ilist(t, dims, PERFMODEL_MAX_DIMS, &nd))
				PM_FAIL("reduced dimensions do not parse");
			bool red[PERFMODEL_MAX_DIMS] = { false };
			for (int i = 0; i < nd; i++) {
				int64_t d = dims[i] < 0 ? dims[i] + in->ndims : dims[i];
				if (d < 0 || d >= (in->ndims ? in->ndims : 1))
					PM_FAIL("reduced dimension out of range");
				if (in->ndims)
					red[d] = true;
			}
			for (int d = 0; d < in->ndims; d++)
				if (!red[d] && nd > 0)
					out_n = pm_mul(x, out_n, (uint64_t)in->dims[d]);
		}
	} else {
		indices = false; /* max(x), min(x): the value only */
	}
	unsigned obpe = bpe;
	uint16_t f = x->op->f;
	if ((f & PM_F_INT_TO_LONG) && !pm_is_float(perfmodel_dtype_of(in->dtype)))
		obpe = 8;
	if ((f & PM_F_DTYPE_LAST) && x->c->ninputs > 1 &&
	    !pm_out_bpe(x, x->c->ninputs - 1, in, obpe, &obpe))
		return;
	if (f & PM_F_LONG_OUT)
		obpe = 8;
	if (f & PM_F_BOOL_OUT)
		obpe = 1;
	uint64_t wr = pm_mul(x, out_n, obpe);
	if (indices)
		wr = pm_add(x, wr, pm_mul(x, out_n, 8));
	pm_set(x, PERFMODEL_REDUCTION, pm_mul(x, n, x->op->k), pm_bytes(x, in), wr);
}

/* softmax / log_softmax [x, dim, half_to_float or dtype]: k FLOPs per element; backward
 * [grad_output, output, dim, ...] reads two tensors. half_to_float (a[1]) writes float. */
static void m_softmax(struct pm_ctx *x)
{
	bool bwd = (x->op->f & PM_F_BACKWARD) != 0;
	const struct perfmodel_input *in = pm_in(x, 0), *y = bwd ? pm_in(x, 1) : NULL;
	unsigned bpe;
	if (!pm_tensor(in) || (bwd && !pm_tensor(y)))
		PM_FAIL("operand is not a tensor");
	if (!pm_dtype(x, in, &bpe))
		return;
	uint64_t n = pm_numel(x, in), rd = pm_bytes(x, in);
	if (bwd) {
		if (pm_numel(x, y) != n)
			PM_FAIL("softmax backward operands differ in size");
		rd = pm_add(x, rd, pm_bytes(x, y));
	}
	unsigned obpe = bpe;
	const char *h = pm_val(x, x->op->a[1]);
	bool half_to_float = false;
	if (h && pm_parse_bool(h, &half_to_float) && half_to_float)
		obpe = 4;
	if (x->op->a[2] >= 0 && !pm_out_bpe(x, x->op->a[2], in, bpe, &obpe))
		return;
	pm_set(x, PERFMODEL_REDUCTION, pm_mul(x, n, x->op->k), rd, pm_mul(x, n, obpe));
}

/* The output sizes of one pooled dimension: exact window elements summed over its outputs
 * for adaptive pooling (windows [floor(i·in/out), ceil((i+1)·in/out)) ). */
static uint64_t pm_adaptive_sum(int64_t in, int64_t out)
{
	uint64_t s = 0;
	for (int64_t i = 0; i < out; i++) {
		int64_t start = (i * in) / out, end = ((i + 1) * in + out - 1) / out;
		s += (uint64_t)(end - start);
	}
	return s;
}

/* Pooling, forward or backward. Forward a = {x, kernel, stride, padding, dilation,
 * ceil_mode, output_size (adaptive)}; backward a = {grad_output, x, kernel, stride, padding,
 * dilation, ceil_mode, indices}. k spatial dims. FLOPs: one per window element (comparison
 * or addition), max pooling's backward one per output gradient; bytes: x read, output (+
 * int64 indices) written; backward: grad_output (and indices) read, grad_input written. */
static void m_pool(struct pm_ctx *x)
{
	const int8_t *a = x->op->a;
	bool bwd = (x->op->f & PM_F_BACKWARD) != 0;
	const struct perfmodel_input *in = pm_in(x, bwd ? a[1] : a[0]);
	const struct perfmodel_input *go = bwd ? pm_in(x, a[0]) : NULL;
	int nsp = x->op->k;
	unsigned bpe;
	if (!pm_tensor(in) || in->ndims < nsp + 1 || in->ndims > nsp + 2 || (bwd && !pm_tensor(go)))
		PM_FAIL("pooling operand has the wrong shape");
	if (!pm_dtype(x, in, &bpe))
		return;
	int off = in->ndims - nsp;
	uint64_t lead = pm_prod(x, in->dims, off);
	int64_t osp[PERFMODEL_MAX_DIMS];
	uint64_t windows = 1; /* window elements, summed over outputs, per (N, C) */
	if (x->op->f & PM_F_ADAPTIVE) {
		const char *t = bwd ? NULL : pm_val(x, a[6]);
		int n;
		if (bwd) {
			if (go->ndims != in->ndims)
				PM_FAIL("pooling operand has the wrong shape");
			memcpy(osp, go->dims + off, sizeof(osp[0]) * (size_t)nsp);
		} else if (t) {
			if (!pm_parse_ilist(t, osp, PERFMODEL_MAX_DIMS, &n) || (n != 1 && n != nsp))
				PM_FAIL("output_size does not parse");
			for (int i = n; i < nsp; i++)
				osp[i] = osp[0];
		} else if (x->c->out_ndims == in->ndims) {
			memcpy(osp, x->c->out_dims + off, sizeof(osp[0]) * (size_t)nsp);
		} else {
			PM_FAIL("output_size not recorded");
		}
		for (int i = 0; i < nsp; i++) {
			/* the windows are summed one output at a time: at most 2^20 of them */
			if (osp[i] < 1 || osp[i] > (1 << 20) || in->dims[off + i] > INT32_MAX)
				PM_FAIL("output_size out of range");
			windows = pm_mul(x, windows, pm_adaptive_sum(in->dims[off + i], osp[i]));
		}
	} else if (bwd && !(x->op->f & PM_F_AVG)) {
		/* max pooling backward: each output gradient added to the one input its index
		 * names: one FLOP per output, no kernel size needed */
		if (go->ndims != in->ndims)
			PM_FAIL("pooling operand has the wrong shape");
		memcpy(osp, go->dims + off, sizeof(osp[0]) * (size_t)nsp);
		windows = pm_prod(x, osp, nsp);
	} else {
		int64_t k[PERFMODEL_MAX_DIMS], st[PERFMODEL_MAX_DIMS], pad[PERFMODEL_MAX_DIMS],
			dil[PERFMODEL_MAX_DIMS];
		int ki = bwd ? 2 : 1;
		const char *kt = pm_val(x, a[ki]);
		int n;
		if (!kt)
			PM_FAIL("kernel size not recorded");
		if (!pm_parse_ilist(kt, k, PERFMODEL_MAX_DIMS, &n) || (n != 1 && n != nsp))
			PM_FAIL("kernel size does not parse");
		for (int i = n; i < nsp; i++)
			k[i] = k[0];
		bool known = true;
		const char *stt = pm_val(x, a[ki + 1]);
		if (stt && pm_parse_ilist(stt, st, PERFMODEL_MAX_DIMS, &n) && n == 0) {
			memcpy(st, k, sizeof(st)); /* stride [] defaults to the kernel size */
		} else if (!pm_spatial_arg(x, a[ki + 1], nsp, 1, st, &known)) {
			PM_FAIL("pooling arguments do not parse");
		}
		if (!pm_spatial_arg(x, a[ki + 2], nsp, 0, pad, &known) ||
		    !pm_spatial_arg(x, a[ki + 3], nsp, 1, dil, &known))
			PM_FAIL("pooling arguments do not parse");
		bool ceil_mode = false;
		const char *ct = pm_val(x, a[ki + 4]);
		if (a[ki + 4] >= 0 && !(ct && pm_parse_bool(ct, &ceil_mode)))
			known = false;
		for (int i = 0; i < nsp; i++) {
			if (k[i] < 1 || k[i] > INT32_MAX ||
			    (known && (st[i] < 1 || st[i] > INT32_MAX || pad[i] < 0 ||
				       pad[i] > INT32_MAX || dil[i] < 1 || dil[i] > INT32_MAX)))
				PM_FAIL("pooling arguments out of range");
			windows = pm_mul(x, windows, (uint64_t)k[i]);
		}
		if (bwd) {
			if (go->ndims != in->ndims)
				PM_FAIL("pooling operand has the wrong shape");
			memcpy(osp, go->dims + off, sizeof(osp[0]) * (size_t)nsp);
		} else if (known) {
			for (int i = 0; i < nsp; i++) {
				int64_t span =
					in->dims[off + i] + 2 * pad[i] - dil[i] * (k[i] - 1) - 1;
				if (span < 0 || in->dims[off + i] > INT32_MAX)
					PM_FAIL("pooling output would be empty");
				osp[i] = (span + (ceil_mode ? st[i] - 1 : 0)) / st[i] + 1;
				/* ceil mode: the last window must start inside the input or left
				 * padding */
				if (ceil_mode && (osp[i] - 1) * st[i] >= in->dims[off + i] + pad[i])
					osp[i]--;
			}
		} else if (x->c->out_ndims == in->ndims) {
			memcpy(osp, x->c->out_dims + off, sizeof(osp[0]) * (size_t)nsp);
		} else {
			PM_FAIL("stride/padding not recorded");
		}
		for (int i = 0; i < nsp; i++)
			if (osp[i] < 1)
				PM_FAIL("pooling output would be empty");
		windows = pm_mul(x, windows, pm_prod(x, osp, nsp));
	}
	uint64_t out_n = pm_mul(x, lead, pm_prod(x, osp, nsp));
	uint64_t flops = pm_mul(x, lead, windows);
	uint64_t in_b = pm_bytes(x, in), out_b = pm_mul(x, out_n, bpe);
	uint64_t idx_b = (x->op->f & PM_F_INDICES) ? pm_mul(x, out_n, 8) : 0;
	if (bwd) {
		if (pm_numel(x, go) != out_n)
			PM_FAIL("pooling backward operands do not match");
		pm_set(x, PERFMODEL_REDUCTION, flops, pm_add(x, out_b, idx_b), in_b);
	} else {
		pm_set(x, PERFMODEL_REDUCTION, flops, in_b, pm_add(x, out_b, idx_b));
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Normalization: TraceLens's FLOP counts (docs/flops.md), bytes tensor by tensor. */

/* Forward FLOPs: 6C + 2N + 3N·[training] (statistics, normalize, affine). */
static uint64_t pm_norm_fwd_flops(struct pm_ctx *x, uint64_t c, uint64_t n, bool training)
{
	return pm_add(x, pm_add(x, pm_mul(x, c, 6), pm_mul(x, n, 2)),
		      training ? pm_mul(x, n, 3) : 0);
}

/* Backward FLOPs, E = N/C: C·(3·[!training] + 4E + 5E·[dx & training] + 2E·[!dx]). */
static uint64_t pm_norm_bwd_flops(struct pm_ctx *x, uint64_t c, uint64_t n, bool training, bool dx)
{
	uint64_t f = pm_add(x, training ? 0 : pm_mul(x, c, 3), pm_mul(x, n, 4));
	if (dx && training)
		f = pm_add(x, f, pm_mul(x, n, 5));
	if (!dx)
		f = pm_add(x, f, pm_mul(x, n, 2));
	return f;
}

/* Bytes of the tensors at positions a[from..to) that are present. */
static uint64_t pm_bytes_at(struct pm_ctx *x, const int8_t *pos, int from, int to)
{
	uint64_t b = 0;
	for (int i = from; i < to; i++)
		if (pos[i] >= 0)
			b = pm_add(x, b, pm_bytes(x, pm_in(x, pos[i])));
	return b;
}

/* Layer norm forward: a = {x, normalized_shape, weight, bias}; k 1: native_layer_norm (also
 * writes mean and rstd, one per row). C = Π normalized_shape (from the concrete value, else
 * from the weight's shape). */
static void m_layer_norm(struct pm_ctx *x)
{
	const int8_t *a = x->op->a;
	const struct perfmodel_input *in = pm_in(x, a[0]), *w = pm_in(x, a[2]);
	unsigned bpe;
	if (!pm_tensor(in))
		PM_FAIL("operand is not a tensor");
	if (!pm_dtype(x, in, &bpe))
		return;
	int64_t ns[PERFMODEL_MAX_DIMS];
	int nns;
	const char *t = pm_val(x, a[1]);
	if (t) {
		if (!pm_parse_ilist(t, ns, PERFMODEL_MAX_DIMS, &nns))
			PM_FAIL("normalized_shape does not parse");
	} else if (pm_tensor(w) && w->ndims > 0) {
		nns = w->ndims;
		memcpy(ns, w->dims, sizeof(ns));
	} else {
		PM_FAIL("normalized_shape not recorded");
	}
	if (nns < 1 || nns > in->ndims)
		PM_FAIL("normalized_shape does not match the input");
	for (int i = 0; i < nns; i++)
		if (ns[i] != in->dims[in->ndims - nns + i])
			PM_FAIL("normalized_shape does not match the input");
	uint64_t n = pm_numel(x, in), c = pm_prod(x, ns, nns);
	uint64_t rows = c ? n / c : 0;
	uint64_t rd = pm_add(x, pm_bytes(x, in), pm_bytes_at(x, a, 2, 4));
	uint64_t wr = pm_mul(x, n, bpe);
	if (x->op->k) /* mean and rstd, float for half inputs: the input's dtype here */
		wr = pm_add(x, wr, pm_mul(x, pm_mul(x, rows, 2), bpe));
	pm_set(x, PERFMODEL_NORMALIZATION, pm_norm_fwd_flops(x, c, n, true), rd, wr);
}

/* native_layer_norm_backward [grad_out, input, normalized_shape, mean, rstd, weight, bias,
 * output_mask]: reads grad_out, input, mean, rstd, weight; writes dx, dweight, dbias as
 * output_mask asks (all three when not recorded). */
static void m_layer_norm_bwd(struct pm_ctx *x)
{
	const struct perfmodel_input *go = pm_in(x, 0), *in = pm_in(x, 1), *w = pm_in(x, 5),
				     *bias = pm_in(x, 6), *mean = pm_in(x, 3);
	unsigned bpe;
	if (!pm_tensor(go) || !pm_tensor(in) || !pm_tensor(mean))
		PM_FAIL("operand is not a tensor");
	if (!pm_dtype(x, in, &bpe))
		return;
	uint64_t n = pm_numel(x, in), rows = pm_numel(x, mean);
	if (rows == 0 || n % rows)
		PM_FAIL("mean does not match the input");
	uint64_t c = n / rows;
	bool mask[3] = { true, pm_tensor(w), pm_tensor(bias) };
	const char *mt = pm_val(x, 7);
	if (mt && !pm_parse_blist(mt, mask, 3))
		PM_FAIL("output_mask does not parse");
	uint64_t rd = pm_add(x, pm_add(x, pm_bytes(x, go), pm_bytes(x, in)),
			     pm_add(x, pm_bytes(x, mean), pm_bytes(x, pm_in(x, 4))));
	rd = pm_add(x, rd, pm_bytes(x, w));
	uint64_t wr = mask[0] ? pm_mul(x, n, bpe) : 0;
	for (int i = 1; i < 3; i++)
		if (mask[i])
			wr = pm_add(x, wr, pm_mul(x, c, bpe));
	pm_set(x, PERFMODEL_NORMALIZATION, pm_norm_bwd_flops(x, c, n, true, mask[0]), rd, wr);
}

/* Batch norm forward: a = {x, weight, bias, running_mean, running_var, training}; C =
 * x.shape[1]. Training: reads x, weight, bias, updates the running statistics (read and
 * written), writes y and the saved mean and invstd; inference: reads x, weight, bias and the
 * running statistics, writes y. */
static void m_batch_norm(struct pm_ctx *x)
{
	const int8_t *a = x->op->a;
	const struct perfmodel_input *in = pm_in(x, a[0]);
	unsigned bpe;
	bool training;
	const char *t = pm_val(x, a[5]);
	if (!pm_tensor(in) || in->ndims < 2)
		PM_FAIL("operand is not a tensor of at least 2 dimensions");
	if (!pm_dtype(x, in, &bpe))
		return;
	if (!t || !pm_parse_bool(t, &training))
		PM_FAIL("training flag not recorded");
	uint64_t n = pm_numel(x, in), c = (uint64_t)in->dims[1];
	uint64_t stats = pm_bytes_at(x, a, 3, 5);
	uint64_t rd = pm_add(x, pm_add(x, pm_bytes(x, in), pm_bytes_at(x, a, 1, 3)), stats);
	uint64_t wr = pm_mul(x, n, bpe);
	if (training) {
		wr = pm_add(x, wr, stats);
		wr = pm_add(x, wr, pm_mul(x, pm_mul(x, c, 2), bpe));
	}
	pm_set(x, PERFMODEL_NORMALIZATION, pm_norm_fwd_flops(x, c, n, training), rd, wr);
}

/* Batch norm backward: a = {grad_out, x, weight, save_mean, save_invstd, training,
 * output_mask}; training -1: always (cudnn). Reads grad_out, x, weight, the saved
 * statistics; writes dx, dweight, dbias as output_mask asks (all three when absent). */
static void m_batch_norm_bwd(struct pm_ctx *x)
{
	const int8_t *a = x->op->a;
	const struct perfmodel_input *go = pm_in(x, a[0]), *in = pm_in(x, a[1]);
	unsigned bpe;
	bool training = true;
	if (!pm_tensor(go) || !pm_tensor(in) || in->ndims < 2)
		PM_FAIL("operand is not a tensor of at least 2 dimensions");
	if (!pm_dtype(x, in, &bpe))
		return;
	if (a[5] >= 0) {
		const char *t = pm_val(x, a[5]);
		if (!t || !pm_parse_bool(t, &training))
			PM_FAIL("training flag not recorded");
	}
	bool mask[3] = { true, true, true };
	const char *mt = pm_val(x, a[6]);
	if (mt && !pm_parse_blist(mt, mask, 3))
		PM_FAIL("output_mask does not parse");
	uint64_t n = pm_numel(x, in), c = (uint64_t)in->dims[1];
	uint64_t rd =
		pm_add(x, pm_add(x, pm_bytes(x, go), pm_bytes(x, in)), pm_bytes_at(x, a, 2, 5));
	uint64_t wr = mask[0] ? pm_mul(x, n, bpe) : 0;
	for (int i = 1; i < 3; i++)
		if (mask[i])
			wr = pm_add(x, wr, pm_mul(x, c, bpe));
	pm_set(x, PERFMODEL_NORMALIZATION, pm_norm_bwd_flops(x, c, n, training, mask[0]), rd, wr);
}

/* Group norm: a = {x, weight, bias, groups}; native_group_norm writes mean and rstd (N·G
 * each; k 1). C = x.shape[1]; counted as normalization with statistics (training). */
static void m_group_norm(struct pm_ctx *x)
{
	const int8_t *a = x->op->a;
	const struct perfmodel_input *in = pm_in(x, a[0]);
	unsigned bpe;
	int64_t g;
	if (!pm_tensor(in) || in->ndims < 2)
		PM_FAIL("operand is not a tensor of at least 2 dimensions");
	if (!pm_dtype(x, in, &bpe))
		return;
	const char *t = pm_val(x, a[3]);
	if (!t || !pm_parse_i64(t, &g))
		PM_FAIL("num_groups not recorded");
	if (g < 1 || in->dims[1] % g)
		PM_FAIL("num_groups does not divide the channels");
	uint64_t n = pm_numel(x, in), c = (uint64_t)in->dims[1];
	uint64_t rd = pm_add(x, pm_bytes(x, in), pm_bytes_at(x, a, 1, 3));
	uint64_t wr = pm_mul(x, n, bpe);
	if (x->op->k)
		wr = pm_add(x, wr,
			    pm_mul(x, pm_mul(x, pm_mul(x, (uint64_t)in->dims[0], (uint64_t)g), 2),
				   bpe));
	pm_set(x, PERFMODEL_NORMALIZATION, pm_norm_fwd_flops(x, c, n, true), rd, wr);
}

/* native_group_norm_backward [grad_out, x, mean, rstd, weight, N, C, HxW, group,
 * output_mask]. */
static void m_group_norm_bwd(struct pm_ctx *x)
{
	const struct perfmodel_input *go = pm_in(x, 0), *in = pm_in(x, 1), *w = pm_in(x, 4);
	unsigned bpe;
	if (!pm_tensor(go) || !pm_tensor(in) || in->ndims < 2)
		PM_FAIL("operand is not a tensor of at least 2 dimensions");
	if (!pm_dtype(x, in, &bpe))
		return;
	bool mask[3] = { true, pm_tensor(w), pm_tensor(w) };
	const char *mt = pm_val(x, 9);
	if (mt && !pm_parse_blist(mt, mask, 3))
		PM_FAIL("output_mask does not parse");
	uint64_t n = pm_numel(x, in), c = (uint64_t)in->dims[1];
	uint64_t rd =
		pm_add(x, pm_add(x, pm_bytes(x, go), pm_bytes(x, in)),
		       pm_add(x, pm_add(x, pm_bytes(x, pm_in(x, 2)), pm_bytes(x, pm_in(x, 3))),
			      pm_bytes(x, w)));
	uint64_t wr = mask[0] ? pm_mul(x, n, bpe) : 0;
	for (int i = 1; i < 3; i++)
		if (mask[i])
			wr = pm_add(x, wr, pm_mul(x, c, bpe));
	pm_set(x, PERFMODEL_NORMALIZATION, pm_norm_bwd_flops(x, c, n, true, mask[0]), rd, wr);
}

/* ------------------------------------------------------------------------------------------ */
/* Embedding */

/* embedding [weight (V, D), indices, ...]: a gather, no FLOPs: indices read, and one row of D
 * per index read and written. */
static void m_embedding(struct pm_ctx *x)
{
	const struct perfmodel_input *w = pm_in(x, 0), *idx = pm_in(x, 1);
	unsigned bpe;
	if (!pm_tensor(w) || !pm_tensor(idx) || w->ndims != 2)
		PM_FAIL("embedding operands have the wrong shapes");
	if (!pm_dtype(x, w, &bpe))
		return;
	uint64_t rows = pm_mul(x, pm_mul(x, pm_numel(x, idx), (uint64_t)w->dims[1]), bpe);
	pm_set(x, PERFMODEL_OTHER, 0, pm_add(x, pm_bytes(x, idx), rows), rows);
	x->r->dtype = perfmodel_dtype_of(w->dtype);
}

/* embedding_backward / embedding_dense_backward [grad (..., D), indices, num_weights, ...]:
 * each grad row added into the weight gradient (numel(grad) FLOPs); grad and indices read,
 * the whole V x D gradient written (it is zeroed first). */
static void m_embedding_bwd(struct pm_ctx *x)
{
	const struct perfmodel_input *g = pm_in(x, 0), *idx = pm_in(x, 1);
	unsigned bpe;
	int64_t v;
	if (!pm_tensor(g) || !pm_tensor(idx) || g->ndims < 1)
		PM_FAIL("embedding operands have the wrong shapes");
	if (!pm_dtype(x, g, &bpe))
		return;
	const char *t = pm_val(x, 2);
	if (!t || !pm_parse_i64(t, &v) || v < 0)
		PM_FAIL("num_weights not recorded");
	uint64_t d = (uint64_t)g->dims[g->ndims - 1];
	uint64_t wr = pm_mul(x, pm_mul(x, (uint64_t)v, d), bpe);
	if (pm_mul(x, (uint64_t)v, d) > PM_MAX_ELEMS)
		PM_FAIL("tensor of more than 2^40 elements");
	pm_set(x, PERFMODEL_OTHER, pm_numel(x, g), pm_add(x, pm_bytes(x, g), pm_bytes(x, idx)), wr);
}

/* ------------------------------------------------------------------------------------------ */
/* The table. Positions: -1 where the operator has no such argument. */

#define A(...)              \
	{                   \
		__VA_ARGS__ \
	}
#define N1 (-1)
#define NOWORK(n)                    \
	{                            \
		n, NULL, A(N1), 0, 0 \
	}
/* elementwise over inputs p, q, r with k FLOPs per element */
#define EW(n, p, q, r, k, f)                                  \
	{                                                     \
		n, m_ew, A(p, q, r), k, (f) | PM_F_INPLACE_OK \
	}
#define UN(n, k) EW(n, 0, N1, N1, k, 0)
#define BIN(n)	 EW(n, 0, 1, N1, 1, 0)
#define CMP(n)	 EW(n, 0, 1, N1, 1, PM_F_BOOL_OUT)
#define RED(n, dim, k, f)                       \
	{                                       \
		n, m_reduce, A(0, dim, 0), k, f \
	}
/* foreach over lists p..s, writing lists t, u as well, k FLOPs per element */
#define FE(n, p, q, r, s, k)                                            \
	{                                                               \
		n, m_foreach, A(p, q, r, s, N1, N1), k, PM_F_INPLACE_OK \
	}
#define CONV(n, x_, w, b, st, pd, dl, tr, op, g, fl)                 \
	{                                                            \
		n, m_conv, A(x_, w, b, st, pd, dl, tr, op, g), 0, fl \
	}

static const struct pm_op pm_ops[] = {
	/* GEMM */
	{ "aten::mm", m_mm, A(N1, 0, 1), 0, 0 },
	{ "aten::addmm", m_mm, A(0, 1, 2), 0, 0 },
	{ "aten::bmm", m_bmm, A(N1, 0, 1), 0, 0 },
	{ "aten::baddbmm", m_bmm, A(0, 1, 2), 0, 0 },
	{ "aten::matmul", m_matmul, A(0, 1), 0, 0 },
	{ "aten::linear", m_linear, A(0, 1, 2), 0, 0 },
	{ "aten::einsum", m_einsum, A(0, 1), 0, 0 },
	/* Convolution forward: x, w, bias, stride, padding, dilation, transposed, output_padding,
	 * groups */
	CONV("aten::convolution", 0, 1, 2, 3, 4, 5, 6, 7, 8, 0),
	CONV("aten::_convolution", 0, 1, 2, 3, 4, 5, 6, 7, 8, 0),
	CONV("aten::convolution_overrideable", 0, 1, 2, 3, 4, 5, 6, 7, 8, 0),
	CONV("aten::conv1d", 0, 1, 2, 3, 4, 5, N1, N1, 6, 0),
	CONV("aten::conv2d", 0, 1, 2, 3, 4, 5, N1, N1, 6, 0),
	CONV("aten::conv3d", 0, 1, 2, 3, 4, 5, N1, N1, 6, 0),
	CONV("aten::conv_transpose1d", 0, 1, 2, 3, 4, 7, N1, 5, 6, PM_F_TRANSPOSED),
	CONV("aten::conv_transpose2d", 0, 1, 2, 3, 4, 7, N1, 5, 6, PM_F_TRANSPOSED),
	CONV("aten::conv_transpose3d", 0, 1, 2, 3, 4, 7, N1, 5, 6, PM_F_TRANSPOSED),
	CONV("aten::cudnn_convolution", 0, 1, N1, 3, 2, 4, N1, N1, 5, 0),
	CONV("aten::cudnn_convolution_transpose", 0, 1, N1, 4, 2, 5, N1, 3, 6, PM_F_TRANSPOSED),
	CONV("aten::miopen_convolution", 0, 1, 2, 4, 3, 5, N1, N1, 6, 0),
	CONV("aten::mkldnn_convolution", 0, 1, 2, 4, 3, 5, N1, N1, 6, 0),
	CONV("aten::_slow_conv2d_forward", 0, 1, 3, 4, 5, N1, N1, N1, N1, 0),
	/* Convolution backward: grad_output, input, weight, transposed, output_mask, sizes */
	{ "aten::convolution_backward", m_conv_bwd, A(0, 1, 2, 7, 10, N1), 0, 0 },
	{ "aten::cudnn_convolution_backward", m_conv_bwd, A(1, 0, 2, N1, 10, N1), 0, 0 },
	{ "aten::cudnn_convolution_backward_input", m_conv_bwd, A(1, N1, 2, N1, N1, 0), 1, 0 },
	{ "aten::cudnn_convolution_backward_weight", m_conv_bwd, A(1, 2, N1, N1, N1, 0), 2, 0 },
	/* Attention forward: q, k, v, is_causal, attn_mask, cum_seq_q; k 1: (B, N, H, d) */
	{ "aten::scaled_dot_product_attention", m_attn, A(0, 1, 2, 5, 3, N1), 0, 0 },
	{ "aten::_scaled_dot_product_flash_attention", m_attn, A(0, 1, 2, 4, N1, N1), 0, 0 },
	{ "aten::_scaled_dot_product_efficient_attention", m_attn, A(0, 1, 2, 6, 3, N1), 0, 0 },
	{ "aten::_scaled_dot_product_cudnn_attention", m_attn, A(0, 1, 2, 6, 3, N1), 0, 0 },
	{ "aten::_flash_attention_forward", m_attn, A(0, 1, 2, 8, N1, 3), 1, 0 },
	{ "flash_attn::_flash_attn_forward", m_attn, A(0, 1, 2, 5, N1, N1), 1, 0 },
	/* Attention backward: grad_out, q, k, v, out, is_causal, cum_seq_q */
	{ "aten::_scaled_dot_product_flash_attention_backward", m_attn_bwd, A(0, 1, 2, 3, 4, 11, 6),
	  0, 0 },
	{ "aten::_scaled_dot_product_efficient_attention_backward", m_attn_bwd,
	  A(0, 1, 2, 3, 5, 11, N1), 0, 0 },
	{ "aten::_flash_attention_backward", m_attn_bwd, A(0, 1, 2, 3, 4, 11, 6), 1, 0 },
	/* Elementwise, unary (1 FLOP per element; TraceLens's count) */
	UN("aten::abs", 1),
	UN("aten::neg", 1),
	UN("aten::relu", 1),
	UN("aten::sigmoid", 1),
	UN("aten::tanh", 1),
	UN("aten::exp", 1),
	UN("aten::log", 1),
	UN("aten::log2", 1),
	UN("aten::log1p", 1),
	UN("aten::expm1", 1),
	UN("aten::sqrt", 1),
	UN("aten::rsqrt", 1),
	UN("aten::reciprocal", 1),
	UN("aten::gelu", 1),
	UN("aten::silu", 1),
	UN("aten::mish", 1),
	UN("aten::hardswish", 1),
	UN("aten::hardsigmoid", 1),
	UN("aten::hardtanh", 1),
	UN("aten::leaky_relu", 1),
	UN("aten::elu", 1),
	UN("aten::selu", 1),
	UN("aten::softplus", 1),
	UN("aten::erf", 1),
	UN("aten::sin", 1),
	UN("aten::cos", 1),
	UN("aten::sign", 1),
	UN("aten::floor", 1),
	UN("aten::ceil", 1),
	UN("aten::round", 1),
	UN("aten::trunc", 1),
	EW("aten::clamp", 0, 1, 2, 1, 0),
	EW("aten::clamp_min", 0, 1, N1, 1, 0),
	EW("aten::clamp_max", 0, 1, N1, 1, 0),
	UN("aten::nan_to_num", 1),
	UN("aten::square", 1),
	UN("aten::logical_not", 1),
	UN("aten::bitwise_not", 1),
	EW("aten::isnan", 0, N1, N1, 1, PM_F_BOOL_OUT),
	EW("aten::isinf", 0, N1, N1, 1, PM_F_BOOL_OUT),
	UN("aten::threshold", 1),
	/* binary, broadcast */
	BIN("aten::add"),
	BIN("aten::sub"),
	BIN("aten::rsub"),
	BIN("aten::mul"),
	EW("aten::div", 0, 1, N1, 1, PM_F_TRUEDIV),
	BIN("aten::pow"),
	BIN("aten::maximum"),
	BIN("aten::minimum"),
	BIN("aten::fmod"),
	BIN("aten::remainder"),
	BIN("aten::atan2"),
	BIN("aten::bitwise_and"),
	BIN("aten::bitwise_or"),
	BIN("aten::bitwise_xor"),
	BIN("aten::sigmoid_backward"),
	BIN("aten::tanh_backward"),
	BIN("aten::threshold_backward"),
	BIN("aten::gelu_backward"),
	BIN("aten::silu_backward"),
	BIN("aten::hardtanh_backward"),
	BIN("aten::leaky_relu_backward"),
	BIN("aten::hardswish_backward"),
	BIN("aten::elu_backward"),
	BIN("aten::softplus_backward"),
	CMP("aten::eq"),
	CMP("aten::ne"),
	CMP("aten::lt"),
	CMP("aten::le"),
	CMP("aten::gt"),
	CMP("aten::ge"),
	CMP("aten::logical_and"),
	CMP("aten::logical_or"),
	CMP("aten::logical_xor"),
	/* ternary: addcmul/addcdiv/lerp 3 FLOPs per element (PyProf), where 1 */
	EW("aten::addcmul", 0, 1, 2, 3, 0),
	EW("aten::addcdiv", 0, 1, 2, 3, 0),
	EW("aten::lerp", 0, 1, 2, 3, 0),
	EW("aten::where", 1, 2, 0, 1, PM_F_COND),
	/* copies and conversions: no FLOPs */
	{ "aten::copy_", m_copy, A(N1), 0, 0 },
	{ "aten::clone", m_clone, A(N1), 0, 0 },
	{ "aten::contiguous", m_contiguous, A(N1), 0, 0 },
	{ "aten::fill_", m_clone, A(N1), 1, 0 },
	{ "aten::zero_", m_clone, A(N1), 1, 0 },
	{ "aten::_to_copy", m_to, A(1), 0, 0 },
	{ "aten::to", m_to, A(N1), 0, 0 },
	/* foreach: lists read, FLOPs per element */
	FE("aten::_foreach_add", 0, 1, N1, N1, 1),
	FE("aten::_foreach_sub", 0, 1, N1, N1, 1),
	FE("aten::_foreach_mul", 0, 1, N1, N1, 1),
	FE("aten::_foreach_div", 0, 1, N1, N1, 1),
	FE("aten::_foreach_maximum", 0, 1, N1, N1, 1),
	FE("aten::_foreach_sqrt", 0, N1, N1, N1, 1),
	FE("aten::_foreach_neg", 0, N1, N1, N1, 1),
	FE("aten::_foreach_abs", 0, N1, N1, N1, 1),
	FE("aten::_foreach_exp", 0, N1, N1, N1, 1),
	FE("aten::_foreach_reciprocal", 0, N1, N1, N1, 1),
	FE("aten::_foreach_sign", 0, N1, N1, N1, 1),
	FE("aten::_foreach_addcdiv", 0, 1, 2, N1, 3),
	FE("aten::_foreach_addcmul", 0, 1, 2, N1, 3),
	FE("aten::_foreach_lerp", 0, 1, N1, N1, 3),
	FE("aten::_foreach_copy", 1, N1, N1, N1, 0),
	{ "aten::_foreach_zero_", m_foreach, A(0, N1, N1, N1, N1, N1), 0, PM_F_NOREAD },
	/* fused optimizers [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
	 * ...]: params, grads, exp_avgs, exp_avg_sqs read; params, exp_avgs, exp_avg_sqs
	 * written; Adam's update 13 FLOPs per parameter, AdamW's 14 (docs/flops.md) */
	{ "aten::_fused_adam_", m_foreach, A(0, 1, 2, 3, 2, 3), 13, 0 },
	{ "aten::_fused_adamw_", m_foreach, A(0, 1, 2, 3, 2, 3), 14, 0 },
	{ "aten::_fused_adam", m_foreach, A(0, 1, 2, 3, 2, 3), 13, 0 },
	{ "aten::_fused_adamw", m_foreach, A(0, 1, 2, 3, 2, 3), 14, 0 },
	{ "aten::_fused_sgd_", m_foreach, A(0, 1, 2, N1, 2, N1), 4, 0 },
	/* reductions: dim position, FLOPs per input element */
	RED("aten::sum", 1, 1, PM_F_DTYPE_LAST | PM_F_INT_TO_LONG),
	RED("aten::mean", 1, 1, PM_F_DTYPE_LAST),
	RED("aten::prod", 1, 1, PM_F_DTYPE_LAST | PM_F_INT_TO_LONG),
	RED("aten::nansum", 1, 1, PM_F_DTYPE_LAST),
	RED("aten::max", 1, 1, PM_F_INDICES),
	RED("aten::min", 1, 1, PM_F_INDICES),
	RED("aten::amax", 1, 1, 0),
	RED("aten::amin", 1, 1, 0),
	RED("aten::argmax", 1, 1, PM_F_LONG_OUT),
	RED("aten::argmin", 1, 1, PM_F_LONG_OUT),
	RED("aten::any", 1, 1, PM_F_BOOL_OUT),
	RED("aten::all", 1, 1, PM_F_BOOL_OUT),
	RED("aten::norm", 2, 2, 0),
	RED("aten::linalg_vector_norm", 2, 2, PM_F_DTYPE_LAST),
	RED("aten::var", 1, 3, 0),
	RED("aten::std", 1, 3, 0),
	RED("aten::logsumexp", 1, 3, 0),
	{ "aten::cumsum", m_reduce, A(0, N1, 1), 1, PM_F_DTYPE_LAST | PM_F_INT_TO_LONG },
	{ "aten::cumprod", m_reduce, A(0, N1, 1), 1, PM_F_DTYPE_LAST | PM_F_INT_TO_LONG },
	/* softmax: 5 FLOPs per element forward (max, subtract, exp, sum, divide), 4 backward */
	{ "aten::_softmax", m_softmax, A(0, 2, N1), 5, 0 },
	{ "aten::softmax", m_softmax, A(0, N1, 2), 5, 0 },
	{ "aten::_log_softmax", m_softmax, A(0, 2, N1), 5, 0 },
	{ "aten::log_softmax", m_softmax, A(0, N1, 2), 5, 0 },
	{ "aten::_softmax_backward_data", m_softmax, A(0, N1, N1), 4, PM_F_BACKWARD },
	{ "aten::_log_softmax_backward_data", m_softmax, A(0, N1, N1), 4, PM_F_BACKWARD },
	/* pooling forward: x, kernel, stride, padding, dilation, ceil_mode, output_size */
	{ "aten::max_pool1d", m_pool, A(0, 1, 2, 3, 4, 5, N1), 1, 0 },
	{ "aten::max_pool2d", m_pool, A(0, 1, 2, 3, 4, 5, N1), 2, 0 },
	{ "aten::max_pool3d", m_pool, A(0, 1, 2, 3, 4, 5, N1), 3, 0 },
	{ "aten::max_pool1d_with_indices", m_pool, A(0, 1, 2, 3, 4, 5, N1), 1, PM_F_INDICES },
	{ "aten::max_pool2d_with_indices", m_pool, A(0, 1, 2, 3, 4, 5, N1), 2, PM_F_INDICES },
	{ "aten::max_pool3d_with_indices", m_pool, A(0, 1, 2, 3, 4, 5, N1), 3, PM_F_INDICES },
	{ "aten::avg_pool1d", m_pool, A(0, 1, 2, 3, N1, 4, N1), 1, PM_F_AVG },
	{ "aten::avg_pool2d", m_pool, A(0, 1, 2, 3, N1, 4, N1), 2, PM_F_AVG },
	{ "aten::avg_pool3d", m_pool, A(0, 1, 2, 3, N1, 4, N1), 3, PM_F_AVG },
	{ "aten::adaptive_avg_pool1d", m_pool, A(0, N1, N1, N1, N1, N1, 1), 1, PM_F_ADAPTIVE },
	{ "aten::adaptive_avg_pool2d", m_pool, A(0, N1, N1, N1, N1, N1, 1), 2, PM_F_ADAPTIVE },
	{ "aten::_adaptive_avg_pool2d", m_pool, A(0, N1, N1, N1, N1, N1, 1), 2, PM_F_ADAPTIVE },
	{ "aten::adaptive_avg_pool3d", m_pool, A(0, N1, N1, N1, N1, N1, 1), 3, PM_F_ADAPTIVE },
	{ "aten::_adaptive_avg_pool3d", m_pool, A(0, N1, N1, N1, N1, N1, 1), 3, PM_F_ADAPTIVE },
	{ "aten::adaptive_max_pool1d", m_pool, A(0, N1, N1, N1, N1, N1, 1), 1,
	  PM_F_ADAPTIVE | PM_F_INDICES },
	{ "aten::adaptive_max_pool2d", m_pool, A(0, N1, N1, N1, N1, N1, 1), 2,
	  PM_F_ADAPTIVE | PM_F_INDICES },
	{ "aten::adaptive_max_pool3d", m_pool, A(0, N1, N1, N1, N1, N1, 1), 3,
	  PM_F_ADAPTIVE | PM_F_INDICES },
	/* pooling backward: grad_output, x, kernel, stride, padding, dilation, ceil_mode */
	{ "aten::max_pool2d_with_indices_backward", m_pool, A(0, 1, 2, 3, 4, 5, 6), 2,
	  PM_F_BACKWARD | PM_F_INDICES },
	{ "aten::max_pool3d_with_indices_backward", m_pool, A(0, 1, 2, 3, 4, 5, 6), 3,
	  PM_F_BACKWARD | PM_F_INDICES },
	{ "aten::avg_pool2d_backward", m_pool, A(0, 1, 2, 3, 4, N1, 5), 2,
	  PM_F_BACKWARD | PM_F_AVG },
	{ "aten::avg_pool3d_backward", m_pool, A(0, 1, 2, 3, 4, N1, 5), 3,
	  PM_F_BACKWARD | PM_F_AVG },
	{ "aten::_adaptive_avg_pool2d_backward", m_pool, A(0, 1), 2,
	  PM_F_BACKWARD | PM_F_ADAPTIVE },
	{ "aten::_adaptive_avg_pool3d_backward", m_pool, A(0, 1), 3,
	  PM_F_BACKWARD | PM_F_ADAPTIVE },
	/* normalization */
	{ "aten::layer_norm", m_layer_norm, A(0, 1, 2, 3), 0, 0 },
	{ "aten::native_layer_norm", m_layer_norm, A(0, 1, 2, 3), 1, 0 },
	{ "aten::native_layer_norm_backward", m_layer_norm_bwd, A(N1), 0, 0 },
	/* batch norm: x, weight, bias, running_mean, running_var, training */
	{ "aten::batch_norm", m_batch_norm, A(0, 1, 2, 3, 4, 5), 0, 0 },
	{ "aten::_batch_norm_impl_index", m_batch_norm, A(0, 1, 2, 3, 4, 5), 0, 0 },
	{ "aten::native_batch_norm", m_batch_norm, A(0, 1, 2, 3, 4, 5), 0, 0 },
	{ "aten::cudnn_batch_norm", m_batch_norm, A(0, 1, 2, 3, 4, 5), 0, 0 },
	{ "aten::miopen_batch_norm", m_batch_norm, A(0, 1, 2, 3, 4, 5), 0, 0 },
	/* backward: grad_out, x, weight, save_mean, save_invstd, training, output_mask */
	{ "aten::native_batch_norm_backward", m_batch_norm_bwd, A(0, 1, 2, 5, 6, 7, 9), 0, 0 },
	{ "aten::cudnn_batch_norm_backward", m_batch_norm_bwd, A(1, 0, 2, 5, 6, N1, N1), 0, 0 },
	{ "aten::miopen_batch_norm_backward", m_batch_norm_bwd, A(1, 0, 2, 5, 6, N1, N1), 0, 0 },
	/* group norm: x, weight, bias, groups */
	{ "aten::group_norm", m_group_norm, A(0, 2, 3, 1), 0, 0 },
	{ "aten::native_group_norm", m_group_norm, A(0, 1, 2, 6), 1, 0 },
	{ "aten::native_group_norm_backward", m_group_norm_bwd, A(N1), 0, 0 },
	/* embedding */
	{ "aten::embedding", m_embedding, A(N1), 0, 0 },
	{ "aten::embedding_backward", m_embedding_bwd, A(N1), 0, 0 },
	{ "aten::embedding_dense_backward", m_embedding_bwd, A(N1), 0, 0 },
	/* no work: views, aliases, allocations, metadata */
	NOWORK("aten::view"),
	NOWORK("aten::_unsafe_view"),
	NOWORK("aten::view_as"),
	NOWORK("aten::reshape"),
	NOWORK("aten::_reshape_alias"),
	NOWORK("aten::t"),
	NOWORK("aten::t_"),
	NOWORK("aten::transpose"),
	NOWORK("aten::transpose_"),
	NOWORK("aten::permute"),
	NOWORK("aten::as_strided"),
	NOWORK("aten::as_strided_"),
	NOWORK("aten::empty"),
	NOWORK("aten::empty_like"),
	NOWORK("aten::empty_strided"),
	NOWORK("aten::new_empty"),
	NOWORK("aten::new_empty_strided"),
	NOWORK("aten::resize_"),
	NOWORK("aten::detach"),
	NOWORK("aten::detach_"),
	NOWORK("detach_"),
	NOWORK("aten::slice"),
	NOWORK("aten::select"),
	NOWORK("aten::unsqueeze"),
	NOWORK("aten::unsqueeze_"),
	NOWORK("aten::squeeze"),
	NOWORK("aten::squeeze_"),
	NOWORK("aten::flatten"),
	NOWORK("aten::unflatten"),
	NOWORK("aten::expand"),
	NOWORK("aten::expand_as"),
	NOWORK("aten::narrow"),
	NOWORK("aten::split"),
	NOWORK("aten::split_with_sizes"),
	NOWORK("aten::chunk"),
	NOWORK("aten::unbind"),
	NOWORK("aten::alias"),
	NOWORK("aten::lift_fresh"),
	NOWORK("aten::numpy_T"),
	NOWORK("aten::diagonal"),
	NOWORK("aten::movedim"),
	NOWORK("aten::swapaxes"),
	NOWORK("aten::unfold"),
	NOWORK("aten::set_"),
	NOWORK("aten::resolve_conj"),
	NOWORK("aten::resolve_neg"),
	NOWORK("aten::conj"),
	NOWORK("aten::is_same_size"),
	NOWORK("aten::result_type"),
	NOWORK("aten::size"),
	NOWORK("aten::stride"),
	NOWORK("aten::dim"),
	NOWORK("aten::numel"),
	NOWORK("aten::is_pinned"),
};

static const struct pm_op *pm_find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(pm_ops) / sizeof(pm_ops[0]); i++)
		if (strncmp(pm_ops[i].name, name, len) == 0 && pm_ops[i].name[len] == '\0')
			return &pm_ops[i];
	return NULL;
}

void perfmodel_eval(const struct perfmodel_call *call, struct perfmodel_result *out)
{
	memset(out, 0, sizeof(*out));
	struct pm_ctx x = { .c = call, .r = out };
	size_t len = call->name ? strlen(call->name) : 0;
	x.op = len ? pm_find(call->name, len) : NULL;
	if (!x.op && len > 1 && call->name[len - 1] == '_') {
		x.op = pm_find(call->name, len - 1);
		if (x.op && !(x.op->f & PM_F_INPLACE_OK))
			x.op = NULL;
		x.inplace = x.op != NULL;
	}
	if (!x.op) {
		out->reason = PM_REASON_NO_MODEL;
		return;
	}
	if (!x.op->fn) {
		out->reason = PM_REASON_NO_WORK;
		return;
	}
	if (call->ninputs < 0 || call->ninputs > PERFMODEL_MAX_INPUTS) {
		out->reason = "too many inputs";
		return;
	}
	/* Every tensor's dimensions, before any model multiplies them. */
	for (int i = 0; i < call->ninputs; i++) {
		const struct perfmodel_input *in = &call->in[i];
		if (in->ndims == PERFMODEL_TENSOR_LIST) {
			if (in->list_numel > PM_MAX_ELEMS) {
				out->reason = "tensor list of more than 2^40 elements";
				return;
			}
			continue;
		}
		if (in->ndims < 0 || in->ndims > PERFMODEL_MAX_DIMS) {
			out->reason = "bad number of dimensions";
			return;
		}
		uint64_t n = 1;
		for (int d = 0; d < in->ndims; d++) {
			if (in->dims[d] < 0) {
				out->reason = "negative dimension";
				return;
			}
			if (in->dims[d] && n > PM_MAX_ELEMS / (uint64_t)in->dims[d]) {
				out->reason = "tensor of more than 2^40 elements";
				return;
			}
			n *= (uint64_t)in->dims[d];
		}
		if (!in->dtype) {
			out->reason = "input type missing";
			return;
		}
	}
	if (call->out_ndims > PERFMODEL_MAX_DIMS) {
		out->reason = "too many dimensions";
		return;
	}
	for (int d = 0; d < call->out_ndims; d++) {
		if (call->out_dims[d] < 0 || call->out_dims[d] > (int64_t)PM_MAX_ELEMS) {
			out->reason = "output hint out of range";
			return;
		}
	}
	x.op->fn(&x);
	if (x.ovf) {
		memset(out, 0, sizeof(*out));
		out->reason = "a count overflows 64 bits";
		return;
	}
	if (x.baddt && out->category != PERFMODEL_NONE) {
		memset(out, 0, sizeof(*out));
		out->reason = "unknown dtype";
		return;
	}
	if (out->category == PERFMODEL_NONE) {
		const char *why = out->reason ? out->reason : PM_REASON_NO_MODEL;
		memset(out, 0, sizeof(*out));
		out->reason = why;
	}
}
