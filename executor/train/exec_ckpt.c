/*
 * exec_ckpt.c - checkpoints of a run: each rank writes its shard (master
 * weights and AdamW moments of the units it holds, exec_trainer_state_buf)
 * and world rank 0 the manifest, into a temporary directory that is
 * renamed into place once every file in it is on disk; a resumed run
 * finds the newest, checks that it is of the same model and layout, and
 * reads its shard back.  The step is the rest of the state: the batch of
 * a step follows from its number and the seed, and AdamW's bias
 * correction from the step.
 *
 * What it does not do: reshard (a checkpoint resumes on the layout that
 * wrote it), keep anything but the newest EXEC_CKPT_KEEP, or copy a
 * directory between machines (every rank must see the same directory:
 * one machine, or a shared file system).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/exec_train.h"

#define SHARD_MAGIC "GPCKPT01"
/* Host memory a shard moves through, a piece at a time. */
#define BOUNCE_BYTES ((size_t)8 << 20)
/* A manifest lists a shard a rank in ~100 bytes: room for a million. */
#define MANIFEST_MAX_BYTES (128 << 20)

/* A shard file: this header, then per state buffer its element count
 * (int64) and its fp32 elements, all in native byte order. */
struct shard_header {
	char magic[8];
	int32_t rank, world, step, bufs;
};

/* snprintf for paths: one longer than buf is cut (and then names no
 * file, which the call that uses it reports). */
static void path_fmt(char *buf, size_t size, const char *fmt, ...) GP_PRINTF(3, 4);
static void path_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static void step_path(char *buf, size_t size, const char *dir, int step)
{
	path_fmt(buf, size, "%s/step-%08d", dir, step);
}

static void tmp_path(char *buf, size_t size, const char *dir, int step)
{
	path_fmt(buf, size, "%s/.step-%08d.tmp", dir, step);
}

/* The step of a directory entry named step-NNNNNNNN, else -1. */
static int entry_step(const char *name)
{
	int step, n = 0;

	if (strlen(name) != 13 || sscanf(name, "step-%8d%n", &step, &n) != 1 || n != 13 ||
	    step < 1)
		return -1;
	return step;
}

/* Steps of dir's whole checkpoints (a step-* directory holding a
 * manifest; with whole_only 0 every step-* entry), ascending, into *steps
 * (xmalloc'd; caller frees); returns how many, or -1 when dir cannot be
 * read (errno set). */
static int list_steps(const char *dir, int whole_only, int **steps)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0, cap = 0;

	*steps = NULL;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[PATH_MAX + 64];
		struct stat st;
		int s = entry_step(e->d_name);

		if (s < 0)
			continue;
		path_fmt(path, sizeof(path), "%s/%s/manifest.json", dir, e->d_name);
		if (whole_only && (stat(path, &st) != 0 || !S_ISREG(st.st_mode)))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			*steps = xrealloc(*steps, (size_t)cap * sizeof(int));
		}
		(*steps)[n++] = s;
	}
	closedir(d);
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && (*steps)[k - 1] > (*steps)[k]; k--) {
			int x = (*steps)[k];

			(*steps)[k] = (*steps)[k - 1];
			(*steps)[k - 1] = x;
		}
	return n;
}

/* Removes directory path and the files in it (a checkpoint holds no
 * subdirectories).  0, or -1 with errno set. */
static int remove_flat_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d))) {
		char f[PATH_MAX + 64];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		path_fmt(f, sizeof(f), "%s/%s", path, e->d_name);
		unlink(f);
	}
	closedir(d);
	return rmdir(path);
}

