/*
 * price.h - the GPU catalog (data/gpus.csv) and cloud price tables
 * (data/prices.csv, overlaid by the user's updates) and the user's GPU
 * quotas: load, validate, look up, and merge updates atomically with a
 * history.
 *
 * Plain data (struct price_gpu, struct price_offering) is transparent so
 * tests can build it inline.  All figures are SI base units: bytes, bytes/s,
 * FLOP/s, USD per hour.  A figure the catalog does not have is 0 (or < 0 for
 * prices, see below) and makes the GPU ineligible for what needs it.
 *
 * Layers (tests/layers/test_layers.sh): common < pricing < simulator <
 * planner < executor < cli; a file includes and calls only its own layer
 * and those before it.  pricing reads common only.
 */
#ifndef GPUPLAN_PRICE_H
#define GPUPLAN_PRICE_H

#include <stddef.h>

#include "common.h"

#define PRICE_NAME_MAX 64
#define PRICE_DATE_MAX 16               /* "YYYY-MM-DD" and its NUL, padded */
/* An answer warns when a price it used is older than this many days
 * (--max-price-age); spot prices move within days, list prices within
 * months. */
#define PRICE_DEFAULT_MAX_AGE_DAYS 90

struct price_gpu {
	char name[PRICE_NAME_MAX];      /* canonical, e.g. "H100-SXM5-80GB" */
	double memory_bytes;            /* HBM/GDDR capacity, bytes (1 GB = 1e9) */
	double hbm_bytes_per_s;         /* memory bandwidth */
	double bf16_flops_per_s;        /* dense bf16/fp16 tensor peak; 0 unknown */
	/* The peak MFU is counted against: the datasheet's dense bf16 peak
	 * (Chowdhery et al. 2022, PaLM, appendix B), kept here when a
	 * calibration replaces bf16_flops_per_s with what GEMMs reach;
	 * 0: bf16_flops_per_s. */
	double mfu_flops_per_s;
	double fp8_flops_per_s;         /* dense fp8 peak; 0 = none or unknown */
	/* Dense peaks of the OCP microscaling formats (MXFP8: 8-bit elements
	 * with an 8-bit scale per 32; NVFP4: 4-bit elements with an fp8 scale
	 * per 16, NVIDIA Blackwell); 0 = none or unknown. */
	double mxfp8_flops_per_s;
	double nvfp4_flops_per_s;
	double tf32_flops_per_s;
	double fp32_flops_per_s;
	char intra_link[PRICE_NAME_MAX];/* "NVLink 4", "PCIe Gen4 x16", ... */
	double intra_bytes_per_s;       /* per GPU, one direction; 0 unknown */
	int nvlink;                     /* 1 when the intra-node link is NVLink/XGMI */
	int p2p;                        /* 1 when documented to work; 0 no or unknown */
	/* GPUs that share one NVLink (or XGMI) switch domain at
	 * intra_bytes_per_s across nodes: 72 in a GB200/GB300 NVL72 rack of 18
	 * nodes x 4 GPUs; 0 = the node (gpus_per_node of the offering), as on
	 * an HGX board of 8, which is one node (data/SOURCES.md: a one-GPU
	 * slice of a board has no NVLink peers). */
	int nvlink_domain;
	double tdp_w;                   /* board power; 0 unknown */
	/* The smallest GEMM dimension at which the simulator's efficiency
	 * curve reaches half its maximum (simulator/sim_const.h); set by a
	 * calibration of this device, 0: the simulator's default. */
	double gemm_dim_half;
	/* 1 when the device's GEMMs pack their operands into cache as they
	 * compute (OpenBLAS on the CPU backend), so that a GEMM's time is its
	 * compute alone: the simulator adds no memory term to it (sim_gemm_hbm),
	 * as calibrate fits such a device's peak on compute alone; 0: a GPU,
	 * whose GEMMs also stream their operands from HBM. */
	int gemm_cached;
	/* The HBM bandwidth the simulator gives a layer's element-wise
	 * kernels (norms, residual adds, the MLP activation), [0] in a GELU
	 * layer, [1] in a SwiGLU one; set by a calibration of this device,
	 * which times them, 0: hbm_bytes_per_s, what a GPU's bandwidth-bound
	 * kernels see.  Where act_bytes_per_s is set too, the norms' and
	 * residual adds' alone. */
	double elt_bytes_per_s[2];
	/* The rate the simulator gives the MLP activation alone (GELU's or
	 * SwiGLU's forward and backward, sim_layer_act_bytes), [0] GELU, [1]
	 * SwiGLU; set by a calibration that times it apart from the norms
	 * (a CPU's GELU, a tanh per element, runs at a sixth of its norms'
	 * rate, so a layer's mix of the two, which tensor parallelism
	 * changes, sets the layer's time), 0: at elt_bytes_per_s with them. */
	double act_bytes_per_s[2];
	/* The rate at which the attention core (scores, softmax, values;
	 * forward and backward) does the FLOPs the simulator counts for it
	 * (sim_attn_flops); set by a calibration of this device, which times
	 * the executor's attention, 0: the flash-attention model of sim.c. */
	double attn_flops_per_s;
	/* The HBM bandwidth the simulator gives the optimizer step (AdamW,
	 * the gradient norm, the zeroing: sim_optimizer_bytes); set by a
	 * calibration of this device, which times them, 0: hbm_bytes_per_s. */
	double opt_bytes_per_s;
	/* Memory the runtime holds on the device before any tensor: 0 = a
	 * CUDA context with its libraries (SIM_CONTEXT_BYTES), < 0 none (the
	 * executor's CPU ranks). */
	double context_bytes;
	char aliases[PRICE_NAME_MAX * 4];/* ';'-separated other names ("H100;H100-SXM") */
};

/* The range of every number of a price row, the same in prices.csv (and
 * SkyPilot catalogs), in plan files and on the command line, so that what
 * gpuplan writes it reads back (data/SOURCES.md lists them). */
#define PRICE_GPUS_PER_NODE_MAX 4096   /* gpus_per_node: 1 to this */
#define PRICE_USD_PER_HOUR_MAX 1e5     /* a node's price: > 0, at most this */
/* The band of plausible prices per GPU-hour an update may store: from a
 * tenth of the shipped table's cheapest price for the GPU to ten times
 * its dearest, and for a GPU the table does not price this range
 * (data/SOURCES.md: the shipped table spans $0.19 to $27 per GPU-hour). */
#define PRICE_GPU_HOUR_BAND_FACTOR 10.0
/* The most quotas a table holds (an update's rows, or the merged table):
 * far beyond a user's clouds x regions x GPUs. */
