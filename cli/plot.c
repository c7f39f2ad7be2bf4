/*
 * plot.c - gnuplot behind plot.h: the script is piped to gnuplot through
 * popen(); the data travel inside it as a datablock.  gnuplot draws into
 * a temporary file beside the chart, renamed over it when drawn.  Without
 * gnuplot the same script and the data are written next to the requested
 * chart.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"

static int ends_with_nocase(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && gp_streq_nocase(s + n - m, suffix);
}

enum rc plot_check_path(const char *flag, const char *path, enum plot_format *out)
{
	if (!path || strpbrk(path, "\n\r")) {
		gp_error("%s: expected a file name without line breaks", flag);
		return RC_USAGE;
	}
	if (ends_with_nocase(path, ".png")) {
		*out = PLOT_PNG;
	} else if (ends_with_nocase(path, ".svg")) {
		*out = PLOT_SVG;
	} else {
		gp_error("%s: expected a file name ending in .png or .svg, found '%s'", flag, path);
		return RC_USAGE;
	}
	return RC_OK;
}

void plot_init(struct plot *p)
{
	memset(p, 0, sizeof(*p));
}

void plot_release(struct plot *p)
{
	if (!p)
		return;
	free(p->data);
	free(p->script);
	memset(p, 0, sizeof(*p));
}

static void append(char **buf, size_t *len, size_t *cap, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if (*len + (size_t)n + 2 > *cap) {
		*cap = 2 * (*len + (size_t)n + 2) + 256;
		*buf = xrealloc(*buf, *cap);
	}
	vsnprintf(*buf + *len, *cap - *len, fmt, ap);
	*len += (size_t)n;
	(*buf)[(*len)++] = '\n';
	(*buf)[*len] = '\0';
}

void plot_row(struct plot *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	append(&p->data, &p->data_len, &p->data_cap, fmt, ap);
	va_end(ap);
}

void plot_cmd(struct plot *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	append(&p->script, &p->script_len, &p->script_cap, fmt, ap);
	va_end(ap);
}

char *plot_quote(char *buf, size_t size, const char *s)
{
	size_t m = strlen(s);
	char *cut = xstrdup(s);

	if (size < 3) {
		if (size)
			buf[0] = '\0';
		free(cut);
		return buf;
	}
	for (;;) {
		char *q = gp_gnuplot_quote(cut);
		size_t n = strlen(q);

		if (n < size) {
			memcpy(buf, q, n + 1);
			free(q);
			break;
		}
		free(q);
		/* Too long: shorten the text before quoting, at a character
		 * boundary, so that the quotes stay whole. */
		m = m * 3 / 4;
		while (m && ((unsigned char)cut[m] & 0xC0) == 0x80)
			m--;
		cut[m] = '\0';
	}
	free(cut);
	return buf;
}

int plot_find_program(const char *prog, char *buf, size_t size)
{
	const char *path = getenv("PATH");

	if (!path || !*path)
		return 0;
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		struct stat st;

		/* An empty PATH entry means the current directory. */
		if (len == 0)
			snprintf(buf, size, "./%s", prog);
		else
			snprintf(buf, size, "%.*s/%s", (int)len, path, prog);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 1;
		path += len + (colon ? 1 : 0);
	}
	buf[0] = '\0';
	return 0;
}

/* The whole script: terminal, output, datablock, the command's lines. */
static char *full_script(const struct plot *p, const char *path, enum plot_format fmt,
			 const char *note)
{
	struct plot s;
	char q[4200], *block;
	int h = p->height > 0 ? p->height : PLOT_HEIGHT;

	plot_init(&s);
	plot_cmd(&s, "# %s", note);
	if (fmt == PLOT_PNG)
		plot_cmd(&s, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) "
			     "{ set terminal pngcairo size %d,%d noenhanced font 'Sans,10' } "
			     "else { set terminal png size %d,%d noenhanced }",
			 PLOT_WIDTH, h, PLOT_WIDTH, h);
	else
		plot_cmd(&s, "set terminal svg size %d,%d dynamic noenhanced font 'Sans,11' "
			     "background '#ffffff'", PLOT_WIDTH, h);
	plot_cmd(&s, "set output %s", plot_quote(q, sizeof(q), path));
	plot_cmd(&s, "set datafile separator comma");
	block = gp_gnuplot_datablock("data", p->data ? p->data : "", p->data_len);
	plot_cmd(&s, "%.*s", (int)strlen(block) - 1, block);
	free(block);
	plot_cmd(&s, "%.*s", (int)p->script_len, p->script ? p->script : "");
	plot_cmd(&s, "unset output");
	free(s.data);
	return s.script;
}

/* path with its extension replaced by ext (".csv"). */
static void sibling(char *buf, size_t size, const char *path, const char *ext)
{
	const char *dot = strrchr(path, '.');

	if (dot && !strchr(dot, '/'))
		snprintf(buf, size, "%.*s%s", (int)(dot - path), path, ext);
	else
		snprintf(buf, size, "%s%s", path, ext);
}

static enum rc write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		gp_error("%s: cannot write: %s", path, strerror(errno));
		return RC_ERR;
	}
	if (fwrite(text, 1, len, f) != len || fclose(f) != 0) {
		if (errno == 0)
			errno = EIO;
		gp_error("%s: cannot write: %s", path, strerror(errno));
		return RC_ERR;
	}
	return RC_OK;
}

static enum rc fall_back(const struct plot *p, const char *flag, const char *path,
			 enum plot_format fmt)
{
	char csv[4096], gp[4096], note[8400];
	char *script;
	enum rc rc;