static int fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 0 when n bytes were read, -1 on an error (errno set), 1 at an early end. */
static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Reads dir's manifest of step into m; RC_INPUT with why naming it. */
static enum rc read_manifest(const char *dir, int step, struct exec_ckpt_manifest *m,
			     char *why, size_t size)
{
	char path[PATH_MAX + 64], sub[1600];
	char *buf;
	size_t len;
	struct stat st;
	int fd, r;
	enum rc rc;

	step_path(path, sizeof(path), dir, step);
	gp_strlcpy(path + strlen(path), "/manifest.json", sizeof(path) - strlen(path));
	fd = exec_ckpt_open_regular(path, "a checkpoint's manifest", &st, why, size);
	if (fd < 0)
		return RC_INPUT;
	if (st.st_size > MANIFEST_MAX_BYTES) {
		snprintf(why, size, "%s: expected at most %d bytes, found %lld", path,
			 MANIFEST_MAX_BYTES, (long long)st.st_size);
		close(fd);
		return RC_INPUT;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	r = read_all(fd, buf, (size_t)st.st_size);
	close(fd);
	if (r != 0) {
		snprintf(why, size, "%s: cannot read: %s", path,
			 r < 0 ? strerror(errno) : "it ended early");
		free(buf);
		return RC_INPUT;
	}
	len = (size_t)st.st_size;
	rc = exec_ckpt_manifest_parse(buf, len, m, sub, sizeof(sub));
	free(buf);
	if (rc != RC_OK)
		snprintf(why, size, "%s: %s", path, sub);
	else if (m->step != step) {
		snprintf(why, size, "%s: .step: expected %d (its directory's), found %d", path, step,
			 m->step);
		exec_ckpt_manifest_release(m);
		rc = RC_INPUT;
	}
	return rc;
}

static void layout_str(char *buf, size_t size, const struct sim_parallel *p)
{
	snprintf(buf, size, "tp %d x pp %d x dp %d x cp %d, ep %d, zero %d, interleave %d, "
		 "mbs %d, gbs %d", p->tp, p->pp, p->dp, p->cp, p->ep > 0 ? p->ep : 1, p->zero,
		 p->interleave, p->mbs, p->gbs);
}

/* What trains: "every weight", or LoRA's adapters. */
static void train_str(char *buf, size_t size, const struct sim_parallel *p, double alpha)
{
	char targets[64];

	if (p->ft.method != SIM_FT_LORA) {
		snprintf(buf, size, "every weight");
		return;
	}
	sim_lora_targets_str(p->ft.lora_targets, targets, sizeof(targets));
	snprintf(buf, size, "lora rank %d on %s, alpha %g",
		 p->ft.lora_rank > 0 ? p->ft.lora_rank : SIM_LORA_DEFAULT_RANK, targets, alpha);
}

static void model_str(char *buf, size_t size, const struct sim_model *m, enum exec_norm norm)
{
	char moe[160] = "";

	if (m->experts > 0)
		snprintf(moe, sizeof(moe), ", %d experts of %d top-%d%s, %d shared of %d, %d dense",
			 m->experts, m->expert_ffn, m->top_k, m->router_pre_softmax ? " pre-softmax" : "",
			 m->shared_experts, m->shared_ffn, m->dense_layers);
	snprintf(buf, size, "%s: %d layers x %d hidden, %d heads (%d kv), ffn %d, vocab %d, "
		 "seq %d, %s/%s%s%s", m->name, m->layers, m->hidden, m->heads, m->kv_heads, m->ffn,
		 m->vocab, m->seq, sim_mlp_str(m->mlp),
		 norm == EXEC_NORM_RMS ? "rmsnorm" : "layernorm",
		 m->tied_embeddings ? ", tied" : "", moe);
}

/* Whether m is a checkpoint of o's run: 0, or -1 with the difference in
 * why[size] after `where: `. */
static int identity_mismatch(const struct exec_ckpt_manifest *m, const struct exec_opts *o,
			     const char *where, char *why, size_t size)
{
	char a[384], b[384];

	model_str(a, sizeof(a), &o->model, o->norm);
	model_str(b, sizeof(b), &m->model, m->norm);
	if (strcmp(a, b) != 0) {
		snprintf(why, size, "%s: expected a checkpoint of this run's model (%s), found one "
			 "of %s", where, a, b);
		return -1;
	}
	layout_str(a, sizeof(a), &o->par);
	layout_str(b, sizeof(b), &m->par);
	if (strcmp(a, b) != 0) {
		snprintf(why, size, "%s: expected a checkpoint of this run's layout (%s), found one "
			 "of %s", where, a, b);
		return -1;
	}
	train_str(a, sizeof(a), &o->par, exec_lora_alpha(o));
	train_str(b, sizeof(b), &m->par, m->lora_alpha);
	if (strcmp(a, b) != 0) {
		snprintf(why, size, "%s: expected a checkpoint of what this run trains (%s), found "
			 "one of %s", where, a, b);
		return -1;
	}
	if (m->seed != o->seed) {
		snprintf(why, size, "%s: expected a checkpoint of this run's seed %llu (its data), "
			 "found one of seed %llu", where, (unsigned long long)o->seed,
			 (unsigned long long)m->seed);
		return -1;
	}
	return 0;
}

/* The precision o's run computes in: o->precision where its backend
 * stores bf16 activations for it (cuda), else fp32 (the CPU backend's
 * always, whatever --precision says; exec_act_bytes). */
static enum exec_precision run_precision(const struct exec_opts *o)
{
	return exec_act_bytes(o->backend, o->precision) == 2 ? EXEC_PRECISION_BF16
							      : EXEC_PRECISION_FP32;
}

/* Whether m was computed on another backend or in another precision than
 * o's run would: 0, or -1 naming both in why[size] after `where: `.  A
 * manifest written before gpuplan recorded them passes, and note[size]
 * says what is assumed: the shards (fp32 weights and AdamW moments) load
 * on any backend, only the resumed steps' rounding would differ. */
static int compute_mismatch(const struct exec_ckpt_manifest *m, const struct exec_opts *o,
			    const char *where, char *note, size_t note_size, char *why,
			    size_t size)
{
	const char *prec = exec_precision_str(run_precision(o));

	if (!m->backend[0]) {
		if (note && note_size)
			snprintf(note, note_size, "%s: the checkpoint does not say its backend and "
				 "precision (written before gpuplan recorded them); taken to be this "
				 "run's, %s and %s", where, o->backend, prec);
		return 0;
	}
	if (strcmp(m->backend, o->backend) != 0 || m->precision != run_precision(o)) {
		snprintf(why, size, "%s: expected a checkpoint of this run's backend and precision "
			 "(%s, %s), found one of %s, %s", where, o->backend, prec, m->backend,
			 exec_precision_str(m->precision));
		return -1;
	}
	return 0;
}

/* Whether the run's data is not m's (exec_ckpt_data_mismatch): the
 * run's --data hashed only when its path, size or time stamp is not
 * the checkpoint's. */
static int data_mismatch(const struct exec_ckpt_manifest *m, const struct exec_opts *o,
			 const char *where, char *note, size_t note_size, char *why, size_t size)
{
	struct exec_ckpt_data run;
	struct stat st;
	char sub[PATH_MAX + 256];

	if (o->data_path && !m->data.synthetic && strcmp(o->data_path, m->data.path) == 0 &&
	    stat(o->data_path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (long long)st.st_size == m->data.bytes &&
	    (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec == m->data.mtime_ns)
		return 0;
	if (exec_ckpt_data_id(o->data_path, &run, sub, sizeof(sub)) != RC_OK) {
		snprintf(why, size, "%s: %s", where, sub);
		return -1;
	}
	return exec_ckpt_data_mismatch(&m->data, &run, where, note, note_size, why, size);
}

/* Whether a shard m lists is missing, not a regular file or not of the
 * manifest's size (stat only): 0, or -1 with why naming it. */
static int shards_mismatch(const struct exec_ckpt_manifest *m, const char *dir, int step,
			   char *why, size_t size)
{
	for (int r = 0; r < m->world; r++) {
		char path[PATH_MAX + 64], what[64], sub[PATH_MAX + 256];
		struct stat st;

		path_fmt(path, sizeof(path), "%s/step-%08d/rank-%05d.bin", dir, step, r);
		snprintf(what, sizeof(what), "the shard of rank %d", r);
		if (exec_ckpt_stat_regular(path, what, &st, sub, sizeof(sub)) != 0) {
			snprintf(why, size, "--resume: %s", sub);
			return -1;
		}
		if ((long long)st.st_size != m->shards[r].bytes) {
			snprintf(why, size, "--resume: %s: expected the manifest's %lld bytes, found "
				 "%lld", path, m->shards[r].bytes, (long long)st.st_size);
			return -1;
		}
	}
	return 0;
}

enum rc exec_ckpt_prepare(const struct exec_opts *o, int *step, char *note, size_t note_size,
			  char *why, size_t size)
{
	const char *dir = o->ckpt_dir;
	struct exec_ckpt_manifest m;
	struct stat st;
	int *steps = NULL, n, newest;
	char where[PATH_MAX + 80], assumed[PATH_MAX + 240] = "";

	*step = 0;
	if (note && note_size)
		*note = '\0';
	if (!dir)
		return RC_OK;
	if (!*dir) {
		snprintf(why, size, "--checkpoint-dir: expected a directory, found ''");
		return RC_INPUT;
	}
	if (stat(dir, &st) != 0) {
		char parent[PATH_MAX];
		char *slash;

		if (o->resume) {
			snprintf(why, size, "--resume: %s: expected a checkpoint directory, found "
				 "none (%s)", dir, strerror(errno));
			return RC_INPUT;
		}
		/* made at the first checkpoint: its parent must be there */
		gp_strlcpy(parent, dir, sizeof(parent));
		slash = strrchr(parent, '/');
		if (!slash)
			gp_strlcpy(parent, ".", sizeof(parent));
		else if (slash == parent)
			parent[1] = '\0';
		else
			*slash = '\0';
		if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode) ||
		    access(parent, W_OK | X_OK) != 0) {
			snprintf(why, size, "--checkpoint-dir: %s: expected a writable directory to "
				 "make it in, found %s", dir,
				 stat(parent, &st) != 0 ? "no parent directory"
				 : !S_ISDIR(st.st_mode) ? "a parent that is not a directory"
				 : "a parent this user cannot write");
			return RC_INPUT;
		}
		return RC_OK;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, size, "%s: %s: expected a directory, found another kind of file",
			 o->resume ? "--resume" : "--checkpoint-dir", dir);
		return RC_INPUT;
	}
	if (access(dir, R_OK | W_OK | X_OK) != 0) {
		snprintf(why, size, "--checkpoint-dir: %s: expected a directory this user can read "
			 "and write, found %s", dir, strerror(errno));
		return RC_INPUT;
	}
	/* a new run refuses whole checkpoints; a resume looks at every
	 * step-* entry, so that a newest one that lost its manifest is named,
	 * not passed over for an older one */
	n = list_steps(dir, !o->resume, &steps);
	if (n < 0) {
		snprintf(why, size, "--checkpoint-dir: %s: cannot read: %s", dir, strerror(errno));
		return RC_INPUT;
	}
	newest = n > 0 ? steps[n - 1] : 0;
	free(steps);
	if (!o->resume) {
		if (n == 0)
			return RC_OK;
		snprintf(why, size, "--checkpoint-dir: %s: expected no checkpoint (a new run), found "
			 "one of step %d; pass --resume to continue it, or name another directory",
			 dir, newest);
		return RC_INPUT;
	}
	if (n == 0) {
		snprintf(why, size, "--resume: %s: expected a checkpoint (step-NNNNNNNN with a "
			 "manifest), found none", dir);
		return RC_INPUT;
	}
	path_fmt(where, sizeof(where), "--resume: %s/step-%08d", dir, newest);
	{
		char path[PATH_MAX + 64];
		struct stat ms;

		path_fmt(path, sizeof(path), "%s/step-%08d/manifest.json", dir, newest);
		if (lstat(path, &ms) != 0) {
			snprintf(why, size, "%s: expected its manifest.json, found none (%s); the "
				 "newest checkpoint is not whole: remove it to resume from the one "
				 "before", where, strerror(errno));
			return RC_INPUT;
		}
	}
	if (read_manifest(dir, newest, &m, why, size) != RC_OK) {
		char sub[PATH_MAX + 1700];

		gp_strlcpy(sub, why, sizeof(sub));
		snprintf(why, size, "--resume: %s", sub);
		return RC_INPUT;
	}
	if (identity_mismatch(&m, o, where, why, size) != 0 ||
	    compute_mismatch(&m, o, where, assumed, sizeof(assumed), why, size) != 0 ||
	    exec_ckpt_optim_mismatch(&m.optim, o, where, why, size) != 0 ||
	    data_mismatch(&m, o, where, note, note_size, why, size) != 0 ||
	    shards_mismatch(&m, dir, newest, why, size) != 0) {
		exec_ckpt_manifest_release(&m);
		return RC_INPUT;
	}
	/* both notes, the data's first */
	if (*assumed && note && note_size) {
		size_t at = strlen(note);

		snprintf(note + at, note_size - at, "%s%s", at ? "; " : "", assumed);
	}
	if (m.world != exec_opts_ranks(o)) {
		snprintf(why, size, "%s: expected %d shards, found %d", where, exec_opts_ranks(o),
			 m.world);
		exec_ckpt_manifest_release(&m);
		return RC_INPUT;
	}
	exec_ckpt_manifest_release(&m);
	if (newest >= o->steps) {
		snprintf(why, size, "--steps: expected more than the %d steps of the checkpoint "
			 "in %s, found %d", newest, dir, o->steps);
		return RC_INPUT;
	}
	*step = newest;
	return RC_OK;
}

