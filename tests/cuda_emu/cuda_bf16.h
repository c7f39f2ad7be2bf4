/*
 * cuda_bf16.h - a CPU stand-in for the part of CUDA's bf16 header the
 * CUDA backend uses: the storage type and its two conversions.  A bf16 is
 * the upper 16 bits of an fp32 (1 sign, 8 exponent, 7 mantissa bits);
 * fp32 goes to the nearest, ties to even, as __float2bfloat16 does.
 * No arithmetic on the type: the backend computes in fp32.
 */
#ifndef GPUPLAN_CUDA_EMU_BF16_H
#define GPUPLAN_CUDA_EMU_BF16_H

#include <stdint.h>
#include <string.h>

struct __nv_bfloat16 {
	uint16_t x;
};

static inline __nv_bfloat16 __float2bfloat16(float f)
{
	__nv_bfloat16 b;
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7f800000u) != 0x7f800000u)
		u += 0x7fffu + ((u >> 16) & 1u);
	else if (u & 0x007fffffu)
		u |= 0x00400000u;       /* a NaN stays a NaN */
	b.x = (uint16_t)(u >> 16);
	return b;
}

static inline float __bfloat162float(__nv_bfloat16 b)
{
	uint32_t u = (uint32_t)b.x << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

#endif
