/*
 * exec_device.h - the executor's device layer (executor/device/): element
 * types, the compute backend's table and a device, one instance of it.
 *
 * A backend (struct exec_backend) owns memory and runs kernels.  Like
 * nccl-tests' struct testColl, it is a table of function pointers filled
 * by one backend (device/cpu/, device/cuda/), each kernel's CPU reference
 * and CUDA version in files of the same name.  Every pointer a kernel
 * takes is backend memory (host memory on the CPU, device memory on a
 * GPU); the model code never dereferences it, it only passes it on.  A
 * backend may queue work and return before it is done (the CUDA one
 * does): exec_device_sync() waits, and reports a failure.
 *
 * Element types.  A device stores activations in its activation type
 * (struct exec_device.act): fp32 on the CPU, bf16 on the CUDA backend at
 * EXEC_PRECISION_BF16 (exec_act_dtype).  A kernel's `void *` tensors are
 * of that type: activations, their gradients, the logits, and the weights
 * given to forward and backward (the trainer's working copy of its fp32
 * master weights).  Its `float *` tensors are fp32 on every device:
 * parameter gradients, master weights and AdamW's moments, norm
 * statistics, the attention log-sum-exp and the loss's row statistics.
 *
 * Layers (tests/layers/test_layers.sh): common < pricing < simulator < planner <
 * executor (device < comm < train < run) < cli; a file includes and calls
 * only its own layer and those before it.  The device layer reads the
 * launcher's environment (exec_env.c) and nothing of the layers above:
 * what ends the job when memory runs out is given to it
 * (exec_device_on_abort).
 */
#ifndef GPUPLAN_EXEC_DEVICE_H
#define GPUPLAN_EXEC_DEVICE_H

#include <stddef.h>

#include "exec.h"

/* ---- element types ---------------------------------------------------- */

/* What a buffer's elements are: a collective's data, a device's
 * activations; EXEC_I32 for counts (an all-to-all's, exec_comm.h). */
enum exec_dtype { EXEC_F32, EXEC_F64, EXEC_BF16, EXEC_I32 };

/* Bytes of one element of t. */
size_t exec_dtype_size(enum exec_dtype t);
/* The activation type of backend `name` at precision p: EXEC_BF16 for
 * the CUDA backend at EXEC_PRECISION_BF16, EXEC_F32 otherwise (the CPU
 * backend is fp32 throughout).  exec_act_bytes() is its size. */
enum exec_dtype exec_act_dtype(const char *name, enum exec_precision p);

/* ---- compute backend ------------------------------------------------- */

struct exec_device;

/* Shapes: n rows (tokens), ic input and oc output features.  Weights are
 * [oc, ic] row-major, y = x W^T + b, as in llm.c.  Backward kernels
 * ACCUMULATE (+=) into every gradient they are given, input gradients
 * included; the caller zeroes what must start at zero. */
struct exec_backend {
	const char *name;
	/* Acquires the device (a GPU: picks it from the launcher's local
	 * rank, creates streams and handles) and fills d->name and
	 * d->memory_bytes.  Returns RC_OK, or RC_DEVICE after one message.
	 * NULL: nothing to acquire. */
	enum rc (*open)(struct exec_device *d);
	/* Waits for every kernel queued so far.  Returns RC_OK, or RC_DEVICE
	 * when the device has failed since open (the first failure was
	 * logged with rank, file and line when it happened).  NULL: the
	 * backend runs synchronously and never fails. */
	enum rc (*sync)(struct exec_device *d);
	/* Free and total bytes of the device's memory now (a GPU:
	 * cudaMemGetInfo; the CPU: available and installed RAM). */
	enum rc (*mem_info)(struct exec_device *d, double *free_bytes, double *total_bytes);
	/* Frees what the backend keeps in d->priv (scratch, handles). */
	void (*release)(struct exec_device *d);
	/* Zero-filled allocation of bytes; NULL when out of memory. */
	void *(*alloc)(struct exec_device *d, size_t bytes);
	void (*free)(struct exec_device *d, void *p, size_t bytes);
	void (*zero)(struct exec_device *d, void *p, size_t bytes);
	void (*copy)(struct exec_device *d, void *dst, const void *src, size_t bytes);
	void (*to_host)(struct exec_device *d, void *host, const void *src, size_t bytes);
	void (*from_host)(struct exec_device *d, void *dst, const void *host, size_t bytes);

