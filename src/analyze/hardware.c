/*
 * hardware.c: the peak table (what each accelerator can do at best, per data type and unit,
 * and its memory bandwidth), the device-name patterns that pick a row, the parser of peaks
 * given by hand (--peak), and the kernel-name table that says whether a kernel ran on tensor
 * cores.
 *
 * Invariants: every number in hardware_table is dense (no structured sparsity) and comes from
 * the vendor's published figures named in the row's source (where the datasheet prints only the
 * sparse figure, the dense one is half of it, as the datasheets' footnotes say); a number no
 * stored copy of the datasheet gave is 0, never typed from memory. docs/peaks.md prints the
 * same table and says where each figure was read. Device names match through
 * hardware_name_patterns in order, so a specific form factor ("H100 NVL") is tried before its
 * family ("H100"). Everything here is constant data and pure functions.
 */
#include "analyze/hardware.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T 1e12 /* tera: the datasheets give FLOP/s in TFLOPS and bandwidth in TB/s */
#define G 1e9  /* giga: bandwidth in GB/s */

/* Sources, shared by the rows that come from one document. */
#define SRC_V100                                                                                      \
	"NVIDIA Tesla V100 datasheet figures (SXM2: 7.8/15.7/125 TFLOPS; PCIe: 7/14/112 "             \
	"TFLOPS; 900 GB/s), read in https://developer.nvidia.com/programming-tensor-cores-cuda-9-0, " \
	"https://cvw.cac.cornell.edu/gpu-architecture/gpu-example-tesla-v100/tesla and "              \
	"https://www.io-tech.fi/uutinen/nvidia-esitteli-tesla-v100-pci-express-kiihdyttimen-tieteelliseen-laskentaan/"
#define SRC_A100                                                                   \
	"NVIDIA A100 Tensor Core GPU datasheet, "                                  \
	"https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/" \
	"nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (figures read in "     \
	"https://glennklockwood.com/garden/processors/A100; PCIe bandwidths in "   \
	"https://www.thundercompute.com/blog/nvidia-a100-specs-full-guide)"
#define SRC_H100                                                                                   \
	"NVIDIA H100 Tensor Core GPU datasheet (table 'shown with sparsity, 1/2 lower without'), " \
	"read in https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html"
#define SRC_H200                                               \
	"NVIDIA H200: same GH100 compute as H100 SXM "         \
	"(https://glennklockwood.com/garden/processors/h100, " \
	"https://www.aiminingco.com/gpu/h200/specs), 4.8 TB/s HBM3e"
#define SRC_B200                                      \
	"NVIDIA HGX B200 (1,000 W) figures, read in " \
	"https://glennklockwood.com/garden/processors/B200; 8 TB/s"
#define SRC_T4                                                                             \
	"NVIDIA T4 datasheet figures (8.1 / 65 TFLOPS, 130 TOPS, 320 GB/s), read in "      \
	"https://sysrqmts.com/gpus/compare/nvidia-a100-sxm4-40-gb-vs-nvidia-tesla-t4 and " \
	"https://hmc-tech.com/gpu/nvidia-l4-vs-nvidia-t4"
#define SRC_L4                                                                              \
	"NVIDIA L4 datasheet figures (sparse TF32 120, FP16 242, FP8/INT8 485; 300 GB/s), " \
	"read in https://store.sourcecode.com/en-us/bg-bucket-compare/125/9820 and "        \
	"https://grokipedia.com/page/NVIDIA_L4_vs_L40S; FP32 30.3 in "                      \
	"https://fpsbench.com/compare/gpu/nvidia-l4-vs-nvidia-tesla-m40"
#define SRC_L40S                                                                                     \
	"NVIDIA L40S datasheet table, read in https://www.mullet.se/product.html?product_id=355414 " \
	"(INT8 733 TOPS in https://store.sourcecode.com/en-us/bg-bucket-compare/125/9820)"
