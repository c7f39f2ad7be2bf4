/*
 * exec.h - the executor: runs real training steps of a GPT-style decoder
 * laid out exactly as a plan says (tensor, pipeline, data and context
 * parallel, ZeRO stage, micro-batching, recomputation, interleaving), one
 * rank per device, and measures them.
 *
 * Compute goes through a backend (fp32 on the CPU; on an NVIDIA GPU with
 * cuBLAS and kernels of its own, where nvcc built it) and communication
 * through a communicator (MPI or NCCL between ranks, or an in-process one
 * for a single rank).  Their tables live in exec_device.h and
 * exec_comm.h; this header names no MPI, CUDA or NCCL type.  It also
 * measures a machine for the simulator (exec_calibrate) and checks one
 * before a run (exec_opts.check).
 *
 * What it does not do: choose a layout (the planner does), predict time
 * (the simulator does; exec_predict() only asks it), print to stdout.
 *
 * Its layers, each a folder, bottom up; a file includes and calls only
 * its own layer and those below (tests/layers/test_layers.sh):
 *   device/  element types, the backend table, a device (exec_device.h);
 *            cpu/ the fp32 reference kernels, cuda/ the GPU ones; the
 *            launcher's environment (exec_env.c)
 *   comm/    the rank layout, its groups, the communicators (self, MPI,
 *            NCCL) and a job: MPI, a device per rank, the groups
 *            (exec_comm.h)
 *   train/   a run's options, its data, the trainer, its checkpoints and
 *            timeline recorder (exec_train.h)
 *   run/     a run, the pre-flight check, the prediction, calibration,
 *            the launcher, metrics and the JSON reports (exec_run.h)
 * In the project: common < pricing < simulator < planner < executor < cli.
 * This header is the executor's interface: plain data, and the entry
 * points of every layer for the CLI; it includes nothing of the executor.
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
/* "R:S" makes rank R hang (sleep for ever) at the start of step S, for
 * the step watchdog (exec_opts.timeout_s) to end; "R" in
 * EXEC_FAULT_OOM_ENV makes every allocation of rank R fail, as a full
 * device would. */
#define EXEC_FAULT_HANG_ENV "GPUPLAN_FAULT_HANG_RANK"
#define EXEC_FAULT_OOM_ENV "GPUPLAN_FAULT_OOM_RANK"
/* "R:S" makes rank R kill itself half-way through writing its shard of
 * the checkpoint of step S, for the test that a killed write leaves the
 * previous checkpoint whole. */
#define EXEC_FAULT_CKPT_ENV "GPUPLAN_FAULT_KILL_CKPT"
/* The CLI's default step timeout: EXEC_TIMEOUT_STEPS predicted steps, at
 * least EXEC_TIMEOUT_MIN_S (the first step also pays for start-up). */
#define EXEC_TIMEOUT_MIN_S 300.0
#define EXEC_TIMEOUT_STEPS 20.0

enum exec_norm { EXEC_NORM_LAYER, EXEC_NORM_RMS };

/* Precision of the CUDA backend: bf16 mixed precision (the default:
 * activations and the weights forward and backward read stored in bf16,
 * GEMMs on bf16 tensor cores with fp32 accumulation, fp32 master weights,
 * gradients and optimizer state), or fp32 throughout (for checking
 * against the CPU).  The CPU backend is always fp32. */
enum exec_precision { EXEC_PRECISION_BF16, EXEC_PRECISION_FP32 };

/* What the pre-flight check (exec_opts.check) holds the job to, from the
 * plan and the simulator; a zero figure is not checked. */
/* The groups the pre-flight check times, in this order: TP, CP, PP, and
 * DP (every DP and CP rank of one weight shard). */
#define EXEC_CHECK_GROUPS 4
extern const char *const exec_check_group_names[EXEC_CHECK_GROUPS];
struct exec_opts;
/* The size of check group k of o's layout. */
int exec_check_group_size(const struct exec_opts *o, int k);

struct exec_expect {
	char gpu[PRICE_NAME_MAX];     /* the plan's catalog GPU; "" any */
	double gpu_memory_bytes;      /* its memory in the catalog */
	double memory_bytes;          /* predicted memory per device, all of it */
	/* bus bandwidth the simulator assumed for an all-reduce over each of
	 * the EXEC_CHECK_GROUPS groups (sim_group_link), bytes/s */
	double bus_bytes_per_s[EXEC_CHECK_GROUPS];
	double min_fraction;          /* of it that a group must reach */
};

/* What the pre-flight check found (world rank 0's copy; figures reduced
 * over the ranks as noted). */
struct exec_check {
	int done;
	int gpu_match;               /* every rank's device is expect.gpu (1 when not asked) */
	double free_bytes_min;       /* free device memory before the run, least over ranks */
	double total_bytes;          /* rank 0's device */
	double bus_bytes_per_s[EXEC_CHECK_GROUPS]; /* measured all-reduce bus bandwidth,
						    * least over the groups; 0 for a
						    * group of one */
	double msg_bytes;            /* the all-reduce's buffer */
	double used_after_step_bytes;/* device memory in use after step 1, most over ranks */
	double counted_after_step_bytes; /* of which the executor's own allocations */
};

