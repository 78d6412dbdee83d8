/*
 * test_nvtx_inject.c: NVTX capture through the injection interface, with a test double at
 * the hardware-vendor boundary: fake_nvtx_loader plays the part of the NVTX loader compiled
 * into a program (it hands out slot tables through an export-table function, as nvtx3 does),
 * so this runs on machines without the CUDA toolkit. The e2e test test_nvtx.sh covers the
 * real loader with a real NVTX program.
 */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "opscope/opscope.h"

#include "collect/nvtx_abi.h"
#include "formats/opscope/opscope_load.h"
#include "harness.h"
#include "model/model.h"

int InitializeInjectionNvtx2(nvtxabi_get_export_table get_export_table);

/* ---- fake_nvtx_loader: the program side of the injection ABI ---- */
static nvtxabi_fn fake_core_fn[16];  /* the program's CORE function-pointer slots */
static nvtxabi_fn fake_core2_fn[16]; /* CORE2 */
static nvtxabi_fn *fake_core_tab[16];
static nvtxabi_fn *fake_core2_tab[16];

static int fake_get_module(int module, nvtxabi_fn ***out_table, unsigned int *out_size)
{
	if (module == NVTXABI_MODULE_CORE) {
		*out_table = fake_core_tab;
		*out_size = 15;
		return 1;
	}
	if (module == NVTXABI_MODULE_CORE2) {
		*out_table = fake_core2_tab;
		*out_size = 15;
		return 1;
	}
	return 0;
}

static const struct nvtxabi_callbacks_table fake_callbacks = { sizeof(fake_callbacks),
							       fake_get_module };

static const void *fake_export_table(uint32_t id)
{
	return id == NVTXABI_ETID_CALLBACKS ? &fake_callbacks : NULL;
}

static void fake_nvtx_loader_init(void)
{
	for (int i = 0; i < 16; i++) {
		fake_core_tab[i] = &fake_core_fn[i];
		fake_core2_tab[i] = &fake_core2_fn[i];
	}
}

/* Typed views of the slots, as the program's NVTX wrappers would call them. */
typedef int (*push_a_fn)(const char *);
typedef int (*push_w_fn)(const wchar_t *);
typedef int (*push_ex_fn)(const struct nvtxabi_event_attributes *);
typedef int (*pop_fn)(void);
typedef uint64_t (*start_a_fn)(const char *);
typedef void (*end_fn)(uint64_t);
typedef void (*mark_a_fn)(const char *);
typedef void (*name_cat_fn)(uint32_t, const char *);
typedef const void *(*dom_create_fn)(const char *);
typedef const void *(*dom_reg_fn)(const void *, const char *);
typedef int (*dom_push_fn)(const void *, const struct nvtxabi_event_attributes *);
typedef int (*dom_pop_fn)(const void *);

#define CORE(T, id)  ((T)fake_core_fn[NVTXABI_CORE_##id])
#define CORE2(T, id) ((T)fake_core2_fn[NVTXABI_CORE2_##id])

static char tmpdir[] = "/tmp/opscope-test-nvtx-XXXXXX";

static const char *find_arg(const struct model *m, uint64_t first, uint32_t n, const char *key,
			    char *buf, size_t size)
{
	for (uint32_t i = 0; i < n; i++) {
		if (strcmp(model_str(m, m->args.key[first + i]), key) != 0)
			continue;
		uint64_t bits = m->args.bits[first + i];
		switch (m->args.type[first + i]) {
		case MODEL_ARG_I64:
			snprintf(buf, size, "%lld", (long long)(int64_t)bits);
			break;
		case MODEL_ARG_U64:
			snprintf(buf, size, "%llu", (unsigned long long)bits);
			break;
		case MODEL_ARG_STR:
			snprintf(buf, size, "%s", model_str(m, (uint32_t)bits));
			break;
		default:
			snprintf(buf, size, "?");
		}
		return buf;
	}
	return NULL;
}

