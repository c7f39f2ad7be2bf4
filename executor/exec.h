/*
 * exec.h - the executor: runs real training steps of a GPT-style decoder
 * laid out exactly as a plan says (tensor, pipeline and data parallel,
 * ZeRO stage, micro-batching, recomputation, interleaving), one rank per
 * device, and measures them.
 *
 * Compute goes through a backend (fp32 CPU here; a CUDA backend plugs into
 * the same table) and communication through a communicator (MPI between
 * ranks, or an in-process one for a single rank).  Both tables live in
 * exec_internal.h; this header names no MPI, CUDA or NCCL type.
 *
 * What it does not do: choose a layout (the planner does), predict time
 * (the simulator does; exec_predict() only asks it), print to stdout.
 */
#ifndef GPUPLAN_EXEC_H
#define GPUPLAN_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "price.h"
#include "sched.h"
#include "sim.h"

/* Most ranks the CPU backend starts unless exec_opts.max_ranks says
 * otherwise: each rank is a process with its own copy of the model, and
 * more of them than this on one machine only measures the scheduler. */
#define EXEC_MAX_RANKS_DEFAULT 64

/* Environment variable that injects a fault: "R:S" makes rank R kill
 * itself (SIGKILL, no clean-up) at the start of step S (1-based). */
#define EXEC_FAULT_ENV "GPUPLAN_FAULT_KILL_RANK"

enum exec_norm { EXEC_NORM_LAYER, EXEC_NORM_RMS };

/* What one step did; handed to exec_opts.on_step on world rank 0. */
struct exec_step_info {
	int step;             /* 1-based */
	int steps;
	double loss;          /* mean cross-entropy over the step's tokens, nats */
	double grad_norm;     /* global L2 norm before clipping */
	double time_s;        /* wall time of the step on rank 0 */
};

struct exec_opts {
	struct sim_model model;   /* the shapes run (already shrunk for a trial) */
	struct sim_parallel par;  /* tp, pp, dp, mbs, gbs, zero, recompute,
				     interleave, flash; cp must be 1 */
	enum sched_kind schedule; /* SCHED_INTERLEAVED iff par.interleave > 1 */
	enum exec_norm norm;      /* exec_opts_init: RMSNorm for SwiGLU models */
	int steps;
	uint64_t seed;            /* initialisation and synthetic data */
	/* AdamW (Loshchilov and Hutter, ICLR 2019) with global-norm clipping */
	double lr, beta1, beta2, adam_eps, weight_decay, grad_clip;
	const char *data_path;    /* uint16 token file; NULL: synthetic data */
	const char *backend;      /* "cpu" */
	int max_ranks;            /* refuse layouts with more ranks than this */
	int fault_rank, fault_step; /* fault injection; -1: none */
	/* Called on world rank 0 after every step (may be NULL). */
	void (*on_step)(void *ctx, const struct exec_step_info *s);
	void *on_step_ctx;
};

/* Fills o with a small GPT-style model (4 layers, hidden 64, 4 heads,
 * vocabulary 128, sequence 32), a single rank, 10 steps, seed 1234, AdamW
 * lr 1e-3, betas (0.9, 0.95), eps 1e-8, weight decay 0.1, clipping at 1.0,
 * the CPU backend and EXEC_MAX_RANKS_DEFAULT. */
void exec_opts_init(struct exec_opts *o);

/* Picks what follows from the model: RMSNorm with SwiGLU, LayerNorm with
 * GELU; the interleaved schedule iff par.interleave > 1, else 1F1B. */
void exec_opts_derive(struct exec_opts *o);

/* Checks that o can run: shapes positive, heads, KV heads and the MLP
 * width divisible by tp, layers by pp * interleave, gbs by mbs * dp, no
 * context parallelism, at most max_ranks ranks, a known backend.  Returns
 * RC_OK, or RC_INPUT with a one-line reason in why[size]. */
enum rc exec_opts_check(const struct exec_opts *o, char *why, size_t size);

/* Ranks the layout needs: tp * pp * dp. */
int exec_opts_ranks(const struct exec_opts *o);

/* ---- rank layout ------------------------------------------------------ */

/* Where one rank sits.  Ranks are numbered TP innermost, then PP, then DP
 * (the simulator's placement): rank = (dp_rank * pp + pp_rank) * tp + tp_rank. */
struct exec_layout {
	int world, rank;
	int tp, pp, dp;
	int tp_rank, pp_rank, dp_rank;
};

