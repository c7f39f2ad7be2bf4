/*
 * fileio.c - the one way gpuplan replaces a file it owns (plans, runs,
 * calibrations, traces, metrics): temp file, fsync, rename; a symlink is
 * followed (its target replaced, the link kept) and a FIFO or device is
 * written in place, never replaced; and the directories they go in are
 * made as mkdir -p makes them.  The price
 * tables need more (a lock, a history, fault points) and have their own
 * writer in pricing/price_store.c.
 *
 * It calls alloc.c and common.c.
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gp_temp_beside(const char *path, char *tmp, size_t size)
{
	mode_t mask;
	int fd, err;

	if ((size_t)snprintf(tmp, size, "%s.tmp.XXXXXX", path) >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	/* mkstemp makes the file 0600; give it what creat() would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		err = errno;
		close(fd);
		unlink(tmp);
		errno = err;
		return -1;
	}
	return fd;
}

char *gp_path_resolve(const char *path)
{
	char *cur = xstrdup(path);

	/* 40 links, as the kernel's own limit (ELOOP) */
	for (int hops = 0; hops < 40; hops++) {
		struct stat st;
		char link[4096], *next;
		ssize_t n;

		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return cur;
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return cur;
		link[n] = '\0';
		if (link[0] == '/') {
			next = xstrdup(link);
		} else {
			/* relative to the directory holding the link */
			const char *slash = strrchr(cur, '/');
			size_t dlen = slash ? (size_t)(slash - cur) + 1 : 0;

			next = xmalloc(dlen + (size_t)n + 1);
			memcpy(next, cur, dlen);
			memcpy(next + dlen, link, (size_t)n + 1);
		}
		free(cur);
		cur = next;
	}
	return cur;
}

/* Writes data[0..len) into the existing non-regular file at path (a FIFO,
 * a terminal, /dev/null, /dev/stdout) as it is: such a file is not ours
 * to replace, and cannot be renamed over. */
static enum rc write_in_place(const char *path, const char *data, size_t len)
{
	size_t off = 0;
	int fd = open(path, O_WRONLY | O_NOCTTY);

	if (fd < 0) {
		gp_error("%s: cannot write: %s", path, strerror(errno));
		return RC_ERR;
	}
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			gp_error("%s: cannot write: %s", path, w < 0 ? strerror(errno) : "short write");
			close(fd);
			return RC_ERR;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0) {
		gp_error("%s: cannot write: %s", path, strerror(errno));
		return RC_ERR;
	}
	return RC_OK;
}

enum rc gp_write_file_atomic(const char *path, const char *data, size_t len)
{
	char *target, *tmp;
	size_t n, off = 0;
	struct stat st;
	int fd;

	/* What path names in the end (stat follows every link) decides:
	 * /dev/stdout into a pipe is a link to "pipe:[N]", a name no
	 * readlink chain resolves, so it is written through path itself. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return write_in_place(path, data, len);
	target = gp_path_resolve(path);
	n = strlen(target) + 16;
	tmp = xmalloc(n);
	/* A symlink is followed: its target is replaced, the link stays. */
	if (stat(target, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		enum rc rc = write_in_place(target, data, len);

		free(tmp);
		free(target);
		return rc;
	}
	fd = gp_temp_beside(target, tmp, n);
	if (fd < 0) {
		gp_error("%s: cannot create a temporary file beside it: %s", target, strerror(errno));
		free(tmp);
		free(target);
		return RC_ERR;
	}
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		off += (size_t)w;
	}
	if (fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, target) != 0)
		goto fail;
	free(tmp);
	free(target);
	return RC_OK;
fail:
	gp_error("%s: cannot write: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	free(target);
	return RC_ERR;
}

enum rc gp_read_file_max(const char *path, size_t max, char **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	*data = NULL;
	*len = 0;
	/* A file that cannot be opened, or is a directory, is the name the
	 * user gave being wrong: bad input.  A failing read is I/O. */
	if (!f) {
		gp_error("%s: cannot open: %s", path, strerror(errno));
		return RC_INPUT;
	}
	/* The cap holds for what stat cannot size (a pipe, /dev/zero, a
	 * FIFO): the running count stops the read one byte past it, so
	 * memory stays within twice the cap whatever the input. */
	do {
		if (cap - n < 4096) {
			cap = cap ? 2 * cap : 65536;
			if (cap > max + 2)
				cap = max + 2;
			buf = xrealloc(buf, cap);
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0 && n <= max);
	if (n > max) {
		struct stat st;

		if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
			gp_error("%s: expected at most %zu MiB, found %.1f MiB", path, max >> 20,
				 (double)st.st_size / (1 << 20));
		else
			gp_error("%s: expected at most %zu MiB, found more (a pipe or device "
				 "read stops there)", path, max >> 20);
		fclose(f);
		free(buf);
		return RC_INPUT;
	}
	if (ferror(f)) {
		int dir = errno == EISDIR;

		gp_error(dir ? "%s: cannot read: %s" : "%s: read error: %s", path, strerror(errno));
		fclose(f);
		free(buf);
		return dir ? RC_INPUT : RC_ERR;
	}
	fclose(f);
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return RC_OK;
}

enum rc gp_read_file(const char *path, char **data, size_t *len)
{
	return gp_read_file_max(path, GP_READ_MAX_BYTES, data, len);
}

enum rc gp_write_text_atomic(const char *path, const char *text)
{
	size_t len = strlen(text);
	char *buf;
	enum rc rc;

	if (len && text[len - 1] == '\n')
		return gp_write_file_atomic(path, text, len);
	buf = xmalloc(len + 2);
	memcpy(buf, text, len);
	buf[len] = '\n';
	buf[len + 1] = '\0';
	rc = gp_write_file_atomic(path, buf, len + 1);
	free(buf);
	return rc;
}

uint64_t gp_fnv1a64(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL; /* the FNV 64-bit prime */
	}
	return h;
}

enum rc gp_mkdir_p(const char *dir)
{
	char tmp[1024];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(tmp)) {
		gp_error("'%s': cannot create directory: %s", dir, n ? "path too long" : "empty path");
		return RC_ERR;
	}
	memcpy(tmp, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
			gp_error("%s: cannot create directory: %s", tmp, strerror(errno));
			return RC_ERR;
		}
		tmp[i] = dir[i];
	}
	return RC_OK;
}