/* What one step did; handed to exec_opts.on_step on world rank 0. */
struct exec_step_info {
	int step;             /* 1-based */
	int steps;
	double loss;          /* mean cross-entropy over the step's tokens, nats */
	double grad_norm;     /* global L2 norm before clipping */
	double time_s;        /* wall time of the step on rank 0 */
	double cpu_s;         /* CPU time of rank 0's thread over the step */
	int cpu_timed;        /* rank 0's exec_device.cpu_timed: cpu_s is its kernels' time */
};

struct exec_opts {
	struct sim_model model;   /* the shapes run (already shrunk for a trial);
				     tied_embeddings: the LM head is wte; with
				     experts a mixture of experts (experts,
				     top_k, expert_ffn, shared_experts,
				     shared_ffn, dense_layers,
				     router_pre_softmax) */
	struct sim_parallel par;  /* tp, pp, dp, cp, ep, mbs, gbs, zero, recompute,
				     interleave, flash, seq_parallel (applied
				     when tp > 1); ft: none, full or LoRA
				     (its rank and targets) */
	enum sched_kind schedule; /* SCHED_INTERLEAVED iff par.interleave > 1 */
	enum exec_norm norm;      /* exec_opts_init: RMSNorm for SwiGLU models */
	int steps;
	uint64_t seed;            /* initialisation and synthetic data */
	/* AdamW (Loshchilov and Hutter, ICLR 2019) with global-norm clipping */
	double lr, beta1, beta2, adam_eps, weight_decay, grad_clip;
	/* LoRA (par.ft.method SIM_FT_LORA; its rank and targets par.ft's):
	 * the adapters' output scaled by lora_alpha / rank (Hu et al. 2021,
	 * sec. 4.1); 0 reads as twice the rank, torchtune's LoRA configs'
	 * (lora_rank 16, lora_alpha 32).  The base is frozen. */
	double lora_alpha;
	const char *data_path;    /* uint16 token file; NULL: synthetic data */
	const char *backend;      /* "cpu" or "cuda" */
	enum exec_precision precision;
	int max_ranks;            /* refuse layouts with more ranks than this */
	int fault_rank, fault_step; /* fault injection; -1: none */
	int hang_rank, hang_step;   /* EXEC_FAULT_HANG_ENV; -1: none */
	int oom_rank;               /* EXEC_FAULT_OOM_ENV; -1: none */
	double timeout_s;           /* a step running longer ends the job; 0: never */
	double max_memory_bytes;    /* per-rank cap on device allocations; 0: none */
	int check;                /* pre-flight check before step 1 (exec_expect) */
	struct exec_expect expect;
	int trace;                /* record the measured timeline (exec_result.trace) */
	/* Checkpoints (exec_ckpt.c): every ckpt_every steps and after the
	 * last, each rank's shard into ckpt_dir (NULL: none); with resume,
	 * the run continues after ckpt_dir's newest checkpoint, to `steps`
	 * in all. */
	const char *ckpt_dir;
	int ckpt_every;
	int resume;
	int ckpt_fault_rank, ckpt_fault_step; /* EXEC_FAULT_CKPT_ENV; -1: none */
	int init_threads;         /* host threads drawing the initial weights; 0:
				     the machine's CPUs over the ranks on it */
	/* Called on world rank 0 after every step (may be NULL). */
	void (*on_step)(void *ctx, const struct exec_step_info *s);
	void *on_step_ctx;
};

/* Fills o with a small GPT-style model (4 layers, hidden 64, 4 heads,
 * vocabulary 128, sequence 32), a single rank, 10 steps, seed 1234, AdamW
 * lr 1e-3, betas (0.9, 0.95), eps 1e-8, weight decay 0.1, clipping at 1.0,
 * the CPU backend (bf16 GEMMs were it a GPU), no pre-flight check and
 * EXEC_MAX_RANKS_DEFAULT. */
void exec_opts_init(struct exec_opts *o);

/* Picks what follows from the model: RMSNorm with SwiGLU, LayerNorm with
 * GELU; the interleaved schedule iff par.interleave > 1, else 1F1B. */
void exec_opts_derive(struct exec_opts *o);

/* Checks that o can run: shapes positive, heads, KV heads and the MLP
 * width divisible by tp, layers by pp * interleave, gbs by mbs * dp, the
 * sequence by cp, its cp slice by tp with sequence parallelism, at most
 * max_ranks ranks, a backend named cpu or cuda; with experts, the model
 * as sim_model_check has it, ep dividing the experts and tp * cp * dp,
 * etp 1, sequence parallelism with tp > 1, the shared experts' width
 * divisible by tp, the alltoall dispatcher; no multi-head latent
 * attention; fine-tuning none, full or LoRA (no QLoRA, no offload, no
 * LoRA with experts) with a rank and targets the model has.  Returns RC_OK, or RC_INPUT with a one-line reason in why[size].
 * Whether the backend can run here is exec_backend_probe()'s question. */
