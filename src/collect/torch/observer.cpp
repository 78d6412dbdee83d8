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
	if (starts(name, "ProfilerStep#"))
		return CAT_PROFILE_STEP;
	if (starts(name, "enumerate(DataLoader)"))
		return CAT_DATALOADER;
	if (starts(name, "Optimizer.step#") || starts(name, "Optimizer.zero_grad#"))
		return CAT_OPTIMIZATION;
	if (starts(name, "autograd::engine::evaluate_function:"))
		return CAT_BACKWARD;
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
};

/* "Input Dims": [[2, 3], [], ...] and "Input type": ["float", "Scalar", ...] like Kineto. */
void put_inputs(const at::RecordFunction &fn)
{
	char dims[1024], types[512];
	out d{ dims, sizeof(dims), 0 }, t{ types, sizeof(types), 0 };
	dims[0] = types[0] = '\0';
	d.put("[");
	t.put("[");
	bool first = true;
	for (const c10::IValue &v : fn.inputs()) {
		if (!first) {
			d.put(", ");
			t.put(", ");
		}
		first = false;
		char num[32];
		if (v.isTensor()) {
			const at::Tensor &x = v.toTensor();
			d.put("[");
			if (x.defined()) {
				auto sizes = x.sizes();
				for (size_t i = 0; i < sizes.size(); i++) {
					std::snprintf(num, sizeof(num), i ? ", %lld" : "%lld",
						      (long long)sizes[i]);
					d.put(num);
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
	api.arg_string("Input Dims", dims);
	api.arg_string("Input type", types);
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
