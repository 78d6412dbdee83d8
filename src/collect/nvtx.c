/*
 * nvtx.c: NVTX capture. libopscope is an NVTX injection library: with
 * NVTX_INJECTION64_PATH pointing at it (opscope record sets it), the NVTX calls of any
 * program land here and become opscope events on the calling thread, with no code change.
 *
 * Mapping:
 *   push/pop (any domain)      -> BEGIN/END ranges, category Nvtx
 *   start/end                  -> async ranges (may end on another thread, need not nest)
 *   mark                       -> instant
 *   attributes                 -> args: color (ARGB), category (+ category_name when named),
 *                                 payload (typed), domain (non-default domains)
 *   RegisterString             -> the handle is our interned string id: free to use
 *   NameOsThread (own thread)  -> thread name
 * Push returns the thread's nesting level before the push; pop the level after it, or -1
 * with nothing open (NVTX's contract). Every handler checks the recording switch first, so
 * NVTX calls made while nothing records cost a load and a branch.
 *
 * With the GPU collector on, libcupti's NVTX injection is chained behind ours (nvtx_chain):
 * push, pop, mark and naming calls reach CUPTI too.
 *
 * Not captured: NVTX extensions (payload schemas, counters, memory), resource naming of
 * CUDA/OpenCL objects, names of other threads. Domains share one push/pop nesting per
 * thread, so interleaving pushes of two domains on one thread nests them in push order.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#include "opscope/opscope.h"

#include "collect/nvtx_abi.h"
#include "record/gpu.h"
#include "record/record.h"

#define NVTX_NAMED_CATEGORIES 256

struct nvtx_domain {
	struct nvtx_domain *next; /* all domains, so they stay reachable */
	uint32_t name_id;	  /* domain name, 0 = default */
	_Atomic uint32_t category_names[NVTX_NAMED_CATEGORIES]; /* category -> name id */
};

static struct nvtx_domain nvtx_default_domain;
static struct nvtx_domain *_Atomic nvtx_domains;
static _Atomic uint64_t nvtx_next_range_id = 1;
static __thread int nvtx_depth;

/* The CORE handlers of an inner NVTX tool we chain to (libcupti, when the GPU collector is
 * on: nvtx_chain), by callback id; NULL: none. Written once at init, before our handlers are
 * installed. Only the calls that return no handle are chained (push, pop, mark, naming):
 * ranges started and domains made are ours, and their handles mean nothing to the inner
 * tool. */
static _Atomic nvtxabi_fn nvtx_inner[16];
/* Relaxed: the NVTX loader publishes its slots with plain stores, so a thread may reach our
 * handler before it sees the inner ones stored (it then skips the inner call once); atomic so
 * that this is not a data race (TSan). */
