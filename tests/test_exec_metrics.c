/*
 * test_exec_metrics.c - the Prometheus exposition text, the textfile
 * written atomically, and a real scrape of the HTTP responder over the
 * loopback address.
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "run/exec_metrics.h"

static const double peaks[2] = { 1048576, 2097152 };

static void sample(struct exec_metrics_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->model = "tiny";
	s->backend = "cpu";
	s->step = 3;
	s->steps = 10;
	s->loss = 4.25;
	s->step_time_s = 0.5;
	s->tokens_per_s = 2048;
	s->mfu = 0.125;
	s->predicted_step_time_s = 0.4;
	s->peak_memory_bytes = peaks;
	s->ranks = 2;
}

static void test_exec_metrics_format_gauges(void **state)
{
	struct exec_metrics_sample s;
	char buf[4096];
	size_t n;

	(void)state;
	sample(&s);
	n = exec_metrics_format(&s, buf, sizeof(buf));
	assert_int_equal(n, strlen(buf));
	assert_non_null(strstr(buf, "# TYPE gpuplan_loss gauge\n"
				    "gpuplan_loss{model=\"tiny\",backend=\"cpu\"} 4.25\n"));
	assert_non_null(strstr(buf, "gpuplan_step{model=\"tiny\",backend=\"cpu\"} 3\n"));
	assert_non_null(strstr(buf, "gpuplan_tokens_per_second{model=\"tiny\",backend=\"cpu\"} 2048\n"));
	/* measured / predicted = 0.5 / 0.4 = 1.25 */
	assert_non_null(strstr(buf, "gpuplan_prediction_ratio{model=\"tiny\",backend=\"cpu\"} 1.25\n"));
	assert_non_null(strstr(buf, "gpuplan_peak_memory_bytes{model=\"tiny\",backend=\"cpu\",rank=\"1\"} 2097152\n"));
	/* The length needed is reported when the buffer is short. */
	assert_int_equal(exec_metrics_format(&s, buf, 10), n);
	assert_int_equal(strlen(buf), 9);
}

static void test_exec_metrics_format_skips_unknown(void **state)
{
	struct exec_metrics_sample s;
	char buf[4096];

	(void)state;
	sample(&s);
	s.loss = NAN;
	s.mfu = -1;
	s.peak_memory_bytes = NULL;
	exec_metrics_format(&s, buf, sizeof(buf));
	assert_null(strstr(buf, "gpuplan_loss"));
	assert_null(strstr(buf, "gpuplan_mfu_ratio"));
	assert_null(strstr(buf, "gpuplan_peak_memory_bytes"));
	assert_null(strstr(buf, "nan"));
	assert_null(strstr(buf, "inf"));
}

static void test_exec_metrics_update_writes_file(void **state)
{
	struct exec_metrics_sample s;
	struct exec_metrics *m;
	char path[] = "/tmp/gpuplan_metrics_XXXXXX";
	char buf[4096];
	FILE *f;
	size_t n;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	sample(&s);
	assert_int_equal(exec_metrics_new(-1, path, &m), RC_OK);
	assert_int_equal(exec_metrics_update(m, &s), RC_OK);
	s.step = 4;
	assert_int_equal(exec_metrics_update(m, &s), RC_OK);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "gpuplan_step{model=\"tiny\",backend=\"cpu\"} 4\n"));
	exec_metrics_free(m);
	remove(path);
}