enum rc exec_opts_check(const struct exec_opts *o, char *why, size_t size);

/* Whether the token file at path (exec_opts.data_path) can feed o's model:
 * readable, an even number of bytes holding at least seq + 1 tokens, every
 * token below the vocabulary.  Returns RC_OK, or RC_INPUT with a one-line
 * reason naming the file in why[size]; nothing printed. */
enum rc exec_data_check(const char *path, const struct exec_opts *o, char *why, size_t size);

/* Whether backend `name` can run on this machine: RC_OK; RC_DEVICE with
 * the reason in why[size] ("no CUDA device found (...)", or the CUDA
 * backend not built in); RC_INPUT for an unknown name.  Prints nothing. */
enum rc exec_backend_probe(const char *name, char *why, size_t size);
/* The device this rank's backend `name` would open (a GPU: the one of the
 * launcher's local rank): its name as exec_result.device gives it and its
 * memory.  Errors as exec_backend_probe. */
enum rc exec_backend_device(const char *name, char *dev, size_t dev_size, double *memory_bytes,
			    char *why, size_t size);
/* Backends built into this binary, ", "-separated ("cpu, cuda"). */
const char *exec_backends_built(void);
/* The name of a precision: "bf16" or "fp32"; and back (RC_USAGE when
 * s is neither). */
const char *exec_precision_str(enum exec_precision p);
enum rc exec_precision_parse(const char *s, enum exec_precision *out);

/* Bytes of one activation element as backend `name` stores it at
 * precision p: 2 (bf16) for "cuda" at EXEC_PRECISION_BF16, else 4. */
int exec_act_bytes(const char *name, enum exec_precision p);

/* Ranks the layout needs: tp * pp * dp * cp. */
int exec_opts_ranks(const struct exec_opts *o);

/* LoRA's alpha of o: lora_alpha, or twice the rank when 0. */
double exec_lora_alpha(const struct exec_opts *o);

/* Fills e for o's run on cluster c with prediction pred: c's GPU and
 * memory, pred's memory per device (less the CUDA context and allocator
 * slack on the CPU, which has neither), and the bus bandwidth the
 * simulator's link gives each group, of which min_fraction must be met. */
void exec_expect_init(struct exec_expect *e, const struct exec_opts *o,
		      const struct sim_cluster *c, const struct sim_result *pred,
		      double min_fraction);

/* ---- rank layout ------------------------------------------------------ */

/* Where one rank sits.  Ranks are numbered TP innermost, then CP, then
 * DP, then PP (the simulator's placement, sim.c and sim_event.c):
 * rank = ((pp_rank * dp + dp_rank) * cp + cp_rank) * tp + tp_rank, so a
 * pipeline stage is tp cp dp consecutive ranks.  This is Megatron-Core's
 * default order "tp-cp-ep-dp-pp" and DeepSpeed's pipeline topology
 * (PipeModelDataParallelTopology: pipe, data, model, the last
 * innermost): CP's K/V all-gather and DP's sums stay on as few nodes as
 * TP allows, the pipeline's sends cross them. */
struct exec_layout {
	int world, rank;
	int tp, pp, dp, cp;
	int tp_rank, pp_rank, dp_rank, cp_rank;
	/* The experts' layout, folded over the tp x cp x dp ranks of a
	 * pipeline stage as Megatron-Core's MoE parallel folding does (Liu et
	 * al. 2025, arXiv:2504.14960; its expert rank order "tp-ep-dp-pp"
	 * with expert TP 1): the stage's rank s = (dp_rank * cp + cp_rank) *
	 * tp + tp_rank is expert-parallel rank s % ep of expert-data-parallel
	 * replica s / ep.  An EP group is ep consecutive ranks of a stage
	 * (inside one TP x CP group when ep divides tp x cp, as Megatron
	 * places it); edp = tp cp dp / ep. */
	int ep, edp;
	int ep_rank, edp_rank;
};

/* Fills l for rank of a tp * pp * dp * cp layout with par.ep expert-
 * parallel ranks (0 reads as 1).  Returns RC_OK, or RC_INPUT when rank
 * is out of range, a degree is < 1 or ep does not divide tp * cp * dp. */
enum rc exec_layout_init(struct exec_layout *l, const struct sim_parallel *p, int rank);
/* The world rank at coordinates (dp_rank, pp_rank, cp_rank, tp_rank) of
 * l's layout. */
int exec_layout_rank(const struct exec_layout *l, int dp_rank, int pp_rank, int cp_rank,
		     int tp_rank);

/* Balanced split of n items into parts: part idx gets [*off, *off + *len),
 * the first n % parts parts one item more. */
