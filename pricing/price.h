/*
 * price.h - the GPU catalog (data/gpus.csv) and cloud price tables
 * (data/prices.csv, overlaid by the user's updates): load, validate, look
 * up, and merge updates atomically with a history.
 *
 * Plain data (struct price_gpu, struct price_offering) is transparent so
 * tests can build it inline.  All figures are SI base units: bytes, bytes/s,
 * FLOP/s, USD per hour.  A figure the catalog does not have is 0 (or < 0 for
 * prices, see below) and makes the GPU ineligible for what needs it.
 */
#ifndef GPUPLAN_PRICE_H
#define GPUPLAN_PRICE_H

#include <stddef.h>

#include "common.h"

#define PRICE_NAME_MAX 64

struct price_gpu {
	char name[PRICE_NAME_MAX];      /* canonical, e.g. "H100-SXM5-80GB" */
	double memory_bytes;            /* HBM/GDDR capacity, bytes (1 GB = 1e9) */
	double hbm_bytes_per_s;         /* memory bandwidth */
	double bf16_flops_per_s;        /* dense bf16/fp16 tensor peak; 0 unknown */
	double fp8_flops_per_s;         /* dense fp8 peak; 0 = none or unknown */
	double tf32_flops_per_s;
	double fp32_flops_per_s;
	char intra_link[PRICE_NAME_MAX];/* "NVLink 4", "PCIe Gen4 x16", ... */
	double intra_bytes_per_s;       /* per GPU, one direction; 0 unknown */
	int nvlink;                     /* 1 when the intra-node link is NVLink/XGMI */
	int p2p;                        /* 1 when peer-to-peer works between GPUs */
	double tdp_w;                   /* board power; 0 unknown */
};

struct price_offering {
	char provider[PRICE_NAME_MAX];      /* "aws", "gcp", "lambda", ... */
	char instance_type[PRICE_NAME_MAX]; /* "p5.48xlarge" */
	char gpu[PRICE_NAME_MAX];           /* canonical GPU name */
	int gpus_per_node;
	char region[PRICE_NAME_MAX];
	double on_demand_usd_per_hour;      /* per node; < 0 when not offered */
	double spot_usd_per_hour;           /* per node; < 0 when not offered */
	double inter_node_bytes_per_s;      /* per node, one direction; 0 unknown */
	int max_nodes;                      /* availability; 0 = not stated */
	char version[PRICE_NAME_MAX * 2];   /* catalog version or date */
};

struct price_catalog {
	struct price_gpu *gpus;
	size_t n_gpus;
	struct price_offering *offers;
	size_t n_offers;
};

/* Where catalogs come from.  data_dir holds the shipped gpus.csv and
 * prices.csv; user_dir holds the user's merged prices.csv and history
 * (NULL: $GPUPLAN_DATA_DIR, else $XDG_DATA_HOME/gpuplan, else
 * ~/.local/share/gpuplan). */
struct price_opts {
	const char *data_dir;
	const char *user_dir;
};
void price_opts_init(struct price_opts *o);

/* Loads gpus.csv and prices.csv (the user's table overlaid on the shipped
 * one) into cat.  Returns RC_OK, RC_INPUT (bad file, message printed) or
 * RC_ERR.  Release with price_catalog_release(). */
enum rc price_catalog_load(struct price_catalog *cat, const struct price_opts *o);
void price_catalog_release(struct price_catalog *cat);

/* Finds a GPU by canonical name or alias ("h100", "A100-80GB", case-
 * insensitive).  Returns NULL when unknown. */
const struct price_gpu *price_gpu_find(const struct price_catalog *cat,
				       const char *name);

/* USD per GPU-hour of an offering, on demand or spot; < 0 when not offered. */
double price_offering_usd_per_gpu_hour(const struct price_offering *o, int spot);

#endif