enum rc exec_ckpt_verify(const struct exec_opts *o, int step, char *why, size_t size)
{
	struct exec_ckpt_manifest m;
	enum rc rc = RC_OK;

	if (read_manifest(o->ckpt_dir, step, &m, why, size) != RC_OK)
		return RC_INPUT;
	for (int r = 0; r < m.world && rc == RC_OK; r++) {
		char path[PATH_MAX + 64], what[64], sub[PATH_MAX + 256];
		long long bytes;
		uint64_t hash;

		path_fmt(path, sizeof(path), "%s/step-%08d/rank-%05d.bin", o->ckpt_dir, step, r);
		snprintf(what, sizeof(what), "the shard of rank %d", r);
		if (exec_ckpt_file_hash(path, what, &bytes, &hash, sub, sizeof(sub)) != RC_OK) {
			snprintf(why, size, "--resume: %s", sub);
			rc = RC_INPUT;
		} else if (bytes != m.shards[r].bytes || hash != m.shards[r].fnv1a64) {
			snprintf(why, size, "--resume: %s: expected the manifest's %lld bytes of "
				 "FNV-1a %016llx, found %lld bytes of %016llx", path, m.shards[r].bytes,
				 (unsigned long long)m.shards[r].fnv1a64, bytes,
				 (unsigned long long)hash);
			rc = RC_INPUT;
		}
	}
	exec_ckpt_manifest_release(&m);
	return rc;
}

