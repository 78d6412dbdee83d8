/*
 * nvtx_abi.h: the NVTX v3 injection interface, declared in our own words.
 *
 * A program built with NVTX's header-only library looks up NVTX_INJECTION64_PATH on its
 * first NVTX call, dlopens that library and calls its InitializeInjectionNvtx2 with a
 * function that hands out "export tables". The CALLBACKS table gives, per module (CORE,
 * CORE2, ...), an array of pointers to the program's function-pointer slots; a tool writes
 * its handlers into those slots. The numbers and layouts below are the ABI as the NVTX
 * headers of the CUDA toolkit define it (nvToolsExt.h, nvtxDetail/nvtxTypes.h); they are
 * fixed by NVIDIA's compatibility rules. We declare them here so that the collector builds
 * on machines without CUDA.
 */
#ifndef OPSCOPE_COLLECT_NVTX_ABI_H
#define OPSCOPE_COLLECT_NVTX_ABI_H

#include <stddef.h>
#include <stdint.h>

#include <wchar.h>

/* Export table ids. */
enum { NVTXABI_ETID_CALLBACKS = 1, NVTXABI_ETID_VERSIONINFO = 3 };

/* Callback modules. */
enum { NVTXABI_MODULE_CORE = 1, NVTXABI_MODULE_CORE2 = 5 };

/* CORE module slots. */
enum {
	NVTXABI_CORE_MarkEx = 1,
	NVTXABI_CORE_MarkA = 2,
	NVTXABI_CORE_MarkW = 3,
	NVTXABI_CORE_RangeStartEx = 4,
	NVTXABI_CORE_RangeStartA = 5,
	NVTXABI_CORE_RangeStartW = 6,
	NVTXABI_CORE_RangeEnd = 7,
	NVTXABI_CORE_RangePushEx = 8,
	NVTXABI_CORE_RangePushA = 9,
	NVTXABI_CORE_RangePushW = 10,
	NVTXABI_CORE_RangePop = 11,
	NVTXABI_CORE_NameCategoryA = 12,
	NVTXABI_CORE_NameCategoryW = 13,
	NVTXABI_CORE_NameOsThreadA = 14,
	NVTXABI_CORE_NameOsThreadW = 15,
};

/* CORE2 (domain) module slots. */
enum {
	NVTXABI_CORE2_DomainMarkEx = 1,
	NVTXABI_CORE2_DomainRangeStartEx = 2,
	NVTXABI_CORE2_DomainRangeEnd = 3,
	NVTXABI_CORE2_DomainRangePushEx = 4,
	NVTXABI_CORE2_DomainRangePop = 5,
	NVTXABI_CORE2_DomainResourceCreate = 6,
	NVTXABI_CORE2_DomainResourceDestroy = 7,
	NVTXABI_CORE2_DomainNameCategoryA = 8,
	NVTXABI_CORE2_DomainNameCategoryW = 9,
	NVTXABI_CORE2_DomainRegisterStringA = 10,
	NVTXABI_CORE2_DomainRegisterStringW = 11,
	NVTXABI_CORE2_DomainCreateA = 12,
	NVTXABI_CORE2_DomainCreateW = 13,
	NVTXABI_CORE2_DomainDestroy = 14,
	NVTXABI_CORE2_Initialize = 15,
};

/* nvtxEventAttributes_t field values. */
enum { NVTXABI_COLOR_ARGB = 1 };
enum { NVTXABI_MESSAGE_ASCII = 1, NVTXABI_MESSAGE_UNICODE = 2, NVTXABI_MESSAGE_REGISTERED = 3 };
enum {
	NVTXABI_PAYLOAD_U64 = 1,
	NVTXABI_PAYLOAD_I64 = 2,
	NVTXABI_PAYLOAD_DOUBLE = 3,
	NVTXABI_PAYLOAD_U32 = 4,
	NVTXABI_PAYLOAD_I32 = 5,
	NVTXABI_PAYLOAD_FLOAT = 6,
};

/* A generic function-pointer slot of the program. */
typedef void (*nvtxabi_fn)(void);

struct nvtxabi_callbacks_table {
	size_t struct_size;
	int (*get_module_function_table)(int module, nvtxabi_fn ***out_table,
					 unsigned int *out_size);
};

typedef const void *(*nvtxabi_get_export_table)(uint32_t export_table_id);

/* nvtxEventAttributes_v2 (48 bytes). */
struct nvtxabi_event_attributes {
	uint16_t version;     /* NVTX_VERSION of the program */
	uint16_t size;	      /* sizeof the struct as the program knows it */
	uint32_t category;    /* user category, 0 = none */
	int32_t color_type;   /* NVTXABI_COLOR_* */
	uint32_t color;	      /* ARGB */
	int32_t payload_type; /* NVTXABI_PAYLOAD_* */
	int32_t reserved0;
	union {
		uint64_t u64;
		int64_t i64;
		double f64;
		uint32_t u32;
		int32_t i32;
		float f32;
	} payload;
	int32_t message_type; /* NVTXABI_MESSAGE_* */
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered; /* a handle returned by RegisterString */
	} message;
};
_Static_assert(sizeof(struct nvtxabi_event_attributes) == 48, "nvtxEventAttributes_v2 is 48 bytes");
_Static_assert(offsetof(struct nvtxabi_event_attributes, payload) == 24, "payload offset");
_Static_assert(offsetof(struct nvtxabi_event_attributes, message_type) == 32, "message offset");

#endif