TEST(injection_records_everything)
{
	fake_nvtx_loader_init();
	char path[256];
	snprintf(path, sizeof(path), "%s/nvtx.opscope", tmpdir);
	struct opscope_options o = { .output = path };
	REQUIRE(opscope_session_start(&o) == 0);
	REQUIRE(InitializeInjectionNvtx2(fake_export_table) == 1);
	REQUIRE(fake_core_fn[NVTXABI_CORE_RangePushA] != NULL);
	REQUIRE(fake_core2_fn[NVTXABI_CORE2_DomainRangePushEx] != NULL);

	CORE(name_cat_fn, NameCategoryA)(3, "io");
	CHECK_EQ_I(CORE(push_a_fn, RangePushA)("outer"), 0);
	struct nvtxabi_event_attributes a = { 0 };
	a.version = 3;
	a.size = sizeof(a);
	a.category = 3;
	a.color_type = NVTXABI_COLOR_ARGB;
	a.color = 0xFF112233u;
	a.payload_type = NVTXABI_PAYLOAD_DOUBLE;
	a.payload.f64 = 2.5;
	a.message_type = NVTXABI_MESSAGE_ASCII;
	a.message.ascii = "inner";
	CHECK_EQ_I(CORE(push_ex_fn, RangePushEx)(&a), 1);
	CHECK_EQ_I(CORE(pop_fn, RangePop)(), 1);
	CHECK_EQ_I(CORE(push_w_fn, RangePushW)(L"w\u00e9de"), 1);
	CHECK_EQ_I(CORE(pop_fn, RangePop)(), 1);
	CHECK_EQ_I(CORE(pop_fn, RangePop)(), 0);
	CHECK_EQ_I(CORE(pop_fn, RangePop)(), -1); /* nothing open */
	uint64_t id = CORE(start_a_fn, RangeStartA)("async");
	CHECK(id != 0);
	CORE(end_fn, RangeEnd)(id);
	CORE(mark_a_fn, MarkA)("mark");
	const void *dom = CORE2(dom_create_fn, DomainCreateA)("dom");
	const void *reg = CORE2(dom_reg_fn, DomainRegisterStringA)(dom, "registered");
	struct nvtxabi_event_attributes r = { 0 };
	r.version = 3;
	r.size = sizeof(r);
	r.message_type = NVTXABI_MESSAGE_REGISTERED;
	r.message.registered = reg;
	CHECK_EQ_I(CORE2(dom_push_fn, DomainRangePushEx)(dom, &r), 0);
	CHECK_EQ_I(CORE2(dom_pop_fn, DomainRangePop)(dom), 0);
	REQUIRE(opscope_session_stop() == 0);

	struct model *m = model_new();
	char err[256];
	REQUIRE(opscope_load_file(m, path, err, sizeof(err)) == 0);
	int outer = 0, inner = 0, wide = 0, registered = 0, async = 0, mark = 0;
	char buf[64];
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		for (uint64_t i = 0; i < tr->nranges; i++) {
			const char *name = model_str(m, tr->ranges.name[i]);
			uint64_t fa = tr->ranges.first_arg[i];
			uint32_t na = tr->ranges.nargs[i];
			CHECK_EQ_U(tr->ranges.category[i], OPSCOPE_CAT_NVTX);
			if (strcmp(name, "outer") == 0)
				outer++;
			if (strcmp(name, "inner") == 0) {
				inner++;
				CHECK_EQ_U(tr->ranges.depth[i], 1);
				const char *v =
					find_arg(m, fa, na, "category_name", buf, sizeof(buf));
				CHECK_STR(v, "io");
				v = find_arg(m, fa, na, "color", buf, sizeof(buf));
				CHECK_STR(v, "4279312947");
			}
			if (strcmp(name, "w\xc3\xa9"
					 "de") == 0)
				wide++;
			if (strcmp(name, "registered") == 0) {
				registered++;
				CHECK_STR(find_arg(m, fa, na, "domain", buf, sizeof(buf)), "dom");
			}
			if (strcmp(name, "async") == 0)
				async++;
		}
		for (uint64_t i = 0; i < tr->ninstants; i++)
			if (strcmp(model_str(m, tr->instants.name[i]), "mark") == 0)
				mark++;
	}
	CHECK_EQ_I(outer, 1);
	CHECK_EQ_I(inner, 1);
	CHECK_EQ_I(wide, 1);
	CHECK_EQ_I(registered, 1);
	CHECK_EQ_I(async, 1);
	CHECK_EQ_I(mark, 1);
	model_free(m);
}

TEST(nothing_recorded_without_session)
{
	/* Handlers installed, no session: NVTX calls are harmless and the nesting contract
	 * still holds. */
	CHECK_EQ_I(CORE(push_a_fn, RangePushA)("x"), 0);
	CHECK_EQ_I(CORE(pop_fn, RangePop)(), 0);
	CHECK_EQ_U(CORE(start_a_fn, RangeStartA)("y"), 0);
	CORE(mark_a_fn, MarkA)("z");
}

TEST(disabled_by_environment)
{
	setenv("OPSCOPE_NVTX", "0", 1);
	memset(fake_core_fn, 0, sizeof(fake_core_fn));
	CHECK_EQ_I(InitializeInjectionNvtx2(fake_export_table), 0);
	CHECK(fake_core_fn[NVTXABI_CORE_RangePushA] == NULL);
	unsetenv("OPSCOPE_NVTX");
}

struct harness_state harness;

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	static const struct harness_test tests[] = {
		{ "injection_records_everything", test_injection_records_everything },
		{ "nothing_recorded_without_session", test_nothing_recorded_without_session },
		{ "disabled_by_environment", test_disabled_by_environment },
	};
	int rc = harness_run(tests, 3);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	(void)!system(cmd);
	return rc;
}