/* Every rank's verdict: RC_OK when none failed; otherwise the lowest
 * failing rank prints why (when not empty) and all return RC_INPUT when
 * any rank found bad input, else RC_ERR. */
static enum rc ckpt_agree(const struct exec_job *j, enum rc mine, const char *why)
{
	return exec_job_agree_as(j, mine, RC_INPUT, RC_ERR, NULL, why);
}

/* Writes this rank's shard of t at step into tmp/rank-RRRRR.bin, fsynced;
 * *bytes and *hash describe the file.  RC_ERR with why on failure. */
static enum rc write_shard(const struct exec_job *j, const struct exec_trainer *t,
			   const struct exec_opts *o, const char *tmp, int step, long long *bytes,
			   uint64_t *hash, char *why, size_t size)
{
	struct exec_device *d = (struct exec_device *)&j->dev;
	struct shard_header h;
	char path[PATH_MAX + 64];
	uint64_t hs = GP_FNV1A64_INIT;
	long long total = 0;
	int bufs = exec_trainer_state_bufs(t), fd;
	char *bounce = xmalloc(BOUNCE_BYTES);

	path_fmt(path, sizeof(path), "%s/rank-%05d.bin", tmp, j->rank);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		goto fail;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SHARD_MAGIC, sizeof(h.magic));
	h.rank = j->rank;
	h.world = j->world;
	h.step = step;
	h.bufs = bufs;
	if (write_all(fd, &h, sizeof(h)) != 0)
		goto fail;
	hs = gp_fnv1a64(&h, sizeof(h), hs);
	total += (long long)sizeof(h);
	for (int i = 0; i < bufs; i++) {
		float *buf;
		long n;
		int64_t count;
		size_t left, off = 0;

		if (i == bufs / 2 && j->rank == o->ckpt_fault_rank && step == o->ckpt_fault_step) {
			gp_error("rank %d: fault injected while writing the checkpoint of step %d "
				 "(%s), killing this rank", j->rank, step, EXEC_FAULT_CKPT_ENV);
			fflush(stderr);
			raise(SIGKILL);
		}
		exec_trainer_state_buf(t, i, &buf, &n);
		count = n;
		if (write_all(fd, &count, sizeof(count)) != 0)
			goto fail;
		hs = gp_fnv1a64(&count, sizeof(count), hs);
		total += (long long)sizeof(count);
		for (left = (size_t)n * sizeof(float); left > 0;) {
			size_t piece = left < BOUNCE_BYTES ? left : BOUNCE_BYTES;

			d->be->to_host(d, bounce, (const char *)buf + off, piece);
			if (write_all(fd, bounce, piece) != 0)
				goto fail;
			hs = gp_fnv1a64(bounce, piece, hs);
			total += (long long)piece;
			off += piece;
			left -= piece;
		}
	}
	if (fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	free(bounce);
	*bytes = total;
	*hash = hs;
	return RC_OK;
fail:
	snprintf(why, size, "rank %d: checkpoint of step %d: %s: cannot write: %s", j->rank, step,
		 path, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(bounce);
	return RC_ERR;
}

/* World rank 0's part before the shards: the directory made, checkpoints
 * left half-written by a killed run removed, the step's temporary
 * directory made empty. */
static enum rc make_tmp(const char *dir, const char *tmp, char *why, size_t size)
{
	DIR *d;
	struct dirent *e;

	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		snprintf(why, size, "--checkpoint-dir: %s: cannot make it: %s", dir, strerror(errno));
		return RC_ERR;
	}
	if ((d = opendir(dir))) {
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			char p[PATH_MAX + 64];

			if (strncmp(e->d_name, ".step-", 6) != 0 || n < 10 ||
			    strcmp(e->d_name + n - 4, ".tmp") != 0)
				continue;
			path_fmt(p, sizeof(p), "%s/%s", dir, e->d_name);
			remove_flat_dir(p);
		}
		closedir(d);
	}
	if (mkdir(tmp, 0777) != 0) {
		snprintf(why, size, "%s: cannot make it: %s", tmp, strerror(errno));
		return RC_ERR;
	}
	return RC_OK;
}

