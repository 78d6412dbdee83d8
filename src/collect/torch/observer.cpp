/*
 * observer.cpp: PyTorch operators as opscope ranges, through a global RecordFunction callback
 * (the cheapest way to get every operator with its input shapes and dtypes in torch 1.13:
 * ../shared/FINDINGS-collectors.md §4.5). A thin C++ adapter with the C ABI of torch_api.h;
 * built only where Debian's libtorch-dev headers exist.
 *
 * Start callback: a range begins (category by scope and name, as the Kineto importer maps
 * them), then its arguments. End callback: the range ends. RecordFunction runs both on the
 * operator's thread, nested, so the ranges nest like the calls. The hot path allocates nothing
 * and formats nothing once a training loop runs its second step: names, shape strings and
 * argument keys go to the runtime as interned ids, found in per-thread caches (names by
 * address, shapes by the inputs' signature), and a per-thread stack of the calls that opened a
 * range tells the end callback what to end (recording may start or stop between the two).
 */
#include <ATen/record_function.h>
#include <ATen/core/ivalue.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "opscope/opscope.h" /* enum opscope_category; the observer calls none of its functions */

#include "collect/torch/torch_api.h"

namespace {

opscope_torch_api api;
bool with_shapes;
at::CallbackHandle handle;
std::atomic<bool> enabled{ false };
std::atomic<bool> active{ false }; /* the callback is enabled in torch (set_active) */
std::atomic<uint64_t> ops{ 0 };
std::atomic<uint64_t> idle_calls{ 0 }; /* callbacks run while nothing recorded */
std::atomic<uint64_t> cache_misses{ 0 }; /* names interned and inputs formatted */

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
			return OPSCOPE_CAT_PROFILE_STEP;
		break;
	case 'e':
		if (starts(name, "enumerate(DataLoader)"))
			return OPSCOPE_CAT_DATALOADER;
		break;
	case 'O':
		if (starts(name, "Optimizer.step#") || starts(name, "Optimizer.zero_grad#"))
			return OPSCOPE_CAT_OPTIMIZATION;
		break;
	case 'a':
		if (starts(name, "autograd::engine::evaluate_function:"))
			return OPSCOPE_CAT_BACKWARD;
		break;
	}
	if (fn.scope() == at::RecordScope::USER_SCOPE)
		return OPSCOPE_CAT_PYTHON_USER_DEFINED;
	return OPSCOPE_CAT_OPERATOR;
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

/* The concrete value of a scalar or integer-list input as Kineto (torch >= 2.1) writes it in
 * "Concrete Inputs": "1", "0.5", "True", "[2, 2]", "[True, False, True]"; nothing for other
 * inputs. */
void put_concrete(out &c, const c10::IValue &v)
{
	if (v.isInt()) {
		c.put_int(v.toInt());
	} else if (v.isBool()) {
		c.put(v.toBool() ? "True" : "False");
	} else if (v.isDouble()) {
		char num[40];
		int n = std::snprintf(num, sizeof(num), "%.17g", v.toDouble());
		if (n > 0)
			c.put_n(num, (size_t)n < sizeof(num) ? (size_t)n : sizeof(num) - 1);
	} else if (v.isIntList()) {
		c.put("[");
		size_t i = 0;
		for (int64_t x : v.toIntList()) {
			if (i++)
				c.put(", ");
			c.put_int(x);
		}
		c.put("]");
	} else if (v.isBoolList()) { /* a convolution backward's output_mask */
		c.put("[");
		size_t i = 0;
		for (bool x : v.toBoolList()) {
			if (i++)
				c.put(", ");
			c.put(x ? "True" : "False");
		}
		c.put("]");
	}
}

/* "Input Dims": [[2, 3], [], ...], "Input type": ["float", "Scalar", ...] and "Concrete
 * Inputs": ["", "1", "[2, 2]", ...] like Kineto; concrete_out is left empty when no input
 * has a concrete value (most operators: tensors only). */
