/*
 * plan_published.h - the fastest published training runs of a model on a
 * GPU (data/published.csv, read by plan_published.c).
 */
#ifndef GPUPLAN_PLAN_PUBLISHED_H
#define GPUPLAN_PLAN_PUBLISHED_H

#include <stddef.h>

#include "common.h"
#include "price.h"

/* One published run: tokens per second per GPU of model on gpu. */
struct plan_published {
	char model[PRICE_NAME_MAX];         /* models.csv name */
	char gpu[PRICE_NAME_MAX];           /* gpus.csv canonical name */
	double tokens_per_s_per_gpu;
	char run[PRICE_SOURCE_MAX];         /* system, GPUs, precision, release */
	char source[PRICE_SOURCE_MAX];      /* where it was read (data/SOURCES.md) */
};

struct plan_published_table {
	struct plan_published *rows;
	size_t n;
};

/* Loads published.csv at path (columns model, gpu, tokens_per_s_per_gpu,
 * run, source, every cell required; a GPU named by a gpus.csv alias is
 * kept by its canonical name through cat; a number above 0; names and
 * text printable; no other column).  Returns RC_OK, RC_INPUT after one
 * line "path:line:col: column: expected X, found Y" on the first bad cell,
 * or RC_ERR (unreadable).  out is untouched on failure; release it with
 * plan_published_release(). */
enum rc plan_published_load(const char *path, const struct price_catalog *cat,
			    struct plan_published_table *out);
/* Frees what t holds; t may be NULL. */
void plan_published_release(struct plan_published_table *t);

/* The fastest published run of model on gpu in t (t may be NULL), or
 * NULL where none is known. */
const struct plan_published *plan_published_best(const struct plan_published_table *t,
						 const char *model, const char *gpu);

#endif