void exec_split(long n, int parts, int idx, long *off, long *len);

/* Layers of pipeline stage `stage` when `layers` layers are cut into pp
 * stages as the simulator cuts them (sim_stage_layers): evenly, any extra
 * layers going to the middle stages (Llama 3 405B's 126 layers over 16
 * stages: 7, 14 x 8, 7).  Requires layers >= pp >= 1. */
int exec_stage_layers(int layers, int pp, int stage);
/* Layers [*first, *first + *count) held by chunk `chunk` of pipeline stage
 * `stage` with v chunks per stage: the stage's layers split as the
 * simulator splits them (sim_chunk_layers); chunk c of stage s is virtual
 * stage c * pp + s (Narayanan et al., SC'21, sec. 2.2) and the virtual
 * stages hold consecutive layers in that order.  Requires every chunk to
 * hold a layer: layers / pp >= v >= 1. */
void exec_chunk_layers(int layers, int pp, int v, int stage, int chunk,
		       int *first, int *count);

/* ---- measured timeline (exec_trace.c, exec_trace_json.c) ------------- */

/* What one recorded interval of a rank's run was.  Compute (forward,
 * backward, optimizer) is on the rank's compute track, everything that
 * talks to another rank on its communication track. */
enum exec_trace_kind {
	EXEC_TRACE_FWD,        /* forward of micro-batch mb through local chunk */
	EXEC_TRACE_BWD,        /* its backward (with any recomputation) */
	EXEC_TRACE_OPTIMIZER,  /* clipping and AdamW (its collectives apart) */
	EXEC_TRACE_SEND,       /* a message handed to the communicator */
	EXEC_TRACE_RECV,       /* a blocking receive, the wait included */
	EXEC_TRACE_WAIT_SENDS, /* the step's wait for its outstanding sends */
	EXEC_TRACE_COLL,       /* a collective: op over group */
	EXEC_TRACE_COLL_ASYNC, /* one left running (the gradients' sum over DP),
				* on a track of its own: to its end on a
				* device, to the wait for it on the host */
};

/* A collective's operation, and the group it ran over. */
enum exec_trace_op { EXEC_TRACE_ALL_REDUCE, EXEC_TRACE_REDUCE_SCATTER, EXEC_TRACE_ALL_GATHER,
		     EXEC_TRACE_ALL_TO_ALL };

/* One event.  Times are seconds since the rank's start of step 1 (its
 * own clock: CLOCK_MONOTONIC on the CPU, CUDA events on a GPU). */
struct exec_trace_event {
	double start_s, end_s;
	double bytes;              /* a message's, or the collective's buffer; 0 for compute */
	int rank, step;            /* world rank; 1-based step */
	int mb, chunk;             /* FWD, BWD, SEND, RECV; -1 otherwise */
	int peer;                  /* SEND, RECV: the other pipeline stage; -1 otherwise */
	unsigned char kind;        /* enum exec_trace_kind */
	unsigned char op;          /* COLL: enum exec_trace_op */
	unsigned char group;       /* COLL: enum exec_group_kind */
	unsigned char data;        /* SEND, RECV: enum sched_data */
};

/* Every rank's events, gathered on world rank 0.  Plain data; release
 * with exec_trace_release(). */
struct exec_trace {
	struct exec_trace_event *ev;  /* rank by rank, each in the order it began */
	long n;
	long dropped;                 /* events not kept (a full buffer), all ranks */
	int steps;                    /* steps recorded: the run's first `steps` */
	int world;
	int device_clock;             /* 1: CUDA events; 0: the host's monotonic clock */
};

/* Frees t's events and zeroes it; accepts NULL. */
void exec_trace_release(struct exec_trace *t);

/* Time a step spends in forward and backward passes (FWD and BWD events
 * summed, TP and CP traffic inside them included) and in the optimizer,
 * each the mean over the recorded steps (the first left out when there
 * are more: it warms caches and allocators) on the rank where it is
 * largest: what the simulator's breakdown calls compute + TP + CP comm on
 * the slowest stage, and optimizer.  0, or -1 when t holds no such events. */
int exec_trace_phases(const struct exec_trace *t, double *fwd_bwd_s, double *optimizer_s);

/* Returns tr as Chrome trace-event JSON, the format of the simulator's
 * `simulate --timeline` (simulator/sim_trace_json.c): one process per
 * rank named "rank R (dp D, pp P, tp T)" with a compute thread and a
 * communication thread, one complete ("X") event per interval named as
 * the simulator names it ("F3", "F3.c1", "act 3 -> stage 1"), ts and dur
 * in microseconds.  o gives the layout and schedule.  Caller frees with
 * free(). */
char *exec_trace_to_json(const struct exec_opts *o, const struct exec_trace *tr);
/* Writes exec_trace_to_json() to path atomically.  Returns RC_OK or
 * RC_ERR (message printed). */
enum rc exec_trace_write(const char *path, const struct exec_opts *o,
			 const struct exec_trace *tr);