#define PRICE_QUOTA_MAX_ROWS 100000
#define PRICE_GPU_HOUR_USD_MIN 0.01
#define PRICE_GPU_HOUR_USD_MAX 1000.0
#define PRICE_GBPS_MAX 1e5             /* inter_node_gbps: 0 to this, Gbit/s */
#define PRICE_MAX_NVLINK_DOMAIN 65536 /* nvlink_domain: GPUs, 0 (the node) to this */
#define PRICE_MAX_NODES_MAX 1000000    /* max_nodes: 0 (not stated) to this */
/* What an update may hold: a file of at most this many bytes, merged
 * into a table of at most this many offerings (every command reads it). */
#define PRICE_UPDATE_MAX_BYTES (32 << 20)
#define PRICE_MAX_OFFERINGS 20000

/* The host of one machine (node), what offloading model states to it
 * needs (simulator/sim_finetune.c): its memory, its CPU cores (the CPU
 * Adam step runs on them), each GPU's PCIe link to it and the node's NVMe
 * bandwidth.  0 = not stated: offload to what is not stated is not
 * planned (NVMe without nvme_bytes_per_s, any offload without memory
 * and cores).  Owned machines state it in hardware.csv, rented ones in
 * hosts.csv, a user's own with --host. */
#define PRICE_HOST_MAX_CORES 65536    /* cpu_cores: 0 (not stated) to this */
struct price_host {
	double memory_bytes;            /* host DRAM of the node */
	double cpu_cores;               /* physical cores of the node */
	double pcie_bytes_per_s;        /* per GPU, one direction; 0: the GPU's
					 * own PCIe link where it has no NVLink */
	double nvme_bytes_per_s;        /* the node's NVMe, sequential read */
};

struct price_quota;

struct price_offering {
	char provider[PRICE_NAME_MAX];      /* "aws", "gcp", "lambda", ... */
	char instance_type[PRICE_NAME_MAX]; /* "p5.48xlarge" */
	char gpu[PRICE_NAME_MAX];           /* canonical GPU name */
	int gpus_per_node;
	char region[PRICE_NAME_MAX];
	double on_demand_usd_per_hour;      /* per node; < 0 when not offered */
	double spot_usd_per_hour;           /* per node; < 0 when not offered */
	double inter_node_bytes_per_s;      /* per node, one direction; 0: no
					     * cluster network (one node only) */
	int max_nodes;                      /* the row's own capacity; 0 = not stated */
	/* GPUs of this offering that share one NVLink domain as it is sold
	 * (72 for a GB200 NVL72 rack rented whole, 4 for one GB200 tray
	 * rented alone); 0 = not stated (price_nvlink_domain). */
	int nvlink_domain;
	char version[PRICE_NAME_MAX * 2];   /* catalog version or date */
	/* The date the source states for the prices, "YYYY-MM-DD"; "" not
	 * stated (price_offering_age_days says how old). */
	char price_date[PRICE_DATE_MAX];
	/* How the offering is sold, from capacity.csv (price_catalog_load;
	 * see struct price_capacity); 0 = not stated. */
	int capacity_nodes;                 /* largest cluster sold as one unit */
	int spot_capacity_nodes;            /* the bound for spot (gpuplan policy) */
	int policy_nodes;                   /* gpuplan policy for on-demand where
					     * the provider states no bound
					     * (capacity_nodes 0): the user's
					     * quota replaces it */
	int node_multiple;                  /* sold in whole multiples of this
					     * many nodes (an UltraServer, a
					     * rack rented whole); 0 = any count */
	double billing_increment_s;         /* billed in whole increments of this */
	double min_billing_s;               /* at least this much is billed */
	double provision_s;                 /* request to running nodes */
	char capacity_source[PRICE_NAME_MAX]; /* capacity.csv's source key */
	/* The user's tightest quota on it (price_quota_for, set by
	 * price_catalog_load; points into the catalog's quotas); NULL none. */
	const struct price_quota *quota;
	int owned;                          /* 1: hardware the user owns (see
					     * price_catalog_add_owned); the
					     * on-demand price is its running cost */
	int user;                           /* 1: the row comes from the user's
					     * table (an update added or changed
					     * it), not the shipped one */
	struct price_host host;             /* hosts.csv's or the machine's; 0s unstated */
};

/* One row of the user's quotas.csv: at most max_gpus GPUs of one kind from
 * one provider, in one region or all of them, of one instance type or any. */
struct price_quota {
	char provider[PRICE_NAME_MAX];      /* lower-case */
	char region[PRICE_NAME_MAX];        /* "*": any region */
	char gpu[PRICE_NAME_MAX];           /* canonical GPU name */
	char instance_type[PRICE_NAME_MAX]; /* "": any instance type */
	int max_gpus;                       /* 0..PRICE_QUOTA_MAX_GPUS; 0: none allowed */
};

#define PRICE_QUOTA_MAX_GPUS 1000000

struct price_catalog {
	struct price_gpu *gpus;
	size_t n_gpus;
	struct price_offering *offers;
	size_t n_offers;
	char *gpus_path;    /* the gpus.csv that was read */
	char *prices_path;  /* the shipped prices.csv that was read */
	char *user_prices_path; /* the user's prices.csv laid over it; NULL: none */
	char *capacity_path; /* the shipped capacity.csv that was read; NULL: none */
	char *hosts_path;    /* the shipped hosts.csv that was read; NULL: none */
	int user_table;     /* 1 when user_prices_path was read */
	int user_legacy;    /* 1 when it was a full copy an older gpuplan wrote */
	size_t n_user_offers; /* offerings of offers[] with .user set */
	/* The user's quotas.csv, in its order; none when it is absent. */
	struct price_quota *quotas;
	size_t n_quotas;
	char *quotas_path;  /* the user's quotas.csv that was read; NULL: none */
	/* Identity of what was read: "fnv1a64:" and the hash of gpus.csv's
	 * bytes followed by the shipped prices.csv's and, when there is one,
	 * the user's prices.csv's, then, when there is one, the word
	 * "quotas.csv" and the user's quotas.csv's. */
	char digest[32];
};

/* Where catalogs come from.  data_dir holds the shipped gpus.csv and
 * prices.csv; user_dir holds the user's prices.csv (their rows) and history
 * (NULL: $GPUPLAN_DATA_DIR, else $XDG_DATA_HOME/gpuplan, else
 * ~/.local/share/gpuplan). */
struct price_opts {
	const char *data_dir;
	const char *user_dir;
};
void price_opts_init(struct price_opts *o);

