/*
 * alloc.c - checked allocation: xmalloc, xcalloc, xrealloc, xstrdup and
 * xstrndup (common.h) print the size and the call site and abort when
 * memory runs out, so no caller checks for NULL.
 *
 * It calls only the C library: escape.c and common.c allocate through it,
 * and its one message goes straight to stderr, not through gp_error.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n, const char *file, int line)
{
	fprintf(stderr, "error: out of memory allocating %zu bytes at %s:%d\n",
		n, file, line);
	abort();
}

void *gp_xmalloc(size_t n, const char *file, int line)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n, file, line);
	return p;
}

void *gp_xcalloc(size_t n, size_t size, const char *file, int line)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom(n * size, file, line);
	return p;
}

void *gp_xrealloc(void *p, size_t n, const char *file, int line)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n, file, line);
	return q;
}

char *gp_xstrdup(const char *s, const char *file, int line)
{
	return gp_xstrndup(s, strlen(s), file, line);
}

char *gp_xstrndup(const char *s, size_t n, const char *file, int line)
{
	char *p = gp_xmalloc(n + 1, file, line);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}
