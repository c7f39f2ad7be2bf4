/*
 * common.h - status codes, logging, checked allocation and unit helpers
 * shared by every gpuplan module.
 *
 * Modules never exit() and never print to stdout: they return an enum rc
 * and log one-line messages to stderr through gp_error()/gp_warn()/gp_info().
 * Only cli/main.c maps a status to an exit code (rc_exit_code()).
 *
 * Layers (tests/layers/test_layers.sh): common < pricing < simulator <
 * planner < executor < cli; a file includes and calls only its own layer
 * and those before it.  common is the bottom: it calls
 * nothing of gpuplan's.
 */
#ifndef GPUPLAN_COMMON_H
#define GPUPLAN_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define GP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GP_PRINTF(a, b)
#endif

#define GP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* One status enum for the project.  Exit codes (rc_exit_code):
 * 0 ok, 1 runtime error, 2 bad usage or bad input, 3 no feasible plan,
 * 4 GPU/NCCL/MPI unavailable. */
enum rc {
	RC_OK = 0,
	RC_ERR,        /* runtime failure (I/O, solver, child process) */
	RC_INPUT,      /* bad input file, JSON field or model spec */
	RC_USAGE,      /* bad command-line flag */
	RC_INFEASIBLE, /* no plan satisfies the constraints */
	RC_DEVICE,     /* GPU, NCCL or MPI unavailable */
};

/* Returns a static lower-case name for rc ("ok", "bad input", ...). */
const char *rc_str(enum rc rc);
/* Returns the documented process exit code for rc. */
int rc_exit_code(enum rc rc);

/* Logging to stderr.  gp_error prints "error: <msg>", gp_hint "hint: <msg>",
 * gp_warn "warning: <msg>"; gp_info prints "<msg>" unless quiet.  A trailing
 * newline is added.  gp_log_quiet(1) silences gp_info and gp_warn. */
void gp_error(const char *fmt, ...) GP_PRINTF(1, 2);
void gp_hint(const char *fmt, ...) GP_PRINTF(1, 2);
void gp_warn(const char *fmt, ...) GP_PRINTF(1, 2);
void gp_info(const char *fmt, ...) GP_PRINTF(1, 2);
void gp_log_quiet(int quiet);
/* Lets a progress line on stderr step aside for a message: enter() runs
 * before every message is written and leave() after it, both with ctx.
 * Pass NULLs to remove.  One guard at a time (common/progress.c sets it). */
void gp_log_set_guard(void (*enter)(void *ctx), void (*leave)(void *ctx), void *ctx);
int gp_log_is_quiet(void);

/* Checked allocation (common/alloc.c): on failure print size and call
 * site, then abort().  gpuplan is an application, so running out of
 * memory is not recoverable. */
#define xmalloc(n) gp_xmalloc((n), __FILE__, __LINE__)
#define xcalloc(n, s) gp_xcalloc((n), (s), __FILE__, __LINE__)
#define xrealloc(p, n) gp_xrealloc((p), (n), __FILE__, __LINE__)
#define xstrdup(s) gp_xstrdup((s), __FILE__, __LINE__)
#define xstrndup(s, n) gp_xstrndup((s), (n), __FILE__, __LINE__)
void *gp_xmalloc(size_t n, const char *file, int line);
void *gp_xcalloc(size_t n, size_t size, const char *file, int line);
void *gp_xrealloc(void *p, size_t n, const char *file, int line);
char *gp_xstrdup(const char *s, const char *file, int line);
char *gp_xstrndup(const char *s, size_t n, const char *file, int line);

/* Copies src into dst[size], always NUL-terminated.  Returns 0, or -1 when
 * src was truncated. */
int gp_strlcpy(char *dst, const char *src, size_t size);
/* ASCII case-insensitive equality; NULL never equals anything. */
int gp_streq_nocase(const char *a, const char *b);
/* A name's character as names compare: case folded, '_' and ' ' read as
 * '-', so "rtx_4090" meets "RTX-4090". */
char gp_fold_name(char c);
/* Levenshtein distance between a[0..la) and b[0..lb), each character
 * read through fold (NULL: as it is); lengths beyond 64 are cut there. */
size_t gp_edit_distance(const char *a, size_t la, const char *b, size_t lb,
			char (*fold)(char c));