	/* out[n, oc] = inp[n, ic] w[oc, ic]^T (+ bias when not NULL) */
	void (*matmul_forward)(struct exec_device *d, void *out, const void *inp,
			       const void *w, const void *bias, int n, int ic, int oc);
	/* dinp += dout w; dw += dout^T inp; dbias += column sums of dout
	 * (dinp, dw, dbias may be NULL: a frozen weight has no gradient,
	 * and its weight-gradient GEMM is not run) */
	void (*matmul_backward)(struct exec_device *d, void *dinp, float *dw,
				float *dbias, const void *dout, const void *inp,
				const void *w, int n, int ic, int oc);
	/* out[n, c] += bias[c] */
	void (*add_bias)(struct exec_device *d, void *out, const void *bias, int n, int c);
	/* LayerNorm (Ba et al. 2016); b may be NULL.  mean, rstd: [n].
	 * Backward (both norms): dw and db may be NULL, a frozen norm's. */
	void (*layernorm_forward)(struct exec_device *d, void *out, float *mean,
				  float *rstd, const void *inp, const void *w,
				  const void *b, int n, int c);
	void (*layernorm_backward)(struct exec_device *d, void *dinp, float *dw,
				   float *db, const void *dout, const void *inp,
				   const void *w, const float *mean,
				   const float *rstd, int n, int c);
	/* RMSNorm (Zhang and Sennrich 2019) */
	void (*rmsnorm_forward)(struct exec_device *d, void *out, float *rstd,
				const void *inp, const void *w, int n, int c);
	void (*rmsnorm_backward)(struct exec_device *d, void *dinp, float *dw,
				 const void *dout, const void *inp,
				 const void *w, const float *rstd, int n, int c);
	/* Causal attention of b sequences, t queries each against tk keys,
	 * nh query heads sharing nkv key/value heads of size hd (GQA; nh %
	 * nkv == 0).  Query i of a sequence sits at position q0 + i among its
	 * keys and attends keys 0 .. q0 + i (q0 + t <= tk): tk = t, q0 = 0 is
	 * the whole sequence; a context-parallel rank passes its slice's
	 * queries, the gathered keys and the slice's first position.  q, out:
	 * [b t, nh hd]; k, v (and dk, dv): [b tk, nkv hd]; lse: [b, nh, t]
	 * log-sum-exp of each row's scores; att: [b, nh, t, tk]
	 * probabilities, or NULL to keep only lse and recompute them in
	 * backward. */
	void (*attention_forward)(struct exec_device *d, void *out, float *lse,
				  void *att, const void *q, const void *k,
				  const void *v, int b, int t, int tk, int q0, int nh,
				  int nkv, int hd);
	void (*attention_backward)(struct exec_device *d, void *dq, void *dk,
				   void *dv, const void *dout, const void *q,
				   const void *k, const void *v, const float *lse,
				   const void *att, int b, int t, int tk, int q0, int nh,
				   int nkv, int hd);
	/* GELU, tanh form (Hendrycks and Gimpel 2016): out = gelu(inp) */
	void (*gelu_forward)(struct exec_device *d, void *out, const void *inp, long n);
	void (*gelu_backward)(struct exec_device *d, void *dinp, const void *inp,
			      const void *dout, long n);
	/* SwiGLU (Shazeer 2020): out = silu(g) * u */
	void (*swiglu_forward)(struct exec_device *d, void *out, const void *g,
			       const void *u, long n);
	void (*swiglu_backward)(struct exec_device *d, void *dg, void *du,
				const void *g, const void *u, const void *dout, long n);
	/* out = a + b (out may alias a) */
	void (*residual_forward)(struct exec_device *d, void *out, const void *a,
				 const void *b, long n);
	/* out += s x, both of the activation type: LoRA's scaled adapter
	 * output and its gradient (Hu et al. 2021, sec. 4.1) */
	void (*add_scaled)(struct exec_device *d, void *out, const void *x, float s, long n);
	/* acc += x, x of type t: EXEC_F32 or the device's activation type */
	void (*accumulate)(struct exec_device *d, float *acc, const void *x,
			   enum exec_dtype t, long n);
	/* dst = src rounded to the activation type (to nearest, ties to
	 * even; a copy where that is fp32): the working copy of weights */
	void (*narrow)(struct exec_device *d, void *dst, const float *src, long n);
	/* Vocabulary-parallel embedding (Shoeybi et al. 2019, sec. 3):
	 * out[i] = wte[tok[i] - v0] when v0 <= tok[i] < v0 + nv, else 0 (the
	 * TP all-reduce then sums the ranks' rows); backward adds dout's rows
	 * into the rows of dwte this rank holds. */
	void (*embedding_forward)(struct exec_device *d, void *out, const int *tok,
				  const void *wte, int n, int c, int v0, int nv);
	void (*embedding_backward)(struct exec_device *d, float *dwte, const void *dout,
				   const int *tok, int n, int c, int v0, int nv);
	/* Vocabulary-parallel softmax cross-entropy over logits [n, nv] holding
	 * vocabulary rows v0 .. v0+nv-1 (Megatron-LM's
	 * vocab_parallel_cross_entropy).  Three passes around two reductions:
	 * row maxima -> (max over ranks) -> stats[2n] = (sum exp(l - max),
	 * target logit or 0) -> (sum over ranks) -> losses. */
	void (*ce_row_max)(struct exec_device *d, float *rmax, const void *logits,
			   int n, int nv);
	void (*ce_row_stats)(struct exec_device *d, float *stats, const void *logits,
			     const float *rmax, const int *target, int n, int nv, int v0);
	/* Sum over rows of log(sum) + max - target logit, returned to the host. */
	double (*ce_loss_sum)(struct exec_device *d, const float *rmax,
			      const float *stats, int n);
	/* logits := (softmax - onehot) * scale, in place */
	void (*ce_backward)(struct exec_device *d, void *logits, const float *rmax,
			    const float *stats, const int *target, int n, int nv,
			    int v0, float scale);
	/* Mixture of experts (Shazeer et al., ICLR 2017; Fedus et al., JMLR
	 * 2022), routing n tokens among e experts, k each.  moe_route_forward:
	 * probs[n, e] = the softmax of each row of logits; idx[n k] its k
	 * largest, the largest first, a tie going to the lower expert; w[n k]
	 * their weights: with pre_softmax the chosen probabilities as they
	 * are (Megatron-Core's --moe-router-pre-softmax; Hugging Face's
	 * norm_topk_prob false), else over their sum, which is the softmax
	 * of the chosen logits (Megatron-Core's default; Mixtral's router).
	 * moe_route_backward: dlogits += the gradient of the loss with
	 * respect to the logits given dw[n k], its gradient with respect to
	 * the weights. */
	void (*moe_route_forward)(struct exec_device *d, float *probs, int *idx, float *w,
				  const void *logits, int n, int e, int k, int pre_softmax);
	void (*moe_route_backward)(struct exec_device *d, void *dlogits, const float *dw,
				   const float *probs, const int *idx, int n, int e, int k,
				   int pre_softmax);
	/* Rows of c elements: out[i] = inp[rows[i] / k] (times w[rows[i]]
	 * when w is not NULL) for i < n.  With rows the routed slots (token
	 * t's j-th expert is slot t k + j) in expert order, the dispatch's
	 * permutation; with k 1, any gather of rows. */
	void (*moe_permute)(struct exec_device *d, void *out, const void *inp, const int *rows,
			    const float *w, int n, int c, int k);
	/* out[t] += sum over j < k of (w ? w[t k + j] : 1) inp[pos[t k + j]]
	 * for t < n, j in order: the combine (pos: each slot's row of inp),
	 * and the dispatch's backward. */
	void (*moe_unpermute)(struct exec_device *d, void *out, const void *inp, const int *pos,
			      const float *w, int n, int c, int k);
	/* dw[t k + j] += dout[t] . y[pos[t k + j]]: the combine's gradient
	 * with respect to its weights. */
	void (*moe_weights_backward)(struct exec_device *d, float *dw, const void *dout,
				     const void *y, const int *pos, int n, int c, int k);
	/* Adds the sum of squares of x to *acc, one double of backend memory
	 * (the host reads it when it needs it: no wait here). */
	void (*sumsq)(struct exec_device *d, double *acc, const float *x, long n);
	/* AdamW on n elements, gradient multiplied by gscale first; t is the
	 * 1-based step for bias correction. */
	void (*adamw)(struct exec_device *d, float *p, const float *g, float *m,
		      float *v, long n, float lr, float beta1, float beta2,
		      float eps, float wd, int t, float gscale);

