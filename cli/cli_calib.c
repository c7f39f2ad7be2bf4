/*
 * cli_calib.c - which calibration file applies to a prediction, and
 * applying it (see cli_calib.h for the order files are looked for in).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_calib.h"

#define CALIBRATION_ENV "GPUPLAN_CALIBRATION"

const struct price_gpu *cli_cpu_gpu(void)
{
	static struct price_gpu g;

	exec_cpu_gpu(&g);
	return &g;
}

enum rc cli_calibration_load(const char *gpu, const char *path, struct exec_calibration *c,
			     int *found)
{
	char auto_path[4096];
	const char *flag = "--calibration";
	enum rc rc;

	*found = 0;
	if (!path || !*path) {
		path = getenv(CALIBRATION_ENV);
		flag = CALIBRATION_ENV;
	}
	if (path && *path) {
		rc = exec_calibration_read(path, c);
		if (rc != RC_OK)
			return rc;
		if (!gp_streq_nocase(c->gpu, gpu)) {
			gp_error("%s: expected a calibration of %s, found one of %s (%s)", flag, gpu,
				 c->gpu, path);
			return RC_INPUT;
		}
	} else {
		struct price_opts po;
		char dir[2048];

		price_opts_init(&po);
		if (price_user_dir(&po, dir, sizeof(dir)) != RC_OK)
			return RC_OK;
		exec_calibration_path(auto_path, sizeof(auto_path), dir, gpu);
		if (access(auto_path, F_OK) != 0)
			return RC_OK;
		path = auto_path;
		rc = exec_calibration_read(path, c);
		if (rc != RC_OK)
			return rc;
	}
	*found = 1;
	gp_info("calibration: %s (%s, %s backend, %s)", path, c->device, c->backend, c->date);
	return RC_OK;
}

enum rc cli_calibration_plan(struct sim_plan *p, const char *path)
{
	struct exec_calibration *c = xcalloc(1, sizeof(*c));
	int found = 0, cpu = gp_streq_nocase(p->cluster.gpu.name, "cpu");
	int ranks = p->par.tp * p->par.pp * p->par.dp * p->par.cp;
	enum rc rc;

	rc = cli_calibration_load(cpu ? "cpu" : p->cluster.gpu.name, path, c, &found);
	if (rc == RC_OK && cpu) {
		struct price_gpu g;

		/* the executor's CPU ranks share this machine's cores */
		exec_cpu_gpu(&g);
		if (found)
			exec_calibration_apply_gpu(c, &g);
		exec_cpu_cluster_of(&p->cluster, &g, found ? c->latency_s : 0, ranks);
		p->nodes = 1;
	} else if (rc == RC_OK && found) {
		exec_calibration_apply(c, &p->cluster);
	}
	free(c);
	return rc;
}

enum rc cli_calibration_catalog(struct price_catalog *cat, const char *path)
{
	struct exec_calibration *c = xcalloc(1, sizeof(*c));
	const char *named = path && *path ? path : getenv(CALIBRATION_ENV);
	enum rc rc = RC_OK;

	if (named && *named) {
		struct price_gpu *g = NULL;

		rc = exec_calibration_read(named, c);
		for (size_t i = 0; rc == RC_OK && i < cat->n_gpus; i++)
			if (gp_streq_nocase(cat->gpus[i].name, c->gpu))
				g = &cat->gpus[i];
		if (rc == RC_OK && !g) {
			gp_error("%s: expected a calibration of a GPU in gpus.csv, found one of %s",
				 named, c->gpu);
			rc = RC_INPUT;
		}
		if (rc == RC_OK) {
			gp_info("calibration: %s (%s, %s backend, %s)", named, c->device, c->backend,
				c->date);
			exec_calibration_apply_gpu(c, g);
		}
		free(c);
		return rc;
	}
	for (size_t i = 0; rc == RC_OK && i < cat->n_gpus; i++) {
		int found = 0;

		rc = cli_calibration_load(cat->gpus[i].name, NULL, c, &found);
		if (rc == RC_OK && found)
			exec_calibration_apply_gpu(c, &cat->gpus[i]);
	}
	free(c);
	return rc;
}
