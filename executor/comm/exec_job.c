/*
 * exec_job.c - a job: MPI under a launcher (alone otherwise), the layout
 * of the ranks, one device per rank (a GPU: the launcher's local rank's),
 * and the groups each rank works in (NCCL for the CUDA backend, MPI
 * otherwise).  Failures before any group exists are agreed on by every
 * rank (an all-reduce of the status over MPI, on the host), so all return
 * the same status and only the lowest failing rank explains.  The top of
 * the communication layer: a run, a calibration and the pre-flight check
 * open their ranks' work through it.
 */
#include <stdio.h>
#include <string.h>

#include "comm/exec_comm.h"

enum rc exec_job_agree_as(const struct exec_job *j, enum rc mine, enum rc first,
			  enum rc other, const char *what, const char *why)
{
	double v[2];

	v[0] = mine == RC_OK ? 0 : mine == first ? 2 : 1;
	v[1] = mine == RC_OK ? -(double)j->world : -(double)j->rank;
	if (j->mpi && exec_mpi_world_max(v, 2) != RC_OK)
		return RC_DEVICE;
	if (v[0] == 0)
		return RC_OK;
	if (mine != RC_OK && -(int)v[1] == j->rank && why && *why) {
		if (what)
			gp_error("%s: %s", what, why);
		else
			gp_error("%s", why);
	}
	return v[0] == 2 ? first : other;
}

enum rc exec_job_agree(const struct exec_job *j, enum rc mine, const char *what,
		       const char *why)
{
	return exec_job_agree_as(j, mine, RC_DEVICE, RC_INPUT, what, why);
}

enum rc exec_job_open(struct exec_job *j, const char *what, const char *backend,
		      enum exec_precision precision, const struct sim_parallel *par)
{
	const struct exec_backend *be;
	char why[512] = "";
	enum rc rc;

	memset(j, 0, sizeof(*j));
	j->mpi = exec_under_launcher();
	j->world = 1;
	if (j->mpi && exec_mpi_init(&j->rank, &j->world) != RC_OK)
		return RC_DEVICE;
	if (par) {
		if (par->tp * par->pp * par->dp * par->cp != j->world) {
			char cps[32] = "";

			if (par->cp > 1)
				snprintf(cps, sizeof(cps), " x cp %d", par->cp);
			if (j->rank == 0)
				gp_error("%s: layout: expected %d ranks (tp %d x pp %d x dp %d%s), "
					 "found %d", what, par->tp * par->pp * par->dp * par->cp,
					 par->tp, par->pp, par->dp, cps, j->world);
			exec_world_leave();
			return RC_INPUT;
		}
		exec_layout_init(&j->l, par, j->rank);
	} else {
		struct sim_parallel p;

		sim_parallel_init(&p);
		p.dp = j->world;
		exec_layout_init(&j->l, &p, j->rank);
	}
	/* Whether the backend exists here is every rank's own question (one
	 * node may have GPUs, another none); the lowest failing rank says why. */
	rc = exec_backend_probe(backend, why, sizeof(why));
	be = rc == RC_OK ? exec_backend_find(backend) : NULL;
	if ((rc = exec_job_agree(j, rc, what, why)) != RC_OK)
		goto fail_mpi_rc;
	exec_device_init(&j->dev, be);
	j->dev.precision = precision;
	rc = exec_device_open(&j->dev);
	if ((rc = exec_job_agree(j, rc, what, "")) != RC_OK)
		goto fail_dev;
	if (!j->mpi) {
		exec_groups_self(&j->g, &j->dev);
		return RC_OK;
	}
#ifdef GPUPLAN_CUDA
	if (be == &exec_cuda_backend)
		rc = exec_nccl_groups(&j->l, &j->dev, &j->g);
	else
#endif
		rc = exec_mpi_groups(&j->l, &j->dev, &j->g);
	/* a rank that failed here may leave others blocked in the group's
	 * creation: only ending the job frees them */
	if (rc != RC_OK)
		exec_mpi_abort(rc_exit_code(rc));
	return RC_OK;
fail_dev:
	exec_device_release(&j->dev);
fail_mpi_rc:
	exec_mpi_finalize();
	return rc;
}

void exec_world_leave(void)
{
	int rank, size;
	double v = 0;

	if (!exec_under_launcher() || exec_mpi_init(&rank, &size) != RC_OK)
		return;
	fflush(stdout);
	fflush(stderr);
	exec_mpi_world_max(&v, 1);
	exec_mpi_finalize();
}

void exec_job_close(struct exec_job *j)
{
	exec_groups_release(&j->g);
	exec_device_release(&j->dev);
	if (j->mpi)
		exec_mpi_finalize();
}

enum rc exec_job_world_sum(struct exec_job *j, double *v, int n)
{
	struct exec_device *d = &j->dev;
	size_t bytes = (size_t)n * sizeof(double);
	double *buf = exec_dalloc(d, bytes);
	enum rc rc;

	d->be->from_host(d, buf, v, bytes);
	rc = j->g.world.comm->all_reduce(&j->g.world, buf, (size_t)n, EXEC_F64, EXEC_SUM);
	d->be->to_host(d, v, buf, bytes);
	exec_dfree(d, buf, bytes);
	if (rc == RC_OK)
		rc = exec_device_sync(d);
	return rc;
}
