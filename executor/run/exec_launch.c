/*
 * exec_launch.c - starting the job: `mpirun -np N ... gpuplan execute ...`
 * from a plain `gpuplan execute` (or `calibrate --np N`), waiting for it and
 * saying how it ended.
 *
 * The ranks run this same executable with the same arguments; they know
 * they are ranks from the launcher's environment (exec_under_launcher()).
 * OpenMPI kills the other ranks when one dies; this side adds one line
 * with the job's status, naming the rank that ended first (it watches
 * mpirun's children while it waits), since a rank killed from outside (the
 * kernel's OOM killer) says nothing itself.
 *
 * The job never outlives this process: SIGINT, SIGTERM and SIGHUP are
 * forwarded to mpirun, which ends its ranks, and mpirun gets SIGTERM from
 * the kernel when this process dies, even of SIGKILL (PR_SET_PDEATHSIG).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "exec.h"

/* mpirun from $GPUPLAN_MPIRUN, else the first executable `mpirun` in PATH,
 * into out[size]; 0, or -1 when there is none. */
static int find_mpirun(char *out, size_t size)
{
	const char *env = getenv("GPUPLAN_MPIRUN"), *path = getenv("PATH");
	struct stat st;

	if (env && *env) {
		if (access(env, X_OK) != 0)
			return -1;
		gp_strlcpy(out, env, size);
		return 0;
	}
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);

		if (n > 0 && (size_t)snprintf(out, size, "%.*s/mpirun", (int)n, path) < size &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		path = colon ? colon + 1 : NULL;
	}
	return -1;
}

/* Variables the ranks need that OpenMPI does not forward on its own to
 * ranks on other nodes. */
static const char *const forward_env[] = {
	EXEC_FAULT_ENV, EXEC_FAULT_HANG_ENV, EXEC_FAULT_OOM_ENV, EXEC_FAULT_CKPT_ENV,
	"GPUPLAN_SHARE_DIR",
	"GPUPLAN_DATA_DIR",
};

/* The signals forwarded to mpirun, and what the handler saw. */
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP };
static volatile pid_t launch_child;
static volatile sig_atomic_t launch_signal;

static const char *sig_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP"
		: "a signal";
}

static void forward_signal(int sig)
{
	launch_signal = sig;
	if (launch_child > 0)
		kill(launch_child, sig);
}

/* What the launcher sees of the ranks: mpirun's children with their
 * world rank, and the watch at which each was first seen gone. */
struct rank_watch {
	int np, polls;
	pid_t *pid;          /* [np]; 0 unknown */
	int *gone;           /* [np]; watch number, 0 while alive or unknown */
};

/* The world rank of process p (OMPI_COMM_WORLD_RANK in its environment),
 * or -1. */
static int proc_rank(pid_t p)
{
	char path[64], buf[16384];
	FILE *f;
	size_t n;
	int rank = -1;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)p);
	if (!(f = fopen(path, "rb")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
		if (strncmp(buf + i, "OMPI_COMM_WORLD_RANK=", 21) == 0)
			rank = atoi(buf + i + 21);
	return rank;
}

/* 1 while process p exists and is not a zombie. */
static int proc_alive(pid_t p)
{
	char path[64], buf[256], *c;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	c = strrchr(buf, ')');
	return c && c[1] == ' ' && c[2] != 'Z' && c[2] != 'X';
}

/* One look at mpirun (pid) and its children (/proc/PID/task/TID/children,
 * Linux): new ranks learnt, vanished ones stamped.  Does nothing where
 * /proc lacks them. */
static void watch_ranks(struct rank_watch *w, pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *e;

	w->polls++;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path))) {
		while ((e = readdir(d))) {
			char cp[320];
			FILE *f;
			int c;

			if (e->d_name[0] == '.')
				continue;
			snprintf(cp, sizeof(cp), "/proc/%d/task/%s/children", (int)pid, e->d_name);
			if (!(f = fopen(cp, "r")))
				continue;
			while (fscanf(f, "%d", &c) == 1) {
				int r = proc_rank((pid_t)c);

				if (r >= 0 && r < w->np && w->pid[r] == 0)
					w->pid[r] = (pid_t)c;
			}
			fclose(f);
		}
		closedir(d);
	}
	for (int r = 0; r < w->np; r++)
		if (w->pid[r] > 0 && !w->gone[r] && !proc_alive(w->pid[r]))
			w->gone[r] = w->polls;
}

