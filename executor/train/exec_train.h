/*
 * exec_train.h - the executor's training layer (executor/train/): one
 * rank's part of the model and its training step (the trainer), its
 * checkpoints, the recorder of its timeline, and its data.
 *
 * Layers (tests/layers/test_layers.sh): common < pricing < simulator < planner <
 * executor (device < comm < train < run) < cli; a file includes and calls
 * only its own layer and those before it.  The training layer
 * reads the communication and device layers, and the simulator's
 * schedule (sched.h).
 */
#ifndef GPUPLAN_EXEC_TRAIN_H
#define GPUPLAN_EXEC_TRAIN_H

#include <stddef.h>

#include "comm/exec_comm.h"

/* ---- model and trainer (exec_trainer.c) ------------------------------ */

struct exec_trainer;

/* Builds the rank's part of the model for o at layout l on device d with
 * groups g (borrowed: they must outlive the trainer): parameters
 * initialised from o->seed identically whatever the layout, optimizer
 * state, pipeline schedule, data source.  Returns NULL with a reason in
 * why[size] when o cannot be laid out (exec_opts_check's reasons, the
 * schedule's) or its data file cannot be used; nothing printed. */
struct exec_trainer *exec_trainer_new(const struct exec_opts *o,
				      const struct exec_layout *l,
				      struct exec_device *d,
				      struct exec_groups *g, char *why, size_t size);
void exec_trainer_free(struct exec_trainer *t);

/* One training step (1-based): forward and backward of every micro-batch
 * in schedule order, gradient reduction, clipping and AdamW.  *loss and
 * *grad_norm are the same on every rank. */
enum rc exec_trainer_step(struct exec_trainer *t, int step, double *loss,
			  double *grad_norm);
/* Forward (and backward when `backward`) of step's batch without any
 * update: *loss is the batch's mean loss; the gradients, when computed,
 * are this rank's micro-batches' (not reduced over DP). */
enum rc exec_trainer_eval(struct exec_trainer *t, int step, int backward,
			  double *loss);

/* The timeline recorded under exec_opts.trace, every rank's gathered to
 * world rank 0 (over MPI when mpi): see exec_tracer_gather().  Collective
 * over the world; out is zeroed when tracing is off. */
enum rc exec_trainer_trace(struct exec_trainer *t, int mpi, struct exec_trace *out);

/* Parameters by unit, for tests: unit i's parameter and gradient buffers
 * (backend memory, fp32: the master weights, which forward reads directly
 * only where the activation type is fp32) and element count; tensor j's
 * offset, count and name.  Returns 0, or -1 when i or j is out of range. */
int exec_trainer_units(const struct exec_trainer *t);
int exec_trainer_unit(const struct exec_trainer *t, int i, float **params,
		      float **grads, long *n);
int exec_trainer_tensor(const struct exec_trainer *t, int i, int j, long *off,
			long *n, const char **name);
/* Parameters this rank counts for the model: what it holds of the first
 * replica of each unit's group (DP and CP ranks; the experts' data-
 * parallel ranks for an MoE layer's experts), replicated tensors counted
 * on TP rank 0 only and a tied embedding on the first stage only: summed
 * over the world, the model's count. */
double exec_trainer_local_params(const struct exec_trainer *t);
/* Of them the trainable ones: all but a LoRA run's frozen base, which
 * leaves its adapters. */
double exec_trainer_local_trainable(const struct exec_trainer *t);

/* The model states this rank holds between steps, bytes: weights (the
 * fp32 masters, ZeRO-3's shard of them, and a working copy in a narrower
 * activation type), their gradients and AdamW's two moments, as the
 * trainer allocated them (padding to the ZeRO shards included; the
 * transient ones, ZeRO-3's gathered units and ZeRO-2/3's whole gradients
 * of the unit in backward, left out).  A frozen unit has weights alone. */
struct exec_state_bytes {
	double weights_bytes, grads_bytes, optimizer_bytes;
};
void exec_trainer_states(const struct exec_trainer *t, struct exec_state_bytes *out);

/* FNV-1a of this rank's frozen master weights (a LoRA run's base; ZeRO-3:
 * its shards), for the check that training leaves them as drawn; the
 * empty hash GP_FNV1A64_INIT without frozen units.  Reads them back from
 * the device. */
uint64_t exec_trainer_frozen_hash(const struct exec_trainer *t);

/* What a checkpoint keeps of this rank's trainer: exec_trainer_state_bufs()
 * fp32 buffers of backend memory, three a unit: its master weights (the
 * ZeRO-3 shard, or the whole padded unit), AdamW's m and v of its own
 * range (empty for a frozen unit).  With the step they are the whole training state: the batch of a
 * step follows from the step (load_tokens) and the random numbers are
 * counter-based.  exec_trainer_state_buf() gives buffer i and its element
 * count (0, or -1 when i is out of range); after writing them all,
 * exec_trainer_state_loaded() refreshes the working copies. */