/* Loads gpus.csv and prices.csv into cat: the shipped prices.csv overlaid
 * with the user's prices.csv (in the user_dir described above) when it
 * exists.  The user's file holds only their rows, keyed by (provider,
 * instance_type, region): each replaces the shipped row of its key or is
 * added after the shipped rows.  A user file without the first line
 * PRICE_USER_MARKER is a full copy an older gpuplan wrote; every row of it
 * counts as the user's.  The user's quotas.csv there, when it exists, fills
 * cat->quotas (absent: no quotas; see price_quota_update for its cells).
 * Returns RC_OK, RC_INPUT (bad file, one message per bad cell) or RC_ERR.
 * Release with price_catalog_release(). */
enum rc price_catalog_load(struct price_catalog *cat, const struct price_opts *o);
void price_catalog_release(struct price_catalog *cat);

/* Finds a GPU by canonical name or alias ("h100", "A100-80GB", case-
 * insensitive).  Returns NULL when unknown. */
const struct price_gpu *price_gpu_find(const struct price_catalog *cat,
				       const char *name);

/* USD per GPU-hour of an offering, on demand or spot; < 0 when not offered. */
double price_offering_usd_per_gpu_hour(const struct price_offering *o, int spot);

/* USD per node-hour, on demand or spot; < 0 when not offered. */
double price_offering_usd_per_hour(const struct price_offering *o, int spot);

/* How many days before today (days since 1970-01-01, unit_today) the
 * price date d ("YYYY-MM-DD") lies: >= 0, negative for a date after
 * today, or PRICE_AGE_UNKNOWN when d is empty or not a date. */
#define PRICE_AGE_UNKNOWN (-1000000L)
long price_date_age_days(const char *d, long today);

/* GPUs that share one NVLink domain on offering o of GPU g: o's own
 * figure, else g's (a GB200's NVL72 rack), else one node; never fewer
 * than a node's GPUs. */
int price_nvlink_domain(const struct price_offering *o, const struct price_gpu *g);

/* What bounds the nodes of one offering (price_offering_node_limit). */
enum price_limit {
	PRICE_LIMIT_NONE,      /* nothing but the caller's own bounds */
	PRICE_LIMIT_NETWORK,   /* no cluster network figure: one node */
	PRICE_LIMIT_UNSTATED,  /* no capacity figure: one node */
	PRICE_LIMIT_CAPACITY,  /* the largest cluster sold as one unit */
	PRICE_LIMIT_POLICY,    /* gpuplan policy: the provider states no bound */
	PRICE_LIMIT_SPOT,      /* the (smaller) bound for spot capacity (policy) */
	PRICE_LIMIT_QUOTA,     /* the user's quota */
	PRICE_LIMIT_BLOCK,     /* the most instances one unit of a product holds (a capacity block, a calendar reservation) */
};

struct price_node_limit {
	int nodes;                /* at most this many; 0: not offered */
	enum price_limit why;
	int quota_gpus;           /* PRICE_LIMIT_QUOTA: the quota's GPUs */
	int multiple;             /* nodes are rented (and billed) in whole
				   * units of this many; 1: one by one */
};

/* The most nodes of offering o one job may rent, on demand (spot 0) or
 * spot (1), and what bounds it, first match wins in this order: no
 * cluster network (inter_node_bytes_per_s 0) makes one node; then the
 * row's max_nodes, else capacity.csv's max_nodes (a bound the provider
 * states, PRICE_LIMIT_CAPACITY); where the provider states none, the
 * user's quota (PRICE_LIMIT_QUOTA, which may exceed the policy), else
 * capacity.csv's policy_max_nodes (gpuplan policy, PRICE_LIMIT_POLICY),
 * else one node (PRICE_LIMIT_UNSTATED); spot is further bounded by
 * spot_capacity_nodes (gpuplan policy; not stated: one node).  Hardware
 * the user owns is bounded by its machines.  Last, the user's quota
 * (o->quota), in whole nodes of its GPUs, bounds what is left; it may
 * leave 0 nodes (not offered).  Where the offering is rented only in whole units of several
 * nodes (o->node_multiple from capacity.csv: an UltraServer, a rack),
 * out->multiple is that unit and the bound is rounded down to whole units,
 * which may leave 0.  An empty figure never lifts a bound: it makes the
 * offering do less. */
void price_offering_node_limit(const struct price_offering *o, int spot,
			       struct price_node_limit *out);
/* The nodes a plan that runs on nodes nodes pays for under l: nodes
 * rounded up to whole units of l->multiple (16 nodes of an 18-node
 * UltraServer pay for 18). */
int price_node_limit_billed(const struct price_node_limit *l, int nodes);
/* "no cluster network", "capacity not stated", "capacity", "policy", "spot capacity",
 * "quota", "capacity block" ("none" for NONE). */
const char *price_limit_str(enum price_limit l);

/* ---- unit conversions used for the catalog columns -------------------- */

/* Per-GPU one-direction bytes/s from a bidirectional GB/s figure
 * (NVLink and PCIe are quoted as both directions added): gb / 2 * 1e9. */
double price_bidir_gb_to_bytes_per_s(double gb_per_s_bidir);
/* Bytes/s from a network figure in Gbit/s: gbps * 1e9 / 8. */
double price_gbps_to_bytes_per_s(double gbps);

/* ---- GPU catalog --------------------------------------------------------- */

/* Loads gpus.csv at path into a freshly allocated array (*out, *n).
 * Columns are found by header name.  Returns RC_OK, RC_INPUT (one
 * "path:line:col: ..." line per bad cell) or RC_ERR (unreadable).  The
 * caller frees *out with free(). */
enum rc price_gpus_load(const char *path, struct price_gpu **out, size_t *n);

/* Finds a GPU in gpus[0..n) by canonical name or alias, ASCII case-
 * insensitive, '_' and ' ' read as '-'.  Sets *by_alias (may be NULL) to 1
 * when the match was an alias.  Returns NULL when unknown. */
const struct price_gpu *price_gpu_lookup(const struct price_gpu *gpus, size_t n,
					 const char *name, int *by_alias);

/* Writes into buf[size] the canonical name or alias closest to name (edit
 * distance), for "did you mean" hints.  Returns 0, or -1 when nothing is
 * reasonably close (buf is then ""). */
int price_gpu_suggest(const struct price_gpu *gpus, size_t n, const char *name,
		      char *buf, size_t size);

/* Finds the GPU a user named in `what` (a flag, "--gpu") in cat, as
 * price_gpu_find() does.  Returns it, or NULL after one line "error: WHAT:
 * expected a GPU name or alias from GPUS.CSV, found '...'" and a hint: the
 * closest name (price_gpu_suggest), else where the list is. */