/* The largest distance at which a name is taken for a misspelling of
 * another and suggested: a third of its length, at least 2. */
size_t gp_suggest_limit(const char *name);

/* ---- files (common/fileio.c) ----------------------------------------- */

/* Creates an empty file beside path, named "PATH.tmp.XXXXXX" into
 * tmp[size] (mkstemp), with the mode creat() would give it under the
 * umask, to be renamed over path once written.  Returns its descriptor,
 * or -1 with errno set (nothing printed, no file left). */
int gp_temp_beside(const char *path, char *tmp, size_t size);

/* The file path names once symbolic links are followed (at most 40; a
 * relative link read from the link's directory): path itself when it is
 * not a link, the last name reached when a link dangles.  Returns a new
 * string the caller frees. */
char *gp_path_resolve(const char *path);

/* Replaces path with data[0..len) atomically: a temporary file in the same
 * directory (mode as creat() would give under the umask) is written,
 * fsynced and renamed over path, so a reader sees the old file or the new
 * one, never a mix.  A symlink is followed (gp_path_resolve): its target
 * is replaced that way, in the target's directory, and the link stays.
 * An existing FIFO, character or block device or socket (a pipe,
 * /dev/null, /dev/stdout) is written in place, neither fsynced nor
 * replaced.  Returns RC_OK, or RC_ERR after one message naming path; a
 * regular file at path is untouched on failure. */
enum rc gp_write_file_atomic(const char *path, const char *data, size_t len);

/* gp_write_file_atomic() of the string text, with a final newline added
 * when text lacks one (JSON printers end without it). */
enum rc gp_write_text_atomic(const char *path, const char *text);

/* Creates directory dir and every missing directory above it (mode 0755
 * under the umask), as mkdir -p.  Returns RC_OK, or RC_ERR after one
 * message naming the directory that could not be made. */
enum rc gp_mkdir_p(const char *dir);

/* The most bytes any file input may hold (plans, calibrations, tables,
 * histories): gp_read_file's cap. */
#define GP_READ_MAX_BYTES ((size_t)64 << 20)

/* Reads the whole file at path into *data (NUL-terminated, *len bytes
 * before the NUL; the caller frees *data), at most max bytes: the one
 * reader of every file input.  The cap holds for pipes, FIFOs and
 * devices (/dev/zero) as for regular files: a running count stops the
 * read.  Returns RC_OK; RC_INPUT when path cannot be opened, is a
 * directory or holds more than max bytes, RC_ERR when reading fails, each
 * after one message naming path; *data is NULL on failure. */
enum rc gp_read_file_max(const char *path, size_t max, char **data, size_t *len);
/* gp_read_file_max(path, GP_READ_MAX_BYTES, data, len). */
enum rc gp_read_file(const char *path, char **data, size_t *len);

/* FNV-1a 64-bit hash of data[0..len) continuing from h (start with
 * GP_FNV1A64_INIT): a file's identity in plan files, not a security hash. */
#define GP_FNV1A64_INIT 0xcbf29ce484222325ULL
uint64_t gp_fnv1a64(const void *data, size_t len, uint64_t h);

/* The machine's online CPUs, at least 1. */
int gp_cpu_count(void);

/* Calls fn(ctx, begin, end) over [0, n) split into at most `threads`
 * contiguous parts of at least min_part, each on a thread of its own (the
 * first on the caller's), and returns when all have.  A part whose
 * thread cannot be started runs on the caller's.  fn must not depend on
 * how [0, n) is split. */
void gp_parallel_for(long n, int threads, long min_part,
		     void (*fn)(void *ctx, long begin, long end), void *ctx);

/* ---- text from files, text for other languages (common/escape.c) ------
 *
 * Text read from a file (a price cell, a plan's model name) is data: every
 * reader checks it with gp_text_is_printable, and names (provider,
 * instance type, GPU, region, model) with gp_name_is_safe, before keeping
 * it.  Every writer quotes for its language anyway: a shell word through
 * gp_shell_quote, a YAML scalar through gp_yaml_quote, a gnuplot string
 * through gp_gnuplot_quote and a datablock through gp_gnuplot_datablock,
 * terminal text (tables, messages, comments in written scripts) through
 * gp_term_escape.  JSON is escaped by cJSON. */