#define NVTX_HAS_INNER(id) \
	atomic_load_explicit(&nvtx_inner[NVTXABI_CORE_##id], memory_order_relaxed)
#define NVTX_INNER(id, type) ((type)NVTX_HAS_INNER(id))

/* Argument keys, interned at init. */
static uint32_t key_color, key_category, key_category_name, key_payload, key_domain;

static struct nvtx_domain *nvtx_dom(const void *handle)
{
	return handle ? (struct nvtx_domain *)(uintptr_t)handle : &nvtx_default_domain;
}

/* UTF-32 (Linux wchar_t) to UTF-8, interned. Invalid code points become U+FFFD. */
static uint32_t nvtx_wide_id(const wchar_t *w)
{
	if (!w)
		return 0;
	char buf[1024];
	size_t n = 0;
	for (; *w && n + 4 < sizeof(buf); w++) {
		uint32_t c = (uint32_t)*w;
		if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
			c = 0xFFFD;
		if (c < 0x80) {
			buf[n++] = (char)c;
		} else if (c < 0x800) {
			buf[n++] = (char)(0xC0 | (c >> 6));
			buf[n++] = (char)(0x80 | (c & 0x3F));
		} else if (c < 0x10000) {
			buf[n++] = (char)(0xE0 | (c >> 12));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
			buf[n++] = (char)(0x80 | (c & 0x3F));
		} else {
			buf[n++] = (char)(0xF0 | (c >> 18));
			buf[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
			buf[n++] = (char)(0x80 | (c & 0x3F));
		}
	}
	return record_intern(buf, n);
}

static int nvtx_attr_usable(const struct nvtxabi_event_attributes *a)
{
	return a && a->size >= sizeof(*a);
}

static uint32_t nvtx_message_id(const struct nvtxabi_event_attributes *a)
{
	if (!nvtx_attr_usable(a))
		return 0;
	switch (a->message_type) {
	case NVTXABI_MESSAGE_ASCII:
		return record_intern_cached(a->message.ascii);
	case NVTXABI_MESSAGE_UNICODE:
		return nvtx_wide_id(a->message.unicode);
	case NVTXABI_MESSAGE_REGISTERED:
		return (uint32_t)(uintptr_t)a->message.registered;
	}
	return 0;
}

/* Arguments of the event just emitted. */
static void nvtx_args(const struct nvtxabi_event_attributes *a, struct nvtx_domain *d)
{
	if (d->name_id)
		record_emit_arg_str(key_domain, d->name_id);
	if (!nvtx_attr_usable(a))
		return;
	if (a->color_type == NVTXABI_COLOR_ARGB)
		record_emit_arg_u64(key_color, a->color);
	if (a->category) {
		record_emit_arg_u64(key_category, a->category);
		if (a->category < NVTX_NAMED_CATEGORIES) {
			uint32_t name = atomic_load_explicit(&d->category_names[a->category],
							     memory_order_relaxed);
			if (name)
				record_emit_arg_str(key_category_name, name);
		}
	}
	switch (a->payload_type) {
	case NVTXABI_PAYLOAD_U64:
		record_emit_arg_u64(key_payload, a->payload.u64);
		break;
	case NVTXABI_PAYLOAD_I64:
		record_emit_arg_i64(key_payload, a->payload.i64);
		break;
	case NVTXABI_PAYLOAD_DOUBLE:
		record_emit_arg_f64(key_payload, a->payload.f64);
		break;
	case NVTXABI_PAYLOAD_U32:
		record_emit_arg_u64(key_payload, a->payload.u32);
		break;
	case NVTXABI_PAYLOAD_I32:
		record_emit_arg_i64(key_payload, a->payload.i32);
		break;
	case NVTXABI_PAYLOAD_FLOAT:
		record_emit_arg_f64(key_payload, a->payload.f32);
		break;
	}
}

/* ---- ranges and marks ---- */

static int nvtx_push(uint32_t name, const struct nvtxabi_event_attributes *a, struct nvtx_domain *d)
{
	record_emit_begin(OPSCOPE_CAT_NVTX, name);
	nvtx_args(a, d);
	record_gpu_range_begin();
	return nvtx_depth++;
}

static int nvtx_pop(void)
{
	if (nvtx_depth == 0)
		return -1;
	if (opscope_recording()) {
		record_emit_end(0);
		record_gpu_range_end();
	}
	return --nvtx_depth;
}

static uint64_t nvtx_start(uint32_t name, const struct nvtxabi_event_attributes *a,
			   struct nvtx_domain *d)
{
	uint64_t id = atomic_fetch_add_explicit(&nvtx_next_range_id, 1, memory_order_relaxed);
	record_emit_async_begin(OPSCOPE_CAT_NVTX, name, id);
	nvtx_args(a, d);
	return id;
}

static void nvtx_mark(uint32_t name, const struct nvtxabi_event_attributes *a,
		      struct nvtx_domain *d)
{
	record_emit_instant(OPSCOPE_CAT_NVTX, name);
	nvtx_args(a, d);
}

static int nvtx_RangePushA(const char *msg)
{
	if (NVTX_HAS_INNER(RangePushA))
		NVTX_INNER(RangePushA, int (*)(const char *))(msg);
	if (!opscope_recording())
		return nvtx_depth++;
	return nvtx_push(record_intern_cached(msg), NULL, &nvtx_default_domain);
}

static int nvtx_RangePushW(const wchar_t *msg)
{
	if (NVTX_HAS_INNER(RangePushW))
		NVTX_INNER(RangePushW, int (*)(const wchar_t *))(msg);
	if (!opscope_recording())
		return nvtx_depth++;
	return nvtx_push(nvtx_wide_id(msg), NULL, &nvtx_default_domain);
}

static int nvtx_RangePushEx(const struct nvtxabi_event_attributes *a)
{
	if (NVTX_HAS_INNER(RangePushEx))
		NVTX_INNER(RangePushEx, int (*)(const struct nvtxabi_event_attributes *))(a);
	if (!opscope_recording())
		return nvtx_depth++;
	return nvtx_push(nvtx_message_id(a), a, &nvtx_default_domain);
}

static int nvtx_RangePop(void)
{
	if (NVTX_HAS_INNER(RangePop))
		NVTX_INNER(RangePop, int (*)(void))();
	return nvtx_pop();
}

static uint64_t nvtx_RangeStartA(const char *msg)
{
	if (!opscope_recording())
		return 0;
	return nvtx_start(record_intern_cached(msg), NULL, &nvtx_default_domain);
}

static uint64_t nvtx_RangeStartW(const wchar_t *msg)
{
	if (!opscope_recording())
		return 0;
	return nvtx_start(nvtx_wide_id(msg), NULL, &nvtx_default_domain);
}

static uint64_t nvtx_RangeStartEx(const struct nvtxabi_event_attributes *a)
{
	if (!opscope_recording())
		return 0;
	return nvtx_start(nvtx_message_id(a), a, &nvtx_default_domain);
}

static void nvtx_RangeEnd(uint64_t id)
{
	if (id && opscope_recording())
		record_emit_async_end(id);
}

static void nvtx_MarkA(const char *msg)
{
	if (NVTX_HAS_INNER(MarkA))
		NVTX_INNER(MarkA, void (*)(const char *))(msg);
	if (opscope_recording())
		nvtx_mark(record_intern_cached(msg), NULL, &nvtx_default_domain);
}

static void nvtx_MarkW(const wchar_t *msg)
{
	if (NVTX_HAS_INNER(MarkW))
		NVTX_INNER(MarkW, void (*)(const wchar_t *))(msg);
	if (opscope_recording())
		nvtx_mark(nvtx_wide_id(msg), NULL, &nvtx_default_domain);
}

static void nvtx_MarkEx(const struct nvtxabi_event_attributes *a)
{
	if (NVTX_HAS_INNER(MarkEx))
		NVTX_INNER(MarkEx, void (*)(const struct nvtxabi_event_attributes *))(a);
	if (opscope_recording())
		nvtx_mark(nvtx_message_id(a), a, &nvtx_default_domain);
}

static void nvtx_name_category(struct nvtx_domain *d, uint32_t category, uint32_t name)
{
	if (category < NVTX_NAMED_CATEGORIES)
		atomic_store_explicit(&d->category_names[category], name, memory_order_relaxed);
}

static void nvtx_NameCategoryA(uint32_t category, const char *name)
{
	if (NVTX_HAS_INNER(NameCategoryA))
		NVTX_INNER(NameCategoryA, void (*)(uint32_t, const char *))(category, name);
	nvtx_name_category(&nvtx_default_domain, category,
			   name ? record_intern(name, strlen(name)) : 0);
}

static void nvtx_NameCategoryW(uint32_t category, const wchar_t *name)
{
	if (NVTX_HAS_INNER(NameCategoryW))
		NVTX_INNER(NameCategoryW, void (*)(uint32_t, const wchar_t *))(category, name);
	nvtx_name_category(&nvtx_default_domain, category, nvtx_wide_id(name));
}

static void nvtx_NameOsThreadA(uint32_t tid, const char *name)
{
	if (NVTX_HAS_INNER(NameOsThreadA))
		NVTX_INNER(NameOsThreadA, void (*)(uint32_t, const char *))(tid, name);
	if (name && tid == (uint32_t)syscall(SYS_gettid))
		record_thread_name(name);
}

static void nvtx_NameOsThreadW(uint32_t tid, const wchar_t *name)
{
	if (NVTX_HAS_INNER(NameOsThreadW))
		NVTX_INNER(NameOsThreadW, void (*)(uint32_t, const wchar_t *))(tid, name);
	uint32_t id = nvtx_wide_id(name);
	if (id && tid == (uint32_t)syscall(SYS_gettid))
		record_thread_name(record_string(id, NULL));
}

/* ---- domains (CORE2) ---- */

static void nvtx_DomainMarkEx(const void *dom, const struct nvtxabi_event_attributes *a)
{
	if (opscope_recording())
		nvtx_mark(nvtx_message_id(a), a, nvtx_dom(dom));
}

static uint64_t nvtx_DomainRangeStartEx(const void *dom, const struct nvtxabi_event_attributes *a)
{
	if (!opscope_recording())
		return 0;
	return nvtx_start(nvtx_message_id(a), a, nvtx_dom(dom));
}

static void nvtx_DomainRangeEnd(const void *dom, uint64_t id)
{
	(void)dom;
	nvtx_RangeEnd(id);
}

static int nvtx_DomainRangePushEx(const void *dom, const struct nvtxabi_event_attributes *a)
{
	if (!opscope_recording())
		return nvtx_depth++;
	return nvtx_push(nvtx_message_id(a), a, nvtx_dom(dom));
}

static int nvtx_DomainRangePop(const void *dom)
{
	(void)dom;
	return nvtx_pop();
}

static void *nvtx_DomainResourceCreate(const void *dom, void *attribs)
{
	(void)dom;
	(void)attribs;
	static char resource; /* a non-NULL handle; resources are not recorded */
	return &resource;
}

static void nvtx_DomainResourceDestroy(void *resource)
{
	(void)resource;
}

static void nvtx_DomainNameCategoryA(const void *dom, uint32_t category, const char *name)
{
	nvtx_name_category(nvtx_dom(dom), category, name ? record_intern(name, strlen(name)) : 0);
}

static void nvtx_DomainNameCategoryW(const void *dom, uint32_t category, const wchar_t *name)
{
	nvtx_name_category(nvtx_dom(dom), category, nvtx_wide_id(name));
}

static const void *nvtx_DomainRegisterStringA(const void *dom, const char *s)
{
	(void)dom;
	return (const void *)(uintptr_t)(s ? record_intern(s, strlen(s)) : 0);
}

static const void *nvtx_DomainRegisterStringW(const void *dom, const wchar_t *s)
{
	(void)dom;
	return (const void *)(uintptr_t)nvtx_wide_id(s);
}

static struct nvtx_domain *nvtx_domain_new(uint32_t name_id)
{
	/* Never freed: a handle may still be used after DomainDestroy by other threads. */
	struct nvtx_domain *d = calloc(1, sizeof(*d));
	if (!d)
		return &nvtx_default_domain;
	d->name_id = name_id;
	d->next = atomic_load_explicit(&nvtx_domains, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&nvtx_domains, &d->next, d,
						      memory_order_release, memory_order_relaxed))
		;
	return d;
}

static const void *nvtx_DomainCreateA(const char *name)
{
	return nvtx_domain_new(name ? record_intern(name, strlen(name)) : 0);
}

static const void *nvtx_DomainCreateW(const wchar_t *name)
{
	return nvtx_domain_new(nvtx_wide_id(name));
}

static void nvtx_DomainDestroy(const void *dom)
{
	(void)dom;
}

static void nvtx_Initialize(const void *reserved)
{
	(void)reserved;
}

/* ---- injection entry point ---- */

struct nvtx_slot {
	unsigned id;   /* callback id within the module */
	nvtxabi_fn fn; /* our handler */
};

#define NVTX_SLOT(mod, name)                                    \
	{                                                       \
		NVTXABI_##mod##_##name, (nvtxabi_fn)nvtx_##name \
	}

static const struct nvtx_slot nvtx_core_slots[] = {
	NVTX_SLOT(CORE, MarkEx),	NVTX_SLOT(CORE, MarkA),
	NVTX_SLOT(CORE, MarkW),		NVTX_SLOT(CORE, RangeStartEx),
	NVTX_SLOT(CORE, RangeStartA),	NVTX_SLOT(CORE, RangeStartW),
	NVTX_SLOT(CORE, RangeEnd),	NVTX_SLOT(CORE, RangePushEx),
	NVTX_SLOT(CORE, RangePushA),	NVTX_SLOT(CORE, RangePushW),
	NVTX_SLOT(CORE, RangePop),	NVTX_SLOT(CORE, NameCategoryA),
	NVTX_SLOT(CORE, NameCategoryW), NVTX_SLOT(CORE, NameOsThreadA),
	NVTX_SLOT(CORE, NameOsThreadW),
};

static const struct nvtx_slot nvtx_core2_slots[] = {
	NVTX_SLOT(CORE2, DomainMarkEx),
	NVTX_SLOT(CORE2, DomainRangeStartEx),
	NVTX_SLOT(CORE2, DomainRangeEnd),
	NVTX_SLOT(CORE2, DomainRangePushEx),
	NVTX_SLOT(CORE2, DomainRangePop),
	NVTX_SLOT(CORE2, DomainResourceCreate),
	NVTX_SLOT(CORE2, DomainResourceDestroy),
	NVTX_SLOT(CORE2, DomainNameCategoryA),
	NVTX_SLOT(CORE2, DomainNameCategoryW),
	NVTX_SLOT(CORE2, DomainRegisterStringA),
	NVTX_SLOT(CORE2, DomainRegisterStringW),
	NVTX_SLOT(CORE2, DomainCreateA),
	NVTX_SLOT(CORE2, DomainCreateW),
	NVTX_SLOT(CORE2, DomainDestroy),
	NVTX_SLOT(CORE2, Initialize),
};

static int nvtx_install(const struct nvtxabi_callbacks_table *cb, int module,
			const struct nvtx_slot *slots, size_t n)
{
	nvtxabi_fn **table = NULL;
	unsigned int size = 0;
	if (!cb->get_module_function_table(module, &table, &size) || !table)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (slots[i].id <= size && table[slots[i].id])
			*table[slots[i].id] = slots[i].fn;
	return 1;
}

/* Chain to libcupti's NVTX injection when the GPU collector will run (CUDA_INJECTION64_PATH
 * names this library, OPSCOPE_GPU not 0): only one injection library is loaded per process, and CUPTI's
 * NVTX hooks are how it sees NVTX. Its InitializeInjectionNvtx2 is called first with the same
 * export table; the slots it claimed are the ones whose value changed. The slots are
 * snapshot BEFORE: until init is done they hold the loader's *_impl_init stubs, and calling
 * one of those saved as "the inner handler" spins forever (FINDINGS-collectors §1.5). */
static void nvtx_chain(nvtxabi_get_export_table get_export_table,
		       const struct nvtxabi_callbacks_table *cb)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH"), *gpu = getenv("OPSCOPE_GPU");
	if (!inj || !*inj || !strcmp(inj, "none") || (gpu && !strcmp(gpu, "0")))
		return;
	/* the CUDA injection must be ours (not another tool's, which owns CUPTI then) */
	Dl_info self;
	char a[PATH_MAX], b[PATH_MAX];
	if (!dladdr((void *)(uintptr_t)nvtx_chain, &self) || !self.dli_fname ||
	    !realpath(self.dli_fname, a) || !realpath(inj, b) || strcmp(a, b) != 0)
		return;
	const char *path = getenv("OPSCOPE_CUPTI_LIB");
	void *lib = dlopen(path && *path ? path : "libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return; /* the collector says so when it starts */
	int (*inner_init)(nvtxabi_get_export_table);
	*(void **)&inner_init = dlsym(lib, "InitializeInjectionNvtx2");
	nvtxabi_fn **table = NULL;
	unsigned int size = 0;
	if (!inner_init || !cb->get_module_function_table(NVTXABI_MODULE_CORE, &table, &size) ||
	    !table)
		return;
	nvtxabi_fn before[16] = { 0 };
	for (unsigned id = 1; id < 16 && id <= size; id++)
		before[id] = table[id] ? *table[id] : NULL;
	if (!inner_init(get_export_table))
		return;
	for (unsigned id = 1; id < 16 && id <= size; id++)
		if (table[id] && *table[id] != before[id])
			atomic_store_explicit(&nvtx_inner[id], *table[id], memory_order_relaxed);
}

/* Called by the NVTX loader in the profiled program. Returns 1 when we took the slots. */
OPSCOPE_API int InitializeInjectionNvtx2(nvtxabi_get_export_table get_export_table);
OPSCOPE_API int InitializeInjectionNvtx2(nvtxabi_get_export_table get_export_table)
{
	if (!get_export_table || !record_nvtx_wanted())
		return 0;
	const struct nvtxabi_callbacks_table *cb = get_export_table(NVTXABI_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->get_module_function_table)
		return 0;
	key_color = record_intern("color", 5);
	key_category = record_intern("category", 8);
	key_category_name = record_intern("category_name", 13);
	key_payload = record_intern("payload", 7);
	key_domain = record_intern("domain", 6);
	nvtx_chain(get_export_table, cb);
	int ok = nvtx_install(cb, NVTXABI_MODULE_CORE, nvtx_core_slots,
			      sizeof(nvtx_core_slots) / sizeof(nvtx_core_slots[0]));
	nvtx_install(cb, NVTXABI_MODULE_CORE2, nvtx_core2_slots,
		     sizeof(nvtx_core2_slots) / sizeof(nvtx_core2_slots[0]));
	return ok;
}