const struct price_gpu *price_gpu_resolve(const struct price_catalog *cat, const char *what,
					  const char *name);

/* Returns 1 when g has the figures planning needs (memory, dense bf16
 * peak, memory bandwidth); otherwise 0 and a one-line reason in why[size]
 * ("RTX5090: gpus.csv has no bf16_dense_tflops figure"). */
int price_gpu_eligible(const struct price_gpu *g, char *why, size_t size);

/* 1 when g computes in bf16: every GPU of the catalog but Volta (V100,
 * sm70), whose tensor cores take fp16 only (NVIDIA Tesla V100 datasheet;
 * bf16 arrives with Ampere, sm80).  Trainers run those in fp16 with loss
 * scaling at the same tensor rate (gpus.csv's bf16 column holds the fp16
 * figure there). */
int price_gpu_has_bf16(const struct price_gpu *g);
/* 1 when g is an AMD Instinct GPU (MI...): ROCm, amd.com/gpu in Kubernetes. */
int price_gpu_is_amd(const struct price_gpu *g);

/* ---- offerings: query ---------------------------------------------------- */

enum price_sort {
	PRICE_SORT_USD_PER_GPU_HOUR,
	PRICE_SORT_USD_PER_HOUR,
	PRICE_SORT_GPU,
	PRICE_SORT_PROVIDER,
};

struct price_query {
	const char *gpu;       /* canonical name or alias; NULL = any */
	const char *provider;  /* case-insensitive; NULL = any */
	const char *region;    /* case-insensitive substring; NULL = any */
	enum price_sort sort;
	int spot;              /* 1: price at the spot rate, drop rows without one */
	int mine;              /* 1: only the user's rows (price_offering.user) */
};
void price_query_init(struct price_query *q);

/* Parses "usd_per_gpu_hour", "usd_per_hour", "gpu" or "provider". */
enum rc price_sort_parse(const char *s, enum price_sort *out);

/* RC_OK when value is empty or some offering of cat has it as its region
 * (region 1) or provider (0), case-insensitive; else RC_USAGE after one
 * error line naming `what` (a flag) and a hint: the closest value there is,
 * else where the offerings are listed. */
enum rc price_offering_resolve(const struct price_catalog *cat, const char *what,
			       const char *value, int region);

/* Selects the offerings of cat matching q, sorted (ties broken by provider,
 * instance type, region, so the order is stable), as indices into
 * cat->offers in a new array *idx of *n entries (caller frees).  Offerings
 * with no price at the requested rate sort last.  Returns RC_OK, or
 * RC_USAGE (nothing printed, *idx NULL) when q->gpu names no GPU; the
 * caller reports it, with price_gpu_suggest() for a hint. */
enum rc price_catalog_query(const struct price_catalog *cat, const struct price_query *q,
			    size_t **idx, size_t *n);

/* Returns a one-line reason in why[size] and 0 when offering o cannot be
 * used for planning (its GPU is unknown or lacks a figure), else 1. */
int price_offering_eligible(const struct price_catalog *cat,
			    const struct price_offering *o, char *why, size_t size);

/* ---- the user's directory, updates and history -------------------------- */

/* The first line of the user's prices.csv since format 2 (their rows
 * only); the digit after '/' is the format.  A file without it is read as
 * format 1, a full copy of the table. */
#define PRICE_USER_MARKER "# gpuplan-user-prices/2"

/* Resolves the user's data directory into buf[size]: o->user_dir, else
 * $GPUPLAN_DATA_DIR, else $XDG_DATA_HOME/gpuplan, else
 * $HOME/.local/share/gpuplan.  Returns RC_OK or RC_ERR (no HOME). */
enum rc price_user_dir(const struct price_opts *o, char *buf, size_t size);

struct price_update_opts {
	const char *provider;  /* names the cloud of a SkyPilot catalog file */
	int dry_run;           /* validate and diff only; write nothing */
};
void price_update_opts_init(struct price_update_opts *u);

/* REMOVED only for quotas (an update's empty max_gpus cell). */
enum price_change_kind { PRICE_CHANGE_ADDED, PRICE_CHANGE_CHANGED, PRICE_CHANGE_REMOVED };

#define PRICE_VALUE_MAX 128

/* One difference between the stored table and the merged one. */
struct price_change {
	enum price_change_kind kind;
	char provider[PRICE_NAME_MAX];
	char instance_type[PRICE_NAME_MAX];
	char region[PRICE_NAME_MAX];
	char gpu[PRICE_NAME_MAX];            /* quotas: the row's GPU; "" for prices */
	char field[PRICE_NAME_MAX];          /* column name; "row" when added */
	char old_value[PRICE_VALUE_MAX];     /* "" when added or was empty */
	char new_value[PRICE_VALUE_MAX];
	double old_num, new_num;             /* prices; NAN when not a number */
};

/* What an update read, skipped, merged and wrote. */
struct price_update_report {
	int skypilot;               /* 1: the file had SkyPilot catalog columns */
	size_t rows_read;           /* data rows in the file */
	size_t offers_in_file;      /* distinct (provider, instance, region) */
	size_t added, changed, unchanged; /* offerings */
	size_t skipped_no_gpu;      /* rows with no accelerator (CPU instances) */
	size_t skipped_unknown_gpu; /* SkyPilot rows whose GPU gpus.csv lacks */
	char unknown_gpus[256];     /* their names, ", "-separated */
	size_t skipped_no_instance; /* GPU-only rows with no instance type */
	/* GPU rows of an instance type the file also lists as a host row
	 * (no accelerator): the GPU row prices the GPUs alone.  Completed with
	 * the host row of its region (and zone) when that is > 0; skipped and
	 * named when it is missing or 0 (a part price is not a node's). */
	size_t completed_with_host;
	size_t skipped_no_host;
	char no_host[256];          /* "instance region", ", "-separated */
	size_t skipped_no_price;    /* rows with neither price */
	size_t skipped_fractional;  /* rows with a fractional GPU count */
	size_t az_rows;             /* rows folded into a region with others */
	size_t az_regions;          /* (instance, region) pairs that had several zones */
	struct price_change *changes;
	size_t n_changes;
	size_t offers_after;        /* rows of the merged table */
	size_t user_rows;           /* of them, the user's: what the user's
				     * prices.csv holds (or would) */
	int legacy_copy;            /* 1: the stored table was a full copy an
				     * older gpuplan wrote (rewritten as the
				     * user's rows when written) */
	int written;                /* 1 when the table was replaced */
	char table_path[1024];      /* the user's prices.csv */
	char history_path[1024];    /* the user's prices.history.csv */
};