/* World rank 0's part after the shards: the manifest, then the rename
 * that makes the checkpoint whole, then the old ones removed. */
static enum rc publish(const struct exec_opts *o, int step, int world,
		       const struct exec_ckpt_shard *shards, const char *tmp, char *why,
		       size_t size)
{
	struct exec_ckpt_manifest m;
	char path[PATH_MAX + 64], final[PATH_MAX + 64];
	char *text;
	int *steps, n, fd = -1;
	size_t len;

	memset(&m, 0, sizeof(m));
	m.step = step;
	m.model = o->model;
	m.norm = o->norm;
	m.par = o->par;
	m.lora_alpha = o->par.ft.method == SIM_FT_LORA ? exec_lora_alpha(o) : 0;
	gp_strlcpy(m.backend, o->backend, sizeof(m.backend));
	m.precision = run_precision(o);
	m.seed = o->seed;
	if (exec_ckpt_data_id(o->data_path, &m.data, why, size) != RC_OK)
		return RC_ERR;
	exec_ckpt_optim_of(o, &m.optim);
	m.steps = o->steps;
	m.world = world;
	m.shards = (struct exec_ckpt_shard *)shards;
	text = exec_ckpt_manifest_to_json(&m);
	path_fmt(path, sizeof(path), "%s/manifest.json", tmp);
	len = strlen(text);
	text[len] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0 || write_all(fd, text, len + 1) != 0 || fsync(fd) != 0) {
		snprintf(why, size, "%s: cannot write: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(text);
		return RC_ERR;
	}
	close(fd);
	free(text);
	step_path(final, sizeof(final), o->ckpt_dir, step);
	/* a checkpoint of this step from an earlier try (a resumed run that
	 * died before its next one) is the same state; the new one replaces it */
	remove_flat_dir(final);
	if (fsync_dir(tmp) != 0 || rename(tmp, final) != 0 || fsync_dir(o->ckpt_dir) != 0) {
		snprintf(why, size, "%s: cannot put the checkpoint in place: %s", final,
			 strerror(errno));
		return RC_ERR;
	}
	n = list_steps(o->ckpt_dir, 1, &steps);
	for (int i = 0; i < n - EXEC_CKPT_KEEP; i++) {
		step_path(path, sizeof(path), o->ckpt_dir, steps[i]);
		remove_flat_dir(path);
	}
	free(steps);
	return RC_OK;
}