#define SRC_A10                                                                            \
	"NVIDIA A10: FP32 31.2 TFLOPS in "                                                 \
	"https://sysrqmts.com/ru/gpus/compare/nvidia-a10-pcie-vs-nvidia-quadro-rtx-4000, " \
	"600 GB/s in https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/"
#define SRC_MI250                                                                               \
	"AMD Instinct MI250/MI250X table (per module; halved: ROCm shows each of the two GCDs " \
	"as a device), read in "                                                                \
	"https://zexron.com/amd-mi250-x-aldebaran-as-mcm-with-up-to-479-teraflop-s-and-560-watt-tdp"
#define SRC_MI300X                                                                             \
	"AMD Instinct MI300X: 5.3 TB/s in "                                                    \
	"https://rocm.docs.amd.com/en/docs-6.2.2/conceptual/gpu-arch/mi300.html; FP32 163.4, " \
	"FP16/BF16 1307.4, FP8 2614.9 TFLOPS (dense) in AMD's own roofline tool's peak table " \
	"(_PEAK_TFLOPS_MI300, (c) Advanced Micro Devices 2026, stored public source); FP64, "  \
	"TF32 and INT8: no stored AMD figure"

/* Rows, in the order docs/peaks.md prints them; the indexes below name them for the patterns. */
enum {
	ROW_V100_SXM2,
	ROW_V100_PCIE,
	ROW_A100_SXM4_40,
	ROW_A100_SXM4_80,
	ROW_A100_PCIE_40,
	ROW_A100_PCIE_80,
	ROW_H100_SXM5,
	ROW_H100_PCIE,
	ROW_H100_NVL,
	ROW_H200,
	ROW_B200,
	ROW_T4,
	ROW_L4,
	ROW_L40S,
	ROW_A10,
	ROW_MI250X,
	ROW_MI250,
	ROW_MI300X,
	ROW_COUNT,
};