/* The rank that ended before every other rank, or -1 when none did
 * alone (several at one watch, or none seen). */
static int first_gone(const struct rank_watch *w)
{
	int first = -1, ties = 0;

	for (int r = 0; r < w->np; r++) {
		if (!w->gone[r])
			continue;
		if (first < 0 || w->gone[r] < w->gone[first]) {
			first = r;
			ties = 0;
		} else if (w->gone[r] == w->gone[first]) {
			ties++;
		}
	}
	return ties ? -1 : first;
}

/* Waits for mpirun (pid), watching its ranks; forwards signals meanwhile.
 * Returns 0 with *status, or -1 (errno set). */
static int wait_job(pid_t pid, struct rank_watch *w, int *status)
{
	const struct timespec nap = { 0, 50 * 1000 * 1000 };

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		watch_ranks(w, pid);
		nanosleep(&nap, NULL);
	}
}

enum rc exec_launch(int np, int argc, char **argv)
{
	/* the command the ranks run names the messages: execute or calibrate */
	const char *cmd = argc > 0 ? argv[0] : "execute";
	char mpirun[PATH_MAX], self[PATH_MAX], npbuf[16];
	char **av;
	int ac = 0, status, failed;
	ssize_t n;
	pid_t pid, parent = getpid();
	struct sigaction sa, old[GP_ARRAY_LEN(forwarded)];
	sigset_t block, prev;
	struct rank_watch w;
	enum rc rc;

	if (find_mpirun(mpirun, sizeof(mpirun)) != 0) {
		const char *env = getenv("GPUPLAN_MPIRUN");

		if (env && *env)
			gp_error("%s: $GPUPLAN_MPIRUN: expected an executable MPI launcher, "
				 "found '%s'; %d ranks need one", cmd, env, np);
		else
			gp_error("%s: mpirun not found (PATH or $GPUPLAN_MPIRUN); "
				 "%d ranks need an MPI launcher", cmd, np);
		if (env && *env)
			gp_hint("point $GPUPLAN_MPIRUN at mpirun, or unset it to use PATH's");
		else
			gp_hint("install OpenMPI (openmpi-bin), or run %s",
				strcmp(cmd, "calibrate") == 0 ? "with --np 1" : "a single-rank layout");
		return RC_DEVICE;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		gp_error("%s: cannot find this executable: %s", cmd, strerror(errno));
		return RC_ERR;
	}
	self[n] = '\0';
	snprintf(npbuf, sizeof(npbuf), "%d", np);
	av = xcalloc((size_t)argc + 16 + 2 * GP_ARRAY_LEN(forward_env), sizeof(*av));
	av[ac++] = mpirun;
	if (geteuid() == 0)
		av[ac++] = "--allow-run-as-root";
	av[ac++] = "--oversubscribe";
	/* without the banners mpirun prints after a rank fails ("Primary
	 * job terminated normally, but...", "mpirun noticed that process
	 * rank..."): the rank has named its failure in one line and the
	 * exit status below adds one more */
	av[ac++] = "--quiet";
	av[ac++] = "-np";
	av[ac++] = npbuf;
	for (size_t i = 0; i < GP_ARRAY_LEN(forward_env); i++)
		if (getenv(forward_env[i])) {
			av[ac++] = "-x";
			av[ac++] = (char *)forward_env[i];
		}
	av[ac++] = self;
	for (int i = 0; i < argc; i++)
		av[ac++] = argv[i];
	av[ac] = NULL;

