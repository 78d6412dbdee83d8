/*
 * names.c: names of the stable enums of the public API (categories, profiler states), used
 * by the runtime, the readers and every report so that all print the same words.
 */
#include <strings.h>

#include "opscope/opscope.h"

static const char *const category_names[OPSCOPE_CAT_COUNT_] = {
	[OPSCOPE_CAT_OPERATOR] = "Operator",
	[OPSCOPE_CAT_DATALOADER] = "Dataloader",
	[OPSCOPE_CAT_PROFILE_STEP] = "ProfileStep",
	[OPSCOPE_CAT_CUDA_RUNTIME] = "CudaRuntime",
	[OPSCOPE_CAT_KERNEL] = "Kernel",
	[OPSCOPE_CAT_MEMCPY] = "Memcpy",
	[OPSCOPE_CAT_MEMSET] = "Memset",
	[OPSCOPE_CAT_USER_DEFINED] = "UserDefined",
	[OPSCOPE_CAT_OPERATOR_INNER] = "OperatorInner",
	[OPSCOPE_CAT_FORWARD] = "Forward",
	[OPSCOPE_CAT_BACKWARD] = "Backward",
	[OPSCOPE_CAT_OPTIMIZATION] = "Optimization",
	[OPSCOPE_CAT_COMMUNICATION] = "Communication",
	[OPSCOPE_CAT_PYTHON_OP] = "PythonOp",
	[OPSCOPE_CAT_PYTHON_USER_DEFINED] = "PythonUserDefined",
	[OPSCOPE_CAT_PYTHON_FUNCTION] = "PythonFunction",
	[OPSCOPE_CAT_MEMORY] = "Memory",
	[OPSCOPE_CAT_CUDA_DRIVER] = "CudaDriver",
	[OPSCOPE_CAT_NVTX] = "Nvtx",
};

const char *opscope_category_name(int category)
{
	if (category < 0 || category >= OPSCOPE_CAT_COUNT_)
		return "Unknown";
	return category_names[category];
}

int opscope_category_from_name(const char *name)
{
	for (int i = 0; i < OPSCOPE_CAT_COUNT_; i++)
		if (strcasecmp(name, category_names[i]) == 0)
			return i;
	return -1;
}

const char *opscope_state_name(int state)
{
	switch (state) {
	case OPSCOPE_STATE_CLOSED:
		return "CLOSED";
	case OPSCOPE_STATE_READY:
		return "READY";
	case OPSCOPE_STATE_RECORD:
		return "RECORD";
	case OPSCOPE_STATE_RECORD_AND_RETURN:
		return "RECORD_AND_RETURN";
	}
	return "UNKNOWN";
}