/* ---- running --------------------------------------------------------- */

struct exec_result {
	struct exec_layout layout;  /* this rank */
	char device[128];           /* this rank's device ("cpu", or the GPU's name) */
	double device_memory_bytes;
	struct exec_check check;    /* when exec_opts.check */
	int first_step;             /* the first step run (1, or after a resumed checkpoint) */
	int steps;                  /* steps run: first_step .. first_step + steps - 1 */
	double *losses;             /* [steps], same on every rank */
	double *grad_norms;         /* [steps] */
	double *step_time_s;        /* [steps], this rank's wall time */
	double step_time_median_s;
	/* [steps], the CPU time the ranks' threads spent in the step
	 * (exec_thread_cpu_s), summed and divided by the cores they had,
	 * min(ranks, cores): on the CPU backend with one BLAS thread, the
	 * time the step takes on cores the job has to itself, without the
	 * time a rank waited for a core that other work held (OpenMPI polls
	 * while a rank waits for another, so that wait counts); on a GPU,
	 * the hosts' */
	double *step_cpu_s;
	double step_cpu_median_s;
	/* 1 where the step's CPU time is the figure to set against the
	 * prediction (exec_device.cpu_timed on every rank) */
	int cpu_timed;
	double tokens_per_s;        /* global batch tokens / median step time */
	/* model FLOPs of a step (sim_finetune_train_flops, a LoRA run's
	 * fewer; no recomputation counted) per rank per second of the
	 * median step */
	double model_flops_per_rank_s;
	double params;              /* parameters of the model run */
	double trainable_params;    /* of them trained: all, or LoRA's adapters */
	/* LoRA: 1 when every rank's frozen base weights were bit for bit
	 * the same after the last step as before the first (FNV-1a of the
	 * fp32 masters), 0 when not; -1 without a frozen base */
	int frozen_unchanged;
	/* model states per rank between steps (exec_trainer_states), the
	 * most over the ranks of each: weights, gradients, AdamW moments */
	double state_weights_bytes, state_grads_bytes, state_optimizer_bytes;
	double *peak_memory_bytes;  /* [world] on world rank 0; NULL elsewhere */
	int world;
	struct exec_trace trace;    /* exec_opts.trace: every rank's, on world rank 0 */
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

/* ---- checkpoints (exec_ckpt.c, exec_ckpt_json.c) --------------------- */

#define EXEC_CKPT_SCHEMA "gpuplan.checkpoint/2"
/* Checkpoints kept in a directory: the newest and the one before
 * (the planner prices two, PLAN_DEFAULT_CKPT_KEEP). */
#define EXEC_CKPT_KEEP 2

/* A checkpoint directory holds DIR/step-NNNNNNNN/ per checkpoint: one
 * shard per rank (rank-NNNNN.bin: the rank's master weights and AdamW
 * moments, native byte order) and manifest.json (schema
 * gpuplan.checkpoint/2: the step, the model, the layout, the backend and
 * the precision it computed in, the seed, the --data file (path, size,
 * time stamp, FNV-1a hash) or synthetic data, AdamW's settings, the run's
 * --steps and each shard's size and FNV-1a hash).  A checkpoint is written into DIR/.step-NNNNNNNN.tmp, every file
 * fsynced, and renamed into place after the manifest: a step-* directory
 * is always whole, and a write killed half-way leaves the ones before
 * untouched.
 *
 * Checks o's checkpoint options before any rank starts (prints nothing):
 * without o->resume, that ckpt_dir can be used (its parent exists; it is
 * a writable directory or can be made one) and holds no checkpoint yet,
 * *step = 0; with it, that its newest step-* directory has its manifest,
 * is of o's model, layout, seed, backend and precision (the one o's
 * backend computes in: fp32 on the CPU), AdamW settings and data (the
 * --data file's size and hash; the path and time stamp may differ, and
 * then note[note_size] says why that is safe; a manifest that records no
 * backend and precision, written before gpuplan recorded them, is taken
 * to be o's, and note says so too, after "; "; else note is made "") and
 * before o->steps, and that every shard it lists is a regular file of the
 * manifest's size (stat only: nothing is opened), *step = its step.
 * Returns RC_OK, or RC_INPUT with one line naming the directory, the
 * checkpoint or the shard, and for a setting that differs the
 * checkpoint's value and this run's, in why[size].  note may be NULL. */
enum rc exec_ckpt_prepare(const struct exec_opts *o, int *step, char *note, size_t note_size,
			  char *why, size_t size);
/* Reads every shard of o->ckpt_dir's checkpoint of step (found by
 * exec_ckpt_prepare) and checks its size and hash against the manifest,
 * opening nothing but regular files (a FIFO or device in a shard's place
 * is refused unread).  The whole check before any rank starts; each rank
 * checks its own shard again as it reads it.  RC_OK, or RC_INPUT with
 * one line naming the shard in why[size]. */
enum rc exec_ckpt_verify(const struct exec_opts *o, int step, char *why, size_t size);

/* 1 when started by mpirun (OMPI_COMM_WORLD_SIZE) or srun (PMI_SIZE with
 * --mpi=pmi2, PMIX_RANK with --mpi=pmix). */
int exec_under_launcher(void);
/* Under a launcher, before a rank exits on an error only rank 0 reports:
 * every rank meets the others once, so none exits (and has the launcher
 * abort the job, which may drop what rank 0 has not yet sent on) before
 * rank 0 has said why.  Does nothing outside a launcher. */
void exec_world_leave(void);
/* The launcher's world rank and size (under PMIx, Slurm's step size);
 * 0 and 1 when not under one. */
int exec_launcher_rank(void);
int exec_launcher_size(void);
/* This rank's index among the ranks on its node (OMPI_COMM_WORLD_LOCAL_RANK,
 * SLURM_LOCALID, MPI_LOCALRANKID or LOCAL_RANK); 0 when not under a
 * launcher.  A GPU rank uses device local_rank modulo the devices seen. */
int exec_launcher_local_rank(void);
/* The number of ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE or
 * MPI_LOCALNRANKS; under another launcher its world size); 1 when not
 * under a launcher. */
int exec_launcher_local_size(void);

/* Starts `mpirun [--allow-run-as-root] --oversubscribe --quiet -np np SELF argv...`
 * where SELF is this executable, waits for it and returns RC_OK when every
 * rank succeeded.  argv[0] is the command (execute, calibrate), which names
 * the messages.  mpirun is $GPUPLAN_MPIRUN or found in PATH; when there is
 * none: RC_DEVICE with one message.  A failed job returns the status its
 * exit code stands for (2 -> RC_INPUT, 4 -> RC_DEVICE, else RC_ERR) after
 * one line saying how it ended. */
enum rc exec_launch(int np, int argc, char **argv);

/* 1 when a device the driver names `device` with device_memory_bytes is
 * the catalog's GPU `gpu` of gpu_memory_bytes: the catalog name's first
 * part ("H100" of "H100-SXM5-80GB") is a word of the device's name ("NVIDIA
 * H100 80GB HBM3"), case-insensitive, and the memories agree within 15%
 * (drivers report GiB of HBM, catalogs GB).  "cpu" matches only "cpu". */
int exec_gpu_matches(const char *device, double device_memory_bytes, const char *gpu,
		     double gpu_memory_bytes);

/* ---- the CPU as a device the simulator knows ------------------------- */

/* Documented defaults for one CPU rank running the fp32 CPU backend, used
 * until a calibration says otherwise (see exec_cpu_spec.c for where each
 * figure comes from): name "cpu".  Memory is this machine's RAM. */
void exec_cpu_gpu(struct price_gpu *g);
/* A one-node cluster of `ranks` CPU ranks: ranks share this machine's
 * cores, so each rank's peak is scaled by min(1, cores / ranks); ranks talk
 * through shared memory. */
void exec_cpu_cluster(struct sim_cluster *c, int ranks);

/* The same cluster for a CPU device g (exec_cpu_gpu's figures, or a
 * calibration's applied to them) with latency_s per message (0: the
 * default). */
void exec_cpu_cluster_of(struct sim_cluster *c, const struct price_gpu *g, double latency_s,
			 int ranks);

/* par as the executor's backend runs it: activations at the width the
 * backend stores them (exec_act_bytes), fp32 gradients, ZeRO-2 reducing
 * every micro-batch, and the DP collectives it overlaps (dp_overlap). */
void exec_price_parallel(const char *backend, enum exec_precision precision,
			 struct sim_parallel *par);
/* The simulator's prediction for o on the CPU cluster of its rank count,
 * activations priced at the element size o's backend and precision store
 * (exec_act_bytes).  Returns RC_OK, or RC_INPUT with the simulator's
 * reason in why[size]. */
enum rc exec_predict(const struct exec_opts *o, struct sim_result *out,
		     char *why, size_t size);
/* The same on cluster c (a GPU's, for a CUDA run). */
enum rc exec_predict_on(const struct exec_opts *o, const struct sim_cluster *c,
			struct sim_result *out, char *why, size_t size);
/* Memory this machine can still give its processes without swapping
 * (MemAvailable of /proc/meminfo, else the free pages), bytes; 0 when
 * unknown. */
double exec_host_available_bytes(void);
/* Whether `local_ranks` CPU ranks of o fit this machine before any is
 * started: the simulator's memory per rank (pred, exec_predict()'s) times
 * the ranks against exec_host_available_bytes().  RC_OK (also when the
 * backend is not "cpu" or the host's memory is unknown), or RC_INPUT with
 * a one-line reason in why[size]. */
enum rc exec_host_fits(const struct exec_opts *o, const struct sim_result *pred,
		       int local_ranks, char *why, size_t size);
/* The part of pred's memory per device that a rank's own count
 * (exec_result.peak_memory_bytes) covers: model states and activations,
 * not sim_memory's "other" (logits, a GPU's CUDA context, allocator
 * slack). */
double exec_predicted_memory(const struct sim_result *pred);
/* What pred's breakdown gives a step's forward and backward passes on
 * its slowest stage: compute, and the TP and CP traffic inside them
 * (what exec_trace_phases() measures). */
double exec_predicted_fwd_bwd(const struct sim_result *pred);
/* The most any rank of r held (exec_result.peak_memory_bytes). */
double exec_peak_memory(const struct exec_result *r);

/* ---- calibration (exec_calibrate.c, exec_calibrate_fit.c, exec_calibrate_json.c) */

#define EXEC_CALIBRATION_SCHEMA "gpuplan.calibration/1"
#define EXEC_CALIB_MAX_POINTS 64

/* One GEMM shape timed: out[m, n] = a[m, k] b[n, k]^T, the simulator's
 * (tokens, output features, input features). */
struct exec_calib_gemm {
	double m, n, k;
	int backward;              /* 1: the backward pass (input and weight
				    * gradients, two GEMMs of the shape) */
	double time_s;             /* median of the timed repetitions */
	double flops_per_s;        /* 2 m n k / time_s, twice that backward */
	double predicted_s;        /* the simulator's time with the fitted figures */
};

/* One device-to-device copy timed: bytes read and bytes written. */
struct exec_calib_copy {
	double bytes;
	double time_s;
	double bytes_per_s;        /* 2 bytes / time_s */
};

/* One layer's element-wise kernels timed, forward and backward, as the
 * trainer runs them: two norms and two residual adds over tokens x
 * hidden, the MLP activation over tokens x ffn. */
struct exec_calib_elt {
	char mlp[8];               /* "gelu" (with LayerNorm) or "swiglu" (with RMSNorm) */
	double tokens, hidden, ffn;
	double bytes;              /* what the simulator counts them moving */
	double time_s;
	double bytes_per_s;        /* bytes / time_s */
	/* of which the MLP activation's, timed apart (sim_layer_act_bytes
	 * forward and backward); 0: not timed apart (older files) */
	double act_bytes, act_time_s;
};

/* One attention core timed, forward and backward, as the trainer runs it
 * (probabilities recomputed in backward from the log-sum-exp): batch
 * sequences of seq tokens, heads query heads sharing kv_heads key/value
 * heads of head_dim (with the rest 0, the shape calibrate will time). */
struct exec_calib_attn {
	int batch, seq, heads, kv_heads, head_dim;
	double flops;              /* what the simulator counts (sim_attn_flops), both passes */
	double time_s;
	double flops_per_s;        /* flops / time_s */
};

/* One optimizer step timed over params parameters, as the trainer runs
 * it: the gradient's sum of squares, AdamW, the working copy narrowed
 * from the master (bf16 devices), the gradient zeroed.  params 0: not
 * measured. */
struct exec_calib_opt {
	double params;
	double bytes;              /* what the simulator counts (sim_optimizer_bytes) */
	double time_s;
	double bytes_per_s;        /* bytes / time_s */
};

/* One collective timed, nccl-tests style (doc/PERFORMANCE.md): algbw =
 * bytes / time; busbw = algbw x 2(n-1)/n for all-reduce, x (n-1)/n for
 * all-gather and reduce-scatter (bytes: the whole gathered buffer). */
struct exec_calib_coll {
	char op[16];               /* "all_reduce", "all_gather", "reduce_scatter" */
	int ranks;
	double bytes;
	double time_s;
	double algbw_bytes_per_s;
	double busbw_bytes_per_s;
};

/* What `gpuplan calibrate` measured, and the figures the simulator uses
 * to reproduce it.  Plain data. */
struct exec_calibration {
	char gpu[PRICE_NAME_MAX];      /* catalog GPU it applies to; "cpu" for the CPU */
	char device[128];              /* the device's own name */
	double device_memory_bytes;
	char backend[16];              /* "cpu" or "cuda" */
	enum exec_precision precision;
	int ranks;
	char date[32];                 /* UTC, ISO 8601 */
	/* what timed the kernels: "cpu", the calling thread's CPU time (the
	 * CPU backend with one BLAS thread: a busy machine's other work
	 * does not count), or "wall", the monotonic clock (a GPU, more BLAS
	 * threads, and files written before the field) */
	char clock[8];
	/* what the simulator reads instead of the catalog's figures (0: not
	 * measured, keep the catalog's) */
	double gemm_dim_half;          /* knee of sim's GEMM efficiency curve; 0: sim's default */
	double bf16_flops_per_s;       /* peak with which sim's efficiency curve gives the GEMM times */
	double hbm_bytes_per_s;        /* so that sim's element-wise rate is the copy rate */
	double intra_bytes_per_s;      /* so that sim's link gives the all-reduce bus bandwidth */
	double latency_s;              /* per ring step, from the smallest all-reduce */
	double elt_bytes_per_s[2];     /* so that sim's element-wise time is the measured
					* one: [0] a GELU layer's, [1] a SwiGLU layer's;
					* where act_bytes_per_s is set, of the norms and
					* residual adds alone */
	double act_bytes_per_s[2];     /* so that sim's MLP activation time is the
					* measured one; 0: timed with the rest */
	double attn_flops_per_s;       /* so that sim's attention time is the measured one */
	double opt_bytes_per_s;        /* so that sim's optimizer time is the measured one */
	struct exec_calib_gemm gemm[EXEC_CALIB_MAX_POINTS];
	int n_gemm;
	struct exec_calib_copy copy[EXEC_CALIB_MAX_POINTS];
	int n_copy;
	struct exec_calib_elt elt[2];  /* GELU and SwiGLU layers */
	int n_elt;
	struct exec_calib_attn attn;   /* batch 0: not measured */
	struct exec_calib_opt opt;     /* params 0: not measured */
	struct exec_calib_coll coll[EXEC_CALIB_MAX_POINTS];
	int n_coll;
};

struct exec_calibrate_opts {
	const char *backend;           /* "cpu" or "cuda" */
	enum exec_precision precision;
	int quick;                     /* a few small shapes: seconds, for tests */
	/* Called on world rank 0 before each measurement (may be NULL):
	 * `phase` names it ("copies", "GEMMs", "collectives"), done of total
	 * measurements are finished. */
	void (*on_phase)(void *ctx, const char *phase, int done, int total);
	void *on_phase_ctx;
};
void exec_calibrate_opts_init(struct exec_calibrate_opts *o);

/* Measures this job's device (world rank 0's; the others wait) and, with
 * more than one rank, collectives over the world; fits the simulator's
 * figures.  Collective over the job (mpirun or srun: one rank per device;
 * alone otherwise).  Returns RC_OK with out filled on world rank 0 (gpu
 * left empty for the caller to name), RC_DEVICE when the backend cannot
 * run (one message) or RC_ERR.  Every rank returns the same status. */
enum rc exec_calibrate(const struct exec_calibrate_opts *o, struct exec_calibration *out);

/* Fits c's simulator figures to its measurements (exec_calibrate_fit.c):
 * hbm from the largest copy, the bf16 peak with which the simulator's GEMM
 * times add up to the measured ones, the element-wise rates with which the
 * simulator's element-wise time is the measured one (the norms' and the
 * MLP activation's apart where both were timed), the attention rate
 * with which its attention time is, the intra-node link and latency from
 * the all-reduces.  Figures without measurements stay as they are. */
void exec_calibration_fit(struct exec_calibration *c);

/* The attention rate (FLOP/s, sim_attn_flops) the simulator's flash model
 * gives c's attention shape on g's figures, as if uncalibrated; 0 when c
 * timed no attention. */
double exec_calibration_catalog_attn(const struct exec_calibration *c,
				     const struct price_gpu *g);

/* The simulator's GPU and cluster figures with c applied: c's non-zero
 * figures replace bf16 peak (the other precisions' peaks scaled by the
 * same factor), the GEMM knee, HBM, element-wise and intra-node
 * bandwidth, attention rate, and latency. */
void exec_calibration_apply_gpu(const struct exec_calibration *c, struct price_gpu *g);
void exec_calibration_apply(const struct exec_calibration *c, struct sim_cluster *cl);

/* Writes c as JSON (schema gpuplan.calibration/1) to path atomically.
 * Returns RC_OK or RC_ERR (message printed). */
enum rc exec_calibration_write(const char *path, const struct exec_calibration *c);
/* Returns c as a JSON string (caller frees with free()). */
char *exec_calibration_to_json(const struct exec_calibration *c);
/* Parses buf[0..len), naming it name in messages: a bad field gets one
 * line "name: .field: expected X, found Y" and RC_INPUT; out untouched
 * then. */
enum rc exec_calibration_parse(const char *name, const char *buf, size_t len,
			       struct exec_calibration *out);
/* Reads path as exec_calibration_parse does; RC_ERR when unreadable. */
enum rc exec_calibration_read(const char *path, struct exec_calibration *out);
/* Where the calibration of catalog GPU gpu lives in user directory dir:
 * DIR/calibration/GPU.json (characters other than letters, digits, '.',
 * '-' and '_' in the name become '_'). */
void exec_calibration_path(char *buf, size_t size, const char *dir, const char *gpu);

/* Writes the run as JSON (schema "gpuplan.run/1") to path atomically:
 * layout, shapes, losses, median step time, tokens/s, peak memory per rank
 * and, when pred is not NULL, the prediction.  Returns RC_OK or RC_ERR
 * (message printed). */
enum rc exec_run_write_json(const char *path, const struct exec_opts *o,
			    const struct exec_result *r,
			    const struct sim_result *pred);

#endif
