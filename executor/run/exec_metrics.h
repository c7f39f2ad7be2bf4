/*
 * exec_metrics.h - Prometheus text-format metrics of a running execute:
 * served over HTTP on localhost and/or written to a file for the
 * node-exporter textfile collector.
 *
 * Exposition format: prometheus.io/docs/instrumenting/exposition_formats
 * (text format 0.0.4).  The textfile collector reads *.prom files and
 * wants them replaced atomically, so the file is written to a temporary
 * name and renamed.
 */
#ifndef GPUPLAN_EXEC_METRICS_H
#define GPUPLAN_EXEC_METRICS_H

#include <stddef.h>

#include "common.h"

/* One snapshot.  Figures that are not known yet are < 0 and left out. */
struct exec_metrics_sample {
	const char *model;
	const char *backend;
	int step, steps;
	double loss;
	double step_time_s;
	double tokens_per_s;
	double mfu;                    /* fraction of peak */
	double predicted_step_time_s;
	const double *peak_memory_bytes; /* [ranks], or NULL */
	int ranks;
};

struct exec_metrics;

/* Formats s into buf[size] in the text exposition format.  Returns the
 * length it needs (as snprintf); never writes NaN or infinity. */
size_t exec_metrics_format(const struct exec_metrics_sample *s, char *buf, size_t size);

/* Starts serving GET /metrics on 127.0.0.1:port (port 0: an ephemeral
 * port, see exec_metrics_port(); port < 0: no server)
 * from a background thread, and/or writing path on every update (NULL:
 * no file).  Returns RC_OK and *out, or RC_ERR (message names the port
 * or the file).  Free with exec_metrics_free(). */
enum rc exec_metrics_new(int port, const char *path, struct exec_metrics **out);
/* Publishes s: the server answers with it from now on, and the file is
 * replaced.  Returns RC_OK or RC_ERR when the file cannot be written. */
enum rc exec_metrics_update(struct exec_metrics *m, const struct exec_metrics_sample *s);
/* The port actually listened on (useful with an ephemeral port). */
int exec_metrics_port(const struct exec_metrics *m);
/* Stops the server and frees m; m may be NULL. */
void exec_metrics_free(struct exec_metrics *m);

#endif
