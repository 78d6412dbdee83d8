/*
 * observer.cpp: PyTorch operators as opscope ranges, through a global RecordFunction callback
 * (the cheapest way to get every operator with its input shapes and dtypes in torch 1.13:
 * ../shared/FINDINGS-collectors.md §4.5). A thin C++ adapter with the C ABI of torch_api.h;
 * built only where Debian's libtorch-dev headers exist.
 *
 * Start callback: a range begins (category by scope and name, as the Kineto importer maps
 * them), then its arguments. End callback: the range ends. RecordFunction runs both on the
 * operator's thread, nested, so the ranges nest like the calls. Names are interned by content
 * by the runtime (backward names are temporaries). Shapes are written into stack buffers; the
 * one allocation per recorded call is the empty context that tells the end callback this call
 * opened a range (recording may start or stop between the two callbacks).
 */
#include <ATen/record_function.h>
#include <ATen/core/ivalue.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collect/torch/torch_api.h"

namespace {

/* enum opscope_category values (include/opscope/opscope.h) */
constexpr int CAT_OPERATOR = 0, CAT_DATALOADER = 1, CAT_PROFILE_STEP = 2, CAT_OPTIMIZATION = 11,
	      CAT_BACKWARD = 10, CAT_PYTHON_USER_DEFINED = 14;

opscope_torch_api api;
bool with_shapes;
at::CallbackHandle handle;
std::atomic<bool> enabled{ false };
std::atomic<uint64_t> ops{ 0 };

bool recording()
{
	return (__atomic_load_n(api.word, __ATOMIC_RELAXED) & 1) != 0;
}

bool starts(const char *s, const char *prefix)
{
	return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

int category(const at::RecordFunction &fn, const char *name)
{
	/* most operators are "aten::...": one compare of the first byte settles them */
	switch (name[0]) {
	case 'P':
		if (starts(name, "ProfilerStep#"))
			return CAT_PROFILE_STEP;
		break;
	case 'e':
		if (starts(name, "enumerate(DataLoader)"))
			return CAT_DATALOADER;
		break;
	case 'O':
		if (starts(name, "Optimizer.step#") || starts(name, "Optimizer.zero_grad#"))
			return CAT_OPTIMIZATION;
		break;
	case 'a':
		if (starts(name, "autograd::engine::evaluate_function:"))
			return CAT_BACKWARD;
		break;
	}
	if (fn.scope() == at::RecordScope::USER_SCOPE)
		return CAT_PYTHON_USER_DEFINED;
	return CAT_OPERATOR;
}

/* Appends to buf without overflowing it; a cut list ends in "...". */
struct out {
	char *buf;
	size_t cap, len;
	void put(const char *s) { put_n(s, std::strlen(s)); }
	void put_n(const char *s, size_t n)
	{
		if (len + n + 4 >= cap) {
			if (len + 4 < cap) {
				std::memcpy(buf + len, "...", 4);
				len += 3;
			}
			len = cap; /* full */
			return;
		}
		std::memcpy(buf + len, s, n);
		len += n;
		buf[len] = '\0';
	}
	void put_int(int64_t v)
	{
		char num[24];
		char *p = num + sizeof(num);
		uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
		do {
			*--p = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		if (v < 0)
			*--p = '-';
		put_n(p, (size_t)(num + sizeof(num) - p));
	}
};

/* "Input Dims": [[2, 3], [], ...] and "Input type": ["float", "Scalar", ...] like Kineto. */
void format_inputs(const c10::ArrayRef<const c10::IValue> &inputs, std::string &dims_out,
		   std::string &types_out)
{
	char dims[1024], types[512];
	out d{ dims, sizeof(dims), 0 }, t{ types, sizeof(types), 0 };
	dims[0] = types[0] = '\0';
	d.put("[");
	t.put("[");
	bool first = true;
	for (const c10::IValue &v : inputs) {
		if (!first) {
			d.put(", ");
			t.put(", ");
		}
		first = false;
		if (v.isTensor()) {
			const at::Tensor &x = v.toTensor();
			d.put("[");
			if (x.defined()) {
				auto sizes = x.sizes();
				for (size_t i = 0; i < sizes.size(); i++) {
					if (i)
						d.put(", ");
					d.put_int((int64_t)sizes[i]);
				}
				t.put("\"");
				/* "float", "long", ... as Kineto writes them */
				c10::string_view tn = c10::scalarTypeToTypeMeta(x.scalar_type()).name();
				t.put_n(tn.data(), tn.size()); /* a view: not NUL-terminated */
				t.put("\"");
			} else {
				t.put("\"\"");
			}
			d.put("]");
		} else {
			d.put("[]");
			t.put(v.isScalar() ? "\"Scalar\"" : v.isTensorList() ? "\"TensorList\"" : "\"\"");
		}
	}
	d.put("]");
	t.put("]");
	if (d.len >= d.cap)
		dims[d.cap - 1] = '\0';
	if (t.len >= t.cap)
		types[t.cap - 1] = '\0';
	dims_out.assign(dims);
	types_out.assign(types);
}

/*
 * The formatted inputs of the calls a thread has seen, keyed by their signature (per input:
 * a tag with the dtype and rank, then the sizes). A training loop calls the same operators
 * with the same shapes step after step, so after the first step a call costs a walk over its
 * inputs and a compare, not the formatting. The runtime interns the strings by address
 * (checking the content), so an entry's strings are handed over as they are.
 */
constexpr size_t SIG_MAX = 48; /* longer signatures are formatted every time */
constexpr size_t SHAPE_CACHE_SLOTS = 512;

struct shape_entry {
	uint64_t hash = 0;
	size_t len = 0;
	int64_t sig[SIG_MAX];
	std::string dims, types;
};

struct shape_cache {
	std::vector<shape_entry> slots{ SHAPE_CACHE_SLOTS };
};

/* The signature of the inputs into sig; its length, or 0 when it does not fit. */
size_t input_signature(const c10::ArrayRef<const c10::IValue> &inputs, int64_t *sig)
{
	size_t n = 0;
	for (const c10::IValue &v : inputs) {
		if (n == SIG_MAX)
			return 0;
		if (v.isTensor()) {
			const at::Tensor &x = v.toTensor();
			if (!x.defined()) {
				sig[n++] = 2;
				continue;
			}
			auto sizes = x.sizes();
			if (n + 1 + sizes.size() > SIG_MAX)
				return 0;
			sig[n++] = 1 | (int64_t)x.scalar_type() << 8 | (int64_t)sizes.size() << 16;
			for (int64_t s : sizes)
				sig[n++] = s;
		} else {
			sig[n++] = v.isScalar() ? 3 : v.isTensorList() ? 4 : 5;
		}
	}
	return n;
}

uint64_t signature_hash(const int64_t *sig, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (size_t i = 0; i < n; i++) {
		h ^= (uint64_t)sig[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

void put_inputs(const at::RecordFunction &fn)
{
	static thread_local std::unique_ptr<shape_cache> cache;
	const c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
	int64_t sig[SIG_MAX];
	size_t n = input_signature(inputs, sig);
	if (n == 0 && !inputs.empty()) { /* too long to cache */
		std::string dims, types;
		format_inputs(inputs, dims, types);
		api.arg_string("Input Dims", dims.c_str());
		api.arg_string("Input type", types.c_str());
		return;
	}
	if (!cache)
		cache.reset(new shape_cache);
	uint64_t h = signature_hash(sig, n);
	shape_entry &e = cache->slots[h & (SHAPE_CACHE_SLOTS - 1)];
	if (e.hash != h || e.len != n || std::memcmp(e.sig, sig, n * sizeof(int64_t)) != 0 ||
	    e.dims.empty()) {
		format_inputs(inputs, e.dims, e.types);
		e.hash = h;
		e.len = n;
		std::memcpy(e.sig, sig, n * sizeof(int64_t));
	}
	api.arg_string("Input Dims", e.dims.c_str());
	api.arg_string("Input type", e.types.c_str());
}

/* The context returned for a call that opened a range (its constructor is protected). */
struct opened : at::ObserverContext {};

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction &fn)
{
	if (!recording())
		return nullptr;
	const char *name = fn.name();
	api.range_begin(category(fn, name), name);
	if (fn.seqNr() >= 0)
		api.arg_int("Sequence number", fn.seqNr());
	if (fn.forwardThreadId())
		api.arg_int("Fwd thread id", (int64_t)fn.forwardThreadId());
	if (with_shapes && fn.scope() != at::RecordScope::USER_SCOPE)
		put_inputs(fn);
	ops.fetch_add(1, std::memory_order_relaxed);
	/* a non-null context tells the end callback that this call opened a range */
	return std::make_unique<opened>();
}

void on_end(const at::RecordFunction &, at::ObserverContext *ctx)
{
	if (ctx)
		api.range_end();
}

} // namespace

extern "C" __attribute__((visibility("default"))) int opscope_torch_enable(const struct opscope_torch_api *a, int shapes)
{
	if (!a || !a->word || enabled.exchange(true))
		return -1;
	api = *a;
	with_shapes = shapes != 0;
	handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end)
					       .needsInputs(with_shapes)
					       .scopes({ at::RecordScope::FUNCTION,
							 at::RecordScope::BACKWARD_FUNCTION,
							 at::RecordScope::USER_SCOPE }));
	return 0;
}

extern "C" __attribute__((visibility("default"))) void opscope_torch_disable(void)
{
	if (enabled.exchange(false))
		at::removeCallback(handle);
}

extern "C" __attribute__((visibility("default"))) uint64_t opscope_torch_ops(void)
{
	return ops.load(std::memory_order_relaxed);
}