/* Validates the whole of file (gpuplan or SkyPilot columns, by header
 * name), merges it into the current table (the shipped one overlaid with
 * the user's rows, as price_catalog_load reads it) by (provider,
 * instance_type, region), and unless u->dry_run writes the user's rows to
 * the user's prices.csv atomically (temp file, fsync, rename, fsync of the
 * directory) under a lock on prices.lock, appending every change to
 * prices.history.csv.  The user's rows are those of the merged table that
 * differ from the shipped table's row of their key, or whose key it lacks;
 * the file starts with PRICE_USER_MARKER (an older full copy is rewritten
 * so).  Nothing is written when any row is bad.  Returns RC_OK, RC_INPUT (one "file:line:col: ..." line per bad
 * cell), RC_USAGE (missing --provider) or RC_ERR (I/O).  rep is filled on
 * RC_OK; release it with price_update_report_release().
 * For tests, GPUPLAN_FAULT=<point>[:kill] stops the update at after_lock,
 * after_pending, after_write, after_fsync, before_rename, after_rename,
 * after_history, after_pending_removed or (recovering an earlier update)
 * recover_after_history, returning RC_ERR or killing the process with
 * SIGKILL; GPUPLAN_FAULT=step:N[:kill] stops at the N-th of these reached. */
enum rc price_update(const char *file, const struct price_opts *o,
		     const struct price_update_opts *u, struct price_update_report *rep);
void price_update_report_release(struct price_update_report *rep);

struct price_history_entry {
	char timestamp[32];                  /* UTC, ISO 8601 */
	char provider[PRICE_NAME_MAX];
	char instance_type[PRICE_NAME_MAX];
	char region[PRICE_NAME_MAX];
	char gpu[PRICE_NAME_MAX];            /* quotas' history; "" for prices */
	char field[PRICE_NAME_MAX];
	char old_value[PRICE_VALUE_MAX];
	char new_value[PRICE_VALUE_MAX];
};

struct price_history {
	struct price_history_entry *entries; /* oldest first */
	size_t n;
};

/* Loads the user's prices.history.csv (an absent file is an empty
 * history).  Completes or discards the history of an update that was
 * interrupted after its table was renamed into place.  Returns RC_OK,
 * RC_INPUT or RC_ERR.  Release with price_history_release(). */
enum rc price_history_load(const struct price_opts *o, struct price_history *h);
void price_history_release(struct price_history *h);

/* ---- the user's GPU quotas (pricing/price_quota.c, price_quota_update.c) */

/* 1 when quota q bounds offering o (same provider, region or "*", GPU,
 * instance type or ""), else 0.  Case-insensitive. */
int price_quota_applies(const struct price_quota *q, const struct price_offering *o);

/* The tightest quota of cat that bounds o (the smallest max_gpus; the
 * first in cat->quotas on a tie), or NULL when none does.  Points into
 * cat->quotas. */
const struct price_quota *price_quota_for(const struct price_catalog *cat,
					  const struct price_offering *o);

/* How many offerings of cat quota q bounds. */
size_t price_quota_offerings(const struct price_catalog *cat, const struct price_quota *q);

/* What a quota update read, merged and wrote. */
struct price_quota_report {
	size_t rows_read;           /* data rows in the file */
	size_t added, changed, removed, unchanged; /* quotas */
	size_t not_stored;          /* removals of a key the table lacks */
	size_t unmatched;           /* rows no offering of the catalog matches */
	struct price_change *changes; /* field "max_gpus"; gpu set */
	size_t n_changes;
	size_t quotas_after;        /* rows of the merged table */
	int written;                /* 1 when the table was replaced */
	char table_path[1024];      /* the user's quotas.csv */
	char history_path[1024];    /* the user's quotas.history.csv */
};

/* Validates the whole of file (columns provider, region, gpu, max_gpus and
 * optionally instance_type, found by header name; a column it does not
 * know, or one named twice, is an error at the header), merges it into the
 * user's quotas.csv by (provider, region, gpu, instance_type), ASCII case-
 * insensitive, and unless u->dry_run writes the merged table atomically
 * under a lock on quotas.lock, appending every change to
 * quotas.history.csv, as price_update does for prices (the same crash
 * safety and GPUPLAN_FAULT points).  Cells: provider a name, lower-cased;
 * region a name or "*" (any region); gpu a name or alias of gpus.csv,
 * stored as its canonical name; instance_type a name, or empty or "*" (any
 * instance type).  Names are printable ASCII: letters, digits and the
 * characters . _ - : / and *.  max_gpus an integer 0..PRICE_QUOTA_MAX_GPUS
 * (0: none allowed), or empty to remove the stored quota of that key (a
 * warning when there is none).  A key the file repeats is an error.  A
 * row no offering of the catalog matches is kept, with a warning.  Only
 * u->dry_run is read.  Nothing is written when any row is bad.  Returns
 * RC_OK, RC_INPUT (one "file:line:col: column: expected ..., found ..."
 * line per bad cell) or RC_ERR (I/O).  rep is filled on RC_OK; release it
 * with price_quota_report_release(). */
enum rc price_quota_update(const char *file, const struct price_opts *o,
			   const struct price_update_opts *u, struct price_quota_report *rep);
void price_quota_report_release(struct price_quota_report *rep);

/* Loads the user's quotas.history.csv (absent: an empty history; entries
 * carry .gpu), completing an interrupted update's history as
 * price_history_load does.  Returns RC_OK, RC_INPUT or RC_ERR.  Release
 * with price_history_release(). */
enum rc price_quota_history_load(const struct price_opts *o, struct price_history *h);

/* ---- purchase options, commitments, owned hardware (pricing/price_cost.c) */

/* How a GPU-hour is paid for.  Reserved options are an offering's on-demand
 * price less a published 1- or 3-year commitment discount; owned hardware
 * is an offering of its own (price_offering.owned). */
enum price_purchase {
	PRICE_PURCHASE_ON_DEMAND,
	PRICE_PURCHASE_SPOT,
	PRICE_PURCHASE_RESERVED_1Y,
	PRICE_PURCHASE_RESERVED_3Y,
	PRICE_PURCHASE_OWNED,
	/* A block of instances for a fixed term, paid up front at its own
	 * rate (blocks.csv: AWS EC2 Capacity Blocks for ML). */
	PRICE_PURCHASE_BLOCK,
};
#define PRICE_PURCHASE_N (PRICE_PURCHASE_BLOCK + 1)

/* "on-demand", "spot", "reserved-1y", "reserved-3y", "owned" or
 * "capacity-block". */
const char *price_purchase_str(enum price_purchase p);
/* Months of commitment of a reserved option (12 or 36); 0 otherwise. */
int price_purchase_term_months(enum price_purchase p);