/* name, source, fp64, fp32, tf32, fp16, bf16, fp8, int8, bandwidth, tc_arch */
const struct hardware_peaks hardware_table[ROW_COUNT + 1] = {
	[ROW_V100_SXM2] = { "NVIDIA Tesla V100 SXM2", SRC_V100, 7.8 * T, 15.7 * T, 0, 125 * T, 0, 0,
			    0, 900 * G, 70 },
	[ROW_V100_PCIE] = { "NVIDIA Tesla V100 PCIe", SRC_V100, 7 * T, 14 * T, 0, 112 * T, 0, 0, 0,
			    900 * G, 70 },
	[ROW_A100_SXM4_40] = { "NVIDIA A100 SXM4 40GB", SRC_A100, 9.7 * T, 19.5 * T, 156 * T,
			       312 * T, 312 * T, 0, 624 * T, 1555 * G, 80 },
	[ROW_A100_SXM4_80] = { "NVIDIA A100 SXM4 80GB", SRC_A100, 9.7 * T, 19.5 * T, 156 * T,
			       312 * T, 312 * T, 0, 624 * T, 2039 * G, 80 },
	[ROW_A100_PCIE_40] = { "NVIDIA A100 PCIe 40GB", SRC_A100, 9.7 * T, 19.5 * T, 156 * T,
			       312 * T, 312 * T, 0, 624 * T, 1555 * G, 80 },
	[ROW_A100_PCIE_80] = { "NVIDIA A100 PCIe 80GB", SRC_A100, 9.7 * T, 19.5 * T, 156 * T,
			       312 * T, 312 * T, 0, 624 * T, 1935 * G, 80 },
	/* H100: the datasheet prints tensor figures with sparsity; dense is half */
	[ROW_H100_SXM5] = { "NVIDIA H100 SXM5 80GB", SRC_H100, 34 * T, 67 * T, 494.5 * T, 989.5 * T,
			    989.5 * T, 1979 * T, 1979 * T, 3350 * G, 90 },
	[ROW_H100_PCIE] = { "NVIDIA H100 PCIe 80GB", SRC_H100, 26 * T, 51 * T, 378 * T, 756.5 * T,
			    756.5 * T, 1513 * T, 1513 * T, 2000 * G, 90 },
	/* no stored copy of the H100 NVL datasheet: its own row so that it is not taken for an
	 * SXM5, with no numbers (the report says so; --peak gives them) */
	[ROW_H100_NVL] = { "NVIDIA H100 NVL", "no stored source: give its peaks with --peak", 0, 0,
			   0, 0, 0, 0, 0, 0, 90 },
	[ROW_H200] = { "NVIDIA H200 SXM 141GB", SRC_H200, 34 * T, 67 * T, 494.5 * T, 989.5 * T,
		       989.5 * T, 1979 * T, 1979 * T, 4800 * G, 90 },
	[ROW_B200] = { "NVIDIA B200 (HGX, 1000 W)", SRC_B200, 40 * T, 80 * T, 1100 * T, 2250 * T,
		       2250 * T, 4500 * T, 4500 * T, 8000 * G, 100 },
	[ROW_T4] = { "NVIDIA T4", SRC_T4, 0, 8.1 * T, 0, 65 * T, 0, 0, 130 * T, 320 * G, 75 },
	[ROW_L4] = { "NVIDIA L4", SRC_L4, 0, 30.3 * T, 60 * T, 121 * T, 121 * T, 242.5 * T,
		     242.5 * T, 300 * G, 89 },
	[ROW_L40S] = { "NVIDIA L40S", SRC_L40S, 0, 91.6 * T, 183 * T, 362.05 * T, 362.05 * T,
		       733 * T, 733 * T, 864 * G, 89 },
	[ROW_A10] = { "NVIDIA A10", SRC_A10, 0, 31.2 * T, 0, 0, 0, 0, 0, 600 * G, 86 },
	/* per GCD: the module's 47.9 / 383 TFLOPS and 3.2 TB/s halved */
	[ROW_MI250X] = { "AMD Instinct MI250X (one GCD)", SRC_MI250, 23.95 * T, 23.95 * T, 0,
			 191.5 * T, 191.5 * T, 0, 191.5 * T, 1600 * G, 0 },
	[ROW_MI250] = { "AMD Instinct MI250 (one GCD)", SRC_MI250, 22.65 * T, 22.65 * T, 0,
			181.05 * T, 181.05 * T, 0, 181.05 * T, 1600 * G, 0 },
	[ROW_MI300X] = { "AMD Instinct MI300X", SRC_MI300X, 0, 163.4 * T, 0, 1307.4 * T, 1307.4 * T,
			 2614.9 * T, 0, 5300 * G, 0 },
	[ROW_COUNT] = { NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
};

/* One device-name pattern: every word in `all` must occur in the name (case-insensitive). */
struct hardware_name_pattern {
	const char *all[3]; /* substrings, all required; unused slots NULL */
	int row;	    /* index into hardware_table */
};

/* Ordered: the first pattern whose substrings all occur wins, so form factors come before
 * their family and "MI250X" before "MI250". A name that matches only a family ("NVIDIA
 * A100", "Tesla V100-32GB") gets that family's SXM row: the highest peaks, so that the % of
 * peak is never overstated. */
static const struct hardware_name_pattern hardware_name_patterns[] = {
	{ { "V100", "PCIE", NULL }, ROW_V100_PCIE },
	{ { "V100", NULL, NULL }, ROW_V100_SXM2 }, /* SXM2, SXM3, DGXS (NVLink), family */
	{ { "A100", "PCIE", "80GB" }, ROW_A100_PCIE_80 },
	{ { "A100", "PCIE", NULL }, ROW_A100_PCIE_40 },
	{ { "A100", "80GB", NULL }, ROW_A100_SXM4_80 },
	/* "NVIDIA A100-PG509-200": 108 SMs, 39.4 GiB in the HTA traces' deviceProperties, no
	 * PCIe in the name: an SXM4 40GB board (PG509 is the SXM4 module's board number) */
	{ { "A100", "PG509", NULL }, ROW_A100_SXM4_40 },
	{ { "A100", "40GB", NULL }, ROW_A100_SXM4_40 },
	{ { "A100", NULL, NULL }, ROW_A100_SXM4_80 },
	{ { "H100", "NVL", NULL }, ROW_H100_NVL },
	{ { "H100", "PCIE", NULL }, ROW_H100_PCIE },
	{ { "H100", NULL, NULL }, ROW_H100_SXM5 }, /* "NVIDIA H100 80GB HBM3" is the SXM5 */
	{ { "H200", NULL, NULL }, ROW_H200 },
	{ { "B200", NULL, NULL }, ROW_B200 },
	{ { "L40S", NULL, NULL }, ROW_L40S },
	{ { "MI250X", NULL, NULL }, ROW_MI250X },
	{ { "MI250", NULL, NULL }, ROW_MI250 },
	{ { "MI300X", NULL, NULL }, ROW_MI300X },
	/* short names last, and as whole words: "T4" and "L4" occur inside other names */
	{ { " T4", NULL, NULL }, ROW_T4 },
	{ { " L4", NULL, NULL }, ROW_L4 },
	{ { " A10", NULL, NULL }, ROW_A10 },
};

/* Case-insensitive substring search; for a needle that starts with a space, the match must
 * also end the name or be followed by a character that is not a letter or digit ("NVIDIA L4"
 * but not "NVIDIA L40", "Tesla T4" but not "Tesla T40"). */
static bool hardware_has(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *h = hay; *h; h++) {
		size_t i = 0;
		while (i < n && h[i] &&
		       tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i < n)
			continue;
		if (needle[0] != ' ' || !isalnum((unsigned char)h[n]))
			return true;
	}
	return false;
}