	/* A rank waiting in an MPI call for a peer gives up its core where
	 * other work wants it (Open MPI polls without yielding unless it sees
	 * more ranks than slots): the CPU time execute compares
	 * (docs/execute.md) then counts less of the time its peer waited for
	 * a core; an idle machine runs as before.  Set here, before the fork
	 * (mpirun passes it to the ranks); other MPIs ignore it; a user's
	 * setting stands. */
	setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
	fflush(stdout);
	fflush(stderr);
	/* the signals wait until the child's pid is known to the handler */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (size_t i = 0; i < GP_ARRAY_LEN(forwarded); i++)
		sigaddset(&block, forwarded[i]);
	sigprocmask(SIG_BLOCK, &block, &prev);
	launch_signal = 0;
	launch_child = 0;
	for (size_t i = 0; i < GP_ARRAY_LEN(forwarded); i++)
		sigaction(forwarded[i], &sa, &old[i]);
	pid = fork();
	if (pid < 0) {
		gp_error("%s: cannot start mpirun: %s", cmd, strerror(errno));
		rc = RC_ERR;
		goto out_sig;
	}
	if (pid == 0) {
		/* mpirun's own handlers end its ranks: even where this process
		 * started with a signal ignored (a background job of a script) */
		sa.sa_handler = SIG_DFL;
		for (size_t i = 0; i < GP_ARRAY_LEN(forwarded); i++)
			sigaction(forwarded[i], &sa, NULL);
		sigprocmask(SIG_SETMASK, &prev, NULL);
#ifdef __linux__
		/* mpirun ends its ranks on SIGTERM: the job dies with this
		 * process, however it dies; one that died already is gone */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(127);
#endif
		execv(mpirun, av);
		fprintf(stderr, "error: %s: cannot run %s: %s\n", cmd, mpirun, strerror(errno));
		_exit(127);
	}
	launch_child = pid;
	sigprocmask(SIG_SETMASK, &prev, NULL);
	memset(&w, 0, sizeof(w));
	w.np = np;
	w.pid = xcalloc((size_t)np, sizeof(*w.pid));
	w.gone = xcalloc((size_t)np, sizeof(*w.gone));
	if (wait_job(pid, &w, &status) != 0) {
		gp_error("%s: waiting for mpirun: %s", cmd, strerror(errno));
		rc = RC_ERR;
		goto out_watch;
	}
	failed = first_gone(&w);
	if (launch_signal) {
		/* Ctrl-C or a scheduler's SIGTERM: the user's doing, not a rank's */
		gp_error("%s: interrupted by %s: the job's %d ranks were stopped", cmd,
			 sig_name(launch_signal), np);
		rc = RC_ERR;
	} else if (WIFSIGNALED(status)) {
		gp_error("%s: mpirun was killed by signal %d", cmd, WTERMSIG(status));
		rc = RC_ERR;
	} else if (WEXITSTATUS(status) == 0) {
		rc = RC_OK;
	} else if (WEXITSTATUS(status) == 2) {
		rc = RC_INPUT; /* the ranks said why */
	} else if (WEXITSTATUS(status) == 4 || WEXITSTATUS(status) == 127) {
		rc = RC_DEVICE;
	} else {
		/* above 128 a rank died of a signal (mpirun's 128 + signal),
		 * maybe without a word: name it; below, the ranks that
		 * returned it said why themselves */
		if (failed >= 0 && WEXITSTATUS(status) > 128)
			gp_error("%s: the job failed (mpirun exit status %d): rank %d ended first",
				 cmd, WEXITSTATUS(status), failed);
		else
			gp_error("%s: the job failed (mpirun exit status %d)", cmd,
				 WEXITSTATUS(status));
		rc = RC_ERR;
	}
out_watch:
	free(w.pid);
	free(w.gone);
out_sig:
	free(av);
	launch_child = 0;
	for (size_t i = 0; i < GP_ARRAY_LEN(forwarded); i++)
		sigaction(forwarded[i], &old[i], NULL);
	return rc;
}