#define PRICE_HOURS_PER_YEAR 8760.0
#define PRICE_SOURCE_MAX 512

/* One row of commitments.csv: a provider's published discount off the
 * on-demand price for a 1- or 3-year commitment, for the instances whose
 * type begins with instance_prefix and carry gpu. */
struct price_commitment {
	char provider[PRICE_NAME_MAX];
	char instance_prefix[PRICE_NAME_MAX];
	char gpu[PRICE_NAME_MAX];           /* canonical name */
	int term_months;                    /* 12 or 36 */
	double discount;                    /* fraction off on-demand, (0, 1) */
	char price_date[PRICE_NAME_MAX];
	char source[PRICE_SOURCE_MAX];
	/* The on-demand price the discount was measured against: one node of
	 * base_instance_type in base_region, USD per hour; "" and 0 when the
	 * table does not state it (optional columns). */
	char base_instance_type[PRICE_NAME_MAX];
	char base_region[PRICE_NAME_MAX];
	double base_usd_per_hour;
};

struct price_commitments {
	struct price_commitment *rows;
	size_t n;
};

/* Loads commitments.csv (columns provider, instance_prefix, gpu,
 * term_years, discount_pct, price_date, source, and optionally
 * base_instance_type, base_region, base_usd_per_hour) resolving GPU names through
 * cat.  Returns RC_OK, RC_INPUT (one "path:line:col: ..." line per bad
 * cell) or RC_ERR (unreadable).  Release with price_commitments_release(). */
enum rc price_commitments_load(const char *path, const struct price_catalog *cat,
			       struct price_commitments *out);
void price_commitments_release(struct price_commitments *t);

/* The commitment of t that applies to offering o for term_months, or NULL
 * (owned offerings and offerings without an on-demand price have none). */
const struct price_commitment *price_commitment_find(const struct price_commitments *t,
						     const struct price_offering *o,
						     int term_months);

/* One row of capacity.csv: how a provider sells the instances whose type
 * begins with instance_prefix ("*": every instance of the provider; the
 * longest matching prefix wins).  0 = not stated. */
struct price_capacity {
	char provider[PRICE_NAME_MAX];
	char instance_prefix[PRICE_NAME_MAX];
	int max_nodes;                      /* largest cluster sold as one unit,
					     * as the provider states it */
	int spot_max_nodes;                 /* the bound gpuplan plans spot with */
	int policy_max_nodes;               /* gpuplan's on-demand bound where
					     * max_nodes is not stated */
	int node_multiple;                  /* nodes sold in whole multiples of
					     * this; 0 = any count */
	double billing_increment_s;
	double min_billing_s;
	double provision_s;
	char source[PRICE_NAME_MAX];        /* a key of data/SOURCES.md */
};

struct price_capacities {
	struct price_capacity *rows;
	size_t n;
};

/* Loads capacity.csv (columns provider, instance_prefix, max_nodes,
 * spot_max_nodes, billing_increment_s, min_billing_s, provision_s,
 * source, and the optional node_multiple and policy_max_nodes; empty
 * numbers are "not stated"; max_nodes and spot_max_nodes must be whole
 * multiples of node_multiple; policy_max_nodes only where max_nodes is
 * empty).  Returns RC_OK, RC_INPUT (one
 * "path:line:col: ..." line per bad cell) or RC_ERR (unreadable).
 * Release with price_capacities_release(). */
enum rc price_capacities_load(const char *path, struct price_capacities *out);
void price_capacities_release(struct price_capacities *t);

/* The row of t that applies to offering o (same provider, the longest
 * instance_prefix that begins o's instance type, "*" last), or NULL. */
const struct price_capacity *price_capacity_find(const struct price_capacities *t,
						 const struct price_offering *o);

/* Copies capacity row c (NULL: none, every figure 0) into o's capacity
 * fields. */
void price_offering_set_capacity(struct price_offering *o, const struct price_capacity *c);

/* How a reservation of blocks.csv is paid. */
enum price_payment {
	PRICE_PAYMENT_UPFRONT,  /* the whole term when it is bought */
	PRICE_PAYMENT_MONTHLY,  /* as the term runs, month by month */
};

/* One row of blocks.csv: instances whose type begins with instance_prefix,
 * in one region of provider, sold as a reservation (product: an AWS EC2
 * Capacity Block for ML, a GCP calendar-mode future reservation) of
 * min_nodes..max_nodes instances for a fixed term at their own hourly
 * rate, paid up front or monthly for the whole term.  A term is whole days
 * from min_days to max_days, in steps of step_days, and beyond
 * long_from_days in steps of long_step_days (0: no such rule). */
struct price_block {
	char provider[PRICE_NAME_MAX];
	char instance_prefix[PRICE_NAME_MAX];
	char region[PRICE_NAME_MAX];
	double usd_per_hour;                /* per instance; 0: not priced (no
					     * source read gives it), the
					     * figures below then optional */
	int min_nodes, max_nodes;
	int min_days, max_days;
	int step_days;
	int long_step_days, long_from_days;
	char price_date[PRICE_DATE_MAX];    /* "YYYY-MM-DD" the source states */
	char source[PRICE_SOURCE_MAX];
	char product[PRICE_NAME_MAX];       /* "AWS EC2 Capacity Block"; "" not
					     * stated ("capacity block") */
	char kind[PRICE_NAME_MAX];          /* the purchase option's short name in
					     * tables: "capacity-block" (default),
					     * "calendar-reservation" */
	enum price_payment payment;
};

/* b's product name, "capacity block" when the row names none. */
const char *price_block_product(const struct price_block *b);
/* b's short name as a purchase option, "capacity-block" when the row
 * names none (b NULL too). */
const char *price_block_kind(const struct price_block *b);

struct price_blocks {
	struct price_block *rows;
	size_t n;
};

/* Loads blocks.csv (columns provider, instance_prefix, region,
 * usd_per_hour, min_nodes, max_nodes, min_days, max_days, step_days,
 * long_step_days, long_from_days, price_date, source, and the optional
 * product, kind and payment ("upfront", the default, or "monthly"); every
 * cell but long_step_days, long_from_days, product, kind and payment is
 * required, except on a row with an empty usd_per_hour: a product no
 * source prices, which needs provider, instance_prefix, region, source
 * and product only; a kind is lower-case letters and '-').  Returns RC_OK,
 * RC_INPUT (one "path:line:col: ..." line per bad cell) or RC_ERR
 * (unreadable).  Release with price_blocks_release(). */
enum rc price_blocks_load(const char *path, struct price_blocks *out);
void price_blocks_release(struct price_blocks *t);

