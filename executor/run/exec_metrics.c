/*
 * exec_metrics.c - a minimal HTTP responder for Prometheus scrapes and an
 * atomic textfile writer.  It answers one request per connection with the
 * latest snapshot and closes; it is not a general web server and listens
 * on the loopback address only.  A client that closes early costs the
 * process no SIGPIPE, and one that is slow is dropped after
 * CLIENT_DEADLINE_MS, so neither can hold the run.
 */
#include "run/exec_metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct exec_metrics {
	int fd;                 /* listening socket, -1 without a server */
	int port;
	char *path;             /* textfile, or NULL */
	pthread_t thread;
	int running;
	atomic_int stop;
	pthread_mutex_t lock;
	char *body;             /* latest exposition text, under lock */
	size_t body_len;
};

struct out {
	char *buf;
	size_t size, len;
};

static void emit(struct out *o, const char *fmt, ...) GP_PRINTF(2, 3);
static void emit(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf ? o->buf + (o->len < o->size ? o->len : o->size) : NULL,
		      o->len < o->size ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

/* One gauge with its HELP and TYPE lines; skipped when v is unknown. */
static void gauge(struct out *o, const char *name, const char *help,
		  const char *labels, double v)
{
	char num[40];

	if (!(v >= 0) || !isfinite(v))
		return;
	emit(o, "# HELP %s %s\n# TYPE %s gauge\n%s{%s} %s\n", name, help, name, name,
	     labels, unit_fmt_exact(num, sizeof(num), v));
}

size_t exec_metrics_format(const struct exec_metrics_sample *s, char *buf, size_t size)
{
	struct out o = { buf, size, 0 };
	char labels[256], num[40];

	if (size)
		buf[0] = '\0';
	/* Label values are the model and backend names, which hold no quotes
	 * or backslashes (catalog names); escape nothing else. */
	snprintf(labels, sizeof(labels), "model=\"%s\",backend=\"%s\"",
		 s->model ? s->model : "", s->backend ? s->backend : "");
	gauge(&o, "gpuplan_step", "Training steps completed.", labels, s->step);
	gauge(&o, "gpuplan_steps_total", "Training steps asked for.", labels, s->steps);
	gauge(&o, "gpuplan_loss", "Cross-entropy of the last step, nats.", labels, s->loss);
	gauge(&o, "gpuplan_step_time_seconds", "Wall time of the last step.", labels,
	      s->step_time_s);
	gauge(&o, "gpuplan_tokens_per_second", "Global tokens per second of the last step.",
	      labels, s->tokens_per_s);
	gauge(&o, "gpuplan_mfu_ratio", "Model FLOPs utilisation of the last step.", labels,
	      s->mfu);
	gauge(&o, "gpuplan_predicted_step_time_seconds",
	      "The simulator's step time for the same plan.", labels, s->predicted_step_time_s);
	if (s->step_time_s > 0 && s->predicted_step_time_s > 0)
		gauge(&o, "gpuplan_prediction_ratio", "Measured over predicted step time.",
		      labels, s->step_time_s / s->predicted_step_time_s);
	if (s->peak_memory_bytes && s->ranks > 0) {
		emit(&o, "# HELP gpuplan_peak_memory_bytes Peak memory per rank.\n"
			 "# TYPE gpuplan_peak_memory_bytes gauge\n");
		for (int r = 0; r < s->ranks; r++)
			if (s->peak_memory_bytes[r] >= 0 && isfinite(s->peak_memory_bytes[r]))
				emit(&o, "gpuplan_peak_memory_bytes{%s,rank=\"%d\"} %s\n", labels, r,
				     unit_fmt_exact(num, sizeof(num), s->peak_memory_bytes[r]));
	}
	return o.len;
}

/* How long one client may take over its request and our answer: a
 * client that is slow (or never sends) is dropped after this, so it
 * cannot hold the single-threaded server. */
#define CLIENT_DEADLINE_MS 2000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sends buf[0..n) to client c before the deadline; a client that has
 * closed its end is an error here, not a SIGPIPE (MSG_NOSIGNAL).  0, or
 * -1 when it could not all be sent. */
static int send_all(int c, const char *buf, size_t n, long long deadline)
{
	while (n > 0) {
		struct pollfd p = { c, POLLOUT, 0 };
		long long left = deadline - now_ms();
		ssize_t w;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		w = send(c, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

static void serve_one(struct exec_metrics *m, int c)
{
	char req[2048], head[256];
	ssize_t n = 0, got;
	long long deadline = now_ms() + CLIENT_DEADLINE_MS;
	char *body = NULL;
	size_t len = 0;
	int ok;

	/* Read up to the end of the request head (or what fits), within the
	 * client's deadline as a whole. */
	while (n < (ssize_t)sizeof(req) - 1) {
		struct pollfd p = { c, POLLIN, 0 };
		long long left = deadline - now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		got = recv(c, req + n, sizeof(req) - 1 - (size_t)n, MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (got <= 0)
			break;
		n += got;
		req[n] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[n > 0 ? n : 0] = '\0';
	ok = strncmp(req, "GET /metrics", 12) == 0 || strncmp(req, "GET / ", 6) == 0;
	if (!ok) {
		static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
					 "Connection: close\r\n\r\n";
		send_all(c, nf, sizeof(nf) - 1, deadline);
		return;
	}
	/* a copy, so that the step that publishes the next one never waits
	 * for this client */
	pthread_mutex_lock(&m->lock);
	if (m->body_len) {
		body = xmalloc(m->body_len);
		memcpy(body, m->body, m->body_len);
		len = m->body_len;
	}
	pthread_mutex_unlock(&m->lock);
	snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\n"
		 "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n", len);
	if (send_all(c, head, strlen(head), deadline) == 0 && len)
		send_all(c, body, len, deadline);
	free(body);
}

static void *serve(void *arg)
{
	struct exec_metrics *m = arg;

	while (!atomic_load(&m->stop)) {
		struct pollfd p = { m->fd, POLLIN, 0 };
		int c;

		/* Wake up every 100 ms to notice exec_metrics_free(). */
		if (poll(&p, 1, 100) <= 0)
			continue;
		c = accept(m->fd, NULL, NULL);
		if (c < 0)
			continue;
		serve_one(m, c);
		close(c);
	}
	return NULL;
}

enum rc exec_metrics_new(int port, const char *path, struct exec_metrics **out)
{
	struct exec_metrics *m = xcalloc(1, sizeof(*m));
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int one = 1;

	m->fd = -1;
	pthread_mutex_init(&m->lock, NULL);
	m->path = path ? xstrdup(path) : NULL;
	if (port >= 0) {
		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_port = htons((uint16_t)port);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		m->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (m->fd < 0 ||
		    setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
		    bind(m->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(m->fd, 8) != 0 ||
		    getsockname(m->fd, (struct sockaddr *)&a, &alen) != 0) {
			gp_error("--metrics-port %d: cannot listen on 127.0.0.1: %s", port,
				 strerror(errno));
			exec_metrics_free(m);
			return RC_ERR;
		}
		m->port = ntohs(a.sin_port);
		if (pthread_create(&m->thread, NULL, serve, m) != 0) {
			gp_error("--metrics-port %d: cannot start the server thread", port);
			exec_metrics_free(m);
			return RC_ERR;
		}
		m->running = 1;
	}
	*out = m;
	return RC_OK;
}

enum rc exec_metrics_update(struct exec_metrics *m, const struct exec_metrics_sample *s)
{
	size_t len = exec_metrics_format(s, NULL, 0);
	char *body = xmalloc(len + 1);
	char *old;

	exec_metrics_format(s, body, len + 1);
	pthread_mutex_lock(&m->lock);
	old = m->body;
	m->body = body;
	m->body_len = len;
	pthread_mutex_unlock(&m->lock);
	free(old);
	return m->path ? gp_write_file_atomic(m->path, body, len) : RC_OK;
}

int exec_metrics_port(const struct exec_metrics *m)
{
	return m->port;
}

void exec_metrics_free(struct exec_metrics *m)
{
	if (!m)
		return;
	if (m->running) {
		atomic_store(&m->stop, 1);
		pthread_join(m->thread, NULL);
	}
	if (m->fd >= 0)
		close(m->fd);
	pthread_mutex_destroy(&m->lock);
	free(m->body);
	free(m->path);
	free(m);
}
