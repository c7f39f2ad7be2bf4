/*
 * exec_dtype.c - element types and precisions: the bytes of a buffer's
 * element, the activation type a backend stores at a precision, and the
 * precisions' names.  The bottom of the device layer: every backend and
 * communicator reads it, and it reads nothing of theirs.
 */
#include <stdint.h>
#include <string.h>

#include "device/exec_device.h"

const char *exec_precision_str(enum exec_precision p)
{
	return p == EXEC_PRECISION_FP32 ? "fp32" : "bf16";
}

enum rc exec_precision_parse(const char *s, enum exec_precision *out)
{
	if (s && strcmp(s, "bf16") == 0)
		*out = EXEC_PRECISION_BF16;
	else if (s && strcmp(s, "fp32") == 0)
		*out = EXEC_PRECISION_FP32;
	else
		return RC_USAGE;
	return RC_OK;
}

size_t exec_dtype_size(enum exec_dtype t)
{
	return t == EXEC_F64 ? sizeof(double) : t == EXEC_BF16 ? 2
		: t == EXEC_I32 ? sizeof(int32_t) : sizeof(float);
}

enum exec_dtype exec_act_dtype(const char *name, enum exec_precision p)
{
	return name && strcmp(name, "cuda") == 0 && p == EXEC_PRECISION_BF16 ? EXEC_BF16
									     : EXEC_F32;
}

int exec_act_bytes(const char *name, enum exec_precision p)
{
	return (int)exec_dtype_size(exec_act_dtype(name, p));
}