static void test_exec_metrics_serves_scrape(void **state)
{
	struct exec_metrics_sample s;
	struct exec_metrics *m;
	struct sockaddr_in a;
	char buf[8192];
	size_t n = 0;
	ssize_t got;
	int c;
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n";

	(void)state;
	sample(&s);
	assert_int_equal(exec_metrics_new(0, NULL, &m), RC_OK);
	assert_true(exec_metrics_port(m) > 0);
	assert_int_equal(exec_metrics_update(m, &s), RC_OK);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)exec_metrics_port(m));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(c >= 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(write(c, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1);
	while ((got = read(c, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)got;
	buf[n] = '\0';
	close(c);
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(buf, "text/plain; version=0.0.4"));
	assert_non_null(strstr(buf, "gpuplan_mfu_ratio{model=\"tiny\",backend=\"cpu\"} 0.125\n"));
	exec_metrics_free(m);
}

/* A socket connected to m's port. */
static int connect_to(const struct exec_metrics *m)
{
	struct sockaddr_in a;
	int c = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)exec_metrics_port(m));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(c >= 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	return c;
}

/* A whole scrape of m: what it answered, into buf[size]. */
static void scrape(const struct exec_metrics *m, char *buf, size_t size)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n";
	int c = connect_to(m);
	size_t n = 0;
	ssize_t got;

	assert_int_equal(write(c, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1);
	while (n < size - 1 && (got = read(c, buf + n, size - 1 - n)) > 0)
		n += (size_t)got;
	buf[n] = '\0';
	close(c);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Clients that send their request and close or reset the connection at once: the
 * server's answer meets a closed socket, which must not end the process
 * by SIGPIPE (it did: rank 0 died and the job with it), and the next
 * scrape is answered. */
static void test_exec_metrics_client_closes_early(void **state)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n";
	struct exec_metrics_sample s;
	struct exec_metrics *m;
	struct linger rst = { 1, 0 };
	char buf[8192];

	(void)state;
	sample(&s);
	assert_int_equal(exec_metrics_new(0, NULL, &m), RC_OK);
	assert_int_equal(exec_metrics_update(m, &s), RC_OK);
	for (int i = 0; i < 20; i++) {
		int c = connect_to(m);

		assert_int_equal(write(c, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1);
		/* closed at once (the answer meets a closed socket, which
		 * answers it with a reset) or reset */
		if (i % 2)
			assert_int_equal(setsockopt(c, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst)), 0);
		close(c);
	}
	usleep(200000);
	scrape(m, buf, sizeof(buf));
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
	exec_metrics_free(m);
}

/* A client that trickles its request a byte at a time, for up to 8 s. */
struct trickle {
	int fd;
	atomic_int stop;
};

static void *trickle_run(void *arg)
{
	struct trickle *t = arg;

	for (int i = 0; i < 80 && !atomic_load(&t->stop); i++) {
		if (send(t->fd, "G", 1, MSG_NOSIGNAL) != 1)
			break;
		usleep(100000);
	}
	return NULL;
}

/* One slow client must not hold the single-threaded server: a scrape
 * behind it is answered within seconds (it waited as long as the slow
 * one kept sending, 8 s here, minutes for a patient one). */
static void test_exec_metrics_slow_client_dropped(void **state)
{
	struct exec_metrics_sample s;
	struct exec_metrics *m;
	struct trickle t;
	pthread_t th;
	char buf[8192];
	double t0, waited;

	(void)state;
	sample(&s);
	assert_int_equal(exec_metrics_new(0, NULL, &m), RC_OK);
	assert_int_equal(exec_metrics_update(m, &s), RC_OK);
	t.fd = connect_to(m);
	atomic_init(&t.stop, 0);
	assert_int_equal(pthread_create(&th, NULL, trickle_run, &t), 0);
	usleep(200000);
	t0 = now_s();
	scrape(m, buf, sizeof(buf));
	waited = now_s() - t0;
	atomic_store(&t.stop, 1);
	pthread_join(th, NULL);
	close(t.fd);
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
	if (waited > 4.0)
		fail_msg("a scrape behind a slow client waited %.1f s, expected under 4", waited);
	exec_metrics_free(m);
}

static void test_exec_metrics_port_in_use(void **state)
{
	struct exec_metrics *a, *b = NULL;

	(void)state;
	assert_int_equal(exec_metrics_new(0, NULL, &a), RC_OK);
	assert_int_equal(exec_metrics_new(exec_metrics_port(a), NULL, &b), RC_ERR);
	assert_null(b);
	exec_metrics_free(a);
	exec_metrics_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_metrics_format_gauges),
		cmocka_unit_test(test_exec_metrics_format_skips_unknown),
		cmocka_unit_test(test_exec_metrics_update_writes_file),
		cmocka_unit_test(test_exec_metrics_serves_scrape),
		cmocka_unit_test(test_exec_metrics_client_closes_early),
		cmocka_unit_test(test_exec_metrics_slow_client_dropped),
		cmocka_unit_test(test_exec_metrics_port_in_use),
	};
	return cmocka_run_group_tests_name("exec_metrics", tests, NULL, NULL);
}