void format_inputs(const c10::ArrayRef<const c10::IValue> &inputs, std::string &dims_out,
		   std::string &types_out, std::string &concrete_out)
{
	char dims[1024], types[512], concrete[512];
	out d{ dims, sizeof(dims), 0 }, t{ types, sizeof(types), 0 };
	out c{ concrete, sizeof(concrete), 0 };
	dims[0] = types[0] = concrete[0] = '\0';
	d.put("[");
	t.put("[");
	c.put("[");
	bool first = true, any_concrete = false;
	for (const c10::IValue &v : inputs) {
		if (!first) {
			d.put(", ");
			t.put(", ");
			c.put(", ");
		}
		first = false;
		c.put("\"");
		size_t before = c.len;
		put_concrete(c, v);
		any_concrete |= c.len != before;
		c.put("\"");
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
	c.put("]");
	if (d.len >= d.cap)
		dims[d.cap - 1] = '\0';
	if (t.len >= t.cap)
		types[t.cap - 1] = '\0';
	if (c.len >= c.cap)
		any_concrete = false; /* cut short: not valid JSON, leave it out */
	dims_out.assign(dims);
	types_out.assign(types);
	if (any_concrete)
		concrete_out.assign(concrete);
	else
		concrete_out.clear();
}

/*
 * A table of entries found by a 64-bit hash and a compare (open addressing, linear probing),
 * for the per-thread caches below. A direct-mapped cache of the same size evicted entries
 * whose hashes share a slot: in the example's training step, about 19 operator names and
 * input signatures of the 184 operators of every step took each other's slots, and were
 * interned or formatted again in every step. Here an entry stays. The table doubles when
 * half full (so every probe ends at an empty slot), up to MaxSlots slots; after that it
 * hands out its one scratch entry for each new key instead, so a program that makes ever new
 * names or shapes keeps a bounded cache. Entries never move or go away: callers may keep
 * pointers to them, and check them by content. (Not util/hashmap.h: that is C for the tools,
 * an index of entries that may move; here entries are C++ objects that stay put.)
 */
template <class Entry, size_t MaxSlots> struct hash_table {
	std::vector<std::unique_ptr<Entry>> slots = std::vector<std::unique_ptr<Entry>>(256);
	size_t used = 0;
	Entry scratch;

	/* The entry of hash `h` that `match` accepts, or nullptr. */
	template <class Match> Entry *find(uint64_t h, Match match) const
	{
		size_t mask = slots.size() - 1;
		for (size_t i = h & mask;; i = (i + 1) & mask) {
			Entry *e = slots[i].get();
			if (!e)
				return nullptr;
			if (e->hash == h && match(*e))
				return e;
		}
	}

	/* A new entry for hash `h`, for the caller to fill (the scratch entry when full). */
	Entry *make(uint64_t h)
	{
		if ((used + 1) * 2 > slots.size()) {
			if (slots.size() >= MaxSlots) {
				scratch.hash = h;
				return &scratch;
			}
			grow();
		}
		size_t mask = slots.size() - 1;
		size_t i = h & mask;
		while (slots[i])
			i = (i + 1) & mask;
		slots[i].reset(new Entry);
		slots[i]->hash = h;
		used++;
		return slots[i].get();
	}

	void grow()
	{
		std::vector<std::unique_ptr<Entry>> old(slots.size() * 2);
		old.swap(slots);
		size_t mask = slots.size() - 1;
		for (std::unique_ptr<Entry> &e : old) {
			if (!e)
				continue;
			size_t i = e->hash & mask;
			while (slots[i])
				i = (i + 1) & mask;
			slots[i] = std::move(e);
		}
	}
};

/*
 * The formatted inputs of the calls a thread has seen, keyed by their signature (per input:
 * a tag with the dtype and rank, then the sizes). A training loop calls the same operators
 * with the same shapes step after step, so after the first step a call costs a walk over its
 * inputs and a compare, not the formatting: an entry keeps the interned ids of its strings.
 */
constexpr size_t SIG_MAX = 48; /* longer signatures are formatted every time */

struct shape_entry {
	uint64_t hash = 0;
	size_t len = 0;
	int64_t sig[SIG_MAX];
	uint32_t dims = 0, types = 0; /* interned "Input Dims" and "Input type" */
	uint32_t concrete = 0;	      /* interned "Concrete Inputs", 0 when there are none */
	bool has_concrete = false;    /* the inputs have concrete values */
};

using shape_cache = hash_table<shape_entry, 4096>; /* at most 2,048 entries of 400 B */

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
		} else if (v.isInt()) { /* concrete values are part of the key */
			if (n + 2 > SIG_MAX)
				return 0;
			sig[n++] = 6;
			sig[n++] = v.toInt();
		} else if (v.isBool()) {
			sig[n++] = v.toBool() ? 7 : 8;
		} else if (v.isDouble()) {
			if (n + 2 > SIG_MAX)
				return 0;
			double x = v.toDouble();
			sig[n++] = 9;
			std::memcpy(&sig[n++], &x, sizeof(x));
		} else if (v.isIntList()) {
			c10::List<int64_t> l = v.toIntList();
			if (n + 1 + l.size() > SIG_MAX)
				return 0;
			sig[n++] = 10 | (int64_t)l.size() << 16;
			for (int64_t x : l)
				sig[n++] = x;
		} else if (v.isBoolList()) {
			int64_t bits = 0, i = 0;
			for (bool x : v.toBoolList())
				bits |= (int64_t)x << (i++ & 31);
			sig[n++] = 11 | i << 8 | bits << 24;
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

/* Interned ids of the argument keys, made at enable. */
uint32_t key_seq, key_fwd_tid, key_dims, key_types, key_concrete;

uint32_t intern(const std::string &s)
{
	return api.string_id(s.data(), s.size());
}

void put_inputs(const at::RecordFunction &fn)
{
	static thread_local std::unique_ptr<shape_cache> cache;
	const c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
	int64_t sig[SIG_MAX];
	size_t n = input_signature(inputs, sig);
	if (n == 0 && !inputs.empty()) { /* too long to cache */
		cache_misses.fetch_add(1, std::memory_order_relaxed);
		std::string dims, types, concrete;
		format_inputs(inputs, dims, types, concrete);
		api.arg_string_id(key_dims, intern(dims));
		api.arg_string_id(key_types, intern(types));
		if (!concrete.empty())
			api.arg_string_id(key_concrete, intern(concrete));
		return;
	}
	if (!cache)
		cache.reset(new shape_cache);
	uint64_t h = signature_hash(sig, n);
	shape_entry *e = cache->find(h, [&](const shape_entry &c) {
		return c.len == n && std::memcmp(c.sig, sig, n * sizeof(int64_t)) == 0;
	});
	if (!e || !e->dims || !e->types || (e->has_concrete && !e->concrete)) {
		/* new, or its strings could not be interned */
		cache_misses.fetch_add(1, std::memory_order_relaxed);
		std::string dims, types, concrete;
		format_inputs(inputs, dims, types, concrete);
		if (!e) {
			e = cache->make(h);
			e->len = n;
			std::memcpy(e->sig, sig, n * sizeof(int64_t));
		}
		e->dims = intern(dims);
		e->types = intern(types);
		e->has_concrete = !concrete.empty();
		e->concrete = e->has_concrete ? intern(concrete) : 0;
	}
	api.arg_string_id(key_dims, e->dims);
	api.arg_string_id(key_types, e->types);
	if (e->concrete)
		api.arg_string_id(key_concrete, e->concrete);
}

/*
 * Operator names, per thread. An operator's name is its schema's string, at one address for
 * the life of the process: found by address, checked against a copy. Backward functions and
 * labels name themselves with temporaries, often at one stack address for many names: those
 * miss by address and are found by content, so no call takes the runtime's interning lock once
 * a loop runs.
 */
constexpr unsigned NAME_CACHE_BITS = 10;

struct name_entry {
	uint64_t hash = 0;
	uint32_t id = 0;
	int category = 0;
	std::string copy;
};

struct name_cache {
	std::vector<const char *> by_address_ptr = std::vector<const char *>(1u << NAME_CACHE_BITS);
	std::vector<name_entry *> by_address = std::vector<name_entry *>(1u << NAME_CACHE_BITS);
	hash_table<name_entry, 1u << 14> by_content;
};

uint64_t content_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h ^ h >> 29; /* the table indexes by the low bits */
}

