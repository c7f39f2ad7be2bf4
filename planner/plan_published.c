/*
 * plan_published.c - the fastest published training runs of a model on a
 * GPU, so that an answer can say where its predicted speed stands against
 * what any run has shown.  It calls no other file.
 */
#include <string.h>
#include "plan_published.h"

/* Tokens per second per GPU, the best row of each model and DGX system in
 * Megatron-Bridge's performance summary (NVIDIA-NeMo/Megatron-Bridge
 * docs/performance-summary.md and performance-summary-archive.md @
 * 067f987df03b8355b03192d88d70f1709fedf51a, containers 26.02 to 26.08;
 * the project's bench/data/moe_runs.csv holds every row). */
static const struct plan_published rows[] = {
	{ "deepseek-v3", "B200", 3328, "DGX-B200, 256 GPUs, MXFP8, container 26.04.01" },
	{ "deepseek-v3", "B300", 3541, "DGX-B300, 256 GPUs, MXFP8, container 26.06" },
	{ "deepseek-v3", "GB200", 4969, "DGX-GB200, 256 GPUs, MXFP8, container 26.06" },
	{ "deepseek-v3", "GB300", 6422, "DGX-GB300, 256 GPUs, MXFP8, container 26.06" },
	{ "qwen3-30b-a3b", "H100-SXM5-80GB", 9058, "DGX-H100, 16 GPUs, FP8, container 26.02.01" },
	{ "qwen3-30b-a3b", "B200", 27136, "DGX-B200, 8 GPUs, MXFP8, container 26.04.01" },
	{ "qwen3-30b-a3b", "B300", 40769, "DGX-B300, 8 GPUs, MXFP8, container 26.06" },
	{ "qwen3-30b-a3b", "GB200", 40960, "DGX-GB200, 8 GPUs, MXFP8, container 26.06.01" },
	{ "qwen3-30b-a3b", "GB300", 45275, "DGX-GB300, 8 GPUs, MXFP8, container 26.06" },
};

const char *const plan_published_source =
	"Megatron-Bridge performance summary @ 067f987";

const struct plan_published *plan_published_best(const char *model, const char *gpu)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (!strcmp(rows[i].model, model) && !strcmp(rows[i].gpu, gpu))
			return &rows[i];
	return NULL;
}