int exec_trainer_state_bufs(const struct exec_trainer *t);
int exec_trainer_state_buf(const struct exec_trainer *t, int i, float **buf, long *n);
void exec_trainer_state_loaded(struct exec_trainer *t);

/* ---- checkpoints (exec_ckpt.c, exec_ckpt_json.c) --------------------- */

/* One rank's shard as the manifest lists it. */
struct exec_ckpt_shard {
	long long bytes;
	uint64_t fnv1a64;       /* of the whole file */
};

/* The --data file a run trained on, as its checkpoints record it: the
 * path as given, its size, modification time and FNV-1a hash of the
 * whole file.  The size and hash are what the file is; the path and time
 * only where it was.  synthetic: no --data (the rest 0). */
struct exec_ckpt_data {
	int synthetic;
	char path[1024];
	long long bytes;
	long long mtime_ns;     /* st_mtim, nanoseconds since the epoch */
	uint64_t fnv1a64;
};

/* AdamW's settings as a checkpoint's run had them (exec_opts'). */
struct exec_ckpt_optim {
	double lr, beta1, beta2, adam_eps, weight_decay, grad_clip;
};

/* What manifest.json says.  Plain data; shards is xcalloc'd, freed by
 * exec_ckpt_manifest_release(). */
struct exec_ckpt_manifest {
	int step;
	struct sim_model model;  /* name, shapes, mlp, tied_embeddings */
	enum exec_norm norm;
	struct sim_parallel par; /* tp, pp, dp, cp, zero, interleave, mbs, gbs;
				  * ft's method LoRA or none, its rank and
				  * targets */
	double lora_alpha;       /* LoRA's alpha as run (exec_lora_alpha) */
	/* The backend that computed the run ("cpu", "cuda") and the
	 * precision it computed in (the CPU backend's is fp32, whatever
	 * --precision says); backend "" where the manifest was written
	 * before gpuplan recorded them. */
	char backend[16];
	enum exec_precision precision;
	uint64_t seed;
	struct exec_ckpt_data data;    /* what the batches were drawn from */
	struct exec_ckpt_optim optim;
	int steps;               /* --steps of the run that wrote it (a resume
				  * may change it: no rate follows from it) */
	int world;
	struct exec_ckpt_shard *shards; /* [world] */
};

void exec_ckpt_manifest_release(struct exec_ckpt_manifest *m);
/* Returns m as JSON (caller frees with free()). */
char *exec_ckpt_manifest_to_json(const struct exec_ckpt_manifest *m);
/* Parses buf[0..len) into out; RC_INPUT with a one-line reason (".field:
 * expected X, found Y") in why[size] and out untouched on failure. */
enum rc exec_ckpt_manifest_parse(const char *buf, size_t len, struct exec_ckpt_manifest *out,
				 char *why, size_t size);

/* The checks of exec_ckpt_check.c.  Messages name the file, escaped. */
struct stat;
/* Whether path is a regular file (stat, nothing opened): 0, or -1 with
 * "PATH: expected a regular file (WHAT), found a FIFO" (or none) in why. */
int exec_ckpt_stat_regular(const char *path, const char *what, struct stat *st, char *why,
			   size_t size);
/* Opens path for reading when stat says it is a regular file, without
 * blocking, and checks with fstat that the file opened is that one: the
 * descriptor (caller closes), or -1 with why as above. */
int exec_ckpt_open_regular(const char *path, const char *what, struct stat *st, char *why,
			   size_t size);
/* Size and FNV-1a hash of the regular file path: RC_OK, or RC_INPUT
 * with why. */
enum rc exec_ckpt_file_hash(const char *path, const char *what, long long *bytes,
			    uint64_t *hash, char *why, size_t size);
/* The identity of the --data file path (NULL: synthetic data) into d:
 * RC_OK, or RC_INPUT with why. */
enum rc exec_ckpt_data_id(const char *path, struct exec_ckpt_data *d, char *why, size_t size);
/* Whether run's data is not the checkpoint's (ck): 0, with a note
 * (when note is not NULL; else untouched) where only its path or time
 * stamp differ; -1 with "WHERE: --data: expected the checkpoint's ...,
 * found ..." in why. */
int exec_ckpt_data_mismatch(const struct exec_ckpt_data *ck, const struct exec_ckpt_data *run,
			    const char *where, char *note, size_t note_size, char *why,
			    size_t size);
/* o's AdamW settings; and whether a checkpoint's differ from o's: 0, or
 * -1 with the first that differs, both values, in why. */
void exec_ckpt_optim_of(const struct exec_opts *o, struct exec_ckpt_optim *out);
int exec_ckpt_optim_mismatch(const struct exec_ckpt_optim *ck, const struct exec_opts *o,
			     const char *where, char *why, size_t size);

/* Writes step's checkpoint of every rank's trainer t into o->ckpt_dir as
 * exec_ckpt_prepare() describes, and removes all but the newest
 * EXEC_CKPT_KEEP.  Collective over the world; every rank returns the same
 * status: RC_OK, or RC_ERR after one line from the lowest failing rank. */