enum rc exec_ckpt_save(struct exec_job *j, struct exec_trainer *t, const struct exec_opts *o,
		       int step)
{
	char tmp[PATH_MAX + 64], why[PATH_MAX + 256] = "";
	struct exec_ckpt_shard mine, *all = NULL;
	enum rc rc = RC_OK;

	tmp_path(tmp, sizeof(tmp), o->ckpt_dir, step);
	if (j->rank == 0)
		rc = make_tmp(o->ckpt_dir, tmp, why, sizeof(why));
	if ((rc = ckpt_agree(j, rc, why)) != RC_OK)
		return rc;
	rc = write_shard(j, t, o, tmp, step, &mine.bytes, &mine.fnv1a64, why, sizeof(why));
	if ((rc = ckpt_agree(j, rc, why)) != RC_OK)
		return rc;
	if (j->mpi) {
		void *got;
		size_t n;

		if (exec_mpi_gather(&mine, sizeof(mine), &got, &n) != RC_OK)
			return RC_DEVICE;
		all = got;
	} else {
		all = xmalloc(sizeof(mine));
		all[0] = mine;
	}
	if (j->rank == 0)
		rc = publish(o, step, j->world, all, tmp, why, sizeof(why));
	free(all);
	return ckpt_agree(j, rc, why);
}