	sibling(csv, sizeof(csv), path, ".csv");
	sibling(gp, sizeof(gp), path, ".gp");
	snprintf(note, sizeof(note), "gnuplot %s draws %s", gp, path);
	rc = write_file(csv, p->data ? p->data : "", p->data_len);
	if (rc != RC_OK)
		return rc;
	script = full_script(p, path, fmt, note);
	rc = write_file(gp, script, strlen(script));
	free(script);
	if (rc != RC_OK)
		return rc;
	gp_warn("%s: gnuplot is not on PATH, so %s was not drawn; wrote its data to %s and "
		"a gnuplot script to %s instead", flag, path, csv, gp);
	if (!gp_log_is_quiet())
		gp_hint("install gnuplot (Debian: apt-get install gnuplot-nox), then run 'gnuplot %s'",
			gp);
	return RC_OK;
}

/* Writes the drawn chart at tmp into path, a FIFO or a device that is
 * not to be replaced (gp_write_file_atomic writes those in place). */
static enum rc copy_into(const char *tmp, const char *path)
{
	char *data;
	size_t len;
	enum rc rc = gp_read_file(tmp, &data, &len);

	if (rc != RC_OK)
		return RC_ERR;
	rc = gp_write_file_atomic(path, data, len);
	free(data);
	return rc;
}

enum rc plot_render(const struct plot *p, const char *flag, const char *path, int *fallback)
{
	enum plot_format fmt;
	char prog[4096], cmd[8400], q[4200], note[4300], tmp[4200];
	struct sigaction ign, old;
	struct stat st;
	char *script, *target = NULL;
	FILE *pipe;
	size_t len;
	int status, wrote, fd, regular;
	enum rc rc;

	if (fallback)
		*fallback = 0;
	rc = plot_check_path(flag, path, &fmt);
	if (rc != RC_OK)
		return rc;
	if (!plot_find_program("gnuplot", prog, sizeof(prog))) {
		if (fallback)
			*fallback = 1;
		return fall_back(p, flag, path, fmt);
	}
	/* The shell sees the program's path as one single-quoted word. */
	{
		size_t n = 0;

		cmd[n++] = '\'';
		for (const char *s = prog; *s && n + 6 < sizeof(cmd); s++) {
			if (*s == '\'') {
				memcpy(cmd + n, "'\\''", 4);
				n += 4;
			} else {
				cmd[n++] = *s;
			}
		}
		cmd[n++] = '\'';
		cmd[n] = '\0';
		/* gnuplot's stdout is not ours: ours carries the command's table */
		gp_strlcpy(cmd + n, " >/dev/null", sizeof(cmd) - n);
	}
	/* gnuplot draws into a file of ours beside the chart, renamed over it
	 * once drawn: a chart it cannot open is our one-line error before it
	 * starts (gnuplot itself would carry on drawing to its stdout, ours),
	 * and a failed drawing leaves an existing chart as it was. */
	/* The chart beside the file a symlink names, so the link stays; a
	 * FIFO or a device gets the drawing copied in, from the temporary
	 * directory. */
	target = gp_path_resolve(path);
	regular = stat(target, &st) != 0 || S_ISREG(st.st_mode);
	/* A name gnuplot's quoting cannot carry as it is (a control
	 * character, an invisible mark: gp_gnuplot_quote writes them as the
	 * text \xNN) is drawn in the temporary directory too, then copied:
	 * else gnuplot draws to another name, and leaves it behind. */
	if (!gp_text_is_printable(target, strlen(target), NULL))
		regular = 0;
	if (!regular) {
		const char *dir = getenv("TMPDIR");

		free(target);
		target = xmalloc(4096);
		snprintf(target, 4096, "%s/gpuplan-plot", dir && *dir ? dir : "/tmp");
	}
	fd = gp_temp_beside(target, tmp, sizeof(tmp));
	if (fd < 0) {
		gp_error("%s: cannot create a file beside %s: %s", flag, path, strerror(errno));
		free(target);
		return RC_ERR;
	}
	close(fd);
	snprintf(note, sizeof(note), "draws %s", plot_quote(q, sizeof(q), path));
	script = full_script(p, tmp, fmt, note);
	len = strlen(script);
	/* gnuplot dying early must not kill us with SIGPIPE. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	fflush(NULL);
	pipe = popen(cmd, "w");
	if (!pipe) {
		sigaction(SIGPIPE, &old, NULL);
		free(script);
		gp_error("%s: cannot start %s: %s", flag, prog, strerror(errno));
		rc = RC_ERR;
		goto out;
	}
	wrote = fwrite(script, 1, len, pipe) == len;
	status = pclose(pipe);
	sigaction(SIGPIPE, &old, NULL);
	free(script);
	rc = RC_ERR;
	if (!wrote || status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		gp_error("%s: gnuplot failed drawing %s (%s %d)", flag, path,
			 status != -1 && WIFSIGNALED(status) ? "signal" : "exit status",
			 status == -1 ? -1 : WIFSIGNALED(status) ? WTERMSIG(status)
							   : WEXITSTATUS(status));
	else if (stat(tmp, &st) != 0 || st.st_size == 0)
		gp_error("%s: gnuplot wrote nothing to %s", flag, path);
	else if (!regular)
		rc = copy_into(tmp, path);
	else if (rename(tmp, target) != 0)
		gp_error("%s: cannot replace %s: %s", flag, path, strerror(errno));
	else
		rc = RC_OK;
out:
	if (rc != RC_OK || !regular)
		unlink(tmp);
	free(target);
	return rc;
}