/* The ASCII punctuation a name may hold besides letters and digits: what
 * the shipped tables and SkyPilot's catalogs use ("p5.48xlarge",
 * "gpu_1x_h100_sxm5", "Germany, DE, EU", "BM.GPU.H100.8",
 * "H100_PCIE_80GB::1", "4CPU--16GB--1H100", "(spot)", "a@b"). */
#define GP_NAME_PUNCT " ._-:/+(),@"

/* 1 when s[0..len) is well-formed UTF-8 without control characters (C0,
 * NUL included, DEL, C1) or invisible code points: reordering marks
 * (U+2028/9, U+200E/F, U+202A-E, U+2066-9), zero-width characters
 * (U+200B-D, U+2060-4, U+FEFF, U+061C, U+180E, U+00AD), tag characters
 * (U+E0000-U+E007F) and variation selectors; else 0 with *bad (may be NULL)
 * set to the offset of the first offending byte.  Tabs and line breaks
 * are control characters. */
int gp_text_is_printable(const char *s, size_t len, size_t *bad);

/* The one definition of a valid name (provider, instance type, GPU,
 * region, quota rows, model, job, plan strings): 1 when s[0..len) is
 * printable (above), holds no space but U+0020 (no U+00A0, U+2000-A,
 * U+202F, U+205F, U+3000, U+1680), and each ASCII character is a
 * letter, a digit or one of GP_NAME_PUNCT (characters beyond ASCII are
 * letters of other scripts: "Zürich"); else 0 with *bad (may be NULL) at
 * the first offending byte.  Such a name cannot end a quote in any
 * language gpuplan writes, nor start a shell expansion ($, `, ;, |, &, <,
 * >, quotes, backslash and newline are all outside the set). */
int gp_name_is_safe(const char *s, size_t len, size_t *bad);

/* Describes the character at s[at] (of s[0..len)) for a "found ..." part
 * of a message: "'$'", "a line break", "a NUL byte", "control byte 0x1b",
 * "byte 0xff (not UTF-8)", "invisible character U+202E".  Writes into
 * buf[size] (48 bytes suffice) and returns buf. */
char *gp_char_describe(char *buf, size_t size, const char *s, size_t len, size_t at);

/* s as one POSIX shell word: in single quotes, each ' written as '\''.
 * Nothing inside is expanded; a line break stays a character of the word
 * (never put a quoted word in a comment: use gp_term_escape there).
 * Returns a new string (xmalloc: never NULL) the caller frees. */
char *gp_shell_quote(const char *s);

/* s as a YAML double-quoted scalar: '"' and '\' escaped, control and
 * invisible characters as \xXX or \uXXXX, bytes that are not UTF-8 as
 * \uFFFD.  The result is one line.  Returns a new string the caller
 * frees. */
char *gp_yaml_quote(const char *s);

/* s for a terminal, or any one-line text: control characters (line
 * breaks, ESC, DEL, C1), invisible marks and bytes that are not UTF-8
 * are written as \xNN or \uNNNN; everything else as it is.  Writes into
 * buf[size] and returns buf; when the escaped text does not fit it is cut
 * between two characters and ends in "...".  The result holds no control
 * byte whatever s holds. */
char *gp_term_escape(char *buf, size_t size, const char *s);

/* s as a gnuplot single-quoted string: ' doubled, control and invisible
 * characters and bytes that are not UTF-8 written as the text \xNN.
 * gnuplot substitutes `commands` inside double quotes, never inside
 * single ones.  Returns a new string the caller frees. */
char *gp_gnuplot_quote(const char *s);

/* s as one field of a comma-separated gnuplot datablock row: ',' becomes
 * ';', quotes, backquotes, control characters and bytes that are not
 * UTF-8 become '_'.  Returns a new string the caller frees. */
char *gp_gnuplot_field(const char *s);

/* The terminator of every datablock gpuplan writes. */
#define GP_GNUPLOT_EOD "EOD"
/* The gnuplot lines "$name << EOD", rows[0..len) (lines split at '\n'),
 * "EOD", each ending in '\n'.  gnuplot ends a block at the first line
 * that begins with the terminator: no row can, as such a row is written
 * after a blank (gnuplot skips it when splitting fields), and control
 * bytes in rows become '_', so no row adds a line.  name is the caller's
 * (letters and digits).  Returns a new string the caller frees. */
char *gp_gnuplot_datablock(const char *name, const char *rows, size_t len);

