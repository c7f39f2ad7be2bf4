/*
 * exec_launch.c - starting the job: `mpirun -np N ... gpuplan execute ...`
 * from a plain `gpuplan execute` (or `calibrate --np N`), waiting for it and
 * saying how it ended.
 *
 * The ranks run this same executable with the same arguments; they know
 * they are ranks from the launcher's environment (exec_under_launcher()).
 * OpenMPI kills the other ranks when one dies and names the dead rank
 * itself; this side adds one line with the job's status.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

enum rc exec_launch(int np, int argc, char **argv)
{
	/* the command the ranks run names the messages: execute or calibrate */
	const char *cmd = argc > 0 ? argv[0] : "execute";
	char mpirun[PATH_MAX], self[PATH_MAX], npbuf[16];
	char **av;
	int ac = 0, status;
	ssize_t n;
	pid_t pid;

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

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		gp_error("%s: cannot start mpirun: %s", cmd, strerror(errno));
		free(av);
		return RC_ERR;
	}
	if (pid == 0) {
		execv(mpirun, av);
		fprintf(stderr, "error: %s: cannot run %s: %s\n", cmd, mpirun, strerror(errno));
		_exit(127);
	}
	free(av);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			gp_error("%s: waiting for mpirun: %s", cmd, strerror(errno));
			return RC_ERR;
		}
	}
	if (WIFSIGNALED(status)) {
		gp_error("%s: mpirun was killed by signal %d", cmd, WTERMSIG(status));
		return RC_ERR;
	}
	switch (WEXITSTATUS(status)) {
	case 0:
		return RC_OK;
	case 2:
		return RC_INPUT; /* the ranks said why */
	case 4:
		return RC_DEVICE;
	case 127:
		return RC_DEVICE;
	default:
		gp_error("%s: the job failed (mpirun exit status %d): a rank ended "
			 "abnormally, see the rank named above", cmd, WEXITSTATUS(status));
		return RC_ERR;
	}
}
