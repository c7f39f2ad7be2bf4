/*
 * cli_calib.h - calibration files for the commands that predict
 * (simulate, plan, execute): which file applies, and applying it.
 *
 * A calibration is found, in order: the file a command's --calibration
 * names; the file $GPUPLAN_CALIBRATION names; the user's file for the GPU
 * (price_user_dir()/calibration/GPU.json, where `gpuplan calibrate`
 * writes by default).  The first two must be for the GPU in question.
 */
#ifndef GPUPLAN_CLI_CALIB_H
#define GPUPLAN_CLI_CALIB_H

#include "common.h"
#include "exec.h"

/* The CPU as a catalog GPU ("cpu", the executor's CPU backend). */
const struct price_gpu *cli_cpu_gpu(void);

/* The calibration for catalog GPU gpu, path being --calibration's value
 * or NULL.  Returns RC_OK with *found 1 and c filled (one line on stderr
 * names the file), RC_OK with *found 0 when there is none, RC_INPUT for a
 * bad file or one for another GPU, RC_ERR for an unreadable one (one
 * message). */
enum rc cli_calibration_load(const char *gpu, const char *path, struct exec_calibration *c,
			     int *found);

/* Applies the calibration of p's GPU to p's cluster; for the "cpu" GPU
 * first rebuilds the cluster as the executor's CPU ranks for p's rank
 * count (exec_cpu_cluster_of).  Errors as cli_calibration_load. */
enum rc cli_calibration_plan(struct sim_plan *p, const char *path);

/* Applies every calibration that exists for a GPU of cat (and the one
 * path or $GPUPLAN_CALIBRATION names) to cat's GPU figures. */
enum rc cli_calibration_catalog(struct price_catalog *cat, const char *path);

#endif
