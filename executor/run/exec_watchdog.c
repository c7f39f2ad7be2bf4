/*
 * exec_watchdog.c - the step watchdog that turns a hung job into a failed
 * one, and the hang fault that tests it.
 *
 * Every rank arms a timer (setitimer, SIGALRM) at the start of each step
 * for exec_opts.timeout_s.  When it fires, the rank prints one line saying
 * where it was - still in its own work before the step, waiting at the
 * step's start for ranks that did not arrive, or inside the step - and
 * ends its process with exit status 1; under mpirun the launcher then ends
 * the other ranks and the job fails.  The rank that hangs between steps is
 * the one that says it never reached the step's start.
 *
 * The handler calls only write() and _exit(), which are async-signal-safe;
 * its three messages are formatted when the timer is armed.  What happens
 * outside the steps (start-up, the final gather) is not watched: a rank
 * that dies there is caught by mpirun itself.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "run/exec_run.h"

static char msgs[3][256];
static size_t lens[3];
static volatile sig_atomic_t where;

static void on_alarm(int sig)
{
	int w = where;

	(void)sig;
	if (w < 0 || w > 2)
		w = 0;
	if (write(STDERR_FILENO, msgs[w], lens[w]) < 0)
		_exit(1);
	_exit(1);
}

void exec_watchdog_arm(double timeout_s, int rank, int step)
{
	static int installed;
	struct itimerval it;

	if (!(timeout_s > 0))
		return;
	snprintf(msgs[EXEC_WATCH_OWN_WORK], sizeof(msgs[0]),
		 "error: rank %d: did not reach the start of step %d within %g s "
		 "(--timeout); this rank is stuck, ending the job\n", rank, step, timeout_s);
	snprintf(msgs[EXEC_WATCH_WAITING], sizeof(msgs[0]),
		 "error: rank %d: waited %g s at the start of step %d for a rank that did "
		 "not arrive (--timeout); ending the job\n", rank, timeout_s, step);
	snprintf(msgs[EXEC_WATCH_IN_STEP], sizeof(msgs[0]),
		 "error: rank %d: step %d did not finish within %g s (--timeout); "
		 "ending the job\n", rank, step, timeout_s);
	for (int i = 0; i < 3; i++)
		lens[i] = strlen(msgs[i]);
	where = EXEC_WATCH_OWN_WORK;
	if (!installed) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		installed = 1;
	}
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)timeout_s;
	it.it_value.tv_usec = (suseconds_t)((timeout_s - (double)it.it_value.tv_sec) * 1e6);
	if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

void exec_watchdog_where(enum exec_watch_where w)
{
	where = (sig_atomic_t)w;
}

void exec_watchdog_disarm(void)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
}

void exec_fault_hang(const struct exec_opts *o, int rank, int step)
{
	if (rank != o->hang_rank || step != o->hang_step)
		return;
	gp_error("rank %d: fault injected at step %d (%s), this rank hangs", rank, step,
		 EXEC_FAULT_HANG_ENV);
	fflush(stderr);
	for (;;)
		pause();
}