/* Reads this rank's shard of dir's checkpoint of step into t. */
static enum rc read_shard(const struct exec_job *j, struct exec_trainer *t,
			  const struct exec_opts *o, int step, char *why, size_t size)
{
	struct exec_device *d = (struct exec_device *)&j->dev;
	struct exec_ckpt_manifest m;
	struct shard_header h;
	char path[PATH_MAX + 64];
	uint64_t hs = GP_FNV1A64_INIT;
	long long total = 0;
	int bufs = exec_trainer_state_bufs(t), fd = -1, r;
	char *bounce = NULL;
	enum rc rc = RC_INPUT;

	if (read_manifest(o->ckpt_dir, step, &m, why, size) != RC_OK)
		return RC_INPUT;
	step_path(path, sizeof(path), o->ckpt_dir, step);
	if (identity_mismatch(&m, o, path, why, size) != 0 || m.world != j->world) {
		if (m.world != j->world)
			snprintf(why, size, "%s: expected %d shards, found %d", path, j->world,
				 m.world);
		goto out;
	}
	path_fmt(path + strlen(path), sizeof(path) - strlen(path), "/rank-%05d.bin", j->rank);
	{
		struct stat st;
		char what[64];

		snprintf(what, sizeof(what), "the shard of rank %d", j->rank);
		fd = exec_ckpt_open_regular(path, what, &st, why, size);
		if (fd < 0)
			goto out;
	}
	r = read_all(fd, &h, sizeof(h));
	if (r != 0 || memcmp(h.magic, SHARD_MAGIC, sizeof(h.magic)) != 0 || h.rank != j->rank ||
	    h.world != j->world || h.step != step || h.bufs != bufs) {
		snprintf(why, size, "%s: expected the shard of rank %d of %d at step %d (%d "
			 "buffers), found %s", path, j->rank, j->world, step, bufs,
			 r ? "a short file" : "another shard");
		goto out;
	}
	hs = gp_fnv1a64(&h, sizeof(h), hs);
	total += (long long)sizeof(h);
	bounce = xmalloc(BOUNCE_BYTES);
	for (int i = 0; i < bufs; i++) {
		float *buf;
		long n;
		int64_t count;
		size_t left, off = 0;

		exec_trainer_state_buf(t, i, &buf, &n);
		if (read_all(fd, &count, sizeof(count)) != 0 || count != n) {
			snprintf(why, size, "%s: buffer %d: expected %ld elements, found %s", path, i,
				 n, "another count or a short file");
			goto out;
		}
		hs = gp_fnv1a64(&count, sizeof(count), hs);
		total += (long long)sizeof(count);
		for (left = (size_t)n * sizeof(float); left > 0;) {
			size_t piece = left < BOUNCE_BYTES ? left : BOUNCE_BYTES;

			if (read_all(fd, bounce, piece) != 0) {
				snprintf(why, size, "%s: buffer %d: expected %ld elements, found a "
					 "short file", path, i, n);
				goto out;
			}
			d->be->from_host(d, (char *)buf + off, bounce, piece);
			hs = gp_fnv1a64(bounce, piece, hs);
			total += (long long)piece;
			off += piece;
			left -= piece;
		}
	}
	{
		char extra;

		if (read_all(fd, &extra, 1) != 1) {
			snprintf(why, size, "%s: expected %lld bytes, found more", path, total);
			goto out;
		}
	}
	if (total != m.shards[j->rank].bytes || hs != m.shards[j->rank].fnv1a64) {
		snprintf(why, size, "%s: expected the manifest's %lld bytes of FNV-1a %016llx, "
			 "found %lld bytes of %016llx", path, m.shards[j->rank].bytes,
			 (unsigned long long)m.shards[j->rank].fnv1a64, total,
			 (unsigned long long)hs);
		goto out;
	}
	exec_trainer_state_loaded(t);
	rc = RC_OK;
out:
	if (fd >= 0)
		close(fd);
	free(bounce);
	exec_ckpt_manifest_release(&m);
	return rc;
}

enum rc exec_ckpt_load(struct exec_job *j, struct exec_trainer *t, const struct exec_opts *o,
		       int step)
{
	char why[PATH_MAX + 512] = "";
	enum rc rc = read_shard(j, t, o, step, why, sizeof(why));

	rc = ckpt_agree(j, rc, why);
	if (rc == RC_OK)
		rc = exec_device_sync(&j->dev);
	return rc;
}