/* ---- units (common/units.c) ------------------------------------------ */

/* Parses a count with an optional SI suffix: "1T", "300B", "2.5e12", "1.5M",
 * "250k" (k=1e3, M=1e6, B/G=1e9, T=1e12, P=1e15; case-insensitive except
 * that lower-case "m" is rejected as ambiguous).  Returns RC_OK and sets
 * *out, or RC_USAGE when s is not a number from 1 to UNIT_COUNT_MAX. */
enum rc unit_parse_count(const char *s, double *out);
/* 1e18: tokens or bytes beyond any training run (Llama 3: 1.5e13 tokens),
 * where costs and times would stop being numbers one can print. */
#define UNIT_COUNT_MAX 1e18
/* Parses an amount of US dollars: "20000", "$20000", "250k", "1.5M",
 * "$1,500,000".  Commas must group thousands ("1,5M" is refused).  Zero
 * is allowed; negative is not, nor more than UNIT_USD_MAX. */
enum rc unit_parse_usd(const char *s, double *out);
/* 1e15: a quadrillion dollars, beyond any budget or hourly rate, so that a
 * rate by GPU-hours stays finite and prints as a number. */
#define UNIT_USD_MAX 1e15
/* Parses a duration into seconds: "30d", "72h", "90m", "3600s", "2w", or a
 * plain number of seconds. */
enum rc unit_parse_duration(const char *s, double *out_s);

/* The ranges of the quantities gpuplan reads, wherever they enter (a
 * flag, a CSV cell, a plan field); docs/robustness.md lists them.
 *
 * An overhead paid once per job or event (start-up, provisioning,
 * restart, switching a plan's nodes): at most a year, far beyond any
 * cloud's minutes, yet small enough that a cost or time built from it
 * stays a number a plan file can hold. */
#define UNIT_OVERHEAD_S_MAX (365.0 * 86400)
/* A span of time (a deadline, a timeout, a checkpoint interval, a
 * price's age): at most 100 years. */
#define UNIT_SPAN_S_MAX (100 * 365.25 * 86400)
/* A date read as when something was true (a price_date) may lie at most
 * this many days after today: a day for time zones, no more. */
#define UNIT_DATE_AHEAD_DAYS_MAX 1
/* Parses a non-negative decimal integer that fits in an int. */
enum rc unit_parse_int(const char *s, int *out);
/* Parses a finite double (no suffix). */
enum rc unit_parse_double(const char *s, double *out);
/* Parses an ISO calendar date "YYYY-MM-DD" (years 1970-9999, a day the
 * month has) into days since 1970-01-01.  Returns RC_OK, or RC_USAGE when
 * s is anything else. */
enum rc unit_parse_date(const char *s, long *days);
/* Writes the date days after 1970-01-01 as "YYYY-MM-DD" into buf (at
 * least 11 bytes).  Returns buf. */
char *unit_fmt_date(char *buf, size_t size, long days);
/* Today's date (UTC) in days since 1970-01-01: $GPUPLAN_NOW when set (a
 * "YYYY-MM-DD" date; for tests, so that the age of a price is the same on
 * every run), else the system clock.  Returns RC_OK, or RC_USAGE after one
 * message when $GPUPLAN_NOW is not a date. */
enum rc unit_today(long *days);

/* Formatting into caller storage (buf of at least 32 bytes); each returns
 * buf.  Never prints nan or inf: non-finite values print as "-". */
char *unit_fmt_count(char *buf, size_t size, double v);    /* 1.23T      */
char *unit_fmt_bytes(char *buf, size_t size, double b);    /* 73.4 GiB   */
char *unit_fmt_duration(char *buf, size_t size, double s); /* 12.3 d     */
char *unit_fmt_usd(char *buf, size_t size, double usd);    /* $1,234,567 */

/* Prints v in the fewest of 15 or 17 significant digits that read back
 * as exactly v (integers without a fraction), so that a number written to
 * a file and read again is the same double.  Non-finite v prints as "0":
 * JSON and CSV have no spelling for it.  buf needs 40 bytes. */
char *unit_fmt_exact(char *buf, size_t size, double v);

#define UNIT_GIB (1024.0 * 1024.0 * 1024.0)
#define UNIT_GB 1e9
#define UNIT_HOURS_PER_MONTH 730.0

#endif