/* The row of t that names a product for offering o (same provider, ASCII
 * case-insensitive, same region, the longest instance_prefix that begins
 * o's instance type), priced or not, or NULL; owned offerings have none. */
const struct price_block *price_block_match(const struct price_blocks *t,
					    const struct price_offering *o);
/* price_block_match's row when it is priced (the block that sells o, a
 * purchase option the planner prices), else NULL. */
const struct price_block *price_block_find(const struct price_blocks *t,
					   const struct price_offering *o);
/* price_block_match's row when it gives no price (usd_per_hour 0): a
 * product known to sell o at scale whose price no source read gives.  It
 * is never planned; a refusal names it as what is missing.  Else NULL. */
const struct price_block *price_block_find_unpriced(const struct price_blocks *t,
						    const struct price_offering *o);

/* The seconds a job running run_s seconds pays for in block b: the
 * shortest term b sells that covers it (whole days, b's steps, at least
 * min_days).  Returns < 0 when run_s exceeds b's longest term: one block
 * cannot hold the job, and gpuplan does not chain blocks (a later block
 * is not guaranteed to follow the first). */
double price_block_billed_s(const struct price_block *b, double run_s);

/* The most nodes of offering o one job may rent as block b, and what
 * bounds it, as price_offering_node_limit does for on-demand: no cluster
 * network makes one node, else b->max_nodes (PRICE_LIMIT_BLOCK); the
 * user's quota bounds what is left, and o's unit (node_multiple) rounds
 * it down as there. */
void price_block_node_limit(const struct price_offering *o, const struct price_block *b,
			    struct price_node_limit *out);

/* One row of hardware.csv: a machine a user can buy. */
struct price_hardware {
	char name[PRICE_NAME_MAX];          /* "hgx-h100-8x" */
	char description[PRICE_SOURCE_MAX];
	char gpu[PRICE_NAME_MAX];           /* canonical name */
	int gpus;                           /* per machine */
	double price_usd;                   /* purchase price of one machine */
	int cards_only;                     /* 1: the GPUs alone, host not priced */
	double host_power_w;                /* everything but the GPUs, at load */
	double inter_node_bytes_per_s;      /* NICs per machine; 0 not stated */
	char price_date[PRICE_NAME_MAX];
	char vendor[PRICE_NAME_MAX];
	char source[PRICE_SOURCE_MAX];
	struct price_host host;             /* optional columns; 0s not stated */
};

struct price_hardware_table {
	struct price_hardware *rows;
	size_t n;
};

/* Loads hardware.csv (columns name, description, gpu, gpus, price_usd,
 * price_scope (server|cards), host_power_w, nic_gbps, price_date, vendor,
 * source; optionally host_memory_gb, host_cpu_cores, host_pcie_gb_per_s,
 * host_nvme_gb_per_s, empty when not stated: struct price_host).  Returns RC_OK, RC_INPUT or RC_ERR as price_commitments_load.
 * Release with price_hardware_release(). */
enum rc price_hardware_load(const char *path, const struct price_catalog *cat,
			    struct price_hardware_table *out);
void price_hardware_release(struct price_hardware_table *t);

/* One row of hosts.csv: the host of a rented instance type as its
 * provider's catalog states it (columns provider, instance_type, source
 * and the four host columns of hardware.csv). */
struct price_host_row {
	char provider[PRICE_NAME_MAX];
	char instance_type[PRICE_NAME_MAX];
	struct price_host host;
	char source[PRICE_NAME_MAX];
};

struct price_hosts {
	struct price_host_row *rows;
	size_t n;
};

/* Loads hosts.csv.  Returns RC_OK, RC_INPUT (one "path:line:col: ..."
 * line per bad cell) or RC_ERR.  Release with price_hosts_release(). */
enum rc price_hosts_load(const char *path, struct price_hosts *out);
void price_hosts_release(struct price_hosts *t);
/* The host of offering o (same provider, ASCII case-insensitive, same
 * instance type), or NULL. */
const struct price_host *price_host_find(const struct price_hosts *t,
					 const struct price_offering *o);

/* The machine of t with gpu (canonical name) and the lowest price per GPU;
 * NULL when t has none. */
const struct price_hardware *price_hardware_for_gpu(const struct price_hardware_table *t,
						    const char *gpu);

/* Assumptions that turn a purchase price into a cost per hour. */
struct price_owned_opts {
	double amortisation_years;   /* the price is spread over this life */
	double usd_per_kwh;          /* electricity */
	double pue;                  /* facility power / IT power, >= 1 */
	double utilisation;          /* fraction of the life the machine is busy */
};
#define PRICE_DEFAULT_AMORTISATION_YEARS 3.0
#define PRICE_DEFAULT_USD_PER_KWH 0.15
#define PRICE_DEFAULT_PUE 1.2
#define PRICE_DEFAULT_UTILISATION 0.7
void price_owned_opts_init(struct price_owned_opts *o);
/* Returns RC_OK, or RC_USAGE with a one-line reason in why[size]. */
enum rc price_owned_opts_check(const struct price_owned_opts *o, char *why, size_t size);

/* The hourly cost of one machine, and per GPU, with its parts. */
struct price_owned_cost {
	double power_w;                  /* gpus x TDP + host, at the wall before PUE */
	double capex_usd_per_hour;       /* price / (life hours x utilisation) */
	double power_usd_per_hour;       /* power_w / 1000 x PUE x USD/kWh */
	double usd_per_hour;             /* both */
	double capex_usd_per_gpu_hour, power_usd_per_gpu_hour, usd_per_gpu_hour;
};

/* Fills out for machine h whose GPU is g.  Returns 0, or -1 when g has no
 * TDP figure (the power cost would be unknown). */
int price_owned_cost(const struct price_hardware *h, const struct price_gpu *g,
		     const struct price_owned_opts *o, struct price_owned_cost *out);

/* Appends to cat an offering for nodes machines h the user owns: provider
 * "owned", instance type h->name, region "local", max_nodes nodes, no spot
 * price, on-demand price usd_per_node_hour (the caller decides what an
 * owned hour costs: its running cost when planning, since the purchase is
 * sunk; capex included when comparing with buying).  Pointers into
 * cat->offers taken before are invalidated. */
void price_catalog_add_owned(struct price_catalog *cat, const struct price_hardware *h,
			     int nodes, double usd_per_node_hour);

/* ---- the shipped tables agree (pricing/price_check.c) -------------------- */

/* How far a commitment's stated on-demand base may be from the price row
 * of its instance and region: 2%, GCP's bundled Local SSD being the usual
 * small difference between a billing catalog's machine price and a sum. */
