/*
 * plan_published.h - the fastest published run of a model on a GPU
 * (plan_published.c).
 */
#ifndef GPUPLAN_PLAN_PUBLISHED_H
#define GPUPLAN_PLAN_PUBLISHED_H

struct plan_published {
	const char *model;          /* models.csv name */
	const char *gpu;            /* gpus.csv canonical name */
	double tokens_per_s_per_gpu;
	const char *run;            /* system, GPUs, precision, release */
};

extern const char *const plan_published_source;

/* The fastest published run of model on gpu, or NULL where none is known. */
const struct plan_published *plan_published_best(const char *model, const char *gpu);

#endif