	/* Device timestamps for a trace (exec_opts.trace), all four NULL
	 * where the host's clock is the device's (the CPU).  timer_new makes
	 * n marks (NULL after a message when it cannot); timer_mark records
	 * mark i where the work queued so far on the compute stream
	 * (EXEC_STREAM_COMPUTE) ends, or on the communication stream or
	 * the gradient-reduction stream after it waits for that point
	 * (EXEC_STREAM_COMM, EXEC_STREAM_REDUCE); timer_elapsed waits
	 * for mark `to` and gives the seconds from mark `from` to it.  A mark
	 * may be recorded again once read. */
	void *(*timer_new)(struct exec_device *d, int n);
	enum rc (*timer_mark)(struct exec_device *d, void *timer, int i, int stream);
	enum rc (*timer_elapsed)(struct exec_device *d, void *timer, int from, int to,
				 double *seconds);
	void (*timer_free)(struct exec_device *d, void *timer, int n);
};

/* Where work runs on a device: kernels; the collectives the compute
 * stream waits for; the gradient sums it does not wait for until the
 * optimizer (exec_comm.all_reduce_start, reduce_scatter_start). */
enum { EXEC_STREAM_COMPUTE, EXEC_STREAM_COMM, EXEC_STREAM_REDUCE };

/* One backend instance: the table plus what it has allocated. */
struct exec_device {
	const struct exec_backend *be;
	enum exec_precision precision;  /* GEMM arithmetic (the CPU: always fp32) */
	enum exec_dtype act;            /* activation type, set by open */
	size_t bytes_in_use;
	size_t peak_bytes;
	size_t limit_bytes;             /* allocations beyond this fail; 0: none */
	char name[128];                 /* "cpu", or the GPU's product name */
	double memory_bytes;            /* the device's memory */
	/* 1 where the calling thread runs every kernel itself (the CPU
	 * backend with one OpenBLAS thread): its CPU time is the kernels'
	 * time, whatever else the core runs; 0 on a GPU, or with more BLAS
	 * threads, where only the wall clock tells */
	int cpu_timed;
	void *priv;
};