const struct hardware_peaks *hardware_find(const char *device_name)
{
	if (!device_name || !*device_name)
		return NULL;
	/* a leading space lets " T4" match a name that starts with "T4" */
	char buf[256];
	int len = snprintf(buf, sizeof(buf), " %s", device_name);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return NULL; /* no device name is that long */
	size_t np = sizeof(hardware_name_patterns) / sizeof(hardware_name_patterns[0]);
	for (size_t i = 0; i < np; i++) {
		const struct hardware_name_pattern *p = &hardware_name_patterns[i];
		bool all = true;
		for (int k = 0; k < 3 && p->all[k]; k++)
			all = all && hardware_has(buf, p->all[k]);
		if (all)
			return &hardware_table[p->row];
	}
	return NULL;
}

double hardware_peak_flops(const struct hardware_peaks *p, enum perfmodel_dtype dt,
			   bool tensor_cores)
{
	if (!p)
		return 0;
	switch (dt) {
	case PERFMODEL_DT_FP64:
		return p->fp64_flops; /* the table keeps the vector rate only */
	case PERFMODEL_DT_FP32:
		return tensor_cores ? p->tf32_flops : p->fp32_flops;
	case PERFMODEL_DT_FP16:
		return tensor_cores ? p->fp16_flops : p->fp32_flops;
	case PERFMODEL_DT_BF16:
		return tensor_cores ? p->bf16_flops : p->fp32_flops;
	case PERFMODEL_DT_FP8:
		return tensor_cores ? p->fp8_flops : 0; /* no vector FP8 rate is published */
	case PERFMODEL_DT_INT8:
		return tensor_cores ? p->int8_ops : 0;
	case PERFMODEL_DT_INT:
	case PERFMODEL_DT_UNKNOWN:
		return 0;
	}
	return 0;
}

/* Keys of --peak, each with the field it sets. */
struct hardware_key {
	const char *key;
	size_t offset; /* offsetof the double in struct hardware_peaks */
};

