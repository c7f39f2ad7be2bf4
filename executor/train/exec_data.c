/*
 * exec_data.c - counter-based random numbers and the token source.
 *
 * Random values are a hash of (seed, stream, index), never a sequential
 * generator's state, so a rank computes element i of any tensor or
 * sequence without drawing the ones before it: initialisation and data are
 * the same whatever the layout.
 *
 * Synthetic data is a fixed random bigram process: each token is, with
 * probability EXEC_DATA_FOLLOW, a fixed successor of the previous token
 * (a random map drawn from the seed), else uniform.  A model that learns
 * the map reaches the process's entropy
 *   H = -q ln q - (V - 1) r ln r,  q = f + (1 - f)/V,  r = (1 - f)/V,
 * 1.762 nats for V = 128 and f = 0.75, from ln V = 4.852 at the start.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/exec_train.h"

#define EXEC_DATA_FOLLOW 0.75
#define STREAM_DATA 0x64617461ULL  /* "data" */
#define STREAM_SUCC 0x73756363ULL  /* "succ" */

/* splitmix64's finaliser (Steele, Lea and Flood, OOPSLA 2014). */
static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The key of a (seed, stream) pair: what every index of the stream is
 * hashed with. */
static uint64_t stream_key(uint64_t seed, uint64_t stream)
{
	return mix64(mix64(seed) ^ stream);
}

static double key_uniform(uint64_t key, uint64_t index)
{
	return (double)(mix64(key ^ index) >> 11) * (1.0 / 9007199254740992.0);
}

/* Box-Muller (Box and Muller 1958) from two independent uniforms. */
static double key_normal(uint64_t key, uint64_t index)
{
	double u1 = key_uniform(key, 2 * index);
	double u2 = key_uniform(key, 2 * index + 1);

	return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

double exec_rand_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
	return key_uniform(stream_key(seed, stream), index);
}

double exec_rand_normal(uint64_t seed, uint64_t stream, uint64_t index)
{
	return key_normal(stream_key(seed, stream), index);
}

void exec_rand_normal_fill(float *out, size_t n, uint64_t seed, uint64_t stream,
			   uint64_t first, double std)
{
	uint64_t key = stream_key(seed, stream);

	for (size_t i = 0; i < n; i++)
		out[i] = (float)(std * key_normal(key, first + i));
}

enum rc exec_data_check(const char *path, const struct exec_opts *o, char *why, size_t size)
{
	struct exec_data dt;

	if (exec_data_open(&dt, path, o->model.vocab, o->model.seq, o->seed, why, size) != RC_OK)
		return RC_INPUT;
	exec_data_release(&dt);
	return RC_OK;
}

/* Token i of the mapped file: little-endian uint16, whatever the host. */
static unsigned file_token(const unsigned char *map, long i)
{
	return (unsigned)map[2 * i] | (unsigned)map[2 * i + 1] << 8;
}

/* The file is mapped, not read: every rank on a machine shares the page
 * cache's one copy (as llm.c's data loader leaves a shard to the OS),
 * where reading it would hold it once per rank. */
enum rc exec_data_open(struct exec_data *dt, const char *path, int vocab,
		       int seq, uint64_t seed, char *why, size_t size)
{
	struct stat st;
	void *map;
	int fd;

	memset(dt, 0, sizeof(*dt));
	dt->vocab = vocab;
	dt->seq = seq;
	dt->seed = seed;
	if (!path)
		return RC_OK;
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		snprintf(why, size, "%s: cannot open: %s", path, strerror(errno));
		return RC_INPUT;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(why, size, "%s: cannot read: %s", path, strerror(errno));
		close(fd);
		return RC_ERR;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, size, "%s: expected a file of uint16 tokens, found %s", path,
			 S_ISDIR(st.st_mode) ? "a directory" : "another kind of file");
		close(fd);
		return RC_INPUT;
	}
	if (st.st_size % 2 || st.st_size / 2 < (off_t)seq + 1) {
		snprintf(why, size, "%s: expected an even number of bytes holding at least "
			 "%d uint16 tokens, found %lld bytes", path, seq + 1, (long long)st.st_size);
		close(fd);
		return RC_INPUT;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(why, size, "%s: cannot map: %s", path, strerror(errno));
		return RC_ERR;
	}
	dt->file = map;
	dt->file_tokens = (long)(st.st_size / 2);
	for (long i = 0; i < dt->file_tokens; i++) {
		unsigned t = file_token(dt->file, i);

		if (t >= (unsigned)vocab) {
			snprintf(why, size, "%s: token %ld (byte %ld): expected a token < "
				 "vocab %d, found %u", path, i, 2 * i, vocab, t);
			exec_data_release(dt);
			return RC_INPUT;
		}
	}
	return RC_OK;
}

void exec_data_release(struct exec_data *dt)
{
	if (!dt || !dt->file)
		return;
	munmap((void *)dt->file, (size_t)dt->file_tokens * 2);
	dt->file = NULL;
}

void exec_data_sequence(const struct exec_data *dt, long idx, int *out)
{
	int n = dt->seq + 1;

	if (dt->file) {
		/* Consecutive windows of seq tokens, wrapping around the file. */
		long start = (long)((unsigned long)idx * dt->seq % (unsigned long)(dt->file_tokens - dt->seq));

		for (int i = 0; i < n; i++)
			out[i] = (int)file_token(dt->file, start + i);
		return;
	}
	for (int i = 0; i < n; i++) {
		double u = exec_rand_uniform(dt->seed, STREAM_DATA, (uint64_t)idx * n + i);

		if (i > 0 && u < EXEC_DATA_FOLLOW) {
			double s = exec_rand_uniform(dt->seed, STREAM_SUCC, (uint64_t)out[i - 1]);

			out[i] = (int)(s * dt->vocab);
		} else {
			double w = i > 0 ? (u - EXEC_DATA_FOLLOW) / (1.0 - EXEC_DATA_FOLLOW) : u;

			out[i] = (int)(w * dt->vocab);
		}
		if (out[i] >= dt->vocab)
			out[i] = dt->vocab - 1;
	}
}