/* The fp32 CPU backend (exec_cpu.c). */
extern const struct exec_backend exec_cpu_backend;
/* The CUDA backend (exec_cuda.cu); linked only where nvcc built it. */
extern const struct exec_backend exec_cuda_backend;
/* Finds a backend by name; NULL when unknown or not built. */
const struct exec_backend *exec_backend_find(const char *name);

void exec_device_init(struct exec_device *d, const struct exec_backend *be);
/* Runs the backend's open (see struct exec_backend); RC_OK when it has
 * none. */
enum rc exec_device_open(struct exec_device *d);
/* The backend's sync; RC_OK when it has none. */
enum rc exec_device_sync(struct exec_device *d);
void exec_device_release(struct exec_device *d);
/* Seconds of CPU time the calling thread has used
 * (CLOCK_THREAD_CPUTIME_ID): time it ran, not time it waited for a core. */
double exec_thread_cpu_s(void);
/* Allocation through d's backend with the byte counts kept; when the
 * backend is out of memory, ends the job after a message (as xmalloc
 * does): through exec_device_on_abort's function, else abort(). */
void *exec_dalloc(struct exec_device *d, size_t bytes);
/* How exec_dalloc ends the job from now on, in every rank: fn(1) (MPI's
 * bring-up, exec_mpi_init, installs exec_mpi_abort). */
void exec_device_on_abort(void (*fn)(int code));
void exec_dfree(struct exec_device *d, void *p, size_t bytes);

#endif
