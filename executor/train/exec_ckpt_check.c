/*
 * exec_ckpt_check.c - what a resume checks beyond the model and layout:
 * the files of a checkpoint are regular files of the manifest's size and
 * hash (opened only once stat says they are regular, and then without
 * blocking, so that a FIFO or a device in a shard's place is refused
 * unread), and the run resumed is trained as the checkpoint was: on the
 * same --data tokens, with the same AdamW settings.
 *
 * The data file's identity is its size and FNV-1a hash; its path and
 * time stamp say only where it was.  The hash of a file is computed once
 * a process (and again only when its size or time stamp changed).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/exec_train.h"

#define READ_BYTES ((size_t)8 << 20)

/* What st is, for "found a FIFO". */
static const char *kind_str(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO";
	if (S_ISCHR(st->st_mode))
		return "a character device";
	if (S_ISBLK(st->st_mode))
		return "a block device";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	return "another kind of file";
}

static long long mtime_ns(const struct stat *st)
{
	return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

int exec_ckpt_stat_regular(const char *path, const char *what, struct stat *st, char *why,
			   size_t size)
{
	char p[512];

	if (stat(path, st) != 0) {
		snprintf(why, size, "%s: expected %s, found none (%s)",
			 gp_term_escape(p, sizeof(p), path), what, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(why, size, "%s: expected a regular file (%s), found %s",
			 gp_term_escape(p, sizeof(p), path), what, kind_str(st));
		return -1;
	}
	return 0;
}

int exec_ckpt_open_regular(const char *path, const char *what, struct stat *st, char *why,
			   size_t size)
{
	struct stat was;
	char p[512];
	int fd;

	if (exec_ckpt_stat_regular(path, what, &was, why, size) != 0)
		return -1;
	/* O_NONBLOCK: were it swapped for a FIFO since, the open does not
	 * wait for a writer; fstat then refuses it */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, size, "%s: cannot open: %s", gp_term_escape(p, sizeof(p), path),
			 strerror(errno));
		return -1;
	}
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_ino != was.st_ino ||
	    st->st_dev != was.st_dev) {
		snprintf(why, size, "%s: expected a regular file (%s), found one that changed "
			 "while it was opened", gp_term_escape(p, sizeof(p), path), what);
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads fd to its end into *bytes and *hash; -1 with errno on a read
 * error. */
static int hash_fd(int fd, long long *bytes, uint64_t *hash)
{
	char *buf = xmalloc(READ_BYTES);
	uint64_t h = GP_FNV1A64_INIT;
	long long n = 0;

	for (;;) {
		ssize_t r = read(fd, buf, READ_BYTES);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		h = gp_fnv1a64(buf, (size_t)r, h);
		n += r;
	}
	free(buf);
	*bytes = n;
	*hash = h;
	return 0;
}

enum rc exec_ckpt_file_hash(const char *path, const char *what, long long *bytes,
			    uint64_t *hash, char *why, size_t size)
{
	struct stat st;
	char p[512];
	int fd = exec_ckpt_open_regular(path, what, &st, why, size);

	if (fd < 0)
		return RC_INPUT;
	if (hash_fd(fd, bytes, hash) != 0) {
		snprintf(why, size, "%s: cannot read: %s", gp_term_escape(p, sizeof(p), path),
			 strerror(errno));
		close(fd);
		return RC_INPUT;
	}
	close(fd);
	return RC_OK;
}

/* The last data file hashed in this process, by its device, inode, size
 * and time stamp: a run hashes its --data once, not at every checkpoint. */
static struct {
	int valid;
	dev_t dev;
	ino_t ino;
	long long bytes, mtime_ns;
	uint64_t fnv1a64;
} data_cache;

enum rc exec_ckpt_data_id(const char *path, struct exec_ckpt_data *d, char *why, size_t size)
{
	struct stat st;
	char p[512];
	int fd;

	memset(d, 0, sizeof(*d));
	if (!path) {
		d->synthetic = 1;
		return RC_OK;
	}
	if (strlen(path) >= sizeof(d->path)) {
		snprintf(why, size, "--data: expected a path of at most %zu bytes, found %zu",
			 sizeof(d->path) - 1, strlen(path));
		return RC_INPUT;
	}
	gp_strlcpy(d->path, path, sizeof(d->path));
	fd = exec_ckpt_open_regular(path, "the --data token file", &st, why, size);
	if (fd < 0)
		return RC_INPUT;
	d->bytes = (long long)st.st_size;
	d->mtime_ns = mtime_ns(&st);
	if (data_cache.valid && data_cache.dev == st.st_dev && data_cache.ino == st.st_ino &&
	    data_cache.bytes == d->bytes && data_cache.mtime_ns == d->mtime_ns) {
		d->fnv1a64 = data_cache.fnv1a64;
		close(fd);
		return RC_OK;
	}
	if (hash_fd(fd, &d->bytes, &d->fnv1a64) != 0) {
		snprintf(why, size, "--data: %s: cannot read: %s",
			 gp_term_escape(p, sizeof(p), path), strerror(errno));
		close(fd);
		return RC_INPUT;
	}
	close(fd);
	data_cache.valid = 1;
	data_cache.dev = st.st_dev;
	data_cache.ino = st.st_ino;
	data_cache.bytes = d->bytes;
	data_cache.mtime_ns = d->mtime_ns;
	data_cache.fnv1a64 = d->fnv1a64;
	return RC_OK;
}

/* d for a message: "PATH (N bytes, FNV-1a H)" or "synthetic data". */
static char *data_str(char *buf, size_t size, const struct exec_ckpt_data *d)
{
	char p[400];

	if (d->synthetic)
		snprintf(buf, size, "synthetic data");
	else
		snprintf(buf, size, "%s (%lld bytes, FNV-1a %016llx)",
			 gp_term_escape(p, sizeof(p), d->path), d->bytes,
			 (unsigned long long)d->fnv1a64);
	return buf;
}

int exec_ckpt_data_mismatch(const struct exec_ckpt_data *ck, const struct exec_ckpt_data *run,
			    const char *where, char *note, size_t note_size, char *why,
			    size_t size)
{
	char a[480], b[480], p[400];

	if (ck->synthetic != run->synthetic ||
	    (!ck->synthetic && (ck->bytes != run->bytes || ck->fnv1a64 != run->fnv1a64))) {
		snprintf(why, size, "%s: --data: expected the checkpoint's %s, found %s", where,
			 data_str(a, sizeof(a), ck), data_str(b, sizeof(b), run));
		return -1;
	}
	if (!ck->synthetic && note && note_size &&
	    (strcmp(ck->path, run->path) != 0 || ck->mtime_ns != run->mtime_ns))
		snprintf(note, note_size, "--data: %s holds the checkpoint's tokens (%lld bytes, "
			 "FNV-1a %016llx), first read as %s%s: the batches are the same",
			 gp_term_escape(a, sizeof(a), run->path), run->bytes,
			 (unsigned long long)run->fnv1a64, gp_term_escape(p, sizeof(p), ck->path),
			 ck->mtime_ns != run->mtime_ns ? " with another time stamp" : "");
	return 0;
}

void exec_ckpt_optim_of(const struct exec_opts *o, struct exec_ckpt_optim *out)
{
	out->lr = o->lr;
	out->beta1 = o->beta1;
	out->beta2 = o->beta2;
	out->adam_eps = o->adam_eps;
	out->weight_decay = o->weight_decay;
	out->grad_clip = o->grad_clip;
}

int exec_ckpt_optim_mismatch(const struct exec_ckpt_optim *ck, const struct exec_opts *o,
			     const char *where, char *why, size_t size)
{
	struct exec_ckpt_optim run;
	const struct {
		const char *name;
		size_t off;
	} f[] = {
		{ "--lr", offsetof(struct exec_ckpt_optim, lr) },
		{ "optimizer.beta1", offsetof(struct exec_ckpt_optim, beta1) },
		{ "optimizer.beta2", offsetof(struct exec_ckpt_optim, beta2) },
		{ "optimizer.eps", offsetof(struct exec_ckpt_optim, adam_eps) },
		{ "optimizer.weight_decay", offsetof(struct exec_ckpt_optim, weight_decay) },
		{ "optimizer.grad_clip", offsetof(struct exec_ckpt_optim, grad_clip) },
	};

	exec_ckpt_optim_of(o, &run);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		double a = *(const double *)((const char *)ck + f[i].off);
		double b = *(const double *)((const char *)&run + f[i].off);
		char x[40], y[40];

		if (a != b) {
			snprintf(why, size, "%s: %s: expected the checkpoint's %s, found %s (a "
				 "resumed run trains as the checkpointed one did)", where, f[i].name,
				 unit_fmt_exact(x, sizeof(x), a), unit_fmt_exact(y, sizeof(y), b));
			return -1;
		}
	}
	return 0;
}