bool same(const name_entry *e, const char *name, size_t len)
{
	return e && e->copy.size() == len && std::memcmp(e->copy.data(), name, len) == 0;
}

const name_entry *name_of(const at::RecordFunction &fn)
{
	static thread_local std::unique_ptr<name_cache> cache;
	if (!cache)
		cache.reset(new name_cache);
	const char *name = fn.name();
	size_t len = std::strlen(name);
	uint64_t p = (uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull;
	size_t a = (size_t)(p >> (64 - NAME_CACHE_BITS));
	name_entry *e = cache->by_address[a];
	if (cache->by_address_ptr[a] == name && same(e, name, len))
		return e;
	uint64_t h = content_hash(name, len);
	e = cache->by_content.find(h, [&](const name_entry &c) { return same(&c, name, len); });
	if (!e || !e->id) {
		/* a new name (or one the runtime could not intern before); from a full table,
		 * the scratch entry, which by_address may still point at for another name: it
		 * is checked by content there too */
		cache_misses.fetch_add(1, std::memory_order_relaxed);
		if (!e)
			e = cache->by_content.make(h);
		e->copy.assign(name, len);
		e->id = intern(e->copy);
		e->category = category(fn, name);
	}
	cache->by_address_ptr[a] = name;
	cache->by_address[a] = e;
	return e;
}

/*
 * Which calls opened a range, per thread: RecordFunction ends its calls in the reverse order it
 * starts them, on the same thread, so a stack of the calls' addresses is enough and the start
 * callback need not allocate a context. An end that is not on top of its thread's stack (a
 * call ended elsewhere) pops what it covers, or nothing if the call is not there at all.
 */
struct open_calls {
	std::vector<const at::RecordFunction *> stack;
};

open_calls &opened_here()
{
	static thread_local open_calls calls;
	return calls;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction &fn)
{
	if (!recording()) {
		idle_calls.fetch_add(1, std::memory_order_relaxed);
		return nullptr;
	}
	const name_entry *name = name_of(fn);
	if (!name->id)
		return nullptr;
	api.range_begin_id(name->category, name->id);
	if (fn.seqNr() >= 0)
		api.arg_int_id(key_seq, fn.seqNr());
	if (fn.forwardThreadId())
		api.arg_int_id(key_fwd_tid, (int64_t)fn.forwardThreadId());
	if (with_shapes && fn.scope() != at::RecordScope::USER_SCOPE)
		put_inputs(fn);
	ops.fetch_add(1, std::memory_order_relaxed);
	opened_here().stack.push_back(&fn);
	return nullptr;
}

void on_end(const at::RecordFunction &fn, at::ObserverContext *)
{
	std::vector<const at::RecordFunction *> &stack = opened_here().stack;
	size_t at = stack.size();
	while (at > 0 && stack[at - 1] != &fn)
		at--;
	if (at == 0)
		return; /* not opened here (or before recording started) */
	while (stack.size() >= at) {
		stack.pop_back();
		api.range_end();
	}
}

} // namespace