static const struct hardware_key hardware_keys[] = {
	{ "fp64", offsetof(struct hardware_peaks, fp64_flops) },
	{ "fp32", offsetof(struct hardware_peaks, fp32_flops) },
	{ "tf32", offsetof(struct hardware_peaks, tf32_flops) },
	{ "fp16", offsetof(struct hardware_peaks, fp16_flops) },
	{ "bf16", offsetof(struct hardware_peaks, bf16_flops) },
	{ "fp8", offsetof(struct hardware_peaks, fp8_flops) },
	{ "int8", offsetof(struct hardware_peaks, int8_ops) },
	{ "bw", offsetof(struct hardware_peaks, mem_bw_bytes) },
};
#define HARDWARE_NKEYS (sizeof(hardware_keys) / sizeof(hardware_keys[0]))

/* Parse one value: digits with an optional fraction, then an optional suffix k M G T P. No
 * sign, exponent, hex, inf or nan: a peak is written as a datasheet writes it. */
static bool hardware_value(const char *s, size_t n, double *out, const char **why)
{
	char num[64];
	size_t i = 0, digits = 0;
	while (i < n && (isdigit((unsigned char)s[i]) || s[i] == '.')) {
		digits += isdigit((unsigned char)s[i]) ? 1 : 0;
		i++;
	}
	if (i == 0 || digits == 0) {
		*why = n ? "is not a number" : "has no value";
		return false;
	}
	if (i >= sizeof(num)) {
		*why = "is too long a number";
		return false;
	}
	memcpy(num, s, i);
	num[i] = '\0';
	if (strchr(num, '.') != strrchr(num, '.')) {
		*why = "is not a number";
		return false;
	}
	errno = 0;
	char *end;
	double v = strtod(num, &end);
	if (*end || errno) {
		*why = "is not a number";
		return false;
	}
	if (i < n) {
		static const char sfx[] = "kMGTP";
		const char *at = strchr(sfx, s[i]);
		if (!at || i + 1 != n) {
			*why = "has an unknown suffix (use k, M, G, T or P)";
			return false;
		}
		v *= pow(1000.0, (double)(at - sfx + 1));
	}
	if (!isfinite(v)) {
		*why = "is out of range";
		return false;
	}
	*out = v;
	return true;
}

bool hardware_peaks_parse(const char *text, struct hardware_peaks *out, char *err, size_t errlen)
{
	if (!text || !*text) {
		snprintf(err, errlen, "--peak: empty (want e.g. fp32=19.5T,bf16=312T,bw=1.555T)");
		return false;
	}
	struct hardware_peaks tmp = *out; /* applied only when the whole text parses */
	bool seen[HARDWARE_NKEYS] = { false };
	const char *s = text;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		/* trim spaces around the item */
		while (n && isspace((unsigned char)*s)) {
			s++;
			n--;
		}
		while (n && isspace((unsigned char)s[n - 1]))
			n--;
		if (!n) {
			snprintf(err, errlen, "--peak: empty item in \"%s\"", text);
			return false;
		}
		const char *eq = memchr(s, '=', n);
		if (!eq) {
			snprintf(err, errlen, "--peak: \"%.*s\" has no '=' (want key=value)",
				 (int)n, s);
			return false;
		}
		size_t kn = (size_t)(eq - s);
		while (kn && isspace((unsigned char)s[kn - 1]))
			kn--;
		size_t k;
		for (k = 0; k < HARDWARE_NKEYS; k++)
			if (strlen(hardware_keys[k].key) == kn &&
			    strncmp(hardware_keys[k].key, s, kn) == 0)
				break;
		if (k == HARDWARE_NKEYS) {
			snprintf(err, errlen,
				 "--peak: unknown key \"%.*s\" (keys: fp64 fp32 tf32 fp16 bf16 fp8 "
				 "int8 bw)",
				 (int)kn, s);
			return false;
		}
		if (seen[k]) {
			snprintf(err, errlen, "--peak: key %s given twice", hardware_keys[k].key);
			return false;
		}
		seen[k] = true;
		const char *v = eq + 1;
		size_t vn = n - (size_t)(v - s);
		while (vn && isspace((unsigned char)*v)) {
			v++;
			vn--;
		}
		double val;
		const char *why;
		if (!hardware_value(v, vn, &val, &why)) {
			snprintf(err, errlen, "--peak: %s: \"%.*s\" %s", hardware_keys[k].key,
				 (int)vn, v, why);
			return false;
		}
		memcpy((char *)&tmp + hardware_keys[k].offset, &val, sizeof(val));
		if (!comma)
			break;
		s = comma + 1;
	}
	tmp.name = "given by hand";
	tmp.source = "--peak";
	*out = tmp;
	return true;
}