/* Fills l for rank of a tp * pp * dp layout.  Returns RC_OK, or RC_INPUT
 * when rank is out of range or a degree is < 1. */
enum rc exec_layout_init(struct exec_layout *l, const struct sim_parallel *p, int rank);
/* The world rank at coordinates (dp_rank, pp_rank, tp_rank) of l's layout. */
int exec_layout_rank(const struct exec_layout *l, int dp_rank, int pp_rank, int tp_rank);

/* Balanced split of n items into parts: part idx gets [*off, *off + *len),
 * the first n % parts parts one item more. */
void exec_split(long n, int parts, int idx, long *off, long *len);

/* Layers [*first, *first + *count) held by chunk `chunk` of pipeline stage
 * `stage` when layers are cut into pp * v equal virtual stages; chunk c of
 * stage s is virtual stage c * pp + s (Narayanan et al., SC'21, sec. 2.2).
 * Requires layers % (pp * v) == 0. */
void exec_chunk_layers(int layers, int pp, int v, int stage, int chunk,
		       int *first, int *count);

/* ---- running --------------------------------------------------------- */

struct exec_result {
	struct exec_layout layout;  /* this rank */
	int steps;
	double *losses;             /* [steps], same on every rank */
	double *grad_norms;         /* [steps] */
	double *step_time_s;        /* [steps], this rank's wall time */
	double step_time_median_s;
	double tokens_per_s;        /* global batch tokens / median step time */
	/* model FLOPs of a step (sim_train_flops, no recomputation counted)
	 * per rank per second of the median step */
	double model_flops_per_rank_s;
	double params;              /* parameters of the model run */
	double *peak_memory_bytes;  /* [world] on world rank 0; NULL elsewhere */
	int world;
};

/* Runs o's steps.  Under mpirun or srun (exec_under_launcher()) this
 * process is one rank of the job: MPI is initialised and finalised here;
 * otherwise the layout must have one rank and runs without MPI.  Every rank
 * returns the same status.  A failure after the ranks have started talking
 * (a peer died, an MPI call failed) ends the whole job with MPI_Abort after
 * one message naming the rank.  Fills out (release with
 * exec_result_release()); out is untouched on failure. */
enum rc exec_run(const struct exec_opts *o, struct exec_result *out);
void exec_result_release(struct exec_result *r);

/* 1 when started by mpirun (OMPI_COMM_WORLD_SIZE) or srun (PMI_SIZE). */
int exec_under_launcher(void);
/* The launcher's world rank and size; 0 and 1 when not under one. */
int exec_launcher_rank(void);
int exec_launcher_size(void);

/* Starts `mpirun -np np [--allow-run-as-root] --oversubscribe SELF argv...`
 * where SELF is this executable, waits for it and returns RC_OK when every
 * rank succeeded.  mpirun is $GPUPLAN_MPIRUN or found in PATH; when there is
 * none: RC_DEVICE with one message.  A failed job returns the status its
 * exit code stands for (2 -> RC_INPUT, 4 -> RC_DEVICE, else RC_ERR) after
 * one line saying how it ended. */
enum rc exec_launch(int np, int argc, char **argv);

/* ---- the CPU as a device the simulator knows ------------------------- */

/* Documented defaults for one CPU rank running the fp32 CPU backend, used
 * until a calibration says otherwise (see exec_predict.c for where each
 * figure comes from): name "cpu".  Memory is this machine's RAM. */
void exec_cpu_gpu(struct price_gpu *g);
/* A one-node cluster of `ranks` CPU ranks: ranks share this machine's
 * cores, so each rank's peak is scaled by min(1, cores / ranks); ranks talk
 * through shared memory. */
void exec_cpu_cluster(struct sim_cluster *c, int ranks);

/* The simulator's prediction for o on the CPU cluster of its rank count.
 * Returns RC_OK, or RC_INPUT with the simulator's reason in why[size]. */
enum rc exec_predict(const struct exec_opts *o, struct sim_result *out,
		     char *why, size_t size);

/* Writes the run as JSON (schema "gpuplan.run/1") to path atomically:
 * layout, shapes, losses, median step time, tokens/s, peak memory per rank
 * and, when pred is not NULL, the prediction.  Returns RC_OK or RC_ERR
 * (message printed). */
enum rc exec_run_write_json(const char *path, const struct exec_opts *o,
			    const struct exec_result *r,
			    const struct sim_result *pred);

#endif