extern "C" __attribute__((visibility("default"))) int opscope_torch_enable(const struct opscope_torch_api *a, int shapes)
{
	if (!a || !a->word || !a->string_id || !a->range_begin_id || !a->arg_int_id ||
	    !a->arg_string_id || enabled.exchange(true))
		return -1;
	api = *a;
	with_shapes = shapes != 0;
	key_seq = api.string_id("Sequence number", 15);
	key_fwd_tid = api.string_id("Fwd thread id", 13);
	key_dims = api.string_id("Input Dims", 10);
	key_types = api.string_id("Input type", 10);
	key_concrete = api.string_id("Concrete Inputs", 15);
	handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end)
					       .needsInputs(with_shapes)
					       .scopes({ at::RecordScope::FUNCTION,
							 at::RecordScope::BACKWARD_FUNCTION,
							 at::RecordScope::USER_SCOPE }));
	active = true;
	return 0;
}

extern "C" __attribute__((visibility("default"))) void opscope_torch_disable(void)
{
	if (enabled.exchange(false))
		at::removeCallback(handle);
	active = false;
}

/* A registered callback costs every operator its RecordFunction, and with shapes the boxing
 * of its inputs, whether or not anything records: the Profiler switches it off between its
 * windows, so closed steps run as if no profiler were there (as torch.profiler's do). */
extern "C" __attribute__((visibility("default"))) void opscope_torch_set_active(int on)
{
	if (!enabled.load() || active.exchange(on != 0) == (on != 0))
		return;
	if (on)
		at::reenableCallback(handle);
	else
		at::disableCallback(handle);
}

extern "C" __attribute__((visibility("default"))) uint64_t opscope_torch_ops(void)
{
	return ops.load(std::memory_order_relaxed);
}

extern "C" __attribute__((visibility("default"))) uint64_t opscope_torch_idle_calls(void)
{
	return idle_calls.load(std::memory_order_relaxed);
}

/* Names interned and input lists formatted so far: once a loop runs, its operators should
 * find both in the per-thread caches, and this stays put. */
extern "C" __attribute__((visibility("default"))) uint64_t opscope_torch_cache_misses(void)
{
	return cache_misses.load(std::memory_order_relaxed);
}
