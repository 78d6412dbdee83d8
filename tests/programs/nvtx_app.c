/*
 * nvtx_app.c: a plain NVTX v3 program (the CUDA toolkit's header-only nvtx3; nothing of
 * opscope is linked) exercising what NVTX capture must record. Usage: nvtx_app THREADS ITERS
 *
 * Per worker thread: ITERS "step" push/pop ranges, each holding one "inner" PushEx range
 * with color, category 1 (named "compute") and an int64 payload; a "mark" every 100
 * iterations; the thread named "nvtx-worker-N". On the main thread: a range in domain
 * "mydomain" named by a registered string, a wide-character range, a start/end range that
 * a worker ends, and payloads of every type on "typed-*" marks.
 */
#include <stdio.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static int iters;
static nvtxRangeId_t cross_range;

static void *worker(void *arg)
{
	int index = (int)(long)arg;
	char name[32];
	snprintf(name, sizeof(name), "nvtx-worker-%d", index);
	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), name);
	for (int i = 0; i < iters; i++) {
		nvtxRangePushA("step");
		nvtxEventAttributes_t a = { 0 };
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.colorType = NVTX_COLOR_ARGB;
		a.color = 0xFF00FF00u;
		a.category = 1;
		a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
		a.payload.llValue = i;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = "inner";
		nvtxRangePushEx(&a);
		nvtxRangePop();
		nvtxRangePop();
		if (i % 100 == 0)
			nvtxMarkA("mark");
	}
	if (index == 0)
		nvtxRangeEnd(cross_range); /* started on the main thread */
	return NULL;
}

static void typed_mark(const char *msg, int type, double v)
{
	nvtxEventAttributes_t a = { 0 };
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.payloadType = type;
	switch (type) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
		a.payload.ullValue = (uint64_t)v;
		break;
	case NVTX_PAYLOAD_TYPE_INT64:
		a.payload.llValue = (int64_t)v;
		break;
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		a.payload.dValue = v;
		break;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		a.payload.uiValue = (uint32_t)v;
		break;
	case NVTX_PAYLOAD_TYPE_INT32:
		a.payload.iValue = (int32_t)v;
		break;
	case NVTX_PAYLOAD_TYPE_FLOAT:
		a.payload.fValue = (float)v;
		break;
	}
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	nvtxMarkEx(&a);
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	iters = argc > 2 ? atoi(argv[2]) : 1000;
	if (threads < 1 || threads > 64)
		return 2;
	nvtxNameCategoryA(1, "compute");
	cross_range = nvtxRangeStartA("cross-thread");

	nvtxDomainHandle_t dom = nvtxDomainCreateA("mydomain");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered-range");
	nvtxEventAttributes_t a = { 0 };
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg;
	nvtxDomainRangePushEx(dom, &a);
	nvtxDomainRangePop(dom);

	nvtxRangePushW(L"wide-\u00e9");
	nvtxRangePop();
	nvtxRangePop(); /* nothing open: must be harmless */

	typed_mark("typed-u64", NVTX_PAYLOAD_TYPE_UNSIGNED_INT64, 1e15);
	typed_mark("typed-i64", NVTX_PAYLOAD_TYPE_INT64, -42);
	typed_mark("typed-f64", NVTX_PAYLOAD_TYPE_DOUBLE, 0.25);
	typed_mark("typed-u32", NVTX_PAYLOAD_TYPE_UNSIGNED_INT32, 7);
	typed_mark("typed-i32", NVTX_PAYLOAD_TYPE_INT32, -7);
	typed_mark("typed-f32", NVTX_PAYLOAD_TYPE_FLOAT, 1.5);

	pthread_t th[64];
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	nvtxDomainDestroy(dom);
	return 0;
}