enum rc exec_ckpt_save(struct exec_job *j, struct exec_trainer *t, const struct exec_opts *o,
		       int step);
/* Reads this rank's shard of o->ckpt_dir's checkpoint of step `step` into
 * t and checks it against the manifest.  Collective over the world; every
 * rank returns the same status: RC_OK, RC_INPUT (a shard that is not the
 * manifest's) or RC_ERR, after one line from the lowest failing rank. */
enum rc exec_ckpt_load(struct exec_job *j, struct exec_trainer *t, const struct exec_opts *o,
		       int step);

/* ---- the trace recorder (exec_trace.c) ------------------------------- */

/* Records one rank's intervals into a buffer allocated once: nothing is
 * allocated per event, and every function accepts a NULL recorder and
 * does nothing then (tracing off costs a test per call site).  On a
 * device with timer_* functions each event is a pair of device marks,
 * read back into seconds when the next step begins; elsewhere the host's
 * CLOCK_MONOTONIC is read at once.  Only whole steps are kept: a step
 * starts recording when the buffer has room for per_step more events. */
struct exec_tracer;

/* Events a run keeps over all its ranks (48 bytes each, gathered on world
 * rank 0; some 150 bytes each in the JSON). */
#define EXEC_TRACE_MAX_EVENTS (1L << 20)

/* A recorder for rank `rank` of `world` on device d: room for per_step
 * events per step (a bound the caller proves), for steps steps, or for as
 * many whole steps as the rank's share, EXEC_TRACE_MAX_EVENTS / world,
 * allows (one at least; a step larger than the share keeps its first
 * events).  NULL when the device cannot make its marks (its message
 * printed). */
struct exec_tracer *exec_tracer_new(struct exec_device *d, int rank, int world,
				    long per_step, int steps);
void exec_tracer_free(struct exec_tracer *tr);
/* Step `step` (1-based) begins: the previous step's marks are read (the
 * device must have finished it) and this step's origin is marked. */
enum rc exec_tracer_step(struct exec_tracer *tr, int step);
/* Opens an event like e (kind, mb, chunk, peer, op, group, data, bytes
 * taken from it) on stream EXEC_STREAM_COMPUTE, _COMM or _REDUCE.
 * Returns its handle for exec_tracer_end, or -1 when not recorded. */
long exec_tracer_begin(struct exec_tracer *tr, const struct exec_trace_event *e, int stream);
void exec_tracer_end(struct exec_tracer *tr, long h, int stream);
/* Ends event h, a collective left running (all_reduce_start,
 * reduce_scatter_start): on a device, where the work queued on `stream`
 * so far ends, which is its end; on the host's clock, which cannot see
 * it end, at the next exec_tracer_waited(), the wait for it. */
void exec_tracer_end_async(struct exec_tracer *tr, long h, int stream);
void exec_tracer_waited(struct exec_tracer *tr);
/* Reads the last step's marks (after the device has finished) and
 * gathers every rank's events to world rank 0 into out (over MPI when
 * mpi, else this rank's alone).  Collective over the world.  Returns
 * RC_OK, or RC_DEVICE (message printed); out is filled on world rank 0
 * only and zeroed elsewhere. */
enum rc exec_tracer_gather(struct exec_tracer *tr, int mpi, struct exec_trace *out);

/* ---- data (exec_data.c) ---------------------------------------------- */

/* Token source: synthetic (a fixed random bigram process drawn from the
 * seed) or a file of little-endian uint16 tokens. */
struct exec_data {
	int vocab, seq;
	uint64_t seed;
	const unsigned char *file; /* the mapped file; NULL: synthetic */
	long file_tokens;
};

/* Opens path (NULL: synthetic).  Returns RC_OK, or RC_INPUT (no such file,
 * not a file, too short for one sequence, or a token >= vocab) or RC_ERR
 * (cannot be mapped) with a one-line reason naming the file in why[size];
 * nothing printed. */
enum rc exec_data_open(struct exec_data *dt, const char *path, int vocab,
		       int seq, uint64_t seed, char *why, size_t size);
void exec_data_release(struct exec_data *dt);
/* Sequence number idx: seq + 1 tokens into out (inputs are out[0..seq-1],
 * targets out[1..seq]).  The same idx gives the same tokens on every rank. */
void exec_data_sequence(const struct exec_data *dt, long idx, int *out);

/* Counter-based random numbers: the same (seed, stream, index) gives the
 * same value on every rank, so a tensor's element depends only on its
 * position in the full tensor.  Uniform in [0, 1) and standard normal. */
double exec_rand_uniform(uint64_t seed, uint64_t stream, uint64_t index);
double exec_rand_normal(uint64_t seed, uint64_t stream, uint64_t index);
/* out[i] = (float)(std * exec_rand_normal(seed, stream, first + i)) for
 * i < n, the same values with the stream's key hashed once. */
void exec_rand_normal_fill(float *out, size_t n, uint64_t seed, uint64_t stream,
			   uint64_t first, double std);

#endif