#define PRICE_CHECK_BASE_TOLERANCE 0.02

/* Checks that the tables of data_dir (gpus.csv, prices.csv,
 * commitments.csv, capacity.csv, blocks.csv; the last three when there)
 * agree with each other: every price row's GPU is in gpus.csv and its
 * instance type names a machine, not a GPU (a row that prices the GPUs
 * alone is a part price, not a node's); every commitment states the
 * on-demand price its discount was measured against, which a price row
 * of that instance and region matches within PRICE_CHECK_BASE_TOLERANCE;
 * every capacity.csv and blocks.csv row sells at least one offering.
 * Only the shipped tables are read, never the user's.  Returns RC_OK, or
 * RC_INPUT after one "file:line: expected ..., found ..." line per
 * contradiction (*problems counts them; may be NULL), or the status of a
 * table that does not load. */
enum rc price_data_check(const char *data_dir, size_t *problems);

/* ---- prices from the providers' own price lists (pricing/price_fetch*.c) */

/* The providers a fetch reads, and where: AWS's Price List bulk offer
 * files (one CSV per region, no credentials), Azure's Retail Prices API
 * (paged JSON, no credentials), Google's Cloud Billing Catalog API
 * (paged JSON, an API key from $GOOGLE_API_KEY) and Lambda's Cloud API
 * instance types (one JSON response, an API key from $LAMBDA_API_KEY). */
#define PRICE_FETCH_URL_AWS "https://pricing.us-east-1.amazonaws.com"
#define PRICE_FETCH_URL_AZURE "https://prices.azure.com"
#define PRICE_FETCH_URL_GCP "https://cloudbilling.googleapis.com"
#define PRICE_FETCH_URL_LAMBDA "https://cloud.lambda.ai"
#define PRICE_FETCH_MAX_REGIONS 32
#define PRICE_FETCH_DEFAULT_TIMEOUT_S 600
/* A JSON page larger than this is refused (Azure's pages hold 1,000
 * items, GCP's 5,000 SKUs: a few MiB). */
#define PRICE_FETCH_MAX_PAGE_BYTES (64 << 20)
#define PRICE_FETCH_MAX_PAGES 1000

struct price_fetch_opts {
	const char *provider;            /* "aws", "azure", "gcp" or "lambda" */
	const char *regions[PRICE_FETCH_MAX_REGIONS];
	size_t n_regions;                /* 0: the regions the table prices the provider in */
	const char *from_file;           /* a response saved earlier, instead of the network */
	const char *endpoint;            /* base URL; NULL: $GPUPLAN_PRICE_URL_<PROVIDER>,
					  * else PRICE_FETCH_URL_<PROVIDER> */
	double timeout_s;                /* each response, connect to last byte */
	int dry_run;                     /* show the diff; write nothing */
	/* Also write the reservations the source states (Azure's) to this
	 * file as commitments.csv rows (a discount off the on-demand price of
	 * the same response), for plan --reserved --commitments FILE; NULL:
	 * none.  Not written with dry_run. */
	const char *commitments_out;
};
void price_fetch_opts_init(struct price_fetch_opts *f);

/* One offering as its source prices it. */
struct price_fetched {
	char instance_type[PRICE_NAME_MAX];
	char gpu[PRICE_NAME_MAX];
	int gpus_per_node;
	char region[PRICE_NAME_MAX];
	double on_demand_usd_per_hour;   /* < 0: the source gives none */
	double spot_usd_per_hour;        /* < 0: none */
	/* A 1-year ([0]) and 3-year ([1]) reservation per hour of its term
	 * (Azure states a term's whole price: divided by 8,760 or 26,280
	 * hours); < 0 none.  Not stored in the price table (it has no
	 * reservation columns): commitments_out writes them as discounts. */
	double reserved_usd_per_hour[2];
	char price_date[PRICE_DATE_MAX]; /* the date it is stamped with */
	char source[PRICE_NAME_MAX * 2]; /* stored as catalog_version: the
					  * source and its SKU or offer id */
};

struct price_fetch_report {
	char provider[PRICE_NAME_MAX];
	size_t responses;                /* files or pages read */
	size_t bytes;                    /* bytes of them */
	size_t items;                    /* rows or items of the source read */
	struct price_fetched *rows;      /* what goes to the update */
	size_t n_rows;
	size_t commitments;              /* rows written to commitments_out */
	size_t skipped;                  /* GPU offerings that could not be priced */
	char skipped_why[512];           /* "a4-highgpu-8g: machines.csv has no ..." */
	struct price_update_report update; /* the merge (price_update) */
};

/* Reads the GPU offerings of f->provider from its price list (each
 * response streamed: AWS's CSV row by row as it arrives, Azure's and
 * GCP's JSON page by page), or from f->from_file through the same
 * parser; keeps the instance types the table (or data/machines.csv)
 * describes, in the regions asked for; prices GCP's whole nodes as the
 * billing catalog does (GPUs + vCPUs + memory, machines.csv's counts);
 * stamps each row with a date and its SKU; and merges them with
 * price_update (validated whole, diff, atomic write, history; nothing
 * written with f->dry_run).  Nothing is written unless every response
 * was read whole and parsed.  Returns RC_OK, RC_INPUT (a malformed or
 * truncated response or file; no offering found), RC_USAGE (an unknown
 * provider, no API key), or RC_ERR (the network: no connection, an HTTP
 * status other than 200, a timeout), each after one line.  Credentials
 * are read from the environment and never printed nor written.
 * Release rep with price_fetch_report_release(). */
enum rc price_fetch(const struct price_fetch_opts *f, const struct price_opts *o,
		    struct price_fetch_report *rep);
void price_fetch_report_release(struct price_fetch_report *rep);

/* ---- JSON (pricing/price_json.c); each returns a string the caller frees -- */

char *price_gpus_to_json(const struct price_catalog *cat);
/* The offerings idx[0..n) of cat at the spot or on-demand rate, each with
 * its price_date and its age in days on day today (unit_today). */
char *price_offers_to_json(const struct price_catalog *cat, const size_t *idx,
			   size_t n, int spot, long today);
char *price_history_to_json(const struct price_history *h);
char *price_update_report_to_json(const struct price_update_report *rep);
/* The quotas of cat, each with how many offerings it bounds. */
char *price_quotas_to_json(const struct price_catalog *cat);
char *price_quota_history_to_json(const struct price_history *h);
char *price_quota_report_to_json(const struct price_quota_report *rep);
/* The fetched rows (with their reservations) and the update's report. */
char *price_fetch_report_to_json(const struct price_fetch_report *rep);

#endif