/* The tensor-core kernel-name table. PyProf's list first (tc.py, copied by the TensorBoard
 * plugin; min_arch 70: Volta), then the markers of later libraries' tensor-core kernels, each
 * seen in the kernel names of a trace in ../shared/data or of a public profile (docs/peaks.md
 * lists an example name for each). Not listed: "nvjet" (cuBLASLt's Hopper/Blackwell kernels):
 * no source we have says every nvjet kernel runs on tensor cores. */
#define PYPROF "PyProf tc.py TC_Whitelist"
const struct hardware_tc_pattern hardware_tc_patterns[] = {
	{ "h884", 70, PYPROF },
	{ "s884", 70, PYPROF },
	{ "h1688", 70, PYPROF },
	{ "s1688", 70, PYPROF },
	{ "hmma", 70, PYPROF },
	{ "i8816", 70, PYPROF },
	{ "16816", 70, PYPROF },
	{ "dgrad_1x1_stride_2x2", 70, PYPROF },
	{ "first_layer_wgrad_kernel", 70, PYPROF },
	{ "conv1x1", 70, PYPROF },
	{ "conv2d_c1_k1", 70, PYPROF },
	{ "direct_group", 70, PYPROF },
	{ "xmma_implicit_gemm", 70, PYPROF },
	{ "xmma_sparse_conv", 70, PYPROF },
	{ "xmma_warp_specialized_implicit_gemm", 70, PYPROF },
	{ "xmma_gemm", 70, PYPROF },
	{ "xmma_sparse_gemm", 70, PYPROF },
	{ "c1688", 70, PYPROF },
	/* CUTLASS's tensor-op kernels (cutlass_80_tensorop_s1688gemm_*, cutlass_70_wmma_tensorop_*,
	 * cutlass_tensorop_s1688fprop_* in cuDNN; "simt" kernels do not carry it) */
	{ "tensorop", 70, "CUTLASS kernel names in HTA A100/V100 traces" },
	{ "TensorOp", 70,
	  "CUTLASS template names (cutlass_cudnn_train ImplicitGemm) in HTA traces" },
	/* cuDNN/cuBLAS xmma kernels of Ampere and Hopper: sm80_xmma_fprop_implicit_gemm_..._tensor16x8x8 */
	{ "sm80_xmma_", 80, "cuDNN kernel names in HTA A100 traces" },
	{ "sm90_xmma_", 90, "cuBLAS kernel names in public Hopper profiles (sm90_xmma_gemm_*)" },
	/* AMD Tensile (hipBLASLt/rocBLAS) kernels with a matrix-instruction (MFMA) tile */
	{ "_MI16x16x", 0, "Tensile kernel names in the HTA MI250 trace" },
	{ NULL, 0, NULL },
};

bool hardware_kernel_uses_tc(const char *kernel_name, int tc_arch)
{
	if (!kernel_name)
		return false;
	for (const struct hardware_tc_pattern *p = hardware_tc_patterns; p->substring; p++) {
		if (tc_arch != 0 && p->min_arch > tc_arch)
			continue;
		if (strstr(kernel_name, p->substring))
			return true;
	}
	return false;
}
